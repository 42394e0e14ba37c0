"""What the sandbox costs each graded notebook: a kernel started in it, and one not.

    .venv/bin/python -m scripts.benchmark_sandbox [--rounds 10]

A graded notebook's kernel is started by :class:`autograder.grading.sandboxed_kernel.
SandboxedKernelManager`, in its sandbox; ``--unsandboxed`` starts the same kernel without.
Here the same kernel (``python -m ipykernel_launcher``, the course's kernel spec) is
started ``--rounds`` times each way, the two ways alternating so that the machine's mood
falls on both, and timed from the start to its first answer (``kernel_info``) and to its
end once shut down. No Spark runs: the difference is the sandbox's alone (a notebook's
Spark work is the same in both). The record's question is ``sandbox-start``.
"""
from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

from autograder.grading.sandbox import kernel_sandbox, new_workdir, why_not_available
from autograder.grading.sandboxed_kernel import SandboxedKernelManager
from scripts.records import machine, write_record

ROOT = Path(__file__).resolve().parent.parent


async def one_kernel(sandboxed: bool) -> tuple[float, float]:
    """Seconds to the kernel's first answer, and to its end after a shutdown."""
    manager = SandboxedKernelManager(kernel_name="python3")
    if sandboxed:
        manager.sandbox = kernel_sandbox(new_workdir("benchmark"))
    start = time.perf_counter()
    await manager.start_kernel()
    client = manager.client()
    client.start_channels()
    await client.wait_for_ready(timeout=120)
    ready = time.perf_counter() - start
    client.stop_channels()
    await manager.shutdown_kernel(now=False)
    return ready, time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    if why_not_available():
        sys.exit(f"no sandbox on this machine: {why_not_available()}")
    load = machine()["load"]
    times: dict[str, list[tuple[float, float]]] = {"sandboxed": [], "unsandboxed": []}
    for _ in range(args.rounds):
        for way in times:
            times[way].append(asyncio.run(one_kernel(way == "sandboxed")))
    numbers = {}
    for way, runs in times.items():
        numbers[way] = {"kernels": len(runs),
                        "to its first answer, median s": round(statistics.median(r for r, _ in runs), 3),
                        "start to end, median s": round(statistics.median(e for _, e in runs), 3)}
    numbers["the sandbox's cost per notebook, s"] = round(
        numbers["sandboxed"]["start to end, median s"]
        - numbers["unsandboxed"]["start to end, median s"], 3)
    for way, row in numbers.items():
        print(f"{way}: {row}")
    write_record("sandbox-start", numbers, load=load)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

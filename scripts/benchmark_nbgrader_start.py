"""What forking each notebook's nbgrader from a warm launcher saves.

    .venv/bin/python -m scripts.benchmark_nbgrader_start [--assignment 01_global_limit]
        [--count 8] [--rounds 2]

One Connect server, one solution run for the class's seed and answers; then the same class
(half untouched releases, half solutions) is graded ``--rounds`` times each way, the two
ways alternating so that the machine's mood falls on both:

* **warm**: as the command grades, each notebook's ``nbgrader autograde`` forked from the
  launcher that imported nbgrader once (:mod:`autograder.grading.warm_nbgrader`);
* **cold**: each notebook's ``python -m nbgrader autograde`` started afresh, as before.

For each grading: seconds on the clock, and the machine's busy CPU seconds over it (from
``/proc/stat``, every process included: nbgrader, kernels, the server). Spark-heavy: run
it alone.
"""
from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Callable

from autograder.grading import autograde
from autograder.grading import notebook_run as runner_module
from autograder.grading.connect_server import ConnectServer
from corpora.submissions import release_notebook, solution_notebook
from scripts.records import machine, write_record

ROOT = Path(__file__).resolve().parent.parent


class ColdStart:
    """Stands in for the launcher: ``launch`` None makes the grader start ``python -m
    nbgrader`` itself (:func:`autograder.grading.processes.run_watched`)."""

    launch = None

    def close(self) -> None:
        pass


def busy_cpu_seconds() -> float:
    """CPU seconds the whole machine has spent busy since it started."""
    fields = list(map(int, open("/proc/stat").readline().split()[1:]))
    idle = fields[3] + fields[4]
    return (sum(fields) - idle) / os.sysconf("SC_CLK_TCK")


def grade_in_turns(rounds: int, count: int, grade: Callable[[str, int], dict]) -> dict:
    """Grade a class ``rounds`` times the "cold" way and the "warm" way, alternating
    (cold first in odd rounds, warm first in even ones); print each grading's seconds and
    the machine's busy CPU seconds, then the means. ``grade(way, round)`` grades once and
    returns the grades. (Also scripts/benchmark_warm_python.py's.) Returns, each way, the
    seconds and the CPU seconds of each grading, as a record keeps them."""
    totals: dict[str, list[tuple[float, float]]] = {"cold": [], "warm": []}
    for round_ in range(rounds):
        for way in ("cold", "warm") if round_ % 2 == 0 else ("warm", "cold"):
            cpu, start = busy_cpu_seconds(), time.monotonic()
            grades = grade(way, round_)
            wall, cpu = time.monotonic() - start, busy_cpu_seconds() - cpu
            scores = sorted({sum(g.points().values()) for g in grades.values()})
            totals[way].append((wall, cpu))
            print(f"round {round_ + 1}, {way}: {wall:.1f} s, {cpu:.1f} s of CPU "
                  f"(scores seen: {scores})", flush=True)
    for way, runs in totals.items():
        walls, cpus = zip(*runs)
        print(f"{way}: {sum(walls) / len(walls):.1f} s, {sum(cpus) / len(cpus):.1f} s of CPU "
              f"a class of {count} (mean of {len(runs)})")
    return {way: {"seconds": [round(wall, 1) for wall, _ in runs],
                  "CPU seconds": [round(cpu, 1) for _, cpu in runs]} for way, runs in totals.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--assignment", default="01_global_limit")
    parser.add_argument("--count", type=int, default=8, help="notebooks in the class")
    parser.add_argument("--rounds", type=int, default=2, help="gradings each way")
    args = parser.parse_args()
    assignment = args.assignment
    load = machine()["load"]
    print(f"{datetime.now():%Y-%m-%d %H:%M}, {platform.node()}, load "
          f"{os.getloadavg()[0]:.1f}, {os.cpu_count()} cores; {assignment}, "
          f"{args.count} notebooks, {args.rounds} rounds each way", flush=True)
    ways = {"warm": runner_module.WarmNbgrader, "cold": ColdStart}
    work = Path(tempfile.mkdtemp(prefix="bench-nbgrader-start-"))
    notebooks = {f"untouched{i}": release_notebook(assignment) for i in range(args.count // 2)}
    notebooks.update({f"solution{i}": solution_notebook(assignment)
                      for i in range(args.count - args.count // 2)})
    with ConnectServer(log_dir=work / "server") as server:
        autograde(assignment, {"first": solution_notebook(assignment)}, spark=server.url,
                  workdir=work / "first")
        recorded = work / "first" / "spark-answers" / assignment

        def grade(way: str, round_: int) -> dict:
            runner_module.WarmNbgrader = ways[way]
            try:
                return autograde(assignment, notebooks, spark=server.url, jobs=2,
                                 answers_of=recorded, workdir=work / f"{way}{round_}")
            finally:
                runner_module.WarmNbgrader = ways["warm"]

        ways_measured = grade_in_turns(args.rounds, args.count, grade)
    write_record("nbgrader-start", {"assignment": assignment, "notebooks": args.count,
                                    **ways_measured}, load=load)

if __name__ == "__main__":
    main()

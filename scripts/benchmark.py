"""Measure what makes the course feel fast or slow on a small machine.

    .venv/bin/python -m scripts.benchmark            # everything (a few minutes)
    .venv/bin/python -m scripts.benchmark --quick    # without the book builds

On a learner's laptop the cost of the course is dominated by two things: starting Spark
and running micro-batches. This script measures, each in a fresh process where it matters:

* **session start**: ``course_session()`` from nothing to a usable session (JVM included);
* **micro-batch latency**: one ``StreamRun.add_batch`` of a small batch through a
  ``limit`` query and through a grouped count, median over several batches, with a local
  session and with a session of a Spark Connect server (the classroom's way);
* **chapter 1**: executing ``book/01_global_limit.md`` top to bottom in a new kernel;
* **autograde one submission**: stock ``nbgrader autograde`` of the chapter 1 solution
  (through :func:`autograder.grading.autograde`, which starts a kernel and a JVM);
* **book build**: a fresh build and a rebuild with nothing changed
  (``scripts/benchmark_book.py`` measures those; it is run from here).

It prints a Markdown table; docs/benchmarks.md keeps the numbers measured on the course's
reference machine (2 cores, 24 GB).
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from scripts.records import machine, write_record

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable


def seconds_of(command: list[str], cwd: Path = ROOT) -> float:
    started = time.perf_counter()
    subprocess.run(command, cwd=cwd, check=True, capture_output=True)
    return time.perf_counter() - started


def session_start() -> float:
    """Seconds to a usable local session, measured inside a fresh Python process."""
    program = ("import time; t = time.perf_counter()\n"
               "from autograder import course_session\n"
               "course_session().range(1).count()\n"
               "print(time.perf_counter() - t)\n")
    done = subprocess.run([PYTHON, "-c", program], check=True, capture_output=True, text=True)
    return float(done.stdout.strip().splitlines()[-1])


def micro_batch_latency(batches: int = 8) -> dict[str, float]:
    """Median seconds of one add_batch, for a limit and for a grouped count."""
    from autograder import StreamRun, course_session

    spark = course_session()
    queries = {
        "limit(1000)": ("id INT", lambda df: df.limit(1000), "append"),
        "groupBy().count()": ("id INT", lambda df: df.groupBy((df.id % 5).alias("k")).count(),
                              "update"),
    }
    medians = {}
    for name, (schema, query, mode) in queries.items():
        with StreamRun(spark, schema, query, output_mode=mode) as run:
            run.add_batch([(0,)])  # the first batch pays for planning and code generation
            times = []
            for i in range(batches):
                started = time.perf_counter()
                run.add_batch([(i * 10 + j,) for j in range(10)])
                times.append(time.perf_counter() - started)
        medians[name] = statistics.median(times)
    return medians


def connect_micro_batch_latency() -> dict[str, float]:
    """:func:`micro_batch_latency` in a fresh process whose session is a Connect client."""
    import json
    import os

    from autograder.grading.connect_server import ConnectServer

    with ConnectServer() as server:
        done = subprocess.run([PYTHON, "-m", "scripts.benchmark", "--micro-batches"], check=True, cwd=ROOT,
                              capture_output=True, text=True,
                              env={**os.environ, "SPARK_REMOTE": server.url})
    return json.loads(done.stdout.strip().splitlines()[-1])


def chapter_execution(chapter: str = "01_global_limit") -> float:
    """Seconds to execute one chapter in a new kernel, as the book build does."""
    bin_dir = Path(PYTHON).parent
    with tempfile.TemporaryDirectory() as scratch:
        notebook = Path(scratch) / f"{chapter}.ipynb"
        subprocess.run([str(bin_dir / "jupytext"), "--quiet", "--to", "ipynb", "--output",
                        str(notebook), str(ROOT / "book" / f"{chapter}.md")], check=True)
        return seconds_of([str(bin_dir / "jupyter"), "nbconvert", "--to", "notebook",
                           "--execute", str(notebook), "--output", str(notebook)],
                          cwd=ROOT / "book")


def autograde_one(assignment: str = "01_global_limit") -> float:
    from autograder.grading import autograde

    (solution,) = (ROOT / "solutions" / assignment).glob("*.ipynb")
    started = time.perf_counter()
    grades = autograde(assignment, {"learner": solution}, class_answers=False)
    elapsed = time.perf_counter() - started
    if grades["learner"].score != grades["learner"].max_score:
        raise SystemExit("the solution did not score full marks; the timing is meaningless")
    return elapsed


def book_builds() -> str:
    done = subprocess.run([PYTHON, "-m", "scripts.benchmark_book"],
                          cwd=ROOT, capture_output=True, text=True)
    return done.stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="skip the book builds")
    parser.add_argument("--micro-batches", action="store_true",
                        help="only the micro-batch medians, as JSON (used for the Connect row)")
    args = parser.parse_args()
    if args.micro_batches:
        import json
        print(json.dumps(micro_batch_latency()))
        return
    load = machine()["load"]

    rows = [("session start (local, fresh process)", session_start())]
    for name, latency in micro_batch_latency().items():
        rows.append((f"one micro-batch of 10 rows, {name}", latency))
    for name, latency in connect_micro_batch_latency().items():
        rows.append((f"one micro-batch of 10 rows, {name}, Spark Connect", latency))
    rows.append(("execute chapter 1 in a new kernel", chapter_execution()))
    rows.append(("nbgrader autograde of one chapter 1 submission", autograde_one()))

    print("| measurement | seconds |\n| --- | ---: |")
    for name, value in rows:
        print(f"| {name} | {value:.2f} |")
    write_record("learner", {name: round(value, 2) for name, value in rows}, load=load)
    if not args.quick:
        print()
        print(book_builds())


if __name__ == "__main__":
    main()

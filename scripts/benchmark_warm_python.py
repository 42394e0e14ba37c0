"""What forking transformWithState's driver workers from a warm process saves.

    .venv/bin/python -m scripts.benchmark_warm_python [--rounds 2] [--count 4] [--reading 20]

Chapter 4 is measured both ways, the two ways alternating so that the machine's mood falls
on both:

* **warm**: as the course runs now, Spark's Python is the script of
  :mod:`autograder.toolkit.warm_python`, which forks each driver worker from a warm process;
* **cold**: Spark's Python is this interpreter itself, as before: every driver worker is a
  fresh ``python -m pyspark.sql.streaming.transform_with_state_driver_worker``.

Two measurements:

* **a learner**: the solved release in a fresh kernel with its own local Spark, ``--reading``
  seconds after the set-up cell, each self-check then run twice
  (``scripts/benchmark_self_check.py``'s run);
* **a class**: ``--count`` notebooks (half solutions, half untouched releases) graded two
  at a time on a Connect server started for each grading, on the Spark answers of one
  solution run; seconds on the clock and the machine's busy CPU seconds (``/proc/stat``),
  the server's start included (it was not in the table of docs/benchmarks.md, measured
  with the first version of this script).

Spark-heavy: run it alone.
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
from datetime import datetime
from pathlib import Path

from scripts.benchmark_nbgrader_start import grade_in_turns
from scripts.benchmark_self_check import timed_run, with_checks_again, with_reading
from scripts.records import machine, write_record
from autograder.grading import autograde
from autograder.grading import connect_server
from autograder.grading.connect_server import ConnectServer
from autograder.toolkit.warm_python import worker_python
from corpora.submissions import release_notebook, solution_notebook, solved_release

ROOT = Path(__file__).resolve().parent.parent


ASSIGNMENT = "04_transform_with_state"
#: Spark's Python each way.
WAYS = {"warm": worker_python, "cold": lambda: sys.executable}


def learner(way: str, reading: float) -> dict[str, float]:
    """Seconds of each self-check (and of the set-up cell) in a fresh kernel."""
    os.environ["PYSPARK_PYTHON"] = WAYS[way]()  # the kernel's local Spark reads it
    try:
        path = release_notebook(ASSIGNMENT)
        notebook = with_reading(with_checks_again(solved_release(ASSIGNMENT)), reading)
        return {grade_id: seconds for grade_id, (seconds, _) in timed_run(notebook, path).items()}
    finally:
        os.environ.pop("PYSPARK_PYTHON", None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2, help="runs each way")
    parser.add_argument("--count", type=int, default=4, help="notebooks in the class")
    parser.add_argument("--reading", type=float, default=20.0, metavar="S")
    parser.add_argument("--only", nargs="+", choices=("learner", "class"),
                        default=["learner", "class"])
    args = parser.parse_args()
    print(f"{datetime.now():%Y-%m-%d %H:%M}, {platform.node()}, load "
          f"{os.getloadavg()[0]:.1f}, {os.cpu_count()} cores; {ASSIGNMENT}, "
          f"{args.rounds} rounds each way", flush=True)
    orders = [("cold", "warm") if r % 2 == 0 else ("warm", "cold") for r in range(args.rounds)]
    load, numbers = machine()["load"], {"rounds": args.rounds}

    if "learner" in args.only:
        numbers["a learner"] = {"reading": args.reading,
                                "cells": measure_a_learner(orders, args.reading)}
    if "class" in args.only:
        numbers["a class"] = {"notebooks": args.count, **measure_a_class(orders, args.count)}
    write_record("warm-python", numbers, load=load)


def measure_a_learner(orders: list[tuple[str, str]], reading: float) -> dict:
    print("\n## A learner: the solved release in a fresh kernel", flush=True)
    checks: dict[str, list[dict[str, float]]] = {way: [] for way in WAYS}
    for round_, order in enumerate(orders):
        for way in order:
            times = learner(way, reading)
            checks[way].append(times)
            print(f"round {round_ + 1}, {way}: " + ", ".join(
                f"{name} {seconds:.2f}" for name, seconds in times.items()), flush=True)
    names = list(checks["warm"][0])
    print("\n| cell | cold s (mean) | warm s (mean) |\n|---|---:|---:|")
    means = {}
    for name in names:
        mean = {way: sum(run[name] for run in runs) / len(runs) for way, runs in checks.items()}
        print(f"| {name} | {mean['cold']:.2f} | {mean['warm']:.2f} |")
        means[name] = {way: round(seconds, 2) for way, seconds in mean.items()}
    return means


def measure_a_class(orders: list[tuple[str, str]], count: int) -> dict:
    print(f"\n## A class of {count}, graded two at a time on a Connect server", flush=True)
    work = Path(tempfile.mkdtemp(prefix="bench-warm-python-"))
    notebooks = {f"solution{i}": solution_notebook(ASSIGNMENT) for i in range(count // 2)}
    notebooks.update({f"untouched{i}": release_notebook(ASSIGNMENT)
                      for i in range(count - count // 2)})
    # The class's answers, from a server of their own: every timed grading below starts on
    # a fresh server, none on one the solution's run has already warmed.
    with ConnectServer(log_dir=work / "server-first") as server:
        autograde(ASSIGNMENT, {"first": solution_notebook(ASSIGNMENT)}, spark=server.url,
                  workdir=work / "first")
    recorded = work / "first" / "spark-answers" / ASSIGNMENT

    def grade(way: str, round_: int) -> dict:
        connect_server.worker_python = WAYS[way]  # the server's Python, when it starts
        try:
            with ConnectServer(log_dir=work / f"server-{way}{round_}") as server:
                return autograde(ASSIGNMENT, notebooks, spark=server.url, jobs=2,
                                 answers_of=recorded, workdir=work / f"{way}{round_}")
        finally:
            connect_server.worker_python = worker_python

    return grade_in_turns(len(orders), count, grade)


if __name__ == "__main__":
    main()

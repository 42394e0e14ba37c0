"""How many micro-batches a graded notebook runs, task by task: what its grading costs.

    .venv/bin/python -m scripts.count_micro_batches [--seed 11] [--assignment 04_transform_with_state]

In a class, Spark's answers come from the solution's one run, so a graded notebook's own
Spark work is the learner's queries: their micro-batches (the no-data ones included) are
what its grading costs. This script plays that in one process: it runs each grade cell's
check of the solution notebook on the graded streams of ``--seed`` once, so that the
course's own runs are remembered (:mod:`autograder.checks.answers`), then once more while a
streaming query listener counts every query started and every micro-batch reported. The
second pass is what a learner's kernel runs when graded. Spark-heavy: run it alone.
It writes a record ``micro-batches`` (every assignment's totals, and each task's).
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from datetime import datetime
from pathlib import Path

import nbformat

from autograder.contract import SEED
from scripts.records import machine, write_record
from corpora.learners import CHAPTERS, run_cells, task_check
from corpora.submissions import solution_notebook

ROOT = Path(__file__).resolve().parent.parent


def count(assignment: str, seed: int) -> list[tuple[str, int, int, float]]:
    """(task, queries started, micro-batches, seconds) of the second pass, per grade cell."""
    from pyspark.sql.streaming import StreamingQueryListener

    from autograder.toolkit.session import course_session

    class Counter(StreamingQueryListener):
        def __init__(self):
            self.queries = self.batches = 0

        def onQueryStarted(self, event):
            self.queries += 1

        def onQueryProgress(self, event):
            self.batches += 1

        def onQueryIdle(self, event):
            pass

        def onQueryTerminated(self, event):
            pass

    nb = nbformat.read(solution_notebook(assignment), 4)
    namespace = run_cells(nb, "solution", seed)
    tasks = [c.metadata["nbgrader"]["grade_id"] for c in nb.cells
             if c.get("metadata", {}).get("nbgrader", {}).get("grade")]
    checks = {task: task_check(nb, task) for task in tasks}
    for check, answer in checks.values():       # first pass: the course's runs remembered
        namespace[check](namespace[answer], seed=seed)
    counter = Counter()
    spark = course_session()
    spark.streams.addListener(counter)
    rows = []
    try:
        for task, (check, answer) in checks.items():
            counter.queries = counter.batches = 0
            started = time.monotonic()
            namespace[check](namespace[answer], seed=seed)
            seconds = time.monotonic() - started
            time.sleep(1)  # the listener's last events reach Python asynchronously
            rows.append((task, counter.queries, counter.batches, seconds))
    finally:
        spark.streams.removeListener(counter)
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--assignment", action="append", choices=sorted(CHAPTERS))
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args(argv)
    os.environ[SEED] = str(args.seed)
    load = machine()["load"]
    print(f"# micro-batches per graded notebook, {datetime.now():%Y-%m-%d %H:%M}, "
          f"{platform.node()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}, "
          f"seed {args.seed}\n")
    print("| assignment | task | queries | micro-batches | seconds |")
    print("| --- | --- | ---: | ---: | ---: |")
    numbers = {}
    for assignment in args.assignment or sorted(CHAPTERS):
        rows = count(assignment, args.seed)
        for task, queries, batches, seconds in rows:
            print(f"| {assignment} | {task} | {queries} | {batches} | {seconds:.1f} |")
        print(f"| {assignment} | **all** | {sum(r[1] for r in rows)} | "
              f"**{sum(r[2] for r in rows)}** | {sum(r[3] for r in rows):.1f} |")
        sys.stdout.flush()
        numbers[assignment] = {
            "queries": sum(r[1] for r in rows), "micro-batches": sum(r[2] for r in rows),
            "seconds of checks": round(sum(r[3] for r in rows), 1),
            "tasks": {task: {"queries": queries, "micro-batches": batches,
                             "seconds": round(seconds, 1)}
                      for task, queries, batches, seconds in rows}}
    write_record("micro-batches", numbers, load=load, notes=f"seed {args.seed}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

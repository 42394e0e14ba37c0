"""How right are the grades? The learner corpus, graded by the real command on several seeds.

For every assignment, every notebook of the corpus in ``corpora/learners`` (right answers
written other ways, each misconception a chapter warns about, partial and hard-coded
answers) is graded through :func:`autograder.grading.autograde`, the function behind
``python -m autograder.classroom grade`` (its default Spark: one loopback Connect server,
``--jobs 2``), once per seed (``COURSE_SEED`` fixes the run's streams). Each task of each
notebook is then one of:

* a **right answer** (the corpus says it earns the task's points): it must get them;
* a **wrong answer** (a misconception or a hard-coded answer the corpus says scores zero
  there): it must get zero;
* untouched (left as released): counted apart, it always scores zero.

It prints, per assignment and task, **precision** (right answers given full marks) and
**recall** (wrong answers given zero) over all seeds, then every grade that differed from
the corpus's, and whether any notebook was flagged (none should be). Usage::

    .venv/bin/python -m scripts.benchmark_grading_quality [--seeds 5] [--assignment 01_global_limit]

Spark-heavy: run it alone on the machine. The numbers are kept in docs/grading-quality.md.
"""
from __future__ import annotations

import argparse
import os
import platform
import random
import shutil
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

from autograder.contract import SEED
from autograder.grading import autograde
from autograder.grading.processes import GradingLimits
from corpora.learners import CHAPTERS, expected_points, learners
from scripts.records import machine, write_record

ROOT = Path(__file__).resolve().parent.parent


def grade_on_seed(assignment: str, seed: int, folder: Path, jobs: int) -> dict:
    corpus = learners(assignment)
    notebooks = {learner.name: learner.write(assignment, folder / "submitted") for learner in corpus}
    os.environ[SEED] = str(seed)
    try:
        return autograde(assignment, notebooks, spark="server", jobs=jobs,
                         workdir=folder / "course", limits=GradingLimits())
    finally:
        os.environ.pop(SEED, None)


def tally(assignment: str, graded: dict[int, dict]) -> tuple[list[list], list[str]]:
    """Per task: right answers given full marks, wrong answers given zero; the misgrades."""
    corpus = {learner.name: learner for learner in learners(assignment)}
    counts: dict[str, dict[str, list[int]]] = {}
    misgrades = []
    for seed, grades in graded.items():
        for name, learner in corpus.items():
            grade = grades[name]
            if grade.flags:
                misgrades.append(f"seed {seed}: {name} flagged: {'; '.join(grade.flags)}")
            for task, points in expected_points(assignment, learner).items():
                got = grade.points().get(task)
                row = counts.setdefault(task, {"right": [0, 0], "wrong": [0, 0], "untouched": [0, 0]})
                answered = any(task == f"test_{grade_id}" for grade_id in learner.answers)
                kind = "right" if points > 0 else ("wrong" if answered else "untouched")
                row[kind][1] += 1
                if got == points:
                    row[kind][0] += 1
                else:
                    misgrades.append(f"seed {seed}: {name} ({learner.kind}) {task}: expected "
                                     f"{points:g}, got {got} ({grade.outcome}"
                                     f"{'; ' + grade.detail if grade.detail else ''})")
    table = []
    for task, row in counts.items():
        def share(kind, row=row):
            done, total = row[kind]
            return f"{100 * done / total:.0f} % ({done}/{total})" if total else "-"
        table.append([task, share("right"), share("wrong"), share("untouched")])
    return table, misgrades


def _counts(share: str) -> list[int] | None:
    """``"100 % (40/40)"`` as ``[40, 40]``; ``"-"`` (no such answer) as None."""
    return None if share == "-" else [int(n) for n in share.rpartition("(")[2].rstrip(")").split("/")]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--assignment", action="append", choices=sorted(CHAPTERS))
    parser.add_argument("--seeds", type=int, default=5, help="how many seeds per assignment")
    parser.add_argument("--seed", type=int, action="append", help="a seed to use (repeatable)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--keep", type=Path, metavar="FOLDER",
                        help="copy a seed's course folder (logs, kernels' JVM logs, ledger) here "
                             "when one of its grades differs from the corpus's")
    args = parser.parse_args(argv)
    seeds = args.seed or random.Random().sample(range(1, 10**6), args.seeds)
    started, load, numbers = time.monotonic(), machine()["load"], {}
    print(f"# grading quality, {date.today()}, {platform.node()}, {os.cpu_count()} cores, "
          f"load before: {os.getloadavg()[0]:.2f}; seeds {seeds}\n")
    wrong = 0
    for assignment in args.assignment or sorted(CHAPTERS):
        graded = {}
        t0 = time.monotonic()
        for seed in seeds:
            with tempfile.TemporaryDirectory(prefix=f"quality-{assignment}-{seed}-") as folder:
                graded[seed] = grade_on_seed(assignment, seed, Path(folder), args.jobs)
                if args.keep and tally(assignment, {seed: graded[seed]})[1]:
                    kept = args.keep / f"{assignment}-{seed}"
                    shutil.copytree(folder, kept, dirs_exist_ok=True)
                    print(f"(seed {seed}: a grade differs; its course folder is kept in {kept})")
        table, misgrades = tally(assignment, graded)
        wrong += len(misgrades)
        numbers[assignment] = {
            "notebooks": len(learners(assignment)), "seeds": seeds,
            "seconds": round(time.monotonic() - t0),
            "tasks": {task: {"precision": _counts(right), "recall": _counts(wrong_),
                             "untouched": _counts(untouched)}
                      for task, right, wrong_, untouched in table},
            "grades that differ": misgrades}
        print(f"## {assignment}: {len(learners(assignment))} notebooks x {len(seeds)} seeds, "
              f"{time.monotonic() - t0:.0f} s\n")
        print("| task | precision (right answers, full marks) | recall (wrong answers, zero) "
              "| untouched, zero |")
        print("| --- | --- | --- | --- |")
        for row in table:
            print("| " + " | ".join(row) + " |")
        print()
        for line in misgrades:
            print(f"- {line}")
        if misgrades:
            print()
        sys.stdout.flush()
    print(f"{wrong} grade(s) differ from the corpus's; {time.monotonic() - started:.0f} s in all; "
          f"load after: {os.getloadavg()[0]:.2f}")
    write_record("grading-quality", numbers, load=load)
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())

"""Record Spark's answers to the fixed cases of the plain-function tasks.

    .venv/bin/python -m scripts.record_fixed_answers

Writes ``tests/support/fixed_answers.json``: every question the checks of the tasks that
``scripts/mutation_testing.py`` measures ask on their **fixed cases**, with Spark's answer,
in the format of a grading run's answers file (key ``"<question> <json of the inputs>"``,
value the JSON text of the answer). With it the mutation tests judge without Spark
(``autograder.checks.answers.judging``).

Every answer is Spark's own, asked in this run: the course's known answers (the worked
examples') are set aside, and what Spark answers is captured the way a grading run
records its solution's answers (``AUTOGRADER_RECORD_ANSWERS``), each question once.

The reference solution of each task is judged on its fixed cases, and must agree with
Spark on every one. Then so is every mutant of it: what the checks ask does not depend on
the learner's answer, except in chapter 3's smallest_delay, whose check runs Spark with
the delay the learner chose (and with one second less), so a mutant's delay is a question
of its own. The corpus's learners who hold a wrong belief about one of a check's input
dimensions (``INPUT_DIMENSIONS``, ``Learner.dimension``) are asked too, for the same
reason: the test that shows each losing on its fixed case judges them without Spark.

Run this again when a check's fixed cases change, a solution changes, or Spark does:
tests/grading/test_fixed_cases_kill_every_mutant.py fails on a question the file does not
hold.

Spark runs here: on a shared machine, hold its lock (``flock /tmp/spark.lock ...``).
"""
from __future__ import annotations

import importlib
import json
import os
import tempfile
import time
from pathlib import Path
from types import MappingProxyType
from unittest import mock

from autograder.contract import RECORD_ANSWERS
from scripts.mutation_testing import (FIXED_ANSWERS, TASKS, check_of, fixed_cases,
                                      judge_fixed_cases, make_mutants, module_function,
                                      reference_source, run_mutant, verdict)
from corpora.learners import cells_function, learners

ROOT = Path(__file__).resolve().parent.parent


def dimension_learners(task):
    """The corpus's learners holding a wrong belief about an input dimension of the task's
    check."""
    module, check = task.check.rsplit(".", 1)
    dimensions = getattr(importlib.import_module(module), "INPUT_DIMENSIONS", {}).get(check, ())
    names = {dimension.name for dimension in dimensions}
    return [learner for learner in learners(task.assignment) if learner.dimension in names]


def main() -> None:
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="fixed-answers-") as folder:
        record = Path(folder) / "answers.json"
        os.environ[RECORD_ANSWERS] = str(record)
        from autograder.checks import answers
        from autograder.toolkit.session import course_session

        course_session()
        answers.load()
        with mock.patch.object(answers, "KNOWN", MappingProxyType({})):
            for task in TASKS:
                cases = fixed_cases(check_of(task))
                source = reference_source(task)
                judge_fixed_cases(task, module_function(task, source), cases)
                mutants = make_mutants(source)
                for mutant in mutants:
                    run_mutant(task, mutant.source, cases, seconds=None)
                believers = dimension_learners(task)
                for learner in believers:
                    verdict(task, cells_function(task.assignment, learner, task.function), cases,
                            seconds=None)
                print(f"{task.name}: {len(cases)} fixed cases, {len(mutants)} mutants and "
                      f"{len(believers)} learners asked", flush=True)
        recorded = json.loads(record.read_text())
    FIXED_ANSWERS.write_text(json.dumps(recorded, indent=1, sort_keys=True) + "\n")
    print(f"{len(recorded)} answers written to {FIXED_ANSWERS.relative_to(ROOT)} "
          f"in {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()

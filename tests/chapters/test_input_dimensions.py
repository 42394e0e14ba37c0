"""The kinds of input each task allows, each held by a fixed stream, each with a wrong belief
that loses on it.

A chapter lists, beside its checks, the kinds of input its tasks' rules allow
(``INPUT_DIMENSIONS``: check name -> :class:`autograder.checks.checking.Dimension`): an empty
micro-batch, a window ending exactly at the watermark, a delay of 0. A check runs its fixed
cases on every seed, so a dimension held by a fixed case is shown to every learner, not only
when a drawn stream happens to hold it. Here:

* every check of a chapter with a table has one, and each dimension is held by one of its
  fixed cases at least;
* each dimension has a learner in the chapter's corpus holding the simplest wrong belief
  about it (``Learner.dimension``), and judged on the fixed cases that hold the dimension
  (on Spark's recorded answers, ``tests/support/fixed_answers.json``, for a plain function;
  on Spark, slow, for code Spark runs), that learner gets a lesson on one of them: it loses
  its task whatever the seed. The corpus's own test
  (``tests/grading/test_learners_*.py``) grades the same learner on Spark;
* docs/grading-quality.md shows each table as the data makes it
  (``scripts/dimension_tables.py --write``).

That the recorded answers are what Spark answers today is
``tests/chapters/test_fixed_answers_today.py`` (a file of its own, so that the two workers
share the Spark time).
"""
from __future__ import annotations

import importlib

import pytest

from autograder.checks.asking import CHECKS
from scripts import dimension_tables, mutation_testing as mt
from corpora.learners import cells_function, expected_points, learners

#: The chapters whose checks have their tables: assignment -> the module of its checks.
TABLED = dimension_tables.tabled()


def table(module: str) -> dict:
    return importlib.import_module(module).INPUT_DIMENSIONS


def fixed(module: str, check: str) -> list:
    return mt.fixed_cases(CHECKS[f"{module}.{check}"])


def task_of(module: str, check: str) -> mt.Task:
    (task,) = [task for task in mt.TASKS + mt.SPARK_TASKS if task.check == f"{module}.{check}"]
    return task


CHECKS_TABLED = [pytest.param(module, check, id=f"{module.rsplit('.', 1)[1]}.{check}")
                 for module in TABLED.values() for check in table(module)]


@pytest.mark.parametrize("assignment, module", TABLED.items())
def test_every_check_of_the_chapter_has_its_table(assignment, module):
    importlib.import_module(module)
    checks = {name.rsplit(".", 1)[1] for name in CHECKS if name.startswith(module + ".")}
    assert checks and set(table(module)) == checks


@pytest.mark.parametrize("assignment, module", TABLED.items())
def test_the_docs_show_the_table_the_data_makes(assignment, module):
    shown = dimension_tables.in_docs(dimension_tables.DOCS.read_text(), assignment)
    assert shown == dimension_tables.table(assignment, module), (
        f"docs/grading-quality.md does not show {assignment}'s input dimensions as the data "
        "makes them: run python -m scripts.dimension_tables --write")


@pytest.mark.parametrize("module, check", CHECKS_TABLED)
def test_every_dimension_is_held_by_a_fixed_case(module, check):
    cases = fixed(module, check)
    assert cases, f"{check} has no fixed case"
    unheld = [dimension.name for dimension in table(module)[check]
              if not any(dimension.holds(case.about) for case in cases)]
    assert not unheld, (f"{check}: no fixed case holds {unheld}; add a fixed stream that "
                        "does (and record Spark's answers: scripts/record_fixed_answers.py)")


def belief_cases(assignment: str, module: str) -> list:
    """(dimension, its learners, the checks whose table lists it) for every dimension; slow
    when every task whose check lists it runs the learner's code on Spark."""
    corpus = learners(assignment)
    found: dict[str, list] = {}
    for check, dimensions in table(module).items():
        for dimension in dimensions:
            found.setdefault(dimension.name, []).append((check, dimension))
    return [pytest.param(assignment, module, name, listed,
                         [learner for learner in corpus if learner.dimension == name],
                         id=f"{assignment}: {name}",
                         marks=[pytest.mark.slow] if all(task_of(module, check).on_spark
                                                         for check, _ in listed) else [])
            for name, listed in found.items()]


BELIEFS = [case for assignment, module in TABLED.items()
           for case in belief_cases(assignment, module)]


def judged(task: mt.Task, assignment: str, learner, cases: list, request) -> tuple[str, str]:
    """The learner's verdict on ``cases``: on Spark's recorded answers for a plain function;
    with the course's Spark session for code Spark runs (its notebook's setup cell first)."""
    if task.on_spark:
        request.getfixturevalue("spark")
        function = mt.module_function(task, mt.reference_source(task, learner.answers))
        return on_the_fixed_part(task, function, cases)
    with mt.without_spark():
        return mt.verdict(task, cells_function(assignment, learner, task.function), cases)


def on_the_fixed_part(task: mt.Task, function, cases: list) -> tuple[str, str]:
    """:func:`mt.verdict` for code Spark runs, killed only by a lesson told on the fixed
    part. Chapter 4 plays its fixed part beside the seed's in one case: its lesson names
    the part where the difference is (the fixed part is compared first), or both parts for
    what no key owns; a lesson naming the seed's part alone could change with the seed."""
    from autograder.checks.asking import ask_case
    from autograder.checks.checking import FIXED
    from autograder.checks.feedback import CheckFailed

    check = mt.check_of(task)
    for case in cases:
        try:
            check.judge(case, ask_case(check, function, case))
        except CheckFailed as lesson:
            if FIXED not in (lesson.context or case.label):
                return "on the seed's part only", lesson.lesson()
            return "killed", lesson.lesson()
    return "survived", ""


@pytest.mark.parametrize("assignment, module, name, listed, believers", BELIEFS)
def test_every_dimension_has_a_wrong_belief_that_loses_on_its_fixed_case(
        assignment, module, name, listed, believers, request):
    assert believers, (f"no misconception in the corpus of {assignment} is about {name!r}: "
                       "write its simplest wrong belief (Learner(..., dimension=...))")
    for learner in believers:
        assert learner.kind == "misconception"
        lost = {grade_id for grade_id, points in expected_points(assignment, learner).items()
                if points == 0}
        shown = []
        # the plain functions first: Spark is started only for a belief no plain task shows
        for check, dimension in sorted(listed, key=lambda listing: task_of(module, listing[0]).on_spark):
            task = task_of(module, check)
            if f"test_{task.name.rsplit('/', 1)[1]}" not in lost:
                continue
            holding = [case for case in fixed(module, check) if dimension.holds(case.about)]
            verdict, why = judged(task, assignment, learner, holding, request)
            shown.append((check, verdict, why))
            if verdict == "killed":
                break
        assert shown, f"{learner.name} loses no task whose check lists {name!r}"
        assert any(verdict == "killed" for _, verdict, _ in shown), (
            f"{learner.name} believes a wrong thing about {name!r}, but no fixed case holding "
            f"it shows that: {shown}")

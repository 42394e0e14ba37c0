"""The fixed cases of every plain-function task catch every wrong version of its solution
that mutmut makes, or the version is listed (docs/grading-quality.md, "Fixed cases
measured by mutation").

Each mutant is made as mutmut makes it (its own mutation code, numbered as mutmut numbers
them) and judged in this process on the check's fixed cases with Spark's recorded answers
(``tests/support/fixed_answers.json``): no Spark, no mutmut run, a few seconds in all.
``make mutation`` runs mutmut itself and writes the record this agrees with.

A failure here means one of:

* a survivor that ``tests/mutation/equivalent.json`` does not list: a wrong answer the
  fixed cases miss (add a fixed case that catches it), or one equivalent to the solution
  (list it with the reason);
* a listed mutant that no longer survives (remove its entry: a fixed case now kills it);
* a question the recorded answers do not hold (GraderFault): a check's fixed cases or a
  solution changed; run ``python -m scripts.record_fixed_answers`` again (it runs Spark).
"""
from __future__ import annotations

import pytest

from scripts import mutation_testing as mt

TASKS = [pytest.param(task, id=task.name) for task in mt.TASKS]


@pytest.fixture(scope="module")
def verdicts() -> dict:
    """Every task's mutants, judged once: task name -> mutant name -> (verdict, why, diff)."""
    return {}


def _verdicts(verdicts: dict, task: mt.Task) -> dict:
    if task.name not in verdicts:
        verdicts[task.name] = mt.in_process(task)
    return verdicts[task.name]


def _show(name: str, diff) -> str:
    return f"{name}:\n" + "\n".join(f"    {line}" for line in diff)


@pytest.mark.parametrize("task", TASKS)
def test_the_solution_passes_its_fixed_cases(task):
    with mt.without_spark():
        mt.judge_fixed_cases(task, mt.module_function(task, mt.reference_source(task)))


@pytest.mark.parametrize("task", TASKS)
def test_every_surviving_mutant_is_listed(task, verdicts):
    listed = {**mt.listed_mutants("equivalent").get(task.name, {}),
              **mt.listed_mutants("missing").get(task.name, {})}
    unlisted = [_show(name, diff) for name, (outcome, _, diff) in _verdicts(verdicts, task).items()
                if outcome == "survived" and tuple(diff) not in listed]
    assert not unlisted, (
        f"{len(unlisted)} mutant(s) of {task.name} pass every fixed case of "
        f"{task.check} and are not in tests/mutation/equivalent.json:\n" + "\n".join(unlisted))


@pytest.mark.parametrize("task", TASKS)
def test_every_listed_mutant_still_survives(task, verdicts):
    survivors = {tuple(diff) for outcome, _, diff in _verdicts(verdicts, task).values()
                 if outcome == "survived"}
    for section in ("equivalent", "missing"):
        stale = [_show(entry["mutant"], diff)
                 for diff, entry in mt.listed_mutants(section).get(task.name, {}).items()
                 if diff not in survivors]
        assert not stale, (f"tests/mutation/equivalent.json lists under {section!r} mutants of "
                           f"{task.name} that no longer survive (killed, or no longer made): "
                           "remove them\n" + "\n".join(stale))


@pytest.mark.parametrize("task", TASKS)
def test_no_mutant_is_killed_by_the_check_failing(task, verdicts):
    """A mutant is caught by a lesson, not by the check raising on its answer (which a
    learner would read as the grader's error, not as what their answer got wrong)."""
    errors = {name: why for name, (outcome, why, _) in _verdicts(verdicts, task).items()
              if outcome == "error"}
    assert not errors, errors

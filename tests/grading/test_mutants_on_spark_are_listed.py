"""The fixed cases of every task Spark runs catch every wrong version of its solution that
mutmut makes, or the version is listed (docs/grading-quality.md, "Fixed cases measured by
mutation").

Judging those mutants takes Spark: a query, a processor or a checkpoint per mutant, several
minutes for the whole course. ``make mutation-on-spark`` judges them and writes a record;
this test holds the newest record of each task to the course as it is:

* the record measured the course's solution, fixed cases and check as they are (their
  digests): otherwise it is stale, and ``make mutation-on-spark
  MUTATION_OPTIONS="--task <task>"`` measures the task again;
* every mutant that survived in it is listed in ``tests/mutation/equivalent.json``
  (equivalent, with the reason; or missing, with the case that would kill it), and every
  listed one still survived;
* no mutant was caught by the check itself failing on its answer rather than by a lesson.
"""
from __future__ import annotations

import pytest

from scripts import mutation_testing as mt

TASKS = [pytest.param(task, id=task.name) for task in mt.SPARK_TASKS]


@pytest.fixture(scope="module")
def newest() -> dict:
    return mt.newest_on_spark()


def _measured(newest: dict, task: mt.Task) -> dict:
    assert task.name in newest, (f"no record of `make mutation-on-spark` measures {task.name}: "
                                 f"run make mutation-on-spark MUTATION_OPTIONS=\"--task {task.name}\"")
    return newest[task.name][1]["tasks"][task.name]


@pytest.mark.parametrize("task", TASKS)
def test_the_record_measured_the_course_as_it_is(task, newest):
    path, _ = newest.get(task.name, (None, None))
    measured = _measured(newest, task)
    now = mt.what_was_mutated(task)
    changed = sorted(what for what, digest in now.items()
                     if measured["digests"].get(what) != digest)
    assert not changed, (
        f"{path.name} measured another {' and '.join(changed)} of {task.name} than the "
        f"course's: run make mutation-on-spark MUTATION_OPTIONS=\"--task {task.name}\"")


@pytest.mark.parametrize("task", TASKS)
def test_every_surviving_mutant_is_listed(task, newest):
    listed = {**mt.listed_mutants("equivalent").get(task.name, {}),
              **mt.listed_mutants("missing").get(task.name, {})}
    unlisted = [entry["mutant"] + ":\n" + "\n".join(f"    {line}" for line in entry["diff"])
                for entry in _measured(newest, task)["survivors"]
                if tuple(entry["diff"]) not in listed]
    assert not unlisted, (
        f"{len(unlisted)} mutant(s) of {task.name} pass every fixed case of {task.check} and "
        "are not in tests/mutation/equivalent.json:\n" + "\n".join(unlisted))


@pytest.mark.parametrize("task", TASKS)
def test_every_listed_mutant_still_survives(task, newest):
    survivors = {tuple(entry["diff"]) for entry in _measured(newest, task)["survivors"]}
    for section in ("equivalent", "missing"):
        stale = [entry["mutant"] for diff, entry in mt.listed_mutants(section).get(task.name, {}).items()
                 if diff not in survivors]
        assert not stale, (f"tests/mutation/equivalent.json lists under {section!r} mutants of "
                           f"{task.name} that no longer survive: remove them: {stale}")


@pytest.mark.parametrize("task", TASKS)
def test_no_mutant_is_killed_by_the_check_failing(task, newest):
    """A mutant is caught by a lesson, not by the check raising on its answer."""
    assert not _measured(newest, task)["killed by an error of the check, not a lesson"]

"""The answers the fixed cases of the plain-function tasks are judged on without Spark
(``tests/support/fixed_answers.json``) are what Spark answers today.

Slow: every question those fixed cases ask is asked of Spark again (once in the test run:
the workers share what Spark answered, and the class runs ask the same). A task whose code Spark
runs records nothing (its answers are asked whenever it is judged), so a chapter of such
tasks alone has nothing here.
"""
from __future__ import annotations

import importlib
import json

import pytest

from scripts import dimension_tables, mutation_testing as mt


def plain_tasks(module: str) -> list[mt.Task]:
    checks = importlib.import_module(module).INPUT_DIMENSIONS
    return [task for task in mt.TASKS
            if task.check.rsplit(".", 1)[0] == module and task.check.rsplit(".", 1)[1] in checks]


RECORDED = [pytest.param(assignment, module, id=assignment)
            for assignment, module in dimension_tables.tabled().items() if plain_tasks(module)]


@pytest.mark.slow
@pytest.mark.parametrize("assignment, module", RECORDED)
def test_the_fixed_cases_recorded_answers_are_what_spark_answers_today(
        spark, answers_shared_by_the_workers, assignment, module):
    from autograder.checks.answers import asking_spark

    recorded = json.loads(mt.FIXED_ANSWERS.read_text())
    # What a class run of this test run asked Spark for the same questions counts: it is
    # today's answer too, and Spark runs each question once.
    with asking_spark(share=True) as asked:
        for task in plain_tasks(module):
            mt.judge_fixed_cases(task, mt.module_function(task, mt.reference_source(task)))
    assert asked
    stale = sorted(key for key, answer in asked.items()
                   if key not in recorded or json.loads(recorded[key]) != answer)
    assert not stale, (f"tests/support/fixed_answers.json is not what Spark answers to "
                       f"{stale}: run python -m scripts.record_fixed_answers")

"""The worked examples' answers recorded with the course are what Spark answers today.

A learner's self-check on a worked example takes Spark's answer from
autograder/known_answers.json instead of running the query (autograder/answers.py). Here
every solved release asks Spark each of its questions again: the file must hold exactly
those questions, with exactly Spark's answers. If this fails after a change to a chapter's
example, a check's query or Spark's version, run ``make known-answers``.
"""
import json

import pytest

from autograder.answers import KNOWN_ANSWERS_FILE
from tests.support.known_answers import ASSIGNMENTS, worked_example_answers

KNOWN = json.loads(KNOWN_ANSWERS_FILE.read_text())


def chapter_module(assignment: str) -> str:
    return assignment.split("_", 1)[1]        # "01_global_limit" -> "global_limit"


@pytest.mark.slow
@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_the_known_answers_are_what_spark_answers_today(spark, assignment):
    asked = worked_example_answers(assignment)
    recorded = {key: answer for key, answer in KNOWN.items()
                if key.startswith(chapter_module(assignment) + ".")}
    assert asked, f"{assignment}'s self-checks asked Spark nothing"
    stale = sorted(key for key in asked if recorded.get(key) != asked[key])
    unused = sorted(set(recorded) - set(asked))
    assert not stale and not unused, (
        f"autograder/known_answers.json is behind: run `make known-answers`. Answers that "
        f"differ from Spark's or are missing: {stale}; answers no self-check asks: {unused}")


def test_every_known_answer_belongs_to_a_chapter_with_known_answers():
    modules = {chapter_module(assignment) for assignment in ASSIGNMENTS}
    assert KNOWN and {key.split(".", 1)[0] for key in KNOWN} <= modules

"""The worked examples' answers recorded with the course are what Spark answers today.

A learner's self-check on a worked example takes Spark's answer from
autograder/checks/known_answers.json instead of running the query (autograder/checks/answers.py). Here
every solved release asks Spark each of its questions again: the file must hold exactly
those questions, with exactly Spark's answers. If this fails after a change to a chapter's
example, a check's query or Spark's version, run ``make known-answers``.
"""
import json
import re

import nbformat
import pytest

from autograder.checks.answers import KNOWN_ANSWERS_FILE
from corpora.known_answers import ASSIGNMENTS, worked_example_answers
from corpora.submissions import release_notebook

KNOWN = json.loads(KNOWN_ANSWERS_FILE.read_text())


def chapter_module(assignment: str) -> str:
    """The module whose checks the assignment's set-up cell imports ("state_store_files" for
    "05_state_store"): the first word of the keys of its answers."""
    notebook = nbformat.read(release_notebook(assignment), 4)
    (setup,) = [cell for cell in notebook.cells
                if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "setup"]
    (module,) = re.findall(r"from autograder\.chapters\.(\w+) import \(?\s*check_", setup.source)
    return module


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
        f"autograder/checks/known_answers.json is behind: run `make known-answers`. Answers that "
        f"differ from Spark's or are missing: {stale}; answers no self-check asks: {unused}")


def test_every_known_answer_belongs_to_a_chapter_with_known_answers():
    modules = {chapter_module(assignment) for assignment in ASSIGNMENTS}
    assert KNOWN and {key.split(".", 1)[0] for key in KNOWN} <= modules

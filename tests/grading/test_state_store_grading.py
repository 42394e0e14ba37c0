"""Chapter 5's exercises, graded by real nbgrader.

One classroom of five learners hands in the assignment:

=========================  ==========================================================
learner                    what they handed in
=========================  ==========================================================
``solution``               the instructor's solution                     -> full marks
``untouched``              the release exactly as learners receive it    -> zero
``every_missing_commit``   believes every uncommitted micro-batch runs again -> loses task 3
``example_typed_in``       the worked examples' answers typed in         -> zero
``snooper``                every task taken from the check's frames and the toolkit's
                           memory (:mod:`corpora.learners.introspection`) -> zero
=========================  ==========================================================
"""
import json

import pytest

from autograder.grading import autograde
from corpora.learners import chapter5
from corpora.learners.introspection import CHAPTER5
from corpora.submissions import (FULL_MARKS, release_notebook, solution_notebook,
                                      write_submission)

ASSIGNMENT = "05_state_store"
FULL = FULL_MARKS[ASSIGNMENT]
CORPUS = {learner.name: learner for learner in chapter5.LEARNERS}


@pytest.mark.slow
def test_a_classroom_is_graded_on_behaviour(tmp_path):
    course = tmp_path / "course"
    grades = autograde(ASSIGNMENT, {
        "solution": solution_notebook(ASSIGNMENT),
        "untouched": release_notebook(ASSIGNMENT),
        **{name: CORPUS[name].write(ASSIGNMENT, tmp_path / "handed-in")
           for name in ("every_missing_commit", "example_typed_in")},
        "snooper": write_submission(ASSIGNMENT, CHAPTER5, tmp_path / "snooper.ipynb"),
    }, workdir=course, jobs=2)

    assert grades["solution"].points() == FULL
    assert grades["untouched"].points() == dict.fromkeys(FULL, 0)
    assert grades["every_missing_commit"].points() == {**FULL, "test_runs_again": 0}
    assert grades["example_typed_in"].points() == dict.fromkeys(FULL, 0)
    # Nothing in a graded kernel tells an answer: the checks there only ask.
    assert grades["snooper"].points() == dict.fromkeys(FULL, 0)
    assert not any(grade.flags for name, grade in grades.items() if name != "snooper")

    # Spark answered the class's questions once, in the solution's run: the files of each
    # task 1 case, the read-back stream of task 2 with its checkpoint, the restarts of
    # task 3 with theirs, and each change of task 4.
    run = course / "spark-answers" / ASSIGNMENT
    recorded = json.loads((run / "answers.json").read_text())
    assert {key.split()[0] for key in recorded} == {
        "state_store_files.version_files", "state_store_files.read_back",
        "state_store_files.restarts", "state_store_files.restart_outcome"}

"""Chapter 6's exercises, graded by real nbgrader.

One classroom of five learners hands in the assignment:

==============================  =====================================================
learner                         what they handed in
==============================  =====================================================
``solution``                    the instructor's solution                  -> full marks
``untouched``                   the release exactly as learners receive it -> zero
``matched_rows_leave``          believes a row leaves the state once matched -> loses task 1
``one_watermark_bounds_both``   believes one side's watermark bounds both  -> loses task 4
``snooper``                     every task taken from the check's frames and the
                                toolkit's memory
                                (:mod:`corpora.learners.introspection`) -> zero
==============================  =====================================================
"""
import json

import pytest

from autograder.grading import autograde
from corpora.learners import chapter6
from corpora.learners.introspection import CHAPTER6
from corpora.submissions import (FULL_MARKS, release_notebook, solution_notebook,
                                      write_submission)

ASSIGNMENT = "06_stream_stream_join"
FULL = FULL_MARKS[ASSIGNMENT]
CORPUS = {learner.name: learner for learner in chapter6.LEARNERS}


@pytest.mark.slow
def test_a_classroom_is_graded_on_behaviour(tmp_path):
    course = tmp_path / "course"
    grades = autograde(ASSIGNMENT, {
        "solution": solution_notebook(ASSIGNMENT),
        "untouched": release_notebook(ASSIGNMENT),
        **{name: CORPUS[name].write(ASSIGNMENT, tmp_path / "handed-in")
           for name in ("matched_rows_leave", "one_watermark_bounds_both")},
        "snooper": write_submission(ASSIGNMENT, CHAPTER6, tmp_path / "snooper.ipynb"),
    }, workdir=course, jobs=2)

    assert grades["solution"].points() == FULL
    assert grades["untouched"].points() == dict.fromkeys(FULL, 0)
    assert grades["matched_rows_leave"].points() == {**FULL, "test_predict_buffered": 0}
    assert grades["one_watermark_bounds_both"].points() == {**FULL, "test_accepted": 0}
    # Nothing in a graded kernel tells an answer: the checks there only ask.
    assert grades["snooper"].points() == dict.fromkeys(FULL, 0)
    assert not any(grade.flags for name, grade in grades.items() if name != "snooper")

    # Spark answered the class's questions once, in the solution's run: the buffers of
    # task 1, the outer join's output of task 2, the joins of task 3 with their
    # checkpoints, and the shapes of task 4.
    run = course / "spark-answers" / ASSIGNMENT
    recorded = json.loads((run / "answers.json").read_text())
    assert {key.split()[0] for key in recorded} == {
        "stream_join_checks.buffered", "stream_join_checks.unmatched",
        "stream_join_checks.rows_per_key", "stream_join_checks.accepted"}

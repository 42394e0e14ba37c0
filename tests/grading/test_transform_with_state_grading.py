"""Chapter 4's exercises, graded by real nbgrader.

One classroom of five learners hands in the assignment:

=========================  ==========================================================
learner                    what they handed in
=========================  ==========================================================
``solution``               the instructor's solution                   -> full marks
``untouched``              the release exactly as learners receive it  -> zero
``timer_and_overwrite``    trusts the timer to clear a session's state, and stores
                           each initial-state row over the previous one -> loses tasks 1, 3
``no_ttl_and_rows``        de-duplicates without a TTL, and keeps every row of a user
                           in a list to count them                     -> loses tasks 2, 4
``snooper``                processors that replay what the course's processor emitted,
                           taken from the check's frames and the toolkit's memory when
                           the check builds them (:mod:`corpora.learners.introspection`)
                                                                       -> zero
=========================  ==========================================================

The wrong answers are the learner corpus's own (:mod:`corpora.learners.chapter4`).
"""
import pytest

from autograder.grading import autograde
from corpora.learners.chapter4 import DEDUP_WITHOUT_TTL as NO_TTL
from corpora.learners.chapter4 import FIRST_N_KEEPS_ROWS as ROWS_IN_A_LIST
from corpora.learners.chapter4 import INITIAL_OVERWRITES as OVERWRITE_INITIAL
from corpora.learners.chapter4 import TIMER_CLEARS_STATE
from corpora.learners.introspection import CHAPTER4
from corpora.submissions import (FULL_MARKS, release_notebook, solution_notebook,
                                      write_submission)

ASSIGNMENT = "04_transform_with_state"
FULL = FULL_MARKS[ASSIGNMENT]


@pytest.mark.slow
def test_a_classroom_is_graded_on_behaviour(tmp_path, class_records):
    course = tmp_path / "course"
    grades = autograde(ASSIGNMENT, {
        "solution": solution_notebook(ASSIGNMENT),
        "untouched": release_notebook(ASSIGNMENT),
        "timer_and_overwrite": write_submission(
            ASSIGNMENT, {"session_tracker": TIMER_CLEARS_STATE, "starting_counts": OVERWRITE_INITIAL},
            tmp_path / "timer_and_overwrite.ipynb"),
        "no_ttl_and_rows": write_submission(
            ASSIGNMENT, {"ttl_dedup": NO_TTL, "first_n": ROWS_IN_A_LIST},
            tmp_path / "no_ttl_and_rows.ipynb"),
        "snooper": write_submission(ASSIGNMENT, CHAPTER4, tmp_path / "snooper.ipynb"),
    }, workdir=course, answers_of=class_records.of(ASSIGNMENT), jobs=2)
    class_records.keep(ASSIGNMENT, course)  # the sandbox's chapter 4 class grades on it

    assert grades["solution"].points() == FULL
    assert grades["untouched"].points() == dict.fromkeys(FULL, 0)
    assert grades["timer_and_overwrite"].points() == {**FULL, "test_session_tracker": 0,
                                                      "test_starting_counts": 0}
    assert grades["no_ttl_and_rows"].points() == {**FULL, "test_ttl_dedup": 0, "test_first_n": 0}
    # Nothing in a graded kernel tells an answer: the checks there only ask.
    assert grades["snooper"].points() == dict.fromkeys(FULL, 0)


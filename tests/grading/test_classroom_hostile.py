"""A class with hostile and broken submissions is graded to the end, and each one is recorded.

The corpus (:mod:`corpora.hostile`) holds broken files, edited or deleted grade cells,
endless loops, a kernel that dies, code that stops Spark or leaves a query running, a
notebook that fills the disk, and cheats. All of them are graded in one call, next to
honest learners, against one shared Spark Connect server: each must end with the outcome
and points the corpus expects, cheats must be flagged, and the honest learners graded
beside them must get exactly their points.
"""
import pytest

from autograder.grading import autograde
from autograder.grading.processes import GradingLimits
from corpora.hostile import (ASSIGNMENT, CASES, CELL_TIMEOUT, DISK_LIMIT_MB,
                                   SUBMISSION_TIMEOUT, write_corpus)

# Part of the two-worker run (early, as one of the longest files: it takes about three
# minutes, half of them waiting out the sleeper). `make test-hostile` runs it alone.
pytestmark = pytest.mark.hostile


@pytest.fixture(scope="module")
def graded(tmp_path_factory, grading_server, class_records):
    # On the session's one record of chapter 1's streams (classroom_fixtures.py).
    submissions = write_corpus(tmp_path_factory.mktemp("hostile"))
    course = tmp_path_factory.mktemp("course")
    limits = GradingLimits(CELL_TIMEOUT, SUBMISSION_TIMEOUT, DISK_LIMIT_MB)
    grades = autograde(ASSIGNMENT, submissions, jobs=2, limits=limits,
                       workdir=course, answers_of=class_records.recorded(ASSIGNMENT))
    return grades


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CASES))
def test_each_submission_ends_as_a_clear_recorded_result(graded, name):
    case, grade = CASES[name], graded[name]
    assert grade.outcome == case.outcome, grade
    assert grade.points() == case.points, grade
    assert bool(grade.flags) == case.flagged, grade.flags
    if case.detail:
        assert case.detail in grade.detail, grade.detail


@pytest.mark.slow
def test_honest_learners_beside_them_get_full_marks(graded):
    assert graded["honest"].points() == CASES["honest"].points
    assert graded["honest"].flags == [] and graded["honest"].detail == ""

"""Chapter 1, graded for learners nobody on the course wrote (:mod:`tests.learners.chapter1`).

Every right answer, whatever its style, passes every check on two seeds and is never
flagged; every misconception fails its task **on a fixed edge stream** (the lesson's stream
is not one drawn from the seed), so it fails on every seed, not only on lucky ones.
"""
import pytest

from autograder.feedback import CheckFailed
from autograder.grading_guards import scan_notebook
from tests.learners import expected_points, learners, run_task

ASSIGNMENT = "01_global_limit"
SEEDS = (11, 12)
LEARNERS = {learner.name: learner for learner in learners(ASSIGNMENT)}


@pytest.mark.parametrize("name", sorted(LEARNERS))
def test_no_learner_is_flagged(name):
    assert scan_notebook(LEARNERS[name].notebook(ASSIGNMENT)) == []


CASES = [(name, grade_id, points > 0)
         for name, learner in sorted(LEARNERS.items()) if learner.kind in ("correct", "misconception")
         for grade_id, points in expected_points(ASSIGNMENT, learner).items()
         if learner.kind == "correct" or points == 0]


@pytest.mark.parametrize("name, grade_id, passes", CASES)
def test_each_task_is_graded_right_on_every_seed(spark, name, grade_id, passes):
    learner = LEARNERS[name]
    for seed in SEEDS:
        if passes:
            run_task(ASSIGNMENT, learner, grade_id, seed)
            continue
        with pytest.raises(CheckFailed) as failure:
            run_task(ASSIGNMENT, learner, grade_id, seed)
        assert "seed" not in (failure.value.context or ""), (
            f"{name} fails {grade_id} only on a stream drawn from the seed: "
            f"{failure.value.lesson()}")

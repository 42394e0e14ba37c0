"""The two tests every chapter's learner corpus (:mod:`corpora.learners`) runs, written once:
each ``tests/grading/test_learners_<chapter>.py`` calls :func:`corpus_tests` for its
assignment."""
from __future__ import annotations

from corpora.learners import expected_points, learners, run_task
from tests.support.classroom_fixtures import SUITE_SEED


def corpus_tests(assignment: str, *, seed: int = SUITE_SEED, right_answers: bool = True):
    """The two tests each chapter's corpus module runs (``tests/grading/test_learners_*.py``):

    * no notebook of the corpus is flagged by the static scan;
    * each misconception fails its task **on a fixed edge stream** (the lesson's stream is
      not one drawn from the seed alone), so it fails whatever the seed. Where a fixed part
      runs beside the seed's with keys of its own (chapter 4), a difference in what a key
      owns names its part alone; what no key owns (a failing query, a metric) names both,
      and is on the fixed part when the fixed part alone would show it (the fixed parts of
      docs/grading-quality.md are built so); and, with
      ``right_answers``, each right answer passes every check (the benchmark
      ``scripts/benchmark_grading_quality.py`` grades them all, on several seeds).
    """
    import pytest

    from autograder.checks.checking import FIXED
    from autograder.checks.feedback import CheckFailed
    from autograder.grading.guards import scan_notebook

    corpus = {learner.name: learner for learner in learners(assignment)}
    cases = [(name, grade_id, points > 0)
             for name, learner in sorted(corpus.items())
             if learner.kind == "misconception" or (right_answers and learner.kind == "correct")
             for grade_id, points in expected_points(assignment, learner).items()
             if learner.kind == "correct" or points == 0]

    @pytest.mark.parametrize("name", sorted(corpus))
    def test_no_learner_is_flagged(name):
        assert scan_notebook(corpus[name].notebook(assignment)) == []

    @pytest.mark.parametrize("name, grade_id, passes", cases)
    def test_each_task_is_graded_right_whatever_the_seed(spark, answers_shared_by_the_workers,
                                                         name, grade_id, passes):
        if passes:
            run_task(assignment, corpus[name], grade_id, seed)
            return
        with pytest.raises(CheckFailed) as failure:
            run_task(assignment, corpus[name], grade_id, seed)
        context = failure.value.context or ""
        assert "seed" not in context or FIXED in context, (
            f"{name} fails {grade_id} only on a stream drawn from the seed: "
            f"{failure.value.lesson()}")

    return test_no_learner_is_flagged, test_each_task_is_graded_right_whatever_the_seed

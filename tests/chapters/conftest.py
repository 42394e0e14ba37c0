"""The chapters' checks ask Spark about the same streams as the learner corpora
(tests/grading/test_learners_*.py), often on the other worker: they share its answers."""
import pytest


@pytest.fixture(autouse=True)
def _share_sparks_answers(answers_shared_by_the_workers):
    pass

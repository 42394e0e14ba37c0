"""Chapter 5, graded for learners nobody on the course wrote
(:mod:`corpora.learners.chapter5`): no notebook of the corpus is
flagged, and every misconception fails its task on a fixed case, whatever the seed.
"""
from tests.support.corpus_tests import corpus_tests

test_no_learner_is_flagged, test_each_task_is_graded_right_whatever_the_seed = \
    corpus_tests("05_state_store")

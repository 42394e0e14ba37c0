"""Chapter 4, graded for learners nobody on the course wrote
(:mod:`corpora.learners.chapter4`): no notebook of the corpus is flagged, and every
misconception fails its task on a fixed edge stream, whatever the seed. Its right answers
start several Spark queries each: the benchmark (scripts/benchmark_grading_quality.py)
grades them, not CI.
"""
from tests.support.corpus_tests import corpus_tests

test_no_learner_is_flagged, test_each_task_is_graded_right_whatever_the_seed = \
    corpus_tests("04_transform_with_state", right_answers=False)

"""What the tests share beyond the learners' notebooks (those are in :mod:`corpora`):

* :mod:`tests.support.classroom_fixtures`: a shared Spark Connect server for grading tests,
  the suite's seed, and the answers its workers share;
* :mod:`tests.support.corpus_tests`: the two tests each chapter's learner corpus runs;
* ``fixed_answers.json``: Spark's answers to the fixed cases of the tasks that need no
  Spark (``scripts/record_fixed_answers.py`` writes it).
"""

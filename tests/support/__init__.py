"""What the tests share and the benchmark scripts may import: the learners' notebooks.

* :mod:`tests.support.submissions`: a submission built from the solution notebook with some
  answers rewritten (the untouched release, a classic mistake), and full marks per task;
* :mod:`tests.support.learners`: notebooks written as other learners would, one module
  per chapter, each with the points it should score;
* :mod:`tests.support.hostile`: broken, tampered, looping and cheating notebooks;
* :mod:`tests.support.classroom_fixtures`: a shared Spark Connect server for grading tests.
"""

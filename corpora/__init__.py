"""The notebooks the course is tried with, as learners nobody on the course wrote would hand
them in. The tests and the benchmark scripts both import them; nothing here is a test.

* :mod:`corpora.learners`: one module per chapter of right answers written another way,
  misconceptions, partial and hard-coded notebooks, each with the points it should score;
* :mod:`corpora.hostile`: broken, tampered, looping and cheating notebooks;
* :mod:`corpora.submissions`: a submission built from the solution notebook with some answers
  rewritten (the untouched release, a classic mistake), and full marks per task;
* :mod:`corpora.known_answers`: the worked examples' answers, asked of Spark by running each
  solved release (``make known-answers`` records them).

They hold right answers, so a graded kernel never sees this folder
(:data:`autograder.grading.hidden_folders.REPOSITORY_SECRETS`).
"""

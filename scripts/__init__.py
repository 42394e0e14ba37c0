"""The course's commands besides grading, one module each, run from the repository's root::

    .venv/bin/python -m scripts.<name> [options]      (most have a ``make`` target)

* building and serving: ``build_book`` (``make book``), ``lab`` (``make lab``,
  ``make lab-instructor``), ``vendor_widgets`` and ``vendor_axe`` (the JavaScript the pages
  and the browser tests fetch), ``record_class_archive`` (the JVM's class archive);
* recording what Spark answers: ``record_known_answers`` (``make known-answers``),
  ``record_fixed_answers``;
* measuring, each ending in a record of ``benchmarks/records/`` (:mod:`scripts.records`):
  the ``benchmark_*`` modules, ``count_micro_batches``, ``page_weight``, ``mutation_testing``
  (``make mutation``, ``make mutation-on-spark``); ``benchmark_tables`` and
  ``dimension_tables`` write the docs' tables from the records and the chapters' data.

They import the toolkit (:mod:`autograder`) and the learner corpora (:mod:`corpora`), never
the tests (``tests/toolkit/test_layout.py``).
"""

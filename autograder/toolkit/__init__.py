"""The learner's Spark toolkit: what a chapter's cells and a learner's answers use to run a
query and look inside it. It imports nothing of the course but :mod:`autograder.contract`.

=====================  ================================================================
``session``            the one Spark session of the course, each setting explained
``warm_python``        the warm Python that Spark forks for a transformWithState query
``driver``             feeds a streaming query one micro-batch at a time (``StreamRun``)
``sinks``              where a run's output goes and how each micro-batch's rows are read
``state``              a query's state store, read through Spark itself
``plan``               a running query's physical operators, as a tree
``streams``            fresh micro-batch streams drawn from a seed
``spark_jars``         what the installed Spark's jars say (classes, error conditions)
=====================  ================================================================
"""

"""What every chapter's checks stand on: a check asks the learner's code on each case in the
learner's kernel and is judged against Spark's answers outside it. It imports the toolkit
(:mod:`autograder.toolkit`) and :mod:`autograder.contract`, never a chapter.

=====================  ================================================================
``mode``               what this process is to the checks (self-check, graded, judge, ...)
``asking``             the two halves of a check, asking and judging, declared once
``answers``            Spark's answers, asked once per process (known, recorded, asked)
``shared_answers``     the answers the processes of one grading run keep for each other
``process_folder``     this process's own scratch folder
``checking``           the cases, the seed and the comparisons the chapters' checks share
``feedback``           a failure written as a lesson: expected, came, where, what to revisit
``learner_code``       which part of an error is the learner's own
``check_notebook``     where every task of a notebook stands (``make check``)
=====================  ================================================================
"""

"""Grading a class: the machinery behind ``python -m autograder.classroom grade``.

A learner never needs this package; an instructor runs its command (docs/instructor.md),
and a maintainer finds one concern per module:

=====================  ================================================================
``run``                a class: every submission, several at once, resumable; the one
                       description of a run (``GradingRun``) the command and the API grade by;
                       :func:`autograde`, the small API the tests use
``grader``             one notebook's grade: its run, the verdict, its ledger line
``notebook_run``       one notebook through nbgrader under watch: its kernel's sandbox,
                       environment, Connect session; nothing left running
``reference``          the solution's run: the class's seed, Spark's answers asked once
``run_answers``        the run's answers in the command's keeping: given to each
                       notebook, off the disk while learners' kernels run
``ledger``             a graded notebook's record, sealed; trusted only as the command wrote it
``course``             the nbgrader course folder: config, source, gradebook, limits;
                       what may be in it, and where nbgrader runs (outside it)
``grades_csv``         the class's CSV: nbgrader's columns, the sealed records' points
``nbgrader_setup``     the course folder's nbgrader configuration (stock nbgrader uses it)
``processes``          a watched process: time and disk limits (``GradingLimits``, the
                       one set of defaults), nothing left behind
``warm_nbgrader``      each notebook's nbgrader, forked from a process that imported it once
``judge``              the judging half: each grade cell's answers judged outside the
                       kernel, with Spark's recorded answers
``sandbox``            where a learner's code runs: its own user, PID and mount namespaces
                       (``bwrap``), nothing of the grader's mounted, nothing left behind
``sandboxed_kernel``   the kernel manager that starts each graded kernel in its sandbox
``guards``             what a cheat cannot do: the scan before, the guarded execution
``kernel_guard``       the guard inside a learner's kernel (standard library only)
``verdict``            after the run: which tasks a cheat touched, cells out of time
``spark``              the Spark of a run (a Connect server) and each notebook's session
``connect_server``     starting Spark Connect servers and standalone clusters
``hidden_folders``     what an unsandboxed server cannot see: the solutions, the tests, the
                       history
``results``            what grading a notebook ends with; the summary table
``shards``             one class on several machines: ``--shard K/N``, ``merge``
``cli``                the command line
=====================  ================================================================

Importing this package costs nothing: a learner's kernel imports :mod:`.kernel_guard` from
it (and :mod:`autograder.contract`, the names the command and the kernels share, which
lives with the toolkit). The names below are loaded when first used.
"""
from __future__ import annotations

from ..lazy_face import lazy_names

_PUBLIC = {
    "autograde": "run", "grade_class": "run", "GradingRun": "run",
    "Grader": "grader", "GradingCourse": "course", "GradingLimits": "processes",
    "REPOSITORY": "course", "DEFAULT_COURSE_DIR": "course",
    "CellScore": "results", "NotebookGrade": "results", "summary_table": "results",
    "GRADED": "results", "NOT_A_NOTEBOOK": "results", "TIMED_OUT": "results",
    "KERNEL_DIED": "results", "DISK_FULL": "results", "FAILED": "results",
    "GRADER_FAULT": "results", "GradingSpark": "spark",
    "find_submissions": "cli", "main": "cli",
}
__all__ = sorted(_PUBLIC)

__getattr__, __dir__ = lazy_names(__name__, _PUBLIC)

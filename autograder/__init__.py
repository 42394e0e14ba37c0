"""The course's package: the Spark toolkit learners use and the checks that grade exercises.

One folder per concern, each importing only those above it: :mod:`autograder.toolkit` (the
session, the micro-batch driver, the state and plan readers), :mod:`autograder.checks` (what
every check stands on), :mod:`autograder.chapters` (each chapter's checks),
:mod:`autograder.widgets` (the book's stepper and pictures) and :mod:`autograder.grading`
(the instructor's command). The names a page or a notebook uses most are here:

=====================  ================================================================
``course_session``     the one SparkSession of the course (:mod:`autograder.toolkit.session`)
``StreamRun``          drives a streaming query one micro-batch at a time
                       (:mod:`autograder.toolkit.driver`)
``read_state``         the rows of a query's state store (:mod:`autograder.toolkit.state`)
``physical_plan``      a query's physical operators, as a tree (:mod:`autograder.toolkit.plan`)
``check_equal``        a check whose failure is a small lesson (:mod:`autograder.checks.feedback`)
=====================  ================================================================
"""
from __future__ import annotations

from .lazy_face import lazy_names

#: The names above, each from its module: loaded when first used, so that importing a module
#: that needs no Spark (:mod:`autograder.contract`, the kernel's guard) loads no pyspark.
_PUBLIC = {
    "BatchRecord": "toolkit.driver", "StreamRun": "toolkit.driver", "StreamTimeout": "toolkit.driver",
    "CheckFailed": "checks.feedback", "check_equal": "checks.feedback",
    "PlanNode": "toolkit.plan", "parse_plan": "toolkit.plan", "physical_plan": "toolkit.plan",
    "course_session": "toolkit.session",
    "read_state": "toolkit.state", "read_state_metadata": "toolkit.state",
}
__all__ = sorted(_PUBLIC)
__getattr__, __dir__ = lazy_names(__name__, _PUBLIC)

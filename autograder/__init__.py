"""The course's toolkit: the Spark session, the micro-batch driver, the state and plan
readers, and the checks that grade exercises.

=====================  ================================================================
``course_session``     the one SparkSession of the course (:mod:`autograder.session`)
``StreamRun``          drives a streaming query one micro-batch at a time
                       (:mod:`autograder.driver`)
``read_state``         the rows of a query's state store (:mod:`autograder.state`)
``physical_plan``      a query's physical operators, as a tree (:mod:`autograder.plan`)
``check_equal``        a check whose failure is a small lesson (:mod:`autograder.feedback`)
=====================  ================================================================
"""
from __future__ import annotations

from .lazy_face import lazy_names

#: The names above, each from its module: loaded when first used, so that importing a module
#: that needs no Spark (:mod:`autograder.contract`, the kernel's guard) loads no pyspark.
_PUBLIC = {
    "BatchRecord": "driver", "StreamRun": "driver", "StreamTimeout": "driver",
    "CheckFailed": "feedback", "check_equal": "feedback",
    "PlanNode": "plan", "parse_plan": "plan", "physical_plan": "plan",
    "course_session": "session",
    "read_state": "state", "read_state_metadata": "state",
}
__all__ = sorted(_PUBLIC)
__getattr__, __dir__ = lazy_names(__name__, _PUBLIC)

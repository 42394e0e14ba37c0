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
from .driver import BatchRecord, StreamRun, StreamTimeout
from .feedback import CheckFailed, check_equal
from .plan import PlanNode, parse_plan, physical_plan
from .session import course_session
from .state import read_state, read_state_metadata

__all__ = [
    "BatchRecord", "CheckFailed", "PlanNode", "StreamRun", "StreamTimeout", "check_equal",
    "course_session", "parse_plan", "physical_plan", "read_state", "read_state_metadata",
]

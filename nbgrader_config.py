"""nbgrader's view of the course.

solutions/<assignment>/  is nbgrader's *source*: the notebooks with solutions and hidden tests;
exercises/<assignment>/  is the *release* that `nbgrader generate_assignment` writes from it
                         and that learners open (regenerate it with `make release`).
"""
import os

from autograder.contract import CELL_TIMEOUT, COURSE_ID
from autograder.grading.nbgrader_setup import CODE_STUB

c = get_config()  # noqa: F821 - provided by nbgrader

c.CourseDirectory.root = os.path.dirname(os.path.abspath(__file__))
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "exercises"
c.CourseDirectory.course_id = COURSE_ID

# A grade cell runs Spark micro-batches: give each cell room, but never forever (the same
# limit as the grading command's and the self-check's).
c.Execute.timeout = CELL_TIMEOUT
# The release keeps the public self-checks and drops the hidden ones.
c.ClearSolutions.code_stub = {"python": CODE_STUB}

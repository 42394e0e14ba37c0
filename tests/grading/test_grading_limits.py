"""How long and how big a notebook may get when graded is set in one place
(:class:`autograder.grading.processes.GradingLimits`) and kept by the course folder, so the
command, a resumed or merged run and stock nbgrader in that folder all grade with the same.
No Spark runs here."""
import inspect

from traitlets.config.loader import PyFileConfigLoader

from autograder.checks import check_notebook
from autograder.grading.cli import parser
from autograder.grading.course import GradingCourse
from autograder.grading.nbgrader_setup import CELL_TIMEOUT_ERROR
from autograder.grading.processes import GradingLimits


def nbgrader_config_of(course: GradingCourse):
    """The config stock nbgrader loads in the course folder."""
    return PyFileConfigLoader("nbgrader_config.py", path=str(course.root)).load_config()


def test_a_course_keeps_the_limits_it_was_set_up_with_and_nbgrader_reads_them(tmp_path):
    course = GradingCourse(tmp_path / "course", limits=GradingLimits(45, 120.0, 64.0))
    config = nbgrader_config_of(course)
    assert config.Execute.timeout == 45
    assert "after 45 s" in config.Execute.error_on_timeout["evalue"]
    assert config.Execute.error_on_timeout["ename"] == CELL_TIMEOUT_ERROR
    assert config.CourseDirectory.root == str(course.root)

    # Opened again without limits (what `merge` does with a shard's folder): kept, not reset.
    again = GradingCourse(tmp_path / "course")
    assert again.limits == GradingLimits(45, 120.0, 64.0)
    assert nbgrader_config_of(again).Execute.timeout == 45


def test_a_new_course_the_command_and_the_self_check_share_one_set_of_defaults(tmp_path):
    defaults = GradingLimits()
    assert GradingCourse(tmp_path / "new").limits == defaults
    grade = parser().parse_args(["grade", "01_global_limit", "--submissions", str(tmp_path)])
    assert (grade.cell_timeout, grade.timeout, grade.disk_limit_mb) == (
        defaults.cell_timeout, defaults.submission_timeout, defaults.disk_limit_mb)
    # A cell a learner's self-check lets finish is not stopped when graded.
    assert inspect.signature(check_notebook.check).parameters["cell_timeout"].default \
        == defaults.cell_timeout

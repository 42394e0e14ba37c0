"""The nbgrader configuration of a grading course (:class:`~.course.GradingCourse`).

The course folder's ``nbgrader_config.py`` is two lines that call :func:`configure`, so
that stock nbgrader run in the folder (``nbgrader autograde``, ``generate_feedback``,
``export``) works as the grading command does. The limits come from the course's
``limits.json`` (:func:`~.course.read_limits`), written when the course was set up.
"""
from __future__ import annotations

from pathlib import Path

from ..contract import COURSE_ID

#: nbgrader's placeholder for a solution in the released notebook.
CODE_STUB = "# YOUR CODE HERE\nraise NotImplementedError()"
#: The error a cell stopped at the time limit shows (:func:`~.verdict.cells_out_of_time`
#: finds it in a graded notebook).
CELL_TIMEOUT_ERROR = "CellTimeoutError"


def timeout_message(cell_timeout: int) -> str:
    """What a learner reads in a cell that grading stopped."""
    return (f"this cell was still running after {cell_timeout} s, the time a cell may take "
            "when grading: it was stopped and scores zero (look for a loop that never ends "
            "or a query that waits for ever)")


def configure(c, config_file: str) -> None:
    """Fill nbgrader's config ``c`` for the course whose ``nbgrader_config.py`` is ``config_file``."""
    from nbconvert.preprocessors import ClearMetadataPreprocessor, CSSHTMLHeaderPreprocessor
    from nbgrader.preprocessors import (AssignLatePenalties, CheckCellMetadata, ClearHiddenTests,
                                        GetGrades, IgnorePattern, LimitOutput, SaveAutoGrades)

    from .course import read_limits
    from .guards import GuardedExecute, HideHiddenTestTracebacks
    from .judge import JudgeGradeCells

    root = Path(config_file).resolve().parent
    limits = read_limits(root)
    c.CourseDirectory.root = str(root)
    c.CourseDirectory.course_id = COURSE_ID
    c.CourseDirectory.source_directory = "source"
    c.CourseDirectory.release_directory = "release"
    c.CourseDirectory.db_url = f"sqlite:///{root}/gradebook.db"
    c.ClearSolutions.code_stub = {"python": CODE_STUB}
    # Per cell: a cell still running after the limit is interrupted (and scores zero) ...
    c.Execute.timeout = limits.cell_timeout
    c.Execute.interrupt_on_timeout = True
    # ... and says so, in the graded notebook and in the learner's feedback.
    message = timeout_message(limits.cell_timeout)
    c.Execute.error_on_timeout = {"ename": CELL_TIMEOUT_ERROR, "evalue": message,
                                  "traceback": [f"{CELL_TIMEOUT_ERROR}: {message}"]}
    # A grade cell the learner deleted is put back (nbgrader finds it in the gradebook).
    c.OverwriteCells.add_missing_cells = True
    # The kernel only asks; its answers are judged here, outside it, before nbgrader scores them.
    c.Autograde.autograde_preprocessors = [
        GuardedExecute, JudgeGradeCells, IgnorePattern, ClearMetadataPreprocessor, LimitOutput,
        SaveAutoGrades, AssignLatePenalties, CheckCellMetadata]
    # Feedback shows neither hidden tests nor the tracebacks that would quote them.
    c.GenerateFeedback.preprocessors = [
        GetGrades, ClearHiddenTests, HideHiddenTestTracebacks, CSSHTMLHeaderPreprocessor]

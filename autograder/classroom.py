"""Grading notebooks with nbgrader, the way an instructor does.

:func:`autograde` takes submissions (one notebook per learner), lays out a throw-away
nbgrader course around them, runs the real ``nbgrader generate_assignment`` and
``nbgrader autograde`` commands, and reads each learner's points per graded cell from
nbgrader's gradebook. The tests use it to prove that the solution scores full marks, the
untouched release scores zero, and each wrong answer loses the points it should.
"""
from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

#: The course's top folder (where solutions/ and exercises/ live).
COURSE_ROOT = Path(__file__).resolve().parent.parent

_CONFIG = """\
c = get_config()
c.CourseDirectory.root = {root!r}
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "exercises"
c.CourseDirectory.db_url = "sqlite:///{root}/gradebook.db"
c.Execute.timeout = {cell_timeout}
c.ClearSolutions.code_stub = {{"python": "# YOUR CODE HERE\\nraise NotImplementedError()"}}
"""


@dataclass
class CellScore:
    """The points one graded cell gave one learner."""

    score: float
    max_score: float


@dataclass
class NotebookGrade:
    """One learner's graded notebook: points per grade cell (by nbgrader ``grade_id``)."""

    student: str
    cells: dict[str, CellScore]

    @property
    def score(self) -> float:
        return sum(cell.score for cell in self.cells.values())

    @property
    def max_score(self) -> float:
        return sum(cell.max_score for cell in self.cells.values())

    def points(self) -> dict[str, float]:
        return {grade_id: cell.score for grade_id, cell in self.cells.items()}


def autograde(assignment: str, submissions: dict[str, Path], *, cell_timeout: int = 600,
              env: dict[str, str] | None = None,
              workdir: Path | None = None) -> dict[str, NotebookGrade]:
    """Grade each learner's notebook with stock nbgrader; return grades by learner.

    ``submissions`` maps a learner's name to the notebook they handed in. The notebook is
    graded as ``<assignment>/<name of the solution notebook>``. The nbgrader course is laid
    out in a temporary folder, or in ``workdir`` (kept afterwards, to look at the graded
    notebooks).
    """
    from nbgrader.api import Gradebook

    source = COURSE_ROOT / "solutions" / assignment
    notebook_names = sorted(p.name for p in source.glob("*.ipynb"))
    if len(notebook_names) != 1:
        raise ValueError(f"{source} should hold exactly one notebook, found {notebook_names}")
    notebook_name = notebook_names[0]

    with contextlib.ExitStack() as stack:
        root = Path(workdir or stack.enter_context(
            tempfile.TemporaryDirectory(prefix="nbgrader-course-")))
        shutil.copytree(source, root / "solutions" / assignment)
        (root / "nbgrader_config.py").write_text(
            _CONFIG.format(root=str(root), cell_timeout=cell_timeout))
        for student, notebook in submissions.items():
            target = root / "submitted" / student / assignment / notebook_name
            target.parent.mkdir(parents=True)
            shutil.copy(notebook, target)

        run_env = {**os.environ, **(env or {})}
        # nbgrader runs `alembic` (and kernels) from PATH: put this Python's bin first.
        run_env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), run_env.get("PATH", "")])
        _nbgrader(["generate_assignment", assignment, "--force"], root, run_env)
        for student in submissions:
            _nbgrader(["db", "student", "add", student], root, run_env)
        _nbgrader(["autograde", assignment], root, run_env, check=False)

        grades = {}
        with Gradebook(f"sqlite:///{root}/gradebook.db") as gradebook:
            for student in submissions:
                notebook_id = notebook_name[: -len(".ipynb")]
                try:
                    graded = gradebook.find_submission_notebook(notebook_id, assignment, student)
                except Exception:  # noqa: BLE001 - nbgrader could not grade it at all
                    grades[student] = NotebookGrade(student, {})
                    continue
                grades[student] = NotebookGrade(student, {
                    grade.name: CellScore(grade.score, grade.max_score) for grade in graded.grades
                })
        return grades


def _nbgrader(args: list[str], root: Path, env: dict[str, str], check: bool = True):
    command = [sys.executable, "-m", "nbgrader", *args]
    result = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True)
    if check and result.returncode != 0:
        raise RuntimeError(f"nbgrader {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")
    return result

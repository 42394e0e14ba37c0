"""The nbgrader course a grading run works in: its config, its source, its gradebook.

Stock nbgrader does the grading in this folder: ``generate_assignment`` records an
assignment in the gradebook, ``autograde`` restores locked cells, runs a notebook and saves
its points, ``generate_feedback`` and ``export`` write the learners' feedback and the
instructor's CSV. The config written here swaps nbgrader's ``Execute`` for the guarded one
(:mod:`autograder.grading.guards`) and keeps hidden tests out of the feedback.
"""
from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import shutil
import subprocess
import sys
import threading
import warnings
from pathlib import Path

from ..warm_python import worker_python
from .processes import GradingLimits
from .results import CellScore, NotebookGrade



def find_repository(start: Path | None = None) -> Path | None:
    """The course's repository, the folder holding ``solutions/`` (the instructor's notebooks,
    which grading runs): ``start`` (the current folder by default) or the nearest folder
    above it that holds one, else the checkout this package was loaded from. None when
    neither holds one, as for a package installed from a wheel and run elsewhere."""
    here = Path(start or Path.cwd()).resolve()
    checkout = Path(__file__).resolve().parents[2]
    for folder in (here, *here.parents, checkout):
        if (folder / "solutions").is_dir():
            return folder
    return None


#: The course's repository (where solutions/ and exercises/ live) as seen from where this
#: process started; the current folder when none is found (the grading command then says
#: so). Not to be confused with a :class:`GradingCourse`, nbgrader's course folder. A
#: self-check never needs it: it runs on the package's own files.
REPOSITORY = find_repository() or Path.cwd().resolve()
#: Where the grading command keeps its nbgrader course unless told otherwise.
DEFAULT_COURSE_DIR = REPOSITORY / ".course-work" / "classroom"

#: The course folder's nbgrader config: what it sets is :mod:`.nbgrader_setup`'s.
_CONFIG = """\
# Written by autograder.grading.course: the nbgrader course used for grading.
# What it sets: autograder/grading/nbgrader_setup.py; its limits: limits.json beside it.
from autograder.grading.nbgrader_setup import configure

configure(get_config(), __file__)
"""
#: The course folder's file of :class:`~.processes.GradingLimits`.
LIMITS_FILE = "limits.json"


def read_limits(root: Path) -> GradingLimits:
    """The limits the course at ``root`` grades with (the defaults if it has none yet)."""
    path = Path(root) / LIMITS_FILE
    return GradingLimits(**json.loads(path.read_text())) if path.is_file() else GradingLimits()


class GradingCourse:
    """The nbgrader course folder grading works in: config, source, gradebook, submissions."""

    def __init__(self, root: Path, *, limits: GradingLimits | None = None,
                 repository: Path = REPOSITORY):
        """``limits``: what a notebook may take here; None keeps the course's own (a folder
        set up before, as ``merge`` finds it), or the defaults for a new one."""
        self.root = Path(root).resolve()
        #: The instructor's notebooks: ``<repository>/solutions/<assignment>/*.ipynb``.
        self.solutions = Path(repository).resolve() / "solutions"
        self.root.mkdir(parents=True, exist_ok=True)
        self.limits = limits or read_limits(self.root)
        (self.root / LIMITS_FILE).write_text(json.dumps(dataclasses.asdict(self.limits)))
        (self.root / "nbgrader_config.py").write_text(_CONFIG)
        self.db_url = f"sqlite:///{self.root}/gradebook.db"
        self._db_lock = threading.Lock()

    def notebook_name(self, assignment: str) -> str:
        names = sorted(p.name for p in (self.solutions / assignment).glob("*.ipynb"))
        if len(names) != 1:
            raise ValueError(f"solutions/{assignment} should hold exactly one notebook: {names}")
        return names[0]

    def prepare(self, assignment: str, env: dict[str, str]) -> None:
        """Record the assignment in the gradebook (once per version of the solution)."""
        source = self.solutions / assignment
        digest = file_digest(source / self.notebook_name(assignment))
        stamp = self.root / "grading" / assignment / "source.sha256"
        if stamp.exists() and stamp.read_text() == digest:
            return
        target = self.root / "source" / assignment
        shutil.rmtree(self.answers_folder(assignment), ignore_errors=True)  # for the old solution
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(source, target)
        run_nbgrader(["generate_assignment", assignment, "--force"], self.root, env)
        stamp.parent.mkdir(parents=True, exist_ok=True)
        stamp.write_text(digest)

    def grade_ids(self, assignment: str) -> list[str]:
        """The assignment's grade cells, in notebook order."""
        import nbformat
        nb = nbformat.read(self.solutions / assignment / self.notebook_name(assignment), 4)
        return [c.metadata["nbgrader"]["grade_id"] for c in nb.cells
                if c.get("metadata", {}).get("nbgrader", {}).get("grade")]

    def ledger(self, assignment: str, student: str) -> Path:
        """Where a graded submission is written down (what makes a run resumable)."""
        return self.root / "grading" / assignment / f"{student}.json"

    def closed_folders(self) -> list[Path]:
        """The course's folders a learner's Spark must not read, made now if need be: the
        solutions as nbgrader keeps them (``source/``) and the class's notebooks
        (``submitted/``)."""
        folders = [self.root / "source", self.root / "submitted"]
        for folder in folders:
            folder.mkdir(parents=True, exist_ok=True)
        return folders

    def answers_folder(self, assignment: str) -> Path:
        """Where a run keeps its seed and Spark's answers (:mod:`autograder.grading.reference`)."""
        return self.root / "spark-answers" / assignment

    # -- the gradebook ----------------------------------------------------------------------
    @contextlib.contextmanager
    def gradebook(self):
        from nbgrader.api import Gradebook
        with self._db_lock, Gradebook(self.db_url) as gradebook:
            yield gradebook

    def record_zero(self, assignment: str, student: str) -> None:
        """Make sure the gradebook holds this submission, with zero for every cell."""
        from nbgrader.api import MissingEntry
        with self.gradebook() as gradebook:
            try:
                submission = gradebook.find_submission(assignment, student)
            except MissingEntry:
                with warnings.catch_warnings():  # SQLAlchemy's autoflush notes
                    warnings.simplefilter("ignore")
                    submission = gradebook.add_submission(assignment, student)
            for notebook in submission.notebooks:
                for grade in notebook.grades:
                    grade.auto_score, grade.manual_score = 0, None
            gradebook.db.commit()

    def zero(self, assignment: str, student: str, grade_ids: set[str]) -> None:
        """A cheat: these cells score zero, whatever they earned."""
        with self.gradebook() as gradebook:
            submission = gradebook.find_submission(assignment, student)
            for notebook in submission.notebooks:
                for grade in notebook.grades:
                    if grade.name in grade_ids:
                        grade.manual_score = 0
            gradebook.db.commit()

    def read_grade(self, assignment, student, outcome, *, flags=(), detail="") -> NotebookGrade:
        """The learner's points as the gradebook holds them now."""
        name = self.notebook_name(assignment)[: -len(".ipynb")]
        with self.gradebook() as gradebook:
            graded = gradebook.find_submission_notebook(name, assignment, student)
            cells = {grade.name: CellScore(grade.score, grade.max_score) for grade in graded.grades}
        return NotebookGrade(student, cells, outcome, list(flags), detail)


def run_nbgrader(args: list[str], root: Path, env: dict[str, str], check: bool = True):
    command = [sys.executable, "-m", "nbgrader", *args]
    result = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True)
    if check and result.returncode != 0:
        raise RuntimeError(f"nbgrader {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")
    return result


def file_digest(path: Path) -> str:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return "unreadable"


def nbgrader_env(env: dict[str, str] | None = None) -> dict[str, str]:
    """The environment nbgrader and the kernels it starts run with."""
    run_env = {**os.environ, **(env or {})}
    # nbgrader runs `alembic` (and kernels) from PATH: put this Python's bin first.
    run_env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), run_env.get("PATH", "")])
    run_env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    if "PYSPARK_PYTHON" not in run_env:
        run_env["PYSPARK_PYTHON"] = worker_python()
    run_env.pop("SPARK_REMOTE", None)
    return run_env

"""The nbgrader course a grading run works in: its config, its source, its gradebook.

Stock nbgrader does the grading in this folder: ``generate_assignment`` records an
assignment in the gradebook, ``autograde`` restores locked cells, runs a notebook and saves
its points, ``generate_feedback`` and ``export`` write the learners' feedback and the
instructor's CSV. The config written here swaps nbgrader's ``Execute`` for the guarded one
(:mod:`autograder.grading.guards`) and keeps hidden tests out of the feedback.

The command trusts only what it wrote there. Every nbgrader process it starts runs in a
folder of the command's own outside the course folder (:attr:`GradingCourse.home`), so that
nothing in the course folder is on nbgrader's import path (nbgrader puts its working
folder first); the course's ``nbgrader_config.py`` is written again each time the folder
is opened; and a course folder holding a file the command does not know (a second config,
``nbgrader_config.json``, which nbgrader would load too; a package named like one it
imports) is refused (:class:`UnknownFiles`).
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
import tempfile
import threading
import warnings
import weakref
from pathlib import Path

from ..toolkit.warm_python import worker_python
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
#: The config of the folder every nbgrader process of the command runs in: the course's.
_HOME_CONFIG = """\
# Written by autograder.grading.course for one grading command: nbgrader runs in this
# folder, outside the course folder, with the course's settings.
from autograder.grading.nbgrader_setup import configure

configure(get_config(), {config!r})
"""
#: The course folder's file of :class:`~.processes.GradingLimits`.
LIMITS_FILE = "limits.json"
#: What the command and nbgrader keep at the top of a course folder: its files and its
#: folders; anything else is refused. (``.nbgrader.log`` and the SQLite journals are
#: nbgrader's and SQLite's own.)
KNOWN_FILES = frozenset({
    "nbgrader_config.py", LIMITS_FILE, "gradebook.db", "gradebook.db-journal",
    "gradebook.db-wal", "gradebook.db-shm", ".nbgrader.log", "grades.csv", "grades.csv.tmp"})
KNOWN_FOLDERS = frozenset({"source", "release", "submitted", "autograded", "feedback",
                           "grading", "spark-answers", "spark-logs"})


class UnknownFiles(ValueError):
    """A course folder holds files the command did not put there."""

    def __init__(self, root: Path, names: list[str]):
        self.names = names
        super().__init__(
            f"the course folder {root} holds what the grading command did not write: "
            f"{', '.join(names)}. nbgrader would read some of it (a config, a module) while "
            "it grades; move it out of the folder (or grade in a new one) and run again")


def unknown_entries(root: Path) -> list[str]:
    """The names at the top of the course folder ``root`` that are neither a known file
    nor a known folder (a folder named like a file counts as unknown, and so does a link)."""
    return [entry.name for entry in sorted(Path(root).iterdir())
            if entry.is_symlink() or entry.name not in (
                KNOWN_FOLDERS if entry.is_dir() else KNOWN_FILES)]


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
        unknown = unknown_entries(self.root)
        if unknown:
            raise UnknownFiles(self.root, unknown)
        self.limits = limits or read_limits(self.root)
        (self.root / LIMITS_FILE).write_text(json.dumps(dataclasses.asdict(self.limits)))
        (self.root / "nbgrader_config.py").write_text(_CONFIG)
        self.db_url = f"sqlite:///{self.root}/gradebook.db"
        self._db_lock = threading.Lock()
        self._home: Path | None = None

    @property
    def home(self) -> Path:
        """The folder every nbgrader process of this command runs in: made for it (mode
        0700, outside the course folder), holding only a config that loads the course's,
        and removed when this object goes."""
        if self._home is None:
            home = Path(tempfile.mkdtemp(prefix="nbgrader-home-"))
            (home / "nbgrader_config.py").write_text(
                _HOME_CONFIG.format(config=str(self.root / "nbgrader_config.py")))
            weakref.finalize(self, shutil.rmtree, str(home), True)
            self._home = home
        return self._home

    def run_nbgrader(self, args: list[str], env: dict[str, str], check: bool = True):
        """``nbgrader <args>`` on this course, from :attr:`home`."""
        command = [sys.executable, "-m", "nbgrader", *args]
        result = subprocess.run(command, cwd=self.home, env=env, capture_output=True, text=True)
        if check and result.returncode != 0:
            raise RuntimeError(f"nbgrader {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")
        return result

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
        self.run_nbgrader(["generate_assignment", assignment, "--force"], env)
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
        with self.gradebook() as gradebook:
            cells = held_cells(gradebook, self.notebook_name(assignment), assignment, student)
        return NotebookGrade(student, cells, outcome, list(flags), detail)


def held_cells(gradebook, notebook: str, assignment: str, student: str) -> dict[str, CellScore]:
    """The points per grade cell that an open ``gradebook`` holds for the learner's
    ``notebook`` (``<name>.ipynb``); nbgrader's ``MissingEntry`` if it holds none."""
    graded = gradebook.find_submission_notebook(notebook[: -len(".ipynb")], assignment, student)
    return {grade.name: CellScore(grade.score, grade.max_score) for grade in graded.grades}


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

"""Grading a class with nbgrader: fast, safe, and resumable.

Stock nbgrader does the grading: ``generate_assignment`` records the assignment in the
gradebook, ``autograde`` restores locked cells, runs each notebook and saves the points,
``generate_feedback`` and ``export`` give learners their feedback and the instructor a CSV.
This module lays the course out for it and adds what a class of real submissions needs:

* **one Spark for everybody**: a Spark Connect server (:mod:`autograder.connect_server`)
  started once; each notebook gets its own Connect session (``SPARK_REMOTE`` with a fresh
  session id) and its own temporary folder, so learners never see each other's state;
  after each notebook, whatever it left running on the server is stopped;
* **several notebooks at once** (``jobs``), each with a time limit and a disk limit;
* **guards** against cheating (:mod:`autograder.grading_guards`): the tasks a cheat could
  touch score zero and the submission is flagged;
* **a recorded result for everything**: a notebook that is not JSON, a kernel that dies, a
  notebook that runs out of time each end as a line in the summary and zeros in the
  gradebook, while the rest of the class is graded;
* **resuming**: each graded submission is written down (``grading/<assignment>/<learner>.json``)
  right after nbgrader saved its points; a run killed halfway starts where it stopped.

:func:`autograde` is the small API the tests use; ``python -m autograder.classroom grade``
is the instructor's command (see ``docs/instructor.md``).
"""
from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path

#: The course's top folder (where solutions/ and exercises/ live).
COURSE_ROOT = Path(__file__).resolve().parent.parent
#: Where the grading command keeps its nbgrader course unless told otherwise.
DEFAULT_COURSE_DIR = COURSE_ROOT / ".course-work" / "classroom"
#: The variable that points :func:`autograde` at a running Connect server (set by the
#: tests' shared-server fixture); ``SPARK_REMOTE`` itself is left to the session factory.
SHARED_SERVER_VARIABLE = "AUTOGRADER_SPARK_REMOTE"

_CONFIG = """\
# Written by autograder.classroom: the nbgrader course used for grading.
from nbconvert.preprocessors import ClearMetadataPreprocessor, CSSHTMLHeaderPreprocessor
from nbgrader.preprocessors import (AssignLatePenalties, CheckCellMetadata, ClearHiddenTests,
                                    GetGrades, IgnorePattern, LimitOutput, SaveAutoGrades)
from autograder.grading_guards import GuardedExecute, HideHiddenTestTracebacks

c = get_config()
c.CourseDirectory.root = {root!r}
c.CourseDirectory.course_id = "inside-spark-state-store"
c.CourseDirectory.source_directory = "source"
c.CourseDirectory.release_directory = "release"
c.CourseDirectory.db_url = "sqlite:///{root}/gradebook.db"
c.ClearSolutions.code_stub = {{"python": "# YOUR CODE HERE\\nraise NotImplementedError()"}}
# Per cell: a cell still running after this many seconds is interrupted (and scores zero).
c.Execute.timeout = {cell_timeout}
c.Execute.interrupt_on_timeout = True
# ... and says so, in the graded notebook and in the learner's feedback.
c.Execute.error_on_timeout = {{
    "ename": "CellTimeoutError",
    "evalue": "{timeout_message}",
    "traceback": ["CellTimeoutError: {timeout_message}"]}}
# A grade cell the learner deleted is put back (nbgrader finds it in the gradebook).
c.OverwriteCells.add_missing_cells = True
c.Autograde.autograde_preprocessors = [
    GuardedExecute, IgnorePattern, ClearMetadataPreprocessor, LimitOutput, SaveAutoGrades,
    AssignLatePenalties, CheckCellMetadata]
# Feedback shows neither hidden tests nor the tracebacks that would quote them.
c.GenerateFeedback.preprocessors = [
    GetGrades, ClearHiddenTests, HideHiddenTestTracebacks, CSSHTMLHeaderPreprocessor]
"""

# -- results ------------------------------------------------------------------------------------
GRADED = "graded"
NOT_A_NOTEBOOK = "not a notebook"
TIMED_OUT = "out of time"
KERNEL_DIED = "kernel died"
DISK_FULL = "disk limit"
FAILED = "grading failed"


@dataclass
class CellScore:
    """The points one graded cell gave one learner."""

    score: float
    max_score: float


@dataclass
class NotebookGrade:
    """One learner's graded notebook: points per grade cell (by nbgrader ``grade_id``),
    what happened (``outcome``), and what the guards flagged."""

    student: str
    cells: dict[str, CellScore]
    outcome: str = GRADED
    flags: list[str] = field(default_factory=list)
    detail: str = ""
    seconds: float = 0.0

    @property
    def score(self) -> float:
        return sum(cell.score for cell in self.cells.values())

    @property
    def max_score(self) -> float:
        return sum(cell.max_score for cell in self.cells.values())

    def points(self) -> dict[str, float]:
        return {grade_id: cell.score for grade_id, cell in self.cells.items()}

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> "NotebookGrade":
        cells = {k: CellScore(**v) for k, v in data.pop("cells").items()}
        return cls(cells=cells, **data)


# -- the nbgrader course ----------------------------------------------------------------------------
class GradingCourse:
    """The nbgrader course folder grading works in: config, source, gradebook, submissions."""

    def __init__(self, root: Path, *, cell_timeout: int = 600):
        self.root = Path(root).resolve()
        self.root.mkdir(parents=True, exist_ok=True)
        (self.root / "nbgrader_config.py").write_text(
            _CONFIG.format(root=str(self.root), cell_timeout=cell_timeout,
                           timeout_message=timeout_message(cell_timeout)))
        self.db_url = f"sqlite:///{self.root}/gradebook.db"
        self._db_lock = threading.Lock()

    def notebook_name(self, assignment: str) -> str:
        names = sorted(p.name for p in (COURSE_ROOT / "solutions" / assignment).glob("*.ipynb"))
        if len(names) != 1:
            raise ValueError(f"solutions/{assignment} should hold exactly one notebook: {names}")
        return names[0]

    def prepare(self, assignment: str, env: dict[str, str]) -> None:
        """Record the assignment in the gradebook (once per version of the solution)."""
        source = COURSE_ROOT / "solutions" / assignment
        digest = _digest(source / self.notebook_name(assignment))
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
        nb = nbformat.read(COURSE_ROOT / "solutions" / assignment / self.notebook_name(assignment), 4)
        return [c.metadata["nbgrader"]["grade_id"] for c in nb.cells
                if c.get("metadata", {}).get("nbgrader", {}).get("grade")]

    @contextlib.contextmanager
    def gradebook(self):
        from nbgrader.api import Gradebook
        with self._db_lock, Gradebook(self.db_url) as gradebook:
            yield gradebook

    def ledger(self, assignment: str, student: str) -> Path:
        return self.root / "grading" / assignment / f"{student}.json"

    def answers_folder(self, assignment: str) -> Path:
        """Where a run keeps its seed and Spark's answers (see :meth:`Grader.record_answers`)."""
        return self.root / "spark-answers" / assignment


def run_nbgrader(args: list[str], root: Path, env: dict[str, str], check: bool = True):
    command = [sys.executable, "-m", "nbgrader", *args]
    result = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True)
    if check and result.returncode != 0:
        raise RuntimeError(f"nbgrader {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")
    return result


def _digest(path: Path) -> str:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return "unreadable"


def _base_env(env: dict[str, str] | None) -> dict[str, str]:
    run_env = {**os.environ, **(env or {})}
    # nbgrader runs `alembic` (and kernels) from PATH: put this Python's bin first.
    run_env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), run_env.get("PATH", "")])
    run_env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    run_env.setdefault("PYSPARK_PYTHON", sys.executable)
    run_env.pop("SPARK_REMOTE", None)
    return run_env


# -- one submission ------------------------------------------------------------------------------------
@dataclass
class GradingLimits:
    """How long and how big one notebook may get."""

    cell_timeout: int = 600
    submission_timeout: float = 1800.0
    disk_limit_mb: float = 512.0


class Grader:
    """Grades submissions of one course folder against one Spark (local or a Connect URL)."""

    def __init__(self, course: GradingCourse, *, remote: str | None = None,
                 limits: GradingLimits | None = None, env: dict[str, str] | None = None,
                 deny: list[Path] = ()):
        self.course = course
        self.remote = remote
        self.limits = limits or GradingLimits()
        self.env = _base_env(env)
        self.deny = [COURSE_ROOT / "solutions", course.root, *deny]
        self._running: dict[str, subprocess.Popen] = {}
        self._cancelled = threading.Event()
        #: What every notebook of an assignment is graded with: the run's seed, its answers.
        self.assignment_env: dict[str, dict[str, str]] = {}

    def record_answers(self, assignment: str, *, reuse: bool = True) -> str:
        """Draw this run's seed and ask Spark once for the answers every notebook needs.

        The solution notebook (nbgrader's source, hidden tests included) runs once, with the
        seed every learner will get, and records what Spark answered each of its checks and
        the checkpoints some checks hand to the learner's code (:mod:`autograder.answers`).
        The learners' kernels then read those instead of asking Spark again. A resumed run
        (``reuse``) keeps the seed and the answers of the run it resumes, so one class is
        graded on one set of streams. Returns a line for the instructor: the seed, and how
        the solution fared.
        """
        from .answers import ANSWERS_VARIABLE, RECORD_VARIABLE, checkpoints_beside
        from .feedback import fresh_seed

        folder = self.course.answers_folder(assignment)
        answers, seed_file = folder / "answers.json", folder / "seed"
        if reuse and answers.exists() and seed_file.exists():
            seed = seed_file.read_text().strip()
            self.assignment_env[assignment] = {"COURSE_SEED": seed, ANSWERS_VARIABLE: str(answers)}
            return f"{assignment}: seed {seed} and Spark's answers kept from the interrupted run"

        seed = str(fresh_seed())
        folder.mkdir(parents=True, exist_ok=True)
        answers.unlink(missing_ok=True)
        recording = folder / "answers.recording.json"
        recording.unlink(missing_ok=True)
        for old in (checkpoints_beside(answers), checkpoints_beside(recording)):
            shutil.rmtree(old, ignore_errors=True)
        seed_file.write_text(seed)  # COURSE_SEED=<it> replays the run's streams
        workdir = Path(tempfile.mkdtemp(prefix=f"grading-answers-{assignment}-"))
        source = self.course.root / "source" / assignment / self.course.notebook_name(assignment)
        session_url = _session_url(self.remote) if self.remote else None
        env = {**self._kernel_env(assignment, workdir, session_url),
               "COURSE_SEED": seed, RECORD_VARIABLE: str(recording)}
        command = [sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook",
                   "--execute", str(source), "--output-dir", str(workdir),
                   f"--ExecutePreprocessor.timeout={self.limits.cell_timeout}"]
        log = folder / "solution-run.log"
        started = time.monotonic()
        try:
            with open(log, "wb") as out:
                process = subprocess.Popen(command, cwd=workdir, env=env, stdout=out,
                                           stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                           start_new_session=True)
            try:
                outcome, _ = self._watch(process, [workdir])
            finally:  # Ctrl-C included: no kernel outlives the run
                _kill_tree(process.pid)
            ran = outcome == GRADED and process.returncode == 0
        finally:
            if session_url:
                from .connect_server import release_session
                release_session(session_url)
            shutil.rmtree(workdir, ignore_errors=True)
        if not recording.exists():
            recording.write_text("{}")
        if checkpoints_beside(recording).is_dir():  # the checkpoints some checks read
            checkpoints_beside(recording).rename(checkpoints_beside(answers))
        recording.replace(answers)  # only now: an interrupted run records nothing
        self.assignment_env[assignment] = {"COURSE_SEED": seed, ANSWERS_VARIABLE: str(answers)}
        seconds = time.monotonic() - started
        if ran:
            return f"{assignment}: seed {seed}; the solution ran clean in {seconds:.0f} s"
        return (f"{assignment}: seed {seed}; the solution notebook did NOT run clean "
                f"({_last_error(log.read_text(errors='replace'))}; see {log}); learners' "
                "kernels ask Spark for what it did not record")

    def cancel(self) -> None:
        """Stop every notebook being graded now (Ctrl-C)."""
        self._cancelled.set()
        for process in list(self._running.values()):
            _kill_tree(process.pid)

    def grade(self, assignment: str, student: str, notebook: Path) -> NotebookGrade:
        start = time.monotonic()
        grade = self._grade(assignment, student, Path(notebook))
        grade.seconds = round(time.monotonic() - start, 1)
        ledger = self.course.ledger(assignment, student)
        ledger.parent.mkdir(parents=True, exist_ok=True)
        record = {"submission_sha256": _digest(notebook), **grade.to_json()}
        partial = ledger.with_suffix(".tmp")
        partial.write_text(json.dumps(record, indent=1))
        partial.replace(ledger)  # written only once the gradebook holds the grade
        return grade

    def _grade(self, assignment: str, student: str, notebook: Path) -> NotebookGrade:
        import nbformat
        from .grading_guards import read_log, scan_notebook

        name = self.course.notebook_name(assignment)
        grade_ids = self.course.grade_ids(assignment)
        with self.course.gradebook() as gradebook:
            gradebook.update_or_create_student(student)
        try:
            nb = nbformat.read(notebook, as_version=4)
        except Exception as error:  # noqa: BLE001 - not JSON, empty, not a notebook
            self._record_zero(assignment, student)
            return self._read(assignment, student, NOT_A_NOTEBOOK,
                              detail=f"{type(error).__name__}: {str(error)[:200]}")
        static = scan_notebook(nb)

        submitted = self.course.root / "submitted" / student / assignment
        shutil.rmtree(submitted, ignore_errors=True)
        submitted.mkdir(parents=True)
        nbformat.write(_without_duplicate_ids(nb), submitted / name)
        autograded = self.course.root / "autograded" / student / assignment
        workdir = Path(tempfile.mkdtemp(prefix=f"grading-{student}-"))
        guard_log = self.course.ledger(assignment, student).with_suffix(".guard.jsonl")
        guard_log.parent.mkdir(parents=True, exist_ok=True)
        guard_log.unlink(missing_ok=True)
        nbgrader_log = self.course.ledger(assignment, student).with_suffix(".log")
        session_url = _session_url(self.remote) if self.remote else None
        env = {**self._kernel_env(assignment, workdir, session_url),
               "AUTOGRADER_GUARD_LOG": str(guard_log),
               "AUTOGRADER_GUARD_DENY": os.pathsep.join(str(p) for p in self.deny)}
        outcome, detail = GRADED, ""
        try:
            outcome, detail = self._run_autograde(assignment, student, env, nbgrader_log,
                                                  [workdir, autograded])
        finally:
            if session_url:
                from .connect_server import release_session
                left = release_session(session_url)
                if left:
                    detail = (detail + "; " if detail else "") + \
                        f"left {len(left)} streaming query(ies) running (stopped)"
            shutil.rmtree(workdir, ignore_errors=True)

        log_text = nbgrader_log.read_text(errors="replace") if nbgrader_log.exists() else ""
        if outcome != GRADED or not (autograded / name).exists():
            if outcome == GRADED:
                if "DeadKernelError" in log_text or "Kernel died" in log_text:
                    outcome = KERNEL_DIED
                else:
                    outcome, detail = FAILED, _last_error(log_text)
            self._record_zero(assignment, student)

        if (autograded / name).exists():
            stopped = cells_out_of_time(autograded / name)
            if stopped:
                detail = (detail + "; " if detail else "") + \
                    f"stopped at the {self.limits.cell_timeout} s cell limit: {', '.join(stopped)}"

        flags = [f"cell {f.cell}: {f.what}" for f in static]
        affected = set()
        for f in static:
            affected |= _grade_cells_after(nb, f.cell, grade_ids)
        events = read_log(guard_log)
        runtime_flags, runtime_affected = _runtime_cheats(events, grade_ids)
        flags += runtime_flags
        affected |= runtime_affected
        if outcome == GRADED and not any(e.get("event") == "start" for e in events):
            flags.append("the grading guard never ran")
            affected |= set(grade_ids)
        if affected:
            self._zero(assignment, student, affected)
        return self._read(assignment, student, outcome, flags=flags, detail=detail)

    def _kernel_env(self, assignment: str, workdir: Path, session_url: str | None) -> dict[str, str]:
        """The environment of a kernel that runs one notebook: its own temporary folder and
        JVM log, its own Connect session, and the run's seed and answers."""
        env = {**self.env, **self.assignment_env.get(assignment, {}),
               "TMPDIR": str(workdir), "COURSE_JVM_LOG": str(workdir / "jvm.log")}
        if session_url:
            env["SPARK_REMOTE"] = session_url
        return env

    def _run_autograde(self, assignment, student, env, log_path, watched):
        command = [sys.executable, "-m", "nbgrader", "autograde", assignment,
                   "--student", student, "--force"]
        for attempt in range(2):
            with open(log_path, "wb") as log:
                process = subprocess.Popen(command, cwd=self.course.root, env=env, stdout=log,
                                           stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                           start_new_session=True)
            self._running[student] = process
            outcome, detail = self._watch(process, watched)
            self._running.pop(student, None)
            _kill_tree(process.pid)  # a kernel nbgrader could not shut down
            if self._cancelled.is_set():
                raise KeyboardInterrupt
            if outcome == GRADED and "database is locked" in log_path.read_text(errors="replace"):
                continue  # another notebook was saving its grades: once more
            return outcome, detail
        return outcome, detail

    def _watch(self, process: subprocess.Popen, watched: list[Path]) -> tuple[str, str]:
        deadline = time.monotonic() + self.limits.submission_timeout
        next_disk_check = 0.0
        while True:
            try:
                process.wait(0.1)  # a notebook that ends is taken up at once
                return GRADED, ""
            except subprocess.TimeoutExpired:
                pass
            now = time.monotonic()
            if now > deadline:
                _kill_tree(process.pid)
                return TIMED_OUT, f"still running after {self.limits.submission_timeout:.0f} s"
            if now > next_disk_check:
                used = sum(_disk_usage(p) for p in watched) / 2**20
                if used > self.limits.disk_limit_mb:
                    _kill_tree(process.pid)
                    return DISK_FULL, f"wrote {used:.0f} MB (limit {self.limits.disk_limit_mb:.0f} MB)"
                next_disk_check = now + 1.0

    def _record_zero(self, assignment: str, student: str) -> None:
        """Make sure the gradebook holds this submission, with zero for every cell."""
        from nbgrader.api import MissingEntry
        with self.course.gradebook() as gradebook:
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

    def _zero(self, assignment: str, student: str, grade_ids: set[str]) -> None:
        """A cheat: these cells score zero, whatever they earned."""
        with self.course.gradebook() as gradebook:
            submission = gradebook.find_submission(assignment, student)
            for notebook in submission.notebooks:
                for grade in notebook.grades:
                    if grade.name in grade_ids:
                        grade.manual_score = 0
            gradebook.db.commit()

    def _read(self, assignment, student, outcome, *, flags=(), detail="") -> NotebookGrade:
        name = self.course.notebook_name(assignment)[: -len(".ipynb")]
        with self.course.gradebook() as gradebook:
            graded = gradebook.find_submission_notebook(name, assignment, student)
            cells = {grade.name: CellScore(grade.score, grade.max_score) for grade in graded.grades}
        return NotebookGrade(student, cells, outcome, list(flags), detail)


def timeout_message(cell_timeout: int) -> str:
    """What a learner reads in a cell that grading stopped."""
    return (f"this cell was still running after {cell_timeout} s, the time a cell may take "
            "when grading: it was stopped and scores zero (look for a loop that never ends "
            "or a query that waits for ever)")


def cells_out_of_time(notebook: Path) -> list[str]:
    """The cells of a graded notebook that grading stopped at the cell time limit, named by
    their nbgrader id (``test_predict_emitted``) or, for a learner's own cell, position."""
    import nbformat
    try:
        nb = nbformat.read(notebook, as_version=4)
    except Exception:  # noqa: BLE001 - nothing to say about a notebook that is not one
        return []
    stopped = []
    for index, cell in enumerate(nb.cells):
        if any(output.get("output_type") == "error" and output.get("ename") == "CellTimeoutError"
               for output in cell.get("outputs", [])):
            grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
            stopped.append(grade_id or f"cell {index}")
    return stopped


def _session_url(remote: str) -> str:
    import uuid
    base = remote.rstrip("/")
    separator = ";" if "/;" in base else "/;"
    return f"{base}{separator}session_id={uuid.uuid4()}"


def _grade_cells_after(nb, index: int, grade_ids: list[str]) -> set[str]:
    """Grade cells a learner's cell at ``index`` runs before (and missing ones)."""
    present = {}
    for position, cell in enumerate(nb.cells):
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if grade_id in grade_ids and grade_id not in present:
            present[grade_id] = position
    return {g for g in grade_ids if present.get(g, len(nb.cells)) > index}


def _runtime_cheats(events: list[dict], grade_ids: list[str]) -> tuple[list[str], set[str]]:
    flags, affected = [], set()
    last_end = None
    ended = set()
    for event in events:
        kind, cell = event.get("event"), event.get("cell")
        if kind == "end":
            last_end = cell
            ended.add(cell)
        elif kind in ("tamper", "denied", "garbled"):
            where = cell or (f"after {last_end}" if last_end else "before the first grade cell")
            flags.append(f"{where}: {kind} {event.get('what', '')}".rstrip())
            if cell in grade_ids:
                first = grade_ids.index(cell)
            elif last_end in grade_ids:
                first = grade_ids.index(last_end) + 1
            else:
                first = 0
            affected |= set(grade_ids[first:])
    return flags, affected


def _without_duplicate_ids(nb):
    """A learner who copies or splits a cell gives two cells the same ``grade_id``; nbgrader
    then refuses the whole notebook. The first keeps its identity, the copies become plain
    cells (nbgrader puts the locked cell's source back into the first)."""
    seen = set()
    for cell in nb.cells:
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if grade_id in seen:
            del cell.metadata["nbgrader"]
        elif grade_id:
            seen.add(grade_id)
    return nb


def _last_error(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    errors = [i for i, line in enumerate(lines) if "| ERROR]" in line]
    if errors:
        return " ".join(lines[errors[0]: errors[0] + 2])[:300]
    errors = [line for line in lines if "Error" in line]
    return (errors or lines or ["no output"])[-1][:300]


def _disk_usage(path: Path) -> int:
    total = 0
    for folder, _, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(folder, name)).st_size
    return total


def _kill_tree(pid: int) -> None:
    """Kill a process and everything it started (the kernel lives in its own session)."""
    import psutil
    try:
        root = psutil.Process(pid)
        family = root.children(recursive=True) + [root]
    except psutil.Error:
        return
    for process in family:
        with contextlib.suppress(psutil.Error):
            process.kill()
    psutil.wait_procs(family, timeout=5)


# -- a class --------------------------------------------------------------------------------------------
@contextlib.contextmanager
def grading_spark(spark: str | None, log_dir: Path | None = None):
    """Yield the Connect URL to grade against (or None for a local Spark per notebook).

    ``spark`` is ``"server"`` (start a loopback Connect server, ``local[2]``), ``"local"``
    (no server: each kernel starts its own Spark, like stock nbgrader), ``"standalone"``
    (start a one-worker standalone cluster and a Connect server on it), a ``spark://``
    master URL (a Connect server on that cluster), or an ``sc://`` URL (an existing server).
    Whatever is started here is stopped on the way out, on errors and Ctrl-C included.
    """
    from .connect_server import ConnectServer, StandaloneCluster

    if spark in (None, "local"):
        yield None
    elif spark.startswith("sc://"):
        yield spark
    elif spark == "server" or spark.startswith("spark://") or spark.startswith("local"):
        master = "local[2]" if spark == "server" else spark
        with ConnectServer(master, log_dir=log_dir) as server:
            yield server.url
    elif spark == "standalone":
        with StandaloneCluster(log_dir=log_dir) as cluster, \
                ConnectServer(cluster.url, log_dir=log_dir) as server:
            yield server.url
    else:
        raise ValueError(f"unknown Spark for grading: {spark!r}")


def grade_class(course: GradingCourse, work: dict[str, dict[str, Path]], *,
                remote: str | None, jobs: int = 2, limits: GradingLimits | None = None,
                env: dict[str, str] | None = None, force: bool = False, deny: list[Path] = (),
                progress=None, class_answers: bool = True) -> dict[str, dict[str, NotebookGrade]]:
    """Grade ``work`` ({assignment: {learner: notebook}}); resume unless ``force``.

    With ``class_answers`` every notebook of an assignment is graded on the same fresh
    streams, and Spark's answers for them are asked once (:meth:`Grader.record_answers`);
    without, each kernel draws its own streams and asks Spark itself, as stock nbgrader.
    """
    grader = Grader(course, remote=remote, limits=limits, env=env, deny=list(deny))
    results: dict[str, dict[str, NotebookGrade]] = {a: {} for a in work}
    todo = []
    for assignment, submissions in work.items():
        course.prepare(assignment, grader.env)
        for student, notebook in submissions.items():
            ledger = course.ledger(assignment, student)
            if not force and ledger.exists():
                record = json.loads(ledger.read_text())
                if record.pop("submission_sha256", None) == _digest(notebook):
                    results[assignment][student] = NotebookGrade.from_json(record)
                    continue
            todo.append((assignment, student, notebook))
    if class_answers:
        for assignment in sorted({item[0] for item in todo}):
            if progress:
                progress.note(f"{assignment}: running the solution once for Spark's answers ...")
            line = grader.record_answers(assignment, reuse=not force)
            if progress:
                progress.note(line)
    if progress:
        progress.start(len(todo), skipped=sum(map(len, results.values())))
    pool = ThreadPoolExecutor(max_workers=max(1, jobs))
    try:
        futures = {pool.submit(grader.grade, *item): item for item in todo}
        for future in as_completed(futures):
            assignment, student, _ = futures[future]
            try:
                grade = future.result()
            except KeyboardInterrupt:
                raise
            except Exception as error:  # noqa: BLE001 - one learner never stops the class
                grade = NotebookGrade(student, {}, FAILED, detail=f"{type(error).__name__}: {error}")
            results[assignment][student] = grade
            if progress:
                progress.advance(assignment, grade)
    except BaseException:
        grader.cancel()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    return results


def autograde(assignment: str, submissions: dict[str, Path], *, cell_timeout: int = 600,
              env: dict[str, str] | None = None, workdir: Path | None = None,
              spark: str | None = None, jobs: int = 1,
              submission_timeout: float = 1800.0, disk_limit_mb: float = 512.0,
              class_answers: bool = True) -> dict[str, NotebookGrade]:
    """Grade each learner's notebook with nbgrader; return grades by learner.

    ``submissions`` maps a learner's name to the notebook they handed in. The nbgrader
    course is laid out in a temporary folder, or in ``workdir`` (kept afterwards, to look at
    the graded notebooks). ``spark`` chooses the Spark the notebooks use (see
    :func:`grading_spark`); by default, the Connect server named by
    ``AUTOGRADER_SPARK_REMOTE`` when set (the tests' shared server), else a local Spark in
    each kernel. ``jobs`` notebooks are graded at once. ``class_answers``: see
    :func:`grade_class`.
    """
    spark = spark or os.environ.get(SHARED_SERVER_VARIABLE) or "local"
    limits = GradingLimits(cell_timeout, submission_timeout, disk_limit_mb)
    with contextlib.ExitStack() as stack:
        root = Path(workdir or stack.enter_context(
            tempfile.TemporaryDirectory(prefix="nbgrader-course-")))
        course = GradingCourse(root, cell_timeout=cell_timeout)
        remote = stack.enter_context(grading_spark(spark, log_dir=root / "spark-logs"))
        results = grade_class(course, {assignment: dict(submissions)}, remote=remote,
                              jobs=jobs, limits=limits, env=env, force=True,
                              class_answers=class_answers)
        return results[assignment]


# -- the command ---------------------------------------------------------------------------------------
class Progress:
    """A one-line progress bar on stderr."""

    def __init__(self, stream=sys.stderr):
        self.stream, self.done, self.total, self.flagged = stream, 0, 0, 0
        self.started = time.monotonic()

    def start(self, total: int, skipped: int = 0) -> None:
        self.total, self.started = total, time.monotonic()
        if skipped:
            print(f"{skipped} submission(s) already graded: kept (use --force to regrade)",
                  file=self.stream)
        self._draw("")

    def note(self, line: str) -> None:
        print(line, file=self.stream, flush=True)

    def advance(self, assignment: str, grade: NotebookGrade) -> None:
        self.done += 1
        self.flagged += bool(grade.flags) or grade.outcome != GRADED
        self._draw(f"{assignment}/{grade.student}")

    def _draw(self, last: str) -> None:
        width = 30
        filled = int(width * self.done / self.total) if self.total else width
        elapsed = time.monotonic() - self.started
        eta = elapsed / self.done * (self.total - self.done) if self.done else 0
        line = (f"\r[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} "
                f"{elapsed:5.0f}s eta {eta:4.0f}s  {self.flagged} to look at  {last[:40]:<40}")
        print(line, end="" if self.done < self.total else "\n", file=self.stream, flush=True)


def summary_table(results: dict[str, dict[str, NotebookGrade]]) -> str:
    lines = []
    for assignment, grades in results.items():
        ids = sorted({g for grade in grades.values() for g in grade.cells}, key=str)
        lines.append(f"\n{assignment}")
        header = ["learner", "points", *[g.removeprefix("test_") for g in ids], "outcome", "flags"]
        rows = []
        for student in sorted(grades):
            grade = grades[student]
            rows.append([student, f"{grade.score:g}/{grade.max_score:g}",
                         *[f"{grade.cells[g].score:g}" if g in grade.cells else "-" for g in ids],
                         grade.outcome + (f" ({grade.detail})" if grade.detail else ""),
                         "; ".join(grade.flags)[:120] or "-"])
        widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header) - 2)]
        for row in [header, *rows]:
            cells = [str(c).ljust(w) for c, w in zip(row, widths)] + row[len(widths):]
            lines.append("  ".join(cells))
        flagged = [s for s, g in grades.items() if g.flags]
        failed = [s for s, g in grades.items() if g.outcome != GRADED]
        lines.append(f"{len(grades)} graded, {len(flagged)} flagged for cheating "
                     f"({', '.join(sorted(flagged)) or 'none'}), {len(failed)} not run to the end "
                     f"({', '.join(sorted(failed)) or 'none'})")
    return "\n".join(lines)


def find_submissions(folder: Path, assignments: list[str]) -> dict[str, dict[str, Path]]:
    """Submissions in ``folder``: nbgrader's ``<learner>/<assignment>/<notebook>.ipynb``
    layout, or ``<learner>.ipynb`` files when grading a single assignment."""
    work: dict[str, dict[str, Path]] = {a: {} for a in assignments}
    for student_dir in sorted(p for p in folder.iterdir() if p.is_dir()):
        for assignment in assignments:
            notebooks = sorted((student_dir / assignment).glob("*.ipynb"))
            if notebooks:
                work[assignment][student_dir.name] = notebooks[0]
    if len(assignments) == 1:
        for notebook in sorted(folder.glob("*.ipynb")):
            work[assignments[0]].setdefault(notebook.stem, notebook)
    return {a: s for a, s in work.items() if s}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder.classroom",
                                     description="Grade a class's notebooks with nbgrader.")
    commands = parser.add_subparsers(dest="command", required=True)
    grade = commands.add_parser("grade", help="grade every submission of an assignment")
    grade.add_argument("assignment", nargs="?", help="e.g. 01_global_limit")
    grade.add_argument("--all", action="store_true", help="every assignment in solutions/")
    grade.add_argument("--submissions", type=Path, required=True,
                       help="<learner>/<assignment>/*.ipynb (nbgrader's layout) or <learner>.ipynb")
    grade.add_argument("--course-dir", type=Path, default=DEFAULT_COURSE_DIR,
                       help="the nbgrader course folder: gradebook, graded notebooks, feedback")
    grade.add_argument("--spark", default="server",
                       help="server (default), local, standalone, spark://HOST:PORT or sc://HOST:PORT")
    grade.add_argument("--jobs", type=int, default=2, help="notebooks graded at once")
    grade.add_argument("--cell-timeout", type=int, default=300)
    grade.add_argument("--timeout", type=float, default=900, help="seconds per notebook")
    grade.add_argument("--disk-limit-mb", type=float, default=512)
    grade.add_argument("--force", action="store_true", help="regrade what is already graded")
    grade.add_argument("--no-feedback", action="store_true")
    grade.add_argument("--streams-per-notebook", action="store_true",
                       help="each notebook draws its own streams and asks Spark itself, as with "
                            "stock nbgrader (slower; by default a run grades everybody on the "
                            "same fresh streams and asks Spark once)")
    args = parser.parse_args(argv)

    if args.all == bool(args.assignment):
        parser.error("name one assignment or give --all")
    assignments = sorted(p.name for p in (COURSE_ROOT / "solutions").iterdir() if p.is_dir()) \
        if args.all else [args.assignment]
    work = find_submissions(args.submissions.resolve(), assignments)
    if not work:
        parser.error(f"no submissions for {', '.join(assignments)} in {args.submissions}")
    course = GradingCourse(args.course_dir, cell_timeout=args.cell_timeout)
    limits = GradingLimits(args.cell_timeout, args.timeout, args.disk_limit_mb)
    started = time.monotonic()
    try:
        with grading_spark(args.spark, log_dir=course.root / "spark-logs") as remote:
            if remote:
                print(f"grading against Spark Connect at {remote}", file=sys.stderr)
            results = grade_class(course, work, remote=remote, jobs=args.jobs, limits=limits,
                                  force=args.force, deny=[args.submissions.resolve()],
                                  progress=Progress(),
                                  class_answers=not args.streams_per_notebook)
    except KeyboardInterrupt:
        print("\ninterrupted: graded submissions are kept; run the same command to resume",
              file=sys.stderr)
        return 130
    env = _base_env(None)
    if not args.no_feedback:
        for assignment in results:
            run_nbgrader(["generate_feedback", assignment, "--force"], course.root, env, check=False)
    run_nbgrader(["export", "--to", str(course.root / "grades.csv")], course.root, env, check=False)
    print(summary_table(results))
    print(f"\n{time.monotonic() - started:.0f} s. Gradebook {course.root / 'gradebook.db'}, "
          f"CSV {course.root / 'grades.csv'}, feedback {course.root / 'feedback'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

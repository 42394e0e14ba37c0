"""Grading one learner's notebook: nbgrader's ``autograde`` under watch, then the guards'
verdict, then a line in the ledger."""
from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

from ..contract import ANSWERS, CHECKPOINTS, GUARD_DENY, GUARD_LOG, JVM_LOG, SHARED_ANSWERS
from ..warm_python import scripts_folder
from .course import REPOSITORY, GradingCourse, nbgrader_env
from . import ledger
from .processes import kill_tree, last_error, run_watched
from .reference import record_answers
from .sandbox import (INPUTS, RECORDED_ANSWERS, SANDBOX, kernel_sandbox, new_workdir,
                      why_not_available)
from .results import (DIED_ONCE, FAILED, GRADED, GRADER_FAULT, KERNEL_DIED, NOT_A_NOTEBOOK,
                      SERVER_LOST, NotebookGrade)
from .spark import GradingSpark, session_url
from .verdict import cells_out_of_time, cheats, without_duplicate_ids
from .warm_nbgrader import WarmNbgrader

#: What nbgrader's output says when a notebook's kernel died (nbclient's error, and
#: nbgrader's own line).
KERNEL_DEATH = ("DeadKernelError", "Kernel died")
#: What it says when the kernel died before it could run a cell: no code of the learner's
#: had run, so the fault is the grader's (its sandbox, the machine).
KERNEL_NEVER_STARTED = "Kernel died before replying to kernel_info"
#: What it says when another notebook of the run held the gradebook (SQLite's lock) as it
#: saved its grades: that notebook is graded once more.
GRADEBOOK_LOCKED = "database is locked"


class Silent:
    """A run's progress told to nobody (the API's); the command's tells the instructor
    (:class:`autograder.grading.cli.Progress`)."""

    def note(self, line: str) -> None:
        pass

    def start(self, total: int, skipped: int = 0) -> None:
        pass

    def advance(self, assignment: str, grade: NotebookGrade) -> None:
        pass


class Grader:
    """Grades submissions of one course folder against one Spark (local, or a Connect
    server: a :class:`~autograder.grading.spark.GradingSpark` or its URL)."""

    def __init__(self, course: GradingCourse, *, remote: GradingSpark | str | None = None,
                 env: dict[str, str] | None = None, deny: list[Path] = (),
                 sandboxed: bool = True):
        """``sandboxed``: every learner's kernel runs in a sandbox (:mod:`.sandbox`); False
        only where the machine cannot build one and the instructor said so."""
        if sandboxed and why_not_available():
            raise RuntimeError(f"cannot grade in a sandbox: {why_not_available()}")
        self.sandboxed = sandboxed
        self.course = course
        self.spark = remote if isinstance(remote, GradingSpark) or remote is None \
            else GradingSpark(remote)
        self.limits = course.limits
        self.env = nbgrader_env(env)
        # The solutions, the course's folder, and the scripts Spark runs as its Python.
        self.deny = [REPOSITORY / "solutions", course.root, scripts_folder(), *deny]
        self._running: dict[str, subprocess.Popen] = {}
        self._cancelled = threading.Event()
        #: Where each notebook's nbgrader process is forked from (imports made once a run).
        self.nbgrader = WarmNbgrader(cwd=course.home)
        #: What every notebook of an assignment is graded with: the run's seed, its answers.
        self.assignment_env: dict[str, dict[str, str]] = {}
        #: Spark's answers kept in this process only while learners' kernels run
        #: (:meth:`seal_answers`), by assignment: the file they came from and its text.
        self.sealed: dict[str, tuple[Path, str]] = {}

    @property
    def remote(self) -> str | None:
        """The Connect URL notebooks are graded against (None: a local Spark each)."""
        return self.spark.url if self.spark else None

    def record_answers(self, assignment: str, *, reuse: bool = True) -> str:
        """Run the solution once for the class's seed and Spark's answers
        (:mod:`autograder.grading.reference`); return the instructor's line about it."""
        given, line = record_answers(
            self.course, assignment, remote=self.remote, limits=self.limits, reuse=reuse,
            kernel_env=lambda workdir, url: self._kernel_env(assignment, workdir, url))
        self.assignment_env[assignment] = given
        return line

    def seal_answers(self) -> None:
        """Take every assignment's recorded answers off the disk until :meth:`close`.

        A learner's kernel never holds an answer, but its Spark reads any file the grading
        machine can (``spark.read.text``, under Connect or not, and so do the Python
        workers Spark starts for a UDF or a ``foreachBatch``), and the answers file's place
        follows from what a kernel knows. So while learners' notebooks run, the answers live
        only in this process, and reach each notebook's judge through the pipe it is forked
        from. :meth:`close` writes them back for the next run to resume with. If this process
        is killed before, the next run records them again on the same seed
        (:func:`~.reference.record_answers`). An assignment whose notebook has a check its
        kernel judges itself (not declared in two halves) keeps its file: its kernel reads it.
        """
        import nbformat

        from .judge import all_checks_declared

        for assignment, given in self.assignment_env.items():
            answers = Path(given.get(ANSWERS, ""))
            if assignment in self.sealed or not answers.is_file():
                continue
            source = self.course.root / "source" / assignment / self.course.notebook_name(assignment)
            if not all_checks_declared(nbformat.read(source, as_version=4)):
                continue
            self.sealed[assignment] = (answers, answers.read_text())
            answers.unlink()

    def unseal_answers(self) -> None:
        """Put the answers :meth:`seal_answers` took off the disk back in their files."""
        while self.sealed:
            _, (answers, text) = self.sealed.popitem()
            partial = answers.with_suffix(".tmp")
            partial.write_text(text)
            partial.replace(answers)

    def _sealed_answers(self, assignment: str) -> dict | None:
        """The answers a notebook's judge is handed in memory (None: it reads their file)."""
        sealed = self.sealed.get(assignment)
        return json.loads(sealed[1]) if sealed else None

    def recover(self, fault: str, progress=None) -> bool:
        """Whether a notebook that ``fault`` spoiled can be graded again now: when the
        Connect server is gone, it is started again first. A fault of another kind (a bug
        in the course's code) would only happen again: that notebook waits for the next run."""
        if self.spark is None or SERVER_LOST not in fault:
            return False
        if self.spark.alive():
            return True  # another notebook's fault has restarted it already
        progress = progress or Silent()
        progress.note(f"the Spark Connect server at {self.spark.url} stopped: starting it again")
        restarted = self.spark.restart()
        progress.note("... it runs again" if restarted else
                          "... it could not be started again: the notebooks left are not graded")
        return restarted

    def cancel(self) -> None:
        """Stop every notebook being graded now (Ctrl-C). The answers stay sealed: the run
        puts them back at :meth:`close`, once the threads grading are done."""
        self._cancelled.set()
        for process in list(self._running.values()):
            kill_tree(process.pid)
        self.nbgrader.close()

    def _started(self, student: str, process) -> None:
        """Note a notebook's nbgrader process, for :meth:`cancel` to find. One that a
        thread launched just as the run was cancelled, too late for :meth:`cancel` to see
        it, is stopped here: else the run would wait for its notebook to end."""
        self._running[student] = process
        if self._cancelled.is_set():
            kill_tree(process.pid)

    def close(self) -> None:
        """End the process nbgrader is forked from, and put the answers back on the disk
        (the run is over). Called once no notebook is being graded: each notebook's
        processes, its kernel's sandbox whole, were killed when it ended
        (:func:`~.processes.run_watched`), so no learner's process sees them again."""
        self.nbgrader.close()
        self.unseal_answers()

    def grade(self, assignment: str, student: str, notebook: Path) -> NotebookGrade:
        """Grade one notebook and write it down in the ledger (what makes a run resumable).
        A grade the grader's own fault spoiled is not written down: the next run grades the
        notebook again."""
        start = time.monotonic()
        grade = self._grade(assignment, student, Path(notebook))
        grade.sandboxed = self.sandboxed
        grade.seconds = round(time.monotonic() - start, 1)
        if grade.outcome == GRADER_FAULT:
            self.course.ledger(assignment, student).unlink(missing_ok=True)
            return grade
        ledger.write(self.course, assignment, student, grade, notebook=notebook)
        return grade

    def _grade(self, assignment: str, student: str, notebook: Path) -> NotebookGrade:
        """Read the notebook, run it through nbgrader, and decide its grade."""
        import nbformat
        from .guards import scan_notebook

        course = self.course
        with course.gradebook() as gradebook:
            gradebook.update_or_create_student(student)
        try:
            nb = nbformat.read(notebook, as_version=4)
        except Exception as error:  # noqa: BLE001 - not JSON, empty, not a notebook
            course.record_zero(assignment, student)
            return course.read_grade(assignment, student, NOT_A_NOTEBOOK,
                                     detail=f"{type(error).__name__}: {str(error)[:200]}")
        static = scan_notebook(nb)
        submitted = course.root / "submitted" / student / assignment
        shutil.rmtree(submitted, ignore_errors=True)
        submitted.mkdir(parents=True)
        nbformat.write(without_duplicate_ids(nb), submitted / course.notebook_name(assignment))
        outcome, detail = self._run(assignment, student)
        if outcome == GRADER_FAULT:
            return NotebookGrade(student, {}, GRADER_FAULT, detail=detail)
        return self._decide(assignment, student, nb, static, outcome, detail)

    def _guard_log(self, assignment: str, student: str) -> Path:
        return self.course.ledger(assignment, student).with_suffix(".guard.jsonl")

    def _autograded(self, assignment: str, student: str) -> Path:
        return self.course.root / "autograded" / student / assignment

    def _run(self, assignment: str, student: str) -> tuple[str, str]:
        """nbgrader's ``autograde`` of the submission: its outcome and what to say of it.
        A kernel that died is given a second run; the guard's log may show the grader at fault."""
        from .guards import read_log

        guard_log, autograded = self._guard_log(assignment, student), self._autograded(assignment, student)
        guard_log.parent.mkdir(parents=True, exist_ok=True)
        outcome, detail = self._autograde(assignment, student, guard_log, autograded)
        if outcome == GRADED and self._kernel_died(assignment, student):
            # A kernel can die of what is not the learner's (the machine's memory, a crash
            # in Spark's client): only a death that happens again is theirs.
            outcome, detail = self._autograde(assignment, student, guard_log, autograded)
            if outcome == GRADED and not self._kernel_died(assignment, student):
                detail = _also(detail, DIED_ONCE)
            elif outcome == GRADED and KERNEL_NEVER_STARTED in self._log_text(assignment, student):
                outcome, detail = GRADER_FAULT, ("the notebook's kernel did not start (its "
                                                 "sandbox or the machine): none of the "
                                                 "learner's code ran")
            elif outcome == GRADED:
                detail = "it died again when graded a second time"
        if outcome == GRADED:
            faults = graders_faults(read_log(guard_log), self.course.grade_ids(assignment))
            if faults:
                outcome, detail = GRADER_FAULT, "; ".join(faults)
        return outcome, detail

    def _decide(self, assignment: str, student: str, nb, static: list, outcome: str,
                detail: str) -> NotebookGrade:
        """The grade of a notebook nbgrader ran (or could not run): zeros where it did not
        end, the cells stopped at the time limit named, and the tasks a cheat touched zeroed."""
        from .guards import read_log

        course = self.course
        graded = self._autograded(assignment, student) / course.notebook_name(assignment)
        if outcome != GRADED or not graded.exists():
            if outcome == GRADED:
                if self._kernel_died(assignment, student):
                    outcome = KERNEL_DIED
                else:
                    outcome, detail = FAILED, last_error(self._log_text(assignment, student))
            course.record_zero(assignment, student)
        stopped = cells_out_of_time(graded)
        if stopped:
            detail = _also(detail, f"stopped at the {self.limits.cell_timeout} s cell limit: "
                                   f"{', '.join(stopped)}")
        flags, affected = cheats(nb, static, read_log(self._guard_log(assignment, student)),
                                 course.grade_ids(assignment), ran=outcome == GRADED)
        if affected:
            course.zero(assignment, student, affected)
        return course.read_grade(assignment, student, outcome, flags=flags, detail=detail)

    def _log_text(self, assignment: str, student: str) -> str:
        """What nbgrader printed while it graded the notebook last."""
        log = self.course.ledger(assignment, student).with_suffix(".log")
        return log.read_text(errors="replace") if log.exists() else ""

    def _kernel_died(self, assignment: str, student: str) -> bool:
        text = self._log_text(assignment, student)
        return any(sign in text for sign in KERNEL_DEATH)

    def _autograde(self, assignment, student, guard_log: Path, autograded: Path) -> tuple[str, str]:
        """nbgrader's ``autograde`` of one submission, in its own temporary folder and
        Connect session, with a fresh guard log; retried once if another notebook held the
        gradebook's lock."""
        guard_log.unlink(missing_ok=True)
        workdir = new_workdir()
        spark, generation = self.spark, self.spark.generation if self.spark else 0

        def server_lost() -> str | None:
            if spark is None or (spark.generation == generation and spark.alive()):
                return None
            return SERVER_LOST

        url = session_url(self.remote) if self.remote else None
        env = {**self._kernel_env(assignment, workdir, url), GUARD_LOG: str(guard_log),
               GUARD_DENY: os.pathsep.join(str(p) for p in self.deny)}
        kernel_log = workdir / "guard.jsonl"
        if self.sandboxed:
            env[SANDBOX] = json.dumps(self._sandbox(env, workdir, kernel_log).to_json())
        else:
            kernel_log = guard_log
        log = self.course.ledger(assignment, student).with_suffix(".log")
        command = [sys.executable, "-m", "nbgrader", "autograde", assignment,
                   "--student", student, "--force"]
        outcome, detail = GRADED, ""
        try:
            for _ in range(2):
                if self._cancelled.is_set():
                    raise KeyboardInterrupt
                outcome, detail, _ = run_watched(
                    command, cwd=self.course.home, env=env, log=log,
                    watched=[workdir, autograded], limits=self.limits,
                    started=functools.partial(self._started, student),
                    fault=server_lost, launch=functools.partial(
                        self.nbgrader.launch, answers=self._sealed_answers(assignment)))
                self._running.pop(student, None)
                if self._cancelled.is_set():
                    raise KeyboardInterrupt
                lost = server_lost()
                if lost:  # it may have died just as the notebook ended
                    outcome, detail = GRADER_FAULT, lost
                if outcome == GRADER_FAULT:
                    break
                if not (outcome == GRADED and GRADEBOOK_LOCKED in log.read_text(errors="replace")):
                    break  # else another notebook was saving its grades: once more
        finally:
            if kernel_log != guard_log:
                _take_kernel_log(kernel_log, guard_log)
            if url and spark.alive():  # a dead server has no session to release
                left = _release(url)
                if left:
                    detail = _also(detail, f"left {len(left)} streaming query(ies) running (stopped)")
            shutil.rmtree(workdir, ignore_errors=True)
        return outcome, detail

    def _sandbox(self, env: dict[str, str], workdir: Path, kernel_log: Path):
        """The sandbox of one notebook's kernel: it writes its working folder (and the
        guard's log there); it reads the checkpoints the solution's run recorded for it
        (inputs, not answers), the answers file only when its notebook judges its own checks
        (both at :data:`~.sandbox.INPUTS`, the course folder they are in being absent), and
        the tests' shared answers when they are shared."""
        from ..answers import checkpoints_beside

        inputs, inside = {}, {GUARD_LOG: str(kernel_log)}
        answers = env.get(ANSWERS)
        if answers and checkpoints_beside(answers).is_dir():
            inputs[checkpoints_beside(RECORDED_ANSWERS).name] = checkpoints_beside(answers)
            inside[CHECKPOINTS] = f"{INPUTS}/{checkpoints_beside(RECORDED_ANSWERS)}"
        if answers and Path(answers).is_file():  # found by the kernel manager, if kept
            inputs[RECORDED_ANSWERS] = Path(answers)
        shared = env.get(SHARED_ANSWERS)
        return kernel_sandbox(workdir, inputs=inputs,
                              writable=[Path(shared)] if shared and Path(shared).is_dir() else [],
                              env=inside)

    def _kernel_env(self, assignment: str, workdir: Path, url: str | None) -> dict[str, str]:
        """The environment of a kernel that runs one notebook: its own temporary folder and
        JVM log, its own Connect session, and the run's seed and answers."""
        env = {**self.env, **self.assignment_env.get(assignment, {}),
               "TMPDIR": str(workdir), JVM_LOG: str(workdir / "jvm.log")}
        if url:
            env["SPARK_REMOTE"] = url
        return env


def _release(url: str, timeout: float = 60.0) -> list[str]:
    """Release a notebook's Connect session (:func:`~.connect_server.release_session`),
    waiting ``timeout`` seconds at most: a server that stops answering must not hold the
    class."""
    from .connect_server import release_session

    stopped: list[str] = []
    worker = threading.Thread(target=lambda: stopped.extend(release_session(url)), daemon=True)
    worker.start()
    worker.join(timeout)
    return stopped


#: The most of a kernel's guard log that is kept (a learner's code can write to it).
KERNEL_LOG_LIMIT = 4 * 2**20


def _take_kernel_log(kernel_log: Path, guard_log: Path) -> None:
    """Put what the kernel's guard wrote in its sandbox ahead of what this notebook's judge
    wrote beside the records: one log of the notebook, read as data."""
    try:
        with open(kernel_log, "rb") as log:
            kernel = log.read(KERNEL_LOG_LIMIT)
    except OSError:
        kernel = b""
    judge = guard_log.read_bytes() if guard_log.exists() else b""
    if kernel and not kernel.endswith(b"\n"):
        kernel += b"\n"
    guard_log.write_bytes(kernel + judge)


def graders_faults(events: list[dict], grade_ids: list[str]) -> list[str]:
    """What the checks said was not the learner's fault while a grade cell ran, as the
    kernel's guard recorded it (:class:`autograder.feedback.GraderFault`)."""
    return [f"{event['cell']}: {event.get('what', '')}" for event in events
            if event.get("event") == "fault" and event.get("cell") in grade_ids]


def _also(detail: str, more: str) -> str:
    return f"{detail}; {more}" if detail else more

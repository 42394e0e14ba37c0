"""One notebook through nbgrader's ``autograde``: its kernel in a sandbox, its own temporary
folder and Connect session, watched for time and disk, and nothing left running after it.
What the run made of it (its outcome, nbgrader's log, the guard's log) is for
:class:`~.grader.Grader` to judge."""
from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

from ..contract import ANSWERS, CHECKPOINTS, GUARD_DENY, GUARD_LOG, JVM_LOG, SHARED_ANSWERS
from ..toolkit.warm_python import scripts_folder
from .course import REPOSITORY, GradingCourse
from .processes import GradingLimits, kill_tree, run_watched
from .results import GRADED, GRADER_FAULT, SERVER_LOST
from .sandbox import INPUTS, RECORDED_ANSWERS, SANDBOX, kernel_sandbox, new_workdir
from .spark import GradingSpark, session_url
from .warm_nbgrader import WarmNbgrader

#: What it says when another notebook of the run held the gradebook (SQLite's lock) as it
#: saved its grades: that notebook is graded once more.
GRADEBOOK_LOCKED = "database is locked"
#: The most of a kernel's guard log that is kept (a learner's code can write to it).
KERNEL_LOG_LIMIT = 4 * 2**20


class NotebookRunner:
    """Runs the notebooks of one course folder through nbgrader, one process each, forked
    from a warm launcher, against one Spark (None: a local Spark in each kernel)."""

    def __init__(self, course: GradingCourse, spark: GradingSpark | None, env: dict[str, str],
                 deny: list[Path], sandboxed: bool):
        self.course, self.spark, self.env, self.sandboxed = course, spark, env, sandboxed
        self.limits: GradingLimits = course.limits
        # The solutions, the course's folder, and the scripts Spark runs as its Python.
        self.deny = [REPOSITORY / "solutions", course.root, scripts_folder(), *deny]
        self._running: dict[str, subprocess.Popen] = {}
        self._cancelled = threading.Event()
        #: Where each notebook's nbgrader process is forked from (imports made once a run).
        self.nbgrader = WarmNbgrader(cwd=course.home)

    @property
    def remote(self) -> str | None:
        """The Connect URL notebooks are graded against (None: a local Spark each)."""
        return self.spark.url if self.spark else None

    def kernel_env(self, given: dict[str, str], workdir: Path, url: str | None) -> dict[str, str]:
        """The environment of a kernel that runs one notebook: its own temporary folder and
        JVM log, its own Connect session, and what its assignment is ``given`` (the run's
        seed and answers)."""
        env = {**self.env, **given, "TMPDIR": str(workdir), JVM_LOG: str(workdir / "jvm.log")}
        if url:
            env["SPARK_REMOTE"] = url
        return env

    def autograde(self, assignment: str, student: str, *, given: dict[str, str],
                  answers: dict | None, guard_log: Path, autograded: Path) -> tuple[str, str]:
        """nbgrader's ``autograde`` of one submission, in its own temporary folder and
        Connect session, with a fresh guard log; retried once if another notebook held the
        gradebook's lock. ``answers``: the run's answers handed to the judge in memory."""
        guard_log.unlink(missing_ok=True)
        workdir = new_workdir()
        spark, generation = self.spark, self.spark.generation if self.spark else 0

        def server_lost() -> str | None:
            if spark is None or (spark.generation == generation and spark.alive()):
                return None
            return SERVER_LOST

        url = session_url(self.remote) if self.remote else None
        env = {**self.kernel_env(given, workdir, url), GUARD_LOG: str(guard_log),
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
                    fault=server_lost, launch=functools.partial(self.nbgrader.launch,
                                                                answers=answers))
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
                    detail = also(detail, f"left {len(left)} streaming query(ies) running (stopped)")
            shutil.rmtree(workdir, ignore_errors=True)
        return outcome, detail

    def _sandbox(self, env: dict[str, str], workdir: Path, kernel_log: Path):
        """The sandbox of one notebook's kernel: it writes its working folder (and the
        guard's log there); it reads the checkpoints the solution's run recorded for it
        (inputs, not answers), the answers file only when its notebook judges its own checks
        (both at :data:`~.sandbox.INPUTS`, the course folder they are in being absent), and
        the tests' shared answers when they are shared."""
        from ..checks.answers import checkpoints_beside

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

    def _started(self, student: str, process) -> None:
        """Note a notebook's nbgrader process, for :meth:`cancel` to find. One that a
        thread launched just as the run was cancelled, too late for :meth:`cancel` to see
        it, is stopped here: else the run would wait for its notebook to end."""
        self._running[student] = process
        if self._cancelled.is_set():
            kill_tree(process.pid)

    def cancel(self) -> None:
        """Stop every notebook being run now (Ctrl-C)."""
        self._cancelled.set()
        for process in list(self._running.values()):
            kill_tree(process.pid)
        self.nbgrader.close()

    def close(self) -> None:
        """End the process nbgrader is forked from. Each notebook's processes, its kernel's
        sandbox whole, were killed when it ended (:func:`~.processes.run_watched`)."""
        self.nbgrader.close()


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


def also(detail: str, more: str) -> str:
    """A notebook's detail line with one more thing said."""
    return f"{detail}; {more}" if detail else more

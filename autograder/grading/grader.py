"""Grading one learner's notebook: nbgrader's ``autograde`` under watch, then the guards'
verdict, then a line in the ledger."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from .contract import GUARD_DENY, GUARD_LOG, JVM_LOG
from .course import COURSE_ROOT, GradingCourse, file_digest, nbgrader_env
from .processes import GradingLimits, kill_tree, last_error, run_watched
from .reference import record_answers
from .results import FAILED, GRADED, KERNEL_DIED, NOT_A_NOTEBOOK, NotebookGrade
from .spark import session_url
from .verdict import cells_out_of_time, cheats, without_duplicate_ids


class Grader:
    """Grades submissions of one course folder against one Spark (local or a Connect URL)."""

    def __init__(self, course: GradingCourse, *, remote: str | None = None,
                 limits: GradingLimits | None = None, env: dict[str, str] | None = None,
                 deny: list[Path] = ()):
        self.course = course
        self.remote = remote
        self.limits = limits or GradingLimits()
        self.env = nbgrader_env(env)
        self.deny = [COURSE_ROOT / "solutions", course.root, *deny]
        self._running: dict[str, subprocess.Popen] = {}
        self._cancelled = threading.Event()
        #: What every notebook of an assignment is graded with: the run's seed, its answers.
        self.assignment_env: dict[str, dict[str, str]] = {}

    def record_answers(self, assignment: str, *, reuse: bool = True) -> str:
        """Run the solution once for the class's seed and Spark's answers
        (:mod:`autograder.grading.reference`); return the instructor's line about it."""
        given, line = record_answers(
            self.course, assignment, remote=self.remote, limits=self.limits, reuse=reuse,
            kernel_env=lambda workdir, url: self._kernel_env(assignment, workdir, url))
        self.assignment_env[assignment] = given
        return line

    def cancel(self) -> None:
        """Stop every notebook being graded now (Ctrl-C)."""
        self._cancelled.set()
        for process in list(self._running.values()):
            kill_tree(process.pid)

    def grade(self, assignment: str, student: str, notebook: Path) -> NotebookGrade:
        """Grade one notebook and write it down in the ledger (what makes a run resumable)."""
        start = time.monotonic()
        grade = self._grade(assignment, student, Path(notebook))
        grade.seconds = round(time.monotonic() - start, 1)
        ledger = self.course.ledger(assignment, student)
        ledger.parent.mkdir(parents=True, exist_ok=True)
        record = {"submission_sha256": file_digest(notebook), **grade.to_json()}
        partial = ledger.with_suffix(".tmp")
        partial.write_text(json.dumps(record, indent=1))
        partial.replace(ledger)  # written only once the gradebook holds the grade
        return grade

    def _grade(self, assignment: str, student: str, notebook: Path) -> NotebookGrade:
        import nbformat
        from .guards import read_log, scan_notebook

        course = self.course
        name = course.notebook_name(assignment)
        grade_ids = course.grade_ids(assignment)
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
        nbformat.write(without_duplicate_ids(nb), submitted / name)
        autograded = course.root / "autograded" / student / assignment
        guard_log = course.ledger(assignment, student).with_suffix(".guard.jsonl")
        guard_log.parent.mkdir(parents=True, exist_ok=True)
        guard_log.unlink(missing_ok=True)
        outcome, detail = self._autograde(assignment, student, guard_log, autograded)

        if outcome != GRADED or not (autograded / name).exists():
            if outcome == GRADED:
                log = course.ledger(assignment, student).with_suffix(".log")
                log_text = log.read_text(errors="replace") if log.exists() else ""
                if "DeadKernelError" in log_text or "Kernel died" in log_text:
                    outcome = KERNEL_DIED
                else:
                    outcome, detail = FAILED, last_error(log_text)
            course.record_zero(assignment, student)
        stopped = cells_out_of_time(autograded / name)
        if stopped:
            detail = _also(detail, f"stopped at the {self.limits.cell_timeout} s cell limit: "
                                   f"{', '.join(stopped)}")
        flags, affected = cheats(nb, static, read_log(guard_log), grade_ids,
                                 ran=outcome == GRADED)
        if affected:
            course.zero(assignment, student, affected)
        return course.read_grade(assignment, student, outcome, flags=flags, detail=detail)

    def _autograde(self, assignment, student, guard_log: Path, autograded: Path) -> tuple[str, str]:
        """nbgrader's ``autograde`` of one submission, in its own temporary folder and
        Connect session; retried once if another notebook held the gradebook's lock."""
        workdir = Path(tempfile.mkdtemp(prefix=f"grading-{student}-"))
        url = session_url(self.remote) if self.remote else None
        env = {**self._kernel_env(assignment, workdir, url), GUARD_LOG: str(guard_log),
               GUARD_DENY: os.pathsep.join(str(p) for p in self.deny)}
        log = self.course.ledger(assignment, student).with_suffix(".log")
        command = [sys.executable, "-m", "nbgrader", "autograde", assignment,
                   "--student", student, "--force"]
        outcome, detail = GRADED, ""
        try:
            for _ in range(2):
                outcome, detail, _ = run_watched(
                    command, cwd=self.course.root, env=env, log=log,
                    watched=[workdir, autograded], limits=self.limits,
                    started=lambda process: self._running.__setitem__(student, process))
                self._running.pop(student, None)
                if self._cancelled.is_set():
                    raise KeyboardInterrupt
                if not (outcome == GRADED and "database is locked" in log.read_text(errors="replace")):
                    break  # else another notebook was saving its grades: once more
        finally:
            if url:
                from .connect_server import release_session
                left = release_session(url)
                if left:
                    detail = _also(detail, f"left {len(left)} streaming query(ies) running (stopped)")
            shutil.rmtree(workdir, ignore_errors=True)
        return outcome, detail

    def _kernel_env(self, assignment: str, workdir: Path, url: str | None) -> dict[str, str]:
        """The environment of a kernel that runs one notebook: its own temporary folder and
        JVM log, its own Connect session, and the run's seed and answers."""
        env = {**self.env, **self.assignment_env.get(assignment, {}),
               "TMPDIR": str(workdir), JVM_LOG: str(workdir / "jvm.log")}
        if url:
            env["SPARK_REMOTE"] = url
        return env


def _also(detail: str, more: str) -> str:
    return f"{detail}; {more}" if detail else more

"""Grading one learner's notebook: nbgrader's ``autograde`` under watch
(:mod:`.notebook_run`), then the guards' verdict, then a line in the ledger."""
from __future__ import annotations

import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from .course import GradingCourse, nbgrader_env
from . import ledger
from .notebook_run import NotebookRunner, also
from .processes import last_error
from .run_answers import RunAnswers
from .sandbox import why_not_available
from .results import (DIED_ONCE, FAILED, GRADED, GRADER_FAULT, KERNEL_DIED, NOT_A_NOTEBOOK,
                      NotebookGrade)
from .spark import GradingSpark
from .verdict import cells_out_of_time, cheats, without_duplicate_ids

#: What nbgrader's output says when a notebook's kernel died (nbclient's error, and
#: nbgrader's own line).
KERNEL_DEATH = ("DeadKernelError", "Kernel died")
#: What it says when the kernel died before it could run a cell: no code of the learner's
#: had run, so the fault is the grader's (its sandbox, the machine).
KERNEL_NEVER_STARTED = "Kernel died before replying to kernel_info"


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
    server: a :class:`~autograder.grading.spark.GradingSpark` or its URL): the run's
    answers (:class:`~.run_answers.RunAnswers`), each notebook's run
    (:class:`~.notebook_run.NotebookRunner`), and here, the grade made of them."""

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
        self.answers = RunAnswers(course)
        self.runner = NotebookRunner(course, self.spark, self.env, list(deny), sandboxed)

    def record_answers(self, assignment: str, *, reuse: bool = True) -> str:
        """Run the solution once for the class's seed and Spark's answers; return the
        instructor's line about it."""
        return self.answers.record(
            assignment, remote=self.runner.remote, limits=self.limits, reuse=reuse,
            kernel_env=lambda workdir, url: self.runner.kernel_env(
                self.answers.given_to(assignment), workdir, url))

    def cancel(self) -> None:
        """Stop every notebook being graded now (Ctrl-C). The answers stay sealed: the run
        puts them back at :meth:`close`, once the threads grading are done."""
        self.runner.cancel()

    def close(self) -> None:
        """End the process nbgrader is forked from, and put the answers back on the disk
        (the run is over). Called once no notebook is being graded: each notebook's
        processes, its kernel's sandbox whole, were killed when it ended
        (:func:`~.processes.run_watched`), so no learner's process sees them again."""
        self.runner.close()
        self.answers.unseal()

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
        traces = Traces(course, assignment, student)
        outcome, detail = self._run(traces)
        if outcome == GRADER_FAULT:
            return NotebookGrade(student, {}, GRADER_FAULT, detail=detail)
        return decide(traces, nb, static, outcome, detail, cell_timeout=self.limits.cell_timeout)

    def _run(self, traces: Traces) -> tuple[str, str]:
        """nbgrader's ``autograde`` of the submission: its outcome and what to say of it.
        A kernel that died is given a second run; the guard's log may show the grader at fault."""
        from .guards import read_log

        assignment, student = traces.assignment, traces.student
        traces.guard_log.parent.mkdir(parents=True, exist_ok=True)

        def autograde() -> tuple[str, str]:
            return self.runner.autograde(assignment, student, given=self.answers.given_to(assignment),
                                         answers=self.answers.in_memory(assignment),
                                         guard_log=traces.guard_log, autograded=traces.autograded)

        outcome, detail = autograde()
        if outcome == GRADED and traces.kernel_died():
            # A kernel can die of what is not the learner's (the machine's memory, a crash
            # in Spark's client): only a death that happens again is theirs.
            outcome, detail = autograde()
            if outcome == GRADED and not traces.kernel_died():
                detail = also(detail, DIED_ONCE)
            elif outcome == GRADED and KERNEL_NEVER_STARTED in traces.nbgrader_log():
                outcome, detail = GRADER_FAULT, ("the notebook's kernel did not start (its "
                                                 "sandbox or the machine): none of the "
                                                 "learner's code ran")
            elif outcome == GRADED:
                detail = "it died again when graded a second time"
        if outcome == GRADED:
            faults = graders_faults(read_log(traces.guard_log), self.course.grade_ids(assignment))
            if faults:
                outcome, detail = GRADER_FAULT, "; ".join(faults)
        return outcome, detail


@dataclass(frozen=True)
class Traces:
    """Where grading one learner's notebook leaves what it did: the kernel guard's log, the
    folder nbgrader writes the graded notebook to, and what nbgrader printed."""

    course: GradingCourse
    assignment: str
    student: str

    @property
    def guard_log(self) -> Path:
        return self.course.ledger(self.assignment, self.student).with_suffix(".guard.jsonl")

    @property
    def autograded(self) -> Path:
        return self.course.root / "autograded" / self.student / self.assignment

    @property
    def graded_notebook(self) -> Path:
        return self.autograded / self.course.notebook_name(self.assignment)

    def nbgrader_log(self) -> str:
        """What nbgrader printed while it graded the notebook last."""
        log = self.course.ledger(self.assignment, self.student).with_suffix(".log")
        return log.read_text(errors="replace") if log.exists() else ""

    def kernel_died(self) -> bool:
        return any(sign in self.nbgrader_log() for sign in KERNEL_DEATH)


def decide(traces: Traces, nb, static: list, outcome: str, detail: str, *,
           cell_timeout: int) -> NotebookGrade:
    """The grade of a notebook nbgrader ran (or could not run): zeros where it did not end,
    the cells stopped at the time limit named, and the tasks a cheat touched zeroed."""
    from .guards import read_log

    course, assignment, student = traces.course, traces.assignment, traces.student
    if outcome != GRADED or not traces.graded_notebook.exists():
        if outcome == GRADED:
            if traces.kernel_died():
                outcome = KERNEL_DIED
            else:
                outcome, detail = FAILED, last_error(traces.nbgrader_log())
        course.record_zero(assignment, student)
    stopped = cells_out_of_time(traces.graded_notebook)
    if stopped:
        detail = also(detail, f"stopped at the {cell_timeout} s cell limit: {', '.join(stopped)}")
    flags, affected = cheats(nb, static, read_log(traces.guard_log), course.grade_ids(assignment),
                             ran=outcome == GRADED)
    if affected:
        course.zero(assignment, student, affected)
    return course.read_grade(assignment, student, outcome, flags=flags, detail=detail)


def graders_faults(events: list[dict], grade_ids: list[str]) -> list[str]:
    """What the checks said was not the learner's fault while a grade cell ran, as the
    kernel's guard recorded it (:class:`autograder.checks.feedback.GraderFault`)."""
    return [f"{event['cell']}: {event.get('what', '')}" for event in events
            if event.get("event") == "fault" and event.get("cell") in grade_ids]

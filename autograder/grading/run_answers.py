"""Spark's answers of one grading run, in the command's keeping.

The solution's run records them once per assignment (:mod:`.reference`); every learner's
notebook of the assignment is then graded with what that run gives it (the seed, the
answers file). While learners' kernels run, the answers are off the disk
(:meth:`RunAnswers.seal`): each notebook's judge is handed them in memory, and they are
written back when the run ends (:meth:`RunAnswers.unseal`).
"""
from __future__ import annotations

import json
from pathlib import Path

from ..contract import ANSWERS
from .course import GradingCourse
from .processes import GradingLimits
from .reference import KernelEnv, record_answers


class RunAnswers:
    """The answers of one run's assignments: what each notebook is given, and the answers
    held in this process alone while they are sealed."""

    def __init__(self, course: GradingCourse):
        self.course = course
        #: What every notebook of an assignment is graded with: the run's seed, its answers.
        self.given: dict[str, dict[str, str]] = {}
        #: The answers taken off the disk, by assignment: the file they came from, its text.
        self._sealed: dict[str, tuple[Path, str]] = {}

    def record(self, assignment: str, *, remote: str | None, limits: GradingLimits,
               kernel_env: KernelEnv, reuse: bool = True) -> str:
        """Run the solution once for the class's seed and Spark's answers
        (:func:`~.reference.record_answers`); return the instructor's line about it."""
        given, line = record_answers(self.course, assignment, remote=remote, limits=limits,
                                     reuse=reuse, kernel_env=kernel_env)
        self.given[assignment] = given
        return line

    def given_to(self, assignment: str) -> dict[str, str]:
        """The environment every notebook of ``assignment`` is graded with (empty before
        its solution ran, or when each kernel draws its own streams)."""
        return self.given.get(assignment, {})

    def seal(self) -> None:
        """Take every assignment's recorded answers off the disk until :meth:`unseal`.

        A learner's kernel never holds an answer, but its Spark reads any file the grading
        machine can (``spark.read.text``, under Connect or not, and so do the Python
        workers Spark starts for a UDF or a ``foreachBatch``), and the answers file's place
        follows from what a kernel knows. So while learners' notebooks run, the answers live
        only in this process, and reach each notebook's judge through the pipe it is forked
        from. :meth:`unseal` writes them back for the next run to resume with. If this
        process is killed before, the next run records them again on the same seed
        (:func:`~.reference.record_answers`). An assignment whose notebook has a check its
        kernel judges itself (not declared in two halves) keeps its file: its kernel reads it.
        """
        import nbformat

        from .judge import all_checks_declared

        for assignment, given in self.given.items():
            answers = Path(given.get(ANSWERS, ""))
            if assignment in self._sealed or not answers.is_file():
                continue
            source = self.course.root / "source" / assignment / self.course.notebook_name(assignment)
            if not all_checks_declared(nbformat.read(source, as_version=4)):
                continue
            self._sealed[assignment] = (answers, answers.read_text())
            answers.unlink()

    def unseal(self) -> None:
        """Put the answers :meth:`seal` took off the disk back in their files."""
        while self._sealed:
            _, (answers, text) = self._sealed.popitem()
            partial = answers.with_suffix(".tmp")
            partial.write_text(text)
            partial.replace(answers)

    def in_memory(self, assignment: str) -> dict | None:
        """The answers a notebook's judge is handed in memory (None: it reads their file)."""
        sealed = self._sealed.get(assignment)
        return json.loads(sealed[1]) if sealed else None

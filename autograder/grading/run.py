"""A grading run: every submission of a class, several at once, resumable."""
from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping

from ..contract import SHARED_SERVER
from . import ledger
from .course import REPOSITORY, GradingCourse, file_digest
from .grader import Grader, Silent
from .processes import GradingLimits
from .results import FAILED, GRADER_FAULT, NotebookGrade
from .spark import GradingSpark, grading_spark

#: How often one notebook is graded again in a run after the grader's own fault spoiled it.
REGRADES = 1


def grade_class(course: GradingCourse, work: dict[str, dict[str, Path]], *,
                remote: GradingSpark | str | None, jobs: int = 2,
                env: dict[str, str] | None = None, force: bool = False, deny: list[Path] = (),
                progress=None, class_answers: bool = True,
                answers_of: dict[str, Path] | None = None,
                sandboxed: bool = True) -> dict[str, dict[str, NotebookGrade]]:
    """Grade ``work`` ({assignment: {learner: notebook}}); resume unless ``force``.

    With ``class_answers`` every notebook of an assignment is graded on the same fresh
    streams, and Spark's answers for them are asked once (:mod:`autograder.grading.reference`);
    without, each kernel draws its own streams and asks Spark itself, as stock nbgrader.
    ``answers_of`` ({assignment: folder}): the seed and answers of an earlier run to grade an
    assignment on instead of running its solution again. One learner's notebook never stops
    the class: whatever goes wrong is its outcome. When the grader is at fault instead (its
    Connect server died), the server is started again and every notebook the outage touched
    is graded again (:data:`REGRADES` times at most), so nobody is scored for it.
    ``sandboxed``: each learner's kernel runs in a sandbox (:mod:`.sandbox`).
    """
    progress = progress or Silent()
    grader = Grader(course, remote=remote, env=env, deny=list(deny), sandboxed=sandboxed)
    results: dict[str, dict[str, NotebookGrade]] = {a: {} for a in work}
    todo = []
    answers_of = answers_of or {}
    for assignment, submissions in work.items():
        course.prepare(assignment, grader.env)
        if assignment in answers_of:  # after prepare(), which clears a stale solution's
            shutil.copytree(answers_of[assignment], course.answers_folder(assignment),
                            dirs_exist_ok=True)
        for student, notebook in submissions.items():
            if not force and ledger.graded_notebook(course, assignment, student) == file_digest(notebook):
                kept, distrust = ledger.read(course, assignment, student)
                if kept:
                    results[assignment][student] = kept
                    continue
                progress.note(f"{assignment}/{student}: {distrust}: graded again")
            todo.append((assignment, student, notebook))
    if class_answers:
        for assignment in sorted({item[0] for item in todo}):
            progress.note(f"{assignment}: running the solution once for Spark's answers ...")
            line = grader.record_answers(
                assignment, reuse=not force or assignment in answers_of)
            progress.note(line)
    progress.start(len(todo), skipped=sum(map(len, results.values())))
    pool = ThreadPoolExecutor(max_workers=max(1, jobs))
    regraded: dict[tuple, int] = {}
    try:
        grader.answers.seal()  # off the disk while learners' kernels run, back at close()
        pending = {pool.submit(grader.grade, *item): item for item in todo}
        while pending:
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                item = pending.pop(future)
                assignment, student, _ = item
                try:
                    grade = future.result()
                except KeyboardInterrupt:
                    raise
                except Exception as error:  # noqa: BLE001 - one learner never stops the class
                    grade = NotebookGrade(student, {}, FAILED,
                                          detail=f"{type(error).__name__}: {error}")
                if grade.outcome == GRADER_FAULT and regraded.get(item, 0) < REGRADES \
                        and grader.spark is not None and grader.spark.recover(grade.detail, progress):
                    regraded[item] = regraded.get(item, 0) + 1
                    progress.note(f"{assignment}/{student}: {grade.detail}; graded again")
                    pending[pool.submit(grader.grade, *item)] = item
                    continue
                results[assignment][student] = grade
                progress.advance(assignment, grade)
    except BaseException:
        grader.cancel()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    finally:
        grader.close()
    pool.shutdown(wait=True)
    return results


@dataclass(frozen=True)
class GradingRun:
    """One grading run as it was asked for: the command (:mod:`.cli`) and the API
    (:func:`autograde`) both describe theirs with one and call :meth:`grade`, so both close
    the same folders to learners' code and grade the same way.

    ``work``: {assignment: {learner: notebook}}; ``spark``: see
    :func:`autograder.grading.spark.grading_spark`; ``submissions``: the folder the class
    was handed in as (the command's), which no learner's code may read; ``repository``: the
    course whose solutions the run grades with. The others are :func:`grade_class`'s.
    """

    course: GradingCourse
    work: Mapping[str, Mapping[str, Path]]
    spark: str = "local"
    jobs: int = 2
    force: bool = False
    class_answers: bool = True
    answers_of: Mapping[str, Path] = field(default_factory=dict)
    sandboxed: bool = True
    env: Mapping[str, str] | None = None
    submissions: Path | None = None
    repository: Path = REPOSITORY

    def closed_to_learners(self) -> list[Path]:
        """What a learner's kernel may not open besides what every run closes (the
        solutions, the course folder): the class's own submissions."""
        return [self.submissions] if self.submissions else []

    def hidden_from_spark(self) -> list[Path]:
        """What the run's Connect server must not see: the course's copies of the solutions
        and of the class's notebooks, the submissions, and the repository's secrets."""
        from .hidden_folders import repository_secrets

        return [*self.course.closed_folders(), *self.closed_to_learners(),
                *repository_secrets(self.repository)]

    def grade(self, progress=None, on_spark: Callable[[GradingSpark | None], None] = lambda remote: None
              ) -> dict[str, dict[str, NotebookGrade]]:
        """Start the run's Spark, grade every notebook, stop the Spark; ``on_spark`` is
        told which Spark the run grades against once it is up."""
        with grading_spark(self.spark, log_dir=self.course.root / "spark-logs",
                           hide=self.hidden_from_spark(), sandboxed=self.sandboxed) as remote:
            on_spark(remote)
            return grade_class(self.course, {a: dict(s) for a, s in self.work.items()},
                               remote=remote, jobs=self.jobs,
                               env=dict(self.env) if self.env is not None else None,
                               force=self.force,
                               deny=[*self.closed_to_learners(), self.repository / "solutions"],
                               progress=progress, class_answers=self.class_answers,
                               answers_of=dict(self.answers_of), sandboxed=self.sandboxed)


def autograde(assignment: str, submissions: dict[str, Path], *,
              limits: GradingLimits | None = None,
              env: dict[str, str] | None = None, workdir: Path | None = None,
              spark: str | None = None, jobs: int = 1,
              class_answers: bool = True,
              answers_of: Path | None = None,
              sandboxed: bool = True) -> dict[str, NotebookGrade]:
    """Grade each learner's notebook with nbgrader; return grades by learner.

    ``submissions`` maps a learner's name to the notebook they handed in. The nbgrader
    course is laid out in a temporary folder, or in ``workdir`` (kept afterwards, to look at
    the graded notebooks). ``spark`` chooses the Spark the notebooks use (see
    :func:`autograder.grading.spark.grading_spark`); by default, the Connect server named by
    ``AUTOGRADER_SPARK_REMOTE`` when set (the tests' shared server), else a local Spark in
    each kernel. ``limits``: how long and how big a notebook may get (the command's
    defaults when None). ``jobs`` notebooks are graded at once. ``class_answers``: see
    :func:`grade_class`. ``answers_of``: the seed and Spark's answers of an earlier run of
    the assignment (the ``spark-answers/<assignment>`` folder of its course): the class is
    graded on that run's streams, and the solution is not run again. ``sandboxed``: the
    kernels, and a server started here, run in sandboxes (:mod:`.sandbox`).
    """
    with contextlib.ExitStack() as stack:
        root = Path(workdir or stack.enter_context(
            tempfile.TemporaryDirectory(prefix="nbgrader-course-")))
        run = GradingRun(GradingCourse(root, limits=limits or GradingLimits()),
                         {assignment: submissions},
                         spark=spark or os.environ.get(SHARED_SERVER) or "local", jobs=jobs,
                         force=True, class_answers=class_answers,
                         answers_of={assignment: answers_of} if answers_of else {},
                         sandboxed=sandboxed, env=env)
        return run.grade()[assignment]

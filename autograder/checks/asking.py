"""The two halves of every check: asking the learner's code, and judging what it answered.

A check compares a learner's code with what Spark does. It does so in two halves:

* **asking** calls the learner's code on the check's cases (the chapter's example, fixed
  streams, streams drawn from a seed: inputs, never answers) and keeps what came back, as
  plain data and in order (:class:`Answers`): a prediction, what a reader read from a
  checkpoint, the rows the learner's query emitted in each micro-batch;
* **judging** compares those answers with what Spark did on the same cases and raises the
  first difference as a lesson (:class:`~autograder.checks.feedback.CheckFailed`).

In a learner's own kernel (JupyterLab, ``make check``, the tests) both halves run in one
process, case after case: a **self-check**, as fast and as clear as a single function.

In a **graded kernel** the grading command sets :data:`~autograder.contract.ASKING`, and a
check only asks: it writes the answers into the grade cell's output as a record
(:data:`RECORD_TYPE`) and returns. The grading command judges each record in its own
process once the kernel is gone (:mod:`autograder.grading.judge`), with Spark's answers
that only that process holds. A graded kernel never holds an answer, so nothing a
learner's code can reach there (a frame, a module, an object handed to it) tells one. A
record holds only what the learner's code produced: writing one by hand gains nothing over
returning the same answers.

A chapter declares each check as a :class:`Check`: its cases, how it asks, how it judges,
and what it says when it passes, written once on the ``check_...`` function the notebook
calls (:func:`declared`), which hands the learner's code to :func:`run_check`.
"""
from __future__ import annotations

import functools
import hashlib
import inspect
import json
import shutil
from dataclasses import dataclass, field
from typing import Any, Callable

from .checking import seed_for, takes_the_learners_answer
from . import mode
from .feedback import CheckFailed, TaskNotDone, ask, passed, plain
from .mode import Mode

#: The output type of a record of answers in a graded notebook (a Jupyter MIME bundle).
RECORD_TYPE = "application/vnd.inside-spark-state-store.answers+json"


@dataclass(frozen=True)
class Case:
    """One case of a check: how lessons name it, and its inputs (plain data)."""

    label: str
    about: Any


class Answers:
    """What the learner's code gave on one case, in the order the check asked for it, and,
    when it stopped early, the lesson it stopped with (an error of the learner's code, an
    answer that is not plain data).

    The judging half takes the answers back with :meth:`next` in the order they were
    asked; reaching the point where asking stopped raises the lesson there, so a lesson
    comes at the same place whether the two halves ran together or apart.
    """

    def __init__(self, values: list | None = None, stopped: CheckFailed | None = None):
        self.values = list(values or [])
        self.stopped = stopped
        self._taken = 0

    def add(self, value: Any) -> Any:
        """Keep one answer (plain data); returns it."""
        self.values.append(value)
        return value

    def next(self) -> Any:
        """The next answer, in the order they were asked; the lesson where asking stopped."""
        if self._taken < len(self.values):
            self._taken += 1
            return self.values[self._taken - 1]
        if self.stopped is not None:
            raise self.stopped
        raise CheckFailed("an answer the check asked your code for", "an answer",
                          "none: the record of your answers ends here")

    def to_json(self) -> dict:
        stopped = None
        if self.stopped is not None:
            stopped = {"kind": type(self.stopped).__name__ if isinstance(self.stopped, TaskNotDone)
                       else "CheckFailed", "lesson": self.stopped.lesson(),
                       "shown": self.stopped.shown()}
        return {"values": self.values, "stopped": stopped}

    @classmethod
    def from_json(cls, data: Any) -> "Answers":
        if not isinstance(data, dict) or not isinstance(data.get("values"), list):
            raise CheckFailed("the record of your answers", "answers as the check wrote them",
                              "something else")
        stopped = data.get("stopped")
        lesson = None
        if isinstance(stopped, dict):
            lesson = RecordedLesson(str(stopped.get("lesson", "")), str(stopped.get("shown", "")),
                                    str(stopped.get("kind", "CheckFailed")))
        return cls(data["values"], lesson)


def ask_of_each_batch(reader: Callable, spark, checkpoint, batch_ids, answers: Answers, *,
                      what: str, context: str, revisit: str) -> None:
    """Ask a learner's state reader, ``reader(spark, checkpoint, batch_id)``, about each of
    ``batch_ids`` on a checkpoint made for it, keep its answers in ``answers``, and delete
    the checkpoint (the learner's copy: Spark's own facts are judged apart)."""
    try:
        for batch_id in batch_ids:
            answer = ask(reader, spark, checkpoint, batch_id, what=what, batch=batch_id,
                         context=context, revisit=revisit)
            answers.add(plain(answer))
    finally:
        shutil.rmtree(checkpoint, ignore_errors=True)


class RecordedLesson(CheckFailed):
    """A lesson the asking half met in a graded kernel (the learner's code raised, or gave
    something that is not plain data), shown again by the judging half as it was shown."""

    def __init__(self, lesson: str, shown: str, kind: str):
        self.text, self.shown_text, self.kind = lesson, shown, kind
        self.what, self.expected, self.got = lesson, None, None
        self.batch = self.revisit = self.context = None
        AssertionError.__init__(self, lesson)

    def lesson(self) -> str:
        return self.text

    def shown(self) -> str:
        return self.shown_text or f"✘ {self.text}"


@dataclass(frozen=True)
class Check:
    """One check of a chapter, in its two halves.

    * ``cases(seed, example, **options)``: the cases, from the seed (or the example alone);
    * ``ask(learner, case, answers)``: call the learner's code on one case and
      ``answers.add`` what it gives, as plain data (lessons it raises stop the asking);
    * ``judge(case, answers)``: compare ``answers.next()``, in the same order, with Spark's
      answer for the case, raising the first difference;
    * ``passed(cases)``: what the learner reads when every case agrees;
    * ``before(learner)``: an optional first call on a tiny input, so that a task still to
      be written says so at once (:func:`~autograder.checks.feedback.stop_if_unfinished`);
    * ``options``: the check's keyword options besides ``seed`` and ``example``, with their
      defaults (how many streams to draw).
    """

    name: str
    cases: Callable[..., list[Case]]
    ask: Callable[[Callable, Case, Answers], None]
    judge: Callable[[Case, Answers], None]
    passed: Callable[[list[Case]], str]
    before: Callable[[Callable], None] | None = None
    options: dict = field(default_factory=dict)


#: Every check of the course by name (``autograder.<chapter module>.check_...``).
CHECKS: dict[str, Check] = {}


def declare(check: Check) -> Check:
    """Make ``check`` known to the judging half by its name."""
    CHECKS[check.name] = check
    return check


def declared(*, cases: Callable[..., list[Case]], ask: Callable[[Callable, Case, Answers], None],
             judge: Callable[[Case, Answers], None], passed: Callable[[list[Case]], str],
             before: Callable[[Callable], None] | None = None) -> Callable[[Callable], Callable]:
    """Declare a chapter's check on the function a notebook calls,
    ``check_...(learner, *, seed=None, example=False, **options)``, and make that function
    run it (:func:`run_check`).

    The check is named after the function (its module and name), and its options are the
    function's other keyword-only parameters with their defaults: the kernel that asks and
    the judge that draws the cases again read them from one place, so they cannot disagree.
    The function itself holds only its signature and its docstring, which is what a
    learner's ``help(check_...)`` shows. The check is the function's ``check`` attribute.
    """
    def declare_on(function: Callable) -> Callable:
        signature = inspect.signature(function)
        learner_parameter = next(iter(signature.parameters))
        options = {name: parameter.default for name, parameter in signature.parameters.items()
                   if parameter.kind is inspect.Parameter.KEYWORD_ONLY
                   and name not in ("seed", "example")}
        check = declare(Check(f"{function.__module__}.{function.__name__}", cases=cases, ask=ask,
                              judge=judge, passed=passed, before=before, options=options))

        @functools.wraps(function)
        def run(*args: Any, **kwargs: Any) -> None:
            given = signature.bind(*args, **kwargs)
            given.apply_defaults()
            arguments = dict(given.arguments)
            run_check(check, arguments.pop(learner_parameter), **arguments)

        run.check = check
        return run

    return declare_on


def spark_for_truth():
    """The session a judging half asks Spark's answers with: the course's, except in the
    grading command's judge, which has no Spark and reads the recorded answers (None)."""
    from ..toolkit.session import course_session

    return None if mode.current() is Mode.JUDGE else course_session()


def asking_only() -> bool:
    """Whether this kernel only asks (a graded kernel: the grading command judges)."""
    return mode.current() is Mode.GRADED


@takes_the_learners_answer("learner")
def run_check(check: Check, learner: Callable, *, seed: int | None = None,
              example: bool = False, **options: Any) -> None:
    """Run ``check`` on the learner's code: ask and judge case after case (a self-check),
    or, in a graded kernel, ask every case and write the answers down for the grader."""
    if check.before is not None:
        check.before(learner)
    seed = seed_for(seed)
    cases = check.cases(seed=seed, example=example, **options)
    if not asking_only():
        for case in cases:
            check.judge(case, ask_case(check, learner, case))
        passed(check.passed(cases))
        return
    asked = []
    for case in cases:
        asked.append(ask_case(check, learner, case))
        if asked[-1].stopped is not None:
            break  # the judge stops here at the latest
    write_record(check, seed, example, options, cases, asked)


def ask_case(check: Check, learner: Callable, case: Case) -> Answers:
    """The learner's answers on one case, stopping at the first lesson."""
    answers = Answers()
    try:
        check.ask(learner, case, answers)
    except CheckFailed as lesson:
        answers.stopped = lesson
    return answers


def cases_digest(cases: list[Case]) -> str:
    """A short digest of the cases (labels and inputs): the record says which it answered."""
    text = json.dumps([[case.label, case.about] for case in cases], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def make_record(check: Check, seed: int, example: bool, options: dict, cases: list[Case],
                asked: list[Answers]) -> dict:
    """What a graded kernel hands in for one call of a check: which check, on which cases,
    and the learner's answers (plain data)."""
    return {"check": check.name, "example": example, "options": options, "seed": seed,
            "cases": cases_digest(cases), "answers": [answers.to_json() for answers in asked]}


def write_record(check: Check, seed: int, example: bool, options: dict, cases: list[Case],
                 asked: list[Answers]) -> None:
    """Write the answers into the cell's output, where the grading command reads them."""
    from IPython.display import display

    record = make_record(check, seed, example, options, cases, asked)
    short = check.name.rsplit(".", 1)[-1]
    display({RECORD_TYPE: record,
             "text/plain": f"{short}: your answers on {len(asked)} case(s), handed to the "
                           "grader, which judges them"}, raw=True)


def judge_record(record: Any, *, seed: int, example: bool, options: dict) -> str:
    """Judge a record a graded kernel wrote: the passed message, or the first lesson raised.

    The cases are drawn again here from the run's ``seed`` and the grade cell's own
    ``example`` and ``options`` (the record's are only compared with them): a record
    answers the grader's cases or it answers nothing.
    """
    if not isinstance(record, dict) or record.get("check") not in CHECKS:
        raise CheckFailed("the record of your answers", "one the check wrote",
                          "a record of no check of the course")
    check = CHECKS[record["check"]]
    cases = check.cases(seed=seed, example=example, **{**check.options, **options})
    if record.get("cases") != cases_digest(cases) or record.get("seed") != seed:
        raise CheckFailed("the cases your kernel answered", "the grader's cases",
                          "other cases (another seed or other streams)")
    asked = record.get("answers")
    if not isinstance(asked, list):
        raise CheckFailed("the record of your answers", "a list of answers", type(asked).__name__)
    for number, case in enumerate(cases):
        if number >= len(asked):
            raise CheckFailed("answers for every case", f"{len(cases)} case(s) answered",
                              f"{len(asked)} case(s) answered", context=case.label)
        check.judge(case, Answers.from_json(asked[number]))
    return check.passed(cases)

"""Checks whose failure is a small lesson.

Every check in the course compares what the learner's code produced ("got") with what
real Spark did ("expected"). When they differ, :class:`CheckFailed` says which micro-batch,
both values side by side, what the stream was (with the seed that reproduces it), and
which section of the chapter to reread.

Values from the learner's code are first turned into plain Python values (numbers,
strings, lists, dicts), rebuilt from their parts: an object that claims to be equal to
everything cannot pass a check, and an answer is compared for what it means (a tuple or a
list, a NumPy integer or an int, ``2.0`` or ``2``), never for how it was built.

In a notebook a failed check shows its lesson alone, not a traceback through the course's
files (IPython asks the exception how to show itself, ``_render_traceback_``); when the
learner's own code raised the error, its traceback follows, cut down to the learner's
lines. nbgrader keeps what IPython showed, so a graded notebook's feedback has the same
text. A task whose function still raises the released stub's ``NotImplementedError`` gets
a one-line hint, :class:`TaskNotDone`, and the checks ask the learner's function before
they ask Spark, so the hint comes at once.
"""
from __future__ import annotations

import contextlib
import numbers
import os
import random
import sys
from collections.abc import Mapping
from typing import Any, Callable

from ..contract import GRADER_FAULT, SEED
from .learner_code import course_fault, learner_traceback, unfinished_in


class CheckFailed(AssertionError):
    """A check found a difference between the learner's answer and Spark."""

    def __init__(self, what: str, expected: Any, got: Any, *, batch: int | None = None,
                 revisit: str | None = None, context: str | None = None):
        self.what, self.expected, self.got = what, expected, got
        self.batch, self.revisit, self.context = batch, revisit, context
        super().__init__(self.lesson())

    def lesson(self) -> str:
        where = f"micro-batch {self.batch}: " if self.batch is not None else ""
        lines = [
            f"{where}{self.what}",
            f"    expected: {self.expected!r}",
            f"    got:      {self.got!r}",
        ]
        if self.context:
            lines.append(f"  the stream: {self.context}")
        if self.revisit:
            lines.append(f"  revisit: {self.revisit}")
        return "\n".join(lines)

    def shown(self) -> str:
        """What a notebook shows for this failure: the lesson, then, when the learner's code
        raised the error behind it, the learner's lines of that error's traceback."""
        lines = self.lesson().splitlines() or [""]
        lines[0] = f"✘ {lines[0]}"
        if self.__cause__ is not None:
            mine = learner_traceback(self.__cause__)
            if mine:
                lines += ["", "where your code raised it:", *mine]
        return "\n".join(lines)

    def _render_traceback_(self) -> list[str]:
        """IPython shows these strings instead of a traceback (Jupyter joins them with
        newlines, nbconvert's HTML without: hence one string holding every line)."""
        try:
            return [self.shown()]
        except Exception:  # noqa: BLE001 - showing a failure must never fail
            return [str(self)]


class TaskNotDone(CheckFailed):
    """The learner's function still raises the released stub's ``NotImplementedError``."""

    def __init__(self, where: str):
        self.where = where
        super().__init__(f"task not done yet: replace `raise NotImplementedError()` in "
                         f"{where} with your code", "your code", "NotImplementedError")

    def lesson(self) -> str:
        return self.what


class GraderFault(Exception):
    """Something went wrong that is not the learner's doing: the disk filled up, or the
    course's own code has a bug (:func:`autograder.checks.learner_code.course_fault`).

    A check that meets one stops without deciding anything about the learner's answer. The
    grading command learns of it from the kernel's guard (only :func:`not_the_learners`
    can tell it: an exception of this name raised by anybody else proves nothing), scores
    nothing for that notebook, and lists it to be graded again, with the cause.
    """

    def __init__(self, cause: str):
        self.cause = cause
        super().__init__(f"not your code's fault: {cause}. The check could not decide; "
                         "your work is graded again once this is fixed.")

    def _render_traceback_(self) -> list[str]:
        return [f"⚠ {self}"]


def not_the_learners(error: BaseException, *, catcher_frames: int = 1) -> None:
    """Raise :class:`GraderFault` from ``error`` when it is the course's fault
    (``catcher_frames``: see :func:`~autograder.checks.learner_code.course_fault`)."""
    cause = report_course_fault(error, catcher_frames=catcher_frames)
    if cause is not None:
        raise GraderFault(cause) from error


def report_course_fault(error: BaseException, *, catcher_frames: int = 1) -> str | None:
    """Why ``error`` is the course's fault (:func:`~autograder.checks.learner_code.course_fault`),
    said to the grading command by the audit event
    :data:`~autograder.contract.GRADER_FAULT`; None, and nothing said, when it is not."""
    cause = course_fault(error, catcher_frames=catcher_frames)
    if cause is not None:
        sys.audit(GRADER_FAULT, cause)  # what the grading command goes by
    return cause


def plain(value: Any, what: str = "the answer") -> Any:
    """``value`` as plain Python data, or :class:`CheckFailed` if it is something else.

    What an answer means is kept, how it was built is not: tuples (and Spark's ``Row``)
    become lists, a ``Counter`` or ``OrderedDict`` a dict, NumPy's numbers Python's. Every
    value is rebuilt from its parts as an exact ``bool``, ``int``, ``float``, ``str``,
    ``list`` or ``dict``, so an answer cannot bring its own idea of equality (a list whose
    ``__eq__`` says yes to everything comes out as the plain list it holds). Dict keys must
    be strings.
    """
    if value is None or type(value) in (bool, int, float, str):
        return value
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, bool) or getattr(getattr(value, "dtype", None), "kind", None) == "b":
        return bool(value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    if isinstance(value, (list, tuple)):
        return [plain(item, what) for item in list(value)]
    if isinstance(value, Mapping):
        items = [(plain(key, what), plain(item, what)) for key, item in dict(value).items()]
        if not all(type(key) is str for key, _ in items):
            raise CheckFailed(f"{what} must have string keys", "str keys",
                              [key for key, _ in items])
        return dict(items)
    raise CheckFailed(
        f"{what} must be plain Python data (numbers, strings, lists, dicts)",
        "a plain value", f"an object of type {type(value).__name__}",
    )


@contextlib.contextmanager
def revisiting(revisit: str | None, context: str | None = None, batch: int | None = None):
    """Every lesson raised inside ends with the section to reread.

    A lesson raised by a step that cannot know the chapter (:func:`plain` finding a set or
    a generator where a list was due) gets ``revisit`` here, and the stream (``context``)
    and micro-batch (``batch``) if it names none. A lesson that already names its section
    keeps it; a task not done yet stays one line.
    """
    try:
        yield
    except TaskNotDone:
        raise
    except CheckFailed as failed:
        if failed.revisit is None and revisit:
            failed.revisit = revisit
            failed.context = failed.context or context
            failed.batch = failed.batch if failed.batch is not None else batch
            failed.args = (failed.lesson(),)
        raise


def check_equal(got: Any, expected: Any, what: str, *, batch: int | None = None,
                revisit: str | None = None, context: str | None = None) -> None:
    """Raise :class:`CheckFailed` unless ``got`` equals ``expected`` (as plain data).

    Numbers compare by value (``2.0`` is the count ``2``), but a truth value is not a
    number (``True`` does not pass for ``1``) and ``None`` is not ``0``.
    """
    with revisiting(revisit, context, batch):
        got = plain(got, what)
    if got != expected or _type_shape(got) != _type_shape(expected):
        raise CheckFailed(what, expected, got, batch=batch, revisit=revisit, context=context)


def _type_shape(value: Any) -> Any:
    """The kinds of value inside a value: numbers, truth values, text, nothing."""
    if isinstance(value, list):
        return [_type_shape(item) for item in value]
    if isinstance(value, dict):
        return {key: _type_shape(item) for key, item in value.items()}
    if type(value) in (int, float):
        return "number"
    return type(value).__name__


def ask(function: Callable, *args: Any, what: str, batch: int | None = None,
        context: str | None = None, revisit: str | None = None) -> Any:
    """Call the learner's ``function``; an error it raises becomes a lesson naming the
    stream (and micro-batch) it was called on, the learner's own traceback kept below it.
    An unfinished task (the stub's ``NotImplementedError``) becomes :class:`TaskNotDone`."""
    try:
        return function(*args)
    except CheckFailed:
        raise
    except Exception as error:  # the learner's code failed: say where
        not_the_learners(error)
        where = unfinished_in(error)
        if where is not None:
            raise TaskNotDone(where) from None
        raise CheckFailed(f"{what} raised an error", "an answer",
                          f"{type(error).__name__}: {str(error)[:200]}", batch=batch,
                          revisit=revisit, context=context) from error


def stop_if_unfinished(function: Callable, *args: Any) -> None:
    """Call the learner's ``function`` once on a small input, before Spark runs anything:
    raise :class:`TaskNotDone` if it is still the stub. Any other error is left for the
    check's real run, which reports it with the stream it was running."""
    try:
        function(*args)
    except Exception as error:  # noqa: BLE001 - only the stub is reported here
        where = unfinished_in(error)
        if where is not None:
            raise TaskNotDone(where) from None


def fresh_seed() -> int:
    """A new seed for a grading run, or ``COURSE_SEED`` to replay one."""
    if os.environ.get(SEED):
        return int(os.environ[SEED])
    return random.SystemRandom().randrange(1, 10**6)


def passed(message: str) -> None:
    """Tell the learner a check passed."""
    print(f"✔ {message}")

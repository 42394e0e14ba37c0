"""What the chapters' checks stand on.

Every check of the course does the same few things, in the same way:

* it runs on **streams** named for the learner: the chapter's example
  (:data:`EXAMPLE`), fixed edge streams that expose a misconception whatever the seed
  (:data:`FIXED`), and streams drawn from **one seed** per process (:func:`seed_for`),
  each named in a lesson by what it holds and where it comes from (:func:`stream_context`);
  :func:`cases` gives a check's cases with where each comes from; the kinds of input a
  task's rules allow are listed beside its check (:class:`Dimension`), each held by a fixed
  stream, so that a wrong belief about one is exposed on every seed;
* it takes the learner's answer **one entry per micro-batch** (:func:`answer_per_batch`,
  :func:`batch_dict`) and compares each with what Spark did, naming the micro-batch that
  differed (:func:`autograder.checks.feedback.check_equal`);
* it runs Spark's side of a comparison **side by side** when that is safe
  (:func:`side_by_side`);
* when the learner's own query fails inside Spark, it says so as a lesson, with the one
  line of Spark's error that matters (:func:`query_failed`, :func:`spark_failure_as_lesson`),
  not a JVM stack trace; when what failed is not the learner's (a full disk, a bug in the
  course's code), it decides nothing (:class:`~autograder.checks.feedback.GraderFault`).
"""
from __future__ import annotations

import contextlib
import functools
import random
import sys
import threading
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Callable, Hashable, Iterable

from .feedback import (CheckFailed, GraderFault, check_equal, fresh_seed, not_the_learners, plain,
                       revisiting)
from ..contract import BORROWED
from .learner_code import in_course, written_by_learner
from ..toolkit.session import is_connect

#: Where a stream comes from, as a lesson names it (a drawn one says ``seed N``).
EXAMPLE = "the chapter's example"
FIXED = "a fixed stream"


def stream_context(what: str, label: str, batches: list) -> str:
    """How a lesson names a stream: what its rows hold, its batches, and where it comes
    from (:data:`EXAMPLE`, :data:`FIXED` or ``seed N``)."""
    return f"{what}, batches {batches} ({label})"

#: The seed of this process's checks, drawn once when the course's checks are imported:
#: ``COURSE_SEED`` when a grading run set it, a fresh one otherwise. Every check of one
#: notebook thus draws the same streams, and Spark runs each of them once. It is a constant
#: of the module: the grading guard restores the course's names before every grade cell, so
#: a value cached later would be undone (and reported as tampering).
GRADING_SEED: int = fresh_seed()


def seed_for(seed: int | None) -> int:
    """The seed a check draws its streams from: the one given, else the process's."""
    return GRADING_SEED if seed is None else seed


def drawn(seed: int) -> str:
    """How a lesson names a stream drawn from ``seed``."""
    return f"seed {seed}"


@dataclass(frozen=True)
class Dimension:
    """One kind of input a task's rules allow: ``name`` says what it is, ``rule`` the rule
    of the task or chapter that allows it (or that makes it a boundary), and ``holds``
    whether a case's inputs (its ``about``) have it. A chapter lists its checks' dimensions
    beside them (``INPUT_DIMENSIONS``: check name -> dimensions), derived from what the task
    text lets a stream be, not from the solution's branches; every dimension must be held
    by a fixed case of its check (``tests/chapters/test_input_dimensions.py``)."""

    name: str
    rule: str
    holds: Callable[[Any], bool]


def cases(seed: int | None, example: bool, *, the_example: Iterable[Any], fixed: Iterable[Any],
          drawn_from: Callable[[random.Random], Iterable[Any]]) -> list[tuple[str, Any]]:
    """The cases a check runs, each as ``(origin, case)``, its origin what a lesson calls
    it: the chapter's example cases alone (:data:`EXAMPLE`); or the fixed cases
    (:data:`FIXED`), then those ``drawn_from`` a generator seeded with ``seed`` (the
    process's seed when None)."""
    if example:
        return [(EXAMPLE, case) for case in the_example]
    seed = seed_for(seed)
    return [(FIXED, case) for case in fixed] + \
        [(drawn(seed), case) for case in drawn_from(random.Random(seed))]


def answer_per_batch(answer: Any, batches: int, what: str, context: str, *,
                     kinds: list[str] | None = None, revisit: str | None = None) -> list:
    """The learner's ``answer`` as a plain list with one entry per micro-batch Spark ran.

    ``kinds`` ("data", "no-data"), when given, tells the learner which micro-batches Spark
    ran if the count differs. Every lesson it gives ends with ``revisit``, an answer that
    is not plain data (a set, a generator) included.
    """
    with revisiting(revisit, context):
        answer = plain(answer, what)
    if type(answer) is not list:
        raise CheckFailed(f"{what} must be a list, one entry per micro-batch", "a list",
                          answer, context=context, revisit=revisit)
    how_many = "how many micro-batches your answer covers"
    if kinds:
        how_many += f" (Spark ran: {kinds})"
    check_equal(len(answer), batches, how_many, revisit=revisit, context=context)
    return answer


def batch_dict(entry: Any, batch: int, context: str, *, revisit: str | None = None) -> dict:
    """One micro-batch's entry of an answer, which must be a dict (the lesson if it is not
    ends with ``revisit``)."""
    if type(entry) is not dict:
        raise CheckFailed("each micro-batch's answer must be a dict", "a dict", entry,
                          batch=batch, context=context, revisit=revisit)
    return entry


def plain_value(value: Any) -> Any:
    """A value read from Spark as comparable data: timestamps as text, dicts all the way."""
    if isinstance(value, datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, dict):
        return {key: plain_value(item) for key, item in value.items()}
    return value


def side_by_side(spark, runs: dict[Hashable, Callable[[], Any]]) -> dict[Hashable, Any]:
    """Call every function of ``runs`` (each runs queries on ``spark``); their results by key.

    With a local session they run at once, in threads, so that Spark overlaps their
    micro-batches. Under Spark Connect they run one after the other, the cautious choice:
    Python processes the server starts together (for ``foreachBatch``) can time out, and
    although the course's queries start none (:mod:`autograder.toolkit.sinks`), running them at once
    under Connect is not measured. The first error raised is raised again here.
    """
    if is_connect(spark):
        return {key: run() for key, run in runs.items()}
    results: dict[Hashable, Any] = {}
    errors: list[BaseException] = []

    def one(key: Hashable) -> None:
        try:
            results[key] = runs[key]()
        except BaseException as error:  # noqa: BLE001 - raised again below
            errors.append(error)

    threads = [threading.Thread(target=one, args=(key,)) for key in runs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return {key: results[key] for key in runs}


def query_failed(error: BaseException, what: str, *, revisit: str | None = None,
                 context: str | None = None, batch: int | None = None) -> CheckFailed:
    """The lesson for a learner's query that failed inside Spark: which query, on which
    stream, and the one line of Spark's error that says why."""
    return CheckFailed(f"{what} failed in Spark", "no error", first_line(error),
                       batch=batch, revisit=revisit, context=context)


@contextlib.contextmanager
def spark_failure_as_lesson(what: str, *, revisit: str | None = None,
                            context: str | None = None, batch: int | None = None):
    """Inside this block the learner's query runs: an error from Spark becomes the lesson of
    :func:`query_failed`; a check's own failure goes through as it is, and so does an error
    that is not the learner's (a full disk, a bug in the course's code), as
    :class:`~autograder.checks.feedback.GraderFault`, which decides nothing."""
    try:
        yield
    except (CheckFailed, GraderFault):
        raise
    except Exception as error:  # noqa: BLE001 - the learner's query failed in Spark
        not_the_learners(error, catcher_frames=2)  # this generator, the with statement
        raise query_failed(error, what, revisit=revisit, context=context, batch=batch) from None


def first_line(error: BaseException) -> str:
    """The line of a Spark error that names the cause (a streaming query's error text is
    followed by a description of the query, left out)."""
    text = str(error)
    query_part = text.find("=== Streaming Query")
    for marker in ("Error: ", "Exception: "):
        found = text.rfind(marker, 0, query_part if query_part >= 0 else None)
        if found >= 0:
            return text[found:].splitlines()[0][:300]
    return text.splitlines()[0][:300] if text else type(error).__name__


#: The course's functions that are handed a learner's answer, and the parameter that holds it.
_ANSWER_TAKERS: dict = {}


def takes_the_learners_answer(parameter: str) -> Callable[[Callable], Callable]:
    """Mark a function of the course whose ``parameter`` is the learner's answer (the one
    function every check runs it from, :func:`~autograder.checks.asking.run_check`):
    :func:`reference_answer` looks for its frame to tell a check that runs the learner's
    answer from one that runs a reference for its own comparison."""
    def mark(function: Callable) -> Callable:
        _ANSWER_TAKERS[function.__code__] = parameter
        return function

    return mark


def reference_answer() -> None:
    """The first line of every reference answer of the course (a function or processor that
    gives a task's answer away, such as chapter 1's ``limit_run``).

    A learner's code may not hand in the course's answer as its own, whichever way it
    reaches it (an import, ``getattr``, ``vars``, ``sys.modules``, ``importlib``, a copy of
    the module's text): what is caught is the *call*, not how the function was found. This
    raises the audit event :data:`~autograder.contract.BORROWED`, which the grading
    guard records as a borrowed answer when the grade cell that runs it scores, when

    * the learner's own code called the reference (its nearest caller outside libraries is a
      notebook's code, or there is none: a thread the learner started), or
    * a check called it as the learner's answer (the check was handed the reference itself,
      a ``functools.partial`` of it, or a class built on it: the frame of the function marked
      :func:`takes_the_learners_answer` holds what it was handed).

    A check that calls a reference for its own comparison raises nothing, and outside
    grading the event has no listener: nothing happens.
    """
    frame = sys._getframe(1)
    code = frame.f_code
    caller = frame.f_back
    while caller is not None and not _ours_or_learners(caller.f_code.co_filename):
        caller = caller.f_back
    # No caller of ours or the learner's at all: a thread or pool the learner started
    # runs it (the course starts its own threads from its own code).
    borrowed = caller is None or written_by_learner(caller.f_code.co_filename)
    while not borrowed and caller is not None:
        if caller.f_code in _ANSWER_TAKERS:
            borrowed = _runs(caller.f_locals.get(_ANSWER_TAKERS[caller.f_code]), code)
            break
        caller = caller.f_back
    if borrowed:
        sys.audit(BORROWED, f"{frame.f_globals.get('__name__')}.{code.co_qualname}")


def _ours_or_learners(filename: str) -> bool:
    """A frame of the course's or the learner's own files; code Python writes for itself
    (``<string>``: a dataclass's ``__init__``) counts as neither."""
    return not filename.startswith("<") and (in_course(filename) or written_by_learner(filename))


def _runs(answer, code, depth: int = 0) -> bool:
    """Whether calling ``answer`` (a function, a partial, a method, a class) runs ``code``
    as the answer itself."""
    if answer is None or depth > 3:
        return False
    if getattr(answer, "__code__", None) is code:
        return True
    if isinstance(answer, functools.partial):
        return _runs(answer.func, code, depth + 1)
    if hasattr(answer, "__func__"):
        return _runs(answer.__func__, code, depth + 1)
    if isinstance(answer, type):
        return any(_runs(member, code, depth + 1) for klass in answer.__mro__
                   for member in vars(klass).values() if callable(member))
    return False

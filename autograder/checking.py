"""What the four chapters' checks stand on.

Every check of the course does the same few things, in the same way:

* it runs on **streams** named for the learner: the chapter's example
  (:data:`EXAMPLE`), fixed edge streams that expose a misconception whatever the seed
  (:data:`FIXED`), and streams drawn from **one seed** per process (:func:`seed_for`),
  each named in a lesson by what it holds and where it comes from (:func:`stream_context`);
* it takes the learner's answer **one entry per micro-batch** (:func:`answer_per_batch`,
  :func:`batch_dict`) and compares each with what Spark did, naming the micro-batch that
  differed (:func:`autograder.feedback.check_equal`);
* it runs Spark's side of a comparison **side by side** when that is safe
  (:func:`side_by_side`);
* when the learner's own query fails inside Spark, it says so as a lesson, with the one
  line of Spark's error that matters (:func:`query_failed`, :func:`spark_failure_as_lesson`),
  not a JVM stack trace.
"""
from __future__ import annotations

import contextlib
import threading
from datetime import datetime
from typing import Any, Callable, Hashable

from .feedback import CheckFailed, check_equal, fresh_seed, plain
from .session import is_connect

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


def answer_per_batch(answer: Any, batches: int, what: str, context: str, *,
                     kinds: list[str] | None = None, revisit: str | None = None) -> list:
    """The learner's ``answer`` as a plain list with one entry per micro-batch Spark ran.

    ``kinds`` ("data", "no-data"), when given, tells the learner which micro-batches Spark
    ran if the count differs.
    """
    answer = plain(answer, what)
    if type(answer) is not list:
        raise CheckFailed(f"{what} must be a list, one entry per micro-batch", "a list",
                          answer, context=context)
    how_many = "how many micro-batches your answer covers"
    if kinds:
        how_many += f" (Spark ran: {kinds})"
    check_equal(len(answer), batches, how_many, revisit=revisit, context=context)
    return answer


def batch_dict(entry: Any, batch: int, context: str) -> dict:
    """One micro-batch's entry of an answer, which must be a dict."""
    if type(entry) is not dict:
        raise CheckFailed("each micro-batch's answer must be a dict", "a dict", entry,
                          batch=batch, context=context)
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
    micro-batches. Under Spark Connect they run one after the other. That began when every
    query there wrote through ``foreachBatch`` in a Python process of the server's, and
    several starting at once could time out; the driver starts no such process for them now
    (:mod:`autograder.sinks`), and running them at once under Connect has not been measured
    since. The first error raised is raised again here.
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
    :func:`query_failed`; a check's own failure goes through as it is."""
    try:
        yield
    except CheckFailed:
        raise
    except Exception as error:  # noqa: BLE001 - the learner's query failed in Spark
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

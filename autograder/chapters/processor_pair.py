"""Comparing a learner's StatefulProcessor with the course's, step by step.

Chapter 4's checks do not compare a learner's processor with rows written down in advance.
A check is a **scenario**: a function ``play(steps)`` that feeds micro-batches
(``steps.add(rows)``), restarts the query (``steps.restart()``) and reads the operator
back in between (``steps.compare(reader, ...)``), over a stream whose parts run side by side
with keys of their own (:class:`~autograder.chapters.tws_streams.Stream`). A scenario is played in
the two halves of a check (:mod:`autograder.checks.asking`):

1. **asking** (:func:`play_learner`) plays it with the learner's processor alone, and keeps
   what each step gave as plain data: the rows every micro-batch emitted, and every reading
   (state rows, timers, metrics). It plays the whole scenario: its inputs do not depend on
   what came back, and the judging half stops at the first difference;
2. **judging** (:func:`judge_against_course`) plays it again without Spark, comparing each
   step's answer with the course's processor's run (:func:`course_run`) in the same order,
   so a difference is told at the micro-batch where it appeared. Each part is compared on
   its own keys, so the lesson names the part the difference is in, then what no part owns
   (metrics, a failing query, a key in no part) with the whole stream. A difference in the
   fixed part is told first: one in the seed's part waits for the scenario's end, in case
   the fixed part shows the same belief later, whatever the seed drew.

What Spark does with the course's processor depends on the scenario alone (its streams and
settings), so its run is asked for through :func:`~autograder.checks.answers.spark_answer`: once
per process, once per class when grading (the solution's run records it for every
learner), and never for a worked example (recorded with the course). A learner's query runs
only the learner's operator, and a graded kernel never runs the course's.
"""
from __future__ import annotations

import contextlib
import json
from typing import Any, Callable, ContextManager

from pyspark.sql import DataFrame
from pyspark.sql.streaming import StatefulProcessor

from ..checks.answers import spark_answer
from ..checks.asking import Answers
from ..checks.checking import plain_value, spark_failure_as_lesson
from ..toolkit.driver import BatchRecord, StreamRun
from ..checks.feedback import CheckFailed, check_equal, stop_if_unfinished
from .tws_streams import Stream

#: A chapter's query around a processor: ``build(events, processor)`` is a DataFrame.
Build = Callable[[DataFrame, StatefulProcessor], DataFrame]
#: Opens a streaming query running one processor: ``open_run(processor)`` is a context
#: manager giving the :class:`StreamRun`.
OpenRun = Callable[[StatefulProcessor], ContextManager[StreamRun]]
#: Reads something back from the run's transformWithState operator: ``reader(run, 0)``.
Reader = Callable[[StreamRun, int], Any]
#: Called on the micro-batches a step ran (the course's run and the learner's), to make
#: sure the scenario ran as it must: ``then(records)``.
AfterAdd = Callable[[list[BatchRecord]], None]
#: The operator id of the only transformWithState operator of a check's query.
OPERATOR = 0


def _as_data(value: Any) -> Any:
    """``value`` as JSON data (tuples as lists, timestamps as text), as a recording holds it."""
    return json.loads(json.dumps(plain_value(value), default=str))


def emitted(record: BatchRecord) -> list:
    """A micro-batch's output rows as value lists, in a fixed order."""
    rows = [_as_data([plain_value(v) for v in row.asDict().values()]) for row in record.output]
    return sorted(rows, key=json.dumps)


def _owned_by(value: Any, owns: Callable[[Any], bool]) -> Any:
    """What of a reading (or of a micro-batch's rows) belongs to the keys ``owns`` accepts:
    the entries of a dict keyed by them, the lists that start with one of them; ``None`` for
    a reading no key owns (a number, the state variables)."""
    if isinstance(value, dict):
        return {key: entry for key, entry in value.items() if owns(key)}
    if isinstance(value, list) and all(isinstance(entry, list) and entry for entry in value):
        return [entry for entry in value if owns(entry[0])]
    return None


class _Steps:
    """What a scenario is played with on Spark: its run, the micro-batches so far, its
    stream."""

    def __init__(self, run: StreamRun, stream: Stream):
        self.run, self.stream, self.context = run, stream, stream.context
        self.records: list[BatchRecord] = []

    def read(self, reader: Reader) -> Any:
        """What ``reader`` reads back from the processor being played."""
        return reader(self.run, OPERATOR)

    def restart(self) -> None:
        """Stop the query and start it again on its checkpoint."""
        self.run.restart()


class _CourseSteps(_Steps):
    """Plays a scenario with the course's processor and records what every step gave."""

    def __init__(self, run: StreamRun, stream: Stream):
        super().__init__(run, stream)
        self.recorded: list = []

    def add(self, rows: list, *, then: AfterAdd | None = None) -> None:
        records = self.run.add_batch(rows)
        self.records.extend(records)
        self.recorded.append(["emitted", [[r.batch_id, emitted(r)] for r in records]])
        if then is not None:
            then(records)

    def compare(self, reader: Reader, what: str, *, revisit: str) -> None:
        self.recorded.append(["read", _as_data(self.read(reader))])

    def require(self, reader: Reader, expected: Any, what: str, *, revisit: str) -> None:
        """What only the learner's processor is held to: nothing to record."""


class _AskedSteps(_Steps):
    """Plays a scenario with the learner's processor and keeps what every step gave, in
    order: per :meth:`add`, ``[[batch id, rows], ...]`` for the micro-batches it ran; per
    :meth:`compare` or :meth:`require`, the reading."""

    def __init__(self, run: StreamRun, stream: Stream, answers: Answers, *, life_cycle: str):
        super().__init__(run, stream)
        self.answers, self.life_cycle = answers, life_cycle

    def add(self, rows: list, *, then: AfterAdd | None = None) -> None:
        """Feed one batch of input rows; keep the rows every micro-batch it ran emitted."""
        with spark_failure_as_lesson("the streaming query running your processor",
                                     revisit=self.life_cycle, context=self.context):
            records = self.run.add_batch(rows)
        self.records.extend(records)
        self.answers.add([[record.batch_id, emitted(record)] for record in records])
        if then is not None:
            then(records)

    def compare(self, reader: Reader, what: str, *, revisit: str) -> None:
        self.answers.add(_as_data(self.read(reader)))

    def require(self, reader: Reader, expected: Any, what: str, *, revisit: str) -> None:
        self.answers.add(_as_data(self.read(reader)))


class _JudgedSteps:
    """Plays a scenario again without Spark: every step takes the learner's answer for it
    and compares it with the course's record of it."""

    def __init__(self, stream: Stream, recorded: list, answers: Answers, *, revisit: str):
        self.stream, self.context = stream, stream.context
        self.recorded, self.answers, self.revisit = list(recorded), answers, revisit
        #: The id of the last micro-batch the learner's query ran (None before any).
        self.last_batch: int | None = None
        #: The first difference in the seed's part, told only if the fixed part shows none.
        self.deferred: CheckFailed | None = None

    def _check(self, got: Any, expected: Any, what: str, *, batch: int | None,
               revisit: str) -> None:
        """``got`` must equal ``expected``: part by part on the keys each owns, then what no
        part owns. A difference in the fixed part (the first) stops the check at once; one
        in another part is kept until the scenario ends, so that a belief the fixed part
        exposes later is told on the fixed part, whatever the seed drew."""
        parts = self.stream.parts
        split = [(_owned_by(got, part.keys.__contains__),
                  _owned_by(expected, part.keys.__contains__)) for part in parts]
        if len(parts) == 1 or any(None in pair for pair in split):
            check_equal(got, expected, what, batch=batch, revisit=revisit, context=self.context)
            return
        for number, (part, (mine, theirs)) in enumerate(zip(parts, split)):
            try:
                check_equal(mine, theirs, what, batch=batch, revisit=revisit,
                            context=part.context)
            except CheckFailed as failure:
                if number == 0:
                    raise
                self.deferred = self.deferred or failure
        owned = frozenset().union(*(part.keys for part in parts))
        check_equal(_owned_by(got, lambda key: key not in owned),
                    _owned_by(expected, lambda key: key not in owned), what, batch=batch,
                    revisit=revisit, context=self.context)

    def _expected(self, kind: str) -> Any:
        recorded_kind, value = self.recorded.pop(0)
        assert recorded_kind == kind, f"the scenario played {kind} where the course's run had {recorded_kind}"
        return value

    def add(self, rows: list, *, then: AfterAdd | None = None) -> None:
        """Every micro-batch the learner's query ran for this batch of input rows must have
        emitted the course's rows."""
        ran = self.answers.next()   # where the learner's query failed, its lesson
        got = _micro_batches(ran)
        expected = {batch_id: course_rows for batch_id, course_rows in self._expected("emitted")}
        if ran:
            self.last_batch = ran[-1][0]
        # Not pyspark.testing.assertDataFrameEqual: the course's side is a recording (JSON,
        # asked of Spark once per class), and a difference must be a lesson, not an assertion.
        for batch_id in sorted(set(expected) | set(got)):
            self._check(got.get(batch_id, []), expected.get(batch_id, []),
                        "the rows your processor emitted in this micro-batch",
                        batch=batch_id, revisit=self.revisit)

    def restart(self) -> None:
        """Nothing to compare: the restart is the scenario's, not the processor's."""

    def compare(self, reader: Reader, what: str, *, revisit: str) -> None:
        """The learner's operator must have read the same as the course's."""
        self._check(self.answers.next(), self._expected("read"), what, batch=self.last_batch,
                    revisit=revisit)

    def require(self, reader: Reader, expected: Any, what: str, *, revisit: str) -> None:
        """The learner's operator must have read ``expected`` (whatever the course's did)."""
        check_equal(self.answers.next(), expected, what, revisit=revisit, context=self.context)


def _micro_batches(ran: Any) -> dict:
    """``{batch id: rows}`` of one step's answer, ``[[batch id, rows], ...]``."""
    if not isinstance(ran, list) or not all(
            isinstance(entry, list) and len(entry) == 2 and type(entry[0]) is int
            and isinstance(entry[1], list) for entry in ran):
        raise CheckFailed("the record of your answers", "answers as the check wrote them",
                          "something else")
    return {batch_id: rows for batch_id, rows in ran}


def play_learner(open_run: OpenRun, learner: StatefulProcessor, *, play: Callable,
                 stream: Stream, answers: Answers, life_cycle: str) -> None:
    """The asking half: play ``play`` with the learner's processor alone and ``answers.add``
    what every step gave. ``stream`` is what ``play`` feeds; ``life_cycle`` is the section a
    failing query sends the learner to (its lesson stops the asking there)."""
    with open_run(learner) as run:
        play(_AskedSteps(run, stream, answers, life_cycle=life_cycle))


def course_run(question: str, about: Any, open_run: Callable[[], OpenRun], *,
               course: StatefulProcessor, play: Callable, stream: Stream) -> list:
    """What every step of ``play`` gave with the course's processor, asked of Spark once
    (``question`` and ``about``, the scenario's streams and settings, name it).
    ``open_run()`` gives the query to play it in; it is called only when Spark is asked."""
    def ask_spark() -> list:
        with open_run()(course) as run:
            steps = _CourseSteps(run, stream)
            play(steps)
        return steps.recorded

    return spark_answer(question, about, ask_spark)


def judge_against_course(recorded: list, answers: Answers, *, play: Callable, stream: Stream,
                         revisit: str) -> None:
    """The judging half: play ``play`` again, comparing the learner's answers, step by step
    and part by part, with ``recorded`` (:func:`course_run`). ``revisit`` is the section a
    difference in the emitted rows sends the learner to."""
    steps = _JudgedSteps(stream, recorded, answers, revisit=revisit)
    play(steps)
    if steps.deferred:
        raise steps.deferred


def micro_batches_run(recorded: list) -> int:
    """How many micro-batches a recorded run (:func:`course_run`) ran."""
    return sum(len(value) for kind, value in recorded if kind == "emitted")


def query_of(spark, schema: str, build: Build, *settings: Callable[[], ContextManager]) -> OpenRun:
    """An :data:`OpenRun` for ``build(events, processor)`` over a stream of ``schema``,
    started inside each of ``settings()`` (e.g. ``no_data_batches_disabled``)."""
    @contextlib.contextmanager
    def open_run(processor: StatefulProcessor):
        with contextlib.ExitStack() as stack:
            for setting in settings:
                stack.enter_context(setting())
            yield stack.enter_context(
                StreamRun(spark, schema, lambda events: build(events, processor)))
    return open_run


def quick_try(processor: StatefulProcessor, rows_by_key: dict, *, time_mode: str = "None",
              **tester_options: Any) -> None:
    """Run the processor on a few rows in ``TwsTester`` (no JVM) before the real query.

    Only a missing piece of code (the stub's ``NotImplementedError``) fails here, in a
    fraction of a second, with a one-line :class:`~autograder.checks.feedback.TaskNotDone` naming
    the method; everything else is left to the real query, because TwsTester does not model
    TTL, the watermark or the state store (chapter 4, further, section "Fast checks with
    TwsTester").
    """
    from pyspark.sql.streaming.tws_tester import TwsTester

    def try_it() -> None:
        tester = TwsTester(processor, timeMode=time_mode, **tester_options)
        for key, rows in rows_by_key.items():
            tester.test(key, rows)

    stop_if_unfinished(try_it)

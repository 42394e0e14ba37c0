"""Comparing a learner's StatefulProcessor with the course's, step by step.

Chapter 4's checks do not compare a learner's processor with rows written down in advance.
A check is a **scenario**: a function ``play(steps)`` that feeds micro-batches
(``steps.add(rows)``), restarts the query (``steps.run.restart()``) and reads the operator
back in between (``steps.compare(reader, ...)``), over a stream whose parts run side by side
with keys of their own (:class:`~autograder.tws_streams.Stream`). :func:`against_course`
plays it twice:

1. with the course's processor, recording what each step gave: the rows every micro-batch
   emitted, and every reading (state rows, timers, metrics);
2. with the learner's processor, comparing each step with that record as it happens, so a
   difference stops the check at the micro-batch where it appeared. Each part is compared
   on its own keys, so the lesson names the part the difference is in, then what no part
   owns (metrics, a failing query, a key in no part) with the whole stream. A difference
   in the fixed part is told first: one in the seed's part waits for the scenario's end,
   in case the fixed part shows the same belief later, whatever the seed drew.

What Spark does with the course's processor depends on the scenario alone (its streams and
settings), so the first run is asked for through :func:`~autograder.answers.spark_answer`:
once per process, once per class when grading (the solution's run records it for every
learner), and never for a worked example (recorded with the course). A learner's query runs
only the learner's operator.
"""
from __future__ import annotations

import contextlib
import json
from typing import Any, Callable, ContextManager

from pyspark.sql import DataFrame
from pyspark.sql.streaming import StatefulProcessor

from .answers import spark_answer
from .checking import plain_value, spark_failure_as_lesson
from .driver import BatchRecord, StreamRun
from .feedback import CheckFailed, check_equal, stop_if_unfinished
from .tws_streams import Stream

#: A chapter's query around a processor: ``build(events, processor)`` is a DataFrame.
Build = Callable[[DataFrame, StatefulProcessor], DataFrame]
#: Opens a streaming query running one processor: ``open_run(processor)`` is a context
#: manager giving the :class:`StreamRun`.
OpenRun = Callable[[StatefulProcessor], ContextManager[StreamRun]]
#: Reads something back from the run's transformWithState operator: ``reader(run, 0)``.
Reader = Callable[[StreamRun, int], Any]
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
    """What a scenario is played with: its run, the micro-batches so far, its stream."""

    def __init__(self, run: StreamRun, stream: Stream):
        self.run, self.stream, self.context = run, stream, stream.context
        self.records: list[BatchRecord] = []

    def read(self, reader: Reader) -> Any:
        """What ``reader`` reads back from the processor being played."""
        return reader(self.run, OPERATOR)


class _CourseSteps(_Steps):
    """Plays a scenario with the course's processor and records what every step gave."""

    def __init__(self, run: StreamRun, stream: Stream):
        super().__init__(run, stream)
        self.recorded: list = []

    def add(self, rows: list) -> list[BatchRecord]:
        records = self.run.add_batch(rows)
        self.records.extend(records)
        self.recorded.append(["emitted", [[r.batch_id, emitted(r)] for r in records]])
        return records

    def compare(self, reader: Reader, what: str, *, revisit: str) -> None:
        self.recorded.append(["read", _as_data(self.read(reader))])


class _LearnerSteps(_Steps):
    """Plays a scenario with the learner's processor and compares every step with the
    course's record of it."""

    def __init__(self, run: StreamRun, stream: Stream, recorded: list, *, revisit: str,
                 life_cycle: str):
        super().__init__(run, stream)
        self.recorded, self.revisit, self.life_cycle = list(recorded), revisit, life_cycle
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

    def add(self, rows: list) -> list[BatchRecord]:
        """Feed one batch of input rows; every micro-batch it runs must emit the course's rows."""
        with spark_failure_as_lesson("the streaming query running your processor",
                                     revisit=self.life_cycle, context=self.context):
            records = self.run.add_batch(rows)
        self.records.extend(records)
        expected = {batch_id: course_rows for batch_id, course_rows in self._expected("emitted")}
        got = {record.batch_id: emitted(record) for record in records}
        # Not pyspark.testing.assertDataFrameEqual: the course's side is a recording (JSON,
        # asked of Spark once per class), and a difference must be a lesson, not an assertion.
        for batch_id in sorted(set(expected) | set(got)):
            self._check(got.get(batch_id, []), expected.get(batch_id, []),
                        "the rows your processor emitted in this micro-batch",
                        batch=batch_id, revisit=self.revisit)
        return records

    def compare(self, reader: Reader, what: str, *, revisit: str) -> None:
        """``reader`` must read the same from the learner's operator as from the course's."""
        self._check(_as_data(self.read(reader)), self._expected("read"), what,
                    batch=self.records[-1].batch_id if self.records else None, revisit=revisit)


def against_course(question: str, about: Any, open_run: OpenRun, *, learner: StatefulProcessor,
                   course: StatefulProcessor, play: Callable[[_Steps], None], stream: Stream,
                   revisit: str, life_cycle: str) -> _LearnerSteps:
    """Play ``play`` with the course's processor (asked once: ``question`` and ``about``, the
    scenario's streams and settings, name it), then with the learner's, comparing each step.

    ``stream`` is what ``play`` feeds: its parts name a difference in a failure's lesson;
    ``revisit`` is the section a difference in the emitted rows sends the learner to,
    ``life_cycle`` the one a failing query does. Returns the learner's steps (their
    micro-batches, in ``records``).
    """
    def ask_spark() -> list:
        with open_run(course) as run:
            steps = _CourseSteps(run, stream)
            play(steps)
        return steps.recorded

    recorded = spark_answer(question, about, ask_spark)
    with open_run(learner) as run:
        steps = _LearnerSteps(run, stream, recorded, revisit=revisit, life_cycle=life_cycle)
        play(steps)
    if steps.deferred:
        raise steps.deferred
    return steps


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
    fraction of a second, with a one-line :class:`~autograder.feedback.TaskNotDone` naming
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

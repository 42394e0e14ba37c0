"""Checks for chapter 4: transformWithState.

The ideas they test, in the chapter's words:

* a processor's life cycle and its state variables (section "The processor's life cycle");
* timers belong to a grouping key; firing one does **not** clear the key's state, the
  handler must (sections "Timers" and "Firing a timer does not clear the state");
* rows older than the watermark never reach ``handleInputRows`` (section "Late rows");
* the initial state is applied once, in the first micro-batch of a new query, one call of
  ``handleInitialState`` per row (section "Initial state");
* a time to live is measured in processing time; expired values are invisible at once and
  removed at the end of a micro-batch (section "Time to live");
* everything is read back with the state reader (section "Reading the state back").

Each ``check_*`` runs the learner's processor and the course's reference processor side by
side **in one streaming query** (two transformWithState operators over the same input,
their outputs tagged and unioned), on a fresh seeded stream, and compares per micro-batch:
the rows emitted, the state left in the store (every state variable, read with
``stateVarName``, and the timers) and the operator's custom metrics.
"""
from __future__ import annotations

import json
import random
from datetime import datetime, timedelta
from typing import Any, Callable

from pyspark.sql import DataFrame, Row, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming import StatefulProcessor

from .checking import EXAMPLE, FIXED, plain_value, seed_for, spark_failure_as_lesson
from .driver import BatchRecord, StreamRun
from .feedback import CheckFailed, check_equal, passed, stop_if_unfinished
from .session import course_session
from .tws_state import (custom_metrics, ms, no_data_batches_disabled, pending_timers,
                        state_rows_per_key, state_variables, stored_keys, stored_values)

CHAPTER = "chapter 4, transformWithState"
REVISIT_LIFE_CYCLE = f'{CHAPTER}, section "The processor\'s life cycle"'
REVISIT_TIMERS = f'{CHAPTER}, section "Timers"'
REVISIT_CLEAR = f'{CHAPTER}, section "Firing a timer does not clear the state"'
REVISIT_LATE = f'{CHAPTER}, section "Late rows"'
REVISIT_INITIAL = f'{CHAPTER}, section "Initial state"'
REVISIT_TTL = f'{CHAPTER}, section "Time to live"'
REVISIT_READER = f'{CHAPTER}, section "Reading the state back"'

#: The start of event time in every stream of this chapter.
T0 = datetime(2024, 1, 1, 12, 0, 0)
HOUR_MS = 3_600_000
#: Helpers of this module a learner may use freely (the grading guard flags the rest:
#: the reference processors and the runs the checks compare with).
TOOLS = ("ms", "custom_metrics", "no_data_batches_disabled", "state_variables",
         "pending_timers", "stored_keys")
_LEARNER, _REFERENCE = "learner", "reference"
_WHO = "__who"


# -- running the learner's processor beside the course's -------------------------------------
Build = Callable[[DataFrame, StatefulProcessor], DataFrame]


def side_by_side(build: Build, learner: StatefulProcessor,
                 reference: StatefulProcessor) -> Callable[[DataFrame], DataFrame]:
    """One query running both processors on the same input, outputs tagged and unioned."""
    def query(events: DataFrame) -> DataFrame:
        mine = build(events, learner).withColumn(_WHO, F.lit(_LEARNER))
        ours = build(events, reference).withColumn(_WHO, F.lit(_REFERENCE))
        return mine.unionByName(ours)
    return query


def _split(batch: BatchRecord) -> dict[str, list]:
    rows: dict[str, list] = {_LEARNER: [], _REFERENCE: []}
    for row in batch.output:
        values = row.asDict()
        who = values.pop(_WHO)
        rows[who].append([plain_value(v) for v in values.values()])
    return {who: sorted(found, key=repr) for who, found in rows.items()}


def operator_ids(run: StreamRun) -> dict[str, int]:
    """Which operator is the learner's and which the course's.

    The learner's branch comes first in the union, so it gets operator id 0; when exactly
    one operator has variables named ``course_...``, that one is the course's.
    """
    ids = {_LEARNER: 0, _REFERENCE: 1}
    course = []
    for row in run.state_metadata():
        names = [v["stateName"] for v in json.loads(row.operatorProperties)["stateVariables"]]
        if any(name.startswith("course_") for name in names):
            course.append(row.operatorId)
    if len(course) == 1:
        ids = {_REFERENCE: course[0], _LEARNER: 1 - course[0]}
    return ids


class _Scenario:
    """Feeds batches to a side-by-side run and compares every micro-batch's output.

    ``context`` names the stream in a failure's lesson; a check that runs a fixed edge
    stream before the seed's sets it to the part being fed."""

    def __init__(self, run: StreamRun, context: str, revisit: str):
        self.run, self.context, self.revisit = run, context, revisit
        self.records: list[BatchRecord] = []

    def add(self, rows: list) -> list[BatchRecord]:
        with spark_failure_as_lesson("the streaming query running your processor",
                                     revisit=REVISIT_LIFE_CYCLE, context=self.context):
            records = self.run.add_batch(rows)
        for record in records:
            split = _split(record)
            check_equal(split[_LEARNER], split[_REFERENCE],
                        "the rows your processor emitted in this micro-batch",
                        batch=record.batch_id, revisit=self.revisit, context=self.context)
        self.records.extend(records)
        return records


def quick_try(processor: StatefulProcessor, rows_by_key: dict, *, time_mode: str = "None",
              **tester_options: Any) -> None:
    """Run the processor on a few rows in ``TwsTester`` (no JVM) before the real query.

    Only a missing piece of code (the stub's ``NotImplementedError``) fails here, in a
    fraction of a second, with a one-line :class:`~autograder.feedback.TaskNotDone` naming
    the method; everything else is left to the real query, because TwsTester does not model
    TTL, the watermark or the state store (chapter 4, section "Fast checks with TwsTester").
    """
    from pyspark.sql.streaming.tws_tester import TwsTester

    def try_it() -> None:
        tester = TwsTester(processor, timeMode=time_mode, **tester_options)
        for key, rows in rows_by_key.items():
            tester.test(key, rows)

    stop_if_unfinished(try_it)


def _context(what: str, label: str, batches: list) -> str:
    """How a lesson names a stream: what it holds, its batches and where it comes from
    (:data:`EXAMPLE`, :data:`FIXED` or ``seed N``)."""
    return f"{what}, batches {batches} ({label})"


# -- task 1: a session tracker with an event-time timer -----------------------------------------
SESSION_SCHEMA = "user STRING, ts TIMESTAMP"
SESSION_OUT = "user STRING, events INT, first_ms LONG, last_ms LONG"
SESSION_GAP_MS, SESSION_DELAY = 10_000, "5 seconds"


class CourseSessionTracker(StatefulProcessor):
    """The course's session tracker: one value per user and one timer at last event + gap."""

    def __init__(self, gap_ms: int):
        self.gap_ms = gap_ms

    def init(self, handle):
        self.handle = handle
        self.session = handle.getValueState("course_session",
                                            "events INT, first_ms LONG, last_ms LONG")

    def handleInputRows(self, key, rows, timerValues):
        events, first, last = self.session.get() or (0, None, None)
        for row in rows:
            at = int(row.ts.timestamp() * 1000)
            events += 1
            first = at if first is None else min(first, at)
            last = at if last is None else max(last, at)
        self.session.update((events, first, last))
        for timer in self.handle.listTimers():
            self.handle.deleteTimer(timer)
        self.handle.registerTimer(last + self.gap_ms)
        return iter([])

    def handleExpiredTimer(self, key, timerValues, expiredTimerInfo):
        events, first, last = self.session.get()
        self.session.clear()
        yield Row(user=key[0], events=events, first_ms=first, last_ms=last)

    def close(self):
        pass


def sessions(events: DataFrame, processor: StatefulProcessor) -> DataFrame:
    """The query of task 1: sessions per user, watermark 5 s behind the events."""
    return (events.withWatermark("ts", SESSION_DELAY).groupBy("user")
                  .transformWithState(processor, SESSION_OUT, "Append", "EventTime"))


EXAMPLE_SESSIONS = [
    [("ann", 0), ("ann", 4), ("bob", 2)],
    [("ann", 30), ("bob", 8)],
    [("cid", 60)],
]


def _session_batches(rng: random.Random, start: int = 0) -> list[list[tuple[str, int]]]:
    batches = []
    for number in range(3):
        at = start + 30 * number
        rows = [(user, at + rng.randint(0, 8))
                for user in ("ann", "bob", "cid") for _ in range(rng.randint(0, 2))]
        if number and rng.random() < 0.7:       # a row far behind the watermark
            rows.append((rng.choice(("ann", "bob", "dan")), at - 40))
        batches.append(rows or [("eve", at)])
    return batches


#: The fixed part of every graded session stream, before the seed's (which starts at
#: 100 s): ann's second event arrives while her first timer is pending (her timer must be
#: replaced, not added to), bob's timer fires when cid moves the watermark, and ann's row at
#: 2 s comes after the watermark passed it (dropped before the processor sees it).
EDGE_SESSIONS = [[("ann", 0), ("bob", 1)], [("ann", 6)], [("cid", 40)], [("ann", 2)]]


def _at(seconds: int) -> datetime:
    return T0 + timedelta(seconds=seconds)


def check_session_tracker(tracker: type, *, seed: int | None = None,
                          example: bool = False) -> None:
    """``tracker(gap_ms)`` must emit one summary per closed session, keep exactly one timer
    per open session, and leave no state behind a closed one.

    After every micro-batch the check compares, with the course's processor: the rows
    emitted, the users that hold state and the registered timers ``[user, expiry ms]``.
    """
    spark = course_session()
    what = "(user, seconds after T0)"
    parts = [(_context(what, EXAMPLE, EXAMPLE_SESSIONS), EXAMPLE_SESSIONS)]
    if not example:
        seed = seed_for(seed)
        drawn = _session_batches(random.Random(seed), start=100)
        parts = [(_context(what, FIXED, EDGE_SESSIONS), EDGE_SESSIONS),
                 (_context(what, f"seed {seed}", drawn), drawn)]
    quick_try(tracker(SESSION_GAP_MS), {"ann": [Row(user="ann", ts=T0)]}, time_mode="EventTime",
              eventTimeExtractor=lambda row: ms(row.ts))
    query = side_by_side(sessions, tracker(SESSION_GAP_MS), CourseSessionTracker(SESSION_GAP_MS))
    with StreamRun(spark, SESSION_SCHEMA, query) as run:
        scenario = _Scenario(run, parts[0][0], REVISIT_TIMERS)
        for context, batches in parts:
            scenario.context = context
            for rows in batches:
                (*_, last) = scenario.add([(user, _at(second)) for user, second in rows])
                ids = operator_ids(run)
                check_equal(stored_keys(run, ids[_LEARNER]), stored_keys(run, ids[_REFERENCE]),
                            "the users that hold state after this micro-batch (a session whose "
                            "timer fired must leave nothing behind)", batch=last.batch_id,
                            revisit=REVISIT_CLEAR, context=context)
                check_equal(pending_timers(run, ids[_LEARNER]),
                            pending_timers(run, ids[_REFERENCE]),
                            "the timers registered after this micro-batch, as [user, expiry ms] "
                            "(exactly one per open session: a new event replaces the timer)",
                            batch=last.batch_id, revisit=REVISIT_TIMERS, context=context)
    passed(f"your sessions match Spark's reference over {len(scenario.records)} micro-batches")


# -- task 2: a de-duplicator with a TTL in processing time ---------------------------------------
DEDUP_SCHEMA = "id STRING"
DEDUP_OUT = "id STRING, copies INT"


class CourseDedup(StatefulProcessor):
    """The course's de-duplicator: a value with a TTL remembers that an id was emitted."""

    def __init__(self, ttl_ms: int):
        self.ttl_ms = ttl_ms

    def init(self, handle):
        self.seen = handle.getValueState("course_seen", "seen BOOLEAN", ttlDurationMs=self.ttl_ms)

    def handleInputRows(self, key, rows, timerValues):
        copies = sum(1 for _ in rows)
        if not self.seen.exists():
            self.seen.update((True,))
            yield Row(id=key[0], copies=copies)

    def close(self):
        pass


def deduplicated(events: DataFrame, processor: StatefulProcessor) -> DataFrame:
    """The query of task 2: one output row per id, in processing time."""
    return events.groupBy("id").transformWithState(processor, DEDUP_OUT, "Append", "ProcessingTime")


EXAMPLE_DEDUP = [["a", "a", "b"], ["a", "c"], ["b", "c", "c"]]
#: The fixed stream of every graded run: ids seen again in the next micro-batch, with
#: several copies. Run with a TTL of an hour (remembered: not emitted again) and of 1 ms
#: (forgotten by then: emitted again), it separates a memory that never expires from one
#: that is never consulted.
EDGE_DEDUP = [["a", "a", "b"], ["a", "b", "b"]]


def check_ttl_dedup(dedup: type, *, seed: int | None = None, example: bool = False) -> None:
    """``dedup(ttl_ms)`` must emit an id again only once its memory has expired.

    The example keeps ids for an hour (nothing expires while it runs). When grading, a query
    with a 1 ms TTL runs the fixed stream then the seed's micro-batches: 1 ms has expired by
    the next micro-batch whatever the clock says, because a micro-batch takes far longer
    than 1 ms (the check verifies that too); then a query with a TTL of an hour runs the
    fixed stream again (an id seen again is still remembered). After every micro-batch the rows emitted are compared; after every part, that
    a state variable has a time to live and the ids remembered in the state store. (How many
    values the TTL clean-up removes depends on how the memory is kept, a value or a list of
    sightings, so it is not compared.)
    """
    spark = course_session()
    if example:
        runs = [(HOUR_MS, [(EXAMPLE, EXAMPLE_DEDUP)])]
    else:
        seed = seed_for(seed)
        rng = random.Random(seed)
        drawn = [[rng.choice("abcde") for _ in range(rng.randint(1, 5))] for _ in range(3)]
        runs = [(1, [(FIXED, EDGE_DEDUP), (f"seed {seed}", drawn)]),
                (HOUR_MS, [(FIXED, EDGE_DEDUP)])]
    runs = [(ttl, [(_context(f"ids, TTL {ttl} ms", label, batches), batches)
                   for label, batches in parts]) for ttl, parts in runs]
    quick_try(dedup(runs[0][0]), {"a": [Row(id="a")]}, time_mode="ProcessingTime")
    for ttl, parts in runs:
        _dedup_run(spark, dedup, ttl, parts)
    passed("your de-duplicator matches Spark's reference with a TTL of "
           + " and of ".join("an hour" if ttl == HOUR_MS else f"{ttl} ms" for ttl, _ in runs))


def _dedup_run(spark: SparkSession, dedup: type, ttl: int, parts: list) -> None:
    query = side_by_side(deduplicated, dedup(ttl), CourseDedup(ttl))
    with no_data_batches_disabled(spark), StreamRun(spark, DEDUP_SCHEMA, query) as run:
        scenario = _Scenario(run, parts[0][0], REVISIT_TTL)
        for context, batches in parts:
            scenario.context = context
            for rows in batches:
                (record,) = scenario.add([(i,) for i in rows])
                if ttl == 1 and record.progress["durationMs"]["triggerExecution"] <= ttl:
                    raise RuntimeError("a micro-batch took under 1 ms: the TTL reasoning fails")
            ids = operator_ids(run)
            ttl_flags = {v["ttlEnabled"] for v in state_variables(run, ids[_LEARNER])}
            check_equal(True in ttl_flags, True,
                        "a state variable of yours with a time to live (ttlEnabled in "
                        "state-metadata)", revisit=REVISIT_TTL, context=context)
            check_equal(stored_keys(run, ids[_LEARNER]), stored_keys(run, ids[_REFERENCE]),
                        "the ids remembered in the state store after these micro-batches",
                        batch=record.batch_id, revisit=REVISIT_TTL, context=context)


# -- task 3: initial state with several rows per key ----------------------------------------------
COUNT_SCHEMA = "user STRING"
COUNT_OUT = "user STRING, total INT"
INITIAL_SCHEMA = "user STRING, n INT"


class CourseStartingCounts(StatefulProcessor):
    """The course's running count that starts from an initial state, summing its rows."""

    def init(self, handle):
        self.total = handle.getValueState("course_total", "n INT")

    def handleInitialState(self, key, initialState, timerValues):
        self.total.update(((self.total.get() or (0,))[0] + initialState.n,))

    def handleInputRows(self, key, rows, timerValues):
        total = (self.total.get() or (0,))[0] + sum(1 for _ in rows)
        self.total.update((total,))
        yield Row(user=key[0], total=total)

    def close(self):
        pass


def counts_from(initial: DataFrame) -> Build:
    """The query of task 3: running counts per user, starting from ``initial``."""
    def build(events: DataFrame, processor: StatefulProcessor) -> DataFrame:
        return events.groupBy("user").transformWithState(
            processor, COUNT_OUT, "Append", "None", initialState=initial.groupBy("user"))
    return build


EXAMPLE_INITIAL = [("ann", 10), ("ann", 5), ("bob", 7)]
EXAMPLE_COUNTS = [["ann"], ["ann", "bob"], ["bob", "cid"]]
#: The fixed case of every graded run: a user with two starting rows seen in micro-batch 0
#: (their sum, not one of them, starts the count), a user who starts only after the restart,
#: and a user with no starting row.
EDGE_INITIAL = ([("ann", 3), ("bob", 2), ("bob", 5)], [["bob", "cid"], ["ann", "bob"], ["cid"]])


def check_starting_counts(counter: type, *, seed: int | None = None,
                          example: bool = False) -> None:
    """``counter()`` must count from the initial state, adding up a user's several rows.

    Each query is restarted on its checkpoint after micro-batch 0: the initial state is not
    applied again, so the counts simply go on. When grading, a fixed case runs, then the
    seed's.
    """
    spark = course_session()
    if example:
        cases = [(EXAMPLE_INITIAL, EXAMPLE_COUNTS, EXAMPLE)]
    else:
        seed = seed_for(seed)
        cases = [(*EDGE_INITIAL, FIXED), (*_random_counts(random.Random(seed)), f"seed {seed}")]
    cases = [(initial, batches,
              _context(f"initial state {initial}, users", label, batches)
              + ", restarted after batch 0") for initial, batches, label in cases]
    quick_try(counter(), {"ann": [Row(user="ann")]},
              initialStateRow=[("ann", Row(user="ann", n=1))])
    for initial, batches, context in cases:
        initial_df = spark.createDataFrame(initial, INITIAL_SCHEMA)
        query = side_by_side(counts_from(initial_df), counter(), CourseStartingCounts())
        with StreamRun(spark, COUNT_SCHEMA, query) as run:
            scenario = _Scenario(run, context, REVISIT_INITIAL)
            for number, rows in enumerate(batches):
                scenario.add([(user,) for user in rows])
                if number == 0:
                    run.restart()
            ids = operator_ids(run)
            check_equal(stored_keys(run, ids[_LEARNER]), stored_keys(run, ids[_REFERENCE]),
                        "the users that hold state at the end (every user of the initial "
                        "state and of the stream)", revisit=REVISIT_INITIAL, context=context)
    passed("your counts start from the initial state and survive a restart")


def _random_counts(rng: random.Random) -> tuple[list, list]:
    """An initial state (one user with two rows at least) and three micro-batches of users."""
    users = ("ann", "bob", "cid", "dan")
    initial = [(user, rng.randint(1, 20)) for user in users if rng.random() < 0.5]
    twice = rng.choice(users)
    initial += [(twice, rng.randint(1, 20)), (twice, rng.randint(1, 20))]
    batches = [[rng.choice(users) for _ in range(rng.randint(1, 4))] for _ in range(3)]
    batches[0].append(twice)      # so that the two starting rows show in the output
    return initial, batches


# -- task 4: the first N rows of every key ----------------------------------------------------------
FIRST_SCHEMA = "user STRING, seq INT"
FIRST_OUT = "user STRING, seq INT"


class CourseFirstN(StatefulProcessor):
    """The course's per-user limit: one counter per user, rows taken in ``seq`` order."""

    def __init__(self, n: int):
        self.n = n

    def init(self, handle):
        self.emitted = handle.getValueState("course_emitted", "n INT")

    def handleInputRows(self, key, rows, timerValues):
        done = (self.emitted.get() or (0,))[0]
        if done >= self.n:
            return
        taken = sorted(row.seq for row in rows)[: self.n - done]
        self.emitted.update((done + len(taken),))
        for seq in taken:
            yield Row(user=key[0], seq=seq)

    def close(self):
        pass


def first_rows(events: DataFrame, processor: StatefulProcessor) -> DataFrame:
    """The query of task 4: at most n rows per user, ever."""
    return events.groupBy("user").transformWithState(processor, FIRST_OUT, "Append", "None")


EXAMPLE_FIRST = ([["ann", "ann", "bob"], ["ann", "ann", "bob"], ["ann", "cid"]], 3)
COUNTED_METRICS = ("numValueStateVars", "numListStateVars", "numMapStateVars")


def check_first_n(first_n: type, *, seed: int | None = None, example: bool = False) -> None:
    """``first_n(n)`` must let through the first ``n`` rows of each user (lowest ``seq``),
    keeping a single value per user in the state store.

    When grading, the query first runs a fixed part (one user, ``zed``: more than ``n`` rows
    in the first micro-batch, two more in the second, which a limit per micro-batch lets
    through), then the seed's micro-batches. After each part the operator's state-variable
    metrics, the state rows per user and the value each user holds are compared.
    """
    spark = course_session()
    if example:
        users, n = EXAMPLE_FIRST
        parts = [(EXAMPLE, users)]
    else:
        seed = seed_for(seed)
        rng = random.Random(seed)
        users = [[rng.choice(("ann", "bob", "cid")) for _ in range(rng.randint(1, 5))]
                 for _ in range(3)]
        n = rng.randint(1, 3)
        parts = [(FIXED, [["zed"] * (n + 1), ["zed"] * 2]), (f"seed {seed}", users)]
    numbered, seq = [], 0
    for label, names_per_batch in parts:
        batches = []
        for names in names_per_batch:
            batches.append([(name, seq + i) for i, name in enumerate(names)])
            seq += len(names)
        numbered.append((_context(f"(user, seq), n={n}", label, batches), batches))
    quick_try(first_n(n), {"ann": [Row(user="ann", seq=0)]})
    query = side_by_side(first_rows, first_n(n), CourseFirstN(n))
    with StreamRun(spark, FIRST_SCHEMA, query) as run:
        scenario = _Scenario(run, numbered[0][0], REVISIT_LIFE_CYCLE)
        for context, batches in numbered:
            scenario.context = context
            for rows in batches:
                scenario.add(rows)
            ids = operator_ids(run)
            last = scenario.records[-1]
            for metric in COUNTED_METRICS:
                check_equal(custom_metrics(last, ids[_LEARNER])[metric],
                            custom_metrics(last, ids[_REFERENCE])[metric],
                            f"{metric} (state variables declared, summed over partitions)",
                            batch=last.batch_id, revisit=REVISIT_LIFE_CYCLE, context=context)
            check_equal(state_rows_per_key(run, ids[_LEARNER]),
                        state_rows_per_key(run, ids[_REFERENCE]),
                        "state rows per user after these micro-batches (one counter each)",
                        batch=last.batch_id, revisit=REVISIT_READER, context=context)
            check_equal(stored_values(run, ids[_LEARNER]), stored_values(run, ids[_REFERENCE]),
                        "the value stored per user after these micro-batches: how many of "
                        "their rows were let through", batch=last.batch_id,
                        revisit=REVISIT_READER, context=context)
    passed(f"your limit lets the first {n} rows of each user through, with one counter each")

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

Each ``check_*`` plays a scenario (the chapter's example, or a fixed edge stream beside a
seeded one, each with keys of its own: :mod:`autograder.chapters.tws_streams`) with the learner's
processor, in two halves (:mod:`autograder.checks.asking`): asking plays it and keeps what every
step gave; judging compares that, per micro-batch and part by part, with the course's
reference processor's run of the same scenario through the same query
(:mod:`autograder.chapters.processor_pair`): the rows emitted, the state left in the store (every
state variable, read with ``stateVarName``, and the timers) and the operator's custom
metrics. Spark's run of the reference is asked once (:mod:`autograder.checks.answers`): a worked
example's is recorded with the course, a class's by the solution's run.
"""
from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from datetime import timedelta

from pyspark.sql import DataFrame, Row, SparkSession
from pyspark.sql.streaming import StatefulProcessor

from ..checks.asking import Answers, Case, declared, spark_for_truth
from ..checks.checking import Dimension, reference_answer
from ..contract import SEED
from ..toolkit.driver import BatchRecord, StreamRun
from .processor_pair import (Build, course_run, judge_against_course, micro_batches_run,
                             play_learner, query_of, quick_try)
from ..toolkit.session import course_session
from ..toolkit.streams import T0
from .tws_state import (batch_timestamp_ms, custom_metrics, ms, no_data_batches_disabled,
                        pending_timers, state_rows_per_key, state_variables, stored_keys,
                        stored_values, ttl_expiries_per_key)
from .tws_state import ttl_expiries  # noqa: F401 - one of the TOOLS a learner imports from here
from .tws_streams import (EXAMPLE_FIRST, HOUR_MS, Stream, count_cases, dedup_runs,
                          first_n_stream, fixed_part, keys_of, session_stream)

CHAPTER = "chapter 4, transformWithState"
REVISIT_LIFE_CYCLE = f'{CHAPTER}, section "The processor\'s life cycle"'
REVISIT_TIMERS = f'{CHAPTER}, section "Timers"'
REVISIT_CLEAR = f'{CHAPTER}, section "Firing a timer does not clear the state"'
REVISIT_INITIAL = f'{CHAPTER}, section "Initial state"'
REVISIT_TTL = f'{CHAPTER}, section "Time to live"'
REVISIT_READER = f'{CHAPTER}, section "Reading the state back"'

#: Helpers of this module a learner may use freely (the grading guard flags the rest:
#: the reference processors and the runs the checks compare with).
TOOLS = ("ms", "custom_metrics", "no_data_batches_disabled", "state_variables",
         "pending_timers", "stored_keys", "batch_timestamp_ms", "ttl_expiries",
         "ttl_expiries_per_key", "warm_up_in_background")


# -- task 1: a session tracker with an event-time timer ----------------------------------------
SESSION_SCHEMA = "user STRING, ts TIMESTAMP"
SESSION_OUT = "user STRING, events INT, first_ms LONG, last_ms LONG"
SESSION_GAP_MS, SESSION_DELAY = 10_000, "5 seconds"


@dataclass(eq=False)
class CourseSessionTracker(StatefulProcessor):
    """The course's session tracker: one value per user and one timer at last event + gap."""

    gap_ms: int

    def __post_init__(self):
        reference_answer()  # the course's answer: never the learner's

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


def sessions(events: DataFrame, processor: StatefulProcessor) -> DataFrame:
    """The query of task 1: sessions per user, watermark 5 s behind the events."""
    return (events.withWatermark("ts", SESSION_DELAY).groupBy("user")
                  .transformWithState(processor, SESSION_OUT, "Append", "EventTime"))


def _session_cases(*, seed: int, example: bool) -> list[Case]:
    """The stream of task 1: the chapter's example, or the fixed part beside the seed's."""
    chosen = None if example else seed
    return [Case(session_stream(chosen).context, {"seed": chosen})]


def _sessions_play(stream: Stream):
    def play(steps) -> None:
        for rows in stream.batches:
            steps.add([(user, T0 + timedelta(seconds=at)) for user, at in rows])
            steps.compare(stored_keys, "the users that hold state after this micro-batch "
                          "(a session whose timer fired must leave nothing behind)",
                          revisit=REVISIT_CLEAR)
            steps.compare(pending_timers, "the timers registered after this micro-batch, "
                          "as [user, expiry ms] (exactly one per open session: a new "
                          "event replaces the timer)", revisit=REVISIT_TIMERS)
    return play


def _sessions_unfinished(tracker: type) -> None:
    quick_try(tracker(SESSION_GAP_MS), {"ann": [Row(user="ann", ts=T0)]}, time_mode="EventTime",
              eventTimeExtractor=lambda row: ms(row.ts))
    _after_warm_up()


def _ask_sessions(tracker: type, case: Case, answers: Answers) -> None:
    stream = session_stream(case.about["seed"])
    play_learner(query_of(course_session(), SESSION_SCHEMA, sessions), tracker(SESSION_GAP_MS),
                 play=_sessions_play(stream), stream=stream, answers=answers,
                 life_cycle=REVISIT_LIFE_CYCLE)


def _sessions_truth(case: Case) -> list:
    stream = session_stream(case.about["seed"])
    return course_run("transform_with_state.sessions", [SESSION_GAP_MS, [stream.batches]],
                      lambda: query_of(spark_for_truth(), SESSION_SCHEMA, sessions),
                      course=CourseSessionTracker(SESSION_GAP_MS), play=_sessions_play(stream),
                      stream=stream)


def _judge_sessions(case: Case, answers: Answers) -> None:
    stream = session_stream(case.about["seed"])
    judge_against_course(_sessions_truth(case), answers, play=_sessions_play(stream),
                         stream=stream, revisit=REVISIT_TIMERS)


@declared(
    cases=_session_cases,
    ask=_ask_sessions, judge=_judge_sessions, before=_sessions_unfinished,
    # as many micro-batches as the learner's query ran: Spark decides them from the
    # watermark alone, whatever the processor
    passed=lambda cases: f"your sessions match Spark's reference over "
                         f"{sum(micro_batches_run(_sessions_truth(case)) for case in cases)} "
                         "micro-batches")
def check_session_tracker(tracker: type, *, seed: int | None = None,
                          example: bool = False) -> None:
    """``tracker(gap_ms)`` must emit one summary per closed session, keep exactly one timer
    per open session, and leave no state behind a closed one.

    After every micro-batch the check compares, with the course's processor: the rows
    emitted, the users that hold state and the registered timers ``[user, expiry ms]``.
    """


# -- task 2: a de-duplicator with a TTL in processing time -------------------------------------
DEDUP_SCHEMA = "id STRING"
DEDUP_OUT = "id STRING, copies INT"


@dataclass(eq=False)
class CourseDedup(StatefulProcessor):
    """The course's de-duplicator: a value with a TTL remembers that an id was emitted."""

    ttl_ms: int

    def __post_init__(self):
        reference_answer()  # the course's answer: never the learner's

    def init(self, handle):
        self.seen = handle.getValueState("course_seen", "seen BOOLEAN", ttlDurationMs=self.ttl_ms)

    def handleInputRows(self, key, rows, timerValues):
        copies = sum(1 for _ in rows)
        if not self.seen.exists():
            self.seen.update((True,))
            yield Row(id=key[0], copies=copies)


def deduplicated(events: DataFrame, processor: StatefulProcessor) -> DataFrame:
    """The query of task 2: one output row per id, in processing time."""
    return events.groupBy("id").transformWithState(processor, DEDUP_OUT, "Append", "ProcessingTime")


def _dedup_cases(*, seed: int, example: bool) -> list[Case]:
    """The queries of task 2, one case each: the example with an hour's TTL; graded, the
    fixed part beside the seed's with 1 ms, then the fixed part again with an hour."""
    chosen = None if example else seed
    return [Case(stream.context, {"seed": chosen, "run": number, "ttl": ttl})
            for number, (ttl, stream) in enumerate(dedup_runs(chosen))]


def _dedup_stream(case: Case) -> tuple[int, Stream]:
    return dedup_runs(case.about["seed"])[case.about["run"]]


def _dedup_play(ttl: int, stream: Stream):
    def play(steps) -> None:
        for number, rows in enumerate(stream.batches):
            steps.add([(i,) for i in rows], then=lambda records: _one_batch_over(records, ttl))
            if number not in stream.ends:
                continue
            steps.compare(stored_keys, "the ids remembered in the state store after these "
                          "micro-batches", revisit=REVISIT_TTL)
            if ttl == 1:  # all that is left was written by the last micro-batch
                steps.compare(_ttl_after_last_batch, "how many ms after the last micro-batch's "
                              "timestamp each remembered id expires (ttlExpirationMs in the "
                              "state store): the TTL your variable was given, in ms",
                              revisit=REVISIT_TTL)
            steps.require(_has_a_ttl, True,
                          "a state variable of yours with a time to live (ttlEnabled in "
                          "state-metadata)", revisit=REVISIT_TTL)
    return play


def _one_batch_over(records: list[BatchRecord], ttl: int) -> None:
    """Each batch of ids runs one micro-batch, which outlasts a TTL of 1 ms."""
    (record,) = records
    if ttl == 1 and record.progress["durationMs"]["triggerExecution"] <= ttl:
        raise RuntimeError("a micro-batch took under 1 ms: the TTL reasoning fails")


def _has_a_ttl(run: StreamRun, operator: int) -> bool:
    return True in {v["ttlEnabled"] for v in state_variables(run, operator)}


def _dedup_query(spark: SparkSession):
    return query_of(spark, DEDUP_SCHEMA, deduplicated, lambda: no_data_batches_disabled(spark))


def _dedup_unfinished(dedup: type) -> None:
    quick_try(dedup(HOUR_MS), {"a": [Row(id="a")]}, time_mode="ProcessingTime")
    _after_warm_up()


def _ask_dedup(dedup: type, case: Case, answers: Answers) -> None:
    ttl, stream = _dedup_stream(case)
    play_learner(_dedup_query(course_session()), dedup(ttl), play=_dedup_play(ttl, stream),
                 stream=stream, answers=answers, life_cycle=REVISIT_LIFE_CYCLE)


def _judge_dedup(case: Case, answers: Answers) -> None:
    ttl, stream = _dedup_stream(case)
    recorded = course_run("transform_with_state.dedup", [ttl, [stream.batches]],
                          lambda: _dedup_query(spark_for_truth()), course=CourseDedup(ttl),
                          play=_dedup_play(ttl, stream), stream=stream)
    judge_against_course(recorded, answers, play=_dedup_play(ttl, stream), stream=stream,
                         revisit=REVISIT_TTL)


@declared(
    cases=_dedup_cases, ask=_ask_dedup,
    judge=_judge_dedup, before=_dedup_unfinished,
    passed=lambda cases: "your de-duplicator matches Spark's reference with a TTL of "
                         + " and of ".join("an hour" if case.about["ttl"] == HOUR_MS
                                           else f"{case.about['ttl']} ms" for case in cases))
def check_ttl_dedup(dedup: type, *, seed: int | None = None, example: bool = False) -> None:
    """``dedup(ttl_ms)`` must emit an id again only once its memory has expired.

    The example keeps ids for an hour. Graded, a query with a 1 ms TTL runs the fixed stream
    beside the seed's (1 ms has always expired by the next micro-batch, which the check
    verifies), then a query with an hour's TTL runs the fixed stream again (still
    remembered). Compared: the rows of every micro-batch; where each part ends, the ids
    remembered and that a variable has a TTL; with 1 ms, also when they expire: a TTL given in
    seconds (1,000 times too long) would otherwise pass or fail with the machine's speed,
    as 1 s is about a micro-batch. (How many values the clean-up removes depends on how
    the memory is kept, a value or a list of sightings, so it is not compared.)
    """


def _ttl_after_last_batch(run: StreamRun, operator: int) -> dict[str, list[int]]:
    stamp = batch_timestamp_ms(run)
    return {key: sorted({expiry - stamp for expiry in expiries})
            for key, expiries in ttl_expiries_per_key(run, operator).items()}


# -- task 3: initial state with several rows per key -------------------------------------------
COUNT_SCHEMA = "user STRING"
COUNT_OUT = "user STRING, total INT"
INITIAL_SCHEMA = "user STRING, n INT"


class CourseStartingCounts(StatefulProcessor):
    """The course's running count that starts from an initial state, summing its rows."""

    def __init__(self):
        reference_answer()  # the course's answer: never the learner's

    def init(self, handle):
        self.total = handle.getValueState("course_total", "n INT")

    def handleInitialState(self, key, initialState, timerValues):
        self.total.update(((self.total.get() or (0,))[0] + initialState.n,))

    def handleInputRows(self, key, rows, timerValues):
        total = (self.total.get() or (0,))[0] + sum(1 for _ in rows)
        self.total.update((total,))
        yield Row(user=key[0], total=total)


def counts_from(initial: DataFrame) -> Build:
    """The query of task 3: running counts per user, starting from ``initial``."""
    def build(events: DataFrame, processor: StatefulProcessor) -> DataFrame:
        return events.groupBy("user").transformWithState(
            processor, COUNT_OUT, "Append", "None", initialState=initial.groupBy("user"))
    return build


def _count_cases(*, seed: int, example: bool) -> list[Case]:
    """The query of task 3: the example, or the fixed case beside the seed's."""
    chosen = None if example else seed
    return [Case(count_cases(chosen)[1].context, {"seed": chosen})]


def _counts_play(stream: Stream):
    def play(steps) -> None:
        for number, rows in enumerate(stream.batches):
            steps.add([(user,) for user in rows])
            if number == 0:
                steps.restart()
        steps.compare(stored_keys, "the users that hold state at the end (every user of "
                      "the initial state and of the stream)", revisit=REVISIT_INITIAL)
    return play


def _counts_query(spark: SparkSession, initial: list):
    initial_df = spark.createDataFrame(initial, INITIAL_SCHEMA)
    return query_of(spark, COUNT_SCHEMA, counts_from(initial_df))


def _counts_unfinished(counter: type) -> None:
    quick_try(counter(), {"ann": [Row(user="ann")]},
              initialStateRow=[("ann", Row(user="ann", n=1))])
    _after_warm_up()


def _ask_counts(counter: type, case: Case, answers: Answers) -> None:
    initial, stream = count_cases(case.about["seed"])
    open_run = _counts_query(course_session(), initial)
    play_learner(open_run, counter(), play=_counts_play(stream), stream=stream,
                 answers=answers, life_cycle=REVISIT_LIFE_CYCLE)


def _judge_counts(case: Case, answers: Answers) -> None:
    initial, stream = count_cases(case.about["seed"])
    recorded = course_run("transform_with_state.starting_counts", [initial, stream.batches],
                          lambda: _counts_query(spark_for_truth(), initial),
                          course=CourseStartingCounts(), play=_counts_play(stream),
                          stream=stream)
    judge_against_course(recorded, answers, play=_counts_play(stream), stream=stream,
                         revisit=REVISIT_INITIAL)


@declared(
    cases=_count_cases,
    ask=_ask_counts, judge=_judge_counts, before=_counts_unfinished,
    passed=lambda cases: "your counts start from the initial state and survive a restart")
def check_starting_counts(counter: type, *, seed: int | None = None,
                          example: bool = False) -> None:
    """``counter()`` must count from the initial state, adding up a user's several rows.

    The query is restarted on its checkpoint after micro-batch 0: the initial state is not
    applied again, so the counts simply go on. When grading, a fixed case runs beside the
    seed's, their initial rows together.
    """


# -- task 4: the first N rows of every key -----------------------------------------------------
#: The rows let through are the input's own rows.
FIRST_SCHEMA = FIRST_OUT = "user STRING, seq INT"


@dataclass(eq=False)
class CourseFirstN(StatefulProcessor):
    """The course's per-user limit: one counter per user, rows taken in ``seq`` order."""

    n: int

    def __post_init__(self):
        reference_answer()  # the course's answer: never the learner's

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


def first_rows(events: DataFrame, processor: StatefulProcessor) -> DataFrame:
    """The query of task 4: at most n rows per user, ever."""
    return events.groupBy("user").transformWithState(processor, FIRST_OUT, "Append", "None")


COUNTED_METRICS = ("numValueStateVars", "numListStateVars", "numMapStateVars")


def _first_cases(*, seed: int, example: bool) -> list[Case]:
    """The stream of task 4: the example, or the fixed part beside the seed's."""
    chosen = None if example else seed
    n, stream = first_n_stream(chosen)
    return [Case(stream.context, {"seed": chosen, "n": n})]


def _first_play(stream: Stream):
    def play(steps) -> None:
        for number, rows in enumerate(stream.batches):
            steps.add(rows)
            if number not in stream.ends:
                continue
            steps.compare(state_rows_per_key, "state rows per user after these micro-batches "
                          "(one counter each)", revisit=REVISIT_READER)
            steps.compare(stored_values, "the value stored per user after these micro-batches:"
                          " how many of their rows were let through", revisit=REVISIT_READER)
            for metric in COUNTED_METRICS:
                # the last micro-batch's metrics (read only where a query ran)
                steps.compare(lambda run, operator, metric=metric:
                              custom_metrics(steps.records[-1], operator)[metric],
                              f"{metric} (state variables declared, summed over partitions)",
                              revisit=REVISIT_LIFE_CYCLE)
    return play


def _first_unfinished(first_n: type) -> None:
    quick_try(first_n(EXAMPLE_FIRST[1]), {"ann": [Row(user="ann", seq=0)]})
    _after_warm_up()


def _ask_first(first_n: type, case: Case, answers: Answers) -> None:
    n, stream = first_n_stream(case.about["seed"])
    play_learner(query_of(course_session(), FIRST_SCHEMA, first_rows), first_n(n),
                 play=_first_play(stream), stream=stream, answers=answers,
                 life_cycle=REVISIT_LIFE_CYCLE)


def _judge_first(case: Case, answers: Answers) -> None:
    n, stream = first_n_stream(case.about["seed"])
    recorded = course_run("transform_with_state.first_n", [n, [stream.batches]],
                          lambda: query_of(spark_for_truth(), FIRST_SCHEMA, first_rows),
                          course=CourseFirstN(n), play=_first_play(stream), stream=stream)
    judge_against_course(recorded, answers, play=_first_play(stream), stream=stream,
                         revisit=REVISIT_LIFE_CYCLE)


def _first_passed(cases: list[Case]) -> str:
    (case,) = cases
    n = case.about["n"]
    return (f"your limit lets the first {n} row{'s' if n > 1 else ''} of each user through, "
            "with one counter each")


@declared(
    cases=_first_cases, ask=_ask_first,
    judge=_judge_first, before=_first_unfinished, passed=_first_passed)
def check_first_n(first_n: type, *, seed: int | None = None, example: bool = False) -> None:
    """``first_n(n)`` must let through the first ``n`` rows of each user (lowest ``seq``),
    keeping a single value per user in the state store.

    When grading, a fixed part runs beside the seed's micro-batches (users of its own):
    ``zed``, more than ``n`` rows in the first micro-batch, written latest ``seq`` first, so
    that the order in which the rows reach ``handleInputRows`` is not theirs; two more in
    the second, which a limit per micro-batch lets through; ``amy``, seen once, beside zed
    in the first. Where each part ends, the state rows per user, the value each user holds
    and the operator's state-variable metrics are compared.
    """


# -- the kinds of input the tasks allow ---------------------------------------------------------
# Each is held by the fixed part of a graded stream (tws_streams), which runs on every seed.
_DELAY_S, _GAP_S = int(SESSION_DELAY.split()[0]), SESSION_GAP_MS // 1000
def _session_rows(about: dict) -> list[tuple[int, str, int]]:
    """The fixed part of task 1's stream as (micro-batch, user, seconds after T0), without
    the rows that are late when they come (at or behind the watermark of the query, the
    seed's rows included: Spark drops those before the processor sees them)."""
    stream = session_stream(about["seed"])
    latest, kept = None, []
    for number, (rows, fixed) in enumerate(zip(stream.batches, fixed_part(stream))):
        kept += [(number, user, at) for user, at in fixed
                 if latest is None or at > latest - _DELAY_S]
        latest = max([at for _, at in rows] + ([latest] if latest is not None else []))
    return kept


def _closed_sessions(about: dict) -> list[tuple[str, int, int]]:
    """The fixed part's sessions the run closes, as (user, latest event, closing watermark)
    in seconds: a session's timer is its latest event plus the gap."""
    stream = session_stream(about["seed"])
    final = max(at for rows in stream.batches for _, at in rows) - _DELAY_S
    latest: dict[str, int] = {}
    for _, user, at in _session_rows(about):
        latest[user] = max(at, latest.get(user, at))
    return [(user, at, final) for user, at in latest.items()
            if at + _GAP_S <= final]


def _users_rows(about: dict) -> dict[str, list[tuple[int, int]]]:
    rows: dict[str, list[tuple[int, int]]] = {}
    for number, user, at in _session_rows(about):
        rows.setdefault(user, []).append((number, at))
    return rows


def _dedup_sightings(about: dict) -> list[list[str]]:
    """The fixed part of one of task 2's queries, its ids per micro-batch."""
    return fixed_part(_dedup_stream(Case("", about))[1], key=lambda row: row)


def _seen_again(about: dict) -> bool:
    batches = _dedup_sightings(about)
    return any(set(earlier) & set(later) for i, earlier in enumerate(batches)
               for later in batches[i + 1:])


def _initial_part(about: dict) -> tuple[list, list]:
    """The fixed case of task 3: its initial rows and its users per micro-batch."""
    initial, stream = count_cases(about["seed"])
    owned = stream.parts[0].keys
    return [row for row in initial if row[0] in owned], fixed_part(stream, key=lambda user: user)


def _first_part(about: dict) -> list[list[tuple[str, int]]]:
    return fixed_part(first_n_stream(about["seed"])[1])


_ORDER = "a micro-batch hands a key's rows to handleInputRows in no promised order"

INPUT_DIMENSIONS = {
    "check_session_tracker": (
        Dimension("a user's events out of time order inside one micro-batch",
                  f"{_ORDER}: a session starts at its earliest event and ends a gap after its latest",
                  lambda about: any(times != sorted(times) for times in (
                      [at for number, user, at in _session_rows(about) if (number, user) == pair]
                      for pair in {(n, u) for n, u, _ in _session_rows(about)}))),
        Dimension("two events of one user at the same instant",
                  "every event of a session counts, however many share an instant",
                  lambda about: len(_session_rows(about)) > len(set(_session_rows(about)))),
        Dimension("a user's event time going back from one micro-batch to the next",
                  "a session ends a gap after its latest event, not after the last one to come",
                  lambda about: any(at < max(before for b, before in rows if b < number)
                                    for rows in _users_rows(about).values()
                                    for number, at in rows if any(b < number for b, _ in rows))),
        Dimension("a new event while the user's timer is pending",
                  "a session has one timer: a new event moves it",
                  lambda about: any(len({number for number, _ in rows}) > 1
                                    for rows in _users_rows(about).values())),
        Dimension("a session whose events are not all at one instant",
                  "the gap runs from a session's latest event",
                  lambda about: any(len({at for _, at in rows}) > 1
                                    for rows in _users_rows(about).values())),
        Dimension("a session the watermark closes",
                  "a timer fires once the watermark reaches it; firing it emits nothing and "
                  "clears nothing by itself: the handler does both",
                  lambda about: bool(_closed_sessions(about))),
        Dimension("a session's timer exactly at the watermark",
                  "an event-time timer fires when the watermark reaches its time, not only "
                  "once it has passed it",
                  lambda about: any(at + _GAP_S == final
                                    for _, at, final in _closed_sessions(about))),
    ),
    "check_ttl_dedup": (
        Dimension("several copies of an id in one micro-batch",
                  "handleInputRows is called once per key and micro-batch, with all its rows",
                  lambda about: any(len(ids) > len(set(ids)) for ids in _dedup_sightings(about))),
        Dimension("an id seen again once its memory has expired (a TTL of 1 ms)",
                  "a value whose time to live has passed is gone: the id is new again",
                  lambda about: about["ttl"] == 1 and _seen_again(about)),
        Dimension("an id seen again within its time to live (an hour)",
                  "a value is there until its time to live has passed",
                  lambda about: about["ttl"] == HOUR_MS and _seen_again(about)),
    ),
    "check_starting_counts": (
        Dimension("a user with several initial rows",
                  "handleInitialState is called once per row of the initial state",
                  lambda about: len({user for user, _ in _initial_part(about)[0]})
                  < len(_initial_part(about)[0])),
        Dimension("a user with no initial row",
                  "the initial state starts only its own users; the others start with nothing",
                  lambda about: bool(keys_of(_initial_part(about)[1], lambda user: user)
                                     - {user for user, _ in _initial_part(about)[0]})),
        Dimension("a user of the initial state first seen after a restart",
                  "the query's first micro-batch puts the initial state in the store for "
                  "every user in it: a user first seen after a restart starts from it",
                  lambda about: bool({user for user, _ in _initial_part(about)[0]}
                                     - set(_initial_part(about)[1][0]))),
    ),
    "check_first_n": (
        Dimension("a user's rows out of seq order inside one micro-batch",
                  f"{_ORDER}: the first n are the lowest seq",
                  lambda about: any([seq for name, seq in rows if name == user]
                                    != sorted(seq for name, seq in rows if name == user)
                                    for rows in _first_part(about) for user, _ in rows)),
        Dimension("a user's rows in a later micro-batch once the limit is reached",
                  "the limit counts a user's rows over the query's life, not per micro-batch",
                  lambda about: any(sum(1 for rows in _first_part(about)[:i] for name, _ in rows
                                        if name == user) >= about["n"]
                                    for i, rows in enumerate(_first_part(about)) for user, _ in rows)),
        Dimension("a user with more rows than the limit",
                  "a user's counter holds how many of their rows were let through: n at most",
                  lambda about: any(sum(1 for rows in _first_part(about) for name, _ in rows
                                        if name == user) > about["n"]
                                    for user in keys_of(_first_part(about)))),
        Dimension("two users in one micro-batch",
                  "state is kept per grouping key: each user has a counter of their own",
                  lambda about: any(len({user for user, _ in rows}) > 1
                                    for rows in _first_part(about))),
    ),
}


# -- a head start: the session's first transformWithState query, while the learner reads ------
_warming: list[threading.Thread] = []
#: The name of the warm-up's thread and of its streaming query.
WARM_UP = "transformWithState warm-up"


class _WarmUp(StatefulProcessor):
    """Touches what the checks use: a value state, an event-time timer, its firing, a row
    emitted."""

    def init(self, handle):
        self.handle = handle
        self.seen = handle.getValueState("warm_up", "n INT")

    def handleInputRows(self, key, rows, timerValues):
        rows = list(rows)
        self.seen.update((len(rows),))
        self.handle.registerTimer(max(int(row.ts.timestamp() * 1000) for row in rows) + 1)
        return iter([])

    def handleExpiredTimer(self, key, timerValues, expiredTimerInfo):
        self.seen.clear()
        yield Row(user=key[0], events=0, first_ms=0, last_ms=0)


def warm_up_in_background() -> None:
    """Run a tiny transformWithState query in a background thread, so that the learner's
    first check does not pay for the session's first one (its Python worker, its state
    store, Spark's code for the operator: about 6 s on two cores). Each check waits for it
    to end before it starts its own queries. A kernel that only grades starts none: the
    grading command's (``COURSE_SEED`` set) and nbgrader's own, which sets
    ``NBGRADER_EXECUTION`` while it autogrades or validates; nobody reads in them."""
    if os.environ.get(SEED) or os.environ.get("NBGRADER_EXECUTION") or _warming:
        return
    thread = threading.Thread(target=_warm_up, name=WARM_UP, daemon=True)
    _warming.append(thread)
    thread.start()


def _warm_up() -> None:
    try:
        import pyspark.sql.streaming.tws_tester  # noqa: F401 - what quick_try runs first

        with StreamRun(course_session(), SESSION_SCHEMA, lambda events: sessions(events, _WarmUp()),
                       name=WARM_UP) as run:
            run.add_batch([("warm", T0)])
            run.add_batch([("warm", T0 + timedelta(minutes=1))])
            stored_keys(run, 0)      # the state-metadata and the state readers, as the checks
            pending_timers(run, 0)
    except Exception:  # noqa: BLE001 - only a head start: every check runs its own queries
        pass


def _after_warm_up() -> None:
    """Wait for the warm-up, if one runs: called after the quick try, so an unfinished task
    is told at once and only a finished one waits before its queries start."""
    for thread in _warming:
        thread.join()

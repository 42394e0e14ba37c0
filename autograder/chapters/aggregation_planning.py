"""Checks for chapter 2: how Spark plans a streaming aggregation.

The ideas they test, in the chapter's words:

* ``StatefulAggregationStrategy`` plans a streaming ``groupBy().agg()`` as seven
  operators, source first: a *Partial* hash aggregate, an exchange, a *PartialMerge*
  aggregate, ``StateStoreRestore``, another *PartialMerge* aggregate, ``StateStoreSave`` and
  a *Final* aggregate. ``explain()`` does not print the mode of a hash aggregate; the names
  of its functions do: ``partial_count`` (Partial), ``merge_count`` (PartialMerge),
  ``count`` (Final) (section "Partial, merge, final: the aggregate buffers");
* in every micro-batch, restore reads each key's buffer from the state store and save
  writes the merged buffer back: the state holds the running totals, never just the
  batch's own (section "Restore and save, micro-batch by micro-batch");
* the exchange hash-partitions the rows on the grouping keys, and each shuffle partition
  has its own state store: as many state store instances as shuffle partitions, not one
  per query (section "One state store per shuffle partition");
* a session window is planned differently: the sessions of a key are merged
  (``MergingSessions``) between ``SessionWindowStateStoreRestore`` and
  ``SessionWindowStateStoreSave``, and the state keeps one row per open session
  (section "Session windows").

Each ``check_*`` function runs the learner's code against real Spark on fresh streams
drawn from a seed, and raises :class:`~autograder.checks.feedback.CheckFailed` with a lesson
when the two disagree.
"""
from __future__ import annotations

import contextlib
import random
from datetime import datetime, timedelta
from typing import Any, Callable, Iterator

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from ..checks.answers import spark_answer, spark_input
from ..checks.asking import Answers, Case, declared, spark_for_truth
from ..toolkit.driver import StreamRun
from ..checks.checking import (EXAMPLE, FIXED, Dimension, answer_per_batch, batch_dict, cases,
                       plain_value, reference_answer)
from ..checks.feedback import CheckFailed, ask, check_equal, plain, revisiting, stop_if_unfinished
from ..toolkit.plan import PlanNode, explain_text, explained_plan, parse_plan
from ..toolkit.session import course_session, spark_setting
from ..toolkit.streams import T0, random_events, random_keys

CHAPTER = "chapter 2, How Spark plans a streaming aggregation"
REVISIT_BUFFERS = f'{CHAPTER}, section "Partial, merge, final: the aggregate buffers"'
REVISIT_RESTORE_SAVE = f'{CHAPTER}, section "Restore and save, micro-batch by micro-batch"'
REVISIT_PARTITIONS = f'{CHAPTER}, section "One state store per shuffle partition"'
REVISIT_SESSIONS = f'{CHAPTER}, section "Session windows"'

#: The stream of keys (one word per row) for the plain aggregations.
KEYS_SCHEMA = "key STRING"
#: The stream of timed events for windows and sessions.
EVENTS_SCHEMA = "user STRING, ts TIMESTAMP, v INT"
#: The watermark delay of the chapter's event-time queries.
WATERMARK_DELAY = "10 seconds"
#: Helpers of this module a learner may use freely (the grading guard flags the rest).
TOOLS = ("at",)

#: The chapter's worked example: three micro-batches of keys.
EXAMPLE_KEYS = [["a", "b", "a"], ["c", "a"], ["b"]]
#: The chapter's session example: (user, second, v) per micro-batch, and the session gap.
EXAMPLE_EVENTS = [[("a", 1, 1), ("a", 3, 2), ("b", 2, 5)],
                  [("a", 6, 4), ("b", 15, 1)],
                  [("a", 40, 1)]]
EXAMPLE_GAP = 5

# -- the fixed edge streams every graded check runs besides a random one -----------------------
#: Keys (task 2): a key twice in one micro-batch, an empty micro-batch, a key coming back.
EDGE_KEYS = [["a", "a"], [], ["b", "a", "b"], ["c"]]
#: Keys and shuffle partitions (task 3): one key (one partition) for two micro-batches, an
#: empty micro-batch, then more keys than partitions. Every micro-batch still uses one
#: state store instance per shuffle partition.
EDGE_PARTITIONS = [([["a"], [], ["a", "a"], ["b", "c", "d", "e", "f", "g"]], 4),
                   ([["a"], ["a"], [], ["b", "c"]], 5)]
#: Events (task 4): an event 8 s behind the latest, kept by a 10-second watermark (a
#: shorter one drops it); sessions extended and closed across micro-batches.
EDGE_SESSIONS = ([[("a", 20, 1), ("b", 21, 2)], [("a", 12, 3), ("b", 24, 4)],
                  [("a", 50, 5)]], 5)

def at(second: float) -> datetime:
    """The instant ``second`` seconds after :data:`T0`."""
    return T0 + timedelta(seconds=second)


# -- reading a plan ----------------------------------------------------------------------------
def aggregate_mode(node: PlanNode) -> str:
    """The mode a hash aggregate runs in, read off the names of its functions.

    ``partial_*`` functions build a buffer from input rows (Partial); ``merge_*`` functions
    merge buffers into buffers (PartialMerge); plain names turn buffers into results (Final).
    """
    reference_answer()
    functions = node.functions
    if functions and all(f.startswith("partial_") for f in functions):
        return "Partial"
    if functions and all(f.startswith("merge_") for f in functions):
        return "PartialMerge"
    return "Final"


def hash_aggregates(plan: PlanNode) -> list[PlanNode]:
    """The plan's hash aggregates, source first."""
    return plan.find_all("HashAggregate")


def aggregation_chain(plan: PlanNode) -> list[str]:
    """The operators from the first hash aggregate up to the sink, source first, each
    hash aggregate written with its mode: ``HashAggregate(Partial)``."""
    reference_answer()
    names = []
    started = False
    for node in plan.data_flow():
        started = started or node.name == "HashAggregate"
        if started:
            names.append(f"HashAggregate({aggregate_mode(node)})"
                         if node.name == "HashAggregate" else node.name)
    return names


# -- the truth, from Spark ---------------------------------------------------------------------
def keyed_count_run(spark: SparkSession, batches: list[list[str]],
                    partitions: int | None = None) -> list[dict[str, Any]]:
    """Run ``groupBy("key").count()`` in update mode, one micro-batch per list of keys.

    One dict per micro-batch: the rows it emitted and the state after it (both as
    ``{key: count}``), and its state-operator metrics. ``partitions`` sets the number of
    shuffle partitions for this query only. Spark is asked once per stream (see
    :mod:`autograder.checks.answers`).
    """
    reference_answer()
    def ask_spark() -> list[dict[str, Any]]:
        facts = []
        with spark_setting(spark, "spark.sql.shuffle.partitions",
                           None if partitions is None else str(partitions)):
            with StreamRun(spark, KEYS_SCHEMA, lambda df: df.groupBy("key").count(),
                           output_mode="update") as run:
                for keys in batches:
                    (batch,) = run.add_batch([(key,) for key in keys])
                    facts.append({
                        "output": {row["key"]: row["count"] for row in batch.output},
                        "state": {row["key"]["key"]: row["value"]["count"]
                                  for row in run.state()},
                        "numRowsTotal": batch.state_metric("numRowsTotal"),
                        "numRowsUpdated": batch.state_metric("numRowsUpdated"),
                        "numStateStoreInstances": batch.state_metric("numStateStoreInstances"),
                    })
        return facts

    return spark_answer("aggregation_planning.keyed_count_run", [batches, partitions], ask_spark)


def reference_sessions(events: DataFrame, gap_seconds: int) -> DataFrame:
    """The course's answer to task 4, run beside the learner's to know what is right."""
    reference_answer()
    return (events.withWatermark("ts", WATERMARK_DELAY)
                  .groupBy("user", F.session_window("ts", f"{gap_seconds} seconds"))
                  .agg(F.count("*").alias("events"), F.sum("v").alias("total")))


def _rows(rows) -> list[dict]:
    """Rows as plain dicts (timestamps as text), in an order that depends on their values
    only (not on the order of their columns), so two runs can be compared."""
    dicts = [plain_value(row.asDict(recursive=True)) for row in rows]
    return sorted(dicts, key=lambda row: repr(sorted(row.items())))


def _open_sessions(state_rows) -> list[list]:
    """The sessions a session-window state holds: ``[user, start, end]``, sorted. The
    aggregation buffers beside them are left out: they depend on how a query spells its
    aggregates (``count("*")`` or ``sum(lit(1))``), not on what it computes."""
    sessions = []
    for row in state_rows:
        value = row["value"].asDict()
        window = value.get("session_window")
        if window is None:  # not a session window: the plan check says so
            sessions.append([repr(row["key"]), None, None])
        else:
            sessions.append([value.get("user"), plain_value(window["start"]),
                             plain_value(window["end"])])
    return sorted(sessions, key=repr)


def session_run(spark: SparkSession, batches, build: Callable[[DataFrame], DataFrame]):
    """Run a sessionized query in append mode; per data micro-batch, what it emitted
    (including the no-data batch the watermark triggers after it) and the sessions its
    state holds after it."""
    facts = []
    with StreamRun(spark, EVENTS_SCHEMA, build, output_mode="append") as run:
        for events in batches:
            ran = run.add_batch([(user, at(second), v) for user, second, v in events])
            facts.append({
                "output": _rows([row for batch in ran for row in batch.output]),
                "state": _open_sessions(run.state()),
            })
        plan = run.plan()
    return facts, plan


# -- fresh aggregations ------------------------------------------------------------------------
AGGREGATES = {
    "count": lambda: F.count("*"), "sum": lambda: F.sum("v"), "max": lambda: F.max("v"),
    "min": lambda: F.min("v"), "avg": lambda: F.avg("v"),
}


def drawn_aggregation(rng: random.Random) -> tuple[list[str], int | None]:
    """The shape of a random streaming aggregation, as plain data: its aggregate functions
    and, for a session window, its gap in seconds (None: a plain ``groupBy``)."""
    names = rng.sample(sorted(AGGREGATES), rng.randint(1, 3))
    if rng.random() < 0.5:
        return names, None
    return names, rng.randint(3, 8)


def aggregation(names: list[str], gap: int | None) -> tuple[str, Callable[[DataFrame], DataFrame], str]:
    """The aggregation of :func:`drawn_aggregation`'s shape: a description, the query, its
    mode (the query's columns are built when it runs)."""
    def functions() -> list:
        return [AGGREGATES[name]().alias(name) for name in names]

    if gap is None:
        return (f"groupBy('user').agg({', '.join(names)}) in update mode",
                lambda df: df.groupBy("user").agg(*functions()), "update")
    return (f"groupBy('user', session_window('ts', '{gap} seconds')).agg({', '.join(names)})"
            " in append mode",
            lambda df: (df.withWatermark("ts", WATERMARK_DELAY)
                          .groupBy("user", F.session_window("ts", f"{gap} seconds"))
                          .agg(*functions())), "append")


def random_aggregation(rng: random.Random) -> tuple[str, Callable[[DataFrame], DataFrame], str]:
    """A streaming aggregation with a random shape: a description, the query, its mode."""
    return aggregation(*drawn_aggregation(rng))


# -- task 1: the mode of each hash aggregate ---------------------------------------------------
EXAMPLE_QUERIES = [
    ("groupBy('user').count() in update mode",
     lambda df: df.groupBy("user").count(), "update"),
    (f"groupBy('user', session_window('ts', '{EXAMPLE_GAP} seconds')).count() in append mode",
     lambda df: (df.withWatermark("ts", WATERMARK_DELAY)
                   .groupBy("user", F.session_window("ts", f"{EXAMPLE_GAP} seconds")).count()),
     "append"),
]

#: Queries every graded check of task 1 plans besides the seed's: one of each shape, with
#: aggregate functions other than the examples' count.
EDGE_QUERIES = [
    ("groupBy('user').agg(max) in update mode",
     lambda df: df.groupBy("user").agg(F.max("v").alias("max")),
     "update"),
    ("groupBy('user', session_window('ts', '4 seconds')).agg(sum, min) in append mode",
     lambda df: (df.withWatermark("ts", WATERMARK_DELAY)
                   .groupBy("user", F.session_window("ts", "4 seconds"))
                   .agg(F.sum("v").alias("sum"), F.min("v").alias("min"))),
     "append"),
]


#: A small plan of ``groupBy("user").count()``, written by hand: the learner's function reads
#: it first, so an unfinished task says so before Spark plans anything.
SKETCHED_PLAN = parse_plan("""\
WriteToDataSourceV2 MicroBatchWrite
+- *(4) HashAggregate(keys=[user#1], functions=[count(1)])
   +- StateStoreSave [user#1], state info, Update, 0, 0, 2
      +- *(3) HashAggregate(keys=[user#1], functions=[merge_count(1)])
         +- StateStoreRestore [user#1], state info, 2
            +- *(2) HashAggregate(keys=[user#1], functions=[merge_count(1)])
               +- Exchange hashpartitioning(user#1, 2)
                  +- *(1) HashAggregate(keys=[user#1], functions=[partial_count(1)])
                     +- FileScan json [user#1]
""")


def _query(about: list) -> tuple[str, Callable[[DataFrame], DataFrame], str]:
    """The query a case of task 1 plans: ``[description]`` names one of the chapter's
    examples or :data:`EDGE_QUERIES`; ``[description, names, gap]`` a drawn one."""
    if len(about) == 1:
        (description,) = about
        return next(query for query in EXAMPLE_QUERIES + EDGE_QUERIES if query[0] == description)
    _, names, gap = about
    return aggregation(names, gap)


@contextlib.contextmanager
def _planned(spark: SparkSession, about: list) -> Iterator[StreamRun]:
    """A case's query, run on the example's first micro-batch of events (its run)."""
    _, build, mode = _query(about)
    events = [(user, at(second), v) for user, second, v in EXAMPLE_EVENTS[0]]
    with StreamRun(spark, EVENTS_SCHEMA, build, output_mode=mode) as run:
        run.add_batch(events)
        yield run


def _case_plan(spark: SparkSession, about: list) -> PlanNode:
    """The plan of a case's query, which the learner's function reads: an input, so a graded
    kernel is handed the plan the solution's run made rather than planning the query again
    (:func:`~autograder.checks.answers.spark_input`)."""
    def plan_it() -> str:
        with _planned(spark, about) as run:
            return explain_text(run.query)
    return explained_plan(spark_input("aggregation_planning.plan", about, plan_it))


def planned_modes(spark: SparkSession, about: list) -> list[str]:
    """The modes of the hash aggregates of a case's query, source first, as Spark plans it.
    Spark is asked once per query (see :mod:`autograder.checks.answers`)."""
    reference_answer()
    def ask_spark() -> list[str]:
        return [aggregate_mode(node) for node in hash_aggregates(_case_plan(spark, about))]

    return spark_answer("aggregation_planning.aggregate_modes", about, ask_spark)


def _mode_cases(*, seed: int, example: bool) -> list[Case]:
    """The queries task 1 plans: the chapter's two examples; or the two :data:`EDGE_QUERIES`,
    then one plain and one session-window aggregation drawn from the seed."""
    def draw(rng):
        shapes = [drawn_aggregation(rng) for _ in range(2)]
        if (shapes[0][1] is None) == (shapes[1][1] is None):  # always one of each shape
            plain_or_session = [drawn_aggregation(rng) for _ in range(20)]
            shapes[1] = next(shape for shape in plain_or_session
                             if (shape[1] is None) != (shapes[0][1] is None))
        return [(aggregation(names, gap)[0], names, gap) for names, gap in shapes]
    # The chapter's and the fixed queries are known by their description; a drawn one is
    # built from its names and gap.
    return [Case(f"{description} ({origin})",
                 [description] if origin in (EXAMPLE, FIXED) else [description, names, gap])
            for origin, (description, names, gap) in cases(
                seed, example, the_example=EXAMPLE_QUERIES, fixed=EDGE_QUERIES, drawn_from=draw)]


def _modes_unfinished(aggregate_modes) -> None:
    stop_if_unfinished(aggregate_modes, SKETCHED_PLAN)


def _ask_modes(aggregate_modes, case: Case, answers: Answers) -> None:
    """The learner's modes for the plan of the case's query."""
    plan = _case_plan(course_session(), case.about)
    answers.add(plain(ask(aggregate_modes, plan, what="aggregate_modes", context=case.label),
                      "aggregate_modes' answer"))


def _judge_modes(case: Case, answers: Answers) -> None:
    got = answers.next()
    check_equal(got, planned_modes(spark_for_truth(), case.about),
                "the modes of the hash aggregates, source first",
                revisit=REVISIT_BUFFERS, context=case.label)


@declared(
    cases=_mode_cases,
    ask=_ask_modes, judge=_judge_modes, before=_modes_unfinished,
    passed=lambda cases: f"the aggregate modes match Spark's plans for {len(cases)} queries")
def check_aggregate_modes(aggregate_modes: Callable[[PlanNode], list[str]], *,
                          seed: int | None = None, example: bool = False) -> None:
    """``aggregate_modes(plan)`` must give the mode of every hash aggregate, source first.

    The plans come from real queries: the chapter's two examples; when grading, the two
    :data:`EDGE_QUERIES`, then one plain and one session-window aggregation with random
    aggregate functions.
    """


# -- tasks 2 and 3: predictions of groupBy("key").count(), batch by batch -------------------
def _predicting(what: str, with_partitions: bool):
    """The asking half of tasks 2 and 3: the learner's answer for a stream, as plain data."""
    def ask_case(predict, case: Case, answers: Answers) -> None:
        batches, partitions = case.about
        args = [[list(b) for b in batches]] + ([partitions] if with_partitions else [])
        answer = ask(predict, *args, what=what, context=case.label)
        with revisiting(REVISIT_RESTORE_SAVE, case.label):
            answers.add(plain(answer, f"{what}' answer"))
    return ask_case


def _each_batch_beside_spark(case: Case, answers: Answers, what: str):
    """For every micro-batch of a stream: its id, the learner's answer for it (a dict) and
    Spark's record of it (:func:`keyed_count_run`)."""
    batches, partitions = case.about
    answer = answers.next()
    truth = keyed_count_run(spark_for_truth(), batches, partitions)
    got = answer_per_batch(answer, len(truth), f"{what}' answer", case.label,
                           revisit=REVISIT_RESTORE_SAVE)
    for batch_id, (mine, spark_did) in enumerate(zip(got, truth)):
        yield batch_id, batch_dict(mine, batch_id, case.label, revisit=REVISIT_RESTORE_SAVE), \
            spark_did


# -- task 2: what restore and save leave in the state ------------------------------------------
def _count_cases(*, seed: int, example: bool) -> list[Case]:
    """``[batches, partitions]`` each: the example's keys; or the fixed keys and a drawn one."""
    return [Case(f"micro-batches of keys {batches} ({label})", [batches, partitions])
            for label, (batches, partitions) in cases(
                seed, example, the_example=[(EXAMPLE_KEYS, 2)], fixed=[(EDGE_KEYS, None)],
                drawn_from=lambda rng: [(random_keys(rng), None)])]


def _judge_counts(case: Case, answers: Answers) -> None:
    for batch_id, mine, spark_did in _each_batch_beside_spark(case, answers, "predict_counts"):
        check_equal(mine.get("state"), spark_did["state"],
                    "the state rows after this micro-batch, {key: count}",
                    batch=batch_id, revisit=REVISIT_RESTORE_SAVE, context=case.label)
        check_equal(mine.get("output"), spark_did["output"],
                    "the rows this micro-batch emitted in update mode, {key: count}",
                    batch=batch_id, revisit=REVISIT_RESTORE_SAVE, context=case.label)


@declared(
    cases=_count_cases,
    ask=_predicting("predict_counts", with_partitions=False), judge=_judge_counts,
    passed=lambda cases: f"your outputs and state rows match Spark, batch by batch "
                         f"({len(cases)} stream(s))")
def check_predicted_counts(predict: Callable[[list[list[str]]], list[dict]], *,
                           seed: int | None = None, example: bool = False) -> None:
    """``predict(batches)`` must give, per micro-batch of ``groupBy("key").count()`` in
    update mode, ``{"output": {key: count}, "state": {key: count}}``: the rows the batch
    emits and the state store's rows after it (dicts: the order of keys does not matter)."""


# -- task 3: state store instances and state metrics -------------------------------------------
METRIC_FIELDS = ("numRowsTotal", "numRowsUpdated", "numStateStoreInstances")


def _metric_cases(*, seed: int, example: bool) -> list[Case]:
    """``[batches, partitions]`` each: the example's keys; or the fixed streams and a drawn one."""
    return [Case(f"micro-batches of keys {batches}, {partitions} shuffle partitions ({label})",
                 [batches, partitions]) for label, (batches, partitions) in cases(
                     seed, example, the_example=[(EXAMPLE_KEYS, 2)], fixed=EDGE_PARTITIONS,
                     drawn_from=lambda rng: [(random_keys(rng), rng.choice([3, 4]))])]


def _judge_metrics(case: Case, answers: Answers) -> None:
    for batch_id, mine, spark_did in _each_batch_beside_spark(case, answers, "predict_metrics"):
        for field in METRIC_FIELDS:
            revisit = (REVISIT_PARTITIONS if field == "numStateStoreInstances"
                       else REVISIT_RESTORE_SAVE)
            check_equal(mine.get(field), spark_did[field], f"{field} of this micro-batch",
                        batch=batch_id, revisit=revisit, context=case.label)


@declared(
    cases=_metric_cases,
    ask=_predicting("predict_metrics", with_partitions=True), judge=_judge_metrics,
    passed=lambda cases: f"your state metrics match Spark, batch by batch "
                         f"({len(cases)} stream(s))")
def check_predicted_metrics(predict: Callable[[list[list[str]], int], list[dict]], *,
                            seed: int | None = None, example: bool = False) -> None:
    """``predict(batches, partitions)`` must give, per micro-batch of ``groupBy("key")
    .count()`` run with ``partitions`` shuffle partitions, the state operator's
    ``numRowsTotal``, ``numRowsUpdated`` and ``numStateStoreInstances``."""


# -- task 4: a sessionized aggregation ---------------------------------------------------------
SESSION_OPERATORS = ("SessionWindowStateStoreRestore", "MergingSessions",
                     "SessionWindowStateStoreSave")


def _emitted_after(number: int) -> str:
    return (f"the sessions emitted after input batch {number} (with the no-data "
            "micro-batch the watermark may trigger)")


def _held_after(number: int) -> str:
    return f"the sessions held in the state after input batch {number}, as [user, start, end]"


def _session_cases(*, seed: int, example: bool) -> list[Case]:
    """``[batches, gap]`` each: the example's events; or the fixed ones and drawn ones."""
    return [Case(f"events (user, second, v) {batches}, gap {gap} s ({label})", [batches, gap])
            for label, (batches, gap) in cases(
                seed, example, the_example=[(EXAMPLE_EVENTS, EXAMPLE_GAP)], fixed=[EDGE_SESSIONS],
                drawn_from=lambda rng: [random_events(rng)])]


def _sessions_unfinished(sessions) -> None:
    stop_if_unfinished(sessions, course_session().createDataFrame([], EVENTS_SCHEMA), EXAMPLE_GAP)


def _ask_sessions(sessions, case: Case, answers: Answers) -> None:
    """The learner's query on the stream: the plan's operators, then, per input batch, the
    rows it emitted and the sessions its state holds (as :func:`session_run` reads them)."""
    batches, gap = case.about
    context = case.label
    got, plan = ask(session_run, course_session(), batches, lambda df: sessions(df, gap),
                    what="your sessions query", context=context, revisit=REVISIT_SESSIONS)
    answers.add(list(plan.operator_names()))
    for number, mine in enumerate(got):
        with revisiting(REVISIT_SESSIONS, context):
            answers.add(plain(mine["output"], _emitted_after(number)))
        with revisiting(REVISIT_SESSIONS, context):
            answers.add(plain(mine["state"], _held_after(number)))


def _judge_sessions(case: Case, answers: Answers) -> None:
    batches, gap = case.about
    context = case.label
    names = answers.next()
    for operator in SESSION_OPERATORS:
        if operator not in names:
            raise CheckFailed(f"{operator} in your query's plan", operator,
                              " -> ".join(names), revisit=REVISIT_SESSIONS,
                              context=context)
    truth = spark_answer("aggregation_planning.reference_sessions", [batches, gap],
                         lambda: session_run(spark_for_truth(), batches,
                                             lambda df: reference_sessions(df, gap))[0])
    for number, spark_did in enumerate(truth):
        # Micro-batch ids and input batches differ: the watermark adds no-data batches.
        check_equal(answers.next(), spark_did["output"], _emitted_after(number),
                    revisit=REVISIT_SESSIONS, context=context)
        check_equal(answers.next(), spark_did["state"], _held_after(number),
                    revisit=REVISIT_SESSIONS, context=context)


@declared(
    cases=_session_cases, ask=_ask_sessions,
    judge=_judge_sessions, before=_sessions_unfinished,
    passed=lambda cases: f"your sessions and their state match Spark, batch by batch "
                         f"({len(cases)} stream(s))")
def check_sessions(sessions: Callable[[DataFrame, int], DataFrame], *,
                   seed: int | None = None, example: bool = False) -> None:
    """``sessions(events, gap_seconds)`` must count the events and sum ``v`` per user and
    session (columns ``user``, ``session_window``, ``events``, ``total``, in any order), with
    a watermark of 10 seconds, in append mode.

    Checked per micro-batch against the course's own query on the same streams: the rows
    emitted (with the no-data micro-batch the watermark triggers, compared as a set), the
    sessions the state holds after each batch, and the plan's session-window state operators.
    """


# -- the kinds of input the tasks allow ---------------------------------------------------------
def _keys_before(batches: list[list[str]], i: int) -> set[str]:
    return {key for batch in batches[:i] for key in batch}


_EVERY_BATCH = "every micro-batch runs, one with no rows too (an empty file is a micro-batch)"
_TWICE = "the partial aggregate counts every row, and a key is one state row"

#: The kinds of input each task allows: task 1's query (its description), tasks 2 and 3's
#: keys per micro-batch and shuffle partitions, task 4's events and gap. Each is held by a
#: case of EDGE_QUERIES, EDGE_KEYS, EDGE_PARTITIONS or EDGE_SESSIONS.
INPUT_DIMENSIONS = {
    "check_aggregate_modes": (
        Dimension("a plain aggregation",
                  "a streaming aggregation adds merging aggregates around restore and save",
                  lambda about: "session_window" not in about[0]),
        Dimension("a session-window aggregation",
                  "the shape of the aggregation decides how many aggregates the plan has",
                  lambda about: "session_window" in about[0]),
        Dimension("aggregate functions other than count",
                  "a mode is read off its functions' names: partial_, merge_, or neither",
                  lambda about: "count()" not in about[0]),
    ),
    "check_predicted_counts": (
        Dimension("a key coming back in a later micro-batch",
                  "the state merges a key's count with the micro-batches' before",
                  lambda about: any(set(batch) & _keys_before(about[0], i)
                                    for i, batch in enumerate(about[0]))),
        Dimension("a micro-batch that leaves a key unchanged",
                  "Update mode emits the keys the micro-batch changed, not the whole state",
                  lambda about: any(_keys_before(about[0], i) - set(batch)
                                    for i, batch in enumerate(about[0]))),
        Dimension("a key twice in one micro-batch", _TWICE,
                  lambda about: any(len(set(batch)) < len(batch) for batch in about[0])),
        Dimension("a micro-batch with no rows", _EVERY_BATCH,
                  lambda about: any(not batch for batch in about[0])),
    ),
    "check_predicted_metrics": (
        Dimension("fewer keys than shuffle partitions",
                  "a stateful micro-batch opens one state store instance per shuffle partition",
                  lambda about: any(len(set(batch)) < about[1] for batch in about[0])),
        Dimension("a key twice in one micro-batch", _TWICE,
                  lambda about: any(len(set(batch)) < len(batch) for batch in about[0])),
        Dimension("a micro-batch with no rows", _EVERY_BATCH,
                  lambda about: any(not batch for batch in about[0])),
        Dimension("more keys than shuffle partitions",
                  "an instance holds a row for every key of its partition",
                  lambda about: len(_keys_before(about[0], len(about[0]))) > about[1]),
    ),
    "check_sessions": (
        Dimension("an event more than the gap but less than 10 s behind the latest before it",
                  "a micro-batch's watermark is 10 s behind the latest event of the micro-batches "
                  "before it: an event above it counts",
                  lambda about: any(about[1] < max((t for earlier in about[0][:i]
                                                    for _, t, _ in earlier), default=t) - t < 10
                                    for i, batch in enumerate(about[0]) for _, t, _ in batch)),
        Dimension("a session extended in a later micro-batch",
                  "a session grows while its user's events come within the gap of each other",
                  lambda about: any(user == other and 0 < t2 - t1 <= about[1]
                                    for i, batch in enumerate(about[0]) for user, t1, _ in batch
                                    for later in about[0][i + 1:] for other, t2, _ in later)),
        Dimension("a session the watermark closes",
                  "Append mode emits a session once the watermark passes its end",
                  lambda about: max(t for batch in about[0] for _, t, _ in batch) - 10
                  > min(t for batch in about[0] for _, t, _ in batch) + about[1]),
    ),
}

"""Checks for chapter 1: the global limit of a streaming query.

The ideas they test, in the chapter's words:

* ``limit(n)`` on a stream is **global**: it counts rows over the whole life of the query,
  not per micro-batch (section "A limit that spans micro-batches");
* the count lives in the state store as **one row** (a null key and the number of rows
  emitted so far), written only by micro-batches that emit something (section "The state:
  one counter");
* the counter survives a restart on the same checkpoint (section "Stopping and
  restarting");
* the plan is a local limit per partition, an exchange to a single partition, then the
  stateful global limit; whatever comes before the limit decides which rows are counted
  (section "How Spark plans a limit").

Each ``check_*`` function runs the learner's code against real Spark on fresh streams
drawn from a seed, and raises :class:`~autograder.checks.feedback.CheckFailed` with a lesson
when the two disagree. The learner's code is always called before Spark is asked, so an
unfinished task says so at once.
"""
from __future__ import annotations

import random
import tempfile
from itertools import accumulate
from typing import Callable

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from ..checks.answers import spark_answer, spark_checkpoints, spark_facts
from ..checks.asking import Answers, Case, declared, spark_for_truth
from ..toolkit.driver import StreamRun
from ..checks.checking import (Dimension, answer_per_batch, batch_dict, cases, reference_answer, seed_for,
                       spark_failure_as_lesson)
from ..checks.feedback import (CheckFailed, ask, check_equal, plain, revisiting,
                       stop_if_unfinished)
from ..toolkit.session import course_session
from ..toolkit.streams import batch_sizes, numbered_rows

CHAPTER = "chapter 1, The global limit"
REVISIT_GLOBAL = f'{CHAPTER}, section "A limit that spans micro-batches"'
REVISIT_STATE = f'{CHAPTER}, section "The state: one counter"'
REVISIT_RESTART = f'{CHAPTER}, section "Stopping and restarting"'
REVISIT_PLAN = f'{CHAPTER}, section "How Spark plans a limit"'

#: The stream every check of this chapter feeds: numbered events of two kinds.
EVENTS_SCHEMA = "id INT, kind STRING"
#: The stream of plain numbered rows.
IDS_SCHEMA = "id INT"

#: The chapter's worked example, used by the public self-checks.
EXAMPLE_SIZES, EXAMPLE_LIMIT = [2, 3, 0, 4], 4

#: Streams every graded check runs besides the random ones, each chosen so that a belief the
#: chapter warns about fails on it whatever the seed: (batch sizes, limit, what it shows).
EDGE_STREAMS = [
    ([0, 2, 3, 1], 3, "an empty first micro-batch: no state row until a row is emitted"),
    ([4, 0, 2], 4, "the limit reached by the first micro-batch: later ones write nothing"),
    ([1, 1, 0, 5], 10, "a limit never reached: every row passes"),
]
#: Streams the counter reader is graded on, restarted after micro-batch 1: nothing emitted
#: before the restart; the limit reached before it; the limit reached after it.
EDGE_RESTARTS = [([0, 0, 2, 1], 2), ([3, 2, 0, 1], 3), ([1, 0, 4, 2], 4)]


# -- the kinds of input the tasks allow ---------------------------------------------------------
_A_STREAM = "a stream is a list of micro-batch sizes, 0 or more rows each"
_GLOBAL = "limit(n) counts the rows it lets through over the query's life, not per micro-batch"
_WRITTEN = "a micro-batch writes the counter only when it lets a row through"


def _before_each(sizes: list[int]) -> list[int]:
    """The rows that had arrived before each micro-batch."""
    return [0] + list(accumulate(sizes))[:-1]


#: The kinds of stream tasks 1 and 2 allow (a case's inputs are its batch sizes and limit),
#: each held by a stream of EDGE_STREAMS.
STREAM_DIMENSIONS = (
    Dimension("a micro-batch with no rows", _A_STREAM, lambda about: 0 in about[0]),
    Dimension("a first micro-batch with no rows",
              "the counter row is written by the first micro-batch that lets a row through",
              lambda about: about[0][0] == 0),
    Dimension("two micro-batches that let rows through", _GLOBAL,
              lambda about: sum(1 for before, size in zip(_before_each(about[0]), about[0])
                                if size and before < about[1]) > 1),
    Dimension("a micro-batch that lets two rows or more through",
              "the state is one row, whatever the count: a null key and the number of rows",
              lambda about: any(min(size, about[1] - before) > 1
                                for before, size in zip(_before_each(about[0]), about[0]))),
    Dimension("the limit reached inside a micro-batch: some of its rows pass, the rest not",
              _GLOBAL, lambda about: any(before < about[1] < before + size for before, size
                                         in zip(_before_each(about[0]), about[0]))),
    Dimension("the limit reached by a micro-batch's last row",
              "rows pass while fewer than n have passed",
              lambda about: any(size and before + size == about[1]
                                for before, size in zip(_before_each(about[0]), about[0]))),
    Dimension("a micro-batch with rows after the limit is reached", _WRITTEN,
              lambda about: any(size and before >= about[1]
                                for before, size in zip(_before_each(about[0]), about[0]))),
    Dimension("a limit the stream never reaches",
              "rows pass as they come: the limit does not wait for n of them",
              lambda about: sum(about[0]) < about[1]),
)
#: The kinds of stream task 3's reader is called on (restarted after micro-batch 1), each
#: held by a stream of EDGE_RESTARTS.
RESTART_DIMENSIONS = (STREAM_DIMENSIONS[1], STREAM_DIMENSIONS[3])


# -- the truth, from Spark ------------------------------------------------------------------
def limit_run(spark: SparkSession, sizes: list[int], limit: int) -> list[dict]:
    """Run ``limit(limit)`` on a stream with these batch sizes; what each batch did.

    One dict per micro-batch: rows emitted, the state-operator metrics, and the count
    stored in the state store after the batch (``None`` while it holds no row). Spark is
    asked once per stream (see :mod:`autograder.checks.answers`).
    """
    reference_answer()
    def ask_spark() -> list[dict]:
        facts = []
        with StreamRun(spark, IDS_SCHEMA, lambda df: df.limit(limit)) as run:
            for rows in numbered_rows(sizes):
                (batch,) = run.add_batch(rows)
                facts.append({
                    "emitted": len(batch.output),
                    "numRowsTotal": batch.state_metric("numRowsTotal"),
                    "numRowsUpdated": batch.state_metric("numRowsUpdated"),
                    "count": stored_count(run.state()),
                })
        return facts

    return spark_answer("global_limit.limit_run", [sizes, limit], ask_spark)


def stored_count(state_rows) -> int | None:
    """The count the global limit keeps, read from its state rows (None when empty)."""
    reference_answer()
    if not state_rows:
        return None
    (row,) = state_rows
    return row["value"]["value"]


def drawn_streams(seed: int | None, count: int) -> tuple[int, list[tuple[list[int], int]]]:
    """The seed used and the ``count`` streams it draws: ``(batch sizes, limit)`` each."""
    seed = seed_for(seed)
    rng = random.Random(seed)
    return seed, [_drawn_stream(rng) for _ in range(count)]


def _drawn_stream(rng: random.Random) -> tuple[list[int], int]:
    sizes = batch_sizes(rng, batches=(4, 6), rows=(0, 5))
    return sizes, rng.randint(1, max(1, sum(sizes) - 1))


def _describe(sizes, limit, origin) -> str:
    return f"batch sizes {sizes}, limit({limit}) ({origin})"


def _cases(*, seed: int, example: bool, streams: int = 2) -> list[Case]:
    """The streams a check runs, ``[sizes, limit]`` each: the chapter's example; or the
    edge streams, then fresh ones from a seed."""
    def draw(rng):
        return [(*_drawn_stream(rng), None) for _ in range(streams)]
    return [Case(_describe(sizes, limit, f"{origin}: {shows}" if shows else origin), [sizes, limit])
            for origin, (sizes, limit, shows) in cases(
                seed, example, the_example=[(EXAMPLE_SIZES, EXAMPLE_LIMIT, None)],
                fixed=EDGE_STREAMS, drawn_from=draw)]


def _predicting(what: str, revisit: str):
    """The asking half of tasks 1 and 2: the learner's answer for a stream, as plain data."""
    def ask_case(predict, case: Case, answers: Answers) -> None:
        sizes, limit = case.about
        answer = ask(predict, list(sizes), limit, what=what, context=case.label)
        with revisiting(revisit, case.label):
            answers.add(plain(answer, f"{what}'s answer"))
    return ask_case


def _each_batch_beside_spark(case: Case, answers: Answers, what: str, revisit: str):
    """For every micro-batch of a stream: its id, the learner's answer for it and Spark's
    record of it (:func:`limit_run`)."""
    sizes, limit = case.about
    answer = answers.next()  # an unfinished task says so before Spark is asked
    truth = limit_run(spark_for_truth(), sizes, limit)
    got = answer_per_batch(answer, len(truth), f"{what}'s answer", case.label, revisit=revisit)
    yield from enumerate(zip(got, truth))


# -- task 1: what each micro-batch emits ------------------------------------------------------
def _judge_output(case: Case, answers: Answers) -> None:
    for batch_id, (mine, spark_did) in _each_batch_beside_spark(
            case, answers, "predict_emitted", REVISIT_GLOBAL):
        check_equal(mine, spark_did["emitted"], "rows emitted by this micro-batch",
                    batch=batch_id, revisit=REVISIT_GLOBAL, context=case.label)


@declared(
    cases=_cases,
    ask=_predicting("predict_emitted", REVISIT_GLOBAL), judge=_judge_output,
    passed=lambda cases: f"the emitted rows match Spark on {len(cases)} stream(s)")
def check_predicted_output(predict: Callable[[list[int], int], list[int]], *,
                           seed: int | None = None, streams: int = 2,
                           example: bool = False) -> None:
    """``predict(sizes, limit)`` must give the number of rows each micro-batch emits."""


# -- task 2: the state and its metrics ---------------------------------------------------------
STATE_FIELDS = ("numRowsTotal", "numRowsUpdated", "count")


def _judge_state(case: Case, answers: Answers) -> None:
    for batch_id, (mine, spark_did) in _each_batch_beside_spark(
            case, answers, "predict_state", REVISIT_STATE):
        mine = batch_dict(mine, batch_id, case.label, revisit=REVISIT_STATE)
        for field in STATE_FIELDS:
            check_equal(mine.get(field), spark_did[field], f"{field} after this micro-batch",
                        batch=batch_id, revisit=REVISIT_STATE, context=case.label)


@declared(
    cases=_cases,
    ask=_predicting("predict_state", REVISIT_STATE), judge=_judge_state,
    passed=lambda cases: f"the state and its metrics match Spark on {len(cases)} stream(s)")
def check_predicted_state(predict: Callable[[list[int], int], list[dict]], *,
                          seed: int | None = None, streams: int = 2,
                          example: bool = False) -> None:
    """``predict(sizes, limit)`` must give, per batch, the state metrics and stored count."""


# -- task 3: reading the counter after a restart -------------------------------------------------
def restarted_limit_run(sizes: list[int], limit: int):
    """How :func:`restarted_limit_checkpoints` runs its query: ``run_query(keep)``."""
    def run_query(keep) -> None:
        with StreamRun(course_session(), IDS_SCHEMA, lambda df: df.limit(limit)) as run:
            for batch_id, rows in enumerate(numbered_rows(sizes)):
                run.add_batch(rows)
                if batch_id == 1:
                    run.restart()
                keep(len(run.all_output()), run.checkpoint)
            if stored_count(run.state()) not in (None, len(run.all_output())):
                raise RuntimeError("the course's state reader disagrees with the sink")
    return run_query


def restarted_limit_checkpoints(spark: SparkSession, sizes: list[int],
                                limit: int) -> list[tuple[int, str]]:
    """Run ``limit(limit)`` on a stream, stopped and restarted on its checkpoint after
    batch 1; after each micro-batch, the rows the sink has received so far and a copy of
    the checkpoint as it stood then. Spark runs the query once per stream (see
    :func:`autograder.checks.answers.spark_checkpoints`).
    """
    return spark_checkpoints("global_limit.restarted_limit", [sizes, limit],
                             restarted_limit_run(sizes, limit))


def _restart_cases(*, seed: int, example: bool) -> list[Case]:
    return [Case(f"batch sizes {sizes}, limit({limit}) ({origin}), restarted after batch 1",
                 [sizes, limit]) for origin, (sizes, limit) in cases(
                     seed, example, the_example=[(EXAMPLE_SIZES, EXAMPLE_LIMIT)],
                     fixed=EDGE_RESTARTS, drawn_from=lambda rng: [_drawn_stream(rng)])]


def _counter_unfinished(read_counter) -> None:
    with tempfile.TemporaryDirectory(prefix="no-query-yet-") as empty_checkpoint:
        stop_if_unfinished(read_counter, course_session(), empty_checkpoint)


def _ask_counter(read_counter, case: Case, answers: Answers) -> None:
    sizes, limit = case.about
    spark = course_session()
    for batch_id, (_, checkpoint) in enumerate(restarted_limit_checkpoints(spark, sizes, limit)):
        answer = ask(read_counter, spark, checkpoint, what="your reader", batch=batch_id,
                     context=case.label, revisit=REVISIT_RESTART)
        with revisiting(REVISIT_RESTART, case.label, batch_id):
            answers.add(plain(answer, "rows emitted so far, read from the state store"))


def _judge_counter(case: Case, answers: Answers) -> None:
    sizes, limit = case.about
    facts = spark_facts("global_limit.restarted_limit", [sizes, limit],
                        restarted_limit_run(sizes, limit))
    for batch_id, emitted in enumerate(facts):
        check_equal(answers.next(), emitted, "rows emitted so far, read from the state store",
                    batch=batch_id, revisit=REVISIT_RESTART, context=case.label)


@declared(
    cases=_restart_cases, ask=_ask_counter,
    judge=_judge_counter, before=_counter_unfinished,
    passed=lambda cases: f"your reader finds the counter, before and after a restart "
                         f"({len(cases)} stream(s))")
def check_counter_reader(read_counter: Callable[[SparkSession, str], int], *,
                         seed: int | None = None, example: bool = False) -> None:
    """``read_counter(spark, checkpoint)`` must return the rows emitted so far.

    The query is stopped and restarted on its checkpoint after its second micro-batch.
    ``read_counter`` is called on the checkpoint as it stood after every micro-batch (a
    copy of it), and its answer compared with the rows the sink had received by then. The
    first batch may be empty, leaving no state row: then nothing has been emitted. Before
    any query runs, ``read_counter`` is called once on an empty folder, so that a reader
    still to be written says so at once.
    """


# -- task 4: a query with a limit -----------------------------------------------------------------
def reference_first_clicks(events: DataFrame, n: int) -> DataFrame:
    """The course's answer to task 4, run beside the learner's to know what is right."""
    reference_answer()
    return events.where(F.col("kind") == "click").limit(n)


def _event_batches(rng: random.Random, sizes: list[int]) -> list[list[tuple[int, str]]]:
    kinds = ["click", "view", "view"]
    return [[(row[0], rng.choice(kinds)) for row in batch] for batch in numbered_rows(sizes)]


def reference_clicks_per_batch(spark: SparkSession, batches: list[list[tuple[int, str]]],
                               n: int) -> list[list[list]]:
    """The (id, kind) rows :func:`reference_first_clicks` emits in each micro-batch, sorted."""
    reference_answer()
    def ask_spark() -> list[list[list]]:
        emitted = []
        with StreamRun(spark, EVENTS_SCHEMA, lambda df: reference_first_clicks(df, n)) as run:
            for rows in batches:
                (batch,) = run.add_batch(rows)
                emitted.append(sorted(list(row) for row in batch.output))
        return emitted

    return spark_answer("global_limit.first_clicks", [batches, n], ask_spark)


#: A stream of events (id, kind) every graded ``first_clicks`` runs besides a random one:
#: no click in the first micro-batch, the n-th click in the middle of the second, more
#: clicks after it.
EDGE_CLICKS = ([[(1, "view"), (2, "view")],
                [(3, "click"), (4, "view"), (5, "click"), (6, "click")],
                [(7, "click")], [(8, "view"), (9, "click")]], 2)


#: The kind of stream task 4 allows that shows where its filter must run (a case's inputs
#: are its events per micro-batch and n), held by EDGE_CLICKS.
CLICK_DIMENSIONS = (
    Dimension("a view before the first click",
              "the limit counts the rows that reach it: a filter below it decides which",
              lambda about: next(kind for batch in about[0] for _, kind in batch) == "view"),
)
INPUT_DIMENSIONS = {"check_predicted_output": STREAM_DIMENSIONS,
                    "check_predicted_state": STREAM_DIMENSIONS,
                    "check_counter_reader": RESTART_DIMENSIONS,
                    "check_first_clicks": CLICK_DIMENSIONS}


def _click_streams(*, seed: int, example: bool) -> list[Case]:
    """``[batches, n]`` each: the example's stream, or the fixed one and one drawn."""
    def draw(rng, sizes=None):
        batches = _event_batches(rng, sizes or batch_sizes(rng, batches=(4, 5), rows=(1, 6)))
        clicks = sum(kind == "click" for batch in batches for _, kind in batch)
        return [(batches, max(1, clicks - rng.randint(1, 2)) if clicks > 1 else 1)]
    # The chapter's example is drawn too, always the same (seed 7, batches of 3, 4, 2, 5).
    return [Case(f"events {batches}, n={n} ({origin})", [batches, n])
            for origin, (batches, n) in cases(
                seed, example, the_example=draw(random.Random(7), [3, 4, 2, 5]),
                fixed=[EDGE_CLICKS], drawn_from=draw)]


def _clicks_unfinished(first_clicks) -> None:
    stop_if_unfinished(first_clicks, course_session().createDataFrame([], EVENTS_SCHEMA), 2)


def _ask_clicks(first_clicks, case: Case, answers: Answers) -> None:
    """The learner's query on the stream: the (id, kind) rows of each micro-batch, then the
    plan's operators and the count in the limit's state."""
    batches, n = case.about
    context = case.label
    spark = course_session()

    def learner_query(events: DataFrame) -> DataFrame:
        return ask(first_clicks, events, n, what="first_clicks", context=context,
                   revisit=REVISIT_PLAN)

    with spark_failure_as_lesson("your query", context=context, revisit=REVISIT_PLAN), \
            StreamRun(spark, EVENTS_SCHEMA, learner_query) as run:
        for batch_id, rows in enumerate(batches):
            with spark_failure_as_lesson("your query", batch=batch_id, context=context,
                                         revisit=REVISIT_PLAN):
                (batch,) = run.add_batch(rows)
            answers.add(sorted(plain([row["id"], row["kind"]]) for row in batch.output))
        answers.add({"operators": run.plan().operator_names(), "count": stored_count(run.state())})


def _judge_clicks(case: Case, answers: Answers) -> None:
    batches, n = case.about
    context = case.label
    expected = reference_clicks_per_batch(spark_for_truth(), batches, n)
    for batch_id in range(len(batches)):
        check_equal(answers.next(), expected[batch_id],
                    "the (id, kind) rows this micro-batch emitted",
                    batch=batch_id, revisit=REVISIT_PLAN, context=context)
    after = answers.next()
    names = after["operators"]
    stateful = [name for name in names if name == "StreamingGlobalLimit"]
    check_equal(len(stateful), 1, "how many StreamingGlobalLimit operators the plan has",
                revisit=REVISIT_PLAN, context=" -> ".join(names))
    check_equal(names[-1], "StreamingGlobalLimit",
                "the last operator before the sink (source first: "
                + " -> ".join(names) + ")", revisit=REVISIT_PLAN)
    if "Filter" not in names or names.index("Filter") > names.index("LocalLimit"):
        raise CheckFailed("where the filter runs", "Filter before LocalLimit",
                          " -> ".join(names), revisit=REVISIT_PLAN)
    # Spark writes the counter once a row has passed the limit: none, no state row.
    check_equal(after["count"], sum(len(b) for b in expected) or None,
                "the count in the limit's state row (None: no row yet)",
                revisit=REVISIT_STATE, context=context)


@declared(
    cases=_click_streams, ask=_ask_clicks,
    judge=_judge_clicks, before=_clicks_unfinished,
    passed=lambda cases: f"your query emits the first clicks batch by batch, with the right "
                         f"plan ({len(cases)} stream(s))")
def check_first_clicks(first_clicks: Callable[[DataFrame, int], DataFrame], *,
                       seed: int | None = None, example: bool = False) -> None:
    """``first_clicks(events, n)`` must stream the first ``n`` click events ever.

    Checked per micro-batch against the course's own query on the same streams (rows
    compared as a set of ``(id, kind)``), and on the plan: the stateful global limit must be
    the last operator before the sink, with the filter below the local limit. Before any
    query runs, ``first_clicks`` is called once on an empty DataFrame, so that a query still
    to be written says so at once.
    """

"""Checks for chapter 6: the state of a stream-stream join.

The ideas they test, in the chapter's words:

* each side buffers its rows until its **state watermark** passes them: an impression
  leaves once it is more than 10 seconds below the watermark, a click once it is below the
  watermark; a row that has met a partner stays like any other, and a row at or below the
  watermark when it arrives is late and never enters the state (section "When rows leave
  the state");
* the query has **one watermark**, made of both sides' with
  ``spark.sql.streaming.multipleWatermarkPolicy``: ``min`` waits for the slower side, so a
  side that stops receiving data holds it back, ``max`` follows the faster side (section
  "Two watermarks, one global watermark");
* an outer join emits an unmatched row with nulls **when it leaves the state**, in the
  first micro-batch whose watermark passes its bound, often a no-data one, never in the
  micro-batch it arrived (section "Outer joins: rows with no match");
* the operator keeps **four stores**, two per side, read back with the ``statestore``
  source by ``storeName`` or ``joinSide`` (section "Four stores per operator");
* Spark accepts an inner join in any case, and outer and semi joins only with watermarks
  and a time condition; a join's state is bounded only with a **watermark on both sides**
  and a time-range condition (sections "Which joins it accepts" and "A join whose state
  never shrinks").

Each ``check_*`` function runs the learner's code against real Spark on the chapter's
example, fixed streams on the boundary of each rule, and streams drawn from a seed, and
raises :class:`~autograder.checks.feedback.CheckFailed` with a lesson when the two disagree.
"""
from __future__ import annotations

import random
import tempfile
from typing import Any, Callable

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from ..checks.answers import spark_answer, spark_answers, spark_checkpoints, spark_facts
from ..checks.asking import Answers, Case, ask_of_each_batch, declared, spark_for_truth
from ..checks.checking import Dimension, answer_per_batch, reference_answer
from ..checks.checking import cases as checking_cases
from .checkpoint_files import WRAPPERS, error_class, logged_batches, settings
from ..toolkit.driver import StreamRun
from ..checks.feedback import ask, check_equal, plain, revisiting, stop_if_unfinished
from ..toolkit.plan import explain_text
from ..toolkit.session import course_session
from .stream_join import (CONDITION, DELAY, SCHEMA, WITHIN, ad_clicks, buffered, clicked,
                          events, seconds, shown, state_watermarks)

CHAPTER = "chapter 6, The state of a stream-stream join"
REVISIT_LEAVING = f'{CHAPTER}, section "When rows leave the state"'
REVISIT_POLICY = f'{CHAPTER}, section "Two watermarks, one global watermark"'
REVISIT_OUTER = f'{CHAPTER}, section "Outer joins: rows with no match"'
REVISIT_STORES = f'{CHAPTER}, section "Four stores per operator"'
REVISIT_ACCEPTS = f'{CHAPTER}, section "Which joins it accepts"'
REVISIT_FOREVER = f'{CHAPTER}, section "A join whose state never shrinks"'

POLICY = "spark.sql.streaming.multipleWatermarkPolicy"
#: Helpers a learner may import from this module: they set up a query, they give no answer.
TOOLS = ("as_events", "join_shape", "drawn_stream")

#: The chapter's stream: each input a list of ``[side, ad, seconds after T0]``, side
#: ``"shown"`` (an impression, the left side) or ``"click"`` (the right side).
EXAMPLE_STREAM = [
    [["shown", "a", 1], ["shown", "b", 2], ["click", "a", 4]],
    [["shown", "c", 12], ["click", "a", 6], ["click", "b", 9]],
    [["click", "a", 20], ["shown", "d", 25]],
    [["shown", "e", 33], ["click", "c", 18], ["click", "x", 32]],
    [["shown", "f", 50], ["click", "f", 52]],
]


def as_events(rows: list) -> list[tuple]:
    """One input of a case (``[side, ad, seconds]`` each) as rows of the join's input."""
    return [event for side, ad, moment in rows for event in events(side, ad, moment)]


def drawn_stream(rng: random.Random, inputs: int) -> list[list[list]]:
    """``inputs`` inputs of 1 to 4 events of ads ``a`` .. ``d``, both sides, times moving on
    by 0 to 12 seconds an input, some a little older than the newest (late or not)."""
    stream, now = [], 0
    for _ in range(inputs):
        now += rng.randint(0, 12)
        stream.append([[rng.choice(["shown", "click"]), rng.choice("abcd"),
                        max(0, now - rng.choice([0, 0, 0, 2, 5, 8]))]
                       for _ in range(rng.randint(1, 4))])
    return stream


def _stream_label(stream: list) -> str:
    return "inputs " + "; ".join(", ".join(f"{side} {ad}@{moment}" for side, ad, moment in rows)
                                 for rows in stream)


def _kinds(batches) -> list[str]:
    return ["data" if batch.input_rows else "no-data" for batch in batches]


# -- task 1: each side's buffer after every micro-batch --------------------------------------
#: Streams every graded check runs, each on a rule's boundary (min policy unless said):
#: rows exactly at the watermark are late, and equal times match (and stay buffered);
#: an impression exactly 10 s below the watermark stays, a click below it goes, a key on
#: one side only; the clicks stop and hold the watermark back (min), or do not (max); the
#: faster side makes the slower one's rows late (max); only one side has data yet, so the
#: watermark stays at the epoch (min), and it has the same row twice; each side's newest
#: time, not its last row's, sets the watermark, and a click exactly at it stays; an
#: impression 11 s below it goes; a row exactly at the max policy's watermark is late.
EDGE_BUFFERED = [
    ([[["shown", "a", 10], ["click", "a", 10]],
      [["click", "a", 5], ["click", "b", 6], ["shown", "c", 5], ["shown", "d", 6]]], "min"),
    ([[["shown", "a", 0], ["shown", "b", 1], ["click", "x", 0]],
      [["shown", "c", 15], ["click", "y", 15]]], "min"),
    ([[["shown", "a", 1], ["click", "a", 2]], [["shown", "b", 20]], [["shown", "c", 40]]], "min"),
    ([[["shown", "a", 1], ["click", "a", 2]], [["shown", "b", 20]], [["shown", "c", 40]]], "max"),
    ([[["shown", "a", 20], ["click", "a", 2]], [["click", "b", 10], ["shown", "c", 12]]], "max"),
    ([[["shown", "a", 20], ["shown", "a", 20]], [["click", "a", 25]]], "min"),
    ([[["shown", "a", 20], ["shown", "b", 10], ["click", "c", 20], ["click", "d", 10],
       ["click", "e", 15]]], "min"),
    ([[["shown", "a", 0], ["click", "x", 0]], [["shown", "b", 16], ["click", "y", 16]]], "min"),
    ([[["shown", "a", 20], ["click", "a", 2]], [["click", "b", 15], ["shown", "c", 15]]], "max"),
]


def buffered_rows(spark: SparkSession, stream: list, policy: str) -> dict:
    """Spark's run of the inner join on ``stream`` under ``policy``: which micro-batches
    ran (``kinds``) and each side's buffered ``[ad, seconds]`` after each (``sides``)."""
    reference_answer()
    def ask_spark() -> dict:
        kinds, sides = [], []
        with settings(spark, {POLICY: policy}):
            with StreamRun(spark, SCHEMA, ad_clicks("inner"), keep_output=False) as run:
                for rows in stream:
                    for batch in run.add_batch(as_events(rows)):
                        kinds += _kinds([batch])
                        state = buffered(run, batch)
                        sides.append({side: sorted([row["ad"], row["time"]] for row in state
                                                   if row["side"] == side)
                                      for side in ("left", "right")})
        return {"kinds": kinds, "sides": sides}

    return spark_answer("stream_join_checks.buffered", [stream, policy], ask_spark)


def _buffered_cases(*, seed: int, example: bool, cases: int) -> list[Case]:
    def named(stream, policy, origin):
        return Case(f"{_stream_label(stream)}, multipleWatermarkPolicy {policy} ({origin})",
                    [stream, policy])
    def draw(rng):
        return [(drawn_stream(rng, rng.randint(3, 5)), rng.choice(["min", "max"]))
                for _ in range(cases)]
    return [named(stream, policy, origin) for origin, (stream, policy) in checking_cases(
        seed, example, the_example=[(EXAMPLE_STREAM, "min")], fixed=EDGE_BUFFERED,
        drawn_from=draw)]


def _revisit_for(policy: str) -> str:
    return REVISIT_POLICY if policy == "max" else REVISIT_LEAVING


def _ask_buffered(predict, case: Case, answers: Answers) -> None:
    stream, policy = case.about
    revisit = _revisit_for(policy)
    answer = ask(predict, [[list(event) for event in rows] for rows in stream], policy,
                 what="predict_buffered", context=case.label, revisit=revisit)
    with revisiting(revisit, case.label):
        answers.add(plain(answer, "predict_buffered's answer"))


def _sorted_side(rows: Any) -> Any:
    """A side's rows in a comparable order, whatever order the learner gave them in."""
    return sorted(rows, key=repr) if isinstance(rows, list) else rows


def _judge_buffered(case: Case, answers: Answers) -> None:
    stream, policy = case.about
    revisit = _revisit_for(policy)
    answer = answers.next()
    truth = buffered_rows(spark_for_truth(), stream, policy)
    got = answer_per_batch(answer, len(truth["sides"]), "predict_buffered's answer",
                           case.label, kinds=truth["kinds"], revisit=revisit)
    for batch_id, (mine, sides) in enumerate(zip(got, truth["sides"])):
        mine = {side: _sorted_side(rows) for side, rows in mine.items()} \
            if isinstance(mine, dict) else mine
        check_equal(mine, {side: sorted(rows, key=repr) for side, rows in sides.items()},
                    f"the rows each side buffers after this {truth['kinds'][batch_id]} "
                    "micro-batch ([ad, seconds])", batch=batch_id, revisit=revisit,
                    context=case.label)


@declared(
    cases=_buffered_cases,
    ask=_ask_buffered, judge=_judge_buffered,
    before=lambda predict: stop_if_unfinished(predict, [[["shown", "a", 1]]], "min"),
    passed=lambda cases: f"both sides' buffers match Spark's, micro-batch by micro-batch "
                         f"({len(cases)} stream(s))")
def check_predicted_buffers(predict: Callable[[list, str], list], *, seed: int | None = None,
                            cases: int = 2, example: bool = False) -> None:
    """``predict(stream, policy)`` must give, for every micro-batch Spark runs (no-data ones
    included), ``{"left": [[ad, seconds], ...], "right": [...]}``: the rows each side of the
    inner join buffers after it (in any order)."""


# -- task 2: when an unmatched impression comes out ------------------------------------------
#: Streams every graded check runs: the clicks stop, so nothing comes out (a key on one
#: side only); an impression out once 10 s below the watermark, not once below it; one
#: exactly at its bound stays a micro-batch longer; a match in a later input keeps a row
#: silent, and one click matches two impressions of its ad; a late click matches nothing,
#: though an impression it is in range of waits in the buffer; each side's newest time, not
#: its last row's, sets the watermark; a click matches from the impression's second to 10 s after it, not before
#: or after; an impression 11 s below the watermark comes out once, never again; a click
#: stays until the watermark passes it (a later impression still matches it), and an
#: impression exactly at the watermark is late; the clicks run ahead while an unmatched
#: impression waits (the min policy follows the impressions).
EDGE_UNMATCHED = [
    [[["shown", "a", 1], ["click", "b", 2]], [["shown", "c", 20]], [["shown", "d", 40]]],
    [[["shown", "a", 1], ["shown", "b", 2], ["click", "b", 5]],
     [["shown", "c", 14], ["click", "c", 16]], [["shown", "d", 30], ["click", "z", 30]]],
    [[["shown", "a", 0], ["click", "q", 0]], [["shown", "r", 15], ["click", "s", 15]],
     [["shown", "t", 16], ["click", "u", 16]]],
    [[["shown", "a", 1], ["shown", "a", 5]], [["click", "a", 8], ["shown", "b", 8]],
     [["shown", "c", 30], ["click", "c", 31]]],
    [[["shown", "a", 10], ["shown", "z", 20], ["click", "z", 20]], [["click", "a", 14]],
     [["shown", "c", 40], ["click", "d", 40]]],
    [[["shown", "a", 20], ["shown", "b", 1], ["click", "c", 20]]],
    [[["shown", "a", 10], ["click", "a", 10], ["shown", "b", 10], ["click", "b", 20],
      ["shown", "c", 10], ["click", "c", 21], ["shown", "d", 10], ["click", "d", 5]],
     [["shown", "e", 40], ["click", "f", 40]]],
    [[["shown", "a", 0], ["click", "q", 0]], [["shown", "r", 16], ["click", "s", 16]],
     [["shown", "t", 40], ["click", "u", 40]]],
    [[["shown", "a", 20], ["click", "b", 20]], [["shown", "b", 16], ["shown", "e", 15]],
     [["shown", "c", 40], ["click", "d", 40]]],
    [[["shown", "a", 1], ["click", "b", 2]], [["click", "c", 20]], [["click", "d", 40]],
     [["shown", "e", 40], ["click", "f", 40]]],
]


def unmatched_rows(spark: SparkSession, stream: list) -> dict:
    """Spark's run of the left outer join on ``stream``: which micro-batches ran
    (``kinds``) and the impressions each emitted with nulls, ``[ad, seconds]`` (``out``)."""
    reference_answer()
    def ask_spark() -> dict:
        kinds, out = [], []
        with StreamRun(spark, SCHEMA, ad_clicks("left_outer")) as run:
            for rows in stream:
                for batch in run.add_batch(as_events(rows)):
                    kinds += _kinds([batch])
                    out.append(sorted([row["ad"], seconds(row["shown_at"])]
                                      for row in batch.output if row["click_ad"] is None))
        return {"kinds": kinds, "out": out}

    return spark_answer("stream_join_checks.unmatched", stream, ask_spark)


def _unmatched_cases(*, seed: int, example: bool) -> list[Case]:
    return [Case(f"{_stream_label(stream)} ({origin})", stream)
            for origin, stream in checking_cases(
                seed, example, the_example=[EXAMPLE_STREAM], fixed=EDGE_UNMATCHED,
                drawn_from=lambda rng: [drawn_stream(rng, rng.randint(3, 5))])]


def _ask_unmatched(predict, case: Case, answers: Answers) -> None:
    answer = ask(predict, [[list(event) for event in rows] for rows in case.about],
                 what="predict_unmatched", context=case.label, revisit=REVISIT_OUTER)
    with revisiting(REVISIT_OUTER, case.label):
        answers.add(plain(answer, "predict_unmatched's answer"))


def _judge_unmatched(case: Case, answers: Answers) -> None:
    answer = answers.next()
    truth = unmatched_rows(spark_for_truth(), case.about)
    got = answer_per_batch(answer, len(truth["out"]), "predict_unmatched's answer",
                           case.label, kinds=truth["kinds"], revisit=REVISIT_OUTER)
    for batch_id, (mine, out) in enumerate(zip(got, truth["out"])):
        check_equal(_sorted_side(mine), sorted(out, key=repr),
                    f"the impressions this {truth['kinds'][batch_id]} micro-batch emits with "
                    "nulls ([ad, seconds])", batch=batch_id, revisit=REVISIT_OUTER,
                    context=case.label)


@declared(
    cases=_unmatched_cases,
    ask=_ask_unmatched, judge=_judge_unmatched,
    before=lambda predict: stop_if_unfinished(predict, [[["shown", "a", 1]]]),
    passed=lambda cases: f"you know when every unmatched impression comes out "
                         f"({len(cases)} stream(s))")
def check_predicted_unmatched(predict: Callable[[list], list], *, seed: int | None = None,
                              example: bool = False) -> None:
    """``predict(stream)`` must give, for every micro-batch Spark runs on the left outer
    join, the impressions it emits with nulls, ``[[ad, seconds], ...]`` (in any order)."""


# -- task 3: rows per key, read from a checkpoint --------------------------------------------
#: Streams every graded reader is asked about (join type besides): several rows under one
#: key with equal times, and a key on one side only; an outer join with keys on one side;
#: a stream whose rows all leave the state.
EDGE_COUNTS = [
    ([[["shown", "a", 1], ["shown", "a", 1], ["click", "a", 1], ["click", "a", 2]],
      [["shown", "b", 3], ["shown", "a", 4]]], "inner"),
    ([[["shown", "a", 1], ["click", "b", 2]], [["shown", "c", 20], ["click", "c", 21]]],
     "left_outer"),
    ([[["shown", "a", 1], ["click", "a", 3]], [["shown", "b", 30], ["click", "b", 31]]], "inner"),
]


def _per_key(state: list[dict]) -> dict:
    counts: dict[str, dict[str, int]] = {}
    for row in state:
        counts.setdefault(row["ad"], {"left": 0, "right": 0})[row["side"]] += 1
    return counts


def join_checkpoint(spark: SparkSession, stream: list, how: str) -> tuple[list, str]:
    """Run the join ``how`` on ``stream``; each side's rows per ad as every micro-batch
    committed them (Spark's facts) and a copy of the final checkpoint."""
    reference_answer()
    ((facts, checkpoint),) = spark_checkpoints("stream_join_checks.rows_per_key", [stream, how],
                                               _per_key_run(spark, stream, how))
    return facts, checkpoint


def _per_key_run(spark: SparkSession | None, stream: list, how: str):
    """How :func:`join_checkpoint` runs its query: ``run_query(keep)``."""
    def run_query(keep) -> None:
        run = StreamRun(spark, SCHEMA, ad_clicks(how), keep_output=False).start()
        try:
            ran = [batch for rows in stream for batch in run.add_batch(as_events(rows))]
            run.stop()
            keep([_per_key(buffered(run, batch)) for batch in ran], run.checkpoint)
        finally:
            run.close()
    return run_query


def _count_cases(*, seed: int, example: bool) -> list[Case]:
    def draw(rng):
        return [(drawn_stream(rng, rng.randint(2, 4)), rng.choice(["inner", "left_outer"]))]
    return [Case(f"{how} join, {_stream_label(stream)} ({origin})", [stream, how])
            for origin, (stream, how) in checking_cases(
                seed, example, the_example=[(EXAMPLE_STREAM, "inner")], fixed=EDGE_COUNTS,
                drawn_from=draw)]


def _reader_unfinished(rows_per_key) -> None:
    with tempfile.TemporaryDirectory(prefix="no-query-yet-") as empty_checkpoint:
        stop_if_unfinished(rows_per_key, course_session(), empty_checkpoint, 0)


def _ask_counts(rows_per_key, case: Case, answers: Answers) -> None:
    """The learner's reader on a copy of the join's final checkpoint, about every
    micro-batch (Spark's facts, None in a graded kernel, are not looked at)."""
    stream, how = case.about
    spark = course_session()
    _, checkpoint = join_checkpoint(spark, stream, how)
    # How many micro-batches ran is read from the commit log: a graded kernel has no facts.
    ask_of_each_batch(rows_per_key, spark, checkpoint, logged_batches(checkpoint, "commits"),
                      answers, what="rows_per_key", context=case.label, revisit=REVISIT_STORES)


def _judge_counts(case: Case, answers: Answers) -> None:
    stream, how = case.about
    (facts,) = spark_facts("stream_join_checks.rows_per_key", [stream, how],
                           _per_key_run(spark_for_truth(), stream, how))
    for batch_id, expected in enumerate(facts):
        check_equal(answers.next(), expected,
                    "each ad's rows per side as this micro-batch committed them "
                    "({ad: {'left': n, 'right': m}})", batch=batch_id, revisit=REVISIT_STORES,
                    context=case.label)


@declared(
    cases=_count_cases, ask=_ask_counts,
    judge=_judge_counts, before=_reader_unfinished,
    passed=lambda cases: f"your reader counts both sides' rows per key in every micro-batch "
                         f"({len(cases)} checkpoint(s))")
def check_rows_per_key(rows_per_key: Callable[[SparkSession, str, int], dict], *,
                       seed: int | None = None, example: bool = False) -> None:
    """``rows_per_key(spark, checkpoint, batch_id)`` must return, for every ad with rows in
    the join's state as micro-batch ``batch_id`` committed it, ``{"left": n, "right": m}``.

    It is asked about every micro-batch of each stream, on a copy of the join's final
    checkpoint (the query is stopped)."""


# -- task 4: which joins Spark accepts, and which keep their state bounded -------------------
#: The shape of a join: ``how``, which sides have a watermark (``"both"``, ``"left"``,
#: ``"right"``, ``"none"``), whether the condition has the time range, the output mode.
HOWS = ("inner", "left_outer", "right_outer", "full_outer", "left_semi", "left_anti")
WATERMARKS = ("both", "left", "right", "none")
MODES = ("append", "update", "complete")
EXAMPLE_SHAPE = {"how": "left_outer", "watermarks": "both", "time_condition": True,
                 "mode": "append"}
#: Shapes every graded check asks about: the inner join without watermarks, with one, and
#: without the time range (accepted, unbounded); each outer side with the watermark on one
#: side only; left anti; the output modes; left semi and full outer with the watermark on
#: either side alone, right outer with it on its own side only; left semi in Update mode.
EDGE_SHAPES = [
    {"how": "inner", "watermarks": "none", "time_condition": True, "mode": "append"},
    {"how": "inner", "watermarks": "left", "time_condition": True, "mode": "append"},
    {"how": "inner", "watermarks": "both", "time_condition": False, "mode": "append"},
    {"how": "left_outer", "watermarks": "right", "time_condition": True, "mode": "append"},
    {"how": "left_outer", "watermarks": "left", "time_condition": True, "mode": "append"},
    {"how": "right_outer", "watermarks": "left", "time_condition": True, "mode": "append"},
    {"how": "full_outer", "watermarks": "both", "time_condition": False, "mode": "append"},
    {"how": "left_semi", "watermarks": "both", "time_condition": True, "mode": "append"},
    {"how": "left_semi", "watermarks": "left", "time_condition": True, "mode": "append"},
    {"how": "left_semi", "watermarks": "right", "time_condition": True, "mode": "append"},
    {"how": "right_outer", "watermarks": "right", "time_condition": True, "mode": "append"},
    {"how": "full_outer", "watermarks": "left", "time_condition": True, "mode": "append"},
    {"how": "full_outer", "watermarks": "right", "time_condition": True, "mode": "append"},
    {"how": "left_anti", "watermarks": "both", "time_condition": True, "mode": "append"},
    {"how": "inner", "watermarks": "both", "time_condition": True, "mode": "update"},
    {"how": "left_outer", "watermarks": "both", "time_condition": True, "mode": "update"},
    {"how": "inner", "watermarks": "both", "time_condition": True, "mode": "complete"},
    {"how": "left_semi", "watermarks": "both", "time_condition": True, "mode": "update"},
]


def join_shape(shape: dict) -> Callable[[DataFrame], DataFrame]:
    """The query of a shape, for :class:`StreamRun` (its output mode apart)."""
    def query(events_df: DataFrame) -> DataFrame:
        left = shown(events_df, DELAY if shape["watermarks"] in ("both", "left") else None)
        right = clicked(events_df, DELAY if shape["watermarks"] in ("both", "right") else None)
        condition = CONDITION if shape["time_condition"] else "ad = click_ad"
        return left.join(right, F.expr(condition), shape["how"])
    return query


def _refusal(error: BaseException) -> str:
    """The error class Spark refused a query with (the one inside a wrapper, if any)."""
    condition = getattr(error, "getCondition", lambda: None)()
    if condition and condition not in WRAPPERS:
        return condition
    return error_class(error)


def shape_outcomes(spark: SparkSession, shapes: list[dict]) -> list[str]:
    """For each shape: start the join and feed it one micro-batch; ``"bounded"`` when its
    plan has a state cleanup bound for each side, ``"unbounded"`` when it runs without,
    or the error class Spark refused it with."""
    reference_answer()
    def ask_spark(missing: list[dict]) -> list[str]:
        outcomes = []
        for shape in missing:
            try:
                with StreamRun(spark, SCHEMA, join_shape(shape), output_mode=shape["mode"],
                               keep_output=False) as run:
                    run.add_batch(as_events([["shown", "a", 1], ["click", "a", 2]]))
                    bounds = state_watermarks(explain_text(run.query))
                outcomes.append("bounded" if set(bounds) == {"left", "right"} else "unbounded")
            except Exception as error:  # noqa: BLE001 - the outcome asked for
                outcomes.append(_refusal(error))
        return outcomes

    return spark_answers("stream_join_checks.accepted", shapes, ask_spark)


def _shape_label(shape: dict) -> str:
    marks = {"both": "a watermark on both sides", "left": "a watermark on the impressions only",
             "right": "a watermark on the clicks only", "none": "no watermark"}
    return (f"{shape['how']} join, {marks[shape['watermarks']]}, "
            f"{'with' if shape['time_condition'] else 'without'} the time range, "
            f"{shape['mode']} mode")


def _shape_cases(*, seed: int, example: bool) -> list[Case]:
    """One case per shape, each with all of them (``shapes``: Spark answers them in one
    go) and its place among them (``index``)."""
    def draw(rng):
        return [{"how": rng.choice(HOWS), "watermarks": rng.choice(WATERMARKS),
                 "time_condition": rng.random() < 0.5,
                 "mode": rng.choice(["append", "append", "update"])} for _ in range(2)]
    shapes = checking_cases(seed, example, the_example=[EXAMPLE_SHAPE], fixed=EDGE_SHAPES,
                            drawn_from=draw)
    every = [shape for _, shape in shapes]
    return [Case(f"{_shape_label(shape)} ({origin})", {"shapes": every, "index": index})
            for index, (origin, shape) in enumerate(shapes)]


def _revisit_shape(shape: dict) -> str:
    return REVISIT_FOREVER if shape["how"] == "inner" and shape["mode"] != "complete" \
        else REVISIT_ACCEPTS


def _ask_shape(predict, case: Case, answers: Answers) -> None:
    shape = case.about["shapes"][case.about["index"]]
    answer = ask(predict, dict(shape), what="accepted", context=case.label,
                 revisit=_revisit_shape(shape))
    answers.add(plain(answer))


def _judge_shape(case: Case, answers: Answers) -> None:
    shape = case.about["shapes"][case.about["index"]]
    got = answers.next()
    truth = shape_outcomes(spark_for_truth(), case.about["shapes"])[case.about["index"]]
    check_equal(got, truth, "what Spark does with this join: 'bounded', 'unbounded', or the "
                "error class it refuses it with", revisit=_revisit_shape(shape),
                context=case.label)


@declared(
    cases=_shape_cases, ask=_ask_shape,
    judge=_judge_shape, before=lambda predict: stop_if_unfinished(predict, dict(EXAMPLE_SHAPE)),
    passed=lambda cases: f"you know what Spark does with {len(cases)} join(s)")
def check_accepted(predict: Callable[[dict], str], *, seed: int | None = None,
                   example: bool = False) -> None:
    """``predict(shape)`` must say what Spark does with the join ``shape``: ``"bounded"``
    (it runs, and both sides' rows leave the state), ``"unbounded"`` (it runs, and rows stay
    for ever), or the error class it refuses it with."""


# -- the kinds of input the tasks allow ---------------------------------------------------------
def _watermarks(stream: list, policy: str = "min") -> list[float | None]:
    """The watermark each input's micro-batch runs with, by the chapter's rule (None: the
    epoch, nothing late): each side's newest time so far minus DELAY, then the smaller of
    the two (``min``, which waits for both sides to have rows) or the larger (``max``); it
    never goes back."""
    marks, newest, mark = [], {}, None
    for rows in stream:
        marks.append(mark)
        for side, _, moment in rows:
            newest[side] = max(newest.get(side, moment), moment)
        if policy == "min" and len(newest) < 2:
            continue
        moved = (min if policy == "min" else max)(newest.values()) - DELAY
        mark = moved if mark is None else max(mark, moved)
    return marks


def _rows(stream: list, policy: str = "min"):
    """Every row of the stream with its input's number and the watermark it arrives under."""
    return [(i, side, ad, moment, mark) for i, (rows, mark) in
            enumerate(zip(stream, _watermarks(stream, policy))) for side, ad, moment in rows]


def _in_range(shown_at: float, clicked_at: float) -> bool:
    return shown_at <= clicked_at <= shown_at + WITHIN


def _late(moment, mark) -> bool:
    return mark is not None and moment <= mark


def _clicks_in_range(stream: list) -> list[tuple]:
    """(impression, click) pairs of one ad in range, both on time: ``(input, ad, seconds)``."""
    rows = [row for row in _rows(stream) if not _late(row[3], row[4])]
    return [((i, ad, s), (j, ad, c)) for i, side, ad, s, _ in rows if side == "shown"
            for j, other, click_ad, c, _ in rows
            if other == "click" and click_ad == ad and _in_range(s, c)]


def _impressions_on_time(stream: list, policy: str = "min") -> list[tuple]:
    return [(i, ad, moment) for i, side, ad, moment, mark in _rows(stream, policy)
            if side == "shown" and not _late(moment, mark)]


def _within_10_s_below_a_watermark(stream: list, policy: str) -> bool:
    """An impression that some later watermark ``m`` puts at ``m - 10 <= t < m``."""
    marks = [m for m in _watermarks(stream + [[]], policy) if m is not None]
    return any(mark - WITHIN <= moment < mark
               for _, _, moment in _impressions_on_time(stream, policy) for mark in marks)


def _one_side_ahead(stream: list) -> bool:
    """After some input both sides have rows and their newest times differ."""
    newest: dict[str, float] = {}
    for rows in stream:
        for side, _, moment in rows:
            newest[side] = max(newest.get(side, moment), moment)
        if len(newest) == 2 and newest["shown"] != newest["click"]:
            return True
    return False


def _clicks_ahead_of_an_unmatched_impression(stream: list) -> bool:
    """An impression no click is in range of, which the clicks' watermark alone would let
    out before the impressions' does."""
    matched = {impression for impression, _ in _clicks_in_range(stream)}
    unmatched = [row for row in _impressions_on_time(stream) if row not in matched]
    newest: dict[str, float] = {}
    for k, rows in enumerate(stream):
        for side, _, moment in rows:
            newest[side] = max(newest.get(side, moment), moment)
        if len(newest) == 2 and any(
                i <= k and newest["click"] - DELAY - WITHIN > moment >= newest["shown"] - DELAY - WITHIN
                for i, _, moment in unmatched):
            return True
    return False


_LATE = "a row at or below the watermark it arrives under is late: dropped before the join"
_LEAVES = ("an impression leaves the state once more than 10 s below the watermark, a click "
           "once below it")

#: The kinds of input each task allows: task 1's stream and policy, task 2's stream (the
#: min policy), task 3's stream and join type, task 4's shape. Each is held by a case of
#: EDGE_BUFFERED, EDGE_UNMATCHED, EDGE_COUNTS or EDGE_SHAPES.
def _shape(holds: Callable[[dict], bool]) -> Callable[[dict], bool]:
    return lambda about: holds(about["shapes"][about["index"]])


INPUT_DIMENSIONS = {
    "check_predicted_buffers": (
        Dimension("a row exactly at the watermark it arrives under", _LATE,
                  lambda about: any(moment == mark for *_, moment, mark in _rows(*about))),
        Dimension("the same row twice on one side",
                  "a side keeps every row that is not late, each under its key's next index",
                  lambda about: any(len(rows) > len({tuple(row) for row in rows})
                                    for rows in about[0])),
        Dimension("an impression a click matched",
                  "a matched row stays in its buffer until the watermark lets it go",
                  lambda about: bool(_clicks_in_range(about[0]))),
        Dimension("an impression less than 10 s below a watermark", _LEAVES,
                  lambda about: _within_10_s_below_a_watermark(*about)),
        Dimension("the max policy, one side ahead of the other",
                  "multipleWatermarkPolicy max follows the side furthest ahead",
                  lambda about: about[1] == "max" and _one_side_ahead(about[0])),
    ),
    "check_predicted_unmatched": (
        Dimension("a click in a later input than the impression it matches",
                  "a click meets every impression the state still buffers",
                  lambda stream: any(click[0] > impression[0]
                                     for impression, click in _clicks_in_range(stream))),
        Dimension("an impression less than 10 s below a watermark",
                  "an unmatched impression comes out once more than 10 s below the watermark",
                  lambda stream: _within_10_s_below_a_watermark(stream, "min")),
        Dimension("clicks running ahead while an unmatched impression waits",
                  "the min policy follows the slower side: here, the impressions",
                  _clicks_ahead_of_an_unmatched_impression),
        Dimension("one click in range of two impressions of its ad",
                  "a click matches every impression of its ad from 10 s before it",
                  lambda stream: any(len([pair for pair in _clicks_in_range(stream)
                                          if pair[1] == click]) > 1
                                     for _, click in _clicks_in_range(stream))),
        Dimension("a late click in range of a buffered impression", _LATE,
                  lambda stream: any(side == "click" and _late(c, mark) and any(
                      other == "shown" and shown_ad == ad and j < i and _in_range(s, c)
                      and s >= mark - WITHIN for j, other, shown_ad, s, _ in _rows(stream))
                      for i, side, ad, c, mark in _rows(stream))),
    ),
    "check_rows_per_key": (
        Dimension("a micro-batch before the stream's last",
                  "the statestore source reads the state as the micro-batch asked about committed it",
                  lambda about: len(about[0]) > 1),
    ),
    "check_accepted": (
        Dimension("an outer join in Update mode", "an outer join runs in Append mode only",
                  _shape(lambda shape: shape["how"].endswith("outer") and shape["mode"] == "update")),
        Dimension("an outer join with a watermark on one side only",
                  "an outer join needs the time range and a watermark on its nullable side",
                  _shape(lambda shape: shape["how"].endswith("outer")
                         and shape["watermarks"] in ("left", "right") and shape["mode"] == "append")),
        Dimension("an inner join with a watermark on one side only",
                  "a side's rows leave the state by the other side's watermark, through the time range",
                  _shape(lambda shape: shape["how"] == "inner"
                         and shape["watermarks"] in ("left", "right") and shape["mode"] != "complete")),
        Dimension("an inner join without watermarks",
                  "an inner join is accepted in any case; without watermarks no row leaves its state",
                  _shape(lambda shape: shape["how"] == "inner" and shape["watermarks"] == "none"
                         and shape["mode"] != "complete")),
        Dimension("a join without the time range, both sides with a watermark",
                  "without the time range no watermark bounds a side's state",
                  _shape(lambda shape: not shape["time_condition"] and shape["watermarks"] == "both"
                         and shape["mode"] == "append")),
        Dimension("a left semi join in Update mode",
                  "only the outer joins are held to Append mode: a left semi join runs in Update "
                  "mode too",
                  _shape(lambda shape: shape["how"] == "left_semi" and shape["mode"] == "update")),
        Dimension("a left anti join", "a left anti join with a streaming right side is refused",
                  _shape(lambda shape: shape["how"] == "left_anti")),
        Dimension("Complete mode", "no stream-stream join runs in Complete mode",
                  _shape(lambda shape: shape["mode"] == "complete")),
    ),
}

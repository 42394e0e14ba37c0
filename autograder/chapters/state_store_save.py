"""Checks for chapter 3: StateStoreSaveExec in Append, Complete and Update modes.

Every check runs the chapter's query, a windowed count with a watermark::

    events.withWatermark("ts", f"{delay} seconds") \\
          .groupBy(F.window("ts", "10 seconds")).count()

on real Spark, in the output mode under test, and compares what the learner predicted or
wrote with what each micro-batch really did. The ideas they test, in the chapter's words:

* **Append** drops late groups, stores the others, and emits a window once, when the
  watermark passes its end, removing it from the state at that moment (section "Append:
  a window is emitted once, when it is final");
* **Complete** emits the whole state every micro-batch and never evicts anything (section
  "Complete: the whole state, every micro-batch");
* **Update** emits only the windows the micro-batch changed, and evicts windows behind the
  watermark without emitting them (section "Update: only what changed");
* after a micro-batch that moved the watermark, Append and Update run one more micro-batch
  with no input (section "No-data micro-batches");
* the four row counts of the progress report (section "Every metric, batch by batch");
* the watermark delay decides which rows are dropped (section "Choosing the delay").

Events are whole seconds after the chapter's ``T0``; a window is named by its start, so an
output row is ``[window start, count]``. The executable model of the operator is
:mod:`autograder.chapters.save_model`; the checks never trust it: the truth is Spark's.
"""
from __future__ import annotations

import functools
import random
from datetime import datetime, timedelta, timezone
from typing import Callable

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from . import save_model
from ..checks.answers import spark_answer
from ..checks.asking import Answers, Case, declared, spark_for_truth
from ..checks.checking import (Dimension, answer_per_batch, batch_dict, cases, reference_answer,
                       side_by_side)
from ..toolkit.driver import StreamRun
from ..checks.feedback import CheckFailed, GraderFault, ask, check_equal, plain
from ..toolkit.session import course_session
from ..toolkit.streams import T0

CHAPTER = "chapter 3, StateStoreSaveExec in Append, Complete and Update modes"
REVISIT = {
    "append": f'{CHAPTER}, section "Append: a window is emitted once, when it is final"',
    "complete": f'{CHAPTER}, section "Complete: the whole state, every micro-batch"',
    "update": f'{CHAPTER}, section "Update: only what changed"',
}
REVISIT_NO_DATA = f'{CHAPTER}, section "No-data micro-batches"'
REVISIT_METRICS = f'{CHAPTER}, section "Every metric, batch by batch"'
REVISIT_DELAY = f'{CHAPTER}, section "Choosing the delay"'

#: The window length of the chapter's query, in seconds.
WINDOW = 10
SCHEMA = "id INT, ts TIMESTAMP"
METRIC_NAMES = save_model.METRIC_NAMES

#: The chapter's worked example: four micro-batches of events, a 10-second delay.
EXAMPLE_BATCHES = [[1, 5, 12], [25, 3], [8, 14, 31], [38, 2, 7]]
EXAMPLE_DELAY = 10
#: Helpers of this module a learner may use freely (the grading guard flags the rest).
TOOLS = ("as_rows", "seconds", "watermark_seconds", "windowed_count", "describe")


# -- the truth, from Spark ------------------------------------------------------------------------
def windowed_count(delay: int, size: int = WINDOW) -> Callable[[DataFrame], DataFrame]:
    """The chapter's query: a count per tumbling window, behind a watermark of ``delay``."""
    def query(events: DataFrame) -> DataFrame:
        return (events.withWatermark("ts", f"{delay} seconds")
                      .groupBy(F.window("ts", f"{size} seconds")).count())
    return query


def as_rows(events: list[int], first_id: int = 1) -> list[tuple[int, datetime]]:
    """Input rows for events given in seconds after T0: ``(id, ts)``."""
    return [(first_id + i, T0 + timedelta(seconds=s)) for i, s in enumerate(events)]


def seconds(moment: datetime) -> int:
    """A timestamp from Spark, in whole seconds after T0."""
    if moment.tzinfo is not None:
        moment = moment.astimezone(timezone.utc).replace(tzinfo=None)
    return int((moment - T0).total_seconds())


def watermark_seconds(text: str | None) -> int | None:
    """The progress report's watermark in seconds after T0 (None while it is still 0)."""
    if not text or text.startswith("1970-01-01T00:00:00"):
        return None
    return seconds(datetime.fromisoformat(text.replace("Z", "+00:00")))


def batch_facts(batch) -> dict:
    """One micro-batch of a run, as plain data: input, watermark, output, row counts."""
    reference_answer()
    operator = batch.state_operators[0]
    return {
        "batch_id": batch.batch_id,
        "input_rows": batch.input_rows,
        "watermark": watermark_seconds(batch.watermark),
        "output": sorted([seconds(row["window"]["start"]), row["count"]] for row in batch.output),
        "metrics": {name: operator[name] for name in METRIC_NAMES},
    }


def spark_run(spark: SparkSession, batches: list[list[int]], mode: str, delay: int,
              size: int = WINDOW) -> list[dict]:
    """Run the chapter's query on real Spark; one :func:`batch_facts` dict per micro-batch.

    Spark is asked once per stream, mode, delay and window size (see
    :mod:`autograder.checks.answers`): a second check on the same stream reuses the answer.
    """
    reference_answer()
    def ask_spark() -> list[dict]:
        facts, first_id = [], 1
        with StreamRun(spark, SCHEMA, windowed_count(delay, size), output_mode=mode) as run:
            for events in batches:
                for batch in run.add_batch(as_rows(events, first_id)):
                    facts.append(batch_facts(batch))
                first_id += len(events)
        return facts

    return spark_answer("state_store_save.spark_run", [batches, mode, delay, size], ask_spark)


def spark_runs(spark: SparkSession, batches: list[list[int]], delay: int,
               modes=save_model.MODES) -> dict[str, list[dict]]:
    """:func:`spark_run` for several output modes, side by side where that is safe."""
    reference_answer()
    return side_by_side(spark, {mode: functools.partial(spark_run, spark, batches, mode, delay)
                                for mode in modes})


# -- fresh streams ----------------------------------------------------------------------------------
def random_stream(rng: random.Random, batches: tuple[int, int] = (3, 4),
                  events: tuple[int, int] = (1, 3)) -> list[list[int]]:
    """A small stream that moves forward in time with some late events mixed in."""
    stream, clock = [], 0
    for _ in range(rng.randint(*batches)):
        clock += rng.randint(3, 14)
        batch = []
        for _ in range(rng.randint(*events)):
            late = rng.random() < 0.3
            batch.append(max(0, clock - rng.randint(10, 25)) if late else clock + rng.randint(0, 4))
        stream.append(batch)
    return stream


def random_case(seed: int) -> tuple[list[list[int]], int]:
    """The stream and delay a seed stands for."""
    return _drawn_case(random.Random(seed))


def _drawn_case(rng: random.Random) -> tuple[list[list[int]], int]:
    return random_stream(rng), rng.choice([0, 5, 10])


#: Streams every graded check runs besides the seed's, each with its delay, chosen so that a
#: belief the chapter warns about fails on it whatever the seed (docs/grading-quality.md
#: lists each task's boundaries and the stream that sits on each):
#: * a data micro-batch that does not move the watermark (no no-data micro-batch after it),
#:   a late row in a batch that does not move it, and a last micro-batch of late rows only:
#:   two of one window (one group dropped, not two), one of them on the window's first
#:   second (the window it falls in ends 10 s later, not at it), and one of another window
#:   (two groups dropped in one micro-batch: numRowsDroppedByWatermark counts 2, not 1);
#: * a first micro-batch whose only event is at T0 with a delay of 0: the watermark moves
#:   from Spark's start (the epoch, long before T0) to T0 itself, so a no-data micro-batch
#:   follows; a window that ends exactly at the watermark (late, and expired); a micro-batch
#:   whose latest event is below an earlier one's, then a late row measured from the
#:   earlier, larger one, in a batch that moves the watermark;
#: * a watermark past a window's start but not its end (the window stays open), and an
#:   event that is late only by the latest event of an earlier micro-batch;
#: * a micro-batch whose latest event minus the delay is exactly the watermark (the second
#:   15 with a delay of 0, after the first set it to 15): the watermark moves only when the
#:   new value is greater (``>``, not ``>=``), so no no-data micro-batch follows it (5
#:   micro-batches, not 6); and a stream that drops nothing with a delay of 0, so its
#:   smallest delay is 0 (a search that starts at 1 never says so).
#: * micro-batches with no rows, one right after the first and one right after a no-data
#:   micro-batch: Spark runs each (Complete mode emits the whole state in it); a window that
#:   ends one second after the watermark (still open) gets rows that are behind the
#:   watermark but not late; the micro-batch that sets that watermark lists its latest event
#:   first (the watermark is its latest event's, not its last one's).
EDGE_STREAMS = [([[20, 22], [5, 21], [40], [0, 7, 15]], 10),
                ([[0], [5, 20], [10], [31, 3]], 0),
                ([[3, 8], [15], [9]], 2),
                ([[5], [15], [15]], 0),
                ([[5], [], [24, 14], [], [10, 19, 20]], 5)]


# -- the inputs the tasks allow ----------------------------------------------------------------
def window_end(event: int, size: int = WINDOW) -> int:
    return event // size * size + size


def watermarks(batches: list[list[int]], delay: int) -> list[int | None]:
    """The watermark each micro-batch runs with, by the tasks' rule: not moved (None) in the
    first; then the latest event seen minus the delay, never going back."""
    marks, latest = [], None
    for events in batches:
        marks.append(None if latest is None else latest - delay)
        if events:
            latest = max(events) if latest is None else max(latest, *events)
    return marks


def _later_batches(batches, delay):
    """(index, events, the watermark they run with, the latest event before them) of every
    micro-batch that runs with a watermark."""
    return [(i, events, mark, max(e for earlier in batches[:i] for e in earlier))
            for i, (events, mark) in enumerate(zip(batches, watermarks(batches, delay)))
            if mark is not None]


def _reached(batches, delay) -> set[int]:
    return {mark for mark in watermarks(batches + [[]], delay) if mark is not None}


_A_STREAM = "a stream is a list of micro-batches, each a list of event times in whole seconds"
_LATE = "a window is late once the watermark reaches its end"
#: The kinds of stream and delay tasks 1, 2 and 4 allow, each held by a stream of
#: EDGE_STREAMS (the inputs of a case are its stream and delay).
STREAM_DIMENSIONS = (
    Dimension("a micro-batch with no rows", _A_STREAM,
              lambda about: any(not events for events in about[0])),
    Dimension("a micro-batch that does not move the watermark",
              "the watermark becomes the latest event seen minus the delay, and never goes back",
              lambda about: any(events and max(events) <= latest
                                for _, events, _, latest in _later_batches(*about[:2]))),
    Dimension("a micro-batch of late rows only", _LATE,
              lambda about: any(events and all(window_end(e) <= mark for e in events)
                                for _, events, mark, _ in _later_batches(*about[:2]))),
    Dimension("a window that ends exactly at a watermark the stream reaches", _LATE,
              lambda about: any(window_end(e) in _reached(*about[:2])
                                for events in about[0] for e in events)),
    Dimension("a watermark past a window's start but not its end", _LATE,
              lambda about: any(e // WINDOW * WINDOW < mark < window_end(e)
                                for events in about[0] for e in events
                                for mark in _reached(*about[:2]))),
    Dimension("an event behind the watermark in a window that ends one second after it",
              _LATE, lambda about: any(e < mark and window_end(e) == mark + 1
                                       for _, events, mark, _ in _later_batches(*about[:2])
                                       for e in events)),
    Dimension("a micro-batch whose latest event minus the delay is the watermark it runs with",
              "the watermark becomes the latest event seen minus the delay: it moves only when "
              "that is greater",
              lambda about: any(events and max(events) - about[1] == mark
                                for _, events, mark, _ in _later_batches(*about[:2]))),
    Dimension("a micro-batch whose latest event is below the previous micro-batch's",
              "the watermark never goes back",
              lambda about: any(events and max(events) < max(about[0][i - 1], default=-1)
                                for i, events, _, _ in _later_batches(*about[:2]) if i)),
    Dimension("an event its own micro-batch's latest event would make late",
              "a micro-batch runs with the watermark of the micro-batches before it",
              lambda about: any(window_end(e) <= max(events) - about[1]
                                for events in about[0] for e in events)),
    Dimension("a window the watermark passes after it got rows", _LATE,
              lambda about: any(window_end(e) <= max(_reached(*about[:2]), default=-1)
                                for events in about[0] for e in events)),
    Dimension("a window that gets rows in two micro-batches",
              "Append emits a window once; Update each time a micro-batch changes it",
              lambda about: any(len({i for i, events in enumerate(about[0])
                                     if any(window_end(e) == end for e in events)}) > 1
                                for end in {window_end(e) for events in about[0] for e in events})),
    Dimension("two late rows of one window in one micro-batch",
              "the operator counts groups (one per window of the batch), not events",
              lambda about: any(len([e for e in events if window_end(e) <= mark])
                                > len({window_end(e) for e in events if window_end(e) <= mark})
                                for _, events, mark, _ in _later_batches(*about[:2]))),
    Dimension("two late windows in one micro-batch",
              "the operator counts groups (one per window of the batch), not events",
              lambda about: any(len({window_end(e) for e in events if window_end(e) <= mark}) > 1
                                for _, events, mark, _ in _later_batches(*about[:2]))),
    Dimension("an event on a window's first second",
              "a window is named by its start: [10, 20) holds 10, not 20",
              lambda about: any(e % WINDOW == 0 for events in about[0] for e in events)),
    Dimension("two events of one window in one micro-batch",
              "the operator counts groups (one per window of the batch), not events",
              lambda about: any(len({window_end(e) for e in events}) < len(events)
                                for events in about[0])),
    Dimension("events out of order within a micro-batch", _A_STREAM,
              lambda about: any(events != sorted(events) for events in about[0])),
    Dimension("an event at the stream's start, second 0", _A_STREAM,
              lambda about: any(0 in events for events in about[0])),
    Dimension("a delay of 0", "the delay is a whole number of seconds, 0 or more",
              lambda about: about[1] == 0),
)
#: The kinds of stream task 3 allows (its inputs are the stream alone: the delay is the answer).
DELAY_DIMENSIONS = (
    Dimension("a micro-batch with no rows", _A_STREAM,
              lambda batches: any(not events for events in batches)),
    Dimension("a stream nothing is late in, whatever the delay (the answer is 0)", _LATE,
              lambda batches: all(window_end(e) > latest for _, events, _, latest
                                  in _later_batches(batches, 0) for e in events)),
    Dimension("an event behind a later event of its own micro-batch by more than a window",
              "the watermark a micro-batch runs with comes from the micro-batches before it",
              lambda batches: any(window_end(e) <= max(events) for events in batches
                                  for e in events)),
    Dimension("a micro-batch followed by an event later than any before it",
              "the watermark is the latest event seen so far, not the stream's latest",
              lambda batches: any(events and max((e for later in batches[i + 1:] for e in later),
                                                 default=-1)
                                  > max((e for earlier in batches[:i] for e in earlier), default=-1)
                                  for i, events in enumerate(batches) if i)),
    Dimension("an event on a window's first second",
              "a window is named by its start: [10, 20) holds 10, not 20",
              lambda batches: any(e % WINDOW == 0 for events in batches[1:] for e in events)),
    Dimension("events out of order within a micro-batch", _A_STREAM,
              lambda batches: any(events != sorted(events) for events in batches)),
    Dimension("a late event whose latest earlier event is not in the micro-batch just before",
              "the watermark is the latest event seen, not the previous micro-batch's",
              lambda batches: any(max(batches[i - 1], default=-1) < latest
                                  and any(window_end(e) <= latest for e in events)
                                  for i, events, _, latest in _later_batches(batches, 0))),
)
INPUT_DIMENSIONS = {"check_predicted_output": STREAM_DIMENSIONS,
                    "check_predicted_metrics": STREAM_DIMENSIONS,
                    "check_update_step": STREAM_DIMENSIONS,
                    "check_smallest_delay": DELAY_DIMENSIONS}


def _streams(seed: int | None, example: bool) -> list[tuple[list[list[int]], int, str]]:
    """The streams a check runs: the chapter's example; or the edge streams and the seed's."""
    return [(batches, delay, origin) for origin, (batches, delay) in cases(
        seed, example, the_example=[(EXAMPLE_BATCHES, EXAMPLE_DELAY)], fixed=EDGE_STREAMS,
        drawn_from=lambda rng: [_drawn_case(rng)])]


def _cases(*, seed: int, example: bool) -> list[Case]:
    """The cases of tasks 1 and 2, ``[batches, delay, origin]`` each, run in the three modes
    (a lesson names the mode: :func:`describe`)."""
    return [Case(describe(batches, delay, origin), [batches, delay, origin])
            for batches, delay, origin in _streams(seed, example)]


def describe(batches, delay, origin, mode=None) -> str:
    mode_text = f"{mode} mode, " if mode else ""
    return f"{mode_text}events per micro-batch {batches}, delay {delay} s ({origin})"


def _ask(fn, *args, what: str, context: str):
    """Call the learner's function on copies of the inputs; its answer as plain data."""
    return plain(ask(fn, *[_copy(a) for a in args], what=what, context=context), what)


def _copy(value):
    return [_copy(v) for v in value] if isinstance(value, list) else value


def _per_batch(answer, truth: list[dict], context: str) -> list:
    """The answer as one entry per micro-batch Spark ran, no-data ones included."""
    return answer_per_batch(answer, len(truth), "the answer", context,
                            kinds=_batch_kinds(truth), revisit=REVISIT_NO_DATA)


def _batch_kinds(truth: list[dict]) -> list[str]:
    return ["no-data" if t["input_rows"] == 0 and i and _moved(truth, i) else "data"
            for i, t in enumerate(truth)]


def _moved(truth, i) -> bool:
    return truth[i]["watermark"] != truth[i - 1]["watermark"]


def _asking_per_mode(what: str):
    """The asking half of tasks 1 and 2: ``predict(batches, mode, delay)`` in every mode, as
    plain data, all three before any is compared."""
    def ask_case(predict, case: Case, answers: Answers) -> None:
        batches, delay, origin = case.about
        for mode in save_model.MODES:
            answers.add(_ask(predict, batches, mode, delay, what=what,
                             context=describe(batches, delay, origin, mode)))
    return ask_case


def _judging_per_mode(compare):
    """The judging half of tasks 1 and 2: Spark runs the stream in the three modes, and
    ``compare(mine, did, context, mode)`` is called for every micro-batch Spark ran."""
    def judge_case(case: Case, answers: Answers) -> None:
        batches, delay, origin = case.about
        mine = {mode: answers.next() for mode in save_model.MODES}
        # The judge's session is None: side_by_side then asks one mode after the other,
        # each answer the recorded one.
        truth = spark_runs(spark_for_truth(), batches, delay)
        for mode in save_model.MODES:
            context = describe(batches, delay, origin, mode)
            for entry, did in zip(_per_batch(mine[mode], truth[mode], context), truth[mode]):
                compare(entry, did, context, mode)
    return judge_case


def in_order(rows: list) -> list:
    """The learner's rows in the order Spark's are compared in; rows that do not sort (of
    mixed kinds, which cannot be right) in the order of their text, rather than an error."""
    try:
        return sorted(rows)
    except TypeError:
        return sorted(rows, key=repr)


# -- task 1: what each micro-batch emits ------------------------------------------------------------
def _compare_output(mine, did, context, mode) -> None:
    check_equal(in_order(mine) if isinstance(mine, list) else mine, did["output"],
                "the [window start, count] rows this micro-batch emitted",
                batch=did["batch_id"], revisit=REVISIT[mode], context=context)


@declared(
    cases=_cases,
    ask=_asking_per_mode("predict_output"), judge=_judging_per_mode(_compare_output),
    passed=lambda cases: f"your predicted output matches Spark in all three modes "
                         f"({len(cases)} streams)")
def check_predicted_output(predict: Callable[[list[list[int]], str, int], list], *,
                           seed: int | None = None, example: bool = False) -> None:
    """``predict(batches, mode, delay)`` gives, for every micro-batch Spark runs (no-data
    ones included), the rows it emits: a list of ``[window start, count]`` (in any order)."""


# -- task 2: the row counts of every micro-batch ----------------------------------------------------
def _compare_metrics(mine, did, context, mode) -> None:
    mine = batch_dict(mine, did["batch_id"], context, revisit=REVISIT_METRICS)
    for name in METRIC_NAMES:
        check_equal(mine.get(name), did["metrics"][name], name,
                    batch=did["batch_id"], revisit=REVISIT_METRICS, context=context)


@declared(
    cases=_cases,
    ask=_asking_per_mode("predict_metrics"), judge=_judging_per_mode(_compare_metrics),
    passed=lambda cases: f"your predicted row counts match Spark in all three modes "
                         f"({len(cases)} streams)")
def check_predicted_metrics(predict: Callable[[list[list[int]], str, int], list], *,
                            seed: int | None = None, example: bool = False) -> None:
    """``predict(batches, mode, delay)`` gives, for every micro-batch Spark runs, a dict of
    ``numRowsTotal``, ``numRowsUpdated``, ``numRowsRemoved``, ``numRowsDroppedByWatermark``."""


# -- task 3: choosing the watermark delay -----------------------------------------------------------
EXAMPLE_DELAY_BATCHES = [[3, 12], [24, 6], [33, 17]]


def dropped_rows(facts: list[dict]) -> int:
    return sum(batch["metrics"]["numRowsDroppedByWatermark"] for batch in facts)


def _delay_cases(*, seed: int, example: bool) -> list[Case]:
    """The streams ``choose`` is asked about, each case's ``about`` its batches."""
    return [Case(f"append mode, events per micro-batch {batches} ({origin})", batches)
            for origin, batches in cases(
                seed, example, the_example=[EXAMPLE_DELAY_BATCHES],
                fixed=[batches for batches, _ in EDGE_STREAMS],
                drawn_from=lambda rng: [_drawn_case(rng)[0]])]


def _whole_delay(delay, context: str) -> int:
    """The learner's delay as an int, or the lesson that it is not a whole number >= 0."""
    if type(delay) is float and delay.is_integer():
        delay = int(delay)
    if type(delay) is not int or delay < 0:
        raise CheckFailed("the delay must be a whole number of seconds, 0 or more",
                          "an int >= 0", delay, context=context)
    return delay


def _ask_delay(choose, case: Case, answers: Answers) -> None:
    """The learner's delay, then what Spark drops from the stream with it.

    Which delay Spark runs with is the learner's choice, so the solution's run may not have
    recorded that run; a lesson then needs Spark's count of dropped groups (the judge
    decides whether anything is dropped from the runs the solution's run recorded, see
    :func:`_judge_delay`). The facts of a run of the learner's own choosing are no secret:
    the kernel runs it when the chapter's model (:mod:`autograder.chapters.save_model`) expects
    something dropped, and records Spark's count; when the model expects nothing dropped it
    runs nothing (a right delay costs no Spark run) and records None.
    """
    batches, context = case.about, case.label
    delay = _whole_delay(_ask(choose, batches, what="smallest_delay", context=context), context)
    answers.add(delay)
    expected = sum(batch.metrics["numRowsDroppedByWatermark"]
                   for batch in save_model.run(batches, "append", delay, WINDOW))
    answers.add(dropped_rows(spark_run(course_session(), batches, "append", delay))
                if expected else None)


def _judge_delay(case: Case, answers: Answers) -> None:
    batches, context = case.about, case.label
    delay = _whole_delay(answers.next(), context)
    counted = answers.next()
    dropped = _dropped_with(batches, [delay] + ([delay - 1] if delay > 0 else []))
    if dropped[delay] is None:
        dropped[delay] = _dropped_beyond_the_record(batches, delay, counted, context)
    check_equal(dropped[delay], 0,
                f"groups dropped by the watermark with a delay of {delay} s",
                revisit=REVISIT_DELAY, context=context)
    if delay > 0 and (dropped[delay - 1] == 0 if dropped[delay - 1] is not None
                      else _nothing_dropped(batches, delay - 1)):
        raise CheckFailed(f"with {delay - 1} s nothing is dropped either: your delay is "
                          "not the smallest", f"a delay below {delay}", delay,
                          revisit=REVISIT_DELAY, context=context)


def _dropped_with(batches: list[list[int]], delays: list[int]) -> dict[int, int | None]:
    """The groups Spark drops from the stream in Append mode with each delay: asked of
    Spark (a self-check, side by side), or the solution's run's record of it (the grading
    command's judge; None for a delay it did not run)."""
    spark = spark_for_truth()
    if spark is None:
        return _recorded_drops(batches, delays)
    runs = side_by_side(spark, {d: functools.partial(spark_run, spark, batches, "append", d)
                                for d in delays})
    return {d: dropped_rows(facts) for d, facts in runs.items()}


def _recorded_drops(batches: list[list[int]], delays) -> dict[int, int | None]:
    """In the grading command's judge: the groups dropped with each delay as the solution's
    run recorded them (None for a delay it did not run)."""
    found: dict[int, int | None] = {}
    for d in delays:
        try:
            found[d] = dropped_rows(spark_run(None, batches, "append", d))
        except GraderFault:
            found[d] = None  # not recorded: not one the solution's run ran
    return found


def _nothing_dropped(batches: list[list[int]], delay: int) -> bool:
    """Whether Spark drops nothing with ``delay``, from the delays the solution's run
    recorded (the judge's: a learner's delay may be one it never ran).

    A longer delay holds the watermark of every micro-batch further back, so it drops a part
    of what a shorter one drops: nothing dropped with a recorded delay at or below
    ``delay`` means nothing dropped with it; something dropped with one at or above it
    means something dropped with it. The solution's run records its own smallest delay and
    the one a second shorter, so every delay is one or the other.
    """
    latest = max((event for events in batches for event in events), default=0)
    recorded = {d: n for d, n in _recorded_drops(batches, range(latest + WINDOW + 2)).items()
                if n is not None}
    if any(n == 0 and d <= delay for d, n in recorded.items()):
        return True
    if any(n > 0 and d >= delay for d, n in recorded.items()):
        return False
    raise GraderFault("the solution's run recorded no answer of Spark to "
                      f"state_store_save.spark_run in Append mode for the stream {batches} "
                      f"that tells what a delay of {delay} s drops: grade this class again")


def _dropped_beyond_the_record(batches: list[list[int]], delay: int, counted,
                               context: str) -> int:
    """What Spark drops with a delay the solution's run did not run: nothing, or (the lesson
    shows it) the count the learner's kernel had Spark make (:func:`_ask_delay`)."""
    if _nothing_dropped(batches, delay):
        return 0
    if counted is None:
        expected = sum(batch.metrics["numRowsDroppedByWatermark"]
                       for batch in save_model.run(batches, "append", delay, WINDOW))
        if not expected:
            raise GraderFault(f"the chapter's model drops nothing from {batches} with a delay "
                              f"of {delay} s, Spark drops groups: the kernel asked no count")
    if type(counted) is not int or counted <= 0:
        raise CheckFailed("the record of your answers",
                          "the groups Spark dropped with your delay, as the check counted them",
                          counted, context=context)
    return counted


@declared(
    cases=_delay_cases, ask=_ask_delay,
    judge=_judge_delay,
    passed=lambda cases: f"your delays are the smallest that drop nothing "
                         f"({len(cases)} stream(s))")
def check_smallest_delay(choose: Callable[[list[list[int]]], int], *, seed: int | None = None,
                         example: bool = False) -> None:
    """``choose(batches)`` gives the smallest delay, in whole seconds, for which the
    append-mode query drops nothing from this stream.

    Spark runs the query with that delay (nothing may be dropped) and with one second less
    (something must be dropped, or the delay was not the smallest).
    """


# -- task 4: the Update-mode step of the model ------------------------------------------------------
def _update_cases(*, seed: int, example: bool) -> list[Case]:
    return [Case(describe(batches, delay, origin, "update"), [batches, delay])
            for batches, delay, origin in _streams(seed, example)]


def _ask_update_step(step, case: Case, answers: Answers) -> None:
    """The model driven by the learner's step over the whole stream: each micro-batch's
    ``[output, metrics]``, as plain data."""
    batches, delay = case.about
    context = case.label

    def learner_step(state, events, watermark, size):
        answer = ask(step, dict(state), list(events), watermark, size, what="update_step",
                     context=context)
        if not (isinstance(answer, (tuple, list)) and len(answer) == 3):
            raise CheckFailed("update_step must return (output, new_state, metrics)",
                              "a tuple of three", type(answer).__name__, context=context)
        output, new_state, metrics = answer
        return (plain(output, "update_step's output"), _int_dict(new_state, context),
                plain(metrics, "update_step's metrics"))

    model = save_model.run(batches, "update", delay, step=learner_step)
    answers.add([[mine.output, mine.metrics] for mine in model])


def _judge_update_step(case: Case, answers: Answers) -> None:
    batches, delay = case.about
    context = case.label
    model = answers.next()
    if type(model) is not list or not all(type(m) is list and len(m) == 2 for m in model):
        raise CheckFailed("the record of your answers", "[output, metrics] per micro-batch",
                          "something else", context=context)
    truth = spark_run(spark_for_truth(), batches, "update", delay)
    check_equal(len(model), len(truth), f"how many micro-batches your step's model ran "
                f"(Spark ran: {_batch_kinds(truth)})", revisit=REVISIT_NO_DATA,
                context=context)
    for (output, metrics), did in zip(model, truth):
        check_equal(in_order(output) if isinstance(output, list) else output, did["output"],
                    "the [window start, count] rows emitted (your step, driven by the model)",
                    batch=did["batch_id"], revisit=REVISIT["update"], context=context)
        for name in METRIC_NAMES:
            got = metrics.get(name) if isinstance(metrics, dict) else metrics
            check_equal(got, did["metrics"][name], name, batch=did["batch_id"],
                        revisit=REVISIT_METRICS, context=context)


@declared(
    cases=_update_cases, ask=_ask_update_step,
    judge=_judge_update_step,
    passed=lambda cases: f"your Update step agrees with Spark on every micro-batch "
                         f"({len(cases)} streams)")
def check_update_step(step: save_model.Step, *, seed: int | None = None,
                      example: bool = False) -> None:
    """``step(state, events, watermark, size)`` must do one Update-mode micro-batch; the
    model driven by it must agree with Spark on output and row counts, batch by batch."""


def _int_dict(value, context: str) -> dict[int, int]:
    """The model's state, ``{window start: count}``, with whole numbers of any kind."""
    import numbers
    from collections.abc import Mapping

    def whole(x) -> bool:
        return (isinstance(x, numbers.Integral) and not isinstance(x, bool)) or \
            (isinstance(x, float) and x.is_integer())

    if not isinstance(value, Mapping) or not all(whole(k) and whole(v) for k, v in value.items()):
        raise CheckFailed("the new state must be a dict {window start: count} of ints",
                          "a dict of ints", repr(value)[:200], context=context)
    return {int(k): int(v) for k, v in dict(value).items()}

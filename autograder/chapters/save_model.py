"""A small executable model of StateStoreSaveExec, the operator that writes a streaming
aggregation's state (chapter 3, "StateStoreSaveExec in Append, Complete and Update modes").

It models exactly one query, the chapter's windowed count::

    events.withWatermark("ts", f"{delay} seconds") \\
          .groupBy(F.window("ts", f"{size} seconds")).count()

Time is counted in whole **seconds after the start of the stream** (the chapter's
``T0``), so an event is just an ``int`` and a window is named by its start. The state is
a dict ``{window start: count}``, the same thing the state store holds (section "What a
state row holds").

One *step* is what the operator does in one micro-batch, given the batch's rows and the
watermark the batch runs with (``None`` before the watermark has ever moved)::

    step(state, events, watermark, size) -> (output, new_state, metrics)

* ``output``: the rows the micro-batch emits, ``[[window start, count], ...]`` sorted;
* ``new_state``: the state after the batch (the input ``state`` is not changed);
* ``metrics``: the four row counts of the progress report's ``stateOperators`` entry:
  ``numRowsTotal``, ``numRowsUpdated``, ``numRowsRemoved``, ``numRowsDroppedByWatermark``.

There is one step per output mode (:func:`append_step`, :func:`update_step`,
:func:`complete_step`). :func:`run` drives a whole stream: it moves the watermark between
micro-batches and adds the **no-data micro-batch** Spark runs when the watermark moved in
Append and Update modes (section "No-data micro-batches").

What the model leaves out, on purpose: timings and memory (``allUpdatesTimeMs``,
``commitTimeMs``, ``memoryUsedBytes``, ...), partitions, restarts, other aggregates.
The test ``tests/chapters/test_state_store_save_model.py`` checks the model against real Spark on
random streams, batch by batch.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Callable

from ..checks.checking import reference_answer

#: The output modes, as ``DataStreamWriter.outputMode`` spells them.
MODES = ("append", "update", "complete")

#: The row counts the model predicts, as the progress report names them.
METRIC_NAMES = ("numRowsTotal", "numRowsUpdated", "numRowsRemoved", "numRowsDroppedByWatermark")

State = dict[int, int]
Step = Callable[[State, list[int], "int | None", int], tuple[list, State, dict]]


def window_of(event: int, size: int) -> int:
    """The start of the tumbling window an event falls in (``window(ts, size)``)."""
    return event - event % size


def is_expired(start: int, watermark: int | None, size: int) -> bool:
    """A window is behind the watermark once its end is at or before it."""
    return watermark is not None and start + size <= watermark


def _metrics(total: int, updated: int = 0, removed: int = 0, dropped: int = 0) -> dict:
    return {"numRowsTotal": total, "numRowsUpdated": updated,
            "numRowsRemoved": removed, "numRowsDroppedByWatermark": dropped}


def _groups(events: list[int], size: int) -> Counter:
    """The partial counts that reach the operator: one per window seen in the batch."""
    return Counter(window_of(event, size) for event in events)


# -- one micro-batch, per output mode --------------------------------------------------------
def append_step(state: State, events: list[int], watermark: int | None, size: int):
    """Append: drop late groups, store the rest, then emit and remove every expired window.

    A window is emitted once, with its final count, in the micro-batch whose watermark
    passes its end, and leaves the state at that moment.
    """
    reference_answer()
    new_state, updated, dropped = dict(state), 0, 0
    for start, count in sorted(_groups(events, size).items()):
        if is_expired(start, watermark, size):
            dropped += 1                   # a late group: neither stored nor emitted
            continue
        new_state[start] = new_state.get(start, 0) + count
        updated += 1
    expired = sorted(start for start in new_state if is_expired(start, watermark, size))
    output = [[start, new_state.pop(start)] for start in expired]
    return output, new_state, _metrics(len(new_state), updated, len(expired), dropped)


def update_step(state: State, events: list[int], watermark: int | None, size: int):
    """Update: drop late groups, store and emit the rest, then remove expired windows.

    Only the windows this batch changed are emitted (with their new counts); expired
    windows leave the state silently.
    """
    reference_answer()
    new_state, output, dropped = dict(state), [], 0
    for start, count in sorted(_groups(events, size).items()):
        if is_expired(start, watermark, size):
            dropped += 1
            continue
        new_state[start] = new_state.get(start, 0) + count
        output.append([start, new_state[start]])
    expired = [start for start in new_state if is_expired(start, watermark, size)]
    for start in expired:
        del new_state[start]
    return output, new_state, _metrics(len(new_state), len(output), len(expired), dropped)


def complete_step(state: State, events: list[int], watermark: int | None, size: int):
    """Complete: store every group, drop nothing, remove nothing, emit the whole state."""
    reference_answer()
    new_state = dict(state)
    groups = _groups(events, size)
    for start, count in groups.items():
        new_state[start] = new_state.get(start, 0) + count
    output = [[start, new_state[start]] for start in sorted(new_state)]
    return output, new_state, _metrics(len(new_state), len(groups))


STEPS: dict[str, Step] = {"append": append_step, "update": update_step,
                          "complete": complete_step}


# -- a whole stream ------------------------------------------------------------------------
@dataclass
class ModelBatch:
    """What the model says one micro-batch does."""

    batch_id: int
    input_rows: int
    watermark: int | None
    output: list[list[int]]
    metrics: dict[str, int]
    state: State = field(repr=False)
    #: True for the extra micro-batch Spark runs only because the watermark moved.
    no_data: bool = False


def next_watermark(watermark: int | None, events: list[int], delay: int) -> int | None:
    """The watermark after a batch: the latest event minus the delay, never moving back."""
    if not events:
        return watermark
    candidate = max(events) - delay
    return candidate if watermark is None else max(watermark, candidate)


def run(batches: list[list[int]], mode: str, delay: int, size: int = 10,
        step: Step | None = None) -> list[ModelBatch]:
    """Every micro-batch Spark runs for this stream, in order, as the model sees it.

    ``batches`` are the events added one micro-batch at a time. After a batch that moves
    the watermark, Append and Update modes run one more micro-batch with no input, with
    the new watermark (Complete mode does not: nothing in it depends on the watermark).
    ``step`` replaces the mode's step function (the exercises plug theirs in here).
    """
    reference_answer()
    if mode not in STEPS:
        raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
    step = step or STEPS[mode]
    state: State = {}
    watermark: int | None = None
    done: list[ModelBatch] = []

    def one(events: list[int], no_data: bool = False) -> None:
        nonlocal state
        output, state, metrics = step(dict(state), list(events), watermark, size)
        done.append(ModelBatch(len(done), len(events), watermark, output, metrics,
                               dict(state), no_data))

    for events in batches:
        one(events)
        moved = next_watermark(watermark, events, delay)
        if moved != watermark:
            watermark = moved
            if mode != "complete":
                one([], no_data=True)        # the no-data micro-batch
    return done

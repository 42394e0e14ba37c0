"""The micro-batch stepper: replay a finished stream one micro-batch at a time.

A streaming query is a sequence of micro-batches, and every idea in the course is about
what one micro-batch changes: which rows came in, what the watermark was, what the state
store holds afterwards, what reached the sink, and what the progress report counted. The
stepper lays those five things side by side for each micro-batch, with a slider (and a
play button) to move from one micro-batch to the next::

    with StreamRun(spark, "id INT", lambda df: df.limit(3)) as run:
        steps = record_steps(run, [[(1,), (2,)], [(3,), (4,)], [(5,)]])
    stepper(steps)

:func:`record_steps` feeds the batches and keeps, for each micro-batch that ran, the rows
that went in and the state rows as that micro-batch committed them. :func:`stepper` turns
recordings into a widget (each micro-batch drawn by :mod:`autograder.widgets.step_view`). Several
recordings given as a dict (say, one per output mode) become tabs that share one slider.

The widget needs no running Python: every micro-batch's view is computed in advance and
the slider shows one of them (``jslink`` ties the slider to a ``Stack`` in the browser),
so it also works on the book's static pages, where no kernel is running.
"""
from __future__ import annotations

import html
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Callable, Iterable, Mapping, Sequence

import ipywidgets as widgets
from pyspark.sql import Row

from ..toolkit.driver import BatchRecord, StreamRun
from .step_view import Show, Step, is_no_data_batch, note_html, step_html

#: How a state snapshot is read: the run and the micro-batch, to the rows it committed.
StateReader = Callable[[StreamRun, BatchRecord], "list[Row]"]


@dataclass
class Recording:
    """The micro-batches of one run, in order, with a title (its output mode by default).

    ``input_columns`` names the columns of input rows given as tuples (the run's schema).
    """

    title: str
    steps: list[Step] = field(default_factory=list)
    input_columns: tuple[str, ...] | None = None


def state_at_batch(**options: Any) -> StateReader:
    """A state reader: the rows the state store held once the micro-batch committed.

    The options go to :meth:`StreamRun.state` (``operatorId=1``, ``stateVarName="count"``,
    ...). The state is read at the micro-batch's own version (``batchId``), so the snapshot
    is right even for the no-data micro-batch Spark may run right after a data one.
    """
    def read(run: StreamRun, batch: BatchRecord) -> list[Row]:
        return run.state(batchId=batch.batch_id, **options)
    return read


def record_steps(run: StreamRun, batches: Iterable[Sequence[Any]], *,
                 state: bool | StateReader = True, title: str | None = None,
                 **state_options: Any) -> Recording:
    """Feed ``batches`` to a running ``run`` one by one, keeping what the stepper shows.

    For each micro-batch that runs, the recording keeps its :class:`BatchRecord`, the rows
    that went in, and a snapshot of the state store. ``state=False`` takes no snapshot (a
    query without a stateful operator has no state store); a function ``(run, batch) ->
    rows`` reads the snapshot another way; otherwise ``state_options`` choose the store
    (see :func:`state_at_batch`). A no-data micro-batch (Spark runs one when the watermark
    moved and state can be evicted) is recorded with no input rows.
    """
    if run.query is None:
        run.start()
    read_state = state if callable(state) else (state_at_batch(**state_options) if state
                                                  else None)
    recording = Recording(title or run.name or run.output_mode,
                          input_columns=schema_columns(run.schema))
    for rows in batches:
        rows = list(rows)
        for position, batch in enumerate(run.add_batch(rows)):
            recording.steps.append(Step(
                batch,
                input=rows if position == 0 else [],
                state=read_state(run, batch) if read_state else None,
            ))
    return recording


def schema_columns(schema: str) -> tuple[str, ...]:
    """The column names of a schema written as DDL (``"id INT, ts TIMESTAMP"``)."""
    return tuple(part.strip().split()[0] for part in schema.split(","))


def as_recording(recorded: Recording | StreamRun | Sequence[BatchRecord] | Sequence[Step],
                 states: Sequence[list[Row] | None] | None = None,
                 title: str | None = None) -> Recording:
    """Whatever was recorded, as a :class:`Recording`.

    A finished :class:`StreamRun` (or its list of batches) gives the batches without their
    input rows; ``states`` adds one state snapshot per batch, in order, when the caller
    captured them with ``run.state()`` after each batch.
    """
    if isinstance(recorded, Recording):
        recording = recorded
    elif isinstance(recorded, StreamRun):
        recording = Recording(title or recorded.name or recorded.output_mode,
                              [Step(batch) for batch in recorded.batches],
                              schema_columns(recorded.schema))
    else:
        items = list(recorded)
        recording = Recording(title or "run", [
            item if isinstance(item, Step) else Step(item) for item in items
        ])
    if states is not None:
        if len(states) != len(recording.steps):
            raise ValueError(
                f"{len(states)} state snapshots for {len(recording.steps)} micro-batches: "
                "give one snapshot per micro-batch (None where there is none)"
            )
        recording = Recording(recording.title, [
            Step(step.batch, step.input, snapshot)
            for step, snapshot in zip(recording.steps, states)
        ], recording.input_columns)
    if title and title != recording.title:
        # the caller's recording is kept as it was
        recording = Recording(title, recording.steps, recording.input_columns)
    return recording


# -- the widget ---------------------------------------------------------------------------
def stepper(recorded: Any, *, states: Sequence[list[Row] | None] | None = None,
            title: str | None = None, interval_ms: int = 1500,
            input_columns: Sequence[str] | None = None,
            start: datetime | None = None, epoch_ms: Sequence[str] = ()) -> widgets.VBox:
    """A widget that shows one micro-batch at a time, with a slider and a play button.

    ``recorded`` is a :class:`Recording` (from :func:`record_steps`), a finished
    :class:`StreamRun`, a list of :class:`BatchRecord`, or a dict of any of these by title
    (``{"append": ..., "update": ...}``), shown as tabs under one slider. ``states`` gives
    the state snapshots of a single run recorded without them. ``input_columns`` names the
    input rows' columns where a recording does not (rows given as tuples), and ``start``,
    the moment the stream's event times count from, shows every time as seconds after it
    (said once under the views). ``epoch_ms`` names the columns of any table whose integers
    are epoch milliseconds (a processor's ``watermark`` and ``timers``): they are shown as
    times too, so that the watermark reads the same in the heading and in the tables.

    Tabs are lined up by their input: at every position of the slider each tab shows the
    micro-batch that read the same input rows, or the same no-data micro-batch after them.
    A run that ran fewer no-data micro-batches there (Complete mode runs none) says so.
    """
    if isinstance(recorded, Mapping):
        if states is not None:
            raise ValueError("give states per run: record each run with record_steps()")
        recordings = [as_recording(value, title=str(key)) for key, value in recorded.items()]
    else:
        recordings = [as_recording(recorded, states, title)]
    if not any(r.steps for r in recordings):
        return widgets.VBox([widgets.HTML("<em>No micro-batch has run yet.</em>")])

    timeline = slider_positions(recordings)
    show = Show(start, epoch_ms)
    by_id = all(
        input_positions(r.steps) == timeline
        and [step.batch.batch_id for step in r.steps] == list(range(len(r.steps)))
        for r in recordings
    )
    # Where the tabs' micro-batch ids differ, the slider names each position by its input,
    # and each view's heading repeats that name beside its own micro-batch id.
    labels = [str(index) if by_id else position_label(position)
              for index, position in enumerate(timeline)]
    stacks = []
    for recording in recordings:
        columns = recording.input_columns or input_columns
        by_position = dict(zip(input_positions(recording.steps), recording.steps))
        stacks.append(widgets.Stack(
            [widgets.HTML(step_html(by_position[position], columns=columns, show=show,
                                    position=None if by_id else label)
                          if position in by_position
                          else _missing_html(recording, position))
             for position, label in zip(timeline, labels)],
            selected_index=0,
        ))
    slider = widgets.SelectionSlider(
        options=labels, index=0, description="micro-batch",
        style={"description_width": "initial"},
        layout=widgets.Layout(width="min(30em, 100%)"),
    )
    if not by_id:
        # Named positions ("input 3, no-data") are wider than a number: the page gives the
        # readout room for the longest, so the track keeps its length as the slider moves.
        slider.add_class("stepper-named-positions")
    play = widgets.Play(value=0, min=0, max=len(timeline) - 1, step=1,
                        interval=interval_ms, description="play")
    # Links that run in the browser: they work on a static page, with no kernel. The
    # slider drives the views first, so they follow it even if the play button fails.
    links = [widgets.jslink((slider, "index"), (stack, "selected_index")) for stack in stacks]
    links.append(widgets.jslink((play, "value"), (slider, "index")))

    if len(stacks) == 1:
        body: widgets.Widget = stacks[0]
    else:
        body = widgets.Tab(stacks, titles=[r.title for r in recordings])
    summary = ", ".join(f"{r.title}: {len(r.steps)} micro-batches" for r in recordings)
    controls = widgets.HBox([play, slider], layout=widgets.Layout(flex_flow="row wrap"))
    legend = show.legend()
    children = [controls, body] + ([widgets.HTML(legend)] if legend else [])
    box = Stepper(children, summary=summary, links=links)
    box.add_class("micro-batch-stepper")
    return box


#: Where a micro-batch stands in its stream: (n, 0) for the micro-batch that read the
#: n-th batch of input rows (from 0), (n, k) for the k-th no-data micro-batch after it.
Position = tuple[int, int]


def input_positions(steps: Sequence[Step]) -> list[Position]:
    """Each step's :data:`Position`: which input it read, or which no-data run after it.

    No-data micro-batches before any input (there are none in practice) count from -1.
    """
    positions, number, after = [], -1, 0
    for step in steps:
        if is_no_data_batch(step.batch):
            after += 1
        else:
            number, after = number + 1, 0
        positions.append((number, after))
    return positions


def slider_positions(recordings: Sequence[Recording]) -> list[Position]:
    """One slider position per input micro-batch and per no-data micro-batch any run ran."""
    return sorted({position for r in recordings for position in input_positions(r.steps)})


def position_label(position: Position) -> str:
    """The slider's readout for a position when the runs' micro-batch ids differ."""
    number, after = position
    if after == 0:
        return f"input {number}"
    return f"input {number}, no-data" + (f" {after}" if after > 1 else "")


class Stepper(widgets.VBox):
    """The stepper's widget: a ``VBox`` (so any page can render it) with a short repr.

    ``links`` are the browser-side links that move it: slider to views, play to slider.
    """

    def __init__(self, children: list[widgets.Widget], *, summary: str,
                 links: list[widgets.Widget]):
        super().__init__(children)
        self._summary = summary
        self.links = links

    def __repr__(self) -> str:
        return f"Stepper({self._summary})"


def _missing_html(recording: Recording, position: Position) -> str:
    """What a tab shows where its run ran no micro-batch and another tab's run did."""
    number, after = position
    title = html.escape(recording.title)
    positions = input_positions(recording.steps)
    earlier = [step for step, at in zip(recording.steps, positions) if at < position]
    later = [step for step, at in zip(recording.steps, positions) if at > position]
    if after == 0:
        said = f"{title}: no micro-batch read input {number} in this run"
    else:
        said = (f"{title}: no no-data micro-batch here; after micro-batch "
                f"{earlier[-1].batch.batch_id} (input {number}) this run went on with "
                + (f"micro-batch {later[0].batch.batch_id}" if later else "no other micro-batch"))
    return note_html(said)

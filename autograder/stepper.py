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
recordings into a widget. Several recordings given as a dict (say, one per output mode)
become tabs that share one slider.

The widget needs no running Python: every micro-batch's view is computed in advance and
the slider shows one of them (``jslink`` ties the slider to a ``Stack`` in the browser),
so it also works on the book's static pages, where no kernel is running.
"""
from __future__ import annotations

import html
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, Callable, Iterable, Mapping, Sequence

import ipywidgets as widgets
from pyspark.sql import Row

from .driver import BatchRecord, StreamRun

#: The state-operator metrics the stepper shows, in this order, when a report has them.
STATE_METRICS = (
    "numRowsTotal", "numRowsUpdated", "numRowsRemoved", "numRowsDroppedByWatermark",
)

#: How a state snapshot is read: the run and the micro-batch, to the rows it committed.
StateReader = Callable[[StreamRun, BatchRecord], "list[Row]"]


@dataclass
class Step:
    """One micro-batch as the stepper shows it.

    ``input`` holds the rows fed to the micro-batch (``None`` when they were not kept), and
    ``state`` the state store's rows as the micro-batch committed them (``None`` when no
    snapshot was taken).
    """

    batch: BatchRecord
    input: list[Any] | None = None
    state: list[Row] | None = None


@dataclass
class Recording:
    """The micro-batches of one run, in order, with a title (its output mode by default)."""

    title: str
    steps: list[Step] = field(default_factory=list)


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
    recording = Recording(title or run.name or run.output_mode)
    for rows in batches:
        rows = list(rows)
        for position, batch in enumerate(run.add_batch(rows)):
            recording.steps.append(Step(
                batch,
                input=rows if position == 0 else [],
                state=read_state(run, batch) if read_state else None,
            ))
    return recording


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
                              [Step(batch) for batch in recorded.batches])
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
        ])
    if title and title != recording.title:
        recording = Recording(title, recording.steps)  # the caller's recording is kept
    return recording


# -- the widget ---------------------------------------------------------------------------
def stepper(recorded: Any, *, states: Sequence[list[Row] | None] | None = None,
            title: str | None = None, interval_ms: int = 1500) -> widgets.VBox:
    """A widget that shows one micro-batch at a time, with a slider and a play button.

    ``recorded`` is a :class:`Recording` (from :func:`record_steps`), a finished
    :class:`StreamRun`, a list of :class:`BatchRecord`, or a dict of any of these by title
    (``{"append": ..., "update": ...}``), shown as tabs under one slider. ``states`` gives
    the state snapshots of a single run recorded without them.
    """
    if isinstance(recorded, Mapping):
        if states is not None:
            raise ValueError("give states per run: record each run with record_steps()")
        recordings = [as_recording(value, title=str(key)) for key, value in recorded.items()]
    else:
        recordings = [as_recording(recorded, states, title)]
    length = max((len(r.steps) for r in recordings), default=0)
    if length == 0:
        return widgets.VBox([widgets.HTML("<em>No micro-batch has run yet.</em>")])

    stacks = [
        widgets.Stack(
            [widgets.HTML(step_html(step)) for step in recording.steps]
            + [widgets.HTML(_missing_html(recording, index))
               for index in range(len(recording.steps), length)],
            selected_index=0,
        )
        for recording in recordings
    ]
    same_ids = all(
        [step.batch.batch_id for step in r.steps] == list(range(len(r.steps)))
        for r in recordings
    )
    slider = widgets.IntSlider(
        value=0, min=0, max=length - 1, step=1,
        description="micro-batch" if same_ids else "step",
        style={"description_width": "initial"},
        layout=widgets.Layout(width="60%"),
    )
    play = widgets.Play(value=0, min=0, max=length - 1, step=1, interval=interval_ms,
                        description="play")
    # Links that run in the browser: they work on a static page, with no kernel. The
    # slider drives the views first, so they follow it even if the play button fails.
    links = [widgets.jslink((slider, "value"), (stack, "selected_index")) for stack in stacks]
    links.append(widgets.jslink((play, "value"), (slider, "value")))

    if len(stacks) == 1:
        body: widgets.Widget = stacks[0]
    else:
        body = widgets.Tab(stacks, titles=[r.title for r in recordings])
    summary = ", ".join(f"{r.title}: {len(r.steps)} micro-batches" for r in recordings)
    box = Stepper([widgets.HBox([play, slider]), body], summary=summary, links=links)
    box.add_class("micro-batch-stepper")
    return box


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


# -- one micro-batch as HTML ----------------------------------------------------------------
def step_html(step: Step) -> str:
    """The view of one micro-batch: input, watermark, state, output and metrics."""
    batch = step.batch
    watermark = batch.watermark
    head = (
        f"<strong>micro-batch {batch.batch_id}</strong>"
        + (" (a no-data micro-batch: Spark ran it because the watermark moved)"
           if is_no_data_batch(batch) else "")
        + " &middot; watermark: "
        + (f"<code>{_text(watermark)}</code>" if watermark else "<em>none</em>")
    )
    if step.input is None:
        input_panel = _panel(f"input ({_rows(batch.input_rows)})",
                             "<em>rows not kept (use record_steps)</em>")
    else:
        input_panel = _panel(f"input ({_rows(len(step.input))})", _table(step.input))
    if step.state is None:
        state_panel = _panel("state store", "<em>no snapshot</em>")
    else:
        state_panel = _panel(f"state store after the batch ({_rows(len(step.state))})",
                             _table(step.state))
    output_panel = _panel(f"output ({_rows(len(batch.output))})", _table(batch.output))
    metrics_panel = _panel("metrics", _metrics_table(batch))
    panels = "".join([input_panel, state_panel, output_panel, metrics_panel])
    return (
        f'<div class="stepper-step" data-batch-id="{batch.batch_id}" '
        'style="font-size:0.9em;line-height:1.4">'
        f'<div style="margin:0.3em 0">{head}</div>'
        f'<div style="display:flex;flex-wrap:wrap;gap:0.8em;align-items:flex-start">'
        f"{panels}</div></div>"
    )


def is_no_data_batch(batch: BatchRecord) -> bool:
    """Whether Spark ran this micro-batch with no new input (to move the watermark on).

    A micro-batch that read new data, even an empty file, moved its sources' offsets; a
    no-data micro-batch starts and ends at the same offsets.
    """
    sources = batch.progress.get("sources", [])
    return bool(sources) and all(
        source.get("startOffset") == source.get("endOffset") for source in sources
    )


def _missing_html(recording: Recording, index: int) -> str:
    return (f'<div class="stepper-step" data-batch-id="">'
            f"<em>{_text(recording.title)}: no step {index} (this run had "
            f"{len(recording.steps)} micro-batches)</em></div>")


def _metrics_table(batch: BatchRecord) -> str:
    rows: list[tuple[str, Any]] = [("numInputRows", batch.input_rows)]
    for number, operator in enumerate(batch.state_operators):
        prefix = operator.get("operatorName", f"operator {number}")
        rows += [(f"{prefix}.{name}", operator[name])
                 for name in STATE_METRICS if name in operator]
    event_time = batch.progress.get("eventTime", {})
    rows += [(f"eventTime.{name}", value) for name, value in sorted(event_time.items())
             if name != "watermark"]
    body = "".join(f"<tr><td style='{_CELL}'>{_text(name)}</td><td style='{_CELL}'>{_text(value)}</td></tr>"
                   for name, value in rows)
    return f"<table style='{_TABLE}'>{body}</table>"


_TABLE = "border-collapse:collapse;font-family:monospace;font-size:0.95em"
_CELL = "border:1px solid #ccc;padding:1px 6px;text-align:left"


def _panel(title: str, content: str) -> str:
    return (f'<div style="min-width:10em"><div style="font-weight:600;margin-bottom:0.2em">'
            f"{_text(title)}</div>{content}</div>")


def _rows(count: int) -> str:
    return f"{count} row" + ("" if count == 1 else "s")


def _table(rows: Sequence[Any]) -> str:
    """Rows (Spark Rows, dicts or tuples) as a small HTML table."""
    if not rows:
        return "<em>none</em>"
    first = rows[0]
    if isinstance(first, Row) and hasattr(first, "__fields__"):
        columns = list(first.__fields__)
        cells = [[row[name] for name in columns] for row in rows]
    elif isinstance(first, dict):
        columns = list(first)
        cells = [[row.get(name) for name in columns] for row in rows]
    else:
        columns = []
        cells = [list(row) if isinstance(row, (list, tuple)) else [row] for row in rows]
    head = "".join(f"<th style='{_CELL}'>{_text(name)}</th>" for name in columns)
    body = "".join(
        "<tr>" + "".join(f"<td style='{_CELL}'>{_text(_show(value))}</td>" for value in row)
        + "</tr>"
        for row in cells
    )
    return f"<table style='{_TABLE}'>" + (f"<tr>{head}</tr>" if head else "") + body + "</table>"


def _show(value: Any) -> str:
    """A value as the course prints it: nested rows as {name: value}, null for None."""
    if value is None:
        return "null"
    if isinstance(value, Row) and hasattr(value, "__fields__"):
        return "{" + ", ".join(f"{name}: {_show(value[name])}" for name in value.__fields__) + "}"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{key}: {_show(item)}" for key, item in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_show(item) for item in value) + "]"
    if isinstance(value, datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, date):
        return value.isoformat()
    return str(value)


def _text(value: Any) -> str:
    return html.escape(str(value))

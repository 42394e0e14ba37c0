"""One micro-batch as the stepper shows it, written as HTML.

A :class:`Step` is one micro-batch with what the stepper shows beside its progress report:
the rows fed to it and the state rows it committed. :func:`step_html` lays out its input,
watermark, state, output and metrics as small tables; :class:`Show` writes each value as the
course prints it (times as seconds after the stream's start when that is known, and so are
the columns that hold epoch milliseconds, such as a processor's timers). The HTML takes its
sizes and colours from the page, so it reads in a light and in a dark theme.
"""
from __future__ import annotations

import html
import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from typing import Any, Iterable, Sequence

from pyspark.sql import Row

from ..toolkit.driver import BatchRecord

#: The state-operator metrics the stepper shows, in this order, when a report has them.
STATE_METRICS = (
    "numRowsTotal", "numRowsUpdated", "numRowsRemoved", "numRowsDroppedByWatermark",
)


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



class Show:
    """How values are written: as the course prints them, times as seconds after ``start``.

    ``epoch_ms`` names the columns whose integers (or lists of integers) are moments written
    as milliseconds since the epoch, as Spark hands a processor its watermark and timers:
    they are shown as times too, with the raw number in the cell's tooltip.
    """

    def __init__(self, start: datetime | None = None, epoch_ms: Iterable[str] = ()):
        self.start = None if start is None else _aware(start)
        self.epoch_ms = frozenset(epoch_ms)

    def value(self, value: Any) -> str:
        if value is None:
            return "null"
        if isinstance(value, Row) and hasattr(value, "__fields__"):
            return "{" + ", ".join(f"{name}: {self.value(value[name])}"
                                   for name in value.__fields__) + "}"
        if isinstance(value, dict):
            return "{" + ", ".join(f"{key}: {self.value(item)}"
                                   for key, item in value.items()) + "}"
        if isinstance(value, (list, tuple)):
            return "[" + ", ".join(self.value(item) for item in value) + "]"
        if isinstance(value, datetime):
            return self.moment(value)
        if isinstance(value, date):
            return value.isoformat()
        return str(value)

    def cell(self, column: str, value: Any) -> tuple[str, str | None]:
        """A table cell's text, and its tooltip: the exact moments behind a time shown as
        seconds (with their epoch milliseconds when the column holds those)."""
        raw = value
        if column in self.epoch_ms:
            value = _from_epoch_ms(value)
        moments = _moments(value)
        if self.start is None or not moments:
            return self.value(value), None
        exact = [_utc(moment) for moment in moments]
        if column in self.epoch_ms:
            exact = [f"{text} = {number} ms" for text, number
                     in zip(exact, raw if isinstance(raw, (list, tuple)) else [raw])]
        return self.value(value), "; ".join(exact)

    def moment(self, moment: datetime) -> str:
        if self.start is None:
            return moment.isoformat(sep=" ")
        after = _aware(moment) - self.start
        if abs(after) > FAR:
            # Spark's initial watermark (the epoch) and what is computed from it: as a
            # count of seconds from the example's start it would be an unreadable number.
            return _utc(moment)
        return f"{after.total_seconds():g} s"

    def timestamp(self, text: str) -> str:
        """A time from a progress report (an ISO string in UTC, ``...Z``)."""
        try:
            moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            return text
        return self.moment(moment) if self.start is not None else text

    def watermark(self, text: str | None) -> str:
        if not text:
            return "<em>none</em>"
        if text.startswith(EPOCH):
            return f"<em>none yet</em> (Spark's initial <code>{_text(self.timestamp(text))}</code>)"
        return f"<code>{_text(self.timestamp(text))}</code>"

    def legend(self) -> str | None:
        """What the times count from, said once under a stepper (None: they are written
        as they are)."""
        if self.start is None:
            return None
        return f"Times are in seconds after {_utc(self.start)} UTC."


#: How far from the start a moment is still written as seconds after it.
FAR = timedelta(days=1)


def _from_epoch_ms(value: Any) -> Any:
    if isinstance(value, int) and not isinstance(value, bool):
        return datetime.fromtimestamp(value / 1000, tz=timezone.utc)
    if isinstance(value, (list, tuple)):
        return [_from_epoch_ms(item) for item in value]
    return value


def _moments(value: Any) -> list[datetime]:
    if isinstance(value, datetime):
        return [value]
    if isinstance(value, (list, tuple)):
        return [item for item in value if isinstance(item, datetime)]
    return []


def _utc(moment: datetime) -> str:
    return _aware(moment).astimezone(timezone.utc).replace(tzinfo=None).isoformat(sep=" ")


#: How a progress report writes Spark's initial watermark (0 ms after the epoch).
EPOCH = "1970-01-01T00:00:00.000Z"


def _aware(moment: datetime) -> datetime:
    # The course's Spark session runs in UTC, and so do the times it hands back.
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)


def step_html(step: Step, *, columns: Sequence[str] | None = None,
              show: Show | None = None, position: str | None = None) -> str:
    """The view of one micro-batch: input, watermark, state, output and metrics.

    ``position`` is the slider's name for this micro-batch where the slider does not show
    micro-batch ids (``"input 2, no-data"``): the heading says it too, so that a reader sees
    which micro-batch the slider chose. A query with no watermark (no event time) shows no
    watermark.
    """
    show = show or Show()
    batch = step.batch
    no_data = "Spark ran it because the watermark moved"
    if position is not None:
        said = f"{position}: {no_data}" if is_no_data_batch(batch) else position
    else:
        said = f"a no-data micro-batch: {no_data}" if is_no_data_batch(batch) else None
    head = f"<strong>micro-batch {batch.batch_id}</strong>" + (f" ({_text(said)})" if said
                                                                 else "")
    if batch.watermark is not None:
        head += " &middot; watermark: " + show.watermark(batch.watermark)
    if step.input is None:
        input_panel = _panel(f"input ({_rows(batch.input_rows)})",
                             "<em>rows not kept (use record_steps)</em>")
    else:
        input_panel = _panel(f"input ({_rows(len(step.input))})",
                             _table(step.input, show, columns))
    if step.state is None:
        state_panel = _panel("state store", "<em>no snapshot</em>")
    else:
        state_panel = _panel(f"state store after the batch ({_rows(len(step.state))})",
                             _table(step.state, show))
    output_panel = _panel(f"output ({_rows(len(batch.output))})", _table(batch.output, show))
    metrics_panel = _panel("metrics", _metrics_table(batch, show))
    panels = "".join([input_panel, state_panel, output_panel, metrics_panel])
    return _view(batch.batch_id, head, panels)


def note_html(said: str) -> str:
    """A view with no micro-batch in it: ``said`` (HTML) says why, over an empty input."""
    return _view("", f"<em>{said}</em>", _panel("input (0 rows)", "<em>none</em>"))


def _view(batch_id: Any, head: str, panels: str = "") -> str:
    # Sizes and colours are left to the page (its body text, its light or dark theme).
    return (
        f'<div class="stepper-step" data-batch-id="{batch_id}" style="line-height:1.45">'
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


def _metrics_table(batch: BatchRecord, show: Show) -> str:
    rows: list[tuple[str, Any]] = [("numInputRows", batch.input_rows)]
    for number, operator in enumerate(batch.state_operators):
        prefix = operator.get("operatorName", f"operator {number}")
        rows += [(f"{prefix}.{name}", operator[name])
                 for name in STATE_METRICS if name in operator]
    event_time = batch.progress.get("eventTime", {})
    rows += [(f"eventTime.{name}", show.timestamp(value))
             for name, value in sorted(event_time.items()) if name != "watermark"]
    head = f"<tr><th style='{_CELL}'>metric</th><th style='{_CELL}'>value</th></tr>"
    body = "".join(f"<tr><td style='{_CELL}'>{_breakable_name(name)}</td>"
                   f"<td style='{_CELL}'>{_text(value)}</td></tr>" for name, value in rows)
    return f"<table style='{_TABLE}'>{head}{body}</table>"


def _breakable_name(name: str) -> str:
    """A metric's name that may wrap after each dot, and nowhere else: on a phone
    ``stateStoreSave.numRowsDroppedByWatermark`` takes two lines instead of a scroll bar."""
    return ".<wbr>".join(_text(part) for part in name.split("."))


# A grey that reads on a light and on a dark page; text takes the page's own colour.
_TABLE = ("border-collapse:collapse;font-size:1em;"
          "font-family:var(--pst-font-family-monospace, monospace)")
_CELL = "border:1px solid rgba(128,128,128,0.6);padding:1px 3px;text-align:left"


def _panel(title: str, content: str) -> str:
    return (f'<div style="min-width:10em;max-width:100%"><div style="font-weight:600;'
            f'margin-bottom:0.2em">{_text(title)}</div>{content}</div>')


def _rows(count: int) -> str:
    return f"{count} row" + ("" if count == 1 else "s")


def _table(rows: Sequence[Any], show: Show | None = None,
           columns: Sequence[str] | None = None) -> str:
    """Rows (Spark Rows, dicts or tuples) as a small HTML table with a header line.

    Tuples take their column names from ``columns`` (else ``column 1``, ``column 2``...).
    """
    show = show or Show()
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
        cells = [list(row) if isinstance(row, (list, tuple)) else [row] for row in rows]
        width = max(len(row) for row in cells)
        if not columns or len(columns) != width:
            columns = ["value"] if width == 1 else [f"column {i + 1}" for i in range(width)]
    head = "".join(f"<th style='{_CELL}'>{_text(name)}</th>" for name in columns)
    body = "".join(
        "<tr>" + "".join(_cell(*show.cell(name, value)) for name, value in zip(columns, row))
        + "</tr>"
        for row in cells
    )
    return f"<table style='{_TABLE}'><tr>{head}</tr>{body}</table>"


_BREAKS = re.compile(r"(?<=,) |(?<=\d{4}-\d{2}-\d{2}) ")


def _cell(text: str, tooltip: str | None) -> str:
    if tooltip is None:
        return f"<td style='{_CELL}'>{_text(text)}</td>"
    # A time may wrap between its date and its clock time, and a window after the comma
    # between its start and its end, never inside either: a date would otherwise break at
    # its hyphens on a phone, "10 s" between its number and its unit, and a whole window on
    # one line can widen a table past a phone's screen.
    parts = " ".join(f"<span style='white-space:nowrap'>{_text(part)}</span>"
                     for part in _BREAKS.split(str(text)))
    return f"<td style='{_CELL}' title='{_text(tooltip)}'>{parts}</td>"


def _text(value: Any) -> str:
    return html.escape(str(value))

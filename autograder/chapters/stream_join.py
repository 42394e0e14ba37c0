"""A stream-stream join, fed one micro-batch at a time, and its state read back.

The join pairs the ads a page showed (impressions, the left side) with the clicks on them
(the right side): a click counts for an impression of the same ad when it comes at most
``WITHIN`` seconds after it::

    shown.join(clicked, F.expr("ad = click_ad AND clicked_at >= shown_at"
                               " AND clicked_at <= shown_at + interval 10 seconds"), how)

Both sides are read from one input folder, so that the course's micro-batch driver
(:class:`autograder.toolkit.driver.StreamRun`) feeds them one file per micro-batch; a row's
``side`` column says which side it belongs to. Each side has a watermark of its own, on
its own time column.

``ad_clicks(how)``           the query, for any join type, with or without watermarks
``events(side, ad, *s)``     input rows: ``side`` events of one ad at ``s`` seconds after T0
``buffered(run, batch)``     the rows both sides keep, as a micro-batch committed them
``state_watermarks(plan)``   the bound below which each side's rows are dropped from state

The book records the join for its stepper with
:func:`autograder.widgets.join_steps.record_join`.
"""
from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from typing import Any, Callable

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from ..toolkit.driver import BatchRecord, StreamRun
from ..toolkit.streams import T0

#: The input's columns: which side a row belongs to, the ad, and the event's time.
SCHEMA = "side STRING, ad STRING, t TIMESTAMP"
#: A click counts for an impression of the same ad up to this many seconds later.
WITHIN = 10
#: The watermark delay of each side, in seconds.
DELAY = 5
CONDITION = (f"ad = click_ad AND clicked_at >= shown_at"
             f" AND clicked_at <= shown_at + interval {WITHIN} seconds")
#: The time column of each side, as the state's value rows name it.
TIME_COLUMN = {"left": "shown_at", "right": "clicked_at"}


def shown(events: DataFrame, delay: int | None = DELAY) -> DataFrame:
    """The left side: impressions ``(ad, shown_at)``, with a watermark unless ``delay`` is None."""
    side = events.where("side = 'shown'").select("ad", F.col("t").alias("shown_at"))
    return side if delay is None else side.withWatermark("shown_at", f"{delay} seconds")


def clicked(events: DataFrame, delay: int | None = DELAY) -> DataFrame:
    """The right side: clicks ``(click_ad, clicked_at)``, with a watermark unless ``delay`` is None."""
    side = events.where("side = 'click'").select(F.col("ad").alias("click_ad"),
                                                 F.col("t").alias("clicked_at"))
    return side if delay is None else side.withWatermark("clicked_at", f"{delay} seconds")


def ad_clicks(how: str = "inner", *, delay: int | None = DELAY,
              condition: str = CONDITION) -> Callable[[DataFrame], DataFrame]:
    """The query for :class:`StreamRun`: impressions joined with clicks, ``how`` as in
    ``DataFrame.join`` (``inner``, ``left_outer``, ...). ``delay=None`` leaves both sides
    without a watermark; ``condition`` replaces the join condition."""
    def query(events: DataFrame) -> DataFrame:
        return shown(events, delay).join(clicked(events, delay), F.expr(condition), how)
    return query


def events(side: str, ad: str, *moments: float) -> list[tuple[str, str, datetime]]:
    """Input rows: events of ``side`` (``"shown"`` or ``"click"``) for ``ad``, one at each
    of ``moments`` seconds after T0."""
    return [(side, ad, T0 + timedelta(seconds=s)) for s in moments]


def seconds(moment: datetime | None) -> float | None:
    """A timestamp from Spark in seconds after T0 (whole seconds as an int)."""
    if moment is None:
        return None
    if moment.tzinfo is not None:
        moment = moment.astimezone(timezone.utc).replace(tzinfo=None)
    value = (moment - T0).total_seconds()
    return int(value) if value == int(value) else value


def watermark_seconds(text: str | None) -> float | None:
    """A progress report's watermark in seconds after T0 (None while it is Spark's initial 0)."""
    if not text or text.startswith("1970-01-01T00:00:00.000"):
        return None
    return seconds(datetime.fromisoformat(text.replace("Z", "+00:00")))


def buffered(run: StreamRun, batch: BatchRecord | int) -> list[dict[str, Any]]:
    """Both sides' rows in state as micro-batch ``batch`` committed them, one dict per row:
    side, ad, index (the row's number under its key), time (seconds after T0), and the
    matched flag. Read with the ``statestore`` source, one ``keyWithIndexToValue`` store
    per side."""
    batch_id = batch if isinstance(batch, int) else batch.batch_id
    found = []
    for side, column in TIME_COLUMN.items():
        for row in run.state(batchId=batch_id, storeName=f"{side}-keyWithIndexToValue"):
            found.append({"side": side, "ad": row["key"]["field0"], "index": row["key"]["index"],
                          "time": seconds(row["value"][column]), "matched": row["value"]["matched"]})
    return sorted(found, key=lambda r: (r["side"], r["ad"], r["time"]))


def changes(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The state rows of ``after`` marked ``new`` or ``kept``, and those of ``before`` that
    are gone marked ``evicted``: what a micro-batch did to the state. A row is known by its
    side, ad and time (its index may change when rows of its key go)."""
    def known(row):
        return row["side"], row["ad"], row["time"]
    earlier = {known(row) for row in before}
    later = {known(row) for row in after}
    marked = [{**row, "this micro-batch": "kept" if known(row) in earlier else "new"}
              for row in after]
    marked += [{**row, "this micro-batch": "evicted"} for row in before if known(row) not in later]
    return sorted(marked, key=lambda r: (r["side"], r["ad"], r["time"]))


_PREDICATE = re.compile(r"(left|right) (key|value) predicate: \((\w+)#\d+(?:-T\d+ms)? <= (-?\d+)\)")


def state_watermarks(plan_text: str) -> dict[str, tuple[str, float]]:
    """The state cleanup of a ``StreamingSymmetricHashJoin`` line, by side: the column
    whose value decides and the side's state watermark (seconds after T0): a row goes when
    its time is below it. Spark prints the bound in microseconds, one millisecond (the
    watermark's unit) below the state watermark."""
    found = {}
    for side, _kind, column, micros in _PREDICATE.findall(plan_text):
        moment = datetime(1970, 1, 1) + timedelta(microseconds=int(micros) + 1000)
        found[side] = (column, seconds(moment))
    return found

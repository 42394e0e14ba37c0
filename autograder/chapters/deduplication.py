"""Deduplication on a stream, alone and chained with a windowed count, and its state read back.

The stream is a log of page visits ``(user, page, ts)``; a client that retries sends the
same visit again. Each query of the chapter drops the repeats, with or without a watermark
and with or without the event time among the keys::

    visits.withWatermark("ts", "10 seconds").dropDuplicates(["user", "page", "ts"])
    visits.withWatermark("ts", "10 seconds").dropDuplicatesWithinWatermark(["user", "page"])

and a chain adds a stateful operator after the first (a windowed count after the
deduplication, a window of windows after a windowed count).

``visit(user, page, *s)``     input rows: visits of ``user`` to ``page`` at ``s`` seconds after T0
``deduplicated(keys, ...)``   the query for :class:`StreamRun`: the deduplication alone
``counted_after(...)``        a deduplication, then a count per window of event time
``windows_of_windows(...)``   a count per window, then a sum per window of those windows
``kept(run, batch, ...)``     one operator's state rows as a micro-batch committed them
``expiry_seconds(micros)``   a key's expiry (``expiresAtMicros``) in seconds after T0
``both_operators(run, batch)`` the state of a two-operator chain, both operators' rows
``operator_watermarks(plan)`` each operator's watermark for late rows and for eviction

The book records these queries for its stepper with
:func:`autograder.widgets.dedup_steps.record`.
"""
from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any, Callable, Sequence

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from ..toolkit.driver import BatchRecord, StreamRun
from ..toolkit.streams import T0
from .stream_join import seconds, watermark_seconds

__all__ = ["DELAY", "SCHEMA", "T0", "both_operators", "counted_after", "deduplicated", "expiry_seconds", "kept",
           "operator_watermarks", "seconds", "visit", "watermark_seconds", "windows_of_windows"]

#: The input's columns: who visited which page, and when (the event time).
SCHEMA = "user STRING, page STRING, ts TIMESTAMP"
#: The watermark delay, in seconds.
DELAY = 10


def visit(user: str, page: str, *moments: float) -> list[tuple[str, str, datetime]]:
    """Input rows: visits of ``user`` to ``page``, one at each of ``moments`` seconds after T0."""
    return [(user, page, T0 + timedelta(seconds=s)) for s in moments]


def _watermarked(visits: DataFrame, delay: int | None) -> DataFrame:
    return visits if delay is None else visits.withWatermark("ts", f"{delay} seconds")


def deduplicated(keys: Sequence[str], *, delay: int | None = DELAY,
                 within_watermark: bool = False) -> Callable[[DataFrame], DataFrame]:
    """The query for :class:`StreamRun`: the visits without repeats of ``keys``.

    ``delay=None`` leaves the stream without a watermark; ``within_watermark`` uses
    ``dropDuplicatesWithinWatermark`` instead of ``dropDuplicates``."""
    def query(visits: DataFrame) -> DataFrame:
        visits = _watermarked(visits, delay)
        if within_watermark:
            return visits.dropDuplicatesWithinWatermark(list(keys))
        return visits.dropDuplicates(list(keys))
    return query


def counted_after(keys: Sequence[str] = ("user", "page", "ts"), *, window: int = 10,
                  delay: int | None = DELAY) -> Callable[[DataFrame], DataFrame]:
    """A deduplication on ``keys``, then the visits counted per ``window``-second window."""
    def query(visits: DataFrame) -> DataFrame:
        unique = _watermarked(visits, delay).dropDuplicates(list(keys))
        return unique.groupBy(F.window("ts", f"{window} seconds")).count()
    return query


def windows_of_windows(*, first: int = 10, second: int = 30,
                       delay: int | None = DELAY) -> Callable[[DataFrame], DataFrame]:
    """Visits counted per ``first``-second window, then those counts summed per
    ``second``-second window of their windows' times (``window_time``: a window's last
    microsecond)."""
    def query(visits: DataFrame) -> DataFrame:
        counts = _watermarked(visits, delay).groupBy(F.window("ts", f"{first} seconds")).count()
        return (counts.groupBy(F.window(F.window_time("window"), f"{second} seconds"))
                .agg(F.sum("count").alias("visits")))
    return query


def kept(run: StreamRun, batch: BatchRecord | int, operator: int = 0) -> list[dict[str, Any]]:
    """The state rows of stateful operator ``operator`` as micro-batch ``batch`` committed
    them, one flat dict per row: the key's columns, then the value's (times as seconds after
    T0), sorted by key. Read with the ``statestore`` source."""
    batch_id = batch if isinstance(batch, int) else batch.batch_id
    rows = []
    for row in run.state(batchId=batch_id, operatorId=operator):
        row = row.asDict(recursive=True)
        rows.append({name: _shown(value) for part in ("key", "value")
                     for name, value in row[part].items()})
    return sorted(rows, key=repr)


def expiry_seconds(micros: int) -> float:
    """A ``dropDuplicatesWithinWatermark`` key's ``expiresAtMicros`` in seconds after T0."""
    return seconds(datetime(1970, 1, 1) + timedelta(microseconds=micros))


def both_operators(run: StreamRun, batch: BatchRecord) -> list[dict[str, Any]]:
    """A state reader for the stepper's recordings (:mod:`autograder.widgets.dedup_steps`): the
    rows of operators 1 (upstream) and 0 (downstream) of a two-operator chain, each as its
    operator, its key's values and its value's, so that both fit one table."""
    def said(part, row):
        # "window [10, 20)", not "window=[10, 20)": a phone's narrow cell breaks a table
        # between words, and "window=[10," is one word too long for it.
        return ", ".join(f"{name} {row[name]}" for name in part)
    found = []
    for operator in (1, 0):
        for row in run.state(batchId=batch.batch_id, operatorId=operator):
            key, value = row["key"].asDict(recursive=True), row["value"].asDict(recursive=True)
            shown = {name: _shown(item) for name, item in {**key, **value}.items()}
            found.append({"operator": operator, "key": said(key, shown),
                          "value": said(value, shown)})
    return sorted(found, key=lambda r: (-r["operator"], r["key"]))


_WATERMARKS = re.compile(r"^\W*(StateStoreSave|StreamingDeduplicate\w*) .*opId = (\d+).*"
                         r"stateStoreCkptIds = [^,]*, (?:\w+, )?(-?\d+), (-?\d+)", re.M)


def operator_watermarks(plan_text: str) -> dict[int, tuple[str, float | None, float | None]]:
    """Each stateful operator's two watermarks in an ``explain`` text, by operator id: its
    name, then the watermark for late rows and the watermark for eviction, in seconds after
    T0 (None for Spark's initial 0). Spark prints both in epoch milliseconds."""
    def after_t0(ms: str) -> float | None:
        return None if int(ms) == 0 else seconds(datetime(1970, 1, 1) + timedelta(milliseconds=int(ms)))
    return {int(op): (name, after_t0(late), after_t0(eviction))
            for name, op, late, eviction in _WATERMARKS.findall(plan_text)}


def _shown(value: Any) -> Any:
    """A value of a state row as the chapter prints it: times and windows in seconds after T0."""
    if isinstance(value, datetime):
        return seconds(value)
    if isinstance(value, dict) and set(value) == {"start", "end"}:
        return f"[{seconds(value['start'])}, {seconds(value['end'])})"
    return value

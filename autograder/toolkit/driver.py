"""The micro-batch driver: feed a streaming query one micro-batch at a time.

A scenario reads like Spark's own ``StreamTest``: start a query, add a batch of rows,
look at what that micro-batch emitted and what the state holds, stop, restart on the same
checkpoint, add more::

    with StreamRun(spark, "user STRING, ts TIMESTAMP", lambda df: df.limit(3)) as run:
        run.add_batch([("ann", t0), ("bob", t1)])
        run.last_batch.output          # the rows micro-batch 0 wrote to the sink
        run.last_batch.state_operators # its state-operator metrics
        run.restart()
        run.add_batch([("cid", t2)])

How it stays deterministic:

* **Input** is a folder of JSON files read with ``maxFilesPerTrigger=1``: each call to
  :meth:`StreamRun.add_batch` writes one file (atomically, by renaming it into place), so
  each call is exactly one micro-batch with exactly those rows.
* **Waiting** is ``processAllAvailable()``, which returns once the query has processed
  every file *and* run any no-data micro-batch the watermark asks for. It runs in a helper
  thread so that the wait is bounded: a query that does not finish in ``timeout`` seconds
  is stopped and reported, never waited on forever.
* **Output** is kept per micro-batch, even for empty ones, by a sink that suits where the
  query runs (``foreachBatch`` in this process with a local session; under Spark Connect,
  Spark's memory sink or files the server writes): :mod:`autograder.toolkit.sinks`.
* **Metrics** come from the query's progress reports, one per micro-batch that ran.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from pyspark.sql import DataFrame, Row, SparkSession

from .plan import PlanNode, physical_plan
from .sinks import sink_for
from .state import CheckpointReader

class StreamTimeout(RuntimeError):
    """A micro-batch did not finish in time; the query has been stopped."""


@dataclass
class BatchRecord:
    """What one micro-batch did: its input, its output and its progress report."""

    batch_id: int
    input_rows: int
    output: list[Row]
    progress: dict[str, Any] = field(repr=False)

    @property
    def state_operators(self) -> list[dict[str, Any]]:
        """The ``stateOperators`` section of the progress: one entry per stateful operator."""
        return self.progress.get("stateOperators", [])

    @property
    def watermark(self) -> str | None:
        """The event-time watermark this micro-batch ran with, if the query has one."""
        return self.progress.get("eventTime", {}).get("watermark")

    def state_metric(self, name: str, operator: int = 0) -> Any:
        """One state-operator metric (``numRowsTotal``, ``numRowsUpdated``, ...)."""
        return self.state_operators[operator][name]


class StreamRun:
    """One streaming query over a hand-fed source, driven one micro-batch at a time.

    ``query`` turns the source DataFrame into the one to run (``lambda df: df.limit(3)``).
    All the run writes (input files, checkpoint, output) lives in ``root``, a new temporary
    folder unless one is given, deleted on ``close()`` if the run created it."""

    def __init__(self, spark: SparkSession, schema: str, query: Callable[[DataFrame], DataFrame],
                 output_mode: str = "append", root: str | os.PathLike | None = None,
                 timeout: float = 120.0, name: str | None = None,
                 trigger: dict[str, Any] | None = None, keep_output: bool = True):
        self.spark = spark
        self.schema = schema
        self.build_query = query
        self.output_mode = output_mode
        self.timeout = timeout
        self.name = name
        self.trigger = trigger
        #: False for a run that looks only at its state, checkpoint or progress: its rows go
        #: to Spark's ``noop`` sink, and every micro-batch's output is empty.
        self.keep_output = keep_output
        self._owns_root = root is None
        self.root = Path(root or tempfile.mkdtemp(prefix="stream-run-"))
        self.input_dir = self.root / "input"
        self.checkpoint = str(self.root / "checkpoint")
        self.output_dir = str(self.root / "output")
        self._input = InputFolder(self.input_dir, schema)
        self.batches: list[BatchRecord] = []
        self.query = None
        self._sink = None   # where the running query's output goes (autograder.toolkit.sinks)
        self._reader = CheckpointReader(spark, self.checkpoint)

    # -- the life of the query ----------------------------------------------------------
    def start(self) -> "StreamRun":
        """Start (or restart) the query on the run's checkpoint. A query that fails its
        first start (Spark refuses it) leaves nothing behind: the run is closed."""
        if self.query is not None and self.query.isActive:
            raise RuntimeError("the query is already running; stop() it first")
        try:
            self._start()
        except BaseException:
            if self.query is None:
                self.close()
            raise
        return self

    def _start(self) -> None:
        source = self.spark.readStream.schema(self.schema).option("maxFilesPerTrigger", 1)
        query = self.build_query(source.json(str(self.input_dir)))
        self._close_sink()
        # A checkpoint that holds offsets: the query ran on it before, this start resumes it.
        resuming = (Path(self.checkpoint) / "offsets").is_dir()
        self._sink = sink_for(self.spark, resuming=resuming, output_mode=self.output_mode,
                              folder=self.output_dir, name=self.name, keep=self.keep_output)
        writer = self._sink.writer(query)
        writer = writer.outputMode(self.output_mode).option("checkpointLocation", self.checkpoint)
        if self.trigger:
            writer = writer.trigger(**self.trigger)
        self.query = writer.start()

    def stop(self) -> None:
        """Stop the query; its checkpoint stays, so :meth:`start` resumes from it."""
        if self.query is not None:
            self.query.stop()

    def restart(self) -> "StreamRun":
        """Stop the query and start a new one on the same checkpoint."""
        self.stop()
        return self.start()

    def close(self) -> None:
        """Stop the query and delete the run's folder if the run created it."""
        try:
            self.stop()
            self._close_sink()
        finally:
            if self._owns_root:
                shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> "StreamRun":
        if self.query is None and not stops_by_itself(self.trigger):
            self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- feeding it ----------------------------------------------------------------------
    def add_batch(self, rows: Iterable[Sequence[Any] | dict]) -> list[BatchRecord]:
        """Add one micro-batch of rows (tuples in schema order, or dicts by column name),
        process it, and return the batches that ran: usually one, and the no-data
        micro-batch Spark runs right after it when the watermark moved."""
        self.write_input(rows)
        return self.process_all_available()

    def process_all_available(self) -> list[BatchRecord]:
        """Wait (bounded) until the query has processed everything, and record new batches.

        With a trigger that stops the query by itself, this starts the query on the
        checkpoint (each start is one run of the trigger) and waits until it has stopped.
        """
        if stops_by_itself(self.trigger):
            if self.query is not None and self.query.isActive:
                raise RuntimeError("the one-shot query is still running")
            self.start()
        elif self.query is None or not self.query.isActive:
            raise RuntimeError("the query is not running; start() it first")
        _wait_at_most(self.timeout, self.query.awaitTermination if stops_by_itself(self.trigger)
                      else self.query.processAllAvailable, on_timeout=self.query.stop)
        records = _new_records(self.query, self._sink, {batch.batch_id for batch in self.batches})
        self.batches.extend(records)
        return records

    # -- looking at it -------------------------------------------------------------------
    @property
    def last_batch(self) -> BatchRecord:
        """The most recent micro-batch that ran."""
        if not self.batches:
            raise LookupError("no micro-batch has run yet")
        return self.batches[-1]

    def all_output(self) -> list[Row]:
        """Every row the sink received, in batch order."""
        return [row for batch in self.batches for row in batch.output]

    def state(self, **options: Any) -> list[Row]:
        """The rows in the state store now (see :func:`autograder.toolkit.state.read_state`)."""
        return self._reader.state(**options)

    def state_metadata(self) -> list[Row]:
        """The stateful operators of the checkpoint (``state-metadata`` source)."""
        return self._reader.metadata()

    def plan(self) -> PlanNode:
        """The physical plan of the last micro-batch, as a tree of operators."""
        return physical_plan(self.query)

    # -- plumbing ------------------------------------------------------------------------
    def write_input(self, rows: Iterable[Sequence[Any] | dict]) -> None:
        """Put one input file in place without waiting for the query to read it."""
        self._input.write(rows)

    def _close_sink(self) -> None:
        if self._sink is not None:
            self._sink.close()
            self._sink = None


def stops_by_itself(trigger: dict[str, Any] | None) -> bool:
    """Whether a trigger stops its query after one run (``once`` or ``availableNow``): each
    start of such a query is one run of the trigger."""
    return bool(trigger) and any(trigger.get(kind) for kind in ("once", "availableNow"))


class InputFolder:
    """The folder the query reads: one JSON file per micro-batch, in the order written."""

    def __init__(self, folder: Path, schema: str):
        self.folder = folder
        self.folder.mkdir(parents=True, exist_ok=True)
        self.columns = [part.strip().split()[0] for part in schema.split(",")]
        self._written = 0
        self._last_time_ns = 0

    def write(self, rows: Iterable[Sequence[Any] | dict]) -> None:
        lines = []
        for row in rows:
            record = row if isinstance(row, dict) else dict(zip(self.columns, row))
            lines.append(json.dumps(record, default=_json_value))
        # Files whose names start with "_" are invisible to Spark's file source, so the
        # file appears to the query only once it is complete.
        final = self.folder / f"batch-{self._written:05d}.json"
        partial = self.folder / f"_{final.name}"
        partial.write_text("".join(line + "\n" for line in lines))
        os.replace(partial, final)
        # The file source reads files in the order of their modification times, kept in
        # milliseconds: files written within one millisecond would be read in any order.
        # Each file gets a time at least a millisecond after the one before.
        stamp = max(time.time_ns(), self._last_time_ns + 1_000_000)
        os.utime(final, ns=(stamp, stamp))
        self._last_time_ns = stamp
        self._written += 1


def _wait_at_most(timeout: float, until_done: Callable[[], Any], on_timeout: Callable[[], Any]) -> None:
    """Call ``until_done`` in a helper thread and wait for it ``timeout`` seconds at most;
    past that, call ``on_timeout`` and raise :class:`StreamTimeout`. An error it raised is
    raised here."""
    outcome: dict[str, BaseException] = {}

    def wait() -> None:
        try:
            until_done()
        except BaseException as error:  # noqa: BLE001 - handed to the caller below
            outcome["error"] = error

    waiter = threading.Thread(target=wait, daemon=True)
    waiter.start()
    waiter.join(timeout)
    if waiter.is_alive():
        on_timeout()
        raise StreamTimeout(f"the query did not finish its micro-batch within {timeout:.0f} s; "
                            "it has been stopped")
    if "error" in outcome:
        raise outcome["error"]


def _new_records(query, sink, seen: set[int]) -> list[BatchRecord]:
    """A record for every micro-batch that ran and is not in ``seen``: its progress report
    and the rows the sink received from it."""
    ran = _batches_ran(query, seen)
    outputs = sink.rows(ran) if ran else {}
    return [BatchRecord(batch_id, _input_rows(ran[batch_id]), outputs.get(batch_id, []),
                        ran[batch_id]) for batch_id in sorted(ran)]


def _batches_ran(query, seen: set[int]) -> dict[int, dict]:
    """The progress reports of the micro-batches that ran and are not in ``seen``, by id.
    A query also reports progress while idle; only a report with an ``addBatch`` duration
    belongs to a micro-batch that ran."""
    found = {}
    for progress in query.recentProgress:
        progress = _as_dict(progress)
        if "addBatch" in progress.get("durationMs", {}) and progress["batchId"] not in seen:
            found[progress["batchId"]] = progress
    return found


def _as_dict(progress: Any) -> dict:
    """A progress report as a plain dict (PySpark hands out dicts or progress objects)."""
    if isinstance(progress, dict):
        return progress
    return json.loads(progress.json)


def _input_rows(progress: dict) -> int:
    """Rows read by a micro-batch: the sum over its sources (Connect omits the total)."""
    if progress.get("numInputRows") is not None:
        return progress["numInputRows"]
    return sum(source.get("numInputRows") or 0 for source in progress.get("sources", []))


def _json_value(value: Any) -> Any:
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    raise TypeError(f"cannot write {type(value).__name__} to a JSON input file")

"""Where a :class:`~autograder.toolkit.driver.StreamRun` sends its output, and how it reads each
micro-batch's rows back.

A run keeps every micro-batch's rows apart, empty ones included. How depends on where the
query runs; :func:`sink_for` picks a sink, each behind the same two calls (``writer(query)``
when the query starts, ``rows(progress)`` after each wait):

* :class:`CollectedBatches`, with a local session: ``foreachBatch`` runs its function in
  this Python process, which files each batch's rows under its id.

Under Spark Connect a ``foreachBatch`` function would run on the server, in a Python
process the server starts for each query: 1.5-3 s before the first micro-batch on a 2-core
machine, and Spark gives that process 10 s to connect back to the JVM (a fixed wait in
``PythonWorkerFactory.createSimpleWorker``), which a machine grading a class can exceed.
So under Connect the rows stay in the server's JVM or on disk:

* :class:`MemoryTable` for a query's first start, and for any start in Complete mode:
  Spark's memory sink, its table cut into batches with each progress report's
  ``numOutputRows``;
* :class:`ParquetFiles` for a query restarted on its checkpoint in Append mode, which the
  memory sink refuses ("This query does not support recovering from checkpoint
  location"): Spark's file sink, whose log (``_spark_metadata/<batch id>``) names the
  files each batch wrote, read back with Spark (the server shares this machine's disk: it
  also reads the input files from it). The memory sink is kept for first starts because
  it is faster (about 0.1 s a micro-batch on a 2-core machine);
* :class:`PickledBatches` only for a restart in Update mode, which neither sink accepts:
  ``foreachBatch`` on the server pickles each batch's rows into a file named after the
  batch id. No check of the course restarts a query in Update mode and keeps its rows.

A run that does not keep its output (``StreamRun(..., keep_output=False)``: it looks only
at the state, the checkpoint, or whether Spark accepts a restart) gets :class:`NoOutput`,
Spark's ``noop`` sink, wherever it runs: no rows travel, and no Python process is started
for a restart in Update mode.

Spark checks no sink against the checkpoint, so switching sinks at a restart changes
nothing the query computes.
"""
from __future__ import annotations

import json
import pickle
import threading
import uuid
from pathlib import Path

from pyspark.sql import DataFrame, Row, SparkSession

from .session import is_connect


class CollectedBatches:
    """``foreachBatch`` in this process: each batch's rows kept in a dict by batch id."""

    def __init__(self, name: str | None):
        self.name = name
        self._collected: dict[int, list[Row]] = {}
        self._lock = threading.Lock()

    def writer(self, query: DataFrame):
        collected, lock = self._collected, self._lock

        def collect_batch(batch: DataFrame, batch_id: int) -> None:
            rows = batch.collect()
            with lock:
                collected[batch_id] = rows   # a batch run again replaces its rows

        writer = query.writeStream.foreachBatch(collect_batch)
        return writer.queryName(self.name) if self.name else writer

    def rows(self, progress: dict[int, dict]) -> dict[int, list[Row]]:
        with self._lock:
            return {batch_id: self._collected[batch_id] for batch_id in progress
                    if batch_id in self._collected}

    def close(self) -> None:
        pass


class PickledBatches:
    """``foreachBatch`` on a Connect server: each batch's rows pickled into ``folder``."""

    def __init__(self, folder: str, name: str | None):
        self.folder, self.name = folder, name

    def writer(self, query: DataFrame):
        folder = self.folder

        def write_batch(batch: DataFrame, batch_id: int) -> None:
            # Runs on the server, in its own Python process: only the standard library here.
            import os
            import pickle
            rows = batch.collect()
            os.makedirs(folder, exist_ok=True)
            final = os.path.join(folder, f"batch-{batch_id:05d}.pickle")
            with open(final + ".partial", "wb") as out:
                pickle.dump(rows, out)
            os.replace(final + ".partial", final)   # a batch run again replaces its rows

        writer = query.writeStream.foreachBatch(write_batch)
        return writer.queryName(self.name) if self.name else writer

    def rows(self, progress: dict[int, dict]) -> dict[int, list[Row]]:
        by_batch = {}
        for batch_id in progress:
            written = Path(self.folder) / f"batch-{batch_id:05d}.pickle"
            if written.exists():
                by_batch[batch_id] = pickle.loads(written.read_bytes())
        return by_batch

    def close(self) -> None:
        pass


class MemoryTable:
    """Spark's memory sink on a Connect server, read back and cut into micro-batches."""

    def __init__(self, spark: SparkSession, output_mode: str, name: str | None):
        self.spark, self.output_mode = spark, output_mode
        self.table: str | None = name or f"stream_run_{uuid.uuid4().hex}"
        self._rows_read = 0

    def writer(self, query: DataFrame):
        return query.writeStream.format("memory").queryName(self.table)

    def rows(self, progress: dict[int, dict]) -> dict[int, list[Row]]:
        """In Append and Update mode the table holds every row written so far, batch after
        batch, so a batch's rows follow those already read, as many as its progress report
        says it wrote. In Complete mode every batch writes the whole result table and the
        sink keeps only the last one: each new batch gets it, which is right only if all of
        them wrote as many rows as it has (a batch with no data changes nothing in Complete
        mode, where no state is ever evicted); anything else is an error."""
        table = self.spark.table(self.table).collect()
        by_batch: dict[int, list[Row]] = {}
        for batch_id in sorted(progress):
            written = progress[batch_id].get("sink", {}).get("numOutputRows") or 0
            if self.output_mode.lower() == "complete":
                if written != len(table):
                    raise RuntimeError(
                        f"micro-batch {batch_id} wrote {written} rows in Complete mode but the "
                        f"memory sink holds {len(table)}: its own rows are lost")
                by_batch[batch_id] = list(table)
                continue
            by_batch[batch_id] = table[self._rows_read:self._rows_read + written]
            self._rows_read += written
        return by_batch

    def close(self) -> None:
        if self.table is not None:
            self.spark.catalog.dropTempView(self.table)
            self.table = None


class ParquetFiles:
    """Spark's file sink on a Connect server, read back batch by batch from its log."""

    #: Every tenth batch the file sink compacts its log into one entry listing the files of
    #: all the batches before, and it needs an entry for each of them, which the batches
    #: written before the restart (to the memory sink) do not have. Its session's
    #: ``compactInterval`` is the only way to keep it from compacting.
    COMPACT_INTERVAL = "spark.sql.streaming.fileSink.log.compactInterval"

    def __init__(self, spark: SparkSession, folder: str, name: str | None):
        self.spark, self.name = spark, name
        self.folder = Path(folder) / "files"
        self._schema = None

    def writer(self, query: DataFrame):
        self._schema = query.schema
        # Set in the run's session, read by the sink when the query starts. It changes only
        # how file sinks keep their log.
        self.spark.conf.set(self.COMPACT_INTERVAL, str(2**31 - 1))
        writer = query.writeStream.format("parquet").option("path", str(self.folder))
        return writer.queryName(self.name) if self.name else writer

    def rows(self, progress: dict[int, dict]) -> dict[int, list[Row]]:
        by_batch = {}
        for batch_id in sorted(progress):
            entry = self.folder / "_spark_metadata" / str(batch_id)
            if not entry.exists():
                continue
            # One file per partition, even an empty one; read in partition order.
            files = sorted(_logged_files(entry))
            by_batch[batch_id] = (self.spark.read.schema(self._schema).parquet(*files).collect()
                                  if files else [])
        return by_batch

    def close(self) -> None:
        pass


class NoOutput:
    """Spark's ``noop`` sink: the query runs in full and its rows are dropped."""

    def __init__(self, name: str | None):
        self.name = name

    def writer(self, query: DataFrame):
        writer = query.writeStream.format("noop")
        return writer.queryName(self.name) if self.name else writer

    def rows(self, progress: dict[int, dict]) -> dict[int, list[Row]]:
        return {batch_id: [] for batch_id in progress}

    def close(self) -> None:
        pass


def _logged_files(entry: Path) -> list[str]:
    """The files a file-sink log entry adds (its first line is the log's version)."""
    lines = entry.read_text().splitlines()[1:]
    return [record["path"] for record in map(json.loads, lines) if record["action"] == "add"]


def sink_for(spark: SparkSession, *, resuming: bool, output_mode: str, folder: str,
             name: str | None, keep: bool = True):
    """The sink for a query about to start (see the module's docstring); ``keep``: whether
    its rows are wanted."""
    if not keep:
        return NoOutput(name)
    if not is_connect(spark):
        return CollectedBatches(name)
    mode = output_mode.lower()
    if resuming and mode == "append":
        return ParquetFiles(spark, folder, name)
    if resuming and mode == "update":
        return PickledBatches(folder, name)
    return MemoryTable(spark, output_mode, name)

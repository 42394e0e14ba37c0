"""Where a :class:`~autograder.driver.StreamRun` sends its output, and how it reads each
micro-batch's rows back.

A run keeps every micro-batch's rows apart, empty ones included. How depends on where the
query runs; :func:`sink_for` picks one of three sinks, each behind the same two calls
(``writer(query)`` when the query starts, ``rows(progress)`` after each wait):

* :class:`CollectedBatches`, with a local session: ``foreachBatch`` runs its function in
  this Python process, which files each batch's rows under its id;
* :class:`MemoryTable`, under Spark Connect for a query's first start: a ``foreachBatch``
  function would run on the server, in a Python process the server starts for each query
  (1.5-3 s before the first micro-batch on a 2-core machine), so the query writes to
  Spark's memory sink, which lives in the server's JVM; its table is cut into batches with
  the ``numOutputRows`` of each progress report;
* :class:`PickledBatches`, under Connect for a query restarted on its checkpoint, which the
  memory sink refuses (except in Complete mode): ``foreachBatch`` on the server pickles
  each batch's rows into a file named after the batch id (the server shares this
  machine's disk: it also reads the input files from it).

Spark checks no sink against the checkpoint, so switching sinks at a restart changes
nothing the query computes.
"""
from __future__ import annotations

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


def sink_for(spark: SparkSession, *, resuming: bool, output_mode: str, folder: str,
             name: str | None):
    """The sink for a query about to start (see the module's docstring)."""
    if not is_connect(spark):
        return CollectedBatches(name)
    if resuming:
        return PickledBatches(folder, name)
    return MemoryTable(spark, output_mode, name)

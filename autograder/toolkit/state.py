"""The state reader: what a query keeps in its state store, read through Spark itself.

Spark ships two data sources for this, and the course reads state through nothing else
(no parsing of state files by hand; the one checkpoint file read directly is the offset
log, for a micro-batch's timestamp, which no source gives: ``tws_state.batch_timestamp_ms``):

* ``statestore`` reads the key/value rows of one stateful operator at one committed
  version: one row per state entry, with the columns ``key``, ``value`` and
  ``partition_id``;
* ``state-metadata`` lists the stateful operators a checkpoint holds (id, name, number of
  partitions, the batches it has state for, and for transformWithState its variables).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from pyspark.sql import Row, SparkSession


def read_state(spark: SparkSession, checkpoint: str, **options: Any) -> list[Row]:
    """The state rows of a checkpoint, sorted by partition and key.

    Options go to the ``statestore`` source, for example ``operatorId=1`` (which stateful
    operator; the default is 0), ``batchId=3`` (the state as committed by that batch; the
    default is the latest), ``storeName`` or ``stateVarName`` (transformWithState).
    """
    reader = spark.read.format("statestore")
    for key, value in options.items():
        reader = reader.option(key, str(value))
    rows = reader.load(checkpoint).collect()
    return sorted(rows, key=lambda row: (row["partition_id"], repr(row["key"])))


def read_state_metadata(spark: SparkSession, checkpoint: str) -> list[Row]:
    """One row per stateful operator (and store) of the checkpoint."""
    rows = spark.read.format("state-metadata").load(checkpoint).collect()
    return sorted(rows, key=lambda row: (row["operatorId"], row["stateStoreName"]))


def state_as_dicts(rows: list[Row]) -> list[dict[str, Any]]:
    """State rows as plain nested dicts, handy to print or compare."""
    return [row.asDict(recursive=True) for row in rows]


class CheckpointReader:
    """Both readers on one checkpoint, each question asked of Spark once per committed
    micro-batch: the state does not change until the next commit, and a check often asks
    the same thing twice (each read is a Spark job, much of what checking a batch costs)."""

    def __init__(self, spark: SparkSession, checkpoint: str):
        self.spark, self.checkpoint = spark, checkpoint
        self._answers: dict[str, list[Row]] = {}
        self._version = -1

    def state(self, **options: Any) -> list[Row]:
        return self._once(f"state {sorted(options.items())!r}",
                          lambda: read_state(self.spark, self.checkpoint, **options))

    def metadata(self) -> list[Row]:
        return self._once("metadata", lambda: read_state_metadata(self.spark, self.checkpoint))

    def _once(self, question: str, read: Callable[[], list[Row]]) -> list[Row]:
        version = last_commit(self.checkpoint)
        if version != self._version:
            self._answers, self._version = {}, version
        if question not in self._answers:
            self._answers[question] = read()
        return list(self._answers[question])


def last_commit(checkpoint: str) -> int:
    """The id of the last micro-batch in the checkpoint's commit log (-1 before the first)."""
    commits = Path(checkpoint) / "commits"
    if not commits.is_dir():
        return -1
    return max((int(p.name) for p in commits.iterdir() if p.name.isdigit()), default=-1)

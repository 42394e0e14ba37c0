"""The state reader: what a query keeps in its state store, read through Spark itself.

Spark ships two data sources for this, and the course uses nothing else (no parsing of
checkpoint files by hand):

* ``statestore`` reads the key/value rows of one stateful operator at one committed
  version: one row per state entry, with the columns ``key``, ``value`` and
  ``partition_id``;
* ``state-metadata`` lists the stateful operators a checkpoint holds (id, name, number of
  partitions, the batches it has state for, and for transformWithState its variables).
"""
from __future__ import annotations

from typing import Any

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

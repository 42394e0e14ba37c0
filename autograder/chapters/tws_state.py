"""Reading a transformWithState query: its metrics, its state variables, its timers.

Small tools chapter 4 and its checks use, and a learner may use too: a timestamp in the
milliseconds timers and TTLs count in, the operator's custom metrics, the state variables
and timers of an operator read back with the state reader, and a block in which only
micro-batches with input run.
"""
from __future__ import annotations

import contextlib
import json
from datetime import datetime
from pathlib import Path
from typing import Any, Iterator

from pyspark.sql import SparkSession

from ..toolkit.driver import BatchRecord, StreamRun
from ..toolkit.session import spark_setting


def ms(moment: datetime) -> int:
    """A UTC timestamp as milliseconds since the epoch (the unit of timers and TTLs)."""
    return int((moment - datetime(1970, 1, 1)).total_seconds() * 1000)


def custom_metrics(batch: BatchRecord, operator: int = 0) -> dict[str, Any]:
    """The transformWithState operator's own metrics in one micro-batch's progress."""
    return batch.state_operators[operator]["customMetrics"]


@contextlib.contextmanager
def no_data_batches_disabled(spark: SparkSession) -> Iterator[None]:
    """Only micro-batches with input run while the block runs (processing-time queries).

    A ``ProcessingTime`` query otherwise runs empty micro-batches forever and
    ``processAllAvailable`` never returns. The setting is read when a query starts (and
    stored in its checkpoint), so queries started inside the block keep it.
    """
    with spark_setting(spark, "spark.sql.streaming.noDataMicroBatches.enabled", "false"):
        yield


def state_variables(run: StreamRun, operator: int) -> list[dict[str, Any]]:
    """The operator's state variables (name, type, ttlEnabled), timers left out."""
    for row in run.state_metadata():
        if row.operatorId == operator:
            variables = json.loads(row.operatorProperties)["stateVariables"]
            return sorted((v for v in variables if not v["stateName"].startswith("$")),
                          key=lambda v: v["stateName"])
    return []


def stored_keys(run: StreamRun, operator: int) -> list:
    """The grouping keys that still hold a row in any state variable of the operator."""
    keys = set()
    for variable in state_variables(run, operator):
        for row in run.state(operatorId=operator, stateVarName=variable["stateName"]):
            keys.add(tuple(row.key))
    return sorted(list(key) for key in keys)


def state_rows_per_key(run: StreamRun, operator: int) -> dict[str, int]:
    """How many state rows each key holds, over all the operator's variables."""
    counts: dict[str, int] = {}
    for variable in state_variables(run, operator):
        for row in run.state(operatorId=operator, stateVarName=variable["stateName"]):
            counts[str(row.key[0])] = counts.get(str(row.key[0]), 0) + 1
    return dict(sorted(counts.items()))


def stored_values(run: StreamRun, operator: int) -> dict[str, list]:
    """Each key's stored values, over all the operator's variables: ``{key: [value...]}``,
    each value flattened to its fields (whatever the variables and fields are named): every
    column of the state reader's row but ``key`` and ``partition_id`` (a value state's
    ``value``; a list state's ``list_element``, a row per element)."""
    values: dict[str, list] = {}
    for variable in state_variables(run, operator):
        for row in run.state(operatorId=operator, stateVarName=variable["stateName"]):
            found = values.setdefault(str(row.key[0]), [])
            for name, value in row.asDict().items():
                if name not in ("key", "partition_id"):
                    found.extend(list(value) if isinstance(value, tuple) else [value])
    return {key: sorted(found, key=repr) for key, found in sorted(values.items())}


def pending_timers(run: StreamRun, operator: int) -> list:
    """The registered timers of the operator as [key..., expiry in ms]."""
    rows = run.state(operatorId=operator, readRegisteredTimers=True)
    return sorted([*row.key, row.expiration_timestamp_ms] for row in rows)


def batch_timestamp_ms(run: StreamRun) -> int:
    """The processing time Spark fixed for the last micro-batch, in ms: what timers in
    processing time and every TTL count from.

    The state sources do not give it, so it is read from the checkpoint's offset log
    (``offsets/<batch id>``: a version line, then the batch's metadata as JSON).
    """
    offsets = Path(run.checkpoint) / "offsets"
    batch_id = max(int(path.name) for path in offsets.iterdir() if path.name.isdigit())
    metadata = (offsets / str(batch_id)).read_text().splitlines()[1]
    return int(json.loads(metadata)["batchTimestampMs"])


def ttl_expiries(run: StreamRun, operator: int) -> list[int]:
    """When each value of the operator's variables with a TTL expires (its
    ``ttlExpirationMs`` in the state store: the timestamp of the micro-batch that wrote it
    plus the TTL), sorted."""
    return sorted(at for expiries in ttl_expiries_per_key(run, operator).values()
                  for at in expiries)


def ttl_expiries_per_key(run: StreamRun, operator: int) -> dict[str, list[int]]:
    """:func:`ttl_expiries` per grouping key: ``{key: [ms, ...]}``."""
    expiries: dict[str, list[int]] = {}
    for variable in state_variables(run, operator):
        if not variable.get("ttlEnabled"):
            continue
        for row in run.state(operatorId=operator, stateVarName=variable["stateName"]):
            for field in row.asDict(recursive=True).values():
                if isinstance(field, dict) and "ttlExpirationMs" in field:
                    expiries.setdefault(str(row.key[0]), []).append(int(field["ttlExpirationMs"]))
    return {key: sorted(found) for key, found in sorted(expiries.items())}

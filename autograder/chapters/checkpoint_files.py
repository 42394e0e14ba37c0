"""The files of a streaming checkpoint, listed the way chapter 5 talks about them.

A checkpoint is an ordinary folder. Spark writes into it, micro-batch by micro-batch:

* ``metadata``: the query's id, written once;
* ``offsets/<b>``: what micro-batch ``b`` will read, written *before* it runs;
* ``commits/<b>``: written *after* micro-batch ``b`` has finished;
* ``sources/<n>/...``: what each source has handed out (for the file source, file names);
* ``state/<operator>/<partition>/...``: the state store of every stateful operator and
  shuffle partition, one file per version (or per snapshot), plus the operator's metadata
  (``state/<operator>/_metadata/``) and the state schema (in partition 0).

This module works with those files by their names: it never reads what is inside a state
file (the ``statestore`` source does that, :mod:`autograder.toolkit.state`)::

    state_files(run.checkpoint)          # {0: ['1.zip', '2.zip', 'SSTs'], 1: [...]}
    versions_on_disk(["3.delta", "3.snapshot", "4.delta"])   # [3, 4]
    print(tree(run.checkpoint))          # the folder, indented, state files per partition
    forget_commit(run.checkpoint, 3)     # as if the query had stopped before commit 3

and with what chapter 5's runs of a checkpoint need beside them: ``settings(spark, {...})``
sets Spark settings for one run and puts them back, ``error_class(error)`` names the error
class a failed query stopped with, inside the ones that wrap it.

Names of state files by provider (see the chapter for when each appears):

=====================  ============================================================
``<v>.delta``          HDFS-backed provider: the changes of version ``v``
``<v>.snapshot``       HDFS-backed provider: the whole state at version ``v``
``<v>.zip``            RocksDB provider: version ``v``'s checkpoint (a list of SST files)
``<v>.changelog``      RocksDB with changelog checkpointing: the changes of version ``v``
``SSTs/``              RocksDB provider: the SST files, shared between versions
=====================  ============================================================
"""
from __future__ import annotations

import contextlib
import re
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

from pyspark.sql import Row

from ..checks.checking import reference_answer
from ..toolkit.session import spark_setting

#: The two state store providers of Spark 4.3, by their class names.
HDFS_PROVIDER = "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider"
ROCKSDB_PROVIDER = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"

#: The suffixes of the files that hold one version of a store's state.
VERSION_FILE = re.compile(r"^(\d+)(?:_[0-9a-f-]+)?\.(delta|snapshot|zip|changelog)$")


def partitions(checkpoint: str | Path, operator: int = 0) -> list[int]:
    """The shuffle partitions that have a state folder for ``operator``."""
    folder = Path(checkpoint) / "state" / str(operator)
    if not folder.is_dir():
        return []
    return sorted(int(p.name) for p in folder.iterdir() if p.name.isdigit())


def state_files(checkpoint: str | Path, operator: int = 0,
                store: str | None = None) -> dict[int, list[str]]:
    """Each partition's state files of ``operator``, by partition, names sorted by version.

    Folders (``SSTs``, ``_metadata``) are listed by name; ``.crc`` sidecar files and
    hidden files are left out. ``store`` names a store folder inside the partition (a
    stream-stream join has several); by default the partition folder itself is listed.
    """
    listing = {}
    for partition in partitions(checkpoint, operator):
        folder = Path(checkpoint) / "state" / str(operator) / str(partition)
        if store:
            folder = folder / store
        names = [p.name for p in folder.iterdir()
                 if not p.name.startswith(".") and not p.name.endswith(".crc")] \
            if folder.is_dir() else []
        listing[partition] = sorted(names, key=_order)
    return listing


def versions_on_disk(names: list[str], kind: str | None = None) -> list[int]:
    """The versions the file names hold, sorted; ``kind`` keeps one suffix only
    (``"delta"``, ``"snapshot"``, ``"zip"``, ``"changelog"``)."""
    found = set()
    for name in names:
        match = VERSION_FILE.match(name)
        if match and kind in (None, match.group(2)):
            found.add(int(match.group(1)))
    return sorted(found)


def sst_files(checkpoint: str | Path, operator: int = 0, partition: int = 0) -> list[str]:
    """The shared SST files of one RocksDB store (empty for the HDFS-backed provider)."""
    folder = Path(checkpoint) / "state" / str(operator) / str(partition) / "SSTs"
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


def sst_bytes(checkpoint: str | Path, operator: int = 0) -> int:
    """The bytes of all SST files in ``SSTs/``, over every partition of ``operator``."""
    return sum((Path(checkpoint) / "state" / str(operator) / str(partition) / "SSTs" / name)
               .stat().st_size
               for partition in partitions(checkpoint, operator)
               for name in sst_files(checkpoint, operator, partition))


def logged_batches(checkpoint: str | Path, log: str) -> list[int]:
    """The micro-batch ids in ``offsets`` or ``commits`` (file names that are numbers)."""
    folder = Path(checkpoint) / log
    if not folder.is_dir():
        return []
    return sorted(int(p.name) for p in folder.iterdir() if p.name.isdigit())


def batches_to_run_again(checkpoint: str | Path) -> list[int]:
    """The micro-batch a restart runs again: the newest of ``offsets/`` when ``commits/``
    does not hold it, even when ``commits/`` holds nothing at all. Spark looks no further
    back: an older micro-batch missing from ``commits/`` is taken as done, and its state is
    in ``state/`` whatever the commit log says. The answer of chapter 5's task 3."""
    reference_answer()
    planned = logged_batches(checkpoint, "offsets")
    if not planned or planned[-1] in logged_batches(checkpoint, "commits"):
        return []
    return [planned[-1]]


def tree(checkpoint: str | Path, max_files: int = 8) -> str:
    """The checkpoint folder as an indented text tree.

    Each folder shows at most ``max_files`` entries (the last ones, where the new versions
    are) and says how many it left out; SST files are counted, not named.
    """
    root = Path(checkpoint)
    lines = [root.name + "/"]

    def walk(folder: Path, depth: int) -> None:
        entries = sorted((p for p in folder.iterdir()
                          if not p.name.startswith(".") and not p.name.endswith(".crc")),
                         key=lambda p: _order(p.name))
        if folder.name == "SSTs":
            lines.append("  " * depth + f"({len(entries)} .sst files)")
            return
        if len(entries) > max_files:
            lines.append("  " * depth + f"... {len(entries) - max_files} more")
            entries = entries[-max_files:]
        for entry in entries:
            if entry.is_dir():
                lines.append("  " * depth + entry.name + "/")
                walk(entry, depth + 1)
            else:
                lines.append("  " * depth + entry.name)

    walk(root, 1)
    return "\n".join(lines)


def _order(name: str) -> tuple:
    """Sort key: numbered names by number, then by name; other names after them."""
    match = re.match(r"^(\d+)", name)
    return (0, int(match.group(1)), name) if match else (1, 0, name)


@contextlib.contextmanager
def settings(spark, values: Mapping[str, str | None]) -> Iterator[None]:
    """Several :func:`autograder.toolkit.session.spark_setting` blocks in one: each key set to its
    value while the block runs (``None`` leaves a key alone), then back to what it was."""
    with contextlib.ExitStack() as stack:
        for key, value in values.items():
            stack.enter_context(spark_setting(spark, key, value))
        yield


def files_as_rows(listing: Mapping[int, Sequence[str]]) -> list[Row]:
    """A :func:`state_files` listing as one row per partition, for a table or the stepper."""
    return [Row(partition_id=partition, files=" ".join(names))
            for partition, names in sorted(listing.items())]


def record_files(run: Any, batches: Sequence[Sequence[Any]], operator: int = 0) -> list[dict]:
    """Feed ``batches`` to a running :class:`autograder.toolkit.driver.StreamRun` one by one and
    keep, for each micro-batch that ran: its record (``batch``), the rows fed to it
    (``input``), the state files right after it (``files``), the bytes of its SST files
    (``sst_bytes``, 0 without RocksDB) and the state rows it committed, read through the
    ``statestore`` source (``state``)."""
    recorded = []
    for rows in batches:
        rows = list(rows)
        for position, batch in enumerate(run.add_batch(rows)):
            recorded.append({"batch": batch, "input": rows if position == 0 else [],
                             "files": state_files(run.checkpoint, operator),
                             "sst_bytes": sst_bytes(run.checkpoint, operator),
                             "state": run.state(operatorId=operator, batchId=batch.batch_id)})
    return recorded


def forget_commit(checkpoint: str | Path, batch_id: int) -> None:
    """Delete ``commits/<batch_id>`` and its hidden checksum file ``.<batch_id>.crc``, as if
    the query had stopped after the micro-batch's work and before its commit was written.

    The checksum file must go too: Spark writes a log entry by renaming a new file into
    place, and a leftover checksum file makes that rename fail (Spark then reports that
    several queries use the same checkpoint)."""
    folder = Path(checkpoint) / "commits"
    for name in (str(batch_id), f".{batch_id}.crc"):
        (folder / name).unlink(missing_ok=True)


#: Error classes that only wrap the one that says what went wrong (under Spark Connect, a
#: query whose sink runs in a ``foreachBatch`` Python process fails with PYTHON_EXCEPTION
#: around Spark's own error).
WRAPPERS = {"STREAM_FAILED", "FOREACH_BATCH_USER_FUNCTION_ERROR", "PYTHON_EXCEPTION"}


def error_class(error: BaseException) -> str:
    """The first error class in Spark's message (``[NAME.SUB]``) that is not a wrapper."""
    found = re.findall(r"\[([A-Z][A-Z0-9_]*(?:\.[A-Z0-9_]+)?)\]", str(error))
    classes = [name for name in found if name not in WRAPPERS]
    if not classes:
        raise ValueError(f"no error class in: {str(error)[:200]}")
    return classes[0]

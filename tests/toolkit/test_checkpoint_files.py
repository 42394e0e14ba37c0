"""The checkpoint lister of chapter 5, on folders laid out as Spark lays them out.

No Spark here: the chapter itself runs the lister on real checkpoints and holds what it
prints with hidden asserts; these tests pin down the listing rules on small hand-made trees.
"""
from pathlib import Path

import pytest

from autograder.chapters.checkpoint_files import (
    batches_to_run_again, error_class, files_as_rows, forget_commit, logged_batches,
    state_files, tree, versions_on_disk,
)


def touch(root: Path, *names: str) -> None:
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x")


@pytest.fixture
def checkpoint(tmp_path):
    root = tmp_path / "checkpoint"
    touch(root, "metadata", "offsets/0", "offsets/1", "offsets/2", "commits/0", "commits/1",
          "commits/.1.crc", "sources/0/0",
          "state/0/_metadata/metadata", "state/0/0/_metadata/schema",
          "state/0/0/10.delta", "state/0/0/9.delta", "state/0/0/9.snapshot",
          "state/0/0/.9.delta.crc", "state/0/1/9.zip", "state/0/1/SSTs/1-a.sst",
          "state/0/1/SSTs/2-b.sst")
    return root


def test_state_files_are_listed_per_partition_by_version_number_not_by_name(checkpoint):
    assert state_files(checkpoint) == {
        0: ["9.delta", "9.snapshot", "10.delta", "_metadata"],
        1: ["9.zip", "SSTs"],
    }


def test_a_checkpoint_without_state_lists_no_partition(tmp_path):
    assert state_files(tmp_path) == {}


def test_versions_are_read_from_the_names_of_every_kind_of_state_file():
    names = ["3.delta", "3.snapshot", "4.changelog", "6.zip", "SSTs", "_metadata"]
    assert versions_on_disk(names) == [3, 4, 6]
    assert versions_on_disk(names, "snapshot") == [3]
    assert versions_on_disk(["4_0a1b-2c.zip"]) == [4]   # checkpoint format 2 names


def test_a_batch_planned_and_not_committed_is_the_one_to_run_again(checkpoint):
    assert logged_batches(checkpoint, "offsets") == [0, 1, 2]
    assert batches_to_run_again(checkpoint) == [2]


def test_forgetting_a_commit_removes_its_checksum_file_too(checkpoint):
    forget_commit(checkpoint, 1)
    assert sorted(p.name for p in (checkpoint / "commits").iterdir()) == ["0"]
    # Spark looks at the newest entry of each log only: micro-batch 1 is taken as done.
    assert batches_to_run_again(checkpoint) == [2]


def test_the_tree_counts_sst_files_and_hides_checksums(checkpoint):
    drawn = tree(checkpoint)
    assert "(2 .sst files)" in drawn and ".crc" not in drawn
    assert drawn.splitlines()[0] == "checkpoint/"


def test_the_tree_shows_the_newest_entries_of_a_long_folder(tmp_path):
    touch(tmp_path / "c", *[f"offsets/{n}" for n in range(12)])
    lines = tree(tmp_path / "c", max_files=3).splitlines()
    assert lines[2:] == ["    ... 9 more", "    9", "    10", "    11"]


def test_files_become_one_row_per_partition():
    rows = files_as_rows({1: ["2.zip"], 0: ["1.zip", "2.zip"]})
    assert [(r.partition_id, r.files) for r in rows] == [(0, "1.zip 2.zip"), (1, "2.zip")]


def test_the_error_class_skips_the_wrappers_around_it():
    error = RuntimeError("[STREAM_FAILED] Query x terminated with exception: "
                         "[FOREACH_BATCH_USER_FUNCTION_ERROR] ... "
                         "[CANNOT_LOAD_STATE_STORE.CANNOT_READ_STREAMING_STATE_FILE] ...")
    assert error_class(error) == "CANNOT_LOAD_STATE_STORE.CANNOT_READ_STREAMING_STATE_FILE"
    # Under Spark Connect, the sink's foreachBatch process wraps Spark's error once more.
    connect = RuntimeError("[STREAM_FAILED] Query x terminated with exception: [PYTHON_EXCEPTION] "
                           "Found error inside foreachBatch Python process: ... "
                           "[STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE] ...")
    assert error_class(connect) == "STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE"
    with pytest.raises(ValueError):
        error_class(RuntimeError("no class here"))

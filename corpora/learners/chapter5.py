"""Chapter 5's learners: the state store itself.

Grade cells: test_predict_files (3), test_counts_at (2), test_runs_again (2),
test_restart_error (3).
"""
from corpora.learners import Learner, altered

FULL = {"test_predict_files": 3, "test_counts_at": 2, "test_runs_again": 2,
        "test_restart_error": 3}


def losing(*grade_ids: str) -> dict[str, float]:
    return {g: p for g, p in FULL.items() if g not in grade_ids}


# -- right answers, written otherwise ----------------------------------------------------------
ARITHMETIC = {
    "predict_files": '''
def predict_files(way, batches, min_deltas):
    # the versions that get a snapshot follow a fixed stride from version 0
    stride = min_deltas + 1 if way == "hdfs" else max(min_deltas, 1)
    answer = []
    for last in range(1, batches + 1):
        names = set()
        for v in range(1, last + 1):
            if way == "rocksdb":
                names.add("%d.zip" % v)
                continue
            names.add("%d.%s" % (v, "delta" if way == "hdfs" else "changelog"))
            if v % stride == 0:
                names.add("%d.%s" % (v, "snapshot" if way == "hdfs" else "zip"))
        answer.append(tuple(sorted(names)))
    return answer
''',
    "counts_at": '''
def counts_at(spark, checkpoint, batch_id):
    reader = spark.read.format("statestore").option("batchId", batch_id)
    try:
        rows = reader.load(checkpoint).collect()
    except Exception as error:
        return None
    return dict((row.key.user, row.value["count"]) for row in rows)
''',
    "runs_again": '''
import os

def runs_again(checkpoint):
    def newest(log):
        folder = os.path.join(checkpoint, log)
        names = [int(n) for n in os.listdir(folder) if n.isdigit()] if os.path.exists(folder) else []
        return max(names, default=-1)
    last_planned = newest("offsets")
    return [last_planned] if last_planned > newest("commits") else []
''',
    "restart_error": '''
def restart_error(change):
    query, deleted = change.get("query"), change.get("delete")
    if query == "max instead of count":
        return "STATE_STORE_VALUE_SCHEMA_NOT_COMPATIBLE"
    if query == "count per name length":
        return "STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE"
    if query == "distinct users":
        return "STREAMING_STATEFUL_OPERATOR_NOT_MATCH_IN_STATE_METADATA"
    if deleted == "state/":
        return "STREAMING_STATEFUL_OPERATOR_MISSING_STATE_DIRECTORY"
    if deleted == "the newest state file":
        return "CANNOT_LOAD_STATE_STORE.CANNOT_READ_STREAMING_STATE_FILE"
    return None
''',
}

LISTINGS_AND_METADATA = {
    "predict_files": '''
def predict_files(way, batches, min_deltas):
    kinds = {"hdfs": ("delta", "snapshot"), "changelog": ("changelog", "zip"),
             "rocksdb": (None, "zip")}
    change, full = kinds[way]
    on_disk, since, steps = [], 0, []
    for version in range(1, batches + 1):
        since += 1
        if change is None:
            on_disk.append(f"{version}.{full}")
        else:
            on_disk.append(f"{version}.{change}")
            if (way == "hdfs" and since > min_deltas) or (way == "changelog" and since >= min_deltas):
                on_disk.append(f"{version}.{full}")
                since = 0
        steps.append(on_disk[:])
    return steps
''',
    "counts_at": '''
from autograder import read_state

def counts_at(spark, checkpoint, batch_id):
    try:
        state = read_state(spark, checkpoint, batchId=batch_id)
    except Exception:
        return None
    counts = {}
    for row in state:
        record = row.asDict(recursive=True)
        counts[record["key"]["user"]] = record["value"]["count"]
    return counts
''',
    "runs_again": '''
from pathlib import Path
from autograder.checkpoint_files import logged_batches

def runs_again(checkpoint):
    offsets = logged_batches(checkpoint, "offsets")
    commits = set(logged_batches(checkpoint, "commits"))
    return [b for b in offsets[-1:] if b not in commits]
''',
    "restart_error": '''
REFUSED = {
    "max instead of count": "STATE_STORE_VALUE_SCHEMA_NOT_COMPATIBLE",
    "count per name length": "STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE",
    "distinct users": "STREAMING_STATEFUL_OPERATOR_NOT_MATCH_IN_STATE_METADATA",
    "the newest state file": "CANNOT_LOAD_STATE_STORE.CANNOT_READ_STREAMING_STATE_FILE",
    "state/": "STREAMING_STATEFUL_OPERATOR_MISSING_STATE_DIRECTORY",
}

def restart_error(change):
    errors = [REFUSED[value] for value in change.values() if value in REFUSED]
    return errors[0] if errors else None
''',
}

# The worked examples' answers, typed in.
HARDCODED = {
    "predict_files": '''
def predict_files(way, batches, min_deltas):
    return [["1.delta"], ["1.delta", "2.delta"], ["1.delta", "2.delta", "3.delta", "3.snapshot"],
            ["1.delta", "2.delta", "3.delta", "3.snapshot", "4.delta"],
            ["1.delta", "2.delta", "3.delta", "3.snapshot", "4.delta", "5.delta"],
            ["1.delta", "2.delta", "3.delta", "3.snapshot", "4.delta", "5.delta", "6.delta",
             "6.snapshot"]]
''',
    "counts_at": '''
def counts_at(spark, checkpoint, batch_id):
    return [{"a": 1, "b": 1}, {"a": 2, "b": 1}, {"a": 3, "b": 1, "c": 1}][batch_id]
''',
    "runs_again": '''
def runs_again(checkpoint):
    return [3]
''',
    "restart_error": '''
def restart_error(change):
    return None
''',
}

LEARNERS = [
    Learner("arithmetic", "correct", "Finds snapshot versions by a stride, reads state with the "
            "source's options, compares the newest ids of the two logs, returns early per "
            "query change", ARITHMETIC, dict(FULL)),
    Learner("listings_and_metadata", "correct", "Counts deltas since the last snapshot, reads "
            "through the course's read_state and Row.asDict, lists the logs with the toolkit, "
            "looks every change value up in one table", LISTINGS_AND_METADATA, dict(FULL)),
    Learner("snapshot_every_batch", "misconception", "Believes maintenance writes a snapshot "
            "after every commit",
            altered(ARITHMETIC, "predict_files", 'stride = min_deltas + 1 if way == "hdfs" else '
                    'max(min_deltas, 1)', "stride = 1"),
            losing("test_predict_files"),
            dimension='versions between two snapshots'),
    Learner("one_threshold", "misconception", "Believes both providers snapshot once the "
            "changes since the last one are more than minDeltasForSnapshot",
            altered(LISTINGS_AND_METADATA, "predict_files", '(way == "changelog" and since >= '
                    'min_deltas)', '(way == "changelog" and since > min_deltas)'),
            losing("test_predict_files"),
            dimension='the changelog way: a version whose changelogs since the last zip equal the setting'),
    Learner("zips_only_at_snapshots", "misconception", "Believes plain RocksDB uploads a zip "
            "only when a snapshot is due, like the changelog way",
            altered(ARITHMETIC, "predict_files", '''                names.add("%d.zip" % v)
                continue''', '''                if v % (min_deltas + 1) == 0:
                    names.add("%d.zip" % v)
                continue'''),
            losing("test_predict_files"),
            dimension='plain RocksDB'),
    Learner("latest_state", "misconception", "Believes the statestore source reads the state "
            "the query left, whatever micro-batch is asked about",
            altered(ARITHMETIC, "counts_at",
                    '''    reader = spark.read.format("statestore").option("batchId", batch_id)''',
                    '''    reader = spark.read.format("statestore")'''),
            losing("test_counts_at"),
            dimension="a micro-batch before the stream's last"),
    Learner("version_for_batch", "misconception", "Believes micro-batch b commits version b, "
            "so asks the source for batchId b - 1",
            altered(ARITHMETIC, "counts_at", '.option("batchId", batch_id)',
                    '.option("batchId", batch_id - 1) if batch_id else spark.read.format("statestore")'),
            losing("test_counts_at"),
            dimension="a micro-batch before the stream's last"),
    Learner("gone_means_empty", "misconception", "Believes a version the checkpoint dropped "
            "reads as an empty state",
            altered(ARITHMETIC, "counts_at", "        return None", "        return {}"),
            losing("test_counts_at"),
            dimension='a stream of more micro-batches than minBatchesToRetain'),
    Learner("versions_are_deltas", "misconception", "Believes a state version holds only "
            "its micro-batch's changes, as a delta file does, so adds up the versions up to "
            "the one asked about", {**ARITHMETIC, "counts_at": '''
def counts_at(spark, checkpoint, batch_id):
    # each version holds what its micro-batch changed: the count is their sum
    counts = {}
    for version in range(batch_id + 1):
        try:
            rows = (spark.read.format("statestore").option("batchId", version)
                    .load(checkpoint).collect())
        except Exception:
            return None
        for row in rows:
            counts[row.key.user] = counts.get(row.key.user, 0) + row.value["count"]
    return counts
'''}, losing("test_counts_at"),
            dimension='a user counted in two micro-batches'),
    Learner("every_missing_commit", "misconception", "Believes every micro-batch of offsets/ "
            "missing from commits/ runs again",
            altered(LISTINGS_AND_METADATA, "runs_again", "offsets[-1:]", "offsets"),
            losing("test_runs_again"),
            dimension='a commit lost besides the newest one'),
    Learner("no_commits_from_scratch", "misconception", "Believes that without commits/ the "
            "query starts over from micro-batch 0",
            altered(ARITHMETIC, "runs_again", '''    last_planned = newest("offsets")''',
                    '''    last_planned = newest("offsets")
    if not os.path.exists(os.path.join(checkpoint, "commits")):
        return list(range(last_planned + 1))'''),
            losing("test_runs_again"),
            dimension='all of commits/ deleted'),
    Learner("lost_state_replayed", "misconception", "Believes a restart that misses a state "
            "file or the whole state folder rebuilds the state by running the micro-batches "
            "again from the offset log",
            altered(ARITHMETIC, "restart_error", '''    if deleted == "state/":
        return "STREAMING_STATEFUL_OPERATOR_MISSING_STATE_DIRECTORY"
    if deleted == "the newest state file":
        return "CANNOT_LOAD_STATE_STORE.CANNOT_READ_STREAMING_STATE_FILE"
''', ""), losing("test_restart_error"),
            dimension='state/ deleted'),
    Learner("key_is_its_name", "misconception", "Believes the state's key is the grouping "
            "column's name, so grouping by the name's length, still called user, restarts",
            altered(ARITHMETIC, "restart_error", '''    if query == "count per name length":
        return "STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE"
''', ""), losing("test_restart_error"),
            dimension='another key of the same name'),
    Learner("aggregates_interchangeable", "misconception", "Believes the state keeps the "
            "user's rows, not the count, so another aggregate on the same key restarts "
            "on it",
            altered(ARITHMETIC, "restart_error", '''    if query == "max instead of count":
        return "STATE_STORE_VALUE_SCHEMA_NOT_COMPATIBLE"
''', ""), losing("test_restart_error"),
            dimension='another aggregate on the same key'),
    Learner("operator_swap_allowed", "misconception", "Believes the state is only keyed "
            "rows, so a de-duplication on the same key restarts on the count's state",
            altered(ARITHMETIC, "restart_error", '''    if query == "distinct users":
        return "STREAMING_STATEFUL_OPERATOR_NOT_MATCH_IN_STATE_METADATA"
''', ""), losing("test_restart_error"),
            dimension='another stateful operator'),
    Learner("partitions_are_fixed", "misconception", "Believes a restart with another number "
            "of shuffle partitions fails",
            altered(ARITHMETIC, "restart_error", "    return None",
                    '''    if "shuffle_partitions" in change:
        return "STATE_STORE_NUM_PARTITIONS_MISMATCH"
    return None'''),
            losing("test_restart_error"),
            dimension='another number of shuffle partitions'),
    Learner("commit_log_holds_state", "misconception", "Believes deleting commits/ loses the "
            "state, so the restart cannot load it",
            altered(ARITHMETIC, "restart_error", "    return None",
                    '''    if deleted == "commits/":
        return "CANNOT_LOAD_STATE_STORE.CANNOT_READ_STREAMING_STATE_FILE"
    return None'''),
            losing("test_restart_error"),
            dimension='commits/ deleted'),
    Learner("names_are_schema", "misconception", "Believes renaming the count column changes "
            "the state's schema",
            altered(ARITHMETIC, "restart_error", '''    if query == "max instead of count":''',
                    '''    if query == "count renamed":
        return "STATE_STORE_VALUE_SCHEMA_NOT_COMPATIBLE"
    if query == "max instead of count":'''),
            losing("test_restart_error"),
            dimension='the count renamed'),
    Learner("provider_is_free", "misconception", "Believes the provider is the session's at "
            "each start, so an HDFS restart cannot read RocksDB's files",
            altered(ARITHMETIC, "restart_error", "    return None",
                    '''    if change.get("provider") == "hdfs":
        return "CANNOT_LOAD_STATE_STORE.CANNOT_READ_STREAMING_STATE_FILE"
    return None'''),
            losing("test_restart_error"),
            dimension='the HDFS provider'),
    Learner("rocksdb_in_memory", "misconception", "Believes RocksDB keeps its state in the "
            "executor's memory: a plain RocksDB commit writes no file, and a restart finds the "
            "state in memory even when the newest state file is gone",
            altered(altered(ARITHMETIC, "predict_files", '''                names.add("%d.zip" % v)
                continue''', '''                continue'''),
                    "restart_error", '''    if deleted == "the newest state file":
        return "CANNOT_LOAD_STATE_STORE.CANNOT_READ_STREAMING_STATE_FILE"
''', ""),
            losing("test_predict_files", "test_restart_error"),
            dimension='the newest state file deleted'),
    Learner("version_is_whole_state", "misconception", "Believes each version holds the whole "
            "state, so reads micro-batch b's state from b's own changes",
            altered(ARITHMETIC, "counts_at",
                    '''    reader = spark.read.format("statestore").option("batchId", batch_id)''',
                    '''    reader = (spark.read.format("statestore").option("readChangeFeed", True)
              .option("changeStartBatchId", batch_id).option("changeEndBatchId", batch_id))'''),
            losing("test_counts_at"),
            dimension='a user a micro-batch leaves unchanged'),
    Learner("modulo_for_the_changelog", "misconception", "Believes RocksDB's changelog "
            "snapshots every minDeltasForSnapshot-th version, counted from version 0 "
            "(a modulo, which has no answer for a setting of 0)",
            altered(ARITHMETIC, "predict_files", "if v % stride == 0:",
                    "if (v % min_deltas == 0 if way == 'changelog' else v % stride == 0):"),
            losing("test_predict_files"),
            dimension='the changelog way with a setting of 0'),
    Learner("last_change_decides", "misconception", "Lets every change of a restart have its "
            "say in turn, so the last one decides, a refusal before it forgotten",
            {**ARITHMETIC, "restart_error": '''
REFUSED = {
    ("query", "max instead of count"): "STATE_STORE_VALUE_SCHEMA_NOT_COMPATIBLE",
    ("query", "count per name length"): "STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE",
    ("query", "distinct users"): "STREAMING_STATEFUL_OPERATOR_NOT_MATCH_IN_STATE_METADATA",
    ("delete", "the newest state file"): "CANNOT_LOAD_STATE_STORE.CANNOT_READ_STREAMING_STATE_FILE",
    ("delete", "state/"): "STREAMING_STATEFUL_OPERATOR_MISSING_STATE_DIRECTORY",
}

def restart_error(change):
    outcome = None
    for item in change.items():
        outcome = REFUSED.get(item)
    return outcome
'''}, losing("test_restart_error"),
            dimension='two changes, the refused one listed first'),
    Learner("first_change_decides", "misconception", "Believes the change listed first is "
            "the one a restart meets first, so looks only at it",
            altered(LISTINGS_AND_METADATA, "restart_error",
                    "    errors = [REFUSED[value] for value in change.values() if value in REFUSED]\n"
                    "    return errors[0] if errors else None", """    first = next(iter(change.values()))
    return REFUSED.get(first)"""),
            losing("test_restart_error"), dimension="two changes, the refused one listed last"),
    Learner("lost_commit_stops", "misconception", "Believes a restart whose last commit is "
            "gone finds a state version the commit log does not vouch for, and stops",
            altered(ARITHMETIC, "restart_error", "    return None",
                    '''    if deleted == "the last commit":
        return "CANNOT_LOAD_STATE_STORE.CANNOT_READ_STREAMING_STATE_FILE"
    return None'''),
            losing("test_restart_error"), dimension="the last commit deleted"),
    Learner("restart_replays_the_last_batch", "misconception", "Believes a restart always "
            "runs the newest micro-batch of the offset log again, committed or not",
            {**ARITHMETIC, "runs_again": '''
import os

def runs_again(checkpoint):
    planned = [int(name) for name in os.listdir(os.path.join(checkpoint, "offsets"))
               if name.isdigit()]
    return [max(planned)] if planned else []
'''}, losing("test_runs_again"), dimension="no commit lost"),
    Learner("offsets_decide_alone", "misconception", "Believes the offset log alone says where "
            "a restart goes on, so a lost commit file changes nothing: nothing runs again",
            {**LISTINGS_AND_METADATA, "runs_again": '''
def runs_again(checkpoint):
    # every planned micro-batch already ran: the restart goes on after the newest
    return []
'''}, losing("test_runs_again"), dimension="the newest commit lost alone"),
    Learner("files_and_restarts_only", "partial", "Did tasks 1 and 3 only",
            {k: ARITHMETIC[k] for k in ("predict_files", "runs_again")},
            {"test_predict_files": 3, "test_runs_again": 2}),
    Learner("example_typed_in", "hardcoded", "Typed in the worked examples' answers",
            HARDCODED, {}),
]

"""Chapter 2's learners: how Spark plans a streaming aggregation.

Grade cells: test_aggregate_modes (2), test_predict_counts (3), test_predict_metrics (2),
test_sessions (3).
"""
from corpora.learners import Learner, altered

FULL = {"test_aggregate_modes": 2, "test_predict_counts": 3,
        "test_predict_metrics": 2, "test_sessions": 3}


def losing(*grade_ids: str) -> dict[str, float]:
    return {g: p for g, p in FULL.items() if g not in grade_ids}



# -- right answers, written otherwise ----------------------------------------------------------
BY_PREFIX = {
    "aggregate_modes": '''
import re

MODE_OF_PREFIX = {"partial": "Partial", "merge": "PartialMerge"}

def aggregate_modes(plan):
    modes = []
    for aggregate in plan.find_all("HashAggregate"):
        prefix = re.match(r"(partial|merge)_", aggregate.functions[0])
        modes.append(MODE_OF_PREFIX[prefix.group(1)] if prefix else "Final")
    return modes
''',
    "predict_counts": '''
from collections import Counter

def predict_counts(batches):
    totals = Counter()
    answer = []
    for keys in batches:
        this_batch = Counter(keys)
        totals.update(this_batch)
        answer.append({"state": dict(totals),
                       "output": {key: totals[key] for key in this_batch}})
    return answer
''',
    "predict_metrics": '''
def predict_metrics(batches, partitions):
    answer = []
    for i, keys in enumerate(batches):
        every_key_so_far = set().union(*batches[:i + 1])
        answer.append({"numStateStoreInstances": partitions,
                       "numRowsUpdated": len(set(keys)),
                       "numRowsTotal": len(every_key_so_far)})
    return tuple(answer)
''',
    "sessions": '''
from pyspark.sql import functions as F

def sessions(events, gap_seconds):
    watermarked = events.withWatermark("ts", "10 seconds")
    window = F.session_window(F.col("ts"), f"{gap_seconds} seconds")
    return (watermarked.groupBy(window, "user")
                       .agg(F.sum("v").alias("total"), F.count("*").alias("events"))
                       .select("total", "events", "session_window", "user"))
''',
}

BY_POSITION = {
    "aggregate_modes": '''
def aggregate_modes(plan):
    """The first aggregate starts the partial buffers, the last finishes them, and every
    one between merges buffers."""
    count = len(plan.find_all("HashAggregate"))
    return ["Partial"] + ["PartialMerge"] * (count - 2) + ["Final"]
''',
    "predict_counts": '''
def predict_counts(batches):
    answer, before = [], {}
    for keys in batches:
        after = dict(before)
        for key in keys:
            after[key] = after.get(key, 0) + 1
        changed = sorted(set(keys), reverse=True)
        answer.append({"output": {key: after[key] for key in changed}, "state": after})
        before = after
    return answer
''',
    "predict_metrics": '''
import numpy as np

def predict_metrics(batches, partitions):
    seen = []
    answer = []
    for keys in batches:
        seen = list(np.union1d(seen, keys))
        answer.append({"numRowsTotal": np.int64(len(seen)),
                       "numRowsUpdated": np.int64(len(np.unique(keys))),
                       "numStateStoreInstances": np.int32(partitions)})
    return answer
''',
    "sessions": '''
def sessions(events, gap_seconds):
    return (events.withWatermark("ts", "10000 milliseconds")
                  .groupBy(F.expr(f"session_window(ts, '{gap_seconds} seconds')"), "user")
                  .agg(F.expr("count(1) AS events"), F.expr("sum(v) AS total")))
''',
}

ALL_MERGES = {
    "aggregate_modes": '''
def aggregate_modes(plan):
    def mode(node):
        if all(f.startswith("partial_") for f in node.functions):
            return "Partial"
        if all(f.startswith("merge_") for f in node.functions):
            return "PartialMerge"
        return "Final"
    return list(map(mode, plan.find_all("HashAggregate")))
''',
    "predict_counts": '''
from collections import defaultdict

def predict_counts(batches):
    state = defaultdict(int)
    answer = []
    for keys in batches:
        output = {}
        for key in keys:
            state[key] += 1
            output[key] = state[key]
        answer.append({"output": output, "state": {k: float(v) for k, v in state.items()}})
    return answer
''',
    "predict_metrics": '''
def predict_metrics(batches, partitions):
    from collections import Counter
    state = Counter()
    answer = []
    for keys in batches:
        written = Counter(keys)
        state.update(written)
        answer.append(dict(numRowsTotal=len(state), numRowsUpdated=len(written),
                           numStateStoreInstances=partitions))
    return answer
''',
    "sessions": '''
from pyspark.sql import functions as F
from pyspark.sql.functions import session_window, lit

def sessions(events, gap_seconds):
    return (events.withWatermark("ts", "10 seconds")
                  .groupBy("user", session_window("ts", f"{gap_seconds} seconds"))
                  .agg(F.sum(lit(1)).alias("events"), F.sum("v").alias("total")))
''',
}

LEARNERS = [
    Learner("by_prefix", "correct", "Reads the mode off the functions' prefix with a regular "
            "expression, counts with Counter, returns a tuple, and builds the session query "
            "with its columns in another order (its cell imports F again).", BY_PREFIX, FULL),
    Learner("by_position", "correct", "Names the modes by the aggregates' positions, copies "
            "the state dict per batch, answers with NumPy numbers, and writes the session "
            "window and the aggregates as SQL expressions (watermark in milliseconds).",
            BY_POSITION, FULL),
    Learner("all_merges", "correct", "Classifies each aggregate by all its functions, keeps "
            "counts in a defaultdict (as floats in the state), and counts the events as a "
            "sum of ones.", ALL_MERGES, FULL),
    # -- misconceptions -----------------------------------------------------------------------
    Learner("batch_plan", "misconception", "Believes a streaming aggregation is planned like "
            "a batch one: a partial and a final aggregate, nothing between.",
            {**BY_PREFIX, "aggregate_modes": '''
def aggregate_modes(plan):
    return ["Partial", "Final"]
'''}, losing("test_aggregate_modes"),
            dimension='a plain aggregation'),
    Learner("sink_first", "misconception", "Lists the aggregates from the sink down, as the "
            "plan prints them.", altered(BY_PREFIX, "aggregate_modes", "return modes",
                                         "return modes[::-1]"),
            losing("test_aggregate_modes"),
            dimension='a plain aggregation'),
    Learner("update_emits_whole_state", "misconception", "Believes update mode emits every "
            "row of the state, like complete mode.",
            altered(BY_PREFIX, "predict_counts",
                    '"output": {key: totals[key] for key in this_batch}',
                    '"output": dict(totals)'), losing("test_predict_counts"),
            dimension='a micro-batch that leaves a key unchanged'),
    Learner("state_holds_the_batch", "misconception", "Believes the state holds only the "
            "current micro-batch's counts (restore not merging with earlier batches).",
            {**BY_PREFIX, "predict_counts": '''
from collections import Counter

def predict_counts(batches):
    return [{"output": dict(Counter(keys)), "state": dict(Counter(keys))} for keys in batches]
'''}, losing("test_predict_counts"),
            dimension='a key coming back in a later micro-batch'),
    Learner("emits_batch_counts", "misconception", "Believes update mode emits each key's "
            "count within the micro-batch, not its running total.",
            altered(BY_PREFIX, "predict_counts",
                    '"output": {key: totals[key] for key in this_batch}',
                    '"output": dict(this_batch)'), losing("test_predict_counts"),
            dimension='a key coming back in a later micro-batch'),
    Learner("instances_per_key", "misconception", "Believes a state store instance opens "
            "only for a shuffle partition that received a key.",
            altered(BY_PREFIX, "predict_metrics", '"numStateStoreInstances": partitions',
                    '"numStateStoreInstances": min(partitions, len(set(keys)))'),
            losing("test_predict_metrics"),
            dimension='fewer keys than shuffle partitions'),
    Learner("updated_counts_events", "misconception", "Counts the events a micro-batch "
            "writes, not the groups.",
            altered(BY_PREFIX, "predict_metrics", '"numRowsUpdated": len(set(keys))',
                    '"numRowsUpdated": len(keys)'), losing("test_predict_metrics"),
            dimension='a key twice in one micro-batch'),
    Learner("short_watermark", "misconception", "Uses the session gap as the watermark "
            "delay.", altered(BY_PREFIX, "sessions", '"10 seconds"',
                              'f"{gap_seconds} seconds"'), losing("test_sessions"),
            dimension='an event more than the gap but less than 10 s behind the latest before it'),
    Learner("tumbling_windows", "misconception", "Believes a session window is a tumbling "
            "window of the gap's length.",
            altered(BY_PREFIX, "sessions",
                    'F.session_window(F.col("ts"), f"{gap_seconds} seconds")',
                    'F.window(F.col("ts"), f"{gap_seconds} seconds").alias("session_window")'),
            losing("test_sessions"),
            dimension='a session extended in a later micro-batch'),
    Learner("no_watermark", "misconception", "Leaves the watermark out: append mode cannot "
            "close a session without one.",
            altered(BY_PREFIX, "sessions", 'events.withWatermark("ts", "10 seconds")',
                    'events'), losing("test_sessions"),
            dimension='a session the watermark closes'),
    Learner("four_aggregates_always", "misconception", "Believes every streaming "
            "aggregation is planned with the same four aggregates, whatever its keys, window or "
            "functions.", {**BY_PREFIX, "aggregate_modes": '''
def aggregate_modes(plan):
    # partial, merge before the restore, merge after it, final: the streaming shape
    return ["Partial", "PartialMerge", "PartialMerge", "Final"]
'''}, losing("test_aggregate_modes"),
            dimension='a session-window aggregation'),
    Learner("modes_from_count_names", "misconception", "Believes a streaming aggregate's "
            "functions are the count's, so reads the mode off the names partial_count and "
            "merge_count only.", altered(ALL_MERGES, "aggregate_modes",
                                         '''        if all(f.startswith("partial_") for f in node.functions):
            return "Partial"
        if all(f.startswith("merge_") for f in node.functions):
            return "PartialMerge"''', '''        if any(f.startswith("partial_count(") for f in node.functions):
            return "Partial"
        if any(f.startswith("merge_count(") for f in node.functions):
            return "PartialMerge"'''), losing("test_aggregate_modes"),
            dimension='aggregate functions other than count'),
    Learner("counts_once_per_batch", "misconception", "Believes the partial aggregate turns "
            "a micro-batch's rows of a key into one row that adds 1 to the key's count.",
            altered(BY_PREFIX, "predict_counts", "this_batch = Counter(keys)",
                    "this_batch = Counter(set(keys))  # one partial row per key"),
            losing("test_predict_counts"),
            dimension='a key twice in one micro-batch'),
    Learner("empty_batch_not_run", "misconception", "Believes an empty micro-batch does not "
            "run the aggregation: no entry in the counts, no state store opened.",
            {**altered(BY_POSITION, "predict_counts", "    for keys in batches:\n",
                       "    for keys in filter(None, batches):  # no rows, no micro-batch\n"),
             "predict_metrics": '''
def predict_metrics(batches, partitions):
    answer, seen = [], set()
    for keys in batches:
        seen |= set(keys)
        # with no rows, no task opens a state store
        answer.append({"numStateStoreInstances": partitions if keys else 0,
                       "numRowsUpdated": len(set(keys)), "numRowsTotal": len(seen)})
    return answer
'''}, losing("test_predict_counts", "test_predict_metrics"),
            dimension='a micro-batch with no rows'),
    Learner("one_row_per_instance", "misconception", "Believes each state store instance "
            "holds one row, so the state never has more rows than shuffle partitions.",
            altered(BY_PREFIX, "predict_metrics",
                    '"numRowsTotal": len(every_key_so_far)',
                    '"numRowsTotal": min(partitions, len(every_key_so_far))'),
            losing("test_predict_metrics"),
            dimension='more keys than shuffle partitions'),
    # -- partial and hard-coded ---------------------------------------------------------------
    Learner("first_two_only", "partial", "Did tasks 1 and 2, left 3 and 4 untouched.",
            {k: BY_POSITION[k] for k in ("aggregate_modes", "predict_counts")},
            {"test_aggregate_modes": 2, "test_predict_counts": 3}),
    Learner("example_typed_in", "hardcoded", "Returns the worked examples' answers whatever "
            "the plan or the stream.", {"aggregate_modes": '''
def aggregate_modes(plan):
    return ["Partial", "PartialMerge", "PartialMerge", "Final"]
''', "predict_counts": '''
def predict_counts(batches):
    return [{"output": {"a": 2, "b": 1}, "state": {"a": 2, "b": 1}},
            {"output": {"c": 1, "a": 3}, "state": {"a": 3, "b": 1, "c": 1}},
            {"output": {"b": 2}, "state": {"a": 3, "b": 2, "c": 1}}]
''', "predict_metrics": '''
def predict_metrics(batches, partitions):
    return [{"numRowsTotal": 2, "numRowsUpdated": 2, "numStateStoreInstances": 2},
            {"numRowsTotal": 3, "numRowsUpdated": 2, "numStateStoreInstances": 2},
            {"numRowsTotal": 3, "numRowsUpdated": 1, "numStateStoreInstances": 2}]
'''}, {}),
]

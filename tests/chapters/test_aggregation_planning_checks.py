"""Chapter 2's checks, run in-process: right answers pass, misconceptions are caught.

Each misconception below is something a learner could believe after a quick read of the
plan; the check must fail it with a lesson that points at the right section.
"""
from collections import Counter

import pytest
from pyspark.sql import functions as F

from autograder import CheckFailed
from autograder.chapters.aggregation_planning import (
    REVISIT_BUFFERS, REVISIT_PARTITIONS, REVISIT_RESTORE_SAVE, REVISIT_SESSIONS,
    aggregate_mode, aggregation_chain, check_aggregate_modes, check_predicted_counts,
    check_predicted_metrics, check_sessions, hash_aggregates, reference_sessions,
)
from autograder.toolkit.plan import parse_plan
from autograder.widgets.plan_picture import STATEFUL_COLOUR, colour_of, draw_plan, label_of
from tests.support.classroom_fixtures import SUITE_SEED

SEED = SUITE_SEED  # the learner corpus's: Spark answers each question once

#: What explain() printed for groupBy("key").count() in update mode on Spark 4.3.
COUNT_PLAN = """== Physical Plan ==
*(4) HashAggregate(keys=[key#7], functions=[count(1)])
+- StateStoreSave [key#7], state info [ checkpoint = file:/tmp/c/state, runId = 8a, opId = 0, ver = 0, numPartitions = 2] stateStoreCkptIds = None, Update, 0, 0, 2
   +- *(3) HashAggregate(keys=[key#7], functions=[merge_count(1)])
      +- StateStoreRestore [key#7], state info [ checkpoint = file:/tmp/c/state, runId = 8a, opId = 0, ver = 0, numPartitions = 2] stateStoreCkptIds = None, 2
         +- *(2) HashAggregate(keys=[key#7], functions=[merge_count(1)])
            +- Exchange hashpartitioning(key#7, 2), REQUIRED_BY_STATEFUL_OPERATOR, [plan_id=49]
               +- *(1) HashAggregate(keys=[key#7], functions=[partial_count(1)])
                  +- FileScan json [key#7] Batched: false, DataFilters: [], Format: JSON, ReadSchema: struct<key:string>
"""


# -- the right answers (the solution notebook's) ------------------------------------------------
def modes_source_first(plan):
    modes = []
    for node in plan.find_all("HashAggregate"):
        first = node.functions[0]
        modes.append("Partial" if first.startswith("partial_")
                     else "PartialMerge" if first.startswith("merge_") else "Final")
    return modes


def running_counts(batches):
    state, answer = {}, []
    for keys in batches:
        for key in keys:
            state[key] = state.get(key, 0) + 1
        answer.append({"output": {key: state[key] for key in set(keys)}, "state": dict(state)})
    return answer


def metrics_per_partition(batches, partitions):
    seen, answer = set(), []
    for keys in batches:
        seen |= set(keys)
        answer.append({"numRowsTotal": len(seen), "numRowsUpdated": len(set(keys)),
                       "numStateStoreInstances": partitions})
    return answer


# -- misconceptions ---------------------------------------------------------------------------
def modes_as_printed(plan):
    """Reads the hash aggregates in explain()'s order: sink first."""
    return list(reversed(modes_source_first(plan)))


def save_before_restore(batches):
    """Believes save writes the batch's own counts, as if restore came after it."""
    answer, total = [], Counter()
    for keys in batches:
        total.update(keys)
        answer.append({"output": {k: total[k] for k in set(keys)}, "state": dict(Counter(keys))})
    return answer


def one_store_per_query(batches, partitions):
    return [{**facts, "numStateStoreInstances": 1}
            for facts in metrics_per_partition(batches, partitions)]


def fixed_windows(events, gap_seconds):
    """Tumbling windows of the gap's length instead of sessions."""
    return (events.withWatermark("ts", "10 seconds")
                  .groupBy("user", F.window("ts", f"{gap_seconds} seconds").alias("session_window"))
                  .agg(F.count("*").alias("events"), F.sum("v").alias("total")))


def hard_coded_counts(batches):
    return [{"output": {"a": 2, "b": 1}, "state": {"a": 2, "b": 1}},
            {"output": {"c": 1, "a": 3}, "state": {"a": 3, "b": 1, "c": 1}},
            {"output": {"b": 2}, "state": {"a": 3, "b": 2, "c": 1}}]


# -- reading a plan, without Spark ---------------------------------------------------------------
def test_the_mode_of_a_hash_aggregate_is_read_off_its_function_names():
    plan = parse_plan(COUNT_PLAN)
    assert [aggregate_mode(node) for node in hash_aggregates(plan)] == [
        "Partial", "PartialMerge", "PartialMerge", "Final"]


def test_the_aggregation_chain_runs_from_the_partial_aggregate_to_the_final_one():
    assert aggregation_chain(parse_plan(COUNT_PLAN)) == [
        "HashAggregate(Partial)", "Exchange", "HashAggregate(PartialMerge)",
        "StateStoreRestore", "HashAggregate(PartialMerge)", "StateStoreSave",
        "HashAggregate(Final)"]


def test_the_picture_has_one_box_per_operator_and_marks_the_stateful_ones():
    plan = parse_plan(COUNT_PLAN)
    figure = draw_plan(plan, title="count")
    (axes,) = figure.axes
    assert len(axes.texts) == len(list(plan.walk())) == 8
    save = plan.find("StateStoreSave")
    assert colour_of(save) == STATEFUL_COLOUR
    assert label_of(save).splitlines() == ["StateStoreSave [Update]", "keys: key", "state partitions: 2"]
    assert "hashpartitioning(key, 2)" in label_of(plan.find("Exchange"))
    # the legend names every colour the picture uses, and only those
    legend = [text.get_text() for text in axes.get_legend().get_texts()]
    assert legend == ["stateful: uses a state store", "aggregation, no state",
                      "data movement", "source or watermark"]


# -- the checks on real Spark ---------------------------------------------------------------------
@pytest.mark.slow
def test_the_solutions_pass_on_the_example_and_on_a_fresh_seed(spark, capsys):
    check_aggregate_modes(modes_source_first, seed=SEED)
    check_predicted_counts(running_counts, example=True)
    check_predicted_metrics(metrics_per_partition, seed=SEED)
    check_sessions(reference_sessions, seed=SEED)
    assert capsys.readouterr().out.count("✔") == 4


@pytest.mark.slow
def test_reading_the_plan_sink_first_gets_the_modes_backwards(spark):
    with pytest.raises(CheckFailed) as failure:
        check_aggregate_modes(modes_as_printed, example=True)
    assert failure.value.revisit == REVISIT_BUFFERS
    assert failure.value.expected == ["Partial", "PartialMerge", "PartialMerge", "Final"]


@pytest.mark.slow
def test_a_state_holding_only_the_batch_is_caught_at_the_first_repeated_key(spark):
    with pytest.raises(CheckFailed) as failure:
        check_predicted_counts(save_before_restore, example=True)
    assert failure.value.revisit == REVISIT_RESTORE_SAVE
    assert failure.value.batch == 1  # micro-batch 0 is the same either way
    assert failure.value.expected == {"a": 3, "b": 1, "c": 1}


@pytest.mark.slow
def test_one_state_store_per_query_is_wrong_on_any_stream(spark):
    with pytest.raises(CheckFailed) as failure:
        check_predicted_metrics(one_store_per_query, seed=SEED)
    assert failure.value.revisit == REVISIT_PARTITIONS
    assert failure.value.got == 1 and failure.value.expected in (3, 4)


@pytest.mark.slow
def test_the_example_answer_hard_coded_fails_on_a_fresh_stream(spark):
    # hard_coded_counts is the right answer for the chapter's example (the solution
    # notebook's self-check shows it), and nothing else.
    with pytest.raises(CheckFailed):
        check_predicted_counts(hard_coded_counts, seed=SEED)


@pytest.mark.slow
def test_the_example_modes_hard_coded_fail_on_fresh_queries(spark):
    # Fresh queries always include a session-window aggregation: two hash aggregates.
    with pytest.raises(CheckFailed) as failure:
        check_aggregate_modes(lambda plan: ["Partial", "PartialMerge", "PartialMerge", "Final"],
                              seed=SEED)
    assert failure.value.expected == ["Partial", "Final"]


@pytest.mark.slow
def test_fixed_windows_are_not_sessions(spark):
    with pytest.raises(CheckFailed) as failure:
        check_sessions(fixed_windows, example=True)
    assert failure.value.revisit == REVISIT_SESSIONS
    assert failure.value.expected == "SessionWindowStateStoreRestore"

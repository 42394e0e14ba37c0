"""The state reader shows what a stateful operator keeps, through Spark's own sources."""
from autograder.driver import StreamRun
from autograder.state import state_as_dicts


def test_an_aggregation_keeps_one_row_per_group_spread_over_partitions(spark):
    with StreamRun(spark, "w STRING", lambda df: df.groupBy("w").count(),
                   output_mode="update") as run:
        run.add_batch([("a",), ("b",), ("a",)])
        state = state_as_dicts(run.state())
        metadata = run.state_metadata()

    assert sorted((row["key"]["w"], row["value"]["count"]) for row in state) == [
        ("a", 2), ("b", 1)]
    assert {row["partition_id"] for row in state} <= {0, 1}
    assert [(m.operatorId, m.operatorName, m.numPartitions) for m in metadata] == [
        (0, "stateStoreSave", 2)]


def test_an_older_version_of_the_state_can_be_read_by_batch_id(spark):
    with StreamRun(spark, "w STRING", lambda df: df.groupBy("w").count(),
                   output_mode="update") as run:
        run.add_batch([("a",)])
        run.add_batch([("a",), ("a",)])
        then = state_as_dicts(run.state(batchId=0))
        now = state_as_dicts(run.state())

    assert [row["value"]["count"] for row in then] == [1]
    assert [row["value"]["count"] for row in now] == [3]

"""The state reader shows what a stateful operator keeps, through Spark's own sources."""
from autograder.toolkit.driver import StreamRun
from autograder.toolkit.state import state_as_dicts


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


def test_reading_again_after_each_micro_batch_shows_that_micro_batch(spark):
    # A run asks Spark once per committed micro-batch and question; the next commit must
    # always be seen, whether the batch came through add_batch or a restart's catch-up.
    with StreamRun(spark, "w STRING", lambda df: df.groupBy("w").count(),
                   output_mode="update") as run:
        def counts_now():
            return sorted((row["key"]["w"], row["value"]["count"])
                          for row in state_as_dicts(run.state()))

        seen = []
        for rows in ([("a",)], [("a",), ("b",)]):
            run.add_batch(rows)
            seen += [counts_now(), counts_now()]
        run.stop()
        run.write_input([("b",)])      # read by the restarted query, not by add_batch
        run.start().process_all_available()
        seen.append(counts_now())

    assert seen == [[("a", 1)], [("a", 1)], [("a", 2), ("b", 1)], [("a", 2), ("b", 1)],
                    [("a", 2), ("b", 2)]]

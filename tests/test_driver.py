"""The micro-batch driver, StreamTest style: add data, process, check the last batch."""
import pytest

from autograder.driver import StreamRun, StreamTimeout


def test_each_added_batch_is_one_micro_batch_with_its_own_output(spark):
    with StreamRun(spark, "id INT", lambda df: df.where("id % 2 = 0")) as run:
        (first,) = run.add_batch([(1,), (2,), (4,)])
        (second,) = run.add_batch([(3,)])
        (third,) = run.add_batch([(6,)])

    assert [b.batch_id for b in (first, second, third)] == [0, 1, 2]
    assert [b.input_rows for b in (first, second, third)] == [3, 1, 1]
    assert sorted(r.id for r in first.output) == [2, 4]
    assert second.output == []
    assert [r.id for r in third.output] == [6]


def test_a_restarted_query_resumes_from_its_checkpoint(spark):
    with StreamRun(spark, "w STRING", lambda df: df.groupBy("w").count(),
                   output_mode="update") as run:
        run.add_batch([("a",), ("a",)])
        run.restart()
        (batch,) = run.add_batch([("a",)])

        assert batch.batch_id == 1
        assert [tuple(r) for r in batch.output] == [("a", 3)]
        assert batch.state_metric("numRowsTotal") == 1


def test_a_watermark_move_brings_a_no_data_batch(spark):
    def windowed(df):
        return (df.withWatermark("ts", "0 seconds")
                  .groupBy("ts").count())

    with StreamRun(spark, "ts TIMESTAMP", windowed, output_mode="append") as run:
        run.add_batch([("2026-01-01T00:00:00",)])
        batches = run.add_batch([("2026-01-01T00:00:10",)])

    # the data batch, then a batch with no input that emits what the watermark closed
    assert [b.input_rows for b in batches] == [1, 0]
    assert batches[1].watermark == "2026-01-01T00:00:10.000Z"
    assert [r["count"] for r in batches[1].output] == [1]


def test_a_batch_that_does_not_finish_in_time_is_stopped_and_reported(spark):
    # a budget of a millisecond: no micro-batch finishes that fast
    with StreamRun(spark, "id INT", lambda df: df, timeout=0.001) as run:
        with pytest.raises(StreamTimeout, match="within 0 s"):
            run.add_batch([(1,)])
        assert not run.query.isActive


def test_the_run_folder_is_removed_on_close(spark):
    run = StreamRun(spark, "id INT", lambda df: df).start()
    run.add_batch([(1,)])
    run.close()
    assert not run.root.exists()

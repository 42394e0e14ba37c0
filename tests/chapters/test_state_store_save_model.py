"""The executable model of StateStoreSaveExec agrees with real Spark.

Differential testing: `hypothesis` draws small streams of event times and a watermark
delay; the chapter's windowed count runs on real Spark in Append, Update and Complete modes
side by side, and :mod:`autograder.chapters.save_model` must predict every micro-batch Spark ran
(no-data ones included): its output rows and its four state row counts.

The streams aim at the boundaries of docs/grading-quality.md: empty micro-batches (first,
in the middle, last), events on a window's first second (half the events), a delay that
is a multiple of 5 (so the watermark often lands exactly on a window's end), batch maxima
that fall, rows out of time order inside a micro-batch, windows that get one event. The
draw is derandomized: every run asks Spark about the same few streams, which costs
seconds each.
"""
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from autograder.chapters import save_model
from autograder.chapters.state_store_save import EXAMPLE_BATCHES, EXAMPLE_DELAY, spark_runs

event = st.one_of(st.sampled_from(range(0, 60, 10)), st.integers(min_value=0, max_value=59))
events = st.lists(event, min_size=0, max_size=3)
streams = st.lists(events, min_size=2, max_size=3).filter(lambda s: any(s))
delays = st.sampled_from([0, 5, 10, 15])


def model_facts(batches, mode, delay):
    return [{"input_rows": b.input_rows, "watermark": b.watermark, "output": b.output,
             "metrics": b.metrics} for b in save_model.run(batches, mode, delay)]


def spark_facts(facts):
    return [{key: batch[key] for key in ("input_rows", "watermark", "output", "metrics")}
            for batch in facts]


def test_the_model_reproduces_the_chapters_example(spark):
    for mode, facts in spark_runs(spark, EXAMPLE_BATCHES, EXAMPLE_DELAY).items():
        assert model_facts(EXAMPLE_BATCHES, mode, EXAMPLE_DELAY) == spark_facts(facts), mode


@pytest.mark.slow
@settings(max_examples=6, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(batches=streams, delay=delays)
# every boundary at once, whatever the draw: a window whose end the watermark reaches
# exactly (evicted in the no-data micro-batch, then a row of it dropped), an empty
# micro-batch, rows out of order, a falling maximum, an event on a window's first second
@example(batches=[[12], [], [25, 10], [19]], delay=5)
def test_the_model_agrees_with_spark_batch_by_batch(spark, batches, delay):
    for mode, facts in spark_runs(spark, batches, delay).items():
        assert model_facts(batches, mode, delay) == spark_facts(facts), (mode, batches, delay)


def test_the_model_keeps_the_same_state_in_append_and_update():
    # Append and Update differ only in what they emit, never in what they keep.
    stream = [[1, 5, 12], [25, 3], [8, 14, 31], [38, 2, 7]]
    append = save_model.run(stream, "append", 10)
    update = save_model.run(stream, "update", 10)
    assert [b.state for b in append] == [b.state for b in update]
    assert [b.metrics for b in append] == [b.metrics for b in update]


def test_complete_mode_never_evicts_and_runs_no_extra_batch():
    stream = [[1, 5, 12], [25, 3], [8, 14, 31], [38, 2, 7]]
    complete = save_model.run(stream, "complete", 10)
    assert len(complete) == len(stream)
    assert all(b.metrics["numRowsRemoved"] == 0 for b in complete)
    assert [b.metrics["numRowsTotal"] for b in complete] == [2, 3, 4, 4]

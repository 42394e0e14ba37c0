"""The micro-batch stepper: what it records from real Spark, and what it draws."""
from __future__ import annotations

from datetime import datetime

import ipywidgets as widgets
import pytest
from pyspark.sql import Row
from pyspark.sql import functions as F

from autograder import BatchRecord, StreamRun
from autograder.stepper import (
    Recording, Step, as_recording, is_no_data_batch, record_steps, step_html, stepper,
)


def at(second: int) -> datetime:
    return datetime(2024, 1, 1, 0, 0, second)


@pytest.fixture(scope="module")
def limited(spark) -> Recording:
    """limit(3) over five rows in three micro-batches."""
    with StreamRun(spark, "id INT", lambda df: df.limit(3)) as run:
        return record_steps(run, [[(1,), (2,)], [(3,), (4,)], [(5,)]])


@pytest.fixture(scope="module")
def windowed(spark) -> Recording:
    """A count per 10-second window with a 10-second watermark, in append mode."""
    def count_per_window(events):
        return (events.withWatermark("ts", "10 seconds")
                      .groupBy(F.window("ts", "10 seconds")).count())

    with StreamRun(spark, "id INT, ts TIMESTAMP", count_per_window) as run:
        return record_steps(run, [[(1, at(1)), (2, at(5))], [(3, at(25))]])


def test_record_steps_keeps_each_micro_batch_with_its_input_and_state(limited):
    assert [step.batch.batch_id for step in limited.steps] == [0, 1, 2]
    assert [step.input for step in limited.steps] == [[(1,), (2,)], [(3,), (4,)], [(5,)]]
    # The global limit's one state row counts the rows let through so far.
    assert [[row["value"]["value"] for row in step.state] for step in limited.steps] == [
        [2], [3], [3]]
    assert limited.title == "append"


def test_a_no_data_micro_batch_is_recorded_without_input(windowed):
    assert [step.batch.batch_id for step in windowed.steps] == [0, 1, 2, 3]
    assert [step.input for step in windowed.steps][1::2] == [[], []]
    assert [is_no_data_batch(step.batch) for step in windowed.steps] == [
        False, True, False, True]
    # State snapshots are read at each micro-batch's own version.
    assert [len(step.state) for step in windowed.steps] == [1, 1, 2, 1]


def test_the_view_of_a_step_shows_input_watermark_state_output_and_metrics(windowed):
    html = step_html(windowed.steps[3])
    assert 'data-batch-id="3"' in html
    assert "no-data micro-batch" in html
    assert "watermark: <code>2024-01-01T00:00:15.000Z</code>" in html
    assert "state store after the batch (1 row)" in html
    assert "output (1 row)" in html
    assert "{start: 2024-01-01 00:00:00, end: 2024-01-01 00:00:10}" in html
    assert "stateStoreSave.numRowsRemoved" in html


def test_the_view_escapes_what_it_shows():
    batch = _batch(0, output=[Row(text="<script>alert(1)</script>")])
    html = step_html(Step(batch, input=[("a<b",)], state=[]))
    assert "<script>" not in html and "&lt;script&gt;" in html and "a&lt;b" in html


def test_the_widget_links_a_slider_to_one_view_per_micro_batch(limited):
    box = stepper(limited)
    (play, slider), stack = box.children[0].children, box.children[1]
    assert isinstance(stack, widgets.Stack) and len(stack.children) == 3
    assert (slider.min, slider.max, slider.description) == (0, 2, "micro-batch")
    # The links are client-side (jslink), so they work on a page with no kernel.
    linked = [(link.source, link.target) for link in box.links]
    assert linked == [((slider, "value"), (stack, "selected_index")),
                      ((play, "value"), (slider, "value"))]
    assert repr(box) == "Stepper(append: 3 micro-batches)"


def test_several_runs_become_tabs_under_one_slider(limited, windowed):
    box = stepper({"limit": limited, "window": windowed})
    slider, tabs = box.children[0].children[1], box.children[1]
    assert isinstance(tabs, widgets.Tab) and tabs.titles == ("limit", "window")
    assert slider.max == 3
    # The shorter run says it has no fourth micro-batch rather than going blank.
    assert "no step 3" in tabs.children[0].children[3].value


def test_a_finished_run_can_be_shown_with_snapshots_taken_by_hand(spark):
    with StreamRun(spark, "id INT", lambda df: df.limit(1)) as run:
        states = []
        for rows in [[(1,)], [(2,)]]:
            run.add_batch(rows)
            states.append(run.state())
        recording = as_recording(run, states)
    assert [step.input for step in recording.steps] == [None, None]
    assert "rows not kept" in step_html(recording.steps[0])
    with pytest.raises(ValueError, match="one snapshot per micro-batch"):
        as_recording(recording.steps, states[:1])


def _batch(batch_id: int, output: list) -> BatchRecord:
    return BatchRecord(batch_id, 1, output, {"batchId": batch_id, "sources": []})

"""The micro-batch stepper: what it records from real Spark, and what it draws."""
from __future__ import annotations

import re
from datetime import datetime

import ipywidgets as widgets
import pytest
from pyspark.sql import Row
from pyspark.sql import functions as F

from autograder import BatchRecord, StreamRun
from autograder.widgets.stepper import (
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


@pytest.fixture(scope="module")
def windowed_complete(spark) -> Recording:
    """The same count and events in complete mode, which runs no no-data micro-batch."""
    def count_per_window(events):
        return (events.withWatermark("ts", "10 seconds")
                      .groupBy(F.window("ts", "10 seconds")).count())

    with StreamRun(spark, "id INT, ts TIMESTAMP", count_per_window,
                   output_mode="complete") as run:
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
    assert "{start: 2024-01-01 00:00:00, end: 2024-01-01 00:00:10}" in _visible_text(html)
    # A metric's name may wrap after its dot on a phone, and nowhere else.
    assert "stateStoreSave.<wbr>numRowsRemoved" in html


def test_the_view_escapes_what_it_shows():
    batch = _batch(0, output=[Row(text="<script>alert(1)</script>")])
    html = step_html(Step(batch, input=[("a<b",)], state=[]))
    assert "<script>" not in html and "&lt;script&gt;" in html and "a&lt;b" in html


def test_the_widget_links_a_slider_to_one_view_per_micro_batch(limited):
    box = stepper(limited)
    (play, slider), stack = box.children[0].children, box.children[1]
    assert isinstance(stack, widgets.Stack) and len(stack.children) == 3
    # One run: the slider reads the micro-batch's id.
    assert (slider.options, slider.description) == (("0", "1", "2"), "micro-batch")
    assert "stepper-named-positions" not in slider._dom_classes
    # The links are client-side (jslink), so they work on a page with no kernel.
    linked = [(link.source, link.target) for link in box.links]
    assert linked == [((slider, "index"), (stack, "selected_index")),
                      ((play, "value"), (slider, "index"))]
    assert repr(box) == "Stepper(append: 3 micro-batches)"


def test_several_runs_become_tabs_under_one_slider(limited, windowed):
    box = stepper({"limit": limited, "window": windowed})
    slider, tabs = box.children[0].children[1], box.children[1]
    assert isinstance(tabs, widgets.Tab) and tabs.titles == ("limit", "window")
    # Three inputs, and the window run's two no-data micro-batches: five positions.
    assert slider.options == ("input 0", "input 0, no-data", "input 1", "input 1, no-data",
                              "input 2")
    # Named positions: the page gives the readout room for the longest (course.css).
    assert "stepper-named-positions" in slider._dom_classes
    # A run with no micro-batch at a position says so rather than going blank.
    assert "limit: no no-data micro-batch here" in tabs.children[0].children[1].value
    assert "window: no micro-batch read input 2" in tabs.children[1].children[4].value


def test_tabs_line_up_by_input_when_one_mode_runs_no_no_data_micro_batches(
        windowed, windowed_complete):
    assert [step.batch.batch_id for step in windowed_complete.steps] == [0, 1]
    box = stepper({"append": windowed, "complete": windowed_complete})
    slider, tabs = box.children[0].children[1], box.children[1]
    assert slider.options == ("input 0", "input 0, no-data", "input 1", "input 1, no-data")
    append, complete = ([view.value for view in stack.children] for stack in tabs.children)
    # At every position both tabs show the same input rows.
    assert [_input_panel(view) for view in append] == [_input_panel(view) for view in complete]
    assert ["<strong>micro-batch 1</strong>" in view for view in complete] == [
        False, False, True, False]
    assert "no no-data micro-batch here; after micro-batch 0 (input 0) this run went on " \
           "with micro-batch 1" in complete[1]
    assert "after micro-batch 1 (input 1) this run went on with no other micro-batch" \
           in complete[3]


def test_the_input_table_names_its_columns_and_times_count_from_the_start(windowed):
    box = stepper(windowed, start=at(0))
    views = [view.value for view in box.children[1].children]
    assert "<th style='" in _input_panel(views[0])
    assert ">id</th>" in views[0] and ">ts</th>" in views[0]
    assert ">5 s</td>" in views[0] and ">25 s</td>" in views[2]
    assert "watermark: <em>none yet</em>" in views[0]
    assert "watermark: <code>15 s</code>" in views[3]
    # a window as the reader sees it, which may wrap after its comma and nowhere else
    assert "{start: 0 s, end: 10 s}" in _visible_text(views[3])
    assert "<span style='white-space:nowrap'>{start: 0 s,</span> " \
           "<span style='white-space:nowrap'>end: 10 s}</span>" in views[3]
    # a metric's name as the reader sees it (it may break after a dot on a narrow screen)
    assert "eventTime.max" in views[2].replace("<wbr>", "") and ">25 s</td>" in views[2]


def _visible_text(view: str) -> str:
    return re.sub(r"<[^>]+>", "", view)


def _input_panel(view: str) -> str:
    """The input panel of one view: its title and its table (or its "none")."""
    start = view.index(">input (")
    ends = [view.find(mark, start) for mark in ("</table>", "</em>")]
    return view[start:min(end for end in ends if end >= 0)]


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

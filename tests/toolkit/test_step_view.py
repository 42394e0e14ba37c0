"""What one view of the stepper says in its heading and its tables, from progress reports
written by hand (no Spark): a watermark only where the query has one, the slider's name for
the micro-batch in the heading, and times in one form in the heading and in the tables."""
from __future__ import annotations

import re
from datetime import datetime, timedelta

from pyspark.sql import Row

from autograder import BatchRecord
from autograder.widgets.step_view import Show, Step, step_html
from autograder.widgets.stepper import Recording, stepper

T0 = datetime(2024, 1, 1, 12, 0, 0)
T0_MS = 1_704_110_400_000
OFFSETS = {"startOffset": {"logOffset": 0}, "endOffset": {"logOffset": 1}}
STILL = {"startOffset": {"logOffset": 1}, "endOffset": {"logOffset": 1}}


def batch(batch_id: int, *, watermark: str | None = None, no_data: bool = False,
          output: list | None = None) -> BatchRecord:
    """A micro-batch's record; its progress names an event-time watermark only if given."""
    progress = {"batchId": batch_id, "sources": [STILL if no_data else OFFSETS]}
    if watermark is not None:
        progress["eventTime"] = {"watermark": watermark}
    return BatchRecord(batch_id, 0 if no_data else 1, output or [], progress)


def heading(view: str) -> str:
    """The view's heading as a reader reads it (its tags taken out)."""
    head = re.search(r'<div style="margin:0.3em 0">(.*?)</div>', view).group(1)
    return re.sub(r"<[^>]+>", "", head).replace("&middot;", "·")


def cells(view: str) -> list[tuple[str | None, str]]:
    """Every table cell of the view: its tooltip (None if it has none) and its text."""
    return [(title, re.sub(r"<[^>]*>", "", text)) for title, text in
            re.findall(r"<td style='[^']*'(?: title='([^']*)')?>(.*?)</td>", view)]


# -- a watermark only where the query has one -------------------------------------------
def test_a_query_without_event_time_shows_no_watermark():
    view = step_html(Step(batch(3), input=[("ann",)], state=[]))
    assert heading(view) == "micro-batch 3"
    assert "watermark" not in view


def test_a_query_with_a_watermark_shows_it_from_its_first_micro_batch_on():
    first = step_html(Step(batch(0, watermark="1970-01-01T00:00:00.000Z")), show=Show(T0))
    later = step_html(Step(batch(1, watermark="2024-01-01T12:00:15.000Z")), show=Show(T0))
    assert heading(first) == ("micro-batch 0 · watermark: none yet "
                              "(Spark's initial 1970-01-01 00:00:00)")
    assert heading(later) == "micro-batch 1 · watermark: 15 s"


# -- the heading names the micro-batch as the slider does ---------------------------------
def test_where_the_slider_names_positions_the_heading_says_the_same_name():
    data = step_html(Step(batch(4, watermark="2024-01-01T12:00:15.000Z")), position="input 2")
    after = step_html(Step(batch(5, watermark="2024-01-01T12:00:21.000Z", no_data=True)),
                      position="input 2, no-data")
    assert heading(data).startswith("micro-batch 4 (input 2) · watermark")
    assert heading(after).startswith(
        "micro-batch 5 (input 2, no-data: Spark ran it because the watermark moved)")


def test_tabs_whose_micro_batch_ids_differ_name_each_view_as_the_slider_does():
    # append runs a no-data micro-batch after its input, complete does not
    append = Recording("append", [Step(batch(0, watermark="1970-01-01T00:00:00.000Z")),
                                  Step(batch(1, watermark="2024-01-01T12:00:05.000Z",
                                             no_data=True)),
                                  Step(batch(2, watermark="2024-01-01T12:00:05.000Z"))])
    complete = Recording("complete", [Step(batch(0, watermark="1970-01-01T00:00:00.000Z")),
                                      Step(batch(1, watermark="2024-01-01T12:00:05.000Z"))])
    box = stepper({"append": append, "complete": complete}, start=T0)
    slider, tabs = box.children[0].children[1], box.children[1]
    readouts = list(slider.options)
    assert readouts == ["input 0", "input 0, no-data", "input 1"]
    for stack in tabs.children:
        for readout, view in zip(readouts, (child.value for child in stack.children)):
            if "<strong>micro-batch" in view:
                assert f"({readout}" in heading(view), (readout, heading(view))
    # complete's micro-batch 1 read input 1: the heading says so under the slider's "input 1"
    assert heading(tabs.children[1].children[2].value).startswith("micro-batch 1 (input 1)")


def test_a_single_run_numbered_from_0_keeps_the_micro_batch_id_on_the_slider():
    box = stepper(Recording("run", [Step(batch(0)), Step(batch(1))]))
    slider, stack = box.children[0].children[1], box.children[1]
    assert slider.options == ("0", "1")
    assert [heading(view.value) for view in stack.children] == ["micro-batch 0", "micro-batch 1"]


# -- times in one form, in the heading and in the tables ---------------------------------
def test_epoch_milliseconds_read_as_the_same_times_as_the_watermark_in_the_heading():
    # a processor's output: the watermark and its timers, as epoch milliseconds
    output = [Row(user="ann", watermark=T0_MS - 5_000, timers=[T0_MS + 5_000])]
    show = Show(T0, epoch_ms=("watermark", "timers"))
    view = step_html(Step(batch(2, watermark="2024-01-01T11:59:55.000Z", output=output),
                          input=[], state=[Row(user="ann", count=3, timers=[T0_MS + 5_000])]),
                     show=show)
    assert heading(view) == "micro-batch 2 · watermark: -5 s"
    shown = [text for _, text in cells(view)]
    assert "-5 s" in shown and shown.count("[5 s]") == 2
    assert not re.search(r"\d{10,}", "".join(shown)), shown
    # the exact moment and the raw number stay one hover away
    assert ("2024-01-01 11:59:55 = 1704110395000 ms", "-5 s") in cells(view)
    assert ("2024-01-01 12:00:05 = 1704110405000 ms", "[5 s]") in cells(view)


def test_moments_far_from_the_start_are_written_as_dates_not_as_seconds():
    # a timer set at Spark's initial watermark (the epoch) + 10 s
    show = Show(T0, epoch_ms=("timers",))
    assert show.cell("timers", [10_000]) == ("[1970-01-01 00:00:10]",
                                              "1970-01-01 00:00:10 = 10000 ms")
    assert show.moment(T0 + timedelta(minutes=3)) == "180 s"
    # and a time wraps between its date and its clock time, never at a date's hyphens
    view = step_html(Step(batch(0, output=[Row(timers=[10_000])])), show=show)
    assert ("title='1970-01-01 00:00:10 = 10000 ms'><span style='white-space:nowrap'>"
            "[1970-01-01</span> <span style='white-space:nowrap'>00:00:10]</span>") in view


def test_columns_not_named_as_epoch_milliseconds_keep_their_numbers():
    show = Show(T0, epoch_ms=("timers",))
    assert show.cell("count", 1_704_110_405_000) == ("1704110405000", None)
    assert Show(T0).cell("timers", [10_000]) == ("[10000]", None)


def test_a_stepper_with_a_start_says_once_what_its_times_count_from():
    box = stepper(Recording("run", [Step(batch(0))]), start=T0)
    assert box.children[-1].value == "Times are in seconds after 2024-01-01 12:00:00 UTC."
    assert len(stepper(Recording("run", [Step(batch(0))])).children) == 2

"""The stream-stream join's helpers say what chapter 6 reads off them: input rows at seconds
after T0, both sides' state rows marked new, kept or evicted, and each side's state
watermark as the join's plan line prints it. No Spark here: the chapter runs them on it."""
from datetime import datetime, timedelta, timezone

from autograder.chapters.stream_join import (
    CONDITION, SCHEMA, T0, changes, events, seconds, state_watermarks, watermark_seconds,
)

#: The join's line of a plan printed by Spark 4.3 (watermark at T0 - 3 s), cut after the cleanup.
PLAN_LINE = (
    "StreamingSymmetricHashJoin [ad#628], [click_ad#632], Inner, condition = [ ... ], "
    "state info [ checkpoint = file:/tmp/x/checkpoint/state, opId = 0, ver = 1, numPartitions = 2] "
    "stateStoreCkptIds = None, 0, {mark}, state cleanup [ left value predicate: "
    "(shown_at#631-T5000ms <= {left}), right value predicate: (clicked_at#633-T5000ms <= {right}) ], 2, Append"
)


def micros(second: float) -> int:
    """A moment ``second`` seconds after T0, in microseconds since the epoch (as plans print it)."""
    return int((T0.replace(tzinfo=timezone.utc) + timedelta(seconds=second)).timestamp() * 1_000_000)


def test_input_rows_name_their_side_and_count_seconds_from_t0():
    assert SCHEMA.split(", ")[0] == "side STRING"
    assert events("click", "a", 4, 9) == [("click", "a", T0 + timedelta(seconds=4)),
                                          ("click", "a", T0 + timedelta(seconds=9))]


def test_times_come_back_as_seconds_after_t0_whole_or_not():
    assert seconds(T0 + timedelta(seconds=12)) == 12
    assert seconds(T0 - timedelta(seconds=3)) == -3
    assert seconds(T0 + timedelta(milliseconds=1500)) == 1.5
    assert seconds((T0 + timedelta(seconds=2)).replace(tzinfo=timezone.utc)) == 2
    assert seconds(None) is None


def test_the_initial_watermark_is_none_yet():
    assert watermark_seconds("1970-01-01T00:00:00.000Z") is None
    assert watermark_seconds(None) is None
    moment = (T0 + timedelta(seconds=15)).isoformat(timespec="milliseconds") + "Z"
    assert watermark_seconds(moment) == 15


def test_each_sides_state_watermark_is_read_off_the_plan_one_millisecond_above_the_bound():
    line = PLAN_LINE.format(mark=micros(-3) // 1000, left=micros(-13) - 1000, right=micros(-3) - 1000)
    assert state_watermarks(line) == {"left": ("shown_at", -13), "right": ("clicked_at", -3)}


def test_a_join_without_cleanup_has_no_state_watermark():
    assert state_watermarks("StreamingSymmetricHashJoin ..., state cleanup [ left = null, right = null ], 2") == {}


def test_a_micro_batch_marks_rows_new_kept_or_evicted():
    def row(side, ad, time, matched=False, index=0):
        return {"side": side, "ad": ad, "index": index, "time": time, "matched": matched}
    before = [row("left", "a", 1, True), row("left", "c", 12), row("right", "a", 4, True)]
    after = [row("left", "c", 12), row("left", "d", 25), row("right", "a", 20)]
    marked = {(r["side"], r["ad"], r["time"]): r["this micro-batch"] for r in changes(before, after)}
    assert marked == {("left", "a", 1): "evicted", ("left", "c", 12): "kept",
                      ("left", "d", 25): "new", ("right", "a", 4): "evicted",
                      ("right", "a", 20): "new"}


def test_a_row_whose_index_changed_is_still_the_same_row():
    before = [{"side": "right", "ad": "a", "index": 1, "time": 6, "matched": True}]
    after = [{"side": "right", "ad": "a", "index": 0, "time": 6, "matched": True}]
    assert [r["this micro-batch"] for r in changes(before, after)] == ["kept"]


def test_the_condition_pairs_a_click_with_an_impression_up_to_ten_seconds_before():
    assert CONDITION == ("ad = click_ad AND clicked_at >= shown_at"
                         " AND clicked_at <= shown_at + interval 10 seconds")
    assert isinstance(T0, datetime) and T0.tzinfo is None

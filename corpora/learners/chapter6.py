"""Chapter 6's learners: the state of a stream-stream join.

Grade cells: test_predict_buffered (3), test_predict_unmatched (3), test_rows_per_key (2),
test_accepted (2).
"""
from corpora.learners import Learner, altered

FULL = {"test_predict_buffered": 3, "test_predict_unmatched": 3, "test_rows_per_key": 2,
        "test_accepted": 2}


def losing(*grade_ids: str) -> dict[str, float]:
    return {g: p for g, p in FULL.items() if g not in grade_ids}


# -- right answers, written otherwise ----------------------------------------------------------
#: Keeps every row that was not late and filters by the current watermark (eviction only
#: ever removes rows below a rising bound); finds an impression's match in the whole stream.
FILTERS = {
    "predict_buffered": '''
import math

def predict_buffered(stream, policy):
    arrived, newest, mark, steps = [], {}, -math.inf, []

    def state():
        keep = {"shown": lambda t: t >= mark - 10, "click": lambda t: t >= mark}
        return {name: [[ad, t] for side, ad, t in arrived if side == key and keep[key](t)]
                for name, key in (("left", "shown"), ("right", "click"))}

    for events in stream:
        arrived += [(side, ad, t) for side, ad, t in events if t > mark]
        for side, ad, t in events:
            newest[side] = max(newest.get(side, -math.inf), t)
        steps.append(state())
        sides = [newest.get("shown", -math.inf), newest.get("click", -math.inf)]
        moved = (min(sides) if policy == "min" else max(sides)) - 5
        if moved > mark:
            mark = moved
            steps.append(state())
    return steps
''',
    "predict_unmatched": '''
import math

def predict_unmatched(stream):
    # the watermark of every micro-batch, and the events that were not late
    marks, kept, newest, mark = [], [], {}, -math.inf
    for events in stream:
        marks.append(("data", mark))
        kept += [(side, ad, t) for side, ad, t in events if t > mark]
        for side, ad, t in events:
            newest[side] = max(newest.get(side, -math.inf), t)
        moved = min(newest.get("shown", -math.inf), newest.get("click", -math.inf)) - 5
        if moved > mark:
            mark = moved
            marks.append(("no-data", mark))
    out = [[] for _ in marks]
    for side, ad, t in kept:
        if side != "shown":
            continue
        if any(s == "click" and a == ad and t <= c <= t + 10 for s, a, c in kept):
            continue
        for number, (kind, m) in enumerate(marks):
            if kind == "no-data" and t < m - 10:
                out[number].append([ad, t])
                break
    return out
''',
    "rows_per_key": '''
from autograder import read_state

def rows_per_key(spark, checkpoint, batch_id):
    found = {}
    for side in ("left", "right"):
        rows = read_state(spark, checkpoint, batchId=batch_id,
                          storeName=side + "-keyWithIndexToValue")
        for row in rows:
            ad = row["key"]["field0"]
            found.setdefault(ad, {"left": 0, "right": 0})
            found[ad][side] += 1
    return found
''',
    "accepted": '''
def accepted(shape):
    how, marks, ranged, mode = (shape["how"], shape["watermarks"], shape["time_condition"],
                                shape["mode"])
    if mode == "complete":
        return "STREAMING_OUTPUT_MODE.UNSUPPORTED_OPERATION"
    if how == "left_anti":
        return "_LEGACY_ERROR_TEMP_3102"
    if how in ("left_outer", "right_outer", "full_outer") and mode == "update":
        return "_LEGACY_ERROR_TEMP_3102"
    watermarked = {"both": {"left", "right"}, "left": {"left"}, "right": {"right"},
                   "none": set()}[marks]
    may_go_unmatched = {"left_outer": {"right"}, "left_semi": {"right"},
                        "right_outer": {"left"}, "full_outer": {"left", "right"}}
    if how in may_go_unmatched and not (ranged and watermarked & may_go_unmatched[how]):
        return "_LEGACY_ERROR_TEMP_3102"
    if ranged and watermarked == {"left", "right"}:
        return "bounded"
    return "unbounded"
''',
}

#: Steps through the micro-batches with a small class per side; reads the state by side
#: with a DataFrame count; decides the shapes from a table of rules.
SIDES = {
    "predict_buffered": '''
class Side:
    def __init__(self, slack):
        self.rows, self.newest, self.slack = [], None, slack

    def take(self, ad, t, watermark):
        self.newest = t if self.newest is None else max(self.newest, t)
        if watermark is None or t > watermark:
            self.rows.append((ad, t))

    def evict(self, watermark):
        self.rows = [(ad, t) for ad, t in self.rows if t >= watermark - self.slack]


def predict_buffered(stream, policy):
    sides = {"shown": Side(10), "click": Side(0)}
    watermark, out = None, []
    for events in stream:
        for side, ad, t in events:
            sides[side].take(ad, t, watermark)
        out.append({"left": sorted(sides["shown"].rows), "right": sorted(sides["click"].rows)})
        seen = [s.newest for s in sides.values() if s.newest is not None]
        if policy == "min" and len(seen) < 2:
            continue
        candidate = (min(seen) if policy == "min" else max(seen)) - 5
        if watermark is None or candidate > watermark:
            watermark = candidate
            for s in sides.values():
                s.evict(watermark)
            out.append({"left": sorted(sides["shown"].rows), "right": sorted(sides["click"].rows)})
    return out
''',
    "predict_unmatched": '''
def predict_unmatched(stream):
    watermark, newest = None, {}
    left, right = {}, {}          # (ad, t, n) -> matched, one entry per row
    result, n = [], 0
    for events in stream:
        new_left, new_right = [], []
        for side, ad, t in events:
            newest[side] = t if side not in newest else max(newest[side], t)
            if watermark is not None and t <= watermark:
                continue
            n += 1
            if side == "shown":
                left[(ad, t, n)] = False
                new_left.append((ad, t, n))
            else:
                right[(ad, t, n)] = False
                new_right.append((ad, t, n))
        for l in list(left):
            for r in list(right):
                if (l in new_left or r in new_right) and l[0] == r[0] and 0 <= r[1] - l[1] <= 10:
                    left[l] = right[r] = True
        result.append([])
        if len(newest) == 2 and (watermark is None or min(newest.values()) - 5 > watermark):
            watermark = min(newest.values()) - 5
            result.append([[ad, t] for (ad, t, _), hit in left.items()
                           if t < watermark - 10 and not hit])
            left = {k: v for k, v in left.items() if k[1] >= watermark - 10}
            right = {k: v for k, v in right.items() if k[1] >= watermark}
    return result
''',
    "rows_per_key": '''
def rows_per_key(spark, checkpoint, batch_id):
    counts = {}
    for side in ("left", "right"):
        rows = (spark.read.format("statestore").option("batchId", batch_id)
                .option("joinSide", side).load(checkpoint)
                .groupBy("key.field0").count().collect())
        for ad, n in rows:
            counts.setdefault(ad, {"left": 0, "right": 0})[side] = n
    return counts
''',
    "accepted": '''
NEEDS_WATERMARK_ON = {"left_outer": ["right", "both"], "left_semi": ["right", "both"],
                      "right_outer": ["left", "both"], "full_outer": ["left", "right", "both"]}

def accepted(shape):
    if shape["mode"] == "complete":
        return "STREAMING_OUTPUT_MODE.UNSUPPORTED_OPERATION"
    join = shape["how"]
    refused = (join == "left_anti"
               or (join.endswith("outer") and shape["mode"] == "update")
               or (join in NEEDS_WATERMARK_ON
                   and (not shape["time_condition"]
                        or shape["watermarks"] not in NEEDS_WATERMARK_ON[join])))
    if refused:
        return "_LEGACY_ERROR_TEMP_3102"
    both = shape["watermarks"] == "both"
    return "bounded" if both and shape["time_condition"] else "unbounded"
''',
}

#: Believes a click can only meet an impression that arrived in the same input.
MATCHED_IN_ITS_OWN_INPUT = altered(altered(altered(
    FILTERS, "predict_unmatched",
    "    marks, kept, newest, mark = [], [], {}, -math.inf",
    "    marks, kept, newest, mark = [], [], {}, -math.inf\n"
    "    inputs = []   # a click can only meet an impression of its own input"),
    "predict_unmatched",
    "        kept += [(side, ad, t) for side, ad, t in events if t > mark]",
    "        kept += [(side, ad, t) for side, ad, t in events if t > mark]\n"
    "        inputs.append([(side, ad, t) for side, ad, t in events if t > mark])"),
    "predict_unmatched",
    '        if any(s == "click" and a == ad and t <= c <= t + 10 for s, a, c in kept):',
    '        if any(s == "click" and a == ad and t <= c <= t + 10\n'
    "               for rows in inputs if (side, ad, t) in rows for s, a, c in rows):")

# The worked examples' answers, typed in.
HARDCODED = {
    "predict_buffered": '''
def predict_buffered(stream, policy):
    return [{"left": [["a", 1], ["b", 2]], "right": [["a", 4]]}] * 10
''',
    "predict_unmatched": '''
def predict_unmatched(stream):
    return [[]] * 9 + [[["d", 25], ["e", 33]]]
''',
    "rows_per_key": '''
def rows_per_key(spark, checkpoint, batch_id):
    return {"a": {"left": 1, "right": 2}, "b": {"left": 1, "right": 1},
            "c": {"left": 1, "right": 0}}
''',
    "accepted": '''
def accepted(shape):
    return "bounded"
''',
}

LEARNERS = [
    Learner("filters", "correct", "Keeps every row that was not late and filters it by the "
            "current watermark; finds each impression's match in the whole stream; counts "
            "the rows of keyWithIndexToValue; decides a shape from sets of sides",
            FILTERS, dict(FULL)),
    Learner("sides", "correct", "Steps through the micro-batches with a class per side and "
            "rows keyed by arrival; counts each side's rows with a DataFrame grouped by key "
            "(joinSide); decides a shape from a table of the sides that need a watermark",
            SIDES, dict(FULL)),
    Learner("matched_rows_leave", "misconception", "Believes the state drops a row as soon "
            "as it has met a partner",
            altered(FILTERS, "predict_buffered", '''
        keep = {"shown": lambda t: t >= mark - 10, "click": lambda t: t >= mark}
        return {name: [[ad, t] for side, ad, t in arrived if side == key and keep[key](t)]
''', '''
        # a row that met a partner has done its job and leaves
        def met(side, ad, t):
            return any(s != side and a == ad and
                       (t <= u <= t + 10 if side == "shown" else u <= t <= u + 10)
                       for s, a, u in arrived)
        keep = {"shown": lambda t: t >= mark - 10, "click": lambda t: t >= mark}
        return {name: [[ad, t] for side, ad, t in arrived
                       if side == key and keep[key](t) and not met(side, ad, t)]
'''),
            losing("test_predict_buffered"),
            dimension='an impression a click matched'),
    Learner("both_sides_at_the_watermark", "misconception", "Believes both sides' rows leave "
            "once they are below the watermark, impressions as well as clicks",
            altered(FILTERS, "predict_buffered", '"shown": lambda t: t >= mark - 10',
                    '"shown": lambda t: t >= mark'),
            losing("test_predict_buffered"),
            dimension='an impression less than 10 s below a watermark'),
    Learner("late_only_below", "misconception", "Believes a row exactly at the watermark is "
            "still on time",
            altered(FILTERS, "predict_buffered", "for side, ad, t in events if t > mark]",
                    "for side, ad, t in events if t >= mark]"),
            losing("test_predict_buffered"),
            dimension='a row exactly at the watermark it arrives under'),
    Learner("always_the_slower_side", "misconception", "Believes the global watermark "
            "follows the slower side whatever multipleWatermarkPolicy says",
            altered(FILTERS, "predict_buffered",
                    'moved = (min(sides) if policy == "min" else max(sides)) - 5',
                    "moved = min(sides) - 5"),
            losing("test_predict_buffered"),
            dimension='the max policy, one side ahead of the other'),
    Learner("unmatched_out_at_once", "misconception", "Believes an outer join emits an "
            "impression with nulls in the micro-batch it arrived, when no click of that "
            "input matches it", {**FILTERS, "predict_unmatched": '''
import math

def predict_unmatched(stream):
    out, newest, mark = [], {}, -math.inf
    for events in stream:
        kept = [(side, ad, t) for side, ad, t in events if t > mark]
        out.append([[ad, t] for side, ad, t in kept if side == "shown" and not any(
            s == "click" and a == ad and t <= c <= t + 10 for s, a, c in kept)])
        for side, ad, t in events:
            newest[side] = max(newest.get(side, -math.inf), t)
        moved = min(newest.get("shown", -math.inf), newest.get("click", -math.inf)) - 5
        if moved > mark:
            mark = moved
            out.append([])
    return out
'''}, losing("test_predict_unmatched"),
            dimension='a click in a later input than the impression it matches'),
    Learner("out_below_the_watermark", "misconception", "Believes an unmatched impression "
            "comes out as soon as the watermark passes its own time",
            altered(FILTERS, "predict_unmatched", 'if kind == "no-data" and t < m - 10:',
                    'if kind == "no-data" and t < m:'),
            losing("test_predict_unmatched"),
            dimension='an impression less than 10 s below a watermark'),
    Learner("matched_in_its_own_input", "misconception", "Believes a click can only meet an "
            "impression that arrived in the same input", MATCHED_IN_ITS_OWN_INPUT,
            losing("test_predict_unmatched"),
            dimension='a click in a later input than the impression it matches'),
    Learner("the_newest_state_whatever_the_batch", "misconception", "Believes the state "
            "reader shows the state as it stands now, so leaves batchId out",
            altered(FILTERS, "rows_per_key", "read_state(spark, checkpoint, batchId=batch_id,",
                    "read_state(spark, checkpoint,"),
            losing("test_rows_per_key"),
            dimension="a micro-batch before the stream's last"),
    Learner("outer_joins_in_update_mode", "misconception", "Believes an outer join runs in "
            "Update mode as an inner one does",
            altered(FILTERS, "accepted", 'how in ("left_outer", "right_outer", "full_outer") '
                    'and mode == "update"', 'how == "left_anti" and mode == "update"'),
            losing("test_accepted"),
            dimension='an outer join in Update mode'),
    Learner("the_preserved_side_needs_the_watermark", "misconception", "Believes an outer "
            "join needs the watermark on the side it keeps every row of, not on the other",
            altered(FILTERS, "accepted",
                    'may_go_unmatched = {"left_outer": {"right"}, "left_semi": {"right"},\n'
                    '                        "right_outer": {"left"},',
                    'may_go_unmatched = {"left_outer": {"left"}, "left_semi": {"left"},\n'
                    '                        "right_outer": {"right"},'),
            losing("test_accepted"),
            dimension='an outer join with a watermark on one side only'),
    Learner("one_watermark_bounds_both", "misconception", "Believes a watermark on one side "
            "bounds the state of both",
            altered(FILTERS, "accepted", 'if ranged and watermarked == {"left", "right"}:',
                    "if ranged and watermarked:"),
            losing("test_accepted"),
            dimension='an inner join with a watermark on one side only'),
    Learner("inner_bounded_by_its_condition", "misconception", "Believes an inner join needs "
            "no watermark to be bounded: the time range alone bounds it",
            altered(SIDES, "accepted", 'return "bounded" if both and shape["time_condition"]',
                    'return "bounded" if (both or join == "inner") and shape["time_condition"]'),
            losing("test_accepted"),
            dimension='an inner join without watermarks'),
    Learner("rows_kept_once", "misconception", "Believes a side's buffer is a set: a row "
            "it already holds is not kept a second time",
            altered(FILTERS, "predict_buffered",
                    "        arrived += [(side, ad, t) for side, ad, t in events if t > mark]",
                    """        for side, ad, t in events:
            if t > mark and (side, ad, t) not in arrived:  # already buffered: kept once
                arrived.append((side, ad, t))"""),
            losing("test_predict_buffered"), dimension="the same row twice on one side"),
    Learner("watermark_from_the_clicks", "misconception", "Believes the clicks, the side "
            "that comes later, set the watermark an outer join lets its impressions out by",
            altered(FILTERS, "predict_unmatched",
                    '''        moved = min(newest.get("shown", -math.inf), newest.get("click", -math.inf)) - 5''',
                    '''        moved = newest.get("click", -math.inf) - 5'''),
            losing("test_predict_unmatched"),
            dimension="clicks running ahead while an unmatched impression waits"),
    Learner("one_impression_per_click", "misconception", "Believes a click pairs with one "
            "impression only, the first of its ad it is in range of; another one stays unmatched",
            altered(altered(FILTERS, "predict_unmatched", "    out = [[] for _ in marks]\n",
                            "    out = [[] for _ in marks]\n    taken = set()\n"),
                    "predict_unmatched",
                    '''        if any(s == "click" and a == ad and t <= c <= t + 10 for s, a, c in kept):
            continue''',
                    '''        partner = next((k for k, (s, a, c) in enumerate(kept) if k not in taken
                        and s == "click" and a == ad and t <= c <= t + 10), None)
        if partner is not None:
            taken.add(partner)
            continue'''),
            losing("test_predict_unmatched"),
            dimension="one click in range of two impressions of its ad"),
    Learner("late_click_matches", "misconception", "Believes a late click is dropped from "
            "the state but still meets the impressions buffered when it arrives",
            altered(FILTERS, "predict_unmatched",
                    "        kept += [(side, ad, t) for side, ad, t in events if t > mark]",
                    '''        kept += [(side, ad, t) for side, ad, t in events if t > mark or side == "click"]'''),
            losing("test_predict_unmatched"),
            dimension="a late click in range of a buffered impression"),
    Learner("watermarks_bound_without_the_range", "misconception", "Believes a watermark on "
            "both sides bounds the state of any join, with or without the time range",
            altered(FILTERS, "accepted", 'if ranged and watermarked == {"left", "right"}:',
                    'if watermarked == {"left", "right"}:'),
            losing("test_accepted"),
            dimension="a join without the time range, both sides with a watermark"),
    Learner("anti_as_semi", "misconception", "Believes a left anti join runs as a left semi "
            "one does, with the watermark on the clicks",
            altered(altered(FILTERS, "accepted", '''    if how == "left_anti":
        return "_LEGACY_ERROR_TEMP_3102"
''', ""), "accepted", '"left_semi": {"right"},', '"left_semi": {"right"}, "left_anti": {"right"},'),
            losing("test_accepted"), dimension="a left anti join"),
    Learner("complete_as_append", "misconception", "Believes a join runs in Complete mode as "
            "in Append mode",
            altered(FILTERS, "accepted", '''    if mode == "complete":
        return "STREAMING_OUTPUT_MODE.UNSUPPORTED_OPERATION"
''', ""), losing("test_accepted"), dimension="Complete mode"),
    Learner("semi_like_outer_in_update", "misconception", "Believes a left semi join, which "
            "also waits to know a row has no match, runs in Append mode only, as outer joins do",
            altered(FILTERS, "accepted",
                    'if how in ("left_outer", "right_outer", "full_outer") and mode == "update":',
                    'if how in ("left_outer", "right_outer", "full_outer", "left_semi") and mode == "update":'),
            losing("test_accepted"), dimension="a left semi join in Update mode"),
    Learner("buffers_only", "partial", "Did tasks 1 and 3 only",
            {k: FILTERS[k] for k in ("predict_buffered", "rows_per_key")},
            {"test_predict_buffered": 3, "test_rows_per_key": 2}),
    Learner("example_typed_in", "hardcoded", "Typed in the worked examples' answers",
            HARDCODED, {}),
]

"""Chapter 3's learners: StateStoreSaveExec in Append, Complete and Update modes.

Grade cells: test_predict_output (3), test_predict_metrics (3), test_smallest_delay (2),
test_update_step (2).
"""
from corpora.learners import Learner, altered

FULL = {"test_predict_output": 3, "test_predict_metrics": 3,
        "test_smallest_delay": 2, "test_update_step": 2}


def losing(*grade_ids: str) -> dict[str, float]:
    return {g: p for g, p in FULL.items() if g not in grade_ids}



# -- right answers, written otherwise ----------------------------------------------------------
#: An object that plays the operator, one micro-batch at a time.
OPERATOR_CLASS = {
    "predict_output": '''
class WindowedCount:
    def __init__(self, mode, delay, size):
        self.mode, self.delay, self.size = mode, delay, size
        self.state, self.watermark, self.ran = {}, None, []

    def behind(self, start):
        return self.watermark is not None and start + self.size <= self.watermark

    def micro_batch(self, events):
        groups = {}
        for t in events:
            start = t // self.size * self.size
            groups[start] = groups.get(start, 0) + 1
        updated, dropped = [], 0
        for start in sorted(groups):
            if self.mode != "complete" and self.behind(start):
                dropped += 1
                continue
            self.state[start] = self.state.get(start, 0) + groups[start]
            updated.append(start)
        evicted = [] if self.mode == "complete" else sorted(s for s in self.state if self.behind(s))
        if self.mode == "append":
            rows = [[s, self.state[s]] for s in evicted]
        elif self.mode == "update":
            rows = [[s, self.state[s]] for s in updated]
        else:
            rows = [[s, n] for s, n in sorted(self.state.items())]
        for s in evicted:
            del self.state[s]
        self.ran.append((rows, {"numRowsTotal": len(self.state), "numRowsUpdated": len(updated),
                                "numRowsRemoved": len(evicted),
                                "numRowsDroppedByWatermark": dropped}))

    def feed(self, events):
        self.micro_batch(events)
        if events:
            candidate = max(events) - self.delay
            if self.watermark is None or candidate > self.watermark:
                self.watermark = candidate
                if self.mode != "complete":
                    self.micro_batch([])


def replay(batches, mode, delay, size):
    operator = WindowedCount(mode, delay, size)
    for events in batches:
        operator.feed(events)
    return operator.ran


def predict_output(batches, mode, delay, size=10):
    return [rows for rows, _ in replay(batches, mode, delay, size)]
''',
    "predict_metrics": '''
def predict_metrics(batches, mode, delay, size=10):
    return [counts for _, counts in replay(batches, mode, delay, size)]
''',
    "smallest_delay": '''
def smallest_delay(batches, size=10):
    """Try delays from 0 up until the model drops nothing."""
    delay = 0
    while any(m["numRowsDroppedByWatermark"] for m in predict_metrics(batches, "append", delay, size)):
        delay += 1
    return delay
''',
    "update_step": '''
def update_step(state, events, watermark, size):
    operator = WindowedCount("update", 0, size)
    operator.state, operator.watermark = dict(state), watermark
    operator.micro_batch(events)
    rows, counts = operator.ran[0]
    return rows, operator.state, counts
''',
}

#: Lists the micro-batches Spark runs (each with its watermark) first, then folds a step.
TWO_PASSES = {
    "predict_output": '''
from collections import Counter

def micro_batches(batches, mode, delay):
    """(events, watermark) of every micro-batch Spark runs, no-data ones included."""
    runs, watermark = [], None
    for events in batches:
        runs.append((events, watermark))
        if events and (watermark is None or max(events) - delay > watermark):
            watermark = max(events) - delay
            if mode in ("append", "update"):
                runs.append(([], watermark))
    return runs

def step(state, events, watermark, mode, size):
    def late(start):
        return watermark is not None and start + size <= watermark
    counts = Counter(e - e % size for e in events)
    kept = {w: n for w, n in counts.items() if mode == "complete" or not late(w)}
    new = Counter(state)
    new.update(kept)
    gone = set() if mode == "complete" else {w for w in new if late(w)}
    shown = {"append": gone, "update": kept, "complete": new}[mode]
    rows = [(w, new[w]) for w in sorted(shown)]
    for w in gone:
        del new[w]
    metrics = {"numRowsTotal": len(new), "numRowsUpdated": len(kept),
               "numRowsRemoved": len(gone), "numRowsDroppedByWatermark": len(counts) - len(kept)}
    return rows, dict(new), metrics

def predict_output(batches, mode, delay, size=10):
    state, answer = {}, []
    for events, watermark in micro_batches(batches, mode, delay):
        rows, state, _ = step(state, events, watermark, mode, size)
        answer.append(rows)
    return answer
''',
    "predict_metrics": '''
def predict_metrics(batches, mode, delay, size=10):
    state, answer = {}, []
    for events, watermark in micro_batches(batches, mode, delay):
        _, state, metrics = step(state, events, watermark, mode, size)
        answer.append(metrics)
    return answer
''',
    "smallest_delay": '''
from itertools import chain

def smallest_delay(batches, size=10):
    needed = 0
    for i, events in enumerate(batches):
        latest = max(chain.from_iterable(batches[:i]), default=None)
        if latest is None:
            continue
        for event in events:
            window_end = (event // size + 1) * size
            needed = max(needed, latest - window_end + 1)
    return needed
''',
    "update_step": '''
def update_step(state, events, watermark, size):
    return step(state, events, watermark, "update", size)
''',
}

#: A watermark that starts at minus infinity, NumPy counts, tuples for rows.
MINUS_INFINITY = {
    "predict_output": '''
import math
import numpy as np

def windows_of(events, size):
    starts, counts = np.unique((np.asarray(events, dtype=int) // size) * size, return_counts=True)
    return dict(zip(starts.tolist(), counts))

def run_all(batches, mode, delay, size):
    state, wm, out = {}, -math.inf, []

    def one(events):
        groups = windows_of(events, size)
        fresh = {w: n for w, n in groups.items() if mode == "complete" or w + size > wm}
        for w, n in fresh.items():
            state[w] = state.get(w, 0) + n
        closing = [] if mode == "complete" else sorted(w for w in state if w + size <= wm)
        rows = {"append": [(w, state[w]) for w in closing],
                "update": [(w, state[w]) for w in sorted(fresh)],
                "complete": sorted(state.items())}[mode]
        for w in closing:
            state.pop(w)
        out.append((tuple(rows), dict(numRowsTotal=np.int64(len(state)),
                                      numRowsUpdated=np.int64(len(fresh)),
                                      numRowsRemoved=len(closing),
                                      numRowsDroppedByWatermark=len(groups) - len(fresh))))

    for events in batches:
        one(events)
        if events and max(events) - delay > wm:
            wm = max(events) - delay
            if mode != "complete":
                one([])
    return out

def predict_output(batches, mode, delay, size=10):
    return [list(rows) for rows, _ in run_all(batches, mode, delay, size)]
''',
    "predict_metrics": '''
def predict_metrics(batches, mode, delay, size=10):
    return tuple(metrics for _, metrics in run_all(batches, mode, delay, size))
''',
    "smallest_delay": '''
import numpy as np

def smallest_delay(batches, size=10):
    latest, lateness = None, [0]
    for events in batches:
        if latest is not None and events:
            ends = (np.asarray(events) // size + 1) * size
            lateness.append(int((latest - ends + 1).max()))
        if events:
            latest = max(events) if latest is None else max(latest, *events)
    return np.int64(max(lateness))
''',
    "update_step": '''
import math

def update_step(state, events, watermark, size):
    wm = -math.inf if watermark is None else watermark
    new_state = dict(state)
    groups = windows_of(events, size)
    written = sorted(w for w in groups if w + size > wm)
    for w in written:
        new_state[w] = new_state.get(w, 0) + int(groups[w])
    gone = [w for w in new_state if w + size <= wm]
    rows = [[w, new_state[w]] for w in written]
    for w in gone:
        del new_state[w]
    return (rows, new_state, {"numRowsTotal": len(new_state), "numRowsUpdated": len(written),
                              "numRowsRemoved": len(gone),
                              "numRowsDroppedByWatermark": len(groups) - len(written)})
''',
}

LEARNERS = [
    Learner("operator_class", "correct", "Plays the operator with a class, finds the delay by "
            "trying delays from 0 up on its own model, and reuses the class for the step.",
            OPERATOR_CLASS, FULL),
    Learner("two_passes", "correct", "Lists the micro-batches Spark runs first, then folds a "
            "Counter-based step; rows as tuples.", TWO_PASSES, FULL),
    Learner("minus_infinity", "correct", "A watermark starting at minus infinity, windows "
            "counted with NumPy (NumPy integers in the answers), tuples everywhere.",
            MINUS_INFINITY, FULL),
    # -- misconceptions -----------------------------------------------------------------------
    Learner("no_data_after_every_batch", "misconception", "Believes Append and Update run a "
            "no-data micro-batch after every data micro-batch, even when the watermark did "
            "not move.", altered(OPERATOR_CLASS, "predict_output", '''                self.watermark = candidate
                if self.mode != "complete":
                    self.micro_batch([])''', '''                self.watermark = candidate
            if self.mode != "complete":
                self.micro_batch([])'''),
            losing("test_predict_output", "test_predict_metrics"),
            dimension='a micro-batch that does not move the watermark'),
    Learner("update_emits_evicted", "misconception", "Believes Update mode also emits the "
            "windows it evicts.", altered(OPERATOR_CLASS, "predict_output",
                                          "[[s, self.state[s]] for s in updated]",
                                          "[[s, self.state[s]] for s in sorted(set(updated) | set(evicted))]"),
            # its Update step is the same class: wrong there too
            losing("test_predict_output", "test_update_step"),
            dimension='a window the watermark passes after it got rows'),
    Learner("complete_evicts", "misconception", "Believes Complete mode evicts the windows "
            "behind the watermark too.",
            altered(OPERATOR_CLASS, "predict_output",
                    'evicted = [] if self.mode == "complete" else sorted(',
                    'evicted = sorted('),
            losing("test_predict_output", "test_predict_metrics"),
            dimension='a window the watermark passes after it got rows'),
    Learner("append_emits_every_change", "misconception", "Believes Append mode emits a "
            "window each time its count changes.",
            altered(OPERATOR_CLASS, "predict_output", 'if self.mode == "append":',
                    'if False:'), losing("test_predict_output"),
            dimension='a window that gets rows in two micro-batches'),
    Learner("late_by_start", "misconception", "Believes a window is late once the watermark "
            "passes its start, not its end.",
            altered(OPERATOR_CLASS, "predict_output", "start + self.size <= self.watermark",
                    "start < self.watermark"),
            # the class plays every task: the delay it finds and its step are wrong too
            losing("test_predict_output", "test_predict_metrics", "test_smallest_delay",
                   "test_update_step"),
            dimension="a watermark past a window's start but not its end"),
    Learner("watermark_from_own_batch", "misconception", "Believes a micro-batch runs with the "
            "watermark its own events set.", {**TWO_PASSES, "predict_output":
                                              TWO_PASSES["predict_output"].replace(
            '''        runs.append((events, watermark))
        if events and (watermark is None or max(events) - delay > watermark):
            watermark = max(events) - delay
            if mode in ("append", "update"):
                runs.append(([], watermark))''',
            '''        if events and (watermark is None or max(events) - delay > watermark):
            watermark = max(events) - delay
        runs.append((events, watermark))''')},
            losing("test_predict_output", "test_predict_metrics"),
            dimension="an event its own micro-batch's latest event would make late"),
    Learner("updated_counts_events", "misconception", "Counts the events a micro-batch "
            "writes, not the groups.",
            altered(TWO_PASSES, "predict_metrics", "answer.append(metrics)",
                    'answer.append({**metrics, "numRowsUpdated": len(events)})'),
            losing("test_predict_metrics"),
            dimension='two events of one window in one micro-batch'),
    Learner("delay_off_by_one", "misconception", "Believes an event is kept while its "
            "window's end is at the watermark.",
            altered(TWO_PASSES, "smallest_delay", "latest - window_end + 1",
                    "latest - window_end"), losing("test_smallest_delay")),
    Learner("delay_from_the_latest_ever", "misconception", "Measures lateness from the latest "
            "event of the whole stream, not the latest one before the event's batch.",
            {**TWO_PASSES, "smallest_delay": '''
def smallest_delay(batches, size=10):
    events = [e for batch in batches for e in batch]
    if not events:
        return 0
    return max(0, max(max(events) - ((e // size + 1) * size) + 1 for e in events))
'''}, losing("test_smallest_delay"),
            dimension='a micro-batch followed by an event later than any before it'),
    Learner("watermark_starts_at_t0", "misconception", "Believes the watermark starts at T0, "
            "the stream's start, so a first micro-batch whose latest event is within the delay "
            "of T0 does not move it (Spark's starts at the epoch, long before).",
            altered(OPERATOR_CLASS, "predict_output",
                    "self.state, self.watermark, self.ran = {}, None, []",
                    "self.state, self.watermark, self.ran = {}, 0, []  # T0: the stream's start"),
            losing("test_predict_output", "test_predict_metrics"),
            dimension="an event at the stream's start, second 0"),
    Learner("watermark_from_previous_batch", "misconception", "Believes the watermark is the "
            "previous micro-batch's latest event minus the delay, so it moves back after a "
            "micro-batch of older events.",
            altered(OPERATOR_CLASS, "predict_output",
                    "if self.watermark is None or candidate > self.watermark:",
                    "if candidate != self.watermark:  # the previous micro-batch sets it"),
            # the class plays the delay task too: its delay is measured from the same watermark
            losing("test_predict_output", "test_predict_metrics", "test_smallest_delay"),
            dimension="a micro-batch whose latest event is below the previous micro-batch's"),
    Learner("delay_from_previous_batch", "misconception", "Measures how late an event is "
            "from the latest event of the micro-batch just before it, not the latest so far.",
            altered(TWO_PASSES, "smallest_delay",
                    "latest = max(chain.from_iterable(batches[:i]), default=None)",
                    "latest = max(batches[i - 1], default=None) if i else None"),
            losing("test_smallest_delay"),
            dimension='a late event whose latest earlier event is not in the micro-batch just before'),
    Learner("dropped_counts_rows", "misconception", "Believes numRowsDroppedByWatermark counts "
            "the late rows, not the late groups (windows).",
            altered(TWO_PASSES, "predict_output",
                    '"numRowsDroppedByWatermark": len(counts) - len(kept)}',
                    '"numRowsDroppedByWatermark": sum(counts.values()) - sum(kept.values())}'),
            # its Update step is the same step: wrong there too
            losing("test_predict_metrics", "test_update_step"),
            dimension='two late rows of one window in one micro-batch'),
    Learner("window_end_rounded_up", "misconception", "Takes the end of an event's window as "
            "the event time rounded up to the window size, so an event on a window's first "
            "second ends its own window.",
            altered(TWO_PASSES, "smallest_delay", "window_end = (event // size + 1) * size",
                    "window_end = -(-event // size) * size"),
            losing("test_smallest_delay"),
            dimension="an event on a window's first second"),
    Learner("late_by_event_time", "misconception", "Believes a row is dropped once its own "
            "event time is at or behind the watermark, not its window's end.",
            altered(TWO_PASSES, "smallest_delay", "window_end = (event // size + 1) * size",
                    "window_end = event  # the row itself must stay ahead of the watermark"),
            losing("test_smallest_delay")),
    Learner("step_keeps_expired", "misconception", "Believes the Update step never removes a "
            "window from the state.",
            altered(TWO_PASSES, "update_step", "return step(state, events, watermark, "
                    '"update", size)', '''rows, _, metrics = step(state, events, watermark, "update", size)
    kept = dict(state)
    for row in rows:
        kept[row[0]] = row[1]
    return rows, kept, {**metrics, "numRowsTotal": len(kept), "numRowsRemoved": 0}'''),
            losing("test_update_step")),
    Learner("late_only_past_the_end", "misconception", "Believes a window whose end is "
            "exactly the watermark is still open: late (and evicted) only once the watermark "
            "is past its end.",
            altered(OPERATOR_CLASS, "predict_output", "start + self.size <= self.watermark",
                    "start + self.size < self.watermark  # at the end it still takes rows"),
            # the class plays every task: the delay it finds and its step are wrong too
            losing("test_predict_output", "test_predict_metrics", "test_smallest_delay",
                   "test_update_step"),
            dimension='a window that ends exactly at a watermark the stream reaches'),
    Learner("window_holds_its_end", "misconception", "Believes a window holds the second "
            "its end names rather than the one its start names, so an event on a window's "
            "first second belongs to the window before.",
            altered(OPERATOR_CLASS, "predict_output", "start = t // self.size * self.size",
                    "start = (t - 1) // self.size * self.size  # (start, end]"),
            losing("test_predict_output", "test_predict_metrics", "test_smallest_delay",
                   "test_update_step"),
            dimension="an event on a window's first second"),
    Learner("complete_silent_without_rows", "misconception", "Believes Complete mode emits "
            "nothing in a micro-batch that brings no rows, since nothing changed.",
            altered(OPERATOR_CLASS, "predict_output",
                    "rows = [[s, n] for s, n in sorted(self.state.items())]",
                    "rows = [[s, n] for s, n in sorted(self.state.items())] if events else []"),
            losing("test_predict_output"), dimension="a micro-batch with no rows"),
    Learner("late_rows_by_event_time", "misconception", "Believes a row is dropped once its "
            "own event time is behind the watermark, even if its window is still open.",
            altered(OPERATOR_CLASS, "predict_output", """        for t in events:
            start = t // self.size * self.size""", """        for t in events:
            if self.mode != "complete" and self.watermark is not None and t < self.watermark:
                continue  # behind the watermark: late
            start = t // self.size * self.size"""),
            losing("test_predict_output", "test_predict_metrics", "test_smallest_delay",
                   "test_update_step"),
            dimension="an event behind the watermark in a window that ends one second after it"),
    Learner("watermark_from_last_event", "misconception", "Believes the watermark comes from "
            "the last event of a micro-batch, as listed, not its latest.",
            altered(OPERATOR_CLASS, "predict_output", "candidate = max(events) - self.delay",
                    "candidate = events[-1] - self.delay"),
            losing("test_predict_output", "test_predict_metrics", "test_smallest_delay"),
            dimension="events out of order within a micro-batch"),
    Learner("no_watermark_without_delay", "misconception", "Believes a delay of 0 means no "
            "watermark at all: nothing is ever late or evicted.",
            altered(OPERATOR_CLASS, "predict_output", """        if events:
            candidate = max(events) - self.delay""", """        if events and self.delay:
            candidate = max(events) - self.delay"""),
            losing("test_predict_output", "test_predict_metrics", "test_smallest_delay"),
            dimension="a delay of 0"),
    Learner("late_rows_kept_in_update", "misconception", "Believes only Append mode drops "
            "the rows of a late window; Update counts them in.",
            altered(OPERATOR_CLASS, "predict_output",
                    'if self.mode != "complete" and self.behind(start):',
                    'if self.mode == "append" and self.behind(start):'),
            losing("test_predict_output", "test_predict_metrics", "test_update_step"),
            dimension="a micro-batch of late rows only"),
    Learner("every_batch_has_rows", "misconception", "Believes every micro-batch brings rows, "
            "so the latest event so far is the largest of the batches' latest ones.",
            altered(TWO_PASSES, "smallest_delay",
                    "latest = max(chain.from_iterable(batches[:i]), default=None)",
                    "latest = max((max(batch) for batch in batches[:i]), default=None)"),
            losing("test_smallest_delay"), dimension="a micro-batch with no rows"),
    Learner("some_delay_needed", "misconception", "Believes a watermark needs some delay, "
            "so the smallest one is 1 second at least.",
            altered(OPERATOR_CLASS, "smallest_delay", "    delay = 0\n", "    delay = 1\n"),
            losing("test_smallest_delay"),
            dimension="a stream nothing is late in, whatever the delay (the answer is 0)"),
    Learner("delay_from_own_batch", "misconception", "Measures how late an event is from the "
            "latest event so far, its own micro-batch included.",
            altered(TWO_PASSES, "smallest_delay",
                    "latest = max(chain.from_iterable(batches[:i]), default=None)",
                    "latest = max(chain.from_iterable(batches[:i + 1]), default=None)"),
            losing("test_smallest_delay"),
            dimension="an event behind a later event of its own micro-batch by more than a window"),
    Learner("watermark_moves_on_a_tie", "misconception", "Believes the watermark moves, and "
            "a no-data micro-batch follows, when the latest event minus the delay equals it.",
            altered(OPERATOR_CLASS, "predict_output",
                    "if self.watermark is None or candidate > self.watermark:",
                    "if self.watermark is None or candidate >= self.watermark:"),
            losing("test_predict_output", "test_predict_metrics"),
            dimension="a micro-batch whose latest event minus the delay is the watermark it runs with"),
    Learner("dropped_is_a_flag", "misconception", "Believes numRowsDroppedByWatermark says "
            "whether a micro-batch dropped anything (1), not how many windows.",
            altered(TWO_PASSES, "predict_output",
                    '"numRowsDroppedByWatermark": len(counts) - len(kept)}',
                    '"numRowsDroppedByWatermark": int(len(counts) > len(kept))}'),
            losing("test_predict_metrics", "test_update_step"),
            dimension="two late windows in one micro-batch"),
    # -- partial and hard-coded ---------------------------------------------------------------
    Learner("first_two_only", "partial", "Did tasks 1 and 2, left 3 and 4 untouched.",
            {k: TWO_PASSES[k] for k in ("predict_output", "predict_metrics")},
            {"test_predict_output": 3, "test_predict_metrics": 3}),
    Learner("example_typed_in", "hardcoded", "Returns the worked example's answers whatever "
            "the stream.", {"predict_output": '''
def predict_output(batches, mode, delay, size=10):
    return {"append": [[], [], [], [[0, 3]]],
            "update": [[[0, 2], [10, 1]], [], [[0, 3], [20, 1]], []],
            "complete": [[[0, 2], [10, 1]], [[0, 3], [10, 1], [20, 1]]]}[mode]
''', "smallest_delay": '''
def smallest_delay(batches, size=10):
    return 5
'''}, {}),
]

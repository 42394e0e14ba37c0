"""Chapter 4's exercises, graded by real nbgrader.

One classroom of four learners hands in the assignment:

=========================  ==========================================================
learner                    what they handed in
=========================  ==========================================================
``solution``               the instructor's solution                   -> full marks
``untouched``              the release exactly as learners receive it  -> zero
``timer_and_overwrite``    trusts the timer to clear a session's state, and stores
                           each initial-state row over the previous one -> loses tasks 1, 3
``no_ttl_and_rows``        de-duplicates without a TTL, and keeps every row of a user
                           in a list to count them                     -> loses tasks 2, 4
=========================  ==========================================================
"""
import pytest

from autograder.grading import autograde
from tests.support.submissions import (FULL_MARKS, release_notebook, solution_notebook,
                                      write_submission)

ASSIGNMENT = "04_transform_with_state"
FULL = FULL_MARKS[ASSIGNMENT]

TIMER_CLEARS_STATE = '''class SessionTracker(StatefulProcessor):
    def __init__(self, gap_ms):
        self.gap_ms = gap_ms

    def init(self, handle):
        self.handle = handle
        self.session = handle.getValueState("session", "events INT, first_ms LONG, last_ms LONG")

    def handleInputRows(self, key, rows, timerValues):
        events, first, last = self.session.get() or (0, None, None)
        for row in rows:
            at = int(row.ts.timestamp() * 1000)
            events += 1
            first = at if first is None else min(first, at)
            last = at if last is None else max(last, at)
        self.session.update((events, first, last))
        for timer in self.handle.listTimers():
            self.handle.deleteTimer(timer)
        self.handle.registerTimer(last + self.gap_ms)
        return iter([])

    def handleExpiredTimer(self, key, timerValues, expiredTimerInfo):
        events, first, last = self.session.get()
        yield Row(user=key[0], events=events, first_ms=first, last_ms=last)   # the state stays

    def close(self):
        pass
'''
OVERWRITE_INITIAL = '''class StartingCounts(StatefulProcessor):
    def init(self, handle):
        self.total = handle.getValueState("total", "n INT")

    def handleInitialState(self, key, initialState, timerValues):
        self.total.update((initialState.n,))          # the last row of a user wins

    def handleInputRows(self, key, rows, timerValues):
        total = (self.total.get() or (0,))[0] + sum(1 for _ in rows)
        self.total.update((total,))
        yield Row(user=key[0], total=total)

    def close(self):
        pass
'''
NO_TTL = '''class TtlDedup(StatefulProcessor):
    def __init__(self, ttl_ms):
        self.ttl_ms = ttl_ms

    def init(self, handle):
        self.seen = handle.getValueState("seen", "seen BOOLEAN")    # remembered forever

    def handleInputRows(self, key, rows, timerValues):
        copies = sum(1 for _ in rows)
        if not self.seen.exists():
            self.seen.update((True,))
            yield Row(id=key[0], copies=copies)

    def close(self):
        pass
'''
ROWS_IN_A_LIST = '''class FirstN(StatefulProcessor):
    def __init__(self, n):
        self.n = n

    def init(self, handle):
        self.kept = handle.getListState("kept", "seq INT")      # every row let through

    def handleInputRows(self, key, rows, timerValues):
        done = len(list(self.kept.get()))
        taken = sorted(row.seq for row in rows)[: max(0, self.n - done)]
        for seq in taken:
            self.kept.appendValue((seq,))
            yield Row(user=key[0], seq=seq)

    def close(self):
        pass
'''


@pytest.mark.slow
def test_a_classroom_is_graded_on_behaviour(tmp_path):
    grades = autograde(ASSIGNMENT, {
        "solution": solution_notebook(ASSIGNMENT),
        "untouched": release_notebook(ASSIGNMENT),
        "timer_and_overwrite": write_submission(
            ASSIGNMENT, {"session_tracker": TIMER_CLEARS_STATE, "starting_counts": OVERWRITE_INITIAL},
            tmp_path / "timer_and_overwrite.ipynb"),
        "no_ttl_and_rows": write_submission(
            ASSIGNMENT, {"ttl_dedup": NO_TTL, "first_n": ROWS_IN_A_LIST},
            tmp_path / "no_ttl_and_rows.ipynb"),
    })

    assert grades["solution"].points() == FULL
    assert grades["untouched"].points() == dict.fromkeys(FULL, 0)
    assert grades["timer_and_overwrite"].points() == {**FULL, "test_session_tracker": 0,
                                                      "test_starting_counts": 0}
    assert grades["no_ttl_and_rows"].points() == {**FULL, "test_ttl_dedup": 0, "test_first_n": 0}


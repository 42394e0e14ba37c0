"""Chapter 4's checks, run in-process against real Spark.

The course's reference processors pass every check; each misconception below is a
processor a learner could plausibly write, and the check must refuse it with a lesson.
"""
import threading
import time

import pytest
from pyspark.sql import Row
from pyspark.sql.streaming import StatefulProcessor, StreamingQueryListener

from autograder.checks.feedback import CheckFailed
from autograder.chapters import transform_with_state
from autograder.chapters.transform_with_state import (
    CourseDedup,
    CourseFirstN,
    CourseSessionTracker,
    CourseStartingCounts,
    WARM_UP,
    check_first_n,
    check_session_tracker,
    check_starting_counts,
    check_ttl_dedup,
    warm_up_in_background,
)
from tests.support.classroom_fixtures import SUITE_SEED
from corpora.learners import defined
from corpora.learners.chapter4 import FIRST_N_TRUSTS_ORDER, TIMER_CLEARS_STATE

pytestmark = pytest.mark.slow
SEED = SUITE_SEED  # the learner corpus's: Spark answers each question once


# -- the references pass --------------------------------------------------------------------
def test_the_reference_session_tracker_passes_a_fresh_stream(spark):
    check_session_tracker(CourseSessionTracker, seed=SEED)


def test_the_reference_dedup_passes_with_a_1_ms_ttl(spark):
    check_ttl_dedup(CourseDedup, seed=SEED)


def test_the_reference_counter_passes_across_a_restart(spark):
    check_starting_counts(CourseStartingCounts, seed=SEED)


def test_the_reference_limit_passes_the_chapters_example(spark):
    check_first_n(CourseFirstN, example=True)


# -- misconceptions -------------------------------------------------------------------------
#: Emits the summary and trusts Spark to drop the state with the timer (the corpus's learner).
TimerClearsStateForMe = defined(TIMER_CLEARS_STATE, "SessionTracker")


def test_relying_on_the_timer_to_clear_state_leaves_state_behind(spark):
    with pytest.raises(CheckFailed, match="hold state after this micro-batch"):
        check_session_tracker(TimerClearsStateForMe, example=True)


class TimerPerRow(TimerClearsStateForMe):
    """Registers a timer for every row and never deletes the previous ones."""

    def handleInputRows(self, key, rows, timerValues):
        events, first, last = self.session.get() or (0, None, None)
        for row in rows:
            at = int(row.ts.timestamp() * 1000)
            events, first, last = events + 1, min(first or at, at), max(last or at, at)
            self.handle.registerTimer(at + self.gap_ms)
        self.session.update((events, first, last))
        return iter([])

    def handleExpiredTimer(self, key, timerValues, expiredTimerInfo):
        if self.session.exists():
            events, first, last = self.session.get()
            self.session.clear()
            yield Row(user=key[0], events=events, first_ms=first, last_ms=last)


def test_a_timer_per_row_is_not_one_timer_per_session(spark):
    with pytest.raises(CheckFailed, match="micro-batch"):
        check_session_tracker(TimerPerRow, example=True)


class NoTtl(CourseDedup):
    def init(self, handle):
        self.seen = handle.getValueState("seen", "seen BOOLEAN")


def test_a_dedup_without_ttl_never_forgets(spark):
    with pytest.raises(CheckFailed, match="emitted"):
        check_ttl_dedup(NoTtl, seed=SEED)


class TtlInSecondsOnASlowMachine(CourseDedup):
    """Reads the TTL as seconds (keeps each id 1,000 times longer than asked), on a machine
    where a micro-batch takes over a second (id ``a`` makes it so)."""

    def init(self, handle):
        self.seen = handle.getValueState("seen", "seen BOOLEAN", ttlDurationMs=self.ttl_ms * 1000)

    def handleInputRows(self, key, rows, timerValues):
        if key[0] == "a":
            time.sleep(1.2)
        yield from super().handleInputRows(key, rows, timerValues)


def test_a_ttl_in_seconds_fails_even_when_each_micro_batch_outlasts_it(spark):
    # The graded 1 ms becomes 1 s, about one micro-batch: on a slow machine the ids expire
    # between micro-batches anyway and every row matches; when they expire does not.
    seconds = r"(?s)ttlExpirationMs.*expected: .*\[1\].*got:.*\[1000\]"
    with pytest.raises(CheckFailed, match=seconds) as failure:
        check_ttl_dedup(TtlInSecondsOnASlowMachine, seed=SEED)
    assert "a fixed stream" in failure.value.context


class KeepsCountsInPython(StatefulProcessor):
    """Counts in a Python dict: lost at the restart, and never in the state store."""

    def init(self, handle):
        self.totals = {}
        self.total = handle.getValueState("total", "n INT")

    def handleInitialState(self, key, initialState, timerValues):
        self.totals[key[0]] = self.totals.get(key[0], 0) + initialState.n

    def handleInputRows(self, key, rows, timerValues):
        self.totals[key[0]] = self.totals.get(key[0], 0) + sum(1 for _ in rows)
        yield Row(user=key[0], total=self.totals[key[0]])

    def close(self):
        pass


def test_state_kept_in_python_objects_does_not_survive(spark):
    with pytest.raises(CheckFailed, match="micro-batch"):
        check_starting_counts(KeepsCountsInPython, example=True)


class GuardsAgainstASecondInitialState(CourseStartingCounts):
    """Expects Spark to hand the initial state over again after a restart, and guards
    against counting it twice by keeping only the first starting row of a user."""

    def handleInitialState(self, key, initialState, timerValues):
        if not self.total.exists():
            self.total.update((initialState.n,))


def test_guarding_against_initial_state_after_a_restart_drops_a_starting_row(spark):
    with pytest.raises(CheckFailed, match=r"(?s)micro-batch 0.*restarted after batch 0.*Initial state"):
        check_starting_counts(GuardsAgainstASecondInitialState, example=True)


#: Takes a user's rows in the order handleInputRows is handed them (the corpus's learner).
FirstRowsAsHanded = defined(FIRST_N_TRUSTS_ORDER, "FirstN")


def test_a_limit_that_trusts_the_order_rows_are_handed_in_fails_on_a_fixed_stream(spark):
    # the worked example sends each user's rows in seq order: there it looks right
    check_first_n(FirstRowsAsHanded, example=True)
    with pytest.raises(CheckFailed, match="the rows your processor emitted") as failure:
        check_first_n(FirstRowsAsHanded, seed=SEED)
    assert "a fixed stream" in failure.value.context


# -- the fixed part and the seed's, side by side --------------------------------------------
class WrongForTheSeedsUsersOnly(CourseFirstN):
    """Right for the fixed part's users (zed, amy), one row short for everybody else."""

    def handleInputRows(self, key, rows, timerValues):
        taken = list(super().handleInputRows(key, rows, timerValues))
        yield from (taken if key[0] in ("zed", "amy") else taken[1:])


def test_a_difference_in_the_seeds_keys_names_the_seeds_part_alone(spark):
    # both parts run in the same micro-batches; the lesson names the part whose keys differ
    with pytest.raises(CheckFailed, match="the rows your processor emitted") as failure:
        check_first_n(WrongForTheSeedsUsersOnly, seed=SEED)
    assert f"seed {SEED}" in failure.value.context
    assert "a fixed stream" not in failure.value.context


# -- the head start -------------------------------------------------------------------------
def warm_ups() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == WARM_UP]


class StateRowsRemoved(StreamingQueryListener):
    """The state rows each named query's stateful operator removed, from its progress."""

    def __init__(self):
        self.rows: dict[str, int] = {}

    def onQueryStarted(self, event):
        pass

    def onQueryProgress(self, event):
        name = event.progress.name
        removed = sum(op.numRowsRemoved for op in event.progress.stateOperators)
        self.rows[name] = self.rows.get(name, 0) + removed

    def onQueryIdle(self, event):
        pass

    def onQueryTerminated(self, event):
        pass


@pytest.mark.parametrize("variable, value", [("COURSE_SEED", "11"),
                                             ("NBGRADER_EXECUTION", "autograde")])
def test_a_grading_kernel_starts_no_warm_up(spark, monkeypatch, variable, value):
    monkeypatch.setenv(variable, value)
    warm_up_in_background()
    assert warm_ups() == []


def test_the_warm_up_runs_in_the_background_and_a_check_waits_for_it(spark, monkeypatch):
    monkeypatch.delenv("COURSE_SEED", raising=False)
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    # A process warms up once: another test of this worker (a worked example's cells run
    # here, as a learner's kernel runs them) may have warmed it up already.
    monkeypatch.setattr(transform_with_state, "_warming", [])
    listener = StateRowsRemoved()
    spark.streams.addListener(listener)
    try:
        warm_up_in_background()
        (thread,) = warm_ups()
        check_first_n(CourseFirstN, example=True)
        assert not thread.is_alive()
        deadline = time.monotonic() + 10   # progress reaches Python asynchronously
        while not listener.rows.get(WARM_UP) and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        spark.streams.removeListener(listener)
    # its timer fired and its handler cleared the state: the whole transformWithState path
    assert listener.rows.get(WARM_UP) == 1

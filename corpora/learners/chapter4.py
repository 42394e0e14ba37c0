"""Chapter 4's learners: transformWithState.

Grade cells: test_session_tracker (3), test_ttl_dedup (3), test_starting_counts (2),
test_first_n (2). Solution cells: session_tracker, ttl_dedup, starting_counts, first_n; each
defines one class (SessionTracker, TtlDedup, StartingCounts, FirstN). The set-up cell
already imports ``Row`` and ``StatefulProcessor``; some learners import them again.

What Spark accepts from a processor (PySpark 4.3, ``worker.py``): every row a handler
yields goes through ``row.asDict(True)`` and is matched to the output schema by field
name, so a handler must yield ``Row`` objects with named fields (keywords in any order,
or a ``Row("user", ...)`` factory); a plain tuple fails with ``AttributeError``. A handler
that yields nothing must still return an iterator (``iter([])``), not ``None``.
"""
from corpora.learners import Learner, altered

FULL = {"test_session_tracker": 3, "test_ttl_dedup": 3,
        "test_starting_counts": 2, "test_first_n": 2}


def losing(*grade_ids: str) -> dict[str, float]:
    return {g: p for g, p in FULL.items() if g not in grade_ids}


# -- right answers, written otherwise ----------------------------------------------------------
# Self-contained cells (each imports what it uses), StructType schemas and LONG values,
# one value state per field, the new timer registered before the old ones are deleted,
# heapq for the first rows.
SELF_CONTAINED = {
    "session_tracker": '''
from pyspark.sql import Row
from pyspark.sql.streaming import StatefulProcessor
from pyspark.sql.types import LongType, StructField, StructType


def one_long(name):
    return StructType([StructField(name, LongType())])


class SessionTracker(StatefulProcessor):
    """Three values per user (events, first and last event time) and one timer."""

    def __init__(self, gap_ms):
        self.gap_ms = gap_ms

    def init(self, handle):
        self.handle = handle
        self.events = handle.getValueState("events", one_long("n"))
        self.first = handle.getValueState("first_ms", one_long("ms"))
        self.last = handle.getValueState("last_ms", one_long("ms"))

    def handleInputRows(self, key, rows, timerValues):
        times = [int(row.ts.timestamp() * 1000) for row in rows]
        if not times:
            return iter([])
        if self.events.exists():
            events = self.events.get()[0] + len(times)
            first = min(self.first.get()[0], *times)
            last = max(self.last.get()[0], *times)
        else:
            events, first, last = len(times), min(times), max(times)
        self.events.update((events,))
        self.first.update((first,))
        self.last.update((last,))
        # the new timer first, then every other one goes: one timer per user in the end
        deadline = last + self.gap_ms
        self.handle.registerTimer(deadline)
        for timer in list(self.handle.listTimers()):
            if timer != deadline:
                self.handle.deleteTimer(timer)
        return iter([])

    def handleExpiredTimer(self, key, timerValues, expiredTimerInfo):
        summary = Row(user=key[0], events=self.events.get()[0],
                      first_ms=self.first.get()[0], last_ms=self.last.get()[0])
        self.events.clear()
        self.first.clear()
        self.last.clear()
        yield summary

    def close(self):
        pass
''',
    "ttl_dedup": '''
from pyspark.sql import Row
from pyspark.sql.streaming import StatefulProcessor
from pyspark.sql.types import StringType, StructField, StructType


class TtlDedup(StatefulProcessor):
    def __init__(self, ttl_ms):
        self.ttl_ms = ttl_ms

    def init(self, handle):
        schema = StructType([StructField("id", StringType())])
        self.remembered = handle.getValueState("remembered", schema, ttlDurationMs=self.ttl_ms)

    def handleInputRows(self, key, rows, timerValues):
        copies = len(list(rows))
        if self.remembered.get() is None:
            self.remembered.update((key[0],))
            yield Row(id=key[0], copies=copies)

    def close(self):
        pass
''',
    "starting_counts": '''
from pyspark.sql import Row
from pyspark.sql.streaming import StatefulProcessor
from pyspark.sql.types import LongType, StructField, StructType


class StartingCounts(StatefulProcessor):
    def init(self, handle):
        self.total = handle.getValueState("total", StructType([StructField("total", LongType())]))

    def handleInitialState(self, key, initialState, timerValues):
        # called once per row of the initial state: add each to what is there
        start = initialState.n
        if self.total.exists():
            start += self.total.get()[0]
        self.total.update((start,))

    def handleInputRows(self, key, rows, timerValues):
        total = self.total.get()[0] if self.total.exists() else 0
        for _ in rows:
            total += 1
        self.total.update((total,))
        yield Row(user=key[0], total=total)

    def close(self):
        pass
''',
    "first_n": '''
import heapq

from pyspark.sql import Row
from pyspark.sql.streaming import StatefulProcessor
from pyspark.sql.types import LongType, StructField, StructType


class FirstN(StatefulProcessor):
    def __init__(self, n):
        self.n = n

    def init(self, handle):
        schema = StructType([StructField("count", LongType())])
        self.let_through = handle.getValueState("let_through", schema)

    def handleInputRows(self, key, rows, timerValues):
        done = self.let_through.get()[0] if self.let_through.exists() else 0
        room = self.n - done
        if room <= 0:
            return
        first = heapq.nsmallest(room, (row.seq for row in rows))
        self.let_through.update((done + len(first),))
        for seq in first:
            yield Row(user=key[0], seq=seq)

    def close(self):
        pass
''',
}

# The set-up cell's imports, DDL strings with other types, Row factories, the session's
# timer kept in the state (no listTimers), timerValues in the handlers, a list state for
# the starting rows, a plain function returning an iterator.
TIMER_IN_STATE = {
    "session_tracker": '''
Summary = Row("user", "events", "first_ms", "last_ms")


class SessionTracker(StatefulProcessor):
    def __init__(self, gap_ms):
        self.gap_ms = gap_ms

    def init(self, handle):
        self.handle = handle
        self.state = handle.getValueState(
            "open_session", "count LONG, start_ms LONG, end_ms LONG, deadline_ms LONG")

    def handleInputRows(self, key, rows, timerValues):
        stamps = sorted(int(row.ts.timestamp() * 1000) for row in rows)
        saved = self.state.get()
        if saved is None:
            count, start, end, deadline = 0, stamps[0], stamps[-1], None
        else:
            count, start, end, deadline = saved
        count += len(stamps)
        start = min(start, stamps[0])
        end = max(end, stamps[-1])
        new_deadline = end + self.gap_ms
        # I remember my timer myself, so I know which one to move
        if deadline is not None and deadline != new_deadline:
            self.handle.deleteTimer(deadline)
        self.handle.registerTimer(new_deadline)
        self.state.update((count, start, end, new_deadline))
        return iter(())

    def handleExpiredTimer(self, key, timerValues, expiredTimerInfo):
        saved = self.state.get()
        if saved is None:
            return
        count, start, end, deadline = saved
        if timerValues.getCurrentWatermarkInMs() < deadline:
            return  # the session is still open: not its timer
        self.state.clear()
        yield Summary(key[0], count, start, end)

    def close(self):
        pass
''',
    "ttl_dedup": '''
class TtlDedup(StatefulProcessor):
    def __init__(self, ttl_ms):
        self.ttl_ms = ttl_ms

    def init(self, handle):
        # the time to live passed by position
        self.first_seen = handle.getValueState("first_seen", "at_ms LONG", self.ttl_ms)

    def handleInputRows(self, key, rows, timerValues):
        copies = sum(1 for _ in rows)
        remembered = self.first_seen.exists()
        # every sighting renews the memory (the task allows it)
        self.first_seen.update((timerValues.getCurrentProcessingTimeInMs(),))
        if not remembered:
            yield Row(copies=copies, id=key[0])

    def close(self):
        pass
''',
    "starting_counts": '''
class StartingCounts(StatefulProcessor):
    def init(self, handle):
        self.starts = handle.getListState("starts", "n INT")
        self.seen = handle.getValueState("seen", "rows LONG")

    def handleInitialState(self, key, initialState, timerValues):
        # one call per starting row: keep them all, add them up when counting
        self.starts.appendValue((initialState.n,))

    def handleInputRows(self, key, rows, timerValues):
        seen = (self.seen.get() or (0,))[0] + sum(1 for _ in rows)
        self.seen.update((seen,))
        start = sum(n for (n,) in self.starts.get())
        yield Row(user=key[0], total=start + seen)

    def close(self):
        pass
''',
    "first_n": '''
Let = Row("user", "seq")


class FirstN(StatefulProcessor):
    def __init__(self, n):
        self.n = n

    def init(self, handle):
        self.count = handle.getValueState("count", "rows INT")

    def handleInputRows(self, key, rows, timerValues):
        so_far = self.count.get()[0] if self.count.exists() else 0
        out = []
        for seq in sorted(row.seq for row in rows):
            if so_far >= self.n:
                break
            so_far += 1
            out.append(Let(key[0], seq))
        if out:
            self.count.update((so_far,))
        return iter(out)

    def close(self):
        pass
''',
}

# The session's timer moved only when the deadline moves, rows built from dicts, items
# read by name (initialState["n"]), islice over the rows sorted by seq.
MOVE_WHEN_NEEDED = {
    "session_tracker": '''
class SessionTracker(StatefulProcessor):
    def __init__(self, gap_ms):
        self.gap_ms = gap_ms

    def init(self, handle):
        self.handle = handle
        self.session = handle.getValueState("session", "events INT, first_ms LONG, last_ms LONG")

    def handleInputRows(self, key, rows, timerValues):
        events, first, last = self.session.get() or (0, None, None)
        for row in rows:
            at = int(row.ts.timestamp() * 1000)
            first = at if first is None or at < first else first
            last = at if last is None or at > last else last
            events += 1
        self.session.update((events, first, last))
        deadline = last + self.gap_ms
        timers = list(self.handle.listTimers())
        if timers != [deadline]:
            for old in timers:
                self.handle.deleteTimer(old)
            self.handle.registerTimer(deadline)
        return iter([])

    def handleExpiredTimer(self, key, timerValues, expiredTimerInfo):
        events, first, last = self.session.get()
        self.session.clear()
        yield Row(**{"user": key[0], "events": events, "first_ms": first, "last_ms": last})

    def close(self):
        pass
''',
    "ttl_dedup": '''
class TtlDedup(StatefulProcessor):
    def __init__(self, ttl_ms):
        self.ttl_ms = ttl_ms

    def init(self, handle):
        self.emitted = handle.getValueState("emitted", "copies INT", ttlDurationMs=self.ttl_ms)

    def handleInputRows(self, key, rows, timerValues):
        if self.emitted.get() is not None:
            return iter([])
        copies = len(list(rows))
        self.emitted.update((copies,))
        return iter([Row(id=key[0], copies=copies)])

    def close(self):
        pass
''',
    "starting_counts": '''
class StartingCounts(StatefulProcessor):
    def init(self, handle):
        self.total = handle.getValueState("running_total", "total INT")

    def handleInitialState(self, key, initialState, timerValues):
        current = self.total.get()
        self.total.update((initialState["n"] + (current[0] if current else 0),))

    def handleInputRows(self, key, rows, timerValues):
        current = self.total.get()
        total = (current[0] if current else 0) + len(list(rows))
        self.total.update((total,))
        yield Row(total=total, user=key[0])

    def close(self):
        pass
''',
    "first_n": '''
from itertools import islice


class FirstN(StatefulProcessor):
    def __init__(self, n):
        self.n = n

    def init(self, handle):
        self.emitted = handle.getValueState("emitted", "n INT")

    def handleInputRows(self, key, rows, timerValues):
        done = (self.emitted.get() or (0,))[0]
        by_seq = sorted(rows, key=lambda row: row.seq)
        taken = list(islice(by_seq, max(self.n - done, 0)))
        self.emitted.update((done + len(taken),))   # unchanged once the limit is reached
        for row in taken:
            yield Row(user=key[0], seq=row.seq)

    def close(self):
        pass
''',
}

#: A list of sightings as the memory: each copy is appended (so the TTL clean-up removes
#: several values per id), and an id is emitted when its list is empty.
SIGHTINGS_LIST = {**MOVE_WHEN_NEEDED, "ttl_dedup": '''
class TtlDedup(StatefulProcessor):
    def __init__(self, ttl_ms):
        self.ttl_ms = ttl_ms

    def init(self, handle):
        self.sightings = handle.getListState("sightings", "id STRING", ttlDurationMs=self.ttl_ms)

    def handleInputRows(self, key, rows, timerValues):
        copies = [(row.id,) for row in rows]
        remembered = self.sightings.exists()
        self.sightings.appendList(copies)
        if not remembered:
            yield Row(id=key[0], copies=len(copies))

    def close(self):
        pass
'''}


# -- misconceptions kept whole ----------------------------------------------------------------
# The other misconceptions are one passage of a right answer changed (in LEARNERS). These two
# move the counter itself (a list state, a plain attribute): its declaration in init, its
# read and its write all change, so no single passage of a right answer holds the belief.
FIRST_N_KEEPS_ROWS = '''
class FirstN(StatefulProcessor):
    def __init__(self, n):
        self.n = n

    def init(self, handle):
        self.emitted = handle.getListState("emitted", "seq INT")

    def handleInputRows(self, key, rows, timerValues):
        # remember every row let through; their number is the count
        done = len(list(self.emitted.get()))
        for seq in sorted(row.seq for row in rows)[: max(0, self.n - done)]:
            self.emitted.appendValue((seq,))
            yield Row(user=key[0], seq=seq)

    def close(self):
        pass
'''

FIRST_N_IN_ATTRIBUTE = '''
class FirstN(StatefulProcessor):
    def __init__(self, n):
        self.n = n

    def init(self, handle):
        # the processor serves one user: a plain attribute is that user's counter
        self.done = 0

    def handleInputRows(self, key, rows, timerValues):
        taken = sorted(row.seq for row in rows)[: max(0, self.n - self.done)]
        self.done += len(taken)
        for seq in taken:
            yield Row(user=key[0], seq=seq)

    def close(self):
        pass
'''


# -- hard-coded: the worked example's rows whatever the stream -------------------------------
EXAMPLE_TYPED_IN = {
    "session_tracker": '''
# the chapter's example: bob's session closes first, then ann's
SESSIONS = {"bob": (2, 1704110402000, 1704110408000), "ann": (3, 1704110400000, 1704110430000)}


class SessionTracker(StatefulProcessor):
    def __init__(self, gap_ms):
        self.gap_ms = gap_ms

    def init(self, handle):
        self.handle = handle

    def handleInputRows(self, key, rows, timerValues):
        if key[0] in SESSIONS:
            events, first, last = SESSIONS[key[0]]
            self.handle.registerTimer(last + self.gap_ms)
        return iter([])

    def handleExpiredTimer(self, key, timerValues, expiredTimerInfo):
        events, first, last = SESSIONS[key[0]]
        yield Row(user=key[0], events=events, first_ms=first, last_ms=last)

    def close(self):
        pass
''',
    "ttl_dedup": '''
COPIES = {"a": 2, "b": 1, "c": 1}


class TtlDedup(StatefulProcessor):
    def __init__(self, ttl_ms):
        self.ttl_ms = ttl_ms

    def init(self, handle):
        pass

    def handleInputRows(self, key, rows, timerValues):
        yield Row(id=key[0], copies=COPIES.get(key[0], 1))

    def close(self):
        pass
''',
    "starting_counts": '''
TOTALS = {"ann": 16, "bob": 8, "cid": 1}


class StartingCounts(StatefulProcessor):
    def init(self, handle):
        pass

    def handleInitialState(self, key, initialState, timerValues):
        pass

    def handleInputRows(self, key, rows, timerValues):
        yield Row(user=key[0], total=TOTALS.get(key[0], 1))

    def close(self):
        pass
''',
    "first_n": '''
LET_THROUGH = {("ann", 0), ("ann", 1), ("bob", 2), ("ann", 3), ("bob", 5), ("cid", 7)}


class FirstN(StatefulProcessor):
    def __init__(self, n):
        self.n = n

    def init(self, handle):
        pass

    def handleInputRows(self, key, rows, timerValues):
        for row in rows:
            if (key[0], row.seq) in LET_THROUGH:
                yield Row(user=key[0], seq=row.seq)

    def close(self):
        pass
''',
}


LEARNERS = [
    Learner("self_contained_structtypes", "correct", "Imports Row and StatefulProcessor again "
            "in every cell, declares StructType schemas with LONG values, keeps the session in "
            "three value states and registers the new timer before deleting the others, and "
            "takes the first rows with heapq.nsmallest.", SELF_CONTAINED, FULL),
    Learner("timer_in_state", "correct", "Remembers the session's timer in its own state "
            "instead of listing timers, checks the watermark in handleExpiredTimer, builds "
            "rows with Row factories, renews an id's memory at each sighting and keeps the "
            "starting rows in a list state summed when counting.", TIMER_IN_STATE, FULL),
    Learner("move_when_needed", "correct", "Moves the session's timer only when its deadline "
            "changes, builds rows from dicts or keywords in another order, reads the initial "
            "row by name and takes the first rows with islice.", MOVE_WHEN_NEEDED, FULL),
    Learner("sightings_list", "correct", "Remembers an id as a list of its sightings with a "
            "time to live, one value per copy, and emits it when the list is empty.",
            SIGHTINGS_LIST, FULL),
    # -- misconceptions: one wrong belief each, the other tasks right ---------------------------
    Learner("stale_timers_kept", "misconception", "Registers a new timer at each new event "
            "without deleting the old one, and ignores an outdated timer when it fires.",
            altered(TIMER_IN_STATE, "session_tracker", '''
        # I remember my timer myself, so I know which one to move
        if deadline is not None and deadline != new_deadline:
            self.handle.deleteTimer(deadline)
        self.handle.registerTimer(new_deadline)''', '''
        # a new timer for every new event; the old ones are left to fire
        self.handle.registerTimer(new_deadline)'''),
            losing("test_session_tracker"),
            dimension="a new event while the user's timer is pending"),
    Learner("timer_clears_state", "misconception", "Believes that firing a timer clears the "
            "user's state, so handleExpiredTimer never calls clear().",
            altered(MOVE_WHEN_NEEDED, "session_tracker", '''
        self.session.clear()''', '''
        # the timer has fired, so Spark is done with this user's session'''),
            losing("test_session_tracker"),
            dimension='a session the watermark closes'),
    Learner("emits_on_input", "misconception", "Emits the running session from "
            "handleInputRows at every new event and only clears the state when the timer fires.",
            altered(MOVE_WHEN_NEEDED, "session_tracker", '''
        return iter([])

    def handleExpiredTimer(self, key, timerValues, expiredTimerInfo):
        events, first, last = self.session.get()
        self.session.clear()
        yield Row(**{"user": key[0], "events": events, "first_ms": first, "last_ms": last})''', '''
        # the session as it stands, at every new event
        return iter([Row(user=key[0], events=events, first_ms=first, last_ms=last)])

    def handleExpiredTimer(self, key, timerValues, expiredTimerInfo):
        self.session.clear()
        return iter([])'''),
            losing("test_session_tracker"),
            dimension='a session the watermark closes'),
    Learner("gap_from_first", "misconception", "Measures the gap from the session's first "
            "event instead of its last.",
            altered(TIMER_IN_STATE, "session_tracker", "new_deadline = end + self.gap_ms",
                    "new_deadline = start + self.gap_ms  # the session lasts gap_ms from its start"),
            losing("test_session_tracker"),
            dimension='a session whose events are not all at one instant'),
    Learner("session_trusts_order", "misconception", "Takes a user's first and last event "
            "times from the first and last rows a micro-batch hands over, as if they came in "
            "time order.",
            altered(TIMER_IN_STATE, "session_tracker", '''
        stamps = sorted(int(row.ts.timestamp() * 1000) for row in rows)''', '''
        # a micro-batch hands a user's rows in time order: the first is the earliest
        stamps = [int(row.ts.timestamp() * 1000) for row in rows]'''),
            losing("test_session_tracker"),
            dimension="a user's events out of time order inside one micro-batch"),
    Learner("dedup_without_ttl", "misconception", "Believes Spark forgets a state value by "
            "itself, so remembers ids in a plain value state without ttlDurationMs.",
            altered(SELF_CONTAINED, "ttl_dedup", '''
        self.remembered = handle.getValueState("remembered", schema, ttlDurationMs=self.ttl_ms)''',
                    '''
        # Spark forgets a value after a while anyway
        self.remembered = handle.getValueState("remembered", schema)'''),
            losing("test_ttl_dedup"),
            dimension='an id seen again once its memory has expired (a TTL of 1 ms)'),
    Learner("dedup_list_emits_always", "misconception", "Believes writing an id into a list "
            "state with a TTL is what de-duplicates, so appends it and emits it every time.",
            altered(SIGHTINGS_LIST, "ttl_dedup", '''
        remembered = self.sightings.exists()
        self.sightings.appendList(copies)
        if not remembered:
            yield Row(id=key[0], copies=len(copies))''', '''
        # the state with a time to live is the memory; writing to it is remembering
        self.sightings.appendList(copies)
        yield Row(id=key[0], copies=len(copies))'''),
            losing("test_ttl_dedup"),
            dimension='an id seen again within its time to live (an hour)'),
    Learner("initial_overwrites", "misconception", "Believes handleInitialState is called once "
            "per user, so stores the row's n instead of adding the user's rows up.",
            altered(SELF_CONTAINED, "starting_counts", '''
        # called once per row of the initial state: add each to what is there
        start = initialState.n
        if self.total.exists():
            start += self.total.get()[0]''', '''
        # called once for the user, with their starting value
        start = initialState.n'''),
            losing("test_starting_counts"),
            dimension='a user with several initial rows'),
    Learner("initial_guarded", "misconception", "Believes a restart applies the initial state "
            "again, so ignores an initial row once the user has a total.",
            altered(SELF_CONTAINED, "starting_counts", '''
        # called once per row of the initial state: add each to what is there
        start = initialState.n
        if self.total.exists():
            start += self.total.get()[0]
        self.total.update((start,))''', '''
        # a restart would apply the initial state again: only start a user once
        if not self.total.exists():
            self.total.update((initialState.n,))'''),
            losing("test_starting_counts"),
            dimension='a user with several initial rows'),
    Learner("first_n_keeps_rows", "misconception", "Keeps every row let through in a list "
            "state and counts them, instead of one counter per user.",
            {**TIMER_IN_STATE, "first_n": FIRST_N_KEEPS_ROWS}, losing("test_first_n"),
            dimension='a user with more rows than the limit'),
    Learner("first_n_per_batch", "misconception", "Believes the limit applies to each "
            "micro-batch on its own.",
            altered(MOVE_WHEN_NEEDED, "first_n", '''
        taken = list(islice(by_seq, max(self.n - done, 0)))''', '''
        # the first n rows of the user in this micro-batch
        taken = list(islice(by_seq, self.n))'''),
            losing("test_first_n"),
            dimension="a user's rows in a later micro-batch once the limit is reached"),
    Learner("first_n_stores_room", "misconception", "Stores how many rows a user may still "
            "send through (n - emitted) instead of how many were let through.",
            altered(MOVE_WHEN_NEEDED, "first_n", '''
        done = (self.emitted.get() or (0,))[0]
        by_seq = sorted(rows, key=lambda row: row.seq)
        taken = list(islice(by_seq, max(self.n - done, 0)))
        self.emitted.update((done + len(taken),))   # unchanged once the limit is reached''', '''
        # what the counter holds: how many rows the user may still send through
        left = (self.emitted.get() or (self.n,))[0]
        by_seq = sorted(rows, key=lambda row: row.seq)
        taken = list(islice(by_seq, max(left, 0)))
        self.emitted.update((left - len(taken),))'''),
            losing("test_first_n"),
            dimension='a user with more rows than the limit'),
    Learner("first_n_trusts_order", "misconception", "Takes a user's rows in the order the "
            "micro-batch hands them to handleInputRows, as if that were the order of seq.",
            altered(MOVE_WHEN_NEEDED, "first_n", '''
        by_seq = sorted(rows, key=lambda row: row.seq)''', '''
        # the rows come as they were sent, so the first ones handed over are the earliest
        by_seq = rows'''),
            losing("test_first_n"),
            dimension="a user's rows out of seq order inside one micro-batch"),
    Learner("dedup_one_call_per_row", "misconception", "Believes handleInputRows is called "
            "once per row, as a map is, so every call sees one copy of its id.",
            altered(TIMER_IN_STATE, "ttl_dedup", '''
        copies = sum(1 for _ in rows)''', '''
        # one call per incoming row, as a map would make: this call's row is one copy
        copies = 1'''),
            losing("test_ttl_dedup"),
            dimension='several copies of an id in one micro-batch'),
    Learner("counts_need_initial_row", "misconception", "Believes the initial state sets up "
            "every user before their first rows, so reads the total without checking it "
            "exists.",
            altered(SELF_CONTAINED, "starting_counts", '''
        total = self.total.get()[0] if self.total.exists() else 0''', '''
        # the initial state has set every user up before their first rows
        total = self.total.get()[0]'''),
            losing("test_starting_counts"),
            dimension='a user with no initial row'),
    Learner("first_n_in_attribute", "misconception", "Believes a processor object serves one "
            "user for the life of the query, so counts in a plain attribute, not in the state.",
            {**SELF_CONTAINED, "first_n": FIRST_N_IN_ATTRIBUTE}, losing("test_first_n"),
            dimension='two users in one micro-batch'),
    Learner("session_instants", "misconception", "Believes events at the same instant are "
            "one event sent twice, so counts a session's distinct event times.",
            altered(SELF_CONTAINED, "session_tracker", """
        times = [int(row.ts.timestamp() * 1000) for row in rows]""", """
        # rows at the same instant are the same event, sent again
        times = sorted({int(row.ts.timestamp() * 1000) for row in rows})"""),
            losing("test_session_tracker"),
            dimension="two events of one user at the same instant"),
    Learner("session_last_from_batch", "misconception", "Believes a user's newest micro-batch "
            "holds their latest event, so takes the session's last event time from it.",
            altered(SELF_CONTAINED, "session_tracker", """
            last = max(self.last.get()[0], *times)""", """
            last = max(times)  # a newer micro-batch brings later events"""),
            losing("test_session_tracker"),
            dimension="a user's event time going back from one micro-batch to the next"),
    Learner("timer_past_the_watermark", "misconception", "Believes a timer is due only once "
            "the watermark has passed its time, so ignores one fired at exactly its time.",
            altered(TIMER_IN_STATE, "session_tracker", """
        if timerValues.getCurrentWatermarkInMs() < deadline:""", """
        if timerValues.getCurrentWatermarkInMs() <= deadline:  # not past it yet"""),
            losing("test_session_tracker"),
            dimension="a session's timer exactly at the watermark"),
    Learner("initial_held_back", "misconception", "Believes the initial state waits for a "
            "user's first rows, so keeps it on the processor until they come.",
            altered(SELF_CONTAINED, "starting_counts", """
    def handleInitialState(self, key, initialState, timerValues):
        # called once per row of the initial state: add each to what is there
        start = initialState.n
        if self.total.exists():
            start += self.total.get()[0]
        self.total.update((start,))

    def handleInputRows(self, key, rows, timerValues):
        total = self.total.get()[0] if self.total.exists() else 0""", """
    def handleInitialState(self, key, initialState, timerValues):
        # kept aside: a user starts from it when their first rows come
        self.waiting = getattr(self, "waiting", {})
        self.waiting[key[0]] = self.waiting.get(key[0], 0) + initialState.n

    def handleInputRows(self, key, rows, timerValues):
        waiting = getattr(self, "waiting", {})
        total = self.total.get()[0] if self.total.exists() else waiting.pop(key[0], 0)"""),
            losing("test_starting_counts"),
            dimension="a user of the initial state first seen after a restart"),
    # -- partial and hard-coded ---------------------------------------------------------------
    Learner("first_two_only", "partial", "Did tasks 1 and 2, left 3 and 4 untouched.",
            {k: TIMER_IN_STATE[k] for k in ("session_tracker", "ttl_dedup")},
            {"test_session_tracker": 3, "test_ttl_dedup": 3}),
    Learner("example_typed_in", "hardcoded", "Yields the worked example's rows whatever the "
            "stream, with no state of its own.", EXAMPLE_TYPED_IN, {}),
]

#: Cells other tests borrow, as the corpus's learners write them.
_CELLS = {learner.name: learner.answers for learner in LEARNERS}
TIMER_CLEARS_STATE = _CELLS["timer_clears_state"]["session_tracker"]
DEDUP_WITHOUT_TTL = _CELLS["dedup_without_ttl"]["ttl_dedup"]
INITIAL_OVERWRITES = _CELLS["initial_overwrites"]["starting_counts"]
FIRST_N_TRUSTS_ORDER = _CELLS["first_n_trusts_order"]["first_n"]

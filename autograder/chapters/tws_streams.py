"""The streams chapter 4's checks play (:mod:`autograder.chapters.transform_with_state`).

Each task is checked on the chapter's example, or, when graded, on a **fixed part** that
sits on the task's boundary (whatever the seed, it separates a misconception from the idea;
docs/grading-quality.md lists them) and a part drawn from the seed. The two parts run
**side by side**: micro-batch ``i`` of the query holds micro-batch ``i`` of each part, and
each part has grouping keys of its own (the fixed part's users are never the seed's). State
is kept per key, so a processor treats each part as if it ran alone, and one query plays
both: fewer, fuller micro-batches. What is global to a query is kept apart: a
time to live (task 2 runs a second query for it), and the watermark of task 1, which the
seed's event times are drawn not to move before the fixed part does.

A check compares each part on its own keys, the fixed part first, so a difference is told
with the stream of the part it appeared in (:func:`autograder.checks.checking.stream_context`);
what no key owns (a query that fails, the operator's metrics) is told with both.

Every function here takes the seed, or ``None`` for the chapter's example.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Callable, Iterable

from ..checks.checking import EXAMPLE, FIXED, drawn, stream_context

HOUR_MS = 3_600_000


@dataclass(frozen=True)
class Part:
    """One scenario of a check's stream: how a lesson names it, and the keys it owns."""

    context: str
    keys: frozenset


@dataclass(frozen=True)
class Stream:
    """A check's micro-batches, every part's rows side by side, and its parts."""

    batches: list
    parts: tuple[Part, ...]
    #: The index of each part's last micro-batch (where a check reads the state back).
    ends: frozenset

    @property
    def context(self) -> str:
        """How a lesson names the whole stream (for what no single key owns)."""
        return "; beside it, with keys of its own, ".join(part.context for part in self.parts)


def side_by_side(*parts: tuple[str, list, Iterable]) -> Stream:
    """A stream from ``(context, micro-batches, keys)`` parts whose keys are disjoint."""
    batches: list = []
    for _, part_batches, _ in parts:
        for number, rows in enumerate(part_batches):
            if number == len(batches):
                batches.append([])
            batches[number].extend(rows)
    owned = [frozenset(keys) for _, _, keys in parts]
    assert sum(map(len, owned)) == len(frozenset().union(*owned)), "parts share a key"
    named = tuple(Part(context, keys) for (context, _, _), keys in zip(parts, owned))
    return Stream(batches, named, frozenset(len(part_batches) - 1 for _, part_batches, _ in parts))


def fixed_part(stream: Stream, key: Callable = lambda row: row[0]) -> list:
    """The rows of a graded stream's fixed part (its first), micro-batch by micro-batch."""
    part = stream.parts[0]
    assert FIXED in part.context, "only a graded stream has a fixed part"
    return [[row for row in rows if key(row) in part.keys] for rows in stream.batches]


def keys_of(batches: list, key: Callable = lambda row: row[0]) -> set:
    """The grouping keys of a part's rows."""
    return {key(row) for rows in batches for row in rows}


def _one_part(what: str, label: str, batches: list, key: Callable = lambda row: row[0]) -> tuple:
    return stream_context(what, label, batches), batches, keys_of(batches, key)


# -- task 1: sessions, rows (user, seconds after T0) -------------------------------------------
EXAMPLE_SESSIONS = [
    [("ann", 0), ("ann", 4), ("bob", 2)],
    [("ann", 30), ("bob", 8)],
    [("cid", 60)],
]
#: The fixed part of every graded session stream: ann's two first rows come latest first
#: (her session starts at the earliest and its gap runs from the latest, whatever order a
#: micro-batch hands them in), her next event arrives while her first timer is pending (her
#: timer must be replaced, not added to), bob's timer fires when cid moves the watermark,
#: and ann's row at 2 s comes after the watermark passed it (dropped before the processor
#: sees it). kit's two events share an instant (two events, not one); lou's second event
#: is earlier than his first (his session still ends 10 s after his latest); ned's timer
#: is exactly where cid puts the watermark, 35 s (a timer fires once the watermark reaches
#: it).
EDGE_SESSIONS = [[("ann", 3), ("bob", 1), ("ann", 0), ("kit", 1), ("kit", 1), ("lou", 4)],
                 [("ann", 6), ("lou", 2)], [("cid", 40), ("ned", 25)], [("ann", 2)]]
#: The seed's users (never the fixed part's), and when each of its micro-batches may put
#: their rows, in seconds after T0. The watermark is the query's, 5 s behind its latest
#: event, so the seed's rows keep it where the fixed part needs it: at most 0 s after
#: micro-batch 0 (ann's 6 s and lou's 2 s are not late), at most 10 s after micro-batch 1
#: (no fixed timer fires before cid's 40 s: bob's and kit's are at 11 s), exactly 35 s
#: after micro-batches 2 and 3 (ned's timer fires; the seed's rows under 35 s in
#: micro-batch 3 are late, as ann's 2 s is).
SEEDED_USERS = ("dan", "eve", "fay")
SEEDED_SECONDS = [(0, 5), (4, 15), (20, 40), (25, 40)]


def session_stream(seed: int | None) -> Stream:
    """Task 1's stream: the example, or the fixed part beside the seed's."""
    what = "(user, seconds after T0)"
    if seed is None:
        return side_by_side(_one_part(what, EXAMPLE, EXAMPLE_SESSIONS))
    seeded = _session_batches(random.Random(seed))
    return side_by_side(_one_part(what, FIXED, EDGE_SESSIONS),
                        _one_part(what, drawn(seed), seeded))


def _session_batches(rng: random.Random) -> list[list[tuple[str, int]]]:
    batches = []
    for number, (low, high) in enumerate(SEEDED_SECONDS):
        rows = [(user, rng.randint(low, high))
                for user in SEEDED_USERS for _ in range(rng.randint(0, 2))]
        if number == 2 and rng.random() < 0.7:   # behind the watermark (1 s or more by then)
            rows.append((rng.choice(SEEDED_USERS), 0))
        batches.append(rows or [("gus", high)])
    return batches


# -- task 2: ids, de-duplicated with a TTL -------------------------------------------------------
EXAMPLE_DEDUP = [["a", "a", "b"], ["a", "c"], ["b", "c", "c"]]
#: The fixed stream of every graded run: ids seen again in the next micro-batch, with
#: several copies. Run with a TTL of an hour (remembered: not emitted again) and of 1 ms
#: (forgotten by then: emitted again), it separates a memory that never expires from one
#: that is never consulted. The seed's ids are never the fixed part's.
EDGE_DEDUP = [["a", "a", "b"], ["a", "b", "b"]]
SEEDED_IDS = "cdefg"


def dedup_runs(seed: int | None) -> list[tuple[int, Stream]]:
    """Task 2's queries, ``[(ttl_ms, stream), ...]``: the example with an hour's TTL; graded,
    the fixed part beside the seed's with 1 ms, and the fixed part again with an hour."""
    if seed is None:
        return [(HOUR_MS, side_by_side(_dedup_part(HOUR_MS, EXAMPLE, EXAMPLE_DEDUP)))]
    rng = random.Random(seed)
    seeded = [[rng.choice(SEEDED_IDS) for _ in range(rng.randint(1, 5))] for _ in range(3)]
    return [(1, side_by_side(_dedup_part(1, FIXED, EDGE_DEDUP),
                             _dedup_part(1, drawn(seed), seeded))),
            (HOUR_MS, side_by_side(_dedup_part(HOUR_MS, FIXED, EDGE_DEDUP)))]


def _dedup_part(ttl: int, label: str, batches: list) -> tuple:
    return _one_part(f"ids, TTL {ttl} ms", label, batches, key=lambda row: row)


# -- task 3: an initial state, then users ---------------------------------------------------------
EXAMPLE_INITIAL = [("ann", 10), ("ann", 5), ("bob", 7)]
EXAMPLE_COUNTS = [["ann"], ["ann", "bob"], ["bob", "cid"]]
#: The fixed case of every graded run: a user with two starting rows seen in micro-batch 0
#: (their sum, not one of them, starts the count), a user who starts only after the restart,
#: and a user with no starting row.
EDGE_INITIAL = ([("ann", 3), ("bob", 2), ("bob", 5)], [["bob", "cid"], ["ann", "bob"], ["cid"]])
#: The seed's users, never the fixed case's.
SEEDED_COUNT_USERS = ("dan", "eve", "fay", "gus")


def count_cases(seed: int | None) -> tuple[list, Stream]:
    """Task 3's query, ``(initial rows, stream)``: the example, or the fixed case beside the
    seed's (their initial rows together). The query is restarted after micro-batch 0."""
    if seed is None:
        cases = [(EXAMPLE_INITIAL, EXAMPLE_COUNTS, EXAMPLE)]
    else:
        cases = [(*EDGE_INITIAL, FIXED), (*_random_counts(random.Random(seed)), drawn(seed))]
    parts = [(stream_context(f"initial state {initial}, users", label, batches)
              + ", restarted after batch 0",
              batches, keys_of(batches, lambda user: user) | {user for user, _ in initial})
             for initial, batches, label in cases]
    return [row for initial, _, _ in cases for row in initial], side_by_side(*parts)


def _random_counts(rng: random.Random) -> tuple[list, list]:
    """An initial state (one user with two rows at least) and three micro-batches of users."""
    users = SEEDED_COUNT_USERS
    initial = [(user, rng.randint(1, 20)) for user in users if rng.random() < 0.5]
    twice = rng.choice(users)
    initial += [(twice, rng.randint(1, 20)), (twice, rng.randint(1, 20))]
    batches = [[rng.choice(users) for _ in range(rng.randint(1, 4))] for _ in range(3)]
    batches[0].append(twice)      # so that the two starting rows show in the output
    return initial, batches


# -- task 4: rows (user, seq), the first n of each user -----------------------------------------
EXAMPLE_FIRST = ([["ann", "ann", "bob"], ["ann", "ann", "bob"], ["ann", "cid"]], 3)


def first_n_stream(seed: int | None) -> tuple[int, Stream]:
    """Task 4's ``n`` and stream, each part's rows numbered by ``seq`` across it: the
    example, or the fixed part beside the seed's (users ann, bob and cid). The fixed part
    is ``zed``: ``n + 1`` rows in micro-batch 0 written latest ``seq`` first (the order
    rows reach ``handleInputRows`` is not theirs), then two more (a limit per micro-batch
    lets them through); and ``amy``, seen once, in micro-batch 0 beside zed (a counter that
    is not per user shows)."""
    if seed is None:
        users, n = EXAMPLE_FIRST
        parts = [(EXAMPLE, users)]
    else:
        rng = random.Random(seed)
        users = [[rng.choice(("ann", "bob", "cid")) for _ in range(rng.randint(1, 5))]
                 for _ in range(3)]
        n = rng.randint(1, 3)
        parts = [(FIXED, [["zed"] * (n + 1) + ["amy"], ["zed"] * 2]), (drawn(seed), users)]
    numbered = []
    for label, names_per_batch in parts:
        batches, seq = [], 0
        for names in names_per_batch:
            batches.append([(name, seq + i) for i, name in enumerate(names)])
            seq += len(names)
        if label == FIXED:
            batches[0].reverse()    # amy, then zed's first rows latest first
        numbered.append(_one_part(f"(user, seq), n={n}", label, batches))
    return n, side_by_side(*numbered)

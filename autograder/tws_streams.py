"""The streams chapter 4's checks play (:mod:`autograder.transform_with_state`).

Each task is checked on the chapter's example, or, when graded, on a fixed part that sits
on the task's boundary (whatever the seed, it separates a misconception from the idea;
docs/grading-quality.md lists them) followed by streams drawn from the seed. Every function
here takes the seed, or ``None`` for the chapter's example, and names each stream for the
lesson a failure prints (:func:`autograder.checking.stream_context`).
"""
from __future__ import annotations

import random

from .checking import EXAMPLE, FIXED, drawn, stream_context

#: A stream and how a lesson names it: ``[(context, micro-batches), ...]``.
Parts = list[tuple[str, list]]
HOUR_MS = 3_600_000


# -- task 1: sessions, rows (user, seconds after T0) -------------------------------------------
EXAMPLE_SESSIONS = [
    [("ann", 0), ("ann", 4), ("bob", 2)],
    [("ann", 30), ("bob", 8)],
    [("cid", 60)],
]
#: The fixed part of every graded session stream, before the seed's (which starts at
#: 100 s): ann's two first rows come latest first (her session starts at the earliest and
#: its gap runs from the latest, whatever order a micro-batch hands them in), her next event
#: arrives while her first timer is pending (her timer must be replaced, not added to),
#: bob's timer fires when cid moves the watermark, and ann's row at 2 s comes after the
#: watermark passed it (dropped before the processor sees it).
EDGE_SESSIONS = [[("ann", 3), ("bob", 1), ("ann", 0)], [("ann", 6)], [("cid", 40)], [("ann", 2)]]


def session_parts(seed: int | None) -> Parts:
    """Task 1's stream: the example, or the fixed part then the seed's from 100 s on."""
    what = "(user, seconds after T0)"
    if seed is None:
        return [(stream_context(what, EXAMPLE, EXAMPLE_SESSIONS), EXAMPLE_SESSIONS)]
    seeded = _session_batches(random.Random(seed), start=100)
    return [(stream_context(what, FIXED, EDGE_SESSIONS), EDGE_SESSIONS),
            (stream_context(what, drawn(seed), seeded), seeded)]


def _session_batches(rng: random.Random, start: int = 0) -> list[list[tuple[str, int]]]:
    batches = []
    for number in range(3):
        at = start + 30 * number
        rows = [(user, at + rng.randint(0, 8))
                for user in ("ann", "bob", "cid") for _ in range(rng.randint(0, 2))]
        if number and rng.random() < 0.7:       # a row far behind the watermark
            rows.append((rng.choice(("ann", "bob", "dan")), at - 40))
        batches.append(rows or [("eve", at)])
    return batches


# -- task 2: ids, de-duplicated with a TTL -------------------------------------------------------
EXAMPLE_DEDUP = [["a", "a", "b"], ["a", "c"], ["b", "c", "c"]]
#: The fixed stream of every graded run: ids seen again in the next micro-batch, with
#: several copies. Run with a TTL of an hour (remembered: not emitted again) and of 1 ms
#: (forgotten by then: emitted again), it separates a memory that never expires from one
#: that is never consulted.
EDGE_DEDUP = [["a", "a", "b"], ["a", "b", "b"]]


def dedup_runs(seed: int | None) -> list[tuple[int, Parts]]:
    """Task 2's queries, ``[(ttl_ms, parts), ...]``: the example with an hour's TTL; graded,
    the fixed stream then the seed's with 1 ms, and the fixed stream again with an hour."""
    if seed is None:
        runs = [(HOUR_MS, [(EXAMPLE, EXAMPLE_DEDUP)])]
    else:
        rng = random.Random(seed)
        seeded = [[rng.choice("abcde") for _ in range(rng.randint(1, 5))] for _ in range(3)]
        runs = [(1, [(FIXED, EDGE_DEDUP), (drawn(seed), seeded)]),
                (HOUR_MS, [(FIXED, EDGE_DEDUP)])]
    return [(ttl, [(stream_context(f"ids, TTL {ttl} ms", label, batches), batches)
                   for label, batches in parts]) for ttl, parts in runs]


# -- task 3: an initial state, then users ---------------------------------------------------------
EXAMPLE_INITIAL = [("ann", 10), ("ann", 5), ("bob", 7)]
EXAMPLE_COUNTS = [["ann"], ["ann", "bob"], ["bob", "cid"]]
#: The fixed case of every graded run: a user with two starting rows seen in micro-batch 0
#: (their sum, not one of them, starts the count), a user who starts only after the restart,
#: and a user with no starting row.
EDGE_INITIAL = ([("ann", 3), ("bob", 2), ("bob", 5)], [["bob", "cid"], ["ann", "bob"], ["cid"]])


def count_cases(seed: int | None) -> list[tuple[list, list, str]]:
    """Task 3's queries, ``[(initial rows, micro-batches, context), ...]``: the example, or
    the fixed case then the seed's. Each query is restarted after micro-batch 0."""
    if seed is None:
        cases = [(EXAMPLE_INITIAL, EXAMPLE_COUNTS, EXAMPLE)]
    else:
        cases = [(*EDGE_INITIAL, FIXED), (*_random_counts(random.Random(seed)), drawn(seed))]
    return [(initial, batches,
             stream_context(f"initial state {initial}, users", label, batches)
             + ", restarted after batch 0") for initial, batches, label in cases]


def _random_counts(rng: random.Random) -> tuple[list, list]:
    """An initial state (one user with two rows at least) and three micro-batches of users."""
    users = ("ann", "bob", "cid", "dan")
    initial = [(user, rng.randint(1, 20)) for user in users if rng.random() < 0.5]
    twice = rng.choice(users)
    initial += [(twice, rng.randint(1, 20)), (twice, rng.randint(1, 20))]
    batches = [[rng.choice(users) for _ in range(rng.randint(1, 4))] for _ in range(3)]
    batches[0].append(twice)      # so that the two starting rows show in the output
    return initial, batches


# -- task 4: rows (user, seq), the first n of each user -----------------------------------------
EXAMPLE_FIRST = ([["ann", "ann", "bob"], ["ann", "ann", "bob"], ["ann", "cid"]], 3)


def first_n_parts(seed: int | None) -> tuple[int, Parts]:
    """Task 4's ``n`` and stream, rows numbered by ``seq`` across it: the example, or a fixed
    part then the seed's. The fixed part is ``zed``: ``n + 1`` rows in micro-batch 0 written
    latest ``seq`` first (the order rows reach ``handleInputRows`` is not theirs), then two
    more (a limit per micro-batch lets them through); and ``amy``, seen once, in
    micro-batch 0 beside zed (a counter that is not per user shows)."""
    if seed is None:
        users, n = EXAMPLE_FIRST
        parts = [(EXAMPLE, users)]
    else:
        rng = random.Random(seed)
        users = [[rng.choice(("ann", "bob", "cid")) for _ in range(rng.randint(1, 5))]
                 for _ in range(3)]
        n = rng.randint(1, 3)
        parts = [(FIXED, [["zed"] * (n + 1) + ["amy"], ["zed"] * 2]), (drawn(seed), users)]
    numbered, seq = [], 0
    for label, names_per_batch in parts:
        batches = []
        for names in names_per_batch:
            batches.append([(name, seq + i) for i, name in enumerate(names)])
            seq += len(names)
        if label == FIXED:
            batches[0].reverse()    # amy, then zed's first rows latest first
        numbered.append((stream_context(f"(user, seq), n={n}", label, batches), batches))
    return n, numbered

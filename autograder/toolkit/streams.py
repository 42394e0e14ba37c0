"""Fresh, seeded micro-batch streams for the checks.

A grade cell never replays a stream the learner has seen: it draws a new one from a seed
chosen at grading time (see :func:`autograder.checks.feedback.fresh_seed`). The seed is printed
with every failure, so ``COURSE_SEED=<seed>`` replays exactly the stream that failed.
Chapter 1 draws numbered rows; chapter 2 keys, and events of two users for sessions.
"""
from __future__ import annotations

import random
from datetime import datetime

#: The instant every chapter's event times count from: event ``s`` happens ``s`` seconds
#: after it. A zone-less noon, which means noon UTC on every machine because the course's
#: session makes UTC the process's zone (:func:`autograder.toolkit.session.course_session`).
T0 = datetime(2024, 1, 1, 12, 0, 0)


def batch_sizes(rng: random.Random, batches: tuple[int, int] = (4, 6),
                rows: tuple[int, int] = (0, 5)) -> list[int]:
    """Sizes of a stream's micro-batches: between ``batches`` batches of ``rows`` rows."""
    return [rng.randint(*rows) for _ in range(rng.randint(*batches))]


def numbered_rows(sizes: list[int], start: int = 1) -> list[list[tuple[int]]]:
    """Micro-batches of one-column rows numbered 1, 2, 3 ... across the whole stream."""
    batches, next_id = [], start
    for size in sizes:
        batches.append([(next_id + i,) for i in range(size)])
        next_id += size
    return batches


def random_keys(rng: random.Random, batches: tuple[int, int] = (3, 3)) -> list[list[str]]:
    """Micro-batches of keys drawn from a few letters; a batch may be empty."""
    letters = rng.sample("abcdefg", rng.randint(3, 5))
    return [[rng.choice(letters) for _ in range(rng.randint(0, 4))]
            for _ in range(rng.randint(*batches))]


def random_events(rng: random.Random) -> tuple[list[list[tuple[str, int, int]]], int]:
    """Two micro-batches of events for two users, and a session gap in seconds.

    The second batch brings a late-enough event to extend or bridge a session in state,
    and one far ahead, so that the watermark closes the early sessions.
    """
    gap = rng.randint(3, 6)
    first, second = [], []
    for user in ("a", "b"):
        t = rng.randint(0, 4)
        for _ in range(rng.randint(1, 3)):
            first.append((user, t, rng.randint(1, 9)))
            t += rng.randint(1, gap + 3)
        second.append((user, t + rng.randint(-gap, gap), rng.randint(1, 9)))
    second.append((rng.choice("ab"), 60 + rng.randint(0, 10), rng.randint(1, 9)))
    rng.shuffle(first)
    rng.shuffle(second)
    return [first, second], gap

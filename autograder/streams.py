"""Fresh, seeded micro-batch streams for the checks.

A grade cell never replays a stream the learner has seen: it draws a new one from a seed
chosen at grading time (see :func:`autograder.feedback.fresh_seed`). The seed is printed
with every failure, so ``COURSE_SEED=<seed>`` replays exactly the stream that failed.
"""
from __future__ import annotations

import random


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

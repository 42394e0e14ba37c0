"""Checks whose failure is a small lesson.

Every check in the course compares what the learner's code produced ("got") with what
real Spark did ("expected"). When they differ, :class:`CheckFailed` says which micro-batch,
both values side by side, what the stream was (with the seed that reproduces it), and
which section of the chapter to reread.

Values from the learner's code are first turned into plain Python values (numbers,
strings, lists, dicts). Anything else is refused: an object that claims to be equal to
everything cannot pass a check.
"""
from __future__ import annotations

import os
import random
from typing import Any

_PLAIN_SCALARS = (bool, int, float, str, type(None))


class CheckFailed(AssertionError):
    """A check found a difference between the learner's answer and Spark."""

    def __init__(self, what: str, expected: Any, got: Any, *, batch: int | None = None,
                 revisit: str | None = None, context: str | None = None):
        self.what, self.expected, self.got = what, expected, got
        self.batch, self.revisit, self.context = batch, revisit, context
        super().__init__(self.lesson())

    def lesson(self) -> str:
        where = f"micro-batch {self.batch}: " if self.batch is not None else ""
        lines = [
            f"{where}{self.what}",
            f"    expected: {self.expected!r}",
            f"    got:      {self.got!r}",
        ]
        if self.context:
            lines.append(f"  the stream: {self.context}")
        if self.revisit:
            lines.append(f"  revisit: {self.revisit}")
        return "\n".join(lines)


def plain(value: Any, what: str = "the answer") -> Any:
    """``value`` as plain Python data, or :class:`CheckFailed` if it is something else.

    Tuples become lists; dict keys must be strings. Exactly these types are accepted, not
    subclasses, so a value cannot bring its own idea of equality.
    """
    kind = type(value)
    if kind in _PLAIN_SCALARS:
        return value
    if kind in (list, tuple):
        return [plain(item, what) for item in value]
    if kind is dict:
        if not all(type(key) is str for key in value):
            raise CheckFailed(f"{what} must have string keys", "str keys", list(value))
        return {key: plain(item, what) for key, item in value.items()}
    raise CheckFailed(
        f"{what} must be plain Python data (numbers, strings, lists, dicts)",
        "a plain value", f"an object of type {kind.__name__}",
    )


def check_equal(got: Any, expected: Any, what: str, *, batch: int | None = None,
                revisit: str | None = None, context: str | None = None) -> None:
    """Raise :class:`CheckFailed` unless ``got`` equals ``expected`` (as plain data)."""
    got = plain(got, what)
    if got != expected or _type_shape(got) != _type_shape(expected):
        raise CheckFailed(what, expected, got, batch=batch, revisit=revisit, context=context)


def _type_shape(value: Any) -> Any:
    """The types inside a value, so that True does not pass for 1, nor 1.0 for 1."""
    if isinstance(value, list):
        return [_type_shape(item) for item in value]
    if isinstance(value, dict):
        return {key: _type_shape(item) for key, item in value.items()}
    return type(value).__name__


def fresh_seed() -> int:
    """A new seed for a grading run, or ``COURSE_SEED`` to replay one."""
    if os.environ.get("COURSE_SEED"):
        return int(os.environ["COURSE_SEED"])
    return random.SystemRandom().randrange(1, 10**6)


def passed(message: str) -> None:
    """Tell the learner a check passed."""
    print(f"✔ {message}")

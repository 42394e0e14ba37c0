"""Spark's answers several processes that ask the same questions keep for each other (the
test suite's workers): a folder named by :data:`~autograder.contract.SHARED_ANSWERS`, one
file per question, each question under its own lock so that two processes that ask it
together run it once. A graded kernel and a judge never use it: one only asks, the other
only judges."""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
from pathlib import Path
from typing import Iterator

from . import mode
from ..contract import SHARED_ANSWERS
from .mode import Mode


class SharedAnswers(dict):
    """The answers the shared folder holds for some questions, while their locks are held;
    an answer set here is written to the folder for the other processes."""

    def __init__(self, folder: Path, found: dict[str, str]):
        super().__init__(found)
        self.folder = folder

    def __setitem__(self, key: str, answer: str) -> None:
        super().__setitem__(key, answer)
        write_whole(self.folder / f"{digest(key)}.json", answer)


@contextlib.contextmanager
def holding(keys: list[str], share: bool = True) -> Iterator[dict[str, str]]:
    """The answers other processes left in the shared folder for ``keys``, with each key's
    lock held meanwhile (taken in one order, so no two processes each wait for the other).
    Without a shared folder, or where this process must not use one, a plain dict."""
    here = folder()
    if not share or here is None:
        yield {}
        return
    with contextlib.ExitStack() as held:
        for name in sorted({digest(key) for key in keys}):
            lock = held.enter_context(open(here / f"{name}.lock", "w"))
            fcntl.flock(lock, fcntl.LOCK_EX)
        found = {key: path.read_text() for key in keys
                 if (path := here / f"{digest(key)}.json").is_file()}
        yield SharedAnswers(here, found)


def folder() -> Path | None:
    """The folder this process shares answers through, if it may: never in a graded
    kernel or the judge."""
    named = os.environ.get(SHARED_ANSWERS)
    if not named or mode.current() in (Mode.JUDGE, Mode.GRADED):
        return None
    Path(named).mkdir(parents=True, exist_ok=True)
    return Path(named)


def digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()[:16]


def write_whole(path: Path, text: str) -> None:
    """Write ``path`` so that a reader finds it whole or not at all (another process may be
    reading the folder, and this one may be killed mid-write)."""
    partial = path.with_name(f"{path.name}.partial")
    partial.write_text(text)
    partial.replace(path)

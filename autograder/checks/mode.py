"""What this process is to the checks: the one place that says it.

* **a self-check** (a learner's kernel, ``make check``, the tests): a check asks the
  learner's code and judges its answers here, asking Spark what it does not know yet;
* **a graded kernel**: a check only asks, and writes the answers down for the grading
  command (:mod:`autograder.checks.asking`); it never learns one of Spark's answers;
* **the solution's run** of a grading run: a self-check that writes down every answer Spark
  gave, for the run's judges (:mod:`autograder.checks.answers`);
* **a judge**: the grading command's process that judges a graded kernel's answers with the
  solution's, and never asks Spark (:mod:`autograder.grading.judge`).

The grading command passes a kernel its role when it starts it, in the environment the
kernel is started with (:data:`~autograder.contract.ASKING`,
:data:`~autograder.contract.RECORD_ANSWERS`); a judge is a judge inside
:func:`autograder.checks.answers.judging`. Nothing else decides it, and the modules that need it
ask :func:`current`. This module imports nothing of the course's but its contract.
"""
from __future__ import annotations

import contextlib
import enum
import os
import threading
from typing import Iterator

from ..contract import ASKING, RECORD_ANSWERS


class Mode(enum.Enum):
    SELF_CHECK = "a self-check"
    GRADED = "a graded kernel"
    RECORDING = "the solution's run"
    JUDGE = "a judge"


#: How many :func:`judge` blocks this process is inside.
_judging = 0
_lock = threading.Lock()


def current() -> Mode:
    """This process's role."""
    if _judging:
        return Mode.JUDGE
    if os.environ.get(ASKING) == "1":
        return Mode.GRADED
    if os.environ.get(RECORD_ANSWERS):
        return Mode.RECORDING
    return Mode.SELF_CHECK


@contextlib.contextmanager
def judge() -> Iterator[None]:
    """Inside the block this process is a judge."""
    global _judging
    with _lock:
        _judging += 1
    try:
        yield
    finally:
        with _lock:
            _judging -= 1

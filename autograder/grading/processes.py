"""Running one notebook's process under watch: a time limit, a disk limit, nothing left behind.

Every process a grading run starts (nbgrader's ``autograde`` for a learner, ``nbconvert``
for the solution) runs in its own session, so that it and the kernel it starts can be
killed together; it is watched ten times a second, and killed when it runs out of time or
its folders grow past the disk limit.
"""
from __future__ import annotations

import contextlib
import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..contract import CELL_TIMEOUT
from .results import DISK_FULL, GRADED, GRADER_FAULT, TIMED_OUT


@dataclass(frozen=True)
class GradingLimits:
    """How long and how big one notebook may get when it is graded. The one place these are
    set: a grading course keeps them (:class:`~.course.GradingCourse`), the command's options
    and :func:`~autograder.grading.autograde` take their defaults from here, and the course's
    nbgrader config reads them from the course."""

    #: Seconds one cell may run; then it is interrupted, says so, and scores zero.
    cell_timeout: int = CELL_TIMEOUT
    #: Seconds a whole notebook may take, its kernel's and Spark's start included.
    submission_timeout: float = 900.0
    #: Megabytes a notebook's folders may grow by (checkpoints, output) before it is stopped.
    disk_limit_mb: float = 512.0


def run_watched(command: list[str], *, cwd: Path, env: dict[str, str], log: Path,
                watched: list[Path], limits: GradingLimits,
                started: Callable[[subprocess.Popen], None] = lambda process: None,
                fault: Callable[[], str | None] = lambda: None,
                launch: Callable[..., subprocess.Popen] | None = None,
                ) -> tuple[str, str, int | None]:
    """Run ``command`` with its output in ``log``; return (outcome, detail, exit code).

    The outcome is GRADED when the process ended by itself, TIMED_OUT or DISK_FULL when it
    was stopped, GRADER_FAULT when ``fault()``, asked every second, named a fault of the
    grader's own (the Spark it grades against is gone). Whatever it started is killed on
    the way out, Ctrl-C included. ``launch(command, cwd=, env=, log=)``, when given, starts
    the process instead of ``subprocess.Popen`` (nbgrader forked from a warm process:
    :mod:`.warm_nbgrader`), in a session of its own all the same.
    """
    if launch:
        process = launch(command, cwd=cwd, env=env, log=log)
    else:
        with open(log, "wb") as out:
            process = subprocess.Popen(command, cwd=cwd, env=env, stdout=out,
                                       stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                       start_new_session=True)
    started(process)
    try:
        outcome, detail = _watch(process, watched, limits, fault)
    finally:
        kill_tree(process.pid)  # a kernel nbgrader could not shut down
    return outcome, detail, process.returncode


def _watch(process: subprocess.Popen, watched: list[Path], limits: GradingLimits,
           fault: Callable[[], str | None]) -> tuple[str, str]:
    deadline = time.monotonic() + limits.submission_timeout
    next_disk_check = 0.0
    while True:
        try:
            process.wait(0.1)  # a notebook that ends is taken up at once
            return GRADED, ""
        except subprocess.TimeoutExpired:
            pass
        now = time.monotonic()
        if now > deadline:
            kill_tree(process.pid)
            return TIMED_OUT, f"still running after {limits.submission_timeout:.0f} s"
        if now > next_disk_check:
            used = sum(_disk_usage(p) for p in watched) / 2**20
            if used > limits.disk_limit_mb:
                kill_tree(process.pid)
                return DISK_FULL, f"wrote {used:.0f} MB (limit {limits.disk_limit_mb:.0f} MB)"
            cause = fault()
            if cause:
                kill_tree(process.pid)
                return GRADER_FAULT, cause
            next_disk_check = now + 1.0


def kill_tree(pid: int) -> None:
    """Kill a process and everything it started (the kernel lives in its own session)."""
    import psutil
    try:
        root = psutil.Process(pid)
        family = root.children(recursive=True) + [root]
    except psutil.Error:
        return
    for process in family:
        with contextlib.suppress(psutil.Error):
            process.kill()
    psutil.wait_procs(family, timeout=5)


def _disk_usage(path: Path) -> int:
    total = 0
    for folder, _, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(folder, name)).st_size
    return total


def last_error(text: str) -> str:
    """The line of a log that says what went wrong (nbgrader's first ERROR, else the last
    line naming an error)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    errors = [i for i, line in enumerate(lines) if "| ERROR]" in line]
    if errors:
        return " ".join(lines[errors[0]: errors[0] + 2])[:300]
    errors = [line for line in lines if "Error" in line]
    return (errors or lines or ["no output"])[-1][:300]

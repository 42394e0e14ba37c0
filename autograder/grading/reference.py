"""The solution's run: one seed for the class, Spark's answers asked once.

Before the learners' notebooks, a grading run draws a fresh seed and runs the solution
notebook (nbgrader's source, hidden tests included) once with it. Its kernel records what
Spark answered each check and the checkpoints some checks hand to a learner's code
(:mod:`autograder.checks.answers`). Every learner's notebook is graded on the same streams: its
kernel gets the checkpoints, and the command's judge (:mod:`autograder.grading.judge`)
compares the learner's answers with the recorded ones, never asking Spark again.
"""
from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path
from typing import Callable

from ..contract import ANSWERS, RECORD_ANSWERS, SEED
from .course import GradingCourse
from .processes import GradingLimits, last_error, run_watched
from .results import GRADED
from .sandbox import new_workdir
from .spark import session_url

#: (temporary folder, Connect session URL or None) -> the environment of a kernel.
KernelEnv = Callable[[Path, "str | None"], dict]


def record_answers(course: GradingCourse, assignment: str, *, kernel_env: KernelEnv,
                   remote: str | None, limits: GradingLimits,
                   reuse: bool = True) -> tuple[dict[str, str], str]:
    """Run the solution once; return what every learner's kernel of the assignment is given
    (the seed, the answers file) and a line for the instructor: the seed, and how the
    solution fared. A resumed run (``reuse``) keeps the seed and the answers of the run it
    resumes, so one class is graded on one set of streams.
    """
    from ..checks.answers import checkpoints_beside
    from ..checks.feedback import fresh_seed

    folder = course.answers_folder(assignment)
    answers, seed_file = folder / "answers.json", folder / "seed"
    if reuse and answers.exists() and seed_file.exists():
        seed = seed_file.read_text().strip()
        return ({SEED: seed, ANSWERS: str(answers)},
                f"{assignment}: seed {seed} and Spark's answers kept from an earlier run")

    # A run killed while it kept the answers off the disk (RunAnswers.seal) left its
    # seed: the class goes on with the same streams, and their answers are recorded again.
    seed = seed_file.read_text().strip() if reuse and seed_file.exists() else str(fresh_seed())
    folder.mkdir(parents=True, exist_ok=True)
    answers.unlink(missing_ok=True)
    recording = folder / "answers.recording.json"
    recording.unlink(missing_ok=True)
    for old in (checkpoints_beside(answers), checkpoints_beside(recording)):
        shutil.rmtree(old, ignore_errors=True)
    seed_file.write_text(seed)  # COURSE_SEED=<it> replays the run's streams
    workdir = new_workdir(f"solution-{assignment}")  # where a sandboxed server reaches it
    source = course.root / "source" / assignment / course.notebook_name(assignment)
    url = session_url(remote) if remote else None
    env = {**kernel_env(workdir, url), SEED: seed, RECORD_ANSWERS: str(recording)}
    command = [sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook",
               "--execute", str(source), "--output-dir", str(workdir),
               f"--ExecutePreprocessor.timeout={limits.cell_timeout}"]
    log = folder / "solution-run.log"
    started = time.monotonic()
    try:
        outcome, _, returncode = run_watched(command, cwd=workdir, env=env, log=log,
                                             watched=[workdir], limits=limits)
        ran = outcome == GRADED and returncode == 0
    finally:
        if url:
            from .connect_server import release_session
            release_session(url)
        shutil.rmtree(workdir, ignore_errors=True)
    if not recording.exists():
        recording.write_text("{}")
    if checkpoints_beside(recording).is_dir():  # the checkpoints some checks read
        checkpoints_beside(recording).rename(checkpoints_beside(answers))
    recording.replace(answers)  # only now: an interrupted run records nothing
    given = {SEED: seed, ANSWERS: str(answers)}
    seconds = time.monotonic() - started
    if ran:
        return given, f"{assignment}: seed {seed}; the solution ran clean in {seconds:.0f} s"
    return given, (f"{assignment}: seed {seed}; the solution notebook did NOT run clean "
                   f"({last_error(log.read_text(errors='replace'))}; see {log}); a notebook "
                   "whose checks need what it did not record is the grader's fault, graded "
                   "again once the solution runs clean (--force runs it again)")

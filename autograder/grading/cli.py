"""The instructor's command: ``python -m autograder.classroom grade`` (docs/instructor.md)."""
from __future__ import annotations

import argparse
import signal
import sys
import threading
import time
from pathlib import Path

import rich.progress
from rich.console import Console

from .course import GradingCourse, UnknownFiles, find_repository, nbgrader_env
from .grades_csv import write_grades_csv
from .processes import GradingLimits
from .results import GRADED, NotebookGrade, summary, summary_table
from .run import GradingRun
from .sandbox import why_not_available
from .shards import MergeError, merge_courses, parse_shard, take_shard


#: The command's name as the instructor typed it: the installed package's console script
#: (pyproject.toml) or the module.
SCRIPT = "state-store-course"
PROG = SCRIPT if Path(sys.argv[0]).name == SCRIPT else "python -m autograder.classroom"


class Progress:
    """What the command says while it grades, on stderr. In a terminal, a live bar (rich)
    with the notes above it; anywhere else (a log file, CI, a pipe) one plain line per
    finished notebook and per note: no carriage returns, no colours."""

    def __init__(self, console: Console | None = None):
        self.console = console or Console(stderr=True)
        self.done, self.total, self.flagged = 0, 0, 0
        self.started = time.monotonic()
        self.bar: rich.progress.Progress | None = None

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc) -> None:
        if self.bar:
            self.bar.stop()

    def start(self, total: int, skipped: int = 0) -> None:
        self.total, self.started = total, time.monotonic()
        if skipped:
            self.note(f"{skipped} submission(s) already graded: kept (use --force to regrade)")
        self.note(f"grading {total} notebook(s)")
        if self.console.is_interactive and total:
            self.bar = rich.progress.Progress(
                rich.progress.BarColumn(), rich.progress.MofNCompleteColumn(),
                rich.progress.TimeElapsedColumn(), "eta", rich.progress.TimeRemainingColumn(),
                rich.progress.TextColumn("{task.fields[flagged]} to look at", style="yellow",
                                         markup=False),
                rich.progress.TextColumn("{task.fields[last]}", markup=False),
                console=self.console)
            self.bar.add_task("grading", total=total, flagged=0, last="")
            self.bar.start()

    def note(self, line: str) -> None:
        _say(lambda: self.console.print(line, markup=False, highlight=False, soft_wrap=True))

    def advance(self, assignment: str, grade: NotebookGrade) -> None:
        self.done += 1
        self.flagged += bool(grade.flags) or grade.outcome != GRADED
        if self.bar:
            (task,) = self.bar.task_ids
            _say(lambda: self.bar.update(task, advance=1, flagged=self.flagged,
                                         last=f"{assignment}/{grade.student}"[:40]))
            return
        elapsed = time.monotonic() - self.started
        left = elapsed / self.done * (self.total - self.done)
        looked = f"; flagged: {'; '.join(grade.flags)[:120]}" if grade.flags else ""
        self.note(f"{self.done}/{self.total} {assignment}/{grade.student}: {grade.outcome}, "
                  f"{grade.score:g}/{grade.max_score:g} points{looked} "
                  f"({elapsed:.0f} s, about {left:.0f} s left, {self.flagged} to look at)")


def find_submissions(folder: Path, assignments: list[str]) -> dict[str, dict[str, Path]]:
    """Submissions in ``folder``: nbgrader's ``<learner>/<assignment>/<notebook>.ipynb``
    layout, or ``<learner>.ipynb`` files when grading a single assignment."""
    work: dict[str, dict[str, Path]] = {a: {} for a in assignments}
    for student_dir in sorted(p for p in folder.iterdir() if p.is_dir()):
        for assignment in assignments:
            notebooks = sorted((student_dir / assignment).glob("*.ipynb"))
            if notebooks:
                work[assignment][student_dir.name] = notebooks[0]
    if len(assignments) == 1:
        for notebook in sorted(folder.glob("*.ipynb")):
            work[assignments[0]].setdefault(notebook.stem, notebook)
    return {a: s for a, s in work.items() if s}


def parser() -> argparse.ArgumentParser:
    command = argparse.ArgumentParser(prog=PROG,
                                      description="Grade a class's notebooks with nbgrader.")
    commands = command.add_subparsers(dest="command", required=True)
    grade = commands.add_parser("grade", help="grade every submission of an assignment")
    grade.add_argument("assignment", nargs="?", help="e.g. 01_global_limit")
    grade.add_argument("--all", action="store_true", help="every assignment in solutions/")
    grade.add_argument("--submissions", type=Path, required=True,
                       help="<learner>/<assignment>/*.ipynb (nbgrader's layout) or <learner>.ipynb")
    grade.add_argument("--repository", "--course-root", type=Path, dest="repository",
                       help="the course's repository, holding solutions/ (default: the "
                            "current folder or the nearest one above it that holds solutions/)")
    grade.add_argument("--course-dir", type=Path,
                       help="the nbgrader course folder: gradebook, graded notebooks, feedback "
                            "(default: <repository>/.course-work/classroom)")
    grade.add_argument("--spark", default="server",
                       help="server (default), local, standalone, spark://HOST:PORT or sc://HOST:PORT")
    grade.add_argument("--jobs", type=int, default=2, help="notebooks graded at once")
    limits = GradingLimits()
    grade.add_argument("--cell-timeout", type=int, default=limits.cell_timeout,
                       help=f"seconds one cell may run (default {limits.cell_timeout})")
    grade.add_argument("--timeout", type=float, default=limits.submission_timeout,
                       help=f"seconds per notebook (default {limits.submission_timeout:g})")
    grade.add_argument("--disk-limit-mb", type=float, default=limits.disk_limit_mb,
                       help=f"megabytes a notebook may write (default {limits.disk_limit_mb:g})")
    grade.add_argument("--force", action="store_true", help="regrade what is already graded")
    grade.add_argument("--no-feedback", action="store_true")
    grade.add_argument("--streams-per-notebook", action="store_true",
                       help="each notebook draws its own streams and asks Spark itself, as with "
                            "stock nbgrader (slower; by default a run grades everybody on the "
                            "same fresh streams and asks Spark once)")
    grade.add_argument("--shard", type=parse_shard, metavar="K/N",
                       help="grade only shard K of N: the learners a hash of their name puts "
                            "there, the same on every machine (then `merge` the shards)")
    grade.add_argument("--answers-from", type=Path, metavar="FOLDER",
                       help="grade on the seed and Spark's answers another run recorded in "
                            "FOLDER/<assignment>/ (its course folder's spark-answers/) instead "
                            "of running the solution again")
    grade.add_argument("--unsandboxed", action="store_true",
                       help="grade on a machine that cannot build a sandbox (no bwrap, no user "
                            "namespaces): learners' code then runs as you, and every record "
                            "says so")
    merge = commands.add_parser("merge", help="gather the course folders of several shards "
                                              "(grade --shard K/N) into one class")
    merge.add_argument("shards", nargs="+", type=Path, metavar="SHARD_COURSE_DIR",
                       help="each shard's --course-dir")
    merge.add_argument("--course-dir", type=Path,
                       help="the nbgrader course folder to merge into (default: "
                            "<repository>/.course-work/classroom)")
    merge.add_argument("--repository", "--course-root", type=Path, dest="repository",
                       help="as for grade")
    merge.add_argument("--submissions", type=Path,
                       help="the class's submissions: list those no shard has graded")
    return command


class Stopped(KeyboardInterrupt):
    """The command was told to stop by a signal other than Ctrl-C."""

    def __init__(self, signum: int):
        self.signum = signum
        super().__init__(signal.Signals(signum).name)


def _stop(signum, frame) -> None:
    raise Stopped(signum)


def _say(write) -> None:
    """Write progress, or drop it where nobody reads any more (a closed terminal, a pipe
    whose reader is gone): the records are what a run leaves, its progress a courtesy."""
    try:
        write()
    except OSError:
        pass


def main(argv: list[str] | None = None) -> int:
    if threading.current_thread() is threading.main_thread():
        # Ctrl-C (SIGINT) stops the class and keeps what is graded, also when a script
        # started the command in the background: a shell without job control starts
        # background jobs with SIGINT ignored, and Python keeps an ignored signal ignored.
        signal.signal(signal.SIGINT, signal.default_int_handler)
        # SIGTERM (what `timeout`, a scheduler or `kill` send) and SIGHUP (a closing
        # terminal) stop it the same way: the notebooks being graded and their kernels
        # are ended with it, and a later run resumes. A command started to outlive its
        # terminal (`nohup`, which ignores SIGHUP) keeps grading when it closes.
        signal.signal(signal.SIGTERM, _stop)
        if signal.getsignal(signal.SIGHUP) is not signal.SIG_IGN:
            signal.signal(signal.SIGHUP, _stop)
    command = parser()
    args = command.parse_args(argv)
    if args.command == "merge":
        return merge(command, args)
    if args.all == bool(args.assignment):
        command.error("name one assignment or give --all")
    repository = _repository(command, args)
    solutions = repository / "solutions"
    assignments = sorted(p.name for p in solutions.iterdir() if p.is_dir()) \
        if args.all else [args.assignment]
    work = find_submissions(args.submissions.resolve(), assignments)
    if not work:
        command.error(f"no submissions for {', '.join(assignments)} in {args.submissions}")
    answers_of = {}
    if args.answers_from:
        answers_of = {a: args.answers_from.resolve() / a for a in assignments
                      if (args.answers_from / a / "answers.json").is_file()}
        if not answers_of:
            command.error(f"no recorded answers for {', '.join(assignments)} in "
                          f"{args.answers_from} (its <assignment>/answers.json)")
    if args.shard:
        everybody = {learner for submissions in work.values() for learner in submissions}
        work = {a: s for a, s in take_shard(work, args.shard).items() if s}
        mine = {learner for submissions in work.values() for learner in submissions}
        print(f"shard {args.shard[0]}/{args.shard[1]}: {len(mine)} of the class's "
              f"{len(everybody)} learners (by a hash of their names)", file=sys.stderr)
        if not work:
            return 0
    sandboxed = not args.unsandboxed
    refused = why_not_available()
    if sandboxed and refused:
        command.error(f"cannot grade in a sandbox: {refused}. A learner's code would run as "
                      "you, beside the gradebook; fix that, or grade here with --unsandboxed")
    if not sandboxed:
        print("grading UNSANDBOXED (--unsandboxed): a learner's code runs as you and can "
              "reach the course folder; every record says so", file=sys.stderr)
    limits = GradingLimits(args.cell_timeout, args.timeout, args.disk_limit_mb)
    course = _course(command, args, repository, limits=limits)
    run = GradingRun(course, work, spark=args.spark, jobs=args.jobs, force=args.force,
                     class_answers=not args.streams_per_notebook, answers_of=answers_of,
                     sandboxed=sandboxed, submissions=args.submissions.resolve(),
                     repository=repository)
    started = time.monotonic()
    try:
        results = run.grade(Progress(), on_spark=_tell_spark)
    except KeyboardInterrupt as stop:
        signum = stop.signum if isinstance(stop, Stopped) else signal.SIGINT
        _say(lambda: print(f"stopped by {signal.Signals(signum).name}: graded submissions "
                           "are kept; run the same command to resume", file=sys.stderr))
        return 128 + signum
    env = nbgrader_env()
    if not args.no_feedback:
        for assignment in results:
            course.run_nbgrader(["generate_feedback", assignment, "--force"], env, check=False)
    csv_notes = write_grades_csv(course)
    out = Console()
    if out.is_terminal:
        _say(lambda: out.print(summary(results)))
    else:
        _say(lambda: print(summary_table(results)))
    for note in csv_notes:
        _say(lambda note=note: print(f"note: {note}"))
    _say(lambda: print(f"\n{time.monotonic() - started:.0f} s. Gradebook "
                       f"{course.root / 'gradebook.db'}, CSV {course.root / 'grades.csv'}, "
                       f"feedback {course.root / 'feedback'}"))
    return 0


def _tell_spark(remote) -> None:
    if remote:
        print(f"grading against Spark Connect at {remote.url}", file=sys.stderr)
    if remote and remote.not_hidden:
        print(f"the Connect server's Spark can read the solutions: {remote.not_hidden}",
              file=sys.stderr)


def _repository(command: argparse.ArgumentParser, args) -> Path:
    repository = args.repository.resolve() if args.repository else find_repository()
    if repository is None or not (repository / "solutions").is_dir():
        command.error(f"no solutions/ folder in {args.repository or Path.cwd()}: run the "
                      "command in the course's folder (or below it) or give --repository")
    return repository


def _course(command: argparse.ArgumentParser, args, repository: Path,
            limits: GradingLimits | None = None) -> GradingCourse:
    """The course folder the command grades in (``--course-dir``), refused if it holds
    files the command did not write."""
    try:
        return GradingCourse(args.course_dir or repository / ".course-work" / "classroom",
                             limits=limits, repository=repository)
    except UnknownFiles as error:
        command.error(str(error))


def merge(command: argparse.ArgumentParser, args) -> int:
    """``merge``: the shards' course folders into one, its CSV and summary table."""
    repository = _repository(command, args)
    course = _course(command, args, repository)
    try:
        results, notes = merge_courses(course, args.shards)
    except MergeError as error:
        command.error(str(error))
    if not results:
        command.error(f"nothing graded in {', '.join(map(str, args.shards))}")
    notes = [*notes, *write_grades_csv(course)]
    out = Console()
    if out.is_terminal:
        out.print(summary(results))
    else:
        print(summary_table(results))
    for note in notes:
        print(f"note: {note}")
    missing = []
    if args.submissions:
        work = find_submissions(args.submissions.resolve(), sorted(results))
        missing = sorted(f"{learner} ({assignment})" for assignment, submissions in work.items()
                         for learner in submissions if learner not in results[assignment])
        print(f"{len(missing)} submission(s) graded by no shard"
              + (f": {', '.join(missing)}; run their shard again" if missing else ""))
    print(f"\nGradebook {course.root / 'gradebook.db'}, CSV {course.root / 'grades.csv'}, "
          f"feedback {course.root / 'feedback'}")
    return 1 if missing else 0

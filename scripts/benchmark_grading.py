"""How fast a class of each assignment is graded, three ways, on the same notebooks.

1. **stock**: ``nbgrader autograde`` as an instructor runs it out of the box: one kernel
   and one local Spark per notebook, one notebook after the other;
2. **command**: ``python -m autograder.classroom grade`` (one shared Spark Connect server,
   ``--jobs`` notebooks at once, guards on), server start-up included;
3. **floor**: the Spark work alone: in one Python process with Spark already started, the
   same learner code and the same grade cells, no kernels, no nbgrader. Like the command,
   it grades every notebook on one run's streams, so Spark's answers for them are asked
   once (:mod:`autograder.checks.answers`).

    python -m scripts.benchmark_grading --count 30 --jobs 2 [--assignment 04_transform_with_state]

With ``--beside COMMIT`` it measures another question: the command as it is and the command
as it was at ``COMMIT`` (a git worktree of it, its own ``autograder`` and ``solutions/``, the
same Python packages), grading the same class one after the other (``--older-first`` turns
the order round): is a class graded no slower than before a change? That record's question
is ``grading-beside``.

Each assignment's class is generated: its solution, its untouched release, then the
misconceptions of the learner corpus (``corpora/learners``), in turn. One table per
assignment. Numbers depend on the machine and on what else runs on it.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

import nbformat

from autograder.contract import SEED
from autograder.grading import REPOSITORY
from autograder.grading.nbgrader_setup import CODE_STUB
from autograder.grading.processes import GradingLimits
from autograder.toolkit.warm_python import worker_python
from corpora.learners import CHAPTERS, learners
from corpora.submissions import release_notebook, solution_notebook
from scripts.records import machine, write_record

ROOT = Path(__file__).resolve().parent.parent


STOCK_CONFIG = """\
c = get_config()
c.CourseDirectory.root = {root!r}
c.CourseDirectory.source_directory = "source"
c.CourseDirectory.release_directory = "release"
c.CourseDirectory.db_url = "sqlite:///{root}/gradebook.db"
c.Execute.timeout = {cell_timeout}
c.ClearSolutions.code_stub = {{"python": {code_stub!r}}}
"""

#: assignment -> the seconds of the command's solution run (paid once per class).
SOLUTION_RUN: dict[str, float] = {}
#: (assignment, checkout folder's name) -> kind of notebook -> its mean seconds, in the
#: command's last run there.
PER_KIND: dict[tuple[str, str], dict[str, float]] = {}


def make_class(assignment: str, folder: Path, count: int) -> dict[str, Path]:
    """``count`` submissions in nbgrader's layout: the solution, the untouched release,
    then each misconception of the corpus, in turn."""
    wrong = [learner for learner in learners(assignment) if learner.kind == "misconception"]
    kinds = [("solution", None), ("untouched", None)] + [(w.name, w) for w in wrong]
    class_ = {}
    for i in range(count):
        kind, learner = kinds[i % len(kinds)]
        target = folder / f"learner{i:02d}_{kind}" / assignment / f"{assignment}.ipynb"
        target.parent.mkdir(parents=True)
        if learner:
            nbformat.write(learner.notebook(assignment), target)
        else:
            shutil.copy(solution_notebook(assignment) if kind == "solution"
                        else release_notebook(assignment), target)
        class_[target.parent.parent.name] = target
    return class_


def env(repository: Path = ROOT) -> dict[str, str]:
    # Spark's Python as the course's session sets it (autograder.toolkit.warm_python), for stock
    # nbgrader's kernels as for the command's: what is compared is how nbgrader is run.
    run_env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": worker_python()}
    run_env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{run_env['PATH']}"
    run_env.pop("SPARK_REMOTE", None)
    run_env.pop("AUTOGRADER_SPARK_REMOTE", None)
    if repository != ROOT:  # another commit's autograder, before the installed one
        run_env["PYTHONPATH"] = str(repository)
        run_env.pop("PYSPARK_PYTHON")  # that commit's own Spark Python, as its course sets it
    return run_env


def nbgrader(args, root):
    subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=root, env=env(),
                   check=True, capture_output=True)


def stock(assignment: str, submissions: Path, work: Path) -> float:
    root = work / "stock"
    shutil.copytree(REPOSITORY / "solutions" / assignment, root / "source" / assignment)
    config = STOCK_CONFIG.format(root=str(root), cell_timeout=GradingLimits().cell_timeout,
                                 code_stub=CODE_STUB)  # the same cell limit as the command's
    (root / "nbgrader_config.py").write_text(config)
    nbgrader(["generate_assignment", assignment, "--force"], root)
    shutil.copytree(submissions, root / "submitted")
    start = time.monotonic()
    nbgrader(["autograde", assignment], root)
    return time.monotonic() - start


def command(assignment: str, submissions: Path, work: Path, jobs: int,
            spark: str = "server", repository: Path = ROOT) -> float:
    course_dir = work / f"command{jobs}-{spark}-{repository.name}"
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "autograder.classroom", "grade", assignment,
                           "--submissions", str(submissions), "--course-dir", str(course_dir),
                           "--jobs", str(jobs), "--spark", spark, "--force", "--no-feedback"],
                          env=env(repository), check=True, capture_output=True, text=True,
                          cwd=repository)
    seconds = time.monotonic() - start
    for line in done.stderr.splitlines():
        if line.startswith(assignment):  # the seed, and how long the solution run took
            print(f"  {line}")
            found = re.search(r"ran clean in (\d+) s", line)
            if found:
                SOLUTION_RUN[assignment] = float(found.group(1))
    ledgers = sorted((course_dir / "grading" / assignment).glob("learner*.json"))
    by_kind: dict[str, list[tuple[float, ...]]] = {}
    for ledger in ledgers:
        by_kind.setdefault(ledger.stem.split("_", 1)[1], []).append(
            phases(assignment, course_dir, ledger))
    print(f"  {'':26} {'a notebook':>10} {'to cell 1':>10} {'cells':>6} {'after':>6}  (seconds)")
    for kind, rows in by_kind.items():
        means = [sum(column) / len(column) for column in zip(*rows)]
        print(f"  {kind:26} " + " ".join(f"{m:{w}.1f}" for m, w in zip(means, (10, 10, 6, 6))))
        PER_KIND.setdefault((assignment, repository.name), {})[kind] = means[0]
    return seconds


def phases(assignment: str, course_dir: Path, ledger: Path) -> tuple[float, float, float, float]:
    """Where one notebook's grading time went: (total, until the first cell ran, the
    cells, after the last cell), from its ledger and the cell timings nbclient records in
    the graded notebook. "Until the first cell" is nbgrader's process, the kernel's
    start and the guard's cell; "after" is saving the grades and closing the session."""
    record = json.loads(ledger.read_text())
    total = record["seconds"]
    graded = course_dir / "autograded" / ledger.stem / assignment / f"{assignment}.ipynb"
    if not graded.exists():
        return total, float("nan"), float("nan"), float("nan")
    ran = [cell.metadata["execution"] for cell in nbformat.read(graded, 4).cells
           if "iopub.execute_input" in cell.get("metadata", {}).get("execution", {})]
    first = _moment(ran[0]["iopub.execute_input"])
    last = _moment(ran[-1]["shell.execute_reply"])
    finished = ledger.stat().st_mtime  # the ledger is written once the grade is saved
    return total, first - (finished - total), last - first, finished - last


def _moment(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def floor(assignment: str, class_: dict[str, Path]) -> float:
    """Run every submission's cells in this process, on a Spark started beforehand."""
    from autograder import course_session
    from autograder.checks.feedback import fresh_seed
    course_session()  # start-up is not part of the floor
    os.environ[SEED] = str(fresh_seed())  # one run, one set of streams
    graded = nbformat.read(solution_notebook(assignment), 4)
    locked = {c.metadata["nbgrader"]["grade_id"]: c.source for c in graded.cells
              if c.get("metadata", {}).get("nbgrader", {}).get("locked")}
    start = time.monotonic()
    for notebook in class_.values():
        namespace: dict = {}
        for cell in nbformat.read(notebook, 4).cells:
            if cell.cell_type != "code":
                continue
            grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
            source = locked.get(grade_id, cell.source)
            with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(Exception):
                exec(compile(source, grade_id or "cell", "exec"), namespace)
    return time.monotonic() - start


def benchmark(assignment: str, work: Path, args) -> dict[str, float]:
    """Grade one generated class of ``assignment`` each way asked; the seconds of each."""
    class_ = make_class(assignment, work / "submitted", args.count)
    print(f"\n## {args.count} submissions of {assignment}; "
          f"load average {os.getloadavg()[0]:.1f}", flush=True)
    results = {}
    for spark in (args.spark if "command" in args.only else []):
        for jobs in args.jobs:
            name = f"command --spark {spark} --jobs {jobs}"
            results[name] = command(assignment, work / "submitted", work, jobs, spark)
            print(f"{name}: {results[name]:.0f} s", flush=True)
    if "floor" in args.only:
        results["floor"] = floor(assignment, class_)
        print(f"floor: {results['floor']:.0f} s", flush=True)
    if "stock" in args.only:
        results["stock"] = stock(assignment, work / "submitted", work)
        print(f"stock: {results['stock']:.0f} s", flush=True)
    print(f"load average after {assignment}: {os.getloadavg()[0]:.1f}")
    for name, seconds in results.items():
        print(f"  {name:34} {seconds:7.0f} s  {seconds / args.count:6.1f} s/notebook")
    commands = [v for k, v in results.items() if k.startswith("command")]
    if commands and "stock" in results:
        print(f"  speed-up over stock: {results['stock'] / min(commands):.1f}x")
        if assignment in SOLUTION_RUN:  # what each further notebook costs
            each = (min(commands) - SOLUTION_RUN[assignment]) / args.count
            print(f"  after the solution run ({SOLUTION_RUN[assignment]:.0f} s): {each:.1f} s "
                  f"a notebook, {results['stock'] / args.count / each:.1f}x stock's")
    if commands and "floor" in results:
        print(f"  command / floor: {min(commands) / results['floor']:.1f}x")
    return results


@contextlib.contextmanager
def worktree(commit: str):
    """A checkout of ``commit`` in a temporary folder (``git worktree``), removed after."""
    folder = Path(tempfile.mkdtemp(prefix="grading-beside-")) / "older"
    subprocess.run(["git", "worktree", "add", "--detach", str(folder), commit], cwd=ROOT,
                   check=True, capture_output=True)
    try:
        yield folder
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(folder)], cwd=ROOT,
                       capture_output=True)
        shutil.rmtree(folder.parent, ignore_errors=True)


def beside(args) -> None:
    """The command as it is and as it was at ``args.beside``, on the same class, one after
    the other; a record of question ``grading-beside``."""
    older = subprocess.run(["git", "rev-parse", args.beside], cwd=ROOT, check=True,
                           capture_output=True, text=True).stdout.strip()
    load, numbers = machine()["load"], {}
    with worktree(older) as repository, contextlib.ExitStack() as finally_:
        # What was measured is kept even if a later assignment fails.
        finally_.callback(lambda: numbers and write_record("grading-beside", numbers, load=load))
        for assignment in args.assignment:
            if not (repository / "solutions" / assignment).is_dir():
                print(f"\n## {assignment}: not in {older[:10]}, nothing to grade it beside",
                      flush=True)
                continue
            with tempfile.TemporaryDirectory(prefix="grading-bench-") as tmp:
                make_class(assignment, Path(tmp) / "submitted", args.count)
                print(f"\n## {args.count} submissions of {assignment}; load average "
                      f"{os.getloadavg()[0]:.1f}", flush=True)
                run = {"notebooks": args.count, "load at the start": round(os.getloadavg()[0], 2)}
                ways = [("the command", ROOT), ("the older command", repository)]
                for name, checkout in reversed(ways) if args.older_first else ways:
                    seconds = command(assignment, Path(tmp) / "submitted", Path(tmp),
                                      args.jobs[0], args.spark[0], checkout)
                    run[name] = round(seconds, 1)
                    kinds = PER_KIND.get((assignment, checkout.name), {})
                    wrong = [mean for kind, mean in kinds.items()
                             if kind not in ("solution", "untouched")]
                    run[f"{name}, a right notebook"] = round(kinds.get("solution", 0), 1) or None
                    run[f"{name}, a wrong notebook"] = \
                        round(sum(wrong) / len(wrong), 1) if wrong else None
                    print(f"{name}: {seconds:.0f} s", flush=True)
            run["older commit"] = older
            run["order"] = "older first" if args.older_first else "this one first"
            numbers[assignment] = run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--assignment", nargs="+", choices=sorted(CHAPTERS),
                        default=sorted(CHAPTERS), help="the assignments to grade (all four)")
    parser.add_argument("--count", type=int, default=30)
    parser.add_argument("--jobs", type=int, nargs="+", default=[2])
    parser.add_argument("--spark", nargs="+", default=["server"],
                        help="the command's --spark: server (a shared Connect server), local")
    parser.add_argument("--only", nargs="+", choices=["command", "floor", "stock"],
                        default=["command", "floor", "stock"],
                        help="measure only these (e.g. in separate runs on a busy machine)")
    parser.add_argument("--beside", metavar="COMMIT",
                        help="grade each class with the command as it is and as it was at "
                             "COMMIT instead (the first --jobs and --spark)")
    parser.add_argument("--older-first", action="store_true",
                        help="with --beside: grade with the older command first")
    args = parser.parse_args()
    print(f"{datetime.now():%Y-%m-%d %H:%M}, {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.1f}")
    if args.beside:
        beside(args)
        return
    summary = {}
    load, numbers = machine()["load"], {}
    for assignment in args.assignment:
        numbers[assignment] = {"notebooks": args.count,
                               "load at the start": round(os.getloadavg()[0], 2)}
        with tempfile.TemporaryDirectory(prefix="grading-bench-") as tmp:
            summary[assignment] = benchmark(assignment, Path(tmp), args)
        numbers[assignment].update({name: round(s, 1) for name, s in summary[assignment].items()})
        if assignment in SOLUTION_RUN:
            numbers[assignment]["solution run"] = SOLUTION_RUN[assignment]
    write_record("grading", numbers, load=load)
    print("\n| assignment | " + " | ".join(next(iter(summary.values()))) + " | (seconds, "
          f"{args.count} notebooks)")
    for assignment, results in summary.items():
        print(f"| {assignment} | " + " | ".join(f"{v:.0f}" for v in results.values()) + " |")


if __name__ == "__main__":
    main()

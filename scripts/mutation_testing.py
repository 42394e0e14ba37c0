"""How many wrong versions of each task's solution do the fixed cases catch?

    make mutation        (or: .venv/bin/python -m scripts.mutation_testing [--task NAME] ...)

A check's **fixed cases** (a label that says "(a fixed stream") run on every seed, so a
wrong answer they catch is caught whatever the seed draws. This script measures them with
mutation testing. For the tasks whose learner code is a plain Python function (no Spark runs
it), each task's reference solution (the cell of that ``grade_id`` in ``solutions/``) is
written into a throwaway project as a module, with a pytest test that runs the task's check
**on its fixed cases only** against Spark's recorded answers
(``tests/support/fixed_answers.json``, written by ``scripts/record_fixed_answers.py``: no
Spark runs here); mutmut changes the module one small edit at a time (a ``<`` for a
``<=``, a ``+ 1`` for a ``- 1``, a ``None`` for an argument ...) and runs the test on each
mutant. A mutant the test passes **survived**: the fixed cases cannot tell it from the
solution. It is either equivalent to the solution on every input the task allows (listed
with the reason in ``tests/mutation/equivalent.json``, under "equivalent"), or a wrong
answer that only a drawn stream may catch: a fixed case is missing (listed under "missing",
with the fixed case that kills it, until the check has it).

The script writes a record, ``benchmarks/records/mutation-<date>.json``: the commit, the
date, the machine's cores and load, the wall time, and per task the mutants, the killed,
the survivors (each with mutmut's diff, and why it is equivalent or the case it needs) and
the score (killed / mutants). It also judges every mutant in this process, as
``tests/grading/test_fixed_cases_kill_every_mutant.py`` does in CI, and records where the
two verdicts differ (they should not).

With ``--on-spark`` it measures the tasks Spark runs instead (a query, a processor, a reader
of a checkpoint: :data:`SPARK_TASKS`): the same mutants, made with mutmut's own code, each
judged in this process on the fixed cases with one Spark session (mutmut's runner would
start Spark for every mutant), Spark's answers to the cases asked once. Its record,
``benchmarks/records/mutation-on-spark-<date>.json``, also holds digests of the solution,
the fixed cases and the check it measured, so that
``tests/grading/test_mutants_on_spark_are_listed.py`` can tell when it is stale.

The functions below are shared with those tests and with ``scripts/record_fixed_answers.py``.
"""
from __future__ import annotations

import argparse
import ast
import contextlib
import datetime as dt
import functools
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from difflib import unified_diff
from pathlib import Path
from typing import Any, Callable, Iterator
from unittest import mock

ROOT = Path(__file__).resolve().parent.parent

#: Spark's answers to every question the fixed cases ask (scripts/record_fixed_answers.py).
FIXED_ANSWERS = ROOT / "tests" / "support" / "fixed_answers.json"
#: The surviving mutants: equivalent to the solution (with the reason), or wrong answers no
#: fixed case catches yet (with the case that would).
EQUIVALENT = ROOT / "tests" / "mutation" / "equivalent.json"
#: Where the records of ``make mutation`` go, one per day it ran (benchmarks: measured, dated).
RECORDS = ROOT / "benchmarks" / "records"
#: The seed the cases are drawn with. Only the fixed cases run, but one check's fixed cases
#: carry the drawn part too (chapter 5's restart outcomes: every change of the run, from one
#: Spark run), so the seed is fixed for the recorded answers to cover them.
SEED = 1
#: The module each reference solution is written into (mutmut names mutants after it).
MODULE = "reference.py"
#: A mutant that runs longer than this on one case is stopped (mutmut: "timeout").
CASE_SECONDS = 10


@dataclass(frozen=True)
class Task:
    """A task: where its solution is, and what checks it.

    ``function``: the name the solution cell defines and the check is handed (a function,
    or chapter 4's processor class). ``cells``: the solution cells written into the module,
    by grade_id, each with the top-level functions left out of it (a task that calls a
    function another task's cell defines gets that cell, without the other task's own
    function). ``on_spark``: the check runs the learner's code in Spark (a query, a
    processor, a reader of a checkpoint), so the module starts with the notebook's setup
    cell, and its mutants are judged with a Spark session (:func:`in_process`).
    """

    name: str
    assignment: str
    function: str
    check: str
    cells: tuple[tuple[str, tuple[str, ...]], ...]
    on_spark: bool = False

    @property
    def chapter(self) -> str:
        return self.check.rsplit(".", 2)[1]


def _task(assignment, grade_id, check, cells=None, function=None, on_spark=False) -> Task:
    """A task named ``<assignment>/<grade_id>``; its function is named as its cell is
    unless ``function`` says otherwise."""
    return Task(f"{assignment}/{grade_id}", assignment, function or grade_id, check,
                cells or ((grade_id, ()),), on_spark)


#: The tasks measured: every task whose learner code is a plain Python function. Chapter 3's
#: predict_metrics calls the simulate() its predict_output cell defines.
TASKS = (
    _task("01_global_limit", "predict_emitted", "autograder.chapters.global_limit.check_predicted_output"),
    _task("01_global_limit", "predict_state", "autograder.chapters.global_limit.check_predicted_state"),
    _task("02_aggregation_planning", "predict_counts",
          "autograder.chapters.aggregation_planning.check_predicted_counts"),
    _task("02_aggregation_planning", "predict_metrics",
          "autograder.chapters.aggregation_planning.check_predicted_metrics"),
    _task("03_state_store_save", "predict_output",
          "autograder.chapters.state_store_save.check_predicted_output"),
    _task("03_state_store_save", "predict_metrics",
          "autograder.chapters.state_store_save.check_predicted_metrics",
          cells=(("predict_output", ("predict_output",)), ("predict_metrics", ()))),
    _task("03_state_store_save", "smallest_delay",
          "autograder.chapters.state_store_save.check_smallest_delay"),
    _task("03_state_store_save", "update_step", "autograder.chapters.state_store_save.check_update_step"),
    _task("05_state_store", "predict_files", "autograder.chapters.state_store_files.check_predicted_files"),
    _task("05_state_store", "restart_error", "autograder.chapters.state_store_files.check_restart_outcome"),
    _task("06_stream_stream_join", "predict_buffered",
          "autograder.chapters.stream_join_checks.check_predicted_buffers"),
    _task("06_stream_stream_join", "predict_unmatched",
          "autograder.chapters.stream_join_checks.check_predicted_unmatched"),
    _task("06_stream_stream_join", "accepted", "autograder.chapters.stream_join_checks.check_accepted"),
)

#: The tasks whose learner code Spark runs, or reads what Spark wrote: queries, chapter 4's
#: processors, readers of a checkpoint. mutmut's runner would start Spark for every mutant,
#: so these are judged here only, in one process with one Spark session
#: (:func:`in_process`), on the fixed cases, Spark's answers to them asked once.
_spark_task = functools.partial(_task, on_spark=True)
SPARK_TASKS = (
    _spark_task("01_global_limit", "emitted_so_far",
                "autograder.chapters.global_limit.check_counter_reader"),
    _spark_task("01_global_limit", "first_clicks", "autograder.chapters.global_limit.check_first_clicks"),
    _spark_task("02_aggregation_planning", "aggregate_modes",
                "autograder.chapters.aggregation_planning.check_aggregate_modes"),
    _spark_task("02_aggregation_planning", "sessions",
                "autograder.chapters.aggregation_planning.check_sessions"),
    _spark_task("04_transform_with_state", "session_tracker",
                "autograder.chapters.transform_with_state.check_session_tracker", function="SessionTracker"),
    _spark_task("04_transform_with_state", "ttl_dedup",
                "autograder.chapters.transform_with_state.check_ttl_dedup", function="TtlDedup"),
    _spark_task("04_transform_with_state", "starting_counts",
                "autograder.chapters.transform_with_state.check_starting_counts", function="StartingCounts"),
    _spark_task("04_transform_with_state", "first_n",
                "autograder.chapters.transform_with_state.check_first_n", function="FirstN"),
    _spark_task("05_state_store", "counts_at", "autograder.chapters.state_store_files.check_state_reader"),
    _spark_task("05_state_store", "runs_again",
                "autograder.chapters.state_store_files.check_restart_reader"),
    _spark_task("06_stream_stream_join", "rows_per_key",
                "autograder.chapters.stream_join_checks.check_rows_per_key"),
)
TASKS_BY_NAME = {task.name: task for task in TASKS + SPARK_TASKS}


# -- the reference solution ---------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def _solution_cells(assignment: str) -> dict[str, str]:
    import nbformat

    (path,) = (ROOT / "solutions" / assignment).glob("*.ipynb")
    return {cell.metadata["nbgrader"]["grade_id"]: cell.source
            for cell in nbformat.read(path, as_version=4).cells
            if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")}


def solution_cell(assignment: str, grade_id: str) -> str:
    """The source of the solution notebook's cell ``grade_id``, whole."""
    return _solution_cells(assignment)[grade_id]


def _without_functions(source: str, names: tuple[str, ...]) -> str:
    if not names:
        return source
    lines = source.splitlines()
    for node in reversed(ast.parse(source).body):
        if isinstance(node, ast.FunctionDef) and node.name in names:
            del lines[node.lineno - 1:node.end_lineno]
    return "\n".join(lines).strip("\n")


def _setup(assignment: str) -> str:
    """The notebook's setup cell (its imports and ``spark``), without what only a reader
    needs (chapter 4 warms Spark up in the background while the learner reads)."""
    return "\n".join(line for line in solution_cell(assignment, "setup").splitlines()
                     if "warm_up_in_background" not in line and not line.lstrip().startswith("#"))


def reference_source(task: Task, cells: dict[str, str] | None = None) -> str:
    """The module a task's reference solution is written into (after its notebook's setup
    cell, for a task Spark runs: mutmut changes code inside functions only); with ``cells``
    (grade_id -> source), a learner's answer, their cells taking the solution's place."""
    parts = [_without_functions((cells or {}).get(grade_id) or solution_cell(task.assignment, grade_id),
                                drop)
             for grade_id, drop in task.cells]
    if task.on_spark:
        parts.insert(0, _setup(task.assignment))
    return "\n\n\n".join(part.strip("\n") for part in parts) + "\n"


# -- the fixed cases, judged on the recorded answers ---------------------------------------------
def check_of(task: Task):
    import importlib

    from autograder.checks.asking import CHECKS

    importlib.import_module(task.check.rsplit(".", 1)[0])
    return CHECKS[task.check]


def fixed_cases(check) -> list:
    """The check's fixed cases (their labels say "(a fixed stream")."""
    from autograder.checks.checking import FIXED

    cases = check.cases(seed=SEED, example=False, **check.options)
    return [case for case in cases if f"({FIXED}" in case.label]


@contextlib.contextmanager
def without_spark(answers_file: Path = FIXED_ANSWERS) -> Iterator[None]:
    """Inside the block the checks judge with the recorded answers and no Spark: a question
    they do not hold raises GraderFault, and the chapters' ``course_session`` gives None
    (chapter 3's smallest_delay asks its run through it, answered from the record)."""
    import autograder.chapters.aggregation_planning
    import autograder.checks.answers
    import autograder.chapters.global_limit
    import autograder.chapters.state_store_files
    import autograder.chapters.state_store_save

    import autograder.toolkit.session

    def no_spark():
        raise RuntimeError("no Spark here: the fixed cases are judged on recorded answers")

    modules = (autograder.chapters.global_limit, autograder.chapters.aggregation_planning,
               autograder.chapters.state_store_save, autograder.chapters.state_store_files)
    with contextlib.ExitStack() as stack:
        stack.enter_context(mock.patch.object(autograder.toolkit.session, "course_session", no_spark))
        for module in modules:
            stack.enter_context(mock.patch.object(module, "course_session", lambda: None))
        stack.enter_context(autograder.checks.answers.judging(answers_file))
        yield


class _TooLong(BaseException):
    """A mutant ran past :data:`CASE_SECONDS` on one case."""


@contextlib.contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    def stop(signum, frame):
        raise _TooLong()

    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield  # signals reach the main thread only: no limit elsewhere
        return
    before = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, before)


def judge_fixed_cases(task: Task, function: Callable, cases: list | None = None) -> None:
    """Ask ``function`` on the task's fixed cases and judge its answers: raises the first
    lesson (or error), returns when every fixed case agrees with Spark. Call it inside
    :func:`without_spark` (or with Spark at hand, to record answers)."""
    from autograder.checks.asking import ask_case

    check = check_of(task)
    for case in fixed_cases(check) if cases is None else cases:
        check.judge(case, ask_case(check, function, case))


def verdict(task: Task, function: Callable, cases: list | None = None, *,
            seconds: float | None = CASE_SECONDS) -> tuple[str, str]:
    """``("survived", "")``, ``("killed", the lesson and its case)``, ``("timeout", case)``
    or ``("error", what went wrong in the check)``: a mutant killed by an error the check
    raised rather than by a lesson. GraderFault (an answer not recorded) is raised.
    ``seconds``: the time limit per case (None: none, when Spark answers)."""
    from autograder.checks.asking import ask_case
    from autograder.checks.feedback import CheckFailed, GraderFault

    check = check_of(task)
    for case in fixed_cases(check) if cases is None else cases:
        try:
            with _time_limit(seconds) if seconds else contextlib.nullcontext():
                check.judge(case, ask_case(check, function, case))
        except GraderFault:
            raise
        except CheckFailed as lesson:
            return "killed", f"{case.label}: {lesson.lesson()[:300]}"
        except _TooLong:
            return "timeout", case.label
        except Exception as error:  # noqa: BLE001 - the check itself failed on this answer
            return "error", f"{case.label}: {type(error).__name__}: {str(error)[:300]}"
    return "survived", ""


# -- mutants, as mutmut makes them ----------------------------------------------------------------
@dataclass(frozen=True)
class Mutant:
    """One mutant: mutmut's name for it (``x_<function>__mutmut_<n>``), the module with the
    edit made, and the diff of the function it changes (as ``mutmut show`` prints it,
    without the two file lines)."""

    name: str
    source: str
    diff: tuple[str, ...]


@contextlib.contextmanager
def _mutmut_settings() -> Iterator[None]:
    """mutmut reads its settings from the working folder's pyproject.toml; making mutants
    needs one of them only (the lines to leave alone by pattern: none)."""
    from types import SimpleNamespace

    import mutmut.mutation.pragma_handling as pragmas

    with mock.patch.object(pragmas, "config", lambda: SimpleNamespace(do_not_mutate_patterns=[])):
        yield


def function_diff(original: str, mutated: str, path: str = MODULE) -> tuple[str, ...]:
    """The diff of one function as ``mutmut show`` prints it, without its two file lines."""
    lines = unified_diff(original.strip().split("\n"), mutated.strip().split("\n"),
                         fromfile=path, tofile=path, lineterm="")
    return tuple(lines)[2:]


def make_mutants(source: str) -> list[Mutant]:
    """Every mutant mutmut makes of ``source``, named and numbered as mutmut names them."""
    import libcst as cst
    from mutmut.mutation.file_mutation import create_mutations, deep_replace

    with _mutmut_settings():
        module, mutations, _, _ = create_mutations(MODULE, source)
    whole = module.code
    numbers: dict[int, int] = {}
    originals: dict[int, tuple[str, str]] = {}
    made = []
    for mutation in mutations:
        function = mutation.contained_by_top_level_function
        if not isinstance(function, cst.FunctionDef):
            continue  # outside a function: mutmut leaves it as it is
        numbers[id(function)] = numbers.get(id(function), 0) + 1
        if id(function) not in originals:  # its text in the module, and alone (for diffs)
            originals[id(function)] = (module.code_for_node(function), cst.Module([function]).code)
        in_module, alone = originals[id(function)]
        changed = deep_replace(function, mutation.original_node, mutation.mutated_node)
        changed_alone = cst.Module([changed]).code
        source = whole.replace(in_module, module.code_for_node(changed), 1) \
            if whole.count(in_module) == 1 else module.deep_replace(function, changed).code
        made.append(Mutant(f"x_{function.name.value}__mutmut_{numbers[id(function)]}", source,
                           function_diff(alone, changed_alone)))
    return made


def module_function(task: Task, source: str) -> Callable:
    """The task's function, from ``source`` run as a module of its own."""
    namespace: dict[str, Any] = {"__name__": "reference"}
    exec(compile(source, f"<{MODULE} of {task.name}>", "exec"), namespace)
    return namespace[task.function]


def run_mutant(task: Task, mutant_source: str, cases: list | None = None, *,
               seconds: float | None = CASE_SECONDS) -> tuple[str, str]:
    """:func:`verdict` for a mutant's module (inside :func:`without_spark`)."""
    try:
        function = module_function(task, mutant_source)
    except Exception as error:  # noqa: BLE001 - a module that does not even load is caught
        return "killed", f"the module does not load: {type(error).__name__}: {error}"
    return verdict(task, function, cases, seconds=seconds)


def listed_mutants(section: str = "equivalent", path: Path = EQUIVALENT
                   ) -> dict[str, dict[tuple[str, ...], dict]]:
    """The surviving mutants ``tests/mutation/equivalent.json`` lists in ``section``
    ("equivalent", or "missing": wrong answers no fixed case catches yet): per task, by diff."""
    listed = json.loads(path.read_text()) if path.exists() else {}
    return {task: {tuple(entry["diff"]): entry for entry in entries}
            for task, entries in listed.get(section, {}).items()}


def in_process(task: Task, progress: Callable[[str], None] = lambda line: None
               ) -> dict[str, tuple[str, str, tuple[str, ...]]]:
    """Every mutant of the task judged in this process: name -> (verdict, why, diff).

    A plain-function task is judged on the recorded answers, no Spark, each case under
    :data:`CASE_SECONDS`. A task Spark runs is judged with the course's Spark session: its
    solution first (it must pass, and Spark's answers for the cases are asked then, once for
    all the mutants); a mutant's query that never ends is stopped by the check's own limit.
    """
    cases = fixed_cases(check_of(task))
    reference = reference_source(task)
    seconds = None if task.on_spark else CASE_SECONDS
    found = {}
    with contextlib.nullcontext() if task.on_spark else without_spark():
        if task.on_spark:
            outcome, why = run_mutant(task, reference, cases, seconds=None)
            if outcome != "survived":
                raise RuntimeError(f"the solution of {task.name} fails its fixed cases: {why}")
        for mutant in make_mutants(reference):
            started = time.monotonic()
            outcome, why = run_mutant(task, mutant.source, cases, seconds=seconds)
            found[mutant.name] = (outcome, why, mutant.diff)
            progress(f"  {mutant.name}: {outcome} ({time.monotonic() - started:.1f} s)")
    return found


# -- mutmut, in a throwaway project -----------------------------------------------------------------
PYPROJECT = """\
[tool.mutmut]
source_paths = ["{module}"]
pytest_add_cli_args_test_selection = ["tests/"]
pytest_add_cli_args = ["-p", "no:cacheprovider"]
use_git_change_detection = false
"""

TEST = '''\
"""The fixed cases of {check} on the reference solution (mutmut changes it), judged on
Spark's recorded answers: no Spark runs."""
import sys

sys.path.insert(0, {root!r})

from scripts.mutation_testing import TASKS_BY_NAME, judge_fixed_cases, without_spark

import reference


def test_fixed_cases_agree_with_spark():
    with without_spark():
        judge_fixed_cases(TASKS_BY_NAME[{task!r}], reference.{function})
'''


def write_project(task: Task, folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)
    (folder / "tests").mkdir(parents=True)
    (folder / MODULE).write_text(reference_source(task))
    (folder / "pyproject.toml").write_text(PYPROJECT.format(module=MODULE))
    (folder / "tests" / "test_fixed_cases.py").write_text(
        TEST.format(check=task.check, root=str(ROOT), task=task.name, function=task.function))


#: What mutmut says of a mutant the test caught (a mutant that never ends is caught too).
DETECTED = ("killed", "timeout")


def run_mutmut(task: Task, folder: Path, children: int) -> dict:
    """mutmut on one task's project: its statuses, and the diff of every survivor."""
    write_project(task, folder)
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    mutmut = [sys.executable, "-c", "from mutmut.__main__ import cli; cli()"]
    started = time.monotonic()
    run = subprocess.run(mutmut + ["run", "--max-children", str(children)], cwd=folder, env=env,
                         capture_output=True, text=True)
    seconds = time.monotonic() - started
    meta = folder / "mutants" / f"{MODULE}.meta"
    if run.returncode != 0 or not meta.exists():
        raise RuntimeError(f"mutmut failed on {task.name} ({run.returncode}):\n"
                           f"{run.stdout[-3000:]}\n{run.stderr[-3000:]}")
    from mutmut.stats import status_by_exit_code

    codes = json.loads(meta.read_text())["exit_code_by_key"]
    statuses = {name.rsplit(".", 1)[-1]: status_by_exit_code[code] for name, code in codes.items()}
    diffs = {}
    for name, status in statuses.items():
        if status not in DETECTED:
            shown = subprocess.run(mutmut + ["show", f"reference.{name}"], cwd=folder, env=env,
                                   capture_output=True, text=True, check=True).stdout
            diffs[name] = tuple(line for line in shown.splitlines()
                                if not line.startswith("# "))[2:]
    return {"statuses": statuses, "diffs": diffs, "seconds": round(seconds, 1)}


def _machine() -> dict:
    return {"cores": os.cpu_count(), "load": [round(x, 2) for x in os.getloadavg()]}


def _commit() -> str:
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                               capture_output=True, text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + (" (with uncommitted changes)" if dirty else "")


def measure(tasks: list[Task], children: int, keep: Path | None) -> dict:
    equivalent, missing = listed_mutants("equivalent"), listed_mutants("missing")
    work = keep or Path(tempfile.mkdtemp(prefix="mutation-"))
    record: dict[str, Any] = {"commit": _commit(), "date": dt.datetime.now().isoformat(timespec="seconds"),
                              "mutmut": _version("mutmut"), **_machine(),
                              "children": children, "tasks": {}}
    started = time.monotonic()
    for task in tasks:
        result = run_mutmut(task, work / task.name, children)
        statuses = result["statuses"]
        listed = equivalent.get(task.name, {})
        here = in_process(task)
        survivors = []
        for name, status in sorted(statuses.items(), key=lambda item: _number(item[0])):
            if status in DETECTED:
                continue
            diff = result["diffs"][name]
            entry = {"mutant": name, "status": status, "diff": list(diff)}
            if diff in listed:
                entry["equivalent"] = listed[diff]["why"]
            elif diff in missing.get(task.name, {}):
                entry["missing case"] = missing[task.name][diff]["case"]
            survivors.append(entry)
        killed = sum(status in DETECTED for status in statuses.values())
        # Every mutant made both ways, with the same verdict (and the same diff if it survived).
        disagree = sorted(set(here) ^ set(statuses)) + sorted(
            name for name, status in statuses.items() if name in here and (
                (status not in DETECTED) != (here[name][0] == "survived")
                or (status not in DETECTED and here[name][2] != result["diffs"][name])))
        errors = sorted(name for name, (outcome, _, _) in here.items() if outcome == "error")
        equivalents = sum("equivalent" in s for s in survivors)
        record["tasks"][task.name] = {
            "check": task.check, "function": task.function,
            "cells": [grade_id for grade_id, _ in task.cells],
            "fixed cases": len(fixed_cases(check_of(task))),
            "mutants": len(statuses), "killed": killed, "survived": len(survivors),
            "equivalent": equivalents, "missing cases": len(survivors) - equivalents,
            "score": round(killed / len(statuses), 3) if statuses else None,
            "score without the equivalent": round(killed / (len(statuses) - equivalents), 3)
            if len(statuses) > equivalents else None,
            "mutmut seconds": result["seconds"],
            "survivors": survivors,
            "killed by an error of the check, not a lesson": errors,
            "in-process verdict differs": disagree,
        }
        print(f"{task.name}: {killed}/{len(statuses)} killed, {len(survivors)} survived "
              f"({equivalents} equivalent), mutmut {result['seconds']} s", flush=True)
    record["seconds"] = round(time.monotonic() - started, 1)
    record["load after"] = _machine()["load"]
    if keep is None:
        shutil.rmtree(work, ignore_errors=True)
    return record


def what_was_mutated(task: Task) -> dict[str, str]:
    """Digests of what a task's mutants and their verdicts depend on: the reference's module,
    the fixed cases, and the check's module (its asking and judging). A record whose digests
    differ from the course's measured another solution, other cases or another check."""
    import hashlib
    import importlib

    from autograder.checks.asking import cases_digest

    def digest(text: str) -> str:
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    module = importlib.import_module(task.check.rsplit(".", 1)[0])
    return {"reference": digest(reference_source(task)),
            "fixed cases": cases_digest(fixed_cases(check_of(task))),
            "check module": digest(Path(module.__file__).read_text())}


def _quiet_pyspark() -> None:
    """PySpark logs every analysis error a mutant's query raises (its DataFrame query
    context) on stderr; the check turns each into a lesson, which is what counts here."""
    from pyspark.logger import PySparkLogger

    PySparkLogger.getLogger("DataFrameQueryContextLogger").disabled = True


def measure_on_spark(tasks: list[Task]) -> dict:
    """The record of the tasks Spark runs, each mutant judged in this process
    (:func:`in_process`), in the form of :func:`measure`'s record."""
    record: dict[str, Any] = {"question": "mutation-on-spark", "script": "scripts/mutation_testing.py",
                              "commit": _commit(),
                              "date": dt.datetime.now().isoformat(timespec="seconds"),
                              "mutmut": _version("mutmut"), **_machine(), "tasks": {}}
    _quiet_pyspark()
    started = time.monotonic()
    for task in tasks:
        task_started = time.monotonic()
        found = in_process(task, progress=lambda line: print(line, flush=True))
        survivors = [{"mutant": name, "status": outcome, "diff": list(diff)}
                     for name, (outcome, _, diff) in sorted(found.items(),
                                                            key=lambda item: _number(item[0]))
                     if outcome == "survived"]
        killed = len(found) - len(survivors)
        measured = as_listed(task.name, {
            "check": task.check, "function": task.function,
            "cells": ["setup"] + [grade_id for grade_id, _ in task.cells],
            "fixed cases": len(fixed_cases(check_of(task))),
            "digests": what_was_mutated(task),
            "mutants": len(found), "killed": killed, "survived": len(survivors),
            "score": round(killed / len(found), 3) if found else None,
            "seconds": round(time.monotonic() - task_started, 1), "survivors": survivors,
            "killed by an error of the check, not a lesson": sorted(
                name for name, (outcome, _, _) in found.items() if outcome == "error"),
            "killed by a timeout": sorted(
                name for name, (outcome, _, _) in found.items() if outcome == "timeout"),
        })
        measured["missing cases"] = len(survivors) - measured["equivalent"]
        record["tasks"][task.name] = measured
        print(f"{task.name}: {killed}/{len(found)} killed, {len(survivors)} survived "
              f"({measured['equivalent']} equivalent), {measured['seconds']} s", flush=True)
    record["seconds"] = round(time.monotonic() - started, 1)
    record["load after"] = _machine()["load"]
    return record


def _number(name: str) -> tuple[str, int]:
    function, _, number = name.rpartition("_")
    return function, int(number) if number.isdigit() else 0


def _version(package: str) -> str:
    from importlib.metadata import version

    return version(package)


def newest_record() -> Path:
    return max(RECORDS.glob("mutation-*.json"), key=lambda path: path.name)


def newest_per_task(records: list[tuple[Path, dict]]) -> dict[str, tuple[Path, dict]]:
    """Each task Spark runs, with the newest of ``records`` (oldest first) that measured it
    (a run may measure a few tasks only): task name -> (record's path, record)."""
    found: dict[str, tuple[Path, dict]] = {}
    for path, record in records:
        for name in record["tasks"]:
            found[name] = (path, record)
    return {task.name: found[task.name] for task in SPARK_TASKS if task.name in found}


def newest_on_spark(folder: Path = RECORDS) -> dict[str, tuple[Path, dict]]:
    """:func:`newest_per_task` of the records of ``--on-spark`` in ``folder``."""
    records = [(path, json.loads(path.read_text()))
               for path in folder.glob("mutation-on-spark-*.json")]
    return newest_per_task(sorted(records, key=lambda item: item[1]["date"]))


def as_listed(name: str, measured: dict) -> dict:
    """A task's measurement with its survivors named as ``tests/mutation/equivalent.json``
    names them now (equivalent, or a missing case): the record keeps what survived, the
    list why."""
    equivalent, missing = listed_mutants("equivalent"), listed_mutants("missing")
    survivors = []
    for entry in measured["survivors"]:
        entry = {key: value for key, value in entry.items()
                 if key not in ("equivalent", "missing case")}
        diff = tuple(entry["diff"])
        if diff in equivalent.get(name, {}):
            entry["equivalent"] = equivalent[name][diff]["why"]
        elif diff in missing.get(name, {}):
            entry["missing case"] = missing[name][diff]["case"]
        survivors.append(entry)
    return {**measured, "survivors": survivors,
            "equivalent": sum("equivalent" in entry for entry in survivors)}


def table(record: dict) -> str:
    """The record as docs/grading-quality.md shows it: one row per task."""
    rows = ["| task | mutants | killed | equivalent | missing cases |",
            "| --- | --- | --- | --- | --- |"]
    for name, task in record["tasks"].items():
        missing = [s for s in task["survivors"] if "equivalent" not in s]
        cases = sorted({s.get("missing case", "not listed") for s in missing})
        what = f"{len(missing)}: " + "; ".join(
            f"`{case}` ({', '.join(s['mutant'] for s in missing if s.get('missing case', 'not listed') == case)})"
            for case in cases) if missing else "0"
        rows.append(f"| {name} | {task['mutants']} | {task['killed']} | {task['equivalent']} | {what} |")
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--task", action="append", choices=sorted(TASKS_BY_NAME),
                        help="measure this task only (may be given again)")
    parser.add_argument("--on-spark", action="store_true",
                        help="the tasks Spark runs (judged here, with a Spark session), "
                             "not the plain-function ones (mutmut)")
    parser.add_argument("--children", type=int, default=os.cpu_count() or 2,
                        help="mutants mutmut runs at once (default: the cores)")
    parser.add_argument("--keep", type=Path, help="build the projects here and keep them")
    parser.add_argument("--output", type=Path,
                        help="the record (default benchmarks/records/mutation-<date>.json)")
    parser.add_argument("--table", action="store_true",
                        help="print the newest record as docs/grading-quality.md's table, run nothing")
    args = parser.parse_args()
    if args.table:
        print(table(json.loads(newest_record().read_text())))
        return
    kind = SPARK_TASKS if args.on_spark else TASKS
    tasks = [TASKS_BY_NAME[name] for name in args.task if TASKS_BY_NAME[name] in kind] \
        if args.task else list(kind)
    if not tasks:
        parser.error("no task of that kind: --on-spark measures " +
                     ", ".join(task.name for task in SPARK_TASKS))
    if args.on_spark:
        record = measure_on_spark(tasks)
        name = f"mutation-on-spark-{dt.datetime.now():%Y-%m-%d-%H%M}.json"
    else:
        record = measure(tasks, args.children, args.keep)
        name = f"mutation-{dt.date.today().isoformat()}.json"
    output = args.output or RECORDS / name
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n")
    shown = output.relative_to(ROOT) if output.is_relative_to(ROOT) else output
    print(f"{record['seconds']} s; record written to {shown}")


if __name__ == "__main__":
    main()

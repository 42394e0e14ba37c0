"""How long a learner waits for each self-check, with the session already up.

    .venv/bin/python -m scripts.benchmark_self_check               # every chapter
    .venv/bin/python -m scripts.benchmark_self_check --only 01_global_limit

A learner runs the set-up cell once, then a task's self-check again and again. This script
runs each exercise notebook twice in a fresh kernel, top to bottom, as a learner would:
its **release** (every task untouched: each self-check should answer with the one-line
"not done yet" hint at once) and the release **solved** (each solution cell as the
instructor wrote it, and still only the self-checks a learner has, on the worked example:
every one passes). The solved run then checks every task a second time, at its end, as a
learner who checks again would. nbclient records when each cell started and finished; the
table gives, per task, the seconds of its self-check cell in each run, and the set-up
cell's (Spark's start) for reference.

A learner reads a task before running its check: ``--reading S`` (20 by default) waits S
seconds after the set-up cell, in the kernel, as that reading does (what chapter 4's set-up
starts in the background runs meanwhile); ``--reading 0`` runs every cell back to back.

Goals: the unfinished hint within 1 s; a passing check within 1 s
when Spark's answer for the worked example is known beforehand, within 5 s when the check
must run the learner's own query.
"""
from __future__ import annotations

import argparse
import os
from datetime import datetime
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from corpora.submissions import release_notebook, solved_release
from scripts.records import write_record

ROOT = Path(__file__).resolve().parent.parent


def cell_seconds(cell) -> float:
    timing = cell.metadata.get("execution", {})
    started = timing.get("iopub.execute_input")
    finished = timing.get("shell.execute_reply")
    if not (started and finished):
        return float("nan")
    parse = lambda stamp: datetime.fromisoformat(stamp.replace("Z", "+00:00"))  # noqa: E731
    return (parse(finished) - parse(started)).total_seconds()


def with_checks_again(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The notebook with a copy of each self-check cell added at its end."""
    again = [nbformat.v4.new_code_cell(cell.source, metadata={"again": cell.metadata["nbgrader"]["grade_id"]})
             for cell in notebook.cells
             if cell.metadata.get("nbgrader", {}).get("grade")
             and not cell.metadata["nbgrader"].get("solution")]
    notebook.cells.extend(again)
    return notebook


def with_reading(notebook: nbformat.NotebookNode, seconds: float) -> nbformat.NotebookNode:
    """The notebook with a cell that waits ``seconds`` after its set-up cell."""
    if seconds > 0:
        (setup,) = [number for number, cell in enumerate(notebook.cells)
                    if cell.metadata.get("nbgrader", {}).get("grade_id") == "setup"]
        notebook.cells.insert(setup + 1, nbformat.v4.new_code_cell(
            f"import time\ntime.sleep({seconds})  # the learner reads the first task"))
    return notebook


def timed_run(notebook: nbformat.NotebookNode, path: Path) -> dict[str, tuple[float, bool]]:
    """grade_id -> (seconds, raised?) for the set-up cell and every self-check cell (a
    repeated check as ``<grade_id> again``), the notebook run in ``path``'s folder."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    os.environ.update(env)
    NotebookClient(notebook, timeout=600, allow_errors=True, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    times = {}
    for cell in notebook.cells:
        grading = cell.metadata.get("nbgrader", {})
        grade_id = grading.get("grade_id", "")
        if cell.metadata.get("again"):
            grade_id = f"{cell.metadata['again']} again"
        if grade_id.endswith(" again") or grade_id == "setup" or (grading.get("grade") and not grading.get("solution")):
            raised = any(out.get("output_type") == "error" for out in cell.get("outputs", []))
            times[grade_id] = (cell_seconds(cell), raised)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", default=sorted(p.name for p in (ROOT / "solutions").iterdir()
                                                            if p.is_dir()))
    parser.add_argument("--reading", type=float, default=20.0, metavar="S",
                        help="seconds the learner reads after the set-up cell (default 20)")
    args = parser.parse_args()
    load = os.getloadavg()
    numbers: dict = {"reading": args.reading}
    print(f"{datetime.now():%Y-%m-%d %H:%M}, {os.cpu_count()} cores, "
          f"load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}, {args.reading:g} s of reading "
          "after the set-up cell")
    print()
    print("| chapter | cell | untouched (hint) s | solved (passes) s | solved, checked again s |")
    print("|---|---|---:|---:|---:|")
    for assignment in args.only:
        path = release_notebook(assignment)
        release = timed_run(with_reading(nbformat.read(path, as_version=4), args.reading), path)
        solution = timed_run(with_reading(with_checks_again(solved_release(assignment)),
                                          args.reading), path)
        for grade_id, (seconds, raised) in solution.items():
            if grade_id.endswith(" again"):
                continue
            hint, hinted = release.get(grade_id, (float("nan"), False))
            hint_text = f"{hint:.2f}" + ("" if hinted or grade_id == "setup" else " (no hint?)")
            again = solution.get(f"{grade_id} again")
            again_text = "" if again is None else f"{again[0]:.2f}" + (" (failed!)" if again[1] else "")
            passed_text = f"{seconds:.2f}" + (" (failed!)" if raised and grade_id != "setup" else "")
            print(f"| {assignment} | {grade_id} | {hint_text} | {passed_text} | {again_text} |",
                  flush=True)
            numbers.setdefault(assignment, {})[grade_id] = {
                "untouched": round(hint, 2), "solved": round(seconds, 2),
                "again": None if again is None else round(again[0], 2),
                "failed": bool(raised and grade_id != "setup") or bool(again and again[1])}
    write_record("self-check", numbers, load=list(load))


if __name__ == "__main__":
    main()

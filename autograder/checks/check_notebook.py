"""Where every task of an exercise notebook stands: ``python -m autograder.checks.check_notebook``.

nbgrader's *Validate* button lists the checks that failed and nothing else. This command
runs a notebook from top to bottom the same way (a fresh kernel, every cell, on after an
error) and then says, for **every** task, one of:

* ``✔ done``: its check passed; the points it is worth;
* ``· not started``: its function still raises the released ``NotImplementedError``;
* ``✘ not right yet``: its check failed, with the lesson the check gave.

It changes nothing: the notebook on disk is read, never written. ``make check`` runs it on
every exercise notebook, ``make check NOTEBOOK=exercises/01_global_limit/01_global_limit.ipynb``
on one.
"""
from __future__ import annotations

import argparse
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from ..contract import CELL_TIMEOUT

#: Colour codes IPython puts in tracebacks; the summary is plain text.
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


@dataclass
class TaskState:
    """What the run of one task's check cell showed."""

    title: str
    points: float
    state: str          # "done", "not started" or "not right yet"
    says: str           # the check's own words: its ✔ line, the hint or the lesson

    @property
    def mark(self) -> str:
        return {"done": "✔", "not started": "·"}.get(self.state, "✘")


def task_states(notebook: dict) -> list[TaskState]:
    """Every graded check cell of an *executed* notebook, with the task it belongs to."""
    states, title = [], "the notebook"
    for cell in notebook.get("cells", []):
        grading = cell.get("metadata", {}).get("nbgrader", {})
        source = "".join(cell.get("source", ""))
        if cell.get("cell_type") == "markdown":
            heading = next((line.lstrip("#").strip() for line in source.splitlines()
                            if line.startswith("#")), None)
            title = heading or title
            continue
        if not grading.get("grade") or grading.get("solution"):
            continue
        states.append(_state_of(cell, title, float(grading.get("points", 0) or 0)))
    return states


def _state_of(cell: dict, title: str, points: float) -> TaskState:
    errors = [out for out in cell.get("outputs", []) if out.get("output_type") == "error"]
    printed = "".join("".join(out.get("text", "")) for out in cell.get("outputs", [])
                      if out.get("output_type") == "stream")
    if not errors:
        return TaskState(title, points, "done", printed.strip())
    error = errors[-1]
    shown = _ANSI.sub("", "\n".join(error.get("traceback", [])))
    if error.get("ename") == "TaskNotDone":
        return TaskState(title, points, "not started", shown.strip() or error.get("evalue", ""))
    says = shown.strip() or f"{error.get('ename')}: {error.get('evalue')}"
    if error.get("ename") not in ("CheckFailed",) and "Traceback" in says:
        # An error outside the checks (a name never defined, a cell that did not run):
        # its last line says what happened.
        says = f"{error.get('ename')}: {error.get('evalue')}"
    return TaskState(title, points, "not right yet", says)


def report(states: list[TaskState], notebook: Path, seconds: float) -> str:
    """The summary a learner reads: one block per task, then the points."""
    lines = [f"{notebook} ({seconds:.0f} s)", ""]
    for task in states:
        worth = "" if "points" in task.title else f" ({task.points:g} points)"
        lines.append(f"{task.mark} {task.title}: {task.state}{worth}")
        if task.state != "done" and task.says:
            said = task.says.splitlines()
            said[0] = said[0].removeprefix("✘ ")   # the task's line carries the mark
            lines += ["    " + line for line in said]
    earned = sum(task.points for task in states if task.state == "done")
    total = sum(task.points for task in states)
    lines += ["", f"{earned:g} of {total:g} points"]
    return "\n".join(lines)


def check(path: Path, *, cell_timeout: int = CELL_TIMEOUT) -> str:
    """Run the notebook at ``path`` in a fresh kernel and return the summary."""
    import nbformat
    from nbclient import NotebookClient

    try:
        notebook = nbformat.read(path, as_version=4)
    except Exception as error:  # noqa: BLE001 - a notebook that cannot be read: say so
        raise SystemExit(f"{path}: not a notebook that can be read ({error})") from None
    started = time.monotonic()
    client = NotebookClient(notebook, timeout=cell_timeout, allow_errors=True,
                            kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent.resolve())}})
    client.execute()
    return report(task_states(notebook), path, time.monotonic() - started)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m autograder.checks.check_notebook",
        description="Run exercise notebooks and say where every task stands.")
    parser.add_argument("notebooks", nargs="+", type=Path, help="exercise notebooks (.ipynb)")
    parser.add_argument("--cell-timeout", type=int, default=CELL_TIMEOUT,
                        help=f"seconds one cell may run (default {CELL_TIMEOUT}, as when graded)")
    args = parser.parse_args(argv)
    for number, path in enumerate(args.notebooks):
        if number:
            print()
        if not path.is_file():
            print(f"{path}: no such notebook", file=sys.stderr)
            return 2
        print(check(path, cell_timeout=args.cell_timeout), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""After a notebook ran: which tasks a cheat touched, which cells ran out of time.

The guards (:mod:`autograder.grading.guards`) report what they saw: the flags of the scan
before running, the events the kernel's guard logged while running. This module turns them
into the verdict: the flags an instructor reads, and the grade cells that score zero
because they ran after (or during) a cheat.
"""
from __future__ import annotations

from pathlib import Path

from .nbgrader_setup import CELL_TIMEOUT_ERROR


def cheats(nb, static_flags: list, events: list[dict], grade_ids: list[str], *,
           ran: bool) -> tuple[list[str], set[str]]:
    """(flags, grade cells that score zero) for a submission.

    ``static_flags`` are the scan's findings (each with the ``cell`` index it is in),
    ``events`` the kernel guard's log, ``ran`` whether the notebook ran to its end (a
    notebook that did, but whose guard never started, is flagged too).
    """
    flags = [f"cell {flag.cell}: {flag.what}" for flag in static_flags]
    affected: set[str] = set()
    for flag in static_flags:
        affected |= grade_cells_after(nb, flag.cell, grade_ids)
    runtime_flags, runtime_affected = runtime_cheats(events, grade_ids)
    flags += runtime_flags
    affected |= runtime_affected
    if ran and not any(event.get("event") == "start" for event in events):
        flags.append("the grading guard never ran")
        affected |= set(grade_ids)
    return flags, affected


def grade_cells_after(nb, index: int, grade_ids: list[str]) -> set[str]:
    """Grade cells a learner's cell at ``index`` runs before (and missing ones)."""
    present = {}
    for position, cell in enumerate(nb.cells):
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if grade_id in grade_ids and grade_id not in present:
            present[grade_id] = position
    return {g for g in grade_ids if present.get(g, len(nb.cells)) > index}


def runtime_cheats(events: list[dict], grade_ids: list[str]) -> tuple[list[str], set[str]]:
    """Flags for what the kernel's guard refused or repaired, and the grade cells from the
    one it happened in (or the one after the last cell that ended cleanly) onwards."""
    flags, affected = [], set()
    last_end = None
    for event in events:
        kind, cell = event.get("event"), event.get("cell")
        if kind == "end":
            last_end = cell
        elif kind in ("tamper", "denied", "garbled", "borrowed"):
            where = cell or (f"after {last_end}" if last_end else "before the first grade cell")
            flags.append(f"{where}: {kind} {event.get('what', '')}".rstrip())
            if cell in grade_ids:
                first = grade_ids.index(cell)
            elif last_end in grade_ids:
                first = grade_ids.index(last_end) + 1
            else:
                first = 0
            affected |= set(grade_ids[first:])
    return flags, affected


def without_duplicate_ids(nb):
    """A learner who copies or splits a cell gives two cells the same ``grade_id``; nbgrader
    then refuses the whole notebook. The first keeps its identity, the copies become plain
    cells (nbgrader puts the locked cell's source back into the first)."""
    # Not nbgrader's DeduplicateIds: 0.9.6 leaves the copies ``nbgrader: {}``, which its own
    # schema check refuses as old metadata, failing the notebook (jupyter/nbgrader#1083).
    seen = set()
    for cell in nb.cells:
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if grade_id in seen:
            del cell.metadata["nbgrader"]
        elif grade_id:
            seen.add(grade_id)
    return nb


def cells_out_of_time(notebook: Path) -> list[str]:
    """The cells of a graded notebook that grading stopped at the cell time limit, named by
    their nbgrader id (``test_predict_emitted``) or, for a learner's own cell, position."""
    import nbformat
    try:
        nb = nbformat.read(notebook, as_version=4)
    except Exception:  # noqa: BLE001 - nothing to say about a notebook that is not one
        return []
    stopped = []
    for index, cell in enumerate(nb.cells):
        if any(output.get("output_type") == "error" and output.get("ename") == CELL_TIMEOUT_ERROR
               for output in cell.get("outputs", [])):
            grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
            stopped.append(grade_id or f"cell {index}")
    return stopped

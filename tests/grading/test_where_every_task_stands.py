"""A learner reads, where they work, how to see every task's state.

nbgrader's *Validate* button runs the whole notebook again and lists only the checks that
failed; ``make check NOTEBOOK=...`` lists every task as done, not started or not right
yet. Each exercise notebook's opening cell (what a learner reads first, in the release
made from solutions/) says so, with the command for that very notebook.
"""
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "exercises").glob("*/*.ipynb"))


def test_there_are_exercise_notebooks():
    assert NOTEBOOKS


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda path: path.stem)
def test_the_opening_cell_gives_the_command_that_shows_every_task(notebook):
    opening = nbformat.read(notebook, as_version=4).cells[0]
    assert opening.cell_type == "markdown"
    text = " ".join(opening.source.split())
    command = f"make check NOTEBOOK={notebook.relative_to(ROOT).as_posix()}"
    assert command in text, f"{notebook.name}: no `{command}` in its opening cell"
    assert "every task" in text or "each task" in text, text[-400:]

"""`python -m autograder.checks.check_notebook`: every task's state, not only the failures.

Scenario: a learner's chapter 1 notebook in which task 1 is right, task 2 untouched, task 3
wrong (it always answers 0) and task 4 right. The summary names all four tasks, each with
its state; the wrong one carries the check's lesson, without a traceback of the course's
files; the points add up to those of the two right tasks.
"""
import json
import subprocess
import sys

import nbformat
import pytest

from autograder.checks.check_notebook import main
from corpora.submissions import release_notebook, write_submission

pytestmark = pytest.mark.slow

ASSIGNMENT = "01_global_limit"


def release_source(grade_id: str) -> str:
    notebook = nbformat.read(release_notebook(ASSIGNMENT), as_version=4)
    (cell,) = [c for c in notebook.cells
               if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id]
    return cell.source


def test_a_notebook_half_done_shows_every_task_with_its_state(tmp_path):
    notebook = write_submission(ASSIGNMENT, {
        "predict_state": release_source("predict_state"),
        "emitted_so_far": "def emitted_so_far(spark, checkpoint):\n    return 0\n",
    }, tmp_path / "learner" / f"{ASSIGNMENT}.ipynb")
    before = notebook.read_bytes()

    shown = subprocess.run([sys.executable, "-m", "autograder.checks.check_notebook", str(notebook)],
                           capture_output=True, text=True, timeout=600)

    assert shown.returncode == 0, shown.stderr[-2000:]
    lines = shown.stdout.splitlines()
    task_lines = [line for line in lines if line[:1] and line[0] in "✔·✘"]
    assert [line.split(":")[0] for line in task_lines] == [
        "✔ Task 1 — what each micro-batch emits (2 points)",
        "· Task 2 — the state and its metrics (3 points)",
        "✘ Task 3 — read the counter, even after a restart (2 points)",
        "✔ Task 4 — the first clicks ever (3 points)",
    ], shown.stdout
    assert task_lines[0].endswith(": done")
    assert task_lines[1].endswith(": not started")
    assert task_lines[2].endswith(": not right yet")
    text = shown.stdout
    assert ("    task not done yet: replace `raise NotImplementedError()` in predict_state"
            " with your code") in lines
    assert "expected:" in text and "got:      0" in text             # task 3's lesson
    assert "revisit:" in text
    assert "autograder/" not in text and "Traceback" not in text      # no course traceback
    assert lines[-1] == "5 of 10 points"
    assert notebook.read_bytes() == before                           # nothing written


def test_a_file_that_is_not_a_notebook_gets_a_clear_message(tmp_path, capsys):
    broken = tmp_path / "broken.ipynb"
    broken.write_text(json.dumps({"cells": "not a list"})[:20])
    with pytest.raises(SystemExit) as stopped:
        main([str(broken)])
    assert "not a notebook that can be read" in str(stopped.value)
    assert main([str(tmp_path / "missing.ipynb")]) == 2
    assert "no such notebook" in capsys.readouterr().err

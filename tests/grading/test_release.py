"""exercises/ is exactly what nbgrader makes of solutions/ today.

Learners open exercises/; instructors edit solutions/. If someone edits a solution
notebook and forgets `make release`, learners would get a stale notebook: this test
regenerates every release in a scratch course and compares it, cell by cell, with the
committed one.
"""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
ASSIGNMENTS = sorted(p.name for p in (ROOT / "solutions").iterdir() if p.is_dir())


def cells_of(path: Path) -> list[tuple]:
    notebook = nbformat.read(path, as_version=4)
    return [(cell.cell_type, cell.source, cell.metadata.get("nbgrader"))
            for cell in notebook.cells]


@pytest.fixture(scope="module")
def fresh_releases(tmp_path_factory) -> Path:
    course = tmp_path_factory.mktemp("release")
    shutil.copytree(ROOT / "solutions", course / "solutions")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    for assignment in ASSIGNMENTS:
        subprocess.run(
            [sys.executable, "-m", "nbgrader", "generate_assignment", assignment, "--force",
             f"--CourseDirectory.root={course}", "--CourseDirectory.source_directory=solutions",
             "--CourseDirectory.release_directory=exercises",
             f"--CourseDirectory.db_url=sqlite:///{course}/gradebook.db"],
            cwd=course, env=env, check=True, capture_output=True)
    return course / "exercises"


def test_every_assignment_has_a_release():
    assert ASSIGNMENTS, "no assignments in solutions/"
    for assignment in ASSIGNMENTS:
        assert list((ROOT / "exercises" / assignment).glob("*.ipynb")), (
            f"exercises/{assignment} is missing: run `make release`")


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_the_committed_release_is_up_to_date(assignment, fresh_releases):
    for fresh in (fresh_releases / assignment).glob("*.ipynb"):
        committed = ROOT / "exercises" / assignment / fresh.name
        assert committed.exists(), f"{committed} is missing: run `make release`"
        assert cells_of(committed) == cells_of(fresh), (
            f"exercises/{assignment}/{fresh.name} is stale: run `make release`")


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_the_release_hides_solutions_and_hidden_tests(assignment):
    for notebook in (ROOT / "exercises" / assignment).glob("*.ipynb"):
        text = notebook.read_text()
        for marker in ("BEGIN SOLUTION", "BEGIN HIDDEN TESTS"):
            assert marker not in text, f"{notebook} still contains {marker}"


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_hidden_tests_call_the_course_s_checks_not_a_name_from_the_notebook(assignment):
    """A learner's cell can rebind any name of the notebook (``check_x = lambda *a: None``),
    so every hidden test imports its check afresh from the autograder and calls that."""
    notebook = nbformat.read(ROOT / "solutions" / assignment / f"{assignment}.ipynb", as_version=4)
    grade_cells = [cell for cell in notebook.cells
                   if (cell.metadata.get("nbgrader") or {}).get("grade")]
    assert grade_cells
    for cell in grade_cells:
        hidden = cell.source.split("### BEGIN HIDDEN TESTS", 1)[1].split("### END HIDDEN TESTS")[0]
        lines = [line.strip() for line in hidden.strip().splitlines()]
        grade_id = cell.metadata["nbgrader"]["grade_id"]
        assert lines[0].startswith("from autograder.") and lines[0].endswith(" as _check"), (
            f"{grade_id}: the hidden test must start with `from autograder.<chapter> import "
            f"<check> as _check`, not {lines[0]!r}")
        assert all(line.startswith("_check(") for line in lines[1:]), (grade_id, lines)

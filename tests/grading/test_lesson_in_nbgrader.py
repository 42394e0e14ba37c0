"""nbgrader keeps what the learner saw: the lesson, in the graded notebook and the feedback.

A tiny assignment whose grade cell calls the course's feedback functions (no Spark) goes
through stock nbgrader: generate the release, autograde three submissions (the untouched
release, a wrong answer, an answer that raises), generate the feedback. Each graded cell
must score zero and show the lesson alone, the same text the notebook showed.
"""
import html
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

import autograder
from nbgrader.api import Gradebook

pytestmark = pytest.mark.slow

ASSIGNMENT = "limits"
ANSWER = '''\
def predict_emitted(sizes, limit):
    """Rows written to the sink by each micro-batch of a `limit(limit)` query."""
    ### BEGIN SOLUTION
    emitted, so_far = [], 0
    for size in sizes:
        emitted.append(min(size, limit - so_far))
        so_far += emitted[-1]
    return emitted
    ### END SOLUTION
'''
GRADE_CELL = '''\
from autograder.checks.feedback import ask, check_equal
stream = "batch sizes [2, 3, 0], limit(4)"
got = ask(predict_emitted, [2, 3, 0], 4, what="predict_emitted", context=stream)
for batch, (mine, spark_did) in enumerate(zip(got, [2, 2, 0])):
    check_equal(mine, spark_did, "rows emitted by this micro-batch", batch=batch,
                revisit='section "A limit that spans micro-batches"', context=stream)
'''
SUBMISSIONS = {
    "unfinished": None,  # the release as it is
    "per_batch": "def predict_emitted(sizes, limit):\n"
                 "    return [min(size, limit) for size in sizes]\n",
    "crashing": "def predict_emitted(sizes, limit):\n"
                "    return [size / (limit - 4) for size in sizes]\n",
}
LESSONS = {
    "unfinished": ["✘ task not done yet: replace `raise NotImplementedError()` in "
                   "predict_emitted with your code"],
    "per_batch": ["✘ micro-batch 1: rows emitted by this micro-batch",
                  "    expected: 2", "    got:      3",
                  "  the stream: batch sizes [2, 3, 0], limit(4)",
                  '  revisit: section "A limit that spans micro-batches"'],
    "crashing": ["✘ predict_emitted raised an error", "where your code raised it:",
                 "    return [size / (limit - 4) for size in sizes]",
                 "ZeroDivisionError: division by zero"],
}


#: The checkout whose ``autograder`` the kernels import (not another editable install).
CHECKOUT = str(Path(autograder.__file__).resolve().parents[1])


def nbgrader(course: Path, *args: str) -> None:
    env = dict(os.environ,
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
               PYTHONPATH=os.pathsep.join(filter(None, [CHECKOUT, os.environ.get("PYTHONPATH")])))
    subprocess.run([sys.executable, "-m", "nbgrader", *args, "--force"], cwd=course, env=env,
                   check=True, capture_output=True, timeout=300)


def grade_id(cell) -> str | None:
    return cell.metadata.get("nbgrader", {}).get("grade_id")


@pytest.fixture(scope="module")
def graded_course(tmp_path_factory) -> Path:
    course = tmp_path_factory.mktemp("course")
    (course / "nbgrader_config.py").write_text(
        "c = get_config()\n"
        f"c.CourseDirectory.root = {str(course)!r}\n"
        f"c.CourseDirectory.db_url = 'sqlite:///{course}/gradebook.db'\n"
        "c.ClearSolutions.code_stub = {'python': '# YOUR CODE HERE\\nraise NotImplementedError()'}\n")
    answer = new_code_cell(ANSWER, metadata={"nbgrader": {
        "grade": False, "solution": True, "locked": False, "grade_id": "answer",
        "schema_version": 3}})
    check = new_code_cell(GRADE_CELL, metadata={"nbgrader": {
        "grade": True, "solution": False, "locked": True, "grade_id": "check_answer",
        "points": 2, "schema_version": 3}})
    source = course / "source" / ASSIGNMENT
    source.mkdir(parents=True)
    nbformat.write(new_notebook(cells=[answer, check]), source / f"{ASSIGNMENT}.ipynb")
    nbgrader(course, "generate_assignment", ASSIGNMENT)
    for student, code in SUBMISSIONS.items():
        notebook = nbformat.read(course / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", 4)
        for cell in notebook.cells:
            if code is not None and grade_id(cell) == "answer":
                cell.source = code
        folder = course / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        nbformat.write(notebook, folder / f"{ASSIGNMENT}.ipynb")
    nbgrader(course, "autograde", ASSIGNMENT)
    nbgrader(course, "generate_feedback", ASSIGNMENT)
    return course


def error_shown(course: Path, student: str) -> str:
    """The text of the grade cell's error output in the graded notebook."""
    notebook = nbformat.read(course / "autograded" / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", 4)
    (cell,) = [cell for cell in notebook.cells if grade_id(cell) == "check_answer"]
    (error,) = [output for output in cell.outputs if output.output_type == "error"]
    return "\n".join(error.traceback)


def feedback_text(course: Path, student: str) -> str:
    page = (course / "feedback" / student / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text()
    return html.unescape(re.sub(r"<[^>]+>", "", page))


@pytest.mark.parametrize("student", sorted(SUBMISSIONS))
def test_the_graded_notebook_shows_the_lesson_alone(graded_course, student):
    shown = error_shown(graded_course, student)
    for line in LESSONS[student]:
        assert line in shown.splitlines(), (line, shown)
    assert "Traceback" not in shown and autograder.__path__[0] not in shown


@pytest.mark.parametrize("student", sorted(SUBMISSIONS))
def test_the_feedback_shows_the_same_lesson(graded_course, student):
    text = feedback_text(graded_course, student)
    for line in LESSONS[student]:
        assert line in text.splitlines(), (line, text[-2000:])
    assert autograder.__path__[0] not in text


@pytest.mark.parametrize("student", sorted(SUBMISSIONS))
def test_a_failed_check_still_scores_zero(graded_course, student):
    with Gradebook(f"sqlite:///{graded_course}/gradebook.db") as gradebook:
        assert gradebook.find_submission(ASSIGNMENT, student).score == 0

"""Spark's answers stay out of reach of a learner's Spark while learners' notebooks run.

A graded kernel holds no answer (:mod:`autograder.checks.asking`), but the Spark it is given reads
any file of the grading machine. So once the solution's run has recorded the answers, the
grading command keeps them in its own memory and takes their file off the disk; each
notebook's judge is handed them through the pipe its process is forked from; the file is
back when the run ends, for a later run to resume with. A run killed in between leaves only
the seed: the next one records the answers again on the same streams.

Chapter 1's grading test (``test_global_limit_grading.py``) grades a learner who reads the
answers file through Spark; these are the same rules without Spark.
"""
import json
from types import SimpleNamespace

import nbformat
from nbformat.v4 import new_code_cell, new_notebook

from autograder.contract import ANSWERS, SEED
from autograder.grading import reference
from autograder.grading.run_answers import RunAnswers
from autograder.grading.processes import GradingLimits
from autograder.grading.results import GRADED

ASSIGNMENT = "01_global_limit"
DECLARED = "from autograder.chapters.global_limit import check_predicted_output\n" \
           "check_predicted_output(predict_emitted, example=True)\n"
UNDECLARED = "from autograder.chapters.global_limit import check_nothing_of_the_kind\n" \
             "check_nothing_of_the_kind(predict_emitted)\n"


def a_course(tmp_path, grade_cell: str) -> SimpleNamespace:
    """A course folder with one assignment whose source notebook has ``grade_cell``, and a
    recorded answers file."""
    nb = new_notebook(cells=[new_code_cell(grade_cell)])
    nb.cells[0].metadata["nbgrader"] = {"grade_id": "test_it", "grade": True, "locked": True,
                                        "points": 1}
    source = tmp_path / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    source.parent.mkdir(parents=True)
    nbformat.write(nb, source)
    answers = tmp_path / "spark-answers" / ASSIGNMENT / "answers.json"
    answers.parent.mkdir(parents=True)
    answers.write_text('{"global_limit.limit_run [[3], 2]": "[{\\"emitted\\": 2}]"}')
    home = tmp_path / "grading-home"  # the command's own folder, outside the course's
    home.mkdir()
    return SimpleNamespace(root=tmp_path, home=home, answers=answers, limits=GradingLimits(),
                           notebook_name=lambda assignment: f"{assignment}.ipynb",
                           answers_folder=lambda assignment: answers.parent)


def test_the_answers_leave_the_disk_while_learners_run_and_come_back_as_they_were(tmp_path):
    course = a_course(tmp_path, DECLARED)
    written = course.answers.read_text()
    answers = RunAnswers(course)
    answers.given[ASSIGNMENT] = {SEED: "7", ANSWERS: str(course.answers)}

    answers.seal()
    assert not course.answers.exists()
    assert answers.in_memory(ASSIGNMENT) == json.loads(written)  # what its judges get

    answers.unseal()
    assert course.answers.read_text() == written  # byte for byte: --answers-from compares
    assert answers.in_memory(ASSIGNMENT) is None


def test_a_notebook_whose_kernel_judges_its_own_checks_keeps_the_file(tmp_path):
    course = a_course(tmp_path, UNDECLARED)
    answers = RunAnswers(course)
    answers.given[ASSIGNMENT] = {SEED: "7", ANSWERS: str(course.answers)}

    answers.seal()
    assert course.answers.exists()
    assert answers.in_memory(ASSIGNMENT) is None
    answers.unseal()


def test_a_run_killed_while_the_answers_were_off_the_disk_resumes_on_the_same_seed(
        tmp_path, monkeypatch):
    course = a_course(tmp_path, DECLARED)
    course.answers.unlink()  # what a kill -9 during the run leaves
    (course.answers.parent / "seed").write_text("4242")
    ran = []

    def solution_run(command, **_):
        ran.append(command)
        return GRADED, "", 0

    monkeypatch.setattr(reference, "run_watched", solution_run)
    given, line = reference.record_answers(course, ASSIGNMENT, kernel_env=lambda *_: {},
                                           remote=None, limits=GradingLimits(), reuse=True)
    assert ran, "the answers are recorded again"
    assert given[SEED] == "4242" and "seed 4242" in line

    given, _ = reference.record_answers(course, ASSIGNMENT, kernel_env=lambda *_: {},
                                        remote=None, limits=GradingLimits(), reuse=False)
    assert given[SEED] != "4242"  # --force: fresh streams

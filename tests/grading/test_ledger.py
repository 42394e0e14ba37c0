"""A grading record is trusted only as the command wrote it (autograder.grading.ledger).

A run resumes from the records of the notebooks it graded before, and ``merge`` gathers
several machines' records: a record whose content was changed by anyone but the command
(its seal no longer matches), or whose gradebook holds other points, is named and graded
again, never kept. No Spark runs here: the class is one file that is not a notebook, which
nbgrader never has to run.
"""
import json

import pytest

from autograder.grading import ledger
from autograder.grading.course import GradingCourse, nbgrader_env
from autograder.grading.grader import Silent
from autograder.grading.results import NOT_A_NOTEBOOK
from autograder.grading.run import grade_class
from autograder.grading.sandbox import why_not_available

ASSIGNMENT = "01_global_limit"


class Notes(Silent):
    """A run's progress, kept to be read."""

    def __init__(self):
        self.lines = []

    def note(self, line: str) -> None:
        self.lines.append(line)


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    course = GradingCourse(tmp_path_factory.mktemp("ledger") / "course")
    course.prepare(ASSIGNMENT, nbgrader_env())
    return course


def _grade(course, student: str, notebook) -> tuple[dict, list[str]]:
    notes = Notes()
    grades = grade_class(course, {ASSIGNMENT: {student: notebook}}, remote=None,
                         class_answers=False, progress=notes,
                         sandboxed=why_not_available() is None)
    return grades[ASSIGNMENT], notes.lines


def test_a_record_the_command_wrote_is_kept_and_one_changed_since_is_graded_again(course, tmp_path):
    garbage = tmp_path / "ada.ipynb"
    garbage.write_text("not a notebook")
    graded, _ = _grade(course, "ada", garbage)
    assert graded["ada"].outcome == NOT_A_NOTEBOOK
    record = course.ledger(ASSIGNMENT, "ada")
    kept, _ = ledger.read(course, ASSIGNMENT, "ada")
    assert kept == graded["ada"]

    _, notes = _grade(course, "ada", garbage)  # resumed: kept, nothing said
    assert not any("graded again" in line for line in notes), notes

    # Full marks written into the record, by hand or by a process: its seal breaks.
    changed = json.loads(record.read_text())
    changed["cells"] = {cell: {**score, "score": score["max_score"]}
                        for cell, score in changed["cells"].items()}
    record.write_text(json.dumps(changed))
    assert ledger.read(course, ASSIGNMENT, "ada") == (
        None, "its grading record was changed outside the command (its seal does not match)")
    regraded, notes = _grade(course, "ada", garbage)
    assert f"{ASSIGNMENT}/ada: its grading record was changed outside the command " \
           "(its seal does not match): graded again" in notes
    assert regraded["ada"].points() == graded["ada"].points()
    assert ledger.read(course, ASSIGNMENT, "ada")[0] == regraded["ada"]  # sealed anew


def test_a_record_the_gradebook_disagrees_with_is_graded_again(course, tmp_path):
    garbage = tmp_path / "bea.ipynb"
    garbage.write_text("{}")
    graded, _ = _grade(course, "bea", garbage)
    with course.gradebook() as gradebook:
        for notebook in gradebook.find_submission(ASSIGNMENT, "bea").notebooks:
            for cell in notebook.grades:
                cell.manual_score = cell.max_score
        gradebook.db.commit()
    assert ledger.read(course, ASSIGNMENT, "bea") == (
        None, "the gradebook's points for it differ from its grading record")
    regraded, notes = _grade(course, "bea", garbage)
    assert any(line.startswith(f"{ASSIGNMENT}/bea: the gradebook's points") for line in notes)
    assert regraded["bea"].points() == graded["bea"].points()


def test_a_record_sealed_with_another_key_or_none_is_not_trusted(course, tmp_path):
    garbage = tmp_path / "cyd.ipynb"
    garbage.write_text("[]")
    _grade(course, "cyd", garbage)
    record = course.ledger(ASSIGNMENT, "cyd")
    sealed = json.loads(record.read_text())
    assert ledger.sealed_record(record, b"another course's key")[0] is None
    del sealed[ledger.SEAL]
    record.write_text(json.dumps(sealed))
    assert ledger.read(course, ASSIGNMENT, "cyd")[0] is None
    assert ledger.read(course, ASSIGNMENT, "nobody") == (None, "")
    key = course.root / "grading" / ledger.KEY_FILE
    assert key.stat().st_mode & 0o077 == 0  # the instructor's alone

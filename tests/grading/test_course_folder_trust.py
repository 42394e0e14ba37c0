"""The grader trusts only what it wrote in the course folder (autograder.grading.course).

nbgrader reads more of its folder than the command writes: a ``nbgrader_config.json``
beside the ``.py`` (loaded after it), and, through its working folder being first on its
import path, any package found there. So every nbgrader process of the command runs in a
folder of the command's own, outside the course folder; a course folder holding what the
command did not write is refused before anything is graded; and the CSV's points are the
command's sealed records, never the gradebook's word alone. No Spark runs here: the class
is made of files that are not notebooks, which nbgrader never has to run.
"""
import csv
import json
import subprocess
import sys

import pytest

from autograder.grading.course import REPOSITORY, GradingCourse, UnknownFiles, nbgrader_env
from autograder.grading.grades_csv import write_grades_csv
from autograder.grading.run import grade_class
from autograder.grading.sandbox import why_not_available
from autograder.grading.warm_nbgrader import WarmNbgrader

ASSIGNMENT = "01_global_limit"
#: A config that turns the judge off: nbgrader's autograde would score whatever the kernel said.
JUDGE_OFF = {"Autograde": {"autograde_preprocessors": []}}


def planted_package(folder, marker):
    """A package named like the course's toolkit, which says when it is imported."""
    package = folder / "autograder"
    package.mkdir()
    (package / "__init__.py").write_text(f"open({str(marker)!r}, 'w').write('imported')\n")


def test_a_course_folder_with_a_planted_config_or_package_is_refused_and_named(tmp_path):
    root = tmp_path / "course"
    GradingCourse(root)
    (root / "nbgrader_config.json").write_text(json.dumps(JUDGE_OFF))
    planted_package(root, tmp_path / "imported")
    (root / "source.lnk").symlink_to(REPOSITORY / "solutions")
    with pytest.raises(UnknownFiles) as refused:
        GradingCourse(root)
    assert refused.value.names == ["autograder", "nbgrader_config.json", "source.lnk"]
    assert "move it out of the folder" in str(refused.value)


def test_a_folder_where_the_command_keeps_a_file_is_refused_too(tmp_path):
    root = tmp_path / "course"
    (root / "grades.csv").mkdir(parents=True)
    with pytest.raises(UnknownFiles, match="grades.csv"):
        GradingCourse(root)


def test_the_classroom_command_refuses_a_planted_config_before_it_grades(tmp_path):
    root = tmp_path / "course"
    GradingCourse(root)
    (root / "nbgrader_config.json").write_text(json.dumps(JUDGE_OFF))
    submissions = tmp_path / "submitted" / "ada" / ASSIGNMENT
    submissions.mkdir(parents=True)
    (submissions / f"{ASSIGNMENT}.ipynb").write_text("not a notebook")
    done = subprocess.run(
        [sys.executable, "-m", "autograder.classroom", "grade", ASSIGNMENT, "--submissions",
         str(tmp_path / "submitted"), "--course-dir", str(root), "--spark", "local"],
        cwd=REPOSITORY, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stderr
    assert "holds what the grading command did not write: nbgrader_config.json" in done.stderr
    assert not (root / "gradebook.db").exists() and not (root / "grading").exists()


def test_nbgrader_imports_nothing_planted_in_the_course_folder_after_it_was_opened(tmp_path):
    """As a process of the run could plant it: neither ``nbgrader generate_assignment`` run
    by the command nor the warm launcher and a child it forks import it."""
    course = GradingCourse(tmp_path / "course")
    marker = tmp_path / "imported"
    planted_package(course.root, marker)
    course.prepare(ASSIGNMENT, nbgrader_env())  # nbgrader generate_assignment
    assert (course.root / "release" / ASSIGNMENT).is_dir()
    warm = WarmNbgrader(cwd=course.home)
    try:
        exported = tmp_path / "exported.csv"
        child = warm.launch([sys.executable, "-m", "nbgrader", "export", "--to", str(exported)],
                            cwd=course.home, env=nbgrader_env(), log=tmp_path / "export.log")
        assert child.wait(120) == 0, (tmp_path / "export.log").read_text()
    finally:
        warm.close()
    assert exported.read_text().startswith("assignment,duedate,timestamp,student_id")
    assert not marker.exists()
    assert not course.home.is_relative_to(course.root)
    assert sorted(p.name for p in course.home.iterdir()) == ["nbgrader_config.py"]


# -- the CSV -------------------------------------------------------------------------------

@pytest.fixture
def graded(tmp_path):
    """A class of three the command graded (none handed in a notebook), in nbgrader's
    gradebook and in the command's records."""
    folder = tmp_path / "class"
    folder.mkdir()
    course = GradingCourse(folder / "course")
    class_ = {}
    for learner, text in {"ada": "not a notebook", "bea": "{}", "cyd": "[]"}.items():
        class_[learner] = folder / f"{learner}.ipynb"
        class_[learner].write_text(text)
    grade_class(course, {ASSIGNMENT: class_}, remote=None, class_answers=False,
                sandboxed=why_not_available() is None)
    with course.gradebook() as gradebook:  # a learner on the roll who handed nothing in
        gradebook.update_or_create_student("dee", last_name="Doe", first_name="Dee")
    return course


def rows(path) -> list[dict]:
    with open(path, newline="") as table:
        return list(csv.DictReader(table))


def test_the_csv_is_the_one_nbgrader_exports_for_a_class_the_command_graded(graded, tmp_path):
    ours, theirs = tmp_path / "ours.csv", tmp_path / "theirs.csv"
    assert write_grades_csv(graded, ours) == []
    graded.run_nbgrader(["export", "--to", str(theirs)], nbgrader_env())
    assert ours.read_text() == theirs.read_text()
    assert [(r["student_id"], r["raw_score"], r["max_score"]) for r in rows(ours)] == [
        ("ada", "0.0", "10.0"), ("bea", "0.0", "10.0"), ("cyd", "0.0", "10.0"),
        ("dee", "0.0", "10.0")]


def test_points_changed_in_the_gradebook_or_a_record_after_the_run_are_not_exported(
        graded, tmp_path):
    with graded.gradebook() as gradebook:  # full marks for ada, in the gradebook alone
        for notebook in gradebook.find_submission(ASSIGNMENT, "ada").notebooks:
            for cell in notebook.grades:
                cell.manual_score = cell.max_score
        gradebook.db.commit()
    record = graded.ledger(ASSIGNMENT, "bea")  # and for bea, in her record alone
    changed = json.loads(record.read_text())
    changed["cells"] = {cell: {**score, "score": score["max_score"]}
                        for cell, score in changed["cells"].items()}
    record.write_text(json.dumps(changed))

    ours = tmp_path / "ours.csv"
    assert write_grades_csv(graded, ours) == [
        f"{ASSIGNMENT}/ada: not in the CSV's points: the gradebook's points for it differ "
        "from its grading record; grade it again",
        f"{ASSIGNMENT}/bea: not in the CSV's points: its grading record was changed "
        "outside the command (its seal does not match); grade it again"]
    points = {r["student_id"]: (r["raw_score"], r["score"]) for r in rows(ours)}
    assert points == {"ada": ("", ""), "bea": ("", ""), "cyd": ("0.0", "0.0"),
                      "dee": ("0.0", "0.0")}

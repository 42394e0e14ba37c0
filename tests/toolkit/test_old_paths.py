"""Notebooks released before the package was split into folders import the chapters' modules
by their old names (``autograder.global_limit``): each old name is the new module itself, so a
check, a patch and the grading's guards see one module whichever name a notebook used."""
from __future__ import annotations

import importlib

import pytest

from autograder.old_paths import MOVED, current

OLD_NAMES = sorted(MOVED)


@pytest.mark.parametrize("old", OLD_NAMES)
def test_an_old_name_is_the_module_it_stands_for(old):
    assert importlib.import_module(old) is importlib.import_module(MOVED[old])
    assert current(old) == MOVED[old] and current(MOVED[old]) == MOVED[old]


def test_a_check_imported_by_its_old_name_is_the_same_check():
    from autograder.chapters.global_limit import check_predicted_output as new
    from autograder.global_limit import check_predicted_output as old
    assert old is new and old.__module__ == "autograder.chapters.global_limit"


def test_the_released_notebooks_import_only_names_that_exist():
    """Every ``autograder`` module a released notebook imports is there, old name or new."""
    import re

    import nbformat

    from corpora.submissions import release_notebook
    from corpora.known_answers import ASSIGNMENTS
    imported = set()
    for assignment in ASSIGNMENTS:
        for cell in nbformat.read(release_notebook(assignment), as_version=4).cells:
            imported |= set(re.findall(r"^\s*(?:from|import) (autograder(?:\.\w+)*)", cell.source, re.M))
    assert imported, "no released notebook imports the package"
    for name in sorted(imported):
        importlib.import_module(name)


@pytest.mark.parametrize("assignment", ["01_global_limit", "05_state_store", "06_stream_stream_join"])
def test_a_notebook_released_with_the_old_names_is_judged_and_guarded_as_a_new_one(assignment):
    """A submission made from a release before the folders: its grade cells' checks are the
    declared ones, and the guards protect and read the same modules as for a new release."""
    import nbformat

    from autograder.grading import judge
    from autograder.grading.guards import checked_modules
    from corpora.submissions import solution_notebook

    new = nbformat.read(solution_notebook(assignment), as_version=4)
    old = nbformat.read(solution_notebook(assignment), as_version=4)
    for cell in old.cells:
        cell.source = cell.source.replace("autograder.chapters.", "autograder.")
    assert any("autograder.chapters." in cell.source for cell in new.cells)
    assert judge.all_checks_declared(old) and judge.all_checks_declared(new)
    assert checked_modules(old) == checked_modules(new)


def test_every_folder_of_the_package_is_the_courses_code_and_none_the_learners():
    """An error raised in any of the package's folders is the course's (a grader's fault),
    never blamed on the learner, wherever the module sits in the package."""
    from pathlib import Path

    import autograder
    from autograder.checks.learner_code import in_course, written_by_learner

    package = Path(autograder.__file__).parent
    modules = sorted(package.rglob("*.py"))
    assert {path.parent.name for path in modules} >= {"toolkit", "checks", "chapters", "widgets", "grading"}
    assert all(in_course(str(path)) and not written_by_learner(str(path)) for path in modules)

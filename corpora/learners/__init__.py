"""Learners nobody on the course wrote: the corpus that tells whether a grade is right.

Each chapter's module (``chapter1`` ... ``chapter6``) lists :class:`Learner` entries: a
notebook as a learner might hand it in, and the points each grade cell must give it.

* ``correct``: right answers written another way than the course's (another algorithm,
  another API, self-contained cells that import what they use): full marks, never flagged;
* ``misconception``: one wrong belief the chapter warns about, the other tasks right: the
  task it touches scores zero, **on every seed** (the checks' fixed edge streams expose it);
* ``partial``: some tasks done, the others untouched;
* ``hardcoded``: the worked example's answers typed in: zero.

A learner's notebook is the release with the solution cells named in ``answers``
(grade_id -> source) written in; the cells not named stay as released (unfinished).
The fast tests scan every notebook statically (``tests/grading/test_learners_*.py``); the
edge-stream tests call the checks on the fixed streams; ``scripts/benchmark_grading_quality.py``
grades the whole corpus through the grading command on several seeds.
"""
from __future__ import annotations

import copy
import importlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from unittest import mock

import nbformat

from autograder.contract import SEED
from corpora.submissions import release_notebook

KINDS = ("correct", "misconception", "partial", "hardcoded")


@dataclass(frozen=True)
class Learner:
    name: str
    kind: str
    why: str
    answers: dict[str, str]
    #: grade cell id -> points; the grade cells not named score zero.
    points: dict[str, float] = field(default_factory=dict)
    #: For a misconception: the kind of input (a :class:`~autograder.checks.checking.Dimension` of
    #: the task's check, by name) it is the simplest wrong belief about, if it is one.
    dimension: str = ""

    def notebook(self, assignment: str):
        """The learner's notebook (nbformat), built from the release."""
        nb = copy.deepcopy(nbformat.read(release_notebook(assignment), 4))
        found = set()
        for cell in nb.cells:
            grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
            if grade_id in self.answers:
                cell.source = self.answers[grade_id]
                found.add(grade_id)
        missing = set(self.answers) - found
        if missing:
            raise KeyError(f"{self.name}: no cells {sorted(missing)} in {assignment}")
        return nb

    def write(self, assignment: str, folder: Path) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{self.name}.ipynb"
        nbformat.write(self.notebook(assignment), path)
        return path


def altered(answers: dict[str, str], cell: str, old: str, new: str) -> dict[str, str]:
    """``answers`` with one passage of one cell changed: a learner's one wrong belief."""
    assert old in answers[cell], f"{old!r} is not in the {cell} cell"
    return {**answers, cell: answers[cell].replace(old, new)}


#: assignment -> the module holding its learners.
CHAPTERS = {
    "01_global_limit": "corpora.learners.chapter1",
    "02_aggregation_planning": "corpora.learners.chapter2",
    "03_state_store_save": "corpora.learners.chapter3",
    "04_transform_with_state": "corpora.learners.chapter4",
    "05_state_store": "corpora.learners.chapter5",
    "06_stream_stream_join": "corpora.learners.chapter6",
}


def learners(assignment: str) -> list[Learner]:
    return importlib.import_module(CHAPTERS[assignment]).LEARNERS


def grade_points(assignment: str) -> dict[str, float]:
    """Each grade cell's points in the solution notebook."""
    from corpora.submissions import solution_notebook
    nb = nbformat.read(solution_notebook(assignment), 4)
    return {c.metadata["nbgrader"]["grade_id"]: c.metadata["nbgrader"]["points"]
            for c in nb.cells if c.get("metadata", {}).get("nbgrader", {}).get("grade")}


def expected_points(assignment: str, learner: Learner) -> dict[str, float]:
    return {grade_id: learner.points.get(grade_id, 0) for grade_id in grade_points(assignment)}


def defined(source: str, name: str):
    """What a learner's cell ``source`` defines as ``name``, run in this process with what
    the notebook's set-up cell has already imported (``Row``, ``StatefulProcessor``)."""
    from pyspark.sql import Row
    from pyspark.sql.streaming import StatefulProcessor

    namespace = {"__name__": "learner_cell", "Row": Row, "StatefulProcessor": StatefulProcessor}
    exec(compile(source, f"<a learner's {name}>", "exec"), namespace)
    return namespace[name]


# -- running one learner's task in this process -------------------------------------------------
def cells_function(assignment: str, learner: Learner, name: str):
    """What the learner's answer cells define as ``name``, run in one module in their
    notebook's order, without the set-up cell (for the tasks whose code is a plain
    function, which needs no Spark)."""
    namespace: dict = {"__name__": f"learner_{learner.name}"}
    for cell in learner.notebook(assignment).cells:
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if cell.cell_type == "code" and grade_id in learner.answers:
            exec(compile(cell.source, f"<{learner.name}: {grade_id}>", "exec"), namespace)
    return namespace[name]


def _grade_cells(nb) -> list:
    return [c for c in nb.cells if c.get("metadata", {}).get("nbgrader", {}).get("grade")]


def task_check(nb, grade_id: str) -> tuple[str, str]:
    """The check a grade cell calls and the learner's name it hands it, read off the cell's
    first (public) line: ``check_predicted_output(predict_emitted, example=True)``."""
    import ast
    (cell,) = [c for c in _grade_cells(nb) if c.metadata["nbgrader"]["grade_id"] == grade_id]
    call = ast.parse(cell.source.splitlines()[0]).body[0].value
    return call.func.id, call.args[0].id


def run_cells(nb, who: str, seed: int) -> dict:
    """Run a notebook's own code cells (set-up included, grade cells left out) in this
    process, as a grading kernel runs them (``COURSE_SEED`` set to ``seed`` meanwhile, so
    chapter 4's set-up starts no warm-up); the names they defined."""
    namespace: dict = {}
    with mock.patch.dict(os.environ, {SEED: str(seed)}):
        for cell in nb.cells:
            meta = cell.get("metadata", {}).get("nbgrader", {})
            if cell.cell_type == "code" and not meta.get("grade"):
                exec(compile(cell.source, f"<{who}: {meta.get('grade_id', 'cell')}>", "exec"),
                     namespace)
    return namespace


def run_task(assignment: str, learner: Learner, grade_id: str, seed: int) -> None:
    """Run the learner's cells (set-up included) in this process, then the task's check on
    the graded streams of ``seed``: returns if it passes, raises what the check raises."""
    nb = learner.notebook(assignment)
    namespace = run_cells(nb, learner.name, seed)
    check, answer = task_check(nb, grade_id)
    namespace[check](namespace[answer], seed=seed)

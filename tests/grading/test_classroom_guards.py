"""The guards' static half, without Spark: what the scan of a submission flags.

The scan reads only the cells a learner writes (solution cells and cells they add); the
locked cells are put back by nbgrader anyway. It must flag every cheat of the hostile
corpus that is visible in the source, and never an honest notebook.
"""
from pathlib import Path

import nbformat
import pytest

from autograder.grading import CellScore, NotebookGrade, find_submissions, summary_table
from autograder.grading.verdict import grade_cells_after, runtime_cheats
from autograder.grading.guards import checked_modules, scan_notebook, scan_source
from corpora.hostile import ASSIGNMENT, CASES, FULL, write_corpus
from corpora.submissions import release_notebook, solution_notebook

GRADE_IDS = list(FULL)


def flags_of(name, tmp_path):
    (path,) = write_corpus(tmp_path, [name]).values()
    return scan_notebook(nbformat.read(path, 4))


def test_the_solution_and_the_release_are_not_flagged():
    for notebook in (solution_notebook(ASSIGNMENT), release_notebook(ASSIGNMENT)):
        assert scan_notebook(nbformat.read(notebook, 4)) == []


@pytest.mark.parametrize("name", ["patches_check", "redefines_check", "hides_tracebacks",
                                  "borrows_answers"])
def test_a_visible_cheat_is_flagged_in_the_cell_that_holds_it(name, tmp_path):
    flags = flags_of(name, tmp_path)
    assert flags, name
    nb = nbformat.read(tmp_path / f"{name}.ipynb", 4)
    (cell,) = {flag.cell for flag in flags}
    assert nb.cells[cell].metadata["nbgrader"]["grade_id"] == "predict_emitted"


ANSWER_KEYS = {"autograder.checks.answers", "autograder.chapters.global_limit"}


@pytest.mark.parametrize("source, borrows", [
    ("from autograder.chapters.global_limit import limit_run", True),
    ("import autograder.chapters.global_limit as g\ng.limit_run(spark, [1], 1)", True),
    ("from autograder import global_limit\nglobal_limit.reference_first_clicks(df, 2)", True),
    ("import autograder.checks\nautograder.checks.answers.RECORDED", True),
    # the old names of the chapters' modules stand for the new ones (autograder/old_paths.py)
    ("from autograder.global_limit import limit_run", True),
    ("import autograder.global_limit as g\ng.limit_run(spark, [1], 1)", True),
    ("from autograder.global_limit import check_counter_reader", False),
    ("from autograder.checks.answers import spark_answer", True),
    ("from autograder import read_state, StreamRun, course_session", False),
    ("from autograder.chapters.global_limit import check_counter_reader", False),
    ("check_predicted_output(predict_emitted, example=True)", False),
])
def test_asking_the_checks_own_reference_for_an_answer_is_flagged(source, borrows):
    """Learners may use the toolkit and call the checks; predicting with the checks' own
    answers (the truth they compare with, recorded or asked of Spark) is not predicting."""
    flags = scan_source(source, set(), ANSWER_KEYS)
    assert bool(flags) == borrows, flags
    assert all("where the checks keep their answers" in flag for flag in flags)


def test_honest_hostile_code_is_not_called_a_cheat(tmp_path):
    """Broken or endless code is a failure, not a cheat: the scan leaves it alone."""
    for name in ("endless_loop", "kernel_exit", "stops_spark", "leaves_query", "always_equal",
                 "honest", "honest_partial", "reordered_cells", "split_grade_cell"):
        assert flags_of(name, tmp_path) == [], name


def test_a_cheat_costs_the_grade_cells_that_run_after_it():
    nb = nbformat.read(solution_notebook(ASSIGNMENT), 4)
    first_solution = next(i for i, c in enumerate(nb.cells)
                          if c.metadata.get("nbgrader", {}).get("grade_id") == "emitted_so_far")
    assert grade_cells_after(nb, first_solution, GRADE_IDS) == {"test_emitted_so_far",
                                                                 "test_first_clicks"}


def test_what_the_kernel_guard_logs_decides_the_tasks_that_score_zero():
    events = [{"event": "start", "cell": "test_predict_emitted"},
              {"event": "end", "cell": "test_predict_emitted"},
              {"event": "denied", "cell": None, "what": "sqlite3.connect"},
              {"event": "start", "cell": "test_predict_state"}]
    flags, affected = runtime_cheats(events, GRADE_IDS)
    assert affected == set(GRADE_IDS[1:])
    assert flags == ["after test_predict_emitted: denied sqlite3.connect"]
    during = [{"event": "start", "cell": "test_emitted_so_far"},
              {"event": "tamper", "cell": "test_emitted_so_far", "what": "x.check_equal"}]
    assert runtime_cheats(during, GRADE_IDS)[1] == {"test_emitted_so_far", "test_first_clicks"}


def test_the_guard_protects_the_modules_the_grade_cells_import():
    nb = nbformat.read(solution_notebook(ASSIGNMENT), 4)
    assert checked_modules(nb) == ["autograder", "autograder.chapters.global_limit"]


def test_submissions_are_found_in_nbgrader_layout_or_as_one_file_per_learner(tmp_path):
    (tmp_path / "ann" / ASSIGNMENT).mkdir(parents=True)
    (tmp_path / "ann" / ASSIGNMENT / "x.ipynb").write_text("{}")
    (tmp_path / "bob.ipynb").write_text("{}")
    found = find_submissions(tmp_path, [ASSIGNMENT])
    assert sorted(found[ASSIGNMENT]) == ["ann", "bob"]


def test_the_summary_names_the_flagged_and_the_failed():
    grades = {"ann": NotebookGrade("ann", {"test_a": CellScore(2, 2)}),
              "bob": NotebookGrade("bob", {"test_a": CellScore(0, 2)}, flags=["cell 3: uses sqlite3"]),
              "cid": NotebookGrade("cid", {"test_a": CellScore(0, 2)}, outcome="kernel died")}
    table = summary_table({ASSIGNMENT: grades})
    assert "1 flagged for cheating (bob)" in table
    assert "1 not run to the end (cid)" in table
    assert all(name in CASES for name in ("honest", "not_json"))


def test_the_kernel_side_of_the_guard_imports_no_grading_machinery():
    # Every grading kernel imports it before the learner's first cell: nbgrader, nbformat
    # and jsonschema would add about 3 s to each notebook of a class (pyspark comes with
    # the autograder package, which the notebook's own first cell needs anyway).
    import subprocess
    import sys

    probe = ("import sys, autograder.grading.kernel_guard\n"
             "print(sorted({m.split('.')[0] for m in sys.modules} "
             "& {'nbgrader', 'nbformat', 'jsonschema'}))")
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                            check=True, cwd=Path(__file__).resolve().parents[2]).stdout
    assert loaded.strip() == "[]"


CHECKS = {"check_predicted_output", "check_sessions"}
KEYS = {"autograder.checks.answers", "autograder.chapters.save_model", "autograder.chapters.global_limit",
        "autograder.chapters.state_store_save", "autograder.chapters.transform_with_state"}


@pytest.mark.parametrize("source", [
    "from pyspark.sql import functions as F",                       # the set-up cell's F, again
    "import pyspark.sql.functions as F",
    "from pyspark.sql import Row\nfrom pyspark.sql.streaming import StatefulProcessor",
    "from pyspark.sql import SparkSession\nspark = SparkSession.builder.getOrCreate()",
    "from autograder import course_session\nspark = course_session()",
    "g = events.groupBy('user')",                                  # a helper named like a module
    "def read_state(x):\n    return x",
    "path = '/data/resource/source/events.csv'",                    # paths that merely look close
    "def f():\n    '''Unlike the solutions/ folder, the gradebook is not mine.'''",
    "import sqlite3\nsqlite3.connect(':memory:').execute('select 1')",
    "import sys\nloaded = 'pyspark' in sys.modules\nsys.path.append('.')",
    "import builtins\nprint(builtins.len([1]))",
    "from autograder.chapters.global_limit import check_predicted_output",   # the same check again
    "from autograder.chapters.global_limit import EXAMPLE_SIZES, EXAMPLE_LIMIT",
    "import autograder.chapters.state_store_save as m\nbatches = m.EXAMPLE_BATCHES",
    "from autograder.chapters.transform_with_state import ms",
    "from autograder.chapters.save_model import window_of, is_expired",
    "class Tracker:\n    def __init__(self):\n        self.kernel = 3",
])
def test_ordinary_learner_code_is_not_flagged(source):
    assert scan_source(source, CHECKS, KEYS) == []


@pytest.mark.parametrize("source", [
    "from autograder.chapters.save_model import run",                        # the course's model answers
    "import autograder.chapters.save_model as sm\nsm.update_step({}, [], None, 10)",
    "from autograder.chapters.transform_with_state import CourseSessionTracker",
    "check_predicted_output = print",
    "from mine import check_predicted_output",
    "def check_sessions(*a):\n    pass",
    "ip = get_ipython()\nip.showtraceback = lambda *a: None",
    "setattr(get_ipython(), 'showtraceback', None)",
    "get_ipython().set_custom_exc((Exception,), lambda *a: None)",
    "import nbgrader.api",
    "import autograder.chapters.global_limit as g\ng.check_predicted_output = print",
])
def test_what_has_no_innocent_reading_is_flagged(source):
    assert scan_source(source, CHECKS, KEYS) != []


# -- what a learner's feedback shows of a failed grade cell ---------------------------------------
def _graded_cell(outputs):
    return nbformat.v4.new_code_cell(
        "check_predicted_output(predict_emitted)\n_check(predict_emitted)",
        metadata={"nbgrader": {"grade": True, "grade_id": "test_predict_emitted", "points": 2}},
        outputs=outputs)


def test_a_failed_check_keeps_its_lesson_and_any_other_error_its_last_line():
    from autograder.checks.feedback import CheckFailed
    from autograder.grading.guards import HideHiddenTestTracebacks

    failure = CheckFailed("rows emitted by this micro-batch", 2, 3, batch=1,
                          context="batch sizes [2, 3], limit(4) (a fixed stream)")
    lesson = nbformat.v4.new_output("error", ename="CheckFailed", evalue=str(failure),
                                    traceback=failure._render_traceback_())
    crash = nbformat.v4.new_output("error", ename="ZeroDivisionError", evalue="division by zero",
                                   traceback=["Traceback (most recent call last)",
                                              "  _check(predict_emitted)  # the hidden test"])
    cell, _ = HideHiddenTestTracebacks().preprocess_cell(_graded_cell([lesson, crash]), {}, 0)
    shown_lesson, shown_crash = (output["traceback"] for output in cell.outputs)
    assert shown_lesson == [failure.shown()]
    assert "micro-batch 1: rows emitted by this micro-batch" in shown_lesson[0]
    assert shown_crash == ["ZeroDivisionError: division by zero"]

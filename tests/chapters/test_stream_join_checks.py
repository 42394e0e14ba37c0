"""Chapter 6's checks, run in-process against real Spark.

The instructor's solution passes every check, on the worked example and on a fresh seed;
the untouched release says at once that no task is started; a wrong belief is told the
micro-batch and the section to reread. (That exercises/ is what nbgrader makes of
solutions/ is tested for every assignment in test_release.py; the corpus of learners in
tests/grading/test_learners_stream_join.py.)
"""
from pathlib import Path

import nbformat
import pytest

from autograder.checks.feedback import CheckFailed, TaskNotDone
from autograder.chapters.stream_join_checks import (
    EXAMPLE_STREAM, check_accepted, check_predicted_buffers, check_predicted_unmatched,
    check_rows_per_key,
)
from tests.support.classroom_fixtures import SUITE_SEED

ROOT = Path(__file__).resolve().parents[2]
ASSIGNMENT = "06_stream_stream_join"
SEED = SUITE_SEED  # the learner corpus's: Spark answers each question once
TASKS = {"predict_buffered": check_predicted_buffers,
         "predict_unmatched": check_predicted_unmatched,
         "rows_per_key": check_rows_per_key, "accepted": check_accepted}


def _functions(folder: str) -> dict:
    """The functions a notebook's solution cells define, with its set-up cell run first."""
    notebook = nbformat.read(ROOT / folder / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", 4)
    namespace: dict = {}
    for cell in notebook.cells:
        grading = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "code" and not grading.get("grade"):
            exec(cell.source, namespace)  # the course's own notebook
    return {name: namespace[name] for name in TASKS}


# -- the reference answers pass ------------------------------------------------------------------
@pytest.mark.parametrize("example", [True, False], ids=["example", "fresh seed"])
def test_the_solution_passes_every_check(spark, example):
    answers = _functions("solutions")
    for name, check in TASKS.items():
        check(answers[name], example=example, **({} if example else {"seed": SEED}))


def test_the_untouched_release_says_each_task_is_not_started(spark):
    stubs = _functions("exercises")
    for name, check in TASKS.items():
        with pytest.raises(TaskNotDone) as failure:
            check(stubs[name], example=True)
        assert str(failure.value) == ("task not done yet: replace `raise NotImplementedError()` "
                                      f"in {name} with your code")


# -- a wrong belief gets a lesson: the micro-batch, expected and got, the section ----------------
def test_buffers_that_drop_matched_rows_are_told_the_first_micro_batch_that_keeps_them(spark):
    solution = _functions("solutions")["predict_buffered"]

    def matched_rows_leave(stream, policy):
        steps = solution(stream, policy)
        return [{side: [row for row in rows if row != ["a", 1] and row != ["a", 4]]
                 for side, rows in step.items()} for step in steps]

    with pytest.raises(CheckFailed) as failure:
        check_predicted_buffers(matched_rows_leave, example=True)
    lesson = failure.value.lesson()
    assert lesson.startswith("micro-batch 0: the rows each side buffers after this data "
                             "micro-batch")
    assert 'section "When rows leave the state"' in lesson


def test_a_buffer_list_that_forgets_the_no_data_micro_batches_is_told_which_ran(spark):
    solution = _functions("solutions")["predict_buffered"]
    with pytest.raises(CheckFailed, match="how many micro-batches") as failure:
        check_predicted_buffers(lambda stream, policy: solution(stream, policy)[::2],
                                example=True)
    assert "'no-data'" in failure.value.what


def test_unmatched_rows_out_in_the_micro_batch_they_arrived_are_sent_to_outer_joins(spark):
    def at_arrival(stream):
        out = []
        for rows in stream:
            shown = [[ad, t] for side, ad, t in rows if side == "shown"]
            clicked = {ad for side, ad, _ in rows if side == "click"}
            out += [[row for row in shown if row[0] not in clicked], []]
        return out

    assert len(at_arrival(EXAMPLE_STREAM)) == 10   # as many micro-batches as Spark ran
    with pytest.raises(CheckFailed) as failure:
        check_predicted_unmatched(at_arrival, example=True)
    lesson = failure.value.lesson()
    assert lesson.startswith("micro-batch 0: the impressions this data micro-batch emits")
    assert 'section "Outer joins: rows with no match"' in lesson


def test_an_inner_join_believed_bounded_without_watermarks_fails_on_a_fixed_shape(spark):
    accepted = _functions("solutions")["accepted"]

    def bounded_by_its_condition(shape):
        if shape["how"] == "inner" and shape["time_condition"] and shape["mode"] != "complete":
            return "bounded"
        return accepted(shape)

    check_accepted(bounded_by_its_condition, example=True)
    with pytest.raises(CheckFailed) as failure:
        check_accepted(bounded_by_its_condition, seed=SEED)
    assert failure.value.context.startswith("inner join, no watermark,")
    assert "a fixed stream" in failure.value.context
    assert 'section "A join whose state never shrinks"' in failure.value.lesson()

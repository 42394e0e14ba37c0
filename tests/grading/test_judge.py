"""The judging half of grading, without a kernel or Spark: a grade cell's records of answers
judged against recorded answers, as :class:`autograder.grading.judge.JudgeGradeCells` does
after a graded kernel has only asked.

Chapter 1's worked example is the scenario throughout: its answers are known to the course
(``known_answers.json``), so the judge needs no Spark run for it.
"""
import json

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook, new_output

from autograder import global_limit
from autograder.checks.asking import RECORD_TYPE, Case, ask_case, make_record
from autograder.contract import GUARD_LOG, SEED
from autograder.grading import judge

SETUP = "from autograder.chapters.global_limit import check_predicted_output, check_predicted_state\n"
GRADE = ("check_predicted_output(predict_emitted, example=True)\n"
         "### BEGIN HIDDEN TESTS\n"
         "from autograder.chapters.global_limit import check_predicted_output as _check\n"
         "_check(predict_emitted, streams=3)\n"
         "### END HIDDEN TESTS\n")


def right(sizes, limit):
    emitted, left = [], limit
    for size in sizes:
        emitted.append(min(size, left))
        left -= emitted[-1]
    return emitted


def per_batch(sizes, limit):
    return [min(size, limit) for size in sizes]


def record_of(learner, *, example=True, seed=5, streams=2, check=global_limit.check_predicted_output.check):
    """What a graded kernel writes for one call of the check (its asking half alone)."""
    cases = check.cases(seed=seed, example=example, streams=streams)
    return make_record(check, seed, example, {"streams": streams}, cases,
                       [ask_case(check, learner, case) for case in cases])


def graded(*records, source=GRADE, extra=()):
    nb = new_notebook(cells=[new_code_cell(SETUP), new_code_cell(source)])
    nb.cells[0].metadata["nbgrader"] = {"grade_id": "setup", "locked": True, "grade": False}
    nb.cells[1].metadata["nbgrader"] = {"grade_id": "test_predict_emitted", "locked": True,
                                        "grade": True, "points": 2}
    nb.cells[1].outputs = [new_output("display_data", data={RECORD_TYPE: record,
                                                            "text/plain": "answers"})
                           for record in records] + list(extra)
    return nb


@pytest.fixture
def judging(monkeypatch, tmp_path):
    """This process as the judge of a run with seed 5 and an empty answers file."""
    answers = tmp_path / "answers.json"
    answers.write_text("{}")
    monkeypatch.setattr(judge, "HANDOVER", judge.Handover(True, str(answers)))
    monkeypatch.setenv(SEED, "5")
    monkeypatch.setenv(GUARD_LOG, str(tmp_path / "guard.jsonl"))
    return tmp_path / "guard.jsonl"


def judged(nb):
    nb, _ = judge.JudgeGradeCells().preprocess(nb, {})
    return nb.cells[1].outputs


def test_a_grade_cell_asks_its_checks_in_order_with_their_options():
    imported = judge.course_imports(SETUP)
    assert judge.expected_asks(GRADE, imported) == [
        judge.Asked("autograder.chapters.global_limit.check_predicted_output", True, {}),
        judge.Asked("autograder.chapters.global_limit.check_predicted_output", False, {"streams": 3})]


def test_every_grade_cell_of_every_assignment_calls_only_declared_checks():
    from corpora.submissions import solution_notebook
    from corpora.learners import CHAPTERS
    for assignment in CHAPTERS:
        nb = nbformat.read(solution_notebook(assignment), 4)
        if assignment == "01_global_limit":
            assert judge.all_checks_declared(nb), assignment


def test_a_right_answer_on_the_example_passes_with_the_checks_own_line(judging):
    (output,) = judged(graded(record_of(right), source="check_predicted_output(predict_emitted, example=True)"))
    assert output.output_type == "stream" and output.text.startswith("✔ the emitted rows match")


def test_a_wrong_answer_gets_the_lesson_a_self_check_gives(judging):
    with pytest.raises(global_limit.CheckFailed) as self_check:
        global_limit.check_predicted_output(per_batch, example=True)
    (output,) = judged(graded(record_of(per_batch),
                              source="check_predicted_output(predict_emitted, example=True)"))
    assert output.output_type == "error" and output.ename == "CheckFailed"
    assert output.evalue == self_check.value.lesson()
    assert output.traceback == [self_check.value.shown()]


def test_an_error_of_the_learners_code_is_shown_where_it_happened(judging):
    def broken(sizes, limit):
        raise ZeroDivisionError("oops")
    (output,) = judged(graded(record_of(broken),
                              source="check_predicted_output(predict_emitted, example=True)"))
    assert output.ename == "CheckFailed" and "ZeroDivisionError: oops" in output.evalue


def test_a_record_for_other_options_or_another_check_scores_nothing(judging):
    forged = record_of(right)
    forged["options"] = {"streams": 0}
    (output,) = judged(graded(forged, source="check_predicted_output(predict_emitted, example=True)"))
    assert output.output_type == "error" and "not those of this grade cell" in output.evalue
    other = record_of(right)
    other["check"] = "autograder.chapters.global_limit.check_predicted_state"
    (output,) = judged(graded(other, source="check_predicted_output(predict_emitted, example=True)"))
    assert output.output_type == "error"


def test_a_record_of_other_streams_scores_nothing(judging):
    passed, lesson = judged(graded(record_of(right, example=True),
                                   record_of(right, example=False, seed=6, streams=3)))
    assert passed.output_type == "stream"
    assert lesson.ename == "CheckFailed" and "the cases your kernel answered" in lesson.evalue


def test_a_warning_of_the_learners_code_costs_nothing(judging):
    warning = new_output("stream", name="stderr", text="UserWarning: a note to myself\n")
    outputs = judged(graded(record_of(right), extra=[],
                            source="check_predicted_output(predict_emitted, example=True)"))
    nb = graded(record_of(right), source="check_predicted_output(predict_emitted, example=True)")
    nb.cells[1].outputs.insert(0, warning)
    shown, passed = judged(nb)
    assert (shown.name, shown.text) == ("stdout", "UserWarning: a note to myself\n")
    assert passed.text == outputs[0].text


def test_a_cell_without_its_records_scores_nothing(judging):
    outputs = judged(graded(record_of(right), extra=[new_output("stream", name="stdout",
                                                                text="✔ all good\n")]))
    assert outputs[-1].output_type == "error"
    assert "handed in no answers" in outputs[-1].evalue


def test_a_missing_recorded_answer_is_the_graders_fault(judging):
    outputs = judged(graded(record_of(right), record_of(right, example=False, streams=3)))
    assert outputs[-1].ename == "GraderFault"
    (event,) = [json.loads(line) for line in judging.read_text().splitlines()]
    assert event["event"] == "fault" and event["cell"] == "test_predict_emitted"


def test_a_judge_given_no_seed_names_the_graders_fault_rather_than_judge_on_another(
        judging, monkeypatch):
    monkeypatch.delenv(SEED)
    outputs = judged(graded(record_of(right)))
    assert outputs[-1].ename == "GraderFault" and "no seed" in outputs[-1].evalue
    (event,) = [json.loads(line) for line in judging.read_text().splitlines()]
    assert event["event"] == "fault" and event["cell"] == "test_predict_emitted"


def test_the_judges_answers_are_gone_once_it_has_judged(judging):
    from autograder.checks import mode
    judged(graded(record_of(right), source="check_predicted_output(predict_emitted, example=True)"))
    assert mode.current() is mode.Mode.SELF_CHECK


def test_a_check_asked_in_a_graded_kernel_hands_in_answers_and_no_verdict(monkeypatch, capsys):
    from autograder.checks import asking
    from autograder.contract import ASKING
    shown = []
    monkeypatch.setenv(ASKING, "1")
    monkeypatch.setattr(asking, "write_record",
                        lambda *args: shown.append(asking.make_record(*args)))
    global_limit.check_predicted_output(per_batch, example=True)   # wrong, yet no lesson here
    (record,) = shown
    assert record["answers"][0]["values"] == [per_batch(*global_limit.EXAMPLE_SIZES and
                                                        (global_limit.EXAMPLE_SIZES,
                                                         global_limit.EXAMPLE_LIMIT))]
    assert "✔" not in capsys.readouterr().out
    assert Case  # the record holds answers only: no expected value travels with it
    assert "emitted" not in json.dumps(record)

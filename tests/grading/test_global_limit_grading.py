"""Chapter 1's exercises, graded by real nbgrader.

One classroom of five learners hands in the assignment:

=====================  =============================================================
learner                what they handed in
=====================  =============================================================
``solution``           the instructor's solution                      -> full marks
``untouched``          the release exactly as learners receive it     -> zero
``per_batch``          believes the limit applies to each micro-batch -> loses tasks 1, 2
``row_per_record``     believes the state keeps a row per emitted row -> loses tasks 2, 3
``limit_then_filter``  limits the stream first, filters afterwards    -> loses task 4
``snooper``            takes tasks 1-3's answers from the check's frames and the
                       toolkit's memory (:mod:`corpora.learners.introspection`)
                                                                      -> loses tasks 1-3
``introspective``      right, with logging, warnings, inspect and tracebacks -> full marks
=====================  =============================================================
"""
import json

import pytest

import nbformat

from autograder import global_limit
from autograder.checks.asking import RECORD_TYPE

from autograder.grading import autograde
from corpora.submissions import (FULL_MARKS, LIMIT_THEN_FILTER, PER_BATCH, ROW_PER_RECORD,
                                      release_notebook, solution_notebook, write_submission)
from corpora.learners.introspection import (CHAPTER1, CHAPTER1_THROUGH_SPARK,
                                                  HONEST_CHAPTER1)

ASSIGNMENT = "01_global_limit"
FULL = FULL_MARKS[ASSIGNMENT]

@pytest.mark.slow
def test_a_classroom_is_graded_on_behaviour(tmp_path, class_records):
    course = tmp_path / "course"
    # On the session's one record of chapter 1's streams (tests/support/classroom_fixtures.py).
    handed_over = class_records.recorded(ASSIGNMENT)
    grades = autograde(ASSIGNMENT, {
        "solution": solution_notebook(ASSIGNMENT),
        "untouched": release_notebook(ASSIGNMENT),
        "per_batch": write_submission(ASSIGNMENT, PER_BATCH, tmp_path / "per_batch.ipynb"),
        "row_per_record": write_submission(ASSIGNMENT, ROW_PER_RECORD, tmp_path / "rpr.ipynb"),
        "limit_then_filter": write_submission(ASSIGNMENT, LIMIT_THEN_FILTER, tmp_path / "ltf.ipynb"),
        "snooper": write_submission(ASSIGNMENT, CHAPTER1, tmp_path / "snooper.ipynb"),
        "introspective": write_submission(ASSIGNMENT, HONEST_CHAPTER1, tmp_path / "intro.ipynb"),
        "disk_reader": write_submission(ASSIGNMENT, CHAPTER1_THROUGH_SPARK,
                                        tmp_path / "disk_reader.ipynb"),
    }, workdir=course, answers_of=handed_over, jobs=2)

    assert grades["solution"].points() == FULL
    assert grades["untouched"].points() == dict.fromkeys(FULL, 0)
    assert grades["per_batch"].points() == {**FULL, "test_predict_emitted": 0,
                                            "test_predict_state": 0}
    assert grades["row_per_record"].points() == {**FULL, "test_predict_state": 0,
                                                 "test_emitted_so_far": 0}
    assert grades["limit_then_filter"].points() == {**FULL, "test_first_clicks": 0}
    # Nothing in a graded kernel tells an answer: the check there only asks.
    assert grades["snooper"].points() == {**FULL, "test_predict_emitted": 0,
                                          "test_predict_state": 0, "test_emitted_so_far": 0}
    assert grades["introspective"].points() == FULL
    assert not grades["introspective"].flags
    # Nor does the grading machine's disk, which the learner's Spark reads: while learners'
    # kernels run, the answers are only in the grading command's memory.
    assert grades["disk_reader"].points() == {**FULL, "test_predict_emitted": 0,
                                              "test_predict_state": 0}

    # The grading command judged every check outside the kernels: the graded notebooks hold
    # its verdicts (a lesson, or the passed line), never a record of answers.
    graded = nbformat.read(course / "autograded" / "per_batch" / ASSIGNMENT
                           / f"{ASSIGNMENT}.ipynb", 4)
    outputs = {cell.metadata["nbgrader"]["grade_id"]: cell.outputs for cell in graded.cells
               if cell.get("metadata", {}).get("nbgrader", {}).get("grade")}
    assert not [o for cell in outputs.values() for o in cell if RECORD_TYPE in o.get("data", {})]
    (lesson,) = [o for o in outputs["test_predict_emitted"] if o.output_type == "error"]
    assert lesson.ename == "CheckFailed" and "rows emitted by this micro-batch" in lesson.evalue
    assert any("✔" in o.get("text", "") for o in outputs["test_first_clicks"])

    # The whole class was graded on one run's streams, and Spark answered them once: the
    # solution ran with the run's seed (here, or in the run whose record was handed over)
    # and recorded what the checks asked (tasks 1 and 2's
    # streams drawn from that seed, task 3's restarted query with its checkpoint after each
    # batch, task 4's reference query) for the learners' kernels.
    run = course / "spark-answers" / ASSIGNMENT
    seed = int((run / "seed").read_text())
    if handed_over:  # graded on that run's streams and answers, not on a seed of its own
        assert seed == int((handed_over / "seed").read_text())
        assert (run / "answers.json").read_text() == (handed_over / "answers.json").read_text()
    recorded = json.loads((run / "answers.json").read_text())
    assert {key.split()[0] for key in recorded} == {"global_limit.limit_run",
                                                    "global_limit.restarted_limit",
                                                    "global_limit.first_clicks"}
    for sizes, limit in global_limit.drawn_streams(seed, 2)[1]:
        assert f"global_limit.limit_run {json.dumps([sizes, limit])}" in recorded
    ((sizes, limit),) = global_limit.drawn_streams(seed, 1)[1]
    emitted = json.loads(recorded[f"global_limit.restarted_limit {json.dumps([sizes, limit])}"])
    assert len(emitted) == len(sizes)
    kept = sorted(p.parent.name for p in (run / "answers.checkpoints").glob("*/*/commits"))
    edges = sum(len(edge_sizes) for edge_sizes, _ in global_limit.EDGE_RESTARTS)
    assert len(kept) == len(sizes) + len(global_limit.EXAMPLE_SIZES) + edges  # one per batch

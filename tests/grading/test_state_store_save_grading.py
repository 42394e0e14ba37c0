"""Chapter 3's exercises, graded by real nbgrader.

One classroom of five learners hands in the assignment:

=======================  ==============================================================
learner                  what they handed in
=======================  ==============================================================
``solution``             the instructor's solution                      -> full marks
``untouched``            the release exactly as learners receive it     -> zero
``append_like_update``   believes Append emits every window a batch
                         updated, as Update does                        -> loses task 1
``no_no_data_batch``     forgets the no-data micro-batch when counting
                         rows, and writes an Update step that never
                         evicts a window                                -> loses tasks 2, 4
``snooper``              takes tasks 1-3's answers from the check's frames and the
                         toolkit's memory                               -> loses tasks 1-3
=======================  ==============================================================
"""
import nbformat
import pytest

from autograder.grading import autograde
from corpora.learners.introspection import CHAPTER3
from corpora.submissions import (FULL_MARKS, release_notebook, solution_notebook,
                                      write_submission)

ASSIGNMENT = "03_state_store_save"
FULL = FULL_MARKS[ASSIGNMENT]


def solution_source(grade_id: str) -> str:
    notebook = nbformat.read(solution_notebook(ASSIGNMENT), 4)
    (cell,) = [c for c in notebook.cells
               if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id]
    return cell.source


# Task 1's cell also defines simulate(), which task 2 uses: keep it, change the answer.
APPEND_LIKE_UPDATE = {
    "predict_output": solution_source("predict_output") + "\n\n"
    "def predict_output(batches, mode, delay, size=10):\n"
    "    # Append 'emits every updated window', like Update\n"
    "    mode = 'update' if mode == 'append' else mode\n"
    "    return [output for output, _ in simulate(batches, mode, delay, size)]\n",
}

NO_NO_DATA_BATCH = {
    "predict_metrics": """\
def predict_metrics(batches, mode, delay, size=10):
    # one entry per add_batch: evictions wait for the next batch with events
    state, watermark, facts = {}, None, []
    for events in batches:
        def late(start):
            return mode != "complete" and watermark is not None and start + size <= watermark
        groups = {}
        for event in events:
            groups[event - event % size] = groups.get(event - event % size, 0) + 1
        kept = [start for start in groups if not late(start)]
        for start in kept:
            state[start] = state.get(start, 0) + groups[start]
        expired = [start for start in state if late(start)]
        for start in expired:
            del state[start]
        facts.append({"numRowsTotal": len(state), "numRowsUpdated": len(kept),
                      "numRowsRemoved": len(expired),
                      "numRowsDroppedByWatermark": len(groups) - len(kept)})
        if events:
            moved = max(events) - delay
            watermark = moved if watermark is None else max(watermark, moved)
    return facts
""",
    "update_step":
        "def update_step(state, events, watermark, size):\n"
        "    # drops late groups, but keeps windows behind the watermark forever\n"
        "    new_state, output, dropped = dict(state), [], 0\n"
        "    groups = {}\n"
        "    for event in events:\n"
        "        groups[event - event % size] = groups.get(event - event % size, 0) + 1\n"
        "    for start, n in sorted(groups.items()):\n"
        "        if watermark is not None and start + size <= watermark:\n"
        "            dropped += 1\n"
        "            continue\n"
        "        new_state[start] = new_state.get(start, 0) + n\n"
        "        output.append([start, new_state[start]])\n"
        "    return output, new_state, {'numRowsTotal': len(new_state),\n"
        "                               'numRowsUpdated': len(output), 'numRowsRemoved': 0,\n"
        "                               'numRowsDroppedByWatermark': dropped}\n",
}


@pytest.mark.slow
def test_a_classroom_is_graded_on_behaviour(tmp_path):
    grades = autograde(ASSIGNMENT, {
        "solution": solution_notebook(ASSIGNMENT),
        "untouched": release_notebook(ASSIGNMENT),
        "append_like_update": write_submission(ASSIGNMENT, APPEND_LIKE_UPDATE,
                                               tmp_path / "append_like_update.ipynb"),
        "no_no_data_batch": write_submission(ASSIGNMENT, NO_NO_DATA_BATCH,
                                             tmp_path / "no_no_data_batch.ipynb"),
        "snooper": write_submission(ASSIGNMENT, CHAPTER3, tmp_path / "snooper.ipynb"),
    }, jobs=2)

    assert grades["solution"].points() == FULL
    assert grades["untouched"].points() == dict.fromkeys(FULL, 0)
    assert grades["append_like_update"].points() == {**FULL, "test_predict_output": 0}
    assert grades["no_no_data_batch"].points() == {**FULL, "test_predict_metrics": 0,
                                                   "test_update_step": 0}
    # Nothing in a graded kernel tells an answer: the checks there only ask.
    assert grades["snooper"].points() == {**FULL, "test_predict_output": 0,
                                          "test_predict_metrics": 0, "test_smallest_delay": 0}

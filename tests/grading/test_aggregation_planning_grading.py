"""Chapter 2's exercises, graded by real nbgrader.

One classroom of five learners hands in the assignment:

=====================  =================================================================
learner                what they handed in
=====================  =================================================================
``solution``           the instructor's solution                        -> full marks
``untouched``          the release exactly as learners receive it       -> zero
``save_then_restore``  believes save writes the batch's own counts and restore reads them
                       back afterwards, so the state holds only the last micro-batch;
                       it also reads the hash aggregates in explain()'s order, sink first
                                                                        -> loses tasks 1, 2
``one_store``          believes a query has one state store, whatever the partitions;
                       and groups by fixed windows instead of sessions  -> loses tasks 3, 4
``snooper``            takes tasks 2 and 3's answers from the check's frames and the
                       toolkit's memory                                 -> loses tasks 2, 3
=====================  =================================================================
"""
import pytest

from autograder.grading import autograde
from corpora.learners.introspection import CHAPTER2
from corpora.submissions import (FULL_MARKS, release_notebook, solution_notebook,
                                      write_submission)

ASSIGNMENT = "02_aggregation_planning"
FULL = FULL_MARKS[ASSIGNMENT]

SAVE_THEN_RESTORE = {
    "aggregate_modes": "def aggregate_modes(plan):\n"
                       "    modes = []\n"
                       "    for node in plan.walk():  # explain()'s order: sink first\n"
                       "        if node.name == 'HashAggregate':\n"
                       "            f = node.functions[0]\n"
                       "            modes.append('Partial' if f.startswith('partial_') else\n"
                       "                         'PartialMerge' if f.startswith('merge_') else 'Final')\n"
                       "    return modes\n",
    "predict_counts": "from collections import Counter\n"
                      "def predict_counts(batches):\n"
                      "    answer, total = [], Counter()\n"
                      "    for keys in batches:\n"
                      "        total.update(keys)\n"
                      "        answer.append({'output': {k: total[k] for k in set(keys)},\n"
                      "                       'state': dict(Counter(keys))})\n"
                      "    return answer\n",
}
ONE_STORE = {
    "predict_metrics": "def predict_metrics(batches, partitions):\n"
                       "    seen, answer = set(), []\n"
                       "    for keys in batches:\n"
                       "        seen |= set(keys)\n"
                       "        answer.append({'numRowsTotal': len(seen),\n"
                       "                       'numRowsUpdated': len(set(keys)),\n"
                       "                       'numStateStoreInstances': 1})\n"
                       "    return answer\n",
    "sessions": "def sessions(events, gap_seconds):\n"
                "    return (events.withWatermark('ts', '10 seconds')\n"
                "                  .groupBy('user', F.window('ts', f'{gap_seconds} seconds')\n"
                "                                    .alias('session_window'))\n"
                "                  .agg(F.count('*').alias('events'), F.sum('v').alias('total')))\n",
}


@pytest.mark.slow
def test_a_classroom_is_graded_on_behaviour(tmp_path):
    grades = autograde(ASSIGNMENT, {
        "solution": solution_notebook(ASSIGNMENT),
        "untouched": release_notebook(ASSIGNMENT),
        "save_then_restore": write_submission(ASSIGNMENT, SAVE_THEN_RESTORE,
                                              tmp_path / "save_then_restore.ipynb"),
        "one_store": write_submission(ASSIGNMENT, ONE_STORE, tmp_path / "one_store.ipynb"),
        "snooper": write_submission(ASSIGNMENT, CHAPTER2, tmp_path / "snooper.ipynb"),
    }, jobs=2)

    assert grades["solution"].points() == FULL
    assert grades["untouched"].points() == dict.fromkeys(FULL, 0)
    assert grades["save_then_restore"].points() == {**FULL, "test_aggregate_modes": 0,
                                                    "test_predict_counts": 0}
    assert grades["one_store"].points() == {**FULL, "test_predict_metrics": 0,
                                            "test_sessions": 0}
    # Nothing in a graded kernel tells an answer: the checks there only ask.
    assert grades["snooper"].points() == {**FULL, "test_predict_counts": 0,
                                          "test_predict_metrics": 0}

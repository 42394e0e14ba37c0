"""Build learner submissions for the grading tests.

A submission is the instructor's solution notebook with some solution cells rewritten:
either into what the untouched release holds, or into a plausible wrong answer. Writing
them this way keeps every test submission next to the one answer it differs from.
"""
from __future__ import annotations

import copy
from pathlib import Path

import nbformat

from autograder.grading import REPOSITORY


#: Each assignment's tasks and the points a right answer scores (its grade cells' points).
FULL_MARKS = {
    "01_global_limit": {"test_predict_emitted": 2, "test_predict_state": 3,
                        "test_emitted_so_far": 2, "test_first_clicks": 3},
    "02_aggregation_planning": {"test_aggregate_modes": 2, "test_predict_counts": 3,
                                "test_predict_metrics": 2, "test_sessions": 3},
    "03_state_store_save": {"test_predict_output": 3, "test_predict_metrics": 3,
                            "test_smallest_delay": 2, "test_update_step": 2},
    "04_transform_with_state": {"test_session_tracker": 3, "test_ttl_dedup": 3,
                                "test_starting_counts": 2, "test_first_n": 2},
    "05_state_store": {"test_predict_files": 3, "test_counts_at": 2, "test_runs_again": 2,
                       "test_restart_error": 3},
    "06_stream_stream_join": {"test_predict_buffered": 3, "test_predict_unmatched": 3,
                              "test_rows_per_key": 2, "test_accepted": 2},
}


def solution_notebook(assignment: str) -> Path:
    (path,) = (REPOSITORY / "solutions" / assignment).glob("*.ipynb")
    return path


def release_notebook(assignment: str) -> Path:
    (path,) = (REPOSITORY / "exercises" / assignment).glob("*.ipynb")
    return path


def solved_release(assignment: str) -> nbformat.NotebookNode:
    """What a learner who solved every task has: the release notebook (self-checks on the
    worked example, no hidden tests) with each solution cell as the instructor wrote it."""
    solution = {cell.metadata["nbgrader"]["grade_id"]: cell.source
                for cell in nbformat.read(solution_notebook(assignment), as_version=4).cells
                if cell.get("metadata", {}).get("nbgrader", {}).get("solution")}
    notebook = nbformat.read(release_notebook(assignment), as_version=4)
    for cell in notebook.cells:
        grading = cell.get("metadata", {}).get("nbgrader", {})
        if grading.get("solution"):
            cell.source = solution[grading["grade_id"]]
    return notebook


def write_submission(assignment: str, answers: dict[str, str], target: Path) -> Path:
    """The solution notebook with the cells named in ``answers`` (by nbgrader grade_id)
    replaced by the given source. Raises if a grade_id does not exist."""
    notebook = nbformat.read(solution_notebook(assignment), as_version=4)
    notebook = copy.deepcopy(notebook)
    found = set()
    for cell in notebook.cells:
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if grade_id in answers:
            cell.source = answers[grade_id]
            found.add(grade_id)
    missing = set(answers) - found
    if missing:
        raise KeyError(f"no cells with grade_id {sorted(missing)} in {assignment}")
    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, target)
    return target


# -- chapter 1's classic mistakes, as solution cells (the grading test and the benchmark's class)
PER_BATCH = {
    "predict_emitted": "def predict_emitted(sizes, limit):\n"
                       "    return [min(size, limit) for size in sizes]\n",
    "predict_state": "def predict_state(sizes, limit):\n"
                     "    return [{'numRowsTotal': 1 if size else 0,\n"
                     "             'numRowsUpdated': 1 if size else 0,\n"
                     "             'count': min(size, limit) if size else None} for size in sizes]\n",
}
ROW_PER_RECORD = {
    "predict_state": "def predict_state(sizes, limit):\n"
                     "    facts, so_far = [], 0\n"
                     "    for size in sizes:\n"
                     "        now = min(size, limit - so_far)\n"
                     "        so_far += now\n"
                     "        facts.append({'numRowsTotal': so_far, 'numRowsUpdated': now,\n"
                     "                      'count': so_far or None})\n"
                     "    return facts\n",
    "emitted_so_far": "def emitted_so_far(spark, checkpoint):\n"
                      "    return len(read_state(spark, checkpoint))\n",
}
LIMIT_THEN_FILTER = {
    "first_clicks": "from pyspark.sql import functions as F\n"
                    "def first_clicks(events, n):\n"
                    "    return events.limit(n).where(F.col('kind') == 'click')\n",
}

"""Spark's answers to the worked examples, asked afresh (what ``make known-answers`` writes
into ``autograder/checks/known_answers.json``, and what the test holding that file compares it with).
"""
from __future__ import annotations

import contextlib
import io
from typing import Any

from autograder.checks.answers import asking_spark
from corpora.submissions import solved_release

#: The assignments whose self-checks ask Spark questions with known answers (chapter 4's:
#: the course's processors' runs on the worked examples).
ASSIGNMENTS = ("01_global_limit", "02_aggregation_planning", "03_state_store_save",
               "04_transform_with_state", "05_state_store", "06_stream_stream_join")


def worked_example_answers(assignment: str) -> dict[str, Any]:
    """Run a solved release's cells, as a learner who solved every task would, asking Spark
    every question afresh; each question's key and Spark's answer."""
    namespace: dict[str, Any] = {"__name__": f"solved_{assignment}"}
    with asking_spark() as asked, contextlib.redirect_stdout(io.StringIO()):
        for cell in solved_release(assignment).cells:
            if cell.cell_type == "code":
                exec(compile(cell.source, f"<{assignment}>", "exec"), namespace)
    return asked


def all_worked_example_answers() -> dict[str, Any]:
    answers: dict[str, Any] = {}
    for assignment in ASSIGNMENTS:
        answers.update(worked_example_answers(assignment))
    return dict(sorted(answers.items()))

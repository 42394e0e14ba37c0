"""Record Spark's answers to the worked examples into autograder/checks/known_answers.json.

    make known-answers        (or: .venv/bin/python -m scripts.record_known_answers)

Runs each solved release (corpora/known_answers.py) asking Spark every question
afresh, and writes what it answered. Run it after changing a chapter's worked example or
the query behind a check, or after moving to another Spark: the test
tests/toolkit/test_known_answers.py fails until the file says what Spark says.
"""
from __future__ import annotations

import json
from pathlib import Path

from autograder import course_session
from autograder.checks.answers import KNOWN_ANSWERS_FILE
from corpora.known_answers import all_worked_example_answers

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    course_session()
    answers = all_worked_example_answers()
    KNOWN_ANSWERS_FILE.write_text(json.dumps(answers, indent=1, sort_keys=True) + "\n")
    print(f"{len(answers)} answers written to {KNOWN_ANSWERS_FILE.relative_to(ROOT)}")


if __name__ == "__main__":
    main()

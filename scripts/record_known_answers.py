"""Record Spark's answers to the worked examples into autograder/known_answers.json.

    make known-answers        (or: .venv/bin/python scripts/record_known_answers.py)

Runs each solved release (tests/support/known_answers.py) asking Spark every question
afresh, and writes what it answered. Run it after changing a chapter's worked example or
the query behind a check, or after moving to another Spark: the test
tests/toolkit/test_known_answers.py fails until the file says what Spark says.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from autograder import course_session  # noqa: E402
from autograder.answers import KNOWN_ANSWERS_FILE  # noqa: E402
from tests.support.known_answers import all_worked_example_answers  # noqa: E402


def main() -> None:
    course_session()
    answers = all_worked_example_answers()
    KNOWN_ANSWERS_FILE.write_text(json.dumps(answers, indent=1, sort_keys=True) + "\n")
    print(f"{len(answers)} answers written to {KNOWN_ANSWERS_FILE.relative_to(ROOT)}")


if __name__ == "__main__":
    main()

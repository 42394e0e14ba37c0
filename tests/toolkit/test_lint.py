"""The course's Python passes ruff, with the rules pyproject.toml's ``[tool.ruff]`` chooses.

A finding fails the test with ruff's own lines (file:line:column, rule, message), so that
``make test`` catches an unused import or a broad ``except`` that does not say why. A
finding ruff is right not to like but the code needs gets a ``# noqa: RULE - why`` on its
line; ruff itself (RUF100) reports a ``noqa`` that no longer silences anything.
"""
from __future__ import annotations

import subprocess
import sys

import pytest

from autograder.grading import REPOSITORY

#: Every tracked Python file of the course but the notebooks' own code.
LINTED = ["autograder", "corpora", "scripts", "tests", "book/_ext", "nbgrader_config.py"]


def test_the_course_python_passes_ruff():
    # No cache: the test leaves nothing behind in the checkout.
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "concise", *LINTED],
        cwd=REPOSITORY, capture_output=True, text=True, timeout=120)
    if result.returncode != 0:
        pytest.fail(f"`ruff check {' '.join(LINTED)}` found:\n{result.stdout}{result.stderr}",
                    pytrace=False)

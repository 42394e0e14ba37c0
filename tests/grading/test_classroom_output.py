"""What the grading command prints, without Spark: its progress and its summary.

In a terminal the progress is a live bar and the summary a coloured table (rich). Anywhere
else (a log file, CI, a pipe) both must read as plain text: one line per finished notebook,
one line per learner, no carriage return redrawing a line, no colour codes.
"""
import io
import re

import pytest
from rich.console import Console

from autograder.grading import GRADED, GRADER_FAULT, CellScore, NotebookGrade, summary_table
from autograder.grading.cli import Progress
from autograder.grading.results import summary

ASSIGNMENT = "01_global_limit"
ESCAPE = "\x1b"
LONG_DETAIL = "the Spark Connect server stopped while this notebook was graded " * 3
CLASS = {
    "ann": NotebookGrade("ann", {"test_predict_emitted": CellScore(2, 2)}),
    "bob": NotebookGrade("bob", {"test_predict_emitted": CellScore(0, 2)},
                         flags=["cell 3: uses sqlite3"]),
    "cid": NotebookGrade("cid", {}, GRADER_FAULT, detail=LONG_DETAIL),
}


@pytest.fixture(autouse=True)
def no_terminal_forced(monkeypatch):
    """The tests decide what is a terminal, not the environment they run in."""
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "COLUMNS"):
        monkeypatch.delenv(name, raising=False)


def grade_the_class(console: Console) -> None:
    with Progress(console) as progress:
        progress.start(len(CLASS), skipped=2)
        progress.note("01_global_limit: Spark's answers recorded")
        for grade in CLASS.values():
            progress.advance(ASSIGNMENT, grade)


def test_a_log_gets_one_plain_line_per_finished_notebook():
    log = io.StringIO()  # not a terminal, as a file or a pipe
    grade_the_class(Console(file=log))
    text = log.getvalue()
    assert "\r" not in text and ESCAPE not in text
    finished = [line for line in text.splitlines() if re.match(r"\d+/3 01_global_limit/", line)]
    assert [line.split()[1] for line in finished] == [
        "01_global_limit/ann:", "01_global_limit/bob:", "01_global_limit/cid:"]
    assert finished[0].startswith("1/3 01_global_limit/ann: graded, 2/2 points")
    assert "flagged: cell 3: uses sqlite3" in finished[1]
    assert finished[2].endswith("2 to look at)")  # bob's flag and cid's outcome
    assert "2 submission(s) already graded: kept" in text
    assert "01_global_limit: Spark's answers recorded" in text


def test_a_terminal_gets_a_bar_drawn_again_in_place():
    screen = io.StringIO()
    grade_the_class(Console(file=screen, force_terminal=True, width=120))
    text = screen.getvalue()
    assert "\r" in text and ESCAPE in text
    assert "3/3" in text and "2 to look at" in text
    # The notes are printed above the bar, whole.
    assert "01_global_limit: Spark's answers recorded\n" in text


def test_the_plain_summary_has_one_line_per_learner_and_no_colour():
    table = summary_table({ASSIGNMENT: CLASS})
    assert "\r" not in table and ESCAPE not in table
    rows = {line.split()[0]: line for line in table.splitlines() if line.split()[:1] in
            (["ann"], ["bob"], ["cid"])}
    assert rows["ann"].split()[1:4] == ["2/2", "2", GRADED]
    assert "cell 3: uses sqlite3" in rows["bob"]
    assert LONG_DETAIL.strip() in rows["cid"]  # a long outcome is not folded
    assert "2 graded, 1 flagged for cheating (bob), 0 not run to the end (none)" in table


def test_the_summary_in_a_terminal_is_a_coloured_table():
    screen = io.StringIO()
    Console(file=screen, force_terminal=True, width=100).print(summary({ASSIGNMENT: CLASS}))
    text = screen.getvalue()
    assert ESCAPE in text and "predict_emitted" in text
    assert "1 NOT graded because of the grader's own fault" in text

"""The tree says why, not when: no dates, issue numbers or accounts of who did what when.

Comments, docstrings and the book explain the code as it is, in the present tense; who
changed what, when and on which issue belongs to git's history. The test reads every
tracked file of the kinds a reader meets (the code, the tests, the scripts, the build's
configuration, the lab's, the book's pages and their extension, scripts and styles, the
notebooks) and fails with ``file:line`` for each line that reads like history:

* a calendar date (a year from 2000 on, month and day, dashes between);
* this project's issue or pull request numbers: "issue 12", "PR #3", a bare "(#12)";
* a work session or stop by number, or an earlier or later one;
* an account of a day: earlier today, earlier that day, yesterday, last night;
* a commit of this repository, by its hash (whole or abbreviated);
* a timing history: "32 s -> 17 s".

What is not history, and why:

* A timestamp, a date with its time to the second (ISO ``T``, a space, or nbgrader's
  dashes): the event times the streams run on are data.
* Another project's issue, written ``owner/repository#number``: why a workaround exists
  is the upstream bug, and the name says whose it is. A URL (Spark's JIRA at
  ``issues.apache.org``, a GitHub issue's address) is left alone as well.
* Files that hold data rather than prose: the recorded answers of Spark (JSON, whose
  timestamps are what Spark printed), ``requirements.lock`` (generated), ``LICENSE``
  (its years are the licence's), and ``benchmarks/`` (records are dated on purpose: the
  tables in ``docs/`` say which script's records they come from, not which day).
* This test itself: its examples are what it looks for.
"""
from __future__ import annotations

import bisect
import re
import subprocess
from fnmatch import fnmatch

import pytest

from autograder.grading import REPOSITORY

#: The tracked files the test reads (``fnmatch`` patterns; ``*`` also crosses ``/``).
READ = [
    "autograder/*", "tests/*", "scripts/*", "lab/*", ".ci/*",
    "Makefile", "pyproject.toml", "requirements.txt", "nbgrader_config.py",
    "README.md", "docs/*.md",
    "_config.yml", "_toc.yml",
    "book/*.md", "book/_ext/*", "book/_static/*.js", "book/_static/*.css",
    "book/_templates/*", "exercises/*.ipynb", "solutions/*.ipynb",
]
#: Left out: Spark's recorded answers (their timestamps are Spark's output), and this file,
#: whose examples are what it looks for.
LEFT_OUT = ["autograder/checks/known_answers.json", "tests/support/fixed_answers.json",
            "tests/toolkit/test_no_history_in_the_tree.py"]

_TIMESTAMP_TAIL = r"(?:[T ]\d\d:\d\d:\d\d|-\d\d-\d\d-\d\d)"
#: What reads like history, by name.
HISTORY = {
    "a date": re.compile(rf"\b20\d\d-[01]\d-[0-3]\d\b(?!{_TIMESTAMP_TAIL})"),
    "an issue number": re.compile(
        r"\b(?:issues?|PRs?|pull requests?|tickets?)\s+#?\d+", re.IGNORECASE),
    "a bare issue number": re.compile(r"(?:^|(?<=[\s(\[]))#\d{1,5}\b(?![\w-])"),
    "a work session": re.compile(
        r"\b(?:sessions?|stops?) \d+\b(?!\.\d| ?(?:s|ms|min)\b)"
        r"|\b(?:last|previous|earlier|a later|the next) session\b", re.IGNORECASE),
    "an account of a day": re.compile(
        r"\bearlier (?:today|that day|this week)\b|\blater that (?:day|night)\b"
        r"|\byesterday\b|\blast night\b|\bthis morning\b", re.IGNORECASE),
    "a timing history": re.compile(
        r"\b\d+(?:\.\d+)? ?(?:s|ms|min|MB|%)? ?(?:->|→) ?\d+(?:\.\d+)? ?(?:s|ms|min|MB|%)"),
}
#: A hexadecimal word long enough to name a commit.
_HEX_WORD = re.compile(r"\b[0-9a-f]{7,40}\b")


def tracked_files() -> list[str]:
    listed = subprocess.run(["git", "ls-files"], cwd=REPOSITORY, capture_output=True,
                            text=True, check=True).stdout.splitlines()
    return [path for path in listed
            if any(fnmatch(path, pattern) for pattern in READ) and path not in LEFT_OUT]


def commits() -> list[str]:
    """Every commit of the repository, sorted (none in a checkout without history)."""
    listed = subprocess.run(["git", "rev-list", "--all"], cwd=REPOSITORY,
                            capture_output=True, text=True)
    return sorted(listed.stdout.split())


def names_a_commit(word: str, known: list[str]) -> bool:
    """Whether ``word`` is (the start of) a commit's hash. A word with no letter or no digit
    is a number or a word, not a hash someone copied."""
    if not (re.search(r"[a-f]", word) and re.search(r"\d", word)):
        return False
    at = bisect.bisect_left(known, word)
    return at < len(known) and known[at].startswith(word)


def history_in(path: str, known_commits: list[str]) -> list[str]:
    """``path:line: what: the line`` for each line of ``path`` that reads like history."""
    try:
        text = (REPOSITORY / path).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return []   # a picture or another binary file: no prose
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        kinds = [kind for kind, pattern in HISTORY.items() if pattern.search(line)]
        if any(names_a_commit(word, known_commits) for word in _HEX_WORD.findall(line)):
            kinds.append("a commit")
        if kinds:
            found.append(f"{path}:{number}: {', '.join(kinds)}: {line.strip()[:120]}")
    return found


def test_the_patterns_tell_history_from_data():
    assert HISTORY["a date"].search("measured on 2026-11-26")
    assert not HISTORY["a date"].search('("a", "2026-01-01T00:00:03")')
    assert not HISTORY["a date"].search("attempt_2026-11-20-15-00-00_notebook")
    assert HISTORY["an issue number"].search("fewer batches (issue 34)")
    assert HISTORY["a bare issue number"].search("fixed (#12)")
    assert not HISTORY["a bare issue number"].search("a bug upstream (jupyter/nbgrader#1083)")
    assert not HISTORY["a bare issue number"].search('HashAggregate(keys=[user#1]), color "#444444"')
    assert HISTORY["a timing history"].search("chapter 1 32.0 s -> 17.5 s")
    assert HISTORY["a timing history"].search("a fresh session 4.2 \u2192 3.3 s")
    assert not HISTORY["a work session"].search("a fresh session 4.2 s")
    assert HISTORY["a work session"].search("measured in session 12")
    assert names_a_commit("04f6f28", ["04f6f28" + "a" * 33])
    assert not names_a_commit("1704110", ["1704110" + "a" * 33])


def test_no_file_of_the_tree_holds_history():
    files = tracked_files()
    assert "autograder/toolkit/session.py" in files and "book/intro.md" in files
    known = commits()
    found = [line for path in files for line in history_in(path, known)]
    if found:
        pytest.fail("Say why, in the present tense; leave when and who to git:\n"
                    + "\n".join(found), pytrace=False)

"""A graded submission written down: the record a run resumes from, sealed by the command.

Each graded notebook leaves ``grading/<assignment>/<learner>.json`` in the course folder:
the digest of the notebook graded, the outcome, each grade cell's points, the flags. A run
that finds a record for an unchanged notebook keeps it instead of grading again, and
``merge`` gathers the records of several machines; so a record is trusted only if the
command wrote it and the gradebook still agrees with it:

* the record carries a **seal**, an HMAC-SHA256 of its content under the course folder's
  own key (``grading/.record-key``: random, made once, readable by the instructor's user
  alone). A record edited by anybody else, by hand or by a program, no longer matches it;
* the points it holds must be the points the gradebook holds for the learner.

A record that fails either is named and graded again, never kept. (A learner's code cannot
reach either file while it runs: :mod:`.sandbox`. The seal answers whoever else can.)
"""
from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from pathlib import Path

from .course import GradingCourse, file_digest
from .results import NotebookGrade

#: The field a record's seal is kept in.
SEAL = "seal"
#: The course folder's key, under ``grading/``.
KEY_FILE = ".record-key"


def course_key(root: Path) -> bytes:
    """The record key of the course folder at ``root``, made on first use (mode 0600)."""
    path = Path(root) / "grading" / KEY_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_bytes()
    with os.fdopen(descriptor, "wb") as out:
        out.write(secrets.token_bytes(32))
    return path.read_bytes()


def seal(record: dict, key: bytes) -> str:
    """The seal of ``record`` (its own seal left out) under ``key``."""
    content = json.dumps({k: v for k, v in record.items() if k != SEAL}, sort_keys=True)
    return hmac.new(key, content.encode(), hashlib.sha256).hexdigest()


def write(course: GradingCourse, assignment: str, student: str, grade: NotebookGrade, *,
          notebook: Path | None = None, digest: str | None = None) -> None:
    """Write the record of a graded ``notebook`` (or of the notebook whose ``digest`` a
    shard's record gave), whole or not at all, once the gradebook holds its grade."""
    ledger = course.ledger(assignment, student)
    ledger.parent.mkdir(parents=True, exist_ok=True)
    record = {"submission_sha256": digest or file_digest(notebook), **grade.to_json()}
    record[SEAL] = seal(record, course_key(course.root))
    partial = ledger.with_suffix(".tmp")
    partial.write_text(json.dumps(record, indent=1))
    partial.replace(ledger)


def sealed_record(path: Path, key: bytes) -> tuple[dict | None, str]:
    """The record at ``path`` if its seal matches under ``key``, else None and why not (the
    empty string when there is no record)."""
    try:
        record = json.loads(Path(path).read_text())
    except FileNotFoundError:
        return None, ""
    except (OSError, ValueError):
        return None, "its grading record is not one the command wrote (unreadable)"
    if not isinstance(record, dict) or not hmac.compare_digest(str(record.get(SEAL, "")),
                                                               seal(record, key)):
        return None, "its grading record was changed outside the command (its seal does not match)"
    return record, ""


def grade_of(record: dict) -> NotebookGrade:
    """The grade a record holds."""
    return NotebookGrade.from_json({k: v for k, v in record.items()
                                    if k not in (SEAL, "submission_sha256")})


def read(course: GradingCourse, assignment: str, student: str) -> tuple[NotebookGrade | None, str]:
    """The grade a record of this course holds if it can be trusted (sealed by the command,
    and the gradebook holds the same points), else None and why not (the empty string when
    there is no record)."""
    record, distrust = sealed_record(course.ledger(assignment, student), course_key(course.root))
    if record is None:
        return None, distrust
    grade = grade_of(record)
    try:
        held = course.read_grade(assignment, student, grade.outcome).cells
    except Exception:  # noqa: BLE001 - nbgrader's MissingEntry, a gradebook without it
        held = None
    if held != grade.cells:
        return None, "the gradebook's points for it differ from its grading record"
    return grade, ""


def graded_notebook(course: GradingCourse, assignment: str, student: str) -> str | None:
    """The digest of the notebook a record says was graded (None without a record)."""
    try:
        return json.loads(course.ledger(assignment, student).read_text()).get("submission_sha256")
    except (OSError, ValueError, AttributeError):
        return None

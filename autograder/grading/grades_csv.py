"""The class's CSV, ``grades.csv``: nbgrader's columns, the command's points.

``nbgrader export`` reads the points from the gradebook, a file that anybody with the
instructor's rights can change after a run. This CSV takes them from the grading records
instead (:mod:`.ledger`): each is checked against its seal and against the gradebook, as when
a run resumes. Who the learners and assignments are, their names, due dates, submission
times and late penalties come from the gradebook, as nbgrader's export takes them, so that
for a class the command graded the file is the one ``nbgrader export`` would write. A
submission whose record cannot be trusted gets a row with no points, and the command names
it: grading again writes it anew.
"""
from __future__ import annotations

from pathlib import Path

from . import ledger
from .course import GradingCourse

#: nbgrader's export's columns, in its order.
COLUMNS = ("assignment", "duedate", "timestamp", "student_id", "last_name", "first_name",
           "email", "raw_score", "late_submission_penalty", "score", "max_score")


def _text(value) -> str:
    """A value as nbgrader's export writes it."""
    return "" if value is None else str(value)


def write_grades_csv(course: GradingCourse, path: Path | None = None) -> list[str]:
    """Write the CSV of every assignment and learner of ``course``'s gradebook (to
    ``path``, by default ``grades.csv`` in the course folder), whole or not at all; return
    a note for each submission written without points, and why."""
    from nbgrader.api import MissingEntry

    path = Path(path or course.root / "grades.csv")
    rows, submitted = [], []
    with course.gradebook() as gradebook:
        for assignment in gradebook.assignments:
            for student in gradebook.students:
                row = {"assignment": assignment.name, "duedate": assignment.duedate,
                       "student_id": student.id, "last_name": student.last_name,
                       "first_name": student.first_name, "email": student.email,
                       "max_score": assignment.max_score}
                try:
                    submission = gradebook.find_submission(assignment.name, student.id)
                except MissingEntry:  # nothing handed in: zero, as nbgrader says
                    row.update(timestamp="", raw_score=0.0, late_submission_penalty=0.0,
                               score=0.0)
                else:
                    row.update(timestamp=submission.timestamp,
                               late_submission_penalty=submission.late_submission_penalty)
                    submitted.append(row)
                rows.append(row)
    notes = []
    for row in submitted:  # the gradebook closed: reading a record opens it again
        grade, distrust = ledger.read(course, row["assignment"], row["student_id"])
        if grade is None:
            row.update(raw_score=None, score=None)
            notes.append(f"{row['assignment']}/{row['student_id']}: not in the CSV's points: "
                         f"{distrust or 'the command has no record of grading it'}; "
                         "grade it again")
            continue
        penalty = row["late_submission_penalty"] or 0.0
        row.update(raw_score=float(grade.score), score=max(0.0, float(grade.score) - penalty))
    partial = path.with_name(path.name + ".tmp")
    partial.write_text("".join(",".join(_text(row[key]) for key in COLUMNS) + "\n"
                               for row in [dict(zip(COLUMNS, COLUMNS)), *rows]))
    partial.replace(path)
    return notes

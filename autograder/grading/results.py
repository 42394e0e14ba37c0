"""What grading one notebook ends with: its points per cell, its outcome, its flags."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

#: How grading a notebook ended. Anything but GRADED left zeros in the gradebook.
GRADED = "graded"
NOT_A_NOTEBOOK = "not a notebook"
TIMED_OUT = "out of time"
KERNEL_DIED = "kernel died"
DISK_FULL = "disk limit"
FAILED = "grading failed"
#: The grader's own fault (its Spark died, the disk filled up, a bug in the course's code):
#: nothing was decided about the learner's work, no grade is kept, and the notebook is
#: graded again (once in the same run; a later run of the command grades it again too).
GRADER_FAULT = "grader's fault, to regrade"


@dataclass
class CellScore:
    """The points one graded cell gave one learner."""

    score: float
    max_score: float


@dataclass
class NotebookGrade:
    """One learner's graded notebook: points per grade cell (by nbgrader ``grade_id``),
    what happened (``outcome``), and what the guards flagged."""

    student: str
    cells: dict[str, CellScore]
    outcome: str = GRADED
    flags: list[str] = field(default_factory=list)
    detail: str = ""
    seconds: float = 0.0

    @property
    def score(self) -> float:
        return sum(cell.score for cell in self.cells.values())

    @property
    def max_score(self) -> float:
        return sum(cell.max_score for cell in self.cells.values())

    def points(self) -> dict[str, float]:
        return {grade_id: cell.score for grade_id, cell in self.cells.items()}

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> "NotebookGrade":
        cells = {k: CellScore(**v) for k, v in data.pop("cells").items()}
        return cls(cells=cells, **data)


def summary_table(results: dict[str, dict[str, NotebookGrade]]) -> str:
    """The table the grading command prints: one line per learner, per assignment."""
    lines = []
    for assignment, grades in results.items():
        ids = sorted({g for grade in grades.values() for g in grade.cells}, key=str)
        lines.append(f"\n{assignment}")
        header = ["learner", "points", *[g.removeprefix("test_") for g in ids], "outcome", "flags"]
        rows = []
        for student in sorted(grades):
            grade = grades[student]
            rows.append([student, f"{grade.score:g}/{grade.max_score:g}",
                         *[f"{grade.cells[g].score:g}" if g in grade.cells else "-" for g in ids],
                         grade.outcome + (f" ({grade.detail})" if grade.detail else ""),
                         "; ".join(grade.flags)[:120] or "-"])
        widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header) - 2)]
        for row in [header, *rows]:
            cells = [str(c).ljust(w) for c, w in zip(row, widths)] + row[len(widths):]
            lines.append("  ".join(cells))
        flagged = [s for s, g in grades.items() if g.flags]
        ours = [s for s, g in grades.items() if g.outcome == GRADER_FAULT]
        failed = [s for s, g in grades.items() if g.outcome not in (GRADED, GRADER_FAULT)]
        lines.append(f"{len(grades) - len(ours)} graded, {len(flagged)} flagged for cheating "
                     f"({', '.join(sorted(flagged)) or 'none'}), {len(failed)} not run to the end "
                     f"({', '.join(sorted(failed)) or 'none'})")
        if ours:
            lines.append(f"{len(ours)} NOT graded because of the grader's own fault, not "
                         f"theirs ({', '.join(sorted(ours))}): fix the cause shown above and run "
                         "the same command again; it grades only these")
    return "\n".join(lines)

"""What grading one notebook ends with: its points per cell, its outcome, its flags."""
from __future__ import annotations

import io
from dataclasses import asdict, dataclass, field

from rich import box
from rich.console import Console, Group
from rich.text import Text
from rich.table import Table

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
#: A grader's fault of its own kind: the Spark the notebook was graded on is gone. The only
#: one a run recovers from at once (it starts the server again and regrades the notebook).
SERVER_LOST = "the Spark Connect server stopped while this notebook was graded"
#: What a graded notebook's detail says when its kernel died in the first run and not in a
#: second (the grader's misfortune, not the learner's doing: see ``Grader._grade``).
DIED_ONCE = ("the kernel died the first time and not when graded again: "
             "not counted against the learner")
#: The plain summary's width: wide enough that no row of a class is folded onto two lines.
PLAIN_WIDTH = 1000


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
    #: Whether the learner's code ran in a sandbox (:mod:`.sandbox`); False only for a run
    #: told ``--unsandboxed``, and for records written before the sandbox existed.
    sandboxed: bool = True

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
        return cls(cells=cells, **{"sandboxed": False, **data})


def summary(results: dict[str, dict[str, NotebookGrade]], *, plain: bool = False) -> Group:
    """The summary the grading command prints: per assignment, a table with one row per
    learner (points, points per task, outcome, flags), then who was flagged, who was not run
    to the end, and who was not graded at all. ``plain``: no colours and no box lines, for a
    log or a pipe."""
    parts = []
    for assignment, grades in results.items():
        ids = sorted({g for grade in grades.values() for g in grade.cells}, key=str)
        table = Table(box=None if plain else box.SIMPLE_HEAD, pad_edge=False,
                      show_edge=not plain, header_style="" if plain else "bold")
        for column in ["learner", "points", *[g.removeprefix("test_") for g in ids]]:
            table.add_column(column, no_wrap=plain)
        table.add_column("outcome", no_wrap=plain)
        table.add_column("flags", no_wrap=plain)
        for student in sorted(grades):
            grade = grades[student]
            worry = "" if plain else ("green" if grade.outcome == GRADED else "red")
            table.add_row(student, f"{grade.score:g}/{grade.max_score:g}",
                          *[f"{grade.cells[g].score:g}" if g in grade.cells else "-" for g in ids],
                          Text(grade.outcome + (f" ({grade.detail})" if grade.detail else ""),
                               style=worry),
                          Text("; ".join(grade.flags)[:120] or "-",
                               style="" if plain or not grade.flags else "yellow"))
        flagged = [s for s, g in grades.items() if g.flags]
        ours = [s for s, g in grades.items() if g.outcome == GRADER_FAULT]
        failed = [s for s, g in grades.items() if g.outcome not in (GRADED, GRADER_FAULT)]
        parts += [Text(f"\n{assignment}", style="" if plain else "bold"), table,
                  Text(f"{len(grades) - len(ours)} graded, {len(flagged)} flagged for cheating "
                       f"({', '.join(sorted(flagged)) or 'none'}), {len(failed)} not run to the "
                       f"end ({', '.join(sorted(failed)) or 'none'})")]
        died_once = [s for s, g in grades.items() if DIED_ONCE in g.detail]
        if died_once:
            parts.append(Text(f"{len(died_once)} graded a second time because their kernel died "
                              f"once, which it did not do again ({', '.join(sorted(died_once))}): "
                              "not their doing; if it recurs, the machine may be short of memory"))
        if ours:
            parts.append(Text(f"{len(ours)} NOT graded because of the grader's own fault, not "
                              f"theirs ({', '.join(sorted(ours))}): fix the cause shown above and "
                              "run the same command again; it grades only these",
                              style="" if plain else "bold red"))
    return Group(*parts)


def summary_table(results: dict[str, dict[str, NotebookGrade]]) -> str:
    """The summary as plain text, each row and sentence on one line: what the grading
    command prints when its output is not a terminal."""
    console = Console(file=io.StringIO(), color_system=None, force_terminal=False,
                      width=PLAIN_WIDTH, soft_wrap=True)
    console.print(summary(results, plain=True))
    return "\n".join(line.rstrip() for line in console.file.getvalue().splitlines())

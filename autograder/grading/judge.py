"""The judging half of grading: each grade cell's answers judged outside the learner's kernel.

In a graded kernel a check only asks (:mod:`autograder.checks.asking`): it writes the learner's
answers into the grade cell's output as a record and returns. :class:`JudgeGradeCells`, an
nbgrader preprocessor that runs in the grading command's own process right after the
notebook was executed, judges every record against Spark's answers recorded by the run's
solution (:func:`autograder.checks.answers.judging`), and writes the verdict where nbgrader looks
for it: a passing check leaves its ``✔`` line, a failing one the lesson as the cell's error
(nbgrader scores a grade cell with an error zero). nbgrader's gradebook, feedback and export
see a notebook as they always did.

What a grade cell must have asked is read from its source (nbgrader has put back the
course's own), never from the kernel: each call of a course check, with its constant
keyword arguments, in order. A cell whose records are missing, in excess, or of other
checks scores zero; so does a record of other cases than the run's seed draws. The
judging process never asks Spark: an answer the solution's run did not record is the
grader's fault (it goes to the guard's log as a fault, and the notebook is graded again).
"""
from __future__ import annotations

import ast
import json
import os
from dataclasses import dataclass
from typing import Any

from nbformat.v4 import new_output
from nbgrader.preprocessors import NbGraderPreprocessor

from ..contract import ANSWERS, ASKING, CHECKPOINTS, GUARD_LOG, SEED
from ..old_paths import current

@dataclass
class Handover:
    """What this process (one notebook's nbgrader) keeps from its kernel: whether the kernel
    only asks, the run's answers file, and, while the grading command keeps that file off
    the disk (:meth:`autograder.grading.run_answers.RunAnswers.seal`), its content, handed to
    this process in memory when it was forked (:mod:`.warm_nbgrader`)."""

    judging: bool = False
    answers_file: str | None = None
    recorded: dict | None = None


#: Filled by :func:`hand_over_answers` before the kernel starts.
HANDOVER = Handover()


def hand_over_answers(nb) -> None:
    """Before a learner's kernel starts from this process: keep the answers file for the
    judge and take it out of the environment the kernel inherits; tell the kernel to only
    ask, and where the recorded checkpoints (inputs, not answers) are.

    Without a run's answers (``--streams-per-notebook``: each kernel draws its own streams
    and asks Spark itself, as under stock nbgrader), or for a notebook whose grade cells
    call a check not declared in two halves (:func:`autograder.checks.asking.declare`), the kernel
    judges its own checks."""
    from ..checks.answers import checkpoints_beside

    answers = os.environ.get(ANSWERS)
    if not answers or not all_checks_declared(nb):
        return
    del os.environ[ANSWERS]
    HANDOVER.answers_file = answers
    os.environ[CHECKPOINTS] = str(checkpoints_beside(answers))
    os.environ[ASKING] = "1"
    HANDOVER.judging = True


def all_checks_declared(nb) -> bool:
    """Whether every check the notebook's grade cells call is judged outside the kernel."""
    import importlib

    from ..checks.asking import CHECKS

    imported = locked_imports(nb)
    for cell in nb.cells:
        if cell.cell_type != "code" or not _nbgrader(cell).get("grade"):
            continue
        try:
            asks = expected_asks(cell.source, imported)
        except (SyntaxError, ValueError):
            return False
        for asked in asks:
            try:
                importlib.import_module(asked.check.rsplit(".", 1)[0])
            except Exception:  # noqa: BLE001 - a check that does not import is not declared
                return False
            if asked.check not in CHECKS:
                return False
    return True


def locked_imports(nb) -> dict[str, str]:
    """What the notebook's locked cells (the set-up) import from the course."""
    imported: dict[str, str] = {}
    for cell in nb.cells:
        if cell.cell_type == "code" and _nbgrader(cell).get("locked") \
                and not _nbgrader(cell).get("grade"):
            imported.update(course_imports(cell.source))
    return imported


@dataclass(frozen=True)
class Asked:
    """One check a grade cell calls: its full name and its constant keyword arguments."""

    check: str
    example: bool
    options: dict


def expected_asks(source: str, imported: dict[str, str]) -> list[Asked]:
    """The checks a grade cell's ``source`` calls, in order. ``imported`` maps the names the
    notebook's locked cells import from the course to their full names; the cell's own
    ``from autograder.x import check_y as _check`` lines add theirs."""
    names = dict(imported)
    names.update(course_imports(source))
    asks = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id in names and names[node.func.id].rsplit(".", 1)[-1].startswith("check_"):
            keywords = {kw.arg: ast.literal_eval(kw.value) for kw in node.keywords if kw.arg}
            example = bool(keywords.pop("example", False))
            asks.append((node.lineno, node.col_offset,
                         Asked(names[node.func.id], example, keywords)))
    return [asked for *_, asked in sorted(asks, key=lambda item: item[:2])]


def course_imports(source: str) -> dict[str, str]:
    """``name -> autograder.module.name`` for every ``from autograder... import`` of a cell."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return {}
    return {alias.asname or alias.name: f"{current(node.module)}.{alias.name}"
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("autograder")
            for alias in node.names}


def _nbgrader(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


def _error(ename: str, lesson: str, shown: str) -> Any:
    return new_output("error", ename=ename, evalue=lesson, traceback=[shown])


class JudgeGradeCells(NbGraderPreprocessor):
    """Judge the records of answers in every grade cell; write the verdicts in their place."""

    def preprocess(self, nb, resources):
        from ..checks import answers

        if not HANDOVER.judging:
            return nb, resources  # its kernel judged (see hand_over_answers)
        seed = os.environ.get(SEED, "")
        # The run's seed, which the command gives every notebook: without it the cases
        # cannot be drawn again, and that is the grader's fault, never seed 0's verdict.
        self._seed = int(seed) if seed.isdigit() else None
        self._imported = locked_imports(nb)
        with answers.judging(HANDOVER.answers_file, HANDOVER.recorded):
            return super().preprocess(nb, resources)

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type == "code" and _nbgrader(cell).get("grade"):
            cell.outputs = self.verdicts(cell)
        return cell, resources

    def verdicts(self, cell) -> list:
        """The cell's outputs with every record replaced by its verdict; after the first
        failing one, nothing (the cell stopped there)."""
        from ..checks.asking import RECORD_TYPE

        try:
            asks = expected_asks(cell.source, self._imported)
        except (SyntaxError, ValueError):
            asks = []
        outputs, judged = [], 0
        for output in cell.get("outputs", []):
            record = output.get("data", {}).get(RECORD_TYPE) \
                if output.get("output_type") in ("display_data", "execute_result") else None
            if record is None:
                if output.get("output_type") == "stream" and output.get("name") == "stderr":
                    # The verdict is the judge's: a warning the learner's code wrote (which
                    # nbgrader would score as a failure) is shown, and costs nothing.
                    output["name"] = "stdout"
                outputs.append(output)
                continue
            verdict = self.judge(record, asks[judged] if judged < len(asks) else None, cell)
            judged += 1
            outputs.append(verdict)
            if verdict.get("output_type") == "error":
                return outputs
        if judged < len(asks) and not any(o.get("output_type") == "error" for o in outputs):
            outputs.append(_error("CheckFailed", "the check handed in no answers",
                                  "✘ the check handed in no answers: the grade cell did not "
                                  "run it to the end"))
        return outputs

    def judge(self, record: Any, asked: Asked | None, cell) -> Any:
        """One record's verdict, as an output: the ``✔`` line, or the lesson as an error."""
        from ..checks.asking import judge_record
        from ..checks.feedback import CheckFailed, GraderFault

        from ..checks.asking import CHECKS

        check = CHECKS.get(asked.check) if asked is not None else None
        if check is None or not isinstance(record, dict) or record.get("check") != asked.check \
                or bool(record.get("example")) != asked.example \
                or {**check.options, **(record.get("options") or {})} \
                != {**check.options, **asked.options}:
            lesson = "the answers handed in are not those of this grade cell's checks"
            return _error("CheckFailed", lesson, f"✘ {lesson}")
        if self._seed is None:
            cause = "the grading run gave this notebook's judge no seed to draw the cases with"
            self._fault(cell, cause)
            return _error("GraderFault", cause, f"⚠ not your code's fault: {cause}")
        try:
            message = judge_record(record, seed=self._seed, example=asked.example,
                                   options=asked.options)
        except CheckFailed as failed:
            kind = getattr(failed, "kind", None) or type(failed).__name__
            ename = "TaskNotDone" if kind == "TaskNotDone" else "CheckFailed"
            return _error(ename, failed.lesson(), failed.shown())
        except GraderFault as fault:
            self._fault(cell, fault.cause)
            return _error("GraderFault", str(fault), f"⚠ {fault}")
        except Exception as error:  # noqa: BLE001 - a bug of the course's judging code
            cause = f"the judge failed: {type(error).__name__}: {str(error)[:200]}"
            self._fault(cell, cause)
            return _error("GraderFault", cause, f"⚠ not your code's fault: {cause}")
        return new_output("stream", name="stdout", text=f"✔ {message}\n")

    @staticmethod
    def _fault(cell, cause: str) -> None:
        """Tell the grading command, through the guard's log, that this cell's grade is the
        grader's fault: it grades the notebook again instead of scoring it."""
        path = os.environ.get(GUARD_LOG)
        if not path:
            return
        line = json.dumps({"event": "fault", "cell": _nbgrader(cell).get("grade_id"),
                           "what": cause, "by": "judge"})
        with open(path, "a", encoding="utf-8") as log:
            log.write(line + "\n")

"""The input-dimension tables of docs/grading-quality.md, made from the chapters' data.

    .venv/bin/python -m scripts.dimension_tables            # print every chapter's table
    .venv/bin/python -m scripts.dimension_tables --write    # put them into the docs

A chapter's checks list the kinds of input their tasks allow beside them
(``INPUT_DIMENSIONS``); this writes, per chapter, one row per dimension: the tasks whose
check lists it, the rule that allows it, the fixed streams that hold it (``S1`` is the
check's first fixed case) and the corpus's learners holding the simplest wrong belief about
it. The docs hold each table between ``<!-- dimensions: <assignment> -->`` and
``<!-- end dimensions -->``; tests/chapters/test_input_dimensions.py fails when they differ
from what this makes.
"""
from __future__ import annotations

import argparse
import importlib
import re
import sys
from pathlib import Path

from autograder.checks.asking import CHECKS
from scripts.mutation_testing import SPARK_TASKS, TASKS, fixed_cases
from corpora.learners import learners

ROOT = Path(__file__).resolve().parent.parent


DOCS = ROOT / "docs" / "grading-quality.md"


def tabled() -> dict[str, str]:
    """assignment -> the module of its checks, for the chapters whose checks have tables."""
    return {task.assignment: module for task in TASKS + SPARK_TASKS
            for module in [task.check.rsplit(".", 1)[0]]
            if hasattr(importlib.import_module(module), "INPUT_DIMENSIONS")}


def table(assignment: str, module: str) -> str:
    """The chapter's table, as markdown."""
    rows: dict[str, dict] = {}
    for check, dimensions in importlib.import_module(module).INPUT_DIMENSIONS.items():
        task = next(t.name.rsplit("/", 1)[1] for t in TASKS + SPARK_TASKS
                    if t.check == f"{module}.{check}")
        cases = fixed_cases(CHECKS[f"{module}.{check}"])
        for dimension in dimensions:
            row = rows.setdefault(dimension.name, {"tasks": [], "rule": dimension.rule,
                                                   "streams": set()})
            row["tasks"].append(task)
            row["streams"] |= {f"S{i}" for i, case in enumerate(cases, start=1)
                               if dimension.holds(case.about)}
    believers = {}
    for learner in learners(assignment):
        if learner.dimension:
            believers.setdefault(learner.dimension, []).append(f"`{learner.name}`")
    lines = ["| tasks | dimension | the rule that allows it | fixed streams | wrong belief |",
             "| --- | --- | --- | --- | --- |"]
    for name, row in rows.items():
        streams = ", ".join(sorted(row["streams"], key=lambda s: int(s[1:])))
        lines.append(f"| {', '.join(row['tasks'])} | {name} | {row['rule']} | {streams} | "
                     f"{', '.join(believers.get(name, [])) or 'none'} |")
    return "\n".join(lines) + "\n"


def marked(assignment: str) -> re.Pattern:
    return re.compile(rf"(<!-- dimensions: {re.escape(assignment)} -->\n)(.*?)(<!-- end dimensions -->)",
                      re.S)


def in_docs(text: str, assignment: str) -> str | None:
    """The table the docs hold for ``assignment`` (None if they hold none)."""
    found = marked(assignment).search(text)
    return found.group(2) if found else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="write the tables into the docs")
    args = parser.parse_args()
    text = DOCS.read_text()
    for assignment, module in tabled().items():
        made = table(assignment, module)
        if not args.write:
            print(f"## {assignment}\n\n{made}")
        elif in_docs(text, assignment) is None:
            sys.exit(f"{DOCS} has no <!-- dimensions: {assignment} --> marker: add one")
        else:
            text = marked(assignment).sub(lambda m, made=made: m.group(1) + made + m.group(3), text)
    if args.write:
        DOCS.write_text(text)


if __name__ == "__main__":
    main()

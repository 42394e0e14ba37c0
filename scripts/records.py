"""Writing a benchmark's result as a record: measurements are data, kept in git.

Every benchmark script ends with :func:`write_record`. A record is one JSON file in
``benchmarks/records/``, named after its question and the moment it was measured
(``<question>-<YYYY-MM-DD-HHMM>.json``), holding:

* ``question``: what was measured, one name per kind of table in docs/benchmarks.md;
* ``script`` and ``command``: how, so that anybody can measure it again;
* ``commit``: the code measured (``(with uncommitted changes)`` when the work tree differed);
* ``date``, ``cores`` and ``load`` (the load averages over 1, 5 and 15 minutes when the
  run began, if the script passes them, else when it ended): how busy the machine was,
  which moves every number;
* ``numbers``: the measurements themselves, in the shape the question's table reads.

``scripts/benchmark_tables.py`` turns the newest record of each question into the tables
of docs/benchmarks.md; the history of a question is the git log of its records.
"""
from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RECORDS = ROOT / "benchmarks" / "records"


def machine() -> dict[str, Any]:
    """The machine's cores and its load averages now."""
    return {"cores": os.cpu_count(), "load": [round(x, 2) for x in os.getloadavg()]}


def commit() -> str:
    """The commit checked out, and whether the work tree differs from it."""
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=ROOT, capture_output=True, text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + (" (with uncommitted changes)" if dirty else "")


def write_record(question: str, numbers: dict[str, Any], *, load: list[float] | None = None,
                 notes: str | None = None, folder: Path = RECORDS,
                 measured: str | None = None) -> Path:
    """Write ``numbers`` as a record of ``question``; the record's path.

    ``load``: the load averages when the measurement began (``machine()["load"]`` taken
    then); by default, the load now. ``measured``: the commit measured, when it is not
    this checkout's work tree (a fresh clone of it).
    """
    now = dt.datetime.now()
    record: dict[str, Any] = {
        "question": question,
        "script": Path(sys.argv[0]).resolve().relative_to(ROOT).as_posix()
        if Path(sys.argv[0]).resolve().is_relative_to(ROOT) else sys.argv[0],
        "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]),
        "commit": measured or commit(),
        "date": now.isoformat(timespec="seconds"),
        **machine(),
    }
    if load is not None:
        record["load"] = [round(x, 2) for x in load]
    if notes:
        record["notes"] = notes
    record["numbers"] = numbers
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{question}-{now:%Y-%m-%d-%H%M}.json"
    path.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n")
    print(f"record written to {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")
    return path


def newest_record(question: str, folder: Path = RECORDS) -> dict[str, Any] | None:
    """The newest record of ``question`` (records' names sort by the moment they were
    measured), or None when there is none."""
    paths = sorted(folder.glob(f"{question}-[0-9]*.json"))
    return json.loads(paths[-1].read_text()) if paths else None

"""Measure how long the book takes to build: fresh, then again with nothing changed.

    .venv/bin/python -m scripts.benchmark_book            # in a scratch copy of the book
    .venv/bin/python -m scripts.benchmark_book --keep     # ... and keep the copy

Each build is ``make book``'s (``scripts/build_book.py``: the pages executed two at a
time, then Jupyter Book). The *fresh* build starts with no ``_build`` folder, so every
chapter runs on Spark. The *warm* build follows it with nothing changed: the execution
cache (``execute_notebooks: cache`` in ``_config.yml``) must serve every chapter, so
nothing is executed. The script prints both times, how many notebooks each build executed
and how long their cells took (added up, and on the clock), read from the build's own
log, and exits non-zero when the warm build executed anything.

The builds run in a scratch copy of the book's sources (``_config.yml``, ``_toc.yml``,
``book/``, ``exercises/``), so the repository's own ``_build`` is left alone.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from scripts.records import machine, write_record

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("_config.yml", "_toc.yml", "book", "exercises")
#: Lines myst-nb writes for each notebook it runs, and for each it takes from the cache.
EXECUTED = re.compile(r"([^/\s]+)\.\w+: Executed notebook in ([\d.]+) seconds")
FROM_CACHE = re.compile(r"Using cached notebook")
#: The line scripts/build_book.py ends its executing with: the wall time of all the cells.
EXECUTING = re.compile(r"executed \d+ pages, \d+ at a time, in ([\d.]+) s")


def build(book: Path) -> dict:
    """One build as ``make book`` runs it; its duration and what it executed."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "scripts.build_book", str(book)], cwd=book,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    log = done.stdout + done.stderr
    if done.returncode != 0:
        sys.exit(f"the build failed:\n{log[-3000:]}")
    executed = {name: float(s) for name, s in EXECUTED.findall(log)}
    return {"seconds": seconds, "executed": len(executed), "per_notebook": executed,
            "executing_seconds": sum(executed.values()),
            "executing_wall": sum(float(s) for s in EXECUTING.findall(log)),
            "from_cache": len(FROM_CACHE.findall(log))}


def copy_book(into: Path) -> None:
    for name in SOURCES:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, into / name)
        elif source.exists():
            shutil.copy2(source, into / name)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", action="store_true", help="keep the scratch copy")
    args = parser.parse_args(argv)
    load = machine()["load"]
    if not (ROOT / "book" / "_static" / "widgets").is_dir():
        subprocess.run([sys.executable, "-m", "scripts.vendor_widgets"], cwd=ROOT,
                       check=True)
    scratch = Path(tempfile.mkdtemp(prefix="book-bench-"))
    try:
        copy_book(scratch)
        fresh = build(scratch)
        warm = build(scratch)
    finally:
        if args.keep:
            print(f"scratch copy kept in {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    for name, result in (("fresh", fresh), ("warm", warm)):
        print(f"{name:5} build: {result['seconds']:6.1f} s, "
              f"{result['executed']} notebooks executed "
              f"({result['executing_seconds']:.1f} s running cells, "
              f"{result['executing_wall']:.1f} s of it on the clock), "
              f"{result['from_cache']} from the cache")
        for notebook, spent in result["per_notebook"].items():
            print(f"    {notebook:32} {spent:6.1f} s")
    write_record("book", {name: {
        "seconds": round(result["seconds"], 1), "pages executed": result["executed"],
        "cells, added up": round(result["executing_seconds"], 1),
        "cells, on the clock": round(result["executing_wall"], 1),
        "pages from the cache": result["from_cache"], "per page": result["per_notebook"]}
        for name, result in (("fresh build", fresh), ("rebuild with nothing changed", warm))},
        load=load)
    if warm["executed"]:
        print("the warm build executed notebooks: the execution cache did not serve them")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

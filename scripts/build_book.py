"""Build the book: execute its pages, several at a time, then let Jupyter Book render them.

    .venv/bin/python -m scripts.build_book [BOOK_ROOT] [--jobs 2]

Jupyter Book (myst-nb, ``execute_notebooks: cache`` in ``_config.yml``) executes every page
its execution cache lacks, one after the other, while it reads them; each page starts its
own Spark, so on a two-core machine one core waits while a JVM starts or a micro-batch is
planned on the other. This script does the executing first: it reads each page the way
myst-nb does, runs the pages the cache lacks ``--jobs`` at a time (the longest first, by
what they took last time) and stores them in the cache. The build that follows then finds
every page executed, renders it, and fails on any warning (``--warningiserror``).

Each page still runs in a fresh kernel, but the kernels of one worker of the pool share a
driver JVM (:class:`autograder.toolkit.session.SharedDriver`), one page after the other, each with
its own SparkContext: a page does not pay for starting Spark's JVM and for running its
code cold (docs/benchmarks.md: the 9 pages in 122 s and 233 s of CPU, against 163 s and
330 s with a JVM each).

A page whose execution fails is not stored: the build executes it again itself and
reports the error the way it always does. A cell that fails once and passes the second time
is a claim that holds only on a fast enough (or lucky) machine, so the first failure is
never hidden: the page, the cell (its number, its line in the page, its first lines) and
the end of the error are printed at once, framed so that they stand out, and again after
Jupyter Book's own output, whatever the second run did. When the course's toolkit
(``autograder/``) is newer than the cache, every page runs again: the cache knows only each
page's own text.
"""
from __future__ import annotations

import argparse
import multiprocessing
import os
import re
import shutil
import subprocess
import sys
import time
import traceback
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import nbformat
import yaml
from jupyter_cache import get_cache
from jupyter_cache.base import CacheBundleIn
from myst_nb.core.read import read_myst_markdown_notebook
from myst_parser.config.main import MdParserConfig
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError

ROOT = Path(__file__).resolve().parent.parent
CACHE = Path("_build") / ".jupyter_cache"


def page_notebook(page: Path) -> nbformat.NotebookNode:
    """The page as myst-nb reads it (the same cells, so the same key in the cache)."""
    return read_myst_markdown_notebook(page.read_text(), config=MdParserConfig(),
                                       add_source_map=True, path=str(page))


def book_pages(root: Path) -> list[Path]:
    """Every page of the table of contents that has code cells (a chapter's own sections,
    such as its further page, included)."""
    toc = yaml.safe_load((root / "_toc.yml").read_text())

    def files(entries: list[dict]) -> list[str]:
        return [name for entry in entries
                for name in [entry["file"], *files(entry.get("sections", []))]]

    names = [toc["root"]] + files(toc.get("chapters", []))
    pages = [root / f"{name}.md" for name in names]
    return [page for page in pages
            if any(cell.cell_type == "code" for cell in page_notebook(page).cells)]


def execute(page: Path, timeout: int, driver=None) -> tuple[str, str | None, float, str | None]:
    """Run one page in a fresh kernel, in its own folder (as myst-nb does): the page, the
    executed notebook as JSON (None if a cell failed), the seconds, and the report of the
    failed cell (:func:`failure_report`).

    ``driver``: an :class:`autograder.toolkit.session.SharedDriver` the kernel's Spark runs in, and
    which is released afterwards (else the kernel starts a JVM of its own)."""
    notebook = page_notebook(page)
    settings = notebook.metadata.get("execution", {})  # a page may set its own, as in myst-nb
    client = NotebookClient(notebook, timeout=settings.get("timeout", timeout),
                            allow_errors=settings.get("allow_errors", False),
                            record_timing=False,
                            resources={"metadata": {"path": str(page.parent)}})
    started, error = time.monotonic(), None
    try:
        client.execute(**({"env": {**os.environ, **driver.env()}} if driver else {}))
    except (CellExecutionError, CellTimeoutError):
        error = traceback.format_exc()
    finally:
        if driver is not None:
            driver.release()  # or closed, and the next page gets a new one
    seconds = time.monotonic() - started
    if error is not None:
        return str(page), None, seconds, failure_report(page, notebook, seconds, error)
    return str(page), nbformat.writes(notebook), seconds, None


#: This worker process's shared driver JVMs (``autograder.toolkit.session.SharedDriver``), by the
#: folder their pages run in.
_drivers: dict = {}


def execute_in_worker(page: Path, timeout: int) -> tuple[str, str | None, float, str | None]:
    """:func:`execute`, in a worker of the pool: every page this process runs in a folder
    uses one driver JVM (started with the first, and again if it died)."""
    from autograder.toolkit.session import SharedDriver

    driver = _drivers.get(page.parent)
    if driver is None or not driver.alive:
        driver = _drivers[page.parent] = SharedDriver(page.parent)
    return execute(page, timeout, driver)


def failed_cell(notebook: nbformat.NotebookNode) -> int | None:
    """The index of the cell that stopped an execution: the first code cell with an error
    among its outputs, or (a cell that timed out has none) the first code cell that never
    finished; None if every cell ran."""
    code = [(index, cell) for index, cell in enumerate(notebook.cells)
            if cell.cell_type == "code"]
    for index, cell in code:
        if any(output.get("output_type") == "error" for output in cell.get("outputs", [])):
            return index
    for index, cell in code:
        if cell.get("execution_count") is None:
            return index
    return None


def failure_report(page: Path, notebook: nbformat.NotebookNode, seconds: float,
                   error: str, first_lines: int = 6, last_lines: int = 16) -> str:
    """What a first failed run of a page says: the page, the cell (which code cell, the
    line of the page where it starts, its first lines) and the last lines of the cell's
    error, in a frame that stands out among a build's hundreds of lines."""
    index = failed_cell(notebook)
    rule = "!" * 78
    lines = [rule, f"FIRST RUN FAILED: {page}, after {seconds:.0f} s"]
    if index is None:
        lines.append("  (no cell of the page shows the error)")
    else:
        cell = notebook.cells[index]
        number = sum(other.cell_type == "code" for other in notebook.cells[:index + 1])
        source_map = notebook.metadata.get("source_map") or []
        where = f", line {source_map[index]} of the page" if index < len(source_map) else ""
        source = [line for line in cell.source.splitlines()
                  if line.strip() and not line.startswith(":tags:")]
        lines.append(f"  code cell {number}{where}, which begins:")
        lines += ["    | " + line for line in source[:first_lines]]
        shown = [output for output in cell.get("outputs", [])
                 if output.get("output_type") == "error"]
        if shown:   # the traceback the reader would see, without the executor's frames
            error = "\n".join(shown[0].get("traceback", []))
    lines.append("  the error ends with:")
    plain = re.sub(r"\x1b\[[0-9;]*m", "", error).rstrip().splitlines()
    lines += ["    | " + line for line in plain[-last_lines:]]
    lines += ["  The build runs the page again. If that run passes, the cell's claim depends on",
              "  the machine (how fast it is, an order Spark does not promise): fix the cell.",
              rule]
    return "\n".join(lines)


def execute_missing(root: Path, jobs: int) -> list[str]:
    """Execute the pages the cache lacks; the reports of those whose run failed."""
    cache_dir = root / CACHE
    if cache_dir.exists() and any(path.stat().st_mtime > cache_dir.stat().st_mtime
                                  for path in (ROOT / "autograder").rglob("*.py")):
        print("autograder/ changed since the last build: executing every page again")
        shutil.rmtree(cache_dir)
        # and rendering every page again: Sphinx would keep the old HTML of a page whose
        # own text did not change (its doctree is still there)
        shutil.rmtree(root / "_build" / ".doctrees", ignore_errors=True)
    cache = get_cache(str(cache_dir))
    took_before = {record.uri: record.data.get("execution_seconds", 0)
                   for record in cache.list_cache_records()}
    missing = []
    for page in book_pages(root):
        try:
            cache.match_cache_notebook(page_notebook(page))
        except KeyError:
            missing.append(page)
    if not missing:
        return []
    missing.sort(key=lambda page: (-took_before.get(str(page), 0), -page.stat().st_size))
    config = yaml.safe_load((root / "_config.yml").read_text())
    timeout = config.get("execute", {}).get("timeout", 900)
    started = time.monotonic()
    failures = []
    # Fresh interpreters (spawn), not forks of this one and its open cache database.
    with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = [pool.submit(execute_in_worker, page, timeout) for page in missing]
        for future in as_completed(futures):
            page, executed, seconds, report = future.result()
            if report is not None:
                # Said in full now, and again at the end, even if the second run
                # (jupyter-book's) passes: a cell that fails only sometimes is a claim
                # that depends on the machine.
                print(report, flush=True)
                failures.append(report)
                continue
            cache.cache_notebook_bundle(
                CacheBundleIn(nbformat.reads(executed, 4), page,
                              data={"execution_seconds": seconds}),
                check_validity=False, overwrite=True)
            print(f"{page}: Executed notebook in {seconds:.2f} seconds")
    print(f"executed {len(missing)} pages, {jobs} at a time, in "
          f"{time.monotonic() - started:.1f} s")
    return failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", nargs="?", type=Path, default=ROOT,
                        help="the folder holding _config.yml, _toc.yml and book/")
    parser.add_argument("--jobs", type=int, default=2, help="pages executed at once")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    (root / "_build").mkdir(exist_ok=True)
    failures = execute_missing(root, args.jobs)
    jupyter_book = Path(sys.executable).with_name("jupyter-book")
    returncode = subprocess.run([str(jupyter_book), "build", str(root), "--warningiserror",
                                 "--keep-going"], cwd=root).returncode
    if failures:
        # Once more after Jupyter Book's long output, where nobody would scroll back to it.
        print(f"\n{len(failures)} page(s) failed their first run (Jupyter Book ran them "
              f"again: its exit code {returncode} says how that went):")
        print("\n".join(failures))
    return returncode


if __name__ == "__main__":
    sys.exit(main())

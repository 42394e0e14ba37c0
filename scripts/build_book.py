"""Build the book: execute its pages, several at a time, then let Jupyter Book render them.

    .venv/bin/python scripts/build_book.py [BOOK_ROOT] [--jobs 2]

Jupyter Book (myst-nb, ``execute_notebooks: cache`` in ``_config.yml``) executes every page
its execution cache lacks, one after the other, while it reads them; each page starts its
own Spark, so on a two-core machine one core waits while a JVM starts or a micro-batch is
planned on the other. This script does the executing first: it reads each page the way
myst-nb does, runs the pages the cache lacks ``--jobs`` at a time (the longest first, by
what they took last time) and stores them in the cache. The build that follows then finds
every page executed, renders it, and fails on any warning (``--warningiserror``).

A page whose execution fails is not stored, and its failure is printed at once (a cell
that fails once and passes the second time still shows): the build executes it again itself and
reports the error the way it always does. When the course's toolkit (``autograder/``) is
newer than the cache, every page runs again: the cache knows only each page's own text.
"""
from __future__ import annotations

import argparse
import multiprocessing
import shutil
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import nbformat
import yaml
from jupyter_cache import get_cache
from jupyter_cache.base import CacheBundleIn
from jupyter_cache.executors.utils import single_nb_execution
from myst_nb.core.read import read_myst_markdown_notebook
from myst_parser.config.main import MdParserConfig

ROOT = Path(__file__).resolve().parent.parent
CACHE = Path("_build") / ".jupyter_cache"


def page_notebook(page: Path) -> nbformat.NotebookNode:
    """The page as myst-nb reads it (the same cells, so the same key in the cache)."""
    return read_myst_markdown_notebook(page.read_text(), config=MdParserConfig(),
                                       add_source_map=True, path=str(page))


def book_pages(root: Path) -> list[Path]:
    """Every page of the table of contents that has code cells."""
    toc = yaml.safe_load((root / "_toc.yml").read_text())
    names = [toc["root"]] + [entry["file"] for entry in toc.get("chapters", [])]
    pages = [root / f"{name}.md" for name in names]
    return [page for page in pages
            if any(cell.cell_type == "code" for cell in page_notebook(page).cells)]


def execute(page: Path, timeout: int) -> tuple[str, str | None, float, str | None]:
    """Run one page in a fresh kernel, in its own folder (as myst-nb does): the page, the
    executed notebook as JSON (None if a cell failed), the seconds, the error."""
    result = single_nb_execution(page_notebook(page), cwd=str(page.parent), timeout=timeout,
                                 allow_errors=False, meta_override=True)
    if result.err is not None:
        return str(page), None, result.time, result.exc_string
    return str(page), nbformat.writes(result.nb), result.time, None


def execute_missing(root: Path, jobs: int) -> None:
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
        return
    missing.sort(key=lambda page: (-took_before.get(str(page), 0), -page.stat().st_size))
    config = yaml.safe_load((root / "_config.yml").read_text())
    timeout = config.get("execute", {}).get("timeout", 900)
    started = time.monotonic()
    # Fresh interpreters (spawn), not forks of this one and its open cache database.
    with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = [pool.submit(execute, page, timeout) for page in missing]
        for future in as_completed(futures):
            page, executed, seconds, error = future.result()
            if error is not None:
                # Said in full now, even if the second run (jupyter-book's) passes: a cell
                # that fails only sometimes is a claim that depends on the machine's speed.
                print(f"{page}: a cell failed in {seconds:.0f} s; the build will run it "
                      f"again. The failure:\n" + _last_lines(error, 25))
                continue
            cache.cache_notebook_bundle(
                CacheBundleIn(nbformat.reads(executed, 4), page,
                              data={"execution_seconds": seconds}),
                check_validity=False, overwrite=True)
            print(f"{page}: Executed notebook in {seconds:.2f} seconds")
    print(f"executed {len(missing)} pages, {jobs} at a time, in "
          f"{time.monotonic() - started:.1f} s")


def _last_lines(text: str, count: int) -> str:
    """The end of a cell's error (the cell's source and the exception), indented."""
    return "\n".join("    " + line for line in text.rstrip().splitlines()[-count:])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", nargs="?", type=Path, default=ROOT,
                        help="the folder holding _config.yml, _toc.yml and book/")
    parser.add_argument("--jobs", type=int, default=2, help="pages executed at once")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    (root / "_build").mkdir(exist_ok=True)
    execute_missing(root, args.jobs)
    jupyter_book = Path(sys.executable).with_name("jupyter-book")
    return subprocess.run([str(jupyter_book), "build", str(root), "--warningiserror",
                           "--keep-going"], cwd=root).returncode


if __name__ == "__main__":
    sys.exit(main())

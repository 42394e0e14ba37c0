"""A chapter opened in JupyterLab as a notebook (Open With → Jupytext Notebook), run and
saved, is written back byte for byte as it was.

JupyterLab's Jupytext saves a chapter by writing the notebook it shows in the chapter's own
format (MyST Markdown): the chapter's cells and metadata, with the kernel the notebook ran
on as its ``kernelspec`` and the language's details (which Jupytext leaves out). A chapter
that is not in the form Jupytext writes, or names another kernel than the course's, is
rewritten by the first autosave: a learner's checkout turns dirty, and a contributor
commits the noise. Here each chapter goes through the same steps with Jupytext's Python API.
"""
from __future__ import annotations

import difflib
import json
import sys
from pathlib import Path

import jupytext
import pytest
from jupytext.config import load_jupytext_config

ROOT = Path(__file__).resolve().parents[2]
#: The pages that open as notebooks: those whose front matter is Jupytext's.
NOTEBOOK_PAGES = sorted(path for path in (ROOT / "book").glob("*.md")
                        if path.read_text(encoding="utf-8").startswith("---\njupytext:"))


def course_kernelspec() -> dict:
    """The kernel JupyterLab runs a notebook on in the course's environment."""
    found = Path(sys.prefix, "share", "jupyter", "kernels", "python3", "kernel.json")
    spec = json.loads(found.read_text())
    return {"display_name": spec["display_name"], "language": spec["language"],
            "name": "python3"}


def saved_by_jupyterlab(path: Path) -> str:
    """The text JupyterLab's Jupytext writes for ``path`` after opening and running it."""
    notebook = jupytext.read(path)
    notebook.metadata["kernelspec"] = course_kernelspec()
    notebook.metadata["language_info"] = {"name": "python", "version": sys.version.split()[0],
                                          "mimetype": "text/x-python"}
    config = load_jupytext_config(str(path.parent))
    return jupytext.writes(notebook, fmt="md:myst", config=config)


def save_as_jupyterlab_does(path: str | Path) -> None:
    """Rewrite a page as JupyterLab would save it (once, after adding or editing cells):
    ``.venv/bin/python -c "from tests.lab.test_chapters_open_unchanged import *;
    save_as_jupyterlab_does('book/05_state_store.md')"``."""
    path = Path(path)
    path.write_text(saved_by_jupyterlab(path), encoding="utf-8")


def test_the_book_has_pages_that_open_as_notebooks():
    names = {path.name for path in NOTEBOOK_PAGES}
    assert {"01_global_limit.md", "04_transform_with_state.md"} <= names, names


@pytest.mark.parametrize("path", NOTEBOOK_PAGES, ids=lambda path: path.name)
def test_a_chapter_saved_from_jupyterlab_is_byte_identical(path: Path):
    before = path.read_text(encoding="utf-8")
    after = saved_by_jupyterlab(path)
    changed = list(difflib.unified_diff(before.splitlines(), after.splitlines(),
                                        "as committed", "as saved", lineterm="", n=1))
    assert after == before, f"{path.name} is rewritten on save (save_as_jupyterlab_does() " \
                            "writes it in that form once):\n" + "\n".join(changed[:40])

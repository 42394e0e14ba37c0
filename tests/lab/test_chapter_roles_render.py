"""A chapter opened in the learner's JupyterLab as a notebook reads as the book does: its
MyST roles (``{doc}`running_locally```) show as their words, not as raw markup, its links
to the glossary (``[micro-batches](glossary.md#term-micro-batch)``) open the glossary, and
opening and saving it leaves the file as it was.

JupyterLab's own Markdown renderer knows no MyST roles; the ``jupyterlab-myst`` extension
(requirements.txt) renders the notebook's Markdown cells as MyST. The chapter is opened the
way a learner does (right-click → Open With → Jupytext Notebook) in the JupyterLab that
``make lab`` starts, serving a copy of the chapter, which is then saved with Ctrl+S as
autosave would.
"""
from __future__ import annotations

import re
import shutil
import time
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.lab import test_learner_lab as learner_lab

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
CHAPTER = "01_global_limit.md"
#: The learner's lab, as in test_learner_lab.py (a fixture: pytest finds it by this name).
open_lab = learner_lab.open_lab
#: Markdown cells as jupyterlab-myst draws them (not their editors, which hold the source).
RENDERED = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-MarkdownCell .myst"


def open_as_notebook(page, name: str) -> None:
    """Right-click the file in the file browser, then Open With → Jupytext Notebook."""
    page.locator(".jp-DirListing-item", has_text=name).click(button="right")
    page.locator(".lm-Menu-item", has_text="Open With").hover()
    page.locator(".lm-Menu-item", has_text="Jupytext Notebook").click()
    page.locator(".jp-NotebookPanel .jp-MarkdownCell").first.wait_for(timeout=120_000)


def test_a_chapters_roles_show_as_words_its_terms_lead_to_the_glossary_and_it_is_unchanged(open_lab, tmp_path):
    book = tmp_path / "learner" / "book"      # the folder open_lab serves, beside exercises/
    book.mkdir(parents=True)
    chapter = book / CHAPTER
    shutil.copy(ROOT / "book" / CHAPTER, chapter)
    shutil.copy(ROOT / "book" / "glossary.md", book / "glossary.md")
    committed = chapter.read_bytes()
    assert b"[micro-batches](glossary.md#term-micro-batch)" in committed

    page = open_lab("learner", "lab/tree/book")
    open_as_notebook(page, CHAPTER)
    first = page.locator(RENDERED).first
    first.get_by_text(re.compile(r"New micro-batches keep arriving")).wait_for(timeout=60_000)

    # Every Markdown cell drawn so far (JupyterLab draws those below the fold on scrolling).
    texts = page.locator(RENDERED).all_inner_texts()
    raw = [text for text in texts if re.search(r"\{(term|doc)\}`", text)]
    assert not raw, f"MyST roles shown raw: {raw}"
    for term in ("micro-batches", "state store", "stateful operator", "output mode"):
        link = first.locator("a", has_text=term).first
        assert link.count() == 1, (term, first.inner_html())
        # JupyterLab resolves the link after drawing it, to the file's URL
        # (/files/book/glossary.md?_xsrf=...#term-...): wait for that, not for the first draw.
        expect(link).to_have_attribute("href", re.compile(r"/book/glossary\.md[^#]*#term-"),
                                       timeout=30_000)

    opened = chapter.stat().st_mtime_ns
    first.click(position={"x": 2, "y": 2})              # the cell, not a link in it
    page.keyboard.press("Control+s")
    deadline = time.monotonic() + 60
    while chapter.stat().st_mtime_ns == opened:         # JupyterLab has written the file
        assert time.monotonic() < deadline, "Ctrl+S did not save the chapter in 60 s"
        page.wait_for_timeout(200)
    page.wait_for_timeout(1_000)                        # and finished writing it
    assert chapter.read_bytes() == committed, "the chapter was rewritten on save"

    # A term's link opens the glossary in a tab of its own.
    first.locator("a", has_text="state store").first.click()
    page.locator(".lm-TabBar-tab", has_text="glossary.md").wait_for(timeout=60_000)


"""An exercise notebook opened in the learner's JupyterLab and left there is not rewritten.

When JupyterLab opens a notebook it writes into the notebook's metadata the kernel it runs
on (``kernelspec``, with the kernel's display name) and the language's details the kernel
reports (``language_info``: version, lexers, file extension); if those differ from the
file, the notebook is changed, and autosave writes it two minutes later, before the
learner ran a cell: the learner's checkout turns dirty, and a later ``git pull`` of the
course conflicts. The course releases its notebooks in the form JupyterLab writes
(``solutions/``'s metadata, which ``make release`` carries into ``exercises/``).

The first tests read the files (as tests/lab/test_chapters_open_unchanged.py does for the
chapters); the last opens every exercise notebook in the JupyterLab ``make lab`` starts,
waits past an autosave (made to come every few seconds), saves each with Ctrl+S too, and
compares the files byte for byte.
"""
from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path

import nbformat
import pytest

from tests.lab import test_learner_lab as learner_lab

ROOT = Path(__file__).resolve().parents[2]
EXERCISES = sorted((ROOT / "exercises").glob("*/*.ipynb"))
SOLUTIONS = sorted((ROOT / "solutions").glob("*/*.ipynb"))
#: The learner's lab, as in test_learner_lab.py (a fixture: pytest finds it by this name).
open_lab = learner_lab.open_lab
#: How often the test's JupyterLab autosaves (seconds; JupyterLab's default is 120).
AUTOSAVE_S = 3


def course_kernelspec() -> dict:
    """The kernel JupyterLab runs a notebook on in the course's environment, as it writes
    it into the notebook."""
    found = Path(sys.prefix, "share", "jupyter", "kernels", "python3", "kernel.json")
    spec = json.loads(found.read_text())
    return {"display_name": spec["display_name"], "language": spec["language"],
            "name": "python3"}


def course_language_info() -> dict:
    """What the course's kernel (ipykernel) reports of its language, which JupyterLab
    writes into the notebook as ``language_info``."""
    from ipykernel.ipkernel import IPythonKernel

    return dict(IPythonKernel.language_info)


def as_jupyterlab_writes(path: Path) -> str:
    """The text JupyterLab's server writes for the notebook at ``path`` once the course's
    kernel is attached (nbformat, as the server writes every notebook)."""
    notebook = nbformat.read(path, as_version=4)
    notebook.metadata["kernelspec"] = course_kernelspec()
    notebook.metadata["language_info"] = course_language_info()
    return nbformat.writes(notebook) + "\n"


def test_there_are_exercise_notebooks():
    assert len(EXERCISES) >= 5 and len(SOLUTIONS) == len(EXERCISES), (EXERCISES, SOLUTIONS)


@pytest.mark.parametrize("path", EXERCISES + SOLUTIONS,
                         ids=lambda path: f"{path.parent.parent.name}/{path.name}")
def test_a_notebook_is_released_in_the_form_jupyterlab_writes(path: Path):
    before = path.read_text(encoding="utf-8")
    metadata = json.loads(before)["metadata"]
    assert metadata.get("kernelspec") == course_kernelspec(), (
        f"{path.relative_to(ROOT)}: JupyterLab writes the kernelspec {course_kernelspec()} "
        f"on opening it, not {metadata.get('kernelspec')} (set it in solutions/, then "
        "`make release`)")
    assert metadata.get("language_info") == course_language_info(), (
        f"{path.relative_to(ROOT)}: JupyterLab writes language_info "
        f"{course_language_info()} on opening it, not {metadata.get('language_info')}")
    assert as_jupyterlab_writes(path) == before, f"{path.relative_to(ROOT)} is rewritten on save"


# -- in the learner's JupyterLab -------------------------------------------------------------------
def autosave_every(settings: Path, seconds: int) -> None:
    """Make the JupyterLab whose user settings live in ``settings`` autosave every
    ``seconds`` (the same setting a learner changes in Settings → Autosave Documents)."""
    plugin = settings / "@jupyterlab" / "docmanager-extension" / "plugin.jupyterlab-settings"
    plugin.parent.mkdir(parents=True, exist_ok=True)
    plugin.write_text(json.dumps({"autosave": True, "autosaveInterval": seconds}))


@pytest.mark.slow
def test_every_exercise_notebook_is_byte_identical_after_being_opened_and_autosaved(
        open_lab, tmp_path):
    root = tmp_path / "learner"                 # the folder open_lab serves
    for notebook in EXERCISES:                  # (it copies chapter 1's itself)
        if notebook.relative_to(ROOT).as_posix() != learner_lab.NOTEBOOK:
            target = root / notebook.relative_to(ROOT)
            target.parent.mkdir(parents=True)
            shutil.copy(notebook, target)
    autosave_every(tmp_path / "learner-settings", AUTOSAVE_S)

    page = None
    for notebook in EXERCISES:
        relative = notebook.relative_to(ROOT).as_posix()
        copy = root / relative
        committed = notebook.read_bytes()            # what the copy holds
        if page is None:
            assert relative == learner_lab.NOTEBOOK   # the first, which open_lab copies
            page = open_lab("learner", f"lab/tree/{relative}")
        else:   # the notebook alone, as a learner opens it (``reset``: no other tab restored)
            page.goto(page.url.split("/lab")[0] + f"/lab/tree/{relative}?reset"
                      f"&token={learner_lab.TOKEN}", wait_until="load")
        learner_lab.wait_for_kernel(page)   # the kernel is attached: metadata written, if any
        page.wait_for_timeout(3 * AUTOSAVE_S * 1000)  # and autosave has come since
        dirty = page.locator(".lm-TabBar-tab.jp-mod-dirty").count()
        assert copy.read_bytes() == committed and dirty == 0, (
            f"opening {relative} changed it (autosaved: {copy.read_bytes() != committed}, "
            f"unsaved tabs: {dirty}): release it in the form JupyterLab writes "
            "(solutions/' metadata, then `make release`)")

        # Saved by hand as well (Ctrl+S writes even an unchanged notebook): the same bytes.
        before = copy.stat().st_mtime_ns
        learner_lab.cell(page, 0).click()
        page.keyboard.press("Control+s")
        deadline = time.monotonic() + 60
        while copy.stat().st_mtime_ns == before:
            assert time.monotonic() < deadline, f"Ctrl+S did not save {relative} in 60 s"
            page.wait_for_timeout(200)
        page.wait_for_timeout(500)                        # and finished writing it
        assert copy.read_bytes() == committed, f"{relative} is rewritten on save"

"""The learner at the keyboard: the course's JupyterLab, driven in a real browser.

JupyterLab is started by the course's own command (``scripts/lab.py``, what ``make lab``
runs) on 127.0.0.1 and a free port, serving a copy of chapter 1's exercises; Playwright
drives the system's Chromium (never a downloaded one). On task 1 the learner runs the
set-up, then the self-check with the released stub (a one-line hint, within a second), a
wrong answer (the lesson, without a traceback through the course's files) and a right one
(a ✔). The learner's JupyterLab shows nbgrader's Validate and none of its instructor
tools, which an instructor's JupyterLab does show.
"""
from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest


pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = "exercises/01_global_limit/01_global_limit.ipynb"
TOKEN = "learner-lab-test"
#: Cells of chapter 1's exercise notebook: the set-up, task 1's function and its self-check.
SETUP, TASK_1, CHECK_1 = 1, 3, 4
#: What nbgrader's instructor tools are called in JupyterLab's menus, sidebars and tabs.
INSTRUCTOR_TOOLS = ("Formgrader", "Create Assignment", "Course List", "Assignment List",
                    "Nbgrader")

WRONG_ANSWER = '''def predict_emitted(sizes, limit):
    return [min(size, limit) for size in sizes]
'''
RIGHT_ANSWER = '''def predict_emitted(sizes, limit):
    emitted, so_far = [], 0
    for size in sizes:
        emitted.append(min(size, limit - so_far))
        so_far += emitted[-1]
    return emitted
'''
UNFINISHED_HINT = ("task not done yet: replace `raise NotImplementedError()` in "
                   "predict_emitted with your code")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Lab:
    """A JupyterLab started with ``scripts/lab.py <role>`` on a copy of the exercises."""

    def __init__(self, role: str, root: Path, log: Path):
        self.port = free_port()
        self.log = log
        # A workspace and settings of its own: nothing restored from another JupyterLab.
        env = dict(os.environ, JUPYTERLAB_WORKSPACES_DIR=str(log.parent / f"{role}-workspaces"),
                   JUPYTERLAB_SETTINGS_DIR=str(log.parent / f"{role}-settings"))
        with open(log, "wb") as output:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "scripts.lab", role,
                 f"--port={self.port}", "--no-browser", f"--IdentityProvider.token={TOKEN}",
                 f"--root={root}"],
                cwd=ROOT, stdout=output, stderr=subprocess.STDOUT, start_new_session=True, env=env)
        self._wait_until_up(timeout=180)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}/{path}?token={TOKEN}"

    def _wait_until_up(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                pytest.fail(f"JupyterLab exited:\n{self.log.read_text()[-3000:]}")
            try:
                urllib.request.urlopen(self.url("api/status"), timeout=5)
                return
            except OSError:
                time.sleep(0.5)
        self.stop()
        pytest.fail(f"JupyterLab did not answer in {timeout} s:\n{self.log.read_text()[-3000:]}")

    def stop(self) -> None:
        """Stop JupyterLab and its kernels (the process group this test started)."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=30)


def course_copy(tmp_path: Path) -> Path:
    """A folder holding a copy of chapter 1's exercise notebook, at the same path."""
    target = tmp_path / NOTEBOOK
    target.parent.mkdir(parents=True)
    shutil.copy(ROOT / NOTEBOOK, target)
    return tmp_path


@pytest.fixture
def open_lab(browser, tmp_path):
    """``open_lab(role, path)``: start the course's JupyterLab for ``role`` and open ``path``
    in a new browser page; everything is stopped after the test."""
    labs, contexts = [], []

    def start(role: str, path: str):
        lab = Lab(role, course_copy(tmp_path / role), tmp_path / f"{role}-lab.log")
        labs.append(lab)
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(120_000)
        page.goto(lab.url(path), wait_until="load")
        page.wait_for_selector(".jp-LabShell", timeout=120_000)
        return page

    yield start
    for context in contexts:
        context.close()
    for lab in labs:
        lab.stop()


# -- the notebook, as a learner works in it -------------------------------------------------------
def cell(page, index: int):
    return page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell").nth(index)


def wait_for_kernel(page) -> None:
    """Wait until the notebook's kernel is connected and idle (the status bar says so)."""
    page.wait_for_selector(".jp-NotebookPanel .jp-Cell")
    page.locator(".jp-StatusBar-TextItem",
                 has_text=re.compile(r"Python 3 \(ipykernel\) \| Idle")).wait_for(timeout=120_000)


def write(page, index: int, source: str) -> None:
    """Replace a cell's code, as a learner pasting it."""
    editor = cell(page, index).locator(".cm-content")
    editor.click()
    page.keyboard.press("Control+a")
    page.keyboard.press("Delete")
    page.keyboard.insert_text(source.rstrip("\n"))


def run(page, index: int) -> float:
    """Run a cell with Shift+Enter, as a learner does, once its editor has the focus; the
    time the keys were pressed."""
    target = cell(page, index)
    target.locator(".cm-content").click()
    target.locator(".cm-editor.cm-focused").wait_for(timeout=30_000)
    pressed = time.monotonic()
    page.keyboard.press("Shift+Enter")
    prompt = target.locator(".jp-InputPrompt")
    prompt.filter(has_not_text=re.compile(r"^\[ \]:$")).wait_for(timeout=30_000)
    return pressed


def wait_until_done(page, index: int, timeout_s: float) -> None:
    """Wait for the cell's prompt to show an execution count (``[3]:``, not ``[*]:``)."""
    prompt = cell(page, index).locator(".jp-InputPrompt")
    deadline = time.monotonic() + timeout_s
    while not re.fullmatch(r"\[\d+\]:", prompt.inner_text().strip()):
        if time.monotonic() > deadline:
            pytest.fail(f"cell {index} still running after {timeout_s} s")
        page.wait_for_timeout(100)


def output_of(page, index: int) -> str:
    return cell(page, index).locator(".jp-OutputArea").inner_text()


def wait_for_output(page, index: int, text: str, timeout_s: float) -> str:
    cell(page, index).locator(".jp-OutputArea", has_text=text).wait_for(timeout=timeout_s * 1000)
    return output_of(page, index)


def labels_on_screen(page) -> list[str]:
    """Every menu title, sidebar tab, tab and title attribute JupyterLab shows."""
    return page.evaluate("""() => {
        const texts = [];
        for (const node of document.querySelectorAll(
                '.lm-MenuBar-itemLabel, .lm-TabBar-tabLabel, .jp-SideBar .lm-TabBar-tab'))
            texts.push(node.innerText);
        for (const node of document.querySelectorAll('[title]')) texts.push(node.title);
        return texts.filter(Boolean);
    }""")


# -- the tests ------------------------------------------------------------------------------------
def test_a_learner_gets_a_hint_a_lesson_and_a_tick_from_the_self_check(open_lab):
    page = open_lab("learner", f"lab/tree/{NOTEBOOK}")
    wait_for_kernel(page)

    run(page, SETUP)
    wait_until_done(page, SETUP, timeout_s=300)          # the Spark session is up
    assert output_of(page, SETUP).strip() == ""

    run(page, TASK_1)                                    # the released stub
    wait_until_done(page, TASK_1, timeout_s=60)
    asked = run(page, CHECK_1)
    shown = wait_for_output(page, CHECK_1, "task not done yet", timeout_s=60)
    # The hint comes before any Spark work (asking Spark for the example's truth first took
    # 9 s). Two test workers on two cores measured 1.2 s, so the bound leaves room for a
    # busy machine and still fails if Spark runs first.
    assert time.monotonic() - asked < 4.0, "the hint waited for Spark"
    assert shown.strip().splitlines() == [f"✘ {UNFINISHED_HINT}"]

    write(page, TASK_1, WRONG_ANSWER)
    run(page, TASK_1)
    wait_until_done(page, TASK_1, timeout_s=60)
    run(page, CHECK_1)
    shown = wait_for_output(page, CHECK_1, "rows emitted by this micro-batch", timeout_s=300)
    assert shown.lstrip().startswith("✘ micro-batch ")
    for part in ("expected:", "got:", "the stream: batch sizes [2, 3, 0, 4], limit(4)",
                 'revisit: chapter 1, The global limit, section "A limit that spans micro-batches"'):
        assert part in shown, (part, shown)
    for course_internals in ("autograder/", "Traceback", "File \"", "CheckFailed"):
        assert course_internals not in shown, (course_internals, shown)

    write(page, TASK_1, RIGHT_ANSWER)
    run(page, TASK_1)
    wait_until_done(page, TASK_1, timeout_s=60)
    run(page, CHECK_1)
    shown = wait_for_output(page, CHECK_1, "✔", timeout_s=300)
    assert shown.strip().startswith("✔ the emitted rows match Spark")


def test_a_learners_lab_shows_validate_and_no_instructor_tool(open_lab):
    page = open_lab("learner", f"lab/tree/{NOTEBOOK}")
    page.locator(".validate-button").wait_for(timeout=120_000)
    page.wait_for_timeout(2_000)                          # late plugins have added theirs
    # JupyterLab's announcements ask, once restored, whether to fetch its news from the
    # internet: a learner's lab does not ask (lab/learner/labconfig/page_config.json).
    assert "Jupyter news" not in page.locator("body").inner_text()
    on_screen = labels_on_screen(page)
    assert "File" in on_screen and "Kernel" in on_screen
    for tool in INSTRUCTOR_TOOLS:
        assert not any(tool in label for label in on_screen), (tool, on_screen)
    assert page.locator("#nbgrader-create_assignemnt").count() == 0


def test_an_instructors_lab_has_the_instructor_tools(open_lab):
    page = open_lab("instructor", f"lab/tree/{NOTEBOOK}")
    page.locator(".validate-button").wait_for(timeout=120_000)
    page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader").wait_for(timeout=30_000)
    assert any("Create Assignment" in label for label in labels_on_screen(page))

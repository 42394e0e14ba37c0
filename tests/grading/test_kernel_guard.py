"""The kernel guard's parts, each on its own, without a kernel or Spark.

What a notebook may not touch (:class:`ClosedFiles`), how tampering is put back
(:class:`Pristine`), and what the audit hook does with each kind of event
(:class:`KernelGuard`), called directly: an audit hook, once added, can never be removed from
a process, so the installed guard is tested in processes of its own (test_borrowing.py,
test_graders_faults.py, the hostile corpus) and here in one more, for the run's answers.
"""
import json
import os
import subprocess
import sys
import types

import pytest

from autograder.contract import ANSWERS, BORROWED, GUARD_DENY, GUARD_LOG
from autograder.grading.kernel_guard import (END_MARK, START_MARK, ClosedFiles, GuardLog,
                                             KernelGuard, Pristine)


@pytest.fixture
def closed(tmp_path):
    (tmp_path / "work").mkdir()
    (tmp_path / "course").mkdir()
    return ClosedFiles(str(tmp_path / "work"), (str(tmp_path / "course"),),
                       str(tmp_path / "work" / "guard.jsonl"))


def test_the_notebooks_own_folder_is_open_and_the_graders_files_are_closed(closed, tmp_path):
    assert str(tmp_path / "work" / "my_checkpoint" / "offsets") not in closed
    assert str(tmp_path / "course" / "spark-answers" / "answers.json") in closed
    assert os.fsencode(tmp_path / "course" / "answers.json") in closed
    assert str(tmp_path / "work" / "guard.jsonl") in closed      # the guard's log, even here
    assert "/anywhere/gradebook.db" in closed
    assert str(tmp_path / "courses") not in closed                 # a name that starts alike
    assert 3 not in closed                                          # a file descriptor


def test_a_link_into_a_closed_folder_is_closed(closed, tmp_path):
    (tmp_path / "work" / "shortcut").symlink_to(tmp_path / "course")
    assert str(tmp_path / "work" / "shortcut" / "answers.json") in closed


class Shell:
    """Stands in for IPython's shell: error display on the class and on the instance."""

    def showtraceback(self):
        return "the course's display"


def _ours():
    return "the course's"


@pytest.fixture
def kernel(monkeypatch):
    """A course module, builtins and a shell, as Pristine finds them before a learner."""
    module = types.ModuleType("autograder.demo_checks")
    module.check_it = _ours
    monkeypatch.setitem(sys.modules, module.__name__, module)
    fake_builtins = types.ModuleType("builtins")
    fake_builtins.print, fake_builtins.input = print, input
    shell = Shell()
    shell.set_custom_exc = None.__class__  # something the instance holds
    return module, fake_builtins, shell, Pristine({module.__name__: module}, fake_builtins, shell)


def test_what_a_learner_replaced_is_put_back_and_named(kernel, monkeypatch):
    module, fake_builtins, shell, pristine = kernel
    assert pristine.repair() == []
    module.check_it = lambda: "the learner's"
    module.extra = 1                                   # new names are left alone
    fake_builtins.print = lambda *args: None
    fake_builtins.input = lambda prompt="": "y"        # the kernel swaps it itself
    shell.set_custom_exc = "the learner's"
    monkeypatch.setattr(Shell, "showtraceback", lambda self: "hidden")
    monkeypatch.setitem(sys.modules, module.__name__, types.ModuleType("impostor"))

    assert sorted(pristine.repair()) == [
        "IPython Shell.showtraceback", "IPython shell.set_custom_exc",
        "autograder.demo_checks.check_it", "builtins.print",
        "sys.modules['autograder.demo_checks']"]
    assert module.check_it is _ours and sys.modules[module.__name__] is module
    assert fake_builtins.print is print and shell.showtraceback() == "the course's display"
    assert pristine.repair() == []


def guard_with_log(tmp_path, closed, *, remote=False):
    log = tmp_path / "guard.jsonl"
    pristine = Pristine({}, types.ModuleType("builtins"), None)
    return KernelGuard(GuardLog(str(log)), closed, pristine, remote=remote), log


def events(log) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def mark(name: str, grade_id: str):
    return compile(f"{name} = {grade_id!r}", "cell", "exec")


def test_the_hook_follows_grade_cells_and_refuses_what_is_closed(tmp_path, closed):
    guard, log = guard_with_log(tmp_path, closed)
    answers = str(tmp_path / "course" / "answers.json")
    with pytest.raises(PermissionError):
        guard.hook("open", (answers, "r", 0))
    guard.hook("open", (str(tmp_path / "work" / "mine.json"), "r", 0))
    guard.hook("sys.settrace", (None,))                   # a learner's own cell may trace
    guard.hook("exec", (mark(START_MARK, "test_a"),))
    with pytest.raises(PermissionError):
        guard.hook("sys.settrace", (None,))               # not while a check runs
    guard.hook("sqlite3.connect", (":memory:",))
    with pytest.raises(PermissionError):
        guard.hook("sqlite3.connect", ("/anywhere/gradebook.db",))
    guard.hook("exec", (mark(END_MARK, "test_a"),))
    guard.hook("subprocess.Popen", ("ls",))               # a local Spark: processes are fine
    assert [(e["event"], e["cell"], e.get("what")) for e in events(log)] == [
        ("denied", None, f"open {answers}"),
        ("start", "test_a", None),
        ("denied", "test_a", "sys.settrace while a check runs"),
        ("denied", "test_a", "sqlite3.connect '/anywhere/gradebook.db'"),
        ("end", "test_a", None),
    ]


def test_a_borrowed_answer_counts_once_per_grade_cell_and_only_inside_one(tmp_path, closed):
    guard, log = guard_with_log(tmp_path, closed)
    guard.hook(BORROWED, ("autograder.chapters.global_limit.reference_first_clicks",))
    for _ in range(2):
        guard.hook("exec", (mark(START_MARK, "test_a"),))
        guard.hook(BORROWED, ("autograder.chapters.global_limit.reference_first_clicks",))
        guard.hook(BORROWED, ("autograder.chapters.global_limit.reference_first_clicks",))
        guard.hook("exec", (mark(END_MARK, "test_a"),))
    assert [e["cell"] for e in events(log) if e["event"] == "borrowed"] == ["test_a"]


def test_under_a_shared_server_no_process_is_started(tmp_path, closed):
    guard, log = guard_with_log(tmp_path, closed, remote=True)
    with pytest.raises(PermissionError):
        guard.hook("os.system", ("ls",))
    assert [e["what"] for e in events(log)] == ["os.system"]


GRADING_KERNEL = f"""
from autograder.grading import kernel_guard
kernel_guard.install(["autograder"])
for cell in ("{START_MARK} = 'test_a'",
             "from autograder.checks.answers import spark_answer\\n"
             "print(spark_answer('demo.question', [1], lambda: 'asked Spark'))",
             "{END_MARK} = 'test_a'"):
    exec(compile(cell, "/tmp/ipykernel_0/cell.py", "exec"), {{}})
"""


def test_a_grading_kernel_reads_the_runs_answers_before_the_guard_closes_them(tmp_path):
    # The answers lie in the course folder, which the guard closes: they are read when the
    # guard is installed, not when a check first asks, inside a grade cell.
    course = tmp_path / "course"
    course.mkdir()
    (course / "answers.json").write_text(json.dumps({'demo.question [1]': '"recorded"'}))
    log = tmp_path / "guard.jsonl"
    env = {**os.environ, GUARD_LOG: str(log), GUARD_DENY: str(course),
           ANSWERS: str(course / "answers.json")}
    (tmp_path / "work").mkdir()  # the kernel's own folder, outside the course's
    ran = subprocess.run([sys.executable, "-c", GRADING_KERNEL], env=env, cwd=tmp_path / "work",
                         capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "recorded"
    assert [e["event"] for e in events(log)] == ["start", "end"]   # nothing denied

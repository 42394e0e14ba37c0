"""Each notebook's nbgrader process, forked from one launcher that imported nbgrader once.

The grading tests show that grades come out the same (every class in tests/grading is
graded this way); here, what the launcher promises a grading run: a child behaves as
``python -m nbgrader`` would (its folder, its log, its exit code), a launcher that dies
costs no notebook, and nothing is left running when the run ends, however it ends.
No Spark runs here: the children run nbgrader commands that need no kernel.
"""
import os
import signal
import subprocess
import sys
import textwrap
import time

import psutil
import pytest

from autograder.grading.processes import kill_tree
from autograder.grading.warm_nbgrader import ENDED_UNSEEN, WarmNbgrader

NBGRADER = [sys.executable, "-m", "nbgrader"]


@pytest.fixture
def launcher():
    warm = WarmNbgrader()
    yield warm
    warm.close()


def run(launcher, tmp_path, *args, name="child"):
    folder = tmp_path / name
    folder.mkdir()
    log = tmp_path / f"{name}.log"
    process = launcher.launch([*NBGRADER, *args], cwd=folder, env=dict(os.environ), log=log)
    return process, folder, log


def gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE  # ended, not yet reaped
    except psutil.NoSuchProcess:
        return True


def stock(tmp_path, *args):
    """What ``python -m nbgrader`` itself does with the same command line."""
    folder = tmp_path / "stock"
    folder.mkdir(exist_ok=True)
    done = subprocess.run([*NBGRADER, *args], cwd=folder, capture_output=True, text=True)
    return done.returncode, done.stdout + done.stderr


def test_a_child_works_in_its_own_folder_writes_its_own_log_and_exits_as_nbgrader_does(
        launcher, tmp_path):
    config, folder, log = run(launcher, tmp_path, "generate_config", name="config")
    assert config.wait(60) == 0
    assert (folder / "nbgrader_config.py").is_file()  # written where it was told to work
    assert not (tmp_path / "nbgrader_config.py").exists()

    failed, _, failed_log = run(launcher, tmp_path, "autograde", "no_such_assignment",
                                "--student", "ada", name="failed")
    code, said = stock(tmp_path, "autograde", "no_such_assignment", "--student", "ada")
    assert (failed.wait(60), code) == (1, 1)
    assert "no_such_assignment" in failed_log.read_text() and "no_such_assignment" in said

    version, _, version_log = run(launcher, tmp_path, "--version", name="version")
    assert version.wait(60) == 0
    assert version_log.read_text() == stock(tmp_path, "--version")[1]


def test_only_nbgrader_is_forked(launcher, tmp_path):
    with pytest.raises(ValueError, match="only nbgrader"):
        launcher.launch([sys.executable, "-c", "pass"], cwd=tmp_path, env={}, log=tmp_path / "x")


def test_a_launcher_that_dies_costs_no_notebook(launcher, tmp_path):
    # A child still running when its launcher dies runs on to its end, which is seen by its
    # pid, even when nobody reaps it (the child is held still until its launcher is gone).
    slow, _, log = run(launcher, tmp_path, "--version", name="slow")
    os.kill(slow.pid, signal.SIGSTOP)
    psutil.Process(launcher._process.pid).kill()
    psutil.Process(launcher._process.pid).wait(10)
    os.kill(slow.pid, signal.SIGCONT)
    assert slow.wait(20) == ENDED_UNSEEN
    assert "nbgrader version" in log.read_text()
    # The next notebook gets a new launcher.
    after, _, log = run(launcher, tmp_path, "--version", name="after")
    assert after.wait(60) == 0
    assert "nbgrader version" in log.read_text()


def test_a_child_killed_as_the_grading_kills_one_is_reaped(launcher, tmp_path):
    child, _, _ = run(launcher, tmp_path, "--version", name="killed")
    kill_tree(child.pid)  # what the grading does to a notebook out of time, and on Ctrl-C
    assert child.wait(30) in (0, -signal.SIGKILL)  # killed, or ended just before
    assert gone(child.pid)


@pytest.mark.parametrize("pipe_left_open", [False, True])
def test_the_launcher_ends_with_the_grading_process_however_it_ends(tmp_path, pipe_left_open):
    # The grading process is killed, with no clean-up of its own. The launcher sees its input
    # close; and when another process still holds that input open (a process the grading
    # started and that outlives it), it sees that its parent is gone.
    script = tmp_path / "grading.py"
    script.write_text(textwrap.dedent(f"""
        import os, subprocess, sys, time
        from pathlib import Path
        from autograder.grading.warm_nbgrader import WarmNbgrader
        warm = WarmNbgrader()
        warm.launch({NBGRADER!r} + ["--version"], cwd=Path({str(tmp_path)!r}),
                    env=dict(os.environ), log=Path({str(tmp_path / "v.log")!r})).wait(60)
        holder = None
        if {pipe_left_open!r}:
            held = warm._process.stdin.fileno()
            holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"],
                                      pass_fds=[held])
        print(warm._process.pid, holder.pid if holder else 0, flush=True)
        time.sleep(600)
    """))
    grading = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    holder = 0
    try:
        launcher_pid, holder = map(int, grading.stdout.readline().split())
        assert not gone(launcher_pid)
        grading.kill()
        grading.wait()
        deadline = time.monotonic() + 10
        while not gone(launcher_pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert gone(launcher_pid)
    finally:
        grading.kill()
        if holder:
            kill_tree(holder)

"""The instructor's command, on a real cluster: grade, be interrupted, resume, give feedback.

``python -m autograder.classroom grade 01_global_limit --spark standalone`` starts a Spark
standalone master and one worker on loopback, a Spark Connect server on them, and grades
the class. The test interrupts it (Ctrl-C) as soon as one learner's grade is saved: the
command must stop everything it started and keep that grade. Run again, it grades only
the others, and writes feedback that shows no hidden test code, and the CSV export.
"""
import json
import signal
import subprocess
import sys
import time

import psutil
import pytest

from autograder.grading import COURSE_ROOT
from autograder.grading.processes import kill_tree
from tests.support.hostile import notebook
from tests.support.submissions import FULL_MARKS

ASSIGNMENT = "01_global_limit"
FULL = FULL_MARKS[ASSIGNMENT]


def grade_command(submissions, course, *extra):
    return [sys.executable, "-m", "autograder.classroom", "grade", ASSIGNMENT,
            "--submissions", str(submissions), "--course-dir", str(course), "--jobs", "1",
            "--cell-timeout", "600", *extra]


def _ignoring_interrupts() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.mark.slow
def test_a_class_graded_on_a_standalone_cluster_survives_ctrl_c_and_resumes(tmp_path):
    # Each learner solved at most one task, so that a busy machine grades them quickly.
    submissions, course = tmp_path / "submitted", tmp_path / "course"
    for name, write in [("ann", notebook(solved=("emitted_so_far",))),
                        ("bob", notebook()),
                        ("cid", notebook(solved=("predict_emitted",)))]:
        (submissions / name / ASSIGNMENT).mkdir(parents=True)
        write(submissions / name / ASSIGNMENT / f"{ASSIGNMENT}.ipynb")
    ledgers = course / "grading" / ASSIGNMENT

    # Started as a script's background job would be (SIGINT ignored), which the command
    # must undo: an interrupt must still stop it.
    first = subprocess.Popen(grade_command(submissions, course, "--spark", "standalone"),
                             cwd=COURSE_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, preexec_fn=_ignoring_interrupts)
    deadline = time.monotonic() + 600
    while not list(ledgers.glob("*.json")) and time.monotonic() < deadline:
        assert first.poll() is None, first.communicate()
        time.sleep(1)
    started = psutil.Process(first.pid).children(recursive=True)
    assert any("deploy.master.Master" in " ".join(p.cmdline()) for p in started)
    assert any("deploy.worker.Worker" in " ".join(p.cmdline()) for p in started)
    first.send_signal(signal.SIGINT)
    out, err = first.communicate(timeout=120)
    assert first.returncode == 130, err
    assert "run the same command to resume" in err
    gone, alive = psutil.wait_procs(started, timeout=30)
    assert alive == [], [p.cmdline() for p in alive]
    (kept,) = list(ledgers.glob("*.json"))
    kept_record = kept.read_text()

    second = subprocess.run(grade_command(submissions, course, "--spark", "server"),
                            cwd=COURSE_ROOT, capture_output=True, text=True, timeout=1200)
    assert second.returncode == 0, second.stderr
    assert "1 submission(s) already graded: kept" in second.stderr
    assert kept.read_text() == kept_record  # not graded again

    points = {p.stem: json.loads(p.read_text())["cells"] for p in ledgers.glob("*.json")}
    scores = {name: {g: c["score"] for g, c in cells.items()} for name, cells in points.items()}
    zero = dict.fromkeys(FULL, 0)
    assert scores["ann"] == {**zero, "test_emitted_so_far": FULL["test_emitted_so_far"]}
    assert scores["bob"] == zero
    assert scores["cid"] == {**zero, "test_predict_emitted": FULL["test_predict_emitted"]}
    assert "3 graded, 0 flagged for cheating" in second.stdout

    assert (course / "grades.csv").read_text().count(ASSIGNMENT) == 3
    for feedback in (course / "feedback").glob(f"*/{ASSIGNMENT}/*.html"):
        html = feedback.read_text()
        assert "BEGIN HIDDEN TESTS" not in html and "_check(" not in html, feedback
    assert len(list((course / "feedback").glob(f"*/{ASSIGNMENT}/*.html"))) == 3


def _descendants(pid: int) -> list[psutil.Process]:
    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.Error:
        return []


def _running(pid: int, word: str) -> list[psutil.Process]:
    """The processes under ``pid`` whose command line has ``word`` (zombies have none)."""
    found = []
    for process in _descendants(pid):
        try:
            if any(word in part for part in process.cmdline()):
                found.append(process)
        except psutil.Error:
            pass
    return found


def _wait_for(condition, what: str, command: subprocess.Popen, log, timeout: float = 600):
    deadline = time.monotonic() + timeout
    while not condition():
        assert command.poll() is None, f"the command ended while waiting for {what}:\n{log.read_text()}"
        assert time.monotonic() < deadline, f"no {what} after {timeout} s:\n{log.read_text()}"
        time.sleep(0.5)


@pytest.mark.slow
def test_a_dead_server_is_restarted_and_its_notebooks_graded_again_and_sigterm_stops_the_class(tmp_path):
    # Scenario: the grading server is killed (kill -9) while notebooks are being graded;
    # the command starts it again and grades those notebooks again: nobody is scored for
    # the outage. Then SIGTERM (what `timeout` or a scheduler sends) stops the class like
    # Ctrl-C: nothing left running, graded notebooks kept, a rerun grades the rest.
    submissions, course = tmp_path / "submitted", tmp_path / "course"
    learners = {"ann": notebook(solved=("emitted_so_far",)), "bob": notebook(),
                "cid": notebook(solved=("predict_emitted",)), "dan": notebook(),
                "eve": notebook(solved=("emitted_so_far",))}
    for name, write in learners.items():
        (submissions / name / ASSIGNMENT).mkdir(parents=True)
        write(submissions / name / ASSIGNMENT / f"{ASSIGNMENT}.ipynb")
    ledgers = course / "grading" / ASSIGNMENT
    log = tmp_path / "stderr.log"
    command = [*grade_command(submissions, course, "--spark", "server"), "--no-feedback"]
    command[command.index("--jobs") + 1] = "2"
    with open(log, "w") as err:
        first = subprocess.Popen(command, cwd=COURSE_ROOT, stdout=subprocess.DEVNULL,
                                 stderr=err, text=True)
    try:
        _wait_for(lambda: "ran clean" in log.read_text(), "solution run", first, log)
        _wait_for(lambda: _running(first.pid, "autograde"), "notebook in flight", first, log)
        (server,) = _running(first.pid, "SparkConnectServer")
        server.kill()  # kill -9, in the middle of a notebook
        _wait_for(lambda: "graded again" in log.read_text(), "regrade", first, log)
        _wait_for(lambda: len(list(ledgers.glob("*.json"))) >= 2, "two grades", first, log)
        running = _descendants(first.pid)
        first.send_signal(signal.SIGTERM)
        first.wait(timeout=120)
    finally:
        kill_tree(first.pid)  # whatever a failed assertion left running
    assert first.returncode == 128 + signal.SIGTERM, log.read_text()
    assert "stopped by SIGTERM" in log.read_text()
    assert "run the same command to resume" in log.read_text()
    gone, alive = psutil.wait_procs(running, timeout=30)
    assert alive == [], [p.cmdline() for p in alive]
    kept = {p.stem for p in ledgers.glob("*.json")}
    assert 2 <= len(kept) < len(learners)

    second = subprocess.run(command, cwd=COURSE_ROOT, capture_output=True, text=True,
                            timeout=1200)
    assert second.returncode == 0, second.stderr
    assert f"{len(kept)} submission(s) already graded: kept" in second.stderr
    scores = {p.stem: {g: c["score"] for g, c in json.loads(p.read_text())["cells"].items()}
              for p in ledgers.glob("*.json")}
    zero = dict.fromkeys(FULL, 0)
    emitted_so_far = {**zero, "test_emitted_so_far": FULL["test_emitted_so_far"]}
    assert scores == {"ann": emitted_so_far, "bob": zero,
                      "cid": {**zero, "test_predict_emitted": FULL["test_predict_emitted"]},
                      "dan": zero, "eve": emitted_so_far}
    assert "5 graded, 0 flagged for cheating" in second.stdout
    assert "grader's own fault" not in second.stdout

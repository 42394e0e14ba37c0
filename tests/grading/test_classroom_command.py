"""The instructor's command, on a real cluster: grade, lose the server, be stopped, resume.

``python -m autograder.classroom grade 01_global_limit --spark standalone`` starts a Spark
standalone master and one worker on loopback, a Spark Connect server on them, and grades
the class. The test kills that server in the middle of a notebook (the command must start
it again and grade the notebook again), then stops the command with Ctrl-C, and a second
run with SIGTERM: each time the command must stop everything it started and keep what is
graded. The last run grades only the others, and writes feedback that shows no hidden test
code, and the CSV export.
"""
import fcntl
import json
import os
import pty
import re
import select
import shlex
import signal
import subprocess
import sys
import termios
import threading
import time

import psutil
import pytest

from autograder.grading import REPOSITORY
from autograder.grading.processes import kill_tree
from corpora.hostile import notebook
from corpora.submissions import FULL_MARKS

ASSIGNMENT = "01_global_limit"
FULL = FULL_MARKS[ASSIGNMENT]


def grade_command(submissions, course, *extra):
    return [sys.executable, "-m", "autograder.classroom", "grade", ASSIGNMENT,
            "--submissions", str(submissions), "--course-dir", str(course), "--jobs", "2",
            "--cell-timeout", "600", *extra]


def _ignoring_interrupts() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _descendants(pid: int) -> list[psutil.Process]:
    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.Error:
        return []


#: What a learner's kernel runs: one under the command means a notebook is being graded
#: (its nbgrader process is forked, so it keeps the launcher's command line).
KERNEL = "ipykernel_launcher"


def _running(pid: int, word: str) -> list[psutil.Process]:
    """The processes under ``pid`` with ``word`` in their command line, as an argument of its
    own (``ipykernel_launcher``) or the end of a class name (``SparkConnectServer``); zombies
    have none. (A part of a path would not do: every Spark process names autograder/'s files.)
    The sandbox a process runs in (``bwrap``, whose command line holds the process's) is not
    the process."""
    found = []
    for process in _descendants(pid):
        try:
            if process.name() == "bwrap":
                continue
            if any(part == word or part.endswith("." + word) for part in process.cmdline()):
                found.append(process)
        except psutil.Error:
            pass
    return found


class Run:
    """The command, started in the background with its progress written to a file."""

    def __init__(self, tmp_path, name: str, command: list[str], **popen):
        self.log = tmp_path / f"{name}.stderr"
        with open(self.log, "w") as err:
            self.process = subprocess.Popen(command, cwd=REPOSITORY, stdout=subprocess.PIPE,
                                            stderr=err, text=True, **popen)

    def says(self, text: str) -> bool:
        return text in self.log.read_text()

    def wait_for(self, condition, what: str, timeout: float = 600) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            assert self.process.poll() is None, \
                f"the command ended while waiting for {what}:\n{self.log.read_text()}"
            assert time.monotonic() < deadline, f"no {what} after {timeout} s:\n{self.log.read_text()}"
            time.sleep(0.5)

    def stop_with(self, sig: int) -> list[psutil.Process]:
        """Send ``sig``; wait for the command to end; return what it had started."""
        started = _descendants(self.process.pid)
        self.process.send_signal(sig)
        try:
            self.process.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            still = []
            for process in _descendants(self.process.pid):
                try:
                    still.append(" ".join(process.cmdline()[:6]))
                except psutil.Error:
                    pass
            kill_tree(self.process.pid)
            pytest.fail(f"{signal.Signals(sig).name} did not end the command in 120 s; still "
                        f"running: {still}\n{self.log.read_text()}")
        return started


@pytest.mark.slow
def test_a_class_survives_its_server_dying_and_every_stop_signal_and_resumes(tmp_path, class_records):
    # Scenario, each learner having solved at most one task so that a busy machine grades
    # them quickly:
    # 1. graded on a standalone cluster (a master and a worker on loopback, a Connect server
    #    on them), started as a script's background job would be (SIGINT ignored, which the
    #    command must undo), on the streams and Spark's answers the session recorded for
    #    chapter 1 (the solution's run is the other grading tests' too); the Connect
    #    server is killed (kill -9) while a notebook is graded: it is started again and that
    #    notebook graded again, nobody scored for it;
    #    then Ctrl-C stops the class: everything it started ends, what is graded is kept;
    # 2. run again on a local Connect server, and stopped with SIGTERM (what `timeout` or a
    #    scheduler sends) while a notebook is graded: the same;
    # 3. run again: only the rest is graded; each learner has exactly their points, the
    #    feedback shows no hidden test, the CSV holds everybody.
    submissions, course = tmp_path / "submitted", tmp_path / "course"
    learners = {"ann": notebook(solved=("emitted_so_far",)), "bob": notebook(),
                "cid": notebook(solved=("predict_emitted",)), "dan": notebook(),
                "eve": notebook(solved=("emitted_so_far",))}
    for name, write in learners.items():
        (submissions / name / ASSIGNMENT).mkdir(parents=True)
        write(submissions / name / ASSIGNMENT / f"{ASSIGNMENT}.ipynb")
    ledgers = course / "grading" / ASSIGNMENT
    graded = lambda: {p.stem: p.read_text() for p in ledgers.glob("*.json")}  # noqa: E731
    command = lambda spark, *more: grade_command(submissions, course, "--spark", spark, *more)  # noqa: E731
    recorded = ("--answers-from", str(class_records.recorded(ASSIGNMENT).parent))

    first = Run(tmp_path, "first", command("standalone", *recorded), preexec_fn=_ignoring_interrupts)
    try:
        first.wait_for(lambda: first.says("answers kept from an earlier run"), "the recorded answers")
        first.wait_for(lambda: _running(first.process.pid, KERNEL), "a notebook in flight")
        assert _running(first.process.pid, "Master") and _running(first.process.pid, "Worker")
        (server,) = _running(first.process.pid, "SparkConnectServer")
        server.kill()
        first.wait_for(lambda: first.says("graded again"), "the notebook graded again")
        first.wait_for(lambda: len(graded()) >= 2, "two grades")
        started = first.stop_with(signal.SIGINT)
    finally:
        kill_tree(first.process.pid)  # whatever a failed assertion left running
    assert first.process.returncode == 130, first.log.read_text()
    assert first.says("starting it again") and first.says("stopped by SIGINT")
    assert first.says("run the same command to resume")
    gone, alive = psutil.wait_procs(started, timeout=30)
    assert alive == [], [p.cmdline() for p in alive]
    kept = graded()

    second = Run(tmp_path, "second", command("server"))
    try:
        second.wait_for(lambda: _running(second.process.pid, KERNEL), "a notebook in flight")
        started = second.stop_with(signal.SIGTERM)
    finally:
        kill_tree(second.process.pid)
    assert second.process.returncode == 128 + signal.SIGTERM, second.log.read_text()
    assert second.says("stopped by SIGTERM")
    assert second.says(f"{len(kept)} submission(s) already graded: kept")
    gone, alive = psutil.wait_procs(started, timeout=30)
    assert alive == [], [p.cmdline() for p in alive]
    kept = graded()

    third = subprocess.run(command("server"), cwd=REPOSITORY, capture_output=True, text=True,
                           timeout=1200)
    assert third.returncode == 0, third.stderr
    assert f"{len(kept)} submission(s) already graded: kept" in third.stderr
    assert all(graded()[name] == record for name, record in kept.items())  # not graded again
    scores = {name: {g: c["score"] for g, c in json.loads(record)["cells"].items()}
              for name, record in graded().items()}
    zero = dict.fromkeys(FULL, 0)
    emitted_so_far = {**zero, "test_emitted_so_far": FULL["test_emitted_so_far"]}
    assert scores == {"ann": emitted_so_far, "bob": zero,
                      "cid": {**zero, "test_predict_emitted": FULL["test_predict_emitted"]},
                      "dan": zero, "eve": emitted_so_far}
    assert "5 graded, 0 flagged for cheating" in third.stdout
    # Its output went to a pipe and the others' to a file: plain text, one line per finished
    # notebook (a terminal would get a bar redrawn in place).
    for output in (third.stderr, third.stdout, first.log.read_text(), second.log.read_text()):
        assert "\r" not in output and "\x1b" not in output
    finished = [line for line in third.stderr.splitlines()
                if re.match(rf"\d+/{5 - len(kept)} {ASSIGNMENT}/\w+: ", line)]
    assert len(finished) == 5 - len(kept), third.stderr
    assert "grader's own fault" not in third.stdout

    assert (course / "grades.csv").read_text().count(ASSIGNMENT) == 5
    feedback = list((course / "feedback").glob(f"*/{ASSIGNMENT}/*.html"))
    assert len(feedback) == 5
    for page in feedback:
        html = page.read_text()
        assert "BEGIN HIDDEN TESTS" not in html and "_check(" not in html, page


class OnATerminal:
    """A shell running the command on a terminal of its own (a pseudo-terminal whose
    controlling process is the shell, as in a terminal window), read as it writes."""

    def __init__(self, shell_line: str):
        self.master, slave = pty.openpty()

        def controlling_terminal():
            os.setsid()
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)

        self.shell = subprocess.Popen(["bash", "-c", shell_line], cwd=REPOSITORY, stdin=slave,
                                      stdout=slave, stderr=slave, preexec_fn=controlling_terminal)
        os.close(slave)
        self.said, self._open = bytearray(), True
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while self._open:
            if select.select([self.master], [], [], 0.2)[0]:
                try:
                    self.said += os.read(self.master, 65536)
                except OSError:
                    return

    def command(self) -> psutil.Process:
        found = []
        for process in _descendants(self.shell.pid):
            try:
                if "autograder.classroom" in process.cmdline():
                    found.append(process)
            except psutil.Error:  # one that just ended
                pass
        (command,) = found
        return command

    def close(self) -> list[psutil.Process]:
        """The window closed: the shell killed, the terminal gone. What ran under it."""
        started = _descendants(self.shell.pid)
        self.shell.kill()
        self.shell.wait()
        self._open = False
        self._reader.join()
        os.close(self.master)
        return started


@pytest.mark.slow
def test_a_class_whose_terminal_closes_stops_or_carries_on_as_asked_and_grades_right(tmp_path, class_records):
    # Scenario, on the answers the session recorded for chapter 1:
    # 1. the command runs in a shell on a terminal; while a notebook is graded the window
    #    is closed (the shell killed, the terminal hung up): the command gets SIGHUP and
    #    stops as on any stop signal, every process it started ends, what is graded is kept;
    # 2. run again the way that outlives a terminal (SIGHUP ignored, as `nohup` does; its
    #    output left on the terminal), and the window closed while a notebook is graded: it
    #    grades everybody to the end although nothing can read what it writes;
    # each learner then has exactly the points a run left alone gives them.
    submissions, course = tmp_path / "submitted", tmp_path / "course"
    learners = {"ann": notebook(solved=("emitted_so_far",)), "bob": notebook(),
                "cid": notebook(solved=("predict_emitted",)), "dan": notebook()}
    for name, write in learners.items():
        (submissions / name / ASSIGNMENT).mkdir(parents=True)
        write(submissions / name / ASSIGNMENT / f"{ASSIGNMENT}.ipynb")
    ledgers = course / "grading" / ASSIGNMENT
    graded = lambda: {p.stem: p.read_text() for p in ledgers.glob("*.json")}  # noqa: E731
    line = shlex.join(grade_command(submissions, course, "--spark", "server", "--answers-from",
                                    str(class_records.recorded(ASSIGNMENT).parent)))

    def in_flight(terminal: OnATerminal) -> None:
        deadline = time.monotonic() + 600
        while not _running(terminal.shell.pid, KERNEL):
            assert terminal.shell.poll() is None and time.monotonic() < deadline, bytes(terminal.said)
            time.sleep(0.5)

    first = OnATerminal(line + "; true")  # a line of its own: the shell does not exec it
    in_flight(first)
    command = first.command()
    started = first.close()
    command.wait(120)  # not this process's child: its exit code is not ours to read
    # Had SIGHUP simply ended it, what it started in sessions of their own (the server,
    # nbgrader, the kernels) would run on: the command stopped them.
    gone, alive = psutil.wait_procs(started, timeout=30)
    assert alive == [], [p.cmdline() for p in alive]
    kept = graded()
    assert len(kept) < len(learners)

    second = OnATerminal("trap '' HUP; " + line + "; true")
    in_flight(second)
    command = second.command()
    second.close()
    command.wait(900)
    assert all(graded()[name] == record for name, record in kept.items())  # not graded again
    scores = {name: {g: c["score"] for g, c in json.loads(record)["cells"].items()}
              for name, record in graded().items()}
    zero = dict.fromkeys(FULL, 0)
    assert scores == {"ann": {**zero, "test_emitted_so_far": FULL["test_emitted_so_far"]},
                      "bob": zero, "dan": zero,
                      "cid": {**zero, "test_predict_emitted": FULL["test_predict_emitted"]}}
    assert (course / "grades.csv").read_text().count(ASSIGNMENT) == len(learners)

"""nbgrader's ``autograde`` of one notebook, forked from a process that imported nbgrader once.

Each notebook of a class is graded by a process of its own, so that it can be watched and
killed with its kernel (:mod:`.processes`). Started as ``python -m nbgrader``, every such
process first spends about 2 s of CPU importing nbgrader (nbconvert, SQLAlchemy, the
Jupyter server's handlers nbgrader's package imports), the same imports for every notebook.
Stock nbgrader pays them once for a whole class.

A :class:`WarmNbgrader` starts one *launcher* process that makes those imports once and
then forks a child for each notebook. The child is what ``python -m nbgrader`` would have
been: its own session (a process group the grader kills whole), its own folder, environment
and log, nbgrader's command line (:func:`autograder.toolkit.warm_python.become_module`, which also
forks Spark's driver workers). The launcher runs as ``python -m
autograder.grading.warm_nbgrader``, so the course's toolkit (``autograder/__init__.py``:
the micro-batch driver, the session factory, PySpark's client) is imported before the fork
too: a child uses the toolkit as it was when the run started. Kernels are fresh processes,
and import it anew.

The launcher stays single-threaded (a fork copies only the calling thread) and talks over
two pipes, one JSON line per message: a request (command line, folder, environment, log)
in; ``{"pid": ...}`` when the child runs and ``{"ended": pid, "code": ...}`` when it ended,
out. It ends when its input closes or the grading process that started it is gone.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

from ..toolkit.warm_python import become_module, ended_children

#: What the launcher imports before it forks: what ``nbgrader autograde`` would import.
PRELOAD = ("nbgrader.apps.nbgraderapp", "nbclient", "jupyter_client")


class ForkedProcess:
    """One notebook's nbgrader process, forked by the launcher: what :mod:`.processes` uses
    of a ``subprocess.Popen`` (``pid``, ``wait``, ``returncode``)."""

    def __init__(self, pid: int, launcher: "WarmNbgrader"):
        self.pid = pid
        self.returncode: int | None = None
        self._launcher = launcher

    def wait(self, timeout: float | None = None) -> int:
        code = self._launcher.wait_for(self.pid, timeout)
        if code is None:
            raise subprocess.TimeoutExpired(f"nbgrader (pid {self.pid})", timeout)
        self.returncode = code
        return code


#: The exit code given to a child whose end the launcher could not report (it died first).
ENDED_UNSEEN = -1


class WarmNbgrader:
    """A launcher of nbgrader processes, started on first use and shared by every notebook
    of a grading run (threads included). If the launcher dies, the next notebook starts a
    new one; a child it had forked runs on to its end, which is then seen by its pid."""

    def __init__(self, cwd: Path | None = None):
        """``cwd``: the launcher's folder, first on its import path as for any ``python -m``
        (the command's own: :attr:`~.course.GradingCourse.home`)."""
        self._cwd = cwd
        self._lock = threading.Lock()  # one request at a time
        self._news = threading.Condition()  # a child forked or ended, or the launcher gone
        self._started: list[int] = []
        self._codes: dict[int, int] = {}
        self._process: subprocess.Popen | None = None

    def launch(self, command: list[str], *, cwd: Path, env: dict[str, str], log: Path,
               answers: dict | None = None) -> ForkedProcess:
        """Fork a child that runs ``command`` (``[python, -m, nbgrader, ...]``) in ``cwd``
        with ``env``, its output in ``log``. ``answers``: Spark's recorded answers for the
        child's judge, handed over through the pipe, never through a file or the
        environment (a kernel's Spark can read both)."""
        if command[1:3] != ["-m", "nbgrader"]:
            raise ValueError(f"only nbgrader is forked from the launcher, not {command}")
        request = json.dumps({"argv": command[3:], "cwd": str(cwd), "env": env, "log": str(log),
                              "answers": answers})
        with self._lock:
            for attempt in range(2):
                process = self._running_launcher()
                try:
                    process.stdin.write(request + "\n")
                    process.stdin.flush()
                    pid = self._next_pid(process)
                    return ForkedProcess(pid, self)
                except (OSError, ValueError, EOFError):
                    if attempt:
                        raise
                    self.close()  # it died: once more with a new one

    def wait_for(self, pid: int, timeout: float | None) -> int | None:
        with self._news:
            self._news.wait_for(lambda: pid in self._codes or not self._launcher_alive(), timeout)
            if pid in self._codes:
                return self._codes[pid]
        if self._launcher_alive():
            return None
        # The launcher is gone: wait for the orphaned child by its pid.
        import psutil
        try:
            psutil.Process(pid).wait(timeout)
        except psutil.NoSuchProcess:
            pass
        except psutil.TimeoutExpired:
            return None
        return ENDED_UNSEEN

    def close(self) -> None:
        """Stop the launcher (its children are the grader's to kill: they run on)."""
        process, self._process = self._process, None
        if process is None:
            return
        try:
            process.stdin.close()
        except OSError:
            pass
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        with self._news:
            self._news.notify_all()

    # The grading side of the pipes.

    def _launcher_alive(self) -> bool:
        process = self._process
        return process is not None and process.poll() is None

    def _running_launcher(self) -> subprocess.Popen:
        if self._launcher_alive():
            return self._process
        self.close()
        process = subprocess.Popen(
            [sys.executable, "-m", __name__], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, text=True, bufsize=1, cwd=self._cwd)
        self._process = process
        with self._news:
            self._started = []
        threading.Thread(target=self._read, args=(process,), daemon=True).start()
        return process

    def _next_pid(self, process: subprocess.Popen) -> int:
        with self._news:
            self._news.wait_for(lambda: self._started or process.poll() is not None, 60)
            if not self._started:
                raise EOFError("the nbgrader launcher did not fork")
            return self._started.pop(0)

    def _read(self, process: subprocess.Popen) -> None:
        for line in process.stdout:
            message = json.loads(line)
            with self._news:
                if "pid" in message:
                    self._started.append(message["pid"])
                else:
                    self._codes[message["ended"]] = message["code"]
                self._news.notify_all()
        with self._news:
            self._news.notify_all()


# The launcher's side: python -m autograder.grading.warm_nbgrader


def _serve() -> None:
    import importlib
    import selectors
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the grader's: it stops the run
    for module in PRELOAD:
        importlib.import_module(module)
    replies = sys.stdout

    def reply(message: dict) -> None:
        replies.write(json.dumps(message) + "\n")
        replies.flush()

    def reap() -> None:
        for pid, code in ended_children():
            reply({"ended": pid, "code": code})

    selector = selectors.DefaultSelector()
    selector.register(0, selectors.EVENT_READ)
    grading, pending = os.getppid(), b""
    while os.getppid() == grading:  # else the grading process has died, whatever the pipe says
        if selector.select(timeout=0.05):
            read = os.read(0, 1 << 16)  # unbuffered: no request waits in a buffer unseen
            if not read:
                break
            pending += read
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                pid = os.fork()
                if pid == 0:
                    _child(json.loads(line))  # never returns
                reply({"pid": pid})
        reap()


def _child(request: dict) -> None:
    """Become ``python -m nbgrader <argv>`` in a session of its own, its output in its log;
    then exit with its code."""
    if request.get("answers") is not None:
        from .judge import HANDOVER
        HANDOVER.recorded = request["answers"]
    log = os.open(request["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    devnull = os.open(os.devnull, os.O_RDONLY)
    become_module("nbgrader", request["argv"], streams=[devnull, log, log],
                  env=request["env"], cwd=request["cwd"], new_session=True)


if __name__ == "__main__":
    _serve()

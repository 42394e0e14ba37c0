"""The Python Spark starts for the course (autograder/toolkit/warm_python.py).

Spark is told to run a script. For every Python process but a transformWithState query's
driver worker, the script becomes this Python. The driver worker is forked from one warm
process per JVM, which ends when its JVM ends; a worker whose script Spark kills is killed
with it. The queries' answers do not change.
"""
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
import pytest
from pyspark.sql import Row
from pyspark.sql.streaming import StatefulProcessor

from autograder.toolkit.driver import StreamRun
from autograder.toolkit.warm_python import DRIVER_WORKER, scripts_folder, warm_address, worker_python


def warm_processes_of(jvm: int) -> list[psutil.Process]:
    """The warm processes serving ``jvm`` (``python warm_python.py serve <jvm> <python>``)."""
    return [p for p in psutil.process_iter(["cmdline"])
            if (p.info["cmdline"] or [])[1:4] == [_module_file(), "serve", str(jvm)]]


def serving(jvm: int) -> bool:
    """Whether the warm process for ``jvm`` and this Python listens (its imports done);
    read from the kernel's list of Unix sockets, without connecting to it."""
    name = "@" + warm_address(jvm, sys.executable)[1:].decode()
    with open("/proc/net/unix") as sockets:
        return any(line.split()[-1] == name for line in sockets if len(line.split()) > 7)


def _module_file():
    import autograder.toolkit.warm_python as module
    return module.__file__


def gone_within(process: psutil.Process, seconds: float) -> bool:
    try:
        process.wait(seconds)
        return True
    except psutil.TimeoutExpired:
        return False


# -- everything but the driver worker: this very Python ---------------------------------

def test_any_other_python_spark_starts_is_this_python_with_its_arguments_and_exit_code(tmp_path):
    script = worker_python()
    ran = subprocess.run([script, "-c", "import sys; print(sys.executable); sys.exit(3)"],
                         capture_output=True, text=True, cwd=tmp_path)
    assert (ran.returncode, ran.stdout.strip()) == (3, sys.executable)
    assert not warm_processes_of(os.getpid())  # nothing warm is started for it


def test_a_scripts_folder_others_could_write_to_is_not_used(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    folder = scripts_folder()
    folder.mkdir()
    folder.chmod(0o777)  # anybody could put a "python" there
    assert worker_python() == sys.executable
    folder.chmod(0o700)
    assert Path(worker_python()).parent == folder


def test_a_scripts_folder_where_files_cannot_be_run_is_not_used(tmp_path, monkeypatch):
    """As on a machine whose temporary folder is mounted ``noexec``."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    real = os.statvfs
    monkeypatch.setattr(os, "statvfs", lambda path: type("Mounted", (), {
        "f_flag": real(path).f_flag | os.ST_NOEXEC})())
    assert worker_python() == sys.executable


# -- the driver worker: forked from the JVM's warm process --------------------------------

@pytest.fixture
def env():
    """The environment Spark gives a driver worker: a port to connect back to, here one
    that accepts and never answers, so the worker waits there for ever."""
    listener = socket.create_server(("127.0.0.1", 0))
    yield {**os.environ, "PYTHON_WORKER_FACTORY_PORT": str(listener.getsockname()[1]),
           "PYTHON_WORKER_FACTORY_SECRET": "secret", "SPARK_AUTH_SOCKET_TIMEOUT": "600"}
    listener.close()


def test_a_driver_worker_the_jvm_kills_takes_its_forked_child_along(tmp_path, env):
    """This test plays the JVM: it starts the script as Spark would."""
    command = [worker_python(), "-m", DRIVER_WORKER]
    first = subprocess.Popen(command, env=env, cwd=tmp_path)  # starts the warm process
    try:
        deadline = time.monotonic() + 60
        while not warm_processes_of(os.getpid()) and time.monotonic() < deadline:
            time.sleep(0.1)
        [warm] = warm_processes_of(os.getpid())
        while not serving(os.getpid()) and time.monotonic() < deadline:
            time.sleep(0.1)   # its imports done: the next worker is forked
        second = subprocess.Popen(command, env=env, cwd=tmp_path)
        deadline = time.monotonic() + 30
        while not warm.children() and time.monotonic() < deadline:
            time.sleep(0.05)
        [child] = warm.children()
        while child.cwd() != str(tmp_path) and time.monotonic() < deadline:
            time.sleep(0.05)  # forked a moment ago: it moves into the worker's folder next
        assert child.cwd() == str(tmp_path)

        second.send_signal(signal.SIGTERM)  # what Spark does to a worker it is done with
        second.wait(10)
        assert gone_within(child, 10), "the forked worker outlived the process Spark killed"
    finally:
        first.kill()
        first.wait()
        for warm in warm_processes_of(os.getpid()):
            warm.kill()


def test_processes_that_send_nothing_or_half_a_request_hold_nobody_up(tmp_path, env):
    """Two other processes of the user connect to the warm process: one sends nothing, one
    the first bytes of a request. A driver worker that comes after them is forked at once,
    while the script still waits for it (it runs the worker itself after a few seconds)."""
    warm = subprocess.Popen(
        [sys.executable, _module_file(), "serve", str(os.getpid()), sys.executable],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    silent, halfway = (socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) for _ in range(2))
    worker = None
    try:
        deadline = time.monotonic() + 60
        while not serving(os.getpid()) and time.monotonic() < deadline:
            time.sleep(0.1)
        silent.connect(warm_address(os.getpid(), sys.executable))
        halfway.connect(warm_address(os.getpid(), sys.executable))
        halfway.sendall(b"\0\0")   # half of a request's size, and no streams
        time.sleep(0.5)   # both are the warm process's now
        worker = subprocess.Popen([worker_python(), "-m", DRIVER_WORKER], env=env, cwd=tmp_path)
        deadline = time.monotonic() + 30
        while not psutil.Process(warm.pid).children() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert psutil.Process(warm.pid).children(), "the warm process forked nothing"
        # Held up past its patience, the script would have become a plain Python by now.
        assert worker_python() in psutil.Process(worker.pid).cmdline(), \
            "the two idle connections held the warm process until the script gave up"
    finally:
        if worker:
            worker.kill()
            worker.wait()
        silent.close()
        halfway.close()
        warm.kill()
        warm.wait()


def test_the_warm_process_ends_when_its_jvm_ends(tmp_path):
    jvm = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    warm = subprocess.Popen(
        [sys.executable, _module_file(), "serve", str(jvm.pid), sys.executable],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(2)
        assert warm.poll() is None
        jvm.kill()
        jvm.wait()
        warm.wait(10)
    finally:
        jvm.kill()
        warm.kill()


class CountsWhereItRuns(StatefulProcessor):
    """Counts rows per key, and leaves a file named after the pid and parent pid of every
    Python process that runs its ``init()``."""

    def __init__(self, folder):
        self.folder = folder

    def init(self, handle):
        import os
        open(os.path.join(self.folder, f"{os.getpid()}-{os.getppid()}"), "w").close()
        self.count = handle.getValueState("count", "n INT")

    def handleInputRows(self, key, rows, timerValues):
        total = (self.count.get() or (0,))[0] + sum(1 for _ in rows)
        self.count.update((total,))
        yield Row(k=key[0], n=total)


@pytest.mark.slow
def test_a_jvms_driver_workers_are_forked_from_one_warm_process_and_answer_as_before(spark, tmp_path):
    jvm = spark.sparkContext._gateway.proc.pid
    seen = tmp_path / "inits"
    seen.mkdir()

    def counted(rows):
        return rows.groupBy("k").transformWithState(CountsWhereItRuns(str(seen)), "k STRING, n INT",
                                                    "Update", "None")

    for start in range(3):  # three queries: the first may start the warm process
        with StreamRun(spark, "k STRING", counted, output_mode="update",
                       root=tmp_path / f"run{start}") as run:
            first = run.add_batch([("a",), ("a",), ("b",)])
            second = run.add_batch([("a",)])
        assert sorted(tuple(r) for b in first for r in b.output) == [("a", 2), ("b", 1)]
        assert [tuple(r) for b in second for r in b.output] == [("a", 3)]

    warm = warm_processes_of(jvm)
    assert len(warm) == 1, f"one warm process for the session's JVM, not {warm}"
    parents = [int(name.split("-")[1]) for name in os.listdir(seen)]
    assert parents.count(warm[0].pid) >= 2, \
        f"the later queries' driver workers were not forked from the warm process: {parents}"

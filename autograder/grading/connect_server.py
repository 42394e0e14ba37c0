"""A Spark that many notebooks share: a loopback Spark Connect server, and a small cluster.

Starting Spark costs 5-9 s; grading a class with one Spark per notebook pays it for every
learner. :class:`ConnectServer` starts **one** Spark Connect server for the whole run, on
the loopback interface and a free port, with the course's configuration
(:data:`autograder.toolkit.session.COURSE_CONF`). Each grading kernel then gets its own Connect
session from :func:`autograder.toolkit.session.course_session` (through ``SPARK_REMOTE``), so
learners share the JVM but not their sessions, temporary views or streaming queries.

:class:`StandaloneCluster` starts a Spark standalone master and one worker on loopback,
from the pip-installed PySpark, for grading "on a real cluster": the Connect server is then
started with ``master=cluster.url`` instead of ``local[2]``.

Both are context managers and always stop what they started, even on Ctrl-C or an error::

    with ConnectServer() as server:
        os.environ["SPARK_REMOTE"] = server.url      # sc://127.0.0.1:PORT
"""
from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Iterable

import pyspark

from ..toolkit.session import COURSE_CONF, LOCAL_MASTER, driver_java_options
from ..toolkit.warm_python import worker_python
from .hidden_folders import hiding

#: The pip package of PySpark is a complete Spark distribution (bin/, sbin/, jars/).
SPARK_HOME = Path(pyspark.__file__).resolve().parent
CONNECT_SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"


def free_port() -> int:
    """A TCP port nobody listens on right now (on 127.0.0.1)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        probe.settimeout(0.5)
        return probe.connect_ex(("127.0.0.1", port)) == 0


def spark_env(**extra: str) -> dict[str, str]:
    """The environment Spark's JVM processes start with.

    Spark stays on loopback, uses the pip package as its home, and its Python workers (the
    code of a transformWithState processor, a ``foreachBatch`` function) run *this*
    interpreter, where ``autograder`` and ``protobuf`` are importable.
    """
    env = {**os.environ, "SPARK_HOME": str(SPARK_HOME), "SPARK_LOCAL_IP": "127.0.0.1",
           "PYSPARK_PYTHON": worker_python(), "PYSPARK_DRIVER_PYTHON": sys.executable,
           "SPARK_CONNECT_MODE": "0",
           # A Python worker's socket to the JVM times out after 15 s by default
           # (pyspark.util.local_connect_and_auth); a machine busy grading a class needs longer.
           "SPARK_AUTH_SOCKET_TIMEOUT": "120",
           # The server and its Python workers in UTC, as a learner's local session is
           # (autograder.toolkit.session._clock_in_utc): zone-less datetimes mean the same instant.
           "TZ": "UTC", **extra}
    env.pop("SPARK_REMOTE", None)
    env.pop("SPARK_CONNECT_MODE_ENABLED", None)
    return env


class _Process:
    """A JVM started by us, in its own process group, logging to a file."""

    def __init__(self, name: str, command: list[str], log: Path, env: dict[str, str]):
        self.name, self.log = name, log
        log.parent.mkdir(parents=True, exist_ok=True)
        with open(log, "ab") as out:
            self.popen = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT,
                                          stdin=subprocess.DEVNULL, env=env,
                                          start_new_session=True)

    def wait_for_port(self, port: int, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.popen.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.popen.returncode}; "
                                   f"see {self.log}:\n{_tail(self.log)}")
            if _listening(port):
                return
            time.sleep(0.2)
        self.stop()
        raise TimeoutError(f"{self.name} did not open port {port} in {timeout:.0f} s; "
                           f"see {self.log}:\n{_tail(self.log)}")

    def stop(self, grace: float = 10.0) -> None:
        """SIGTERM to the whole group, then SIGKILL if it does not go. A process that
        died by itself may have left its group behind (Python workers): they are killed."""
        if self.popen.poll() is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.popen.pid, signal.SIGKILL)
            return
        for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.popen.pid, sig)
            try:
                self.popen.wait(wait)
                return
            except subprocess.TimeoutExpired:
                continue


def _tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


class ConnectServer:
    """A Spark Connect server on ``127.0.0.1:<free port>`` with the course configuration.

    ``master`` is where it runs its tasks: ``local[2]`` (the default, like the course's
    local session) or a standalone cluster's ``spark://`` URL. ``url`` is what to put in
    ``SPARK_REMOTE``; :meth:`session_url` gives a URL with a fresh session id, so that a
    grader can later find (and clean up) exactly the session one notebook used.
    """

    def __init__(self, master: str = LOCAL_MASTER, *, port: int | None = None,
                 log_dir: Path | None = None, start_timeout: float = 120.0,
                 extra_conf: dict[str, str] | None = None, hide: Iterable[Path] = (),
                 sandboxed: bool = False):
        self.master = master
        #: Whether the server runs in a sandbox (:func:`.sandbox.server_sandbox`): it then
        #: sees the notebooks' working folders and nothing of the course's but its package,
        #: and ``hide`` has nothing left to hide.
        self.sandboxed = sandboxed
        #: Folders the server's Spark cannot see (:mod:`.hidden_folders`), and, after
        #: :meth:`start`, why they are not hidden on this machine (None: they are).
        self.hide = list(hide)
        self.not_hidden: str | None = None
        self.port = port or free_port()
        self.log_dir = Path(log_dir or tempfile.mkdtemp(prefix="spark-connect-"))
        self.start_timeout = start_timeout
        self.extra_conf = extra_conf or {}
        self._process: _Process | None = None

    @property
    def url(self) -> str:
        return f"sc://127.0.0.1:{self.port}"

    def session_url(self, session_id: str | None = None) -> str:
        return f"{self.url}/;session_id={session_id or uuid.uuid4()}"

    def command(self) -> list[str]:
        conf = {
            **COURSE_CONF,
            # Java's own compiler and collector: the server lives for a whole class and its
            # sessions share one heap, which a serial collector would pause all at once
            # (session.JIT_AND_GC says what a notebook's own JVM runs instead, and why).
            "spark.driver.extraJavaOptions": driver_java_options(long_lived=True),
            "spark.connect.grpc.binding.address": "127.0.0.1",
            "spark.connect.grpc.binding.port": str(self.port),
            # Python code the server runs for a session (foreachBatch, processors), through
            # the script that forks a processor's driver worker from a warm process.
            "spark.pyspark.python": worker_python(),
            # How long the JVM waits on a Python worker's socket while it authenticates:
            # 15 s by default, too short while a busy machine grades a class. (The wait for
            # a new foreachBatch process to connect at all is a fixed 10 s: autograder.toolkit.sinks.)
            "spark.python.authenticate.socketTimeout": "120s",
            # Many sessions share the server: one learner's never-ending query must not hold
            # every task slot while the others wait (FIFO would let it).
            "spark.scheduler.mode": "FAIR",
            **self.extra_conf,
        }
        command = [str(SPARK_HOME / "bin" / "spark-submit"), "--class", CONNECT_SERVER_CLASS,
                   "--name", "inside-spark-state-store grading", "--master", self.master]
        for key, value in conf.items():
            command += ["--conf", f"{key}={value}"]
        return command + ["spark-internal"]

    def start(self) -> "ConnectServer":
        command, self.not_hidden = _isolated(self.command(), self.log_dir, self.hide,
                                             self.sandboxed)
        self._process = _Process("Spark Connect server", command,
                                 self.log_dir / "connect-server.log", spark_env())
        try:
            self._process.wait_for_port(self.port, self.start_timeout)
        except BaseException:  # Ctrl-C or SIGTERM while it starts: no `with` will stop it
            self.stop()
            raise
        return self

    def stop(self) -> None:
        if self._process is not None:
            self._process.stop()
            self._process = None

    @property
    def running(self) -> bool:
        """Whether the server's process is alive and still takes connections."""
        return self._process is not None and self._process.popen.poll() is None \
            and _listening(self.port)

    @property
    def pid(self) -> int | None:
        return self._process.popen.pid if self._process else None

    def restart(self) -> None:
        """Stop what is left of the server and start it again on the same port."""
        self.stop()
        self.start()

    def __enter__(self) -> "ConnectServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


class StandaloneCluster:
    """A Spark standalone master and one worker on loopback (``spark://127.0.0.1:PORT``)."""

    def __init__(self, *, cores: int = 2, memory: str = "2g", log_dir: Path | None = None,
                 start_timeout: float = 60.0, hide: Iterable[Path] = (),
                 sandboxed: bool = False):
        self.port, self.worker_port = free_port(), free_port()
        self.cores, self.memory = cores, memory
        self.log_dir = Path(log_dir or tempfile.mkdtemp(prefix="spark-standalone-"))
        self.start_timeout = start_timeout
        self._processes: list[_Process] = []
        #: Folders its executors cannot see, as for :class:`ConnectServer` (they read the
        #: files a learner's query names), and why not, on a machine where they can.
        self.hide = list(hide)
        self.not_hidden: str | None = None
        #: Whether the worker (whose executors run the learners' queries) is sandboxed.
        self.sandboxed = sandboxed

    @property
    def url(self) -> str:
        return f"spark://127.0.0.1:{self.port}"

    def start(self) -> "StandaloneCluster":
        spark_class = str(SPARK_HOME / "bin" / "spark-class")
        env = spark_env(SPARK_WORKER_DIR=str(self.log_dir / "work"))
        try:
            master = _Process("standalone master", [
                spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                "--port", str(self.port), "--webui-port", str(free_port())],
                self.log_dir / "master.log", env)
            self._processes.append(master)
            master.wait_for_port(self.port, self.start_timeout)
            command, self.not_hidden = _isolated([
                spark_class, "org.apache.spark.deploy.worker.Worker", self.url,
                "--host", "127.0.0.1", "--port", str(self.worker_port),
                "--webui-port", str(free_port()), "--cores", str(self.cores),
                "--memory", self.memory], self.log_dir, self.hide, self.sandboxed)
            worker = _Process("standalone worker", command, self.log_dir / "worker.log", env)
            self._processes.append(worker)
            worker.wait_for_port(self.worker_port, self.start_timeout)
            self._wait_for_registration()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_for_registration(self) -> None:
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if "Successfully registered with master" in _tail(self._processes[1].log, 200):
                return
            time.sleep(0.3)
        raise TimeoutError(f"no worker registered with {self.url}")

    def stop(self) -> None:
        for process in reversed(self._processes):
            process.stop()
        self._processes.clear()

    def __enter__(self) -> "StandaloneCluster":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def _isolated(command: list[str], log_dir: Path, hide: Iterable[Path],
              sandboxed: bool) -> tuple[list[str], str | None]:
    """``command`` in the server's sandbox, or else with ``hide`` mounted over
    (:mod:`.hidden_folders`); and why the folders are not hidden, if they are not."""
    if sandboxed:
        from .sandbox import server_sandbox
        return server_sandbox(log_dir).command(command), None
    return hiding(command, hide)


def release_session(url: str, *, stop_queries: bool = True) -> list[str]:
    """Stop every streaming query of the Connect session at ``url`` and release it.

    ``url`` carries the session id a grading kernel used. Whatever the notebook left
    behind (a query still running, a kernel that died without closing its session) is
    cleaned up from outside, so nothing leaks into the next learner's grading. Returns the
    ids of the queries it stopped.
    """
    # The Connect client's own class: PySpark's classic builder, given a remote URL, marks
    # the whole process as a Connect one (SPARK_CONNECT_MODE_ENABLED), and a local session
    # started in it afterwards (tests, scripts that grade in-process) would fail.
    from pyspark.sql.connect.session import SparkSession as ConnectSession

    stopped = []
    try:
        spark = ConnectSession.builder.remote(url).create()
    except Exception:  # noqa: BLE001 - the session may be closed already
        return stopped
    try:
        if stop_queries:
            for query in spark.streams.active:
                with contextlib.suppress(Exception):
                    query.stop()
                    stopped.append(query.id)
    except Exception:  # noqa: BLE001 - a session the learner stopped is gone
        pass
    finally:
        with contextlib.suppress(Exception):
            spark.stop()
    return stopped

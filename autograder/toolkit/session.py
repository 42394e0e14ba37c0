"""The one Spark session of the course.

Every chapter, exercise, grader and test gets its Spark session from
:func:`course_session`, so they all run with the same settings. Each setting is explained
where it is set, in :data:`COURSE_CONF`.

Two kinds of session come out of it:

* by default a *local* session: a JVM that this Python process starts as its child,
  running Spark with two worker threads (``local[2]``), like a learner's laptop;
* when the environment variable ``SPARK_REMOTE`` names a Spark Connect server
  (``sc://127.0.0.1:15002``), a *Connect* session to that server. Classroom grading uses it
  so that many notebooks share one already running Spark instead of starting one each.
"""
from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Iterator

from pyspark.sql import SparkSession

from ..contract import JVM_LOG
from .warm_python import worker_python

#: Log configuration for the JVM: errors only, written to stdout (see the file itself).
LOG4J_CONFIG = Path(__file__).with_name("log4j2.properties")

#: Spark's classes, as a JVM of the course loaded them, saved by ``make env``
#: (``scripts/record_class_archive.py``) in Java's class-data-sharing format. A JVM that
#: maps this file starts Spark in about half the time it takes to read and check each class
#: from its jar. Without the file, or when it was written by another Java or for other jars,
#: the JVM loads the classes the ordinary way (and says why in its log, never on stderr).
#: ``COURSE_CLASS_ARCHIVE`` names another file (a missing one turns the archive off).
CLASS_ARCHIVE = Path(os.environ.get("COURSE_CLASS_ARCHIVE")
                     or Path(sys.prefix) / "spark-course-classes.jsa")


#: How the driver JVM compiles and collects, chosen for what the course runs: tiny
#: micro-batches, each a new round of planning and scheduling code, in JVMs that live for
#: minutes, on two cores.
#:
#: * ``-XX:TieredStopAtLevel=1``: compile hot methods with the quick compiler (C1) only.
#:   The optimising compiler (C2) would recompile the same methods again, on the same two
#:   cores, for code that tiny batches never run long enough to repay: a book page's JVM
#:   spends about 40 % less CPU time, and the page runs about a fifth faster.
#: * ``-XX:+UseSerialGC``: one thread collects a heap of tiny batches; G1's concurrent
#:   threads would take a core from Spark's two task threads (0.5-1 s of a page).
#:
#: Neither changes what Spark computes: the same plans, rows, metrics and state files. The
#: grading server keeps Java's own (``driver_java_options(long_lived=True)``): it lives for a
#: whole class and many sessions share its heap, which one collecting thread would pause
#: all at once, and these options grade a class no faster (docs/benchmarks.md).
JIT_AND_GC = ["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"]


def driver_java_options(record_classes_to: Path | None = None, *,
                        long_lived: bool = False) -> str:
    """The driver JVM's options: the log configuration, the compiler and collector
    (:data:`JIT_AND_GC`, except for a ``long_lived`` JVM such as the grading server, which
    keeps Java's own), and the class archive to map (or, for
    ``scripts/record_class_archive.py``, the file to save the loaded classes to)."""
    options = [f"-Dlog4j2.configurationFile=file:{LOG4J_CONFIG}",
               *([] if long_lived else JIT_AND_GC)]
    if record_classes_to:
        options.append(f"-XX:ArchiveClassesAtExit={record_classes_to}")
    elif CLASS_ARCHIVE.is_file():
        options.append(f"-XX:SharedArchiveFile={CLASS_ARCHIVE}")
    return " ".join(options)


#: The course's Spark configuration, with the reason for each setting.
COURSE_CONF: dict[str, str] = {
    # Two shuffle partitions instead of 200. A stateful operator keeps one state store per
    # shuffle partition, and every store is opened and committed in every micro-batch, so
    # 200 of them would make each batch of a tiny stream take seconds. With two, the state
    # store instances are few enough to print and read one by one.
    "spark.sql.shuffle.partitions": "2",
    "spark.default.parallelism": "2",
    # RocksDB keeps the state of every stateful operator. transformWithState (chapter 4)
    # only runs on it, and using it everywhere means one kind of state store in the course.
    "spark.sql.streaming.stateStore.providerClass":
        "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider",
    # Timestamps are printed and parsed in UTC, so outputs are the same on every machine.
    "spark.sql.session.timeZone": "UTC",
    # No web UI (nobody looks at it here, and it costs a port and start-up time) ...
    "spark.ui.enabled": "false",
    # ... and no "[Stage 0:>" progress bar: it is drawn on stderr.
    "spark.ui.showConsoleProgress": "false",
    # The JVM logs errors only, to stdout: nothing from Spark reaches stderr. And it maps
    # the course's class archive when there is one (CLASS_ARCHIVE, above).
    "spark.driver.extraJavaOptions": driver_java_options(),
    # Stay on the loopback interface: no external address, no warning about it.
    "spark.driver.host": "127.0.0.1",
    "spark.driver.bindAddress": "127.0.0.1",
}

#: Where the local session runs its tasks: two threads, like a 2-core laptop.
LOCAL_MASTER = "local[2]"


def course_session(app_name: str = "inside-spark-state-store") -> SparkSession:
    """Return the course's Spark session, creating it on first use.

    Calling it again returns the same session. With ``SPARK_REMOTE`` set, the session is a
    Spark Connect client of that server, and the server's own configuration applies (the
    grading command starts its server with :data:`COURSE_CONF`).
    """
    _clock_in_utc()
    remote = os.environ.get("SPARK_REMOTE")
    if remote:
        return SparkSession.builder.remote(remote).appName(app_name).getOrCreate()

    _environment_for_a_jvm()
    builder = SparkSession.builder.master(LOCAL_MASTER).appName(app_name)
    for key, value in COURSE_CONF.items():
        builder = builder.config(key, value)
    with _process_output_to(jvm_log_path()):
        spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


class SharedDriver:
    """A driver JVM that Python processes use one after the other, each with its own
    SparkContext: the book's pages, each executed in a fresh kernel (scripts/build_book.py).

    A fresh kernel would start a JVM of its own and run Spark's code cold: loading, then
    compiling the same classes again for every page. PySpark lets a process use a JVM that
    another one started (``PYSPARK_GATEWAY_PORT`` and ``PYSPARK_GATEWAY_SECRET``, read by
    ``pyspark.java_gateway.launch_gateway``): a kernel started with :meth:`env` finds this JVM,
    and :func:`course_session` creates its SparkContext there, with :data:`COURSE_CONF`, as
    it would in a JVM of its own. What the kernel shares with the one before it is the JVM
    alone: its Python, its SparkContext and sessions, settings, views and queries are new.

    A JVM runs one SparkContext at a time: :meth:`release`, after each kernel, stops what it
    left. The JVM starts in ``cwd`` (where Spark resolves relative paths, the kernels' own
    folder) with the environment :func:`course_session` gives a JVM it starts, and it ends
    with this process (its standard input closes) or with :meth:`close`.
    """

    def __init__(self, cwd: Path):
        from pyspark import SparkConf
        from pyspark.java_gateway import launch_gateway

        self.cwd = Path(cwd)
        _clock_in_utc()
        _environment_for_a_jvm()
        conf = SparkConf(loadDefaults=False).setAll(list(COURSE_CONF.items()))
        log = jvm_log_path()
        log.parent.mkdir(parents=True, exist_ok=True)
        with open(log, "ab") as out:
            self._gateway = launch_gateway(conf, popen_kwargs={
                "cwd": str(self.cwd), "stdout": out, "stderr": subprocess.STDOUT})

    def env(self) -> dict[str, str]:
        """What a process adds to its environment to use this JVM."""
        parameters = self._gateway.gateway_parameters
        return {"PYSPARK_GATEWAY_PORT": str(parameters.port),
                "PYSPARK_GATEWAY_SECRET": parameters.auth_token}

    @property
    def alive(self) -> bool:
        return self._gateway.proc.poll() is None

    def release(self) -> None:
        """Stop the SparkContext the last process left running in the JVM, if any. A JVM
        that cannot say or do it is closed: the next process must not meet what is left."""
        # SparkContext.getActive is a method of the Scala object, which has no static
        # forwarder for it (javap 'org.apache.spark.SparkContext$' in spark-core).
        try:
            jvm = self._gateway.jvm
            companion = jvm.java.lang.Class.forName("org.apache.spark.SparkContext$")
            active = companion.getField("MODULE$").get(None).getActive()
            if active.isDefined():
                active.get().stop()
        except Exception:  # noqa: BLE001 - py4j's errors, a JVM that died meanwhile
            self.close()

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._gateway.shutdown()
        with contextlib.suppress(Exception):
            self._gateway.proc.kill()
            self._gateway.proc.wait(10)


def _environment_for_a_jvm() -> None:
    """What this process's environment must say before it starts Spark's JVM."""
    # Spark picks its own network address from it.
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    # Python workers (transformWithState's processors, chapter 4) run this very interpreter,
    # not whatever "python3" is first on PATH (which may lack protobuf or even pyspark),
    # through a script that forks the driver's worker from a warm process (warm_python).
    if "PYSPARK_PYTHON" not in os.environ:
        os.environ["PYSPARK_PYTHON"] = worker_python()


def _clock_in_utc() -> None:
    """Make UTC this process's local time zone (and so its JVM's and Python workers').

    ``spark.sql.session.timeZone`` covers Spark's side only. A Python ``datetime`` without
    a zone (the chapters' streams are written with them) is turned into an instant with the
    *process's* zone, and Spark's timestamps come back to Python in that zone too: on a
    laptop set to India's time, noon would reach Spark as 06:30 UTC and every time the book
    prints would be off by five and a half hours. With the process in UTC, a zone-less
    datetime means the same instant on every machine. ``TZ`` is set before the JVM starts,
    which inherits it, as do the Python workers it starts.
    """
    if os.environ.get("TZ") != "UTC":
        os.environ["TZ"] = "UTC"
        time.tzset()


def jvm_log_path() -> Path:
    """The file that receives everything Spark's JVM prints (start-up notices, errors)."""
    return Path(os.environ.get(JVM_LOG, Path(tempfile.gettempdir()) / "spark-course-jvm.log"))


@contextlib.contextmanager
def _process_output_to(path: Path):
    """Point this process's stdout and stderr at ``path`` while the block runs.

    PySpark starts the JVM as a child process that inherits these two file descriptors.
    A Jupyter kernel copies whatever arrives on them into the running cell, so the JVM's
    start-up notices (a Java module warning, Spark's log-level hint) would show up as
    stderr in the notebook, and nbgrader scores a cell with stderr output zero. The JVM
    keeps the log file for its whole life; Python gets its own outputs back afterwards.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    sys.stdout.flush()
    sys.stderr.flush()
    saved = {fd: os.dup(fd) for fd in (1, 2)}
    with open(path, "ab") as log:
        try:
            for fd in saved:
                os.dup2(log.fileno(), fd)
            yield
        finally:
            for fd, copy in saved.items():
                os.dup2(copy, fd)
                os.close(copy)


def is_connect(spark: SparkSession) -> bool:
    """True when ``spark`` is a Spark Connect session rather than a local one."""
    return not hasattr(spark, "sparkContext") or type(spark).__module__.startswith(
        "pyspark.sql.connect"
    )


@contextlib.contextmanager
def spark_setting(spark: SparkSession, key: str, value: str | None) -> Iterator[None]:
    """``key`` set to ``value`` while the block runs, then back to what it was.

    ``None`` leaves the setting alone. Most streaming settings are read when a query starts
    and kept in its checkpoint, so a query started inside the block keeps the value after it.
    """
    if value is None:
        yield
        return
    before = spark.conf.get(key, None)
    spark.conf.set(key, value)
    try:
        yield
    finally:
        if before is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, before)

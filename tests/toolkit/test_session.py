"""The course session: one configuration, and nothing on stderr."""
import os
import subprocess
import sys

from autograder.grading.connect_server import ConnectServer
from autograder.toolkit.session import COURSE_CONF, JIT_AND_GC


def test_the_session_carries_the_course_configuration(spark):
    for key in ("spark.sql.shuffle.partitions", "spark.sql.streaming.stateStore.providerClass",
                "spark.sql.session.timeZone"):
        assert spark.conf.get(key) == COURSE_CONF[key]


def test_a_notebooks_jvm_compiles_quickly_and_the_grading_servers_keeps_javas_own(spark, tmp_path):
    # What the JVM itself says it was started with, not what the configuration asked for.
    started_with = list(spark.sparkContext._jvm.java.lang.management.ManagementFactory
                        .getRuntimeMXBean().getInputArguments())
    assert set(JIT_AND_GC) <= set(started_with), started_with
    server = " ".join(ConnectServer(log_dir=tmp_path).command())
    assert "spark.driver.extraJavaOptions=-Dlog4j2.configurationFile=" in server
    assert not any(option in server for option in JIT_AND_GC), server


def _in_a_fresh_process(program: str, home, **env: str) -> subprocess.CompletedProcess:
    """``program`` in a new Python with a bare environment and its own JVM log."""
    return subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          env={"COURSE_JVM_LOG": str(home / "jvm.log"), "PATH": "/usr/bin:/bin",
                               "HOME": str(home), **env},
                          timeout=180)


COUNT_THREE = ("from autograder import course_session\n"
               "spark = course_session()\n"
               "print(spark.range(3).count())\n")


def test_starting_spark_writes_nothing_to_stderr(tmp_path):
    # nbgrader gives zero points to a graded cell that writes to stderr
    result = _in_a_fresh_process(COUNT_THREE, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "3\n"
    assert result.stderr == ""
    assert (tmp_path / "jvm.log").exists()


def test_a_damaged_class_archive_costs_speed_and_nothing_else(tmp_path):
    # The JVM maps the class archive `make env` records; one that is damaged, or was
    # written by another Java, must neither stop Spark nor print a word.
    damaged = tmp_path / "classes.jsa"
    damaged.write_bytes(os.urandom(100_000))
    result = _in_a_fresh_process(COUNT_THREE, tmp_path, COURSE_CLASS_ARCHIVE=str(damaged))
    assert result.returncode == 0, result.stderr
    assert (result.stdout, result.stderr) == ("3\n", "")


def test_a_laptop_outside_utc_sees_the_same_instants(tmp_path):
    # PySpark turns a datetime without a zone into an instant with the Python process's own
    # zone, and back the same way: on a laptop in India the chapters' T0 (noon) would be
    # 06:30 in Spark's UTC and the book's times would all be off by five and a half hours.
    program = ("from autograder import course_session\n"
               "from autograder.chapters.aggregation_planning import T0\n"
               "from autograder.chapters.state_store_save import as_rows, seconds\n"
               "spark = course_session()\n"
               "noon = spark.createDataFrame([(T0,)], 'ts TIMESTAMP')\n"
               "print(noon.selectExpr('CAST(ts AS STRING)').first()[0])\n"
               "print(noon.first().ts == T0)\n"
               "events = spark.createDataFrame(as_rows([0, 12]), 'id INT, ts TIMESTAMP')\n"
               "print([seconds(row.ts) for row in events.collect()])\n")
    result = _in_a_fresh_process(program, tmp_path, TZ="Asia/Kolkata")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["2024-01-01 12:00:00", "True", "[0, 12]"]

"""The course session: one configuration, and nothing on stderr."""
import subprocess
import sys

from autograder.session import COURSE_CONF


def test_the_session_carries_the_course_configuration(spark):
    for key in ("spark.sql.shuffle.partitions", "spark.sql.streaming.stateStore.providerClass",
                "spark.sql.session.timeZone"):
        assert spark.conf.get(key) == COURSE_CONF[key]


def test_starting_spark_writes_nothing_to_stderr(tmp_path):
    # nbgrader gives zero points to a graded cell that writes to stderr
    program = ("from autograder import course_session\n"
               "spark = course_session()\n"
               "print(spark.range(3).count())\n")
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                            env={"COURSE_JVM_LOG": str(tmp_path / "jvm.log"),
                                 "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
                            timeout=180)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "3\n"
    assert result.stderr == ""
    assert (tmp_path / "jvm.log").exists()

"""Save the classes a course session of Spark loads, so that every later JVM starts faster.

    .venv/bin/python -m scripts.record_class_archive [--force]

``make env`` runs it once, after installing the packages. Java (13 and later) can write,
when a JVM exits, every class it loaded into an archive (``-XX:ArchiveClassesAtExit``); a
later JVM given that archive (``-XX:SharedArchiveFile``) maps those classes into memory
instead of finding, reading and verifying each one in its jar. Spark loads thousands of
classes before its first micro-batch, so this is most of what starting it costs.

The script starts a course session in a child process with the first option, runs what the
chapters run (a stateful aggregation with its state and metadata read back, and a
transformWithState query), stops it, waits for the JVM to write the archive, and moves the
archive to :data:`autograder.toolkit.session.CLASS_ARCHIVE`, which every course session (and the
grading server) then maps. On two cores, a new process starting a course session and
running its first stateful query takes 12-17 s without the archive, 7-8.5 s with it
(docs/benchmarks.md).

When anything goes wrong the script says so and leaves no archive: Spark then starts the
ordinary way.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from autograder.toolkit.session import CLASS_ARCHIVE

ROOT = Path(__file__).resolve().parent.parent


#: What the recording JVM runs: the course's kinds of query, then a clean exit (the JVM
#: writes the archive on its way out, after its Python parent closes its stdin).
RECORD = """
import sys
from autograder.toolkit.session import COURSE_CONF, driver_java_options
COURSE_CONF["spark.driver.extraJavaOptions"] = driver_java_options(record_classes_to=sys.argv[1])
from pyspark.sql import Row
from pyspark.sql.streaming import StatefulProcessor
from autograder import StreamRun, course_session

class Count(StatefulProcessor):
    def init(self, handle):
        self.seen = handle.getValueState("seen", "n INT")

    def handleInputRows(self, key, rows, timerValues):
        n = (self.seen.get() or (0,))[0] + sum(1 for _ in rows)
        self.seen.update((n,))
        yield Row(w=key[0], n=n)

spark = course_session()
counts = lambda df: df.groupBy("w").count()
counted = lambda df: df.groupBy("w").transformWithState(Count(), "w STRING, n INT", "Update", "None")
for query, mode in ((counts, "update"), (counted, "update")):
    with StreamRun(spark, "w STRING", query, output_mode=mode) as run:
        run.add_batch([("a",)])
        run.add_batch([("a",), ("b",)])
        run.state_metadata()
        run.state(**({"stateVarName": "seen"} if query is counted else {}))
jvm = spark.sparkContext._gateway.proc
spark.stop()
jvm.stdin.close()
jvm.wait(timeout=300)
"""


def record(target: Path) -> str | None:
    """Write the archive to ``target``; None, or why there is none."""
    with tempfile.TemporaryDirectory(prefix="class-archive-") as scratch:
        dump = Path(scratch) / "classes.jsa"
        env = {**os.environ, "COURSE_JVM_LOG": str(Path(scratch) / "jvm.log")}
        env.pop("SPARK_REMOTE", None)
        try:
            done = subprocess.run([sys.executable, "-c", RECORD, str(dump)], env=env,
                                  capture_output=True, text=True, timeout=600)
        except subprocess.TimeoutExpired:
            return "the recording session did not finish in 600 s"
        if done.returncode != 0:
            return "the recording session failed: " + done.stderr.strip()[-1500:]
        if not dump.is_file():
            log = Path(scratch) / "jvm.log"
            tail = log.read_text()[-1500:] if log.exists() else ""
            return "the JVM wrote no archive (does this Java support -XX:ArchiveClassesAtExit?) " + tail
        staged = target.with_name(target.name + ".new")
        shutil.copyfile(dump, staged)
        os.replace(staged, target)   # a JVM starting meanwhile sees the old file or the new
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--force", action="store_true", help="record it again if it exists")
    args = parser.parse_args(argv)
    if CLASS_ARCHIVE.is_file() and not args.force:
        print(f"{CLASS_ARCHIVE} is there already (--force records it again)")
        return 0
    CLASS_ARCHIVE.unlink(missing_ok=True)   # a JVM must not map an archive for other jars
    why_not = record(CLASS_ARCHIVE)
    if why_not:
        print(f"no class archive, Spark will start the ordinary way: {why_not}")
    else:
        print(f"Spark's classes saved in {CLASS_ARCHIVE} "
              f"({CLASS_ARCHIVE.stat().st_size / 2**20:.0f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

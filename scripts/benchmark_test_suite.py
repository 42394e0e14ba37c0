"""How long the whole test suite takes, as CI runs it: a record of the question ``test-suite``.

    .venv/bin/python -m scripts.benchmark_test_suite [--clone DIR] [--keep]

Clones the current commit into a fresh folder (``--clone``; ``../shared`` must lie beside
it, as on CI), runs ``bash .ci/run`` there with pytest's per-test times written as JUnit
XML, and writes a record (:mod:`records`): the whole run, the tests alone, how many passed
and failed, the workers' summed time, every file's time (longest first) and the twenty
tests that took longest, so the next change to the suite's schedule starts from data. The clone's
``make test`` installs its own .venv, as a fresh machine does. Nothing else that starts Spark
should run meanwhile: on a small machine the two would slow each other down.
"""
from __future__ import annotations

import argparse
import collections
import os
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from scripts.records import machine, write_record

ROOT = Path(__file__).resolve().parent.parent


def run_suite(clone: Path) -> tuple[float, Path, int]:
    """Run CI's command in ``clone``; its seconds, its JUnit file and its exit code."""
    junit = clone / "suite.junit.xml"
    env = {**os.environ, "PYTEST_ADDOPTS": f"--junitxml={junit}"}
    started = time.monotonic()
    code = subprocess.run(["bash", ".ci/run"], cwd=clone, env=env).returncode
    return time.monotonic() - started, junit, code


def numbers_of(seconds: float, junit: Path) -> dict:
    suite = ET.parse(junit).getroot()
    suite = suite if suite.tag == "testsuite" else suite.find("testsuite")
    by_file: collections.Counter = collections.Counter()
    by_test: collections.Counter = collections.Counter()
    for case in suite.iter("testcase"):
        path = case.get("classname", "").replace(".", "/") + ".py"
        by_file[path] += float(case.get("time", 0))
        by_test[f"{path}::{case.get('name')}"] += float(case.get("time", 0))
    failed = int(suite.get("failures", 0)) + int(suite.get("errors", 0))
    return {
        "the whole run": round(seconds),
        "the tests (pytest)": round(float(suite.get("time", 0))),
        "tests passed": int(suite.get("tests", 0)) - failed - int(suite.get("skipped", 0)),
        "tests failed": failed,
        "the workers' time": round(sum(by_file.values())),
        "by file": {name: round(s) for name, s in by_file.most_common()},
        "longest tests": {name: round(s) for name, s in by_test.most_common(20)},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clone", type=Path, help="where to clone (default: a new temporary folder)")
    parser.add_argument("--keep", action="store_true", help="keep the clone afterwards")
    args = parser.parse_args(argv)
    clone = args.clone or Path(tempfile.mkdtemp(prefix="suite-", dir=ROOT.parent))
    if not (clone.parent / "shared").is_dir():
        parser.error(f"{clone.parent}/shared is missing: CI runs with ../shared beside the clone")
    shutil.rmtree(clone, ignore_errors=True)
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
    measured = subprocess.run(["git", "rev-parse", "HEAD"], cwd=clone, capture_output=True,
                              text=True, check=True).stdout.strip()
    load = machine()["load"]
    seconds, junit, code = run_suite(clone)
    record = write_record("test-suite", numbers_of(seconds, junit), load=load, measured=measured,
                          notes=f"bash .ci/run on a fresh clone; exit code {code}")
    print(f"{seconds:.0f} s, exit code {code}: {record}")
    if not args.keep:
        shutil.rmtree(clone, ignore_errors=True)
    return code


if __name__ == "__main__":
    sys.exit(main())

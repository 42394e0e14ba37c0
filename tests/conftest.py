"""Shared fixtures: one Spark session for the in-process tests, one folder of Spark's
answers for the two workers, one Spark Connect server for the tests that grade through
real nbgrader.

The grading tests grade their classes against one loopback Connect server for the run
(tests/support/classroom_fixtures.py), as the classroom command does: a kernel does not
start its own Spark. ``COURSE_SHARED_GRADING_SERVER=0`` gives every
graded kernel its own local Spark instead, as stock nbgrader would.
"""
import pytest

from autograder.toolkit.session import course_session
from scripts.records import newest_record
from tests.support import classroom_fixtures

#: The shared grading server's fixtures (pytest finds fixtures by the conftest's names).
grading_server = classroom_fixtures.grading_server
class_records = classroom_fixtures.class_records
shared_answers_folder = classroom_fixtures.shared_answers_folder
answers_shared_by_the_workers = classroom_fixtures.answers_shared_by_the_workers
_grading_tests_share_spark = classroom_fixtures._grading_tests_share_spark

def longest_first(paths: list[str], seconds: dict[str, float]) -> list[str]:
    """The order in which the two workers take the test files: longest first, by each file's
    time in the newest record of the whole suite (``scripts/benchmark_test_suite.py``, which
    writes every file's seconds). pytest-xdist hands whole files (``--dist loadfile``) to
    whichever worker is free, in collection order (``--no-loadscope-reorder`` in
    pyproject.toml), so a long file that started last would keep one worker busy while the
    other idles; short ones fill in at the end. A file the record does not know yet goes
    first: it may be long. Files of equal time keep their usual order."""
    unknown = max(seconds.values(), default=0) + 1
    return sorted(paths, key=lambda path: -seconds.get(path, unknown))


def pytest_sessionfinish(session):
    """The run's grading server goes when the run does (both workers done)."""
    classroom_fixtures.stop_the_runs_server(session.config)


def pytest_collection_modifyitems(items):
    """The test files longest first (:func:`longest_first`), each file's tests in its order."""
    record = newest_record("test-suite")
    seconds = record["numbers"]["by file"] if record else {}
    files = list(dict.fromkeys(item.nodeid.split("::")[0] for item in items))
    rank = {path: place for place, path in enumerate(longest_first(files, seconds))}
    items.sort(key=lambda item: rank[item.nodeid.split("::")[0]])


@pytest.fixture(scope="session")
def spark():
    """The course session (local ``local[2]``, or Connect when SPARK_REMOTE is set)."""
    return course_session()


#: The system Chromium every browser test drives (``make test`` installs it).
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-quic", "--no-first-run", "--disable-component-update", "--disable-sync",
]


@pytest.fixture(scope="session")
def browser():
    """One headless Chromium per test process, shared by the site's and the lab's tests.

    Playwright's synchronous API allows one instance per process at a time, so a second
    launch while the first is alive fails ("Sync API inside the asyncio loop").
    """
    from pathlib import Path

    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: `make test` installs it (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield chromium
        finally:
            chromium.close()

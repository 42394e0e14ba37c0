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
from tests.support import classroom_fixtures

#: The shared grading server's fixtures (pytest finds fixtures by the conftest's names).
grading_server = classroom_fixtures.grading_server
class_records = classroom_fixtures.class_records
shared_answers_folder = classroom_fixtures.shared_answers_folder
answers_shared_by_the_workers = classroom_fixtures.answers_shared_by_the_workers
_grading_tests_share_spark = classroom_fixtures._grading_tests_share_spark

#: The test files that take longest on two workers, longest first (``pytest --durations=0``
#: tells; the site's tests, which build the book, take about five minutes). pytest-xdist
#: hands whole files (``--dist loadfile``) to whichever worker is free, in collection order
#: (``--no-loadscope-reorder`` in pyproject.toml), so the long files start first and a long
#: one does not start last while the other worker idles; short ones fill in at the end.
LONGEST_FIRST = [
    "tests/browser/test_site.py",
    "tests/chapters/test_fixed_answers_today.py",  # every plain task's fixed cases, on Spark
    "tests/grading/test_transform_with_state_grading.py",
    "tests/grading/test_stream_join_grading.py",
    "tests/grading/test_classroom_hostile.py",  # waits out two limits (sleeper, endless loop)
    "tests/grading/test_aggregation_planning_grading.py",
    "tests/grading/test_state_store_grading.py",
    "tests/grading/test_classroom_command.py",
    "tests/grading/test_sandbox.py",   # a class of attackers, waited out after the command
    "tests/chapters/test_input_dimensions.py",  # the beliefs about code Spark runs, on Spark
    "tests/chapters/test_stream_join_checks.py",  # a fresh seed: Spark asked anew
    "tests/browser/test_accessibility.py",   # after the book is built (it waits for it)
    "tests/grading/test_classroom_shards.py",
    "tests/grading/test_state_store_save_grading.py",
    "tests/browser/test_steppers_on_every_screen.py",
    "tests/browser/test_reading_and_keyboard.py",
    "tests/grading/test_global_limit_grading.py",
    "tests/lab/test_exercises_open_unchanged.py",
    "tests/toolkit/test_check_notebook.py",
]


def pytest_sessionfinish(session):
    """The run's grading server goes when the run does (both workers done)."""
    classroom_fixtures.stop_the_runs_server(session.config)


def pytest_collection_modifyitems(items):
    """The long files first (see ``LONGEST_FIRST``), the others in their usual order."""
    rank = {path: place for place, path in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))


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

"""Shared fixtures: one Spark session for the in-process tests.

The grading tests grade through real nbgrader with a local Spark in each kernel. A shared
Spark Connect server (tests/support/classroom_fixtures.py) is faster, but under load its Python
workers for ``foreachBatch`` sometimes fail to connect back and honest cells score zero
(see docs/instructor.md), so the default suite does not use it. To try it:
``pytest -p tests.support.classroom_fixtures``.
"""
import pytest

from autograder.session import course_session


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

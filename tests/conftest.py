"""Shared fixtures: one Spark session for the in-process tests, and one Spark Connect
server that every grading test (real nbgrader, one kernel per notebook) grades against,
so Spark starts once for all of them (tests/classroom_fixtures.py)."""
import pytest

from autograder.session import course_session

pytest_plugins = ["tests.classroom_fixtures"]


@pytest.fixture(scope="session")
def spark():
    """The course session (local ``local[2]``, or Connect when SPARK_REMOTE is set)."""
    return course_session()

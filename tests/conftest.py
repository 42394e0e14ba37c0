"""Shared fixtures: one Spark session for the in-process tests."""
import pytest

from autograder.session import course_session


@pytest.fixture(scope="session")
def spark():
    """The course session (local ``local[2]``, or Connect when SPARK_REMOTE is set)."""
    return course_session()

"""Shared fixtures: one Spark session for the in-process tests.

The grading tests grade through real nbgrader with a local Spark in each kernel. A shared
Spark Connect server (tests/classroom_fixtures.py) is faster, but under load its Python
workers for ``foreachBatch`` sometimes fail to connect back and honest cells score zero
(see docs/instructor.md), so the default suite does not use it. To try it:
``pytest -p tests.classroom_fixtures``.
"""
import pytest

from autograder.session import course_session


@pytest.fixture(scope="session")
def spark():
    """The course session (local ``local[2]``, or Connect when SPARK_REMOTE is set)."""
    return course_session()

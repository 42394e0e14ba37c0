"""Pytest fixtures for grading tests: one Spark Connect server per test process.

Each chapter's grading test grades a small class through real nbgrader. Without a shared
server every notebook starts its own Spark (5-9 s each, more on a busy machine). With
these fixtures the first grading test of a test process (each pytest-xdist worker is one)
starts a loopback Connect server and every grading test after it grades against it (:func:`autograder.grading.autograde` reads
``AUTOGRADER_SPARK_REMOTE``); the server is stopped at the end of the run.

``tests/conftest.py`` imports both fixtures, so every test module that imports
``autograde`` from ``autograder.grading`` shares the server (the autouse fixture below
looks for that import); other tests never start it. ``COURSE_SHARED_GRADING_SERVER=0`` turns it off, and an
``AUTOGRADER_SPARK_REMOTE`` already set (a server you started yourself) is used as it is.
"""
from __future__ import annotations

import os

import pytest

from autograder import grading
from autograder.grading.contract import SHARED_SERVER
from autograder.grading.connect_server import ConnectServer


@pytest.fixture(scope="session")
def grading_server(tmp_path_factory):
    """The URL (``sc://127.0.0.1:PORT``) of the Connect server grading tests share; its log
    goes to pytest's temporary folder (kept for the last few runs, like every test's)."""
    existing = os.environ.get(SHARED_SERVER)
    if existing:
        yield existing
        return
    logs = tmp_path_factory.mktemp("grading-server")
    with ConnectServer(log_dir=logs) as server:
        os.environ[SHARED_SERVER] = server.url
        try:
            yield server.url
        finally:
            os.environ.pop(SHARED_SERVER, None)


@pytest.fixture(autouse=True)
def _grading_tests_share_a_server(request):
    """Start (once) the shared server for tests of modules that grade with ``autograde``."""
    if os.environ.get("COURSE_SHARED_GRADING_SERVER", "1") == "0":
        return
    module = getattr(request, "module", None)
    if getattr(module, "autograde", None) is grading.autograde:
        request.getfixturevalue("grading_server")

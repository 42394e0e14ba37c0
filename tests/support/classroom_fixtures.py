"""Pytest fixtures that let tests share Spark's work instead of repeating it.

* **One Spark Connect server for the run.** Each chapter's grading test grades a small
  class through real nbgrader. Without a shared server every notebook starts its own Spark
  (5-9 s each, more on a busy machine). The first grading test of the run, in either
  pytest-xdist worker, starts a loopback Connect server; every grading test of both workers
  grades against it (:func:`autograder.grading.autograde` reads
  ``AUTOGRADER_SPARK_REMOTE``), so one JVM starts, warms up and compiles Spark's code for
  the whole run. It outlives the worker that started it and is stopped when the run ends
  (:func:`stop_the_runs_server`, from ``pytest_sessionfinish``).
* **One Spark run per question.** The chapters' checks, the learner corpora and the classes
  graded here draw their streams from one seed (:data:`SUITE_SEED`) and keep Spark's
  answers in one folder for both workers (``answers_shared_by_the_workers``,
  :mod:`autograder.checks.answers`): a question one of them asked, the others read.
* **One solution run for chapter 1.** It is graded by five tests (its grading test, the
  hostile corpus, the command's stops, shards, nbgrader's exchange); a class run first runs
  the solution notebook to record Spark's answers for the class's streams.
  ``class_records.recorded(assignment)`` runs it once for the whole session, in whichever
  test process asks first (the other waits for it), and every one of those tests grades on
  it.

``tests/conftest.py`` imports the fixtures, so every test module that imports
``autograde`` from ``autograder.grading`` shares the server, the seed and the answers (the
autouse fixture below looks for that import); other tests never start the server.
``COURSE_SHARED_GRADING_SERVER=0`` turns the server off, and an ``AUTOGRADER_SPARK_REMOTE``
already set (a server you started yourself) is used as it is.
"""
from __future__ import annotations

import fcntl
import json
import os
import shutil
import tempfile
from pathlib import Path
from unittest import mock

import pytest

from autograder import grading
from autograder.contract import SEED, SHARED_ANSWERS, SHARED_SERVER
from autograder.grading.connect_server import ConnectServer
from autograder.grading.hidden_folders import repository_secrets
from autograder.grading.processes import kill_tree


#: The file in the run's folder that names the run's Connect server: its URL and process id.
SERVER_RECORD = "grading-server.json"


@pytest.fixture(scope="session")
def grading_server(tmp_path_factory):
    """The URL (``sc://127.0.0.1:PORT``) of the Connect server grading tests share: the
    run's, started by whichever worker asks first while the other waits. Its log goes to
    the run's temporary folder (pytest keeps the last few runs)."""
    existing = os.environ.get(SHARED_SERVER)
    if existing:
        yield existing
        return
    folder = run_folder(tmp_path_factory, "grading-server")
    with open(folder / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        url = _the_runs_server(folder)
    os.environ[SHARED_SERVER] = url
    try:
        yield url
    finally:
        os.environ.pop(SHARED_SERVER, None)


def _the_runs_server(folder: Path) -> str:
    """The URL of the run's server, started now unless a worker started it before."""
    record = folder / SERVER_RECORD
    if record.exists():
        known = json.loads(record.read_text())
        if _alive(known["pid"]):
            return known["url"]
    # A long-lived JVM for a run's grading: more sessions at once than a class's two, so
    # a heap to match (spark-submit's default is 1 GB).
    # It hides the repository's solutions, tests and history from learners' Spark, as the
    # grading command's server does (the courses of the tests come and go: not theirs).
    server = ConnectServer(log_dir=folder, extra_conf={"spark.driver.memory": "2g"},
                           hide=repository_secrets()).start()
    record.write_text(json.dumps({"url": server.url, "pid": server.pid}))
    return server.url


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def stop_the_runs_server(config) -> None:
    """Stop the run's Connect server, if a grading test started one (the controller of an
    xdist run calls this once both workers are done; a run without workers, at its end)."""
    if hasattr(config, "workerinput"):
        return  # a worker: the other may still be grading on it
    record = config._tmp_path_factory.getbasetemp() / "grading-server" / SERVER_RECORD
    if not record.exists():
        return
    kill_tree(json.loads(record.read_text())["pid"])  # the server and its Python workers
    record.unlink()


#: The seed every stream of the suite is drawn from: the chapters' checks, the learner
#: corpora and the classes graded here ask Spark the same questions, each of them once.
SUITE_SEED = 11


def run_folder(tmp_path_factory, name: str) -> Path:
    """A folder of this test run that both test processes see: pytest-xdist gives each
    worker its own temporary root inside one of the run's (pytest keeps the last few)."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # pytest-N/, the folder above each worker's own
    folder = base / name
    folder.mkdir(exist_ok=True)
    return folder


@pytest.fixture(scope="session")
def shared_answers_folder(tmp_path_factory) -> Path:
    return run_folder(tmp_path_factory, "spark-answers")


@pytest.fixture
def answers_shared_by_the_workers(shared_answers_folder, monkeypatch):
    """Spark's answers, kept for both workers (:mod:`autograder.checks.answers`): for tests that
    ask Spark through the checks. A test about asking itself (how often Spark is asked)
    keeps to its own process."""
    monkeypatch.setenv(SHARED_ANSWERS, str(shared_answers_folder))


@pytest.fixture(autouse=True)
def _grading_tests_share_spark(request):
    """For tests of modules that grade with ``autograde``: the shared server (started once),
    the suite's seed and its shared answers."""
    module = getattr(request, "module", None)
    if getattr(module, "autograde", None) is not grading.autograde:
        return
    request.getfixturevalue("answers_shared_by_the_workers")
    request.getfixturevalue("monkeypatch").setenv(SEED, str(SUITE_SEED))
    if os.environ.get("COURSE_SHARED_GRADING_SERVER", "1") != "0":
        request.getfixturevalue("grading_server")


class ClassRecords:
    """The seeds and Spark's answers recorded by the session's class runs, by assignment.

    ``of(assignment)`` is the folder to hand to ``autograde(..., answers_of=...)``, or None
    if no test has kept one yet; ``keep(assignment, course)`` keeps a run's record after
    ``autograde(..., workdir=course)``. The first record kept for an assignment stays.
    """

    def __init__(self, folder: Path, shared_answers: Path):
        self.folder, self.shared_answers = folder, shared_answers

    def of(self, assignment: str) -> Path | None:
        kept = self.folder / assignment
        return kept if (kept / "answers.json").is_file() else None

    def recorded(self, assignment: str) -> Path:
        """The session's record for ``assignment``, made now by running its solution once
        (on the shared server when this process has one) unless a test kept one already.
        Both test processes may ask at once: one records while the other waits."""
        from autograder.grading.course import GradingCourse
        from autograder.grading.grader import Grader

        with open(self.folder / f".{assignment}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if self.of(assignment) is None:
                with tempfile.TemporaryDirectory(prefix="class-record-") as root, \
                        mock.patch.dict(os.environ, {SEED: str(SUITE_SEED),
                                                     SHARED_ANSWERS: str(self.shared_answers)}):
                    course = GradingCourse(Path(root))
                    grader = Grader(course, remote=os.environ.get(SHARED_SERVER))
                    try:
                        course.prepare(assignment, grader.env)
                        grader.record_answers(assignment, reuse=False)
                    finally:
                        grader.close()
                    self.keep(assignment, Path(root))
        kept = self.of(assignment)
        assert kept, f"the solution of {assignment} recorded no answers"
        return kept

    def keep(self, assignment: str, course: Path) -> None:
        recorded = course / "spark-answers" / assignment
        answers = recorded / "answers.json"
        if self.of(assignment) or not answers.is_file() or not json.loads(answers.read_text()):
            return  # one is kept already, or this run's solution recorded nothing
        staged = self.folder / f".{assignment}-{os.getpid()}"
        shutil.copytree(recorded, staged)
        try:
            staged.rename(self.folder / assignment)  # whole, or not at all
        except OSError:
            shutil.rmtree(staged, ignore_errors=True)  # the other test process was first


@pytest.fixture(scope="session")
def class_records(tmp_path_factory, shared_answers_folder) -> ClassRecords:
    """The session's :class:`ClassRecords`, shared by both test processes of a run."""
    return ClassRecords(run_folder(tmp_path_factory, "class-records"), shared_answers_folder)

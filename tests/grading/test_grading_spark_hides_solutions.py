"""The grading server's Spark cannot read what holds a solution (autograder.grading.hidden_folders).

A learner's code reads files through Spark as well as through Python, and under a
Connect server Spark's reads are the server's. The server the tests grade on is started as
the grading command starts its own, with the repository's solutions, tests and history
hidden. The hostile corpus holds the notebook that tries it
(``reads_solutions_through_spark``: the task is not done).
"""
from __future__ import annotations

import subprocess

import pytest

from autograder.grading import hidden_folders
from autograder.grading.course import REPOSITORY
from autograder.grading.spark import session_url

pytestmark = pytest.mark.skipif(hidden_folders.why_not_hidden() is not None,
                                reason=f"{hidden_folders.why_not_hidden()}")


@pytest.fixture
def learners_spark(grading_server):
    """A Connect session on the run's grading server, as a graded kernel gets one."""
    from pyspark.sql.connect.session import SparkSession as ConnectSession

    spark = ConnectSession.builder.remote(session_url(grading_server)).create()
    yield spark
    spark.stop()


def _notebook(folder: str):
    (path,) = (REPOSITORY / folder / "01_global_limit").glob("*.ipynb")
    return path


def test_the_grading_spark_reads_the_release_but_not_the_solution(learners_spark):
    release, solution = _notebook("exercises"), _notebook("solutions")
    assert solution.read_text()  # there, for this process
    assert learners_spark.read.text(str(release)).count() > 0
    with pytest.raises(Exception, match="PATH_NOT_FOUND"):
        learners_spark.read.text(str(solution)).collect()


@pytest.mark.parametrize("secret", ["tests/support/fixed_answers.json",
                                    "corpora/learners/chapter1.py"])
def test_nor_the_tests_and_corpora_where_right_answers_are_written(learners_spark, secret):
    path = REPOSITORY / secret
    assert path.is_file()
    with pytest.raises(Exception, match="PATH_NOT_FOUND"):
        learners_spark.read.text(str(path)).collect()


def test_a_hidden_folder_is_empty_to_the_process_and_its_neighbour_is_not(tmp_path):
    secret, open_ = tmp_path / "solutions", tmp_path / "exercises"
    for folder in (secret, open_):
        folder.mkdir()
        (folder / "task.ipynb").write_text("{}")
    command, refused = hidden_folders.hiding(
        ["sh", "-c", f"ls -A {secret}; echo then; ls -A {open_}"], [secret])
    assert refused is None
    listed = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    assert listed.split() == ["then", "task.ipynb"]
    assert (secret / "task.ipynb").exists()  # hidden from that process only


def test_folders_inside_a_hidden_one_and_the_servers_own_are_left_to_it(tmp_path):
    inner = REPOSITORY / "tests" / "support"
    command, _ = hidden_folders.hiding(["true"], [inner, REPOSITORY / "tests", REPOSITORY])
    assert str(REPOSITORY / "tests") in command  # the outer one, once
    assert str(inner) not in command
    assert str(REPOSITORY) not in command  # it holds the course's package: the server needs it


def test_a_worktrees_history_is_the_main_checkouts_git_folder(tmp_path):
    main, worktree = tmp_path / "main", tmp_path / "worktree"
    (main / "solutions").mkdir(parents=True)
    for command in (["git", "init", "-q"], ["git", "-c", "user.name=a", "-c", "user.email=a@b",
                                            "commit", "-q", "--allow-empty", "-m", "x"],
                    ["git", "worktree", "add", "-q", "--detach", str(worktree)]):
        subprocess.run(command, cwd=main, check=True, capture_output=True)
    assert hidden_folders.repository_secrets(main) == [main / "solutions", main / ".git"]
    assert hidden_folders.repository_secrets(worktree) == [(main / ".git").resolve()]


def test_a_machine_that_cannot_hide_runs_the_server_as_it_is_and_says_why(monkeypatch):
    monkeypatch.setattr(hidden_folders, "why_not_hidden", lambda: "no user namespaces here")
    command = ["spark-submit", "--class", "X"]
    assert hidden_folders.hiding(command, [REPOSITORY / "solutions"]) == (
        command, "no user namespaces here")

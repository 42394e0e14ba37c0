"""A process's role to the checks is said in one place (:mod:`autograder.checks.mode`), from what
the grading command passed it when it started the process, or by the judge's block."""
import pytest

from autograder.checks import answers, mode
from autograder.contract import ASKING, RECORD_ANSWERS
from autograder.checks.mode import Mode


@pytest.fixture
def started_with(monkeypatch):
    """This process as if started with the environment given."""
    monkeypatch.delenv(ASKING, raising=False)
    monkeypatch.delenv(RECORD_ANSWERS, raising=False)
    return lambda **env: [monkeypatch.setenv(name, value) for name, value in env.items()]


def test_a_process_nobody_gave_a_role_is_a_self_check(started_with):
    started_with()
    assert mode.current() is Mode.SELF_CHECK


def test_a_kernel_the_command_tells_to_ask_only_is_a_graded_kernel(started_with):
    started_with(**{ASKING: "1"})
    assert mode.current() is Mode.GRADED


def test_the_solutions_run_records_what_spark_answers(started_with, tmp_path):
    started_with(**{RECORD_ANSWERS: str(tmp_path / "answers.json")})
    assert mode.current() is Mode.RECORDING


def test_inside_the_judges_block_a_process_is_a_judge_and_only_there(started_with):
    # The judge's process hands its kernel ASKING in its own environment: it is still the
    # judge while it judges, and nothing else once it has.
    started_with(**{ASKING: "1"})
    with answers.judging(None):
        assert mode.current() is Mode.JUDGE
    assert mode.current() is Mode.GRADED

"""A chapter's check is written once, on the function a notebook calls
(:func:`autograder.checks.asking.declared`): its name and its options come from that function, so a
graded kernel's record and the judge that draws the cases again read them from one place.

The scenario: a check of a learner's ``double(n)`` on the numbers 0 .. ``numbers - 1``."""
import inspect

import pytest

from autograder.checks import asking
from autograder.checks.feedback import CheckFailed, check_equal

DRAWN: list[dict] = []


def _cases(seed, example, numbers=3):
    DRAWN.append({"seed": seed, "example": example, "numbers": numbers})
    return [asking.Case(f"n = {n}", n) for n in range(numbers)]


def _ask(learner, case, answers):
    answers.add(learner(case.about))


def _judge(case, answers):
    check_equal(answers.next(), 2 * case.about, "the double", context=case.label)


@pytest.fixture
def check_double(monkeypatch):
    """The check, declared into a registry of its own (the course's is left as it is)."""
    monkeypatch.setattr(asking, "CHECKS", {})
    DRAWN.clear()

    @asking.declared(cases=_cases, ask=_ask, judge=_judge,
                     passed=lambda cases: f"doubles {len(cases)} numbers")
    def check_double(double, *, seed: int | None = None, numbers: int = 3,
                     example: bool = False) -> None:
        """``double(n)`` must give twice ``n``."""

    return check_double


def test_the_check_is_named_after_its_function_and_takes_its_options_from_it(check_double):
    check = check_double.check
    assert check.name == f"{__name__}.check_double"
    assert asking.CHECKS == {check.name: check}
    assert check.options == {"numbers": 3}


def test_the_function_keeps_its_signature_and_docstring_for_the_learner(check_double):
    assert list(inspect.signature(check_double).parameters) == ["double", "seed", "numbers",
                                                                "example"]
    assert check_double.__doc__ == "``double(n)`` must give twice ``n``."


def test_calling_it_runs_the_check_with_the_options_given(check_double, capsys):
    check_double(lambda n: n + n, seed=7, numbers=5)
    assert DRAWN == [{"seed": 7, "example": False, "numbers": 5}]
    assert "doubles 5 numbers" in capsys.readouterr().out


def test_without_an_option_the_default_of_the_signature_is_drawn_with(check_double, capsys):
    check_double(lambda n: n + n, seed=7)
    assert DRAWN[-1]["numbers"] == 3


def test_a_wrong_answer_fails_on_its_case(check_double):
    with pytest.raises(CheckFailed) as failure:
        check_double(lambda n: n * n, seed=7)
    assert failure.value.context == "n = 1"  # n = 0 doubles to 0 squared too


def test_an_option_the_function_does_not_take_is_refused_as_by_any_function(check_double):
    with pytest.raises(TypeError):
        check_double(lambda n: n + n, streams=2)
    assert DRAWN == []

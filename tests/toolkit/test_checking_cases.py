"""The cases a check runs (:func:`autograder.checks.checking.cases`): the chapter's example alone
when a learner checks it, else the fixed cases first and then the seed's, each named as its
lesson will name it. No Spark runs here."""
from autograder.checks.checking import EXAMPLE, FIXED, cases


def draw_two(rng):
    return [rng.randint(0, 10**6) for _ in range(2)]


def test_the_example_alone_when_a_learner_checks_it():
    assert cases(5, True, the_example=["ex"], fixed=["edge"], drawn_from=draw_two) == [(EXAMPLE, "ex")]


def test_graded_the_fixed_cases_come_first_then_those_the_seed_draws():
    graded = cases(5, False, the_example=["ex"], fixed=["edge 1", "edge 2"], drawn_from=draw_two)
    assert graded[:2] == [(FIXED, "edge 1"), (FIXED, "edge 2")]
    assert [origin for origin, _ in graded[2:]] == ["seed 5", "seed 5"]
    # A seed stands for its cases: the same seed draws them again, another draws others.
    assert cases(5, False, the_example=[], fixed=[], drawn_from=draw_two) == graded[2:]
    assert cases(6, False, the_example=[], fixed=[], drawn_from=draw_two) != graded[2:]

"""Checks compare plain data, and a failure is a lesson."""
import pytest

from autograder.feedback import CheckFailed, check_equal, plain


class AlwaysEqual:
    def __eq__(self, other):
        return True


class SneakyInt(int):
    def __eq__(self, other):
        return True


def test_equal_plain_values_pass():
    check_equal([1, 2, {"count": None}], [1, 2, {"count": None}], "rows")


def test_an_object_equal_to_everything_is_refused():
    with pytest.raises(CheckFailed, match="plain Python data"):
        check_equal(AlwaysEqual(), 3, "rows emitted")


def test_a_value_that_brings_its_own_equality_is_compared_for_what_it_holds():
    assert type(plain(SneakyInt(3))) is int
    with pytest.raises(CheckFailed):
        check_equal(SneakyInt(3), 4, "rows emitted")

    class AlwaysEqualList(list):
        def __eq__(self, other):
            return True

    with pytest.raises(CheckFailed):
        check_equal(AlwaysEqualList(), [1, 2], "rows emitted per micro-batch")


@pytest.mark.parametrize("answer", [
    (2, 2, 0, 0),                                   # a tuple for a list
    [2.0, 2, 0.0, 0],                               # whole floats for counts
    "numpy",                                        # NumPy's integers
])
def test_an_answer_is_compared_for_what_it_means(answer):
    if answer == "numpy":
        import numpy as np
        answer = list(np.array([2, 2, 0, 0], dtype=np.int64))
    check_equal(answer, [2, 2, 0, 0], "rows emitted per micro-batch")


def test_a_counter_or_ordered_dict_is_a_dict():
    from collections import Counter, OrderedDict
    check_equal(Counter({"a": 2, "b": 1}), {"b": 1, "a": 2}, "state rows")
    check_equal(OrderedDict([("b", 1), ("a", 2)]), {"a": 2, "b": 1}, "state rows")


def test_none_is_not_zero():
    with pytest.raises(CheckFailed):
        check_equal(0, None, "count")


def test_true_does_not_pass_for_one():
    with pytest.raises(CheckFailed):
        check_equal(True, 1, "numRowsTotal")


def test_the_lesson_names_batch_values_stream_and_section():
    with pytest.raises(CheckFailed) as failure:
        check_equal(4, 1, "rows emitted by this micro-batch", batch=3,
                    revisit='section "A limit that spans micro-batches"',
                    context="batch sizes [1, 2, 0, 5], limit(4) (seed 42)")
    lesson = str(failure.value)
    assert lesson.splitlines() == [
        "micro-batch 3: rows emitted by this micro-batch",
        "    expected: 1",
        "    got:      4",
        "  the stream: batch sizes [1, 2, 0, 5], limit(4) (seed 42)",
        '  revisit: section "A limit that spans micro-batches"',
    ]

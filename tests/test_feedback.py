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


def test_a_subclass_of_int_is_refused_too():
    with pytest.raises(CheckFailed, match="SneakyInt"):
        plain(SneakyInt(3))


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

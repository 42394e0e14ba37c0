"""Checks compare plain data, and a failure is a lesson."""
import asyncio
import json

import pytest

import autograder
from autograder.checks.feedback import (CheckFailed, TaskNotDone, ask, check_equal, plain,
                                 stop_if_unfinished)


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


# -- what a notebook shows ---------------------------------------------------------------------
COURSE_FILES = autograder.__path__[0]


def shown_in_a_notebook(failure: CheckFailed) -> str:
    """The text IPython puts in a cell's error output for this failure."""
    return "\n".join(failure._render_traceback_())


def failure_of(function, *args, **keywords) -> CheckFailed:
    with pytest.raises(CheckFailed) as failure:
        function(*args, **keywords)
    return failure.value


def test_a_failed_check_shows_its_lesson_alone():
    failure = failure_of(check_equal, 3, 2, "rows emitted by this micro-batch", batch=1)
    shown = shown_in_a_notebook(failure)
    assert shown.splitlines() == ["✘ micro-batch 1: rows emitted by this micro-batch",
                                  "    expected: 2", "    got:      3"]
    assert COURSE_FILES not in shown and "Traceback" not in shown


def predict_that_divides_by_zero(sizes, limit):
    return [size // 0 for size in sizes]


def predict_that_parses_bad_json(sizes, limit):
    return json.loads("{not json")


def test_an_error_in_the_learners_code_shows_the_learners_line_under_the_lesson():
    failure = failure_of(ask, predict_that_divides_by_zero, [2, 3], 4, what="predict_emitted")
    lesson, _, traceback = shown_in_a_notebook(failure).partition("where your code raised it:")
    assert lesson.startswith("✘ predict_emitted raised an error")
    assert "ZeroDivisionError: integer division or modulo by zero" in lesson
    assert "in predict_that_divides_by_zero" in traceback
    assert "return [size // 0 for size in sizes]" in traceback
    assert traceback.rstrip().endswith("ZeroDivisionError: integer division or modulo by zero")


def test_the_learners_traceback_leaves_out_the_course_and_the_libraries():
    failure = failure_of(ask, predict_that_parses_bad_json, [2], 1, what="predict_emitted")
    shown = shown_in_a_notebook(failure)
    assert 'json.loads("{not json")' in shown
    assert COURSE_FILES not in shown
    assert json.__file__.rsplit("/", 1)[0] not in shown     # the standard library's json
    assert "JSONDecodeError: Expecting property name" in shown


def test_an_error_raised_inside_a_library_alone_shows_the_lesson_only():
    failure = failure_of(ask, json.loads, "{not json", what="your reader")
    assert "where your code raised it" not in shown_in_a_notebook(failure)


# -- an unfinished task ------------------------------------------------------------------------
def predict_emitted(sizes, limit):
    """The released stub."""
    # YOUR CODE HERE
    raise NotImplementedError()


class SessionTracker:
    def init(self, handle):
        # YOUR CODE HERE
        raise NotImplementedError()


def test_an_unfinished_task_gets_a_one_line_hint_naming_the_function():
    failure = failure_of(ask, predict_emitted, [2, 3], 4, what="predict_emitted")
    assert type(failure) is TaskNotDone
    assert shown_in_a_notebook(failure) == (
        "✘ task not done yet: replace `raise NotImplementedError()` in predict_emitted "
        "with your code")
    assert str(failure) == shown_in_a_notebook(failure).removeprefix("✘ ")


def test_an_unfinished_method_is_named_with_its_class():
    failure = failure_of(ask, SessionTracker().init, None, what="your processor")
    assert "in SessionTracker.init with your code" in str(failure)


def test_a_library_that_lacks_a_feature_is_an_error_not_an_unfinished_task():
    # asyncio's abstract event loop raises a plain NotImplementedError from the library
    failure = failure_of(ask, asyncio.AbstractEventLoop().run_forever, what="your query")
    assert type(failure) is CheckFailed
    assert "raised an error" in str(failure)


def test_stop_if_unfinished_raises_the_hint_for_a_stub_and_lets_anything_else_pass():
    with pytest.raises(TaskNotDone, match="in predict_emitted with"):
        stop_if_unfinished(predict_emitted, [1], 1)
    stop_if_unfinished(predict_that_divides_by_zero, [1], 1)   # left for the real run
    stop_if_unfinished(lambda sizes, limit: [min(size, limit) for size in sizes], [1], 1)


# -- every lesson says which section to reread -------------------------------------------------
SECTION = 'chapter 1, section "The state: one counter"'
STREAM = "batch sizes [3, 2] (the chapter's example)"


@pytest.mark.parametrize("answer", [
    {3, 2},                          # a set: no order, so not one entry per micro-batch
    (size for size in [3, 2]),       # a generator
    object(),                        # anything else that is not plain data
    "3, 2",                          # plain, but not a list
    {"0": 3, "1": 2},                # a dict of micro-batches
    [3],                             # a list of the wrong length
], ids=["set", "generator", "object", "text", "dict", "too-short"])
def test_a_lesson_for_an_answer_that_is_not_one_list_entry_per_batch_ends_with_its_section(
        answer):
    from autograder.checks.checking import answer_per_batch

    with pytest.raises(CheckFailed) as failed:
        answer_per_batch(answer, 2, "predict_state's answer", STREAM, revisit=SECTION)
    lesson = failed.value.lesson()
    assert lesson.splitlines()[-1] == f"  revisit: {SECTION}", lesson
    assert f"the stream: {STREAM}" in lesson
    assert str(failed.value) == lesson  # what a traceback prints says it too


def test_a_lesson_for_a_batch_entry_that_is_not_a_dict_ends_with_its_section():
    from autograder.checks.checking import batch_dict

    with pytest.raises(CheckFailed) as failed:
        batch_dict([1, 2], 1, STREAM, revisit=SECTION)
    assert failed.value.lesson().splitlines()[-1] == f"  revisit: {SECTION}"
    assert failed.value.batch == 1


def test_a_value_that_is_not_plain_data_gets_the_comparisons_section_and_micro_batch():
    with pytest.raises(CheckFailed) as failed:
        check_equal({3}, [3], "rows emitted", batch=2, revisit=SECTION, context=STREAM)
    lesson = failed.value.lesson()
    assert lesson.startswith("micro-batch 2: rows emitted must be plain Python data")
    assert lesson.splitlines()[-1] == f"  revisit: {SECTION}"


def test_a_lesson_that_names_its_own_section_keeps_it_and_an_unfinished_task_stays_one_line():
    from autograder.checks.feedback import revisiting

    with pytest.raises(CheckFailed) as failed, revisiting(SECTION, STREAM):
        raise CheckFailed("the count", 1, 2, revisit="chapter 2, section \"Elsewhere\"")
    assert failed.value.revisit == "chapter 2, section \"Elsewhere\""
    with pytest.raises(TaskNotDone) as unfinished, revisiting(SECTION, STREAM):
        raise TaskNotDone("predict_state")
    assert "\n" not in unfinished.value.lesson()

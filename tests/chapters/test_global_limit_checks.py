"""Chapter 1's checks, in-process: right answers pass, misconceptions get a lesson.

Each scenario runs real Spark on a fixed seed, so a failure here is reproducible.
"""
import pytest

from autograder.checks.feedback import CheckFailed
from autograder.chapters.global_limit import (
    check_counter_reader,
    check_first_clicks,
    check_predicted_output,
    check_predicted_state,
)
from autograder.toolkit.state import read_state
from pyspark.sql import functions as F

# seed 1 draws batch sizes [4, 0, 2, 0] and limit(4): the third batch must emit nothing
SEED = 1


def emitted_over_the_stream(sizes, limit):
    emitted, so_far = [], 0
    for size in sizes:
        emitted.append(min(size, limit - so_far))
        so_far += emitted[-1]
    return emitted


def limit_applied_per_batch(sizes, limit):
    return [min(size, limit) for size in sizes]


def test_a_limit_over_the_whole_stream_matches_spark(spark):
    check_predicted_output(emitted_over_the_stream, seed=SEED, streams=1)


def test_a_limit_per_micro_batch_is_caught_with_the_batch_it_breaks(spark):
    with pytest.raises(CheckFailed) as failure:
        check_predicted_output(limit_applied_per_batch, seed=SEED, streams=1)
    assert failure.value.batch == 2
    assert "A limit that spans micro-batches" in str(failure.value)


def test_an_answer_of_the_wrong_length_is_refused(spark):
    with pytest.raises(CheckFailed, match="how many micro-batches"):
        check_predicted_output(lambda sizes, limit: [0], example=True)


def test_an_answer_that_is_not_a_list_is_refused_with_the_section_to_reread(spark):
    with pytest.raises(CheckFailed, match="must be a list") as failure:
        check_predicted_output(lambda sizes, limit: 4, example=True)
    assert "revisit: chapter 1, The global limit, section" in str(failure.value)


@pytest.mark.parametrize("answer", [{3, 1}, "3, 1", None], ids=["set", "text", "none"])
def test_every_lesson_for_an_answer_that_is_no_list_ends_with_the_section_to_reread(
        spark, answer):
    with pytest.raises(CheckFailed) as failure:
        check_predicted_output(lambda sizes, limit: answer, example=True)
    last = failure.value.lesson().splitlines()[-1]
    assert last.startswith("  revisit: chapter 1, The global limit, section"), (
        failure.value.lesson())


def test_counting_state_rows_instead_of_reading_the_counter_fails(spark):
    def number_of_state_rows(spark, checkpoint):
        return len(read_state(spark, checkpoint))

    with pytest.raises(CheckFailed, match="rows emitted so far"):
        check_counter_reader(number_of_state_rows, example=True)


def test_one_state_row_per_emitted_row_is_a_misconception(spark):
    def row_per_record(sizes, limit):
        facts, so_far = [], 0
        for now in emitted_over_the_stream(sizes, limit):
            so_far += now
            facts.append({"numRowsTotal": so_far, "numRowsUpdated": now, "count": so_far or None})
        return facts

    with pytest.raises(CheckFailed, match="numRowsTotal"):
        check_predicted_state(row_per_record, example=True)


def test_filtering_after_the_limit_is_caught(spark):
    with pytest.raises(CheckFailed) as failure:
        check_first_clicks(lambda events, n: events.limit(n).where(F.col("kind") == "click"),
                           example=True)
    assert "How Spark plans a limit" in str(failure.value)


def test_filtering_before_the_limit_passes(spark):
    check_first_clicks(lambda events, n: events.where(F.col("kind") == "click").limit(n),
                       seed=SEED)


def test_a_stream_without_a_single_click_is_graded_like_any_other(spark):
    # Seed 772765 draws five micro-batches of views only (about 1 seed in 150 draws a
    # stream without a click). Nothing passes the limit, so Spark never writes its counter:
    # the state has no row, and a right query must still pass (it once got 0 points).
    check_first_clicks(lambda events, n: events.where(F.col("kind") == "click").limit(n),
                       seed=772765)


def test_a_query_spark_refuses_gets_a_lesson_not_a_stack_trace(spark):
    # Sorting a stream without an aggregation is refused when the query starts.
    def sorted_clicks(events, n):
        return events.where(F.col("kind") == "click").orderBy("id").limit(n)

    with pytest.raises(CheckFailed) as failure:
        check_first_clicks(sorted_clicks, example=True)
    lesson = failure.value.lesson()
    assert lesson.startswith("your query failed in Spark")
    assert "Sorting is not supported" in lesson
    assert "revisit:" in lesson and "at org.apache" not in lesson


def test_a_query_that_fails_while_running_names_the_micro_batch(spark):
    def failing_clicks(events, n):
        # raise_error fails the micro-batch that brings an id above 2
        stop_at_three = F.when(F.col("id") > 2, F.expr("raise_error('no id above 2')"))
        return events.where((F.col("kind") == "click") & stop_at_three.isNull()).limit(n)

    with pytest.raises(CheckFailed) as failure:
        check_first_clicks(failing_clicks, example=True)
    assert failure.value.batch is not None
    assert failure.value.lesson().startswith(f"micro-batch {failure.value.batch}: your query failed in Spark")

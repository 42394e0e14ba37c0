"""An unfinished task is named at once: every check calls the learner's code before Spark.

The released exercises hold stubs (``raise NotImplementedError()``). A check handed one
must say "task not done yet" before it runs a single query, so these tests give the checks
a Spark session that refuses every query (no JVM is started) and a stub.
"""
import pytest
from pyspark.sql.streaming import StatefulProcessor

from autograder import (aggregation_planning, global_limit, state_store_files,
                        state_store_save, stream_join_checks, transform_with_state)
from autograder.checks.feedback import TaskNotDone


def unfinished(*args):
    # YOUR CODE HERE
    raise NotImplementedError()


class UnfinishedProcessor(StatefulProcessor):
    def __init__(self, *settings):
        self.settings = settings

    def init(self, handle):
        # YOUR CODE HERE
        raise NotImplementedError()

    def handleInitialState(self, key, initialState, timerValues):
        # YOUR CODE HERE
        raise NotImplementedError()

    def handleInputRows(self, key, rows, timerValues):
        # YOUR CODE HERE
        raise NotImplementedError()

    def close(self):
        pass


class SparkAskedTooSoon(AssertionError):
    """A check ran a query before it called the learner's code."""


class NoQueries:
    """A Spark session that builds empty DataFrames (which run nothing) and nothing else."""

    def createDataFrame(self, rows, schema):
        assert rows == [], "only an empty DataFrame runs no query"
        return object()

    def __getattr__(self, name):
        raise SparkAskedTooSoon(f"spark.{name} used before the learner's code was called")


@pytest.fixture(autouse=True)
def spark_refuses_queries(monkeypatch):
    def refuse(*args, **kwargs):
        raise SparkAskedTooSoon("Spark was asked before the learner's code was called")

    for module in (global_limit, aggregation_planning, state_store_save, transform_with_state,
                   state_store_files, stream_join_checks):
        monkeypatch.setattr(module, "course_session", NoQueries)
        for name in ("StreamRun", "spark_answer", "spark_checkpoints"):
            if hasattr(module, name):
                monkeypatch.setattr(module, name, refuse)


FUNCTION_TASKS = [
    global_limit.check_predicted_output, global_limit.check_predicted_state,
    global_limit.check_counter_reader, global_limit.check_first_clicks,
    aggregation_planning.check_aggregate_modes, aggregation_planning.check_predicted_counts,
    aggregation_planning.check_predicted_metrics, aggregation_planning.check_sessions,
    state_store_save.check_predicted_output, state_store_save.check_predicted_metrics,
    state_store_save.check_smallest_delay, state_store_save.check_update_step,
    state_store_files.check_predicted_files, state_store_files.check_state_reader,
    state_store_files.check_restart_reader, state_store_files.check_restart_outcome,
    stream_join_checks.check_predicted_buffers, stream_join_checks.check_predicted_unmatched,
    stream_join_checks.check_rows_per_key, stream_join_checks.check_accepted,
]
PROCESSOR_TASKS = [
    transform_with_state.check_session_tracker, transform_with_state.check_ttl_dedup,
    transform_with_state.check_starting_counts, transform_with_state.check_first_n,
]


def task_name(check) -> str:
    return f"{check.__module__.rsplit('.', 1)[-1]}.{check.__name__}"


@pytest.mark.parametrize("check", FUNCTION_TASKS, ids=task_name)
@pytest.mark.parametrize("example", [True, False], ids=["self-check", "grading"])
def test_an_unfinished_function_is_named_before_spark_runs_anything(check, example):
    with pytest.raises(TaskNotDone) as failure:
        check(unfinished, example=example, **({} if example else {"seed": 1}))
    assert str(failure.value) == ("task not done yet: replace `raise NotImplementedError()` "
                                  "in unfinished with your code")


@pytest.mark.parametrize("check", PROCESSOR_TASKS, ids=task_name)
def test_an_unfinished_processor_is_named_with_its_method_before_spark_runs(check):
    with pytest.raises(TaskNotDone, match=r"in UnfinishedProcessor\.init with your code"):
        check(UnfinishedProcessor, example=True)

"""Chapter 3's checks, run in-process against real Spark.

The reference answers pass; each misconception the chapter warns about raises
:class:`CheckFailed` pointing at the micro-batch and the section to reread. (That the
release in exercises/ is up to date is tested for every assignment in test_release.py.)
"""
from pathlib import Path

import nbformat
import pytest

from autograder.chapters import save_model
from autograder.checks.feedback import CheckFailed
from autograder.chapters.state_store_save import (
    check_predicted_metrics, check_predicted_output, check_smallest_delay, check_update_step,
    random_case,
)
from tests.support.classroom_fixtures import SUITE_SEED

ROOT = Path(__file__).resolve().parents[2]
ASSIGNMENT = "03_state_store_save"
SEED = SUITE_SEED  # the learner corpus's: Spark answers each question once


def _solution_namespace():
    """The functions of the solution notebook, as a learner's kernel defines them."""
    notebook = nbformat.read(ROOT / "solutions" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", 4)
    namespace = {}
    for cell in notebook.cells:
        if cell.metadata.get("nbgrader", {}).get("solution"):
            exec(cell.source, namespace)  # the instructor's own solution
    return namespace


ANSWERS = _solution_namespace()


# -- misconceptions ------------------------------------------------------------------------------
def append_emits_every_updated_window(batches, mode, delay):
    """Believes Append emits a window whenever it changes (that is Update)."""
    if mode == "append":
        mode = "update"
    return ANSWERS["predict_output"](batches, mode, delay)


def complete_evicts_old_windows(batches, mode, delay):
    """Believes Complete evicts windows behind the watermark like Update does."""
    if mode != "complete":
        return ANSWERS["predict_output"](batches, mode, delay)
    return [sorted([start, count] for start, count in b.state.items())
            for b in save_model.run(batches, "update", delay) if not b.no_data]


def forgets_the_no_data_batch(batches, mode, delay):
    """Counts only the micro-batches that received events."""
    ran = save_model.run(batches, mode, delay)
    return [b.metrics for b in ran if not b.no_data]


def counts_events_not_groups(batches, mode, delay):
    """Believes numRowsUpdated counts events rather than windows."""
    metrics = ANSWERS["predict_metrics"](batches, mode, delay)
    for m, b in zip(metrics, save_model.run(batches, mode, delay)):
        if b.input_rows and mode == "complete":
            m["numRowsUpdated"] = b.input_rows
    return metrics


def update_step_that_never_evicts(state, events, watermark, size):
    """Drops late groups and emits like Update, but keeps expired windows forever."""
    groups = {}
    for event in events:
        groups[event - event % size] = groups.get(event - event % size, 0) + 1
    new_state, output, dropped = dict(state), [], 0
    for start, n in sorted(groups.items()):
        if watermark is not None and start + size <= watermark:
            dropped += 1
            continue
        new_state[start] = new_state.get(start, 0) + n
        output.append([start, new_state[start]])
    return output, new_state, {"numRowsTotal": len(new_state), "numRowsUpdated": len(output),
                               "numRowsRemoved": 0, "numRowsDroppedByWatermark": dropped}



def starts_the_watermark_at_t0(batches, mode, delay):
    """Believes the watermark starts at T0 (Spark's starts at the epoch): a first micro-batch
    whose latest event is within the delay of T0 leaves it there, with no no-data batch."""
    answer, state, watermark = [], {}, 0
    for events in batches:
        output, state, _ = save_model.STEPS[mode](state, events, watermark, 10)
        answer.append(output)
        moved = max([watermark] + [event - delay for event in events])
        if moved != watermark:
            watermark = moved
            if mode != "complete":
                output, state, _ = save_model.STEPS[mode](state, [], watermark, 10)
                answer.append(output)
    return answer


def delay_from_the_previous_batch(batches, size=10):
    """Measures how late an event is from the micro-batch just before it alone, not from
    the latest event so far."""
    needed = 0
    for before, events in zip(batches, batches[1:]):
        for event in events if before else []:
            needed = max(needed, max(before) - (event // size + 1) * size + 1)
    return needed

# -- the reference answers pass --------------------------------------------------------------------
@pytest.mark.parametrize("example", [True, False], ids=["example", "fresh stream"])
def test_the_solution_passes_every_check(spark, example):
    seed = None if example else SEED
    check_predicted_output(ANSWERS["predict_output"], seed=seed, example=example)
    check_predicted_metrics(ANSWERS["predict_metrics"], seed=seed, example=example)
    check_update_step(ANSWERS["update_step"], seed=seed, example=example)
    check_smallest_delay(ANSWERS["smallest_delay"], seed=seed, example=example)


# -- each misconception is caught, with a lesson -------------------------------------------------------
def test_append_that_emits_every_updated_window_fails(spark):
    with pytest.raises(CheckFailed) as failure:
        check_predicted_output(append_emits_every_updated_window, example=True)
    assert "Append: a window is emitted once" in str(failure.value)
    assert "micro-batch 0" in str(failure.value)


def test_complete_that_evicts_old_windows_fails(spark):
    with pytest.raises(CheckFailed) as failure:
        check_predicted_output(complete_evicts_old_windows, example=True)
    assert "Complete: the whole state" in str(failure.value)


def test_forgetting_the_no_data_batch_fails(spark):
    with pytest.raises(CheckFailed) as failure:
        check_predicted_metrics(forgets_the_no_data_batch, example=True)
    assert "No-data micro-batches" in str(failure.value)


def test_counting_events_instead_of_groups_fails(spark):
    with pytest.raises(CheckFailed) as failure:
        check_predicted_metrics(counts_events_not_groups, example=True)
    assert "numRowsUpdated" in str(failure.value)


def test_an_update_step_that_never_evicts_fails(spark):
    with pytest.raises(CheckFailed) as failure:
        check_update_step(update_step_that_never_evicts, example=True)
    assert "numRowsRemoved" in str(failure.value) or "numRowsTotal" in str(failure.value)


def test_a_delay_that_is_not_the_smallest_fails(spark):
    with pytest.raises(CheckFailed, match="not the smallest"):
        check_smallest_delay(lambda batches: ANSWERS["smallest_delay"](batches) + 1,
                             example=True)


def test_a_delay_that_drops_rows_fails(spark):
    batches, _ = random_case(SEED)
    if ANSWERS["smallest_delay"](batches) == 0:
        pytest.skip("this stream needs no delay")
    with pytest.raises(CheckFailed, match="dropped by the watermark"):
        check_smallest_delay(lambda batches: 0, seed=SEED)


def test_an_answer_equal_to_everything_is_compared_for_what_it_holds(spark):
    class Anything(list):
        def __eq__(self, other):
            return True

    # it is compared for what it holds (nothing), not for what its __eq__ says
    with pytest.raises(CheckFailed, match="how many micro-batches"):
        check_predicted_output(lambda *args: Anything(), example=True)


# -- beliefs only a fixed stream's boundary exposes ----------------------------------------------------
def test_a_watermark_that_starts_at_t0_fails_on_a_fixed_stream(spark):
    # the worked example's first micro-batch ends beyond the delay: there it looks right
    check_predicted_output(starts_the_watermark_at_t0, example=True)
    with pytest.raises(CheckFailed, match="how many micro-batches") as failure:
        check_predicted_output(starts_the_watermark_at_t0, seed=SEED)
    assert "[[0], " in failure.value.context and "a fixed stream" in failure.value.context


def test_a_delay_measured_from_the_previous_batch_alone_fails_on_a_fixed_stream(spark):
    check_smallest_delay(delay_from_the_previous_batch, example=True)
    with pytest.raises(CheckFailed, match="dropped by the watermark") as failure:
        check_smallest_delay(delay_from_the_previous_batch, seed=SEED)
    assert "a fixed stream" in failure.value.context


def test_a_micro_batch_with_no_rows_runs_and_complete_mode_emits_the_whole_state_in_it(spark):
    from autograder.chapters.state_store_save import spark_run

    stream = [[5], [], [14, 24]]  # delay 5: [5] moves the watermark from the epoch to 0
    complete = spark_run(spark, stream, "complete", 5)
    assert [(b["input_rows"], b["output"]) for b in complete] == [
        (1, [[0, 1]]),
        (0, [[0, 1]]),                        # no rows: the whole state all the same
        (2, [[0, 1], [10, 1], [20, 1]])]
    append = spark_run(spark, stream, "append", 5)
    assert [(b["input_rows"], b["watermark"], b["output"]) for b in append] == [
        (1, None, []),
        (0, 0, []),                           # the no-data micro-batch the move asks for
        (0, 0, []),                           # then the micro-batch with no rows
        (2, 0, []),
        (0, 19, [[0, 1]])]                    # 24 - 5: window 0 is final

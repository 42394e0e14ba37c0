"""The corpus's right answers hold their task's rule on every stream, not only on the graded
ones; and each wrong belief of chapters 2 and 3 breaks the rule on a fixed stream of each
task it must lose. Pure Python, no Spark.

Chapter 3's rule is the executable model :mod:`autograder.chapters.save_model`, itself checked
against Spark batch by batch (tests/chapters/test_state_store_save_model.py). Chapter 1's
is the global limit's arithmetic: a micro-batch emits what the running total, capped by
the limit, grew by, and the counter row exists once that total is above zero. Chapter 2's
is update mode's count per key: the state holds every key's count so far, a micro-batch
emits the keys it received, and every micro-batch opens one state store instance per
shuffle partition. Chapters 1 and 2's rules are the ones their checks hold Spark to.

Hypothesis draws streams on the boundaries docs/grading-quality.md lists: empty
micro-batches (first, in the middle, last), events on a window's first second, watermarks
that land exactly on a window's end, batch maxima that fall, rows out of time order inside
a micro-batch, windows that get one event. ``derandomize``: every run draws the same
examples, so a failure here is the code's, never the draw's.
"""
from itertools import accumulate

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autograder.chapters import save_model
from autograder.chapters.aggregation_planning import EDGE_KEYS, EDGE_PARTITIONS
from autograder.checks.feedback import plain
from autograder.chapters.state_store_save import EDGE_STREAMS
from corpora.learners import chapter1, chapter2, chapter3

#: Cheap examples (no Spark): enough of them to cross every boundary many times.
PROPERTY = settings(derandomize=True, max_examples=150, deadline=None)


def cells_of(learner) -> dict:
    """What the learner's answer cells define, run in order in one namespace (a notebook's
    kernel), the set-up cell's imports left out: the cells here import what they use."""
    namespace: dict = {"__name__": f"learner_{learner.name}"}
    for grade_id, source in learner.answers.items():
        exec(compile(source, f"<{learner.name}: {grade_id}>", "exec"), namespace)
    return namespace


def of_kind(corpus, kind: str) -> list:
    return [pytest.param(learner, id=learner.name) for learner in corpus.LEARNERS
            if learner.kind == kind]


# -- chapter 1: the global limit ---------------------------------------------------------------
batch_sizes = st.lists(st.integers(min_value=0, max_value=5), min_size=1, max_size=6)
limits = st.integers(min_value=1, max_value=12)


def capped_totals(sizes, limit) -> list[int]:
    """The rows that passed the limit by the end of each micro-batch."""
    return [min(total, limit) for total in accumulate(sizes)]


@pytest.mark.parametrize("learner", of_kind(chapter1, "correct"))
@PROPERTY
@given(sizes=batch_sizes, limit=limits)
def test_chapter1_right_answers_follow_the_capped_running_total(learner, sizes, limit):
    cells = cells_of(learner)
    totals = capped_totals(sizes, limit)
    grew = [after - before for before, after in zip([0] + totals, totals)]
    assert plain(cells["predict_emitted"](list(sizes), limit)) == grew
    state = [{"numRowsTotal": int(total > 0), "numRowsUpdated": int(step > 0),
              "count": total or None} for total, step in zip(totals, grew)]
    assert plain(cells["predict_state"](list(sizes), limit)) == state


# -- chapter 3: StateStoreSaveExec ------------------------------------------------------------
#: Events in seconds after T0: a window's first second half of the time (with a delay that
#: is a multiple of 5 the watermark then often lands on a window's end), any second else.
events = st.one_of(st.sampled_from(range(0, 50, 10)), st.integers(min_value=0, max_value=49))
streams = st.lists(st.lists(events, max_size=3), min_size=1, max_size=5)
delays = st.sampled_from([0, 5, 10, 15])


def model_delay(batches, size=10) -> int:
    """The smallest delay with which the model drops no group, found by trying each."""
    delay = 0
    while any(b.metrics["numRowsDroppedByWatermark"]
              for b in save_model.run(batches, "append", delay, size)):
        delay += 1
    return delay


def step_run(step, batches, delay):
    """The model driven by a learner's Update step, answers made plain as the check does."""
    def plain_step(state, events, watermark, size):
        output, new_state, metrics = step(dict(state), list(events), watermark, size)
        return (plain(output), {int(k): int(v) for k, v in dict(new_state).items()},
                plain(metrics))
    return [(sorted(b.output), b.metrics)
            for b in save_model.run(batches, "update", delay, step=plain_step)]


def model_facts(batches, delay) -> dict:
    """Per task, what the model says of a stream: comparable with :func:`learner_facts`."""
    return {
        "test_predict_output": {mode: [sorted(b.output) for b in save_model.run(batches, mode, delay)]
                                for mode in save_model.MODES},
        "test_predict_metrics": {mode: [b.metrics for b in save_model.run(batches, mode, delay)]
                                 for mode in save_model.MODES},
        "test_smallest_delay": model_delay(batches),
        "test_update_step": [(sorted(b.output), b.metrics)
                             for b in save_model.run(batches, "update", delay)],
    }


def learner_facts(cells, batches, delay) -> dict:
    """Per task, a function giving what the learner's cells say of the stream."""
    return {
        "test_predict_output": lambda: {
            mode: [sorted(plain(rows)) for rows in cells["predict_output"](batches, mode, delay)]
            for mode in save_model.MODES},
        "test_predict_metrics": lambda: {
            mode: plain(list(cells["predict_metrics"](batches, mode, delay)))
            for mode in save_model.MODES},
        "test_smallest_delay": lambda: plain(cells["smallest_delay"](batches)),
        "test_update_step": lambda: step_run(cells["update_step"], batches, delay),
    }


@pytest.mark.parametrize("learner", of_kind(chapter3, "correct"))
@PROPERTY
@given(batches=streams, delay=delays)
def test_chapter3_right_answers_agree_with_the_model(learner, batches, delay):
    said = {task: answer() for task, answer in learner_facts(cells_of(learner), batches, delay).items()}
    assert said == model_facts(batches, delay)


def lost_tasks(learner) -> list[str]:
    return [task for task in chapter3.FULL if task not in learner.points]


@pytest.mark.parametrize("learner", of_kind(chapter3, "misconception"))
def test_each_chapter3_belief_breaks_the_model_on_a_fixed_stream_of_each_task_it_loses(learner):
    cells = cells_of(learner)
    for task in lost_tasks(learner):
        differs = []
        for batches, delay in EDGE_STREAMS:
            try:
                mine = learner_facts(cells, batches, delay)[task]()
            except Exception:       # noqa: BLE001 - a belief may also break the code
                mine = "raised"
            differs.append(mine != model_facts(batches, delay)[task])
        assert any(differs), f"{learner.name}: no fixed stream separates it on {task}"


# -- chapter 2: a count per key in update mode -------------------------------------------------
#: Micro-batches of keys: empty ones, a key twice in one batch, keys seen once, more keys
#: than shuffle partitions.
key_batches = st.lists(st.lists(st.sampled_from("abcdefg"), max_size=4), min_size=1, max_size=5)
partitions = st.integers(min_value=1, max_value=5)


def counts_rule(batches) -> list[dict]:
    """Update mode: the state holds every key's count so far; a micro-batch emits the keys
    it received, with their new counts."""
    state, answer = {}, []
    for keys in batches:
        for key in keys:
            state[key] = state.get(key, 0) + 1
        answer.append({"state": dict(state), "output": {key: state[key] for key in keys}})
    return answer


def metrics_rule(batches, partitions) -> list[dict]:
    """One state store instance per shuffle partition in every micro-batch, empty or not;
    a row updated per key the micro-batch received; a row per key seen so far."""
    seen, answer = set(), []
    for keys in batches:
        seen |= set(keys)
        answer.append({"numStateStoreInstances": partitions, "numRowsUpdated": len(set(keys)),
                       "numRowsTotal": len(seen)})
    return answer


def chapter2_tasks(cells, batches, partitions) -> dict:
    return {"test_predict_counts": lambda: plain(list(cells["predict_counts"](batches))),
            "test_predict_metrics": lambda: plain(list(cells["predict_metrics"](batches,
                                                                                partitions)))}


def chapter2_rules(batches, partitions) -> dict:
    return {"test_predict_counts": counts_rule(batches),
            "test_predict_metrics": metrics_rule(batches, partitions)}


@pytest.mark.parametrize("learner", of_kind(chapter2, "correct"))
@PROPERTY
@given(batches=key_batches, partitions=partitions)
def test_chapter2_right_answers_follow_the_update_mode_rule(learner, batches, partitions):
    said = {task: answer() for task, answer in
            chapter2_tasks(cells_of(learner), batches, partitions).items()}
    assert said == chapter2_rules(batches, partitions)


@pytest.mark.parametrize("learner", of_kind(chapter2, "misconception"))
def test_each_chapter2_belief_breaks_the_rule_on_a_fixed_stream_of_each_task_it_loses(learner):
    cells = cells_of(learner)
    fixed = {"test_predict_counts": [(EDGE_KEYS, None)], "test_predict_metrics": EDGE_PARTITIONS}
    for task in [task for task in fixed if task not in learner.points]:
        differs = []
        for batches, partitions in fixed[task]:
            try:
                mine = chapter2_tasks(cells, batches, partitions)[task]()
            except Exception:       # noqa: BLE001 - a belief may also break the code
                mine = "raised"
            differs.append(mine != chapter2_rules(batches, partitions)[task])
        assert any(differs), f"{learner.name}: no fixed stream separates it on {task}"

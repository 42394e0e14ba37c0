"""The introspection cheats of the grading tests can cheat: wherever a process holds an
answer, they find it and hand it in.

Each chapter's grading test shows its cheat (:mod:`corpora.learners.introspection`)
scoring zero in a graded kernel. That zero means something only if the cheat would have
scored where an answer was there to take. Here each cheat's cell runs in this process, as a
self-check's kernel would run it, with an answer placed in each place it looks: the answers
module's table (under the key the check asks with) or a local of the function that calls
it. Every cheat must come back with that answer. No Spark is started.
"""
import json

import pytest

from autograder.checks import answers
from corpora.learners import introspection


def cell(source: str) -> dict:
    """The names a learner's cell defines, run as a notebook runs it."""
    names = {"__name__": "__main__"}
    exec(compile(source, "<learner's cell>", "exec"), names)
    return names


@pytest.fixture
def held():
    """``held(question, about, answer)``: the answers module holds Spark's answer."""
    placed = []

    def hold(question, about, answer):
        key = answers._key(question, about)
        with answers._lock:
            answers._asked[key] = json.dumps(answer)
        placed.append(key)

    yield hold
    with answers._lock:
        for key in placed:
            answers._asked.pop(key, None)


def a_check_calls(function, *args, truth):
    """A check that holds its expected value in a local while it calls the learner."""
    assert truth is not None
    return function(*args)


FACTS = [{"emitted": 3, "numRowsTotal": 1, "numRowsUpdated": 1, "count": 3},
         {"emitted": 1, "numRowsTotal": 1, "numRowsUpdated": 1, "count": 4}]


def test_chapter_1_reads_the_answers_table(held):
    held("global_limit.limit_run", [[3, 2], 4], FACTS)
    found = cell(introspection.CHAPTER1["predict_emitted"])["predict_emitted"]([3, 2], 4)
    assert found == [3, 1]


@pytest.mark.parametrize("chapter, task, args", [
    (introspection.CHAPTER2, "predict_metrics", ([[["a", 1]]], 2)),
    (introspection.CHAPTER3, "predict_output", ([[1, 2]], "append", 5)),
    (introspection.CHAPTER3, "smallest_delay", ([[1, 2]],)),
    (introspection.CHAPTER5, "runs_again", ("/a/checkpoint",)),
    (introspection.CHAPTER6, "accepted", ({"how": "inner"},)),
])
def test_every_chapter_reads_its_checks_frames(chapter, task, args):
    truth = 7 if task == "smallest_delay" else "REFUSED" if task == "accepted" else [[1], [2]]
    assert a_check_calls(cell(chapter[task])[task], *args, truth=truth) == truth


def test_a_state_reader_reads_the_facts_of_the_batch_it_is_asked_about():
    facts = [{"a": {"left": 1, "right": 0}}, {"a": {"left": 1, "right": 1}}]
    reader = cell(introspection.CHAPTER6["rows_per_key"])["rows_per_key"]
    assert a_check_calls(reader, None, "/a/checkpoint", 1, truth=facts) == facts[1]


def test_chapter_5_reads_the_answers_table(held):
    held("state_store_files.restart_outcome", {"change": "key"}, "STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE")
    restart_error = cell(introspection.CHAPTER5["restart_error"])["restart_error"]
    assert restart_error({"change": "key"}) == "STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE"


def test_chapter_6_reads_the_answers_table(held):
    stream = [[["shown", "a", 1]], [["click", "a", 2]]]
    held("stream_join_checks.buffered", [stream, "min"],
         {"kinds": ["data", "data"], "sides": [{"left": [["a", 1]], "right": []}] * 2})
    held("stream_join_checks.unmatched", stream, {"kinds": ["data", "data"], "out": [[], [["a", 1]]]})
    held("stream_join_checks.accepted", {"how": "left_anti"}, "_LEGACY_ERROR_TEMP_3102")
    names = {task: cell(source)[task] for task, source in introspection.CHAPTER6.items()}
    assert names["predict_buffered"](stream, "min") == [{"left": [["a", 1]], "right": []}] * 2
    assert names["predict_unmatched"](stream) == [[], [["a", 1]]]
    assert names["accepted"]({"how": "left_anti"}) == "_LEGACY_ERROR_TEMP_3102"


SESSIONS = [["emitted", [[0, []], [1, [["ann", 2, 1000, 3000], ["bob", 1, 500, 500]]]]],
            ["read", [["ann"]]]]


def test_chapter_4_takes_what_the_kernel_holds_into_the_processor(held):
    held("transform_with_state.sessions", [4000, [[["ann", 1]]]], SESSIONS)
    names = cell(introspection.CHAPTER4["session_tracker"])
    loot = names["SessionTracker"](4000).loot
    assert SESSIONS in loot   # with whatever else this process asked before
    assert names["_emitted_for"]([SESSIONS], "ann") == [[], [["ann", 2, 1000, 3000]]]


def test_chapter_4_takes_the_checks_frames_into_the_processor():
    first_n = cell(introspection.CHAPTER4["first_n"])["FirstN"]
    truth = [["emitted", [[0, [["ann", 1]]]]]]
    assert truth in a_check_calls(first_n, 2, truth=truth).loot

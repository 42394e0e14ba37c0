"""Chapter 1's learners: the global limit.

Grade cells: test_predict_emitted (2), test_predict_state (3), test_emitted_so_far (2),
test_first_clicks (3).
"""
from corpora.learners import Learner

FULL = {"test_predict_emitted": 2, "test_predict_state": 3,
        "test_emitted_so_far": 2, "test_first_clicks": 3}


def losing(*grade_ids: str) -> dict[str, float]:
    return {g: p for g, p in FULL.items() if g not in grade_ids}


# -- right answers, written otherwise ----------------------------------------------------------
RUNNING_TOTAL = {
    "predict_emitted": '''
from itertools import accumulate

def predict_emitted(sizes, limit):
    # rows that reached the sink so far, capped by the limit, then the differences
    capped = [min(total, limit) for total in accumulate(sizes)]
    return [after - before for before, after in zip([0] + capped, capped)]
''',
    "predict_state": '''
def predict_state(sizes, limit):
    answer = []
    total = 0
    for size in sizes:
        before = total
        total = min(limit, total + size)
        answer.append(dict(count=total or None,
                           numRowsUpdated=int(total != before),
                           numRowsTotal=int(total > 0)))
    return tuple(answer)
''',
    "emitted_so_far": '''
def emitted_so_far(spark, checkpoint):
    rows = spark.read.format("statestore").load(checkpoint).collect()
    return sum(row.value.value for row in rows)
''',
    "first_clicks": '''
from pyspark.sql import functions as F

def first_clicks(events, n):
    return events.filter("kind = 'click'").limit(n)
''',
}

NUMPY_AND_SQL = {
    "predict_emitted": '''
import numpy as np

def predict_emitted(sizes, limit):
    passed = np.minimum(np.cumsum(sizes), limit)
    return list(np.diff(passed, prepend=0))
''',
    "predict_state": '''
import numpy as np

def predict_state(sizes, limit):
    stored = np.minimum(np.cumsum(sizes), limit)
    previous = np.concatenate([[0], stored[:-1]])
    return [{"numRowsTotal": np.int64(s > 0), "numRowsUpdated": np.int64(s > p),
             "count": None if s == 0 else s} for s, p in zip(stored, previous)]
''',
    "emitted_so_far": '''
def emitted_so_far(spark, checkpoint):
    counts = (spark.read.format("statestore").load(checkpoint)
                   .selectExpr("value.value AS emitted").collect())
    return counts[0].emitted if counts else 0
''',
    "first_clicks": '''
import pyspark.sql.functions as F

def first_clicks(events, n):
    return events.where(F.expr("kind == 'click'")).select("kind", "id").limit(n)
''',
}

GENERATORS = {
    "predict_emitted": '''
def predict_emitted(sizes, limit):
    def emitted():
        left = limit
        for size in sizes:
            now = size if size < left else left
            left -= now
            yield now
    return list(emitted())
''',
    "predict_state": '''
class LimitState:
    def __init__(self, limit):
        self.limit, self.count = limit, None

    def step(self, size):
        before = self.count or 0
        after = min(self.limit, before + size)
        wrote = after > before
        if wrote:
            self.count = after
        return {"numRowsTotal": 0 if self.count is None else 1,
                "numRowsUpdated": 1 if wrote else 0, "count": self.count}

def predict_state(sizes, limit):
    state = LimitState(limit)
    return [state.step(size) for size in sizes]
''',
    "emitted_so_far": '''
from autograder import read_state

def emitted_so_far(spark, checkpoint):
    for row in read_state(spark, checkpoint):
        return int(row["value"]["value"])
    return 0
''',
    "first_clicks": '''
from pyspark.sql.functions import col

def first_clicks(events, n):
    clicks = events.where(col("kind").isin("click"))
    return clicks.limit(n)
''',
}

LEARNERS = [
    Learner("running_total", "correct", "Caps the running total with accumulate, builds dicts "
            "with keywords in another order and returns a tuple; reads the state store "
            "directly and filters with a SQL string.", RUNNING_TOTAL, FULL),
    Learner("numpy_and_sql", "correct", "Computes with NumPy (answers hold NumPy integers), "
            "reads the counter with selectExpr, and puts the columns in another order.",
            NUMPY_AND_SQL, FULL),
    Learner("generators", "correct", "Uses a generator and a small class for the state, "
            "and self-contained cells that import what they use.", GENERATORS, FULL),
    # -- misconceptions -----------------------------------------------------------------------
    Learner("limit_per_batch", "misconception", "Believes the limit applies to each "
            "micro-batch on its own.", {**GENERATORS, "predict_emitted": '''
def predict_emitted(sizes, limit):
    return [min(size, limit) for size in sizes]
'''}, losing("test_predict_emitted"),
            dimension="a micro-batch with rows after the limit is reached"),
    Learner("counter_from_the_start", "misconception", "Believes the counter row exists "
            "from the first micro-batch, holding 0 until a row is emitted.",
            {**GENERATORS, "predict_state": '''
def predict_state(sizes, limit):
    facts, so_far = [], 0
    for size in sizes:
        now = min(size, limit - so_far)
        so_far += now
        facts.append({"numRowsTotal": 1, "numRowsUpdated": 1 if now else 0, "count": so_far})
    return facts
''', "emitted_so_far": '''
def emitted_so_far(spark, checkpoint):
    return read_state(spark, checkpoint)[0]["value"]["value"]
'''}, losing("test_predict_state", "test_emitted_so_far"),
            dimension="a first micro-batch with no rows"),
    Learner("updated_every_batch", "misconception", "Believes every micro-batch writes the "
            "counter, even once the limit is reached.", {**GENERATORS, "predict_state": '''
def predict_state(sizes, limit):
    facts, so_far = [], 0
    for size in sizes:
        so_far = min(limit, so_far + size)
        facts.append({"numRowsTotal": 1 if so_far else 0,
                      "numRowsUpdated": 1 if so_far else 0, "count": so_far or None})
    return facts
'''}, losing("test_predict_state"),
            dimension="a micro-batch with rows after the limit is reached"),
    Learner("row_per_record", "misconception", "Believes the state keeps one row per "
            "emitted row.", {**GENERATORS, "predict_state": '''
def predict_state(sizes, limit):
    facts, so_far = [], 0
    for size in sizes:
        now = min(size, limit - so_far)
        so_far += now
        facts.append({"numRowsTotal": so_far, "numRowsUpdated": now, "count": so_far or None})
    return facts
''', "emitted_so_far": '''
def emitted_so_far(spark, checkpoint):
    return len(read_state(spark, checkpoint))
'''}, losing("test_predict_state", "test_emitted_so_far"),
            dimension="a micro-batch that lets two rows or more through"),
    Learner("limit_then_filter", "misconception", "Limits the stream first and filters the "
            "clicks afterwards.", {**GENERATORS, "first_clicks": '''
from pyspark.sql import functions as F

def first_clicks(events, n):
    return events.limit(n).where(F.col("kind") == "click")
'''}, losing("test_first_clicks"), dimension="a view before the first click"),
    Learner("empty_batches_skipped", "misconception", "Believes Spark runs no micro-batch "
            "for an empty input, so leaves empty batches out of its answers.",
            {**RUNNING_TOTAL, "predict_emitted": '''
def predict_emitted(sizes, limit):
    # a micro-batch only runs when rows arrive: an empty batch has no entry
    answer, left = [], limit
    for size in sizes:
        if size:
            answer.append(min(size, left))
            left -= answer[-1]
    return answer
''', "predict_state": '''
def predict_state(sizes, limit):
    answer, total = [], 0
    for size in (s for s in sizes if s):
        before, total = total, min(limit, total + size)
        answer.append({"numRowsTotal": int(total > 0), "numRowsUpdated": int(total > before),
                       "count": total or None})
    return answer
'''}, losing("test_predict_emitted", "test_predict_state"), dimension="a micro-batch with no rows"),
    Learner("limit_waits_for_n", "misconception", "Believes the limit holds rows back until "
            "n have arrived, then emits n at once, as a batch LIMIT over the whole input would.",
            {**NUMPY_AND_SQL, "predict_emitted": '''
def predict_emitted(sizes, limit):
    # nothing leaves the limit before it has its n rows
    answer, seen = [], 0
    for size in sizes:
        full_before = seen >= limit
        seen += size
        answer.append(limit if seen >= limit and not full_before else 0)
    return answer
'''}, losing("test_predict_emitted"), dimension="a limit the stream never reaches"),
    Learner("all_or_nothing", "misconception", "Believes a micro-batch passes all its rows or "
            "none of them: one that would take the count past the limit passes nothing.",
            {**GENERATORS, "predict_emitted": '''
def predict_emitted(sizes, limit):
    answer, passed = [], 0
    for size in sizes:
        fits = passed + size <= limit
        answer.append(size if fits else 0)
        passed += answer[-1]
    return answer
'''}, losing("test_predict_emitted"),
            dimension="the limit reached inside a micro-batch: some of its rows pass, the rest not"),
    Learner("one_past_the_limit", "misconception", "Believes rows pass while the count is at "
            "most n, so the row that finds n rows already through passes too.",
            {**RUNNING_TOTAL, "predict_emitted": '''
def predict_emitted(sizes, limit):
    answer, passed = [], 0
    for size in sizes:
        now = 0
        for _ in range(size):
            if passed <= limit:
                passed += 1
                now += 1
        answer.append(now)
    return answer
'''}, losing("test_predict_emitted"), dimension="the limit reached by a micro-batch's last row"),
    Learner("count_per_batch", "misconception", "Believes the counter holds the rows the "
            "latest micro-batch let through, not all of them since the query started.",
            {**NUMPY_AND_SQL, "predict_state": '''
def predict_state(sizes, limit):
    facts, passed, count = [], 0, None
    for size in sizes:
        now = min(size, limit - passed)
        passed += now
        if now:
            count = now
        facts.append({"numRowsTotal": int(passed > 0), "numRowsUpdated": int(now > 0),
                      "count": count})
    return facts
'''}, losing("test_predict_state"), dimension="two micro-batches that let rows through"),
    # -- partial and hard-coded ---------------------------------------------------------------
    Learner("first_two_only", "partial", "Did tasks 1 and 2, left 3 and 4 untouched.",
            {k: GENERATORS[k] for k in ("predict_emitted", "predict_state")},
            {"test_predict_emitted": 2, "test_predict_state": 3}),
    Learner("example_typed_in", "hardcoded", "Returns the worked example's answers "
            "whatever the stream.", {"predict_emitted": '''
def predict_emitted(sizes, limit):
    return [2, 2, 0, 0]
''', "predict_state": '''
def predict_state(sizes, limit):
    return [{"numRowsTotal": 1, "numRowsUpdated": 1, "count": 2},
            {"numRowsTotal": 1, "numRowsUpdated": 1, "count": 4},
            {"numRowsTotal": 1, "numRowsUpdated": 0, "count": 4},
            {"numRowsTotal": 1, "numRowsUpdated": 0, "count": 4}]
''', "emitted_so_far": '''
def emitted_so_far(spark, checkpoint):
    return 4
'''}, {}),
]

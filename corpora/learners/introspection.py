"""Learners who read the course's toolkit and try to take its answers instead of working
them out: every route to a check's expected value that a Python kernel offers.

* **frames**: walking up from the learner's function to the check that called it
  (``sys._getframe``, ``inspect.stack``, ``logging.currentframe``, a traceback's
  ``tb_frame``, a generator's ``gi_frame``) and taking the locals the check compares with;
* **memory**: Spark's recorded answers and everything the toolkit's modules hold, through
  ``sys.modules``, ``vars`` and ``getattr``: the answers module's tables, looked up with the
  key its source shows;
* **objects handed over**: the attributes and closures of what the check passes in.

In a graded kernel the checks only ask (:mod:`autograder.checks.asking`): none of these routes
finds an answer there, so each cheat scores zero on every task it touches. :data:`SNOOP`
is the cheats' shared toolkit, written once and pasted at the top of each cheating cell, as
a learner would.
"""
from __future__ import annotations

#: What every cheating cell starts with: find a value the course holds, by every route.
SNOOP = r'''
import inspect, json, logging, sys, traceback

_NAMES = ("truth", "truths", "expected", "spark_did", "emitted", "facts", "again",
          "outcomes", "files", "listings", "known", "answer_key", "recorded")

def _frames():
    """Every frame above this one, by each route Python offers."""
    seen = []
    routes = [lambda: sys._getframe(1), lambda: logging.currentframe(),
              lambda: inspect.currentframe()]
    try:
        raise RuntimeError
    except RuntimeError as error:
        routes.append(lambda: error.__traceback__.tb_frame)
    def gen():
        yield
    g = gen()
    routes.append(lambda: g.gi_frame)
    routes.append(lambda: inspect.stack()[1].frame)
    for route in routes:
        try:
            frame = route()
        except Exception:
            continue
        while frame is not None:
            if all(frame is not other for other in seen):
                seen.append(frame)
            frame = frame.f_back
    return seen

def _from_frames():
    for frame in _frames():
        for name in _NAMES:
            if name in frame.f_locals and frame.f_locals[name] is not None:
                return frame.f_locals[name]
    return None

def _batch_from_frames(batch_id):
    """What a state reader is asked about one micro-batch, from the check's facts."""
    found = _from_frames()
    if isinstance(found, list) and batch_id < len(found):
        return found[batch_id]
    return found if isinstance(found, dict) else {}

def _from_memory(question, about):
    key = f"{question} {json.dumps(about, sort_keys=True)}"
    for module_name, module in list(sys.modules.items()):
        if not module_name.startswith("autograder"):
            continue
        for value in list(vars(module).values()) + [getattr(module, "RECORDED", None)]:
            try:
                if key in value:
                    found = value[key]
                    return json.loads(found) if isinstance(found, str) else found
            except Exception:
                continue
    return None
'''

#: Chapter 1: tasks 1 to 3 taken from the check's frames and the toolkit's memory.
CHAPTER1 = {
    "predict_emitted": SNOOP + '''
def predict_emitted(sizes, limit):
    facts = _from_memory("global_limit.limit_run", [list(sizes), limit]) or _from_frames()
    if isinstance(facts, list) and facts and isinstance(facts[0], dict):
        return [fact["emitted"] for fact in facts]
    return [0] * len(sizes)
''',
    "predict_state": SNOOP + '''
def predict_state(sizes, limit):
    facts = _from_memory("global_limit.limit_run", [list(sizes), limit]) or _from_frames()
    if isinstance(facts, list) and facts and isinstance(facts[0], dict):
        return [{k: fact[k] for k in ("numRowsTotal", "numRowsUpdated", "count")}
                for fact in facts]
    return [{} for _ in sizes]
''',
    "emitted_so_far": SNOOP + '''
def emitted_so_far(spark, checkpoint):
    found = _from_frames()
    return found if isinstance(found, int) else -1
''',
}

#: What a cheating cell adds to reach past its kernel: the learner's Spark reads any file
#: the grading machine can, and the kernel's environment says where the run keeps its
#: answers (the recorded checkpoints lie beside them, the guard's closed folders hold them).
READ_THROUGH_SPARK = r'''
import os

def _from_disk(question, about):
    from autograder import course_session
    key = f"{question} {json.dumps(about, sort_keys=True)}"
    places = []
    checkpoints = os.environ.get("AUTOGRADER_CHECKPOINTS", "")
    if checkpoints.endswith(".checkpoints"):
        places.append(checkpoints[:-len(".checkpoints")] + ".json")
    for folder in os.environ.get("AUTOGRADER_GUARD_DENY", "").split(os.pathsep):
        if folder:
            places.append(folder + "/spark-answers/*/answers.json")
    import autograder  # the worked examples' answers ship with the course
    places.append(os.path.join(os.path.dirname(autograder.__file__), "known_answers.json"))
    spark = course_session()
    for place in places:
        try:
            rows = spark.read.text(place, wholetext=True).collect()
        except Exception:
            continue
        for row in rows:
            try:
                table = json.loads(row.value)
            except Exception:
                continue
            for found in (table, *table.values()) if isinstance(table, dict) else ():
                if isinstance(found, dict) and key in found:
                    found = found[key]
                    return json.loads(found) if isinstance(found, str) else found
    return None
'''

#: Chapter 1: tasks 1 and 2 read from the run's answers file, through the learner's Spark.
CHAPTER1_THROUGH_SPARK = {
    "predict_emitted": SNOOP + READ_THROUGH_SPARK + '''
def predict_emitted(sizes, limit):
    facts = _from_disk("global_limit.limit_run", [list(sizes), limit])
    if isinstance(facts, list) and facts and isinstance(facts[0], dict):
        return [fact["emitted"] for fact in facts]
    return [0] * len(sizes)
''',
    "predict_state": SNOOP + READ_THROUGH_SPARK + '''
def predict_state(sizes, limit):
    facts = _from_disk("global_limit.limit_run", [list(sizes), limit])
    if isinstance(facts, list) and facts and isinstance(facts[0], dict):
        return [{k: fact[k] for k in ("numRowsTotal", "numRowsUpdated", "count")}
                for fact in facts]
    return [{} for _ in sizes]
''',
}

#: Chapter 1, right answers written by a learner who uses the introspection a correct
#: program may use: logging (which looks at frames), warnings, ``inspect.signature``, a
#: traceback of their own. Full marks.
HONEST_CHAPTER1 = {
    "predict_emitted": '''
import inspect, logging, traceback, warnings

log = logging.getLogger("my-notes")

def predict_emitted(sizes, limit):
    log.info("called with %s", inspect.signature(predict_emitted))
    warnings.warn("remember: the limit spans micro-batches", stacklevel=2)
    try:
        raise ValueError("a note to myself")
    except ValueError:
        traceback.format_exc()
    traceback.format_stack(limit=3)
    emitted, left = [], limit
    for size in sizes:
        emitted.append(min(size, left))
        left -= emitted[-1]
    return emitted
''',
}

#: Chapter 5: every task taken from the check's frames and the toolkit's memory.
CHAPTER5 = {
    "predict_files": SNOOP + '''
def predict_files(way, batches, min_deltas):
    found = _from_memory("state_store_files.version_files", [way, batches, min_deltas])
    found = found or _from_frames()
    return found if isinstance(found, list) else [[] for _ in range(batches)]
''',
    "counts_at": SNOOP + '''
def counts_at(spark, checkpoint, batch_id):
    return _batch_from_frames(batch_id)
''',
    "runs_again": SNOOP + '''
def runs_again(checkpoint):
    found = _from_frames()
    return found if isinstance(found, list) else [-1]
''',
    "restart_error": SNOOP + '''
def restart_error(change):
    found = _from_memory("state_store_files.restart_outcome", change) or _from_frames()
    return found if isinstance(found, str) else "NOT_FOUND"
''',
}

#: Chapter 2: the two predictions taken from the check's frames and the toolkit's memory.
CHAPTER2 = {
    "predict_counts": SNOOP + '''
def predict_counts(batches):
    found = _from_memory("aggregation_planning.keyed_count_run", [batches]) or _from_frames()
    if isinstance(found, list):
        return [fact.get("counts", fact) if isinstance(fact, dict) else fact for fact in found]
    return [{} for _ in batches]
''',
    "predict_metrics": SNOOP + '''
def predict_metrics(batches, partitions):
    found = _from_frames()
    return found if isinstance(found, list) else [{} for _ in batches]
''',
}

#: Chapter 3: the three predictions taken from the check's frames and the toolkit's memory.
CHAPTER3 = {
    "predict_output": SNOOP + '''
def predict_output(batches, mode, delay, size=10):
    found = _from_frames()
    return found if isinstance(found, list) else [[] for _ in batches]
''',
    "predict_metrics": SNOOP + '''
def predict_metrics(batches, mode, delay, size=10):
    found = _from_frames()
    return found if isinstance(found, list) else [{} for _ in batches]
''',
    "smallest_delay": SNOOP + '''
def smallest_delay(batches, size=10):
    found = _from_frames()
    return found if isinstance(found, int) else -1
''',
}

#: What a cheating processor adds: the course builds the learner's processor inside its
#: check, in the kernel, so ``__init__`` runs with the check's frames above it. It takes
#: every answer the kernel holds for the chapter's questions (memory and frames) along with
#: it to Spark's Python workers, and replays the rows the course's processor emitted for
#: each key, one recorded micro-batch per call.
REPLAY = r'''
from pyspark.sql import Row
from pyspark.sql.streaming import StatefulProcessor

def _loot(prefix):
    found = []
    for module_name, module in list(sys.modules.items()):
        if not module_name.startswith("autograder"):
            continue
        for value in list(vars(module).values()) + [getattr(module, "RECORDED", None)]:
            try:
                items = list(value.items())
            except Exception:
                continue
            for key, answer in items:
                if isinstance(key, str) and key.startswith(prefix):
                    found.append(json.loads(answer) if isinstance(answer, str) else answer)
    in_frames = _from_frames()
    if in_frames is not None:
        found.append(in_frames)
    return found

def _emitted_for(loot, user):
    """Per recorded micro-batch, the rows the course's processor emitted for ``user``."""
    batches = []
    for run in loot:
        for step in run if isinstance(run, list) else []:
            if isinstance(step, list) and len(step) == 2 and step[0] == "emitted":
                for _, rows in step[1]:
                    batches.append([row for row in rows if row and row[0] == user])
    return batches

class Replayer(StatefulProcessor):
    question = "transform_with_state."

    def __init__(self, *settings):
        self.loot = _loot(self.question)

    def init(self, handle):
        self.calls = handle.getValueState("calls", "n INT")

    def handleInputRows(self, key, rows, timerValues):
        done = (self.calls.get() or (0,))[0]
        self.calls.update((done + 1,))
        batches = _emitted_for(self.loot, key[0])
        for row in batches[done] if done < len(batches) else []:
            yield Row(*row)

    def close(self):
        pass
'''

#: Chapter 4: every processor replays what it found in the kernel when the check built it.
CHAPTER4 = {
    "session_tracker": SNOOP + REPLAY + "\nclass SessionTracker(Replayer):\n    pass\n",
    "ttl_dedup": SNOOP + REPLAY + "\nclass TtlDedup(Replayer):\n    pass\n",
    "starting_counts": SNOOP + REPLAY + "\nclass StartingCounts(Replayer):\n    pass\n",
    "first_n": SNOOP + REPLAY + "\nclass FirstN(Replayer):\n    pass\n",
}

#: Chapter 6: every task taken from the check's frames and the toolkit's memory.
CHAPTER6 = {
    "predict_buffered": SNOOP + '''
def predict_buffered(stream, policy):
    found = _from_memory("stream_join_checks.buffered", [stream, policy]) or _from_frames()
    if isinstance(found, dict) and "sides" in found:
        return found["sides"]
    return found if isinstance(found, list) else []
''',
    "predict_unmatched": SNOOP + '''
def predict_unmatched(stream):
    found = _from_memory("stream_join_checks.unmatched", stream) or _from_frames()
    if isinstance(found, dict) and "out" in found:
        return found["out"]
    return found if isinstance(found, list) else []
''',
    "rows_per_key": SNOOP + '''
def rows_per_key(spark, checkpoint, batch_id):
    return _batch_from_frames(batch_id)
''',
    "accepted": SNOOP + '''
def accepted(shape):
    found = _from_memory("stream_join_checks.accepted", shape) or _from_frames()
    return found if isinstance(found, str) else "bounded"
''',
}

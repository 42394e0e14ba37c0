"""A learner's answer may not be the course's own reference answer, however it is reached.

Every reference answer of the course starts with :func:`autograder.checks.checking.reference_answer`;
inside a grading kernel, the guard records a call to it from the learner's code while a
grade cell runs. What is caught is the call, so each way of finding the function ends the
same. Each scenario runs in a fresh Python process with the guard installed, as a grading
kernel does: a grade cell starts, the learner's code finds chapter 1's reference for task 4
one way and calls it, the grade cell ends; the guard's log must say "borrowed" (or must not,
for the honest learners). The reference is called with no stream: its first line has
spoken before its body fails, so no Spark is needed.
"""
import json
import subprocess
import sys
import textwrap

import pytest

from autograder.contract import GUARD_DENY, GUARD_LOG
from autograder.grading.kernel_guard import END_MARK, START_MARK

ROUTES = {
    "an import": "from autograder.chapters.global_limit import reference_first_clicks as found",
    "__import__ with fromlist":
        "found = __import__('autograder.glo' + 'bal_limit', fromlist=['x']).reference_first_clicks",
    "sys.modules after __import__":
        "import sys\n__import__('autograder.chapters.global_limit')\n"
        "found = sys.modules['autograder.chapters.global_limit'].reference_first_clicks",
    "importlib and vars":
        "import importlib\n"
        "found = vars(importlib.import_module('autograder.chapters.global_limit'))['reference_first_clicks']",
    "getattr with a built name":
        "import autograder.chapters.global_limit as m\nfound = getattr(m, 'reference_' + 'first_clicks')",
    "inspect.getmembers":
        "import inspect, autograder.chapters.global_limit as m\n"
        "found = dict(inspect.getmembers(m, inspect.isfunction))['reference_first_clicks']",
    "a copy of the module's text":
        "import autograder.chapters.global_limit as m\n"
        "ns = {'__name__': 'mine', '__package__': 'autograder.chapters'}\n"
        "exec(open(m.__file__).read(), ns)\nfound = ns['reference_first_clicks']",
    "a thread the learner starts":
        "import threading, autograder.chapters.global_limit as m\n"
        "def found(events, n):\n"
        "    t = threading.Thread(target=m.reference_first_clicks, args=(events, n))\n"
        "    t.start(); t.join()",
}

LEARNER_CALLS = """
def first_clicks(events, n):
    return found(events, n)
try:
    first_clicks(None, 3)
except Exception:
    pass
"""

HONEST = """
import autograder.chapters.global_limit as g
from pyspark.sql import functions as F
def first_clicks(events, n):
    return events.where(F.col("kind") == "click").limit(n)
g.EVENTS_SCHEMA, g.TOOLS if hasattr(g, "TOOLS") else None   # constants are free
"""

KERNEL = """
import json, sys
from autograder.grading import kernel_guard
kernel_guard.install(["autograder", "autograder.chapters.global_limit"])
namespace = {}
def cell(source, name):
    exec(compile(source, f"/tmp/ipykernel_0/{name}.py", "exec"), namespace)
for source, in_grade_cell in json.loads(sys.argv[1]):
    if in_grade_cell:
        cell(f"{START_MARK} = 'test_first_clicks'", "start")
    cell(source, "learner")
    if in_grade_cell:
        cell(f"{END_MARK} = 'test_first_clicks'", "end")
""".replace("{START_MARK}", START_MARK).replace("{END_MARK}", END_MARK)


def guard_events(tmp_path, cells: list[tuple[str, bool]]) -> list[dict]:
    """Run ``cells`` ((source, runs inside a grade cell)) in a guarded process; its log."""
    log = tmp_path / "guard.jsonl"
    env = {**__import__("os").environ, GUARD_LOG: str(log), GUARD_DENY: ""}
    subprocess.run([sys.executable, "-c", KERNEL, json.dumps(cells)], env=env, check=True,
                   timeout=120)
    return [json.loads(line) for line in log.read_text().splitlines()]


def borrowed(events) -> list[dict]:
    return [event for event in events if event["event"] == "borrowed"]


@pytest.mark.parametrize("route", ROUTES)
def test_a_reference_answer_called_by_the_learner_during_a_grade_cell_is_recorded(tmp_path, route):
    events = guard_events(tmp_path, [(textwrap.dedent(ROUTES[route]) + LEARNER_CALLS, True)])
    assert [(e["cell"], e["what"]) for e in borrowed(events)] == [
        ("test_first_clicks", "the course's answer "
         f"{'mine' if 'text' in route else 'autograder.chapters.global_limit'}.reference_first_clicks")]


@pytest.mark.slow
def test_the_reference_handed_in_as_the_answer_is_recorded_when_a_check_calls_it(tmp_path):
    # No line of the learner's calls it: the check does, as the learner's answer (here a
    # functools.partial of it, found through vars). A function named like a check in the
    # learner's own code is not a check. The real check runs on Spark, on the worked example.
    source = ("import functools, importlib\n"
              "m = importlib.import_module('autograder.chapters.global_limit')\n"
              "first_clicks = functools.partial(vars(m)['reference_first_clicks'])\n"
              "import autograder.checks.feedback as f\n"
              "def check_first_clicks(first_clicks):\n"
              "    f.ask(first_clicks, None, 3, what='first_clicks')\n")
    # check_ functions count only in the course's files: the learner's own is not a check
    events = guard_events(tmp_path, [(source + "try:\n    check_first_clicks(first_clicks)\n"
                                      "except Exception:\n    pass\n", True)])
    assert borrowed(events) == []
    events = guard_events(tmp_path, [(
        "import functools, importlib\n"
        "m = importlib.import_module('autograder.chapters.global_limit')\n"
        "first_clicks = functools.partial(vars(m)['reference_first_clicks'])\n"
        "try:\n    m.check_first_clicks(first_clicks, example=True)\nexcept BaseException:\n    pass\n", True)])
    assert [e["cell"] for e in borrowed(events)][:1] == ["test_first_clicks"]


def test_exploring_a_reference_outside_grade_cells_and_honest_code_are_not_recorded(tmp_path):
    events = guard_events(tmp_path, [(ROUTES["an import"] + LEARNER_CALLS, False),
                                     (HONEST, True)])
    assert borrowed(events) == []
    assert [e["event"] for e in events] == ["start", "end"]

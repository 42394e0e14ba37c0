"""What is not the learner's fault is never scored as theirs.

A check that meets a full disk or a bug in the course's own code raises
:class:`autograder.checks.feedback.GraderFault`, which decides nothing, instead of a lesson that
costs points; the grading guard records it, and the grading command grades the notebook
again. An error of the learner's own code stays the learner's, whatever it says, and a
learner cannot fake a fault to escape grading.
"""
import errno
import json
import os
import subprocess
import sys

import pytest

from autograder.checks.checking import spark_failure_as_lesson
from autograder.checks.feedback import CheckFailed, GraderFault, ask
from autograder.contract import GUARD_DENY, GUARD_LOG
from autograder.grading.kernel_guard import END_MARK, START_MARK
from autograder.toolkit.plan import parse_plan


def test_a_bug_in_the_courses_code_is_a_grader_fault_naming_the_line():
    with pytest.raises(GraderFault, match=r"an error in the course's code \(autograder/toolkit/plan\.py:\d+\)"):
        with spark_failure_as_lesson("your query"):
            parse_plan(None)  # the course's plan reader, given what it cannot read


def test_the_learners_own_error_stays_a_lesson_even_when_it_claims_a_full_disk():
    def predict(sizes, limit):
        raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.raises(CheckFailed, match="predict raised an error") as failed:
        ask(predict, [1], 1, what="predict")
    assert not isinstance(failed.value, GraderFault)

    def hands_in_a_fault(sizes, limit):
        raise GraderFault("the disk is full")

    with pytest.raises(CheckFailed, match="raised an error"):
        ask(hands_in_a_fault, [1], 1, what="predict")


KERNEL = f"""
import sys
from autograder.grading import kernel_guard
kernel_guard.install(["autograder", "autograder.checks.feedback"])
ns = {{}}
def cell(source):
    exec(compile(source, "/tmp/ipykernel_0/cell.py", "exec"), ns)
cell("{START_MARK} = 'test_predict'")
cell(sys.argv[1])
cell("{END_MARK} = 'test_predict'")
"""


def _guard_events(tmp_path, source: str) -> list[dict]:
    log = tmp_path / "guard.jsonl"
    log.unlink(missing_ok=True)
    env = {**os.environ, GUARD_LOG: str(log), GUARD_DENY: ""}
    subprocess.run([sys.executable, "-c", KERNEL, source], env=env, check=True, timeout=120)
    return [json.loads(line) for line in log.read_text().splitlines()]


def test_the_guard_records_a_fault_the_courses_checks_raise_and_no_other(tmp_path):
    real = ("from autograder.checks.checking import spark_failure_as_lesson\n"
            "from autograder.toolkit.plan import parse_plan\n"
            "try:\n    with spark_failure_as_lesson('q'):\n        parse_plan(None)\n"
            "except Exception as e:\n    print(type(e).__name__)\n")
    faults = [e for e in _guard_events(tmp_path, real) if e["event"] == "fault"]
    assert [e["cell"] for e in faults] == ["test_predict"]
    assert "autograder/toolkit/plan.py" in faults[0]["what"]

    fake = ("import sys\n"
            "sys.audit('autograder.grader_fault', 'the disk is full')\n"
            "import autograder.checks.feedback as f\n"
            "ns = {'__name__': 'copy', '__package__': 'autograder.checks'}\n"
            "exec(open(f.__file__).read(), ns)\n"
            "try:\n    ns['not_the_learners'](OSError(28, 'No space left on device'))\n"
            "except Exception:\n    pass\n")
    assert [e for e in _guard_events(tmp_path, fake) if e["event"] == "fault"] == []


def test_the_summary_counts_the_graders_faults_apart_and_says_what_to_do():
    from autograder.grading import GRADED, GRADER_FAULT, CellScore, NotebookGrade, summary_table
    from autograder.grading.results import DIED_ONCE

    table = summary_table({"01_global_limit": {
        "ann": NotebookGrade("ann", {"test_predict_emitted": CellScore(2, 2)}, GRADED),
        "bob": NotebookGrade("bob", {}, GRADER_FAULT,
                             detail="the Spark Connect server stopped while this notebook was graded"),
        "cid": NotebookGrade("cid", {"test_predict_emitted": CellScore(2, 2)}, GRADED,
                             detail=DIED_ONCE),
    }})
    assert "bob" in table and "grader's fault, to regrade (the Spark Connect server" in table
    assert "2 graded, 0 flagged for cheating (none), 0 not run to the end (none)" in table
    assert "1 graded a second time because their kernel died once, which it did not do " \
           "again (cid)" in table
    assert "1 NOT graded because of the grader's own fault, not theirs (bob)" in table


@pytest.mark.slow
def test_a_spark_that_died_under_a_check_is_a_grader_fault(tmp_path):
    # A local session whose JVM is killed (as the kernel's OOM killer would): the next
    # query a check runs fails on the lost connection, and decides nothing.
    script = (
        "import os, signal\n"
        "from autograder.toolkit.session import course_session\n"
        "from autograder.checks.checking import spark_failure_as_lesson\n"
        "from autograder.checks.feedback import GraderFault\n"
        "spark = course_session()\n"
        "os.kill(spark.sparkContext._gateway.proc.pid, signal.SIGKILL)\n"
        "try:\n"
        "    with spark_failure_as_lesson('your query'):\n"
        "        spark.range(3).count()\n"
        "except GraderFault as fault:\n"
        "    print('GraderFault:', fault.cause)\n"
        "except Exception as error:\n"
        "    print('scored as the learner\\'s:', type(error).__name__, error)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "TMPDIR": str(tmp_path)})
    assert "GraderFault: the connection to Spark was lost" in done.stdout, done.stdout + done.stderr


IPYTHON_KERNEL = f"""
import sys
from IPython.core.interactiveshell import InteractiveShell
shell = InteractiveShell.instance()
shell.run_cell("from autograder.grading import kernel_guard\\n"
               "kernel_guard.install(['autograder', 'autograder.checks.feedback'])")
shell.run_cell("{START_MARK} = 'test_predict'")
shell.run_cell(sys.argv[1])
shell.run_cell("{END_MARK} = 'test_predict'")
"""


def _faults_in_a_grade_cell(tmp_path, source: str) -> list[str]:
    log = tmp_path / "guard.jsonl"
    log.unlink(missing_ok=True)
    env = {**os.environ, GUARD_LOG: str(log), GUARD_DENY: ""}
    subprocess.run([sys.executable, "-c", IPYTHON_KERNEL, source], env=env, check=True,
                   timeout=120, capture_output=True)
    return [e["what"] for e in map(json.loads, log.read_text().splitlines())
            if e["event"] == "fault" and e.get("cell") == "test_predict"]


def test_an_error_of_the_courses_code_that_no_check_caught_is_a_grader_fault(tmp_path):
    # The course's own work failing outside ask() and spark_failure_as_lesson (a check
    # asking Spark for the truth, a bug in a check) reaches the grade cell uncaught.
    faults = _faults_in_a_grade_cell(
        tmp_path, "from autograder.toolkit.plan import parse_plan\nparse_plan(None)\n")
    assert len(faults) == 1 and "an error in the course's code (autograder/toolkit/plan.py:" in faults[0]


def test_an_uncaught_error_of_the_learners_own_stays_the_learners(tmp_path):
    assert _faults_in_a_grade_cell(tmp_path, "1 / 0\n") == []
    # The learner's code on the way through the course's: the learner's.
    assert _faults_in_a_grade_cell(tmp_path, (
        "from autograder.checks.checking import side_by_side\n"
        "def mine():\n    raise OSError(28, 'No space left on device')\n"
        "side_by_side(None, {'a': mine})\n")) == []
    # A lesson is a lesson.
    assert _faults_in_a_grade_cell(tmp_path, (
        "from autograder.checks.feedback import CheckFailed\n"
        "raise CheckFailed('x', 1, 2)\n")) == []

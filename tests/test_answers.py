"""Spark's answers are asked once, and a grading run's recorded answers are used as given."""
import json
import os
import subprocess
import sys

from autograder import answers


def _in_a_new_process(program: str, **env: str) -> str:
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          env={**os.environ, **env}, check=True)
    return done.stdout.strip()


ASK_TWICE = """
from autograder.answers import spark_answer
calls = []
def ask_spark():
    calls.append(1)
    return {"emitted": (1, 2)}
first = spark_answer("demo.question", [[2, 3], 4], ask_spark)
first["emitted"].append(99)
second = spark_answer("demo.question", [[2, 3], 4], ask_spark)
print(len(calls), second)
"""


def test_a_question_asked_twice_goes_to_spark_once_and_comes_back_as_fresh_json_data():
    # Tuples come back as lists, and changing one answer does not change the next.
    assert _in_a_new_process(ASK_TWICE) == "1 {'emitted': [1, 2]}"


def test_the_solution_run_records_answers_that_a_learner_run_reads_instead_of_asking(tmp_path):
    record = tmp_path / "answers.json"
    _in_a_new_process(ASK_TWICE, AUTOGRADER_RECORD_ANSWERS=str(record))
    recorded = json.loads(record.read_text())
    assert list(recorded) == ['demo.question [[2, 3], 4]']

    # The learner's kernel: the answer is read from the file; Spark is never asked.
    learner = ("from autograder.answers import spark_answer\n"
               "print(spark_answer('demo.question', [[2, 3], 4], lambda: 1 / 0))")
    assert _in_a_new_process(learner, AUTOGRADER_ANSWERS=str(record)) == "{'emitted': [1, 2]}"


def test_a_question_about_another_stream_still_goes_to_spark(tmp_path):
    record = tmp_path / "answers.json"
    record.write_text(json.dumps({'demo.question [[2, 3], 4]': '"recorded"'}))
    learner = ("from autograder.answers import spark_answer\n"
               "print(spark_answer('demo.question', [[2, 3], 5], lambda: 'asked'))")
    assert _in_a_new_process(learner, AUTOGRADER_ANSWERS=str(record)) == "asked"


def test_recorded_answers_cannot_be_changed_from_the_notebook():
    try:
        answers.RECORDED["demo.question [[2, 3], 4]"] = '"poisoned"'
    except TypeError:
        return
    raise AssertionError("the recorded answers accepted a new entry")

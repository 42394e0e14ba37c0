"""Spark's answers are asked once, and a grading run's recorded answers are used as given."""
import json
import os
import subprocess
import sys
from pathlib import Path

from autograder.checks import answers


def _in_a_new_process(program: str, *args: str, **env: str) -> str:
    done = subprocess.run([sys.executable, "-c", program, *args], capture_output=True, text=True,
                          env={**os.environ, **env}, check=True)
    return done.stdout.strip()


ASK_TWICE = """
from autograder.checks.answers import spark_answer
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
    learner = ("from autograder.checks.answers import spark_answer\n"
               "print(spark_answer('demo.question', [[2, 3], 4], lambda: 1 / 0))")
    assert _in_a_new_process(learner, AUTOGRADER_ANSWERS=str(record)) == "{'emitted': [1, 2]}"


def test_a_question_about_another_stream_still_goes_to_spark(tmp_path):
    record = tmp_path / "answers.json"
    record.write_text(json.dumps({'demo.question [[2, 3], 4]': '"recorded"'}))
    learner = ("from autograder.checks.answers import spark_answer\n"
               "print(spark_answer('demo.question', [[2, 3], 5], lambda: 'asked'))")
    assert _in_a_new_process(learner, AUTOGRADER_ANSWERS=str(record)) == "asked"


ASK_SEVERAL = """
from autograder.checks.answers import spark_answer, spark_answers
asked = []
def ask_spark(missing):
    asked.append(missing)
    return [f"spark on {about}" for about in missing]
spark_answer("demo.change", 2, lambda: "spark on 2")
print(spark_answers("demo.change", [1, 2, 3, 1], ask_spark))
print(asked, spark_answer("demo.change", 3, lambda: 1 / 0))
"""


def test_several_questions_asked_at_once_go_to_spark_together_and_only_those_not_known(tmp_path):
    """A check whose queries share work asks for all its answers at once: Spark is asked
    once, about each question nobody knows yet, and each answer is known by itself after."""
    record = tmp_path / "answers.json"
    record.write_text(json.dumps({'demo.change 1': '"recorded"'}))
    assert _in_a_new_process(ASK_SEVERAL, AUTOGRADER_ANSWERS=str(record)).splitlines() == [
        "['recorded', 'spark on 2', 'spark on 3', 'recorded']",
        "[[3]] spark on 3"]


def test_importing_the_answers_reads_no_file_and_loading_them_reads_each_once(tmp_path):
    # A grading kernel's guard loads them before the learner's first cell (test_kernel_guard);
    # anywhere else the first question does (the tests above).
    record = tmp_path / "answers.json"
    record.write_text(json.dumps({'demo.question [[2, 3], 4]': '"recorded"'}))
    program = (
        "import sys\n"
        "opened = []\n"
        "sys.addaudithook(lambda event, args: opened.append(str(args[0])) "
        "if event == 'open' and str(args[0]).endswith('answers.json') else None)\n"
        "from autograder.checks import answers\n"
        "print(len(opened), dict(answers.RECORDED))\n"
        "answers.load(); answers.load()\n"
        "print(sorted(p.rsplit('/', 1)[1] for p in opened), dict(answers.RECORDED))\n")
    assert _in_a_new_process(program, AUTOGRADER_ANSWERS=str(record)).splitlines() == [
        "0 {}", "['answers.json', 'known_answers.json'] {'demo.question [[2, 3], 4]': '\"recorded\"'}"]


def test_recorded_answers_cannot_be_changed_from_the_notebook():
    try:
        answers.RECORDED["demo.question [[2, 3], 4]"] = '"poisoned"'
    except TypeError:
        return
    raise AssertionError("the recorded answers accepted a new entry")


#: Stands in for a streaming query: its checkpoint gains one commit file per batch.
QUERY = """
import json, pathlib, sys
from autograder.checks.answers import spark_checkpoint, spark_checkpoints
def run_query(keep):
    print("the query ran")
    checkpoint = pathlib.Path(sys.argv[1])
    checkpoint.mkdir()
    for batch in range(3):
        (checkpoint / f"commit-{batch}").write_text(str(batch))
        keep({"emitted so far": 2 * batch}, str(checkpoint))
"""

KEEP_CHECKPOINTS = QUERY + """
for reader in ("first", "second"):
    for fact, copy in spark_checkpoints("demo.checkpoints", [3], run_query):
        print(reader, json.dumps(fact), sorted(p.name for p in pathlib.Path(copy).iterdir()),
              pathlib.Path(sys.argv[1]) in pathlib.Path(copy).parents)
        (pathlib.Path(copy) / "commit-0").unlink()  # a reader that spoils its copy
"""


def _run_script(script: str, live: Path | str, **env: str) -> list[str]:
    done = subprocess.run([sys.executable, "-c", script, str(live)], check=True,
                          capture_output=True, text=True, env={**os.environ, **env})
    return done.stdout.strip().splitlines()


def _keep_checkpoints(live: Path, **env: str) -> list[str]:
    return _run_script(KEEP_CHECKPOINTS, live, **env)


FIRST_BATCHES = [
    """{"emitted so far": 0} ['commit-0'] False""",
    """{"emitted so far": 2} ['commit-0', 'commit-1'] False""",
    """{"emitted so far": 4} ['commit-0', 'commit-1', 'commit-2'] False""",
]


def test_a_checkpoint_is_kept_after_each_batch_and_every_reader_gets_its_own_copy(tmp_path):
    # The query runs once; each reader sees the checkpoint as it stood after each batch,
    # in a copy of its own (the first reader's damage does not reach the second).
    assert _keep_checkpoints(tmp_path / "live") == [
        "the query ran",
        *[f"first {line}" for line in FIRST_BATCHES],
        *[f"second {line}" for line in FIRST_BATCHES],
    ]


ONE_CHECKPOINT = QUERY + """
for index in (1, 2):
    fact, copy = spark_checkpoint("demo.checkpoints", [3], run_query, index)
    print(index, json.dumps(fact), sorted(p.name for p in pathlib.Path(copy).iterdir()),
          sorted(p.name for p in pathlib.Path(copy).parent.iterdir()))
"""


def test_one_micro_batchs_checkpoint_is_copied_alone_and_the_query_runs_once(tmp_path):
    # A check that hands one checkpoint per case copies that one, not the whole run's.
    assert _run_script(ONE_CHECKPOINT, tmp_path / "live") == [
        "the query ran",
        """1 {"emitted so far": 2} ['commit-0', 'commit-1'] ['1']""",
        """2 {"emitted so far": 4} ['commit-0', 'commit-1', 'commit-2'] ['2']""",
    ]


def test_a_learner_run_reads_the_checkpoints_the_solution_run_recorded(tmp_path):
    record = tmp_path / "grading" / "answers.json"
    record.parent.mkdir()
    _keep_checkpoints(tmp_path / "solution-live", AUTOGRADER_RECORD_ANSWERS=str(record))
    assert sorted(p.name for p in answers.checkpoints_beside(record).glob("*/*")) == ["0", "1", "2"]

    # The learner's kernel: the query never runs (its checkpoint folder exists already, so
    # run_query would fail), and the learner's damage stays in the learner's own copies.
    learner_live = tmp_path / "learner-live"
    learner_live.mkdir()
    lines = _keep_checkpoints(learner_live, AUTOGRADER_ANSWERS=str(record))
    assert lines == [f"{reader} {line}" for reader in ("first", "second") for line in FIRST_BATCHES]
    (recorded_last,) = answers.checkpoints_beside(record).glob("*/2")
    assert sorted(p.name for p in recorded_last.iterdir()) == ["commit-0", "commit-1", "commit-2"]


MAKE_AN_INPUT = """
import sys
from autograder.checks.answers import spark_input
made = []
def plan():
    made.append(1)
    if sys.argv[1] == "never":
        raise AssertionError("the input was made again")
    return {"plan": ("HashAggregate", "StateStoreSave")}
first = spark_input("demo.plan", ["a query"], plan)
first["plan"].append("changed by the reader")
print(len(made), spark_input("demo.plan", ["a query"], plan))
"""


def test_an_input_is_made_once_and_a_graded_kernel_is_handed_the_one_the_solution_run_made(
        tmp_path):
    record = tmp_path / "grading" / "answers.json"
    record.parent.mkdir()
    solution = _run_script(MAKE_AN_INPUT, "make", AUTOGRADER_RECORD_ANSWERS=str(record))
    assert solution == ["1 {'plan': ['HashAggregate', 'StateStoreSave']}"]

    # The graded kernel is given the checkpoints' folder alone, and the input is in it, so
    # the kernel never makes it.
    kernel = _run_script(MAKE_AN_INPUT, "never", AUTOGRADER_ASKING="1",
                         AUTOGRADER_CHECKPOINTS=str(answers.checkpoints_beside(record)))
    assert kernel == ["0 {'plan': ['HashAggregate', 'StateStoreSave']}"]


def test_a_process_killed_while_checking_leaves_no_checkpoint_copies_for_long(tmp_path):
    # A kernel the grader kills runs no exit handler, so its copies stay behind ...
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    killed = KEEP_CHECKPOINTS + "import os\nos._exit(0)\n"
    subprocess.run([sys.executable, "-c", killed, str(tmp_path / "killed-live")], check=True,
                   capture_output=True, env={**os.environ, "TMPDIR": str(scratch)})
    assert [p.name.startswith("spark-checkpoints-") for p in scratch.iterdir()] == [True]

    # ... until the next process that copies checkpoints, which removes them, and its own
    # copies when it ends.
    _keep_checkpoints(tmp_path / "next-live", TMPDIR=str(scratch))
    assert list(scratch.iterdir()) == []


# -- processes that share their answers (the test suite's workers) ------------------------------
ASK_SLOWLY = """
import sys, time
from autograder.checks.answers import spark_answer, spark_answers
def ask_spark():
    print("spark asked", flush=True)
    time.sleep(1)          # long enough for the other process to ask meanwhile
    return {"emitted": [1, 2]}
print(spark_answer("demo.shared", [2, 3], ask_spark))
print(spark_answers("demo.shared", [[2, 3], [4]], lambda missing: [f"spark on {m}" for m in missing]))
"""


def _side_by_side(program: str, count: int, *args: str, **env: str) -> list[str]:
    """The lines ``count`` processes that run ``program`` at the same time print, together."""
    started = [subprocess.Popen([sys.executable, "-c", program, *args], text=True,
                                stdout=subprocess.PIPE, env={**os.environ, **env})
               for _ in range(count)]
    return [line for process in started for line in process.communicate()[0].splitlines()]


def test_processes_that_share_a_folder_ask_spark_each_question_once(tmp_path):
    lines = _side_by_side(ASK_SLOWLY, 2, AUTOGRADER_SHARED_ANSWERS=str(tmp_path / "shared"))
    assert lines.count("spark asked") == 1
    assert lines.count("{'emitted': [1, 2]}") == 2
    # Of several questions, those another process answered are read, the others asked.
    assert lines.count("[{'emitted': [1, 2]}, 'spark on [4]']") == 2


def test_a_solutions_run_records_what_it_read_in_the_shared_folder(tmp_path):
    shared, record = str(tmp_path / "shared"), tmp_path / "answers.json"
    _in_a_new_process(ASK_SLOWLY, AUTOGRADER_SHARED_ANSWERS=shared)
    recording = _in_a_new_process(ASK_SLOWLY, AUTOGRADER_SHARED_ANSWERS=shared,
                                  AUTOGRADER_RECORD_ANSWERS=str(record))
    assert "spark asked" not in recording
    assert json.loads(record.read_text()) == {
        'demo.shared [2, 3]': '{"emitted": [1, 2]}', 'demo.shared [4]': '"spark on [4]"'}


ASK_AFRESH = """
import sys
from autograder.checks.answers import asking_spark, spark_answer
def ask_spark():
    print("spark asked", flush=True)
    return {"emitted": [1, 2]}
with asking_spark(share=sys.argv[1] == "shared") as asked:
    spark_answer("demo.shared", [2, 3], ask_spark)
print(asked)
"""


def test_asking_spark_afresh_takes_what_another_process_of_the_run_asked_only_when_it_shares(
        tmp_path):
    shared = str(tmp_path / "shared")
    _in_a_new_process(ASK_SLOWLY, AUTOGRADER_SHARED_ANSWERS=shared)   # asks Spark, shares it
    alone = _in_a_new_process(ASK_AFRESH, "alone", AUTOGRADER_SHARED_ANSWERS=shared)
    assert alone.splitlines() == ["spark asked", "{'demo.shared [2, 3]': {'emitted': [1, 2]}}"]
    sharing = _in_a_new_process(ASK_AFRESH, "shared", AUTOGRADER_SHARED_ANSWERS=shared)
    assert sharing.splitlines() == ["{'demo.shared [2, 3]': {'emitted': [1, 2]}}"]


def test_what_is_asked_afresh_while_sharing_is_left_for_the_others(tmp_path):
    shared = str(tmp_path / "shared")
    first = _in_a_new_process(ASK_AFRESH, "shared", AUTOGRADER_SHARED_ANSWERS=shared)
    assert first.splitlines()[0] == "spark asked"
    assert "spark asked" not in _in_a_new_process(ASK_SLOWLY, AUTOGRADER_SHARED_ANSWERS=shared)


def test_a_judge_never_reads_the_shared_folder(tmp_path):
    shared = str(tmp_path / "shared")
    _in_a_new_process(ASK_SLOWLY, AUTOGRADER_SHARED_ANSWERS=shared)
    judge = ("from autograder.checks.answers import judging, spark_answer\n"
             "with judging(None):\n"
             "    try:\n"
             "        spark_answer('demo.shared', [2, 3], lambda: 1 / 0)\n"
             "    except Exception as error:\n"
             "        print(type(error).__name__)\n")
    assert _in_a_new_process(judge, AUTOGRADER_SHARED_ANSWERS=shared) == "GraderFault"


def test_processes_that_share_a_folder_run_a_query_once_and_each_reader_gets_its_own_copy(tmp_path):
    shared = str(tmp_path / "shared")
    lines = _keep_checkpoints(tmp_path / "live", AUTOGRADER_SHARED_ANSWERS=shared)
    # The second process's query would make its own folder: it never runs.
    lines += _keep_checkpoints(tmp_path / "never-made", AUTOGRADER_SHARED_ANSWERS=shared)
    assert lines.count("the query ran") == 1
    assert lines[1:] == [f"{reader} {line}" for reader in ("first", "second") * 2
                         for line in FIRST_BATCHES]
    assert not (tmp_path / "never-made").exists()

    # A solution's run keeps the checkpoints it read there with its record, for the class.
    record = tmp_path / "grading" / "answers.json"
    record.parent.mkdir()
    lines = _keep_checkpoints(tmp_path / "never-made", AUTOGRADER_SHARED_ANSWERS=shared,
                              AUTOGRADER_RECORD_ANSWERS=str(record))
    assert "the query ran" not in lines
    assert sorted(p.name for p in answers.checkpoints_beside(record).glob("*/*")) == ["0", "1", "2"]


def test_a_process_finds_the_checkpoints_it_shared_after_it_stops_sharing(tmp_path):
    # A test worker asks with the folder shared, and a later test of the same worker without.
    program = KEEP_CHECKPOINTS.replace(
        'for reader in ("first", "second"):',
        'import os\nfor reader in ("first", "second"):\n'
        '    if reader == "second":\n        del os.environ["AUTOGRADER_SHARED_ANSWERS"]')
    done = subprocess.run([sys.executable, "-c", program, str(tmp_path / "live")], check=True,
                          capture_output=True, text=True,
                          env={**os.environ, "AUTOGRADER_SHARED_ANSWERS": str(tmp_path / "shared")})
    assert done.stdout.strip().splitlines() == [
        "the query ran", *[f"{reader} {line}" for reader in ("first", "second")
                           for line in FIRST_BATCHES]]

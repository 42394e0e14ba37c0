"""A learner's code runs in a sandbox: it reaches nothing of the grader's, and nothing it
starts outlives it (autograder.grading.sandbox).

First the sandbox itself, on plain processes: what it shows, what it lets a process write,
and that every process started inside ends with it, by whatever route it was started. Then
a class graded through the instructor's command, where learners' answer cells (and a
``foreachBatch`` function that runs in the Connect server's Python) try each thing in turn
and keep trying after the command has returned: every grade a while after the command
returned is the grade it reported, and no process of the run is left. Then chapter 4, whose
processors (learner code) run in the server's Python workers: one that starts a process
there changes nothing either.
"""
import dataclasses
import json
import sqlite3
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import psutil
import pytest

from autograder.grading import notebook_run, sandbox
from autograder.grading.results import GRADER_FAULT
from autograder.grading.run import autograde
from autograder.grading.sandbox import kernel_sandbox, new_workdir
from corpora.hostile import notebook
from corpora.submissions import FULL_MARKS, release_notebook, solution_notebook

pytestmark = pytest.mark.skipif(sandbox.why_not_available() is not None,
                                reason=f"{sandbox.why_not_available()}")

#: Every way of starting a process a learner could take, each detached from its parent
#: (a session of its own, a double fork), each told to sleep with ``TAG`` in its command line.
DETACHED = """
import ctypes, os, subprocess, sys
tag = sys.argv[1]
print("started", flush=True)
for stream in (0, 1, 2):    # what the sleepers inherit: nobody waits on it
    os.dup2(os.open(os.devnull, os.O_RDWR), stream)
sleeper = [sys.executable, "-c", "import time; time.sleep(300)", tag]
subprocess.Popen(sleeper, start_new_session=True)
os.posix_spawn(sys.executable, sleeper, dict(os.environ))
os.system(f"setsid sh -c 'sleep 300' {tag} &")
if os.fork() == 0:          # the classic daemon: fork, setsid, fork again
    os.setsid()
    if os.fork() == 0:
        os.execv(sys.executable, sleeper)
    os._exit(0)
libc = ctypes.CDLL(None)    # the fork system call itself, which no audit event announces
if libc.fork() == 0:
    os.execv(sys.executable, sleeper)
"""


def _tagged(tag: str) -> list[psutil.Process]:
    found = []
    for process in psutil.process_iter(["cmdline"]):
        if tag in (process.info["cmdline"] or []) or any(
                tag in part for part in process.info["cmdline"] or []):
            found.append(process)
    return found


def _run_inside(box, code: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(box.command([sys.executable, "-c", code, *args]),
                          capture_output=True, text=True, timeout=120)


def test_every_process_started_inside_ends_with_the_sandbox(tmp_path):
    tag = f"sandbox-sleeper-{uuid.uuid4().hex}"
    done = _run_inside(kernel_sandbox(new_workdir("test")), DETACHED, tag)
    assert done.stdout.strip() == "started", done.stderr
    time.sleep(1)
    assert _tagged(tag) == []


def test_outside_the_sandbox_the_same_processes_would_live_on():
    """The scenario above can fail: run unsandboxed, the same code leaves its sleepers."""
    tag = f"unsandboxed-sleeper-{uuid.uuid4().hex}"
    subprocess.run([sys.executable, "-c", DETACHED, tag], capture_output=True, timeout=60)
    time.sleep(1)
    left = _tagged(tag)
    try:
        assert len(left) >= 5, left  # Popen, posix_spawn, system, daemon, fork(2)
    finally:
        for process in left:
            process.kill()


def test_it_sees_its_own_processes_only():
    seen = _run_inside(kernel_sandbox(new_workdir("test")), textwrap.dedent("""
        import os
        pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
        print(pids, os.getuid(), open("/proc/1/cmdline").read().split("\\0")[0])
    """))
    pids, uid, first = seen.stdout.rsplit(" ", 2)
    assert len(json.loads(pids)) <= 3, seen.stdout  # bwrap, the Python, and nothing else
    assert int(uid) == sandbox.NOBODY and first.strip() == "bwrap"


def test_it_writes_its_own_folder_only_and_sees_no_course(tmp_path):
    course = tmp_path / "course"
    course.mkdir()
    gradebook = course / "gradebook.db"
    sqlite3.connect(gradebook).execute("create table grade (score int)")
    workdir = new_workdir("test")
    import autograder
    package = Path(autograder.__file__).parent
    done = _run_inside(kernel_sandbox(workdir), textwrap.dedent(f"""
        import os
        said = []
        said.append(os.path.exists({str(course)!r}))
        for attempt in (lambda: open({str(package / "planted.py")!r}, "w"),
                        lambda: os.link({str(gradebook)!r}, "here.db"),
                        lambda: os.rename("here", {str(course / "autograder")!r}),
                        lambda: open({str(course / "nbgrader_config.json")!r}, "w")):
            try:
                attempt()
                said.append("done")
            except OSError as error:
                said.append(type(error).__name__)
        open("mine.txt", "w").write("mine")
        print(said)
    """))
    assert done.stdout.strip() == ("[False, 'OSError', 'FileNotFoundError', "
                                   "'FileNotFoundError', 'FileNotFoundError']"), done
    assert (workdir / "mine.txt").read_text() == "mine"
    assert not (package / "planted.py").exists() and sorted(course.iterdir()) == [gradebook]


def test_a_python_reached_through_a_link_starts_inside(tmp_path, monkeypatch):
    # An instructor's virtual environment may be a link to another folder (a checkout
    # beside another, sharing one environment): the kernel is started by the link's path.
    link = tmp_path / "venv"
    link.symlink_to(sys.prefix)
    monkeypatch.setattr(sys, "prefix", str(link))
    python = link / "bin" / Path(sys.executable).name
    started = subprocess.run(kernel_sandbox(new_workdir("test")).command(
        [str(python), "-c", "import nbformat, pyspark, autograder; print('started')"]),
        capture_output=True, text=True, timeout=120)
    assert started.returncode == 0 and started.stdout.strip() == "started", started.stderr


def test_the_folder_notebooks_work_in_cannot_be_listed_from_inside():
    mine, other = new_workdir("test"), new_workdir("test")
    (other / "secret").write_text("theirs")
    done = _run_inside(kernel_sandbox(mine), textwrap.dedent(f"""
        import os
        try:
            print(os.listdir({str(mine.parent)!r}))
        except OSError as error:
            print(type(error).__name__)
    """))
    assert done.stdout.strip() in ("PermissionError", f"[{mine.name!r}]"), done


# -- a class graded through the command ---------------------------------------------------

ASSIGNMENT = "01_global_limit"
#: How long the attackers keep trying after the command has returned, and the tests wait.
AFTER = 20


def _attack(course: Path, tag: str) -> str:
    """An answer cell's code that starts a detached process by every route, each trying to
    write the gradebook, another learner's record and the CSV for a while after the run."""
    rewrite = textwrap.dedent(f"""
        import os, sqlite3, time
        end = time.time() + {AFTER + 60}
        while time.time() < end:
            for path in ({str(course / "grades.csv")!r},
                         {str(course / "grading" / ASSIGNMENT / "abe.json")!r}):
                try:
                    open(path, "w").write("rewritten")
                except OSError:
                    pass
            try:
                sqlite3.connect({str(course / "gradebook.db")!r}).execute(
                    "update grade set auto_score = 0")
            except Exception:
                pass
            time.sleep(0.2)
    """)
    return textwrap.dedent(f"""
        import ctypes, os, subprocess, sys
        writer = [sys.executable, "-c", {rewrite!r}, {tag!r}]
        subprocess.Popen(writer, start_new_session=True)
        os.posix_spawn(sys.executable, writer, dict(os.environ))
        if ctypes.CDLL(None).fork() == 0:
            os.setsid()
            os.execv(sys.executable, writer)
        def predict_emitted(sizes, limit):
            return [0] * len(sizes)
    """)


def _reach(secrets: list[Path], course: Path) -> str:
    """An answer cell's code that tries to read each of ``secrets`` by Python and through
    Spark, to link them and to plant files in the course folder (a config nbgrader would
    load, a package named like one it imports), and to read the memory of every process
    it can see; it prints what it reached (nothing, in a sandbox) and the processes it saw."""
    return textwrap.dedent(f"""
        import json, os
        reached = []
        for path in {[str(p) for p in secrets]!r}:
            for how, attempt in (("open", lambda: open(path, "rb").read()),
                                 ("link", lambda: os.link(path, "linked")),
                                 ("spark", lambda: spark.read.text(path).count())):
                try:
                    attempt()
                    reached.append(f"{{how}} {{path}}")
                except Exception:
                    pass
        os.makedirs("planted/nbgrader", exist_ok=True)
        open("planted/nbgrader/__init__.py", "w").write("raise SystemExit")
        open("planted/nbgrader_config.json", "w").write("{{}}")
        for source, target in (("planted/nbgrader_config.json", "nbgrader_config.json"),
                               ("planted/nbgrader", "nbgrader"),
                               ("planted/nbgrader", "autograder")):
            try:
                os.rename(source, os.path.join({str(course)!r}, target))
                reached.append(f"rename onto {{target}}")
            except OSError:
                pass
        pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
        for pid in pids:
            if pid != os.getpid():
                try:
                    open(f"/proc/{{pid}}/mem", "rb").read(1)
                    reached.append(f"memory of {{pid}}")
                except OSError:
                    pass
        print("SANDBOX-REACHED", json.dumps(reached), len(pids), os.path.exists({str(course)!r}))
    """)


def _from_spark(course: Path, tag: str) -> str:
    """The same writer, started from a ``foreachBatch`` function: in the server's Python."""
    return textwrap.dedent(f"""
        import subprocess, sys
        def start_writer(batch, batch_id):
            import subprocess, sys
            subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)", {tag!r}],
                             start_new_session=True)
            open({str(course / "grades.csv")!r}, "w").write("rewritten by Spark's Python")
        query = (spark.readStream.format("rate").load().writeStream
                 .foreachBatch(start_writer).start())
        import time; time.sleep(8)
        query.stop()
        def predict_emitted(sizes, limit):
            return [0] * len(sizes)
    """)


def _grades(course: Path, assignment: str = ASSIGNMENT) -> dict:
    with sqlite3.connect(course / "gradebook.db") as db:
        rows = db.execute("select id, auto_score, manual_score from grade").fetchall()
    return {
        "gradebook": sorted(rows),
        "csv": (course / "grades.csv").read_text(),
        "records": {p.name: p.read_text() for p in sorted((course / "grading" / assignment).glob("*.json"))},
    }


@pytest.mark.slow
def test_a_class_whose_learners_attack_keeps_its_grades_and_leaves_no_process(tmp_path, class_records):
    # Scenario, on a standalone cluster (the learners' file reads run in its worker's
    # executors) and on Spark's answers an earlier run recorded (--answers-from):
    # - an honest learner, graded first (one notebook at a time: what the others try to
    #   read of theirs is there);
    # - an attacker whose answer cell starts detached writers by every route, tries to
    #   read, link or plant (the answers folder, the solution, the course's source, the
    #   other learners' submissions, graded notebooks and the gradebook), and reads the
    #   memory of every process it sees;
    # - the same writer started from a foreachBatch function (in the server's Python);
    # - an attacker whose kernel dies right after starting its writers.
    # A while after the command returned, every grade is the one it reported, nothing was
    # reached, and no process of theirs is left.
    course, submissions = tmp_path / "course", tmp_path / "submitted"
    submissions.mkdir()
    tag = f"sandbox-attacker-{uuid.uuid4().hex}"
    answers_from = class_records.recorded(ASSIGNMENT).parent  # <assignment>/answers.json
    name = f"{ASSIGNMENT}.ipynb"
    secrets = [answers_from / ASSIGNMENT / "answers.json", solution_notebook(ASSIGNMENT),
               course / "source" / ASSIGNMENT / name, submissions / "abe.ipynb",
               course / "submitted" / "abe" / ASSIGNMENT / name,
               course / "autograded" / "abe" / ASSIGNMENT / name, course / "gradebook.db"]
    (submissions / "abe.ipynb").write_bytes(solution_notebook(ASSIGNMENT).read_bytes())
    notebook({"predict_emitted": _attack(course, tag) + _reach(secrets, course)},
             solved=("predict_state",))(submissions / "attacker.ipynb")
    notebook({"predict_emitted": _from_spark(course, tag)},
             solved=("predict_state",))(submissions / "through_spark.ipynb")
    notebook({"predict_emitted": _attack(course, tag) + "\nos._exit(3)\n"},
             solved=("predict_state",))(submissions / "dies_after.ipynb")
    done = subprocess.run(
        [sys.executable, "-m", "autograder.classroom", "grade", ASSIGNMENT,
         "--submissions", str(submissions), "--course-dir", str(course), "--jobs", "1",
         "--spark", "standalone", "--answers-from", str(answers_from), "--no-feedback"],
        capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    at_exit = _grades(course)
    left = _tagged(tag)
    time.sleep(AFTER)
    assert _grades(course) == at_exit
    assert left == [] and _tagged(tag) == []
    records = {name: json.loads(text) for name, text in at_exit["records"].items()}
    full, state = FULL_MARKS[ASSIGNMENT], FULL_MARKS[ASSIGNMENT]["test_predict_state"]
    assert records["abe.json"]["cells"] == {
        cell: {"score": points, "max_score": points} for cell, points in full.items()}
    # What Spark's Python tried is nobody's to see: unflagged, its solved task kept. The
    # kernel's own tries to open the course's files are seen by its guard: flagged, and
    # the task graded after them lost (a message, not the wall: nothing was there to open).
    through_spark, attacker = records["through_spark.json"], records["attacker.json"]
    assert {c: s["score"] for c, s in through_spark["cells"].items()} == {
        **dict.fromkeys(full, 0), "test_predict_state": state}, through_spark
    assert not through_spark["flags"]
    assert {c: s["score"] for c, s in attacker["cells"].items()} == dict.fromkeys(full, 0)
    assert attacker["flags"] and all("denied open" in flag for flag in attacker["flags"]), attacker
    assert through_spark["sandboxed"] is attacker["sandboxed"] is True
    assert records["dies_after.json"]["outcome"] == "kernel died"
    assert sorted(p.name for p in course.iterdir() if p.name.startswith(("nbgrader", "autograder"))) \
        == ["nbgrader_config.py"]
    graded = json.loads((course / "autograded" / "attacker" / ASSIGNMENT / name).read_text())
    printed = "".join("".join(output.get("text", "")) for cell in graded["cells"]
                      for output in cell.get("outputs", ()))
    reached = next(line for line in printed.splitlines() if line.startswith("SANDBOX-REACHED"))
    what, processes, course_seen = reached.removeprefix("SANDBOX-REACHED ").rsplit(" ", 2)
    assert json.loads(what) == [], reached
    assert int(processes) <= 8, reached  # bwrap, the kernel, its writers: nothing of the grader's
    assert course_seen == "False", reached  # the course folder's path is not there


TWS = "04_transform_with_state"


def _processor_that_attacks(course: Path, tag: str) -> str:
    """Chapter 4's right ``TtlDedup``, whose ``init`` (run by the server's Python workers,
    not the kernel) starts, once per server, a detached writer of the course's files."""
    solution = json.loads(solution_notebook(TWS).read_text())
    (cell,) = [c for c in solution["cells"]
               if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "ttl_dedup"]
    writer = textwrap.dedent(f"""
        import time
        end = time.time() + {AFTER + 60}
        while time.time() < end:
            for path in ({str(course / "grades.csv")!r},
                         {str(course / "grading" / TWS / "abe.json")!r},
                         {str(course / "gradebook.db")!r}):
                try:
                    open(path, "w").write("rewritten")
                except OSError:
                    pass
            time.sleep(0.2)
    """)
    start = textwrap.indent(textwrap.dedent(f"""
        import os, subprocess, sys
        try:
            os.close(os.open("/tmp/" + {tag!r}, os.O_CREAT | os.O_EXCL))
            subprocess.Popen([sys.executable, "-c", {writer!r}, {tag!r}], start_new_session=True,
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        except FileExistsError:
            pass
    """), " " * 8)
    source = "".join(cell["source"])
    marker = "    def init(self, handle):\n"
    assert marker in source
    return source.replace(marker, marker + start, 1)


def _release_with(assignment: str, grade_id: str, source: str, target: Path) -> Path:
    """The release of ``assignment`` with one answer cell written in."""
    handed_in = json.loads(release_notebook(assignment).read_text())
    (cell,) = [c for c in handed_in["cells"]
               if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == grade_id]
    cell["source"] = source
    target.write_text(json.dumps(handed_in))
    return target


@pytest.mark.slow
def test_a_processor_that_starts_a_process_in_sparks_python_changes_no_grade(tmp_path, class_records):
    # Scenario: chapter 4, where the learner's processors run in the Connect server's
    # Python workers, on Spark's answers the session's chapter 4 class recorded. A learner
    # who handed in the release, and one whose right processor (the only task they did)
    # starts a detached writer of the gradebook, the other learner's record and the CSV from
    # there. The writer reaches none of them (the server's sandbox holds no course folder),
    # ends with the run, and its author keeps the points of a right answer: starting a
    # process is no cheat.
    course, submissions = tmp_path / "course", tmp_path / "submitted"
    submissions.mkdir()
    tag = f"sandbox-processor-{uuid.uuid4().hex}"
    (submissions / "abe.ipynb").write_bytes(release_notebook(TWS).read_bytes())
    _release_with(TWS, "ttl_dedup", _processor_that_attacks(course, tag), submissions / "bob.ipynb")
    answers_from = class_records.recorded(TWS).parent  # <assignment>/answers.json
    done = subprocess.run(
        [sys.executable, "-m", "autograder.classroom", "grade", TWS, "--submissions",
         str(submissions), "--course-dir", str(course), "--jobs", "2",
         "--answers-from", str(answers_from), "--no-feedback"],
        capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stderr[-3000:]
    at_exit = _grades(course, TWS)
    left = _tagged(tag)
    time.sleep(AFTER)
    assert _grades(course, TWS) == at_exit
    assert left == [] and _tagged(tag) == []
    marks = FULL_MARKS[TWS]
    scored = {"abe": dict.fromkeys(marks, 0), "bob": {**dict.fromkeys(marks, 0),
                                                      "test_ttl_dedup": marks["test_ttl_dedup"]}}
    for learner, points in scored.items():
        record = json.loads(at_exit["records"][f"{learner}.json"])
        assert record["cells"] == {cell: {"score": points[cell], "max_score": marks[cell]}
                                   for cell in marks} and not record["flags"], record


def test_a_kernel_its_sandbox_cannot_start_is_the_graders_fault_not_the_learners(monkeypatch):
    # A sandbox in which no Python can start (its standard library is looked for where
    # there is none): the kernel dies before it runs a cell, in both runs. None of the
    # learner's code ran, so nothing is scored: the grader's fault, named.
    def broken(*args, **kwargs):
        box = kernel_sandbox(*args, **kwargs)
        return dataclasses.replace(box, env={**box.env, "PYTHONHOME": "/nowhere"})

    monkeypatch.setattr(notebook_run, "kernel_sandbox", broken)
    grade = autograde(ASSIGNMENT, {"ada": release_notebook(ASSIGNMENT)},
                      class_answers=False)["ada"]
    assert grade.outcome == GRADER_FAULT and "kernel did not start" in grade.detail, grade

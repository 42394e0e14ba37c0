"""The classroom's whole loop with stock nbgrader, from release to exported grades.

An instructor hands chapter 1 out and gets it back in one of two ways, both nbgrader's own:

* on a shared machine, through nbgrader's exchange folder: ``generate_assignment``,
  ``release_assignment``; each learner ``fetch_assignment``, works, ``submit``; the
  instructor ``collect``;
* through a learning platform: the instructor downloads the learners' files as a zip,
  named the platform's way, and ``zip_collect`` sorts them by learner.

Both land in the instructor's ``submitted/<learner>/<assignment>/``, which the course's
command grades (once, for the four learners of both ways: the solution's run is paid once),
and ``nbgrader export`` reads the gradebook the command wrote. Each way has a learner who
solved every task and one who handed the release back untouched.

The learners all run as the same system user here; ``CourseDirectory.student_id`` gives
each one's name, as their own login would on a shared machine.
"""
import csv
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest

from autograder.contract import COURSE_ID
from autograder.grading import REPOSITORY
from autograder.grading.course import nbgrader_env
from corpora.submissions import FULL_MARKS, release_notebook, solution_notebook, solved_release

ASSIGNMENT = "01_global_limit"
NOTEBOOK = f"{ASSIGNMENT}.ipynb"
FULL = sum(FULL_MARKS[ASSIGNMENT].values())
#: How a platform names a downloaded file (nbgrader's documented example of one):
#: ``<assignment>_<learner>_attempt_<time>_<file>.ipynb``.
PLATFORM_NAME = r".*_(?P<student_id>\w+)_attempt_(?P<timestamp>[0-9\-]+)_(?P<file_id>\w+)"


def nbgrader(*args: str, cwd: Path, home: Path) -> subprocess.CompletedProcess:
    """``nbgrader ARGS`` as a person in ``cwd`` whose home folder is ``home`` would run it."""
    env = nbgrader_env({"HOME": str(home), "JUPYTER_CONFIG_DIR": str(home / ".jupyter")})
    result = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=cwd, env=env,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, f"nbgrader {' '.join(args)}:\n{result.stdout}\n{result.stderr}"
    return result


def config(folder: Path, *lines: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "nbgrader_config.py").write_text("c = get_config()\n" + "\n".join(lines) + "\n")
    return folder


def solve(notebook_path: Path) -> None:
    """Answer every task of a fetched notebook as the instructor's solution does."""
    answers = {cell.metadata["nbgrader"]["grade_id"]: cell.source
               for cell in nbformat.read(solution_notebook(ASSIGNMENT), as_version=4).cells
               if cell.get("metadata", {}).get("nbgrader", {}).get("solution")}
    notebook = nbformat.read(notebook_path, as_version=4)
    for cell in notebook.cells:
        if cell.get("metadata", {}).get("nbgrader", {}).get("solution"):
            cell.source = answers[cell.metadata["nbgrader"]["grade_id"]]
    nbformat.write(notebook, notebook_path)


@pytest.mark.slow
def test_release_fetch_submit_collect_and_zip_collect_then_grade_and_export(tmp_path, class_records,
                                                                           grading_server):
    exchange = tmp_path / "exchange"
    exchange.mkdir()
    exchange.chmod(0o777)  # every learner writes their submission into it
    instructor = config(
        tmp_path / "instructor",
        f"c.CourseDirectory.root = {str(tmp_path / 'instructor')!r}",
        f"c.CourseDirectory.course_id = {COURSE_ID!r}",
        f"c.Exchange.root = {str(exchange)!r}",
        f"c.FileNameCollectorPlugin.named_regexp = {PLATFORM_NAME!r}")
    (instructor / "source" / ASSIGNMENT).mkdir(parents=True)
    (instructor / "source" / ASSIGNMENT / NOTEBOOK).write_bytes(
        solution_notebook(ASSIGNMENT).read_bytes())
    as_instructor = dict(cwd=instructor, home=instructor)

    # The exchange: release, fetch, answer, submit, collect.
    nbgrader("generate_assignment", ASSIGNMENT, **as_instructor)
    nbgrader("release_assignment", ASSIGNMENT, **as_instructor)
    for learner, answer in (("ann", solve), ("bob", lambda path: None)):
        home = config(tmp_path / "home" / learner,
                      f"c.CourseDirectory.course_id = {COURSE_ID!r}",
                      f"c.Exchange.root = {str(exchange)!r}")
        nbgrader("fetch_assignment", ASSIGNMENT, cwd=home, home=home)
        fetched = home / ASSIGNMENT / NOTEBOOK
        assert "BEGIN HIDDEN TESTS" not in fetched.read_text()  # the release, not the solution
        answer(fetched)
        nbgrader("submit", ASSIGNMENT, f"--CourseDirectory.student_id={learner}",
                 cwd=home, home=home)
    nbgrader("collect", ASSIGNMENT, "--CollectApp.check_owner=False", **as_instructor)

    # The platform's download: one zip, each file named after its learner.
    archive = instructor / "downloaded" / ASSIGNMENT / "archive"
    archive.mkdir(parents=True)
    with zipfile.ZipFile(archive / "submissions.zip", "w") as download:
        download.writestr(f"{ASSIGNMENT}_cid_attempt_2026-11-20-15-00-00_{NOTEBOOK}",
                          nbformat.writes(solved_release(ASSIGNMENT)))
        download.write(release_notebook(ASSIGNMENT),
                       f"{ASSIGNMENT}_dan_attempt_2026-11-20-16-30-00_{NOTEBOOK}")
    nbgrader("zip_collect", ASSIGNMENT, **as_instructor)

    submitted = instructor / "submitted"
    assert sorted(p.relative_to(submitted).as_posix() for p in submitted.glob("*/*/*.ipynb")) \
        == [f"{learner}/{ASSIGNMENT}/{NOTEBOOK}" for learner in ("ann", "bob", "cid", "dan")]

    # The course's command grades what was collected, then nbgrader exports its gradebook.
    # It grades on the tests' shared server (``--spark sc://...``), as the shards' test
    # does: a server of its own would be one more JVM to start and warm up, and the command's
    # own server is what tests/grading/test_classroom_command.py is about.
    graded = tmp_path / "graded"
    recorded = class_records.recorded(ASSIGNMENT)  # the session's one solution run
    reuse = ["--answers-from", str(recorded.parent)]
    grading = subprocess.run(
        [sys.executable, "-m", "autograder.classroom", "grade", ASSIGNMENT,
         "--submissions", str(submitted), "--course-dir", str(graded), "--no-feedback",
         "--spark", grading_server, *reuse],
        cwd=REPOSITORY, capture_output=True, text=True, timeout=900)
    assert grading.returncode == 0, grading.stderr
    class_records.keep(ASSIGNMENT, graded)
    nbgrader("export", "--to", str(tmp_path / "grades.csv"), cwd=graded, home=instructor)
    with open(tmp_path / "grades.csv", newline="") as exported:
        rows = list(csv.DictReader(exported))
    assert {row["student_id"]: (row["assignment"], float(row["score"]), float(row["max_score"]))
            for row in rows} == {
        "ann": (ASSIGNMENT, FULL, FULL), "bob": (ASSIGNMENT, 0, FULL),
        "cid": (ASSIGNMENT, FULL, FULL), "dan": (ASSIGNMENT, 0, FULL)}

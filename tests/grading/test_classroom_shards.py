"""One class on several grading machines: ``grade --shard K/N`` on each, then ``merge``.

A MOOC's class is too big for one machine. Each of N machines grades the learners that a
hash of their name gives to its shard (the same on every machine, whatever order it lists
the submissions in), and ``merge`` gathers the shards' course folders into one class. Graded
in one run, and in two shards on the same streams merged afterwards, a class must end with
the same grades, in the grading records and in nbgrader's CSV export; each learner graded
by exactly one shard.
"""
import csv
import json
import subprocess
import sys

import pytest
from nbgrader.api import Gradebook

from autograder.grading import REPOSITORY
from autograder.grading.cli import parser
from autograder.grading.shards import parse_shard, shard_of, take_shard
from corpora.submissions import (FULL_MARKS, LIMIT_THEN_FILTER, release_notebook,
                                      solution_notebook, write_submission)

ASSIGNMENT = "01_global_limit"
FULL = FULL_MARKS[ASSIGNMENT]


def classroom(*args, **popen):
    """The instructor's command, as a machine of the class runs it."""
    return subprocess.Popen([sys.executable, "-m", "autograder.classroom", *args],
                            cwd=REPOSITORY, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, **popen)


def finished(run: subprocess.Popen) -> str:
    out, err = run.communicate(timeout=900)
    assert run.returncode == 0, f"{run.args}\n{out}\n{err}"
    return out


def grade(submissions, course, *extra) -> subprocess.Popen:
    return classroom("grade", ASSIGNMENT, "--submissions", str(submissions),
                     "--course-dir", str(course), *extra)


def graded(course) -> dict[str, dict]:
    """Each learner's grade as the course's records hold it: points per task, outcome, flags."""
    return {ledger.stem: {key: record[key] for key in ("cells", "outcome", "flags")}
            for ledger in sorted((course / "grading" / ASSIGNMENT).glob("*.json"))
            for record in [json.loads(ledger.read_text())]}


def exported(course) -> list[tuple]:
    """nbgrader's CSV export: a row per learner and assignment, with its points."""
    with open(course / "grades.csv") as export:
        return sorted((row["assignment"], row["student_id"], row["raw_score"], row["score"],
                       row["max_score"]) for row in csv.DictReader(export))


@pytest.mark.slow
def test_two_shards_merged_grade_a_class_as_one_run_does(tmp_path, grading_server, class_records):
    # Three learners, nbgrader's layout; a hash of the names puts ann and bob in shard 1 of
    # 2, cid in shard 2.
    submissions = tmp_path / "submitted"
    class_ = {"ann": solution_notebook(ASSIGNMENT), "bob": release_notebook(ASSIGNMENT),
              "cid": write_submission(ASSIGNMENT, LIMIT_THEN_FILTER, tmp_path / "ltf.ipynb")}
    for learner, notebook in class_.items():
        (submissions / learner / ASSIGNMENT).mkdir(parents=True)
        (submissions / learner / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").write_bytes(
            notebook.read_bytes())
    spark = ("--spark", grading_server)  # every machine here grades on the tests' server

    # 1. One machine grades the whole class (on the streams and Spark's answers the
    #    session recorded for chapter 1).
    whole = tmp_path / "whole"
    given = ("--answers-from", str(class_records.recorded(ASSIGNMENT).parent))
    finished(grade(submissions, whole, *spark, "--jobs", "2", "--no-feedback", *given))

    # 2. Two machines, at once, each grade their shard of it on the same streams: the
    #    whole run's seed and Spark's answers handed to them.
    shards = [tmp_path / "shard1", tmp_path / "shard2"]
    same_streams = ("--answers-from", str(whole / "spark-answers"))
    runs = [grade(submissions, shard, *spark, "--jobs", "1", "--shard", f"{k}/2", *same_streams)
            for k, shard in enumerate(shards, start=1)]
    said = [finished(run) for run in runs]
    assert "2 graded" in said[0] and "1 graded" in said[1]

    # 3. The shards were disjoint and covered the class.
    first, second = set(graded(shards[0])), set(graded(shards[1]))
    assert first == {"ann", "bob"} and second == {"cid"}

    # 4. Shard 2's folder is late: merging shard 1 alone says who is missing (exit 1).
    merged = tmp_path / "merged"
    early = classroom("merge", str(shards[0]), "--course-dir", str(merged),
                      "--submissions", str(submissions))
    out, err = early.communicate(timeout=300)
    assert early.returncode == 1, out + err
    assert "1 submission(s) graded by no shard: cid (01_global_limit)" in out

    # 5. Merged again with both, they are the class the single run graded: the same points,
    #    outcomes and flags per learner, the same CSV export, everybody's feedback, the same
    #    seed.
    said = finished(classroom("merge", *map(str, shards), "--course-dir", str(merged),
                              "--submissions", str(submissions)))
    assert "0 submission(s) graded by no shard" in said and "different seeds" not in said
    assert graded(merged) == graded(whole)
    assert graded(whole)["ann"]["cells"] == {g: {"score": p, "max_score": p}
                                             for g, p in FULL.items()}
    assert graded(whole)["bob"]["cells"]["test_first_clicks"]["score"] == 0
    assert graded(whole)["cid"]["cells"]["test_first_clicks"]["score"] == 0
    assert graded(whole)["cid"]["cells"]["test_predict_state"]["score"] == FULL["test_predict_state"]
    assert exported(merged) == exported(whole)
    assert [row[1] for row in exported(whole)] == sorted(class_)  # one row each
    assert {p.parts[-3] for p in (merged / "feedback").glob(f"*/{ASSIGNMENT}/*.html")} == set(class_)
    seed = lambda course: (course / "spark-answers" / ASSIGNMENT / "seed").read_text()  # noqa: E731
    assert seed(merged) == seed(whole)

    # 6. Shards of different N overlap: merging them is refused, and nothing is merged.
    refused = classroom("merge", str(whole), str(shards[0]), "--course-dir", str(tmp_path / "bad"))
    out, err = refused.communicate(timeout=120)
    assert refused.returncode == 2, out + err
    assert "ann's 01_global_limit was graded by two shards" in err
    assert not (tmp_path / "bad" / "grading").exists()

    # 7. A shard's folder changed after its run: bob's record rewritten to full marks in
    #    shard 1, cid's points raised in shard 2's gradebook. Neither is merged; each is named,
    #    and the instructor is told to grade them again. ann, untouched, is merged as before.
    record = shards[0] / "grading" / ASSIGNMENT / "bob.json"
    record.write_text(record.read_text().replace('"score": 0', f'"score": {FULL["test_first_clicks"]}'))
    with Gradebook(f"sqlite:///{shards[1] / 'gradebook.db'}") as gradebook:
        raised = gradebook.find_grade("test_first_clicks", ASSIGNMENT, ASSIGNMENT, "cid")
        raised.manual_score = raised.max_score
        gradebook.db.commit()
    again = tmp_path / "merged-again"
    late = classroom("merge", *map(str, shards), "--course-dir", str(again),
                     "--submissions", str(submissions))
    out, err = late.communicate(timeout=300)
    assert late.returncode == 1, out + err
    assert (f"{ASSIGNMENT}/bob in {shards[0]}: its grading record was changed outside the "
            "command (its seal does not match): not merged; grade it again") in out
    assert (f"{ASSIGNMENT}/cid in {shards[1]}: the shard's gradebook's points for it differ "
            "from its grading record: not merged; grade it again") in out
    assert "2 submission(s) graded by no shard: bob (01_global_limit), cid (01_global_limit)" in out
    assert graded(again) == {"ann": graded(whole)["ann"]}
    assert [row[1] for row in exported(again)] == ["ann"]


def test_a_learners_shard_is_the_same_on_every_machine_and_every_learner_has_one():
    names = [f"learner{i:03d}" for i in range(300)] + ["ann", "bob", "cid", "Zoë"]
    work = {ASSIGNMENT: {name: f"{name}.ipynb" for name in names}}
    listed_backwards = {ASSIGNMENT: dict(reversed(work[ASSIGNMENT].items()))}
    shards = [take_shard(work, (k, 3))[ASSIGNMENT] for k in (1, 2, 3)]
    assert [take_shard(listed_backwards, (k, 3))[ASSIGNMENT] for k in (1, 2, 3)] == shards
    assert sorted(name for shard in shards for name in shard) == sorted(names)  # each once
    assert all(80 < len(shard) < 120 for shard in shards)  # about a third each
    assert shard_of("ann", 2) == 1 and shard_of("cid", 2) == 2  # not Python's salted hash()
    assert take_shard(work, (1, 1)) == work


@pytest.mark.parametrize("wrong, says", [
    ("3/2", "shards are numbered 1 to N (here 1 to 2)"),
    ("0/2", "shards are numbered 1 to N"),
    ("1/0", "at least one shard"),
    ("x", "'x' is not K/N"),
    ("2", "'2' is not K/N"),
])
def test_a_wrong_shard_is_refused_with_exit_code_2(wrong, says, capsys):
    with pytest.raises(SystemExit) as stop:
        parser().parse_args(["grade", ASSIGNMENT, "--submissions", ".", "--shard", wrong])
    assert stop.value.code == 2
    assert says in capsys.readouterr().err
    assert parse_shard("2/3") == (2, 3)

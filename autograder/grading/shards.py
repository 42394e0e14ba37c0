"""One class, several grading machines: shards of a class, and merging what they graded.

``grade --shard K/N`` grades only the learners of shard K. A learner's shard is read off a
hash of their name (the folder, or the ``<learner>.ipynb`` file, their work comes in), so
every machine handed the same submissions agrees on it whatever order it lists them in, and
all of one learner's assignments are graded on the same machine. ``merge`` gathers the
shards' course folders into one: each learner's grading record, graded notebook, feedback
and gradebook entry, then nbgrader's CSV export, as if one run had graded the whole class.
"""
from __future__ import annotations

import argparse
import hashlib
import shutil
from pathlib import Path

from . import ledger
from .course import GradingCourse, held_cells, nbgrader_env
from .results import NotebookGrade


def parse_shard(text: str) -> tuple[int, int]:
    """``"K/N"`` -> (K, N), 1 ≤ K ≤ N; the error an instructor reads otherwise."""
    k, slash, n = text.partition("/")
    if not (slash and k.strip().isdigit() and n.strip().isdigit()):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not K/N: write which shard this machine grades out of how many, "
            "e.g. --shard 1/3 on the first of three machines")
    k, n = int(k), int(n)
    if not 1 <= k <= n:
        raise argparse.ArgumentTypeError(
            f"{text!r}: shards are numbered 1 to N (here 1 to {n})" if n else
            f"{text!r}: a class needs at least one shard")
    return k, n


def shard_of(learner: str, count: int) -> int:
    """The shard (1 to ``count``) that grades ``learner``, the same on every machine."""
    digest = hashlib.sha256(learner.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % count + 1


def take_shard(work: dict[str, dict[str, Path]], shard: tuple[int, int]) -> dict[str, dict[str, Path]]:
    """The part of ``work`` ({assignment: {learner: notebook}}) that shard K of N grades."""
    k, n = shard
    return {assignment: {learner: notebook for learner, notebook in submissions.items()
                         if shard_of(learner, n) == k}
            for assignment, submissions in work.items()}


class MergeError(ValueError):
    """The shards' folders cannot be merged as they are (the message says why)."""


def graded_in(course_dir: Path) -> dict[tuple[str, str], Path]:
    """The grading records of a course folder: (assignment, learner) -> its ledger file."""
    return {(path.parent.name, path.stem): path
            for path in sorted(Path(course_dir).glob("grading/*/*.json"))}


def merge_courses(target: GradingCourse, shards: list[Path]) -> tuple[dict, list[str]]:
    """Gather the shards' course folders into ``target``: grading records, submitted,
    graded and feedback notebooks, gradebook entries (scores and comments as the shard's
    gradebook holds them), and the first shard's seed and Spark's answers. A learner whose
    record is not sealed by its shard, or whose points in the shard's gradebook differ from
    the record's, is left out and named. Returns the merged grades ({assignment: {learner:
    NotebookGrade}}) and notes for the instructor (shards graded on different seeds, learners
    left out). Raises :class:`MergeError` if a learner's
    assignment was graded by two shards, or a folder is not a grading run's."""
    from nbgrader.api import Gradebook

    owner: dict[tuple[str, str], Path] = {}
    for shard in shards:
        shard = Path(shard).resolve()
        if shard == target.root:
            raise MergeError(f"{shard} is the folder merged into: give another --course-dir")
        if not (shard / "gradebook.db").is_file() or not (shard / "grading").is_dir():
            raise MergeError(f"{shard} is not the course folder of a grading run "
                             "(no gradebook.db and grading/ in it)")
        for key in graded_in(shard):
            if key in owner:
                raise MergeError(f"{key[1]}'s {key[0]} was graded by two shards, {owner[key]} "
                                 f"and {shard}: were they given the same N in --shard K/N?")
            owner[key] = shard

    notes, env = [], nbgrader_env()
    for assignment in sorted({a for a, _ in owner}):
        target.prepare(assignment, env)  # the assignment in the merged gradebook
        seeds = {}
        for shard in shards:
            seed = Path(shard).resolve() / "spark-answers" / assignment / "seed"
            if seed.is_file():
                seeds.setdefault(seed.read_text().strip(), []).append(str(shard))
        if len(seeds) > 1:
            notes.append(f"{assignment}: the shards graded on different seeds ("
                         + "; ".join(f"{s} in {', '.join(f)}" for s, f in seeds.items())
                         + "): their learners met different streams")
        first = next((Path(s).resolve() / "spark-answers" / assignment for s in shards
                      if (Path(s).resolve() / "spark-answers" / assignment).is_dir()), None)
        if first:
            shutil.copytree(first, target.answers_folder(assignment), dirs_exist_ok=True)

    results: dict[str, dict[str, NotebookGrade]] = {}
    for shard in shards:
        shard = Path(shard).resolve()
        mine = []
        with Gradebook(f"sqlite:///{shard / 'gradebook.db'}") as source:
            for assignment, learner in sorted(key for key, where in owner.items() if where == shard):
                record, distrust = ledger.sealed_record(
                    shard / "grading" / assignment / f"{learner}.json", ledger.course_key(shard))
                if record is not None and not _gradebook_agrees(source, target, assignment, learner, record):
                    record, distrust = None, ("the shard's gradebook's points for it differ from "
                                              "its grading record")
                if record is None:
                    notes.append(f"{assignment}/{learner} in {shard}: {distrust}: not merged; "
                                 "grade it again")
                    continue
                mine.append((assignment, learner, record))
        for assignment, learner, record in mine:
            for kept in (shard / "grading" / assignment).glob(f"{learner}.*"):
                if kept.name[len(learner):] in (".log", ".guard.jsonl"):
                    shutil.copy2(kept, target.root / "grading" / assignment / kept.name)
            for kind in ("submitted", "autograded", "feedback"):
                folder = shard / kind / learner / assignment
                if folder.is_dir():
                    copy = target.root / kind / learner / assignment
                    shutil.rmtree(copy, ignore_errors=True)
                    shutil.copytree(folder, copy)
            results.setdefault(assignment, {})[learner] = ledger.grade_of(record)
        with Gradebook(f"sqlite:///{shard / 'gradebook.db'}") as source, \
                target.gradebook() as merged:
            for assignment, learner, _ in mine:
                _copy_submission(source, merged, assignment, learner)
        for assignment, learner, record in mine:  # sealed again, with the merged folder's key
            ledger.write(target, assignment, learner, results[assignment][learner],
                         digest=record["submission_sha256"])
    return results, notes


def _gradebook_agrees(gradebook, course: GradingCourse, assignment: str, learner: str,
                      record: dict) -> bool:
    """Whether a shard's gradebook holds the points the learner's grading record gives."""
    from nbgrader.api import MissingEntry

    try:
        held = held_cells(gradebook, course.notebook_name(assignment), assignment, learner)
    except MissingEntry:
        return False
    return held == ledger.grade_of(record).cells


def _copy_submission(source, merged, assignment: str, learner: str) -> None:
    """One learner's graded assignment, from a shard's gradebook into the merged one."""
    from nbgrader.api import MissingEntry

    graded = source.find_submission(assignment, learner)
    merged.update_or_create_student(learner)
    try:
        merged.remove_submission(assignment, learner)  # a merge run again replaces it
    except MissingEntry:
        pass
    copy = merged.add_submission(assignment, learner, timestamp=graded.timestamp)
    for notebook in graded.notebooks:
        target = next(n for n in copy.notebooks if n.name == notebook.name)
        grades = {grade.name: grade for grade in target.grades}
        for grade in notebook.grades:
            mine = grades[grade.name]
            mine.auto_score, mine.manual_score = grade.auto_score, grade.manual_score
            mine.extra_credit, mine.needs_manual_grade = grade.extra_credit, grade.needs_manual_grade
        comments = {comment.name: comment for comment in target.comments}
        for comment in notebook.comments:
            mine = comments[comment.name]
            mine.auto_comment, mine.manual_comment = comment.auto_comment, comment.manual_comment
    merged.db.commit()

"""Spark's answers, asked once.

A check compares a learner's code with what real Spark does on the same stream. What Spark
does to a stream depends on the stream and nothing else, so the checks ask for it through
:func:`spark_answer`, which remembers each answer:

* **in one process** (a notebook, the tests), a question asked twice is run once;
* **in a class**, the grading command asks once for everybody. It gives every notebook of
  a run the same seed (``COURSE_SEED``, drawn anew for each run, so nobody can know the
  streams beforehand), runs the solution notebook once with ``AUTOGRADER_RECORD_ANSWERS``
  naming a file, where every answer Spark gave is written. A learner's kernel never sees
  that file: its checks only ask (:mod:`autograder.checks.asking`), and the grading command's own
  process judges their answers with the file (:func:`judging`), where a question the
  solution's run did not record is the grader's fault, never a reason to ask Spark.

Answers are plain JSON data (numbers, strings, lists, dicts; tuples come back as lists),
whether Spark was just asked or the answer was recorded, so a check sees the same thing
either way. Each call returns a new copy: a caller cannot change what the next one gets.

Some checks hand the learner's code a **checkpoint** rather than a question: "read the
counter from this query's state store after each micro-batch". The query, its restart and
its checkpoints do not depend on the learner, only the reading does. So
:func:`spark_checkpoints` runs the query, keeps a copy of its checkpoint after each
micro-batch with the facts about that batch, and remembers them the way answers are
remembered: once per process, and once per grading run (the copies are recorded in a folder
beside the answers file, ``<answers>.checkpoints``). A graded learner's kernel is given that
folder alone (``AUTOGRADER_CHECKPOINTS``) and copies it into its own temporary folder in
:func:`load`, before the guard closes the grading folder: it gets the checkpoints, which are
the task's inputs, without the facts the judge compares with. A caller always gets its own
copy of each checkpoint, so a reader that spoils one spoils nothing else. A smaller input
Spark makes, such as the plan a learner's function reads, travels the same way
(:func:`spark_input`).

Some answers are **known before anybody asks**: those of the worked examples the
exercises' self-checks run (``check_...(..., example=True)``). Their streams are fixed, so
Spark's answers are recorded with the course (:data:`KNOWN_ANSWERS_FILE`, written by ``make
known-answers``) and a learner's self-check needs no Spark run to know them. A test asks
Spark again for every one of them (:func:`asking_spark`), so the file cannot fall behind
the course's queries or its Spark version unnoticed.

Processes that ask the same questions side by side (the test suite's two workers) can
**share** what Spark answered: with :data:`~autograder.contract.SHARED_ANSWERS` naming a
folder, an answer asked in one process is kept there and read by the others, each question
under its own lock so that two processes that ask it together run it once
(:mod:`autograder.checks.shared_answers`). A solution's run records what it read there as it would
Spark's answer (the tests' grading runs share it); a graded kernel and the judge never use
it: one only asks, the other only judges.

Importing this module reads no file: :func:`load` does, once per process, called by the
grading guard in a grading kernel and by the first question anywhere else.
"""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
import threading
from pathlib import Path
from types import MappingProxyType
from typing import Any, Callable, Iterator, Mapping

from . import mode
from . import shared_answers as sharing
from ..contract import ANSWERS, CHECKPOINTS, RECORD_ANSWERS
from .feedback import GraderFault
from .mode import Mode
from .process_folder import own_folder
from .shared_answers import digest, write_whole


def _recorded() -> MappingProxyType:
    path = os.environ.get(ANSWERS)
    if not path:
        return MappingProxyType({})
    try:
        return MappingProxyType(json.loads(Path(path).read_text()))
    except (OSError, ValueError):
        return MappingProxyType({})  # no answers: every question goes to Spark


#: Spark's answers for the worked examples, recorded with the course (``make known-answers``).
KNOWN_ANSWERS_FILE = Path(__file__).with_name("known_answers.json")


def _known() -> MappingProxyType:
    try:
        answers = json.loads(KNOWN_ANSWERS_FILE.read_text())
    except (OSError, ValueError):
        return MappingProxyType({})  # nothing known: every question goes to Spark
    return MappingProxyType({key: json.dumps(answer) for key, answer in answers.items()})


def checkpoints_beside(answers_file: str | os.PathLike) -> Path:
    """The folder that holds the checkpoints recorded with an answers file."""
    return Path(answers_file).with_suffix(".checkpoints")


def _recorded_checkpoints() -> Path | None:
    """A private copy of the checkpoints recorded for this run (None without any): those
    beside the answers file, or, in a graded learner's kernel, the folder it is given."""
    path = os.environ.get(ANSWERS)
    folder = checkpoints_beside(path) if path else os.environ.get(CHECKPOINTS)
    if not folder or not Path(folder).is_dir():
        return None
    try:
        return Path(shutil.copytree(folder, own_folder() / "recorded"))
    except OSError:
        return None  # the checks ask Spark again


#: Answers recorded for this run, read-only (filled by :func:`load`).
RECORDED: MappingProxyType = MappingProxyType({})
#: The checkpoints recorded for this run (this process's copy), or None.
RECORDED_CHECKPOINTS: Path | None = None
#: The worked examples' answers, known before anybody asks, read-only.
KNOWN: MappingProxyType = MappingProxyType({})
_loaded = False
_asked: dict[str, str] = {}
#: The inputs this process made (:func:`spark_input`), as JSON.
_inputs: dict[str, str] = {}
#: Where the checkpoints of each query this process asked for (or read) are kept.
_kept_at: dict[str, Path] = {}
#: While :func:`asking_spark` runs: what Spark answered in it (else None).
_asked_afresh: dict[str, Any] | None = None
#: While :func:`asking_spark` runs with ``share``: whether it shares with the other processes.
_share_afresh = False
_lock = threading.Lock()


def load() -> None:
    """Read the answers this process may use, once: the run's recorded answers
    (``AUTOGRADER_ANSWERS``) with a copy of their checkpoints, and the worked examples'
    known answers. The grading guard calls it before a learner's first cell, while the
    grading folder is still open (:func:`autograder.grading.kernel_guard.install`);
    elsewhere the first question calls it."""
    global RECORDED, RECORDED_CHECKPOINTS, KNOWN, _loaded
    asking = mode.current() is Mode.GRADED
    with _lock:
        if not _loaded:
            # A graded kernel only asks: it holds checkpoints (inputs) and no answer at all.
            RECORDED, RECORDED_CHECKPOINTS, KNOWN = (
                MappingProxyType({}) if asking else _recorded(), _recorded_checkpoints(),
                MappingProxyType({}) if asking else _known())
            _loaded = True


@contextlib.contextmanager
def judging(answers_file: str | os.PathLike | None,
            recorded: Mapping[str, Any] | None = None) -> Iterator[None]:
    """Inside the block this process is the judge of a grading run: Spark's answers are
    those the run's solution recorded in ``answers_file`` (and the checkpoints beside it),
    and a question they do not hold raises :class:`~autograder.checks.feedback.GraderFault`
    instead of asking Spark (:mod:`autograder.grading.judge`). ``recorded``, when given, is
    that file's content, handed over in memory while the file itself is kept off the disk."""
    global RECORDED, RECORDED_CHECKPOINTS, KNOWN, _loaded
    if recorded is not None:
        recorded = dict(recorded)
    elif answers_file:
        try:
            recorded = json.loads(Path(answers_file).read_text())
        except (OSError, ValueError):
            recorded = {}
    else:
        recorded = {}
    beside = checkpoints_beside(answers_file) if answers_file else None
    with _lock:
        before = RECORDED, RECORDED_CHECKPOINTS, KNOWN, _loaded, dict(_asked)
        RECORDED = MappingProxyType(recorded)
        RECORDED_CHECKPOINTS = beside if beside is not None and beside.is_dir() else None
        KNOWN = _known()
        _loaded = True
        _asked.clear()
    try:
        with mode.judge():
            yield
    finally:
        with _lock:
            RECORDED, RECORDED_CHECKPOINTS, KNOWN, _loaded, asked = before
            _asked.clear()
            _asked.update(asked)


def _not_recorded(question: str) -> GraderFault:
    return GraderFault(f"the solution's run recorded no answer of Spark to {question}: "
                       "grade this class again")


def spark_answer(question: str, about: Any, ask_spark: Callable[[], Any]) -> Any:
    """What Spark answers to ``question`` about ``about`` (JSON data: a stream, a limit ...).

    ``ask_spark()`` runs the query and returns plain data; it is called only when neither
    this process, nor the run's recorded answers, nor the course's known answers have the
    answer yet (or always, inside :func:`asking_spark`).
    """
    return spark_answers(question, [about], lambda missing: [ask_spark()])[0]


def spark_answers(question: str, abouts: list, ask_spark: Callable[[list], list]) -> list:
    """:func:`spark_answer` for several questions of one kind at once, for queries that
    share work (one run, then a change to a copy of its checkpoint per question).

    ``ask_spark(missing)`` gets the ``abouts`` whose answers are not known yet, each once
    and in order, and returns Spark's answers to them in the same order; it is not called
    when every answer is known. Each answer is remembered under its own question, as
    :func:`spark_answer` would.
    """
    load()
    keys = [_key(question, about) for about in abouts]
    with _lock:
        fresh = _asked_afresh
        known = {} if fresh is not None else {
            key: found for key in keys
            if (found := _asked.get(key, RECORDED.get(key, KNOWN.get(key)))) is not None}
    missing = {key: about for key, about in zip(keys, abouts) if key not in known}
    if missing and mode.current() is Mode.JUDGE:
        raise _not_recorded(question)
    if missing:
        with sharing.holding(list(missing), fresh is None or _share_afresh) as shared:
            for key in [key for key in missing if key in shared]:
                known[key] = _remember(key, json.loads(shared.pop(key)))
                if fresh is not None:
                    fresh[key] = json.loads(known[key])
                del missing[key]
            if missing:
                answers = ask_spark(list(missing.values()))
                if len(answers) != len(missing):
                    raise ValueError(f"{question}: {len(answers)} answers to "
                                     f"{len(missing)} questions")
                for key, answer in zip(missing, answers):
                    known[key] = shared[key] = _remember(key, answer)
                    if fresh is not None:
                        fresh[key] = json.loads(known[key])
    return [json.loads(known[key]) for key in keys]


@contextlib.contextmanager
def asking_spark(*, share: bool = False) -> Iterator[dict[str, Any]]:
    """Inside the block, every question :func:`spark_answer` gets goes to Spark, whatever
    is known or was asked before; the block gets a dict that fills with each question's key
    and Spark's answer. The known answers are recorded, and proved current, this way.

    With ``share``, and a shared folder (:data:`~autograder.contract.SHARED_ANSWERS`) that
    only this run's processes fill, a question one of them asked Spark already is taken
    from there, and what Spark answers here is left there: each is still what Spark
    answers today, asked once among them (the tests' workers prove the recorded answers
    current while their class runs ask the same questions).
    """
    global _asked_afresh, _share_afresh
    with _lock:
        _asked_afresh, _share_afresh = {}, share
        fresh = _asked_afresh
    try:
        yield fresh
    finally:
        with _lock:
            _asked_afresh, _share_afresh = None, False


def _key(question: str, about: Any) -> str:
    return f"{question} {json.dumps(about, sort_keys=True)}"


def _remember(key: str, answer: Any) -> str:
    """Keep what Spark just answered (and write it down when recording a run)."""
    known = json.dumps(answer)
    with _lock:
        _asked[key] = known
        _write_record()
    return known


def spark_facts(question: str, about: Any,
                run_query: Callable[[Callable[[Any, str], None]], None]) -> list:
    """The facts of :func:`spark_checkpoints` alone, without copying a checkpoint: what a
    judge compares with."""
    load()
    key = _key(question, about)
    with _lock:
        known = _asked.get(key, RECORDED.get(key))
    if known is not None:
        return json.loads(known)
    return [fact for fact, _ in spark_checkpoints(question, about, run_query)]


def spark_input(question: str, about: Any, make: Callable[[], Any]) -> Any:
    """An input Spark makes for a task, such as the plan of a query the learner's code
    reads: JSON data that tells no answer by itself, made by ``make()``.

    A process makes each input once (afresh inside :func:`asking_spark`). A solution's run
    records it beside its checkpoints, so a graded kernel is handed it with them and need
    not run the query; anywhere else, and for an input the run did not record, ``make()``
    makes it (an input, unlike an answer, may be made anywhere).
    """
    load()
    key = _key(question, about)
    name = f"{digest(key)}.json"
    if _asked_afresh is None:
        with _lock:
            made = _inputs.get(key)
        if made is None and RECORDED_CHECKPOINTS is not None \
                and (RECORDED_CHECKPOINTS / name).is_file():
            made = (RECORDED_CHECKPOINTS / name).read_text()
        if made is not None:
            return json.loads(made)
    made = json.dumps(make())
    with _lock:
        _inputs[key] = made
    record = os.environ.get(RECORD_ANSWERS)
    if record:
        checkpoints_beside(record).mkdir(parents=True, exist_ok=True)
        write_whole(checkpoints_beside(record) / name, made)
    return json.loads(made)


def spark_checkpoints(question: str, about: Any,
                      run_query: Callable[[Callable[[Any, str], None]], None]) -> list[tuple[Any, str]]:
    """A query's checkpoint after each of its micro-batches, each with a fact about it.

    ``run_query(keep)`` runs the query and calls ``keep(fact, checkpoint)`` after each
    micro-batch (``fact``: JSON data such as the rows emitted so far; ``checkpoint``: the
    query's checkpoint folder). It is called only when neither this process nor the run's
    recorded answers have the query yet. Returns ``[(fact, checkpoint copy), ...]``, one
    per micro-batch, each copy new and the caller's own.
    """
    known, kept, folder = _known_checkpoints(question, about, run_query)
    copies = Path(tempfile.mkdtemp(prefix="checkpoints-", dir=own_folder()))
    return [(fact, str(shutil.copytree(kept / folder / str(i), copies / str(i))))
            for i, fact in enumerate(json.loads(known))]


def spark_checkpoint(question: str, about: Any,
                     run_query: Callable[[Callable[[Any, str], None]], None],
                     index: int) -> tuple[Any, str]:
    """Micro-batch ``index`` of :func:`spark_checkpoints` alone: its fact and a copy of its
    checkpoint, the others' not copied (a check that hands one checkpoint per case)."""
    known, kept, folder = _known_checkpoints(question, about, run_query)
    copy = Path(tempfile.mkdtemp(prefix="checkpoints-", dir=own_folder())) / str(index)
    return json.loads(known)[index], str(shutil.copytree(kept / folder / str(index), copy))


def _known_checkpoints(question: str, about: Any,
                       run_query: Callable[[Callable[[Any, str], None]], None]) -> tuple[str, Path, str]:
    """The facts of a query's micro-batches (JSON), the folder its checkpoints are kept in,
    and their sub-folder there; Spark runs the query only if nobody has yet."""
    load()
    key = _key(question, about)
    folder = digest(key)
    with _lock:
        known = _asked.get(key)
        kept = _kept_at.get(key) if known is not None else None
        if kept is None:
            known, kept = None, _kept_checkpoints()
        if known is None and key in RECORDED and RECORDED_CHECKPOINTS is not None:
            recorded = json.loads(RECORDED[key])
            if all((RECORDED_CHECKPOINTS / folder / str(i)).is_dir() for i in range(len(recorded))):
                known, kept = RECORDED[key], RECORDED_CHECKPOINTS
        elif known is None and mode.current() is Mode.GRADED and RECORDED_CHECKPOINTS is not None \
                and (RECORDED_CHECKPOINTS / folder).is_dir():
            # A graded kernel: the checkpoints, one folder per micro-batch, and no facts.
            count = sum(1 for entry in (RECORDED_CHECKPOINTS / folder).iterdir() if entry.is_dir())
            known, kept = json.dumps([None] * count), RECORDED_CHECKPOINTS
    if known is None and mode.current() in (Mode.JUDGE, Mode.GRADED):
        # The judge has no Spark, and a graded kernel must not learn the facts by asking.
        raise _not_recorded(question)
    if known is None:
        with sharing.holding([key]) as shared:
            elsewhere = getattr(shared, "folder", kept)   # where the other processes look
            if key in shared:
                if elsewhere != kept:   # a solution's run keeps its copies with its record
                    shutil.copytree(elsewhere / folder, kept / folder, dirs_exist_ok=True)
                known = _remember(key, json.loads(shared[key]))
            else:
                facts: list = []

                def keep(fact: Any, checkpoint: str) -> None:
                    shutil.copytree(checkpoint, kept / folder / str(len(facts)),
                                    dirs_exist_ok=True)
                    facts.append(fact)

                shutil.rmtree(kept / folder, ignore_errors=True)
                run_query(keep)
                if elsewhere != kept:
                    shutil.copytree(kept / folder, elsewhere / folder, dirs_exist_ok=True)
                known = shared[key] = _remember(key, facts)
        with _lock:
            _kept_at[key] = kept
    return known, kept, folder


def _kept_checkpoints() -> Path:
    """Where this process keeps the checkpoints it asked Spark for: beside the record file
    when recording a run, in the shared folder when it shares answers, else in its own
    scratch folder."""
    record = os.environ.get(RECORD_ANSWERS)
    if record:
        return checkpoints_beside(record)
    return sharing.folder() or own_folder() / "asked"


def _write_record() -> None:
    path = os.environ.get(RECORD_ANSWERS)
    if not path:
        return
    write_whole(Path(path), json.dumps(_asked, indent=0, sort_keys=True))

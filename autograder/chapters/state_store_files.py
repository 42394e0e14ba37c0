"""Checks for chapter 5: the state store itself.

The ideas they test, in the chapter's words:

* a commit writes **one file** per store, the version's changes (``.delta``,
  ``.changelog``) or, for RocksDB without a changelog, a zip naming its SST files; a
  snapshot of the whole state is written by **maintenance**, and only when enough versions
  have gone by since the last one (section "The files of each provider, micro-batch by
  micro-batch");
* the ``statestore`` source reads the state **as a chosen micro-batch committed it**, as
  long as the checkpoint still holds that version (section "Reading state after the fact");
* a restart runs again **the last micro-batch of the offset log** when the commit log does
  not hold it, and nothing else: the state is under ``state/``, not in ``commits/``
  (section "What a restart runs again");
* some settings changed between two runs are **taken back from the offset log**, and a
  state schema is compared by its fields' order, types and nullability, not their names;
  a changed type, another operator, or a missing state file a version cannot be rebuilt
  without stops the query, with an error class of its own inside ``STREAM_FAILED``
  (sections "Recovery: rebuilding a version from its files" and "Changing a setting
  between runs").

Each ``check_*`` function runs the learner's code against real Spark on streams and
settings drawn from a seed, besides fixed ones chosen so that each belief the chapter warns
about fails whatever the seed, and raises :class:`~autograder.checks.feedback.CheckFailed` with a
lesson when the two disagree.
"""
from __future__ import annotations

import random
import shutil
import tempfile
from pathlib import Path
from typing import Callable

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from ..checks.answers import (spark_answer, spark_answers, spark_checkpoint, spark_checkpoints,
                      spark_facts)
from ..checks.asking import Answers, Case, ask_of_each_batch, declared, spark_for_truth
from ..checks.checking import Dimension, answer_per_batch, reference_answer
from ..checks.checking import cases as checking_cases
from .checkpoint_files import (HDFS_PROVIDER, error_class, forget_commit, logged_batches,
                               settings, state_files)
from ..toolkit.driver import StreamRun
from ..checks.feedback import ask, check_equal, plain, revisiting, stop_if_unfinished
from ..toolkit.session import course_session

CHAPTER = "chapter 5, The state store itself"
REVISIT_FILES = f'{CHAPTER}, section "The files of each provider, micro-batch by micro-batch"'
REVISIT_READING = f'{CHAPTER}, section "Reading state after the fact"'
REVISIT_RESTART = f'{CHAPTER}, section "What a restart runs again"'
REVISIT_CHANGES = f'{CHAPTER}, section "Changing a setting between runs"'

#: Every query of these checks counts rows per user, in update mode, on this stream.
SCHEMA = "user STRING"
#: The three ways a store keeps its versions (the chapter's table).
WAYS = ("hdfs", "rocksdb", "changelog")
CHANGELOG = "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled"
#: Helpers a learner may import from this module: they set up a query, they give no answer.
TOOLS = ("way_settings", "count_per_user", "user_batches", "drawn_change")


def way_settings(way: str, min_deltas: int | None = None, retain: int | None = None) -> dict:
    """The session settings of one way (``"hdfs"``, ``"rocksdb"``, ``"changelog"``), with
    maintenance at the end of every task so that the files on disk are always the same."""
    conf = {"spark.sql.streaming.stateStore.unloadOnCommit": "true",
            "spark.sql.streaming.stateStore.minDeltasForSnapshot":
                None if min_deltas is None else str(min_deltas),
            "spark.sql.streaming.minBatchesToRetain": None if retain is None else str(retain)}
    if way == "hdfs":
        conf["spark.sql.streaming.stateStore.providerClass"] = HDFS_PROVIDER
    elif way == "changelog":
        conf[CHANGELOG] = "true"
    elif way != "rocksdb":
        raise ValueError(f"unknown way {way!r}: one of {WAYS}")
    return conf


def count_per_user(df: DataFrame) -> DataFrame:
    return df.groupBy("user").count()


def user_batches(rng: random.Random, batches: int, users: int = 4) -> list[list[tuple[str]]]:
    """``batches`` micro-batches of 1 to 3 rows of users ``u0`` .. ``u<users-1>``."""
    return [[(f"u{rng.randrange(users)}",) for _ in range(rng.randint(1, 3))]
            for _ in range(batches)]


def _run(spark: SparkSession, batches: list, conf: dict, root: str | None = None) -> StreamRun:
    """A count per user started under ``conf`` and fed ``batches``; the caller stops it.
    Its rows are not kept: these checks look at its state, checkpoint and restarts."""
    with settings(spark, conf):
        run = StreamRun(spark, SCHEMA, count_per_user, output_mode="update", root=root,
                        keep_output=False).start()
        for rows in batches:
            run.add_batch(rows)
    return run


# -- task 1: the files after each micro-batch ----------------------------------------------
#: The chapter's example for task 1: (way, micro-batches, minDeltasForSnapshot).
EXAMPLE_FILES = ("hdfs", 6, 2)
#: Cases every graded check runs, each on the boundary of a rule: a snapshot only once the
#: deltas since the last one are *more* than the setting (HDFS) or *at least* it (changelog);
#: no snapshot at all for plain RocksDB, whose every commit is a zip; 0 and 1 as settings,
#: for both providers that snapshot.
EDGE_FILES = [("hdfs", 5, 1), ("changelog", 5, 2), ("rocksdb", 4, 1), ("hdfs", 4, 0),
              ("changelog", 6, 3), ("changelog", 4, 0)]


def version_files(spark: SparkSession, way: str, batches: int, min_deltas: int) -> list[list[str]]:
    """The version files of partition 0 after each micro-batch (``SSTs`` and ``_metadata``
    left out), as Spark wrote them; Spark is asked once per case (:mod:`autograder.checks.answers`)."""
    reference_answer()
    def ask_spark() -> list[list[str]]:
        listings = []
        with settings(spark, way_settings(way, min_deltas)):
            with StreamRun(spark, SCHEMA, count_per_user, output_mode="update",
                           keep_output=False) as run:
                for batch_id in range(batches):
                    run.add_batch([("a",), (f"u{batch_id}",)])
                    listings.append([name for name in state_files(run.checkpoint)[0]
                                     if name not in ("SSTs", "_metadata")])
        return listings

    return spark_answer("state_store_files.version_files", [way, batches, min_deltas], ask_spark)


def _file_cases(*, seed: int, example: bool, cases: int) -> list[Case]:
    """``[way, batches, min_deltas]`` each: the example's, or the fixed ones and some drawn."""
    def named(case, origin):
        way, batches, min_deltas = case
        return Case(f"way {way!r}, {batches} micro-batches, minDeltasForSnapshot {min_deltas} "
                    f"({origin})", list(case))
    def draw(rng):
        return [(rng.choice(WAYS), rng.randint(3, 7), rng.randint(0, 4)) for _ in range(cases)]
    return [named(case, origin) for origin, case in checking_cases(
        seed, example, the_example=[EXAMPLE_FILES], fixed=EDGE_FILES, drawn_from=draw)]


def _ask_files(predict, case: Case, answers: Answers) -> None:
    way, batches, min_deltas = case.about
    answer = ask(predict, way, batches, min_deltas, what="predict_files", context=case.label,
                 revisit=REVISIT_FILES)
    with revisiting(REVISIT_FILES, case.label):
        answers.add(plain(answer, "predict_files's answer"))


def _judge_files(case: Case, answers: Answers) -> None:
    way, batches, min_deltas = case.about
    answer = answers.next()
    truth = version_files(spark_for_truth(), way, batches, min_deltas)
    got = answer_per_batch(answer, len(truth), "predict_files's answer", case.label,
                           revisit=REVISIT_FILES)
    for batch_id, (mine, files) in enumerate(zip(got, truth)):
        # Sorted by repr: names of any type sort, and "10.zip" after "9.zip" on both sides.
        mine = sorted(mine, key=repr) if isinstance(mine, list) else mine
        check_equal(mine, sorted(files, key=repr), "the version files of a partition after this "
                    "micro-batch", batch=batch_id, revisit=REVISIT_FILES, context=case.label)


@declared(
    cases=_file_cases, ask=_ask_files,
    judge=_judge_files,
    passed=lambda cases: "the files on disk match Spark's, micro-batch by micro-batch")
def check_predicted_files(predict: Callable[[str, int, int], list], *, seed: int | None = None,
                          cases: int = 2, example: bool = False) -> None:
    """``predict(way, batches, min_deltas)`` must give, after each micro-batch, the names of
    the version files in one partition's folder (in any order)."""


# -- task 2: the state as a micro-batch committed it ----------------------------------------
#: The chapter's example for task 2: micro-batches and minBatchesToRetain.
EXAMPLE_READS = ([[("a",), ("b",)], [("a",)], [("c",), ("a",)]], 5)
#: Streams every graded reader is asked about: old versions gone (only the newest two kept);
#: a key counted in every batch beside keys seen once; a one-row stream kept in full.
EDGE_READS = [([[("u1",)], [("u2",), ("u1",)], [("u1",)], [("u3",)], [("u1",)]], 2),
              ([[("u1",), ("u1",), ("u2",)], [("u2",)], [("u1",)], [("u4",)]], 3),
              ([[("u1",)]], 4)]


#: What Spark says when asked for a version the checkpoint no longer holds: the commit log
#: has dropped the micro-batch, or it still lists it but the state files are gone.
VERSION_GONE = {"STDS_COMMITTED_BATCH_UNAVAILABLE",
                "CANNOT_LOAD_STATE_STORE.CANNOT_READ_STREAMING_STATE_FILE"}


def read_back_checkpoints(spark: SparkSession, batches: list, retain: int) -> tuple[list, str]:
    """Run a count per user on RocksDB keeping ``retain`` versions; what Spark says of each
    micro-batch once the stream is over (its counts read back through the ``statestore``
    source, or ``None`` when that version is gone) and a copy of the final checkpoint."""
    reference_answer()
    ((facts, checkpoint),) = spark_checkpoints("state_store_files.read_back", [batches, retain],
                                               _read_back_run(spark, batches, retain))
    return facts, checkpoint


def _read_back_run(spark: SparkSession | None, batches: list, retain: int):
    """How :func:`read_back_checkpoints` runs its query: ``run_query(keep)``."""
    def run_query(keep) -> None:
        run = _run(spark, batches, way_settings("rocksdb", retain=retain))
        try:
            run.stop()
            facts = []
            for batch_id in range(len(batches)):
                try:
                    rows = run.state(batchId=batch_id)
                except Exception as error:  # a version no longer kept
                    if error_class(error) not in VERSION_GONE:
                        raise
                    facts.append(None)
                else:
                    facts.append({row["key"]["user"]: row["value"]["count"] for row in rows})
            keep(facts, run.checkpoint)
        finally:
            run.close()
    return run_query


def _read_cases(*, seed: int, example: bool) -> list[Case]:
    """``[batches, retain]`` each: the example's stream, or the fixed ones and one drawn."""
    def draw(rng):
        return [(user_batches(rng, rng.randint(3, 6)), rng.randint(1, 3))]
    return [Case(f"users per micro-batch {[[u for (u,) in b] for b in batches]}, "
                 f"minBatchesToRetain {retain} ({origin})", [batches, retain])
            for origin, (batches, retain) in checking_cases(
                seed, example, the_example=[EXAMPLE_READS], fixed=EDGE_READS, drawn_from=draw)]


def _reader_unfinished(counts_at) -> None:
    with tempfile.TemporaryDirectory(prefix="no-query-yet-") as empty_checkpoint:
        stop_if_unfinished(counts_at, course_session(), empty_checkpoint, 0)


def _ask_reader(counts_at, case: Case, answers: Answers) -> None:
    """The learner's reader on a copy of the stream's final checkpoint, about every
    micro-batch (Spark's facts, None in a graded kernel, are not looked at)."""
    batches, retain = case.about
    spark = course_session()
    _, checkpoint = read_back_checkpoints(spark, batches, retain)
    ask_of_each_batch(counts_at, spark, checkpoint, range(len(batches)), answers,
                      what="counts_at", context=case.label, revisit=REVISIT_READING)


def _judge_reader(case: Case, answers: Answers) -> None:
    batches, retain = case.about
    (facts,) = spark_facts("state_store_files.read_back", [batches, retain],
                           _read_back_run(spark_for_truth(), batches, retain))
    for batch_id, expected in enumerate(facts):
        check_equal(answers.next(), expected,
                    "each user's count as this micro-batch committed it (None: gone)",
                    batch=batch_id, revisit=REVISIT_READING, context=case.label)


@declared(
    cases=_read_cases, ask=_ask_reader,
    judge=_judge_reader, before=_reader_unfinished,
    passed=lambda cases: f"your reader finds each micro-batch's state, or knows it is gone "
                         f"({len(cases)} stream(s))")
def check_state_reader(counts_at: Callable[[SparkSession, str, int], dict | None], *,
                       seed: int | None = None, example: bool = False) -> None:
    """``counts_at(spark, checkpoint, batch_id)`` must return each user's count as micro-batch
    ``batch_id`` committed it, or ``None`` when the checkpoint no longer holds that version.

    It is asked about every micro-batch of each stream, on a copy of the final checkpoint; the
    answer is compared with the sink's output up to that micro-batch (the counts) and with
    whether Spark can still read the version.
    """


# -- task 3: what a restart runs again -------------------------------------------------------
#: The micro-batches every run of task 3 has before the damage (four: ids 0 to 3).
RESTART_BATCHES = [[("a",), ("b",)], [("a",)], [("c",)], [("a",), ("d",)]]
#: The chapter's example: the last commit lost.
EXAMPLE_LOSSES = [[3]]
#: Commit files lost in every graded run: none; the last; the last two; a middle one; all of
#: ``commits/`` (``None``).
EDGE_LOSSES = [[], [3], [2, 3], [1], None]


def _lose_commits(checkpoint: Path, lost: list[int] | None) -> None:
    """Delete these commit files (and their checksum files); ``None``: the whole folder."""
    if lost is None:
        shutil.rmtree(checkpoint / "commits")
        return
    for batch_id in lost:
        forget_commit(checkpoint, batch_id)


def restarted_checkpoint(spark: SparkSession, losses: list, index: int) -> tuple[list[int], str]:
    """After the commits ``losses[index]`` are lost: the micro-batches a restart ran again
    before any new input (Spark's own record), and a copy of the damaged checkpoint as it was
    before it. Spark restarts one run's checkpoint for every list of ``losses``, once."""
    reference_answer()
    def run_query(keep) -> None:
        # The file source logs its input files by their full path: every restart runs on
        # this run's own folder, its checkpoint put back as it was after each.
        run = _run(spark, RESTART_BATCHES, way_settings("rocksdb"))
        checkpoint = Path(run.checkpoint)
        try:
            run.stop()
            with tempfile.TemporaryDirectory(prefix="restart-") as folder:
                intact, damaged = Path(folder) / "intact", Path(folder) / "damaged"
                shutil.copytree(checkpoint, intact)
                for lost in losses:
                    _lose_commits(checkpoint, lost)
                    shutil.rmtree(damaged, ignore_errors=True)
                    shutil.copytree(checkpoint, damaged)
                    run.batches.clear()
                    with settings(spark, way_settings("rocksdb")):
                        again = [batch.batch_id for batch in run.start().process_all_available()]
                    run.stop()
                    keep(again, str(damaged))
                    shutil.rmtree(checkpoint)
                    shutil.copytree(intact, checkpoint)
        finally:
            run.close()

    return spark_checkpoint("state_store_files.restarts", [RESTART_BATCHES, losses], run_query,
                            index)


def _loss_cases(*, seed: int, example: bool) -> list[Case]:
    """One case per list of lost commits, each with all of them (``losses``: Spark restarts
    one run's checkpoint for all) and its place among them (``index``). The label leaves
    out what the logs hold: that is read from the damaged checkpoint (:func:`_restart_context`)."""
    def draw(rng):
        return [sorted(rng.sample(range(4), rng.randint(1, 3)))]
    every = checking_cases(seed, example, the_example=EXAMPLE_LOSSES, fixed=EDGE_LOSSES,
                           drawn_from=draw)
    losses = [lost for _, lost in every]
    return [Case(f"micro-batches 0 to 3 ran, then {_what_was_lost(lost)} deleted ({origin})",
                 {"losses": losses, "index": index, "origin": origin})
            for index, (origin, lost) in enumerate(every)]


def _what_was_lost(lost: list[int] | None) -> str:
    return "all of commits/" if lost is None else \
        ("no commit file" if not lost else f"commits/{' and '.join(map(str, lost))}")


def _restart_context(case: Case, checkpoint: str) -> str:
    """How lessons name a case of task 3: what was lost, and what the damaged logs hold."""
    about = case.about
    return (f"micro-batches 0 to 3 ran, then {_what_was_lost(about['losses'][about['index']])} "
            f"deleted; the logs hold offsets {logged_batches(checkpoint, 'offsets')}, commits "
            f"{logged_batches(checkpoint, 'commits')} ({about['origin']})")


def _restarted(spark: SparkSession | None, case: Case) -> tuple[list[int], str, str]:
    """The case's restart: the micro-batches it ran again (None in a graded kernel), the
    lessons' context, read from the damaged checkpoint, and a copy of that checkpoint."""
    again, checkpoint = restarted_checkpoint(spark, case.about["losses"], case.about["index"])
    return again, _restart_context(case, checkpoint), checkpoint


def _restart_unfinished(runs_again) -> None:
    with tempfile.TemporaryDirectory(prefix="no-query-yet-") as empty_checkpoint:
        stop_if_unfinished(runs_again, empty_checkpoint)


def _ask_restart(runs_again, case: Case, answers: Answers) -> None:
    _, context, checkpoint = _restarted(course_session(), case)
    try:
        answer = ask(runs_again, checkpoint, what="runs_again", context=context,
                     revisit=REVISIT_RESTART)
        answers.add(plain(answer, "runs_again's answer"))
    finally:
        shutil.rmtree(checkpoint, ignore_errors=True)


def _judge_restart(case: Case, answers: Answers) -> None:
    got = answers.next()
    again, context, checkpoint = _restarted(spark_for_truth(), case)
    shutil.rmtree(checkpoint, ignore_errors=True)
    check_equal(sorted(got, key=repr) if isinstance(got, list) else got,
                sorted(again, key=repr),
                "the micro-batches the restart ran again", revisit=REVISIT_RESTART,
                context=context)


@declared(
    cases=_loss_cases, ask=_ask_restart,
    judge=_judge_restart, before=_restart_unfinished,
    passed=lambda cases: f"you know what a restart runs again ({len(cases)} checkpoint(s))")
def check_restart_reader(runs_again: Callable[[str], list[int]], *, seed: int | None = None,
                         example: bool = False) -> None:
    """``runs_again(checkpoint)`` must list the micro-batches a restart on this checkpoint
    runs again, read from its logs alone (the query is not running)."""


# -- task 4: what a change between two runs does ----------------------------------------------
#: The queries a second run may use instead of the count per user.
QUERIES: dict[str, Callable[[DataFrame], DataFrame]] = {
    "count renamed": lambda df: df.groupBy("user").agg(F.count("*").alias("visits")),
    "max instead of count": lambda df: df.groupBy("user").agg(F.max("user")),
    "count per name length": lambda df: df.groupBy(F.length("user").alias("user")).count(),
    "distinct users": lambda df: df.dropDuplicates(["user"]),
}
#: What may be deleted from the checkpoint between the runs.
DELETIONS = ("the last commit", "commits/", "the newest state file", "state/")
#: The example of task 4, then the changes every graded check asks about: each kind alone.
EXAMPLE_CHANGE = {"shuffle_partitions": 5}
#: The last two mix two kinds, the refused one first, then last: the refusal decides,
#: wherever it is listed.
EDGE_CHANGES = [{"shuffle_partitions": 3}, {"provider": "hdfs"}, {"query": "count renamed"},
                {"delete": "the last commit"}, {"delete": "commits/"},
                {"query": "max instead of count"}, {"query": "count per name length"},
                {"query": "distinct users"},
                {"delete": "the newest state file"}, {"delete": "state/"},
                {"query": "max instead of count", "shuffle_partitions": 3},
                {"provider": "hdfs", "delete": "state/"}]


def _delete(checkpoint: Path, what: str) -> None:
    last = logged_batches(checkpoint, "commits")[-1]
    if what == "the last commit":
        _lose_commits(checkpoint, [last])
    elif what == "commits/":
        _lose_commits(checkpoint, None)
    elif what == "the newest state file":
        (checkpoint / "state" / "0" / "0" / f"{last + 1}.zip").unlink()
    elif what == "state/":
        shutil.rmtree(checkpoint / "state")
    else:
        raise ValueError(f"unknown deletion {what!r}")


def restart_outcomes(spark: SparkSession, changes: list[dict]) -> list[str | None]:
    """For each change: run a count per user for three micro-batches and stop it, make the
    change, restart it and feed one more micro-batch; the error class inside the
    ``STREAM_FAILED`` Spark stopped with, or None. The three micro-batches run once: each
    change is made to the checkpoint as they left it, put back afterwards."""
    reference_answer()
    def ask_spark(missing: list[dict]) -> list[str | None]:
        outcomes = []
        with tempfile.TemporaryDirectory(prefix="change-") as folder:
            # The file source logs its input files by their full path: every restart runs
            # in this run's own folder, on its checkpoint and input as the first run left them.
            run = _run(spark, RESTART_BATCHES[:3], way_settings("rocksdb"), root=folder)
            checkpoint, first_input = Path(run.checkpoint), set(run.input_dir.iterdir())
            intact = Path(folder) / "intact"
            try:
                run.stop()
                shutil.copytree(checkpoint, intact)
                for change in missing:
                    outcomes.append(_restarted_after(spark, run, change))
                    shutil.rmtree(checkpoint)
                    shutil.copytree(intact, checkpoint)
                    for added in set(run.input_dir.iterdir()) - first_input:
                        added.unlink()
            finally:
                run.close()
        return outcomes

    return spark_answers("state_store_files.restart_outcome", changes, ask_spark)


def _restarted_after(spark: SparkSession, run: StreamRun, change: dict) -> str | None:
    """Make ``change`` to the stopped ``run``, restart it and feed it one micro-batch."""
    if "delete" in change:
        _delete(Path(run.checkpoint), change["delete"])
    run.build_query = QUERIES.get(change.get("query"), count_per_user)
    conf = {**way_settings("hdfs" if change.get("provider") == "hdfs" else "rocksdb"),
            "spark.sql.shuffle.partitions": str(change.get("shuffle_partitions") or 2)}
    try:
        with settings(spark, conf):
            run.start().add_batch([("a",)])
    except Exception as error:  # noqa: BLE001 - the outcome asked for
        return error_class(error)
    finally:
        run.stop()
        run.batches.clear()
    return None


def drawn_change(rng: random.Random) -> dict:
    """One or two changes Spark accepts, and maybe one it refuses, of different kinds, in an
    order of their own (a refused change may come first, in the middle or last)."""
    accepted = [("shuffle_partitions", rng.choice([1, 3, 4])), ("provider", "hdfs"),
                ("query", "count renamed"), ("delete", rng.choice(DELETIONS[:2]))]
    items = rng.sample(accepted, rng.randint(1, 2))
    kinds = {kind for kind, _ in items}
    refused = [(kind, value) for kind, value in
               [("query", "max instead of count"), ("query", "count per name length"),
                ("query", "distinct users"), ("delete", "the newest state file"),
                ("delete", "state/")] if kind not in kinds]
    if refused and rng.random() < 0.6:
        items.append(rng.choice(refused))
    rng.shuffle(items)
    return dict(items)


def _change_cases(*, seed: int, example: bool) -> list[Case]:
    """One case per change, each with all of them (``changes``: Spark answers them from one
    run) and its place among them (``index``)."""
    changes = checking_cases(seed, example, the_example=[EXAMPLE_CHANGE], fixed=EDGE_CHANGES,
                             drawn_from=lambda rng: [drawn_change(rng)])
    every = [change for _, change in changes]
    return [Case(f"change between the runs: {change} ({origin})",
                 {"changes": every, "index": index})
            for index, (origin, change) in enumerate(changes)]


def _ask_change(predict, case: Case, answers: Answers) -> None:
    change = case.about["changes"][case.about["index"]]
    answer = ask(predict, dict(change), what="restart_error", context=case.label,
                 revisit=REVISIT_CHANGES)
    answers.add(plain(answer))


def _judge_change(case: Case, answers: Answers) -> None:
    got = answers.next()
    truth = restart_outcomes(spark_for_truth(), case.about["changes"])[case.about["index"]]
    check_equal(got, truth, "the error class inside STREAM_FAILED (None: it goes on)",
                revisit=REVISIT_CHANGES, context=case.label)


@declared(
    cases=_change_cases,
    ask=_ask_change, judge=_judge_change,
    before=lambda predict: stop_if_unfinished(predict, dict(EXAMPLE_CHANGE)),
    passed=lambda cases: f"you know what {len(cases)} change(s) between two runs do")
def check_restart_outcome(predict: Callable[[dict], str | None], *, seed: int | None = None,
                          example: bool = False) -> None:
    """``predict(change)`` must give the error class inside the ``STREAM_FAILED`` a restart
    after ``change`` stops with (``None`` when the query goes on)."""


# -- the kinds of input the tasks allow ---------------------------------------------------------
def _stride(way: str, min_deltas: int) -> int:
    """How many versions go by between two snapshots, by the chapter's rule: HDFS snapshots
    once its deltas since the last snapshot are more than the setting, the changelog way once
    its changelogs reach it (plain RocksDB has none)."""
    return min_deltas + 1 if way == "hdfs" else max(min_deltas, 1)


def _refused(kind: str, value) -> bool:
    return (kind, value) in {("query", "max instead of count"), ("query", "count per name length"),
                             ("query", "distinct users"), ("delete", "the newest state file"),
                             ("delete", "state/")}


def _a_change(holds: Callable[[dict], bool]) -> Callable[[dict], bool]:
    """A case of task 4 holds a dimension when its change does."""
    return lambda about: holds(about["changes"][about["index"]])


def _lost(holds: Callable[[list[int] | None], bool]) -> Callable[[dict], bool]:
    """A case of task 3 holds a dimension when what it deletes from commits/ does."""
    return lambda about: holds(about["losses"][about["index"]])


_SNAPSHOTS = "a snapshot is written by maintenance once enough versions went by since the last one"
_VERSIONS = "the statestore source reads the state as the micro-batch asked about committed it"
_NEWEST = "a restart runs again the newest micro-batch of offsets/, when commits/ does not hold it"
_RESTORED = "some settings of a restarted query are taken back from the offset log"
_SCHEMA = "a state schema is compared by its fields' order, types and nullability, not names"
_FILES = "a version that cannot be rebuilt from its files stops the query"
_ONE_STOPS = "at most one change of a change stops the query"

#: The kinds of input each task allows: task 1's way, micro-batches and setting; task 2's
#: stream and minBatchesToRetain; task 3's deleted commits; task 4's change. Each is held by
#: a case of EDGE_FILES, EDGE_READS, EDGE_LOSSES or EDGE_CHANGES.
INPUT_DIMENSIONS = {
    "check_predicted_files": (
        Dimension("versions between two snapshots", _SNAPSHOTS,
                  lambda about: about[0] != "rocksdb" and about[1] > _stride(about[0], about[2]) > 1),
        Dimension("the changelog way: a version whose changelogs since the last zip equal the "
                  "setting", "the changelog way snapshots once its changelogs reach the setting, "
                  "HDFS once its deltas are more than it",
                  lambda about: about[0] == "changelog" and about[1] >= max(about[2], 1)),
        Dimension("the changelog way with a setting of 0", "minDeltasForSnapshot is 0 or more",
                  lambda about: about[0] == "changelog" and about[2] == 0),
        Dimension("plain RocksDB", "plain RocksDB uploads a zip of the whole state at every commit",
                  lambda about: about[0] == "rocksdb"),
    ),
    "check_state_reader": (
        Dimension("a micro-batch before the stream's last", _VERSIONS,
                  lambda about: len(about[0]) > 1),
        Dimension("a stream of more micro-batches than minBatchesToRetain",
                  "the store keeps the newest minBatchesToRetain versions: an older one may be "
                  "gone, and then there is no state to read (None)",
                  lambda about: len(about[0]) > about[1]),
        Dimension("a user a micro-batch leaves unchanged",
                  "a version holds the whole state as its micro-batch left it, not its changes",
                  lambda about: any({user for batch in about[0][:i] for (user,) in batch}
                                    - {user for (user,) in about[0][i]}
                                    for i in range(1, len(about[0])))),
        Dimension("a user counted in two micro-batches",
                  "a version holds each user's count so far",
                  lambda about: any(sum(any(user == u for (u,) in batch) for batch in about[0]) > 1
                                    for batch in about[0] for (user,) in batch)),
    ),
    "check_restart_reader": (
        Dimension("no commit lost", _NEWEST, _lost(lambda lost: lost == [])),
        Dimension("the newest commit lost alone", _NEWEST, _lost(lambda lost: lost == [3])),
        Dimension("a commit lost besides the newest one", _NEWEST,
                  _lost(lambda lost: bool(lost) and any(batch != 3 for batch in lost))),
        Dimension("all of commits/ deleted",
                  "the state is under state/, not in commits/: without commits/ the newest "
                  "micro-batch runs again, on the state kept", _lost(lambda lost: lost is None)),
    ),
    "check_restart_outcome": (
        Dimension("another number of shuffle partitions", _RESTORED,
                  _a_change(lambda change: "shuffle_partitions" in change)),
        Dimension("the HDFS provider", _RESTORED, _a_change(lambda change: "provider" in change)),
        Dimension("the count renamed", _SCHEMA,
                  _a_change(lambda change: change.get("query") == "count renamed")),
        Dimension("the last commit deleted", _NEWEST,
                  _a_change(lambda change: change.get("delete") == "the last commit")),
        Dimension("commits/ deleted", "the state is under state/, not in commits/",
                  _a_change(lambda change: change.get("delete") == "commits/")),
        Dimension("another aggregate on the same key", _SCHEMA,
                  _a_change(lambda change: change.get("query") == "max instead of count")),
        Dimension("another key of the same name", _SCHEMA,
                  _a_change(lambda change: change.get("query") == "count per name length")),
        Dimension("another stateful operator",
                  "the state's metadata names the operator that wrote it",
                  _a_change(lambda change: change.get("query") == "distinct users")),
        Dimension("the newest state file deleted", _FILES,
                  _a_change(lambda change: change.get("delete") == "the newest state file")),
        Dimension("state/ deleted", _FILES,
                  _a_change(lambda change: change.get("delete") == "state/")),
        Dimension("two changes, the refused one listed first", _ONE_STOPS,
                  _a_change(lambda change: len(change) > 1 and _refused(*next(iter(change.items()))))),
        Dimension("two changes, the refused one listed last", _ONE_STOPS,
                  _a_change(lambda change: len(change) > 1 and _refused(*list(change.items())[-1]))),
    ),
}

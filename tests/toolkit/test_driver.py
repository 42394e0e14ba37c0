"""The micro-batch driver, StreamTest style: add data, process, check the last batch.

Every scenario runs twice: on the course's local session, and on a Spark Connect session
to a loopback server, where the driver collects output differently (Spark's memory sink
for a fresh query, its file sink after a restart in Append mode, ``foreachBatch`` in a
Python process on the server after a restart in Update mode).
"""
import psutil
import pytest

from autograder.grading.connect_server import ConnectServer, release_session
from autograder.toolkit.driver import StreamRun, StreamTimeout
from autograder.toolkit.session import course_session, is_connect


@pytest.fixture(scope="module")
def connect_server():
    """A loopback Spark Connect server started for this module."""
    with ConnectServer() as server:
        yield server


@pytest.fixture(scope="module")
def connect_session(connect_server):
    """A Spark Connect session to that server."""
    # The Connect client class itself: PySpark's builder refuses a remote session in a
    # process that already runs a local one (the other tests' session).
    from pyspark.sql.connect.session import SparkSession as ConnectSession

    session = ConnectSession.builder.remote(connect_server.url).getOrCreate()
    yield session
    session.stop()


@pytest.fixture(params=["local", "connect"])
def spark(request):
    """Each scenario on both kinds of course session."""
    return request.getfixturevalue("spark" if request.param == "local" else "connect_session")


def test_each_added_batch_is_one_micro_batch_with_its_own_output(spark):
    with StreamRun(spark, "id INT", lambda df: df.where("id % 2 = 0")) as run:
        (first,) = run.add_batch([(1,), (2,), (4,)])
        (second,) = run.add_batch([(3,)])
        (third,) = run.add_batch([(6,)])

    assert [b.batch_id for b in (first, second, third)] == [0, 1, 2]
    assert [b.input_rows for b in (first, second, third)] == [3, 1, 1]
    assert sorted(r.id for r in first.output) == [2, 4]
    assert second.output == []
    assert [r.id for r in third.output] == [6]


def test_a_restarted_query_resumes_from_its_checkpoint(spark):
    # Under Connect in Update mode: the memory sink before the restart, foreachBatch after it.
    with StreamRun(spark, "w STRING", lambda df: df.groupBy("w").count(),
                   output_mode="update") as run:
        run.add_batch([("a",), ("a",)])
        run.restart()
        (batch,) = run.add_batch([("a",)])
        (empty,) = run.add_batch([])

        assert batch.batch_id == 1
        assert [tuple(r) for r in batch.output] == [("a", 3)]
        assert batch.state_metric("numRowsTotal") == 1
        assert [tuple(r) for r in run.batches[0].output] == [("a", 2)]
        assert empty.output == []


def test_a_watermark_move_brings_a_no_data_batch(spark):
    def windowed(df):
        return (df.withWatermark("ts", "0 seconds")
                  .groupBy("ts").count())

    with StreamRun(spark, "ts TIMESTAMP", windowed, output_mode="append") as run:
        run.add_batch([("2026-01-01T00:00:00",)])
        batches = run.add_batch([("2026-01-01T00:00:10",)])

    # the data batch, then a batch with no input that emits what the watermark closed
    assert [b.input_rows for b in batches] == [1, 0]
    assert batches[1].watermark == "2026-01-01T00:00:10.000Z"
    assert [r["count"] for r in batches[1].output] == [1]


def test_a_one_shot_trigger_runs_each_added_batch_in_a_start_of_its_own(spark):
    with StreamRun(spark, "id INT", lambda df: df.where("id % 2 = 0"),
                   trigger={"once": True}) as run:
        assert run.query is None            # nothing runs before there is input
        (first,) = run.add_batch([(1,), (2,)])
        assert not run.query.isActive       # the query stopped by itself
        (second,) = run.add_batch([(4,)])

    assert [first.batch_id, second.batch_id] == [0, 1]
    assert [r.id for r in first.output] == [2] and [r.id for r in second.output] == [4]


def test_available_now_reads_every_waiting_file_then_stops(spark):
    with StreamRun(spark, "id INT", lambda df: df, trigger={"availableNow": True}) as run:
        run.write_input([(1,)])
        run.write_input([(2,), (3,)])
        batches = run.process_all_available()
        assert not run.query.isActive

    # one micro-batch per file: the source reads one file per micro-batch
    assert [b.input_rows for b in batches] == [1, 2]


def test_a_batch_that_does_not_finish_in_time_is_stopped_and_reported(spark):
    # a budget of a millisecond: no micro-batch finishes that fast
    with StreamRun(spark, "id INT", lambda df: df, timeout=0.001) as run:
        with pytest.raises(StreamTimeout, match="within 0 s"):
            run.add_batch([(1,)])
        assert not run.query.isActive


def test_the_run_folder_is_removed_on_close(spark):
    run = StreamRun(spark, "id INT", lambda df: df).start()
    run.add_batch([(1,)])
    run.close()
    assert not run.root.exists()
    # and nothing is left in the session (under Connect: the memory sink's table)
    assert not [t for t in spark.catalog.listTables() if t.name.startswith("stream_run_")]


def test_a_query_spark_refuses_leaves_no_folder_behind(spark):
    run = StreamRun(spark, "id INT", lambda df: df.orderBy("id"))   # sorting a stream
    with pytest.raises(Exception, match="(?i)sort"):
        run.start()
    assert not run.root.exists()


def test_a_complete_mode_batch_emits_the_whole_result_table(spark):
    with StreamRun(spark, "w STRING", lambda df: df.groupBy("w").count(),
                   output_mode="complete") as run:
        run.add_batch([("a",), ("b",)])
        (batch,) = run.add_batch([("a",)])

    assert sorted(tuple(r) for r in batch.output) == [("a", 2), ("b", 1)]


def test_a_restart_keeps_every_batch_output_apart(spark):
    # The rows of each batch must stay with their batch, across restarts.
    with StreamRun(spark, "id INT", lambda df: df.limit(4)) as run:
        run.add_batch([(1,), (2,)])
        run.add_batch([])
        run.restart()
        (after,) = run.add_batch([(3,), (4,), (5,)])
        run.restart()
        (last,) = run.add_batch([(6,)])

        assert [len(b.output) for b in run.batches] == [2, 0, 2, 0]
        assert sorted(r.id for r in run.batches[0].output) == [1, 2]
        assert {r.id for r in after.output} < {3, 4, 5}
        assert after.batch_id == 2 and last.batch_id == 3
        assert last.state_metric("numRowsTotal") == 1


def test_batches_after_a_restart_stay_apart_past_the_tenth(spark):
    # Under Connect, Spark's file sink would compact its log at batch 9, from entries the
    # batches before the restart (in the memory sink) lack; each batch gets its own rows.
    with StreamRun(spark, "id INT", lambda df: df.where("id >= 0")) as run:
        run.add_batch([(0,)])
        run.restart()
        for batch_id in range(1, 12):
            run.add_batch([(batch_id * 10 + i,) for i in range(batch_id % 3)])

    assert [sorted(r.id for r in b.output) for b in run.batches] == [
        [0]] + [[batch_id * 10 + i for i in range(batch_id % 3)] for batch_id in range(1, 12)]


def test_a_restart_in_append_mode_starts_no_python_process_on_the_server(connect_server,
                                                                         connect_session):
    # A foreachBatch function under Connect runs in a Python process the server starts,
    # which Spark gives 10 s to connect back: on a busy machine it may not. A restarted
    # run must not need one. (Processes of other tests' queries, which Spark may still be
    # stopping, are not this run's.)
    server = connect_server._process.popen.pid
    before = _python_processes_under(server)
    with StreamRun(connect_session, "id INT", lambda df: df.limit(4)) as run:
        run.add_batch([(1,)])
        run.restart()
        run.add_batch([(2,)])
        started = {pid: command for pid, command in _python_processes_under(server).items()
                   if pid not in before}
        assert started == {}
        assert [sorted(r.id for r in b.output) for b in run.batches] == [[1], [2]]


def test_a_run_that_keeps_no_output_restarts_in_update_mode_with_no_python_on_the_server(
        connect_server, connect_session):
    # Checks that look only at the state, the checkpoint or whether a restart is accepted
    # drop the rows (Spark's noop sink): the query computes the same, and a restart in
    # Update mode, which would otherwise need foreachBatch, starts no Python process.
    server = connect_server._process.popen.pid
    before = _python_processes_under(server)
    with StreamRun(connect_session, "w STRING", lambda df: df.groupBy("w").count(),
                   output_mode="update", keep_output=False) as run:
        run.add_batch([("a",), ("a",)])
        run.restart()
        (batch,) = run.add_batch([("a",), ("b",)])
        started = {pid: command for pid, command in _python_processes_under(server).items()
                   if pid not in before}
        assert started == {}
        assert (batch.batch_id, batch.output) == (1, [])
        assert sorted((r.key.w, r.value["count"]) for r in run.state()) == [("a", 3), ("b", 1)]


def test_releasing_a_graded_session_leaves_this_process_local(connect_server, tmp_path):
    # The grading command releases each notebook's Connect session from its own process
    # (stopping what the notebook left running), and that process may be a test or a
    # script that runs a local Spark too.
    from pyspark.sql.connect.session import SparkSession as ConnectSession

    url = connect_server.session_url()
    learner = ConnectSession.builder.remote(url).create()
    left_running = StreamRun(learner, "id INT", lambda df: df, root=tmp_path).start()
    assert release_session(url) == [left_running.query.id]
    assert not is_connect(course_session())


def _python_processes_under(ancestor: int) -> dict[int, str]:
    """The command lines of the Python processes descending from process ``ancestor``, by
    pid, but for PySpark's daemon and the workers it forks (processors and UDFs start that
    way)."""
    found = {}
    for process in psutil.Process(ancestor).children(recursive=True):
        try:
            command = process.cmdline()
        except psutil.Error:   # ended meanwhile
            continue
        if command and "python" in command[0] and "pyspark.daemon" not in command:
            found[process.pid] = " ".join(command)
    return found


def test_the_plan_starts_at_the_last_operator_of_the_query(spark):
    with StreamRun(spark, "id INT", lambda df: df.where("id > 0").limit(2)) as run:
        run.add_batch([(1,)])
        first = run.plan().operator_names()
        run.restart()
        run.add_batch([(2,)])
        second = run.plan().operator_names()

    assert first[-1] == second[-1] == "StreamingGlobalLimit"

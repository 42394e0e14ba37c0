"""The Python that Spark starts for a transformWithState query, forked from a warm process.

Before the first micro-batch of every transformWithState query (and of every restart),
Spark's driver starts ``python -m pyspark.sql.streaming.transform_with_state_driver_worker``:
a fresh process that runs the processor's ``init()`` to learn its state variables, then
ends. Most of its second or so is spent importing PySpark (measured in
docs/benchmarks.md), the same imports every time; a check of chapter 4 starts up to twice
as many queries as it has cases, and a learner waits for each.

So the interpreter Spark is told to run (``PYSPARK_PYTHON``, :func:`worker_python`) is a
small script. For anything but that driver worker it simply becomes this Python
(``exec``); the pool of workers that runs a processor's rows is Spark's own ``pyspark.daemon``,
already forked from one warm process. For the driver worker, it asks a *warm process*, one
per JVM, that has imported the worker's modules once, to fork a child that runs the worker
with the script's own standard streams, environment and folder. The script waits for the
child and ends with its exit code, so Spark sees the process it started behave exactly as
before; if Spark kills the script, the warm process kills the child.

The first driver worker of a JVM starts the warm process and runs as a plain Python
meanwhile, as does any that comes while the warm process is still importing. Requests are
read as their bytes arrive, so a process that connects and sends nothing holds nobody up.
The warm process ends when its JVM does (it watches the JVM's pid), and it is in the JVM's
process group, so whatever stops Spark's processes stops it too. Anything
unexpected (no warm process, another system than Linux, a refused request) falls back to
a plain Python: never slower than without it, never a query that does not start.

This module is run as the script's code *before* anything else is imported, without the
course on ``sys.path``: its top level imports the standard library only.
"""
from __future__ import annotations

import hashlib
import json
import os
import signal
import socket
import struct
import sys
import tempfile
import time
from pathlib import Path

#: The one module started through the warm process.
DRIVER_WORKER = "pyspark.sql.streaming.transform_with_state_driver_worker"
#: A request (its size, then JSON) is sent with the script's stdin, stdout and stderr; the
#: warm process answers ``_FORKED`` once the child runs, then the child's exit code.
_STREAMS = 3
_SIZE = struct.Struct("!I")
_FORKED = b"F"
_EXIT = struct.Struct("!i")
#: Seconds either side waits for the other before giving up on the warm path. Spark gives
#: a new worker 10 s to connect back (PythonWorkerFactory), so a script that has waited
#: this long for its fork still has time to run the worker itself.
_PATIENCE = 4.0


def _read_exactly(conn: socket.socket, size: int, start: bytes = b"") -> bytes | None:
    data = start
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def worker_python() -> str:
    """The executable to give Spark as its Python (``PYSPARK_PYTHON``,
    ``spark.pyspark.python``): a script, written once per user and interpreter, that runs
    this module's :func:`client` with ``sys.executable``."""
    if sys.platform != "linux":
        return sys.executable
    here = Path(__file__).resolve()
    body = (f"#!{sys.executable} -S\n"
            "# Spark's Python workers for the course (autograder/toolkit/warm_python.py).\n"
            "import importlib.util as u\n"
            f"s = u.spec_from_file_location('_warm_python', {str(here)!r})\n"
            "m = u.module_from_spec(s); s.loader.exec_module(m)\n"
            f"m.client({sys.executable!r})\n")
    name = hashlib.sha256(body.encode()).hexdigest()[:16]
    folder = scripts_folder()
    folder.mkdir(mode=0o700, exist_ok=True)
    if not _only_mine(folder) or os.statvfs(folder).f_flag & os.ST_NOEXEC \
            or len(body.splitlines()[0]) > 127:
        # A folder someone else made or can write to, or on a disk mounted without the
        # right to run files, or an interpreter path too long for Linux's "#!" line:
        # Spark gets this interpreter itself, as before.
        return sys.executable
    script = folder / f"python-{name}"
    if not script.is_file():
        partial = folder / f".{script.name}.{os.getpid()}"
        partial.write_text(body)
        partial.chmod(0o755)
        os.replace(partial, script)
    return str(script)


def scripts_folder() -> Path:
    """Where :func:`worker_python` writes its scripts (a grading run closes it to learners'
    notebooks: a script removed would leave Spark without a Python)."""
    return Path(tempfile.gettempdir()) / f"inside-spark-python-{os.getuid()}"


def _only_mine(folder: Path) -> bool:
    """Whether ``folder`` is a real folder of this user's that nobody else can write to."""
    import stat
    found = os.lstat(folder)
    return (stat.S_ISDIR(found.st_mode) and found.st_uid == os.getuid()
            and not found.st_mode & 0o022)


def _peer_uid(conn: socket.socket) -> int:
    """The user of the process at the other end of a Unix socket."""
    return struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                               struct.calcsize("3i")))[1]


def warm_address(jvm: int, python: str) -> bytes:
    """The warm process's socket: in Linux's abstract namespace (no file to clean up),
    one per user, JVM and interpreter."""
    tag = hashlib.sha256(python.encode()).hexdigest()[:12]
    return f"\0inside-spark-state-store/warm-python/{os.getuid()}/{jvm}/{tag}".encode()


# -- the script Spark starts -------------------------------------------------------------

def client(python: str) -> None:
    """Run as Spark's Python: the driver worker through the warm process, all else as
    ``python`` itself. Never returns."""
    argv = sys.argv[1:]
    if argv == ["-m", DRIVER_WORKER]:
        code = _through_warm_process(python, argv)
        if code is not None:
            os._exit(code)
    os.execv(python, [python, *argv])


def _through_warm_process(python: str, argv: list[str]) -> int | None:
    """The child's exit code, or None if no warm process took the request (then this
    script runs the worker itself, after starting one for the next time)."""
    jvm = os.getppid()
    try:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            conn.connect(warm_address(jvm, python))
        except OSError:
            conn.close()
            _start_warm_process(python, jvm)
            return None
        if _peer_uid(conn) != os.getuid():
            conn.close()
            return None   # not ours: it gets neither the environment nor the streams
        request = json.dumps({"argv": argv, "env": dict(os.environ), "cwd": os.getcwd()}).encode()
        conn.settimeout(_PATIENCE)
        socket.send_fds(conn, [_SIZE.pack(len(request)) + request], list(range(_STREAMS)))
        if _read_exactly(conn, len(_FORKED)) != _FORKED:
            return None   # refused, or too slow to fork: run the worker here
    except OSError:
        return None   # (a fork after this sees the script's side closed, and is killed)
    try:
        conn.settimeout(None)   # the worker runs as long as Spark needs it
        reply = _read_exactly(conn, _EXIT.size)
    except OSError:
        reply = None
    if reply is None:
        return 1   # the warm process died with the worker running: it failed
    code = _EXIT.unpack(reply)[0]
    if code < 0:   # the child was killed by a signal: so is this script, as Spark expects
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    return code


def _start_warm_process(python: str, jvm: int) -> None:
    """Start the JVM's warm process, detached from this script's streams (Spark reads
    them until they close), in the JVM's process group."""
    import subprocess
    with open(os.devnull, "r+b") as null:
        subprocess.Popen([python, __file__, "serve", str(jvm), python], stdin=null,
                         stdout=null, stderr=null, close_fds=True, cwd="/")


# -- the warm process: python warm_python.py serve <jvm pid> ------------------------------

def _serve(jvm: int, python: str) -> None:
    import importlib
    import selectors

    signal.signal(signal.SIGINT, signal.SIG_IGN)   # the JVM's to stop, not a Ctrl-C's
    try:
        watch = os.pidfd_open(jvm)
    except (OSError, AttributeError):
        return
    claim = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        claim.bind(warm_address(jvm, python) + b"/claim")
    except OSError:
        return   # another warm process serves this JVM, or is importing to
    # Import first, listen after: a script that comes meanwhile finds nobody and runs a
    # plain Python at once, instead of waiting for imports that may outlast its patience.
    importlib.import_module(DRIVER_WORKER)   # what every child would import
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(warm_address(jvm, python))
    listener.listen(16)

    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, "listener")
    selector.register(watch, selectors.EVENT_READ, "jvm")
    arriving: list[_Arriving] = []   # requests read as their bytes come, never waited for
    children: dict[int, socket.socket] = {}   # pid -> the script waiting for it
    keep = [claim, listener, watch, selector]   # what no child needs
    running = True
    while running:
        for key, _ in selector.select(timeout=0.2):
            if key.data == "jvm":
                running = False
            elif key.data == "listener":
                conn, _ = listener.accept()
                if _peer_uid(conn) != os.getuid():
                    conn.close()
                    continue
                conn.setblocking(False)
                arriving.append(_Arriving(conn))
                selector.register(conn, selectors.EVENT_READ, arriving[-1])
            elif isinstance(key.data, _Arriving):
                request = key.data
                try:
                    wanted = request.read()
                except Exception:  # noqa: BLE001 - a bad request costs its script a plain Python
                    wanted = False
                if wanted is None:
                    continue   # more to come
                selector.unregister(request.conn)
                arriving.remove(request)
                others = (keep + [r.conn for r in arriving] + [fd for r in arriving for fd in r.fds]
                          + list(children.values()))
                try:
                    pid = _fork_child(request, wanted, others) if wanted else None
                except OSError:   # no fork to be had (too many processes): a plain Python
                    pid = None
                request.close_streams()
                if pid:
                    children[pid] = request.conn
                    selector.register(request.conn, selectors.EVENT_READ, pid)
                    with _quiet():
                        request.conn.sendall(_FORKED)
                else:
                    request.conn.close()
            else:   # the script is gone (killed by Spark): so goes its child
                with _quiet():
                    os.kill(key.data, signal.SIGKILL)
                selector.unregister(key.fileobj)
        for late in [r for r in arriving if time.monotonic() - r.since > _PATIENCE]:
            selector.unregister(late.conn)   # its script has given up on us by now
            arriving.remove(late)
            late.close_streams()
            late.conn.close()
        _reap(children, selector)
    for pid in list(children):   # the JVM is gone: nobody waits for them
        with _quiet():
            os.kill(pid, signal.SIGKILL)
        with _quiet():
            os.waitpid(pid, 0)


class _Arriving:
    """One script's request as its bytes come in: its size, then JSON, sent together with
    the script's stdin, stdout and stderr. Read without waiting, so that a process that
    connects and sends nothing, or half a request, holds no other script up."""

    _LARGEST = 1 << 24

    def __init__(self, conn: socket.socket):
        self.conn, self.since = conn, time.monotonic()
        self.data, self.fds = b"", []

    def read(self) -> dict | bool | None:
        """What has come so far: the request once whole, False if it cannot be served
        (bad, or its script has gone), None if more is to come."""
        try:
            data, fds, _, _ = socket.recv_fds(self.conn, 1 << 16, _STREAMS)
        except BlockingIOError:
            return None
        self.fds += fds
        if not data:
            return False   # the script left
        self.data += data
        if len(self.data) < _SIZE.size:
            return None
        size = _SIZE.unpack(self.data[:_SIZE.size])[0]
        if size > self._LARGEST or len(self.fds) != _STREAMS:
            return False
        if len(self.data) < _SIZE.size + size:
            return None
        try:
            if self.conn.recv(1, socket.MSG_PEEK) == b"":
                return False   # sent, then gone (it waited too long): no child for nobody
        except BlockingIOError:
            pass
        return json.loads(self.data[_SIZE.size:_SIZE.size + size])

    def close_streams(self) -> None:
        for fd in self.fds:   # the child's now, or nobody's
            os.close(fd)
        self.fds = []


def _fork_child(request: _Arriving, wanted: dict, others: list) -> int:
    """Fork the child that runs a whole request; return its pid. ``others``: the sockets
    and streams only the warm process needs, which the child closes."""
    pid = os.fork()
    if pid == 0:
        for other in others:
            with _quiet():
                os.close(other) if isinstance(other, int) else other.close()
        request.conn.close()
        become_module(wanted["argv"][1], wanted["argv"][2:], streams=request.fds,
                      env=wanted["env"], cwd=wanted["cwd"])   # never returns
    return pid


def become_module(module: str, args: list[str], *, streams: list[int], env: dict[str, str],
                  cwd: str, new_session: bool = False) -> None:
    """In a process just forked from a warm one: do what ``python -m module args...`` would
    do, with ``streams`` as its stdin, stdout and stderr, ``env`` as its whole environment
    and ``cwd`` as its folder (and, with ``new_session``, a session of its own); then exit
    with its code. Never returns. (Also the nbgrader launcher's: grading/warm_nbgrader.py.)"""
    import runpy
    import tempfile as temporary

    code = 1
    try:
        if new_session:
            os.setsid()
        for name in ("SIGINT", "SIGTERM", "SIGCHLD", "SIGPIPE"):
            signal.signal(getattr(signal, name), signal.SIG_DFL)
        for target, fd in enumerate(streams):
            os.dup2(fd, target)
        for fd in set(streams) - {0, 1, 2}:
            os.close(fd)
        sys.stdin = open(0, closefd=False)
        sys.stdout = open(1, "w", closefd=False, buffering=1)
        sys.stderr = open(2, "w", closefd=False, buffering=1)
        os.environ.clear()
        os.environ.update(env)
        time.tzset()                 # TZ as the new environment says
        temporary.tempdir = None     # TMPDIR too
        os.chdir(cwd)
        sys.path[0] = cwd            # as `python -m` puts its folder first
        sys.argv = [module, *args]
        try:
            runpy.run_module(module, run_name="__main__", alter_sys=True)
            code = 0
        except SystemExit as done:
            code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
    except BaseException:  # noqa: BLE001 - what a crashed `python -m` prints
        import traceback
        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def ended_children():
    """``(pid, exit code)`` of each child of this process that has ended, without waiting."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        yield pid, os.waitstatus_to_exitcode(status)


def _reap(children: dict, selector) -> None:
    for pid, code in ended_children():
        conn = children.pop(pid, None)
        if conn is not None:
            with _quiet():
                selector.unregister(conn)
            with _quiet():
                conn.sendall(_EXIT.pack(code))
            conn.close()


class _quiet:
    """``contextlib.suppress(Exception)`` without importing contextlib."""

    def __enter__(self):
        return self

    def __exit__(self, kind, *_):
        return kind is not None and issubclass(kind, Exception)


if __name__ == "__main__" and sys.argv[1:2] == ["serve"]:
    sys.path[0] = os.getcwd()   # not this file's folder (the course's package)
    _serve(int(sys.argv[2]), sys.argv[3])

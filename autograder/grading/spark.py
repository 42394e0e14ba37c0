"""The Spark a grading run uses, whether it is still there, and each notebook's session."""
from __future__ import annotations

import contextlib
import socket
import threading
import uuid
from pathlib import Path
from typing import Iterable
from urllib.parse import urlparse

from .results import SERVER_LOST


class GradingSpark:
    """The Spark Connect server a run grades against, watched.

    A notebook graded while the server died was not graded at all: the grading command asks
    :meth:`alive` while each notebook runs and when it ends, and :meth:`generation` tells a
    notebook that started before a restart from one that started after it. A server this
    run started itself (``server``) is restarted by :meth:`restart`; a server somebody else
    runs (an ``sc://`` URL) cannot be, and the run stops with what it has graded.
    """

    def __init__(self, url: str, server=None):
        self._url, self.server = url, server
        self.generation = 0
        self._lock = threading.Lock()

    @property
    def not_hidden(self) -> str | None:
        """Why the server this run started sees the folders it should not (None: it does
        not, or the server is somebody else's)."""
        return getattr(self.server, "not_hidden", None)

    @property
    def url(self) -> str:
        return self._url

    def alive(self) -> bool:
        if self.server is not None:
            return self.server.running
        address = urlparse(self._url.replace("sc://", "http://", 1).split("/;")[0])
        with socket.socket() as probe:
            probe.settimeout(2)
            return probe.connect_ex((address.hostname or "127.0.0.1", address.port or 15002)) == 0

    def recover(self, fault: str, progress=None) -> bool:
        """Whether a notebook that ``fault`` spoiled can be graded again now: when this
        server is gone, it is started again first (``progress``, if given, is told). A fault
        of another kind (a bug in the course's code) would only happen again: that notebook
        waits for the next run."""
        if SERVER_LOST not in fault:
            return False
        if self.alive():
            return True  # another notebook's fault has restarted it already
        if progress is not None:
            progress.note(f"the Spark Connect server at {self.url} stopped: starting it again")
        restarted = self.restart()
        if progress is not None:
            progress.note("... it runs again" if restarted else
                          "... it could not be started again: the notebooks left are not graded")
        return restarted

    def restart(self) -> bool:
        """Make sure a server runs again; return whether one does. Several notebooks may
        ask at once: the first restarts it, the others find it running."""
        with self._lock:
            if self.alive():
                return True  # restarted by another notebook's fault, or never really down
            if self.server is None:
                return False
            try:
                self.server.restart()
            except Exception:  # noqa: BLE001 - reported by the caller as a failed restart
                return False
            self.generation += 1
            return True


@contextlib.contextmanager
def grading_spark(spark: str | None, log_dir: Path | None = None, hide: Iterable[Path] = (),
                  sandboxed: bool = False):
    """Yield the :class:`GradingSpark` to grade against (or None for a local Spark per
    notebook).

    A server started here cannot see the repository's solutions, tests and history, nor
    the folders in ``hide`` (:mod:`.hidden_folders`); ``GradingSpark.not_hidden`` says why
    not, on a machine where it can.

    ``spark`` is ``"server"`` (start a loopback Connect server, ``local[2]``), ``"local"``
    (no server: each kernel starts its own Spark, like stock nbgrader), ``"standalone"``
    (start a one-worker standalone cluster and a Connect server on it), a ``spark://``
    master URL (a Connect server on that cluster), or an ``sc://`` URL (an existing server).
    Whatever is started here is stopped on the way out, on errors and Ctrl-C included.
    ``sandboxed``: what is started here runs in the server's sandbox
    (:func:`.sandbox.server_sandbox`), which shows it nothing to hide.
    """
    from .connect_server import ConnectServer, StandaloneCluster
    from .hidden_folders import repository_secrets

    hidden = [*repository_secrets(), *hide]
    if spark in (None, "local"):
        yield None
    elif spark.startswith("sc://"):
        yield GradingSpark(spark)
    elif spark == "server" or spark.startswith("spark://") or spark.startswith("local"):
        master = "local[2]" if spark == "server" else spark
        with ConnectServer(master, log_dir=log_dir, hide=hidden, sandboxed=sandboxed) as server:
            yield GradingSpark(server.url, server)
    elif spark == "standalone":
        with StandaloneCluster(log_dir=log_dir, hide=hidden, sandboxed=sandboxed) as cluster, \
                ConnectServer(cluster.url, log_dir=log_dir, hide=hidden,
                              sandboxed=sandboxed) as server:
            server.not_hidden = server.not_hidden or cluster.not_hidden
            yield GradingSpark(server.url, server)
    else:
        raise ValueError(f"unknown Spark for grading: {spark!r}")


def session_url(remote: str) -> str:
    """A Connect URL with a session of its own: one per notebook, so that learners never
    share temporary views or state, and whatever one leaves running can be stopped."""
    base = remote.rstrip("/")
    separator = ";" if "/;" in base else "/;"
    return f"{base}{separator}session_id={uuid.uuid4()}"

"""The Spark a grading run uses, and each notebook's own session of it."""
from __future__ import annotations

import contextlib
import uuid
from pathlib import Path


@contextlib.contextmanager
def grading_spark(spark: str | None, log_dir: Path | None = None):
    """Yield the Connect URL to grade against (or None for a local Spark per notebook).

    ``spark`` is ``"server"`` (start a loopback Connect server, ``local[2]``), ``"local"``
    (no server: each kernel starts its own Spark, like stock nbgrader), ``"standalone"``
    (start a one-worker standalone cluster and a Connect server on it), a ``spark://``
    master URL (a Connect server on that cluster), or an ``sc://`` URL (an existing server).
    Whatever is started here is stopped on the way out, on errors and Ctrl-C included.
    """
    from .connect_server import ConnectServer, StandaloneCluster

    if spark in (None, "local"):
        yield None
    elif spark.startswith("sc://"):
        yield spark
    elif spark == "server" or spark.startswith("spark://") or spark.startswith("local"):
        master = "local[2]" if spark == "server" else spark
        with ConnectServer(master, log_dir=log_dir) as server:
            yield server.url
    elif spark == "standalone":
        with StandaloneCluster(log_dir=log_dir) as cluster, \
                ConnectServer(cluster.url, log_dir=log_dir) as server:
            yield server.url
    else:
        raise ValueError(f"unknown Spark for grading: {spark!r}")


def session_url(remote: str) -> str:
    """A Connect URL with a session of its own: one per notebook, so that learners never
    share temporary views or state, and whatever one leaves running can be stopped."""
    base = remote.rstrip("/")
    separator = ";" if "/;" in base else "/;"
    return f"{base}{separator}session_id={uuid.uuid4()}"

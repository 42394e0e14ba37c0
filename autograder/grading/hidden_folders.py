"""Folders the grading Spark cannot see: the solutions, the tests, the course's history.

A graded kernel's own Python cannot open the solutions (the guard's audit hook refuses
it), but the learner's code also reads files through Spark: ``spark.read.text(path)``, a
``binaryFile`` source, a UDF that opens a file in a Python worker. Under a Connect server
those reads are the server's, and a server that sees the repository would hand a learner
the solution notebooks as text.

So the grading command starts its Connect server in a mount namespace of its own
(``unshare --user --map-root-user --mount``, a Linux user namespace: no root needed), where
an empty read-only ``tmpfs`` is mounted over each folder that holds a solution before the
server starts:

* the repository's ``solutions/`` (the instructor's notebooks), ``corpora/`` (right
  answers written in other ways), ``tests/`` (Spark's recorded answers to the fixed cases)
  and ``.git`` (the history of all three);
* what the run adds: the nbgrader course's ``source/`` and ``submitted/`` folders, and the
  folder of submissions handed to the command.

Nothing else changes for the server: the course's Python, the toolkit and the temporary
folders where kernels keep their streams and checkpoints are the same files as before. A
machine that does not allow user namespaces (not Linux, or a kernel or AppArmor policy that
forbids them) runs the server as before; :func:`hiding` says why, and the grading command
prints it.
"""
from __future__ import annotations

import functools
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Iterable

from .course import REPOSITORY

#: The repository's folders that hold a solution (those that exist are hidden).
REPOSITORY_SECRETS = ("solutions", "corpora", "tests", ".git")

#: Mounts an empty read-only tmpfs over each folder named before ``--``, then runs the
#: command after it (``sh -c SCRIPT hide FOLDER ... -- COMMAND ...``).
_MOUNT_THEN_RUN = ('while [ "$1" != "--" ]; do '
                   'mount -t tmpfs -o ro,size=4k hidden "$1" || exit 97; shift; '
                   'done; shift; exec "$@"')
_UNSHARE = ["unshare", "--user", "--map-root-user", "--mount", "--propagation", "private"]


def repository_secrets(repository: Path = REPOSITORY) -> list[Path]:
    """The repository's folders that hold a solution and exist. In a git worktree, ``.git``
    is a file that names the main checkout's: that folder is the history to hide."""
    found = [repository / name for name in REPOSITORY_SECRETS if (repository / name).is_dir()]
    if (repository / ".git").is_file():
        common = subprocess.run(["git", "rev-parse", "--path-format=absolute", "--git-common-dir"],
                                cwd=repository, capture_output=True, text=True)
        if common.returncode == 0 and Path(common.stdout.strip()).is_dir():
            found.append(Path(common.stdout.strip()))
    return found


@functools.lru_cache(maxsize=1)
def why_not_hidden() -> str | None:
    """None when this machine can hide folders from a process; else why not."""
    if shutil.which("unshare") is None:
        return "this machine has no `unshare` (util-linux)"
    with tempfile.TemporaryDirectory(prefix="hiding-probe-") as folder:
        probe = Path(folder) / "secret"
        probe.mkdir()
        (probe / "answer").write_text("42")
        try:
            done = subprocess.run(_hidden(["ls", "-A", str(probe)], [str(probe)]),
                                  capture_output=True, text=True, timeout=20)
        except (OSError, subprocess.TimeoutExpired) as error:
            return f"`unshare` failed ({error})"
    if done.returncode != 0:
        said = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
        return f"this machine does not let a process hide folders in a namespace ({said})"
    if done.stdout.strip():
        return "a folder mounted over in a namespace still showed its files"
    return None


def _needed(folder: Path) -> bool:
    """Whether the server could not run without ``folder``: it holds the Python, PySpark,
    the course's package or the script Spark starts as its Python (``--submissions ~``
    would)."""
    import pyspark

    from .. import __file__ as package
    from ..toolkit.warm_python import worker_python
    return any(Path(path).resolve().is_relative_to(folder)
               for path in (sys.prefix, pyspark.__file__, package, worker_python()))


def _outermost(folders: Iterable[Path]) -> list[Path]:
    """The folders that lie in no other of them (hiding the outer one hides the inner)."""
    folders = sorted({Path(folder).resolve() for folder in folders})
    return [folder for folder in folders
            if not any(folder != other and folder.is_relative_to(other) for other in folders)]


def hiding(command: list[str], folders: Iterable[Path]) -> tuple[list[str], str | None]:
    """``command`` run with ``folders`` hidden, and None; or, where this machine cannot
    hide them, ``command`` as it is and why not. A folder the server needs in order to
    run is left visible."""
    folders = [str(folder) for folder in _outermost(
        folder for folder in map(Path, folders) if not _needed(folder.resolve()))]
    if not folders:
        return command, None
    refused = why_not_hidden()
    if refused:
        return command, refused
    return _hidden(command, folders), None


def _hidden(command: list[str], folders: list[str]) -> list[str]:
    """``command``, started in a namespace of its own with ``folders`` mounted over."""
    return [*_UNSHARE, "sh", "-c", _MOUNT_THEN_RUN, "hide", *folders, "--", *command]

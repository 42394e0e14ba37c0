"""Which part of an error is the learner's own.

When the learner's function fails inside a check, the error travels through the course's
files (the check, the driver) and through libraries (PySpark, the standard library) before
it reaches the notebook. Only the learner's own lines help them: this module picks those
frames out of a traceback, names them the way the notebook does ("Cell In[3], line 4"),
and tells whether an error is the released stub's ``raise NotImplementedError()``.
"""
from __future__ import annotations

import errno
import os
import sys
import sysconfig
import traceback
from types import TracebackType

#: The course's own files, the whole ``autograder`` package (this module is in its ``checks``
#: folder): a frame in here is the course's, never the learner's.
COURSE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: Where installed libraries and the standard library live.
LIBRARY_DIRS = sorted({os.path.abspath(path) for name, path in sysconfig.get_paths().items()
                       if name in ("stdlib", "platstdlib", "purelib", "platlib")})
LIBRARY_FOLDERS = ("site-packages", "dist-packages")


def in_course(filename: str) -> bool:
    """True when ``filename`` is one of the course's own files (``autograder/``)."""
    return os.path.abspath(filename).startswith(COURSE_DIR + os.sep)


def written_by_learner(filename: str) -> bool:
    """True unless ``filename`` belongs to the course's package, a library or Python."""
    if filename.startswith("<frozen"):
        return False
    path = os.path.abspath(filename)
    if any(folder in path.split(os.sep) for folder in LIBRARY_FOLDERS):
        return False
    return not any(path == top or path.startswith(top + os.sep)
                   for top in (COURSE_DIR, *LIBRARY_DIRS))


def learner_traceback(error: BaseException) -> list[str]:
    """The learner's frames of ``error``'s traceback, innermost last, then the error line.

    Empty when none of the frames is the learner's (the error came from Spark itself).
    """
    frames = [frame for frame in traceback.extract_tb(error.__traceback__)
              if written_by_learner(frame.filename)]
    if not frames:
        return []
    lines = []
    for frame in frames:
        lines.append(f"  {_place(frame.filename)}, line {frame.lineno}, in {frame.name}")
        if frame.line:
            lines.append(f"    {frame.line.strip()}")
    message = str(error)
    lines.append(f"{type(error).__name__}: {message}" if message else type(error).__name__)
    return lines


def _place(filename: str) -> str:
    """How the notebook names a file: ``Cell In[3]`` for a cell, else the path."""
    shell = _running_ipython()
    label = shell.compile.format_code_name(filename) if shell is not None else None
    return " ".join(label) if label else f'File "{filename}"'


def _running_ipython():
    if "IPython" not in sys.modules:
        return None
    shell = sys.modules["IPython"].get_ipython()
    return shell if hasattr(getattr(shell, "compile", None), "format_code_name") else None


def unfinished_in(error: BaseException) -> str | None:
    """The learner's function still raising the stub's ``NotImplementedError``, or None.

    Only a plain ``NotImplementedError`` raised by the learner's own code counts: PySpark
    raises subclasses of it for features it lacks, and a library may raise it too; those
    are errors to explain, not unfinished tasks. The name is qualified
    (``SessionTracker.init``) when the stub is a method.
    """
    if type(error) is not NotImplementedError:
        return None
    innermost = _innermost(error.__traceback__)
    if innermost is None or not written_by_learner(innermost.tb_frame.f_code.co_filename):
        return None
    code = innermost.tb_frame.f_code
    return getattr(code, "co_qualname", code.co_name)


def _innermost(tb: TracebackType | None) -> TracebackType | None:
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb


def course_fault(error: BaseException, *, catcher_frames: int = 1) -> str | None:
    """Why ``error`` is the course's fault rather than the learner's, or None.

    Three kinds of error say nothing about the learner's code, and a check must never score
    them: a full disk (Spark could not write its checkpoint or a shuffle file), a Spark that
    is gone (its JVM died, its Connect server stopped answering), and an error
    in the course's own Python (a bug in a check, the driver or a reader), which is any
    error that is not Spark's, raised in the course's files with none of the learner's lines
    on the way. A learner's query that Spark refuses is the learner's: Spark's errors are
    never the course's here, even when no line of the learner's is in their traceback (the
    course's driver is what started the query).
    """
    inside = traceback.extract_tb(error.__traceback__)[catcher_frames:]
    if any(written_by_learner(frame.filename) for frame in inside):
        return None  # the learner's own code was on the way, whatever the error says
    for link in _chain(error):
        if isinstance(link, OSError) and link.errno in (errno.ENOSPC, errno.EDQUOT) \
                or "No space left on device" in str(link):
            return "the disk is full"
    for link in _chain(error):
        # py4j's own error (not a Java exception, which is Py4JJavaError) when the JVM no
        # longer answers: "An error occurred while calling o31.sc"
        if type(link).__name__ in ("Py4JNetworkError", "Py4JError") \
                or isinstance(link, (ConnectionRefusedError, ConnectionResetError, BrokenPipeError)) \
                or "Answer from Java side is empty" in str(link) \
                or "StatusCode.UNAVAILABLE" in str(link):
            return "the connection to Spark was lost (its JVM or its server stopped)"
    if _from_spark(error):
        return None
    ours = [frame for frame in inside if in_course(frame.filename)]
    if not ours:
        return None
    where = f"{os.path.relpath(ours[-1].filename, os.path.dirname(COURSE_DIR))}:{ours[-1].lineno}"
    return f"an error in the course's code ({where}): {type(error).__name__}: {str(error)[:200]}"


def _chain(error: BaseException | None):
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        yield error
        error = error.__cause__ or error.__context__


def _from_spark(error: BaseException) -> bool:
    """Whether ``error`` (or what caused it) is one of Spark's: PySpark's error classes,
    errors from the JVM, and errors a Connect server sent back."""
    for link in _chain(error):
        module = type(link).__module__ or ""
        if module.startswith(("pyspark", "py4j", "grpc")):
            return True
    return False

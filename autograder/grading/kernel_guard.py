"""The grading guard inside a learner's kernel: an audit hook installed before their code.

:class:`autograder.grading.guards.GuardedExecute` runs one extra first cell in each grading
kernel, which calls :func:`install`. This module is the only part of the guards that runs
in the kernel, so it imports nothing but the standard library: the rest of the guards
needs nbgrader and nbformat, whose imports cost a kernel about 3 s, paid by every
notebook of a class. What the hook refuses and repairs is described in
:mod:`autograder.grading.guards`; here it is in named parts, which :func:`install` puts
together:

* :func:`load_checks`: the checks, and the recorded checkpoints some of them hand to the
  learner's code, read while the grading folder is still open (the kernel holds no answer:
  its checks only ask, :mod:`autograder.checks.asking`);
* :class:`ClosedFiles`: what a notebook may not open, change or connect SQLite to;
* :class:`Pristine`: the course's modules, the builtins and IPython's error display as they
  were before the learner's first cell, and how to put them back;
* :class:`GuardLog`: what the grading command reads afterwards, one event a line;
* :class:`KernelGuard`: the audit hook, one handler per kind of event.
"""
from __future__ import annotations

import builtins
import importlib
import json
import os
import sys
import threading

from ..contract import BORROWED, GRADER_FAULT, GUARD_DENY, GUARD_LOG, SANDBOXED

#: The statements put around each grade cell while it runs (never saved in the notebook).
START_MARK = "__autograder_grade_cell__"
END_MARK = "__autograder_grade_cell_end__"
#: Attributes whose replacement hides failures or takes over execution.
DISPLAY_ATTRIBUTES = {"showtraceback", "_showtraceback", "showsyntaxerror", "set_custom_exc",
                      "custom_exceptions", "CustomTB", "excepthook", "run_cell", "run_code",
                      "run_ast_nodes", "do_execute", "kernel"}
#: File changes refused on the closed files (:class:`ClosedFiles`).
FILE_CHANGES = ("os.remove", "os.rename", "os.truncate", "shutil.rmtree", "os.unlink")
#: Ways into the garbage collector, where the guard's own references live.
GC_WALKS = ("gc.get_objects", "gc.get_referrers", "gc.get_referents")
#: Ways to start a process, refused under a shared Spark Connect server outside a sandbox.
PROCESS_STARTS = ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn",
                  "os.fork", "os.forkpty", "pty.spawn")


def install(checked: list[str] = ("autograder",)) -> None:
    """Install the audit hook in this (grading) kernel. Does nothing outside grading.

    ``checked`` names the modules whose functions the grade cells call; they are imported
    now, with the run's answers, before any learner code runs, and kept as they are.
    """
    log_path = os.environ.get(GUARD_LOG)
    if not log_path:
        return
    log = GuardLog(log_path)
    closed = ClosedFiles.from_environment(log_path)
    load_checks(checked)
    report_uncaught_course_faults()
    # Processes are refused only where they could outlive the notebook beside a shared
    # server: not in the sandbox, whose processes end with it.
    guard = KernelGuard(log, closed, Pristine.now(),
                        remote=bool(os.environ.get("SPARK_REMOTE"))
                        and os.environ.get(SANDBOXED) != "1")
    sys.addaudithook(guard.hook)


def report_uncaught_course_faults() -> None:
    """Before IPython shows a cell's uncaught error, say whether it is the course's fault.

    A check turns the errors of the learner's code into lessons (``ask``,
    ``spark_failure_as_lesson``); an error of the course's own work outside those (Spark
    lost while a check asks it for the truth, a full disk, a bug in a check) would reach the
    grade cell and cost the learner its points. The error's frames from the first of the
    course's on are judged by :func:`autograder.checks.feedback.report_course_fault`, which tells
    the guard; an error with no frame of the course's (the learner's own cell) is left
    alone. The traceback is shown as IPython always does. Installed before the snapshot of
    :class:`Pristine`, so a learner's cell cannot take it away.
    """
    try:
        shell = get_ipython()  # defined in an IPython kernel
    except NameError:
        return
    from autograder.checks import feedback
    from autograder.checks.learner_code import in_course
    import traceback

    def show(shell, etype, value, tb, tb_offset=None):
        frames = traceback.extract_tb(value.__traceback__)
        first_ours = next((i for i, f in enumerate(frames) if in_course(f.filename)), None)
        if first_ours is not None and not isinstance(value, (feedback.CheckFailed,
                                                             feedback.GraderFault)):
            feedback.report_course_fault(value, catcher_frames=first_ours)
        return shell.InteractiveTB.structured_traceback(etype, value, tb, tb_offset=tb_offset)

    shell.set_custom_exc((Exception,), show)


def load_checks(checked: list[str]) -> None:
    """Import the modules the grade cells call, and copy the run's recorded checkpoints
    (:func:`autograder.checks.answers.load`) while the grading folder is still open."""
    for name in checked:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - the grade cell will fail on it by itself
            pass
    try:
        importlib.import_module("autograder.checks.answers").load()
    except Exception:  # noqa: BLE001 - as a check module that does not import
        pass


class GuardLog:
    """The guard's log: one JSON line per event, naming the grade cell that was running."""

    def __init__(self, path: str):
        self.fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        #: The grade cell running (its nbgrader id), None between grade cells.
        self.cell: str | None = None

    def write(self, event: str, **fields) -> None:
        line = json.dumps({"event": event, "cell": self.cell, **fields}) + "\n"
        try:
            os.write(self.fd, line.encode())
        except OSError:  # the learner closed our log: stop grading this notebook
            os._exit(70)


class ClosedFiles:
    """What a notebook may not open, change or connect SQLite to: the guard's log, the
    folders the grading command denies (``GUARD_DENY``: the solutions, the course folder and
    its answers, the submissions) and any gradebook. Its own working folder stays open."""

    def __init__(self, cwd: str, deny: tuple[str, ...], log: str):
        self.cwd, self.deny, self.log = cwd, deny, log

    @classmethod
    def from_environment(cls, log_path: str) -> "ClosedFiles":
        deny = os.environ.get(GUARD_DENY, "").split(os.pathsep)
        return cls(os.path.realpath(os.getcwd()),
                   tuple(os.path.realpath(p) for p in deny if p), os.path.realpath(log_path))

    def __contains__(self, path) -> bool:
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        if not isinstance(path, str):
            return False
        real = os.path.realpath(path)
        if real == self.log:
            return True
        if real == self.cwd or real.startswith(self.cwd + os.sep):
            return False
        return any(real == d or real.startswith(d + os.sep) for d in self.deny) \
            or os.path.basename(real).startswith("gradebook")


class Pristine:
    """The ``autograder`` package's modules, the builtins and IPython's error display as
    they were before the learner's first cell; :meth:`repair` puts back what changed."""

    def __init__(self, modules: dict, builtins_module, shell):
        self.modules = modules
        self.names = {name: dict(vars(module)) for name, module in modules.items()}
        self.builtins_module = builtins_module
        self.builtins = dict(vars(builtins_module))
        self.shell = shell
        shell_names = sorted(DISPLAY_ATTRIBUTES - {"kernel", "excepthook"})
        self.shell_names = {name: vars(shell).get(name) for name in shell_names} if shell else {}
        self.shell_classes = {cls: {name: vars(cls)[name] for name in shell_names
                                    if name in vars(cls)}
                              for cls in (type(shell).__mro__ if shell is not None else ())}

    @classmethod
    def now(cls) -> "Pristine":
        """This kernel as it is: every ``autograder`` module imported so far, the builtins,
        and the IPython shell (None outside IPython)."""
        modules = {name: module for name, module in sys.modules.items()
                   if name == "autograder" or name.startswith("autograder.")}
        try:
            shell = get_ipython()  # defined in an IPython kernel
        except NameError:
            shell = None
        return cls(modules, builtins, shell)

    def repair(self) -> list[str]:
        """Put back whatever differs from the snapshot; the names of what was put back."""
        return self._repair_modules() + self._repair_builtins() + self._repair_shell()

    def _repair_modules(self) -> list[str]:
        repaired = []
        for name, module in self.modules.items():
            if sys.modules.get(name) is not module:
                sys.modules[name] = module
                repaired.append(f"sys.modules[{name!r}]")
            current = vars(module)
            for key, value in self.names[name].items():
                if current.get(key, _MISSING) is not value:
                    current[key] = value
                    repaired.append(f"{name}.{key}")
        return repaired

    def _repair_builtins(self) -> list[str]:
        repaired = []
        current = vars(self.builtins_module)
        for key, value in self.builtins.items():
            if key in _KERNEL_OWNED_BUILTINS:
                continue
            if current.get(key, _MISSING) is not value:
                current[key] = value
                repaired.append(f"builtins.{key}")
        return repaired

    def _repair_shell(self) -> list[str]:
        repaired = []
        if self.shell is None:
            return repaired
        for name, value in self.shell_names.items():
            if vars(self.shell).get(name) is not value:
                if value is None:
                    vars(self.shell).pop(name, None)
                else:
                    vars(self.shell)[name] = value
                repaired.append(f"IPython shell.{name}")
        for cls, names in self.shell_classes.items():
            for name, value in names.items():
                if vars(cls).get(name) is not value:
                    type.__setattr__(cls, name, value)
                    repaired.append(f"IPython {cls.__name__}.{name}")
        return repaired


class KernelGuard:
    """The audit hook (:meth:`hook`): one handler per kind of event it refuses, records or
    answers by repairing, each writing to the log what it saw."""

    def __init__(self, log: GuardLog, closed: ClosedFiles, pristine: Pristine, *,
                 remote: bool):
        self.log, self.closed, self.pristine = log, closed, pristine
        self.resetting = False  # while the guard itself clears a trace function
        self.borrowed: set = set()
        feedback = sys.modules.get("autograder.checks.feedback")
        self.fault_source = getattr(feedback, "__file__", None) or "?"
        self.handlers = {
            "exec": self.on_exec, "open": self.on_open, "sqlite3.connect": self.on_sqlite,
            BORROWED: self.on_borrowed, GRADER_FAULT: self.on_fault,
            "sys.addaudithook": self.on_new_hook, "object.__setattr__": self.on_setattr,
            **dict.fromkeys(FILE_CHANGES, self.on_file_change),
            **dict.fromkeys(("sys.settrace", "sys.setprofile"), self.on_tracing),
            **dict.fromkeys(GC_WALKS, self.on_gc),
            **(dict.fromkeys(PROCESS_STARTS, self.on_process) if remote else {}),
        }

    def hook(self, event: str, args) -> None:
        handler = self.handlers.get(event)
        if handler is not None:
            handler(event, args)

    def on_exec(self, event: str, args) -> None:
        """A grade cell starts or ends (the marks GuardedExecute puts around it): clear a
        trace function (at the start), repair, and log what had to be repaired."""
        code = args[0]
        names = getattr(code, "co_names", ())
        for mark, kind in ((START_MARK, "start"), (END_MARK, "end")):
            if mark in names:
                grade_id = next((c for c in code.co_consts if isinstance(c, str)), "")
                if kind == "start":
                    self.clear_tracing()
                self.log.cell = grade_id
                self.log.write(kind)
                for what in self.pristine.repair():
                    self.log.write("tamper", what=what)
                if kind == "end":
                    self.log.cell = None

    def clear_tracing(self) -> None:
        """A trace or profile function a learner's cell left would run inside the checks:
        take it away (it is the learner's own cell that loses it, not a cheat by itself)."""
        self.resetting = True
        try:
            if sys.gettrace() is not None:
                sys.settrace(None)
            if sys.getprofile() is not None:
                sys.setprofile(None)
            threading.settrace(None)
            threading.setprofile(None)
        finally:
            self.resetting = False

    def on_open(self, event: str, args) -> None:
        if args[0] in self.closed:
            self.log.write("denied", what=f"open {args[0]}")
            raise PermissionError("grading: this file is not readable from a notebook")

    def on_file_change(self, event: str, args) -> None:
        if args and args[0] in self.closed:
            self.log.write("denied", what=f"{event} {args[0]}")
            raise PermissionError("grading: this file is not yours")

    def on_sqlite(self, event: str, args) -> None:
        database = args[0] if args else ""
        if isinstance(database, (str, bytes)) and os.fsdecode(database) in ("", ":memory:"):
            return  # a learner's own database in memory
        if not isinstance(database, (str, bytes, os.PathLike)) \
                or os.fsdecode(database).startswith("file:") or os.fspath(database) in self.closed:
            self.log.write("denied", what=f"sqlite3.connect {database!r}")
            raise PermissionError("grading: this database is not yours")

    def on_tracing(self, event: str, args) -> None:
        if self.log.cell is not None and not self.resetting:
            self.log.write("denied", what=f"{event} while a check runs")
            raise PermissionError("grading: no tracing while a check runs")

    def on_borrowed(self, event: str, args) -> None:
        """A reference answer ran as the learner's answer (:func:`autograder.checks.checking.
        reference_answer`): only while a grade cell runs does it earn points."""
        cell = self.log.cell
        if cell is not None and (cell, args[0]) not in self.borrowed:
            self.borrowed.add((cell, args[0]))  # once per grade cell is enough
            self.log.write("borrowed", what=f"the course's answer {args[0]}")

    def on_fault(self, event: str, args) -> None:
        """The grader's own fault, believed only from the course's feedback module (the
        caller of ``sys.audit``, two frames up), not from a learner's ``sys.audit`` or a
        copy of the module: a fault is never scored."""
        if sys._getframe(2).f_code.co_filename == self.fault_source:
            self.log.write("fault", what=str(args[0])[:300])

    def on_new_hook(self, event: str, args) -> None:
        self.log.write("denied", what="sys.addaudithook")
        raise RuntimeError("grading: the grading guard is the only audit hook")

    def on_gc(self, event: str, args) -> None:
        self.log.write("denied", what=event)
        raise PermissionError("grading: the garbage collector is off limits")

    def on_setattr(self, event: str, args) -> None:
        obj, name = args[0], args[1]
        module = getattr(obj, "__module__", None) or ""
        if isinstance(module, str) and module.split(".")[0] == "autograder" \
                and (callable(obj) or isinstance(obj, type)):
            self.log.write("denied", what=f"set {getattr(obj, '__qualname__', obj)}.{name}")
            raise PermissionError("grading: the course's code cannot be changed")

    def on_process(self, event: str, args) -> None:
        self.log.write("denied", what=event)
        raise PermissionError("grading: no processes from a notebook")


_MISSING = object()
#: Builtins the kernel itself swaps for every request (stdin forwarding).
_KERNEL_OWNED_BUILTINS = {"input", "raw_input", "getpass", "_", "__", "___"}

"""The grading guard inside a learner's kernel: an audit hook installed before their code.

:class:`autograder.grading.guards.GuardedExecute` runs one extra first cell in each grading
kernel, which calls :func:`install`. This module is the only part of the guards that runs
in the kernel, so it imports nothing but the standard library: the rest of the guards
needs nbgrader and nbformat, whose imports cost a kernel about 3 s, paid by every
notebook of a class. What the hook refuses and repairs is described in
:mod:`autograder.grading.guards`.
"""
from __future__ import annotations

import json
import os

from ..contract import BORROWED, GRADER_FAULT, GUARD_DENY, GUARD_LOG

#: The statements put around each grade cell while it runs (never saved in the notebook).
START_MARK = "__autograder_grade_cell__"
END_MARK = "__autograder_grade_cell_end__"
#: Attributes whose replacement hides failures or takes over execution.
DISPLAY_ATTRIBUTES = {"showtraceback", "_showtraceback", "showsyntaxerror", "set_custom_exc",
                      "custom_exceptions", "CustomTB", "excepthook", "run_cell", "run_code",
                      "run_ast_nodes", "do_execute", "kernel"}


def install(checked: list[str] = ("autograder",)) -> None:
    """Install the audit hook in this (grading) kernel. Does nothing outside grading.

    ``checked`` names the modules whose functions the grade cells call; they are imported
    now, before any learner code runs, and kept as they are.
    """
    import builtins
    import importlib
    import sys

    log_path = os.environ.get(GUARD_LOG)
    if not log_path:
        return
    log_fd = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    cwd = os.path.realpath(os.getcwd())
    deny = tuple(os.path.realpath(p) for p in os.environ.get(GUARD_DENY, "").split(os.pathsep) if p)
    log_real = os.path.realpath(log_path)
    remote = bool(os.environ.get("SPARK_REMOTE"))

    for name in checked:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - the grade cell will fail on it by itself
            pass
    modules = {name: module for name, module in sys.modules.items()
               if name == "autograder" or name.startswith("autograder.")}
    pristine = {name: dict(vars(module)) for name, module in modules.items()}
    pristine_builtins = dict(vars(builtins))
    shell = None
    try:
        shell = get_ipython()  # noqa: F821 - defined in a kernel
    except NameError:
        pass
    shell_names = sorted(DISPLAY_ATTRIBUTES - {"kernel", "excepthook"})
    shell_class = type(shell) if shell is not None else None
    pristine_shell = {name: vars(shell).get(name) for name in shell_names} if shell else {}
    pristine_class = {cls: {name: vars(cls)[name] for name in shell_names if name in vars(cls)}
                      for cls in (shell_class.__mro__ if shell_class else ())}
    state = {"cell": None, "resetting": False}
    borrowed: set = set()
    feedback = sys.modules.get("autograder.feedback")
    fault_source = getattr(feedback, "__file__", None) or "?"

    def clear_tracing() -> None:
        """A trace or profile function a learner's cell left would run inside the checks:
        take it away (it is the learner's own cell that loses it, not a cheat by itself)."""
        import threading
        state["resetting"] = True
        try:
            if sys.gettrace() is not None:
                sys.settrace(None)
            if sys.getprofile() is not None:
                sys.setprofile(None)
            threading.settrace(None)
            threading.setprofile(None)
        finally:
            state["resetting"] = False

    def log(event: str, **fields) -> None:
        line = json.dumps({"event": event, "cell": state["cell"], **fields}) + "\n"
        try:
            os.write(log_fd, line.encode())
        except OSError:  # the learner closed our log: stop grading this notebook
            os._exit(70)

    def repair() -> list[str]:
        repaired = []
        for name, module in modules.items():
            if sys.modules.get(name) is not module:
                sys.modules[name] = module
                repaired.append(f"sys.modules[{name!r}]")
            current = vars(module)
            for key, value in pristine[name].items():
                if current.get(key, _MISSING) is not value:
                    current[key] = value
                    repaired.append(f"{name}.{key}")
        current = vars(builtins)
        for key, value in pristine_builtins.items():
            if key in _KERNEL_OWNED_BUILTINS:
                continue
            if current.get(key, _MISSING) is not value:
                current[key] = value
                repaired.append(f"builtins.{key}")
        if shell is not None:
            for name, value in pristine_shell.items():
                if vars(shell).get(name) is not value:
                    if value is None:
                        vars(shell).pop(name, None)
                    else:
                        vars(shell)[name] = value
                    repaired.append(f"IPython shell.{name}")
            for cls, names in pristine_class.items():
                for name, value in names.items():
                    if vars(cls).get(name) is not value:
                        type.__setattr__(cls, name, value)
                        repaired.append(f"IPython {cls.__name__}.{name}")
        return repaired

    def denied(path) -> bool:
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        if not isinstance(path, str):
            return False
        real = os.path.realpath(path)
        if real == log_real:
            return True
        if real == cwd or real.startswith(cwd + os.sep):
            return False
        return any(real == d or real.startswith(d + os.sep) for d in deny) \
            or os.path.basename(real).startswith("gradebook")

    def hook(event: str, args) -> None:
        if event == "exec":
            code = args[0]
            names = getattr(code, "co_names", ())
            for mark, kind in ((START_MARK, "start"), (END_MARK, "end")):
                if mark in names:
                    grade_id = next((c for c in code.co_consts if isinstance(c, str)), "")
                    if kind == "start":
                        clear_tracing()
                    state["cell"] = grade_id
                    log(kind)
                    for what in repair():
                        log("tamper", what=what)
                    if kind == "end":
                        state["cell"] = None
        elif event == "open":
            if denied(args[0]):
                log("denied", what=f"open {args[0]}")
                raise PermissionError("grading: this file is not readable from a notebook")
        elif event in ("os.remove", "os.rename", "os.truncate", "shutil.rmtree", "os.unlink"):
            if args and denied(args[0]):
                log("denied", what=f"{event} {args[0]}")
                raise PermissionError("grading: this file is not yours")
        elif event == "sqlite3.connect":
            database = args[0] if args else ""
            if isinstance(database, (str, bytes)) and os.fsdecode(database) in ("", ":memory:"):
                return  # a learner's own database in memory
            if not isinstance(database, (str, bytes, os.PathLike)) \
                    or os.fsdecode(database).startswith("file:") or denied(os.fspath(database)):
                log("denied", what=f"sqlite3.connect {database!r}")
                raise PermissionError("grading: this database is not yours")
        elif event in ("sys.settrace", "sys.setprofile"):
            if state["cell"] is not None and not state["resetting"]:
                log("denied", what=f"{event} while a check runs")
                raise PermissionError("grading: no tracing while a check runs")
        elif event == BORROWED:
            # a reference answer ran as the learner's answer (autograder.checking.
            # reference_answer): only while a grade cell runs does it earn points
            if state["cell"] is not None and (state["cell"], args[0]) not in borrowed:
                borrowed.add((state["cell"], args[0]))  # once per grade cell is enough
                log("borrowed", what=f"the course's answer {args[0]}")
        elif event == GRADER_FAULT:
            # believed only from the course's own feedback module, not from a learner's
            # sys.audit (or a copy of the module): a fault is never scored
            if sys._getframe(1).f_code.co_filename == fault_source:
                log("fault", what=str(args[0])[:300])
        elif event == "sys.addaudithook":
            log("denied", what="sys.addaudithook")
            raise RuntimeError("grading: the grading guard is the only audit hook")
        elif event in ("gc.get_objects", "gc.get_referrers", "gc.get_referents"):
            log("denied", what=event)
            raise PermissionError("grading: the garbage collector is off limits")
        elif event == "object.__setattr__":
            obj, name = args[0], args[1]
            module = getattr(obj, "__module__", None) or ""
            if isinstance(module, str) and module.split(".")[0] == "autograder" \
                    and (callable(obj) or isinstance(obj, type)):
                log("denied", what=f"set {getattr(obj, '__qualname__', obj)}.{name}")
                raise PermissionError("grading: the course's code cannot be changed")
        elif remote and event in ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn",
                                  "os.spawn", "os.fork", "os.forkpty", "pty.spawn"):
            log("denied", what=event)
            raise PermissionError("grading: no processes from a notebook")

    sys.addaudithook(hook)


_MISSING = object()
#: Builtins the kernel itself swaps for every request (stdin forwarding).
_KERNEL_OWNED_BUILTINS = {"input", "raw_input", "getpass", "_", "__", "___"}

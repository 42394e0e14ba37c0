"""Guards around grading: a graded notebook cannot cheat its way to points.

A learner's notebook runs in a kernel the learner's code controls, so the grading pipeline
defends itself at three places, each small and each an nbgrader preprocessor or a plain
function the grading command calls:

* **before running**, :func:`scan_notebook` reads the cells the learner wrote (solution cells
  and any cell they added) and flags code that rebinds or patches the checks
  (``g.check_predicted_output = ...``, a new ``check_predicted_output``), IPython's
  traceback display, builtins or ``sys.modules``, or that reaches for the gradebook or the
  solutions;
* **while running**, :class:`GuardedExecute` (nbgrader's ``Execute`` with one extra first
  cell) installs :func:`install` in the kernel: a Python *audit hook*, which no later code
  can remove. It refuses to open the solutions, the gradebook or other learners' files,
  to connect to SQLite, to walk the garbage collector (where the hook's own references
  live), to rewrite a check function's code, and, under a shared Spark Connect server, to
  start processes. At the start of each grade cell it puts back every function of the
  ``autograder`` package, the builtins and IPython's traceback display as they were before
  the learner's first cell ran, and notes what it had to repair; at the end of each grade
  cell it looks again (a check's learner function may patch while the check runs);
* **after running**, the grading command reads the guard's log: every task whose grade
  cell ran after (or during) a cheat scores zero, and the submission is flagged.

Feedback never shows hidden tests: :class:`HideHiddenTestTracebacks` keeps only the last
line of an error (the check's lesson) in grade cells, whose hidden test code
nbgrader's ``ClearHiddenTests`` removes from the source.

Nothing here is a sandbox: a learner determined to break out of a Python process they
control can. It raises the cost far above the points, and leaves a trace.
"""
from __future__ import annotations

import ast
import json
import os
import re
from dataclasses import dataclass

from nbformat.v4 import new_code_cell
from nbgrader.preprocessors import Execute, NbGraderPreprocessor

#: Environment variables the grading command gives the kernel.
LOG_VARIABLE = "AUTOGRADER_GUARD_LOG"
DENY_VARIABLE = "AUTOGRADER_GUARD_DENY"
#: The statements put around each grade cell while it runs (never saved in the notebook).
START_MARK = "__autograder_grade_cell__"
END_MARK = "__autograder_grade_cell_end__"

_GUARD_CELL = (
    "import autograder.grading_guards as __autograder_guards\n"
    "__autograder_guards.install({modules!r})\n"
    "del __autograder_guards\n"
)


def _nbgrader(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


def _is_grade_cell(cell) -> bool:
    return cell.cell_type == "code" and bool(_nbgrader(cell).get("grade"))


# -- before running: what the learner wrote ---------------------------------------------------
@dataclass
class Flag:
    """One suspicious thing in a submission: where (cell index) and what."""

    cell: int
    what: str


#: Attributes whose replacement hides failures or takes over execution.
_DISPLAY_ATTRIBUTES = {"showtraceback", "_showtraceback", "showsyntaxerror", "set_custom_exc",
                       "custom_exceptions", "CustomTB", "excepthook", "run_cell", "run_code",
                       "run_ast_nodes", "do_execute", "kernel"}
#: Modules whose attributes a learner has no business replacing.
_PROTECTED_ROOTS = ("autograder", "IPython", "ipykernel", "builtins", "sys", "pyspark",
                    "nbgrader", "nbclient")
#: Names a learner never needs: the gradebook, the audit machinery, frame-walking.
_FORBIDDEN_NAMES = {"__builtins__", "sqlite3", "addaudithook", "gradebook", "Gradebook",
                    "nbgrader", "settrace", "setprofile", "get_referrers", "get_objects"}
_FORBIDDEN_TEXT = ("solutions/", "gradebook", "BEGIN HIDDEN", "source/", "autograded/",
                   "submitted/")


def scan_notebook(nb) -> list[Flag]:
    """Flag learner-written code that tampers with grading. ``nb`` is an nbformat notebook."""
    locked_imports = set()
    for cell in nb.cells:
        if cell.cell_type == "code" and _nbgrader(cell).get("locked"):
            locked_imports |= _imported_names(cell.source)
    flags = []
    for index, cell in enumerate(nb.cells):
        meta = _nbgrader(cell)
        if cell.cell_type != "code" or meta.get("locked") or meta.get("grade"):
            continue  # nbgrader puts back the source of locked cells
        flags += [Flag(index, what) for what in _scan_source(cell.source, locked_imports)]
    return flags


def _imported_names(source: str) -> set[str]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {alias.asname or alias.name.split(".")[0] for alias in node.names}
    return names


def _scan_source(source: str, protected_names: set[str]) -> list[str]:
    try:
        tree = ast.parse(_without_magics(source))
    except SyntaxError:
        return []  # it fails when run, and scores nothing by itself
    modules = {}  # local name -> module it was imported as
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                modules[alias.asname or alias.name.split(".")[0]] = alias.name
        elif isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                modules[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    found = []

    def protected(expr) -> str | None:
        root = expr
        while isinstance(root, (ast.Attribute, ast.Subscript, ast.Call)):
            root = root.func if isinstance(root, ast.Call) else root.value
        if isinstance(root, ast.Name):
            if root.id == "get_ipython":
                return "IPython"
            module = modules.get(root.id, "")
            if module.split(".")[0] in _PROTECTED_ROOTS:
                return module
        return None

    for node in ast.walk(tree):
        targets = []
        if isinstance(node, (ast.Assign, ast.Delete)):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        for target in targets:
            if isinstance(target, (ast.Attribute, ast.Subscript)) and protected(target.value):
                found.append(f"replaces {ast.unparse(target)} (part of {protected(target.value)})")
            if isinstance(target, ast.Name) and target.id in protected_names:
                found.append(f"rebinds {target.id}, which a grade cell uses")
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                and node.name in protected_names:
            found.append(f"redefines {node.name}, which a grade cell uses")
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                bound = alias.asname or alias.name
                origin = getattr(node, "module", None) or ""
                if bound in protected_names and not origin.startswith("autograder"):
                    found.append(f"rebinds {bound}, which a grade cell uses")
                if (origin or alias.name).split(".")[0] in ("sqlite3", "nbgrader", "builtins") \
                        or alias.name in ("sqlite3", "builtins"):
                    found.append(f"imports {origin or alias.name}")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id in ("setattr", "delattr") and node.args \
                and protected(node.args[0]):
            found.append(f"{node.func.id} on {protected(node.args[0])}")
        if isinstance(node, ast.Attribute) and node.attr in _DISPLAY_ATTRIBUTES \
                and (protected(node.value) or node.attr != "kernel"):
            found.append(f"touches {ast.unparse(node)}")
        if isinstance(node, ast.Attribute) and node.attr == "modules" \
                and isinstance(node.value, ast.Name) and modules.get(node.value.id) == "sys":
            found.append("touches sys.modules")
        if isinstance(node, ast.Name) and node.id in _FORBIDDEN_NAMES:
            found.append(f"uses {node.id}")
        if isinstance(node, ast.Attribute) and node.attr in _FORBIDDEN_NAMES:
            found.append(f"uses {ast.unparse(node)}")
        if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and any(text in node.value for text in _FORBIDDEN_TEXT):
            found.append(f"names grading files ({node.value[:60]!r})")
    return sorted(set(found))


def _without_magics(source: str) -> str:
    return "\n".join("" if line.lstrip().startswith(("%", "!")) else line
                     for line in source.splitlines())


# -- while running: the kernel-side guard --------------------------------------------------------
class GuardedExecute(Execute):
    """nbgrader's ``Execute``, which first installs the guard in the kernel and marks the
    start and end of each grade cell for it. The notebook it returns is unchanged: the
    extra cell and the marks exist only while it runs."""

    def preprocess(self, nb, resources=None, km=None):
        guard = _GUARD_CELL.format(modules=checked_modules(nb))
        nb.cells.insert(0, new_code_cell(guard))
        try:
            nb, resources = super().preprocess(nb, resources, km=km)
        finally:
            if nb.cells and nb.cells[0].source == guard:
                nb.cells.pop(0)
        return nb, resources

    def preprocess_cell(self, cell, resources, index):
        if not _is_grade_cell(cell):
            return super().preprocess_cell(cell, resources, index)
        original, grade_id = cell.source, _nbgrader(cell).get("grade_id", "")
        cell.source = f"{START_MARK} = {grade_id!r}\n{original}\n{END_MARK} = {grade_id!r}"
        try:
            return super().preprocess_cell(cell, resources, index)
        finally:
            cell.source = original


def checked_modules(nb) -> list[str]:
    """The ``autograder`` modules the locked cells (setup, grade cells) import."""
    found = {"autograder"}
    for cell in nb.cells:
        if cell.cell_type == "code" and _nbgrader(cell).get("locked"):
            found |= {name for name in re.findall(r"\bautograder(?:\.\w+)*", cell.source)}
    return sorted(found)


def install(checked: list[str] = ("autograder",)) -> None:
    """Install the audit hook in this (grading) kernel. Does nothing outside grading.

    ``checked`` names the modules whose functions the grade cells call; they are imported
    now, before any learner code runs, and kept as they are.
    """
    import builtins
    import importlib
    import sys

    log_path = os.environ.get(LOG_VARIABLE)
    if not log_path:
        return
    log_fd = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    cwd = os.path.realpath(os.getcwd())
    deny = tuple(os.path.realpath(p) for p in os.environ.get(DENY_VARIABLE, "").split(os.pathsep) if p)
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
    shell_names = sorted(_DISPLAY_ATTRIBUTES - {"kernel", "excepthook"})
    shell_class = type(shell) if shell is not None else None
    pristine_shell = {name: vars(shell).get(name) for name in shell_names} if shell else {}
    pristine_class = {cls: {name: vars(cls)[name] for name in shell_names if name in vars(cls)}
                      for cls in (shell_class.__mro__ if shell_class else ())}
    state = {"cell": None}

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
            log("denied", what="sqlite3.connect")
            raise PermissionError("grading: no databases from a notebook")
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


def read_log(path) -> list[dict]:
    """The guard's log as a list of events (empty when the kernel never wrote one)."""
    try:
        text = open(path, encoding="utf-8", errors="replace").read()
    except OSError:
        return []
    events = []
    for line in text.splitlines():
        try:
            events.append(json.loads(line))
        except ValueError:
            events.append({"event": "garbled", "what": line[:200], "cell": None})
    return events


# -- feedback ---------------------------------------------------------------------------------
class HideHiddenTestTracebacks(NbGraderPreprocessor):
    """In grade cells, keep only an error's last line: ``CheckFailed: <the lesson>``.

    A traceback quotes the lines it went through, and in a grade cell those are the hidden
    tests. The lesson of a failed check (micro-batch, expected vs got, what to revisit) is
    the exception's message, so the learner loses nothing useful.
    """

    def preprocess_cell(self, cell, resources, index):
        if _is_grade_cell(cell):
            for output in cell.get("outputs", []):
                if output.get("output_type") == "error":
                    output["traceback"] = [f"{output.get('ename', 'Error')}: "
                                           f"{output.get('evalue', '')}"]
        return cell, resources

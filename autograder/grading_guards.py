"""Guards around grading: a graded notebook cannot cheat its way to points.

A learner's notebook runs in a kernel the learner's code controls, so the grading pipeline
defends itself at three places, each small and each an nbgrader preprocessor or a plain
function the grading command calls:

* **before running**, :func:`scan_notebook` reads the cells the learner wrote (solution cells
  and any cell they added) and flags code that rebinds or patches the checks
  (``g.check_predicted_output = ...``, a new ``check_predicted_output``), IPython's
  traceback display, builtins or ``sys.modules``, that reaches for the gradebook or the
  solutions, or that takes the checks' own answers (any name but a ``check_`` function from
  a checks module the grade cells import, or from :mod:`autograder.answers`);
* **while running**, :class:`GuardedExecute` (nbgrader's ``Execute`` with one extra first
  cell) installs :func:`autograder.kernel_guard.install` in the kernel: a Python *audit hook*, which no later code
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
import re
from dataclasses import dataclass

from nbformat.v4 import new_code_cell
from nbgrader.preprocessors import Execute, NbGraderPreprocessor

from .kernel_guard import DISPLAY_ATTRIBUTES, END_MARK, START_MARK

#: The first cell GuardedExecute runs. It imports only :mod:`autograder.kernel_guard`, which
#: needs nothing but the standard library: importing this module (nbgrader, nbformat,
#: jsonschema) would cost the kernel about 3 s.
_GUARD_CELL = (
    "import autograder.kernel_guard as __autograder_guards\n"
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


#: Modules whose attributes a learner has no business replacing.
_PROTECTED_ROOTS = ("autograder", "IPython", "ipykernel", "builtins", "sys", "pyspark",
                    "nbgrader", "nbclient")
#: Where Spark's recorded answers live (:mod:`autograder.answers`). Like the modules of
#: checks the grade cells import, a learner's code has no use for anything in it: asking
#: the checks' own reference (``global_limit.limit_run``) for an answer is not predicting it.
ANSWERS_MODULE = "autograder.answers"
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
    answer_keys = {ANSWERS_MODULE} | (set(checked_modules(nb)) - {"autograder"})
    flags = []
    for index, cell in enumerate(nb.cells):
        meta = _nbgrader(cell)
        if cell.cell_type != "code" or meta.get("locked") or meta.get("grade"):
            continue  # nbgrader puts back the source of locked cells
        flags += [Flag(index, what)
                  for what in _scan_source(cell.source, locked_imports, answer_keys)]
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


def _scan_source(source: str, protected_names: set[str], answer_keys: set[str]) -> list[str]:
    try:
        tree = ast.parse(_without_magics(source))
    except SyntaxError:
        return []  # it fails when run, and scores nothing by itself
    modules = {}  # local name -> module it was imported as
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:  # `import a.b` binds a; `import a.b as c` binds a.b
                name = alias.name if alias.asname else alias.name.split(".")[0]
                modules[alias.asname or name] = name
        elif isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                modules[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    found = []

    def module_of(expr) -> str | None:
        """The module an expression names (``g`` or ``autograder.global_limit``), if any."""
        if isinstance(expr, ast.Name):
            return modules.get(expr.id)
        if isinstance(expr, ast.Attribute):
            parent = module_of(expr.value)
            return f"{parent}.{expr.attr}" if parent else None
        return None

    def answer_key(module: str | None, name: str) -> bool:
        return module in answer_keys and not name.startswith("check_")

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
        if isinstance(node, ast.ImportFrom) and node.module:
            found += [f"takes {alias.name} from {node.module}, where the checks keep their "
                      "answers" for alias in node.names if answer_key(node.module, alias.name)]
        if isinstance(node, ast.Attribute) and answer_key(module_of(node.value), node.attr):
            found.append(f"uses {ast.unparse(node)}, where the checks keep their answers")
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
        if isinstance(node, ast.Attribute) and node.attr in DISPLAY_ATTRIBUTES \
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

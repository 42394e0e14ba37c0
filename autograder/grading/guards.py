"""Guards around grading: a graded notebook cannot cheat its way to points.

A learner's notebook runs in a kernel the learner's code controls. What keeps the grades
out of its reach is where it runs (:mod:`.sandbox`: nothing of the grader's is mounted
there) and what it holds (no answers: :mod:`.judge`). The guards keep a notebook to the
course's rules inside that room, at three places, each small and each an nbgrader
preprocessor or a plain function the grading command calls:

* **before running**, :func:`scan_notebook` reads the cells the learner wrote (solution cells
  and any cell they added) and flags only what has no innocent reading: code that patches
  the checks or the kernel's error display (``g.check_predicted_output = ...``,
  ``get_ipython().showtraceback = ...``), that redefines a check the grade cells call, that
  imports nbgrader, or that takes the checks' own answers (a function or class of a checks
  module the grade cells import, other than its ``check_`` functions and ``TOOLS``; anything
  of :mod:`autograder.checks.answers`; the steps and ``run`` of chapter 3's model).
  Ordinary code that merely looks like the set-up cell's is not flagged: importing ``F``
  or ``Row`` again, a new ``spark``, a helper named like a set-up name;
* **while running**, :class:`GuardedExecute` (nbgrader's ``Execute`` with one extra first
  cell) installs :func:`autograder.grading.kernel_guard.install` in the kernel: a Python
  *audit hook*, which no later code can remove. It refuses to open the solutions, the
  gradebook or other learners' files (or to connect SQLite to them), to walk the garbage
  collector (where the hook's own references live), to add another audit hook, to rewrite a
  check function's code, to set a trace function while a check runs, and, outside a sandbox
  under a shared Spark Connect server, to start processes. It also records every reference
  answer of the course that runs as the learner's answer while a grade cell runs, however
  the learner reached it (:func:`autograder.checks.checking.reference_answer`). At the start
  of each grade cell it puts back every function of the ``autograder`` package, the builtins
  and IPython's traceback display as they were before the learner's first cell ran (and
  clears a trace function a learner's cell left), and notes what it had to repair; at the
  end of each grade cell it looks again (a check's learner function may patch while the
  check runs);
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
from ..old_paths import current

#: The first cell GuardedExecute runs. It imports only :mod:`autograder.grading.kernel_guard`, which
#: needs nothing but the standard library: importing this module (nbgrader, nbformat,
#: jsonschema) would cost the kernel about 3 s.
_GUARD_CELL = (
    "import autograder.grading.kernel_guard as __autograder_guards\n"
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


#: Modules whose attributes a learner has no business replacing: the course's checks and
#: the kernel that shows their failures.
_PROTECTED_ROOTS = ("autograder", "IPython", "ipykernel", "builtins", "nbgrader", "nbclient")
#: Where Spark's recorded answers live (:mod:`autograder.checks.answers`). Like the modules of
#: checks the grade cells import, a learner's code has no use for anything in it: asking
#: the checks' own reference (``global_limit.limit_run``) for an answer is not predicting it.
ANSWERS_MODULE = "autograder.checks.answers"
#: The course's model of chapter 3's operator: its steps and its driver answer that
#: chapter's tasks 1, 2 and 4 (the notebook says so); its small helpers do not.
MODEL_MODULE = "autograder.chapters.save_model"
MODEL_ANSWERS = {"run", "append_step", "update_step", "complete_step", "STEPS"}


def scan_notebook(nb) -> list[Flag]:
    """Flag learner-written code that tampers with grading. ``nb`` is an nbformat notebook.

    Only what has no innocent reading is flagged: patching the course's modules or the
    kernel's error display, redefining a check the grade cells call, taking the checks' own
    answers, importing nbgrader. Ordinary code is left alone even when it looks like the
    set-up cell's (``from pyspark.sql import functions as F`` again, a new ``spark``, a helper
    called ``g``): the grade cells import their checks themselves, and the kernel guard puts
    back the course's modules before each of them. Files, databases and the garbage
    collector are watched while the notebook runs, not guessed from its text.
    """
    check_names = set()
    for cell in nb.cells:
        if cell.cell_type == "code" and _nbgrader(cell).get("locked"):
            check_names |= {name for name in _imported_names(cell.source)
                            if name.startswith("check_")}
    answer_keys = {ANSWERS_MODULE, MODEL_MODULE} | ({current(name) for name in checked_modules(nb)}
                                                   - {"autograder"})
    flags = []
    for index, cell in enumerate(nb.cells):
        meta = _nbgrader(cell)
        if cell.cell_type != "code" or meta.get("locked") or meta.get("grade"):
            continue  # nbgrader puts back the source of locked cells
        flags += [Flag(index, what) for what in scan_source(cell.source, check_names, answer_keys)]
    return flags


def _imported_names(source: str) -> set[str]:
    try:
        tree = ast.parse(_without_magics(source))
    except SyntaxError:
        return set()
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {alias.asname or alias.name.split(".")[0] for alias in node.names}
    return names


def is_answer(module: str | None, name: str, answer_keys: set[str]) -> bool:
    """Whether ``module.name`` gives a check's answer away.

    In a checks module (or :mod:`autograder.checks.answers`), every function and class but the
    ``check_`` functions and the helpers the module lists in ``TOOLS``: the references,
    the runs whose answers the checks compare with, the course's own processors. Constants
    (the chapter's example streams, schemas) are free. Anything of :mod:`autograder.checks.answers`.
    In the model, its steps and ``run``.
    """
    module = current(module) if module else module  # an old name stands for the new module
    if module not in answer_keys or name.startswith(("check_", "__")):
        return False
    if module == MODEL_MODULE:
        return name in MODEL_ANSWERS
    if module == ANSWERS_MODULE:
        return True  # the recorded answers themselves, and the ways to ask for them
    import importlib
    try:
        found = importlib.import_module(module)
    except Exception:  # noqa: BLE001 - a module that does not import gives nothing away
        return False
    value = getattr(found, name, None)
    return callable(value) and name not in getattr(found, "TOOLS", ())


def scan_source(source: str, check_names: set[str], answer_keys: set[str]) -> list[str]:
    """What one learner cell does that has no innocent reading (see :func:`scan_notebook`).

    ``check_names`` are the checks the grade cells call by name; ``answer_keys`` the modules
    whose answers a learner may not take (:func:`is_answer`).
    """
    try:
        tree = ast.parse(_without_magics(source))
    except SyntaxError:
        return []  # it fails when run, and scores nothing by itself
    modules = {}  # local name -> module (or module.name) it was imported as
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
        """The module an expression names (``g`` or ``autograder.chapters.global_limit``), if any."""
        if isinstance(expr, ast.Name):
            return modules.get(expr.id)
        if isinstance(expr, ast.Attribute):
            parent = module_of(expr.value)
            return f"{parent}.{expr.attr}" if parent else None
        return None

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
            for part in (target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]):
                if isinstance(part, (ast.Attribute, ast.Subscript)) and protected(part.value):
                    found.append(f"replaces {ast.unparse(part)} (part of {protected(part.value)})")
                elif isinstance(part, ast.Attribute) and part.attr in DISPLAY_ATTRIBUTES \
                        and part.attr != "kernel":
                    found.append(f"replaces {ast.unparse(part)}, which shows errors")
                if isinstance(part, ast.Name) and part.id in check_names:
                    found.append(f"rebinds {part.id}, a check the grade cells call")
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                and node.name in check_names:
            found.append(f"redefines {node.name}, a check the grade cells call")
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            origin = getattr(node, "module", None) or ""
            for alias in node.names:
                bound = alias.asname or alias.name
                if bound in check_names and not (origin.startswith("autograder")
                                                 and alias.name == bound):
                    found.append(f"rebinds {bound}, a check the grade cells call")
                if (origin or alias.name).split(".")[0] in ("nbgrader", "nbclient"):
                    found.append(f"imports {origin or alias.name}")
        if isinstance(node, ast.ImportFrom) and node.module:
            found += [f"takes {alias.name} from {node.module}, where the checks keep their "
                      "answers" for alias in node.names
                      if is_answer(node.module, alias.name, answer_keys)]
        if isinstance(node, ast.Attribute) and is_answer(module_of(node.value), node.attr,
                                                          answer_keys):
            found.append(f"uses {ast.unparse(node)}, where the checks keep their answers")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id in ("setattr", "delattr") and node.args:
            name = node.args[1] if len(node.args) > 1 else None
            if protected(node.args[0]):
                found.append(f"{node.func.id} on {protected(node.args[0])}")
            elif isinstance(name, ast.Constant) and name.value in DISPLAY_ATTRIBUTES \
                    and name.value != "kernel":
                found.append(f"{node.func.id} of {name.value}, which shows errors")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr == "set_custom_exc":
            found.append("replaces how IPython shows errors (set_custom_exc)")
    return sorted(set(found))


def _without_magics(source: str) -> str:
    return "\n".join("" if line.lstrip().startswith(("%", "!")) else line
                     for line in source.splitlines())


# -- while running: the kernel-side guard --------------------------------------------------------
class GuardedExecute(Execute):
    """nbgrader's ``Execute``, which first installs the guard in the kernel and marks the
    start and end of each grade cell for it. The notebook it returns is unchanged: the
    extra cell and the marks exist only while it runs."""

    def create_kernel_manager(self):
        """nbclient's kernel manager; in the notebook's sandbox when the grading command
        gave one (:mod:`.sandboxed_kernel`)."""
        import os

        from .sandbox import SANDBOX, Sandbox

        described = os.environ.get(SANDBOX)
        if not described:
            return super().create_kernel_manager()
        from .sandboxed_kernel import SandboxedKernelManager

        self.kernel_manager_class = SandboxedKernelManager
        km = super().create_kernel_manager()
        km.sandbox = Sandbox.from_json(json.loads(described))
        return km

    def preprocess(self, nb, resources=None, km=None):
        from .judge import hand_over_answers

        hand_over_answers(nb)  # the kernel about to start only asks; the answers stay here
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
    """The ``autograder`` modules the locked cells (setup, grade cells) import, each by the
    name it has now (a notebook released before the package's folders uses old names)."""
    found = {"autograder"}
    for cell in nb.cells:
        if cell.cell_type == "code" and _nbgrader(cell).get("locked"):
            found |= {current(name) for name in re.findall(r"\bautograder(?:\.\w+)*", cell.source)}
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
    """In grade cells, never show the lines of a traceback: they quote the hidden tests.

    A failed check already rendered itself as its lesson (``CheckFailed._render_traceback_``:
    the lesson, then only the learner's own lines of an error they raised); that is kept as
    the learner saw it in the notebook. Any other error keeps its last line alone.
    """

    def preprocess_cell(self, cell, resources, index):
        if _is_grade_cell(cell):
            for output in cell.get("outputs", []):
                if output.get("output_type") == "error" and not _rendered_lesson(output):
                    output["traceback"] = [f"{output.get('ename', 'Error')}: "
                                           f"{output.get('evalue', '')}"]
        return cell, resources


def _rendered_lesson(output) -> bool:
    """An error output that is a check's lesson as it rendered itself (one block, starting
    with the check's mark), not a traceback."""
    shown = output.get("traceback") or []
    return (output.get("ename") in ("CheckFailed", "TaskNotDone") and len(shown) == 1
            and shown[0].startswith("✘ "))

"""Which top-level folder may import which: the toolkit (``autograder``) stands alone; the
learner corpora (``corpora``) and the course's commands (``scripts``) use the toolkit and
never the tests; the tests may use all three. A script is a module of the ``scripts``
package, run from the repository's root (``python -m scripts.<name>``), so none edits
``sys.path`` to find its neighbours."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: What each folder's Python may import of the course's own top-level packages.
MAY_IMPORT = {
    "autograder": {"autograder"},
    "corpora": {"autograder", "corpora"},
    "scripts": {"autograder", "corpora", "scripts"},
}
COURSE_PACKAGES = {"autograder", "corpora", "scripts", "tests"}


def _modules(folder: str) -> list[Path]:
    return sorted(path for path in (ROOT / folder).rglob("*.py") if "__pycache__" not in path.parts)


def _imported(tree: ast.AST) -> set[str]:
    """The top-level names a module imports (absolute imports; a relative one stays inside)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def _edits_sys_path(tree: ast.AST) -> bool:
    return any(isinstance(node, ast.Attribute) and node.attr == "path"
               and isinstance(node.value, ast.Name) and node.value.id == "sys"
               for node in ast.walk(tree))


@pytest.mark.parametrize("folder", sorted(MAY_IMPORT))
def test_each_folder_imports_only_what_lies_below_it(folder):
    upward = {}
    for path in _modules(folder):
        reached = (_imported(ast.parse(path.read_text())) & COURSE_PACKAGES) - MAY_IMPORT[folder]
        if reached:
            upward[path.relative_to(ROOT).as_posix()] = sorted(reached)
    assert not upward, f"{folder}/ may import only {sorted(MAY_IMPORT[folder])}: {upward}"


@pytest.mark.parametrize("folder", ["corpora", "scripts"])
def test_no_script_or_corpus_module_edits_sys_path(folder):
    editing = [path.relative_to(ROOT).as_posix() for path in _modules(folder)
               if _edits_sys_path(ast.parse(path.read_text()))]
    assert not editing, f"these find the course's packages by editing sys.path: {editing}"


def test_the_rules_see_an_upward_import_and_a_path_edit():
    module = ast.parse("import sys\nsys.path.insert(0, '.')\nfrom tests.support import x\n")
    assert _imported(module) & COURSE_PACKAGES == {"tests"}
    assert _edits_sys_path(module)


def _package_imports(package: Path) -> dict[str, set[str]]:
    """Module -> the modules of ``package`` it imports, wherever in it (a function's import
    included: a circle hidden inside functions is still a circle)."""
    modules = {}
    for path in sorted(package.rglob("*.py")):
        name = ".".join(path.relative_to(package.parent).with_suffix("").parts)
        modules[name.removesuffix(".__init__")] = path
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        here = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                base = here.split(".")[:len(here.split(".")) - node.level + 1] if node.level else []
                target = ".".join([*base, *([node.module] if node.module else [])])
                reached = [target, *(f"{target}.{alias.name}" for alias in node.names)]
            elif isinstance(node, ast.Import):
                reached = [alias.name for alias in node.names]
            else:
                continue
            graph[name] |= {module for module in reached if module in modules and module != name}
    return graph


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The groups of modules that import each other, directly or round about."""
    def reach(start: str) -> set[str]:
        seen, todo = set(), [start]
        while todo:
            for module in graph[todo.pop()] - seen:
                seen.add(module)
                todo.append(module)
        return seen

    reached = {module: reach(module) for module in graph}
    return sorted({tuple(sorted({module} | {other for other in reached[module]
                                            if module in reached[other]}))
                   for module in graph if module in reached[module]})


def test_no_module_of_the_toolkit_imports_itself_round_about():
    assert _circles(_package_imports(ROOT / "autograder")) == []


def test_a_circle_through_a_functions_import_is_found(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from .b import x\n")
    (package / "b.py").write_text("def x():\n    from . import a\n")
    (package / "c.py").write_text("from . import a\n")
    assert _circles(_package_imports(package)) == [("pkg.a", "pkg.b")]


#: Which folders of the package each folder's modules may import, itself aside: the toolkit
#: stands on the contract alone; the check framework on the toolkit; a chapter on both; the
#: book's widgets show chapters' runs; the grading command stands on the checks and never
#: loads a widget (a graded kernel imports no ipywidgets).
FLOORS = {
    "autograder.toolkit": {"autograder.contract"},
    "autograder.checks": {"autograder.contract", "autograder.toolkit"},
    "autograder.chapters": {"autograder.contract", "autograder.toolkit", "autograder.checks"},
    "autograder.widgets": {"autograder.contract", "autograder.toolkit", "autograder.chapters"},
    "autograder.grading": {"autograder", "autograder.lazy_face", "autograder.contract",
                           "autograder.old_paths", "autograder.toolkit", "autograder.checks"},
}


def _folder(module: str) -> str:
    """``autograder.toolkit.driver`` -> ``autograder.toolkit``; a top-level module is its own."""
    return ".".join(module.split(".")[:2])


@pytest.mark.parametrize("folder", sorted(FLOORS))
def test_each_folder_of_the_package_imports_only_its_floors(folder):
    upward = {module: sorted(reached) for module, targets in _package_imports(ROOT / "autograder").items()
              if _folder(module) == folder
              and (reached := {_folder(target) for target in targets} - FLOORS[folder] - {folder})}
    assert not upward, f"{folder} may import only {sorted(FLOORS[folder])}: {upward}"


def test_every_module_of_the_package_lives_in_a_folder_by_concern():
    """At the top: the package's face, the contract with the grading command, the command's
    name, and the old names of moved modules (each only standing in for its new one)."""
    top = {path.stem for path in (ROOT / "autograder").glob("*.py")} - {"__init__"}
    from autograder.old_paths import MOVED
    old = {name.removeprefix("autograder.") for name in MOVED}
    assert top - old == {"classroom", "contract", "lazy_face", "old_paths"}
    assert all(len((ROOT / "autograder" / f"{name}.py").read_text().splitlines()) <= 4 for name in old)


#: The modules still over 400 lines: each chapter's checks, examples and cases in one file,
#: waiting to be split by part. The list may only shrink: a module that is shorter now must
#: leave it, and no other may join.
LONG_MODULES = {"chapters/aggregation_planning.py", "chapters/global_limit.py",
                "chapters/state_store_files.py", "chapters/state_store_save.py",
                "chapters/stream_join_checks.py", "chapters/transform_with_state.py",
                "checks/answers.py", "toolkit/warm_python.py"}


def _lines(path: Path) -> int:
    return len(path.read_text().splitlines())


def test_no_module_of_the_package_is_over_400_lines_but_the_listed():
    package = ROOT / "autograder"
    long = {path.relative_to(package).as_posix() for path in package.rglob("*.py") if _lines(path) > 400}
    assert long <= LONG_MODULES, f"over 400 lines, split them by concern: {sorted(long - LONG_MODULES)}"
    assert LONG_MODULES <= long, f"no longer over 400 lines, take them off LONG_MODULES: {sorted(LONG_MODULES - long)}"


def test_no_class_of_the_package_is_over_150_lines():
    long = {f"{path.relative_to(ROOT).as_posix()}:{node.name}": node.end_lineno - node.lineno + 1
            for path in (ROOT / "autograder").rglob("*.py")
            for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.ClassDef) and node.end_lineno - node.lineno + 1 > 150}
    assert not long, f"classes over 150 lines, split them by job: {long}"

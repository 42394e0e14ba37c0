"""The course as a package: what ``python -m build`` makes works outside the checkout.

A classroom image installs the course with ``pip install`` (no editable install, no
checkout): the wheel must hold every module and every file the toolkit reads at run time,
declare what it imports, and give the instructor a command. Here the wheel is built from a
copy of the package's sources, installed into a new virtual environment in a temporary
folder, and used from there: a learner's self-check, and the grading command.

The new environment is the course's Python with nothing installed but the wheel. Its
third-party packages (Spark's 400 MB among them) are not installed again: a ``.pth`` file
puts the course venv's site-packages after its own. That folder holds no ``autograder``
(the checkout's is installed in editable mode, through an import hook that only a site
folder's own ``.pth`` files load), and every test checks that ``autograder`` comes from the
new environment.
"""
from __future__ import annotations

import ast
import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import textwrap
import tomllib
import zipfile
from pathlib import Path

import nbformat
import pytest
from packaging.requirements import Requirement

from autograder.grading import REPOSITORY
from corpora.submissions import PER_BATCH, solved_release

PACKAGE = REPOSITORY / "autograder"
PROJECT = tomllib.loads((REPOSITORY / "pyproject.toml").read_text())["project"]


def third_party_imports(folder: Path) -> set[str]:
    """The top-level modules the package's code imports that are neither Python's own nor
    the package itself."""
    names = set()
    for source in folder.rglob("*.py"):
        for node in ast.walk(ast.parse(source.read_text())):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
    return names - set(sys.stdlib_module_names) - {"autograder", "__future__"}


def test_the_package_declares_every_package_it_imports():
    declared = {Requirement(spec).name.lower() for spec in PROJECT["dependencies"]}
    providers = importlib.metadata.packages_distributions()
    undeclared = {module: providers.get(module) for module in third_party_imports(PACKAGE)
                  if not {d.lower() for d in providers.get(module, [])} & declared}
    assert not undeclared, f"imported by autograder/ but not in pyproject.toml: {undeclared}"


# -- the wheel, installed outside the checkout --------------------------------------------------
@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel ``python -m build`` makes (through the sdist, as PyPI's users get it),
    built from a copy of the sources so that no build folder lands in the checkout."""
    work = tmp_path_factory.mktemp("build")
    source = work / "source"
    shutil.copytree(PACKAGE, source / "autograder",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name in ("pyproject.toml", "LICENSE"):
        shutil.copy(REPOSITORY / name, source / name)
    subprocess.run([sys.executable, "-m", "build", "--outdir", str(work / "dist"), str(source)],
                   check=True, capture_output=True, timeout=300)
    (built,) = (work / "dist").glob("*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """A new virtual environment, outside the checkout, with the wheel installed: its
    ``bin`` folder."""
    venv = tmp_path_factory.mktemp("installed") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet",
                    "--no-deps", "--no-index", str(wheel)], check=True, timeout=300)
    own = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                         check=True, capture_output=True, text=True).stdout.strip()
    Path(own, "course-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return venv / "bin"


def run_in(bin_dir: Path, args: list, cwd: Path, *, extra_env: dict | None = None,
           timeout: float = 300) -> subprocess.CompletedProcess:
    """A command of the new environment, started in a folder outside the checkout."""
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1",
           "PATH": os.pathsep.join([str(bin_dir), os.environ.get("PATH", "")])}
    for name in ("PYTHONPATH", "VIRTUAL_ENV", "SPARK_REMOTE"):
        env.pop(name, None)
    env.update(extra_env or {})
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)


@pytest.mark.slow
def test_the_wheel_holds_every_module_and_every_file_the_toolkit_reads(wheel):
    with zipfile.ZipFile(wheel) as archive:
        shipped = set(archive.namelist())
    wanted = {path.relative_to(REPOSITORY).as_posix() for path in PACKAGE.rglob("*")
              if path.is_file() and "__pycache__" not in path.parts}
    assert {"autograder/grading/cli.py", "autograder/checks/known_answers.json",
            "autograder/toolkit/log4j2.properties"} <= wanted
    assert wanted <= shipped, f"missing from the wheel: {sorted(wanted - shipped)}"
    metadata = next(name for name in shipped if name.endswith(".dist-info/METADATA"))
    with zipfile.ZipFile(wheel) as archive:
        lines = archive.read(metadata).decode().splitlines()
    assert "License-Expression: Apache-2.0" in lines
    assert "Requires-Python: >=3.11" in lines


@pytest.mark.slow
def test_the_installed_package_is_the_wheel_and_its_requirements_are_met(installed, tmp_path):
    found = run_in(installed, ["python", "-c", "import autograder.grading.cli, autograder; "
                                               "print(autograder.__file__)"], tmp_path)
    assert found.returncode == 0, found.stderr
    assert Path(found.stdout.strip()).is_relative_to(installed.parent), found.stdout
    # The course's pinned packages satisfy what the wheel declares.
    check = subprocess.run([sys.executable, "-m", "pip", "--python", str(installed / "python"),
                            "check"], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr


@pytest.mark.slow
def test_a_self_check_runs_from_the_installed_package(installed, tmp_path):
    """Chapter 1's first self-check with the solution, then with a classic mistake: the
    worked example's answer comes from the wheel's known_answers.json (no query runs)."""
    cells = {cell.metadata.get("nbgrader", {}).get("grade_id"): cell.source
             for cell in solved_release("01_global_limit").cells}
    script = "\n".join([
        "import json",
        "from autograder.checks import answers",
        "from autograder.checks.feedback import CheckFailed",
        "from autograder.chapters.global_limit import check_predicted_output",
        cells["predict_emitted"],
        cells["test_predict_emitted"],
        PER_BATCH["predict_emitted"],
        "try:",
        textwrap.indent(cells["test_predict_emitted"], "    "),
        "except CheckFailed as failure:",
        "    print('FAILED:', failure.what)",
        "print(json.dumps({'known': str(answers.KNOWN_ANSWERS_FILE), 'asked': list(answers._asked)}))",
    ])
    ran = run_in(installed, ["python", "-c", script], tmp_path)
    assert ran.returncode == 0, ran.stderr
    *printed, facts = ran.stdout.strip().splitlines()
    assert printed[0].startswith("✔ the emitted rows match Spark"), ran.stdout
    assert printed[-1] == "FAILED: rows emitted by this micro-batch", ran.stdout
    facts = json.loads(facts)
    assert Path(facts["known"]).is_relative_to(installed.parent)
    assert facts["asked"] == [], "a worked example's answer should be known, not asked of Spark"


@pytest.mark.slow
def test_the_grading_command_is_installed_under_a_name(installed, tmp_path):
    helped = run_in(installed, ["state-store-course", "grade", "--help"], tmp_path)
    assert helped.returncode == 0, helped.stderr
    assert helped.stdout.startswith("usage: state-store-course grade"), helped.stdout
    assert "--repository" in helped.stdout
    # Outside a course folder, it says where it looked and what to do.
    lost = run_in(installed, ["state-store-course", "grade", "01_global_limit",
                              "--submissions", str(tmp_path)], tmp_path)
    assert lost.returncode == 2
    assert f"no solutions/ folder in {tmp_path}" in lost.stderr


@pytest.mark.slow
def test_the_installed_command_grades_a_notebook_in_a_course_folder(installed, tmp_path):
    """The instructor's loop from the installed package, in a course folder of its own: a
    learner's untouched chapter 3 notebook, graded through nbgrader on the package's
    Spark Connect server, scores zero with the course's lesson in each test cell.

    The untouched release keeps this under half a minute: each check stops at the stub
    before any query (a notebook that solves tasks runs Spark's queries too: chapter 3's
    solution takes over a minute, one solved task about 50 s, on a busy machine)."""
    course = tmp_path / "course"
    shutil.copytree(REPOSITORY / "solutions" / "03_state_store_save",
                    course / "solutions" / "03_state_store_save")
    release, = (REPOSITORY / "exercises" / "03_state_store_save").glob("*.ipynb")
    submitted = course / "submitted" / "ada" / "03_state_store_save"
    submitted.mkdir(parents=True)
    shutil.copy(release, submitted / release.name)
    # What a real install puts in the new environment itself, and the .pth does not: the
    # dependencies' commands (nbgrader runs `alembic`) and their Jupyter data (nbconvert's
    # templates, for the feedback).
    env = {"PATH": os.pathsep.join([str(installed), os.environ["PATH"],
                                    str(Path(sys.executable).parent)]),
           "JUPYTER_PATH": str(Path(sys.prefix) / "share" / "jupyter")}
    graded = run_in(installed, ["state-store-course", "grade", "03_state_store_save",
                                "--submissions", "submitted", "--jobs", "1",
                                "--streams-per-notebook"], course, extra_env=env)
    assert graded.returncode == 0, graded.stderr
    work = course / ".course-work" / "classroom"
    assert (work / "grades.csv").read_text().splitlines()[1:] == [
        "03_state_store_save,,,ada,,,,0.0,0.0,0.0,10.0"]
    notebook = nbformat.read(work / "autograded" / "ada" / "03_state_store_save" / release.name, 4)
    lessons = [output.get("evalue", "") for cell in notebook.cells
               if cell.get("metadata", {}).get("nbgrader", {}).get("grade")
               for output in cell.get("outputs", [])]
    assert len(lessons) == 4 and all(lesson.startswith("task not done yet") for lesson in lessons), \
        lessons
    assert (work / "feedback" / "ada" / "03_state_store_save" / "03_state_store_save.html").exists()

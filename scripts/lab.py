"""Start JupyterLab from the course's .venv, set up for a learner or for an instructor.

    python -m scripts.lab learner [--root DIR] [jupyter lab options]      (make lab)
    python -m scripts.lab instructor [--root DIR] [jupyter lab options]   (make lab-instructor)

``--root`` serves another folder laid out like the repository (the tests use a copy of
the exercises); by default, the repository itself.

Both listen on 127.0.0.1 only and add ``--allow-root`` when run as root (JupyterLab
refuses to start as root without it). Their kernels import this checkout's
``autograder``. What each role sees is described in lab/README.md.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: The config folder that hides nbgrader's instructor tools from a learner.
LEARNER_CONFIG = ROOT / "lab" / "learner"
#: Where JupyterLab's file browser opens, per role (relative to the repository's top).
OPENS_IN = {"learner": "exercises", "instructor": ""}


def lab_command(role: str, options: list[str], root: Path = ROOT) -> list[str]:
    """The command line that starts JupyterLab for ``role`` on ``root``, ``options`` last."""
    command = [sys.executable, "-m", "jupyterlab", "--ServerApp.ip=127.0.0.1",
               f"--ServerApp.root_dir={root}", f"--ContentsManager.preferred_dir={OPENS_IN[role]}"]
    if os.geteuid() == 0:
        command.append("--allow-root")
    return command + options


def lab_environment(role: str, environ: dict[str, str]) -> dict[str, str]:
    """``environ`` plus what ``role`` needs: the learner's config folder on Jupyter's config
    path, and this checkout first on the kernels' ``PYTHONPATH``."""
    def first(path: Path, variable: str) -> str:
        return os.pathsep.join(filter(None, [str(path), environ.get(variable)]))

    env = dict(environ, PYTHONPATH=first(ROOT, "PYTHONPATH"))
    if role == "learner":
        env["JUPYTER_CONFIG_PATH"] = first(LEARNER_CONFIG, "JUPYTER_CONFIG_PATH")
    return env


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("role", choices=sorted(OPENS_IN))
    parser.add_argument("--root", type=Path, default=ROOT,
                        help="the folder to serve (default: the repository)")
    arguments, options = parser.parse_known_args(argv)
    command = lab_command(arguments.role, options, arguments.root.resolve())
    os.chdir(ROOT)  # nbgrader's Validate and Formgrader read nbgrader_config.py from here
    os.execve(command[0], command, lab_environment(arguments.role, dict(os.environ)))


if __name__ == "__main__":
    main(sys.argv[1:])

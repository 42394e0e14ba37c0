"""Installs that stay the same: requirements.lock holds the full set of packages the course's
pins resolve to, and the course's environment is that set.

``requirements.txt`` says what the course asks for; ``make lock`` (pip-tools) resolves it into
``requirements.lock``, every package with its exact version; ``make env`` installs the lock.
If the first test fails, ``requirements.txt`` changed without ``make lock``; if the second
fails, the environment is not the lock's (``make env`` after the lock changed, or a package
installed by hand over a locked one).
"""
from __future__ import annotations

import importlib.metadata

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from autograder.grading import REPOSITORY


def pins(path) -> dict[str, str]:
    """``name: version`` for each ``name==version`` line of a requirements file."""
    found = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            requirement = Requirement(line)
            (specifier,) = requirement.specifier
            assert specifier.operator == "==", f"{path.name} should pin exactly: {line}"
            found[canonicalize_name(requirement.name)] = specifier.version
    return found


LOCK = pins(REPOSITORY / "requirements.lock")


def test_the_lock_holds_every_pin_of_requirements_txt_at_its_version():
    asked = pins(REPOSITORY / "requirements.txt")
    differ = {name: (version, LOCK.get(name)) for name, version in asked.items()
              if LOCK.get(name) != version}
    assert not differ, f"requirements.txt vs requirements.lock (run `make lock`): {differ}"
    # The lock is the whole resolved set, not the direct pins again.
    assert {"py4j", "jupyter-client", "pyzmq", "jsonschema-specifications"} <= set(LOCK)


def installed_version(name: str) -> str | None:
    """The version of ``name`` this Python imports (None when it is not installed)."""
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def test_the_course_environment_is_the_lock():
    differ = {name: (version, installed_version(name)) for name, version in LOCK.items()
              if installed_version(name) != version}
    assert not differ, f"locked vs installed (run `make env`): {differ}"

"""The names the chapters' modules had before the package was split into folders by concern.

Notebooks released before the split, and the submissions made from them, import
``autograder.global_limit`` and its neighbours. Each old name is a module of two lines that
makes it stand for the new one (the same module object, so that a check, a learner's patch
and the grading's guards see one module whichever name was imported); the grading's guards
read a name through :func:`current`.
"""
from __future__ import annotations

import importlib
import sys

#: Old name -> the module it stands for.
MOVED = {f"autograder.{name}": f"autograder.chapters.{name}" for name in (
    "global_limit", "aggregation_planning", "state_store_save", "transform_with_state",
    "state_store_files", "checkpoint_files", "stream_join", "stream_join_checks")}


def stand_in(old: str) -> None:
    """Make the module being imported as ``old`` the module it was moved to."""
    sys.modules[old] = importlib.import_module(MOVED[old])


def current(module: str) -> str:
    """The name a module has now, whichever of its names ``module`` is."""
    return MOVED.get(module, module)

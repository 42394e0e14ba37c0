"""A package face whose names are loaded when first used (PEP 562's module ``__getattr__``):
importing the package, or one of its modules that needs no Spark, loads nothing else."""
from __future__ import annotations

import importlib
from typing import Callable


def lazy_names(package: str, public: dict[str, str]) -> tuple[Callable, Callable]:
    """The ``__getattr__`` and ``__dir__`` of ``package`` whose ``public`` names (name ->
    the module of the package holding it) are imported when first asked for."""
    def __getattr__(name: str):
        if name in public:
            return getattr(importlib.import_module(f".{public[name]}", package), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted(set(vars(importlib.import_module(package))) | set(public))

    return __getattr__, __dir__

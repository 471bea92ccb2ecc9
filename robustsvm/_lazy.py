"""Modules imported on first use: ``from ._lazy import cvxpy as cp`` binds a stand-in for cvxpy.

CVXPY takes seconds to import; the first-order backends, the command line's ``--version`` and
``import robustsvm`` do not need it. The stand-in imports the real module the first time one
of its attributes is read (``cp.Variable``), so code written against ``cp`` runs unchanged.
"""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType
from typing import Any

__all__ = ["LazyModule", "cvxpy", "is_installed"]


class LazyModule:
    """A stand-in for the module ``name`` that imports it when an attribute is first read."""

    def __init__(self, name: str) -> None:
        self._name = name

    def _load(self) -> ModuleType:
        return importlib.import_module(self._name)

    def __getattr__(self, attribute: str) -> Any:
        if attribute.startswith("__") and attribute.endswith("__"):
            raise AttributeError(attribute)  # copy, pickle and introspection do not import the module
        return getattr(self._load(), attribute)

    def __repr__(self) -> str:
        return f"<lazy module {self._name!r}>"


def is_installed(module: str) -> bool:
    """Whether ``module`` can be imported, found without importing it."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


#: CVXPY, imported by the conic paths when first used
cvxpy = LazyModule("cvxpy")

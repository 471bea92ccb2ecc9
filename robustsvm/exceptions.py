"""Warnings and errors raised by robustsvm."""

from __future__ import annotations

__all__ = ["ConvergenceWarning", "SolverError", "UnsupportedModelError"]


class ConvergenceWarning(UserWarning):
    """A solver stopped before reaching its tolerance; the result's status says why."""


class SolverError(RuntimeError):
    """A solver failed, or proved the model infeasible or unbounded."""


class UnsupportedModelError(ValueError):
    """A backend was asked for a model outside its reach."""

"""Warnings and errors raised by robustsvm."""

from __future__ import annotations

__all__ = ["ConvergenceWarning", "DegenerateSolutionWarning", "SelectionTieWarning", "SignDirectionWarning",
           "SolverError", "UnsupportedModelError"]


class ConvergenceWarning(UserWarning):
    """A solver stopped before reaching its tolerance; the result's status says why."""


class DegenerateSolutionWarning(UserWarning):
    """A certified solution whose decision is constant on its training data: it predicts one class everywhere.

    The message names the cause, for instance a radius beyond the critical radius
    (:func:`robustsvm.critical_radius`) at which ``w = 0`` becomes optimal; ``Solution.degenerate``
    holds the report.
    """


class SignDirectionWarning(UserWarning):
    """Signs were given without ``positive_class`` on labels that do not say which class is positive.

    With labels other than {0, 1} or {−1, +1} (strings such as ``"benign"`` / ``"malignant"``, or {1, 2}),
    a +1 sign pushes towards ``classes[1]``, the larger label in sorted order: pass ``positive_class=`` to
    name the class the signs point to.
    """


class SolverError(RuntimeError):
    """A solver failed, or proved the model infeasible or unbounded."""


class UnsupportedModelError(ValueError):
    """A backend was asked for a model outside its reach."""


class SelectionTieWarning(UserWarning):
    """Several grid points share the best cross-validated score, so the score alone does not choose one.

    With imbalanced classes, accuracy often ties at the majority share: a constant classifier scores it. The
    selection prefers a point that is not constant on any fold, then grid order; a scorer that ranks the
    decisions (ROC AUC) or balanced class weights usually separate the points.
    """

"""The reduction interface shared by the duals, and what they share.

A reduction maps a normalized :class:`~robustsvm.model.Model` to a canonical
form (an :class:`~robustsvm.duals.nqp.NQP` here) and maps a solution of that
form back, in the manner of CVXPY's ``Reduction`` (``accepts`` / ``apply`` /
``invert``): :meth:`Reduction.accepts` says why a model is out of reach,
constructing the reduction applies it (its ``nqp``), and :meth:`Reduction.recover`
inverts a dual point into the model's ``(w, b)`` or kernel expansion. Every
dual value is a lower bound on the model's optimum, so
``objective(recover(v)) − dual_value(v)`` is a duality gap.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..model import Model
from .nqp import NQP

__all__ = ["Recovered", "Reduction", "loss_bounds"]


@dataclass
class Recovered:
    """The primal point of a model mapped back from a dual point by a :class:`Reduction`.

    An intermediate of a reduction (``Reduction.recover``), not a solve's outcome: a backend
    that solves through a dual puts its ``w``, ``b`` or kernel expansion into the
    :class:`~robustsvm.result.Result` it returns, which the package certifies.

    Attributes
    ----------
    w : ndarray or None
        Weights (None for kernel models).
    b : float
    dual_coef : ndarray or None
        Kernel expansion coefficients ``a_j`` over ``support_vectors``.
    support_vectors : ndarray or sparse matrix or None
    support : ndarray of int or None
        Indices (in the training data) of the support vectors.
    objective : float
        The model's objective at the recovered point.
    violation : float
        Largest constraint violation there (hard margins, signs).
    """

    w: np.ndarray | None
    b: float
    dual_coef: np.ndarray | None
    support_vectors: Any
    support: np.ndarray | None
    objective: float
    violation: float


class Reduction:
    """A dual of a model written as an NQP, with the map back.

    Subclasses implement :meth:`accepts` (reasons a model is out of reach, empty
    when it is not), build ``self.nqp`` in ``__init__(model)``, and implement
    :meth:`dual_value` and :meth:`recover`.
    """

    nqp: NQP
    #: model units per unit of the NQP objective
    scale: float = 1.0

    @classmethod
    def accepts(cls, model: Model) -> list[str]:
        raise NotImplementedError

    def dual_value(self, v: np.ndarray) -> float:
        """The model's dual objective at ``v`` (a lower bound on its optimum)."""
        return -self.scale * self.nqp.objective(v)

    def recover(self, v: np.ndarray) -> Recovered:
        raise NotImplementedError


def loss_bounds(model: Model) -> tuple[np.ndarray, np.ndarray]:
    """Upper bounds ``c`` and the extra diagonal of ``A`` for the loss.

    In the NQP variables ``v_i = c_i α_i``: the hinge box ``α ≤ 1`` becomes
    ``v ≤ c``; the squared hinge's ``−c α²/4`` becomes ``−v²/(4c)`` (a zero
    weight pins ``v_i = 0``); a hard margin has no bound.
    """
    n = model.n
    loss = model.loss
    if loss.is_constraint:
        return np.full(n, np.inf), np.zeros(n)
    coef = model.c
    if np.isfinite(loss.dual_upper):
        return coef * loss.dual_upper, np.zeros(n)
    with np.errstate(divide="ignore"):
        extra = np.where(coef > 0, 1.0 / (2.0 * np.where(coef > 0, coef, 1.0)), 0.0)
    upper = np.where(coef > 0, np.inf, 0.0)
    return upper, extra

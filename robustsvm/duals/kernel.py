"""The dual NQP of a kernel SVM (derivation: ``docs/derivations/nqp_reductions.md``).

``A = Y(K/λ + 1/μ)Y`` (+ ``diag(1/(2c))`` for the squared hinge), ``b = −1``,
``c`` = the loss weights (hinge) or ∞; ``f(x) = Σ_j (y_j α_j/λ) k(x, x_j) + yᵀα/μ``.
A free intercept adds the equality ``yᵀα = 0`` (``allow_free=True``, for
solvers that take it).
"""

from __future__ import annotations

import numpy as np

from .. import objective as objective_module
from ..model import Model
from .base import Recovered, Reduction, loss_bounds
from .nqp import NQP

__all__ = ["KernelDual", "kernel_primal"]


def kernel_primal(model: Model, K: np.ndarray, coef: np.ndarray, b: float) -> tuple[float, float]:
    """Objective and violation of a kernel model at the expansion ``f = K coef + b``.

    ``K`` is the training Gram matrix and ``coef`` (n,) the expansion
    coefficients (zero off the support); the values are those of
    :func:`robustsvm.objective.kernel_scores` at the support.
    """
    coef = np.asarray(coef, dtype=np.float64)
    support = np.flatnonzero(coef)
    sv = model.X[support]
    return objective_module.kernel_scores(model, coef[support], sv, b)[:2]


class KernelDual(Reduction):
    """The dual NQP of a kernel SVM (hinge, squared hinge or hard margin).

    ``A = Y(K/λ + [μ>0]/μ)Y + diag(e)``, ``b = −1``, ``c`` from the loss
    (``e_i = 1/(2c_i)`` for the squared hinge). The model's dual value is
    ``−F(α)``.

    With ``allow_free=True`` a free intercept is accepted: the dual is then the
    NQP (without the ``1/μ`` term) plus the equality ``equality·α = 0``
    (``equality = y``), and ``b`` is the multiplier of that equality, passed
    to :meth:`recover`.
    """

    @classmethod
    def accepts(cls, model: Model, *, allow_free: bool = False) -> list[str]:
        """Why ``model`` has no kernel dual NQP (empty when it has one)."""
        reasons = []
        if model.kernel is None:
            reasons.append("KernelDual needs a kernel model")
        if model.l1 > 0 or model.l2 <= 0:
            reasons.append("the kernel dual needs an L2 penalty of positive strength and no L1 term")
        if model.layout is not None or model.has_signs:
            reasons.append("kernel models have no uncertainty sets and no sign constraints")
        if model.intercept.free and not allow_free:
            reasons.append("a free intercept adds the equality y·α = 0 to the dual, which the NQP cannot express: "
                           "pass allow_free=True to a solver that takes it")
        return reasons

    def __init__(self, model: Model, *, allow_free: bool = False) -> None:
        reasons = self.accepts(model, allow_free=allow_free)
        if reasons:
            raise ValueError("; ".join(reasons))
        self.model = model
        self.lam = model.l2
        self.mu = model.intercept.mu if model.intercept.mode == "ridge" else None
        self.free = model.intercept.free
        self.equality = model.y.copy() if self.free else None
        self.K = model.kernel(model.X)
        Kt = self.K / self.lam
        if self.mu is not None:
            Kt = Kt + 1.0 / self.mu
        upper, extra = loss_bounds(model)
        A = (model.y[:, None] * Kt) * model.y[None, :]
        A[np.diag_indices_from(A)] += extra
        self.nqp = NQP(0.5 * (A + A.T), -np.ones(model.n), upper)
        self.scale = 1.0


    def recover(self, v: np.ndarray, *, threshold: float = 0.0, b: float | None = None) -> Recovered:
        """``a = y∘α/λ`` over ``α_j > threshold``, ``b = yᵀα/μ`` (0 without intercept).

        For a free intercept ``b`` is required: the multiplier of ``yᵀα = 0``.
        """
        v = np.asarray(v, dtype=np.float64)
        y = self.model.y
        coef = y * v / self.lam
        if self.free:
            if b is None:
                raise ValueError("a free intercept is the multiplier of y·α = 0: pass b")
            b = float(b)
        else:
            b = float(y @ v) / self.mu if self.mu is not None else 0.0
        support = np.flatnonzero(v > threshold)
        sv = self.model.X[support]
        objective, violation, _ = objective_module.kernel_scores(self.model, coef[support], sv, b)
        return Recovered(w=None, b=b, dual_coef=coef[support], support_vectors=sv,
                         support=support, objective=objective, violation=violation)

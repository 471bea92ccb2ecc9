"""Shared numerics of the first-order hinge backends (Frank-Wolfe, Pegasos).

Products with the design matrix and its transpose for dense arrays and CSR
matrices at O(nnz), the projection onto the sign-constrained set, the exact
optimal intercept of a fixed ``w``, and the model check both backends share.

The ridge-penalized intercept ``(mu/2) b²`` is handled by augmenting every
sample with a constant feature ``κ = sqrt(λ/mu)`` whose (free) weight ``ω``
gives ``b = κ ω``: then ``(λ/2) ω² = (mu/2) b²`` and ``x·w + b = [x, κ]·[w, ω]``,
so the augmented model without intercept is exactly the original one. The
constant column is applied implicitly (no copy of ``X``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..model import Model
from ..objective import objective_from_margins, optimal_intercept
from .registry import Needs

__all__ = ["HINGE_L2_NEEDS", "Design", "HingeModel", "hinge_model", "optimal_intercept", "project_signs"]


def project_signs(v: np.ndarray, signs: np.ndarray) -> np.ndarray:
    """Euclidean projection onto ``S = {w : s_h w_h ≥ 0}``.

    ``Π_S(v)_h = v_h`` for free features (``s_h = 0``), ``max(v_h, 0)`` for
    ``s_h = +1`` and ``min(v_h, 0)`` for ``s_h = −1``. The result satisfies the
    constraints exactly (``s_h Π_S(v)_h ≥ 0`` in floating point).
    """
    out = v.copy()
    out[signs * v < 0] = 0.0
    return out


class Design:
    """The design matrix ``X`` (n × d, dense or CSR), optionally with a constant column ``κ``.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix of shape (n, d)
    constant : float, optional
        When given, the operator is ``[X, κ·1]`` of shape (n, d + 1).
    """

    def __init__(self, X, constant: float | None = None) -> None:
        if sp.issparse(X):
            X = sp.csr_matrix(X)
        self.X = X
        self.constant = None if constant is None else float(constant)
        self.n = X.shape[0]
        self.d_data = X.shape[1]
        self.d = self.d_data + (0 if constant is None else 1)

    def matvec(self, w: np.ndarray) -> np.ndarray:
        """``z = X w`` (plus ``κ w_{d+1}`` with the constant column), O(nnz)."""
        z = np.asarray(self.X @ w[: self.d_data]).ravel()
        if self.constant is not None:
            z = z + self.constant * w[-1]
        return z

    def rmatvec(self, r: np.ndarray) -> np.ndarray:
        """``Xᵀ r`` (with ``κ Σ r`` appended for the constant column), O(nnz).

        ``r`` may be a vector (n,) or a matrix (n, k): each column is multiplied.
        """
        g = np.asarray(self.X.T @ r)
        if r.ndim == 1:
            g = g.ravel()
        if self.constant is not None:
            g = np.concatenate([g, self.constant * np.sum(r, axis=0, keepdims=True)], axis=0)
        return g

    def rows(self, index: np.ndarray) -> Design:
        """The operator restricted to the rows ``index`` (a copy of those rows only)."""
        return Design(self.X[index], self.constant)

    def row_norm_max(self) -> float:
        """``R = max_i ‖x_i‖`` (of the augmented rows with the constant column)."""
        if sp.issparse(self.X):
            sq = np.asarray(self.X.multiply(self.X).sum(axis=1)).ravel()
        else:
            sq = np.einsum("ij,ij->i", self.X, self.X)
        if self.constant is not None:
            sq = sq + self.constant**2
        return float(np.sqrt(sq.max()))


@dataclass
class HingeModel:
    """The hinge + L2 model as the first-order backends see it.

    ``P(w, b) = (λ/2)‖w‖² + Σ_i c_i max(0, 1 − y_i(x_i·w + b))`` over ``w ∈ S``,
    with ``b`` free (``free_intercept``) or absent; a ridge intercept is folded
    into ``design`` as a constant column (see the module docstring).
    """

    design: Design
    y: np.ndarray
    c: np.ndarray
    signs: np.ndarray
    lam: float
    free_intercept: bool
    kappa: float | None
    model: Model

    def split(self, w_ext: np.ndarray, b: float) -> tuple[np.ndarray, float]:
        """``(w, b)`` of the original model from the internal variables."""
        if self.kappa is None:
            return w_ext.copy(), float(b)
        return w_ext[:-1].copy(), float(self.kappa * w_ext[-1])

    def primal(self, w: np.ndarray, margins: np.ndarray) -> float:
        """The model's objective at the internal ``w`` from precomputed margins ``m``.

        ``(λ/2)‖w‖² + (μ/2)b² + Σ c_i max(0, 1 − m_i)`` with ``(w, b)`` from
        :meth:`split` (a free intercept adds no term), evaluated by
        :func:`robustsvm.objective.objective_from_margins`.
        """
        w_model, b = self.split(w, 0.0)
        return objective_from_margins(self.model, w_model, b, margins)


def hinge_model(model: Model) -> HingeModel:
    """Build the :class:`HingeModel` of a normalized model inside :data:`HINGE_L2_NEEDS`."""
    lam = model.l2
    signs = model.signs.astype(np.float64)
    kappa = None
    if model.intercept.mode == "ridge":
        kappa = float(np.sqrt(lam / model.intercept.mu))
        signs = np.append(signs, 0.0)
    design = Design(model.X, kappa)
    return HingeModel(design=design, y=model.y, c=model.c, signs=signs, lam=lam,
                      free_intercept=model.intercept.free, kappa=kappa, model=model)


#: what the first-order hinge backends (Frank-Wolfe, Pegasos) solve
HINGE_L2_NEEDS = Needs(
    losses=frozenset({"hinge"}),
    l2="required",
    l1=False,
    sets=(),
    why={"l1": "the dual needs a pure L2 penalty"},
)

"""The dual of Woolnough et al.'s pq-SVM and the parameters of a pq-SVM model.

``min_{u ≥ 0} ½uᵀQu − ηᵀu`` with ``Q = diag(1/(ν s), 0) + B Bᵀ`` applied
through its factors (derivation: ``docs/derivations/pq_dual.md``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..model import Model, summarize
from ..objective import objective_from_margins
from ..uncertainty import Box
from .base import Recovered, Reduction
from .nqp import NQP

__all__ = ["PQDual", "PQParameters", "pq_parameters", "pq_reasons"]


def pq_reasons(problem) -> list[str]:
    """Why ``problem`` is not a pq-SVM model (empty when it is one).

    ``problem`` is a :class:`~robustsvm.model.ModelSummary` (or anything with its attributes: a ``Problem``);
    :meth:`PQDual.accepts`, :func:`pq_parameters` and the ``m3``/``pq`` declarations all ask this function."""
    reasons = []
    loss = problem.loss
    if not (loss.name == "squared_hinge" and loss.reduction == "sum"):
        reasons.append("the pq-SVM needs loss=SquaredHinge(reduction='sum')")
    pen = problem.penalty
    if pen.l1 > 0:
        reasons.append("the pq-SVM has no L1 penalty")
    if pen.l2 <= 0:
        reasons.append("the pq-SVM needs an L2 penalty with positive strength")
    if problem.intercept_term.mode != "ridge":
        reasons.append("the pq-SVM needs a regularized intercept intercept=rs.L2(mu) with mu > 0")
    if not isinstance(problem.uncertainty, Box):
        reasons.append("the pq-SVM needs one rs.Box uncertainty set (scalar or per-sample radius)")
    if problem.has_signs:
        reasons.append("the pq-SVM has no sign constraints")
    if problem.kernel is not None:
        reasons.append("the pq-SVM is linear (no kernel)")
    return reasons


@dataclass(frozen=True)
class PQParameters:
    """``(ν, λ2)`` and the per-sample data of a pq-SVM model.

    ``nu = 2/μ``, ``lam2 = λ2'/μ`` for the model's ``L2(λ2')`` penalty and
    ``L2(μ)`` intercept; ``radius`` (n,), ``widths`` (d,) and the sample
    weights ``weight`` (n,) (the squared hinge terms are ``weight_i ξ_i²``).
    """

    nu: float
    lam2: float
    radius: np.ndarray
    widths: np.ndarray
    weight: np.ndarray


def pq_parameters(model) -> PQParameters:
    """Map a normalized pq-SVM model (:class:`~robustsvm.model.Model`) to :class:`PQParameters`.

    Raises
    ------
    ValueError
        When ``model`` is not of the form built by :func:`pq_svm`.
    """
    reasons = pq_reasons(summarize(model))
    if reasons:
        raise ValueError("not a pq-SVM model: see rs.pq_svm (squared hinge sum, L2, one Box, ridge intercept, "
                         "no signs): " + "; ".join(reasons))
    box = model.shared_set
    mu = model.intercept.mu
    widths = np.ones(model.d) if box.widths is None else np.asarray(box.widths, dtype=np.float64)
    return PQParameters(nu=2.0 / mu, lam2=model.l2 / mu, radius=model.layout.radius.copy(), widths=widths,
                        weight=model.c.copy())


class PQDual(Reduction):
    """The dual of the pq-SVM primal, ``min_{u ≥ 0} ½uᵀQu − ηᵀu`` in ``u = (α, β_p, β_q)``.

    With ``G_p = YX − rδᵀ``, ``G_q = −YX − rδᵀ`` (m × d) and
    ``B = [[G_p/√λ2, G_q/√λ2, y], [I_2d/√λ2, 0]]``:
    ``Q = diag(1/(ν s), 0_2d) + BBᵀ``, ``η = (1_m, 0_2d)``. ``Q`` is applied as
    ``D u + B(Bᵀu)`` in O(nnz(X) + m + d) and never formed; ``Q⁻¹η`` comes from
    block elimination (its Schur complement is ``diag(1/(νs)) + yyᵀ``).
    Recovery: ``p = (G_pᵀα + β_p)⁺/λ2``, ``q = (G_qᵀα + β_q)⁺/λ2``,
    ``w = p − q``, ``b = yᵀα``. Derivation: ``docs/derivations/pq_dual.md``.

    Samples with zero weight are dropped (their constraint carries no cost).

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (m, d)
    y : ndarray of shape (m,), entries ±1
    params : PQParameters
    """

    def __init__(self, X: Any, y: np.ndarray, params: PQParameters, model: Model | None = None) -> None:
        keep = params.weight > 0
        self.keep = keep
        self.X = X[np.flatnonzero(keep)] if not np.all(keep) else X
        self.y = np.asarray(y, dtype=np.float64)[keep]
        self.r = np.asarray(params.radius, dtype=np.float64)[keep]
        self.delta = np.asarray(params.widths, dtype=np.float64)
        self.s = np.asarray(params.weight, dtype=np.float64)[keep]
        self.nu = float(params.nu)
        self.lam2 = float(params.lam2)
        self.m, self.d = self.X.shape
        self.model = model
        self.scale = 2.0 / self.nu
        self._nqp: NQP | None = None

    @classmethod
    def accepts(cls, model: Model) -> list[str]:
        """Why ``model`` is not a pq-SVM model (empty when it is one): :func:`pq_reasons` of its summary."""
        return pq_reasons(summarize(model))

    @classmethod
    def from_model(cls, model: Model) -> PQDual:
        """Build the dual of a normalized model of the form made by :func:`~robustsvm.pq_model.pq_svm`."""
        return cls(model.X, model.y, pq_parameters(model), model=model)

    @property
    def size(self) -> int:
        return self.m + 2 * self.d

    @property
    def dinv(self) -> np.ndarray:
        """The diagonal ``1/(ν s_i)`` of the α block of ``D``."""
        return 1.0 / (self.nu * self.s)

    def Bt(self, u: np.ndarray) -> np.ndarray:  # noqa: N802 - matrix name
        """``Bᵀu = ((G_pᵀα + β_p)/√λ2, (G_qᵀα + β_q)/√λ2, yᵀα)``, O(nnz(X) + m + d)."""
        m, d = self.m, self.d
        alpha = u[:m]
        t = np.asarray(self.X.T @ (self.y * alpha)).ravel()
        rho = float(self.r @ alpha)
        sl = 1.0 / np.sqrt(self.lam2)
        zp = (t - rho * self.delta + u[m:m + d]) * sl
        zq = (-t - rho * self.delta + u[m + d:]) * sl
        return np.concatenate([zp, zq, [float(self.y @ alpha)]])

    def B(self, z: np.ndarray) -> np.ndarray:  # noqa: N802 - matrix name
        """``B z`` for ``z = (z_p, z_q, z_b)``, O(nnz(X) + m + d)."""
        d = self.d
        zp, zq, zb = z[:d], z[d:2 * d], z[2 * d]
        sl = 1.0 / np.sqrt(self.lam2)
        top = (self.y * np.asarray(self.X @ (zp - zq)).ravel() - self.r * float(self.delta @ (zp + zq))) * sl
        top += self.y * zb
        return np.concatenate([top, zp * sl, zq * sl])

    def matvec(self, u: np.ndarray) -> np.ndarray:
        """``Q u = D u + B(Bᵀu)``."""
        out = self.B(self.Bt(u))
        out[:self.m] += self.dinv * u[:self.m]
        return out

    @property
    def eta(self) -> np.ndarray:
        return np.concatenate([np.ones(self.m), np.zeros(2 * self.d)])

    def solve_eta(self) -> np.ndarray:
        """``Q⁻¹η`` by block elimination (no m × m system).

        ``Q_ββ = I/λ2`` gives ``β = −(G_pᵀα, G_qᵀα)`` and the Schur complement
        ``S = diag(1/(νs)) + yyᵀ`` in α, inverted by Sherman–Morrison:
        ``α = D₁1 − D₁y (yᵀD₁1)/(1 + yᵀD₁y)``, ``D₁ = diag(νs)``.
        """
        D1 = self.nu * self.s
        alpha = D1 - D1 * self.y * (float(self.y @ D1) / (1.0 + float(self.y @ (D1 * self.y))))
        t = np.asarray(self.X.T @ (self.y * alpha)).ravel()
        rho = float(self.r @ alpha)
        beta_p = -(t - rho * self.delta)
        beta_q = -(-t - rho * self.delta)
        return np.concatenate([alpha, beta_p, beta_q])

    def to_nqp(self) -> NQP:
        """The dual as an :class:`NQP` with the explicit factor ``B`` (O((m + d)·d) memory).

        Forms ``G_p`` and ``G_q`` (dense m × d): used to hand the same dual to
        M3 and to CVXPY; the pq backend itself only uses :meth:`matvec`.
        """
        if self._nqp is None:
            m, d = self.m, self.d
            X = self.X.toarray() if sp.issparse(self.X) else np.asarray(self.X)
            YX = self.y[:, None] * X
            rd = np.outer(self.r, self.delta)
            sl = 1.0 / np.sqrt(self.lam2)
            F = np.zeros((m + 2 * d, 2 * d + 1))
            F[:m, :d] = (YX - rd) * sl
            F[:m, d:2 * d] = (-YX - rd) * sl
            F[:m, 2 * d] = self.y
            F[m:, :2 * d] = np.eye(2 * d) * sl
            diag = np.concatenate([self.dinv, np.zeros(2 * d)])
            self._nqp = NQP(b=-self.eta, factor=F, diag=diag)
        return self._nqp

    @property
    def nqp(self) -> NQP:
        return self.to_nqp()

    # ----------------------------------------------------------- values
    def pq_dual_value(self, u: np.ndarray, Qu: np.ndarray | None = None, *, Btu: np.ndarray | None = None) -> float:
        """``ηᵀu − ½uᵀQu``: the pq primal's dual objective.

        With ``Btu = Bᵀu`` given, ``uᵀQu = ‖Bᵀu‖² + Σ_i D⁻¹_i u_i²`` (the diagonal lives on the α block
        only), so only ``u[:m]`` is read: ``u`` may be that block alone.
        """
        if Btu is not None:
            alpha = u[:self.m]
            return float(alpha.sum() - 0.5 * (alpha @ (self.dinv * alpha) + Btu @ Btu))
        Qu = self.matvec(u) if Qu is None else Qu
        return float(u[:self.m].sum() - 0.5 * u @ Qu)

    def dual_value(self, u: np.ndarray) -> float:
        """The dual value in the model's units: ``(2/ν)(ηᵀu − ½uᵀQu)``."""
        return self.scale * self.pq_dual_value(u)

    def wb(self, u: np.ndarray, Btu: np.ndarray | None = None) -> tuple[np.ndarray, float]:
        """``w = p − q`` with ``p = (G_pᵀα + β_p)⁺/λ2``, ``q = (G_qᵀα + β_q)⁺/λ2``; ``b = yᵀα``."""
        z = self.Bt(u) if Btu is None else Btu
        d = self.d
        sl = 1.0 / np.sqrt(self.lam2)
        p = np.maximum(z[:d], 0.0) * sl
        q = np.maximum(z[d:2 * d], 0.0) * sl
        return p - q, float(z[2 * d])

    def robust_margins(self, w: np.ndarray, b: float) -> np.ndarray:
        """``y_i(x_i·w + b) − r_i δ·|w|`` on the kept samples."""
        return self.y * (np.asarray(self.X @ w).ravel() + b) - self.r * float(self.delta @ np.abs(w))

    def objective(self, w: np.ndarray, b: float, margins: np.ndarray | None = None) -> float:
        """The model's objective at ``(w, b)``, ``(2/ν)`` times the pq primal.

        Evaluated by :func:`robustsvm.objective.objective_from_margins` when the dual
        was built from a model (:meth:`from_model`); from :meth:`pq_primal` otherwise.
        """
        if margins is None:
            margins = self.robust_margins(w, b)
        if self.model is not None and np.all(self.keep):
            return objective_from_margins(self.model, w, b, margins)
        return self.scale * self.pq_primal(w, b, margins)

    def pq_primal(self, w: np.ndarray, b: float, margins: np.ndarray | None = None) -> float:
        """``(ν/2)Σ s_i max(0, 1 − y_i(x_i·w + b) + r_i δ·|w|)² + (λ2/2)‖w‖² + ½b²`` (the pq model's own units)."""
        if margins is None:
            margins = self.robust_margins(w, b)
        xi = np.maximum(0.0, 1.0 - margins)
        return float(0.5 * self.nu * (self.s @ xi**2) + 0.5 * self.lam2 * (w @ w) + 0.5 * b * b)

    def recover(self, u: np.ndarray) -> Recovered:
        """``(w, b)`` from ``u`` and the model's objective there (``(2/ν)`` × pq primal)."""
        w, b = self.wb(np.asarray(u, dtype=np.float64))
        return Recovered(w=w, b=b, dual_coef=None, support_vectors=None, support=None,
                         objective=self.objective(w, b), violation=0.0)

"""Reductions of models to the non-negative QP and the maps back.

Three duals are written as an :class:`~robustsvm.nqp.NQP`
``min ½vᵀAv + bᵀv, 0 ≤ v ≤ c`` (derivations: ``docs/derivations/nqp_reductions.md``
and ``docs/derivations/pq_dual.md``):

* :class:`KernelDual` — kernel SVMs ``(λ/2)‖w‖² + (μ/2)b² + Σ c_i ℓ(m_i)``:
  ``A = Y(K/λ + 1/μ)Y`` (+ ``diag(1/(2c))`` for the squared hinge), ``b = −1``,
  ``c`` = the loss weights (hinge) or ∞; ``f(x) = Σ_j (y_j α_j/λ) k(x, x_j) + yᵀα/μ``.
* :class:`LinearDual` — the sign-constrained linear SVM in ``(α, β)``:
  ``A = BBᵀ/λ + Y11ᵀY/μ (+ diag)``, ``B = [YX; S_J]``,
  ``w = (Xᵀ(y∘α) + β∘s)/λ``.
* :class:`PQDual` — the pq-SVM dual ``min_{u ≥ 0} ½uᵀQu − ηᵀu`` with
  ``Q = diag(1/(ν s), 0) + B Bᵀ`` applied through its factors.

A term ``1/μ`` is absent when the model has no intercept (``intercept=False``);
a free intercept would add the equality ``Σ y_i α_i = 0``, which is not an NQP.
Every dual's value is a lower bound on the model's objective, so
``objective(recover(v)) − dual_value(v)`` is a duality gap.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from . import objective as objective_module
from .model import Model
from .nqp import NQP
from .uncertainty import Box

__all__ = [
    "PQParameters",
    "pq_parameters",
    "pq_reasons",
    "KernelDual",
    "LinearDual",
    "PQDual",
    "Recovered",
    "dual_reasons",
    "kernel_primal",
    "reduce_model",
]


@dataclass
class Recovered:
    """A model's solution recovered from a dual point.

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


def _common_reasons(problem, *, free_intercept: bool = False) -> list[str]:
    reasons = []
    if problem.penalty.l1 > 0:
        reasons.append("the dual NQP has no L1 penalty (L1 needs the primal)")
    if problem.penalty.l2 <= 0:
        reasons.append("the dual NQP needs an L2 penalty with positive strength")
    if problem.intercept_term.mode == "free" and not free_intercept:
        reasons.append("a free intercept adds the equality Σ y_i α_i = 0 to the dual, which the NQP "
                       "0 ≤ v ≤ c cannot express: use intercept=False or intercept=rs.L2(mu)")
    return reasons


def dual_reasons(problem, *, free_intercept: bool = False) -> list[str]:
    """Why no NQP reduction applies to ``problem`` (empty when one does).

    ``free_intercept=True`` accepts kernel models with a free intercept, whose
    dual is the NQP plus the equality ``yᵀα = 0`` (for solvers that take it).
    """
    if problem.kernel is not None:
        reasons = _common_reasons(problem, free_intercept=free_intercept)
        if problem.uncertainty is not None:
            reasons.append("kernel models have no uncertainty sets")
        if problem.has_signs:
            reasons.append("kernel models have no sign constraints")
        return reasons
    if problem.uncertainty is not None:
        pq = pq_reasons(problem)
        if pq:
            return ["with uncertainty only the pq-SVM model (rs.pq_svm) has an NQP dual: " + "; ".join(pq)]
        return []
    return _common_reasons(problem)


def reduce_model(model: Model):
    """The NQP dual of a normalized ``model``: a KernelDual, LinearDual or PQDual."""
    if model.kernel is not None:
        return KernelDual(model)
    if model.layout is not None:
        return PQDual.from_model(model)
    return LinearDual(model)


def _loss_bounds(model: Model) -> tuple[np.ndarray, np.ndarray]:
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


def kernel_primal(model: Model, K: np.ndarray, coef: np.ndarray, b: float) -> tuple[float, float]:
    """Objective and violation of a kernel model at the expansion ``f = K coef + b``.

    ``K`` is the training Gram matrix and ``coef`` (n,) the expansion
    coefficients (zero off the support); the values are those of
    :func:`robustsvm.objective.kernel_objective` at the support.
    """
    coef = np.asarray(coef, dtype=np.float64)
    support = np.flatnonzero(coef)
    sv = model.X[support]
    return (objective_module.kernel_objective(model, coef[support], sv, b),
            objective_module.kernel_violation(model, coef[support], sv, b))


class KernelDual:
    """The dual NQP of a kernel SVM (hinge, squared hinge or hard margin).

    ``A = Y(K/λ + [μ>0]/μ)Y + diag(e)``, ``b = −1``, ``c`` from the loss
    (``e_i = 1/(2c_i)`` for the squared hinge). The model's dual value is
    ``−F(α)``.

    With ``allow_free=True`` a free intercept is accepted: the dual is then the
    NQP (without the ``1/μ`` term) plus the equality ``equality·α = 0``
    (``equality = y``), and ``b`` is the multiplier of that equality, passed
    to :meth:`recover`.
    """

    def __init__(self, model: Model, *, allow_free: bool = False) -> None:
        if model.kernel is None:
            raise ValueError("KernelDual needs a kernel model")
        if model.l1 > 0 or model.l2 <= 0 or model.layout is not None or model.has_signs:
            raise ValueError("KernelDual needs an L2 penalty only, no uncertainty and no signs")
        if model.intercept.free and not allow_free:
            raise ValueError("a free intercept adds the equality y·α = 0 to the dual, which the NQP cannot express: "
                             "pass allow_free=True to a solver that takes it")
        self.model = model
        self.lam = model.l2
        self.mu = model.intercept.mu if model.intercept.mode == "ridge" else None
        self.free = model.intercept.free
        self.equality = model.y.copy() if self.free else None
        self.K = model.kernel(model.X)
        Kt = self.K / self.lam
        if self.mu is not None:
            Kt = Kt + 1.0 / self.mu
        upper, extra = _loss_bounds(model)
        A = (model.y[:, None] * Kt) * model.y[None, :]
        A[np.diag_indices_from(A)] += extra
        self.nqp = NQP(0.5 * (A + A.T), -np.ones(model.n), upper)
        self.scale = 1.0

    def dual_value(self, v: np.ndarray) -> float:
        """The model's dual objective ``−F(α)`` (a lower bound on its optimum)."""
        return -self.nqp.objective(v)

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
        objective = objective_module.kernel_objective(self.model, coef[support], sv, b)
        violation = objective_module.kernel_violation(self.model, coef[support], sv, b)
        return Recovered(w=None, b=b, dual_coef=coef[support], support_vectors=sv,
                         support=support, objective=objective, violation=violation)


class LinearDual:
    """The dual NQP of a linear SVM with sign constraints, in ``(α, β)``.

    With ``J`` the sign-constrained features and ``S_J`` their rows ``s_h e_hᵀ``:
    ``A = F Fᵀ + diag(e)``, ``F = [[YX/√λ, y/√μ], [S_J/√λ, 0]]``, ``b = (−1, 0)``,
    ``c = (c_α, ∞)``; ``w = (Xᵀ(y∘α) + S_Jᵀβ)/λ``, ``b = yᵀα/μ``.
    """

    def __init__(self, model: Model) -> None:
        if model.kernel is not None or model.layout is not None:
            raise ValueError("LinearDual needs a linear model without uncertainty")
        if model.l1 > 0 or model.l2 <= 0:
            raise ValueError("LinearDual needs an L2 penalty only (positive strength, no L1)")
        if model.intercept.free:
            raise ValueError("no NQP dual for a free intercept: it adds the equality Σ y_i α_i = 0, which "
                             "0 ≤ v ≤ c cannot express (use intercept=False or intercept=rs.L2(mu))")
        self.model = model
        data = model
        self.lam = model.l2
        self.mu = model.intercept.mu if model.intercept.mode == "ridge" else None
        n, d = data.n, data.d
        self.J = np.flatnonzero(data.signs)
        nJ = self.J.size
        X, y = data.X, data.y
        sl = 1.0 / np.sqrt(self.lam)
        if sp.issparse(X):
            YX = sp.diags(y) @ X * sl
            S = sp.csr_matrix((data.signs[self.J].astype(np.float64) * sl, (np.arange(nJ), self.J)), shape=(nJ, d))
            top = [YX] + ([sp.csr_matrix(y[:, None] / np.sqrt(self.mu))] if self.mu is not None else [])
            bottom = [S] + ([sp.csr_matrix((nJ, 1))] if self.mu is not None else [])
            F = sp.vstack([sp.hstack(top), sp.hstack(bottom)]).tocsr()
        else:
            cols = d + (1 if self.mu is not None else 0)
            F = np.zeros((n + nJ, cols))
            F[:n, :d] = y[:, None] * X * sl
            if self.mu is not None:
                F[:n, d] = y / np.sqrt(self.mu)
            F[n + np.arange(nJ), self.J] = data.signs[self.J] * sl
        upper, extra = _loss_bounds(model)
        self.nqp = NQP(b=np.concatenate([-np.ones(n), np.zeros(nJ)]),
                       c=np.concatenate([upper, np.full(nJ, np.inf)]),
                       factor=F, diag=np.concatenate([extra, np.zeros(nJ)]))
        self.scale = 1.0

    def dual_value(self, v: np.ndarray) -> float:
        """The model's dual objective ``−F(α, β)``."""
        return -self.nqp.objective(v)

    def recover(self, v: np.ndarray) -> Recovered:
        """``w = (Xᵀ(y∘α) + S_Jᵀβ)/λ``, ``b = yᵀα/μ``."""
        v = np.asarray(v, dtype=np.float64)
        m = self.model
        alpha, beta = v[:m.n], v[m.n:]
        w = np.asarray(m.X.T @ (m.y * alpha)).ravel()
        w[self.J] += m.signs[self.J] * beta
        w /= self.lam
        b = float(m.y @ alpha) / self.mu if self.mu is not None else 0.0
        margins = objective_module.robust_margins(m, w, b)
        objective = objective_module.objective_from_margins(m, w, b, margins)
        violation = objective_module.violation(m, w, b, margins=margins)
        return Recovered(w=w, b=b, dual_coef=None, support_vectors=None, support=None,
                         objective=objective, violation=violation)


def pq_reasons(problem) -> list[str]:
    """Why ``problem`` is not a pq-SVM model (empty when it is one)."""
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
    box = model.shared_set
    if (model.loss.name != "squared_hinge" or model.loss.reduction != "sum" or model.l1 > 0 or model.l2 <= 0
            or model.intercept.mode != "ridge" or not isinstance(box, Box) or model.has_signs
            or model.kernel is not None):
        raise ValueError("not a pq-SVM model: see rs.pq_svm (squared hinge sum, L2, one Box, ridge intercept, "
                         "no signs)")
    mu = model.intercept.mu
    widths = np.ones(model.d) if box.widths is None else np.asarray(box.widths, dtype=np.float64)
    return PQParameters(nu=2.0 / mu, lam2=model.l2 / mu, radius=model.layout.radius.copy(), widths=widths,
                        weight=model.c.copy())


class PQDual:
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
    def pq_dual_value(self, u: np.ndarray, Qu: np.ndarray | None = None) -> float:
        """``ηᵀu − ½uᵀQu``: the pq primal's dual objective."""
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

    def pq_primal(self, w: np.ndarray, b: float) -> float:
        """``(ν/2)Σ s_i max(0, 1 − y_i(x_i·w + b) + r_i δ·|w|)² + (λ2/2)‖w‖² + ½b²``."""
        margin = self.y * (np.asarray(self.X @ w).ravel() + b) - self.r * float(self.delta @ np.abs(w))
        xi = np.maximum(0.0, 1.0 - margin)
        return float(0.5 * self.nu * (self.s @ xi**2) + 0.5 * self.lam2 * (w @ w) + 0.5 * b * b)

    def recover(self, u: np.ndarray) -> Recovered:
        """``(w, b)`` from ``u`` and the model's objective there (``(2/ν)`` × pq primal)."""
        w, b = self.wb(np.asarray(u, dtype=np.float64))
        return Recovered(w=w, b=b, dual_coef=None, support_vectors=None, support=None,
                         objective=self.scale * self.pq_primal(w, b), violation=0.0)

"""The dual NQP of the sign-constrained linear SVM in ``(α, β)``.

``A = BBᵀ/λ + Y11ᵀY/μ (+ diag)``, ``B = [YX; S_J]``, ``w = (Xᵀ(y∘α) + β∘s)/λ``
(derivation: ``docs/derivations/nqp_reductions.md``).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .. import objective as objective_module
from ..model import Model
from .base import Recovered, Reduction, loss_bounds
from .nqp import NQP

__all__ = ["LinearDual"]


class LinearDual(Reduction):
    """The dual NQP of a linear SVM with sign constraints, in ``(α, β)``.

    With ``J`` the sign-constrained features and ``S_J`` their rows ``s_h e_hᵀ``:
    ``A = F Fᵀ + diag(e)``, ``F = [[YX/√λ, y/√μ], [S_J/√λ, 0]]``, ``b = (−1, 0)``,
    ``c = (c_α, ∞)``; ``w = (Xᵀ(y∘α) + S_Jᵀβ)/λ``, ``b = yᵀα/μ``.
    """

    @classmethod
    def accepts(cls, model: Model) -> list[str]:
        """Why ``model`` has no sign-constrained linear dual NQP (empty when it has one)."""
        reasons = []
        if model.kernel is not None or model.layout is not None:
            reasons.append("LinearDual needs a linear model without uncertainty")
        if model.l1 > 0 or model.l2 <= 0:
            reasons.append("LinearDual needs an L2 penalty only (positive strength, no L1)")
        if model.intercept.free:
            reasons.append("no NQP dual for a free intercept: it adds the equality Σ y_i α_i = 0, which "
                           "0 ≤ v ≤ c cannot express (use intercept=False or intercept=rs.L2(mu))")
        return reasons

    def __init__(self, model: Model) -> None:
        reasons = self.accepts(model)
        if reasons:
            raise ValueError("; ".join(reasons))
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
        upper, extra = loss_bounds(model)
        self.nqp = NQP(b=np.concatenate([-np.ones(n), np.zeros(nJ)]),
                       c=np.concatenate([upper, np.full(nJ, np.inf)]),
                       factor=F, diag=np.concatenate([extra, np.zeros(nJ)]))
        self.scale = 1.0


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

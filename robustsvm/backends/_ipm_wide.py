"""The Newton systems of the feature-space interior point (:mod:`.feature_ipm`) for wide data, by Woodbury.

When the samples are fewer than the features the normal matrix of a point,

    K = B + Gᵀ diag(1/e) G + Y Γ Yᵀ,

is a matrix ``B`` that is block-diagonal by feature (the diagonal of the objective and the barriers, and for a
2-ball the cone's ``HᵀH/β²``: one 2 × 2 block per free feature) plus a part of rank at most ``n + 2``
(the samples' rows ``G = A T_pᵀ`` and, for a 2-ball, the rank-two rest of ``Hᵀ W⁻² H``). The Woodbury identity
solves ``K x = r`` through the ``n × n`` capacitance matrix ``diag(e) + G B⁻¹ Gᵀ = diag(e) + A Q Aᵀ`` with
``Q = T_pᵀ B⁻¹ T_p`` diagonal on the features (plus the radius and intercept columns), so one iteration costs
``O(n² d + n³)`` (``O(n² nnz/n)``-like for sparse data) instead of ``O(n d² + d³)``, and the dense ``k × k``
matrix is never formed. Each solve is followed by one step of iterative refinement against ``K`` applied through
the data (two passes). The derivation is in ``docs/derivations/feature_ipm.md`` (§11).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

__all__ = ["WIDE_MIN_FEATURES", "WideFactor", "takes_wide_path"]

#: the wide path needs at least this many features (below it the dense system is as cheap and better tested)
WIDE_MIN_FEATURES = 64


def takes_wide_path(n: int, d: int, cone: str | None, robust: bool) -> bool:
    """Whether a solve on ``n`` samples and ``d`` features takes the Woodbury path: ``n < d``, ``d`` at least
    :data:`WIDE_MIN_FEATURES`, and no cone through a factor (an ellipsoid's ``MᵀLLᵀM`` is a dense ``d × d``
    matrix); ``cone`` is :attr:`.shared_set.SetDescription.cone`."""
    return n < d and d >= WIDE_MIN_FEATURES and not (robust and cone == "factor")


class WideFactor:
    """The factored capacitance matrices of the normal systems of every point of a batch (wide data).

    Parameters
    ----------
    batch : Batch
        The points (their design, layout, radius scales).
    e : ndarray of shape (P, n)
        The per-sample weights ``e_i`` of the eliminated rows (``G`` enters ``K`` as ``Gᵀ diag(1/e) G``).
    diag : ndarray of shape (P, k)
        The diagonal of ``K`` (objective and the barriers of ``u ≥ 0``).
    W : NTScaling or None
        The cone's Nesterov-Todd scaling (a 2-ball), ``None`` without a cone.
    """

    def __init__(self, batch, e: np.ndarray, diag: np.ndarray, W) -> None:
        self.batch, self.e, self.diag, self.W = batch, e, diag, W
        lay = batch.lay
        P, m = diag.shape[0], lay.m
        self.failed = np.zeros(P, dtype=bool)
        # the cone's part of B: c0 (e_t e_tᵀ + MᵀM)/β² with c0 = 1/β²
        self.c0 = np.zeros(P) if W is None else 1.0 / W.beta ** 2
        inv = 1.0 / diag[:, :m]
        s1 = self._per_feature(inv)  # Σ_{j∈h} 1/D_j
        with np.errstate(divide="ignore"):
            self.den = np.where(self.c0[:, None] > 0, 1.0 / self.c0[:, None] + s1, np.inf)  # 1/c0 + Σ 1/D_j
        self.inv = inv
        shrink = 1.0 / (1.0 + self.c0[:, None] * s1)  # 1 − s1/den without the cancellation
        coef = lay.coef[:m]
        sc = self._per_feature(inv * lay.sign * coef)  # Σ_{j∈h} s_j coef_j / D_j
        rho = batch.rscale
        self.q = s1 * shrink  # Q[h, h]
        q_hr = rho[:, None] * sc * shrink  # Q[h, r]
        q_rr = rho ** 2 * (inv @ (coef * coef) - np.sum(sc * sc / self.den, axis=1))
        if lay.cone:
            q_rr = q_rr + rho ** 2 / (diag[:, lay.t] + self.c0)
        # the intercept's diagonal is 0 when it is free: B carries δ = Σ 1/e_i there, taken back in Y Γ Yᵀ
        self.shift = np.sum(1.0 / e, axis=1) if lay.b is not None else np.zeros(P)
        q_yy = 1.0 / (diag[:, lay.b] + self.shift) if lay.b is not None else np.zeros(P)
        des = batch.design
        self.chol = []
        for p in range(P):
            Z = self._capacitance(des, self.q[p], q_hr[p], float(q_rr[p]), float(q_yy[p]), e[p])
            try:
                self.chol.append(sla.cho_factor(Z, lower=True, check_finite=True))
            except (np.linalg.LinAlgError, ValueError):
                self.failed[p] = True
                self.chol.append((np.eye(Z.shape[0]), True))
        des.counts["wide_systems"] = des.counts.get("wide_systems", 0) + P
        self.Y = self.schur = self.V = None
        if lay.cone or lay.b is not None:
            self._low_rank_part()

    def _per_feature(self, v: np.ndarray) -> np.ndarray:
        """``Σ_{j ∈ h} v_j`` over the parts ``j`` of each feature ``h``, for each row: (P, m) → (P, d)."""
        lay = self.batch.lay
        out = np.zeros((v.shape[0], lay.d))
        for p in range(v.shape[0]):
            out[p] = np.bincount(lay.feature, weights=v[p], minlength=lay.d)
        return out

    @staticmethod
    def _capacitance(des, q: np.ndarray, q_hr: np.ndarray, q_rr: float, q_yy: float, e: np.ndarray) -> np.ndarray:
        """``diag(e) + A Q Aᵀ`` with ``A = [y∘X, r, y]``: ``(y yᵀ) ∘ (X diag(q) Xᵀ) + u rᵀ + r uᵀ + q_rr r rᵀ
        + q_yy y yᵀ`` with ``u = y ∘ (X q_hr)``, in ``O(n² d)`` (dense) or by the sparse product."""
        X, y, r = des.X, des.y, des.r
        sq = np.sqrt(q)
        if des.sparse:
            Xs = sp.diags(y) @ X @ sp.diags(sq)
            Z = np.asarray((Xs @ Xs.T).todense())
        else:
            Xs = X * sq
            Xs *= y[:, None]
            Z = Xs @ Xs.T
        if np.any(q_hr != 0) and np.any(r != 0):
            u = y * np.asarray(X @ q_hr).ravel()
            Z += np.outer(u, r)
            Z += np.outer(r, u)
        if q_rr != 0:
            Z += q_rr * np.outer(r, r)
        if q_yy != 0:
            Z += q_yy * np.outer(y, y)
        Z[np.diag_indices_from(Z)] += e
        return Z

    def binv(self, v: np.ndarray) -> np.ndarray:
        """``B⁻¹ v`` for each row (P, k): per feature, Sherman-Morrison on ``diag(D) + c0 s sᵀ``; ``t`` and ``b``
        divide by their diagonal (``t``'s with ``c0`` added)."""
        lay = self.batch.lay
        m = lay.m
        with np.errstate(divide="ignore", invalid="ignore"):  # t and a free b have a zero diagonal: set below
            out = v / self.diag
        if lay.b is not None:
            out[:, lay.b] = v[:, lay.b] / (self.diag[:, lay.b] + self.shift)
        if lay.cone:
            out[:, lay.t] = v[:, lay.t] / (self.diag[:, lay.t] + self.c0)
            su = self._per_feature(lay.sign * self.inv * v[:, :m]) / self.den
            out[:, :m] -= self.inv * lay.sign * su[:, lay.feature]
        return out

    def _low_rank_part(self) -> None:
        """The small rest ``Y Γ Yᵀ`` of ``K − B − Gᵀdiag(1/e)G``: for a 2-ball the cone's rank-two part,
        ``Y = [HᵀJv, Hᵀv]``, ``Γ = [[4vᵀv, −2], [−2, 0]]/β²``; with an intercept ``−δ e_b e_bᵀ`` (the shift of
        :meth:`binv` taken back). Its block of the capacitance matrix, ``Γ⁻¹ + YᵀB⁻¹Y``, and the Schur complement
        ``S = Γ⁻¹ + YᵀB⁻¹Y − (G B⁻¹ Y)ᵀ Z⁻¹ (G B⁻¹ Y)`` (at most 3 × 3)."""
        W, lay, batch = self.W, self.batch.lay, self.batch
        P, k = self.diag.shape
        cols, blocks = [], []
        if lay.cone:
            cols += [W.Jv @ lay.H, W.v @ lay.H]
            g = np.zeros((P, 2, 2))
            g[:, 0, 0] = 4.0 * np.einsum("pi,pi->p", W.v, W.v) / W.beta ** 2
            g[:, 0, 1] = g[:, 1, 0] = -2.0 / W.beta ** 2
            blocks.append(g)
        if lay.b is not None:
            eb = np.zeros((P, k))
            eb[:, lay.b] = 1.0
            cols.append(eb)
            blocks.append(-self.shift[:, None, None])
        self.Y = np.stack(cols, axis=2)  # (P, k, ρ)
        rank = self.Y.shape[2]
        gamma = np.zeros((P, rank, rank))
        at = 0
        for g in blocks:
            gamma[:, at:at + g.shape[1], at:at + g.shape[1]] = g
            at += g.shape[1]
        by = np.stack([self.binv(self.Y[:, :, a]) for a in range(rank)], axis=2)
        z12 = np.stack([batch.g(by[:, :, a]) for a in range(rank)], axis=2)  # G B⁻¹ Y: (P, n, ρ)
        self.V = np.stack([self._chol_solve(z12[:, :, a]) for a in range(rank)], axis=2)
        z22 = np.linalg.inv(gamma) + np.einsum("pka,pkb->pab", self.Y, by)
        self.schur = z22 - np.einsum("pna,pnb->pab", z12, self.V)
        with np.errstate(invalid="ignore", over="ignore"):
            bad = ~np.all(np.isfinite(self.schur), axis=(1, 2)) | (np.linalg.det(self.schur) == 0)
        self.failed |= bad
        self.schur[bad] = np.eye(rank)

    def _chol_solve(self, v: np.ndarray) -> np.ndarray:
        """``Z_p⁻¹ v_p`` with the capacitance matrices' Cholesky factors, for each row (P, n)."""
        return np.stack([sla.cho_solve(self.chol[p], v[p], check_finite=False) for p in range(v.shape[0])])

    def _solve_once(self, rhs: np.ndarray) -> np.ndarray:
        """``K⁻¹ rhs`` by Woodbury: ``x = B⁻¹r − B⁻¹(Gᵀz₁ + Y z₂)`` with ``z`` the capacitance system's solution."""
        batch = self.batch
        y0 = self.binv(rhs)
        r1 = batch.g(y0)
        t1 = self._chol_solve(r1)
        back = None
        if self.Y is not None:
            r2 = np.einsum("pka,pk->pa", self.Y, y0)
            z2 = np.linalg.solve(self.schur, (r2 - np.einsum("pna,pn->pa", self.V, r1))[:, :, None])[:, :, 0]
            t1 = t1 - np.einsum("pna,pa->pn", self.V, z2)
            back = np.einsum("pka,pa->pk", self.Y, z2)
        corr = batch.gt(t1)
        if back is not None:
            corr = corr + back
        return y0 - self.binv(corr)

    def apply(self, x: np.ndarray) -> np.ndarray:
        """``K x = diag∘x + Gᵀ((G x)/e) + Hᵀ W⁻² H x`` through the data (two passes)."""
        batch, lay = self.batch, self.batch.lay
        out = self.diag * x + batch.gt(batch.g(x) / self.e)
        if lay.cone:
            out += self.W.apply_inverse(self.W.apply_inverse(x @ lay.H.T)) @ lay.H
        return out

    def solve(self, rhs: np.ndarray) -> np.ndarray:
        """``K_p⁻¹ rhs_p`` for every row, with one step of iterative refinement."""
        x = self._solve_once(rhs)
        return x + self._solve_once(rhs - self.apply(x))

"""The Newton systems of the feature-space interior point (:mod:`.feature_ipm`), for a batch of points.

The conic QP of one point (see :mod:`.feature_ipm`) has the variables ``x = (u, [t], [b])``, per sample the loss
``ξ_i``, the slack ``s_i`` of its margin row and the multipliers ``α_i, β_i``, the multipliers ``ν`` of ``u ≥ 0``
and ``ζ`` of the cone. :class:`Newton` eliminates the per-sample variables and factors the normal matrix
``K = Q + Gᵀ diag(1/e) G + diag(ν/u) + Hᵀ W⁻² H`` of every point of a :class:`Batch` (points that share the
data and differ in λ2, λ1 and the scale of the radii); :meth:`Newton.direction` returns the step of all the
variables for given complementarity right-hand sides. The derivation is in ``docs/derivations/feature_ipm.md``.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from . import _second_order_cone as soc
from ._ipm_design import Design
from ._ipm_kernels import (
    cho_solve_batch,
    normal_matrices,
    purified_multipliers,
    sample_complementarity,
    sample_rho,
    sample_steps,
)
from ._ipm_reduced import ReducedFactor, reduced_diagonal
from ._ipm_wide import WideFactor

__all__ = ["Batch", "Design", "Direction", "Factor", "Iterate", "Layout", "Newton", "advance", "rowdot",
           "start"]


class Layout:
    """The variables ``x = (u, [t], [b])`` and the maps of the conic QP.

    ``T`` (``k × (d+2)``) gives the constraint rows ``g_i = T a_i`` from ``a_i = (y_i x_i, r_i, y_i)``;
    ``H`` (``(q+1) × k``) gives the cone point ``(t, N u) = H x``; ``feature``/``sign`` give ``w = M u``.
    """

    def __init__(self, d: int, sg: np.ndarray, spec, mode: str, robust: bool, sparse: bool = False) -> None:
        """``spec``: the set's :class:`.shared_set.SetDescription` (``kind``, ``delta``, ``L``); ``sparse``: ``H``
        and ``T`` as CSR matrices and no ``HᵀH`` (the wide path, where ``k`` is in the thousands; a 2-ball
        only)."""
        self._args = (d, sg, spec, mode, robust)
        self._reduced = False
        feats, signs = [], []
        for h in range(d):
            if sg[h] >= 0:
                feats.append(h)
                signs.append(1.0)
            if sg[h] <= 0:
                feats.append(h)
                signs.append(-1.0)
        self.feature = np.array(feats, dtype=np.int64)
        self.sign = np.array(signs)
        self.d = d
        m = self.m = self.feature.size
        self.cone = robust and spec.cone in ("norm", "factor")
        self.t = m if self.cone else None
        self.b = (m + (1 if self.cone else 0)) if mode != "none" else None
        k = self.k = m + (1 if self.cone else 0) + (1 if mode != "none" else 0)
        # the rows as a gather: g_ij = sgn_j a_i[idx_j] + coef_j ρ r_i (ρ the point's radius scale)
        self.idx = np.zeros(k, dtype=np.int64)
        self.sgn = np.zeros(k)
        self.coef = np.zeros(k)
        self.idx[:m], self.sgn[:m] = self.feature, self.sign
        if robust and spec.cone is None:
            self.coef[:m] = -spec.delta[self.feature]
        if self.cone:
            self.coef[self.t] = -1.0
        if self.b is not None:
            self.idx[self.b], self.sgn[self.b] = d + 1, 1.0
        rows = np.arange(k)
        T = sp.coo_matrix((np.concatenate([self.sgn, self.coef]), (np.concatenate([rows, rows]),
                                                                    np.concatenate([self.idx, np.full(k, d)]))),
                          shape=(k, d + 2)).tocsr()  # duplicates (none here) would add; zeros are dropped below
        T.eliminate_zeros()
        self.T = T if sparse else T.toarray()
        self.H = None
        if self.cone and sparse:  # H = [e_t; M 0]: one entry per row
            rows = np.concatenate([[0], 1 + self.feature])
            cols = np.concatenate([[self.t], np.arange(m)])
            self.H = sp.csr_matrix((np.concatenate([[1.0], self.sign]), (rows, cols)), shape=(d + 1, k))
            self.HtH = None
        elif self.cone:
            Mmat = np.zeros((d, m))
            Mmat[self.feature, np.arange(m)] = self.sign
            N = Mmat if spec.cone == "norm" else spec.L.T @ Mmat
            H = np.zeros((N.shape[0] + 1, k))
            H[0, self.t] = 1.0
            H[1:, :m] = N
            self.H = H
            self.HtH = H.T @ H

    @property
    def reduced(self) -> Layout | None:
        """The layout with one part per feature (every free sign made ``+1``) whose normal matrix, with the
        harmonic diagonal of :mod:`._ipm_reduced`, gives this one's solves; ``None`` when no feature is free or
        a part has a radius coefficient (a box: the pair's sum then reaches the data)."""
        if self._reduced is False:
            d, sg, spec, mode, robust = self._args
            plain = self.m > d and not np.any(self.coef[:self.m]) and not sp.issparse(self.T)
            self._reduced = Layout(d, np.where(np.asarray(sg) == 0, 1, sg), spec, mode, robust) if plain else None
        return self._reduced

    def weights(self, x: np.ndarray) -> np.ndarray:
        """``w = M u``."""
        w = np.zeros(self.d)
        np.add.at(w, self.feature, self.sign * x[:self.m])
        return w


class Iterate:
    """The primal-dual points of a batch, one row per point: ``x``; per sample ``ξ, s`` and multipliers
    ``α, β``; ``ν`` of ``u ≥ 0``; ``ζ`` of the cone; the maintained products ``G x`` and ``Gᵀα``."""

    __slots__ = ("alpha", "beta", "gta", "gx", "nu", "s", "x", "xi", "zeta")

    def take(self, rows) -> Iterate:
        out = Iterate()
        for name in Iterate.__slots__:
            value = getattr(self, name)
            setattr(out, name, None if value is None else value[rows])
        return out

    def zero(self, rows) -> None:
        """Set the rows ``rows`` of every array to 0 (a step that must not move those points)."""
        for name in Iterate.__slots__:
            value = getattr(self, name)
            if value is not None:
                value[rows] = 0.0

    def put(self, rows, part: Iterate) -> None:
        for name in Iterate.__slots__:
            value = getattr(self, name)
            if value is not None:
                value[rows] = getattr(part, name)


class Direction(Iterate):
    """A Newton direction: the steps of every variable of an :class:`Iterate`, and ``sample_step``, the largest
    step per point that keeps the per-sample variables ``s, α, ξ, β`` nonnegative."""

    __slots__ = ("sample_step",)


def rowdot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.einsum("pi,pi->p", a, b)


def _step_to_boundary(pairs) -> np.ndarray:
    """Per row, the largest ``a`` with every ``v + a dv ≥ 0`` (∞ when no component decreases)."""
    out = None
    for v, dv in pairs:
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(dv < 0, -v / dv, np.inf)
        best = ratio.min(axis=1) if ratio.shape[1] else np.full(ratio.shape[0], np.inf)
        out = best if out is None else np.minimum(out, best)
    return out


class Batch:
    """The conic QPs of ``P`` points sharing the data: per point λ2, λ1 and the scale of the radii.

    Point ``p``'s constraint rows are ``g_i = T_p a_i`` with ``T_p`` the layout's ``T`` whose radius column is
    scaled by ``ρ_p`` (never formed: the products scale that column); ``qdiag`` and ``f`` are the quadratic and
    linear costs of ``x``; ``H`` is the cone map (shared).
    """

    def __init__(self, design: Design, layout: Layout, c: np.ndarray, lam2: np.ndarray, lam1: np.ndarray,
                 rscale: np.ndarray, mu_b: float, mode: str, squared: bool, wide: bool = False) -> None:
        """``wide``: the Newton systems by Woodbury (:mod:`._ipm_wide`) instead of a dense factorization."""
        self.design, self.lay, self.c, self.squared, self.wide = design, layout, c, squared, wide
        P, k, m = lam2.size, layout.k, layout.m
        self.rscale = rscale
        self.qdiag = np.zeros((P, k))
        self.qdiag[:, :m] = lam2[:, None]
        if mode == "ridge":
            self.qdiag[:, layout.b] = mu_b
        self.f = np.zeros((P, k))
        self.f[:, :m] = lam1[:, None]
        self.degree = c.size * (1 if squared else 2) + m + (1 if layout.cone else 0)

    def take(self, rows) -> Batch:
        out = object.__new__(Batch)
        out.__dict__.update(self.__dict__)
        out.qdiag, out.f, out.rscale = self.qdiag[rows], self.f[rows], self.rscale[rows]
        return out

    def normal_matrices(self, C: np.ndarray, diag: np.ndarray, layout: Layout | None = None) -> np.ndarray:
        """``T_p C_p T_pᵀ + diag(diag_p)`` for every point from the flattened upper triangles ``C`` of
        :meth:`Design.gram`, by gathering entries (O(k²) per point, no products).

        With ``g_ij = sgn_j a_i[idx_j] + ρ coef_j r_i`` (see :class:`Layout`), the entry ``(j, l)`` is
        ``sgn_j sgn_l C[idx_j, idx_l] + ρ (sgn_j coef_l C[idx_j, r] + coef_j sgn_l C[r, idx_l])
        + ρ² coef_j coef_l C[r, r]``. ``layout``: another layout of the same data (the reduced one).
        """
        lay = self.lay if layout is None else layout
        if getattr(lay, "_gather", None) is None:  # the Gram positions of the layout's entries, once per layout
            pos = self.design.position
            lay._gather = (pos[lay.idx[:, None], lay.idx[None, :]], pos[lay.idx, lay.d], int(pos[lay.d, lay.d]))
        pairs, pos_r, pos_rr = lay._gather
        return normal_matrices(np.ascontiguousarray(C), pairs, lay.sgn, lay.coef, pos_r, pos_rr,
                               np.ascontiguousarray(self.rscale, dtype=np.float64), np.ascontiguousarray(diag))

    # products with G_p = A T_pᵀ
    def g(self, x: np.ndarray, coarse: bool = False) -> np.ndarray:
        """``G_p x_p`` (``coarse``: from the single-precision copy of the data, :meth:`Design.dot_coarse`)."""
        z = x @ self.lay.T  # T_pᵀ x_p: the layout's rows, the radius column scaled by ρ_p
        z[:, self.lay.d] *= self.rscale
        return self.design.dot_coarse(z) if coarse else self.design.dot(z)

    def g_gt(self, x: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``G_p x_p`` and ``G_pᵀ v_p`` in double precision, from one pass over the data where it can
        (:meth:`Design.dot_tdot`)."""
        z = x @ self.lay.T
        z[:, self.lay.d] *= self.rscale
        gx, atv = self.design.dot_tdot(z, v)
        return gx, self.from_a(atv)

    def gt(self, v: np.ndarray, coarse: bool = False) -> np.ndarray:
        """``G_pᵀ v_p`` (``coarse``: from the single-precision copy of the data, :meth:`Design.tdot_coarse`)."""
        return self.from_a(self.design.tdot_coarse(v) if coarse else self.design.tdot(v))

    def from_a(self, z: np.ndarray) -> np.ndarray:
        """``G_pᵀ v_p = T_p (Aᵀ v_p)`` from ``z = Aᵀ v`` (P, D)."""
        z = z.copy()
        z[:, self.lay.d] *= self.rscale
        return z @ self.lay.T.T

    def residuals(self, it: Iterate):
        """``r_x`` (stationarity in x), ``r_ξ`` (in ξ) and ``r_s`` (the sample constraints)."""
        lay = self.lay
        rx = self.qdiag * it.x + self.f - it.gta
        rx[:, :lay.m] -= it.nu
        if lay.cone:
            rx -= it.zeta @ lay.H
        if self.squared:
            rxi = 2.0 * self.c * it.xi - it.alpha
        else:
            rxi = self.c - it.alpha - it.beta
        rs = it.gx + it.xi - 1.0 - it.s
        return rx, rxi, rs

    def value(self, it: Iterate) -> np.ndarray:
        """The conic QP's objective of each point (``Σ c_i ℓ(ξ_i)`` from the ξ variables)."""
        loss = it.xi * it.xi if self.squared else it.xi
        return 0.5 * rowdot(self.qdiag, it.x * it.x) + rowdot(self.f, it.x) + loss @ self.c

    def gap_after(self, it: Iterate, d: Iterate, a: np.ndarray) -> np.ndarray:
        """:meth:`gap_measure` of ``advance(it, d, a)`` without forming the advanced point."""
        m = self.lay.m
        beta, db = (it.alpha, d.alpha) if self.squared else (it.beta, d.beta)
        total = sample_complementarity(self.squared, it.s, it.alpha, it.xi, beta, d.s, d.alpha, d.xi, db, a)
        step = a[:, None]
        total += rowdot(it.x[:, :m] + step * d.x[:, :m], it.nu + step * d.nu)
        if self.lay.cone:
            total += rowdot((it.x + step * d.x) @ self.lay.H.T, it.zeta + step * d.zeta)
        return total / self.degree

    def gap_measure(self, it: Iterate) -> np.ndarray:
        """``(sᵀα + ξᵀβ + uᵀν + qᵀζ)/degree`` of each point."""
        total = rowdot(it.s, it.alpha) + self._feature_gap(it)
        if not self.squared:
            total += rowdot(it.xi, it.beta)
        return total / self.degree

    def _feature_gap(self, it: Iterate) -> np.ndarray:
        """``uᵀν + qᵀζ``: the complementarity of the feature-space blocks."""
        m = self.lay.m
        total = rowdot(it.x[:, :m], it.nu)
        if self.lay.cone:
            total += rowdot(it.x @ self.lay.H.T, it.zeta)
        return total

    def rounding_gap(self, it: Iterate) -> np.ndarray:
        """The complementarity that rounding the margin multipliers to their bounds (:meth:`purified`) leaves,
        ``Σ_kept (s_i α_i + ξ_i β_i) + uᵀν + qᵀζ`` per point: the first-order gap of the certificate at the
        rounded multipliers, which :mod:`.feature_ipm` compares with the tolerance."""
        beta = it.alpha if self.squared else it.beta
        return purified_multipliers(self.squared, it.s, it.alpha, it.xi, beta, self.c, False)[1] + self._feature_gap(it)

    def purified(self, it: Iterate, j: int) -> np.ndarray:
        """Point ``j``'s margin multipliers rounded to their bounds (:func:`._ipm_kernels.purified_multipliers`)."""
        rows = slice(j, j + 1)
        beta = it.alpha if self.squared else it.beta
        return purified_multipliers(self.squared, it.s[rows], it.alpha[rows], it.xi[rows], beta[rows], self.c,
                                    True)[0][0]  # write given: the specialization of rounding_gap's call


class _Factor:
    """Cholesky factors of the normal matrices ``K_p`` (P, k, k) and their solves.

    A matrix that rounding made indefinite gets a growing diagonal shift; one that stays indefinite is reported
    in ``failed``.
    """

    def __init__(self, K: np.ndarray) -> None:
        P, k, _ = K.shape
        self.failed = np.zeros(P, dtype=bool)
        if P == 1:  # one system: LAPACK directly (the stacked call's overhead is most of a small factorization)
            try:
                L = sla.cholesky(K[0], lower=True, check_finite=False)
            except np.linalg.LinAlgError:
                L = None
            if L is not None and np.all(np.isfinite(L)):
                self.L = L[None]
                return
        scale = np.maximum(np.abs(np.diagonal(K, axis1=1, axis2=2)).max(axis=1), 1e-300)
        shift = np.zeros(P)
        L = None
        for attempt in range(8):
            Ks = K if attempt == 0 else K + shift[:, None, None] * np.eye(k)[None]
            try:
                L = np.linalg.cholesky(Ks)
                break
            except np.linalg.LinAlgError:
                ok = np.array([np.all(np.isfinite(Kp)) and _is_pd(Kp) for Kp in Ks])
                shift = np.where(ok, shift, np.where(shift == 0, 1e-14 * scale, 100.0 * shift))
                if attempt == 7:
                    self.failed = ~ok
        if L is None:
            Ks = K + shift[:, None, None] * np.eye(k)[None]
            Ks[self.failed] = np.eye(k)
            L = np.linalg.cholesky(Ks)
        bad = ~np.all(np.isfinite(L), axis=(1, 2))
        if np.any(bad):  # NaN in K passes the factorization silently
            self.failed |= bad
            L[bad] = np.eye(k)
        self.L = L

    def solve(self, rhs: np.ndarray) -> np.ndarray:
        """``K_p⁻¹ rhs_p`` for every row (two triangular solves each)."""
        if self.L.shape[0] == 1:  # one (possibly large) system: LAPACK's blocked solve
            return sla.cho_solve((self.L[0], True), rhs[0], check_finite=False)[None]
        return cho_solve_batch(self.L, np.ascontiguousarray(rhs))


#: the factorization, public for the distributed interior point (robustsvm.distributed.ipm)
Factor = _Factor


def _is_pd(K: np.ndarray) -> bool:
    try:
        np.linalg.cholesky(K)
        return True
    except np.linalg.LinAlgError:
        return False


class Newton:
    """The factored Newton systems of a batch (shared by the predictor and the corrector)."""

    def __init__(self, batch: Batch, it: Iterate, coarse: bool = False, res=None) -> None:
        """``res``: the residuals of ``it`` (:meth:`Batch.residuals`); given, the predictor's product ``Gᵀ(ρ/e)``
        is formed with the Gram matrix (:meth:`Design.gram_tdot`) and :meth:`direction` ``(predictor=True)``
        reuses it."""
        self.batch, self.it, self.coarse = batch, it, coarse
        lay, c = batch.lay, batch.c
        m = lay.m
        if batch.squared:
            self.e = 1.0 / (2.0 * c) + it.s / it.alpha
        else:
            self.e = it.xi / it.beta + it.s / it.alpha
        self.diag = batch.qdiag.copy()
        self.diag[:, :m] += it.nu / it.x[:, :m]
        self.predictor = None
        if batch.wide:
            self._wide(batch, it)
            return
        if res is None:
            C = batch.design.gram(1.0 / self.e, coarse)
        else:  # the predictor's ρ (rhs_s = −sα, rhs_ξ = −ξβ) and Gᵀ(ρ/e) from the Gram pass
            rhs_s, rhs_xi = -it.s * it.alpha, (it.alpha if batch.squared else -it.xi * it.beta)
            rho, v = sample_rho(batch.squared, res[2], res[1], rhs_s, rhs_xi, it.s, it.alpha, it.xi,
                                it.alpha if batch.squared else it.beta, batch.c, self.e)
            C, atv = batch.design.gram_tdot(1.0 / self.e, v, coarse)
            self.predictor = (rho, batch.from_a(atv))
        red = lay.reduced  # the free features' pairs merged (no box): a (d + 2)-sized system
        use = lay if red is None else red
        K = batch.normal_matrices(C, self.diag if red is None else reduced_diagonal(lay, red, self.diag), use)
        self.W = None
        apex = np.zeros(K.shape[0], dtype=bool)
        if lay.cone:
            self.q = it.x @ lay.H.T
            self.W = soc.NTScaling(self.q, it.zeta)
            K += self.W.inverse_squared_congruence(use.H, use.HtH)
            apex = ~self.W.valid
        self.factor = _Factor(K) if red is None else ReducedFactor(_Factor(K), lay, red, self.diag)
        if coarse and np.any(self.factor.failed):  # single precision lost definiteness: redo it exactly
            self.__init__(batch, it, coarse=False, res=res)
            return
        self._failures(apex)

    def _failures(self, apex: np.ndarray) -> None:
        #: points without a Newton step, and why
        self.failed = self.factor.failed | apex
        self.why = np.where(apex, "the cone point (t, N u) reached the cone's boundary in floating point (w → 0 "
                                  "at this scaling)", "the normal matrix is not positive definite")

    def _wide(self, batch: Batch, it: Iterate) -> None:
        """The systems of wide data: factored by Woodbury through ``n × n`` matrices (:class:`.WideFactor`)."""
        lay = batch.lay
        self.W = None
        apex = np.zeros(self.diag.shape[0], dtype=bool)
        if lay.cone:
            self.q = it.x @ lay.H.T
            self.W = soc.NTScaling(self.q, it.zeta)
            apex = ~self.W.valid
        self.factor = WideFactor(batch, self.e, self.diag, self.W)
        self._failures(apex)

    def direction(self, res, rhs_s, rhs_xi, rhs_u, rhs_c, predictor: bool = False) -> Direction:
        """Solve the linearized KKT systems for the complementarity right-hand sides ``rhs_*``.

        ``rhs_s = σμ − sα − (correction)`` and alike; ``rhs_c`` is the cone's in the scaled form
        ``λ ∘ (W⁻¹Δq + WΔζ) = rhs_c``. ``predictor``: the affine-scaling direction (``rhs_s = −sα``,
        ``rhs_ξ = −ξβ``), from the product formed with the Gram matrix when there is one; in a single-precision
        iteration its products are single precision too (the predictor only steers: the step length, the
        centering and the corrector's second-order term).
        """
        batch, it, lay = self.batch, self.it, self.batch.lay
        m = lay.m
        rx, rxi, rs = res
        squared = batch.squared
        beta = it.alpha if squared else it.beta  # not read for the squared hinge
        xi_rhs = rhs_s if squared else rhs_xi
        if predictor and self.predictor is not None:
            rho, g_rho = self.predictor
        else:
            rho, v = sample_rho(squared, rs, rxi, rhs_s, xi_rhs, it.s, it.alpha, it.xi, beta, batch.c, self.e)
            g_rho = batch.gt(v, coarse=self.coarse)
        rhs = -rx + g_rho
        rhs[:, :m] += rhs_u / it.x[:, :m]
        kappa = None
        if lay.cone:
            kappa = soc.jordan_solve(self.W.lam, rhs_c)
            rhs += self.W.apply_inverse(kappa) @ lay.H
        d = Direction()
        d.x = self.factor.solve(rhs)
        d.gx = batch.g(d.x, coarse=self.coarse)
        d.alpha, d.s, d.xi, d.beta, d.sample_step = sample_steps(squared, rho, d.gx, self.e, rhs_s, xi_rhs, rxi,
                                                                 it.s, it.alpha, it.xi, beta, batch.c)
        # Gᵀ Δα = g_rho − Gᵀdiag(1/e)G Δx, and K Δx = rhs gives the last product without forming it again
        gg_dx = rhs - self.diag * d.x
        if lay.cone:
            gg_dx -= self.W.apply_inverse(self.W.apply_inverse(d.x @ lay.H.T)) @ lay.H
        d.gta = g_rho - gg_dx
        if squared:
            d.beta = None
        d.nu = (rhs_u - it.nu * d.x[:, :m]) / it.x[:, :m]
        d.zeta = None
        if lay.cone:
            d.zeta = self.W.apply_inverse(kappa - self.W.apply_inverse(d.x @ lay.H.T))
        return d

    def max_step(self, d: Direction) -> np.ndarray:
        it, m = self.it, self.batch.lay.m
        a = np.minimum(d.sample_step, _step_to_boundary([(it.x[:, :m], d.x[:, :m]), (it.nu, d.nu)]))
        if self.batch.lay.cone:
            a = np.minimum(a, np.minimum(soc.max_step(self.q, d.x @ self.batch.lay.H.T),
                                         soc.max_step(it.zeta, d.zeta)))
        return a


def advance(it: Iterate, d: Iterate, a: np.ndarray) -> Iterate:
    out = Iterate()
    for name in Iterate.__slots__:
        value, step = getattr(it, name), getattr(d, name)
        setattr(out, name, None if value is None else value + a[:, None] * step)
    return out


def start(batch: Batch) -> Iterate:
    """A strictly interior start: ``u = 1/√m``, slacks ``s, ξ ≥ 1``, ``α = β = c/2`` (hinge) or ``α = c``, and
    ``ν``, ``ζ`` with ``u∘ν`` and ``qᵀζ`` equal to ``μ₀ = sᵀα/n``."""
    lay, c = batch.lay, batch.c
    P = batch.qdiag.shape[0]
    it = Iterate()
    x = np.zeros((P, lay.k))
    x[:, :lay.m] = 1.0 / math.sqrt(max(lay.m, 1))
    if lay.cone:
        x[:, lay.t] = np.linalg.norm(x[:, :lay.m] @ lay.H[1:, :lay.m].T, axis=1) + 1.0
    it.x = x
    if batch.squared:
        it.alpha = np.repeat(c[None], P, axis=0)
        it.beta = None
    else:
        it.alpha = np.repeat(0.5 * c[None], P, axis=0)
        it.beta = it.alpha.copy()
    it.gx, it.gta = batch.g_gt(x, it.alpha)
    it.xi = np.maximum(1.0 - it.gx, 0.0) + 1.0
    it.s = it.gx + it.xi - 1.0
    mu0 = rowdot(it.s, it.alpha) / c.size
    it.nu = mu0[:, None] / x[:, :lay.m]
    it.zeta = None
    if lay.cone:
        q = x @ lay.H.T
        it.zeta = soc.identity(P, q.shape[1]) * (mu0 / q[:, 0])[:, None]
    return it

"""The second-order cone ``Q = {(q₀, q̄) : q₀ ≥ ‖q̄‖₂}`` for a primal-dual interior point.

Jordan product, its inverse, the Nesterov-Todd scaling and the largest step that stays in the cone: what
:mod:`.feature_ipm` needs for its one cone block (the epigraph ``t ≥ ‖N u‖₂`` of a 2-ball or ellipsoid
support function). Every function works on a batch: arrays of shape ``(P, k)`` hold ``P`` points of the
cone, one per row; the row loops are compiled (one call per operation, not one NumPy temporary per term). The
formulas are in ``docs/derivations/feature_ipm.md``.
"""

from __future__ import annotations

import numba as nb
import numpy as np

__all__ = ["NTScaling", "identity", "jordan", "jordan_solve", "max_step"]


def _dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.einsum("pi,pi->p", a, b)


def identity(P: int, k: int) -> np.ndarray:
    """``P`` copies of the cone's unit ``e = (1, 0, …, 0)``."""
    e = np.zeros((P, k))
    e[:, 0] = 1.0
    return e


def jordan(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a ∘ b = (aᵀb, a₀ b̄ + b₀ ā)``, row by row."""
    out = a[:, :1] * b + b[:, :1] * a
    out[:, 0] = _dot(a, b)
    return out


def jordan_solve(lam: np.ndarray, r: np.ndarray) -> np.ndarray:
    """The ``x`` with ``λ ∘ x = r`` for ``λ`` inside the cone, row by row.

    ``x₀ = (λ₀ r₀ − λ̄ᵀ r̄)/(λ₀² − ‖λ̄‖²)`` and ``x̄ = (r̄ − x₀ λ̄)/λ₀``. A row on the cone's boundary (``det = 0``)
    has no solution: it gets inf/NaN, without a floating-point warning, and its point no step (the caller flags it,
    see :attr:`NTScaling.valid`).
    """
    return _jordan_solve(np.ascontiguousarray(lam, dtype=np.float64), np.ascontiguousarray(r, dtype=np.float64))


@nb.njit(cache=True, error_model="numpy")
def _jordan_solve(lam: np.ndarray, r: np.ndarray) -> np.ndarray:  # pragma: no cover - compiled
    P, k = r.shape
    out = np.empty((P, k))
    for p in range(P):
        det = lam[p, 0] * lam[p, 0]
        num = lam[p, 0] * r[p, 0]
        for j in range(1, k):
            det -= lam[p, j] * lam[p, j]
            num -= lam[p, j] * r[p, j]
        x0 = num / det
        out[p, 0] = x0
        for j in range(1, k):
            out[p, j] = (r[p, j] - x0 * lam[p, j]) / lam[p, 0]
    return out


@nb.njit(cache=True, error_model="numpy")
def _nt_scaling(s: np.ndarray, z: np.ndarray):  # pragma: no cover - compiled
    """Per row, the scaling's ``v`` and ``β`` and whether the pair is inside the cone (else ``v = e``, ``β = 1``):
    with ``s̄ = s/‖s‖_J``, ``z̄ = z/‖z‖_J``, ``γ = √((1 + s̄ᵀz̄)/2)``, ``w̄ = (s̄ + J z̄)/(2γ)``,
    ``v = (w̄ + e)/√(2(w̄₀ + 1))`` and ``β = √(‖s‖_J/‖z‖_J)``; ``‖a‖_J = √((a₀ − ‖ā‖)(a₀ + ‖ā‖))``."""
    P, k = s.shape
    v = np.empty((P, k))
    beta = np.empty(P)
    valid = np.empty(P, dtype=np.bool_)
    for p in range(P):
        ts = 0.0
        tz = 0.0
        for j in range(1, k):
            ts += s[p, j] * s[p, j]
            tz += z[p, j] * z[p, j]
        ts, tz = np.sqrt(ts), np.sqrt(tz)
        ns = np.sqrt(max((s[p, 0] - ts) * (s[p, 0] + ts), 0.0))
        nz = np.sqrt(max((z[p, 0] - tz) * (z[p, 0] + tz), 0.0))
        sz = 0.0
        for j in range(k):
            sz += (s[p, j] / ns) * (z[p, j] / nz)
        gamma = np.sqrt(max((1.0 + sz) / 2.0, 0.0))
        w0 = (s[p, 0] / ns + z[p, 0] / nz) / (2.0 * gamma)
        norm = np.sqrt(2.0 * (w0 + 1.0))
        v[p, 0] = (w0 + 1.0) / norm
        ok = ns > 0 and nz > 0 and np.isfinite(v[p, 0])
        for j in range(1, k):
            v[p, j] = (s[p, j] / ns - z[p, j] / nz) / (2.0 * gamma) / norm
            ok = ok and np.isfinite(v[p, j])
        b = np.sqrt(ns / nz)
        ok = ok and np.isfinite(b)
        valid[p] = ok
        if ok:
            beta[p] = b
        else:
            v[p, :] = 0.0
            v[p, 0] = 1.0
            beta[p] = 1.0
    return v, beta, valid


class NTScaling:
    """The Nesterov-Todd scalings ``W = β (2 v vᵀ − J)`` of pairs ``s, z`` inside the cone (one per row).

    ``W`` is symmetric, ``W z = W⁻¹ s = λ`` (the scaled point) and ``W⁻¹ = (2 J v vᵀ J − J)/β``, with
    ``vᵀ J v = 1``.
    """

    def __init__(self, s: np.ndarray, z: np.ndarray) -> None:
        v, beta, valid = _nt_scaling(np.ascontiguousarray(s, dtype=np.float64),
                                     np.ascontiguousarray(z, dtype=np.float64))
        #: rows whose pair is inside the cone in floating point; a point that rounding put on the boundary
        #: (the apex, when w → 0) has no scaling, and gets the identity so that the arrays stay finite
        self.valid = valid
        self.beta = beta
        self.v = v
        self.Jv = v.copy()
        self.Jv[:, 1:] = -v[:, 1:]
        self.lam = self.apply(z)

    def apply(self, x: np.ndarray) -> np.ndarray:
        """``W x = β (2 v (vᵀx) − J x)``."""
        return _reflection(self.v, np.ascontiguousarray(x, dtype=np.float64), self.beta, False)

    def apply_inverse(self, x: np.ndarray) -> np.ndarray:
        """``W⁻¹ x = (2 J v (vᵀ J x) − J x)/β``."""
        return _reflection(self.Jv, np.ascontiguousarray(x, dtype=np.float64), self.beta, True)

    def inverse_squared_congruence(self, H: np.ndarray, HtH: np.ndarray) -> np.ndarray:
        """``Hᵀ W⁻² H`` (P, k, k) for a fixed map ``H`` ((q, k), with ``HtH = HᵀH``) from the rank-two form of
        :meth:`inverse_squared`: ``(4 (vᵀv) a aᵀ − 2 (a bᵀ + b aᵀ) + HᵀH)/β²`` with ``a = HᵀJv``, ``b = Hᵀv``, in
        O(kq + k²) per point instead of O(k²q)."""
        a, b = self.Jv @ H, self.v @ H
        vv = 4.0 * _dot(self.v, self.v)
        M = vv[:, None, None] * (a[:, :, None] * a[:, None, :])
        ab = a[:, :, None] * b[:, None, :]
        M -= 2.0 * (ab + ab.transpose(0, 2, 1))
        M += HtH[None]
        return M / (self.beta ** 2)[:, None, None]

    def inverse_squared(self) -> np.ndarray:
        """The dense matrices ``W⁻² = (4 (vᵀv) J v vᵀ J − 2 (J v vᵀ + v vᵀ J) + I)/β²``, shape (P, k, k)."""
        Jv, v = self.Jv, self.v
        M = 4.0 * _dot(v, v)[:, None, None] * (Jv[:, :, None] * Jv[:, None, :])
        M -= 2.0 * (Jv[:, :, None] * v[:, None, :] + v[:, :, None] * Jv[:, None, :])
        k = v.shape[1]
        M[:, np.arange(k), np.arange(k)] += 1.0
        return M / (self.beta ** 2)[:, None, None]


@nb.njit(cache=True)
def _reflection(u: np.ndarray, x: np.ndarray, beta: np.ndarray, inverse: bool) -> np.ndarray:  # pragma: no cover
    """Row by row ``(2 u (uᵀx) − J x)`` times ``β`` (``inverse``: divided by ``β``)."""
    P, k = x.shape
    out = np.empty((P, k))
    for p in range(P):
        ux = 0.0
        for j in range(k):
            ux += u[p, j] * x[p, j]
        scale = 1.0 / beta[p] if inverse else beta[p]
        out[p, 0] = scale * (2.0 * ux * u[p, 0] - x[p, 0])
        for j in range(1, k):
            out[p, j] = scale * (2.0 * ux * u[p, j] + x[p, j])
    return out


def max_step(x: np.ndarray, dx: np.ndarray) -> np.ndarray:
    """Per row, the largest ``a ≥ 0`` (∞ if none) with ``x + a dx`` in the cone, for ``x`` inside it.

    The boundary is the smallest positive root of ``(x₀ + a dx₀)² − ‖x̄ + a dx̄‖² = 0`` on the branch
    ``x₀ + a dx₀ ≥ 0``.
    """
    return _max_step(np.ascontiguousarray(x, dtype=np.float64), np.ascontiguousarray(dx, dtype=np.float64))


@nb.njit(cache=True, error_model="numpy")
def _max_step(x: np.ndarray, dx: np.ndarray) -> np.ndarray:  # pragma: no cover - compiled
    """:func:`max_step` row by row: the roots of ``qa a² + 2 qb a + qc`` in the cancellation-free form, the
    branch limit ``−x₀/dx₀``; NaN propagates as in ``np.minimum``."""
    P, k = x.shape
    out = np.empty(P)
    inf = np.inf
    for p in range(P):
        qa = dx[p, 0] * dx[p, 0]
        qb = x[p, 0] * dx[p, 0]
        qc = x[p, 0] * x[p, 0]
        for j in range(1, k):
            qa -= dx[p, j] * dx[p, j]
            qb -= x[p, j] * dx[p, j]
            qc -= x[p, j] * x[p, j]
        limit = -x[p, 0] / dx[p, 0] if dx[p, 0] < 0 else inf
        disc = qb * qb - qa * qc
        sq = np.sqrt(max(disc, 0.0)) if disc == disc else np.nan
        q = -(qb + np.copysign(sq, qb))
        if abs(qa) <= 1e-300:
            r1 = -qc / (2.0 * qb) if qb < 0 else inf
            r2 = inf
        elif disc >= 0:
            r1 = q / qa if q != 0 else inf
            r2 = qc / q if q != 0 else inf
        else:
            r1 = r2 = inf
        r1 = r1 if r1 > 0 else inf
        r2 = r2 if r2 > 0 else inf
        if limit != limit:
            out[p] = limit
        else:
            out[p] = min(limit, min(r1, r2))
    return out

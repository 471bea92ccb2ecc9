"""The second-order cone ``Q = {(q₀, q̄) : q₀ ≥ ‖q̄‖₂}`` for a primal-dual interior point.

Jordan product, its inverse, the Nesterov-Todd scaling and the largest step that stays in the cone: what
:mod:`.feature_ipm` needs for its one cone block (the epigraph ``t ≥ ‖N u‖₂`` of a 2-ball or ellipsoid
support function). Every function works on a batch: arrays of shape ``(P, k)`` hold ``P`` points of the
cone, one per row. The formulas are in ``docs/derivations/feature_ipm.md``.
"""

from __future__ import annotations

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

    ``x₀ = (λ₀ r₀ − λ̄ᵀ r̄)/(λ₀² − ‖λ̄‖²)`` and ``x̄ = (r̄ − x₀ λ̄)/λ₀``.
    """
    det = lam[:, 0] ** 2 - _dot(lam[:, 1:], lam[:, 1:])
    out = np.empty_like(r)
    # a row on the cone's boundary (det = 0) has no solution: it gets inf/NaN, and its point no step (the caller
    # flags it, see NTScaling.valid), without a floating-point warning
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        x0 = (lam[:, 0] * r[:, 0] - _dot(lam[:, 1:], r[:, 1:])) / det
        out[:, 0] = x0
        out[:, 1:] = (r[:, 1:] - x0[:, None] * lam[:, 1:]) / lam[:, :1]
    return out


def _jnorm(a: np.ndarray) -> np.ndarray:
    """``sqrt(aᵀ J a) = sqrt(a₀² − ‖ā‖²)``, factored as ``(a₀ − ‖ā‖)(a₀ + ‖ā‖)`` against cancellation."""
    tail = np.sqrt(_dot(a[:, 1:], a[:, 1:]))
    return np.sqrt(np.maximum((a[:, 0] - tail) * (a[:, 0] + tail), 0.0))


class NTScaling:
    """The Nesterov-Todd scalings ``W = β (2 v vᵀ − J)`` of pairs ``s, z`` inside the cone (one per row).

    ``W`` is symmetric, ``W z = W⁻¹ s = λ`` (the scaled point) and ``W⁻¹ = (2 J v vᵀ J − J)/β``, with
    ``vᵀ J v = 1``.
    """

    def __init__(self, s: np.ndarray, z: np.ndarray) -> None:
        ns, nz = _jnorm(s), _jnorm(z)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            sb, zb = s / ns[:, None], z / nz[:, None]
            gamma = np.sqrt(np.maximum((1.0 + _dot(sb, zb)) / 2.0, 0.0))
            wb = sb.copy()
            wb[:, 0] += zb[:, 0]
            wb[:, 1:] -= zb[:, 1:]
            wb /= 2.0 * gamma[:, None]
            v = wb.copy()
            v[:, 0] += 1.0
            v /= np.sqrt(2.0 * (wb[:, 0] + 1.0))[:, None]
            beta = np.sqrt(ns / nz)
        #: rows whose pair is inside the cone in floating point; a point that rounding put on the boundary
        #: (the apex, when w → 0) has no scaling, and gets the identity so that the arrays stay finite
        self.valid = (ns > 0) & (nz > 0) & np.isfinite(beta) & np.all(np.isfinite(v), axis=1)
        if not np.all(self.valid):
            v[~self.valid] = 0.0
            v[~self.valid, 0] = 1.0
            beta = np.where(self.valid, beta, 1.0)
        self.beta = beta
        self.v = v
        self.Jv = v.copy()
        self.Jv[:, 1:] = -v[:, 1:]
        self.lam = self.apply(z)

    @staticmethod
    def _reflect(x: np.ndarray) -> np.ndarray:
        out = x.copy()
        out[:, 0] = -out[:, 0]
        return out  # −J x

    def apply(self, x: np.ndarray) -> np.ndarray:
        """``W x = β (2 v (vᵀx) − J x)``."""
        return self.beta[:, None] * (2.0 * _dot(self.v, x)[:, None] * self.v + self._reflect(x))

    def apply_inverse(self, x: np.ndarray) -> np.ndarray:
        """``W⁻¹ x = (2 J v (vᵀ J x) − J x)/β``."""
        return (2.0 * _dot(self.Jv, x)[:, None] * self.Jv + self._reflect(x)) / self.beta[:, None]

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


def max_step(x: np.ndarray, dx: np.ndarray) -> np.ndarray:
    """Per row, the largest ``a ≥ 0`` (∞ if none) with ``x + a dx`` in the cone, for ``x`` inside it.

    The boundary is the smallest positive root of ``(x₀ + a dx₀)² − ‖x̄ + a dx̄‖² = 0`` on the branch
    ``x₀ + a dx₀ ≥ 0``.
    """
    qa = dx[:, 0] ** 2 - _dot(dx[:, 1:], dx[:, 1:])
    qb = x[:, 0] * dx[:, 0] - _dot(x[:, 1:], dx[:, 1:])
    qc = x[:, 0] ** 2 - _dot(x[:, 1:], x[:, 1:])
    with np.errstate(divide="ignore", invalid="ignore"):
        limit = np.where(dx[:, 0] < 0, -x[:, 0] / dx[:, 0], np.inf)
        # the roots of qa a² + 2 qb a + qc in the cancellation-free form
        disc = qb * qb - qa * qc
        sq = np.sqrt(np.maximum(disc, 0.0))
        q = -(qb + np.copysign(sq, qb))
        r1 = np.where(q != 0, q / qa, np.inf)
        r2 = np.where(q != 0, qc / q, np.inf)
        linear = np.abs(qa) <= 1e-300
        r_lin = np.where(qb < 0, -qc / (2.0 * qb), np.inf)
    r1 = np.where(linear, r_lin, np.where(disc >= 0, r1, np.inf))
    r2 = np.where(linear, np.inf, np.where(disc >= 0, r2, np.inf))
    r1 = np.where(r1 > 0, r1, np.inf)
    r2 = np.where(r2 > 0, r2, np.inf)
    return np.minimum(limit, np.minimum(r1, r2))

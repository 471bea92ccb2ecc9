"""The second-order cone ``Q = {(q₀, q̄) : q₀ ≥ ‖q̄‖₂}`` for a primal-dual interior point.

Jordan product, its inverse, the Nesterov-Todd scaling and the largest step that stays in the cone: what
:mod:`.feature_ipm` needs for its one cone block (the epigraph ``t ≥ ‖N u‖₂`` of a 2-ball or ellipsoid
support function). The formulas are in ``docs/derivations/feature_ipm.md``.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["NTScaling", "jordan", "jordan_solve", "max_step", "identity"]


def identity(k: int) -> np.ndarray:
    """The cone's unit ``e = (1, 0, …, 0)``."""
    e = np.zeros(k)
    e[0] = 1.0
    return e


def jordan(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a ∘ b = (aᵀb, a₀ b̄ + b₀ ā)``."""
    out = a[0] * b + b[0] * a
    out[0] = float(a @ b)
    return out


def jordan_solve(lam: np.ndarray, r: np.ndarray) -> np.ndarray:
    """The ``x`` with ``λ ∘ x = r`` for ``λ`` inside the cone.

    ``x₀ = (λ₀ r₀ − λ̄ᵀ r̄)/(λ₀² − ‖λ̄‖²)`` and ``x̄ = (r̄ − x₀ λ̄)/λ₀``.
    """
    det = lam[0] ** 2 - float(lam[1:] @ lam[1:])
    x0 = (lam[0] * r[0] - float(lam[1:] @ r[1:])) / det
    out = np.empty_like(r)
    out[0] = x0
    out[1:] = (r[1:] - x0 * lam[1:]) / lam[0]
    return out


def _jnorm(a: np.ndarray) -> float:
    """``sqrt(aᵀ J a) = sqrt(a₀² − ‖ā‖²)`` (positive inside the cone)."""
    return math.sqrt(max((a[0] - math.sqrt(float(a[1:] @ a[1:]))) * (a[0] + math.sqrt(float(a[1:] @ a[1:]))),
                         0.0))


class NTScaling:
    """The Nesterov-Todd scaling ``W = β (2 v vᵀ − J)`` of a pair ``s, z`` inside the cone.

    ``W`` is symmetric, ``W z = W⁻¹ s = λ`` (the scaled point) and ``W⁻¹ = (2 J v vᵀ J − J)/β``, with
    ``vᵀ J v = 1``.
    """

    def __init__(self, s: np.ndarray, z: np.ndarray) -> None:
        ns, nz = _jnorm(s), _jnorm(z)
        sb, zb = s / ns, z / nz
        gamma = math.sqrt(max((1.0 + float(sb @ zb)) / 2.0, 0.0))
        wb = sb.copy()
        wb[0] += zb[0]
        wb[1:] -= zb[1:]
        wb /= 2.0 * gamma
        v = wb.copy()
        v[0] += 1.0
        v /= math.sqrt(2.0 * (wb[0] + 1.0))
        self.beta = math.sqrt(ns / nz)
        self.v = v
        self.Jv = v.copy()
        self.Jv[1:] = -v[1:]
        self.lam = self.apply(z)

    def apply(self, x: np.ndarray) -> np.ndarray:
        """``W x = β (2 v (vᵀx) − J x)``."""
        out = 2.0 * float(self.v @ x) * self.v
        out[0] -= x[0]
        out[1:] += x[1:]
        return self.beta * out

    def apply_inverse(self, x: np.ndarray) -> np.ndarray:
        """``W⁻¹ x = (2 J v (vᵀ J x) − J x)/β``."""
        out = 2.0 * float(self.Jv @ x) * self.Jv
        out[0] -= x[0]
        out[1:] += x[1:]
        return out / self.beta

    def inverse_squared(self) -> np.ndarray:
        """The dense matrix ``W⁻² = (4 (vᵀv) J v vᵀ J − 2 (J v vᵀ + v vᵀ J) + I)/β²``."""
        k = self.v.size
        Jv, v = self.Jv, self.v
        M = 4.0 * float(v @ v) * np.outer(Jv, Jv) - 2.0 * (np.outer(Jv, v) + np.outer(v, Jv))
        M[np.diag_indices(k)] += 1.0
        return M / self.beta ** 2


def max_step(x: np.ndarray, dx: np.ndarray) -> float:
    """The largest ``a ≥ 0`` (∞ if none) with ``x + a dx`` in the cone, for ``x`` inside it.

    The boundary is the smallest positive root of ``(x₀ + a dx₀)² − ‖x̄ + a dx̄‖² = 0`` on the branch
    ``x₀ + a dx₀ ≥ 0``.
    """
    qa = dx[0] ** 2 - float(dx[1:] @ dx[1:])
    qb = x[0] * dx[0] - float(x[1:] @ dx[1:])
    qc = x[0] ** 2 - float(x[1:] @ x[1:])
    limit = -x[0] / dx[0] if dx[0] < 0 else math.inf
    roots = []
    if abs(qa) <= 1e-300:
        if qb < 0:
            roots.append(-qc / (2.0 * qb))
    else:
        disc = qb * qb - qa * qc
        if disc >= 0:
            sq = math.sqrt(disc)
            # numerically stable pair of roots of qa a² + 2 qb a + qc
            q = -(qb + math.copysign(sq, qb))
            if q != 0.0:
                roots.extend([q / qa, qc / q])
    pos = [a for a in roots if a > 0]
    return min([limit, *pos])

"""Norm-ball uncertainty ``V = {v : ‖v‖_p ≤ 1}``."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._lazy import cvxpy as cp
from .._validation import real_scalar
from .base import UncertaintySet
from .box import Box

__all__ = ["Ball", "pnorm"]


class Ball(UncertaintySet):
    """Unit ``p``-norm ball, support ``σ_V(z) = ‖z‖_q`` with ``1/p + 1/q = 1``.

    Parameters
    ----------
    radius : float or array of shape (n,)
        Scale ``r_i`` of the set around each sample.
    p : float, default 2
        Any ``p ≥ 1``, ``np.inf`` included. ``p = 2`` compiles to a second-order
        cone, ``p ∈ {1, ∞}`` to linear constraints, other values to power cones.
    """

    symmetric = True

    @property
    def cost_class(self) -> str:
        """``"ball1"`` for ``p = 1`` (no cheap sparse step), ``"ball"`` otherwise (``backends/cost.py``)."""
        return "ball1" if self.p == 1 else "ball"

    def __init__(self, radius: Any = 1.0, p: float = 2) -> None:
        super().__init__(radius)
        p = real_scalar(p, name="p", what="a real number ≥ 1 or np.inf")
        if math.isnan(p) or p < 1:
            raise ValueError(f"p must be ≥ 1 (np.inf allowed), got {p!r}")
        self.p = p

    @property
    def q(self) -> float:
        """The dual exponent ``q`` with ``1/p + 1/q = 1``."""
        if self.p == 1:
            return math.inf
        if math.isinf(self.p):
            return 1.0
        return self.p / (self.p - 1.0)

    def support(self, z):
        """``σ_V(z) = ‖z‖_q`` (closed form, along the last axis), computed as ``m (Σ_h (|z_h|/m)^q)^{1/q}``.

        ``m = max_h |z_h|``: every ratio is at most 1 and the sum lies in
        ``[1, d]``, so neither ``|z_h|^q`` under- or overflows whatever ``q``
        (``q`` in the thousands for ``p`` near 1, near 1 for ``p`` near ∞).
        """
        return pnorm(z, self.q)

    def support_cvx(self, z):
        """``‖z‖_q``: linear for q ∈ {1, ∞}, a second-order cone for q = 2, power cones otherwise."""
        return _pnorm_cvx(z, self.q), []

    def membership_cvx(self, v):
        """``‖v‖_p ≤ 1``."""
        return [_pnorm_cvx(v, self.p) <= 1]

    def scaled_membership_cvx(self, v, scale):
        """``‖v‖_p ≤ t``."""
        return [_pnorm_cvx(v, self.p) <= scale]

    @property
    def is_polyhedral(self) -> bool:
        """True for ``p = 1`` and ``p = ∞`` (a cross-polytope and a cube)."""
        return self.p == 1 or math.isinf(self.p)

    def gauge(self, v, center=None):
        """``‖v‖_p`` about the origin; about another centre ``c``, ``1/s*`` with ``s*`` the root of
        ``‖c + s(v − c)‖_p = 1`` (closed form for p = 2 and ∞, bisection otherwise, rounded up)."""
        v = np.asarray(v, dtype=np.float64)
        if center is None or not np.any(center):
            return float(pnorm(v, self.p))
        c = np.asarray(center, dtype=np.float64)
        u = v - c
        if not np.any(u):
            return 0.0
        if math.isinf(self.p):
            return Box().gauge(v, c)  # the unit cube
        if self.p == 2:
            return _sphere_gauge(u, c)
        return super().gauge(v, c)  # a bisection on ‖c + s u‖_p ≤ 1

    def worst_case(self, z):
        """A maximizer of ``z·v`` over ``‖v‖_p ≤ 1``: ``sign(z)|z|^{q−1}/‖z‖_q^{q−1}`` (Hölder equality)."""
        z = np.asarray(z, dtype=np.float64)
        q = self.q
        if not np.any(z):
            return np.zeros_like(z)
        if math.isinf(q):  # p = 1: all mass on one largest coordinate
            v = np.zeros_like(z)
            h = int(np.argmax(np.abs(z)))
            v[h] = np.sign(z[h])
            return v
        if q == 1:  # p = ∞
            return np.sign(z)
        # with u = |z|/max|z| ∈ [0, 1] and S = Σ u^q ∈ [1, d]: v = sign(z) u^{q−1} S^{−1/p}. Raising u
        # (exact up to one rounding) rather than u/‖u‖_q (whose rounding q would amplify) to the power q − 1
        # keeps ‖v‖_p = 1 and z·v = ‖z‖_q to a few ulps even for q in the billions.
        u = np.abs(z) / np.max(np.abs(z))
        with np.errstate(under="ignore"):
            a = u ** (q - 1.0)
            total = float(np.sum(u**q))
        return np.sign(z) * a * total ** (-1.0 / self.p)

    def contains(self, v, tol=1e-8):
        """``‖v‖_p ≤ 1 + tol`` (the norm computed scaled by the largest entry, as in :meth:`support`)."""
        return bool(pnorm(v, self.p) <= 1.0 + tol)

    def key(self):
        return ("Ball", self.p)

    def to_dict(self):
        return {"type": "Ball", "radius": np.asarray(self.radius).tolist(), "p": self.p}

    def __repr__(self) -> str:
        return f"Ball(radius={self.radius_text}, p={self.p:g})"


def _sphere_gauge(u: np.ndarray, e: np.ndarray) -> float:
    """``1/s*`` with ``s* > 0`` the root of ``‖e + s u‖₂ = 1``, for ``‖e‖₂ < 1`` and ``u ≠ 0``."""
    aa, ae, ee = float(u @ u), float(u @ e), float(e @ e)
    root = (-ae + math.sqrt(max(ae * ae - aa * (ee - 1.0), 0.0))) / aa
    return 1.0 / root if root > 0 else math.inf


def pnorm(z: Any, p: float) -> np.ndarray | float:
    """``‖z‖_p`` along the last axis, for any ``p ≥ 1`` (``np.inf`` included), without under- or overflow.

    ``‖z‖_p = m (Σ_h (|z_h|/m)^p)^{1/p}`` with ``m = max_h |z_h|`` (0 when
    ``z = 0``): the ratios lie in ``[0, 1]`` and the sum in ``[1, d]``, so the
    result is as accurate as ``m`` itself for every ``p`` — the plain formula
    underflows to 0 for ``|z_h| < 1`` and large ``p`` and overflows for
    ``|z_h| > 1``. A non-finite entry gives ``inf`` (or NaN for NaN).
    """
    z = np.abs(np.asarray(z, dtype=np.float64))
    if z.shape[-1] == 0:
        return np.zeros(z.shape[:-1]) if z.ndim > 1 else 0.0
    m = np.max(z, axis=-1, keepdims=True)
    if math.isinf(p):
        out = m[..., 0]
    elif p == 1:
        out = np.sum(z, axis=-1)
    else:
        with np.errstate(invalid="ignore", divide="ignore", under="ignore"):
            safe = np.where((m > 0) & np.isfinite(m), m, 1.0)
            s = np.sum((z / safe) ** p, axis=-1)
            out = np.where(m[..., 0] > 0, safe[..., 0] * s ** (1.0 / p), 0.0)
            out = np.where(np.isfinite(m[..., 0]), out, m[..., 0])
    return float(out) if np.ndim(out) == 0 else out


def _pnorm_cvx(x: cp.Expression, p: float) -> cp.Expression:
    """``‖x‖_p`` in CVXPY, exact cones (no rational approximation) for every ``p ≥ 1``."""
    if math.isinf(p):
        return cp.norm_inf(x)
    if p == 1:
        return cp.norm1(x)
    if p == 2:
        return cp.norm2(x)
    return cp.pnorm(x, p, approx=False)

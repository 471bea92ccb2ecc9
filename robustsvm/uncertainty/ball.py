"""Norm-ball uncertainty ``V = {v : ‖v‖_p ≤ 1}``."""

from __future__ import annotations

import math
from typing import Any

import cvxpy as cp
import numpy as np

from .base import UncertaintySet

__all__ = ["Ball"]


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

    def __init__(self, radius: Any = 1.0, p: float = 2) -> None:
        super().__init__(radius)
        try:
            p = float(p)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"p must be a real number ≥ 1 or np.inf, got {p!r}") from exc
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
        """``σ_V(z) = ‖z‖_q`` (closed form, along the last axis)."""
        z = np.asarray(z, dtype=np.float64)
        return np.linalg.norm(z, ord=self.q, axis=-1)

    def support_cvx(self, z):
        """``‖z‖_q``: linear for q ∈ {1, ∞}, a second-order cone for q = 2, power cones otherwise."""
        return _pnorm_cvx(z, self.q), []

    def membership_cvx(self, v):
        """``‖v‖_p ≤ 1``."""
        return [_pnorm_cvx(v, self.p) <= 1]

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
        u = z / np.max(np.abs(z))  # rescale first: no underflow for tiny z
        a = np.abs(u) / np.linalg.norm(u, ord=q)
        return np.sign(z) * a ** (q - 1.0)

    def contains(self, v, tol=1e-8):
        v = np.asarray(v, dtype=np.float64)
        return bool(np.linalg.norm(v, ord=self.p) <= 1.0 + tol)

    def key(self):
        return ("Ball", self.p)

    def to_dict(self):
        return {"type": "Ball", "radius": np.asarray(self.radius).tolist(), "p": self.p}

    def __repr__(self) -> str:
        return f"Ball(radius={self.radius!r}, p={self.p:g})"


def _pnorm_cvx(x: cp.Expression, p: float) -> cp.Expression:
    """``‖x‖_p`` in CVXPY, exact cones (no rational approximation) for every ``p ≥ 1``."""
    if math.isinf(p):
        return cp.norm_inf(x)
    if p == 1:
        return cp.norm1(x)
    if p == 2:
        return cp.norm2(x)
    return cp.pnorm(x, p, approx=False)

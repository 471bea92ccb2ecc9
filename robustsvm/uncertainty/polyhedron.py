"""Polyhedral uncertainty ``V = {v : Gv ≤ h}`` (bounded, non-empty)."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog

from .._lazy import cvxpy as cp
from .base import SolvedSupportMixin, UncertaintySet, direction_scale, real_array, stack_directions

__all__ = ["Polyhedron", "check_polytope"]


def check_polytope(G: np.ndarray, h: np.ndarray, *, name: str = "Polyhedron") -> None:
    """Raise a ``ValueError`` unless ``{v : Gv ≤ h}`` is non-empty and bounded.

    Non-empty: the LP ``min 0 s.t. Gv ≤ h`` is feasible. Bounded: the
    recession cone ``{v : Gv ≤ 0}`` is ``{0}``, which holds iff ``rank G = d``
    and some ``μ > 0`` has ``Gᵀμ = 0`` (Stiemke's alternative); the latter is
    the LP ``Gᵀμ = 0, μ ≥ 1``. Both LPs are solved with HiGHS.
    """
    k, d = G.shape
    feas = linprog(np.zeros(d), A_ub=G, b_ub=h, bounds=[(None, None)] * d, method="highs")
    if feas.status == 2:
        raise ValueError(f"{name} is empty: no v satisfies Gv ≤ h")
    if feas.status != 0:
        raise ValueError(f"{name}: the feasibility LP failed ({feas.message})")
    if np.linalg.matrix_rank(G) < d:
        raise ValueError(f"{name} is unbounded: G has rank {np.linalg.matrix_rank(G)} < d = {d} (it contains a line)")
    rec = linprog(np.zeros(k), A_eq=G.T, b_eq=np.zeros(d), bounds=[(1.0, None)] * k, method="highs")
    if rec.status != 0:
        raise ValueError(f"{name} is unbounded: some direction u ≠ 0 has Gu ≤ 0 (no μ > 0 with Gᵀμ = 0)")


class Polyhedron(SolvedSupportMixin, UncertaintySet):
    """Polytope ``V = {v : Gv ≤ h}``, support by LP duality.

    ``σ_V(z) = max{z·v : Gv ≤ h} = min{h·μ : Gᵀμ = z, μ ≥ 0}`` (exact for
    any non-empty bounded polyhedron).

    Parameters
    ----------
    G : array of shape (k, d)
    h : array of shape (k,)
    radius : float or array of shape (n,)
        Scale ``r_i`` of the set around each sample.

    Raises
    ------
    ValueError
        When ``G``, ``h`` have the wrong shapes or non-finite entries, or the
        polyhedron is empty or unbounded (the message says which).
    """

    def __init__(self, G: Any, h: Any, radius: Any = 1.0) -> None:
        super().__init__(radius)
        G = real_array(G, name="G")
        h = real_array(h, name="h")
        if G.ndim != 2 or G.shape[0] == 0 or G.shape[1] == 0:
            raise ValueError(f"G must be a non-empty 2-D array, got shape {G.shape}")
        if h.shape != (G.shape[0],):
            raise ValueError(f"h must have shape ({G.shape[0]},) to match G, got {h.shape}")
        if not (np.all(np.isfinite(G)) and np.all(np.isfinite(h))):
            raise ValueError("G and h must be finite")
        check_polytope(G, h)
        self.G = G
        self.h = h
        self.symmetric = rows_closed_under_negation(G, h)

    @property
    def dim(self) -> int:
        return self.G.shape[1]

    def _maximize(self, z: np.ndarray) -> tuple[float, np.ndarray]:
        """``(max{z·v : Gv ≤ h}, a maximizing vertex)`` by HiGHS for ``z/m`` (``m = max_h |z_h|``), the value
        ``m·(z/m)·v*``.

        Dividing by ``m`` keeps HiGHS's absolute dual tolerance (1e-7)
        meaningful: a cost of order 1e-8 would otherwise count as zero and any
        feasible vertex be returned as optimal.
        """
        z = np.asarray(z, dtype=np.float64)
        if z.shape != (self.dim,):
            raise ValueError(f"z must have shape ({self.dim},), got {z.shape}")
        m = float(direction_scale(z))
        res = linprog(-z / m, A_ub=self.G, b_ub=self.h, bounds=[(None, None)] * self.dim, method="highs")
        if res.status != 0:
            raise RuntimeError(f"Polyhedron: the support LP failed ({res.message})")
        v = np.asarray(res.x, dtype=np.float64)
        return m * float(-res.fun), v

    def support_cvx(self, z):
        """``h·μ`` with ``Gᵀμ = z``, ``μ ≥ 0`` (the LP dual)."""
        mu = cp.Variable(self.G.shape[0], nonneg=True)
        return self.h @ mu, [self.G.T @ mu == z]

    @classmethod
    def support_cvx_many(cls, sets, zs):
        """All pairs ``(G_j, h_j, z_j)`` at once: one flat ``μ ≥ 0``, block-diagonal ``G_jᵀ``."""
        if len(sets) == 1:
            e, c = sets[0].support_cvx(zs[0])
            return [e], c
        sizes = [s.G.shape[0] for s in sets]
        mu = cp.Variable(sum(sizes), nonneg=True)
        Gt = sp.block_diag([s.G.T for s in sets], format="csr")
        H = sp.block_diag([s.h[None, :] for s in sets], format="csr")
        return H @ mu, [Gt @ mu == stack_directions(zs)]

    def membership_cvx(self, v):
        """``Gv ≤ h``."""
        return [self.G @ v <= self.h]

    def scaled_membership_cvx(self, v, scale):
        """``Gv ≤ t h``."""
        return [self.G @ v <= scale * self.h]

    is_polyhedral = True

    def center(self, d):
        """The origin when ``h > 0`` (then interior), else the Chebyshev centre ``argmax{ρ : Gc + ρ‖g_k‖ ≤ h}``."""
        self.check_dim(d)
        cached = self.__dict__.get("_center")
        if cached is not None:
            return cached.copy()
        scale = max(1.0, float(np.max(np.abs(self.h))))
        if np.all(self.h > 1e-9 * scale):
            c = np.zeros(d)
        else:
            norms = np.linalg.norm(self.G, axis=1)
            res = linprog(np.r_[np.zeros(d), -1.0], A_ub=np.column_stack([self.G, norms]), b_ub=self.h,
                          bounds=[(None, None)] * d + [(0.0, 1.0 + scale)], method="highs")
            if res.status != 0 or -res.fun <= 0:
                raise ValueError("Polyhedron has no interior point (it is flat): no point satisfies Gv < h")
            c = np.asarray(res.x[:d], dtype=np.float64)
        self._center = c
        return c.copy()

    def gauge(self, v, center=None):
        """``max(0, max_k g_k·(v − c)/(h_k − g_k·c))``: the first facet the ray from ``c`` through ``v`` crosses."""
        v = np.asarray(v, dtype=np.float64)
        c = self.center(v.shape[0]) if center is None else np.asarray(center, dtype=np.float64)
        slack = self.h - self.G @ c
        if np.any(slack <= 0):
            raise ValueError("the centre of a Polyhedron gauge must lie in its interior")
        return float(max(0.0, np.max((self.G @ (v - c)) / slack)))

    def contains(self, v, tol=1e-8):
        v = np.asarray(v, dtype=np.float64)
        return bool(np.all(self.G @ v <= self.h + tol * np.maximum(1.0, np.abs(self.h))))

    def key(self):
        return ("Polyhedron", self.G.shape, self.G.tobytes(), self.h.tobytes())

    def to_dict(self):
        return {"type": "Polyhedron", "radius": np.asarray(self.radius).tolist(), "G": self.G.tolist(),
                "h": self.h.tolist()}

    def __repr__(self) -> str:
        return f"Polyhedron(<{self.G.shape[0]} inequalities in R^{self.dim}>, radius={self.radius_text})"


def rows_closed_under_negation(G: np.ndarray, h: np.ndarray) -> bool:
    """A sufficient test of ``V = −V``: the normalized rows ``(g, h)`` are closed under ``g → −g``."""
    norms = np.linalg.norm(G, axis=1)
    if np.any(norms == 0):
        return False
    rows = np.round(np.column_stack([G, h]) / norms[:, None], 10) + 0.0
    flipped = rows.copy()
    flipped[:, :-1] = -flipped[:, :-1] + 0.0
    have = {r.tobytes() for r in rows}
    return all(r.tobytes() in have for r in flipped)

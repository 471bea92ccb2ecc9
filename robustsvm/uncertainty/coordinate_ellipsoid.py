"""An ellipsoid spanning some coordinates of ``R^d`` only: ``V = {v : v_O = 0, v_Mᵀ S⁻¹ v_M ≤ 1}``.

The set of a sample whose coordinates ``M`` are missing (:mod:`robustsvm.uncertainty.missing`): the
observed coordinates ``O`` are known exactly, the missing ones lie in an ellipsoid of shape ``S`` (the
conditional covariance). As a subset of ``R^d`` it is the degenerate ellipsoid ``{E_M L u : ‖u‖₂ ≤ 1}``
with ``S = LLᵀ`` and ``E_M`` the embedding of the coordinates ``M``; its shape matrix ``E_M S E_Mᵀ`` is
singular, which :class:`~robustsvm.uncertainty.Ellipsoid` refuses, so the set keeps the factor on the
coordinates it spans and every operation is exact there (``docs/missing_values.md``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from .._lazy import cvxpy as cp
from .ball import _sphere_gauge
from .base import UncertaintySet, stack_directions
from .ellipsoid import check_symmetric, cholesky_factor

__all__ = ["CoordinateEllipsoid"]


def _integers(value: Any, *, name: str) -> np.ndarray:
    """``value`` as an int array; integer-valued floats (a file read by the command line) are accepted."""
    a = np.asarray(value)
    if a.dtype == bool or not (np.issubdtype(a.dtype, np.integer) or np.issubdtype(a.dtype, np.floating)):
        raise TypeError(f"{name} must be integers, got {value!r}")
    if np.issubdtype(a.dtype, np.floating) and not np.all(np.isfinite(a) & (a == np.round(a))):
        raise TypeError(f"{name} must be integers, got {value!r}")
    return a.astype(np.intp)


def _coordinates(coordinates: Any, n_features: Any) -> tuple[np.ndarray, int]:
    """``coordinates`` as sorted distinct indices in ``[0, n_features)`` and ``n_features`` as an int."""
    if np.ndim(n_features) != 0 or isinstance(n_features, (str, bytes)):
        raise TypeError(f"n_features must be a positive integer, got {n_features!r}")
    d = int(_integers(n_features, name="n_features"))
    if d < 1:
        raise ValueError(f"n_features must be a positive integer, got {n_features!r}")
    if np.size(coordinates) == 0:
        return np.zeros(0, dtype=np.intp), d
    idx = _integers(coordinates, name="coordinates").reshape(-1) if np.ndim(coordinates) <= 1 else None
    if idx is None:
        raise TypeError(f"coordinates must be a list of feature indices, got {coordinates!r}")
    if np.any(idx < 0) or np.any(idx >= d):
        raise ValueError(f"coordinates must lie in [0, {d}), got {idx.tolist()}")
    if np.any(np.diff(idx) <= 0):
        raise ValueError(f"coordinates must be increasing and distinct, got {idx.tolist()}")
    return idx, d


class CoordinateEllipsoid(UncertaintySet):
    """The ellipsoid ``{v ∈ R^d : v_h = 0 (h ∉ M), v_Mᵀ S⁻¹ v_M ≤ 1}``; support ``σ_V(z) = ‖Lᵀ z_M‖₂``.

    Parameters
    ----------
    shape : array of shape (k, k)
        The symmetric positive definite ``S = LLᵀ`` on the coordinates ``M``; may be empty (``k = 0``:
        the set ``{0}``, support 0).
    coordinates : sequence of int, length k
        The increasing feature indices ``M`` the set spans.
    n_features : int
        ``d``, the dimension of the space.
    radius : float or array of shape (n,)

    Notes
    -----
    ``V = E_M L B₂`` (``B₂`` the Euclidean unit ball of ``R^k``), so ``σ_V(z) = ‖Lᵀ z_M‖₂``, attained at
    ``v*_M = S z_M / ‖Lᵀ z_M‖₂``, ``v*_O = 0``; the robust counterpart is one second-order cone of
    dimension ``k + 1``. Membership asks ``v_O = 0`` (to ``tol``) and ``‖L⁻¹ v_M‖₂ ≤ 1``; the gauge of a
    point off the subspace is infinite, and :meth:`retract` projects onto the subspace first.
    """

    symmetric = True

    def __init__(self, shape: Any, coordinates: Any, n_features: int, radius: Any = 1.0) -> None:
        super().__init__(radius)
        self.coordinates, self.n_features = _coordinates(coordinates, n_features)
        k = self.coordinates.size
        if k == 0:
            S = np.zeros((0, 0)) if np.size(shape) == 0 else None
            if S is None:
                raise ValueError("shape must be empty (0 × 0) when coordinates is empty")
            self.shape, self.L = S, S
            return
        S = check_symmetric(shape, name="shape")
        if S.shape[0] != k:
            raise ValueError(f"shape is {S.shape[0]} × {S.shape[0]} but coordinates lists {k} features")
        self.shape, self.L = S, cholesky_factor(S)

    @property
    def dim(self) -> int:
        return self.n_features

    @property
    def k(self) -> int:
        """The number of coordinates the set spans."""
        return int(self.coordinates.size)

    def factor(self) -> np.ndarray:
        """``E_M L`` of shape (d, k): ``V = {E_M L u : ‖u‖₂ ≤ 1}``."""
        P = np.zeros((self.n_features, self.k))
        P[self.coordinates] = self.L
        return P

    def support(self, z):
        """``‖Lᵀ z_M‖₂`` along the last axis, computed as ``m ‖Lᵀ(z_M/m)‖₂`` with ``m = max_h |z_h|``."""
        z = np.asarray(z, dtype=np.float64)
        zm = z[..., self.coordinates]
        if self.k == 0:
            out = np.zeros(z.shape[:-1])
            return float(out) if out.ndim == 0 else out
        with np.errstate(invalid="ignore"):
            m = np.max(np.abs(zm), axis=-1, keepdims=True)
            safe = np.where((m > 0) & np.isfinite(m), m, 1.0)
            out = safe[..., 0] * np.linalg.norm((zm / safe) @ self.L, axis=-1)
        return float(out) if np.ndim(out) == 0 else out

    def support_cvx(self, z):
        """``‖Lᵀ z_M‖₂``: one second-order cone of dimension ``k + 1`` (the constant 0 when ``k = 0``)."""
        if self.k == 0:
            return cp.Constant(0.0), []
        return cp.norm2(self.L.T @ z[self.coordinates]), []

    @classmethod
    def support_cvx_many(cls, sets, zs):
        """``‖L_jᵀ (z_j)_{M_j}‖₂`` for every pair at once: each ``L_jᵀ E_{M_j}ᵀ`` padded to ``k_max`` rows, one
        block-diagonal product and one batched norm (a padded row adds a zero to the norm)."""
        if len(sets) == 1:
            e, c = sets[0].support_cvx(zs[0])
            return [e], c
        kmax = max(s.k for s in sets)
        if kmax == 0:
            return cp.Constant(np.zeros(len(sets))), []
        blocks = []
        for s in sets:
            B = np.zeros((kmax, s.n_features))
            B[: s.k, s.coordinates] = s.L.T
            blocks.append(sp.csr_matrix(B))
        Y = cp.reshape(sp.block_diag(blocks, format="csr") @ stack_directions(zs), (len(sets), kmax), order="C")
        return cp.norm(Y, 2, axis=1), []

    def _inverse_factor(self) -> np.ndarray:
        return sla.solve_triangular(self.L, np.eye(self.k), lower=True)

    def _off(self) -> np.ndarray:
        """The coordinates the set does not span."""
        return np.setdiff1d(np.arange(self.n_features), self.coordinates)

    def membership_cvx(self, v):
        """``v_O = 0`` and ``‖L⁻¹ v_M‖₂ ≤ 1``."""
        return self.scaled_membership_cvx(v, 1.0)

    def scaled_membership_cvx(self, v, scale):
        """``v_O = 0`` and ``‖L⁻¹ v_M‖₂ ≤ t``."""
        off = self._off()
        cons = [v[off] == 0] if off.size else []
        if self.k:
            cons.append(cp.norm2(self._inverse_factor() @ v[self.coordinates]) <= scale)
        return cons

    def gauge(self, v, center=None):
        """``‖L⁻¹ v_M‖₂`` when ``v_O = 0`` (about ``c``: the root of a quadratic), ``inf`` off the subspace."""
        v = np.asarray(v, dtype=np.float64)
        c = np.zeros_like(v) if center is None else np.asarray(center, dtype=np.float64)
        off = self._off()
        if np.any(v[off] != c[off]):
            return float("inf")
        if self.k == 0:
            return 0.0
        a = sla.solve_triangular(self.L, v[self.coordinates], lower=True)
        if not np.any(c):
            return float(np.linalg.norm(a))
        e = sla.solve_triangular(self.L, c[self.coordinates], lower=True)
        u = a - e
        return 0.0 if not np.any(u) else _sphere_gauge(u, e)

    def retract(self, v):
        """``v`` projected on the subspace (``v_O ← 0``), then scaled into the set when it is outside."""
        v = np.asarray(v, dtype=np.float64)
        out = np.zeros_like(v)
        out[self.coordinates] = v[self.coordinates]
        g = self.gauge(out)
        return out if g <= 1.0 else out / (g * (1.0 + 1e-12))

    def worst_case(self, z):
        """``v*_M = S z_M / ‖Lᵀ z_M‖₂``, ``v*_O = 0`` (0 when ``z_M = 0``)."""
        z = np.asarray(z, dtype=np.float64)
        v = np.zeros_like(z)
        zm = z[self.coordinates]
        if not np.any(zm):
            return v
        u = zm / np.max(np.abs(zm))  # rescale first: no underflow for tiny z
        v[self.coordinates] = self.shape @ u / float(np.linalg.norm(self.L.T @ u))
        return v

    def contains(self, v, tol=1e-8):
        """``|v_h| ≤ tol`` off the coordinates and ``‖L⁻¹ v_M‖² ≤ 1 + tol``."""
        v = np.asarray(v, dtype=np.float64)
        off = self._off()
        if off.size and float(np.max(np.abs(v[off]))) > tol:
            return False
        if self.k == 0:
            return True
        u = sla.solve_triangular(self.L, v[self.coordinates], lower=True)
        return bool(u @ u <= 1.0 + tol)

    def key(self):
        return ("CoordinateEllipsoid", self.n_features, self.coordinates.tobytes(), self.shape.tobytes())

    def to_dict(self):
        return {"type": "CoordinateEllipsoid", "radius": np.asarray(self.radius).tolist(),
                "shape": self.shape.tolist(), "coordinates": self.coordinates.tolist(), "n_features": self.n_features}

    def __repr__(self) -> str:
        return (f"CoordinateEllipsoid(coordinates={self.coordinates.tolist()}, n_features={self.n_features}, "
                f"radius={self.radius_text})")

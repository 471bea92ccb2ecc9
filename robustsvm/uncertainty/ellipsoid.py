"""Ellipsoidal uncertainty ``V = {v : vᵀ M⁻¹ v ≤ 1}``."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from .._lazy import cvxpy as cp
from .ball import _sphere_gauge
from .base import UncertaintySet, real_array, stack_directions
from .chance import check_covariance, chi2_radius

__all__ = ["Ellipsoid", "check_symmetric"]


def check_symmetric(M: Any, *, name: str, rtol: float = 1e-10) -> np.ndarray:
    """Return ``M`` as a finite, square, symmetric float array (symmetrized exactly)."""
    M = real_array(M, name=name)
    if M.ndim != 2 or M.shape[0] != M.shape[1] or M.shape[0] == 0:
        raise ValueError(f"{name} must be a non-empty square matrix, got shape {M.shape}")
    if not np.all(np.isfinite(M)):
        raise ValueError(f"{name} contains NaN or infinity")
    scale = max(1.0, float(np.max(np.abs(M))))
    if np.max(np.abs(M - M.T)) > rtol * scale:
        raise ValueError(f"{name} must be symmetric (max |{name} − {name}ᵀ| = {np.max(np.abs(M - M.T)):.3g})")
    return 0.5 * (M + M.T)



def cholesky_factor(M: np.ndarray, *, name: str = "shape") -> np.ndarray:
    """The lower Cholesky factor ``L`` of ``M = LLᵀ``; a ``ValueError`` naming ``name`` when ``M`` is not
    (numerically) positive definite: the factorization fails or ``min L_hh ≤ 1e-12 · max(1, max L_hh)``."""
    try:
        L = np.linalg.cholesky(M)
    except np.linalg.LinAlgError as exc:
        raise ValueError(f"{name} must be positive definite (its Cholesky factorization failed)") from exc
    if np.min(np.diag(L)) <= 1e-12 * max(1.0, float(np.max(np.diag(L)))):
        raise ValueError(f"{name} must be positive definite (it is numerically singular)")
    return L

class Ellipsoid(UncertaintySet):
    """Ellipsoid ``V = {v : vᵀ M⁻¹ v ≤ 1}``, support ``σ_V(z) = ‖Lᵀz‖₂`` with ``M = LLᵀ``.

    Parameters
    ----------
    shape : array of shape (d, d)
        The symmetric positive definite matrix ``M``; ``M = I`` is the
        Euclidean unit ball, ``M = diag(δ²)`` the axis-aligned ellipsoid with
        semi-axes ``δ``.
    radius : float or array of shape (n,)
        Scale ``r_i`` of the set around each sample.

    Notes
    -----
    ``V = L B₂`` with ``B₂`` the Euclidean unit ball, so
    ``σ_V(z) = max_{‖u‖≤1} z·Lu = ‖Lᵀz‖₂`` and the maximizer is
    ``v* = Mz / ‖Lᵀz‖₂``. The compiled form is one second-order cone.
    """

    symmetric = True
    cost_class = "ellipsoid"

    def __init__(self, shape: Any, radius: Any = 1.0) -> None:
        super().__init__(radius)
        M = check_symmetric(shape, name="shape")
        self.shape = M
        self.L = cholesky_factor(M)

    @classmethod
    def from_covariance(cls, S: Any, level: float = 0.95) -> Ellipsoid:
        """The set around an observation that holds the true point with probability ``level`` under ``N(0, S)`` error.

        ``shape = S``, ``radius = √(χ²_d⁻¹(level))`` (:mod:`robustsvm.uncertainty.chance`): the set of
        displacements is ``rV = {v : vᵀS⁻¹v ≤ r²}``. Test a displacement with :meth:`scaled_contains`
        (true for a fraction ``level`` of ``v ~ N(0, S)``); :meth:`contains` and :meth:`support`, like
        every set's, describe the unit set ``V = {v : vᵀS⁻¹v ≤ 1}``.

        Parameters
        ----------
        S : array of shape (d, d)
            The measurement-error covariance ``Σ`` (positive definite).
        level : float in (0, 1)
        """
        S = check_covariance(S)
        return cls(shape=S, radius=chi2_radius(S.shape[0], level))

    @property
    def dim(self) -> int:
        return self.shape.shape[0]

    def support(self, z):
        """``‖Lᵀz‖₂`` (closed form, along the last axis), computed as ``m ‖Lᵀ(z/m)‖₂`` with ``m = max_h |z_h|``."""
        z = np.asarray(z, dtype=np.float64)
        with np.errstate(invalid="ignore"):
            m = np.max(np.abs(z), axis=-1, keepdims=True) if z.shape[-1] else np.ones((*z.shape[:-1], 1))
            safe = np.where((m > 0) & np.isfinite(m), m, 1.0)
            out = safe[..., 0] * np.linalg.norm((z / safe) @ self.L, axis=-1)
        return float(out) if np.ndim(out) == 0 else out

    def support_cvx(self, z):
        """``‖Lᵀz‖₂``: one second-order cone."""
        return cp.norm2(self.L.T @ z), []

    @classmethod
    def support_cvx_many(cls, sets, zs):
        """``‖L_jᵀ z_j‖₂`` for every pair at once: a block-diagonal product and one batched norm."""
        if len(sets) == 1:
            e, c = sets[0].support_cvx(zs[0])
            return [e], c
        d = sets[0].dim
        J = len(sets)
        B = sp.block_diag([s.L.T for s in sets], format="csr")
        Y = cp.reshape(B @ stack_directions(zs), (J, d), order="C")
        return cp.norm(Y, 2, axis=1), []

    def membership_cvx(self, v):
        """``‖L⁻¹v‖₂ ≤ 1``."""
        return [cp.norm2(sla.solve_triangular(self.L, np.eye(self.dim), lower=True) @ v) <= 1]

    def scaled_membership_cvx(self, v, scale):
        """``‖L⁻¹v‖₂ ≤ t``."""
        return [cp.norm2(sla.solve_triangular(self.L, np.eye(self.dim), lower=True) @ v) <= scale]

    def gauge(self, v, center=None):
        """``‖L⁻¹v‖₂`` about the origin; about ``c``, ``1/s*`` with ``‖L⁻¹(c + s(v − c))‖₂ = 1`` (a quadratic)."""
        v = np.asarray(v, dtype=np.float64)
        a = sla.solve_triangular(self.L, v, lower=True)
        if center is None or not np.any(center):
            return float(np.linalg.norm(a))
        e = sla.solve_triangular(self.L, np.asarray(center, dtype=np.float64), lower=True)
        u = a - e
        return 0.0 if not np.any(u) else _sphere_gauge(u, e)

    def worst_case(self, z):
        """``v* = Mz / ‖Lᵀz‖₂`` (0 when z = 0)."""
        z = np.asarray(z, dtype=np.float64)
        if not np.any(z):
            return np.zeros_like(z)
        u = z / np.max(np.abs(z))  # rescale first: no underflow for tiny z
        return self.shape @ u / float(np.linalg.norm(self.L.T @ u))

    def contains(self, v, tol=1e-8):
        """``vᵀM⁻¹v = ‖L⁻¹v‖² ≤ 1 + tol``: the unit set (the radius is not applied; see :meth:`scaled_contains`)."""
        v = np.asarray(v, dtype=np.float64)
        u = sla.solve_triangular(self.L, v, lower=True)
        return bool(u @ u <= 1.0 + tol)

    def key(self):
        return ("Ellipsoid", self.shape.shape, self.shape.tobytes())

    def to_dict(self):
        return {"type": "Ellipsoid", "radius": np.asarray(self.radius).tolist(), "shape": self.shape.tolist()}

    def __repr__(self) -> str:
        return f"Ellipsoid(shape=<{self.dim}×{self.dim}>, radius={self.radius_text})"

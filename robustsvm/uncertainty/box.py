"""Box uncertainty ``V = {v : |v_h| ≤ δ_h}``."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._lazy import cvxpy as cp
from .base import UncertaintySet, real_array, stack_directions
from .chance import bonferroni_radius, check_covariance

__all__ = ["Box"]


class Box(UncertaintySet):
    """Axis-aligned box ``V = {v : |v_h| ≤ δ_h}``, support ``σ_V(z) = Σ_h δ_h |z_h|``.

    Parameters
    ----------
    radius : float or array of shape (n,)
        Scale ``r_i`` of the set around each sample.
    widths : array of shape (d,), optional
        Half-widths ``δ_h ≥ 0`` (ones by default); ``δ_h = 0`` trusts feature ``h`` (its value is known exactly).
    """

    symmetric = True
    cost_class = "box"

    def __init__(self, radius: Any = 1.0, widths: Any = None) -> None:
        super().__init__(radius)
        if widths is not None:
            widths = real_array(widths, name="widths")
            if widths.ndim != 1 or widths.size == 0:
                raise ValueError(f"widths must be a non-empty 1-D array, got shape {widths.shape}")
            if not np.all(np.isfinite(widths)) or np.any(widths < 0):
                raise ValueError("widths must be finite and non-negative (0 for a feature known exactly)")
        self.widths = widths

    @classmethod
    def from_covariance(cls, S: Any = None, level: float = 0.95, *, sigmas: Any = None) -> Box:
        """Widths ``σ_h`` (``S``'s diagonal or ``sigmas``), radius the Bonferroni ``Φ⁻¹(1 − (1−level)/(2d))``.

        Holds the true point with probability at least ``level`` under Gaussian error, whatever the
        correlation (:mod:`robustsvm.uncertainty.chance`).

        Parameters
        ----------
        S : array of shape (d, d), optional
            The error covariance (only its diagonal ``σ_h²`` is used).
        level : float in (0, 1)
        sigmas : array of shape (d,), optional
            The per-feature standard deviations, instead of ``S``.
        """
        if (S is None) == (sigmas is None):
            raise ValueError("give either the covariance S or the per-feature sigmas")
        sig = np.sqrt(np.diag(check_covariance(S))) if S is not None else np.asarray(sigmas, dtype=np.float64).ravel()
        if sig.size == 0 or not np.all(np.isfinite(sig)) or np.any(sig <= 0):
            raise ValueError("the standard deviations must be positive and finite")
        return cls(radius=bonferroni_radius(sig.size, level), widths=sig)

    @property
    def dim(self) -> int | None:
        return None if self.widths is None else self.widths.shape[0]

    def _delta(self, d: int) -> np.ndarray:
        return np.ones(d) if self.widths is None else self.widths

    def support(self, z):
        """``σ_V(z) = Σ_h δ_h |z_h|`` (closed form, along the last axis)."""
        z = np.asarray(z, dtype=np.float64)
        return np.abs(z) @ self._delta(z.shape[-1])

    def support_cvx(self, z):
        """``Σ_h δ_h |z_h|`` (linear constraints after canonicalization)."""
        if self.widths is None:
            return cp.norm1(z), []
        return self.widths @ cp.abs(z), []

    @classmethod
    def support_cvx_many(cls, sets, zs):
        """``Σ_h δ_jh |z_jh|`` for every pair at once (boxes that differ only in their widths)."""
        if len(sets) == 1:
            e, c = sets[0].support_cvx(zs[0])
            return [e], c
        d = zs[0].shape[0]
        widths = np.vstack([s._delta(d) for s in sets])
        Z = cp.reshape(stack_directions(zs), widths.shape, order="C")
        return cp.sum(cp.multiply(widths, cp.abs(Z)), axis=1), []

    def membership_cvx(self, v):
        """``|v_h| ≤ δ_h``."""
        return [cp.abs(v) <= (1.0 if self.widths is None else self.widths)]

    def scaled_membership_cvx(self, v, scale):
        """``|v_h| ≤ t δ_h``."""
        return [cp.abs(v) <= scale * (1.0 if self.widths is None else self.widths)]

    is_polyhedral = True

    def gauge(self, v, center=None):
        """``max_h`` of ``(v_h − c_h)/(δ_h − c_h)`` (a rise) or ``(c_h − v_h)/(δ_h + c_h)`` (a fall), and 0."""
        v = np.asarray(v, dtype=np.float64)
        delta = self._delta(v.shape[0])
        c = np.zeros_like(v) if center is None else np.asarray(center, dtype=np.float64)
        u = v - c
        room = np.where(u > 0, delta - c, delta + c)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(u != 0, np.abs(u) / room, 0.0)
        return float(max(0.0, np.max(ratio))) if ratio.size else 0.0

    def retract(self, v):
        """The nearest point of the box: ``clip(v, −δ, δ)`` (a projection, closer than a radial shrink)."""
        v = np.asarray(v, dtype=np.float64)
        delta = self._delta(v.shape[0])
        return np.clip(v, -delta, delta)

    def worst_case(self, z):
        """The vertex ``sign(z) ∘ δ`` (any point of the face when some ``z_h = 0``)."""
        z = np.asarray(z, dtype=np.float64)
        return np.sign(z) * self._delta(z.shape[0])

    def contains(self, v, tol=1e-8):
        v = np.asarray(v, dtype=np.float64)
        return bool(np.all(np.abs(v) <= self._delta(v.shape[0]) + tol))

    def key(self):
        return ("Box", None if self.widths is None else self.widths.tobytes())

    def to_dict(self):
        return {
            "type": "Box",
            "radius": np.asarray(self.radius).tolist(),
            "widths": None if self.widths is None else self.widths.tolist(),
        }

    def __repr__(self) -> str:
        widths = "" if self.widths is None else ", widths=..."
        return f"Box(radius={self.radius_text}{widths})"

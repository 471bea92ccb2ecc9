"""Chance-level radii for Gaussian measurement error (``docs/uncertainty.md``, "Sets from data").

For ``e ~ N(0, Σ)`` in ``d`` dimensions, ``eᵀΣ⁻¹e ~ χ²_d``, so the ellipsoid of radius
``κ = √(χ²_d⁻¹(level))`` holds ``e`` with probability ``level``; each ``e_h/σ_h ~ N(0, 1)``, so the box
of radius ``z = Φ⁻¹(1 − (1 − level)/(2d))`` misses with probability at most ``d·(1 − level)/d``
(Bonferroni), whatever the correlation.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import stats

__all__ = ["bonferroni_radius", "check_covariance", "check_level", "chi2_radius"]


def check_level(level: Any) -> float:
    """``level`` as a float in (0, 1); a ``TypeError`` / ``ValueError`` naming it otherwise."""
    if isinstance(level, (bool, np.bool_)) or not isinstance(level, (int, float, np.floating, np.integer)):
        raise TypeError(f"level must be a probability, got {level!r}")
    level = float(level)
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie strictly between 0 and 1, got {level!r}")
    return level


def chi2_radius(d: int, level: float) -> float:
    """``κ = √(χ²_d⁻¹(level))``: ``P(eᵀΣ⁻¹e ≤ κ²) = level`` for ``e ~ N(0, Σ)`` in ``d`` dimensions."""
    return float(np.sqrt(stats.chi2.ppf(check_level(level), d)))


def bonferroni_radius(d: int, level: float) -> float:
    """``z = Φ⁻¹(1 − (1 − level)/(2d))``: each ``|e_h| ≤ zσ_h`` fails with probability ``(1 − level)/d``."""
    return float(stats.norm.ppf(1.0 - (1.0 - check_level(level)) / (2.0 * d)))


def check_covariance(S: Any) -> np.ndarray:
    """``S`` as a finite symmetric (d, d) float array (symmetrized); positive definiteness is the set's check."""
    S = np.asarray(S, dtype=np.float64)
    if S.ndim != 2 or S.shape[0] != S.shape[1] or S.shape[0] == 0:
        raise ValueError(f"the covariance must be a square (d, d) matrix, got shape {S.shape}")
    if not np.all(np.isfinite(S)):
        raise ValueError("the covariance contains NaN or infinity")
    if not np.allclose(S, S.T, rtol=1e-10, atol=1e-14 * max(1.0, float(np.max(np.abs(S))))):
        raise ValueError("the covariance must be symmetric")
    return 0.5 * (S + S.T)

"""Shape priors on the weights: ``Convex`` and ``Concave`` along an ordered list of features.

For features ``f_0, …, f_{m−1}`` at positions ``t_0 < … < t_{m−1}`` (dose levels, age bands, years; equally
spaced by default) a convex effect keeps every inner weight at or below the chord of its neighbours,

    w_k ≤ (h₊ w_{k−1} + h₋ w_{k+1}) / (h₋ + h₊),   h₋ = t_k − t_{k−1},  h₊ = t_{k+1} − t_k,

that is, the slopes ``(w_{k+1} − w_k)/h₊`` never decrease along the list; a concave effect keeps it at or above
the chord. Each inner feature gives one row ``(h₊ w_{k−1} − (h₋ + h₊) w_k + h₋ w_{k+1}) / (h₋ + h₊) ≥ 0`` (``≤ 0``
for ``Concave``) of the model's linear constraints: the conic path solves them with the rest of the model and the
certificate prices them by their multipliers. With ``rs.Increasing`` on the same list the effect is convex and
rising (a threshold that accelerates), with ``rs.Decreasing`` convex and falling. Like every prior the statement is
oriented to the class ``positive_class`` names. The derivation of the rows is in ``docs/shape_priors.md``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
from scipy.optimize import LinearConstraint

from .base import Prior, feature_keys
from .signs import feature_index

__all__ = ["Concave", "Convex", "ShapePrior"]


def _positions(at: Any, m: int, what: str) -> tuple[float, ...] | None:
    if at is None:
        return None
    try:
        t = np.asarray(at, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{what}: at must be a list of numbers, one per feature, got {at!r}") from None
    if t.ndim != 1 or t.size != m:
        raise ValueError(f"{what}: at must give one position per feature ({m}), got {t.size}")
    if not np.all(np.isfinite(t)) or np.any(np.diff(t) <= 0):
        raise ValueError(f"{what}: at must be finite and strictly increasing along the features, got {list(t)!r}")
    return tuple(float(v) for v in t)


class ShapePrior(Prior):
    """A statement on the curvature of ``w`` along ``features`` at positions ``at`` (default ``0, 1, …``)."""

    #: +1: every row ``≥ 0`` (convex); −1: every row ``≤ 0`` (concave)
    curvature: ClassVar[int] = 1

    features: tuple
    at: tuple[float, ...] | None

    def __init__(self, features: Sequence[Any], at: Sequence[float] | None = None) -> None:
        what = f"rs.{type(self).__name__}"
        keys = feature_keys(features, what, 3)
        object.__setattr__(self, "features", keys)
        object.__setattr__(self, "at", _positions(at, len(keys), what))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"rs.{type(self).__name__} is immutable: build a new prior")

    def positions(self) -> np.ndarray:
        """``t_0, …, t_{m−1}``: ``at``, or ``0, 1, …, m−1``."""
        return np.arange(len(self.features), dtype=np.float64) if self.at is None else np.asarray(self.at)

    def linear_constraint(self, d: int, feature_names: np.ndarray | None = None) -> LinearConstraint:
        """One row per inner feature ``k``: ``(h₊ w_{k−1} − (h₋ + h₊) w_k + h₋ w_{k+1}) / (h₋ + h₊)``, bounded below
        by 0 (``Convex``) or above by 0 (``Concave``).

        Raises ``ValueError`` naming the prior for an unknown feature or a feature named twice.
        """
        what = repr(self)
        idx = [feature_index(k, d, feature_names, name=what) for k in self.features]
        if len(set(idx)) != len(idx):
            raise ValueError(f"{what} names a feature twice")
        t = self.positions()
        h = np.diff(t)
        rows = len(idx) - 2
        A = np.zeros((rows, d))
        for k in range(rows):
            lo, hi = h[k], h[k + 1]
            A[k, idx[k]] += hi / (lo + hi)
            A[k, idx[k + 1]] -= 1.0
            A[k, idx[k + 2]] += lo / (lo + hi)
        zero, inf = np.zeros(rows), np.full(rows, np.inf)
        return LinearConstraint(A, zero, inf) if self.curvature > 0 else LinearConstraint(A, -inf, zero)

    def to_dict(self) -> dict:
        value = list(self.features) if self.at is None else {"features": list(self.features), "at": list(self.at)}
        return {self.tag: value}

    @classmethod
    def from_value(cls, value: Any) -> ShapePrior:
        if isinstance(value, dict):
            return cls(value.get("features"), at=value.get("at"))
        return cls(value)

    def __repr__(self) -> str:
        at = "" if self.at is None else f", at={list(self.at)!r}"
        return f"rs.{type(self).__name__}({list(self.features)!r}{at})"


class Convex(ShapePrior):
    """``w`` convex along ``features``: each inner weight at or below the chord of its neighbours (slopes rise),
    e.g. a risk that grows faster at higher doses. ``at`` gives the features' positions (default equally spaced)."""

    tag: ClassVar[str] = "convex"


class Concave(ShapePrior):
    """``w`` concave along ``features``: each inner weight at or above the chord of its neighbours (slopes fall),
    e.g. an effect that saturates. ``at`` gives the features' positions (default equally spaced)."""

    tag: ClassVar[str] = "concave"
    curvature: ClassVar[int] = -1

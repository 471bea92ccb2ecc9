"""A set built from two sets with scalar radii: the intersection ``A & B`` and the sum ``A + B``.

Both build their unit set from ``(r_A/s)V_A`` and ``(r_B/s)V_B`` with ``s = max(r_A, r_B)`` their radius; what
the two parts have in common (the checks, the scales, the dimension, the key) lives here.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .base import UncertaintySet


class PairSet(UncertaintySet, shared_base=True):
    """The common part of a set built from ``first`` and ``second``: ``scales = (r_A/s, r_B/s)``, ``s = max(r_A, r_B)``.

    Both radii 0: scales ``(1, 1)`` and radius 0. A ``radius`` given to the built set (a scalar or one per
    sample) replaces ``s``.

    Parameters
    ----------
    first, second : UncertaintySet
        Sets with scalar radii, in the same dimension.
    radius : float or array of shape (n,), optional
    of : str
        The built set in the errors ("an intersection").
    hint : str
        Where per-sample radii go instead.
    mismatch : str
        The dimension error, with ``{a}`` and ``{b}``.
    """

    def __init__(self, first: UncertaintySet, second: UncertaintySet, radius: Any = None, *, of: str, hint: str,
                 mismatch: str) -> None:
        for name, part in (("first", first), ("second", second)):
            if not isinstance(part, UncertaintySet):
                raise TypeError(f"{name} must be an uncertainty set, got {type(part).__name__}")
            if np.ndim(part.radius) != 0:
                raise ValueError(f"the {name} set of {of} needs a scalar radius; {hint}")
        if first.dim is not None and second.dim is not None and first.dim != second.dim:
            raise ValueError(mismatch.format(a=first.dim, b=second.dim))
        rA, rB = float(first.radius), float(second.radius)
        s = max(rA, rB)
        self.scales = (rA / s, rB / s) if s > 0 else (1.0, 1.0)
        super().__init__(s if radius is None else radius)
        self.first = first
        self.second = second
        self.symmetric = bool(first.symmetric and second.symmetric)

    def _parts(self) -> list[tuple[UncertaintySet, float]]:
        """``[(V_A, r_A/s), (V_B, r_B/s)]``."""
        return [(self.first, float(self.scales[0])), (self.second, float(self.scales[1]))]

    @property
    def dim(self) -> int | None:
        return self.first.dim if self.first.dim is not None else self.second.dim

    def check_dim(self, d: int) -> None:
        """Check the radius and both components against ``R^d``."""
        super().check_dim(d)
        self.first.check_dim(d)
        self.second.check_dim(d)

    @property
    def is_polyhedral(self) -> bool:
        """True when both components are polyhedral (their intersection and their sum are then polytopes)."""
        return bool(self.first.is_polyhedral and self.second.is_polyhedral)

    def key(self):
        return (type(self).__name__, self.scales, self.first.key(), self.second.key())

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.first!r}, {self.second!r}, radius={self.radius_text})"

"""Penalties ``R(w) = (λ2/2)‖w‖² + λ1‖w‖₁`` and their sums."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._lazy import cvxpy as cp
from .._validation import check_nonnegative

__all__ = ["Penalty", "L1", "L2", "as_penalty"]


@dataclass(frozen=True)
class Penalty:
    """The elastic-net penalty ``R(w) = (l2/2)‖w‖² + l1‖w‖₁``.

    ``L2(a) + L1(b)`` builds ``Penalty(l2=a, l1=b)``; sums add the strengths.

    Parameters
    ----------
    l2 : float, default 0
        Strength λ2 ≥ 0 of the ridge term.
    l1 : float, default 0
        Strength λ1 ≥ 0 of the lasso term.
    """

    l2: float = 0.0
    l1: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "l2", check_nonnegative(self.l2, name="l2"))
        object.__setattr__(self, "l1", check_nonnegative(self.l1, name="l1"))

    def __add__(self, other: Penalty) -> Penalty:
        if not isinstance(other, Penalty):
            return NotImplemented
        return Penalty(l2=self.l2 + other.l2, l1=self.l1 + other.l1)

    __radd__ = __add__

    def value(self, w: np.ndarray) -> float:
        """Evaluate ``(l2/2)‖w‖² + l1‖w‖₁``."""
        w = np.asarray(w, dtype=np.float64)
        return 0.5 * self.l2 * float(w @ w) + self.l1 * float(np.abs(w).sum())

    def prox(self, v: np.ndarray, step: float = 1.0) -> np.ndarray:
        """``argmin_w ½‖w − v‖² + step·R(w)``: soft-threshold by ``step·l1``, then shrink by ``1 + step·l2``."""
        v = np.asarray(v, dtype=np.float64)
        soft = np.sign(v) * np.maximum(np.abs(v) - step * self.l1, 0.0)
        return soft / (1.0 + step * self.l2)

    def cvx(self, w, l2=None, l1=None):
        """``(l2/2)‖w‖² + l1‖w‖₁`` as a CVXPY expression; ``l2``/``l1`` may be parameters (DPP)."""
        l2 = self.l2 if l2 is None else l2
        l1 = self.l1 if l1 is None else l1
        # a term whose strength is the number 0 is left out (its epigraph would only add free variables)
        terms = [0.5 * l2 * cp.sum_squares(w) if _present(l2) else None, l1 * cp.norm1(w) if _present(l1) else None]
        terms = [t for t in terms if t is not None]
        return sum(terms[1:], terms[0]) if terms else cp.Constant(0.0)

    @property
    def has_l1(self) -> bool:
        return self.l1 > 0

    @property
    def has_l2(self) -> bool:
        return self.l2 > 0

    def to_dict(self) -> dict:
        return {"l2": self.l2, "l1": self.l1}

    def __repr__(self) -> str:
        parts = []
        if self.l2:
            parts.append(f"L2({self.l2:g})")
        if self.l1:
            parts.append(f"L1({self.l1:g})")
        return " + ".join(parts) if parts else "Penalty()"


def _present(strength) -> bool:
    """False for a strength that is the number 0; True for a positive number or a CVXPY parameter."""
    return isinstance(strength, cp.Expression) or float(strength) != 0.0


def L2(strength: float) -> Penalty:  # noqa: N802 - public API name
    """Ridge penalty ``(strength/2)‖w‖²``."""
    return Penalty(l2=check_nonnegative(strength, name="L2 strength"))


def L1(strength: float) -> Penalty:  # noqa: N802 - public API name
    """Lasso penalty ``strength·‖w‖₁``."""
    return Penalty(l1=check_nonnegative(strength, name="L1 strength"))


def as_penalty(penalty: Penalty | None) -> Penalty:
    """Return ``penalty`` as a :class:`Penalty` (``None`` is the zero penalty)."""
    if penalty is None:
        return Penalty()
    if not isinstance(penalty, Penalty):
        raise TypeError(f"penalty must be built from rs.L2(...) and rs.L1(...), got {penalty!r}")
    return penalty

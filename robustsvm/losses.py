"""Margin losses ``ℓ(m)`` of the objective ``R(w) + c Σ_i s_i ℓ(m_i^rob)``.

Every loss here is convex and non-increasing in the margin ``m``, which is what
makes the robust counterpart (the loss at the worst point of each uncertainty
set) exact.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Loss", "Hinge", "SquaredHinge", "HardMargin"]

_REDUCTIONS = ("mean", "sum")


@dataclass(frozen=True)
class Loss:
    """Base class of the margin losses.

    Parameters
    ----------
    reduction : {"mean", "sum"}
        ``"mean"`` weighs sample ``i`` by ``s_i / Σ_j s_j`` (``1/n`` without
        sample weights); ``"sum"`` by ``s_i``.
    """

    reduction: str = "mean"

    def __post_init__(self) -> None:
        if self.reduction not in _REDUCTIONS:
            raise ValueError(f"reduction must be one of {_REDUCTIONS}, got {self.reduction!r}")

    #: short identifier used by backends and serialization
    name = "loss"

    def value(self, margin: np.ndarray) -> np.ndarray:
        """Per-sample loss ``ℓ(m)``."""
        raise NotImplementedError

    def coefficients(self, sample_weight: np.ndarray) -> np.ndarray:
        """Per-sample weights ``c_i`` of the loss terms, from the sample weights ``s_i``."""
        sample_weight = np.asarray(sample_weight, dtype=np.float64)
        if self.reduction == "mean":
            return sample_weight / sample_weight.sum()
        return sample_weight.copy()

    def to_dict(self) -> dict:
        return {"type": type(self).__name__, "reduction": self.reduction}


@dataclass(frozen=True)
class Hinge(Loss):
    """Hinge loss ``ℓ(m) = max(0, 1 − m)``."""

    name = "hinge"

    def value(self, margin: np.ndarray) -> np.ndarray:
        return np.maximum(0.0, 1.0 - np.asarray(margin, dtype=np.float64))


@dataclass(frozen=True)
class SquaredHinge(Loss):
    """Squared hinge loss ``ℓ(m) = max(0, 1 − m)²``."""

    name = "squared_hinge"

    def value(self, margin: np.ndarray) -> np.ndarray:
        return np.maximum(0.0, 1.0 - np.asarray(margin, dtype=np.float64)) ** 2


@dataclass(frozen=True)
class HardMargin(Loss):
    """Hard margin: no loss term, the constraint ``m_i^rob ≥ 1`` for every sample.

    The problem is infeasible when the (robust) data are not separable.
    """

    name = "hard_margin"

    def value(self, margin: np.ndarray) -> np.ndarray:
        return np.zeros_like(np.asarray(margin, dtype=np.float64))


def loss_from_dict(spec: dict) -> Loss:
    """Rebuild a loss from :meth:`Loss.to_dict`."""
    classes = {cls.__name__: cls for cls in (Hinge, SquaredHinge, HardMargin)}
    try:
        cls = classes[spec["type"]]
    except KeyError as exc:
        raise ValueError(f"unknown loss {spec!r}") from exc
    return cls(reduction=spec.get("reduction", "mean"))

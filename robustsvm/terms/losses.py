"""Margin losses ``ℓ(m)`` of the objective ``R(w) + c Σ_i s_i ℓ(m_i^rob)``.

Every loss here is convex and non-increasing in the margin ``m``, which is what
makes the robust counterpart (the loss at the worst point of each uncertainty
set) exact.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._lazy import cvxpy as cp

__all__ = ["Loss", "Hinge", "SquaredHinge", "HardMargin", "LOSSES", "loss_from_dict"]

_REDUCTIONS = ("mean", "sum")

#: the one table of losses, short name → class; every subclass with a ``name`` is added when defined
LOSSES: dict[str, type] = {}


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

    #: short identifier used by backends and serialization (unique: the key in :data:`LOSSES`)
    name = "loss"

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get("name") is not None:
            LOSSES[cls.name] = cls
    #: the upper end of the dual box ``0 ≤ α ≤ upper`` of ``c ℓ(m) = max_α c(α(1 − m) − ℓ*(α))``
    dual_upper = np.inf
    #: ``ℓ*''(α)`` where it is constant on the dual box: the diagonal term a dual coordinate step adds to the
    #: curvature ``Q_ii`` and ``ℓ*''(α_i)·α_i`` to the gradient (0 for the hinge, ½ for the squared hinge's
    #: ``ℓ*(α) = α²/4``); None when ``ℓ*`` is not a quadratic on the box (no exact coordinate step)
    dual_diagonal = None
    #: the loss whose fitted epoch costs the model of ``solver="auto"`` applies (``backends/cost.py``)
    cost_class = "hinge"
    #: the degree of ``α − ℓ*(α)`` as a polynomial in ``α`` (None: not a polynomial, or not declared); the
    #: certifier's search over the scale of a dual point is then exact in closed form (degree ≤ 2)
    dual_term_degree = None
    #: True when the loss is a constraint ``m ≥ 1`` rather than a penalty (hard margin)
    is_constraint = False
    #: what :meth:`cvx` is written in: ``"slack"``, the slacks ``ξ ≥ max(0, 1 − m^rob)`` (a loss that is zero
    #: past margin 1), or ``"margin"``, variables ``u ≤ m^rob`` (any non-increasing loss: its own epigraph)
    conic_argument = "slack"
    #: True when ``σ(f(x))`` of the fitted decision ``f`` is the model's class probability (the logistic loss)
    gives_probability = False
    #: the cone the conic form needs beyond linear and quadratic pieces (None: an LP/QP solver takes it)
    cone = None
    #: ``L = sup |ℓ(m) − ℓ(m′)| / |m − m′|``, the Lipschitz constant in the margin (None: not Lipschitz, as the
    #: squared hinge); a set of distributions reads it (a Wasserstein ball needs ``L = 1``)
    margin_lipschitz = None

    def value(self, margin: np.ndarray) -> np.ndarray:
        """Per-sample loss ``ℓ(m)``."""
        raise NotImplementedError

    def dual_term(self, alpha: np.ndarray) -> np.ndarray:
        """``α − ℓ*(α)`` per sample: what a dual point ``α`` in the dual box contributes.

        Every loss here is ``ℓ(m) = max_{0 ≤ α ≤ upper} α(1 − m) − ℓ*(α)``, so
        ``Σ c_i (α_i − ℓ*(α_i)) − max_w,b [...]`` is a Lagrangian dual value.
        """
        raise NotImplementedError

    def multiplier(self, margin: np.ndarray) -> np.ndarray:
        """A dual point ``α(m) ∈ −∂ℓ(m)`` in the dual box: the multiplier the margin ``m`` asks for.

        ``ℓ(m) = α(1 − m) − ℓ*(α)`` at this ``α``, so multipliers recovered from a
        point's margins are exact at the optimum for a differentiable loss. The
        default is a central difference of :meth:`value`, clipped to the dual box.
        """
        margin = np.asarray(margin, dtype=np.float64)
        h = 1e-6 * np.maximum(1.0, np.abs(margin))
        slope = -(self.value(margin + h) - self.value(margin - h)) / (2.0 * h)
        return np.clip(slope, 0.0, float(self.dual_upper))

    def cvx(self, xi, coef):
        """The loss terms as a CVXPY expression of the slacks ``ξ ≥ 1 − m^rob``, ``ξ ≥ 0``.

        With ``conic_argument = "margin"`` the argument is instead a variable ``u ≤ m^rob``
        and the expression must be non-increasing in each ``u_i`` (the loss's own epigraph).
        ``coef`` are the weights :meth:`conic_weight` makes of the coefficients
        ``c`` (an array or a parameter holding them).
        """
        raise NotImplementedError

    def cvx_value(self, margin):
        """``ℓ(u)`` elementwise as a convex CVXPY expression of margins ``u`` (for epigraphs ``ℓ(u_i) ≤ s_i``)."""
        raise NotImplementedError(f"the {self.name} loss has no elementwise conic form")

    def conic_weight(self, coef: np.ndarray) -> np.ndarray:
        """The weights :meth:`cvx` takes for the loss coefficients ``c``: ``c`` itself (terms ``c·ξ``).

        A loss whose terms are not linear in ``c`` in a DPP-friendly way says
        so here (the squared hinge takes ``√c``); the compiler never asks which
        loss it holds.
        """
        return np.asarray(coef, dtype=np.float64)

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
    dual_upper = 1.0
    margin_lipschitz = 1.0
    dual_diagonal = 0.0
    dual_term_degree = 1

    def value(self, margin: np.ndarray) -> np.ndarray:
        return np.maximum(0.0, 1.0 - np.asarray(margin, dtype=np.float64))

    def dual_term(self, alpha: np.ndarray) -> np.ndarray:
        """``α`` (``ℓ* = 0`` on ``[0, 1]``)."""
        return np.asarray(alpha, dtype=np.float64)

    def multiplier(self, margin: np.ndarray) -> np.ndarray:
        """1 below the margin, 0 on and above it (the subgradient's ends; on the margin any ``α ∈ [0, 1]`` fits)."""
        return np.where(np.asarray(margin, dtype=np.float64) < 1.0, 1.0, 0.0)

    def cvx(self, xi, coef):
        """``c·ξ``."""
        return coef @ xi

    def cvx_value(self, margin):
        """``max(0, 1 − u)``."""
        return cp.pos(1 - margin)


@dataclass(frozen=True)
class SquaredHinge(Loss):
    """Squared hinge loss ``ℓ(m) = max(0, 1 − m)²``."""

    name = "squared_hinge"
    dual_diagonal = 0.5
    cost_class = "squared_hinge"
    dual_term_degree = 2

    def value(self, margin: np.ndarray) -> np.ndarray:
        return np.maximum(0.0, 1.0 - np.asarray(margin, dtype=np.float64)) ** 2

    def dual_term(self, alpha: np.ndarray) -> np.ndarray:
        """``α − α²/4`` (``ℓ*(α) = α²/4`` on ``α ≥ 0``)."""
        alpha = np.asarray(alpha, dtype=np.float64)
        return alpha - 0.25 * alpha * alpha

    def multiplier(self, margin: np.ndarray) -> np.ndarray:
        """``2 max(0, 1 − m)``, the derivative of ``−ℓ``."""
        return 2.0 * np.maximum(0.0, 1.0 - np.asarray(margin, dtype=np.float64))

    def cvx(self, xi, root_coef):
        """``‖√c ∘ ξ‖²`` with ``root_coef = √c`` (:meth:`conic_weight`)."""
        return cp.sum_squares(cp.multiply(root_coef, xi))

    def conic_weight(self, coef: np.ndarray) -> np.ndarray:
        """``√c``: ``c @ square(ξ)`` with a parameter ``c`` would make CVXPY densify an n × n quadratic form."""
        return np.sqrt(np.asarray(coef, dtype=np.float64))


@dataclass(frozen=True)
class HardMargin(Loss):
    """Hard margin: no loss term, the constraint ``m_i^rob ≥ 1`` for every sample.

    The problem is infeasible when the (robust) data are not separable.
    """

    name = "hard_margin"
    dual_term_degree = 1
    is_constraint = True

    def value(self, margin: np.ndarray) -> np.ndarray:
        return np.zeros_like(np.asarray(margin, dtype=np.float64))

    def coefficients(self, sample_weight: np.ndarray) -> np.ndarray:
        """Ones: each constraint ``m_i^rob ≥ 1`` has its own unbounded multiplier, whatever the weights."""
        return np.ones_like(np.asarray(sample_weight, dtype=np.float64))

    def dual_term(self, alpha: np.ndarray) -> np.ndarray:
        """``α`` (the multiplier of ``1 − m ≤ 0``, unbounded above)."""
        return np.asarray(alpha, dtype=np.float64)

    def multiplier(self, margin: np.ndarray) -> np.ndarray:
        """0: a constraint's multiplier is not read off its margin (the certificate rescales onto ``m ≥ 1``)."""
        return np.zeros_like(np.asarray(margin, dtype=np.float64))


def loss_from_dict(spec: dict) -> Loss:
    """Rebuild a loss from :meth:`Loss.to_dict` (``type`` is the class name or the short name)."""
    classes = {cls.__name__: cls for cls in LOSSES.values()} | LOSSES
    try:
        cls = classes[spec["type"]]
    except KeyError as exc:
        raise ValueError(f"unknown loss {spec!r}") from exc
    return cls(reduction=spec.get("reduction", "mean"))

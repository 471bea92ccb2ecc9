"""The best scale ``θ`` of a dual point in the Lagrangian bound: ``max_{0 ≤ θ ≤ θmax} D(θa)``.

:func:`robustsvm.certificates.duality.lagrangian_bound` evaluates the dual function ``D`` at ``θa`` for a fixed
admissible ``a``. Any ``θ`` in ``[0, θmax]`` gives a valid lower bound on the optimum, so the search only decides how
tight the bound is. For the losses whose ``α − ℓ*(α)`` is a polynomial of degree at most 2 (hinge, squared hinge, hard
margin: ``Loss.dual_term_degree``) and ``λ2 > 0``,

    D(θ) = pθ − qθ² − R*(θs),      D'(θ) = p − 2qθ − s·w*(θs),

with ``R*`` the conjugate of the penalty over the feasible set of ``w`` (signs or a box, ``λ1`` included) and
``w*(t)`` its maximizer (the envelope theorem: ``d/dθ R*(θs) = s·w*(θs)``). ``w*`` is piecewise linear and
non-decreasing along ``s``, so ``D'`` is piecewise linear and non-increasing: a safeguarded Newton iteration on
``D'`` ends on the exact root of its piece in a few steps. For signs alone (``λ1 = 0``, no box) ``R*(θs) =
θ²R*(s)``: ``D`` is one parabola and its vertex ``θ = p/(2(q + R*(s)))``, clipped to ``[0, θmax]``, is taken in
closed form (no pass over ``s``). Other
losses, and ``λ2 = 0``, keep a bounded scalar search. The derivation: ``docs/certificates.md``, "Where (a, u) come
from".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["best_scale", "penalty_maximizer", "scale_in_closed_form"]


def scale_in_closed_form(loss: Any, l2: float) -> bool:
    """Whether :func:`best_scale` applies: the loss declares ``dual_term_degree`` ≤ 2 and ``λ2 > 0``."""
    return getattr(loss, "dual_term_degree", None) in (1, 2) and l2 > 0


def penalty_maximizer(s: np.ndarray, l2: float, l1: float, signs: np.ndarray | None = None, *,
                      lower: np.ndarray | None = None, upper: np.ndarray | None = None) -> np.ndarray:
    """``w*(s) = argmax_{w ∈ S} s·w − λ1‖w‖₁ − (λ2/2)‖w‖²`` for ``λ2 > 0``: ``clip(soft(s, λ1)/λ2, l, u)`` on a
    box, the soft-threshold over ``λ2`` with the forbidden signs set to 0 on the signs' cone."""
    t = np.sign(s) * np.maximum(np.abs(s) - l1, 0.0)
    if lower is not None:
        return np.clip(t / l2, lower, upper)
    t[signs * t < 0] = 0.0
    return t / l2


def best_scale(value: Callable[[float], float], conjugate: Callable[[float], float], s: np.ndarray, hi: float, *,
               l2: float, l1: float, signs: np.ndarray | None, lower: np.ndarray | None,
               upper: np.ndarray | None, max_steps: int = 60) -> float:
    """The maximizer of ``D(θ) = value(θ)`` on ``[0, hi]`` when ``value(θ) + conjugate(θ) = pθ − qθ²``.

    Parameters
    ----------
    value : callable
        ``θ ↦ D(θa)``, the dual function at the scaled point.
    conjugate : callable
        ``θ ↦ R*(θs)``, the penalty's conjugate part of ``D`` (``value + conjugate`` is the quadratic rest).
    s : ndarray of shape (d,)
        The point's ``s`` (``Xᵀ(a∘y)`` plus the robust shift, minus the linear constraints' ``Aᵀν``).
    hi : float
        The largest admissible scale (positive).
    l2, l1, signs, lower, upper
        The penalty and the feasible set of ``w`` (``lower``/``upper`` replace ``signs`` when given).
    max_steps : int
        A cap on the Newton/bisection steps (the root of a piece is usually reached in 1–3).

    Returns
    -------
    float
        ``θ`` in ``[0, hi]``: the root of ``D'`` (or an end of the interval where ``D'`` keeps its sign).
    """
    t = 0.5 * hi
    r1, r2 = value(t) + conjugate(t), value(hi) + conjugate(hi)
    if not (np.isfinite(r1) and np.isfinite(r2)):
        return t
    q = (2.0 * r1 - r2) / (2.0 * t * t)
    p = r1 / t + q * t
    if l1 == 0 and lower is None:  # signs alone: R*(θs) = θ²R*(s), so D is the parabola pθ − (q + R*(s))θ²
        curvature = q + conjugate(1.0)
        if not curvature > 0:
            return hi if p > 0 else 0.0
        return float(min(max(0.5 * p / curvature, 0.0), hi))

    def slope(theta: float) -> tuple[float, float]:
        w = penalty_maximizer(theta * s, l2, l1, signs, lower=lower, upper=upper)
        interior = (w != 0.0) if lower is None else ((w > lower) & (w < upper) & (np.abs(theta * s) > l1))
        return p - 2.0 * q * theta - float(s @ w), -2.0 * q - float(s[interior] @ s[interior]) / l2

    g, _ = slope(0.0)
    if not g > 0:
        return 0.0
    g, _ = slope(hi)
    if g >= 0:
        return hi
    left, right = 0.0, hi
    theta = t
    for _ in range(max_steps):
        g, curvature = slope(theta)
        if g == 0.0:
            return theta
        if g > 0:
            left = theta
        else:
            right = theta
        step = theta - g / curvature if curvature < 0 else np.nan
        new = step if left < step < right else 0.5 * (left + right)
        if abs(new - theta) <= 4.0 * np.finfo(float).eps * hi or right - left <= 4.0 * np.finfo(float).eps * hi:
            return new
        theta = new
    return theta

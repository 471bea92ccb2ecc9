"""Where a model stops being useful, and iteration bounds of Tajima et al. (2020) for the first-order backends.

:func:`critical_radius` and :func:`critical_l1` give the smallest radius and the smallest λ1 at which
``w = 0`` is optimal (the constant classifier); ``docs/derivations/critical_radius.md`` derives them.

For ``P(w) = (λ/2)‖w‖² + Σ_i c_i max(0, 1 − y_i x_i·w)`` over sign constraints
with ``‖x_i‖ ≤ R`` and ``C = Σ_i c_i`` (``C = 1`` for the mean reduction, the
paper's setting):

* Frank-Wolfe (Thm 6.1): the dual's curvature is at most ``C²R²/λ``, so after
  ``T`` iterations ``D(α⋆) − D(α_T) ≤ 2C²R²/(λ(T + 2))``; ε-accuracy holds for
  any ``T ≥ 2C²R²/(λε) − 2``.
* Projected Pegasos (Thm 4.1): subgradients are bounded by
  ``G = sqrt(2Cλ) + C R`` on the ball of radius ``sqrt(2C/λ)``, so some iterate
  ``T' ≤ T`` has ``P(w_T') − P(w⋆) ≤ G² log(T)/(λT)`` (for ``T ≥ 3``).
"""

from __future__ import annotations

import math
from typing import Any

from .conic import critical as _critical

__all__ = [
    "critical_l1",
    "critical_radius",
    "frank_wolfe_bound",
    "frank_wolfe_iterations",
    "pegasos_bound",
    "pegasos_iterations",
]


def critical_radius(problem: Any, X: Any, y: Any, *, sample_weight: Any = None, feature_names: Any = None) -> float:
    """The smallest radius at which ``w = 0`` is optimal (the model predicts one class everywhere).

    For radii ``r_i = ρ s_i`` (``s_i`` the problem's radii over their largest: ``s = 1`` for one scalar radius),
    the smallest ``ρ`` such that some optimal multipliers ``α`` of the constant classifier satisfy

        Σ_i c_i α_i y_i x_i  ∈  λ1 B∞ + ρ Σ_i c_i α_i s_i (−y_i V_i) + N,

    ``N`` the normal cone of the signs, bounds and linear constraints at ``w = 0``. It does not depend on λ2:
    for every λ2 ≥ 0, ``w = 0`` is optimal exactly when ``ρ`` is at least this value. A conic program
    (Charnes–Cooper) for one shared symmetric set; a bisection on convex programs otherwise
    (:func:`robustsvm.conic.critical.critical_radius`; the derivation in ``docs/derivations/critical_radius.md``).

    Parameters
    ----------
    problem : Problem
        A linear model with the hinge or the squared hinge and an uncertainty set (any set with CVXPY membership
        constraints), any intercept, signs, bounds, L1 and L2.
    X, y, sample_weight, feature_names
        As for :meth:`Problem.solve`.

    Returns
    -------
    float
        ``ρ``: ``problem.solve(X, y, radius=ρ·s)`` returns ``w = 0``; ``inf`` when no radius does, 0 when
        ``w = 0`` is optimal without uncertainty.
    """
    return _critical.critical_radius(problem.normalize(X, y, sample_weight=sample_weight, feature_names=feature_names))


def critical_l1(problem: Any, X: Any, y: Any, *, sample_weight: Any = None, feature_names: Any = None) -> float:
    """The smallest λ1 at which ``w = 0`` is optimal at the problem's radii (glmnet's ``λ_max``).

        λ1_c = min over α ∈ D, p ∈ N, z ∈ Σ_i c_i α_i r_i (−y_i V_i) of ‖v(α) − p − z‖∞

    with ``v(α) = Σ_i c_i α_i y_i x_i`` and ``D`` the constant classifier's optimal multipliers. The problem's
    own λ1 and λ2 are ignored; for every λ2 ≥ 0, ``w = 0`` is optimal exactly when λ1 ≥ this value.
    """
    return _critical.critical_l1(problem.normalize(X, y, sample_weight=sample_weight, feature_names=feature_names))


def _check(R: float, lam: float, total_weight: float) -> None:
    if not (math.isfinite(R) and R >= 0):
        raise ValueError(f"R must be finite and non-negative, got {R!r}")
    if not (math.isfinite(lam) and lam > 0):
        raise ValueError(f"lam must be finite and positive, got {lam!r}")
    if not (math.isfinite(total_weight) and total_weight > 0):
        raise ValueError(f"total_weight must be finite and positive, got {total_weight!r}")


def _check_eps(eps: float) -> None:
    if not (math.isfinite(eps) and eps > 0):
        raise ValueError(f"eps must be finite and positive, got {eps!r}")


def frank_wolfe_bound(T: int, R: float, lam: float, total_weight: float = 1.0) -> float:
    """Dual suboptimality bound after ``T`` Frank-Wolfe iterations: ``2C²R²/(λ(T + 2))``.

    Parameters
    ----------
    T : int
        Iterations done (T ≥ 0).
    R : float
        ``max_i ‖x_i‖``.
    lam : float
        λ > 0 of the L2 penalty.
    total_weight : float, default 1
        ``C = Σ_i c_i`` (1 for ``reduction="mean"``, ``Σ s_i`` for ``"sum"``).
    """
    _check(R, lam, total_weight)
    if T < 0:
        raise ValueError(f"T must be non-negative, got {T!r}")
    return 2.0 * (total_weight * R) ** 2 / (lam * (T + 2))


def frank_wolfe_iterations(eps: float, R: float, lam: float, total_weight: float = 1.0) -> int:
    """Smallest ``T ≥ 0`` with ``T ≥ 2C²R²/(λε) − 2`` (Thm 6.1): ``D(α⋆) − D(α_T) ≤ ε``."""
    _check(R, lam, total_weight)
    _check_eps(eps)
    return max(0, math.ceil(2.0 * (total_weight * R) ** 2 / (lam * eps) - 2.0))


def pegasos_bound(T: int, R: float, lam: float, total_weight: float = 1.0) -> float:
    """Best-iterate error bound after ``T ≥ 1`` projected Pegasos steps (Thm 4.1).

    ``G² max(2 log T, 1 + log T)/(2λT)`` with ``G = sqrt(2Cλ) + C R`` the bound
    on the subgradients over the ball of radius ``sqrt(2C/λ)``. For ``T ≥ 3``
    this is the paper's ``(sqrt(2λ) + R)² log(T)/(λT)`` (``C = 1``); for
    ``T ∈ {1, 2}``, where ``log T < 1`` makes the paper's form too small, it is
    the standard strongly convex bound ``G²(1 + log T)/(2λT)`` it derives from.
    The bound decreases with ``T``.
    """
    _check(R, lam, total_weight)
    if T < 1:
        raise ValueError(f"T must be at least 1, got {T!r}")
    g = math.sqrt(2.0 * total_weight * lam) + total_weight * R
    log_t = math.log(T)
    return g * g * max(2.0 * log_t, 1.0 + log_t) / (2.0 * lam * T)


def pegasos_iterations(eps: float, R: float, lam: float, total_weight: float = 1.0) -> int:
    """Smallest ``T ≥ 1`` with ``pegasos_bound(T) ≤ ε`` (doubling, then bisection)."""
    _check(R, lam, total_weight)
    _check_eps(eps)
    if pegasos_bound(1, R, lam, total_weight) <= eps:
        return 1
    lo, hi = 1, 2
    while pegasos_bound(hi, R, lam, total_weight) > eps:
        lo, hi = hi, 2 * hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if pegasos_bound(mid, R, lam, total_weight) <= eps:
            hi = mid
        else:
            lo = mid
    return hi

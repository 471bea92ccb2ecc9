"""Iteration bounds of Tajima et al. (2020) for the first-order backends.

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

__all__ = [
    "frank_wolfe_bound",
    "frank_wolfe_iterations",
    "pegasos_bound",
    "pegasos_iterations",
]


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

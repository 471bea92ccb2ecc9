"""The objective, written once.

For a normalized :class:`~robustsvm.model.Model` this module evaluates

    P(w, b) = (λ2/2)‖w‖² + λ1‖w‖₁ + I(b) + Σ_i c_i ℓ(m_i^rob),
    m_i^rob = y_i(x_i·w + b) − r_i σ_{V_i}(−y_i w),

the robust margins, and the constraint violation ``max(0, −s_h w_h, 1 − m_i^rob
[hard margin])``. A kernel model is evaluated at an expansion
``f(x) = Σ_j a_j k(x, x_j) + b``, ``w = Σ_j a_j φ(x_j)``, where
``‖w‖² = aᵀK_SS a`` and the margins are ``y_i f(x_i)``. Every value the package
reports — ``Problem.objective``, ``Solution.objective`` of every backend, the
primal side of every certificate, ``validate`` — comes from here.
"""

from __future__ import annotations

from typing import Any

import numba as nb
import numpy as np

from .model import Model

__all__ = [
    "kernel_objective",
    "kernel_violation",
    "objective",
    "objective_from_margins",
    "optimal_intercept",
    "robust_margins",
    "violation",
]


def robust_margins(model: Model, w: np.ndarray, b: float = 0.0, *, z: np.ndarray | None = None) -> np.ndarray:
    """``m_i^rob = y_i(x_i·w + b) − r_i σ_{V_i}(−y_i w)`` (``z = Xw`` may be passed when known)."""
    if z is None:
        z = np.asarray(model.X @ w).ravel()
    margin = model.y * (z + b)
    if model.layout is not None:
        margin = margin - model.layout.penalty_terms(w, model.y)
    return margin


def objective_from_margins(model: Model, w: np.ndarray, b: float, margins: np.ndarray) -> float:
    """``P`` from precomputed margins: ``(λ2/2)‖w‖² + λ1‖w‖₁ + I(b) + Σ c_i ℓ(m_i)``.

    For a kernel model pass ``w`` such that ``‖w‖²`` is right: use
    :func:`kernel_objective` instead.
    """
    value = model.penalty.value(w) + model.intercept.value(b)
    if model.distribution is not None:  # the worst expected loss over the set of distributions
        return float(value + model.distribution.budget(model.loss, margins, model.c, w)[0])
    if not model.loss.is_constraint:
        value += float(model.c @ model.loss.value(margins))
    return float(value)


def objective(model: Model, w: np.ndarray, b: float = 0.0) -> float:
    """The exact objective ``P(w, b)`` of a linear model (constraints not included: see :func:`violation`)."""
    w = np.asarray(w, dtype=np.float64)
    return objective_from_margins(model, w, b, robust_margins(model, w, b))


def violation(model: Model, w: np.ndarray, b: float = 0.0, *, margins: np.ndarray | None = None) -> float:
    """Largest violation of the constraints at ``(w, b)``, 0 when feasible.

    ``max(−s_h w_h)`` over the sign-constrained features, ``max(l_h − w_h, w_h − u_h)``
    over the bounds, ``max(lb_k − (Aw)_k, (Aw)_k − ub_k)`` over the linear constraints and,
    for a hard margin, ``max(1 − m_i^rob)``.
    """
    w = np.asarray(w, dtype=np.float64)
    v = 0.0
    if model.has_signs:
        v = max(v, float(np.max(-model.signs * w)))
    if model.feasible is not None and (model.has_bounds or model.has_constraints):
        v = max(v, model.feasible.violation(w))
    if model.loss.is_constraint:
        if margins is None:
            margins = robust_margins(model, w, b)
        v = max(v, float(np.max(1.0 - margins)))
    return max(v, 0.0)


def _kernel_parts(model: Model, dual_coef: Any, support_vectors: Any, b: float) -> tuple[float, np.ndarray]:
    a = np.asarray(dual_coef, dtype=np.float64).ravel()
    if model.kernel is None:
        raise ValueError("a kernel expansion needs a model with a kernel")
    if a.size == 0:
        return 0.0, model.y * b
    K_ss = model.kernel(support_vectors, support_vectors)
    norm_sq = float(a @ K_ss @ a)
    margins = model.y * (model.kernel(model.X, support_vectors) @ a + b)
    return norm_sq, margins


def kernel_objective(model: Model, dual_coef: Any, support_vectors: Any, b: float) -> float:
    """``P`` at the expansion ``f(x) = Σ_j a_j k(x, x_j) + b``: ``(λ2/2)aᵀK_SS a + I(b) + Σ c_i ℓ(y_i f(x_i))``."""
    norm_sq, margins = _kernel_parts(model, dual_coef, support_vectors, b)
    value = 0.5 * model.l2 * norm_sq + model.intercept.value(b)  # the L2 term at ‖w‖² = aᵀK_SS a (no L1)
    if not model.loss.is_constraint:
        value += float(model.c @ model.loss.value(margins))
    return float(value)


def kernel_violation(model: Model, dual_coef: Any, support_vectors: Any, b: float) -> float:
    """``max(0, max_i(1 − y_i f(x_i)))`` for a hard margin, 0 otherwise."""
    if not model.loss.is_constraint:
        return 0.0
    _, margins = _kernel_parts(model, dual_coef, support_vectors, b)
    return max(0.0, float(np.max(1.0 - margins)))


def optimal_intercept(z: np.ndarray, y: np.ndarray, c: np.ndarray, *, squared: bool = False,
                      positive_weight: float | None = None) -> float:
    """Exact minimizer of ``φ(b) = Σ_i c_i ℓ(y_i(z_i + b))`` over a free intercept ``b``.

    With breakpoints ``t_i = y_i − z_i``, ``φ`` is convex piecewise linear
    (hinge: ``φ'(b) = Σ_{t_i<b} c_i − Σ_{y_i=+1} c_i``, so ``b`` is the smallest ``t_k`` with
    ``Σ_{t_i ≤ t_k} c_i ≥ Σ_{y_i=+1} c_i``, a weighted quantile found by selection in O(n) expected;
    ``positive_weight`` is that sum when the caller has it)
    or piecewise quadratic and C¹ (squared hinge: the root of
    ``g(b) = Σ_{y_i=+1, t_i>b} c_i(t_i − b) + Σ_{y_i=−1, t_i<b} c_i(t_i − b)``,
    decreasing and linear between breakpoints, from prefix sums after one sort, O(n log n)). ``z`` may hold
    the robust shifts (``z_i = x_i·w − y_i r_i σ_i``).
    """
    t = y - z
    if not squared:
        target = float(c[y > 0].sum()) if positive_weight is None else float(positive_weight)
        return float(_weighted_quantile(t, c, target))
    order = np.argsort(t, kind="stable")
    ts, cs, ys = t[order], c[order], y[order]
    pos = ys > 0
    cp_ = np.where(pos, cs, 0.0)
    cn_ = np.where(pos, 0.0, cs)
    # positives strictly after k (suffix), negatives up to and including k (prefix)
    suf_c = np.concatenate([np.cumsum(cp_[::-1])[::-1][1:], [0.0]])
    suf_ct = np.concatenate([np.cumsum((cp_ * ts)[::-1])[::-1][1:], [0.0]])
    pre_c = np.cumsum(cn_)
    pre_ct = np.cumsum(cn_ * ts)
    g = (suf_ct - ts * suf_c) + (pre_ct - ts * pre_c)
    nonpos = np.flatnonzero(g <= 0.0)
    if nonpos.size == 0:  # root beyond the last breakpoint: only negatives active
        a_c, a_ct = pre_c[-1], pre_ct[-1]
        lo_b, hi_b = ts[-1], np.inf
    elif nonpos[0] == 0:  # root before the first breakpoint: only positives active
        a_c, a_ct = float(cp_.sum()), float((cp_ * ts).sum())
        lo_b, hi_b = -np.inf, ts[0]
    else:
        k = nonpos[0] - 1
        a_c, a_ct = suf_c[k] + pre_c[k], suf_ct[k] + pre_ct[k]
        lo_b, hi_b = ts[k], ts[k + 1]
    if a_c <= 0.0:
        return float(min(max(0.0, lo_b), hi_b))
    return float(min(max(a_ct / a_c, lo_b), hi_b))


@nb.njit(cache=True)
def _weighted_quantile(t, c, target):  # pragma: no cover - compiled
    """The smallest ``τ`` among the ``t_i`` with ``Σ_{t_i ≤ τ} c_i ≥ target``, by quickselect
    (``docs/derivations/dcd.md`` §4); the smallest pivot found to reach it when rounding empties the searched range."""
    tt = t.copy()
    cc = c.copy()
    lo = 0
    hi = tt.size
    below = 0.0  # weight of the elements smaller than every element of tt[lo:hi]
    reached = np.max(t)  # the smallest pivot found to reach the target so far
    while hi > lo:
        a = tt[lo]
        b = tt[lo + (hi - lo) // 2]
        e = tt[hi - 1]
        p = max(min(a, b), min(max(a, b), e))
        lt = lo
        i = lo
        gt = hi - 1
        w_less = 0.0
        w_equal = 0.0
        while i <= gt:
            x = tt[i]
            if x < p:
                tt[i], tt[lt] = tt[lt], x
                cc[i], cc[lt] = cc[lt], cc[i]
                w_less += cc[lt]
                lt += 1
                i += 1
            elif x > p:
                tt[i], tt[gt] = tt[gt], x
                cc[i], cc[gt] = cc[gt], cc[i]
                gt -= 1
            else:
                w_equal += cc[i]
                i += 1
        # tt[lo:lt] < p, tt[lt:gt + 1] == p, tt[gt + 1:hi] > p
        if lt > lo and below + w_less >= target:
            hi = lt
            reached = p
        elif below + w_less + w_equal >= target:
            return p
        else:
            below += w_less + w_equal
            lo = gt + 1
    return reached

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
    "kernel_scores",
    "nominal_soft_margin",
    "objective_from_products",
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
    :func:`kernel_scores` instead.
    """
    value = model.penalty.value(w) + model.intercept.value(b)
    if model.distribution is not None:  # the worst expected loss over the set of distributions
        return float(value + model.distribution.budget(model.loss, margins, model.c, w)[0])
    if not model.loss.is_constraint:
        value += float(model.c @ model.loss.value(margins))
    return float(value)


def objective_from_products(model: Model, w: np.ndarray, b: float, z: np.ndarray) -> float | None:
    """``P(w, b)`` from ``z = Xw`` for a nominal model (no uncertainty set, no set of distributions) with the hinge or
    squared hinge loss, by :func:`nominal_soft_margin` plus the intercept's term; None for any other model (its
    margins then go through :func:`robust_margins` and :func:`objective_from_margins`)."""
    if model.layout is not None or model.distribution is not None or model.loss.name not in ("hinge", "squared_hinge"):
        return None
    return nominal_soft_margin(np.ascontiguousarray(w, dtype=np.float64), np.ascontiguousarray(z, dtype=np.float64),
                               model.y, np.asarray(model.c, dtype=np.float64), b, model.l2, model.l1,
                               model.loss.name == "squared_hinge") + model.intercept.value(b)


def nominal_soft_margin(w: np.ndarray, z: np.ndarray, y: np.ndarray, c: np.ndarray, b: float, l2: float, l1: float,
                        squared: bool) -> float:
    """``(λ2/2)‖w‖² + λ1‖w‖₁ + Σ_i c_i ℓ(y_i(z_i + b))`` of a nominal model (no uncertainty) with the hinge
    ``ℓ(m) = max(0, 1 − m)`` or, ``squared``, its square, from ``z = Xw``: :func:`objective_from_margins` without the
    intercept's own term ``I(b)``, in one compiled pass over ``w`` and one over the samples (no temporaries).

    Parameters
    ----------
    w : ndarray of shape (d,)
    z, y, c : ndarray of shape (n,)
        ``Xw``, the labels ±1 and the loss coefficients (float64).
    b : float
    l2, l1 : float
    squared : bool
    """
    return float(_nominal_soft_margin(w, z, y, c, float(b), float(l2), float(l1), bool(squared)))


@nb.njit(cache=True, fastmath={"reassoc", "contract", "nsz", "arcp"})
def _nominal_soft_margin(w, z, y, c, b, l2, l1, squared):  # pragma: no cover - compiled
    """:func:`nominal_soft_margin`."""
    sq = 0.0
    ab = 0.0
    for h in range(w.size):
        sq += w[h] * w[h]
        ab += abs(w[h])
    loss = 0.0
    for i in range(z.size):
        e = max(1.0 - y[i] * (z[i] + b), 0.0)
        loss += c[i] * (e * e if squared else e)
    return 0.5 * l2 * sq + (l1 * ab if l1 != 0.0 else 0.0) + loss


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


def kernel_scores(model: Model, dual_coef: Any, support_vectors: Any, b: float) -> tuple[float, float, np.ndarray]:
    """``(P, violation, f − b)`` at the expansion ``f(x) = Σ_j a_j k(x, x_j) + b``, its kernel matrices formed once:
    ``P = (λ2/2)aᵀK_SS a + I(b) + Σ c_i ℓ(y_i f(x_i))``, the violation ``max(0, max_i(1 − y_i f(x_i)))`` for a hard
    margin (0 otherwise), and ``f(x_i) − b = Σ_j a_j k(x_i, x_j)`` at the training rows."""
    norm_sq, margins = _kernel_parts(model, dual_coef, support_vectors, b)
    value = 0.5 * model.l2 * norm_sq + model.intercept.value(b)  # the L2 term at ‖w‖² = aᵀK_SS a (no L1)
    violation = 0.0
    if model.loss.is_constraint:
        violation = max(0.0, float(np.max(1.0 - margins)))
    else:
        value += float(model.c @ model.loss.value(margins))
    return float(value), violation, model.y * margins - b


def optimal_intercept(z: np.ndarray, y: np.ndarray, c: np.ndarray, *, squared: bool = False,
                      positive_weight: float | None = None, hint: float | None = None,
                      equal_weights: bool | None = None) -> float:
    """Exact minimizer of ``φ(b) = Σ_i c_i ℓ(y_i(z_i + b))`` over a free intercept ``b``.

    With breakpoints ``t_i = y_i − z_i``, ``φ`` is convex piecewise linear
    (hinge: ``φ'(b) = Σ_{t_i<b} c_i − Σ_{y_i=+1} c_i``, so ``b`` is the smallest ``t_k`` with
    ``Σ_{t_i ≤ t_k} c_i ≥ Σ_{y_i=+1} c_i``, a weighted quantile found by selection in O(n) expected;
    ``positive_weight`` is that sum when the caller has it, the number of positives with ``equal_weights``;
    ``hint``, an intercept near ``b`` such as the last one found, splits the breakpoints first so that the
    selection goes on from the side holding ``b``; with equal weights, ``equal_weights`` or found, the sums are
    counts, exact, and ``b`` is the rule's breakpoint even where ``φ`` is flat between two of them)
    or piecewise quadratic and C¹ (squared hinge: the root of
    ``g(b) = Σ_{y_i=+1, t_i>b} c_i(t_i − b) + Σ_{y_i=−1, t_i<b} c_i(t_i − b)``,
    decreasing and linear between breakpoints, from prefix sums after one sort, O(n log n)). ``z`` may hold
    the robust shifts (``z_i = x_i·w − y_i r_i σ_i``).
    """
    if not squared:
        unit = bool(c.size) and float(c.min()) == float(c.max()) if equal_weights is None else bool(equal_weights)
        if unit:  # the count of positives, exact in floating point
            target = float(np.count_nonzero(y > 0)) if positive_weight is None else float(positive_weight)
        else:
            target = float(c[y > 0].sum()) if positive_weight is None else float(positive_weight)
        start = np.nan if hint is None or not np.isfinite(hint) else float(hint)
        return float(_weighted_quantile(y, z, c, target, start, unit))
    t = y - z
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
def _weighted_quantile(y, z, c, target, hint, unit):  # pragma: no cover - compiled
    """The smallest ``τ`` among the ``t_i = y_i − z_i`` with ``Σ_{t_i ≤ τ} c_i ≥ target`` (``docs/derivations/dcd.md``
    §4): one pass forms ``t`` and its weights in a workspace, split at ``hint`` (the first pivot; NaN: a median of
    three of ``t``), then :func:`_select` on the side that holds ``τ``. ``unit``: every weight counts 1 (equal
    weights, ``target`` a count: the sums are exact)."""
    n = y.size
    t = np.empty(n)
    cw = np.empty(n)
    p = hint
    if not p == p:
        a, b, e = y[0] - z[0], y[n // 2] - z[n // 2], y[n - 1] - z[n - 1]
        p = max(min(a, b), min(max(a, b), e))
    k = 0
    m = n - 1
    w_le = 0.0
    w_lt = 0.0
    top_le = -np.inf  # the largest t_i ≤ p
    top = -np.inf
    for i in range(n):  # no branch on the data: each t_i is written at the front (≤ p) or the back
        x = y[i] - z[i]
        ci = 1.0 if unit else c[i]
        s = x <= p
        j = k if s else m
        t[j] = x
        cw[j] = ci
        w_le += ci if s else 0.0
        w_lt += ci if x < p else 0.0
        top_le = max(top_le, x if s else -np.inf)
        top = max(top, x)
        k += 1 if s else 0
        m -= 0 if s else 1
    if w_le < target or k == 0:  # above p (everything when no t_i ≤ p)
        lo, hi, below, top_side = k, n, w_le, top
    elif w_lt < target:
        return p  # w_lt < w_le: some t_i equals p
    else:
        lo, hi, below, top_side = np.intp(0), k, 0.0, top_le  # intp: no specialization for a literal 0
    return _select(t, cw, lo, hi, below, target, top_side)  # one call: one specialization to compile


@nb.njit(cache=True)
def _select(t, cw, lo, hi, below, target, top):  # pragma: no cover - compiled
    """:func:`_weighted_quantile` on ``t[lo:hi]`` (weights ``cw``; ``below`` the weight of the ``t_i`` under the range,
    ``top`` its largest ``t_i``), by partitions at medians of three with unconditional swaps. Where rounding leaves
    the whole range short of ``target`` the range's largest ``t_i`` is returned."""
    while hi > lo:
        a = t[lo]
        b = t[lo + (hi - lo) // 2]
        e = t[hi - 1]
        p = max(min(a, b), min(max(a, b), e))
        k, w_le, w_lt = _partition(t, cw, lo, hi, p, False)
        if below + w_le < target:
            if k == hi:  # short of target by rounding alone: p is the range's largest
                return p
            below += w_le
            lo = k
        elif below + w_lt < target:
            return p
        else:
            if k == hi:  # p is the largest: the t_i equal to it split off
                k = _partition(t, cw, lo, hi, p, True)[0]
                if k == lo:  # every t_i of the range is p and below reaches target by rounding alone
                    return p
            hi = k
    return top


@nb.njit(cache=True, inline="always")
def _partition(t, cw, lo, hi, p, strict):  # pragma: no cover - compiled
    """``t[lo:hi]`` (with ``cw``) reordered so that ``t[lo:k] ≤ p`` (``< p`` when ``strict``) and ``t[k:hi]`` above,
    by a swap at every element; returns ``(k, Σ_{t_i ≤ p} c_i, Σ_{t_i < p} c_i)`` over the range."""
    k = lo
    w_le = 0.0
    w_lt = 0.0
    for i in range(lo, hi):
        x = t[i]
        ci = cw[i]
        t[i] = t[k]
        cw[i] = cw[k]
        t[k] = x
        cw[k] = ci
        w_le += ci if x <= p else 0.0
        w_lt += ci if x < p else 0.0
        k += 1 if (x < p if strict else x <= p) else 0
    return k, w_le, w_lt

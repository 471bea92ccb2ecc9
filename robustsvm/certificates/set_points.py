"""Points of the uncertainty sets for the Lagrangian bound: the worst cases a dual point implies.

For fixed margin multipliers the bound of :mod:`robustsvm.certificates.duality` depends on the sets only through
``s = s0 + Σ_j A_j v_j``, one point ``v_j`` per (set, label) pair; :func:`optimal_points` chooses them by a small
conic program and pulls them into their sets (:func:`retract`), so that every bound built on them is valid.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .._lazy import cvxpy as cp

__all__ = ["optimal_points", "optimal_shift", "retract"]


def retract(uncertainty_set: Any, v: np.ndarray) -> np.ndarray:
    """A solver's point pulled into the unit set (:meth:`UncertaintySet.retract`): the bound needs points of it."""
    return uncertainty_set.retract(np.asarray(v, dtype=np.float64))


def optimal_shift(layout: Any, y: np.ndarray, ay: np.ndarray, s0: np.ndarray, l1: float,
                  signs: np.ndarray, l2: float = 1.0, box: tuple | None = None) -> np.ndarray | None:
    """``Σ_i a_i y_i r_i u_i`` with the points ``u_i ∈ V_i`` of :func:`optimal_points`; None when its solve fails."""
    found = optimal_points(layout, y, ay, s0, l1, signs, l2, box=box)
    if found is None:
        return None
    inverse, Vv = found
    return np.bincount(inverse, weights=ay * layout.radius, minlength=Vv.shape[0]) @ Vv


def optimal_points(layout: Any, y: np.ndarray, ay: np.ndarray, s0: np.ndarray, l1: float, signs: np.ndarray,
                   l2: float = 1.0, box: tuple | None = None) -> tuple[np.ndarray, np.ndarray] | None:
    """Points ``u_i = V[inverse[i]] ∈ V_i`` minimizing ``‖T(s0 + Σ_i a_i y_i r_i u_i)‖²``: ``(inverse, V)``.

    For fixed multipliers the bound depends on the points only through
    ``s = s0 + Σ_j A_j v_j``, one point ``v_j ∈ V`` per (set, label) pair
    with ``A_j = Σ_{i in j} a_i y_i r_i`` (the samples of a pair share one sign
    of ``a_i y_i r_i``, and a convex combination of points of a convex set is in
    the set). Minimizing the convex ``‖T(s)‖²`` over the
    ``v_j`` (its largest entry when ``λ2 = 0``) is a small conic program
    (Clarabel); its points are pulled back
    into their sets (:meth:`UncertaintySet.retract`). None when the solve fails.

    With bounds ``box = (l, u)`` (λ2 > 0) the minimized function is the box conjugate of the penalty instead,
    ``Σ_h max_{l_h ≤ w_h ≤ u_h} s_h w_h − λ1|w_h| − (λ2/2)w_h²``, written as
    ``min_{p, q ≥ 0} ‖(|s − p + q| − λ1)₊‖²/(2λ2) + u·p − l·q`` (the dual of the box's clip). Without a penalty
    and with a finite box (``l ≤ 0 ≤ u``) it is the box conjugate ``Σ_h u_h s_h⁺ + l_h s_h⁻``.
    """

    # one point per (set, label): even a symmetric set's two classes may use different points of a face
    uniq, inverse = np.unique(layout.group * 2 + (y < 0), return_inverse=True)
    inverse = inverse.ravel()
    set_index = uniq // 2
    coef = np.bincount(inverse, weights=ay * layout.radius, minlength=set_index.shape[0])
    J, d = set_index.shape[0], s0.shape[0]
    V = cp.Variable((J, d))
    cons = []
    for j in range(J):
        cons.extend(layout.sets[set_index[j]].membership_cvx(V[j]))
    s_expr = s0 + coef @ V
    free = signs == 0
    parts = []
    if np.any(free):
        parts.append(cp.pos(cp.abs(s_expr[np.flatnonzero(free)]) - l1))
    if np.any(signs > 0):
        parts.append(cp.pos(s_expr[np.flatnonzero(signs > 0)] - l1))
    if np.any(signs < 0):
        parts.append(cp.pos(-s_expr[np.flatnonzero(signs < 0)] - l1))
    excess = cp.hstack(parts) if len(parts) > 1 else parts[0]
    # λ2 = 0 needs every excess at 0 (its largest is minimized); otherwise ‖T(s)‖², scaled to order one by
    # the size of s's parts: s0 = 0 (all-zero X) leaves the points' weights to set the scale
    norm = max(float(np.max(np.abs(s0))), l1, float(np.max(np.abs(coef), initial=0.0)))
    norm = norm if norm > 0 else 1.0
    objective = cp.max(excess) / norm if l2 <= 0 else cp.sum_squares(excess / norm)
    if box is not None and l2 > 0:
        objective = _box_conjugate_cvx(s_expr, box, l1, l2, norm)
    elif box is not None and l1 == 0 and np.all(np.isfinite(box[0])) and np.all(np.isfinite(box[1])):
        # no penalty and a finite box: the conjugate itself, Σ_h max(s_h l_h, s_h u_h) (l ≤ 0 ≤ u)
        objective = (box[1] @ cp.pos(s_expr) - box[0] @ cp.neg(s_expr)) / norm
    prob = cp.Problem(cp.Minimize(objective), cons)
    try:
        with warnings.catch_warnings():  # an inaccurate solve only gives a weaker (still valid) bound
            warnings.simplefilter("ignore", UserWarning)
            prob.solve(solver="CLARABEL", tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-10)
    except cp.error.SolverError:
        return None
    if V.value is None:
        return None
    Vv = np.asarray(V.value, dtype=np.float64)
    for j in range(J):
        Vv[j] = retract(layout.sets[set_index[j]], Vv[j])
    return inverse, Vv


def _box_conjugate_cvx(s_expr: Any, box: tuple, l1: float, l2: float, norm: float) -> Any:
    """The box conjugate of the penalty at ``s_expr`` over ``norm²``, as CVXPY (:func:`optimal_points`)."""
    fin_up, fin_lo = np.isfinite(box[1]), np.isfinite(box[0])
    p, q = cp.Variable(fin_up.size, nonneg=True), cp.Variable(fin_lo.size, nonneg=True)  # unused on infinite sides
    t = s_expr - cp.multiply(fin_up.astype(float), p) + cp.multiply(fin_lo.astype(float), q)
    linear = np.where(fin_up, box[1], 0.0) @ p - np.where(fin_lo, box[0], 0.0) @ q
    return cp.sum_squares(cp.pos(cp.abs(t) - l1) / norm) / (2.0 * l2) + linear / norm**2

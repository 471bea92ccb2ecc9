"""The critical radius and the critical λ1: where ``w = 0`` becomes optimal (``docs/derivations/critical_radius.md``).

At ``w = 0`` every robust margin is ``y_i b``, so the model reduces to the constant classifier
``min_b I(b) + Σ_i c_i ℓ(y_i b)``. Its optimal ``b`` and the set ``D`` of its optimal multipliers
(``α_i ∈ −∂ℓ(y_i b)``, with the intercept's balance) are found in closed form (:func:`constant_classifier`).
``w = 0`` is optimal for the whole model exactly when some ``α ∈ D`` satisfies

    v(α) = Σ_i c_i α_i y_i x_i  ∈  λ1 B∞ + Σ_i c_i α_i r_i (−y_i V_i) + N,

with ``N`` the normal cone of the feasible set of ``w`` at 0. λ2 does not enter. With radii ``r_i = ρ s_i``
(``s`` the model's radii over their largest), the smallest ``ρ`` is a fractional program in ``α``; when the
samples' sets reduce to one set ``W`` (a shared symmetric set: ``Σ_i c_i α_i s_i (−y_i V) = a(α) V``), the
Charnes–Cooper change of variables makes it the conic program

    min t   s.t.  v(α̃) − q̃ − p̃ ∈ t V,  a(α̃) = 1,  α̃ ∈ τ D,  ‖q̃‖∞ ≤ τ λ1,  p̃ ∈ N,  τ ≥ 0,

whose value is the critical radius (:func:`critical_radius`). Several sets (one per sample, or a set that is not
symmetric, which differs between the labels) make it a generalized fractional program, quasiconvex in ``ρ``:
its sublevel sets are convex programs, and the value is found by bisection on them. The smallest λ1
(:func:`critical_l1`, glmnet's ``λ_max``) is a convex program at the model's radii.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._lazy import cvxpy as cp
from ..terms.losses import Hinge, SquaredHinge

__all__ = ["ConstantClassifier", "constant_classifier", "constant_intercept", "critical_l1", "critical_radius",
           "model_critical_l1", "model_critical_radius", "radius_scale"]

#: Clarabel's tolerances for these small programs (the critical value is compared to bisections at 1e-6)
_SETTINGS = {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10, "tol_ktratio": 1e-8}
#: relative width at which the bisection of the generalized fractional program stops
_BISECTION_RTOL = 1e-10


@dataclass(frozen=True)
class ConstantClassifier:
    """The constant classifier ``w = 0`` of a model: its optimal intercept and its optimal multipliers.

    Attributes
    ----------
    b : float
        An optimal intercept of ``min_b I(b) + Σ_i c_i ℓ(y_i b)``.
    lower, upper : ndarray of shape (n,)
        The multipliers' box: ``lower_i = upper_i`` where ``α_i = −ℓ'(y_i b)`` is determined, ``[0, 1]`` for a
        hinge sample on the kink ``y_i b = 1``.
    balance : float or None
        The value ``Σ_i c_i α_i y_i`` must take (0 for a free intercept, ``μ b`` for a ridge one); None when the
        intercept is absent or every multiplier is determined.
    """

    b: float
    lower: np.ndarray
    upper: np.ndarray
    balance: float | None


def constant_intercept(loss: Any, intercept: Any, c_pos: float, c_neg: float) -> float:
    """The constant classifier's ``b`` (:func:`constant_classifier`) from the classes' weights ``C± = Σ_{y_i = ±1}
    c_i``, the loss and the intercept term alone.

    Raises
    ------
    ValueError
        A loss other than the hinge and the squared hinge.
    """
    mode, mu = intercept.mode, float(intercept.mu)
    if isinstance(loss, SquaredHinge):
        return 0.0 if mode == "none" else (c_pos - c_neg) / (c_pos + c_neg) if mode == "free" else 2 * (
            c_pos - c_neg) / (mu + 2 * (c_pos + c_neg))
    if not isinstance(loss, Hinge):
        raise ValueError(f"the critical radius is derived for the hinge and the squared hinge, not "
                         f"{type(loss).__name__} (a hard margin has no feasible w = 0)")
    if mode == "none":
        return 0.0
    if mode == "free":
        return float(np.sign(c_pos - c_neg))
    return float(np.clip((c_pos - c_neg) / mu, -1.0, 1.0))


def constant_classifier(model: Any) -> ConstantClassifier:
    """The constant classifier of ``model`` (hinge or squared hinge; free, ridge or no intercept), in closed form.

    With ``C± = Σ_{y_i = ±1} c_i``: for the hinge, a free intercept gives ``b = sign(C+ − C−)`` (0 on a tie), a
    ridge ``μ`` gives ``b = (C+ − C−)/μ`` clipped to ``[−1, 1]``; the samples with ``y_i b = 1`` have
    ``α_i ∈ [0, 1]``, the others ``α_i = 1``. For the squared hinge (``α_i = 2(1 − y_i b)``), ``b = (C+ − C−)/C``
    (free) or ``2(C+ − C−)/(μ + 2C)`` (ridge), ``C = C+ + C−``. Without an intercept ``b = 0``
    (:func:`constant_intercept`).
    """
    y, c = np.asarray(model.y, dtype=np.float64), np.asarray(model.c, dtype=np.float64)
    b = constant_intercept(model.loss, model.intercept, float(c[y > 0].sum()), float(c[y < 0].sum()))
    if isinstance(model.loss, SquaredHinge):
        alpha = 2.0 * np.maximum(1.0 - y * b, 0.0)
        return ConstantClassifier(b=b, lower=alpha, upper=alpha.copy(), balance=None)
    if model.intercept.mode == "none":
        return ConstantClassifier(b=0.0, lower=np.ones_like(y), upper=np.ones_like(y), balance=None)
    kink = (y * b == 1.0) if abs(b) == 1.0 else np.zeros(y.shape, dtype=bool)
    lower = np.where(kink, 0.0, 1.0)
    balance = 0.0 if model.intercept.mode == "free" else float(model.intercept.mu) * b
    return ConstantClassifier(b=b, lower=lower, upper=np.ones_like(y), balance=balance)


def radius_scale(model: Any) -> np.ndarray:
    """The per-sample factors ``s_i`` of the radii ``r_i = ρ s_i``: the model's radii over their largest (ones when
    every radius is 0 or the radius is one scalar)."""
    r = np.asarray(model.layout.radius, dtype=np.float64)
    top = float(r.max()) if r.size else 0.0
    return r / top if top > 0 else np.ones_like(r)


def _check(model: Any) -> None:
    if model.kernel is not None:
        raise ValueError("the critical radius is derived for linear models (kernel=None)")
    feasible = model.feasible_set
    if np.any(feasible.lower > 0) or np.any(feasible.upper < 0):
        raise ValueError("w = 0 is not feasible: a bound excludes 0, so no radius makes the model constant")
    if feasible.has_constraints and (np.any(feasible.linear.lb > 0) or np.any(feasible.linear.ub < 0)):
        raise ValueError("w = 0 is not feasible: a linear constraint excludes 0")


def _normal_cone(model: Any, p: Any) -> tuple[Any, list]:
    """``p ∈ N``, the normal cone of the feasible set of ``w`` at 0, as ``(expression, constraints)``.

    A bound with a zero side gives ``p_h ≤ 0`` (``w_h ≥ 0``) or ``p_h ≥ 0`` (``w_h ≤ 0``); a bound
    ``l_h < 0 < u_h`` gives ``p_h = 0``; a linear row active at 0 adds ``A_kᵀ μ_k`` with the sign of its side.
    """
    feasible = model.feasible_set
    lo_zero, up_zero = feasible.lower == 0, feasible.upper == 0
    cons = []
    inner = ~lo_zero & ~up_zero
    if inner.any():
        cons.append(p[np.flatnonzero(inner)] == 0)
    only_lo, only_up = lo_zero & ~up_zero, up_zero & ~lo_zero
    if only_lo.any():
        cons.append(p[np.flatnonzero(only_lo)] <= 0)
    if only_up.any():
        cons.append(p[np.flatnonzero(only_up)] >= 0)
    expr = p
    if feasible.has_constraints:
        lin = feasible.linear
        act_lo, act_up = lin.lb == 0, lin.ub == 0
        rows = np.flatnonzero(act_lo | act_up)
        if rows.size:
            mu = cp.Variable(rows.size)
            expr = p + lin.A[rows].T @ mu
            if np.any(act_lo[rows] & ~act_up[rows]):
                cons.append(mu[np.flatnonzero(act_lo[rows] & ~act_up[rows])] <= 0)
            if np.any(act_up[rows] & ~act_lo[rows]):
                cons.append(mu[np.flatnonzero(act_up[rows] & ~act_lo[rows])] >= 0)
    return expr, cons


def _conditions(model: Any, const: ConstantClassifier, alpha: Any, tau: Any, l1_bound: Any,
                group_scale: list[Any], slack: Any = None) -> list:
    """The optimality conditions of ``w = 0`` on the (possibly scaled) multipliers ``alpha ∈ τ D``.

    ``group_scale[j]`` is the factor ``t_j`` of the set of the ``j``-th (set, label) pair: the constraint is
    ``v(α) − q − p − e = Σ_j z_j`` with ``z_j ∈ t_j (−y V_j)`` and ``e`` the ``slack`` (0 when None): the
    CVXPY constraints.
    """
    X, y, c = model.X, np.asarray(model.y, dtype=np.float64), np.asarray(model.c, dtype=np.float64)
    cons = [alpha >= tau * const.lower, alpha <= tau * const.upper]
    if const.balance is not None:
        cons.append((c * y) @ alpha == tau * const.balance)
    v = X.T @ cp.multiply(c * y, alpha)
    d = model.d
    rhs = 0
    if l1_bound is not None:
        q = cp.Variable(d)
        cons.append(cp.abs(q) <= l1_bound)
        rhs = rhs + q
    p = cp.Variable(d)
    p_expr, p_cons = _normal_cone(model, p)
    cons += p_cons
    rhs = rhs + p_expr + (0 if slack is None else slack)
    if model.layout is None or not group_scale:
        cons.append(v == rhs)
        return cons
    if not all(s.contains(np.zeros(d)) for s in model.layout.sets):
        raise ValueError("the critical radius assumes sets that contain 0 (so that w = 0 stays optimal "
                         "as the radius grows)")
    set_index, direction, _ = model.layout.pairs(y)
    zs = [cp.Variable(d) for _ in set_index]
    cons.append(v == rhs + (zs[0] if len(zs) == 1 else cp.sum(zs)))
    for j, k in enumerate(set_index):
        cons += model.layout.sets[k].scaled_membership_cvx(float(direction[j]) * zs[j], group_scale[j])
    return cons


def _pair_weights(model: Any, weights: np.ndarray) -> list[np.ndarray]:
    """For each (set, label) pair, the vector ``c_i weights_i`` on its samples (zero elsewhere)."""
    _, _, inverse = model.layout.pairs(model.y)
    cw = np.asarray(model.c, dtype=np.float64) * weights
    return [np.where(inverse == j, cw, 0.0) for j in range(int(inverse.max()) + 1)]


def _solve(problem: Any) -> str:
    """Clarabel at :data:`_SETTINGS` (its defaults after a failure); an "inaccurate" end is read by the status."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        try:
            problem.solve(solver="CLARABEL", **_SETTINGS)
        except cp.error.SolverError:
            problem.solve(solver="CLARABEL")
    return problem.status


def model_critical_l1(model: Any) -> float:
    """The smallest λ1 at which ``w = 0`` is optimal for ``model`` at its radii (glmnet's ``λ_max``).

    ``min λ  s.t.  v(α) − q − p ∈ Σ_i c_i α_i r_i (−y_i V_i),  ‖q‖∞ ≤ λ,  α ∈ D,  p ∈ N`` — a convex program.
    The model's own λ1 and λ2 do not enter. Returns 0 when the constant classifier is optimal without L1.
    """
    _check(model)
    const = constant_classifier(model)
    alpha, lam = cp.Variable(model.n), cp.Variable(nonneg=True)
    scales = []
    if model.layout is not None:
        scales = [w @ alpha for w in _pair_weights(model, np.asarray(model.layout.radius, dtype=np.float64))]
    cons = _conditions(model, const, alpha, 1.0, lam, scales)
    prob = cp.Problem(cp.Minimize(lam), cons)
    status = _solve(prob)
    if status not in ("optimal", "optimal_inaccurate"):
        raise RuntimeError(f"the critical-λ1 program ended with status {status!r}")
    return max(0.0, float(lam.value))


def model_critical_radius(model: Any) -> float:
    """The smallest ``ρ`` at which ``w = 0`` is optimal with the radii ``r_i = ρ s_i`` (:func:`radius_scale`).

    One (set, label) pair: the Charnes–Cooper program of the module docstring, solved once. Several: bisection
    on ``ρ`` of the convex feasibility programs (the sublevel sets of the quasiconvex ratio), to a relative
    width of ``1e-10``. ``inf`` when no radius makes ``w = 0`` optimal; 0 when it is optimal without a set.

    Raises
    ------
    ValueError
        A model without uncertainty, a kernel model, a loss other than the hinge or the squared hinge, or a
        feasible set of ``w`` without 0.
    """
    if model.distribution is not None:
        return _critical_mass(model)
    if model.layout is None:
        raise ValueError("critical_radius needs a model with an uncertainty set (use critical_l1 for λ1)")
    _check(model)
    const = constant_classifier(model)
    l1 = float(model.l1)
    if _feasible_at(model, const, 0.0):
        return 0.0
    weights = _pair_weights(model, radius_scale(model))
    if len(weights) == 1:
        alpha, tau, t = cp.Variable(model.n), cp.Variable(nonneg=True), cp.Variable(nonneg=True)
        cons = _conditions(model, const, alpha, tau, tau * l1 if l1 > 0 else None, [t])
        cons.append(weights[0] @ alpha == 1.0)
        prob = cp.Problem(cp.Minimize(t), cons)
        status = _solve(prob)
        if status in ("infeasible", "infeasible_inaccurate"):
            return math.inf  # a(α) = 0 on D: the sets' radii vanish on every multiplier the balance allows
        if status not in ("optimal", "optimal_inaccurate"):
            raise RuntimeError(f"the critical-radius program ended with status {status!r}")
        return max(0.0, float(t.value))
    return _bisect(model, const)


def _critical_mass(model: Any) -> float:
    """The smallest radius ``ρ`` of a set of distributions whose term is the fixed penalty ``Cρ σ_U(w)``
    (``C = Σ c_i``; ``DistributionalSet.unit_set``, e.g. a Wasserstein ball with ``κ = ∞``: ``Cε‖w‖_*``) at which
    ``w = 0`` is optimal.

    The subdifferential of ``Cρ σ_U`` at 0 is ``Cρ U``: ``ρ_c = min γ_U(v(α) − q − p) / C`` over ``α ∈ D``,
    ``‖q‖∞ ≤ λ1``, ``p ∈ N`` (``γ_U`` the gauge of ``U``) — one convex program (the set's scale does not depend on
    ``α``, so no Charnes–Cooper change is needed).
    """
    dist = model.distribution
    if dist.unit_set() is None:
        raise ValueError(dist.critical_refusal())
    _check(model)
    const = constant_classifier(model)
    alpha, e = cp.Variable(model.n), cp.Variable(model.d)
    l1 = float(model.l1)
    prob = cp.Problem(cp.Minimize(dist.unit_gauge_cvx(e)),
                      _conditions(model, const, alpha, 1.0, l1 if l1 > 0 else None, [], slack=e))
    status = _solve(prob)
    if status not in ("optimal", "optimal_inaccurate"):
        raise RuntimeError(f"the critical-eps program ended with status {status!r}")
    return max(0.0, float(prob.value)) / float(np.sum(model.c))


def _feasible_at(model: Any, const: ConstantClassifier, rho: float) -> bool:
    """Whether ``w = 0`` is optimal at the radii ``ρ s_i``: the smallest residual ``‖v(α) − q − p − Σ_j z_j‖∞``
    of the conditions is 0 (up to ``1e-9`` of ``‖X‖∞ Σ c``; a program that is always feasible)."""
    alpha, slack = cp.Variable(model.n), cp.Variable(model.d)
    l1 = float(model.l1)
    scales = [rho * w @ alpha for w in _pair_weights(model, radius_scale(model))] if rho > 0 else []
    cons = _conditions(model, const, alpha, 1.0, l1 if l1 > 0 else None, scales, slack=slack)
    prob = cp.Problem(cp.Minimize(cp.norm(slack, "inf")), cons)
    status = _solve(prob)
    if status not in ("optimal", "optimal_inaccurate"):
        raise RuntimeError(f"the critical-radius feasibility program ended with status {status!r}")
    x_max = float(abs(model.X).max()) if model.X.shape[0] else 0.0
    return float(prob.value) <= 1e-9 * max(1.0, x_max * float(np.sum(model.c)))


def _bisect(model: Any, const: ConstantClassifier) -> float:
    hi = 1.0
    while not _feasible_at(model, const, hi):
        hi *= 4.0
        if hi > 1e12:
            return math.inf
    lo = 0.0
    while hi - lo > _BISECTION_RTOL * hi:
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if _feasible_at(model, const, mid) else (mid, hi)
    return hi


def critical_radius(problem: Any, X: Any, y: Any, *, sample_weight: Any = None, feature_names: Any = None) -> float:
    """The smallest radius at which ``w = 0`` is optimal (the model predicts one class everywhere).

    For radii ``r_i = ρ s_i`` (``s_i`` the problem's radii over their largest: ``s = 1`` for one scalar radius),
    the smallest ``ρ`` such that some optimal multipliers ``α`` of the constant classifier satisfy

        Σ_i c_i α_i y_i x_i  ∈  λ1 B∞ + ρ Σ_i c_i α_i s_i (−y_i V_i) + N,

    ``N`` the normal cone of the signs, bounds and linear constraints at ``w = 0``. It does not depend on λ2:
    for every λ2 ≥ 0, ``w = 0`` is optimal exactly when ``ρ`` is at least this value. A conic program
    (Charnes–Cooper) for one shared symmetric set; a bisection on convex programs otherwise
    (:func:`model_critical_radius` on the normalized model; the derivation in
    ``docs/derivations/critical_radius.md``).

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
    return model_critical_radius(problem.normalize(X, y, sample_weight=sample_weight, feature_names=feature_names))


def critical_l1(problem: Any, X: Any, y: Any, *, sample_weight: Any = None, feature_names: Any = None) -> float:
    """The smallest λ1 at which ``w = 0`` is optimal at the problem's radii (glmnet's ``λ_max``).

        λ1_c = min over α ∈ D, p ∈ N, z ∈ Σ_i c_i α_i r_i (−y_i V_i) of ‖v(α) − p − z‖∞

    with ``v(α) = Σ_i c_i α_i y_i x_i`` and ``D`` the constant classifier's optimal multipliers. The problem's
    own λ1 and λ2 are ignored; for every λ2 ≥ 0, ``w = 0`` is optimal exactly when λ1 ≥ this value.
    """
    return model_critical_l1(problem.normalize(X, y, sample_weight=sample_weight, feature_names=feature_names))

"""A lower bound on the optimum that the package computes itself, for every backend and every set.

The model (``docs/certificates.md``) is

    P* = min_{w ∈ S, b}  R(w) + (μ/2) b² + Σ_i c_i ℓ(y_i(x_i·w + b) − r_i σ_{V_i}(−y_i w)),

``R(w) = λ1‖w‖₁ + (λ2/2)‖w‖²``, ``S`` the sign constraints. For any points
``u_i ∈ V_i``, ``σ_{V_i}(−y_i w) ≥ −y_i u_i·w``, and ``ℓ`` is non-increasing,
so each loss term is at least ``ℓ(y_i(x̃_i·w + b))`` with the moved sample
``x̃_i = x_i + r_i u_i``. Every loss is a maximum over a multiplier ``a_i``
(the multiplier of the margin constraint ``ξ_i ≥ 1 − m_i``), with
``α = a/c`` in the loss's dual box ``[0, upper]`` (``Loss.dual_term`` is
``α − ℓ*(α)``, ``Loss.dual_upper`` the box's end):

    c ℓ(m) = max_{0 ≤ a ≤ c·upper} a(1 − m) − c ℓ*(a/c),

hinge: ``ℓ* = 0`` on ``[0, 1]``; squared hinge: ``ℓ*(α) = α²/4`` on
``α ≥ 0``; hard margin (``m ≥ 1`` as a constraint, ``c = 1``): ``ℓ* = 0`` on
``α ≥ 0``, the maximum being 0 on the feasible set. Minimizing the resulting
function, linear in ``(w, b)`` but for ``R`` and ``(μ/2)b²``, in closed form
gives

    D(a, u) = Σ_i c_i (α_i − ℓ*(α_i)) − R*_S(s) − (intercept term),
    s = Σ_i a_i y_i x̃_i,

with ``R*_S(s) = max_{w ∈ S} s·w − R(w) = ‖T(s)‖²/(2λ2)``, ``T`` the
soft-threshold by ``λ1`` followed by the clip to the signs (for ``λ2 = 0`` it
is 0 when ``T(s) = 0`` and +∞ otherwise). The intercept term is ``S_y²/(2μ)``
for a ridge intercept, 0 without intercept, and a free intercept needs
``S_y = Σ_i a_i y_i = 0`` (the heavier class is scaled down to meet it).
Weak duality: ``P* ≥ D(a, u)`` for every admissible ``(a, u)``, whatever
produced them. The multipliers are finally rescaled by the best ``θ ≥ 0``
(``D(θa, u)`` is concave in ``θ``), which also makes the bound finite when
``λ2 = 0``.

:func:`certify` applies this to a returned point: it projects ``w`` on the
signs (and for a hard margin rescales ``(w, b)`` onto the feasible set, the
robust margins being positively homogeneous), evaluates the objective, takes
``u_i`` as each set's worst case at ``w`` and ``a`` from the backend (or from
the margins), and reports ``gap = P(w, b) − D(a, u) ≥ P(w, b) − P*``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from scipy.optimize import minimize_scalar

from .. import objective as objective_module
from ..model import weight_reach
from ..result import Result
from ..terms.intercept import Intercept, class_balance, class_sums
from ..terms.losses import LOSSES as REGISTERED
from . import products
from .dual_scale import best_scale, scale_in_closed_form
from .products import margins_and_image
from .reach import nominal_repair, unpenalized_reach
from .set_points import optimal_shift, retract

__all__ = [
    "BoundTerms",
    "FEAS_TOL",
    "box_maximizer",
    "linear_tolerance",
    "certify",
    "certify_with_decision",
    "lagrangian_bound",
    "penalty_conjugate",
    "robust_shift",
    "multipliers_from_margins",
    "admissible_multipliers",
    "class_balance",
    "class_sums",
    "dual_value",
]

#: relative tolerance (times max(1, |P|)) within which a claimed optimum and the package's gap may differ
CERT_RTOL = 1e-6
#: the smallest feasibility tolerance (relative to the rows' size) of the linear constraints on ``w``
FEAS_TOL = 1e-9
#: the feasibility tolerance when the solve states none (Clarabel's default ``tol_feas``)
DEFAULT_FEAS_TOL = 1e-8


def linear_tolerance(linear: Any, w: np.ndarray, tol: float | None = None) -> float:
    """``max(FEAS_TOL, tol) · max(1, max_k Σ_h |A_kh w_h|, max finite |lb|, |ub|)``: the violation a certified
    optimum may have (``tol`` the solve's tolerance, :data:`DEFAULT_FEAS_TOL` when None).

    Relative to the size of the terms of each row at ``w``, the scale at which the row is computed.
    """
    rel = max(FEAS_TOL, DEFAULT_FEAS_TOL if tol is None else float(tol))
    if linear is None or linear.k == 0:
        return rel
    sides = np.concatenate([linear.lb[np.isfinite(linear.lb)], linear.ub[np.isfinite(linear.ub)]])
    scale = max(1.0, float(np.max(np.abs(linear.A) @ np.abs(w))) if linear.k else 0.0,
                float(np.max(np.abs(sides))) if sides.size else 0.0)
    return rel * scale


def penalty_conjugate(s: np.ndarray, l2: float, l1: float, signs: np.ndarray | None = None, *,
                      lower: np.ndarray | None = None, upper: np.ndarray | None = None) -> float:
    """``max_{w ∈ S} s·w − λ1‖w‖₁ − (λ2/2)‖w‖²`` in closed form, ``S`` the signs or the box ``[lower, upper]``.

    Signs: coordinate ``h`` contributes ``t_h²/(2λ2)`` with ``t_h`` the soft-threshold
    ``sign(s_h)·max(|s_h| − λ1, 0)``, set to 0 when its sign is forbidden (``signs[h]·t_h < 0``).
    With ``λ2 = 0`` the value is 0 when every ``t_h`` is 0 and ``+inf`` otherwise.

    A box ``l ≤ w ≤ u`` (``lower`` and ``upper`` given; they replace ``signs``): each coordinate's
    function is concave, so its maximizer is the clipped soft-threshold ``w_h = clip(t_h/λ2, l_h, u_h)``
    (for ``λ2 = 0``: ``u_h`` when ``t_h > 0``, ``l_h`` when ``t_h < 0``, ``clip(0, l_h, u_h)`` otherwise) and
    the value is ``Σ_h s_h w_h − λ1|w_h| − (λ2/2)w_h²``, ``+inf`` when a maximizer is infinite
    (``docs/certificates.md``, "Bounds and linear constraints").

    Parameters
    ----------
    s : ndarray of shape (d,)
    l2, l1 : float
        Penalty strengths (non-negative).
    signs : ndarray of shape (d,), optional
        +1, 0 or −1 per feature (ignored when the box is given).
    lower, upper : ndarray of shape (d,), optional
        The box, infinite sides allowed.
    """
    if l1 == 0 and lower is None and signs is not None and l2 > 0:  # ‖s clipped to the signs‖² / (2λ2), compiled
        return products.signs_energy(np.ascontiguousarray(s, dtype=np.float64),
                                     np.ascontiguousarray(signs, dtype=np.float64)) / (2.0 * l2)
    # the soft-threshold by λ1 (by 0 it is s itself, as a copy: the sign test below writes t)
    t = np.sign(s) * np.maximum(np.abs(s) - l1, 0.0) if l1 != 0 else np.array(s, dtype=np.float64)
    if lower is not None:
        w = box_maximizer(t, l2, lower, upper)
        if not np.all(np.isfinite(w)):
            return float("inf")
        return float(s @ w - l1 * np.abs(w).sum() - 0.5 * l2 * (w @ w))
    t[signs * t < 0] = 0.0
    if l2 > 0:
        return float(t @ t) / (2.0 * l2)
    return 0.0 if not np.any(t) else float("inf")


def dual_value(loss: Any, c: np.ndarray, alpha: np.ndarray, conjugate: float, intercept: Any = None,
               S: float = 0.0) -> float:
    """The dual function of the module docstring at the dual point ``α`` (``a = cα``):

        D = Σ_i c_i (α_i − ℓ*(α_i)) − R*_S(s) − (intercept term of S),

    with ``conjugate = R*_S(s)`` (:func:`penalty_conjugate`; ``(λ2/2)‖w‖²`` at the Lagrangian's minimizer
    ``w = T(s)/λ2``) and the intercept term :meth:`robustsvm.terms.intercept.Intercept.dual_value` of
    ``S = Σ_i c_i y_i α_i`` (``S = 0`` with a free intercept: balance ``α`` first; None when there is no term or
    the intercept is folded into ``w``). The one place this value is written: the certifier and every dual method
    of the L2 models (``dcd``, ``robust-dcd``, ``feature-ipm``, ``frank-wolfe``, ``pegasos``) call it.
    """
    value = float(c @ loss.dual_term(alpha)) - float(conjugate)
    return value if intercept is None else value + intercept.dual_value(S)


def box_maximizer(t: np.ndarray, l2: float, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """The clipped soft-threshold: ``clip(t/λ2, lower, upper)`` (``t`` already soft-thresholded by ``λ1``).

    For ``λ2 = 0`` the maximizer of a linear function over the box: ``upper`` where ``t > 0``, ``lower``
    where ``t < 0``, ``clip(0, lower, upper)`` where ``t = 0``.
    """
    if l2 > 0:
        return np.clip(t / l2, lower, upper)
    return np.where(t > 0, upper, np.where(t < 0, lower, np.clip(0.0, lower, upper)))


def _excess(s: np.ndarray, signs: np.ndarray, box: tuple | None = None) -> np.ndarray:
    """``|s_h|`` in the directions the signs (or the box) leave unbounded (0 where they bound ``w_h``)."""
    if box is not None:
        lower, upper = box
        return np.where(s > 0, np.where(np.isposinf(upper), s, 0.0), np.where(np.isneginf(lower), -s, 0.0))
    e = np.abs(s).copy()
    e[signs * s < 0] = 0.0
    return e


def robust_shift(layout: Any, w: np.ndarray, y: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``Σ_i weights_i r_i u_i`` with ``u_i ∈ V_i`` a maximizer of ``−y_i u·w`` (each set's worst case).

    The maximizers are computed once per distinct (set, direction) pair; a
    symmetric set's maximizer for ``+w`` is minus the one for ``−w``.

    Parameters
    ----------
    layout : RobustLayout
    w : ndarray of shape (d,)
    y : ndarray of shape (n,)
        Labels in ±1.
    weights : ndarray of shape (n,)
    """
    _, V, inverse = layout.maximize(w, y)
    set_index, direction, _ = layout.pairs(y)
    # maximizers from an LP or a conic solve sit on the boundary to the solver's tolerance: pull them in
    V = np.array([retract(layout.sets[k], v) for k, v in zip(set_index, V, strict=True)]).reshape(V.shape)
    # pair j maximizes over z = direction_j·w; sample i needs z = −y_i w
    flip = direction[inverse] * (-y)
    coef = np.bincount(inverse, weights=weights * layout.radius * flip, minlength=V.shape[0])
    return coef @ V


@dataclass(frozen=True)
class BoundTerms:
    """What the Lagrangian bound reads of a model: its data, loss, penalty, intercept and feasible set.

    Attributes
    ----------
    X : ndarray or scipy.sparse matrix of shape (n, d)
    y : ndarray of shape (n,)
        Labels in ±1.
    c : ndarray of shape (n,)
        Loss coefficients (ignored for the hard margin).
    loss : Loss or str
        The loss (or its short name): ``c ℓ(m) = max_{0 ≤ α ≤ upper} c(α(1 − m) − ℓ*(α))``
        with ``a = cα`` (``loss.dual_term``, ``loss.dual_upper``).
    l2, l1 : float
    signs : ndarray of shape (d,)
    intercept : {"free", "none", "ridge"}
    mu : float
        Ridge strength of the intercept (``intercept="ridge"``).
    box : pair of ndarray of shape (d,), optional
        ``(lower, upper)``: the bounds on ``w`` (signs included), replacing ``signs``.
    linear : LinearConstraints, optional
        ``lb ≤ A w ≤ ub``; with multipliers ``ν`` (made admissible) the bound is
        ``D(a) − R*(s − Aᵀν) + ν⁻·lb − ν⁺·ub`` instead of ``D(a) − R*(s)``.
    """

    X: Any
    y: np.ndarray
    c: np.ndarray
    loss: Any
    l2: float
    l1: float
    signs: np.ndarray
    intercept: str = "none"
    mu: float = 0.0
    box: tuple | None = None
    linear: Any = None

    @classmethod
    def of(cls, model: Any) -> BoundTerms:
        """The terms of a normalized :class:`~robustsvm.model.Model` (a :class:`BoundTerms` is returned as is)."""
        if isinstance(model, cls):
            return model
        feasible = model.feasible
        return cls(X=model.X, y=model.y, c=np.asarray(model.c, dtype=np.float64), loss=model.loss, l2=model.l2,
                   l1=model.l1, signs=np.asarray(model.signs, dtype=np.float64), intercept=model.intercept.mode,
                   mu=float(model.intercept.mu),
                   box=(feasible.lower, feasible.upper) if model.has_bounds else None,
                   linear=feasible.linear if model.has_constraints else None)


def lagrangian_bound(model: Any, a: np.ndarray, *, shift: Any = None, nu: Any = None,
                     image: np.ndarray | None = None) -> tuple[float, float]:
    """The bound ``max_θ D(θa, u)`` of the module docstring, and the ``θ`` reached.

    Parameters
    ----------
    model : Model or BoundTerms
        The normalized model, or its terms written out (:class:`BoundTerms`).
    a : ndarray of shape (n,)
        Multipliers of the margin constraints, in model units; clipped to
        ``[0, c]`` (hinge) or ``[0, ∞)`` before use, so any vector is admissible.
    shift : callable, optional
        ``shift(weights) = Σ_i weights_i r_i u_i`` (see :func:`robust_shift`);
        None for a nominal model.
    nu : ndarray of shape (k,), optional
        Multipliers of the linear constraints (``ν_k > 0``: the upper side; ``< 0``: the lower one).
    image : ndarray of shape (d,), optional
        ``Xᵀ(a∘y)`` when the caller has it (:func:`.products.margins_and_image`); ``a`` must then be admissible
        already (as :func:`admissible_multipliers` returns it) and is used as given.

    Returns
    -------
    bound : float
        A lower bound on the optimum (``-inf`` when nothing finite is found).
    theta : float
    """
    t = BoundTerms.of(model)
    X, y, l2, l1, signs, intercept, mu, box, linear = (t.X, t.y, t.l2, t.l1, t.signs, t.intercept, t.mu, t.box,
                                                       t.linear)
    loss = _as_loss(t.loss)
    c = np.asarray(t.c, dtype=np.float64)
    if intercept == "l2":
        intercept = "ridge"
    if image is None:
        a = admissible_multipliers(a, y, c, loss, intercept)
    ay = a * y
    s = np.asarray(X.T @ ay).ravel() if image is None else image
    if shift is not None:
        s = s + shift(ay)
    nu_term = 0.0
    if linear is not None and linear.k > 0:
        nu = linear.admissible(nu)
        s = s - linear.A.T @ nu
        nu_term = linear.dual_constant(nu)
    live = a > 0
    lin = float(a.sum())
    sy = float(ay.sum()) if intercept == "ridge" else 0.0
    if intercept == "ridge" and mu <= 0:
        raise ValueError("a ridge intercept needs mu > 0")

    lower, upper = (None, None) if box is None else box
    term = Intercept("ridge", mu) if intercept == "ridge" else None

    c_live, a_live = c[live], a[live]
    alpha_live = a_live / c_live
    # without λ1 and a box, R*(θs) = θ²R*(s) for θ ≥ 0 (the signs' cone is invariant under the scaling)
    homogeneous = l1 == 0 and lower is None and l2 > 0
    conj_s = penalty_conjugate(s, l2, l1, signs) if homogeneous else 0.0

    def conjugate(theta: float) -> float:  # R*(θs)
        if homogeneous:
            return theta * theta * conj_s
        return penalty_conjugate(theta * s, l2, l1, signs, lower=lower, upper=upper)

    def value(theta: float) -> float:  # D at α = θa/c on the live samples, with the linear constraints' term
        return dual_value(loss, c_live, theta * alpha_live, conjugate(theta), term, theta * sy) + theta * nu_term

    a_top = float(loss.dual_upper)
    hi = 4.0
    if np.isfinite(a_top) and np.any(live):
        hi = min(hi, float(np.min(a_top * c_live / a_live)))
    if l2 <= 0:
        ex = _excess(s, signs, box)
        top = float(ex.max()) if ex.size else 0.0
        if top > l1:
            hi = min(hi, l1 / top)
    candidates = [0.0, hi] + ([1.0] if hi >= 1.0 else [])
    if hi > 0 and (lin > 0 or nu_term != 0.0):
        if scale_in_closed_form(loss, l2):
            candidates.append(best_scale(value, conjugate, s, hi, l2=l2, l1=l1, signs=signs, lower=lower,
                                         upper=upper))
        else:
            res = minimize_scalar(lambda t: -value(t), bounds=(0.0, hi), method="bounded",
                                  options={"xatol": 1e-12 * max(hi, 1.0)})
            candidates.append(float(res.x))
    best, best_theta = -np.inf, 0.0
    for theta in candidates:
        v = value(theta)
        if v > best:
            best, best_theta = v, theta
    return float(best), float(best_theta)


def _unpenalized_note(model: Any) -> str:
    """Why a model without a penalty is not certified (empty for a penalized model): its bound needs
    ``T(Σ_i a_i y_i x̃_i) = 0`` exactly (docs/certificates.md), which rounding never gives, unless a box no
    minimizer leaves is proved (:func:`_reach_terms`)."""
    if model.l1 > 0 or model.l2 > 0:
        return ""
    return ("; without a penalty (λ1 = λ2 = 0) the bound is finite only where Σ a_i y_i x̃_i is exactly 0, which "
            "rounding does not give, unless a bound on the optimal weights is proved (from one shared box, ball or "
            "ellipsoid and a dual point strictly inside, or without a set from features of full column rank and "
            "samples strictly inside their dual interval: none was found here), and falls back to what holds for any "
            "data (0 for the hinge); a small penalty (for instance penalty=rs.L2(1e-6)) makes the answer "
            "certifiable")


def _reach_terms(model: Any, terms: BoundTerms, a: np.ndarray, objective: float) -> BoundTerms | None:
    """``terms`` with the weights boxed to ``|w_h| ≤ reach_h``, the smaller of ``2·`` :func:`weight_reach` and
    :func:`robustsvm.certificates.reach.unpenalized_reach` (its rounding margin built in), met with the signs or
    bounds; None when no finite reach is proved. Every minimizer lies in the box, so the boxed model has the same
    optimum."""
    reach = np.minimum(2.0 * weight_reach(model), unpenalized_reach(model, a, objective))
    if not np.all(np.isfinite(reach)):
        return None
    ws = model.feasible_set
    lower, upper = np.maximum(ws.lower, -reach), np.minimum(ws.upper, reach)
    if np.any(lower > upper):
        return None
    return replace(terms, box=(lower, upper))


def admissible_multipliers(a: np.ndarray, y: np.ndarray, c: np.ndarray, loss: Any, intercept: str) -> np.ndarray:
    """``a`` made admissible: finite, ``0 ≤ a ≤ c·upper`` (the loss's dual box), 0 where ``c = 0``, and with a
    free intercept the heavier class scaled down so that ``Σ_i a_i y_i = 0``."""
    loss = _as_loss(loss)
    a = np.asarray(a, dtype=np.float64).copy()
    a[~np.isfinite(a)] = 0.0
    a = np.maximum(a, 0.0)
    a[c <= 0] = 0.0
    if np.isfinite(loss.dual_upper):
        a = np.minimum(a, c * float(loss.dual_upper))
    if intercept == "free":
        fp, fn = class_balance(*class_sums(a, y))
        if (fp, fn) != (1.0, 1.0):
            a *= np.where(y > 0, fp, np.where(y < 0, fn, 1.0))
    return a


def multipliers_from_margins(loss: Any, margins: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Multipliers ``a = c·α(m)`` for the given margins, ``α(m) ∈ −∂ℓ(m)`` from :meth:`Loss.multiplier`.

    Used when a backend returns none and by :mod:`robustsvm.certificates.certify`. Exact at
    the optimum for a differentiable loss (squared hinge: ``a_i = 2c_i max(0, 1 − m_i)``);
    hinge: ``c_i`` where ``m_i < 1`` and 0 elsewhere (a weaker bound: the samples on
    the margin have fractional multipliers); hard margin: 0.
    """
    loss = _as_loss(loss)
    margins = np.asarray(margins, dtype=np.float64)
    return np.asarray(c, dtype=np.float64) * loss.multiplier(margins)


def _as_loss(loss: Any):
    """A loss object from a loss or its short name."""

    if isinstance(loss, str):
        if loss not in REGISTERED:
            raise ValueError(f"unknown loss {loss!r}; known: {sorted(REGISTERED)}")
        return REGISTERED[loss]()
    if not hasattr(loss, "dual_term"):
        raise TypeError(f"no Lagrangian bound for loss {loss!r}: it needs dual_term and dual_upper")
    return loss


def _verdict(w: np.ndarray, b: float, objective: float, violation: float, bound: float, gap: float,
             status: str, message: str = "") -> Result:
    """The package's verdict on a point as a certified :class:`Result` (``dual_value`` the bound ``D``)."""
    return Result(w=w, b=float(b), status=status, gap=float(gap), dual_value=float(bound), dual_feasible=True,
                  objective=float(objective), violation=float(violation), message=message, certified=True)


def certify(model: Any, result: Result, tol: float | None = None) -> Result:
    """Check a linear model's point and build its gap from the package's own bound.

    Returns ``result`` certified (``certified=True``): ``w``, ``b`` the point, projected on the
    signs (and rescaled onto the hard-margin feasible set when needed); ``objective`` ``P(w, b)``
    recomputed by the package; ``violation`` the largest constraint violation there; ``dual_value``
    the package's lower bound ``D`` on the optimum (the backend's own value moves to
    ``dual_objective``); ``gap`` ``P(w, b) − D`` (``inf`` when the point is infeasible); ``status``
    the backend's, or ``"inaccurate"`` when it claimed optimality the numbers do not support, or
    ``"infeasible_inaccurate"`` for a hard-margin point that no rescaling makes feasible;
    ``message`` the backend's followed by what disagreed and by how much.

    Parameters
    ----------
    model : Model
        The normalized model (:func:`robustsvm.model.normalize`).
    result : Result
        The point ``(w, b)`` with what the certifier reads of it: ``status`` (the claim),
        ``gap`` (the backend's own gap, NaN if none), ``multipliers`` (the margin constraints'
        multipliers in model units, the conic duals or ``c∘α`` of a dual method; recovered
        from the margins when None), ``primal_value`` (an external solver's own objective,
        NaN if none), ``dual_value`` with ``dual_feasible`` (a lower bound the package's own
        dual method computed from a dual-feasible point; the larger of it and the Lagrangian
        bound is used) and ``constraint_multipliers`` (multipliers of the model's linear
        constraints on ``w``; their term enters the bound, and a point violating those
        constraints by more than ``max(FEAS_TOL, tol)``, relative, see :func:`linear_tolerance`,
        is not certified optimal).
    tol : float, optional
        The requested tolerance; the agreement tolerance is
        ``max(CERT_RTOL, tol)·max(1, |P|)`` plus the claimed gap.
    """
    return certify_with_decision(model, result, tol)[0]


def certify_with_decision(model: Any, result: Result, tol: float | None = None) -> tuple[Result, np.ndarray | None]:
    """:func:`certify`, and the decision ``Xw`` at the certified ``w`` where the certifier formed it (from its one
    read of ``X`` with the bound's ``Xᵀ(a∘y)``, :func:`.products.margins_and_image`; None where it did not): the
    degeneracy check of the solution reads it instead of a second product with ``X``. The certifier forms ``Xw``
    itself: nothing the backend computed from ``X`` enters the objective it certifies."""
    verdict, decision = _certify_point(model, result, tol)
    message = "; ".join(m for m in (result.message, verdict.message) if m)
    return replace(result, w=verdict.w, b=verdict.b, status=verdict.status, gap=verdict.gap,
                   dual_value=verdict.dual_value, dual_objective=float(result.dual_value), dual_feasible=True,
                   objective=verdict.objective, violation=verdict.violation, message=message,
                   certified=True), decision


def _certify_point(model: Any, result: Result, tol: float | None) -> tuple[Result, np.ndarray | None]:
    """The verdict of :func:`certify` alone (its ``message`` what disagreed) and ``Xw`` at its ``w`` (None when
    the multipliers were not given: the margins then come from :func:`robustsvm.objective.robust_margins`)."""
    w, b, status, multipliers = result.w, result.b, result.status, result.multipliers
    claimed_gap, solver_objective = float(result.gap), float(result.primal_value)
    own_bound = float(result.dual_value) if result.dual_feasible else np.nan
    constraint_multipliers = result.constraint_multipliers
    loss = model.loss
    w = np.asarray(w, dtype=np.float64).ravel()
    b = float(b)
    signs = np.asarray(model.signs, dtype=np.float64)
    feasible = model.feasible
    # the bound of a relaxation bounds the model; without the sides no minimizer reaches (weight_reach), the
    # relaxation has the same optimum, and a side of ±1e12 standing for "no bound" does not weaken the bound
    relaxed = None if feasible is None else feasible.within(2.0 * weight_reach(model))[0]
    box = (relaxed.lower, relaxed.upper) if relaxed is not None and relaxed.has_bounds else None
    w_in, b_in = w, b
    if model.feasible is None:  # the projection on the signs (or the bounds, below)
        w = w.copy()
        w[signs * w < 0] = 0.0
    else:
        w = feasible.clip(w)
    messages: list[str] = []
    layout = model.layout
    c = np.asarray(model.c, dtype=np.float64)
    mode = model.intercept.mode
    a = image = z = None
    if multipliers is not None and np.shape(multipliers) == (model.n,):
        # the margins' Xw and the bound's Xᵀ(a∘y) from one read of X (certificates/products.py)
        a = admissible_multipliers(multipliers, model.y, c, loss, mode)
        z, image = margins_and_image(model.X, w, a * model.y)
    # a nominal soft-margin model with its multipliers needs no margins beyond its objective (from z, compiled)
    direct = None if z is None else objective_module.objective_from_products(model, w, b, z)
    margins = objective_module.robust_margins(model, w, b, z=z) if direct is None else None
    if loss.is_constraint:
        m0 = float(np.min(margins))
        if m0 <= 0.0:
            violation = objective_module.violation(model, w, b, margins=margins)
            return _verdict(
                w, b, objective_module.objective_from_margins(model, w, b, margins), violation, float("nan"),
                float("inf"), "infeasible_inaccurate",
                message=(f"the returned point violates the hard-margin constraints by {violation:.3g} "
                         f"(smallest robust margin {m0:.3g} ≤ 0, so no rescaling makes it feasible); "
                         "it certifies nothing: the data may not be separable (a conic solver decides), or "
                         f"the solver stopped too early (status {status!r})"),
            ), None
        if m0 < 1.0 and (feasible is None or feasible.is_cone):
            w, b = w / m0, b / m0
            margins = margins / m0
            z = None if z is None else z / m0
            messages.append(f"(w, b) rescaled by 1/{m0:.12g} onto the hard-margin constraints")
    changed = not (np.array_equal(w, w_in) and b == b_in)
    with np.errstate(over="ignore", invalid="ignore"):
        objective = objective_module.objective_from_margins(model, w, b, margins) if direct is None else direct
        violation = objective_module.violation(model, w, b, margins=margins)
    if not (np.isfinite(objective) and np.all(np.isfinite(w)) and np.isfinite(b)):
        # a diverged iterate: nothing to certify
        return _verdict(w, b, objective, violation, float("nan"), float("inf"),
                        "inaccurate" if status == "optimal" else status,
                        message="the returned point is not finite"), None
    if a is None:
        a = admissible_multipliers(multipliers_from_margins(loss, margins, c), model.y, c, loss, mode)
    shift = None
    if layout is not None:
        def shift(weights: np.ndarray) -> np.ndarray:
            return robust_shift(layout, w, model.y, weights)
    linear = feasible.linear if model.has_constraints else None
    cone = feasible is None or feasible.is_cone
    nu = None if linear is None else linear.admissible(constraint_multipliers)
    terms = BoundTerms.of(model)
    bound, _ = lagrangian_bound(terms, a, shift=shift, nu=nu, image=image)
    scale = max(1.0, abs(objective))
    rtol = max(CERT_RTOL, float(tol) if tol is not None else 0.0)
    allowed = rtol * scale + (claimed_gap if np.isfinite(claimed_gap) and claimed_gap > 0 else 0.0)
    if np.isfinite(own_bound) and own_bound > bound and not changed:
        bound = float(own_bound)
    if model.l1 == 0 and model.l2 == 0 and not objective - bound <= allowed:
        # no penalty: a box no minimizer leaves (proved from a dual point) makes the conjugate finite
        repaired = nominal_repair(model, a)
        if repaired is not a:
            a, image = repaired, None
        boxed = _reach_terms(model, terms, a, objective)
        if boxed is not None:
            terms, box = boxed, boxed.box
            bound = max(bound, lagrangian_bound(terms, a, shift=shift, nu=nu, image=image)[0])
    if layout is not None and status == "optimal" and not objective - bound <= allowed:
        # the worst cases at w may be the wrong points of a face: choose them for the bound instead (a small
        # conic solve, spent only where the verdict on a claimed optimum depends on it)
        ay = a * model.y
        s0 = (np.asarray(model.X.T @ ay).ravel() if image is None else image) - (
            0.0 if linear is None else linear.A.T @ nu)
        vec = optimal_shift(layout, model.y, ay, s0, model.l1, signs, model.l2, box=box)
        if vec is not None:
            bound2, _ = lagrangian_bound(terms, a, shift=lambda _ay: vec, nu=nu, image=image)
            bound = max(bound, bound2)
    gap = max(objective - bound, 0.0) if np.isfinite(bound) else float("inf")
    new_status = status
    if status == "optimal":
        problems = []
        if gap > allowed:
            problems.append(f"the package's duality gap {gap:.3g} (objective {objective:.10g}, dual bound "
                            f"{bound:.10g}) exceeds the solver's claim ({claimed_gap:.3g}) and the tolerance "
                            f"{rtol:.1g}·max(1, |P|)" + _unpenalized_note(model))
        feas = linear_tolerance(linear, w, tol)
        if (linear is not None or not cone) and violation > feas:
            problems.append(f"the point violates the constraints by {violation:.3g}, more than the "
                            f"feasibility tolerance {feas:.3g}")
        if np.isfinite(solver_objective) and abs(solver_objective - objective) > allowed:
            problems.append(f"the solver's objective {solver_objective:.10g} differs from the recomputed "
                            f"{objective:.10g}")
        if problems:
            new_status = "inaccurate"
            messages.extend(problems)
    return _verdict(w, b, objective, violation, bound, gap, new_status, message="; ".join(messages)), z

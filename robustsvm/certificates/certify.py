"""Certify a point from anywhere: its objective, its constraint violation and a bound on its distance to the optimum.

:func:`certify_point` (``Problem.certify``) takes ``(w, b)`` produced by any code — scikit-learn's
``LinearSVC``, another package, a colleague's script — and answers with the package's own numbers:

- the objective ``P(w, b)`` of the model (:mod:`robustsvm.objective`) and the largest violation of
  its constraints (signs; robust margins ≥ 1 for a hard margin);
- a lower bound ``D ≤ P*`` from the Lagrangian dual of ``docs/certificates.md``: multipliers
  recovered from the point's margins (:func:`~robustsvm.certificates.duality.multipliers_from_margins`), the
  points ``u_i`` the sets' worst cases at the point (retracted into the sets), then a bounded
  number of accelerated projected-gradient steps on the concave dual
  ``D(a) = Σ_i c_i(α_i − ℓ*(α_i)) − R*_S(X̃ᵀ(a∘y)) − B(Σ_i a_i y_i)`` over its feasible set;
- ``gap = P(w, b) − D``, so ``P(w, b) − P* ≤ gap``.

Every bound reported is :func:`~robustsvm.certificates.duality.lagrangian_bound` evaluated at admissible
multipliers and points of the sets; the ascent only chooses which ones, so the bound stays valid
whatever its steps do (a diverging step only fails to improve it). The derivation of the steps is in
``docs/certificates.md`` ("Certifying another solver's point").
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import objective as objective_module
from ..model import Model
from .duality import admissible_multipliers, box_maximizer, lagrangian_bound, multipliers_from_margins
from .set_points import optimal_points, retract

__all__ = ["PointCertificate", "certify_point", "DEFAULT_ASCENT_STEPS"]

#: dual-ascent steps spent at most when the recovered multipliers leave a gap above the tolerance
DEFAULT_ASCENT_STEPS = 1000
#: ascent steps between two choices of the points of the sets (robust models)
ROUND_STEPS = 50
#: steps between two evaluations of the (θ-rescaled) Lagrangian bound
_EVAL_EVERY = 10
#: the ascent stops when this many evaluations in a row closed less than ``_STALL_FRACTION`` of the gap
_STALL_EVALS = 10
_STALL_FRACTION = 0.01


@dataclass
class PointCertificate:
    """The package's verdict on a point ``(w, b)`` it did not compute.

    Attributes
    ----------
    w : ndarray of shape (d,)
    b : float
        The point, as given.
    objective : float
        ``P(w, b)``, the model's objective at the point (constraints not included).
    violation : float
        Largest constraint violation: ``max_h(−s_h w_h)`` over the sign constraints and, for a hard
        margin, ``max_i(1 − m_i^rob)``; 0 when feasible.
    sign_violation : float
        The sign part of :attr:`violation`.
    feasible : bool
        ``violation ≤ feas_tol``.
    bound : float
        The best lower bound ``D ≤ P*`` found.
    gap : float
        ``objective − bound``: for a feasible point, ``0 ≤ P(w, b) − P* ≤ gap``.
    recovered_bound : float
        The bound from the multipliers recovered from the point's margins alone (before any step).
    steps : int
        Dual-ascent steps spent tightening the bound.
    status : str
        ``"optimal"`` (feasible, ``gap ≤ tol·max(1, |P|)``), ``"feasible"`` (feasible, a larger gap)
        or ``"infeasible"``.
    projected_objective, projected_gap : float
        For an infeasible point: the objective and gap of its projection on the sign constraints
        (then rescaled onto the hard-margin constraints when that makes it feasible), a feasible point
        the bound also certifies; equal to ``objective`` and ``gap`` for a feasible point.
    multipliers : ndarray of shape (n,)
        The margin multipliers ``a`` behind :attr:`bound`.
    message : str
    """

    w: np.ndarray
    b: float
    objective: float
    violation: float
    sign_violation: float
    feasible: bool
    bound: float
    gap: float
    recovered_bound: float
    steps: int
    status: str
    projected_objective: float
    projected_gap: float
    multipliers: np.ndarray = field(repr=False)
    message: str = ""

    @property
    def relative_gap(self) -> float:
        """``gap / max(1, |objective|)``."""
        return self.gap / max(1.0, abs(self.objective))

    def summary(self) -> str:
        """A few lines: objective, violation, bound, gap and status."""
        lines = [f"status {self.status}: objective {self.objective:.10g}, violation {self.violation:.3g}",
                 f"lower bound on the optimum {self.bound:.10g} (from the margins alone {self.recovered_bound:.10g}; "
                 f"{self.steps} dual-ascent steps)",
                 f"objective - optimum <= {self.gap:.3g} (relative {self.relative_gap:.3g})"]
        if not self.feasible:
            lines.append(f"projected onto the constraints: objective {self.projected_objective:.10g}, "
                         f"gap {self.projected_gap:.3g}")
        if self.message:
            lines.append(self.message)
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()

    def to_dict(self) -> dict:
        """JSON-ready fields (no arrays but ``w``)."""
        return {"objective": self.objective, "violation": self.violation, "sign_violation": self.sign_violation,
                "feasible": self.feasible, "bound": self.bound, "gap": self.gap, "relative_gap": self.relative_gap,
                "recovered_bound": self.recovered_bound, "steps": self.steps, "status": self.status,
                "projected_objective": self.projected_objective, "projected_gap": self.projected_gap,
                "w": self.w.tolist(), "b": self.b, "message": self.message}


def certify_point(model: Model, w: Any, b: Any = 0.0, *, ascent_steps: int = DEFAULT_ASCENT_STEPS,
                  tol: float = 1e-8, feas_tol: float = 1e-9) -> PointCertificate:
    """Certify ``(w, b)`` on a normalized linear model (see the module docstring).

    Parameters
    ----------
    model : Model
        :func:`robustsvm.model.normalize` of the problem on the data.
    w : array-like of shape (d,)
    b : float
        The intercept (must be 0 for a model without one).
    ascent_steps : int, default 1000
        Most dual-ascent steps spent when the recovered multipliers leave a relative gap above ``tol``
        (0: the recovered bound only); the ascent stops sooner when ten bound evaluations in a row
        close less than 1 % of the remaining gap.
    tol : float, default 1e-8
        Relative gap ``gap / max(1, |P|)`` at which the ascent stops and the status is ``"optimal"``.
    feas_tol : float, default 1e-9
        Largest violation counted as feasible.

    Returns
    -------
    PointCertificate
    """
    if model.kernel is not None:
        raise ValueError("certify needs a linear model (weights w); a kernel model is certified by its dual NQP")
    w, b = _check_point(model, w, b)
    if isinstance(ascent_steps, bool) or not isinstance(ascent_steps, (int, np.integer)) or ascent_steps < 0:
        raise ValueError(f"ascent_steps must be a non-negative integer, got {ascent_steps!r}")
    for name, value in (("tol", tol), ("feas_tol", feas_tol)):
        if not (isinstance(value, (int, float, np.floating)) and math.isfinite(value) and value >= 0):
            raise ValueError(f"{name} must be a non-negative number, got {value!r}")
    signs = np.asarray(model.signs, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        margins = objective_module.robust_margins(model, w, b)
        objective = objective_module.objective_from_margins(model, w, b, margins)
        violation = objective_module.violation(model, w, b, margins=margins)
    sign_violation = float(max(0.0, np.max(-signs * w))) if w.size else 0.0
    if not math.isfinite(objective):
        raise ValueError(f"the objective at the point is not finite ({objective}); nothing to certify")
    feasible = bool(violation <= feas_tol)
    # the dual side works from the projection on the constraints (closer to the feasible set)
    wp, bp, note = _feasible_projection(model, w, b, signs)
    messages = [note] if note else []
    pm = objective_module.robust_margins(model, wp, bp)
    p_objective = objective_module.objective_from_margins(model, wp, bp, pm)
    c = np.asarray(model.c, dtype=np.float64)
    a0 = admissible_multipliers(multipliers_from_margins(model.loss, pm, c), model.y, c, model.loss,
                                model.intercept.mode)
    moved = _MovedSamples(model, wp)
    recovered, _ = _bound(model, a0, moved)
    best, best_a = recovered, a0
    steps = 0
    target = p_objective  # the objective itself for a feasible point (its projection leaves it unchanged)
    if ascent_steps > 0 and target - best > tol * max(1.0, abs(target)):
        if model.l2 <= 0:
            messages.append("no dual-ascent steps: without λ2 the dual is not smooth (the recovered bound is used)")
        else:
            best, best_a, steps = _ascend(model, moved, a0, best, target, ascent_steps, tol)
    gap = max(objective - best, 0.0) if math.isfinite(best) else math.inf
    p_gap = max(p_objective - best, 0.0) if math.isfinite(best) else math.inf
    if not feasible:
        status = "infeasible"
        messages.insert(0, f"the point violates the constraints by {violation:.3g}"
                           + (f" (signs by {sign_violation:.3g})" if sign_violation > 0 else ""))
    else:
        status = "optimal" if gap <= tol * max(1.0, abs(objective)) else "feasible"
    return PointCertificate(
        w=w, b=b, objective=float(objective), violation=float(violation), sign_violation=sign_violation,
        feasible=feasible, bound=float(best), gap=float(gap), recovered_bound=float(recovered), steps=steps,
        status=status, projected_objective=float(objective if feasible else p_objective),
        projected_gap=float(gap if feasible else p_gap), multipliers=best_a, message="; ".join(messages))


def _check_point(model: Model, w: Any, b: Any) -> tuple[np.ndarray, float]:
    d = model.X.shape[1]
    try:
        w = np.asarray(w, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"w must be an array of {d} numbers, got {type(w).__name__}") from exc
    if w.ndim == 2 and 1 in w.shape:  # a (1, d) coef_ as scikit-learn stores it
        w = w.ravel()
    if w.shape != (d,):
        raise ValueError(f"w must have shape ({d},) to match X, got {w.shape}")
    if not np.all(np.isfinite(w)):
        raise ValueError("w contains NaN or infinity")
    try:
        b = float(np.asarray(b, dtype=np.float64).reshape(-1)[0]) if np.size(b) == 1 else float(b)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"b must be a number, got {b!r}") from exc
    if not math.isfinite(b):
        raise ValueError(f"b must be finite, got {b!r}")
    if model.intercept.mode == "none" and b != 0.0:
        raise ValueError(f"b must be 0 for a model without intercept (intercept=False), got {b!r}")
    return w.copy(), b


def _feasible_projection(model: Model, w: np.ndarray, b: float, signs: np.ndarray) -> tuple[np.ndarray, float, str]:
    """The point projected on the signs, and for a hard margin rescaled onto ``m^rob ≥ 1`` when it can be."""
    if model.feasible is None:  # the projection on the signs (or the bounds)
        wp = w.copy()
        wp[signs * wp < 0] = 0.0
    else:
        wp = model.feasible.clip(w)
    if not model.loss.is_constraint or not (model.feasible is None or model.feasible.is_cone):
        return wp, b, ""
    m0 = float(np.min(objective_module.robust_margins(model, wp, b)))
    if 0.0 < m0 < 1.0:
        return wp / m0, b / m0, ""
    if m0 <= 0.0:
        return wp, b, (f"no rescaling makes the point meet the hard-margin constraints (smallest robust margin "
                       f"{m0:.3g} ≤ 0)")
    return wp, b, ""


class _MovedSamples:
    """The moved samples ``x̃_i = x_i + r_i u_i`` with ``u_i ∈ V_i`` fixed, applied without forming them.

    ``u_i = f_i v_{j(i)}``: by default ``v_j`` is the (retracted) worst case of pair ``j`` at ``w`` and
    ``f_i = ±1`` the flip of a symmetric set's point for the other label (as
    :func:`robustsvm.certificates.duality.robust_shift`); ``points=(inverse, V)`` gives the points instead (``f = 1``).
    """

    def __init__(self, model: Model, w: np.ndarray, points: tuple[np.ndarray, np.ndarray] | None = None) -> None:
        self.X = model.X
        layout = model.layout
        if layout is None:
            self.V = None
            return
        if points is not None:
            self.inverse, self.V = points
            self.k = np.asarray(layout.radius, dtype=np.float64)
            return
        _, V, inverse = layout.maximize(w, model.y)
        set_index, direction, _ = layout.pairs(model.y)
        self.V = np.array([retract(layout.sets[k], v) for k, v in zip(set_index, V, strict=True)]).reshape(V.shape)
        self.inverse = inverse
        self.k = layout.radius * direction[inverse] * (-model.y)  # r_i f_i

    def rmatvec(self, g: np.ndarray) -> np.ndarray:
        """``X̃ᵀ g``."""
        s = np.asarray(self.X.T @ g).ravel()
        if self.V is not None:
            s = s + self.shift(g)
        return s

    def shift(self, g: np.ndarray) -> np.ndarray:
        """``Σ_i g_i r_i u_i``."""
        return np.bincount(self.inverse, weights=g * self.k, minlength=self.V.shape[0]) @ self.V

    def matvec(self, w: np.ndarray) -> np.ndarray:
        """``X̃ w``."""
        out = np.asarray(self.X @ w).ravel()
        if self.V is not None:
            out = out + self.k * (self.V @ w)[self.inverse]
        return out


def _bound(model: Model, a: np.ndarray, moved: _MovedSamples) -> tuple[float, float]:
    """:func:`~robustsvm.certificates.duality.lagrangian_bound` at ``a`` with the fixed moved samples."""
    return lagrangian_bound(model, a, shift=None if moved.V is None else moved.shift)


class _Dual:
    """The concave dual ``D(a)`` at fixed points, its gradient and the projection on its feasible set."""

    def __init__(self, model: Model, moved: _MovedSamples) -> None:
        self.model, self.moved = model, moved
        self.y = model.y
        self.c = np.asarray(model.c, dtype=np.float64)
        self.live = self.c > 0
        upper = float(model.loss.dual_upper)
        self.upper = np.where(self.live, self.c * upper if math.isfinite(upper) else np.inf, 0.0)
        self.signs = np.asarray(model.signs, dtype=np.float64)
        self.mode, self.mu = model.intercept.mode, float(model.intercept.mu)

    def _alpha(self, a: np.ndarray) -> np.ndarray:
        return np.where(self.live, a / np.where(self.live, self.c, 1.0), 0.0)

    def primal(self, a: np.ndarray) -> np.ndarray:
        """``w(a) = ∇R*_S(s) = T(s)/λ2``, ``s = X̃ᵀ(a∘y)``."""
        s = self.moved.rmatvec(a * self.y)
        t = np.sign(s) * np.maximum(np.abs(s) - self.model.l1, 0.0)
        if self.model.has_bounds:  # the clipped soft-threshold
            return box_maximizer(t, self.model.l2, self.model.feasible_set.lower, self.model.feasible_set.upper)
        t[self.signs * t < 0] = 0.0
        return t / self.model.l2

    def value_and_grad(self, a: np.ndarray) -> tuple[float, np.ndarray]:
        """``D(a)`` (without the θ rescaling) and its gradient."""
        loss, l2 = self.model.loss, self.model.l2
        alpha = self._alpha(a)
        w = self.primal(a)
        # R*(s) = (λ2/2)‖w‖² when the box is the signs'; s·w − R(w) in general
        conj = 0.5 * l2 * float(w @ w)
        if self.model.has_bounds:
            s = self.moved.rmatvec(a * self.y)
            conj = float(s @ w) - self.model.l1 * float(np.abs(w).sum()) - conj
        value = float(self.c[self.live] @ loss.dual_term(alpha[self.live])) - conj
        h = 1e-6
        slope = (loss.dual_term(alpha + h) - loss.dual_term(alpha - h)) / (2 * h)  # d/da of c·(α − ℓ*(α))
        grad = np.where(self.live, slope, 0.0) - self.y * self.moved.matvec(w)
        if self.mode == "ridge":
            sy = float(a @ self.y)
            value -= sy * sy / (2.0 * self.mu)
            grad = grad - self.y * sy / self.mu
        return value, grad

    def project(self, a: np.ndarray) -> np.ndarray:
        """The Euclidean projection on ``0 ≤ a ≤ c·upper`` (and ``Σ a_i y_i = 0`` for a free intercept)."""
        if self.mode != "free":
            return np.clip(a, 0.0, self.upper)
        y, upper = self.y, self.upper

        def excess(tau: float) -> float:  # Σ y_i clip(a_i − τ y_i, 0, U_i): piecewise linear, non-increasing
            return float(y @ np.clip(a - tau * y, 0.0, upper))

        # its breakpoints are where a_i − τ y_i reaches 0 or U_i; the root lies between two of them
        ay, ey = a * y, (a - upper) * y
        bp = np.sort(np.concatenate([ay, ey[np.isfinite(ey)]]))
        f_first, f_last = excess(bp[0]), excess(bp[-1])
        if f_first >= 0 >= f_last:
            # sample i has slope −1 for τ between min(ay_i, ey_i) and max(ay_i, ey_i), 0 elsewhere: the
            # values at every breakpoint by one cumulative sum, then the bracket evaluated exactly
            active = (np.searchsorted(np.sort(np.minimum(ay, ey)), bp[:-1], side="right")
                      - np.searchsorted(np.sort(np.maximum(ay, ey)), bp[:-1], side="right"))
            f = f_first - np.concatenate([[0.0], np.cumsum(active * np.diff(bp))])
            lo = min(max(int(np.searchsorted(-f, 0.0, side="right")) - 1, 0), bp.size - 1)
            hi = min(lo + 1, bp.size - 1)
            f_lo, f_hi = excess(bp[lo]), excess(bp[hi])
            step = 1
            while f_lo < 0 and lo > 0:  # the cumulative sum's rounding put the bracket off: widen it
                hi, f_hi, lo, step = lo, f_lo, max(lo - step, 0), 2 * step
                f_lo = excess(bp[lo])
            step = 1
            while f_hi > 0 and hi < bp.size - 1:
                lo, f_lo, hi, step = hi, f_hi, min(hi + step, bp.size - 1), 2 * step
                f_hi = excess(bp[hi])
            while hi - lo > 1:  # then narrow it on the exact values
                mid = (lo + hi) // 2
                f_mid = excess(bp[mid])
                if f_mid >= 0:
                    lo, f_lo = mid, f_mid
                else:
                    hi, f_hi = mid, f_mid
            tau = bp[lo] if f_lo == f_hi else bp[lo] + f_lo * (bp[hi] - bp[lo]) / (f_lo - f_hi)
        else:  # beyond the breakpoints (an unbounded dual box): bisection
            t_lo, t_hi = float(bp[0]) - 1.0, float(bp[-1]) + 1.0
            while excess(t_lo) < 0:
                t_lo = 2.0 * t_lo - 1.0
            while excess(t_hi) > 0:
                t_hi = 2.0 * t_hi + 1.0
            for _ in range(100):
                mid = 0.5 * (t_lo + t_hi)
                t_lo, t_hi = (mid, t_hi) if excess(mid) > 0 else (t_lo, mid)
            tau = 0.5 * (t_lo + t_hi)
        return np.clip(a - tau * y, 0.0, upper)

    def curvature(self, a: np.ndarray) -> float:
        """An estimate of the largest curvature of ``−D`` (power iteration on gradient differences), padded."""
        rng = np.random.default_rng(0)
        v = rng.standard_normal(a.shape[0])
        v /= np.linalg.norm(v)
        _, g0 = self.value_and_grad(a)
        lam = 0.0
        eps = 1e-3 * max(1.0, float(np.max(np.abs(a))) if a.size else 1.0)
        for _ in range(25):
            _, g1 = self.value_and_grad(a + eps * v)
            hv = -(g1 - g0) / eps
            norm = float(np.linalg.norm(hv))
            if norm == 0.0:
                break
            lam, v = norm, hv / norm
        return 1.5 * lam + 1e-300


def _ascend(model: Model, moved: _MovedSamples, a0: np.ndarray, best: float, target: float, steps: int,
            tol: float) -> tuple[float, np.ndarray, int]:
    """Tighten the bound from ``a0`` in rounds of projected-gradient steps; the best bound, its ``a``, steps spent.

    With uncertainty, rounds of ``ROUND_STEPS`` steps alternate with choices of the points (the dual
    is concave in the multipliers for fixed points, and the best points for fixed multipliers are a
    small conic program); the first round keeps the points ``u_i`` at the sets' worst cases at the point
    unless the points chosen for the recovered multipliers give a larger bound, and each later round
    first chooses the points for the best multipliers so far (:func:`robustsvm.certificates.set_points.optimal_points`,
    a small conic program: on a face of a set the worst case at the point need not be the right one).
    """
    rounds = max(1, -(-steps // ROUND_STEPS)) if model.layout is not None else 1
    budget = [steps // rounds + (1 if r < steps % rounds else 0) for r in range(rounds)]
    best_a, done = a0, 0
    for r in range(rounds):
        if model.layout is not None:
            chosen = _chosen_points(model, best_a)
            if chosen is None and r > 0:
                break
            if chosen is not None:
                bound, _ = _bound(model, best_a, chosen)
                if r > 0 or bound > best:
                    moved = chosen
                best = max(best, bound)
        if target - best <= tol * max(1.0, abs(target)) or budget[r] == 0:
            break
        before = best
        best, best_a, used = _gradient_ascent(model, moved, best_a, best, target, budget[r], tol)
        done += used
        if r > 0 and best - before < _STALL_FRACTION * (target - before):
            break  # a round that closed less than 1 % of the gap: the bound has stalled
    return best, best_a, done


def _chosen_points(model: Model, a: np.ndarray) -> _MovedSamples | None:
    """The moved samples with the points :func:`robustsvm.certificates.set_points.optimal_points` chooses for ``a``
    (None: failed)."""
    ay = a * model.y
    points = optimal_points(model.layout, model.y, ay, np.asarray(model.X.T @ ay).ravel(), model.l1,
                            np.asarray(model.signs, dtype=np.float64), model.l2,
                            box=(model.feasible.lower, model.feasible.upper) if model.has_bounds else None)
    return None if points is None else _MovedSamples(model, np.zeros(model.X.shape[1]), points)


def _gradient_ascent(model: Model, moved: _MovedSamples, a0: np.ndarray, best: float, target: float, steps: int,
                     tol: float) -> tuple[float, np.ndarray, int]:
    """Accelerated projected-gradient ascent on ``D`` at fixed points; the best checked bound and its ``a``.

    Steps ``1/L`` with ``L`` a padded curvature estimate and Nesterov momentum, restarted when the
    step points against the gradient (``∇D(z)·(x − x_prev) < 0``: one gradient per step, no extra
    evaluation). Every ``_EVAL_EVERY`` steps the iterate's multipliers go through :func:`_bound`
    (admissible projection and θ rescaling): only those values are reported; a value below the previous
    check doubles ``L`` and restarts from the best multipliers. The ascent stops early when
    ``_STALL_EVALS`` evaluations in a row closed less than ``_STALL_FRACTION`` of the remaining gap.
    """
    dual = _Dual(model, moved)
    a = dual.project(a0)
    L = dual.curvature(a)
    best_a = a0
    x_prev, z = a.copy(), a.copy()
    t = 1.0
    last = -math.inf
    done = 0
    window = [best]  # the best bound at the last evaluations, to stop a stalled ascent
    for k in range(1, steps + 1):
        done = k
        _, g = dual.value_and_grad(z)
        x = dual.project(z + g / L)
        if float(g @ (x - x_prev)) < 0.0:  # the momentum carried the iterate uphill of nothing: restart it
            t, z = 1.0, x.copy()
        else:
            t_next = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * t * t))
            z = x + ((t - 1.0) / t_next) * (x - x_prev)
            t = t_next
        x_prev = x
        if k % _EVAL_EVERY == 0 or k == steps:
            bound, _ = _bound(model, x, moved)
            if bound > best:
                best, best_a = bound, x.copy()
            if target - best <= tol * max(1.0, abs(target)):
                break
            if bound < last:  # the steps are too long for the curvature: shorten them, start from the best
                L *= 2.0
                x_prev, z, t = dual.project(best_a), dual.project(best_a), 1.0
            last = bound
            window = [*window[-_STALL_EVALS:], best]
            if len(window) > _STALL_EVALS and best - window[0] < _STALL_FRACTION * (target - window[0]):
                break  # ten evaluations closed less than 1 % of the gap: more steps would buy little
    return best, best_a, done

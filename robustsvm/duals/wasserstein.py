"""The package's certificate of a model with a Wasserstein ball: a Lagrangian bound from the ball's dual.

The model (``robustsvm.uncertainty.wasserstein``) is, with ``C = Σ_i c_i``,

    P* = min_{w ∈ S, b, λ ≥ ‖w‖_*}  R(w) + I(b) + Cελ + Σ_i c_i max(ℓ(m_i), ℓ(−m_i) − λκ).

Split each ``c_i = p_i + q_i`` (``p, q ≥ 0``) and write ``ℓ(m) ≥ α(1 − m) − ℓ*(α)`` with ``α`` in the loss's
dual box (``Loss.dual_term`` is ``α − ℓ*(α)``); the loss term is then at least
``Σ p_i(α_i − ℓ*(α_i)) + q_i(β_i − ℓ*(β_i)) − Σ a_i m_i − λκΣq_i`` with ``a_i = p_iα_i − q_iβ_i``. Minimizing over
``b`` asks ``Σ a_i y_i = 0`` for a free intercept, over ``λ ≥ ‖w‖_*`` asks ``τ = Cε − κΣq ≥ 0`` and leaves
``τ‖w‖_*``, and over ``w`` gives the conjugate of ``R + τ‖·‖_*`` on the feasible set at ``s = Σ a_i y_i x_i``:

    D = Σ_i [p_i (α_i − ℓ*(α_i)) + q_i (β_i − ℓ*(β_i))] − (R + τ‖·‖_*)*_S(s) + (intercept term) ≤ P*.

The conjugate is closed-form for ``‖·‖_* = ‖·‖₁`` (λ1 + τ) and for the 2-norm on the signs' cone
(``(‖T(s)‖ − τ)₊²/(2λ2)``, ``T`` the soft-threshold and sign clip); otherwise any ``ν`` with ``‖ν‖_p ≤ τ`` gives
the upper bound ``R*_S(s − ν)``, and ``ν = τ g`` with ``g`` a subgradient of ``‖·‖_*`` at the point is exact at the
optimum. The multipliers come from the conic program's duals (rows ``p, q, a⁺ = pα, a⁻ = qβ``) or from the
point's margins; they are made admissible first. Without L2 (and bounds) the conjugate is finite only where
``‖T(s)‖_p ≤ τ``, which rounding never meets exactly; the optimum's ``‖w*‖_* ≤ P(ŵ)/(Cε)`` (any feasible
``ŵ``) is added as a redundant constraint, and the conjugate becomes ``P(ŵ)/(Cε)·(‖T(s)‖_p − τ)₊``.
``docs/derivations/wasserstein.md`` has the derivation.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import objective as objective_module
from ..certificates.certify import PointCertificate
from ..certificates.duality import CERT_RTOL, penalty_conjugate
from ..result import Result

__all__ = ["certify", "wasserstein_bound", "multipliers_from_point", "point_certificate"]


def multipliers_from_point(model: Any, w: np.ndarray, margins: np.ndarray) -> np.ndarray:
    """Rows ``p, q, a⁺, a⁻`` read off a point: the flipped piece where it is the larger at the best ``λ*``.

    Where several samples sit at the kink ``λ_i = λ*`` the optimal split of their weight between the pieces is
    not read off the point (one of them takes the rest of the budget), so this bound is looser than the one
    from a solver's multipliers.
    """
    ball, loss, c = model.distribution, model.loss, model.c
    q = np.zeros_like(c)
    if np.isfinite(ball.kappa):
        _, lam = ball.budget(loss, margins, c, w)
        brk = (loss.value(-margins) - loss.value(margins)) / ball.kappa
        q = np.where(brk > lam, c, 0.0)
        if lam > ball.dual_norm(w) and np.any(brk <= lam):  # λ* inside: the slope in λ is 0, κΣq = Cε; the
            k = int(np.argmin(np.where(brk <= lam, lam - brk, np.inf)))  # breakpoint sample takes the rest
            q[k] = min(max(float(c.sum()) * ball.eps / ball.kappa - float(q.sum()), 0.0), c[k])
    p = c - q
    return np.vstack([p, q, p * loss.multiplier(margins), q * loss.multiplier(-margins)])


def _admissible(model: Any, rows: np.ndarray) -> tuple[np.ndarray, ...]:
    """``(p, q, α, β, τ)`` from the rows: ``p + q = c``, the dual boxes, ``κΣq ≤ Cε`` and the intercept's balance."""
    ball, loss, c, y = model.distribution, model.loss, model.c, model.y
    rows = np.where(np.isfinite(rows), np.maximum(rows, 0.0), 0.0)
    total = float(c.sum())
    q = np.minimum(rows[1], c) if np.isfinite(ball.kappa) else np.zeros_like(c)
    if np.isfinite(ball.kappa) and ball.kappa * q.sum() > total * ball.eps:
        q = q * (total * ball.eps / (ball.kappa * q.sum()))
    p = c - q
    top = float(loss.dual_upper)
    with np.errstate(divide="ignore", invalid="ignore"):
        alpha = np.clip(np.where(p > 0, rows[2] / p, 0.0), 0.0, top)
        beta = np.clip(np.where(q > 0, rows[3] / q, 0.0), 0.0, top)
    if model.intercept.mode == "free":  # Σ a_i y_i = 0: scale down the heavier side's α and β
        g = (p * alpha - q * beta) * y
        up, down = float(g[g > 0].sum()), float(-g[g < 0].sum())
        if up > down:
            shrink = np.where(g > 0, down / up, 1.0)
        else:
            shrink = np.where(g < 0, up / down if down > 0 else 1.0, 1.0)
        alpha, beta = alpha * shrink, beta * shrink
    tau = total * ball.eps - (ball.kappa * float(q.sum()) if np.isfinite(ball.kappa) else 0.0)
    return p, q, alpha, beta, max(tau, 0.0)


def _conjugate(model: Any, s: np.ndarray, tau: float, w: np.ndarray, box, reach: float) -> float:
    """An upper bound on ``max_{w ∈ S, ‖w‖_* ≤ reach} s·w − R(w) − τ‖w‖_*`` (exact where the module docstring
    says; ``reach`` bounds the optimum's ‖w*‖_*)."""
    ball, l2, l1, signs = model.distribution, model.l2, model.l1, model.signs
    lower, upper = (None, None) if box is None else box
    if l2 <= 0 and box is None:  # ≤ reach·(‖T(s)‖_p − τ)₊ (Hölder); 0 inside τ times the p-ball
        excess = max(_excess_norm(model, s) - tau, 0.0)
        return 0.0 if excess == 0.0 else reach * excess
    if ball.dual == 1.0:
        return penalty_conjugate(s, l2, l1 + tau, signs, lower=lower, upper=upper)
    if ball.dual == 2.0 and box is None:
        t = np.sign(s) * np.maximum(np.abs(s) - l1, 0.0)
        t[signs * t < 0] = 0.0
        excess = max(float(np.linalg.norm(t)) - tau, 0.0)
        if l2 > 0:
            return excess * excess / (2.0 * l2)
        return 0.0 if excess == 0.0 else float("inf")
    # ν = the projection of T(s) on the ball ‖ν‖_p ≤ τ: exact without bounds (then (s − ν)/λ2 thresholded is the
    # maximizer), whatever the point; ν = τ g below is exact at the optimum; the smaller bound is kept
    projected = penalty_conjugate(s - _ball_projection(_threshold(model, s), tau, ball.norm), l2, l1, signs,
                                  lower=lower, upper=upper)
    g = np.zeros_like(w)
    if np.any(w):
        if ball.dual == 2.0:
            g = w / np.linalg.norm(w)
        else:  # ‖·‖_∞: a subgradient spread over the largest entries, weighted by what the rest asks of them
            big = np.abs(w) >= np.max(np.abs(w)) * (1.0 - 1e-6)
            pull = np.where(big, np.maximum(np.sign(w) * (s - l2 * w - l1 * np.sign(w)), 0.0), 0.0)
            pi = pull / pull.sum() if pull.sum() > 0 else big / big.sum()
            g = np.sign(w) * pi
    return min(projected, penalty_conjugate(s - tau * g, l2, l1, signs, lower=lower, upper=upper))


def _threshold(model: Any, s: np.ndarray) -> np.ndarray:
    """``T(s)``: the soft-threshold by λ1, the forbidden signs at 0."""
    t = np.sign(s) * np.maximum(np.abs(s) - model.l1, 0.0)
    t[model.signs * t < 0] = 0.0
    return t


def _ball_projection(t: np.ndarray, tau: float, p: float) -> np.ndarray:
    """The Euclidean projection of ``t`` on ``{ν : ‖ν‖_p ≤ τ}`` for ``p ∈ {1, 2, ∞}`` (ℓ1: the sorted threshold θ
    with ``Σ_h max(|t_h| − θ, 0) = τ``)."""
    if tau <= 0.0:
        return np.zeros_like(t)
    if p == np.inf:
        return np.clip(t, -tau, tau)
    norm = float(np.linalg.norm(t, ord=p))
    if norm <= tau:
        return t.copy()
    if p == 2.0:
        return t * (tau / norm)
    top = np.sort(np.abs(t))[::-1]
    sums = np.cumsum(top) - tau
    k = int(np.flatnonzero(top > sums / np.arange(1, top.size + 1))[-1])  # k = 0 qualifies: ‖t‖₁ > τ > 0
    theta = sums[k] / (k + 1)
    return np.sign(t) * np.maximum(np.abs(t) - theta, 0.0)


def _excess_norm(model: Any, s: np.ndarray) -> float:
    """``‖T(s)‖_p``: the soft-threshold by λ1, the forbidden signs at 0, in the transport's norm."""
    return float(np.linalg.norm(_threshold(model, s), ord=model.distribution.norm))


def wasserstein_bound(model: Any, w: np.ndarray, rows: np.ndarray, upper: float = np.inf) -> float:
    """The bound ``D ≤ P*`` of the module docstring at the multipliers ``rows`` (made admissible).

    ``upper ≥ P*`` (the objective at any feasible point) bounds the optimum's ``‖w*‖_* ≤ P*/(Cε)`` (every other
    term is non-negative), a constraint the optimum meets: without L2 it keeps the conjugate finite.
    """
    mass_eps = float(model.c.sum()) * model.distribution.eps
    reach = upper / mass_eps if mass_eps > 0 and np.isfinite(upper) else np.inf
    p, q, alpha, beta, tau = _admissible(model, np.asarray(rows, dtype=np.float64))
    a = p * alpha - q * beta
    ay = a * model.y
    s = np.asarray(model.X.T @ ay).ravel()
    box = (model.feasible.lower, model.feasible.upper) if model.has_bounds else None
    loss = model.loss
    value = float(p @ loss.dual_term(alpha) + q @ loss.dual_term(beta)) - _conjugate(model, s, tau, w, box, reach)
    return value + model.intercept.dual_value(0.0 if model.intercept.mode == "free" else float(ay.sum()))


def certify(model: Any, w: np.ndarray, b: float, *, multipliers: np.ndarray | None = None,
                        status: str = "optimal", claimed_gap: float = float("nan"),
                        solver_objective: float = float("nan"), tol: float | None = None,
                        own_bound: float = float("nan")) -> Result:
    """The package's verdict on a point of a Wasserstein model (the fields of
    :func:`robustsvm.certificates.duality.certify`).

    The point is clipped onto the signs and bounds, re-scored by :mod:`robustsvm.objective`, and given the gap
    ``P(w, b) − D`` with ``D`` the larger of the bounds at ``multipliers`` (rows ``p, q, a⁺, a⁻``, the conic
    duals; or, for ``κ = ∞``, the margin multipliers ``a`` of shape ``(n,)`` of a dual method, the rows
    ``c, 0, a, 0``), at the multipliers read off the point and ``own_bound`` (the dual function a package dual method
    evaluated at a point it made feasible, ``Result.dual_feasible``; NaN: none); a claimed optimum the numbers do not
    support becomes ``"inaccurate"``.
    """
    w = model.feasible_set.clip(np.asarray(w, dtype=np.float64).ravel())
    b = float(b) if model.intercept.present else 0.0
    margins = objective_module.robust_margins(model, w, b)
    objective = objective_module.objective_from_margins(model, w, b, margins)
    bound = wasserstein_bound(model, w, multipliers_from_point(model, w, margins), objective)
    if multipliers is not None and np.shape(multipliers) == (model.n,) and not np.isfinite(model.distribution.kappa):
        zero = np.zeros(model.n)
        multipliers = np.vstack([model.c, zero, np.asarray(multipliers, dtype=np.float64), zero])
    if multipliers is not None and np.shape(multipliers) == (4, model.n):
        bound = max(bound, wasserstein_bound(model, w, np.asarray(multipliers, dtype=np.float64), objective))
    if np.isfinite(own_bound):  # as duality.certify: the larger of it and the Lagrangian bound
        bound = max(bound, float(own_bound))
    gap = max(objective - bound, 0.0) if np.isfinite(bound) else float("inf")
    rtol = max(CERT_RTOL, float(tol) if tol is not None else 0.0)
    allowed = rtol * max(1.0, abs(objective)) + (claimed_gap if np.isfinite(claimed_gap) and claimed_gap > 0 else 0)
    problems = []
    if status == "optimal" and gap > allowed:
        problems.append(f"the package's duality gap {gap:.3g} (objective {objective:.10g}, dual bound "
                        f"{bound:.10g}) exceeds the tolerance {rtol:.1g}·max(1, |P|)")
    if status == "optimal" and np.isfinite(solver_objective) and abs(solver_objective - objective) > allowed:
        problems.append(f"the solver's objective {solver_objective:.10g} differs from the recomputed "
                        f"{objective:.10g}")
    return Result(w=w, b=b, status="inaccurate" if problems else status, gap=float(gap), dual_value=float(bound),
                  dual_feasible=True, objective=float(objective), violation=objective_module.violation(model, w, b),
                  message="; ".join(problems), certified=True)


def point_certificate(model: Any, w: Any, b: Any = 0.0, *, tol: float = 1e-8, feas_tol: float = 1e-9,
                      **_: Any) -> PointCertificate:
    """:meth:`Problem.certify` for a Wasserstein model: a point from elsewhere, its objective and the ball's bound.

    The bound is the larger of those at the multipliers read off the point (no dual ascent: ``steps = 0``); an
    infeasible point is certified through its projection on the signs and bounds (``projected_*``).
    """
    w = np.asarray(w, dtype=np.float64).ravel()
    b = float(np.ravel(b)[0]) if model.intercept.present else 0.0
    violation = objective_module.violation(model, w, b)
    signed = model.signs != 0
    sign_violation = max(0.0, float(np.max(-model.signs[signed] * w[signed]))) if np.any(signed) else 0.0
    objective = objective_module.objective(model, w, b)
    cert = certify(model, w, b, status="max_iter", tol=tol)
    feasible = violation <= feas_tol
    gap = max(objective - cert.dual_value, 0.0) if feasible else float("inf")
    status = "infeasible" if not feasible else ("optimal" if gap <= tol * max(1.0, abs(objective)) else "feasible")
    rows = multipliers_from_point(model, cert.w, objective_module.robust_margins(model, cert.w, cert.b))
    return PointCertificate(w=w, b=b, objective=objective, violation=violation, sign_violation=sign_violation,
                            feasible=feasible, bound=cert.dual_value, gap=gap, recovered_bound=cert.dual_value,
                            steps=0, status=status, projected_objective=cert.objective, projected_gap=cert.gap,
                            multipliers=rows[2] - rows[3])

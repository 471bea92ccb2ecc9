"""``pq``: Woolnough et al.'s (2022) projected iteration for the box-robust pq-SVM.

The model (:func:`robustsvm.pq_svm`) is solved through its dual
``min_{u ≥ 0} ½uᵀQu − ηᵀu`` (:class:`~robustsvm.duals.PQDual`) by

    u⁰ = Q⁻¹η,   u ← max(u − α(Qu − η), 0),

with ``α = step · 2/λ_max(Q)``: Prop. 8.1 of the paper asks for
``α < 2ν/(‖ÛᵀD̂ + I‖² + ν‖D̂ê‖²)``, a bound that is at most ``2/λ_max(Q)``; we
use ``λ_max`` itself, estimated matrix-free by Lanczos (``scipy.sparse.linalg.eigsh``
on a LinearOperator) and inflated by ``1e-3`` for safety. ``Q`` is never
formed: each product costs O(nnz(X) + m + d) and memory stays O((m + d)·d).

Defaults (same dual, same fixed point, same certificate as the paper's
iteration, but one that reaches the optimum): ``eliminate=True`` minimizes over
the 2d multipliers of ``p, q ≥ 0`` in closed form and iterates on α alone,
whose condition number is ``ν s_max λ_max(Q)`` instead of ``κ(Q)``
(``docs/derivations/pq_dual.md`` §5), and ``accelerate=True`` adds Nesterov
momentum with restarts (iterations ∝ √κ); limits :data:`DEFAULTS`.

``paper=True`` is the paper's Algorithm 1 exactly: the plain iteration on the
full dual, the paper's limits :data:`PAPER_DEFAULTS` unless given, with ``α = step · 2/λ_max(Q)``,
a fixed ``alpha``, or ``alpha="search"``: the paper's tuning range
``α ∈ {10⁻¹⁶, 10⁻¹⁵, …, 10⁻⁴}``, keeping the α whose last iterate has the
smallest model objective (the truncated iterate the paper reports).

Stopping rule: the projected-gradient residual
``‖u − max(u − (Qu − η), 0)‖_∞ ≤ tol`` (zero exactly at the optimum), or
``max_iter`` (status ``"max_iter"``). Certificate (``Solution.gap``): the
duality gap ``(2/ν)(P_pq(w, b) − D_pq(u))`` between the pq primal at the
recovered ``(w, b)`` and the dual value at ``u``, in the model's units.
"""

from __future__ import annotations

import time

import numpy as np
from scipy.sparse.linalg import ArpackNoConvergence, LinearOperator, eigsh

from ..duals import PQDual
from ..model import Model
from ..uncertainty import Box
from .registry import Backend, History, Needs, Result, register

__all__ = ["DEFAULTS", "PAPER_ALPHAS", "PAPER_DEFAULTS", "largest_eigenvalue", "pq_solve", "pq_solve_paper"]

#: the step sizes Woolnough et al. (2022) tuned α over (§5.1): 10⁻¹⁶, 10⁻¹⁵, …, 10⁻⁴
PAPER_ALPHAS = tuple(10.0 ** k for k in range(-16, -3))
#: limits of the converged iteration (the default mode), declared on the backend's registration
DEFAULTS = {"tol": 1e-8, "max_iter": 100_000}
#: limits of the paper's Algorithm 1 (``paper=True``): its tolerance and iteration cap (§5.1)
PAPER_DEFAULTS = {"tol": 1e-4, "max_iter": 1000}


def largest_eigenvalue(dual: PQDual, *, tol: float = 1e-6, seed: int = 0) -> float:
    """``λ_max(Q)`` by Lanczos on the operator ``u ↦ Qu`` (Q is never formed)."""
    k = dual.size
    op = LinearOperator((k, k), matvec=dual.matvec, rmatvec=dual.matvec, dtype=np.float64)
    rng = np.random.default_rng(seed)
    v0 = rng.standard_normal(k)
    try:
        val = eigsh(op, k=1, which="LA", tol=tol, v0=v0, return_eigenvectors=False, maxiter=max(1000, 10 * k))
        return float(val[0])
    except ArpackNoConvergence:
        # power iteration as a fallback: its Rayleigh quotients increase towards λ_max
        v = v0 / np.linalg.norm(v0)
        lam = 0.0
        for _ in range(500):
            Qv = dual.matvec(v)
            lam = float(v @ Qv)
            v = Qv / np.linalg.norm(Qv)
        return lam


def pq_solve(dual: PQDual, *, tol: float = DEFAULTS["tol"], max_iter: int = DEFAULTS["max_iter"], step: float = 0.95,
             accelerate: bool = True, eliminate: bool = True, random_state: int | None = None,
             verbose: bool = False, alpha: float | None = None, lam_max: float | None = None):
    """Run the projected iteration on ``dual``; returns ``(u, status, iterations, history, alpha, lam_max)``.

    ``alpha`` (only with ``accelerate=False, eliminate=False``) replaces the
    step ``step · 2/λ_max(Q)`` by a fixed value, as the paper tunes it;
    ``lam_max`` skips the Lanczos estimate when already known.

    ``accelerate=False`` is the paper's iteration ``u ← max(u − α(Qu − η), 0)``.
    ``accelerate=True`` applies the same projected step at an extrapolated
    point ``u_k + θ_k(u_k − u_{k−1})`` (Nesterov/FISTA momentum, restarted when
    the step and the momentum disagree); the fixed points are the same, the
    iteration count scales with ``√κ(Q)`` instead of ``κ(Q)``. One product
    ``Qu`` per iteration either way (``Q`` is linear, so ``Q`` at the
    extrapolated point is combined from the last two products).

    ``eliminate=True`` minimizes over β in closed form, ``β_p = (−G_pᵀα)⁺``,
    ``β_q = (−G_qᵀα)⁺`` (the β block of Q is ``I/λ2``), and runs the projected
    (accelerated) gradient on α alone: the same dual optimum, a condition
    number ``ν s_max λ_max(Q)`` instead of ``κ(Q)``; see
    ``docs/derivations/pq_dual.md``. Every iterate ``(α, β(α))`` is dual feasible.

    ``history`` has ``iteration``, ``objective`` (the model objective at the
    recovered ``(w, b)``), ``dual`` (the model's dual value), ``gap`` and
    ``residual`` (the projected-gradient residual) per iterate, and ``time``.
    """
    if not 0 < step < 1:
        raise ValueError(f"step must lie in (0, 1) (a fraction of Prop. 8.1's bound 2/λ_max), got {step!r}")
    if alpha is not None:
        if accelerate or eliminate:
            raise ValueError("alpha (a fixed step) applies to the paper's iteration only: pass paper=True "
                             "(accelerate=False, eliminate=False)")
        if isinstance(alpha, bool) or not isinstance(alpha, (int, float, np.floating)) or not 0 < alpha < np.inf:
            raise ValueError(f"alpha must be a positive finite number, got {alpha!r}")
    t0 = time.perf_counter()
    if lam_max is None:
        lam_max = largest_eigenvalue(dual, seed=0 if random_state is None else int(random_state))
    # a fraction ``step`` of FISTA's 1/L, or of the paper's bound 2/L (Prop. 8.1), with L a little above λ_max
    alpha = float(alpha) if alpha is not None else (1.0 if accelerate else 2.0) * step / (lam_max * (1.0 + 1e-3))
    hist = History(verbose=verbose, name="pq", every=500)
    hist.t0 = t0  # times count from the start, the Lanczos estimate included
    if eliminate:
        return _reduced(dual, lam_max, alpha, hist, tol=tol, max_iter=max_iter, accelerate=accelerate)
    m = dual.m
    eta = dual.eta
    u = dual.solve_eta()
    u_prev = u
    Qu_prev = None
    theta = 1.0
    status = "max_iter"
    it = 0
    scale = dual.scale
    while True:
        z = dual.Bt(u)
        Qu = dual.B(z)
        Qu[:m] += dual.dinv * u[:m]
        grad = Qu - eta
        feasible = bool(np.all(u >= 0))
        residual = float(np.max(np.abs(u - np.maximum(u - grad, 0.0)))) if feasible else np.inf
        w, b = dual.wb(u, z)
        primal = dual.objective(w, b)
        dual_val = scale * dual.pq_dual_value(u, Qu) if feasible else np.nan
        hist.record(it, primal, primal - dual_val, dual=dual_val, residual=residual)
        if residual <= tol:
            status = "optimal"
            break
        if not np.isfinite(primal) or not np.all(np.isfinite(u)):
            status = "diverged"  # a fixed α above Prop. 8.1's bound
            break
        if it >= max_iter:
            break
        if accelerate and Qu_prev is not None:
            # Q is linear: its product at the extrapolated point combines the last two
            new, theta = _momentum_step(u, u_prev, theta, alpha, grad,
                                        lambda point, mom, q=Qu, q_prev=Qu_prev: (1.0 + mom) * q - mom * q_prev - eta)
        else:
            new = np.maximum(u - alpha * grad, 0.0)
        u_prev, Qu_prev = u, Qu
        u = new
        it += 1
    return u, status, it, hist.arrays(), alpha, lam_max


def _momentum_step(x, x_prev, theta: float, step: float, grad, grad_at, *, project_point: bool = False):
    """One projected gradient step at the extrapolated point ``x + m(x − x_prev)`` (Nesterov/FISTA).

    ``θ' = (1 + √(1 + 4θ²))/2``, ``m = (θ − 1)/θ'``; ``grad_at(point, m)`` is the gradient there.
    The momentum restarts (``θ' = 1``, a plain projected step from ``x`` with ``grad``) when the step
    and the momentum disagree, ``(point − new)·(new − x) > 0``. Returns ``(new, θ')``.
    """
    theta_next = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * theta * theta))
    mom = (theta - 1.0) / theta_next
    point = x + mom * (x - x_prev)
    if project_point:
        point = np.maximum(point, 0.0)
    new = np.maximum(point - step * grad_at(point, mom), 0.0)
    if float((point - new) @ (new - x)) > 0:  # momentum points uphill: restart
        return np.maximum(x - step * grad, 0.0), 1.0
    return new, theta_next


def _evaluate(dual: PQDual, alpha: np.ndarray):
    """At ``u = (α, β(α))``: ``(z = Bᵀu, ∇_α, robust margins)``, two products with X.

    With β eliminated, ``G_pᵀα + β_p = (G_pᵀα)⁺``, so ``Bᵀu`` has entries
    ``(G_pᵀα)⁺/√λ2, (G_qᵀα)⁺/√λ2, yᵀα`` and the α block of ``B(Bᵀu)`` is the vector
    of robust margins ``y∘(Xw + b) − r δ·|w|`` at the recovered ``(w, b)``.
    """
    sl = 1.0 / np.sqrt(dual.lam2)
    t = np.asarray(dual.X.T @ (dual.y * alpha)).ravel()
    rho = float(dual.r @ alpha)
    gp = t - rho * dual.delta
    gq = -t - rho * dual.delta
    d = dual.d
    z = np.empty(2 * d + 1)
    z[:d] = np.maximum(gp, 0.0) * sl
    z[d:2 * d] = np.maximum(gq, 0.0) * sl
    z[2 * d] = float(dual.y @ alpha)
    margins = dual.B(z)[:dual.m]
    grad = margins + dual.dinv * alpha - 1.0
    return z, grad, margins, gp, gq


def _reduced(dual: PQDual, lam_max: float, alpha_step: float, hist: History, *, tol, max_iter, accelerate):
    """:func:`pq_solve`'s iteration on α alone (β eliminated), with step ``alpha_step``, recorded in ``hist``."""
    m, d = dual.m, dual.d
    scale = dual.scale
    a = np.maximum(dual.solve_eta()[:m], 0.0)
    a_prev = a
    theta = 1.0
    status = "max_iter"
    it = 0
    sl = 1.0 / np.sqrt(dual.lam2)
    while True:
        z, grad, margins, gp, gq = _evaluate(dual, a)
        residual = float(np.max(np.abs(a - np.maximum(a - grad, 0.0))))
        primal = dual.objective((z[:d] - z[d:2 * d]) * sl, float(z[2 * d]), margins)
        dual_val = scale * dual.pq_dual_value(a, Btu=z)
        hist.record(it, primal, primal - dual_val, dual=dual_val, residual=residual)
        if residual <= tol:
            status = "optimal"
            break
        if it >= max_iter:
            break
        if accelerate and it > 0:
            new, theta = _momentum_step(a, a_prev, theta, alpha_step, grad,
                                        lambda point, mom: _evaluate(dual, point)[1], project_point=True)
        else:
            new = np.maximum(a - alpha_step * grad, 0.0)
        a_prev, a = a, new
        it += 1
    u = np.concatenate([a, np.maximum(-gp, 0.0), np.maximum(-gq, 0.0)])
    return u, status, it, hist.arrays(), alpha_step, lam_max


#: the pq-SVM model of :func:`robustsvm.pq_svm`: squared hinge (sum), L2, Box, ridge intercept
NEEDS = Needs(
    losses=frozenset({"squared_hinge"}),
    reductions=frozenset({"sum"}),
    l2="required",
    l1=False,
    intercepts=frozenset({"ridge"}),
    signs=False,
    sets=(Box,),
    why={"loss": "it solves the pq-SVM of rs.pq_svm(nu, lam2, radius)",
         "sets": "the pq-SVM has one rs.Box (scalar or per-sample radius)"},
    extra=lambda problem: [] if problem.uncertainty is not None else
    ["the pq-SVM needs one rs.Box uncertainty set (scalar or per-sample radius)"],
)


def pq_solve_paper(dual: PQDual, *, alpha: float | str | None = None, tol: float = PAPER_DEFAULTS["tol"],
                   max_iter: int = PAPER_DEFAULTS["max_iter"], step: float = 0.95, random_state: int | None = None,
                   verbose: bool = False):
    """The paper's Algorithm 1 (plain iteration on the full dual), with the paper's α tuning when asked.

    ``alpha=None`` uses ``step · 2/λ_max(Q)``; a number is used as the fixed
    step; ``"search"`` runs the iteration for every α of :data:`PAPER_ALPHAS`
    and keeps the run whose last iterate has the smallest model objective
    ``(2/ν)·P_pq(w, b)`` (diverged runs excluded). Returns what
    :func:`pq_solve` returns plus a list of ``(α, status, objective)`` per α tried.
    """
    if not isinstance(alpha, str):
        out = pq_solve(dual, tol=tol, max_iter=max_iter, step=step, accelerate=False, eliminate=False,
                       random_state=random_state, verbose=verbose, alpha=alpha)
        return (*out, [(out[4], out[1], float(out[3]["objective"][-1]))])
    if alpha != "search":
        raise ValueError(f"alpha must be a positive number, None or 'search', got {alpha!r}")
    lam_max = largest_eigenvalue(dual, seed=0 if random_state is None else int(random_state))
    best, tried = None, []
    for a in PAPER_ALPHAS:
        out = pq_solve(dual, tol=tol, max_iter=max_iter, step=step, accelerate=False, eliminate=False,
                       verbose=verbose, alpha=a, lam_max=lam_max)
        value = float(out[3]["objective"][-1])
        tried.append((a, out[1], value))
        if out[1] != "diverged" and np.isfinite(value) and (best is None or value < best[0]):
            best = (value, out)
    if best is None:  # pragma: no cover - α = 1e-16 is far below 2/λ_max for any data in double precision
        raise RuntimeError("every α of the paper's range diverged")
    return (*best[1], tried)


def _solve(model: Model, *, tol=None, max_iter=None, verbose=False, random_state=None,
           step=0.95, accelerate=None, eliminate=None, paper=False, alpha=None) -> Result:
    """Adapter from the normalized model: the converged iteration by default, the paper's with ``paper=True``."""
    if not isinstance(paper, (bool, np.bool_)):
        raise TypeError(f"paper must be True or False, got {paper!r}")
    t0 = time.perf_counter()
    dual = PQDual.from_model(model)
    t1 = time.perf_counter()
    tried = None
    limits = PAPER_DEFAULTS if paper else DEFAULTS
    tol = limits["tol"] if tol is None else float(tol)
    max_iter = limits["max_iter"] if max_iter is None else int(max_iter)
    if paper:
        if accelerate or eliminate:
            raise ValueError("paper=True is the plain iteration: it takes neither accelerate nor eliminate")
        u, status, it, history, alpha_used, lam_max, tried = pq_solve_paper(
            dual, alpha=alpha, tol=tol, max_iter=max_iter, step=float(step), random_state=random_state,
            verbose=verbose)
    else:
        if alpha is not None:
            raise ValueError("alpha (a fixed step or 'search') applies to the paper's iteration: pass paper=True")
        u, status, it, history, alpha_used, lam_max = pq_solve(
            dual, tol=tol, max_iter=max_iter, step=float(step),
            accelerate=True if accelerate is None else bool(accelerate),
            eliminate=True if eliminate is None else bool(eliminate), random_state=random_state, verbose=verbose)
    t2 = time.perf_counter()
    w, b = dual.wb(u)
    gap = float(history["gap"][-1])
    mode = "paper's iteration" if paper else "iteration"
    extra = {"step_size": alpha_used, "lambda_max": lam_max, "u": u, "residual": float(history["residual"][-1]),
             "nu": dual.nu, "lam2": dual.lam2}
    if tried is not None:
        extra["alpha_search"] = tried
    return Result(
        w=w, b=b, status=status, gap=gap, dual_value=float(history["dual"][-1]), iterations=it, history=history,
        time_compile=t1 - t0,
        time_solve=t2 - t1,
        message=f"{mode}: projected-gradient residual {history['residual'][-1]:.3g} after {it} iterations "
                f"(α = {alpha_used:.3g}, λ_max(Q) ≈ {lam_max:.4g})",
        extra=extra,
    )


register(
    Backend(
        name="pq",
        solve=_solve,
        needs=NEEDS,
        summary="projected iteration on the pq-SVM dual (Woolnough et al. 2022): rs.pq_svm models only "
                "(squared hinge sum, Box, L2, intercept L2)",
        options=frozenset({"step", "accelerate", "eliminate", "paper", "alpha"}),
        kind="first-order",
        certificate="duality gap (2/ν)(P_pq(w, b) − D_pq(u)) in model units (stops on the projected-gradient "
                    "residual)",
        defaults=DEFAULTS,
        mode_defaults={"paper": PAPER_DEFAULTS},
    ),
    replace=True,
)

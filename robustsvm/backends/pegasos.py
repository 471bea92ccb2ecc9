"""The ``pegasos`` backend: projected (sub)gradient for sign-constrained hinge + L2 SVMs.

Tajima et al. (2020), §4: starting from ``w = 0``,

    w ← Π_B(Π_S(w − g_t / (λ t))),    g_t ∈ ∂P(w_t),

with ``Π_S`` the projection onto the sign constraints and ``Π_B`` onto the
ball of radius ``sqrt(2C/λ)``, ``C = Σ_i c_i`` (``sqrt(2/λ)`` with the mean
reduction): the optimum has ``(λ/2)‖w⋆‖² ≤ P(w⋆) ≤ P(0) = C``. Full-batch as
in the paper, or mini-batch stochastic (``batch_size``, seeded
``random_state``). A free intercept is an unregularized coordinate moved by
its own subgradient with the same step; Theorem 4.1 does not cover it. A
ridge intercept is the constant-column augmentation of
:mod:`robustsvm.backends._linalg` (inside the ball).

The best evaluated iterate is returned. Its certificate is a duality gap
``P_best − D(ᾱ)`` where ``ᾱ`` averages the subgradients' hinge indicators
(clipped to [0, 1], and scaled down on the heavier class so that
``Σ c_i y_i ᾱ_i = 0`` with a free intercept): any such ``ᾱ`` is dual
feasible, so ``D(ᾱ)`` is a valid lower bound. See
``docs/derivations/frank_wolfe.md`` for the dual.
"""

from __future__ import annotations

import time

import numpy as np

from ..certificates.duality import class_balance, class_sums, dual_value
from ..model import Model
from ._linalg import HINGE_L2_NEEDS, HingeModel, hinge_model, project_signs
from .registry import Backend, History, Result, register

__all__ = ["ball_radius", "solve_pegasos"]

_TINY = np.finfo(np.float64).tiny


def ball_radius(lam: float, total_weight: float = 1.0) -> float:
    """Radius ``sqrt(2C/λ)`` of the ball that holds the optimal ``w``; ``C = Σ_i c_i``."""
    return float(np.sqrt(2.0 * total_weight / lam))


def _dual_value(model: HingeModel, alpha: np.ndarray, vpos: np.ndarray, vneg: np.ndarray) -> float:
    """``D(α')`` for ``α'`` = ``α`` with the heavier class scaled to meet ``Σ c y α' = 0`` (if needed).

    ``vpos``/``vneg`` are ``Xᵀ(c∘y∘α)`` restricted to each class.
    """
    c, y = model.c, model.y
    rho_pos = rho_neg = 1.0
    if model.free_intercept:
        rho_pos, rho_neg = class_balance(*class_sums(c * alpha, y))
    w = project_signs((rho_pos * vpos + rho_neg * vneg) / model.lam, model.signs)
    return dual_value(model.model.loss, c, np.where(y > 0, rho_pos, rho_neg) * alpha, 0.5 * model.lam * float(w @ w))


#: the tolerance (relative duality gap) and iteration cap used when the caller gives none
DEFAULTS = {"tol": 1e-4, "max_iter": 1000}


def solve_pegasos(
    normalized: Model,
    *,
    tol: float = DEFAULTS["tol"],
    max_iter: int = DEFAULTS["max_iter"],
    verbose: bool = False,
    random_state=0,
    batch_size: int | None = None,
    eval_every: int | None = None,
) -> Result:
    """Run projected Pegasos (the registered ``pegasos`` backend).

    Parameters
    ----------
    tol : float, default 1e-4
        Stop when the certified relative gap ``(P_best − D_best)/P_best ≤ tol``
        (checked at evaluations).
    max_iter : int, default 1000
        Number of (sub)gradient steps.
    verbose : bool
    random_state : int, numpy Generator or None, default 0
        Seeds the mini-batch sampling (None: a fresh seed).
    batch_size : int, optional
        Samples per stochastic step (each epoch is a fresh permutation);
        None (default) is the full-batch method of the paper.
    eval_every : int, optional
        Steps between evaluations of the full primal and the dual bound:
        1 for full batch (free: the products are already there), one epoch
        ``ceil(n / batch_size)`` for mini-batches. The last step is always
        evaluated.

    Returns
    -------
    Result
        The best evaluated iterate; ``gap`` is ``P_best − D_best`` (absolute);
        ``history`` per evaluation: ``iteration``, ``objective`` (primal at the
        iterate), ``best_objective``, ``dual`` (the bound from ``ᾱ``), ``gap``
        (``objective − dual``) and ``time``.
    """
    tol = float(tol)
    max_iter = int(max_iter)
    t_start = time.perf_counter()
    model = hinge_model(normalized)
    design, lam, y, c, signs = model.design, model.lam, model.y, model.c, model.signs
    n = design.n
    full = batch_size is None
    if not full:
        if int(batch_size) != batch_size or not 1 <= int(batch_size) <= n:
            raise ValueError(f"batch_size must be an integer in [1, {n}], got {batch_size!r}")
        batch_size = int(batch_size)
    if eval_every is None:
        eval_every = 1 if full else -(-n // batch_size)
    elif int(eval_every) != eval_every or int(eval_every) < 1:
        raise ValueError(f"eval_every must be a positive integer, got {eval_every!r}")
    eval_every = int(eval_every)
    rng = np.random.default_rng(random_state)
    radius = ball_radius(lam, float(c.sum()))
    pos = (y > 0).astype(np.float64)
    neg = 1.0 - pos
    cy = c * y
    w = np.zeros(design.d)
    b = 0.0
    alpha_sum = np.zeros(n)
    vsum = np.zeros((design.d, 2))  # Σ_t Xᵀ(c∘y∘a_t) per class (full batch)
    perm, cursor = rng.permutation(n), 0
    hist = History()
    best_p, best_w, best_b, best_d = np.inf, w, b, -np.inf
    best_alpha = np.zeros(n)
    status, message = "max_iter", f"certified gap above tol after {max_iter} iterations"
    report = max(1, max_iter // 10)
    t_loop = time.perf_counter()
    hist.restart()
    it = 0
    for t in range(1, max_iter + 1):
        it = t
        evaluate = t % eval_every == 0 or t == max_iter or t == 1
        if full:
            m = y * (design.matvec(w) + b)
            act = (m < 1.0).astype(np.float64)
            alpha_sum += act
            prod = design.rmatvec(np.column_stack((cy * act * pos, cy * act * neg)))
            vsum += prod
            grad_loss = prod[:, 0] + prod[:, 1]
            grad_b = -float(cy @ act)
        else:
            if cursor + batch_size > n:
                perm, cursor = rng.permutation(n), 0
            idx = perm[cursor:cursor + batch_size]
            cursor += batch_size
            sub = design.rows(idx)
            m_b = y[idx] * (sub.matvec(w) + b)
            act = (m_b < 1.0).astype(np.float64)
            scale = n / batch_size
            alpha_sum[idx] += scale * act
            grad_loss = scale * sub.rmatvec(cy[idx] * act)
            grad_b = -scale * float(cy[idx] @ act)
        if evaluate:
            if full:
                p = model.primal(w, m)
                alpha_bar = alpha_sum / t
                dual = _dual_value(model, alpha_bar, vsum[:, 0] / t, vsum[:, 1] / t)
            else:
                p = model.primal(w, y * (design.matvec(w) + b))
                alpha_bar = np.minimum(alpha_sum / t, 1.0)
                vv = design.rmatvec(np.column_stack((cy * alpha_bar * pos, cy * alpha_bar * neg)))
                dual = _dual_value(model, alpha_bar, vv[:, 0], vv[:, 1])
            if p < best_p:
                best_p, best_w, best_b = p, w, b
            if dual > best_d:
                best_alpha = alpha_bar.copy()
            best_d = max(best_d, dual)
            hist.record(t - 1, p, p - dual, best_objective=best_p, dual=dual)
            if verbose and (t % report == 0 or t == 1):
                print(f"pegasos it {t:6d}  primal {p:.10g}  best {best_p:.10g}  dual bound {best_d:.10g}")
            if best_p - best_d <= tol * max(best_p, _TINY):
                status = "optimal"
                message = f"certified relative gap {(best_p - best_d) / max(best_p, _TINY):.3e} <= tol {tol:g}"
                break
        step = 1.0 / (lam * t)
        w = project_signs(w - step * (lam * w - grad_loss), signs)
        norm = float(np.sqrt(w @ w))
        if norm > radius:
            w *= radius / norm
        if model.free_intercept:
            b -= step * grad_b
    w_out, b_out = model.split(best_w, best_b)
    t_end = time.perf_counter()
    return Result(
        w=w_out,
        b=b_out,
        status=status,
        gap=float(best_p - best_d),
        iterations=it,
        history=hist.arrays(),
        time_compile=t_loop - t_start,
        time_solve=t_end - t_loop,
        message=message,
        dual_value=float(best_d),
        multipliers=c * np.clip(best_alpha, 0.0, 1.0),
    )


register(
    Backend(
        name="pegasos",
        solve=solve_pegasos,
        needs=HINGE_L2_NEEDS,
        summary="projected Pegasos (Tajima et al. 2020), full or mini-batch: hinge + L2, signs, any intercept",
        options=frozenset({"batch_size", "eval_every"}),
        kind="first-order",
        certificate="duality gap P(w_best) − D(ᾱ) (absolute) from averaged hinge indicators",
        defaults=DEFAULTS,
    ),
    replace=True,
)

"""The ``frank-wolfe`` backend: dual Frank-Wolfe for sign-constrained hinge + L2 SVMs.

Tajima et al. (2020), §5–6. The dual of

    P(w, b) = (λ/2)‖w‖² + Σ_i c_i max(0, 1 − y_i(x_i·w + b)),   w ∈ S,

is ``max D(α) = Σ_i c_i α_i − (λ/2)‖Π_S(v(α))‖²`` over ``α ∈ [0, 1]^n`` (and
``Σ_i c_i y_i α_i = 0`` with a free intercept), where ``v(α) = Xᵀ(c∘y∘α)/λ``
and ``w(α) = Π_S(v(α))``. Each iteration costs two O(nnz) products plus an
O(d log d) exact line search (and O(n log n) for the intercept's oracle and
optimal ``b``). The derivation is in ``docs/derivations/frank_wolfe.md``.
"""

from __future__ import annotations

import time

import numpy as np

from ..certificates.duality import dual_value
from ..model import Model
from ._linalg import HINGE_L2_NEEDS, HingeModel, hinge_model, optimal_intercept, project_signs
from .registry import Backend, History, Result, register

__all__ = ["line_search", "linear_oracle", "solve_frank_wolfe"]

_TINY = np.finfo(np.float64).tiny


def line_search(G: float, lam: float, v0: np.ndarray, vq: np.ndarray, signs: np.ndarray) -> float:
    """Exact maximizer over ``η ∈ [0, 1]`` of ``ζ(η) = const + Gη − (λ/2)‖Π_S(v0 + η vq)‖²``.

    ``ζ`` is concave and piecewise quadratic; its derivative
    ``ζ'(η) = G − λ Σ_{h active at η} vq_h (v0_h + η vq_h)`` is continuous and
    non-increasing. A constrained feature ``h`` is active where
    ``s_h(v0_h + η vq_h) > 0`` and toggles at ``θ_h = −v0_h / vq_h``. The
    breakpoints in (0, 1) are sorted and the running sums
    ``S1 = Σ vq_h v0_h`` and ``S2 = Σ vq_h²`` over active features updated by
    cumulative sums, so the first segment where ``ζ'`` turns non-positive is
    found in O(d log d); there ``η = (G − λ S1)/(λ S2)`` (clipped to the
    segment), or its left end when ``ζ`` is flat.

    Parameters
    ----------
    G : float
        ``Σ_i c_i q_i``, the slope of the linear part of the dual.
    lam : float
        λ > 0.
    v0, vq : ndarray of shape (d,)
        ``v(α)`` and ``v(q)``.
    signs : ndarray of shape (d,)
        +1, 0 or −1 per feature.

    Returns
    -------
    float
        The step η ∈ [0, 1]. When ``ζ`` is constant (``q = 0``) it is 0.
    """
    free = signs == 0
    a = signs * v0
    bq = signs * vq
    init = ~free & ((a > 0) | ((a == 0) & (bq > 0)))
    active0 = free | init
    s1 = float(vq[active0] @ v0[active0])
    s2 = float(vq[active0] @ vq[active0])
    enter = ~free & (bq > 0) & (a < 0) & (-a < bq)
    leave = ~free & (bq < 0) & (a > 0) & (a < -bq)
    idx = np.flatnonzero(enter | leave)
    if idx.size:
        theta = -a[idx] / bq[idx]
        sgn = np.where(enter[idx], 1.0, -1.0)
        order = np.argsort(theta, kind="stable")
        theta = theta[order]
        idx = idx[order]
        sgn = sgn[order]
        cum1 = s1 + np.concatenate(([0.0], np.cumsum(sgn * vq[idx] * v0[idx])))
        cum2 = s2 + np.concatenate(([0.0], np.cumsum(sgn * vq[idx] * vq[idx])))
        left = np.concatenate(([0.0], theta))
        right = np.concatenate((theta, [1.0]))
    else:
        cum1 = np.array([s1])
        cum2 = np.array([s2])
        left = np.array([0.0])
        right = np.array([1.0])
    if G - lam * cum1[0] <= 0.0:  # ζ'(0) ≤ 0
        return 0.0
    d_right = G - lam * (cum1 + right * cum2)
    hits = np.flatnonzero(d_right <= 0.0)
    if hits.size == 0:
        return 1.0
    k = int(hits[0])
    if cum2[k] <= 0.0:
        return float(left[k])
    eta = (G - lam * cum1[k]) / (lam * cum2[k])
    return float(min(max(eta, left[k]), right[k]))


def linear_oracle(r: np.ndarray, y: np.ndarray, c: np.ndarray, intercept: bool) -> np.ndarray:
    """Maximize ``Σ_i c_i r_i u_i`` over ``u ∈ [0, 1]^n`` (and ``Σ c_i y_i u_i = 0`` with an intercept).

    Here ``r_i = 1 − y_i x_i·w(α)``, so ``c_i r_i = ∂D/∂α_i``. Without an
    intercept ``u_i = 1[r_i > 0]``. With one, put ``β_i = c_i u_i ∈ [0, c_i]``:
    moving mass ``t`` onto each class costs nothing in the constraint, and the
    best value for a given ``t`` fills each class greedily by decreasing ``r``.
    Both greedy fills are concave piecewise linear in ``t``, so ``t`` grows while
    the sum of the two marginal ``r`` is positive; the breakpoints are the
    cumulative capacities of the two sorted classes (O(n log n)). At most one
    sample per class gets a fractional ``u_i``.
    """
    u = np.zeros_like(r)
    live = c > 0
    if not intercept:
        u[live & (r > 0)] = 1.0
        return u
    sides = []
    for label in (1.0, -1.0):
        idx = np.flatnonzero(live & (y == label))
        idx = idx[np.argsort(-r[idx], kind="stable")]
        sides.append((idx, np.cumsum(c[idx])))
    (ip, cp), (im, cm) = sides
    if ip.size == 0 or im.size == 0:
        return u
    t_max = min(cp[-1], cm[-1])
    ends = np.unique(np.concatenate((cp, cm, [t_max])))
    ends = ends[ends <= t_max]
    starts = np.concatenate(([0.0], ends[:-1]))
    mid = 0.5 * (starts + ends)
    jp = np.minimum(np.searchsorted(cp, mid, side="right"), ip.size - 1)
    jm = np.minimum(np.searchsorted(cm, mid, side="right"), im.size - 1)
    gain = r[ip[jp]] + r[im[jm]]
    positive = np.flatnonzero(gain > 0)
    t = float(ends[positive[-1]]) if positive.size else 0.0
    for idx, cum in sides:
        cap = c[idx]
        beta = np.clip(t - (cum - cap), 0.0, cap)
        u[idx] = beta / cap
    return u


def _primal_at(model: HingeModel, w: np.ndarray) -> tuple[float, float, np.ndarray]:
    """``(P(w, b*), b*, z)``: the primal at ``w`` with its best intercept, and ``z = Xw``."""
    z = model.design.matvec(w)
    b = optimal_intercept(z, model.y, model.c) if model.free_intercept else 0.0
    return model.primal(w, model.y * (z + b)), b, z


#: the tolerance (relative duality gap) and iteration cap used when the caller gives none
DEFAULTS = {"tol": 1e-4, "max_iter": 1000}


def solve_frank_wolfe(
    normalized: Model,
    *,
    tol: float = DEFAULTS["tol"],
    max_iter: int = DEFAULTS["max_iter"],
    verbose: bool = False,
    random_state=None,
) -> Result:
    """Run the dual Frank-Wolfe method (the registered ``frank-wolfe`` backend).

    Parameters
    ----------
    tol : float, default 1e-4
        Relative duality gap: stop when ``P_best − D(α) ≤ tol · max(P_best, tiny)``,
        ``P_best`` the smallest primal value seen (its iterate is returned).
    max_iter : int, default 1000
    verbose : bool
        Print progress every 10 % of ``max_iter``.
    random_state : ignored
        The method is deterministic.

    Returns
    -------
    Result
        ``gap`` is the absolute duality gap ``P_best − D(α)``; ``history`` holds
        per iteration ``iteration``, ``objective`` (the primal at ``w(α)``),
        ``best_objective``, ``dual``, ``gap`` (``objective − dual``) and ``time``;
        ``dual_coef`` the final ``α``.
    """
    tol = float(tol)
    max_iter = int(max_iter)
    t_start = time.perf_counter()
    model = hinge_model(normalized)
    lam, y, c, signs = model.lam, model.y, model.c, model.signs
    alpha = np.zeros(model.design.n)
    v = np.zeros(model.design.d)
    w = project_signs(v, signs)
    cy = c * y
    hist = History()
    best = (np.inf, w, 0.0)
    status, message, it = "max_iter", f"duality gap above tol after {max_iter} iterations", 0
    report = max(1, max_iter // 10)
    t_loop = time.perf_counter()
    hist.restart()
    while True:
        p, b, z = _primal_at(model, w)
        if p < best[0]:
            best = (p, w, b)
        dual = dual_value(model.model.loss, c, alpha, 0.5 * lam * float(w @ w))  # a ridge intercept is inside w
        gap = best[0] - dual
        hist.record(it, p, p - dual, best_objective=best[0], dual=dual)
        if verbose and it % report == 0:
            print(f"frank-wolfe it {it:6d}  primal {p:.10g}  dual {dual:.10g}  gap {gap:.3e}")
        if gap <= tol * max(best[0], _TINY):
            status, message = "optimal", f"relative duality gap {gap / max(best[0], _TINY):.3e} <= tol {tol:g}"
            break
        if it >= max_iter:
            break
        it += 1
        u = linear_oracle(1.0 - y * z, y, c, model.free_intercept)
        q = u - alpha
        vq = model.design.rmatvec(cy * q) / lam
        eta = line_search(float(c @ q), lam, v, vq, signs)
        if not np.any(q):
            status, message = "stalled", f"the linear oracle returned the current point with gap {gap:.3e}"
            break
        alpha = alpha + eta * q
        np.clip(alpha, 0.0, 1.0, out=alpha)
        v = v + eta * vq
        w = project_signs(v, signs)
    w_out, b_out = model.split(best[1], best[2])
    t_end = time.perf_counter()
    return Result(
        w=w_out,
        b=b_out,
        status=status,
        gap=float(gap),
        iterations=it,
        history=hist.arrays(),
        time_compile=t_loop - t_start,
        time_solve=t_end - t_loop,
        message=message,
        dual_coef=alpha,
        dual_value=float(dual),
        multipliers=c * alpha,
    )


register(
    Backend(
        name="frank-wolfe",
        solve=solve_frank_wolfe,
        needs=HINGE_L2_NEEDS,
        summary="dual Frank-Wolfe with exact line search (Tajima et al. 2020): hinge + L2, signs, any intercept",
        options=frozenset(),
        kind="first-order",
        certificate="duality gap P(w) − D(α) (absolute) of the returned w",
        defaults=DEFAULTS,
    ),
    replace=True,
)

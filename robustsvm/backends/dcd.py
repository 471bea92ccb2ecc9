"""Dual coordinate descent (``dcd``): sign-constrained hinge and squared-hinge SVMs with an L2 penalty.

The model is

    minimize   (λ/2)‖w‖² [+ (μ/2) b²] + Σ_i c_i ℓ(y_i (x_i·w + b))
    subject to s_h w_h ≥ 0,

with ``ℓ`` the hinge or squared hinge and ``c_i`` the loss coefficients
(``1/n`` for ``reduction="mean"``, ``1`` for ``"sum"``, times sample weights).
Its dual in ``(α, β)`` is

    maximize   D(α, β) = Σ_i c_i (α_i − δ α_i²/4) − (λ/2)‖w(α, β)‖² [− S²/(2μ)]
    w(α, β) = (Σ_i c_i y_i α_i x_i + β∘s) / λ,     S = Σ_i c_i y_i α_i,

over ``0 ≤ α_i ≤ 1`` (hinge, δ = 0) or ``α_i ≥ 0`` (squared hinge, δ = 1) and
``β ≥ 0`` on the constrained coordinates; a free intercept adds ``S = 0``.
Each α_i gets an exact projected Newton step from the gradient computed with the
maintained ``w``; each touched β_h gets its closed form ``max(0, β_h − λ s_h w_h)``
at once, so ``w`` is sign-feasible after every step. A free intercept is handled
exactly by the augmented Lagrangian of ``S = 0`` (its multiplier is ``b``).
The stopping rule and certificate is the duality gap ``P(w, b) − D(α̃, β̃)`` at a
primal point and a dual-feasible point rebuilt from all samples. The derivation is
in ``docs/derivations/dcd.md``.
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from ..losses import HardMargin, Hinge, SquaredHinge
from . import _dcd_kernels as kern
from .registry import Backend, BackendResult, register

__all__ = ["best_intercept", "check_dcd", "solve_dcd"]

#: a finite stand-in for ±∞ in the clip bounds (the kernels use fastmath without the no-inf flag anyway)
_HUGE = 1e300


def check_dcd(problem) -> list[str]:
    """Reasons ``dcd`` cannot solve ``problem`` (empty when it can)."""
    reasons = []
    if problem.kernel is not None:
        reasons.append("dcd solves the linear primal model only, not kernels")
    if isinstance(problem.loss, HardMargin):
        reasons.append("dcd needs a soft-margin loss (Hinge or SquaredHinge), not HardMargin")
    elif not isinstance(problem.loss, (Hinge, SquaredHinge)):
        reasons.append(f"dcd does not know the loss {type(problem.loss).__name__}")
    if problem.penalty.l1 > 0:
        reasons.append("dcd handles an L2 penalty only (the L1 term makes the dual non-smooth in w)")
    if problem.penalty.l2 <= 0:
        reasons.append("dcd needs an L2 penalty with positive strength (rs.L2(lam))")
    if problem.uncertainty is not None:
        reasons.append("dcd has no uncertainty sets (the robust margin couples every sample through the support "
                       "function of w, so the dual loses its one-coordinate-per-sample form)")
    return reasons


def best_intercept(z: np.ndarray, y: np.ndarray, c: np.ndarray, squared: bool) -> float:
    """Exact minimizer of ``φ(b) = Σ_i c_i ℓ(y_i (z_i + b))`` over the free intercept ``b``.

    With breakpoints ``t_i = y_i − z_i`` (where sample i's loss starts or stops
    being active), ``φ`` is convex piecewise linear (hinge) or piecewise
    quadratic and C¹ (squared hinge). Hinge: ``φ'(b) = Σ_{t_i < b} c_i − Σ_{y_i=+1} c_i``
    (a weighted quantile of ``t``). Squared hinge: ``−φ'(b)/2 = g(b) =
    Σ_{y_i=+1, t_i>b} c_i (t_i − b) + Σ_{y_i=−1, t_i<b} c_i (t_i − b)`` is
    decreasing and linear between breakpoints; its root is found from prefix sums.
    Cost O(n log n) for the sort.
    """
    t = y - z
    order = np.argsort(t, kind="stable")
    ts, cs, ys = t[order], c[order], y[order]
    n = ts.size
    pos = ys > 0
    if not squared:
        cum = np.cumsum(cs)
        c_pos = float(cs[pos].sum())
        k = int(np.searchsorted(cum, c_pos, side="left"))
        return float(ts[min(k, n - 1)])
    cp_ = np.where(pos, cs, 0.0)
    cn_ = np.where(pos, 0.0, cs)
    # positives strictly after k (suffix), negatives up to and including k (prefix)
    suf_c = np.concatenate([np.cumsum(cp_[::-1])[::-1][1:], [0.0]])
    suf_ct = np.concatenate([np.cumsum((cp_ * ts)[::-1])[::-1][1:], [0.0]])
    pre_c = np.cumsum(cn_)
    pre_ct = np.cumsum(cn_ * ts)
    # g at each breakpoint t_k: ties contribute 0 whichever side they are on
    g = (suf_ct - ts * suf_c) + (pre_ct - ts * pre_c)
    # g is non-increasing; the root lies in the first interval [t_k, t_{k+1}] where g(t_{k+1}) ≤ 0
    nonpos = np.flatnonzero(g <= 0.0)
    if nonpos.size == 0:  # root beyond the last breakpoint: only negatives active
        a_c, a_ct = pre_c[-1], pre_ct[-1]
        lo_b, hi_b = ts[-1], np.inf
    elif nonpos[0] == 0:  # root before the first breakpoint: only positives active
        a_c, a_ct = float(cp_.sum()), float((cp_ * ts).sum())
        lo_b, hi_b = -np.inf, ts[0]
    else:
        k = nonpos[0] - 1  # g(t_k) > 0 ≥ g(t_{k+1}); active: positives after k, negatives up to k
        a_c, a_ct = suf_c[k] + pre_c[k], suf_ct[k] + pre_ct[k]
        lo_b, hi_b = ts[k], ts[k + 1]
    if a_c <= 0.0:
        return float(min(max(0.0, lo_b), hi_b))
    return float(min(max(a_ct / a_c, lo_b), hi_b))


class _Certificate:
    """Primal value, dual value and the primal point at one evaluation."""

    __slots__ = ("D", "P", "b", "w")

    def __init__(self, P: float, D: float, w: np.ndarray, b: float) -> None:
        self.P, self.D, self.w, self.b = P, D, w, b

    @property
    def gap(self) -> float:
        return max(self.P - self.D, 0.0)

    @property
    def rel_gap(self) -> float:
        return self.gap / max(abs(self.P), np.finfo(float).tiny)


def _loss_values(margin: np.ndarray, squared: bool) -> np.ndarray:
    r = np.maximum(0.0, 1.0 - margin)
    return r * r if squared else r


class _Products:
    """The two O(nnz) products of the certificate, compiled, for a dense or CSR ``X``."""

    def __init__(self, X) -> None:
        self.X = X
        self.sparse = sp.issparse(X)
        if self.sparse:
            self.parts = (X.indptr, X.indices,
                          np.ascontiguousarray(X.data, dtype=np.float64))

    def images(self, u: np.ndarray, pos: np.ndarray) -> np.ndarray:
        """``[Σ_{y_i>0} u_i x_i, Σ_{y_i<0} u_i x_i]`` as a (2, d) array."""
        if self.sparse:
            return kern.dual_images_sparse(*self.parts, self.X.shape[1], u, pos)
        return kern.dual_images_dense(self.X, u, pos)

    def matvec(self, w: np.ndarray) -> np.ndarray:
        """``X @ w``."""
        if self.sparse:
            return kern.matvec_sparse(*self.parts, w)
        return kern.matvec_dense(self.X, w)


def _certify(ops, y, c, alpha, lo, hi, lam, squared, mode, mu, b_eff) -> _Certificate:
    """Evaluate ``P`` at the sign-feasible primal point and ``D`` at a dual-feasible point.

    Primal: ``w = clip(Xᵀ(c∘y∘α), lo, hi)/λ`` (the exact β), ``b`` its exact
    minimizer (free), ``S/μ`` (ridge) or 0. Dual: ``α`` itself, except with a free
    intercept where the class with the larger ``Σ c_i α_i`` is scaled down so that
    ``S = 0`` (still inside the box), and ``β`` at its closed form. Two O(nnz)
    products and, with a free intercept, one sort.
    """
    pos = y > 0
    cya = c * y * alpha
    VV = ops.images(cya, pos)
    v = VV[0] + VV[1]
    v_t, alpha_t = v, alpha
    if mode == "free":
        p_sum, n_sum = float(cya[pos].sum()), float(-cya[~pos].sum())
        if p_sum > n_sum:
            f = n_sum / p_sum
            alpha_t = np.where(pos, f * alpha, alpha)
            v_t = f * VV[0] + VV[1]
        elif n_sum > p_sum:
            f = p_sum / n_sum
            alpha_t = np.where(pos, alpha, f * alpha)
            v_t = VV[0] + f * VV[1]
    w = np.clip(v, lo, hi) / lam
    z = ops.matvec(w)
    S = float(cya.sum())
    if mode == "free":
        candidates = [best_intercept(z, y, c, squared), b_eff]
    elif mode == "l2":
        candidates = [S / mu]
    else:
        candidates = [0.0]
    best = None
    ww = kern.dot(w, w)
    for b in candidates:
        P = 0.5 * lam * ww + kern.dot(c, _loss_values(y * (z + b), squared))
        if mode == "l2":
            P += 0.5 * mu * b * b
        if best is None or P < best[0]:
            best = (P, b)
    P, b = best
    wt = np.clip(v_t, lo, hi) / lam
    D = kern.dot(c, alpha_t) - 0.5 * lam * kern.dot(wt, wt)
    if squared:
        D -= 0.25 * kern.dot(c, alpha_t * alpha_t)
    if mode == "l2":
        D -= 0.5 * S * S / mu
    return _Certificate(P, D, w, b)


#: first threshold of the projected-gradient spread that restores the shrunk samples and triggers a certificate
PG_EPS0 = 1e-3


def _next_check(last, now, tol: float, check_every: int) -> int:
    """Epochs until the next certificate.

    The relative gap of coordinate descent falls roughly geometrically; from the
    last two certificates, ``k = log(gap/tol) / rate`` epochs remain. The next
    certificate comes after ``0.7 k`` epochs, between 2 and ``3·check_every``
    (``check_every`` while no rate is known).
    """
    if last is None or now[1] <= 0 or last[1] <= now[1] or now[0] <= last[0]:
        return check_every
    rate = (np.log(last[1]) - np.log(now[1])) / (now[0] - last[0])
    k = np.log(max(now[1], tol) / tol) / rate
    return int(min(max(np.ceil(0.7 * k), 2), 3 * check_every))


def solve_dcd(problem, data, *, tol=None, max_iter=None, verbose=False, random_state=None,
              shrinking=True, check_every=10, rho=None) -> BackendResult:
    """Solve a sign-constrained (squared-)hinge + L2 SVM by dual coordinate descent.

    Parameters
    ----------
    problem : Problem
        Accepted when :func:`check_dcd` returns no reason.
    data : FitData
    tol : float, default 1e-4
        Stop when the relative duality gap ``(P − D)/|P|`` is at most ``tol``.
    max_iter : int, default 1000
        Maximum number of epochs (one pass over the active samples each).
    verbose : bool
        Print one line per certificate evaluation.
    random_state : int, optional
        Seed of the per-epoch permutations.
    shrinking : bool, default True
        Drop bounded variables whose gradient points outside the box (liblinear's rule),
        restoring all of them when the active set looks optimal.
    check_every : int, default 10
        Epochs between certificates while their rate of decrease is unknown; then the
        schedule follows the predicted number of epochs to ``tol`` (between 2 and
        ``3·check_every``). A certificate is also evaluated when the projected-gradient
        spread drops below its threshold.
    rho : float, optional
        Augmented-Lagrangian weight for a free intercept; default ``0.1·mean‖x_i‖²/λ`` (tuned on the
        benchmark shapes: see ``docs/derivations/dcd.md``).

    Returns
    -------
    BackendResult
        ``gap`` is the absolute duality gap ``P − D``; ``history`` has one row per
        certificate (``iteration`` = epoch, ``objective`` = best P so far, ``dual`` = best D so far, ``gap``,
        ``rel_gap``, ``time``, ``active``); ``extra`` has the dual value, the final α,
        ``rho`` and the time spent evaluating certificates (``time_certificates``).
    """
    t_start = time.perf_counter()
    tol = 1e-4 if tol is None else float(tol)
    max_iter = 1000 if max_iter is None else int(max_iter)
    check_every = int(check_every)
    if check_every < 1:
        raise ValueError(f"check_every must be a positive integer, got {check_every!r}")
    if not isinstance(shrinking, (bool, np.bool_)):
        raise TypeError(f"shrinking must be True or False, got {shrinking!r}")
    lam = float(problem.penalty.l2)
    squared = isinstance(problem.loss, SquaredHinge)
    mode, mu = problem.intercept_mode
    if mode == "l2" and mu <= 0:
        mode = "free"  # rs.L2(0) on the intercept is the free intercept

    X = data.X
    y = np.ascontiguousarray(data.y, dtype=np.float64)
    c = np.ascontiguousarray(problem.loss.coefficients(data.sample_weight), dtype=np.float64)
    n, d = X.shape
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        sq_norms = np.asarray(X.multiply(X).sum(axis=1)).ravel()
    else:
        X = np.ascontiguousarray(X, dtype=np.float64)
        sq_norms = np.einsum("ij,ij->i", X, X)
    signs = np.asarray(data.signs)
    lo = np.where(signs > 0, 0.0, -_HUGE)
    hi = np.where(signs < 0, 0.0, _HUGE)
    sg = np.ascontiguousarray(signs, dtype=np.int8)

    if mode == "free":
        if rho is None:
            weighted = c > 0
            mean_sq = float(sq_norms[weighted].mean()) if np.any(weighted) else 0.0
            rho = 0.1 * (mean_sq if mean_sq > 0 else 1.0) / lam
        rho = float(rho)
        if not np.isfinite(rho) or rho <= 0:
            raise ValueError(f"rho must be positive, got {rho!r}")
    elif mode == "l2":
        rho = 1.0 / mu
    else:
        rho = 0.0
    upper = np.inf if squared else 1.0
    dii = 0.5 if squared else 0.0
    qdiag = c * (sq_norms / lam + rho) + dii

    alpha = np.zeros(n)
    v = np.zeros(d)
    w = np.zeros(d)
    state = np.zeros(2)  # [b0 (intercept multiplier), S = Σ c_i y_i α_i]
    index = np.flatnonzero(c > 0).astype(np.int64)
    n_total = index.size
    active = n_total
    # state of the kernels' xorshift generator (odd, hence non-zero), seeded from random_state
    rng_state = np.array([np.random.default_rng(random_state).integers(1, 2**62) * 2 + 1], dtype=np.uint64)

    local = bool(np.any(sg != 0))  # sparse rows: try the local-curvature step (kernel docstring)
    if sp.issparse(X):
        indptr = X.indptr
        indices = X.indices
        vals = np.ascontiguousarray(X.data, dtype=np.float64)

        def run_epoch(active, pg_max_old, pg_min_old):
            return kern.epoch_sparse(indptr, indices, vals, y, c, qdiag, alpha, v, w, sg, 1.0 / lam, upper,
                                     dii, rho, state, index, active, pg_max_old, pg_min_old, bool(shrinking),
                                     rng_state, local)
    else:
        def run_epoch(active, pg_max_old, pg_min_old):
            return kern.epoch_dense(X, y, c, qdiag, alpha, v, w, sg, 1.0 / lam, upper, dii, rho, state,
                                    index, active, pg_max_old, pg_min_old, bool(shrinking), rng_state)

    ops = _Products(X)
    hist = {k: [] for k in ("iteration", "objective", "dual", "gap", "rel_gap", "time", "active")}
    pg_max_old, pg_min_old = np.inf, -np.inf
    pg_eps = PG_EPS0
    since_check = 0
    next_check = check_every
    last = None  # (epoch, relative gap) of the previous certificate
    status = "max_iter"
    cert = None
    time_cert = 0.0
    t_solve0 = time.perf_counter()
    epoch = 0
    while epoch < max_iter:
        active, pg_max_new, pg_min_new, _ = run_epoch(active, pg_max_old, pg_min_old)
        epoch += 1
        since_check += 1
        if mode == "free":
            state[0] += rho * state[1]  # multiplier step of the augmented Lagrangian
        check = since_check >= next_check or epoch == max_iter
        if active == 0 or pg_max_new - pg_min_new <= pg_eps:
            check = check or since_check >= 2
            if active < n_total:  # looks optimal on the shrunk set: restore every sample
                active = n_total
                pg_max_old, pg_min_old = np.inf, -np.inf
            else:
                pg_eps *= 0.1
        else:
            pg_max_old = pg_max_new if pg_max_new > 0 else np.inf
            pg_min_old = pg_min_new if pg_min_new < 0 else -np.inf
        if not check:
            continue
        since_check = 0
        b_eff = state[0] + rho * state[1]
        t_cert = time.perf_counter()
        new = _certify(ops, y, c, alpha, lo, hi, lam, squared, mode, mu, b_eff)
        # keep the best primal point and the best dual value so far: both bounds stay valid
        if cert is None:
            cert = new
        else:
            best = new if new.P <= cert.P else cert
            cert = _Certificate(best.P, max(new.D, cert.D), best.w, best.b)
        time_cert += time.perf_counter() - t_cert
        next_check = _next_check(last, (epoch, cert.rel_gap), tol, check_every)
        last = (epoch, cert.rel_gap)
        now = time.perf_counter() - t_solve0
        for key, val in (("iteration", epoch), ("objective", cert.P), ("dual", cert.D), ("gap", cert.gap),
                         ("rel_gap", cert.rel_gap), ("time", now), ("active", active)):
            hist[key].append(val)
        if verbose:
            print(f"dcd epoch {epoch:5d}  P={cert.P:.10g}  D={cert.D:.10g}  rel.gap={cert.rel_gap:.3e}  "
                  f"active={active}/{n_total}")
        if cert.rel_gap <= tol:
            status = "optimal"
            break
    t_end = time.perf_counter()
    message = (f"relative duality gap {cert.rel_gap:.3g} after {epoch} epochs"
               + ("" if status == "optimal" else f" (tolerance {tol:g} not reached)"))
    return BackendResult(
        w=cert.w,
        b=float(cert.b) if mode != "none" else 0.0,
        status=status,
        gap=cert.gap,
        iterations=epoch,
        history={k: np.asarray(val) for k, val in hist.items()},
        time_compile=t_solve0 - t_start,
        time_solve=t_end - t_solve0,
        message=message,
        extra={"dual_objective": cert.D, "primal_objective": cert.P, "rel_gap": cert.rel_gap,
               "alpha": alpha, "rho": rho, "time_certificates": time_cert,
               "certificates": len(hist["iteration"])},
    )


register(
    Backend(
        name="dcd",
        solve=solve_dcd,
        check=check_dcd,
        summary="dual coordinate descent (liblinear-style, compiled): hinge/squared hinge + L2, signs, "
                "free or ridge intercept; certified by the duality gap",
        options=frozenset({"shrinking", "check_every", "rho"}),
        kind="first-order",
        certificate="duality gap P(w, b) − D(α, β) (absolute); history has the relative gap",
    ),
    replace=True,
)

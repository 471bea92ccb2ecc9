"""``m3``: the multiplicative updates of Sha, Saul and Lee (2002) on the dual NQP.

For ``min ½vᵀAv + bᵀv, 0 ≤ v ≤ c`` with ``A = A⁺ − A⁻`` (element-wise
positive and negative parts), every coordinate is updated in parallel by

    v_i ← min(c_i, v_i · (−b_i + √(b_i² + 4(A⁺v)_i(A⁻v)_i)) / (2(A⁺v)_i)),

which never increases ``F(v)`` (the auxiliary function is separable, so the
clip to ``c`` keeps the decrease). A coordinate below ``threshold`` is set to 0
where its partial derivative is ≥ 0 (the KKT condition at 0), and a zero
coordinate with a negative partial derivative is moved off 0 along its own
Newton step; both moves are taken only when they lower ``F`` (checked exactly).
The iteration stops when the KKT residual ``‖v − clip(v − ∇F(v), 0, c)‖_∞``
is ≤ ``tol`` or after ``max_iter`` updates (status ``"max_iter"``).

Models: those whose dual :mod:`robustsvm.duals` writes as an NQP — kernel
SVMs (hinge, squared hinge, hard margin), linear SVMs with sign constraints
through the ``(α, β)`` dual, and the pq-SVM — without a free intercept.

``Solution.history["objective"]`` is the NQP objective ``F(v)`` in the model's
units (minus the dual value: non-increasing); ``history["kkt"]`` the residual.
The returned ``w`` is projected on the signs. For a linear model
``Solution.gap`` is the package's duality gap (:mod:`robustsvm.certificates.duality`) at
that point, with ``α`` as multipliers; a hard-margin point is rescaled onto the
constraints, and one that no rescaling makes feasible (non-separable data, or
too few updates) raises ``SolverError``. For a kernel model it is the gap of
the recovered expansion against the NQP's dual value.
"""

from __future__ import annotations

import time

import numpy as np

from .._validation import check_limits
from ..duals import NQP, LinearDual, NQPResult, PQDual, pq_reasons, reduce_model
from ..model import Model
from ..uncertainty import Box
from .registry import Backend, Needs, Result, register

__all__ = ["DEFAULTS", "MAX_DENSE", "m3_solve"]

#: largest NQP (number of variables) whose A⁺ and A⁻ are formed
MAX_DENSE = 8000
#: the tolerance (the NQP's KKT residual) and update cap used when the caller gives none
DEFAULTS = {"tol": 1e-6, "max_iter": 10000}


def _try_move(v, delta, idx, g, Ap, Am):
    """Exact change of F when ``v[idx] += delta``: ``gᵀδ + ½δᵀAδ``; returns (ΔF, ΔA⁺v, ΔA⁻v)."""
    dP = Ap[:, idx] @ delta
    dM = Am[:, idx] @ delta
    change = float(g[idx] @ delta + 0.5 * delta @ (dP[idx] - dM[idx]))
    return change, dP, dM


def m3_solve(nqp: NQP, *, init: float | np.ndarray = 1.0, tol: float = DEFAULTS["tol"],
             max_iter: int = DEFAULTS["max_iter"], threshold: float = 1e-12, record=None, verbose: bool = False,
             early_stop: bool = True) -> NQPResult:
    """Minimize an NQP by the multiplicative updates (Sha et al. 2002, eq. 3).

    Parameters
    ----------
    nqp : NQP
        The problem; ``A`` is formed (dense or from its factor) and split into
        ``A⁺`` and ``A⁻``.
    init : float or ndarray, default 1.0
        Starting point (clipped to ``c``); the paper starts at ones.
    tol : float, default 1e-6
        Stop when the KKT residual is ≤ ``tol`` (with ``early_stop``).
    early_stop : bool, default True
        False runs exactly ``max_iter`` updates whatever the residual (a paper's fixed
        iteration count); the status is then ``"max_iter"``.
    max_iter : int, default 10000
        Number of updates at most; status ``"max_iter"`` when reached.
    threshold : float, default 1e-12
        Coordinates below it are clamped to 0 where the KKT conditions allow.
    record : callable, optional
        ``record(iteration, v)`` called before each update (for figures).

    Returns
    -------
    NQPResult
        ``history`` holds ``iteration``, ``objective`` (``F(v)``, non-increasing),
        ``kkt`` (the residual) and ``time`` per iterate.
    """
    if not isinstance(nqp, NQP):
        raise TypeError(f"nqp must be an NQP, got {type(nqp).__name__}")
    check_limits(max_iter=max_iter)  # tol reaches here validated by the solve path (or the declared default)
    if not np.isfinite(threshold) or threshold < 0:
        raise ValueError(f"threshold must be non-negative, got {threshold!r}")
    if not nqp.has_matrix:
        raise TypeError("m3 needs the matrix A (dense or factored) to split it into A⁺ and A⁻")
    if nqp.size > MAX_DENSE:
        raise ValueError(f"the NQP has {nqp.size} variables; m3 forms A⁺ and A⁻ densely and is limited "
                         f"to {MAX_DENSE}")
    v = nqp.check_point(init, name="init")
    A = nqp.dense()
    Ap = np.maximum(A, 0.0)
    Am = np.maximum(-A, 0.0)
    diagA = np.diag(A).copy()
    b, c = nqp.b, nqp.c
    b2 = b * b
    t0 = time.perf_counter()
    hist_it, hist_f, hist_kkt, hist_t = [], [], [], []
    Pv, Mv = Ap @ v, Am @ v
    status, message = "max_iter", ""
    res = np.inf
    it = 0
    for it in range(int(max_iter) + 1):
        g = Pv - Mv + b
        f = float(0.5 * v @ (Pv - Mv) + b @ v)
        res = float(np.max(np.abs(v - np.clip(v - g, 0.0, c))))
        hist_it.append(it)
        hist_f.append(f)
        hist_kkt.append(res)
        hist_t.append(time.perf_counter() - t0)
        if verbose and (it & (it - 1)) == 0:
            print(f"m3 {it:6d}  F {f:.10g}  kkt {res:.3g}")
        if early_stop and res <= tol:
            status = "optimal"
            break
        if it == max_iter:
            break
        if record is not None:
            record(it, v)
        # clamp tiny coordinates to zero where ∂F/∂v_i ≥ 0 (KKT at the bound)
        idx = np.flatnonzero((v > 0) & (v < threshold) & (g >= 0))
        if idx.size:
            delta = -v[idx]
            change, dP, dM = _try_move(v, delta, idx, g, Ap, Am)
            if change <= 0:
                v[idx] = 0.0
                Pv += dP
                Mv += dM
                g = Pv - Mv + b
        # move zero coordinates whose derivative is negative off the bound
        idx = np.flatnonzero((v == 0) & (g < 0) & (c > 0) & (diagA > 0))
        if idx.size:
            delta = np.minimum(-g[idx] / diagA[idx], c[idx])
            for _ in range(30):
                change, dP, dM = _try_move(v, delta, idx, g, Ap, Am)
                if change < 0:
                    v[idx] = delta
                    Pv += dP
                    Mv += dM
                    break
                delta = 0.5 * delta
        # the multiplicative update, all coordinates in parallel
        pos = Pv > 0
        safe = np.where(pos, Pv, 1.0)
        factor = (-b + np.sqrt(b2 + 4.0 * Pv * Mv)) / (2.0 * safe)
        new = np.where(pos, v * factor, 0.0)
        flat = ~pos & (v > 0)
        if np.any(flat):
            # F is linear in v_i along the auxiliary bound: go to the end the slope points to
            slope = b[flat] - Mv[flat]
            target = np.where(slope < 0, c[flat], 0.0)
            if np.any(np.isinf(target)):
                status, message = "unbounded", "F decreases without bound along a coordinate with no upper bound"
                break
            new[flat] = target
        np.minimum(new, c, out=new)
        v = new
        Pv, Mv = Ap @ v, Am @ v
    history = {
        "iteration": np.asarray(hist_it, dtype=np.int64),
        "objective": np.asarray(hist_f),
        "kkt": np.asarray(hist_kkt),
        "time": np.asarray(hist_t),
    }
    return NQPResult(v=v, objective=float(hist_f[-1]), status=status, kkt_residual=res,
                     time=time.perf_counter() - t0, message=message, iterations=int(hist_it[-1]), history=history)


_NO_FREE = ("a free intercept adds the equality Σ y_i α_i = 0 to the dual, which the NQP 0 ≤ v ≤ c cannot "
            "express: use intercept=False or intercept=rs.L2(mu)")

#: linear models: the sign-constrained dual (no uncertainty) or the pq dual (rs.pq_svm models)
_NQP_LOSSES = frozenset({"hinge", "squared_hinge", "hard_margin"})

NEEDS = Needs(
    losses=_NQP_LOSSES,
    l2="required",
    l1=False,
    intercepts=frozenset({"none", "ridge"}),
    sets=(Box,),
    why={"l1": "its dual NQP has no L1 term (L1 needs the primal)", "intercept": _NO_FREE},
    extra=lambda problem: [] if problem.uncertainty is None else [
        "with uncertainty only the pq-SVM model (rs.pq_svm) has an NQP dual: " + "; ".join(r)
        for r in [pq_reasons(problem)] if r],
)
#: kernel models: the kernel dual NQP
KERNEL_NEEDS = Needs(losses=_NQP_LOSSES, l2="required", l1=False, intercepts=frozenset({"none", "ridge"}),
                     signs=False, sets=(),
                     why={"intercept": _NO_FREE, "sets": "kernel models have no uncertainty sets",
                          "signs": "kernel models have no sign constraints"})


def _solve(model: Model, *, tol=DEFAULTS["tol"], max_iter=DEFAULTS["max_iter"],
           verbose=False, random_state=None, init=1.0,
           threshold=1e-12, record_coefficients=False) -> Result:
    t0 = time.perf_counter()
    if model.kernel is not None:
        size = model.n
    elif model.layout is not None:
        size = int(np.count_nonzero(model.sample_weight > 0)) + 2 * model.d
    else:
        size = model.n + int(np.count_nonzero(model.signs))
    if size > MAX_DENSE:
        return Result(w=None, b=0.0, status="solver_error", time_compile=time.perf_counter() - t0,
                      message=f"the dual has {size} variables; m3 forms A⁺ and A⁻ densely "
                              f"and is limited to {MAX_DENSE} (use solver='pq' or a conic solver)")
    dual = reduce_model(model)
    nqp = dual.nqp
    t1 = time.perf_counter()
    trace: list[np.ndarray] = []
    res = m3_solve(nqp, init=init, tol=float(tol),
                   max_iter=int(max_iter),
                   threshold=threshold, verbose=verbose,
                   record=(lambda it, v: trace.append(v.copy())) if record_coefficients else None)
    t2 = time.perf_counter()
    rec = dual.recover(res.v)
    gap = rec.objective - dual.dual_value(res.v)
    w_out = rec.w
    if w_out is not None:
        # the recovery can leave a sign-constrained weight on the wrong side while β has not converged:
        # return the projection (the package re-scores it and rebuilds the gap, robustsvm.certificates.duality)
        w_out = w_out.copy()
        w_out[model.signs * w_out < 0] = 0.0
    n_hist = res.history["iteration"].shape[0]
    gaps = np.full(n_hist, np.nan)
    gaps[-1] = gap
    history = dict(res.history)
    history["objective"] = res.history["objective"] * dual.scale
    history["gap"] = gaps
    extra = {"kkt_residual": res.kkt_residual, "nqp_objective": float(res.history["objective"][-1]),
             "dual_point": res.v}
    multipliers = None
    if rec.w is None:
        extra.update(support=rec.support)
    elif isinstance(dual, LinearDual):
        multipliers = res.v[:model.n].copy()  # α of the (α, β) dual
    if isinstance(dual, PQDual):
        extra["dual"] = "pq"
    if record_coefficients:  # the dual coefficients before each update, then the final ones
        extra["coefficients"] = np.vstack([*trace, res.v])
    return Result(
        w=w_out, b=rec.b, status=res.status, gap=float(gap), dual_value=dual.dual_value(res.v),
        iterations=res.iterations, history=history,
        time_compile=t1 - t0, time_solve=t2 - t1,
        message=res.message or f"KKT residual {res.kkt_residual:.3g} after {res.iterations} updates",
        dual_coef=rec.dual_coef, support_vectors=rec.support_vectors, multipliers=multipliers, extra=extra,
    )


register(
    Backend(
        name="m3",
        solve=_solve,
        needs=NEEDS,
        kernel_needs=KERNEL_NEEDS,
        summary="multiplicative updates (Sha et al. 2002) on the dual NQP: kernel SVMs, hard margin, "
                "sign-constrained linear L2 SVMs, pq-SVM; no free intercept",
        options=frozenset({"init", "threshold", "record_coefficients"}),
        kind="first-order",
        certificate="duality gap of the recovered primal point against the dual value (stops on the NQP's "
                    "KKT residual)",
        defaults=DEFAULTS,
    ),
    replace=True,
)

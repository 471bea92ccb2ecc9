"""The feature-space interior point (``feature-ipm``) against the model written directly in CVXPY (Clarabel).

The reference below writes the robust model from the sets' definitions (``σ_V(w) = max_{v ∈ V} v·w``:
``Σ δ_h|w_h|`` for a box with half-widths δ, ``‖w‖₂`` for the 2-ball, ``‖w‖₁`` for the ∞-ball and
``‖M^{1/2} w‖₂`` for the ellipsoid ``{v : vᵀM⁻¹v ≤ 1}``) and lets Clarabel solve it; nothing of the package's
own CVXPY code or certificate enters the reference value ``P*``.
"""

from __future__ import annotations

import math
import warnings
from functools import partial

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp

import robustsvm as rs
from robustsvm.backends import _second_order_cone as soc
from robustsvm.backends.feature_ipm import feature_ipm_arrays
from robustsvm.datasets import load
from robustsvm.exceptions import ConvergenceWarning, UnsupportedModelError
from robustsvm.objective import objective_from_margins

#: accuracy asked of Clarabel (absolute and relative gap, feasibility)
CLARABEL_TOL = 1e-8
#: what the comparisons allow on top of the certified gap, relative to max(1, |P*|)
SLACK = 2e-8
#: the tolerance asked of feature-ipm in the agreement tests
TOL = 1e-7


# --------------------------------------------------------------------------------------------- data and sets
_DATA_CACHE: dict = {}


def _standardized(name: str, n: int | None = None, seed: int = 0):
    """A data set from the package's loaders, standardized, optionally ``n`` rows drawn without replacement."""
    key = (name, n, seed)
    if key not in _DATA_CACHE:
        X, y, _ = load(name)
        sd = X.std(axis=0)
        X = (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
        if n is not None and n < X.shape[0]:
            rows = np.sort(np.random.default_rng(seed).choice(X.shape[0], size=n, replace=False))
            X, y = X[rows], y[rows]
        _DATA_CACHE[key] = (X, y)
    X, y = _DATA_CACHE[key]
    return X.copy(), y.copy()


def _sparsified(X: np.ndarray) -> sp.csr_matrix:
    """About half the standardized entries (the small ones) set to zero, stored as CSR."""
    Xs = X.copy()
    Xs[np.abs(Xs) < 0.6] = 0.0
    return sp.csr_matrix(Xs)


def _ellipsoid_shape(d: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.normal(size=(d, d)))
    return (Q * rng.uniform(0.3, 1.5, size=d)) @ Q.T


def _signs(d: int) -> np.ndarray:
    s = np.zeros(d, dtype=int)
    s[: d // 3] = 1
    s[d // 3: d // 2] = -1
    return s


SET_NAMES = ["box-widths", "ball2", "ballinf", "ellipsoid"]
BASE_RADIUS = {"box-widths": 0.08, "ball2": 0.4, "ballinf": 0.05, "ellipsoid": 0.4}


def _make_set(name: str, d: int, radius):
    """The set ``name`` in dimension ``d`` with the given (scalar or per-sample) radius."""
    if name == "box-widths":
        return rs.Box(radius, widths=np.linspace(0.5, 1.5, d))
    if name == "ball2":
        return rs.Ball(radius)
    if name == "ballinf":
        return rs.Ball(radius, p=np.inf)
    if name == "ellipsoid":
        return rs.Ellipsoid(_ellipsoid_shape(d), radius)
    raise AssertionError(name)


# ------------------------------------------------------------------------------------- independent reference
def _support_cvx(V, w):
    """``σ_V(w)`` (unit radius) from the set's definition, not from ``robustsvm.uncertainty``."""
    if isinstance(V, rs.Box):
        delta = np.ones(w.shape[0]) if V.widths is None else np.asarray(V.widths, float)
        return cp.sum(cp.multiply(delta, cp.abs(w)))
    if isinstance(V, rs.Ball):
        return cp.norm(w, {2.0: 2, math.inf: 1}[float(V.p)])
    if isinstance(V, rs.Ellipsoid):
        lam, Q = np.linalg.eigh(np.asarray(V.shape, float))
        root = (Q * np.sqrt(lam)) @ Q.T  # M^{1/2}: max over vᵀM⁻¹v ≤ 1 of v·w is ‖M^{1/2} w‖₂
        return cp.norm(root @ w, 2)
    raise AssertionError(type(V))


def _clarabel_optimum(X, y, V, radius, *, l2, l1=0.0, signs=None, intercept=True, squared=False,
                      reduction="mean", sample_weight=None):
    """The robust model in CVXPY, solved by Clarabel to ``CLARABEL_TOL``: ``(P*, w*)``."""
    X = X.toarray() if sp.issparse(X) else np.asarray(X, float)
    ys = np.where(np.asarray(y) == np.max(y), 1.0, -1.0)
    n, d = X.shape
    sw = np.ones(n) if sample_weight is None else np.asarray(sample_weight, float)
    c = sw / sw.sum() if reduction == "mean" else sw
    w = cp.Variable(d)
    b = cp.Variable() if intercept is not False else 0.0
    t = cp.Variable()  # epigraph of σ_V(w): the sets are symmetric, one value serves both labels
    r = np.broadcast_to(np.asarray(0.0 if radius is None else radius, float), (n,))
    xi = cp.Variable(n, nonneg=True)  # ξ_i ≥ max(0, 1 − y_i(x_i·w + b) + r_i σ_V(w)) at the optimum
    loss = cp.sum_squares(cp.multiply(np.sqrt(c), xi)) if squared else c @ xi
    obj = l2 / 2 * cp.sum_squares(w) + l1 * cp.norm1(w) + loss
    if isinstance(intercept, rs.Penalty):
        obj = obj + intercept.l2 / 2 * cp.square(b)
    cons = [t >= (_support_cvx(V, w) if V is not None else 0.0), xi >= 1 - cp.multiply(ys, X @ w + b) + r * t]
    if signs is not None:
        cons += [w[signs > 0] >= 0, w[signs < 0] <= 0]
    # Clarabel now and then ends "optimal_inaccurate" at this accuracy: the same model with the objective on
    # the scale of a sum of losses, or as it is, is tried before giving up
    for scale in (1.0 / float(np.mean(c)), 1.0):
        prob = cp.Problem(cp.Minimize(scale * obj), cons)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="Solution may be inaccurate")
            prob.solve(solver="CLARABEL", tol_gap_abs=CLARABEL_TOL, tol_gap_rel=CLARABEL_TOL,
                       tol_feas=CLARABEL_TOL, max_iter=400)
        if prob.status == "optimal":
            return float(prob.value) / scale, np.asarray(w.value, float)
    raise AssertionError(f"Clarabel did not solve the reference model: {prob.status}")


def _check_against(sol, prob, X, y, ref, *, l2, signs, tol, sample_weight=None):
    """The certificate's promises against Clarabel's optimum ``ref = (P*, w*)``; returns ``P − P*``."""
    P_ref, w_ref = ref
    acc = SLACK * max(1.0, abs(P_ref))
    # the objective recomputed from (w, b) by the package's model evaluation
    P = prob.objective(X, y, sol.w, sol.b, sample_weight=sample_weight)
    assert P == pytest.approx(sol.objective, rel=1e-12, abs=1e-14)
    assert math.isfinite(sol.gap) and sol.gap >= 0.0
    assert abs(P - P_ref) <= sol.gap + acc  # within the certified gap of the optimum
    assert sol.gap >= (P - P_ref) - acc  # the gap is never below the true excess
    assert sol.extra["dual_objective"] <= P_ref + acc  # the backend's bound is a lower bound
    assert sol.status == "optimal", sol.message
    assert sol.gap <= tol * abs(P) * (1 + 1e-9)
    assert sol.extra["rel_gap"] <= tol
    if signs is not None:
        assert np.all(signs * sol.w >= 0.0)  # exactly, in floating point
        assert sol.violation == 0.0
    # λ2-strong convexity in w: P(w, b) − P* ≥ (λ2/2)‖w − w*‖², so the gap bounds the distance to w*
    assert np.linalg.norm(sol.w - w_ref) <= math.sqrt(2 * (sol.gap + acc) / l2) + 1e-4 * max(1, np.linalg.norm(w_ref))
    print("DIAG", (P - P_ref) / max(1.0, abs(P_ref)), sol.gap / max(1.0, abs(P_ref)), sol.iterations)
    return P - P_ref


def _check_multipliers(sol, model, squared):
    """The interior point's margin multipliers are dual feasible: ``0 ≤ α_i ≤ c_i`` (hinge), ``α_i ≥ 0``."""
    alpha = np.asarray(sol.extra["margin_multipliers"])
    c = np.asarray(model.c)
    assert alpha.shape == c.shape
    assert np.all(alpha >= 0.0)
    assert np.all(alpha[c == 0] == 0.0)
    if not squared:
        assert np.all(alpha <= c * (1 + 1e-12))


# ------------------------------------------------------------------------------------------------- cases
INTERCEPTS = {"free": True, "none": False, "ridge": rs.L2(0.5)}
DATASETS = {"wdbc": 220, "pima": 300, "sonar": None, "bands": 250}


def _cases():
    """Every set × loss × intercept on WDBC, and every set on each KEEL data set, with the other options
    (reduction, signs, L1, per-sample radii, sample weights, CSR) rotating so each value meets several sets,
    losses and data sets."""
    out = []
    k = 0
    for s, set_name in enumerate(SET_NAMES):
        for q, loss in enumerate(["hinge", "sqhinge"]):
            for i, icpt in enumerate(INTERCEPTS):
                out.append(dict(data="wdbc", set=set_name, loss=loss, intercept=icpt,
                                reduction="sum" if (s + q + i) % 3 == 2 else "mean",
                                signs=(s + i + q) % 2 == 0, l1=(s + i) % 2 == 1,
                                per_sample=(s + 2 * i + q) % 3 == 1, weights=(2 * s + i + q) % 3 == 0,
                                csr=(s + i + 2 * q) % 3 == 2))
                k += 1
    for j, data in enumerate(["pima", "sonar", "bands"]):
        for s, set_name in enumerate(SET_NAMES):
            m = 4 * j + s
            out.append(dict(data=data, set=set_name, loss=["hinge", "sqhinge"][m % 2],
                            intercept=list(INTERCEPTS)[m % 3], reduction=["sum", "mean"][(m // 2) % 2],
                            signs=m % 3 != 1, l1=m % 2 == 0, per_sample=m % 4 in (0, 3), weights=m % 3 != 2,
                            csr=(m + j) % 2 == 1))
    params = []
    for case in out:
        flags = [f for f in ("signs", "l1", "per_sample", "weights", "csr") if case[f]]
        cid = "-".join([case["data"], case["set"], case["loss"], case["reduction"], case["intercept"], *flags])
        params.append(pytest.param(case, id=cid))
    return params


CASES = _cases()


@pytest.mark.parametrize("case", CASES)
def test_agrees_with_clarabel(case):
    X, y = _standardized(case["data"], DATASETS[case["data"]], seed=1)
    if case["csr"]:
        X = _sparsified(X)
    n, d = X.shape
    rng = np.random.default_rng(3)
    base = BASE_RADIUS[case["set"]]
    if case["per_sample"]:
        radius = rng.uniform(0.0, 2.0, size=n) * base
        radius[:10] = 0.0  # some samples are certain
    else:
        radius = base
    V = _make_set(case["set"], d, radius)
    sw = None
    if case["weights"]:
        sw = rng.uniform(0.0, 2.0, size=n)
        sw[:5] = 0.0  # some samples do not count
    squared = case["loss"] == "sqhinge"
    scale = 1.0 if case["reduction"] == "mean" else float(n)
    l2 = 0.02 * scale
    l1 = 0.004 * scale if case["l1"] else 0.0
    signs = _signs(d) if case["signs"] else None
    loss = (rs.SquaredHinge if squared else rs.Hinge)(reduction=case["reduction"])
    pen = rs.L2(l2) + rs.L1(l1) if l1 else rs.L2(l2)
    icpt = INTERCEPTS[case["intercept"]]
    prob = rs.Problem(loss=loss, penalty=pen, uncertainty=V, signs=signs, intercept=icpt)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        sol = prob.solve(X, y, solver="feature-ipm", sample_weight=sw, tol=TOL)
    ref = _clarabel_optimum(X, y, V, radius, l2=l2, l1=l1, signs=signs, intercept=icpt, squared=squared,
                            reduction=case["reduction"], sample_weight=sw)
    _check_against(sol, prob, X, y, ref, l2=l2, signs=signs, tol=TOL, sample_weight=sw)
    _check_multipliers(sol, prob.normalize(X, y, sample_weight=sw), squared)
    if case["intercept"] == "none":
        assert sol.b == 0.0

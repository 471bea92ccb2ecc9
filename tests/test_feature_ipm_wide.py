"""``feature-ipm`` on wide data (fewer samples than features): its Woodbury path against the model written in
CVXPY (through the certified reference of :mod:`tests._reference`) and against its own dense path on the same
data (the dense path forced by raising :data:`robustsvm.backends._ipm_wide.WIDE_MIN_FEATURES`).

The last tests check the dense path's merged free features (:mod:`robustsvm.backends._ipm_reduced`) against the
full normal matrix. The counters of a solve say which path ran: ``wide_systems`` (one per iteration) on the
Woodbury path, Gram matrices on the dense one.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import robustsvm as rs
from robustsvm.backends import _ipm_wide
from robustsvm.exceptions import ConvergenceWarning

from .conftest import mixed_signs as _signs
from .test_feature_ipm import INTERCEPTS, SLACK, TOL, _check_against, _check_multipliers, _clarabel_optimum

WIDE_SETS = ["box-widths", "ball2", "ballinf", "nominal"]
RADIUS = {"box-widths": 0.05, "ball2": 0.3, "ballinf": 0.03, "ellipsoid": 0.3, "nominal": None}


def _wide_data(n: int = 40, d: int = 120, seed: int = 0, sparse: bool = False):
    """Gaussian features, labels of a sparse linear rule with noise; half the entries zeroed when ``sparse``."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    w0 = np.zeros(d)
    w0[: d // 4] = rng.normal(size=d // 4)
    y = np.sign(X @ w0 + 0.5 * rng.normal(size=n))
    y[y == 0] = 1.0
    y[:2] = [1.0, -1.0]
    if sparse:
        X[np.abs(X) < 0.7] = 0.0
        return sp.csr_matrix(X), y
    return X, y


def _set(name: str, d: int, radius):
    if name == "nominal":
        return None
    if name == "box-widths":
        return rs.Box(radius, widths=np.linspace(0.5, 1.5, d))
    if name == "ball2":
        return rs.Ball(radius)
    if name == "ballinf":
        return rs.Ball(radius, p=np.inf)
    from .conftest import ellipsoid_shape

    return rs.Ellipsoid(ellipsoid_shape(d), radius)


def _solve(prob, X, y, *, tol=TOL, dense=False, monkeypatch=None, **kw):
    """``prob`` by feature-ipm, on its dense path when ``dense`` (wide data takes the Woodbury path otherwise)."""
    if dense:
        monkeypatch.setattr(_ipm_wide, "WIDE_MIN_FEATURES", 10 ** 9)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", ConvergenceWarning)
            return prob.solve(X, y, solver="feature-ipm", tol=tol, **kw)
    finally:
        if dense:
            monkeypatch.undo()


def _took_wide(sol) -> bool:
    counts = sol.extra["ipm_counts"]
    return counts.get("wide_systems", 0) >= 1 and counts["gram_float64"] + counts["gram_float32"] == 0


def _cases():
    """Every set × intercept × loss, the other options (signs, L1, sparse input, per-sample radii, weights with
    zeros) rotating."""
    out = []
    for s, set_name in enumerate(WIDE_SETS):
        for i, icpt in enumerate(INTERCEPTS):
            for q, loss in enumerate(["hinge", "sqhinge"]):
                out.append(dict(set=set_name, intercept=icpt, loss=loss, signs=(s + i + q) % 2 == 0,
                                l1=(s + q) % 2 == 1, sparse=(s + i + q) % 3 == 1, per_sample=(s + 2 * i) % 3 == 2,
                                weights=(i + q) % 3 == 0))
    params = []
    for case in out:
        flags = [f for f in ("signs", "l1", "sparse", "per_sample", "weights") if case[f]]
        params.append(pytest.param(case, id="-".join([case["set"], case["intercept"], case["loss"], *flags])))
    return params


@pytest.mark.parametrize("case", _cases())
def test_wide_path_agrees_with_clarabel(case):
    X, y = _wide_data(sparse=case["sparse"], seed=1)
    n, d = X.shape
    rng = np.random.default_rng(2)
    radius = RADIUS[case["set"]]
    if case["per_sample"] and radius is not None:
        radius = rng.uniform(0.0, 2.0, size=n) * radius
        radius[:4] = 0.0
    V = _set(case["set"], d, radius)
    sw = None
    if case["weights"]:
        sw = rng.uniform(0.2, 2.0, size=n)
        sw[:3] = 0.0
    squared = case["loss"] == "sqhinge"
    l2, l1 = 0.05, (0.005 if case["l1"] else 0.0)
    signs = _signs(d) if case["signs"] else None
    icpt = INTERCEPTS[case["intercept"]]
    prob = rs.Problem(loss=rs.SquaredHinge() if squared else rs.Hinge(),
                      penalty=rs.L2(l2) + rs.L1(l1) if l1 else rs.L2(l2), uncertainty=V, signs=signs, intercept=icpt)
    sol = _solve(prob, X, y, sample_weight=sw)
    assert _took_wide(sol)
    ref = _clarabel_optimum(prob, X, y, V, radius if radius is not None else 0.0, l2=l2, l1=l1, signs=signs,
                            intercept=icpt, squared=squared, sample_weight=sw)
    _check_against(sol, prob, X, y, ref, l2=l2, signs=signs, tol=TOL, sample_weight=sw)
    _check_multipliers(sol, prob.normalize(X, y, sample_weight=sw), squared)


@pytest.mark.parametrize("set_name", [*WIDE_SETS, "ellipsoid"])
@pytest.mark.parametrize("sparse", [False, True])
def test_wide_and_dense_paths_agree(monkeypatch, set_name, sparse):
    """The same wide data on both paths: both certified, within each other's gaps (the ellipsoid takes the dense
    path on wide data too)."""
    X, y = _wide_data(n=30, d=100, seed=3, sparse=sparse)
    d = X.shape[1]
    l2 = 0.02
    prob = rs.Problem(penalty=rs.L2(l2) + rs.L1(0.002), uncertainty=_set(set_name, d, RADIUS[set_name]),
                      signs=_signs(d))
    wide = _solve(prob, X, y)
    dense = _solve(prob, X, y, dense=True, monkeypatch=monkeypatch)
    assert _took_wide(wide) == (set_name != "ellipsoid")
    assert not _took_wide(dense)
    assert wide.status == dense.status == "optimal"
    assert abs(wide.objective - dense.objective) <= wide.gap + dense.gap
    assert np.linalg.norm(wide.w - dense.w) <= math.sqrt(2 * wide.gap / l2) + math.sqrt(2 * dense.gap / l2)


def _adversarial(kind: str):
    X, y = _wide_data(n=40, d=120, seed=4)
    if kind == "n-much-smaller":
        X, y = _wide_data(n=6, d=400, seed=5)
    elif kind == "duplicated-columns":
        X = np.hstack([X, X[:, :60], -X[:, :20]])
    elif kind == "near-zero-features":
        X[:, ::3] *= 1e-9
        X[:, 1] = 0.0
    elif kind == "duplicated-rows":
        X = np.vstack([X, X[:10]])
        y = np.concatenate([y, y[:10]])
    return X, y


@pytest.mark.parametrize("kind", ["n-much-smaller", "duplicated-columns", "near-zero-features", "duplicated-rows"])
@pytest.mark.parametrize("set_name", ["box-widths", "ball2"])
def test_adversarial_wide_data(monkeypatch, kind, set_name):
    """n ≪ d, duplicated columns (a rank-deficient Gram), near-zero and zero features, duplicated samples: the
    wide path certifies against Clarabel and agrees with the dense path."""
    X, y = _adversarial(kind)
    d = X.shape[1]
    l2 = 0.05
    V = _set(set_name, d, RADIUS[set_name])
    prob = rs.Problem(penalty=rs.L2(l2), uncertainty=V)
    sol = _solve(prob, X, y)
    assert _took_wide(sol)
    ref = _clarabel_optimum(prob, X, y, V, RADIUS[set_name], l2=l2)
    _check_against(sol, prob, X, y, ref, l2=l2, signs=None, tol=TOL)
    dense = _solve(prob, X, y, dense=True, monkeypatch=monkeypatch)
    assert abs(sol.objective - dense.objective) <= sol.gap + dense.gap


def test_batched_points_on_the_wide_path():
    """``solve_many`` over (λ2, radius) on wide data: every point by Woodbury, each certified against Clarabel."""
    X, y = _wide_data(n=30, d=90, seed=6)
    d = X.shape[1]
    signs = _signs(d)
    prob = rs.Problem(penalty=rs.L2(0.05), uncertainty=rs.Ball(0.3), signs=signs)
    values = [{"l2": 0.05}, {"l2": 0.5, "radius": 0.6}, {"radius": 0.0}]
    results = rs.get_backend("feature-ipm").solve_many(prob.normalize(X, y), values, tol=TOL)
    for v, res in zip(values, results, strict=True):
        l2, radius = v.get("l2", 0.05), v.get("radius", 0.3)
        point = rs.Problem(penalty=rs.L2(l2), uncertainty=rs.Ball(radius), signs=signs)
        assert _took_wide(res)
        assert res.status == "optimal", res.message
        ref = _clarabel_optimum(point, X, y, point.uncertainty, radius, l2=l2, signs=signs)
        acc = SLACK * ref.scale()
        P = point.objective(X, y, res.w, res.b)
        assert ref.bound - acc <= P <= ref.objective + res.gap + acc
        assert res.gap <= TOL * abs(P) * (1 + 1e-9)


def test_newton_solve_matches_the_dense_normal_matrix():
    """One Newton system of a 2-ball with signs and a free intercept, at a perturbed interior point: the Woodbury
    solve against the dense path's Cholesky solve of the same system."""
    from robustsvm.backends import _ipm_newton as newton
    from robustsvm.backends.shared_set import SharedSetArrays

    X, y = _wide_data(n=25, d=90, seed=7)
    d = X.shape[1]
    prob = rs.Problem(penalty=rs.L2(0.05), uncertainty=rs.Ball(0.3), signs=_signs(d))
    arrays = SharedSetArrays.from_model(prob.normalize(X, y))
    rng = np.random.default_rng(8)
    out = []
    for wide in (False, True):
        lay = newton.Layout(d, arrays.sg, arrays.description, arrays.intercept.mode, True, sparse=wide)
        batch = newton.Batch(newton.Design(arrays.X, arrays.y, arrays.r), lay, arrays.c, np.array([arrays.l2]),
                        np.array([arrays.l1]), np.ones(1), arrays.intercept.mu, arrays.intercept.mode,
                        arrays.squared, wide=wide)
        it = newton.start(batch)
        it.x[:, :lay.m] *= np.random.default_rng(9).uniform(0.1, 3.0, size=lay.m)
        it.alpha *= np.random.default_rng(10).uniform(0.1, 1.9, size=it.alpha.shape)
        out.append(newton.Newton(batch, it))
    rhs = rng.normal(size=(1, out[0].batch.lay.k))
    assert np.allclose(out[1].factor.solve(rhs), out[0].factor.solve(rhs), rtol=1e-9, atol=1e-9 * np.abs(
        out[0].factor.solve(rhs)).max())


@pytest.mark.parametrize("set_name", ["nominal", "ball2", "ellipsoid"])
def test_reduced_solve_matches_the_full_normal_matrix(set_name):
    """The dense path merges a free feature's two parts (every set but the box): its solve against
    ``numpy.linalg.solve`` with the full normal matrix ``TCTᵀ + D + HᵀW⁻²H`` at a perturbed interior point."""
    from robustsvm.backends import _ipm_newton as newton
    from robustsvm.backends.shared_set import SharedSetArrays

    X, y = _wide_data(n=120, d=20, seed=11)
    d = X.shape[1]
    prob = rs.Problem(penalty=rs.L2(0.05), uncertainty=_set(set_name, d, RADIUS[set_name]), signs=_signs(d))
    arrays = SharedSetArrays.from_model(prob.normalize(X, y))
    robust = set_name != "nominal"
    lay = newton.Layout(d, arrays.sg, arrays.description, arrays.intercept.mode, robust)
    assert lay.reduced is not None and lay.reduced.k < lay.k
    batch = newton.Batch(newton.Design(arrays.X, arrays.y, arrays.r), lay, arrays.c, np.array([arrays.l2]),
                         np.array([arrays.l1]), np.ones(1), arrays.intercept.mu, arrays.intercept.mode, arrays.squared)
    it = newton.start(batch)
    it.x[:, :lay.m] *= np.random.default_rng(12).uniform(0.01, 3.0, size=lay.m)
    it.alpha *= np.random.default_rng(13).uniform(0.1, 1.9, size=it.alpha.shape)
    system = newton.Newton(batch, it)
    K = batch.normal_matrices(batch.design.gram(1.0 / system.e), system.diag)[0]
    if lay.cone:
        K += system.W.inverse_squared_congruence(lay.H, lay.HtH)[0]
    rhs = np.random.default_rng(14).normal(size=(1, lay.k))
    expected = np.linalg.solve(K, rhs[0])
    assert np.allclose(system.factor.solve(rhs)[0], expected, rtol=1e-8, atol=1e-10 * np.abs(expected).max())


def test_box_keeps_the_full_system():
    """A box puts a radius coefficient on every part: no merged layout."""
    from robustsvm.backends import _ipm_newton as newton
    from robustsvm.backends.shared_set import SharedSetArrays

    X, y = _wide_data(n=50, d=10, seed=15)
    prob = rs.Problem(penalty=rs.L2(0.05), uncertainty=rs.Box(0.1))
    arrays = SharedSetArrays.from_model(prob.normalize(X, y))
    assert newton.Layout(10, arrays.sg, arrays.description, arrays.intercept.mode, True).reduced is None

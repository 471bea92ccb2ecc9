"""The ``frank-wolfe`` backend against independent computations.

Clarabel's conic solution (the optimum), a dense grid and scipy's bounded
scalar minimizer (the line search), HiGHS through ``scipy.optimize.linprog``
(the linear oracle with an intercept), a brute force over the kinks (the
optimal intercept), and the iteration bound of Theorem 6.1.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linprog, minimize_scalar

import robustsvm as rs
from robustsvm.backends.frank_wolfe import line_search, linear_oracle
from robustsvm.certificates.iteration_bounds import frank_wolfe_bound
from robustsvm.exceptions import ConvergenceWarning, UnsupportedModelError
from robustsvm.objective import optimal_intercept

from .conftest import make_classification


def _signs(d: int, seed: int) -> np.ndarray:
    """Mixed constraints: some +1, some −1, some free."""
    return np.random.default_rng(seed).choice([-1, 0, 1], size=d).astype(int)


def _zeta(eta, G, lam, v0, vq, signs):
    """ζ(η) − ζ(0)-free part evaluated directly: G η − (λ/2)‖Π_S(v0 + η vq)‖² (η may be an array)."""
    eta = np.atleast_1d(np.asarray(eta, dtype=float))
    v = v0[None, :] + eta[:, None] * vq[None, :]
    w = np.where((signs[None, :] > 0) & (v < 0), 0.0, v)
    w = np.where((signs[None, :] < 0) & (v > 0), 0.0, w)
    return G * eta - 0.5 * lam * np.sum(w * w, axis=1)


# ------------------------------------------------------------------ agreement
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("intercept", [False, True, "l2"])
def test_agrees_with_clarabel(sparse, intercept):
    seed = 11 + 3 * sparse + (intercept is True) + 2 * (intercept == "l2")
    X, y = make_classification(150, 10, seed=seed, sparse=sparse)
    signs = _signs(10, seed)
    icpt = rs.L2(0.7) if intercept == "l2" else intercept
    reduction = "sum" if seed % 2 else "mean"
    lam = 0.05 if reduction == "mean" else 5.0
    prob = rs.Problem(loss=rs.Hinge(reduction=reduction), penalty=rs.L2(lam), signs=signs, intercept=icpt)
    ref = prob.solve(X, y, solver="clarabel")
    sol = prob.solve(X, y, solver="frank-wolfe", tol=1e-6, max_iter=50_000)
    assert sol.status == "optimal"
    scale = max(1.0, abs(ref.objective))
    # the certified gap bounds the true error; Clarabel is accurate to ~1e-8
    assert sol.objective - ref.objective <= sol.gap + 1e-8 * scale
    assert ref.objective <= sol.objective + 1e-9 * scale
    assert sol.gap <= 1e-6 * sol.objective * (1 + 1e-12)
    # every dual value is a lower bound of the optimum, every primal an upper one
    h = sol.history
    assert np.all(h["dual"] <= ref.objective + 1e-8 * scale)
    assert np.all(h["objective"] >= ref.objective - 1e-8 * scale)
    assert np.all(h["objective"] - h["dual"] >= -1e-12 * scale)
    # sign constraints hold exactly, not approximately
    assert np.all(sol.w * signs >= 0.0)
    assert np.abs(sol.w - ref.w).max() < 5e-3
    if intercept is False:
        assert sol.b == 0.0
    else:
        assert abs(sol.b - ref.b) < 5e-3


def test_history_is_monotone_in_the_dual_and_complete():
    X, y = make_classification(120, 8, seed=4)
    prob = rs.Problem(penalty=rs.L2(0.1), signs=_signs(8, 4), intercept=True)
    sol = prob.solve(X, y, solver="frank-wolfe", tol=1e-6, max_iter=5000)
    h = sol.history
    assert set(h) >= {"iteration", "objective", "dual", "gap", "time", "best_objective"}
    lengths = {len(v) for v in h.values()}
    assert lengths == {sol.iterations + 1}
    # exact line search: the dual never decreases
    assert np.all(np.diff(h["dual"]) >= -1e-13)
    assert np.all(np.diff(h["time"]) >= 0)
    np.testing.assert_allclose(h["gap"], h["objective"] - h["dual"])
    assert sol.gap == pytest.approx(h["best_objective"][-1] - h["dual"][-1])


def test_max_iter_status_and_warning():
    X, y = make_classification(100, 6, seed=2)
    prob = rs.Problem(penalty=rs.L2(0.01), signs=_signs(6, 2), intercept=False)
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        sol = prob.solve(X, y, solver="frank-wolfe", tol=1e-12, max_iter=3)
    assert sol.status == "max_iter"
    assert sol.iterations == 3
    assert sol.gap > 1e-12 * sol.objective


def test_sparse_input_is_never_densified(monkeypatch):
    X, y = make_classification(100, 30, seed=8, sparse=True, density=0.1)
    prob = rs.Problem(penalty=rs.L2(0.05), signs=_signs(30, 8), intercept=True)
    ref = prob.solve(X, y, solver="clarabel")

    def refuse(*args, **kwargs):
        raise AssertionError("a sparse matrix was densified")

    for cls in (sp.csr_matrix, sp.csc_matrix):
        monkeypatch.setattr(cls, "toarray", refuse)
        monkeypatch.setattr(cls, "todense", refuse)
    sol = prob.solve(X, y, solver="frank-wolfe", tol=1e-5, max_iter=20_000)
    assert sol.status == "optimal"
    assert sol.objective - ref.objective <= sol.gap + 1e-8


def test_compare_table_lists_frank_wolfe_near_the_reference():
    X, y = make_classification(100, 6, seed=5)
    prob = rs.Problem(penalty=rs.L2(0.1), signs=_signs(6, 5), intercept=True)
    table = rs.compare(prob, X, y, solvers=["frank-wolfe"], options={"frank-wolfe": {"tol": 1e-7,
                                                                                     "max_iter": 20_000}})
    row = {r["solver"]: r for r in table}["frank-wolfe"]
    assert row["status"] == "optimal"
    assert abs(row["rel_obj_diff"]) <= row["gap"] + 1e-8
    assert row["max_abs_dw"] < 5e-3


# ---------------------------------------------------------------- refusals
@pytest.mark.parametrize(
    "kwargs, reason",
    [
        ({"penalty": rs.L2(0.1) + rs.L1(0.01)}, "L1"),
        ({"loss": rs.SquaredHinge(), "penalty": rs.L2(0.1)}, "hinge"),
        ({"penalty": rs.L2(0.1), "uncertainty": rs.Box(radius=0.1)}, "uncertainty"),
        ({"penalty": rs.L2(0.1), "kernel": rs.RBF(1.0)}, "kernel"),
        ({"loss": rs.HardMargin(), "penalty": rs.L2(0.1)}, "hinge"),
        ({"penalty": rs.L1(0.1)}, "L2"),
    ],
)
@pytest.mark.parametrize("solver", ["frank-wolfe", "pegasos"])
def test_refuses_models_out_of_reach(kwargs, reason, solver):
    X, y = make_classification(30, 4, seed=0)
    prob = rs.Problem(**kwargs)
    with pytest.raises(UnsupportedModelError, match=reason) as info:
        prob.solve(X, y, solver=solver)
    assert "backends that can" in str(info.value)
    if kwargs.get("kernel") is None:
        assert "clarabel" in str(info.value)  # names a backend that can


# -------------------------------------------------------------- line search
def _random_instance(rng, d=40):
    signs = rng.choice([-1.0, 0.0, 1.0], size=d, p=[0.4, 0.2, 0.4])
    v0 = rng.normal(size=d)
    vq = rng.normal(size=d) * rng.choice([0.0, 1.0, 3.0], size=d)
    lam = float(rng.uniform(0.05, 2.0))
    # a slope that puts the maximizer anywhere in [0, 1], or beyond it
    G = float(rng.uniform(-1.0, 1.0) * lam * (np.abs(vq) @ (np.abs(v0) + np.abs(vq))) * 1.5)
    return G, lam, v0, vq, signs


def _check_exact(G, lam, v0, vq, signs, strict_tol=None):
    eta = line_search(G, lam, v0, vq, signs)
    assert 0.0 <= eta <= 1.0
    grid = np.linspace(0.0, 1.0, 200_001)
    values = _zeta(grid, G, lam, v0, vq, signs)
    best = values.max()
    scale = max(1.0, np.abs(values).max())
    assert _zeta(eta, G, lam, v0, vq, signs)[0] >= best - 1e-12 * scale
    bounded = minimize_scalar(lambda e: -_zeta(e, G, lam, v0, vq, signs)[0], bounds=(0, 1), method="bounded",
                              options={"xatol": 1e-12})
    assert _zeta(eta, G, lam, v0, vq, signs)[0] >= -bounded.fun - 1e-12 * scale
    if strict_tol is not None:
        assert abs(eta - grid[np.argmax(values)]) <= strict_tol
    return eta


@pytest.mark.parametrize("seed", range(12))
def test_line_search_matches_grid_search(seed):
    rng = np.random.default_rng(seed)
    G, lam, v0, vq, signs = _random_instance(rng)
    # ζ is strictly concave where vq has a free or active component: η is unique
    _check_exact(G, lam, v0, vq, signs, strict_tol=2e-5)


def test_line_search_degenerate_cases():
    rng = np.random.default_rng(0)
    d = 10
    signs = rng.choice([-1.0, 0.0, 1.0], size=d)
    v0 = rng.normal(size=d)
    # q = 0: ζ is constant, the step is 0
    assert line_search(0.0, 0.5, v0, np.zeros(d), signs) == 0.0
    # decreasing at 0: η = 0; increasing at 1: η = 1
    vq = rng.normal(size=d)
    assert _check_exact(-10.0, 0.5, v0, vq, signs) == 0.0
    assert _check_exact(1e3, 0.5, v0, vq, signs) == 1.0
    # every coordinate clipped for all η: ζ linear in η
    plus = np.ones(d)
    neg = -np.abs(v0) - 0.1
    down = -np.abs(vq)
    assert line_search(0.3, 0.5, neg, down, plus) == 1.0
    assert line_search(-0.3, 0.5, neg, down, plus) == 0.0
    assert line_search(0.0, 0.5, neg, down, plus) == 0.0
    # a flat piece after a breakpoint: ζ rises until η = 1/2 then stays flat
    eta = _check_exact(0.0, 1.0, np.array([1.0]), np.array([-2.0]), np.array([1.0]))
    assert 0.5 - 1e-12 <= eta <= 1.0
    # unique maximizer exactly at a breakpoint (where a constrained feature enters)
    v0k, vqk, sk = np.array([-0.5, -0.5]), np.array([1.0, 1.0]), np.array([0.0, 1.0])
    eta = _check_exact(0.0, 1.0, v0k, vqk, sk, strict_tol=1e-5)
    assert eta == pytest.approx(0.5)
    # many tied breakpoints
    v0t = -np.full(20, 0.25)
    vqt = np.ones(20)
    _check_exact(3.0, 1.0, v0t, vqt, np.ones(20), strict_tol=2e-5)


# ---------------------------------------------------- oracle and intercept
@pytest.mark.parametrize("seed", range(6))
def test_linear_oracle_with_intercept_matches_linprog(seed):
    rng = np.random.default_rng(seed)
    n = 40
    y = rng.choice([-1.0, 1.0], size=n)
    c = rng.uniform(0.1, 2.0, size=n) * (rng.random(n) > 0.1)
    c[np.flatnonzero(y > 0)[0]] = 1.0
    c[np.flatnonzero(y < 0)[0]] = 1.0
    r = rng.normal(size=n) + rng.choice([0.0, 1.0], size=n)
    u = linear_oracle(r, y, c, intercept=True)
    assert np.all(u >= 0) and np.all(u <= 1)
    assert abs(float((c * y) @ u)) <= 1e-12 * c.sum()
    lp = linprog(-(c * r), A_eq=(c * y)[None, :], b_eq=[0.0], bounds=[(0, 1)] * n, method="highs")
    assert lp.status == 0
    assert float((c * r) @ u) == pytest.approx(-lp.fun, rel=1e-10, abs=1e-12)
    # without the constraint: the box maximizer
    u0 = linear_oracle(r, y, c, intercept=False)
    lp0 = linprog(-(c * r), bounds=[(0, 1)] * n, method="highs")
    assert float((c * r) @ u0) == pytest.approx(-lp0.fun, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_optimal_intercept_is_the_brute_force_minimum(seed):
    rng = np.random.default_rng(seed)
    n = 50
    y = rng.choice([-1.0, 1.0], size=n)
    z = rng.normal(size=n)
    c = rng.uniform(0.0, 1.0, size=n)
    if seed == 0:
        z = np.round(z, 1)  # ties among kinks

    def phi(b):
        return float(c @ np.maximum(0.0, 1.0 - y * (z + b)))

    kinks = y - z
    brute = min(phi(k) for k in kinks)  # a convex piecewise-linear minimum sits at a kink
    b = optimal_intercept(z, y, c)
    assert phi(b) <= brute + 1e-12


# ------------------------------------------------------------------ theory
def test_dual_error_within_theorem_6_1_bound():
    X, y = make_classification(200, 8, seed=6)
    X = X / np.linalg.norm(X, axis=1, keepdims=True)  # R = 1, as in the paper's experiments
    lam = 0.05
    prob = rs.Problem(penalty=rs.L2(lam), signs=_signs(8, 6), intercept=False)
    ref = prob.solve(X, y, solver="clarabel")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        sol = prob.solve(X, y, solver="frank-wolfe", tol=1e-12, max_iter=400)
    T = sol.history["iteration"]
    error = ref.objective - sol.history["dual"]
    bound = np.array([frank_wolfe_bound(int(t), 1.0, lam) for t in T])
    assert np.all(error[1:] <= bound[1:] + 1e-8)
    # the bound is informative here: it falls below the initial error
    assert bound[-1] < error[0]


def test_sample_weights_with_zeros_and_intercept():
    X, y = make_classification(120, 7, seed=12)
    sw = np.random.default_rng(12).uniform(0.0, 3.0, size=120)
    sw[:15] = 0.0
    signs = _signs(7, 12)
    prob = rs.Problem(penalty=rs.L2(0.05), signs=signs, intercept=True)
    ref = prob.solve(X, y, solver="clarabel", sample_weight=sw)
    sol = prob.solve(X, y, solver="frank-wolfe", sample_weight=sw, tol=1e-6, max_iter=50_000)
    assert sol.status == "optimal"
    assert sol.objective - ref.objective <= sol.gap + 1e-8
    assert ref.objective <= sol.objective + 1e-9
    assert np.all(sol.w * signs >= 0.0)


def test_two_products_with_x_per_iteration(count_products):
    calls = count_products
    X, y = make_classification(80, 6, seed=3, sparse=True)
    prob = rs.Problem(penalty=rs.L2(0.01), signs=_signs(6, 3), intercept=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        sol = prob.solve(X, y, solver="frank-wolfe", tol=1e-12, max_iter=25)
    assert sol.iterations == 25
    # one X·w per evaluated point (iterations + the start), one Xᵀ·r per step
    assert calls == {"matvec": 26, "rmatvec": 25}

"""The m3 backend: multiplicative updates against clarabel and against their own guarantees."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import robustsvm as rs
from robustsvm.backends.m3 import m3_solve
from robustsvm.duals import NQP, KernelDual, solve_nqp_cvxpy
from tests.conftest import make_classification

TIGHT = {"tol_gap_abs": 1e-11, "tol_gap_rel": 1e-11, "tol_feas": 1e-11}


def separable(n=60, d=4, seed=0, gap=0.5):
    rng = np.random.default_rng(seed)
    w = rng.normal(size=d)
    X = rng.normal(size=(n, d))
    y = np.where(X @ w > 0, 1, -1)
    return X + gap * y[:, None] * w / np.linalg.norm(w), y


def test_hard_margin_linear_reaches_clarabel():
    X, y = separable()
    prob = rs.Problem(loss=rs.HardMargin(), penalty=rs.L2(1.0), intercept=False)
    ref = prob.solve(X, y, solver="clarabel", solver_options=TIGHT)
    sol = prob.solve(X, y, solver="m3", tol=1e-10, max_iter=100000, threshold=1e-8)
    assert sol.status == "optimal"
    assert np.allclose(sol.w, ref.w, atol=1e-7)
    assert sol.objective == pytest.approx(ref.objective, rel=1e-9)
    assert sol.violation < 1e-9
    assert abs(sol.gap) < 1e-8
    # the clamping of footnote 2: non-support vectors end exactly at zero
    v = sol.extra["dual_point"]
    margins = y * (X @ ref.w)
    assert np.all(v[margins > 1 + 1e-3] == 0.0)


@pytest.mark.parametrize(("kernel", "loss"), [
    (rs.RBF(1.0), rs.Hinge()), (rs.RBF(3.0), rs.Hinge()), (rs.RBF(1.0), rs.SquaredHinge()),
    (rs.Polynomial(2), rs.SquaredHinge()), (rs.Polynomial(4), rs.SquaredHinge()),
])
def test_soft_margin_kernel_matches_clarabel(kernel, loss):
    X, y = make_classification(60, 4, seed=2)
    X_test, _ = make_classification(30, 4, seed=9)
    prob = rs.Problem(loss=loss, penalty=rs.L2(0.1), intercept=rs.L2(0.5), kernel=kernel)
    ref = prob.solve(X, y, solver="clarabel", solver_options=TIGHT)
    sol = prob.solve(X, y, solver="m3", tol=1e-9, max_iter=100000)
    assert sol.status == "optimal"
    # the reference's value at its (feasible) expansion is above m3's certified bound, whatever Clarabel's status
    assert ref.objective >= sol.objective - sol.gap - 1e-12 * max(1.0, abs(ref.objective))
    assert sol.w is None and sol.dual_coef is not None
    assert sol.objective == pytest.approx(ref.objective, rel=1e-7)
    assert np.allclose(sol.decision_function(X_test), ref.decision_function(X_test), atol=1e-4)
    assert np.array_equal(sol.predict(X), ref.predict(X))
    assert -1e-12 <= sol.gap < 1e-7


def test_sha_model_hard_margin_rbf():
    """Sha et al.'s model: hard margin, no intercept, RBF kernel (separable in feature space)."""
    X, y = make_classification(50, 3, seed=5)
    prob = rs.Problem(loss=rs.HardMargin(), penalty=rs.L2(1.0), intercept=False, kernel=rs.RBF(0.5))
    ref = prob.solve(X, y, solver="clarabel", solver_options=TIGHT)
    sol = prob.solve(X, y, solver="m3", tol=1e-9, max_iter=100000)
    assert sol.objective == pytest.approx(ref.objective, rel=1e-7)
    assert sol.violation < 1e-8
    assert np.all(sol.predict(X) == np.asarray(y))


@pytest.mark.parametrize("seed", range(40))
def test_objective_never_increases(seed):
    """F(v) along the updates is non-increasing on random NQPs (mixed-sign A, bounds or not)."""
    rng = np.random.default_rng(seed)
    k = int(rng.integers(3, 30))
    M = rng.normal(size=(k, int(rng.integers(1, k + 1))))
    A = M @ M.T + rng.uniform(0, 0.5) * np.eye(k)
    b = rng.normal(size=k) * rng.uniform(0.1, 5)
    c = np.where(rng.random(k) < 0.5, rng.uniform(0.05, 2, size=k), np.inf)
    if A.min() >= 0 or rng.random() < 0.3:
        c = np.full(k, np.inf) if rng.random() < 0.5 else c
    q = NQP(A, b, c)
    init = rng.uniform(0.0, 3.0, size=k) if seed % 2 else 1.0
    res = m3_solve(q, init=init, tol=1e-10, max_iter=3000, threshold=1e-6)
    f = res.history["objective"]
    scale = max(1.0, float(np.max(np.abs(f))))
    assert np.all(np.diff(f) <= 1e-12 * scale)
    ref = solve_nqp_cvxpy(q, solver_options=TIGHT)
    if ref.status == "optimal":
        assert f[-1] >= ref.objective - 1e-7 * scale  # never below the minimum
        if res.status == "optimal":
            assert f[-1] == pytest.approx(ref.objective, rel=1e-6, abs=1e-8)


def test_slow_case_stops_short_and_says_so():
    """Hinge + polynomial kernel: a nearly degenerate dual where the updates crawl; the status says so."""
    X, y = make_classification(60, 4, seed=2)
    prob = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(0.1), intercept=rs.L2(0.5), kernel=rs.Polynomial(2))
    ref = prob.solve(X, y, solver="clarabel", solver_options=TIGHT)
    with pytest.warns(rs.ConvergenceWarning, match="max_iter"):
        sol = prob.solve(X, y, solver="m3", tol=1e-9, max_iter=20000)
    assert sol.status == "max_iter"
    assert sol.extra["kkt_residual"] > 1e-9
    assert sol.objective == pytest.approx(ref.objective, rel=1e-5)
    assert sol.gap >= sol.objective - ref.objective - 1e-12  # the gap bounds the suboptimality


def test_history_and_max_iter_status():
    X, y = make_classification(40, 3, seed=1)
    prob = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(0.05), intercept=False, kernel=rs.RBF(1.0))
    with pytest.warns(rs.ConvergenceWarning, match="max_iter"):
        sol = prob.solve(X, y, solver="m3", max_iter=5, tol=1e-12)
    assert sol.status == "max_iter" and sol.iterations == 5
    h = sol.history
    assert {"iteration", "objective", "gap", "time", "kkt"} <= set(h)
    assert len({len(v) for v in h.values()}) == 1
    assert np.all(np.diff(h["objective"]) <= 1e-12)
    assert np.isfinite(h["gap"][-1]) and h["gap"][-1] > 0


def test_init_option_and_validation():
    X, y = make_classification(30, 3, seed=2)
    prob = rs.Problem(loss=rs.SquaredHinge(), penalty=rs.L2(0.5), intercept=False, kernel=rs.Linear())
    a = prob.solve(X, y, solver="m3", tol=1e-9, init=0.3)
    b = prob.solve(X, y, solver="m3", tol=1e-9)
    assert np.allclose(a.decision_function(X), b.decision_function(X), atol=1e-6)
    with pytest.raises(ValueError, match="init"):
        prob.solve(X, y, solver="m3", init=-1.0)
    with pytest.raises(ValueError, match="init"):
        prob.solve(X, y, solver="m3", init=np.ones(3))
    with pytest.raises(ValueError, match="tol must be positive"):  # checked once, by the solve path
        prob.solve(X, y, solver="m3", tol=0)
    with pytest.raises(ValueError, match="max_iter must be a positive integer"):
        m3_solve(NQP(np.eye(2), -np.ones(2)), max_iter=0)


def test_check_refuses_with_reasons():
    m3 = rs.get_backend("m3")
    free_kernel = rs.Problem(penalty=rs.L2(1.0), intercept=True, kernel=rs.RBF(1.0))
    reasons = m3.check(free_kernel)
    assert any("Σ y_i α_i = 0" in r for r in reasons)
    X, y = make_classification(20, 3)
    with pytest.raises(rs.UnsupportedModelError, match="free intercept"):
        free_kernel.solve(X, y, solver="m3")
    assert m3.check(rs.Problem(penalty=rs.L2(1.0) + rs.L1(0.1), intercept=False))
    assert m3.check(rs.Problem(penalty=rs.L2(1.0), uncertainty=rs.Ball(0.1), intercept=False))
    assert m3.check(rs.Problem(penalty=rs.L2(1.0), intercept=False, kernel=rs.RBF(1.0), signs=[1, 0, 0]))
    assert m3.check(rs.Problem(loss=rs.Hinge(), intercept=False))  # no L2
    for ok in (
        rs.Problem(loss=rs.HardMargin(), penalty=rs.L2(1.0), intercept=False, kernel=rs.Polynomial(4)),
        rs.Problem(loss=rs.Hinge(), penalty=rs.L2(1.0), signs=[1, -1, 0], intercept=False),
        rs.Problem(loss=rs.SquaredHinge(), penalty=rs.L2(1.0), intercept=rs.L2(1.0), kernel=rs.RBF(2.0)),
        rs.pq_svm(1.0, 1.0, 0.1),
    ):
        assert m3.check(ok) == []


def test_kernel_dual_recovery_uses_support_vectors():
    X, y = make_classification(40, 3, seed=3)
    prob = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(0.01), intercept=False, kernel=rs.RBF(1.0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sol = prob.solve(X, y, solver="m3", tol=1e-9, max_iter=100000, threshold=1e-6)
        ref = prob.solve(X, y, solver="clarabel", solver_options=TIGHT)
    dual = KernelDual(prob.normalize(X, y))
    rec = dual.recover(sol.extra["dual_point"])
    assert np.array_equal(rec.support, sol.extra["support"])
    # the clamped coordinates are exactly the non-support vectors of the reference solution
    assert np.array_equal(sol.extra["support"], np.flatnonzero(ref.extra["dual_point"] > 1e-7))
    assert sol.support_vectors.shape[0] == sol.dual_coef.shape[0] < X.shape[0]
    # the expansion over the support vectors is the full expansion Σ_j (y_j α_j/λ) k(x, x_j)
    K = rs.RBF(1.0)(X, X)
    full = K @ (dual.model.y * sol.extra["dual_point"] / 0.01)
    assert np.allclose(sol.decision_function(X), full, atol=1e-12)


def test_too_large_dual_is_refused_before_forming_it():
    from robustsvm.backends import m3 as m3_module

    X, y = make_classification(30, 3)
    prob = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(1.0), intercept=False, kernel=rs.RBF(1.0))
    old = m3_module.MAX_DENSE
    m3_module.MAX_DENSE = 20
    try:
        with pytest.raises(rs.SolverError, match="limited to 20"):
            prob.solve(X, y, solver="m3")
    finally:
        m3_module.MAX_DENSE = old


def test_zero_coordinates_with_negative_gradient_are_revived():
    """A multiplicative update keeps 0 at 0; the KKT move lifts it where ∂F/∂v_i < 0 (here v* = (1, 1, 0.5))."""
    A = np.array([[2.0, -1.0, 0.0], [-1.0, 2.0, 0.0], [0.0, 0.0, 2.0]])
    b = np.array([-1.0, -1.0, -1.0])
    res = m3_solve(NQP(A, b), init=np.array([0.0, 1.0, 0.0]), tol=1e-12, max_iter=10000)
    assert res.status == "optimal"
    assert np.allclose(res.v, [1.0, 1.0, 0.5], atol=1e-10)
    assert np.all(np.diff(res.history["objective"]) <= 1e-15)


@pytest.mark.parametrize("loss", [rs.Hinge(), rs.SquaredHinge()])
def test_sample_weights_in_the_dual(loss):
    """Weights enter as the bounds c_i (hinge) or the diagonal 1/(2c_i) (squared hinge); zero pins α_i = 0."""
    X, y = make_classification(40, 3, seed=4)
    s = np.random.default_rng(0).uniform(0.2, 3.0, 40)
    s[:4] = 0.0
    prob = rs.Problem(loss=loss, penalty=rs.L2(0.3), intercept=rs.L2(1.0), kernel=rs.RBF(1.0))
    ref = prob.solve(X, y, solver="clarabel", sample_weight=s, solver_options=TIGHT)
    sol = prob.solve(X, y, solver="m3", sample_weight=s, tol=1e-9, max_iter=100000)
    assert sol.status == "optimal"
    assert np.all(sol.extra["dual_point"][:4] == 0.0)
    assert sol.objective == pytest.approx(ref.objective, rel=1e-7)
    assert np.allclose(sol.decision_function(X), ref.decision_function(X), atol=1e-5)
    # the weighted objective, recomputed from the expansion, differs from the unweighted one
    unweighted = prob.solve(X, y, solver="clarabel", solver_options=TIGHT)
    assert abs(unweighted.objective - ref.objective) > 1e-3


def test_recorded_coefficients_follow_the_update_rule():
    """``record_coefficients`` keeps every iterate; each step is eq. 3 applied to the previous one."""
    X, y = make_classification(30, 3, seed=4)
    prob = rs.Problem(penalty=rs.L2(0.01), kernel=rs.RBF(1.0), intercept=False)
    with pytest.warns(rs.ConvergenceWarning):
        sol = prob.solve(X, y, solver="m3", max_iter=5, tol=1e-12, record_coefficients=True)
    assert sol.iterations == 5
    V = sol.extra["coefficients"]
    assert V.shape[1] == 30 and V.shape[0] >= 2
    nqp = KernelDual(prob.normalize(X, y)).nqp
    A = nqp.dense()
    Ap, Am = np.maximum(A, 0), np.maximum(-A, 0)
    for k in range(V.shape[0] - 1):  # each recorded step is eq. 3 applied to the one before, clipped to c
        v, b = V[k], nqp.b
        step = (-b + np.sqrt(b**2 + 4 * (Ap @ v) * (Am @ v))) / (2 * (Ap @ v))
        np.testing.assert_allclose(V[k + 1], np.minimum(v * step, nqp.c), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(V[-1], sol.extra["dual_point"])


def test_linear_multipliers_reach_the_certifier_as_a_field():
    """m3's α of the linear dual is ``Result.multipliers`` (not an ``extra`` key), and the gap the package builds
    from it bounds the distance to Clarabel's optimum."""
    from robustsvm._validation import check_fit_data
    from robustsvm.backends import registry
    from robustsvm.model import normalize

    X, y = make_classification(n=80, d=5, seed=3)
    prob = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(1.0), intercept=False, signs=[1, 0, -1, 0, 0])
    model = normalize(prob, check_fit_data(X, y, signs=prob.signs))
    res = registry.get_backend("m3").solve(model, tol=1e-9, max_iter=50000)
    assert res.multipliers is not None and res.multipliers.shape == (model.n,)
    assert "margin_multipliers" not in res.extra
    np.testing.assert_array_equal(res.multipliers, res.extra["dual_point"][:model.n])
    sol = prob.solve(X, y, solver="m3", tol=1e-9, max_iter=50000)
    ref = prob.solve(X, y, solver="clarabel", solver_options=TIGHT)
    assert sol.objective - ref.objective <= sol.gap + 1e-9 * max(1.0, abs(ref.objective))
    assert sol.gap <= 1e-6 * max(1.0, abs(sol.objective))

"""``logistic-dcd``: the logistic loss by dual coordinate ascent with Newton steps, against Clarabel and sklearn."""

import numpy as np
import pytest
import scipy.sparse as sp

import robustsvm as rs
from robustsvm.backends.logistic_dcd import _new_logit, free_intercept

from .conftest import make_classification


def _agree(a, b):
    """Both are certified: their intervals ``[P − gap, P]`` hold the optimum, so they overlap."""
    assert a.objective - a.gap <= b.objective + 1e-12 and b.objective - b.gap <= a.objective + 1e-12
    assert abs(a.objective - b.objective) <= a.gap + b.gap + 1e-12


@pytest.mark.parametrize("intercept", [True, False, rs.L2(0.5)])
@pytest.mark.parametrize("sparse", [False, True])
def test_signs_bounds_l1_against_clarabel(intercept, sparse):
    X, y = make_classification(120, 10, seed=4, sparse=sparse)
    signs = np.array([1, -1, 0, 1, 0, -1, 0, 0, 1, 0])
    prob = rs.Problem(loss=rs.Logistic(), penalty=rs.L2(0.02) + rs.L1(0.005), signs=signs, intercept=intercept,
                      bounds={2: (-0.3, 0.2), 4: (0.1, None)})
    fast = prob.solve(X, y, solver="logistic-dcd", tol=1e-8, random_state=0)
    ref = prob.solve(X, y, solver="clarabel", tol=1e-10)
    assert fast.status == "optimal" and fast.gap <= 1e-8 * max(1.0, fast.objective)
    _agree(fast, ref)
    assert fast.violation == 0.0  # the clip keeps signs and bounds exactly
    assert -0.3 <= fast.w[2] <= 0.2 and fast.w[4] >= 0.1


@pytest.mark.parametrize("lam", [1e-2, 1e-3])
def test_unconstrained_matches_scikit_learn(wdbc, lam):
    from sklearn.linear_model import LogisticRegression

    X, y, _ = wdbc
    prob = rs.Problem(loss=rs.Logistic(), penalty=rs.L2(lam))
    sol = prob.solve(X, y, solver="logistic-dcd", random_state=0)
    assert sol.status == "optimal" and sol.gap <= 1e-6 * max(1.0, sol.objective)
    clf = LogisticRegression(C=1.0 / (lam * X.shape[0]), tol=1e-12, max_iter=100_000).fit(X, y)
    sk = prob.certify(X, y, clf.coef_.ravel(), clf.intercept_[0])
    assert sk.gap < 1e-6
    assert abs(sol.objective - sk.objective) <= sol.gap + sk.gap + 1e-12


def test_sample_weights_with_zeros_equal_dropping_the_samples():
    X, y = make_classification(100, 5, seed=7)
    sw = np.ones(100)
    sw[:30] = 0.0
    prob = rs.Problem(loss=rs.Logistic(reduction="sum"), penalty=rs.L2(0.1), signs=[1, 0, 0, -1, 0])
    weighted = prob.solve(X, y, solver="logistic-dcd", sample_weight=sw, tol=1e-9)
    dropped = prob.solve(X[30:], y[30:], solver="clarabel", tol=1e-10)
    _agree(weighted, dropped)
    np.testing.assert_allclose(weighted.w, dropped.w, atol=1e-4)


def test_newton_step_solves_the_one_dimensional_problem():
    """The new logit is the maximizer of ``H(α') − (α' − α)m − (q/2)(α' − α)²`` (a brute-force grid)."""
    from robustsvm.terms.logistic import binary_entropy

    grid = np.linspace(1e-9, 1 - 1e-9, 2_000_001)
    for alpha, m, q in [(0.5, 0.0, 1.0), (0.2, 3.0, 50.0), (0.9, -4.0, 0.01), (1e-6, 12.0, 1e4)]:
        t = _new_logit(0.0, alpha, m, q)
        new = 1.0 / (1.0 + np.exp(-t))
        f = binary_entropy(grid) - (grid - alpha) * m - 0.5 * q * (grid - alpha) ** 2
        best = grid[np.argmax(f)]
        assert abs(new - best) < 2e-6
        assert abs(t + m + q * (new - alpha)) < 1e-9 * max(1.0, abs(t))  # the stationarity equation


def test_free_intercept_is_the_exact_minimizer():
    rng = np.random.default_rng(0)
    z, y, c = rng.normal(size=50), np.where(rng.random(50) > 0.3, 1.0, -1.0), rng.uniform(0.1, 1, 50)
    b = free_intercept(z, y, c, 0.0)
    sig = 1.0 / (1.0 + np.exp(y * (z + b)))
    assert abs(c @ (y * sig)) < 1e-12


def test_refuses_what_it_cannot_solve():
    X, y = make_classification(40, 3, seed=1)
    with pytest.raises(rs.UnsupportedModelError, match="Box"):
        rs.Problem(loss=rs.Logistic(), penalty=rs.L2(0.1), uncertainty=rs.Ellipsoid(np.eye(3), 0.1)).solve(
            X, y, "logistic-dcd")
    with pytest.raises(rs.UnsupportedModelError, match="L2"):
        rs.Problem(loss=rs.Logistic(), penalty=rs.L1(0.1)).solve(X, y, "logistic-dcd")
    with pytest.raises(rs.UnsupportedModelError, match="logistic"):
        rs.Problem(loss=rs.Hinge(), penalty=rs.L2(0.1)).solve(X, y, "logistic-dcd")


def test_max_iter_is_reported_not_hidden():
    X, y = make_classification(200, 8, seed=3)
    prob = rs.Problem(loss=rs.Logistic(), penalty=rs.L2(1e-5))
    with pytest.warns(rs.ConvergenceWarning):
        sol = prob.solve(X, y, solver="logistic-dcd", max_iter=2, tol=1e-12)
    assert sol.status == "max_iter" and sol.iterations == 2 and sol.gap > 0


def test_sparse_and_dense_agree():
    X, y = make_classification(150, 20, seed=9, sparse=True)
    prob = rs.Problem(loss=rs.Logistic(), penalty=rs.L2(0.01), signs=np.r_[np.ones(5), np.zeros(15)])
    a = prob.solve(X, y, solver="logistic-dcd", tol=1e-9, random_state=1)
    b = prob.solve(sp.csr_matrix(X).toarray(), y, solver="logistic-dcd", tol=1e-9, random_state=1)
    _agree(a, b)


@pytest.mark.parametrize("intercept", [True, False, rs.L2(0.5)])
@pytest.mark.parametrize("sparse", [False, True])
def test_box_set_against_clarabel(intercept, sparse):
    """A shared Box (widths, a radius per sample) with signs, bounds and L1: the prox-dual with A = Σ c α r."""
    X, y = make_classification(150, 8, seed=2, sparse=sparse)
    radius = np.random.default_rng(0).uniform(0.0, 0.2, 150)
    prob = rs.Problem(loss=rs.Logistic(), penalty=rs.L2(0.05) + rs.L1(0.01), signs=[1, -1, 0, 0, 1, 0, 0, 0],
                      uncertainty=rs.Box(0.1, widths=np.linspace(0.5, 1.5, 8)), intercept=intercept,
                      bounds={2: (-0.2, 0.3)})
    fast = prob.solve(X, y, solver="logistic-dcd", radius=radius, tol=1e-9, random_state=0)
    ref = prob.solve(X, y, solver="clarabel", radius=radius, tol=1e-10)
    assert fast.status == "optimal" and fast.gap <= 1e-9 * max(1.0, fast.objective)
    _agree(fast, ref)
    assert fast.violation == 0.0


@pytest.mark.parametrize("intercept", [True, False, rs.L2(0.5)])
@pytest.mark.parametrize("sparse", [False, True])
def test_two_ball_against_clarabel(intercept, sparse):
    """A shared 2-ball with signs and L1: w = T(v)(1 − A/‖T(v)‖)₊/λ2, a radius per sample."""
    X, y = make_classification(150, 8, seed=2, sparse=sparse)
    radius = np.random.default_rng(0).uniform(0.0, 0.3, 150)
    prob = rs.Problem(loss=rs.Logistic(), penalty=rs.L2(0.05) + rs.L1(0.01), signs=[1, -1, 0, 0, 1, 0, 0, 0],
                      uncertainty=rs.Ball(0.2), intercept=intercept)
    fast = prob.solve(X, y, solver="logistic-dcd", radius=radius, tol=1e-9, random_state=0)
    ref = prob.solve(X, y, solver="clarabel", radius=radius, tol=1e-10)
    assert fast.status == "optimal" and fast.gap <= 1e-9 * max(1.0, fast.objective)
    _agree(fast, ref)
    assert np.all(fast.w[[0, 4]] >= 0) and fast.w[1] <= 0


def test_other_balls_and_a_ball_with_bounds_are_refused():
    X, y = make_classification(40, 3, seed=1)
    with pytest.raises(rs.UnsupportedModelError, match="p = 2"):
        rs.Problem(loss=rs.Logistic(), penalty=rs.L2(0.1), uncertainty=rs.Ball(0.1, p=1)).solve(X, y, "logistic-dcd")
    with pytest.raises(rs.UnsupportedModelError, match="bounds"):
        rs.Problem(loss=rs.Logistic(), penalty=rs.L2(0.1), uncertainty=rs.Ball(0.1),
                   bounds={0: (-1.0, 1.0)}).solve(X, y, "logistic-dcd")

"""The Wasserstein ball's fast route for the hinge (κ = ∞): robust-dcd against a CVXPY model written here."""

import cvxpy as cp
import numpy as np
import pytest

import robustsvm as rs
from robustsvm import solve_path

from .conftest import make_classification

DUAL = {1: np.inf, 2: 2, np.inf: 1}
SIGNS = np.array([1, -1, 0, 0, 1, 0])


def penalized_hinge(X, y01, lam2, lam1, signs, eps, norm, weights, intercept):
    """κ = ∞: min (λ2/2)‖w‖² + λ1‖w‖₁ + ε‖w‖_* + Σ ĉ_i max(0, 1 − y_i(w·x_i + b)), ĉ = weights/Σ weights."""
    d = X.shape[1]
    y = 2.0 * y01 - 1.0
    c = weights / weights.sum()
    w, b = cp.Variable(d), cp.Variable()
    bias = 0.0 if intercept is False else b
    obj = lam2 / 2 * cp.sum_squares(w) + lam1 * cp.norm1(w) + eps * cp.norm(w, DUAL[norm])
    obj = obj + c @ cp.pos(1 - cp.multiply(y, X @ w + bias))
    if not isinstance(intercept, bool):  # a ridge intercept (μ/2)b²
        obj = obj + intercept / 2 * cp.square(b)
    cons = [w[signs > 0] >= 0, w[signs < 0] <= 0]
    prob = cp.Problem(cp.Minimize(obj), cons)
    prob.solve(solver="CLARABEL", tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11)
    return prob.value


@pytest.mark.parametrize("norm", [1, 2, np.inf])
@pytest.mark.parametrize("intercept", [True, False, 0.5])
def test_hinge_fast_route_against_the_penalized_model(norm, intercept):
    X, y = make_classification(120, 6, seed=3)
    weights = np.random.default_rng(2).uniform(0.5, 2.0, 120)
    lam2, lam1, eps = 0.03, 0.004, 0.07
    term = intercept if isinstance(intercept, bool) else rs.L2(intercept)
    prob = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(lam2) + rs.L1(lam1), signs=SIGNS, intercept=term,
                      uncertainty=rs.Wasserstein(eps, norm=norm))
    sol = prob.solve(X, y, solver="robust-dcd", sample_weight=weights, tol=1e-5)
    value = penalized_hinge(X, y, lam2, lam1, SIGNS, eps, norm, weights, intercept)
    assert sol.status == "optimal" and sol.solver == "robust-dcd"
    assert sol.gap <= 1e-5 * max(1.0, sol.objective)
    # the package's gap bounds the distance to the independent optimum from both sides
    assert value - 1e-8 <= sol.objective <= value + sol.gap + 1e-8
    assert np.all(sol.w[SIGNS > 0] >= 0) and np.all(sol.w[SIGNS < 0] <= 0)


@pytest.mark.parametrize("norm", [2, np.inf])
def test_sparse_rows_and_bounds_agree_with_the_conic_route(norm):
    X, y = make_classification(150, 6, seed=7, sparse=True, density=0.5)
    prob = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(0.02), signs=SIGNS, bounds=(-0.4, 0.4),
                      uncertainty=rs.Wasserstein(0.05, norm=norm))
    fast = prob.solve(X, y, solver="robust-dcd", tol=1e-6)
    conic = prob.solve(X, y, solver="clarabel", tol=1e-9)
    assert fast.status == "optimal" and conic.status == "optimal"
    assert abs(fast.objective - conic.objective) <= fast.gap + conic.gap + 1e-9
    assert np.all(np.abs(fast.w) <= 0.4 + 1e-12)


@pytest.mark.parametrize("norm", [1, 2, np.inf])
def test_a_radius_that_zeroes_the_weights_is_certified(norm):
    """ε beyond the critical radius: w = 0 is optimal; both routes certify it (a bound that does not depend on a
    subgradient at w = 0)."""
    X, y = make_classification(100, 5, seed=4)
    prob = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(0.01), signs=SIGNS[:5],
                      uncertainty=rs.Wasserstein(3.0, norm=norm))
    for solver in ("robust-dcd", "clarabel"):
        sol = prob.solve(X, y, solver=solver, tol=1e-7)
        assert sol.status == "optimal" and sol.gap <= 1e-6, solver
        assert np.max(np.abs(sol.w)) < 1e-5


def test_auto_takes_the_fast_route_and_refusals_name_it():
    X, y = make_classification(3000, 20, seed=1)
    prob = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(1e-3), uncertainty=rs.Wasserstein(0.05))
    assert solve_path.choose_backend(prob, X) == "robust-dcd"
    sol = prob.solve(X, y, solver="auto")
    assert sol.solver == "robust-dcd" and sol.status == "optimal"
    finite = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(0.1), uncertainty=rs.Wasserstein(0.1, kappa=1.0))
    with pytest.raises(rs.UnsupportedModelError, match="kappa = inf"):
        finite.solve(X[:50], y[:50], solver="robust-dcd")
    bounded = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(0.1), bounds=(-1, 1), uncertainty=rs.Wasserstein(0.1, norm=1))
    with pytest.raises(rs.UnsupportedModelError, match=r"Wasserstein\(norm=1\)"):
        bounded.solve(X[:50], y[:50], solver="robust-dcd")
    with pytest.raises(rs.UnsupportedModelError, match="uncertainty"):
        prob.solve(X[:50], y[:50], solver="feature-ipm")


@pytest.mark.parametrize("norm", [1, 2, np.inf])
def test_the_critical_eps_is_where_the_weights_vanish(norm):
    """ε_c of rs.critical_radius: Clarabel's answer is w = 0 just above it and not just below it; rs.path starts
    there and certifies its points on the fast route."""
    X, y = make_classification(150, 5, seed=4)
    prob = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(0.01) + rs.L1(0.01), signs=SIGNS[:5],
                      uncertainty=rs.Wasserstein(0.1, norm=norm))
    eps = rs.critical_radius(prob, X, y)
    above = prob.solve(X, y, solver="clarabel", radius=1.001 * eps, tol=1e-9)
    below = prob.solve(X, y, solver="clarabel", radius=0.99 * eps, tol=1e-9)
    assert np.max(np.abs(above.w)) < 1e-5 and np.max(np.abs(below.w)) > 1e-2
    path = rs.path(prob, X, y, solver="robust-dcd", n_points=4)
    assert path.critical == pytest.approx(eps) and np.all(np.asarray(path.statuses) == "optimal")
    with pytest.raises(ValueError, match="kappa = inf"):
        rs.critical_radius(rs.Problem(penalty=rs.L2(0.1), uncertainty=rs.Wasserstein(0.1, kappa=1.0)), X, y)

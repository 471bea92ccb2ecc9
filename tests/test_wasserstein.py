"""The Wasserstein ball: against a CVXPY model of the JMLR 2019 form written here, its κ = ∞ limit, its worst case."""

import cvxpy as cp
import numpy as np
import pytest

import robustsvm as rs
from robustsvm.duals.wasserstein import certify

from .conftest import make_classification

DUAL = {1: np.inf, 2: 2, np.inf: 1}


def jmlr_model(X, y01, loss, lam2, lam1, signs, eps, kappa, norm, weights):
    """Shafieezadeh-Abadeh, Kuhn & Esfahani (2019): min λε + Σ ĉ_i s_i, s_i ≥ ℓ(m_i), s_i ≥ ℓ(−m_i) − λκ, ‖w‖_* ≤ λ."""
    n, d = X.shape
    y = 2.0 * y01 - 1.0
    c = weights / weights.sum()
    w, b, lam, s = cp.Variable(d), cp.Variable(), cp.Variable(), cp.Variable(n)
    m = cp.multiply(y, X @ w + b)
    ell = (lambda t: cp.pos(1 - t)) if loss == "hinge" else (lambda t: cp.logistic(-t))
    cons = [s >= ell(m), cp.norm(w, DUAL[norm]) <= lam, w[signs > 0] >= 0, w[signs < 0] <= 0]
    if np.isfinite(kappa):
        cons.append(s >= ell(-m) - lam * kappa)
    obj = lam2 / 2 * cp.sum_squares(w) + lam1 * cp.norm1(w) + lam * eps + c @ s
    prob = cp.Problem(cp.Minimize(obj), cons)
    prob.solve(solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    return prob.value, w.value, float(b.value)


@pytest.mark.parametrize("loss", ["hinge", "logistic"])
@pytest.mark.parametrize("kappa", [np.inf, 0.5])
@pytest.mark.parametrize("norm", [1, 2, np.inf])
def test_against_the_jmlr_model(loss, kappa, norm):
    X, y = make_classification(70, 5, seed=5)
    signs = np.array([1, -1, 0, 0, 1])
    weights = np.random.default_rng(1).uniform(0.5, 2.0, 70)
    lam2, lam1, eps = 0.02, 0.005, 0.08
    prob = rs.Problem(loss=rs.Hinge() if loss == "hinge" else rs.Logistic(), penalty=rs.L2(lam2) + rs.L1(lam1),
                      signs=signs, uncertainty=rs.Wasserstein(eps, kappa=kappa, norm=norm))
    sol = prob.solve(X, y, solver="clarabel", sample_weight=weights, tol=1e-9)
    assert sol.status == "optimal" and sol.gap < 1e-6
    value, w_ref, b_ref = jmlr_model(X, y, loss, lam2, lam1, signs, eps, kappa, norm, weights)
    # the package's objective at the test model's point is the test model's value there (same function) ...
    model = prob.normalize(X, y, sample_weight=weights)
    ref = certify(model, w_ref, b_ref, status="max_iter")
    assert abs(ref.objective - value) < 1e-7 * max(1.0, value)
    # ... and the two optima agree within the package's certified gaps
    assert abs(sol.objective - ref.objective) <= sol.gap + ref.gap + 1e-9
    assert sol.objective - sol.gap <= value + 1e-8  # the bound is below the independent model's optimum
    assert np.all(sol.w[signs > 0] >= 0) and np.all(sol.w[signs < 0] <= 0)


@pytest.mark.parametrize("loss", [rs.Hinge(), rs.Logistic()])
def test_infinite_kappa_is_the_norm_regularized_model(loss):
    """p = ∞ transport: the dual norm is ‖w‖₁, so the ball adds ε‖w‖₁ — an L1 penalty of ε more."""
    X, y = make_classification(90, 6, seed=8)
    eps, lam1 = 0.05, 0.01
    ball = rs.Problem(loss=loss, penalty=rs.L2(0.1) + rs.L1(lam1), uncertainty=rs.Wasserstein(eps, norm=np.inf))
    plain = rs.Problem(loss=loss, penalty=rs.L2(0.1) + rs.L1(lam1 + eps))
    a, b = ball.solve(X, y, tol=1e-10), plain.solve(X, y, tol=1e-10)
    assert abs(a.objective - b.objective) <= a.gap + b.gap + 1e-10
    np.testing.assert_allclose(a.w, b.w, atol=1e-5)
    w = np.random.default_rng(0).normal(size=6)
    assert abs(ball.objective(X, y, w, 0.3) - plain.objective(X, y, w, 0.3)) < 1e-12


def test_the_budget_is_the_exact_minimum_over_lambda():
    rng = np.random.default_rng(3)
    m, c, w = rng.normal(size=40), rng.uniform(0.1, 1.0, 40), rng.normal(size=4)
    for loss in (rs.Hinge(), rs.Logistic()):
        for kappa in (0.3, 2.0):
            ball = rs.Wasserstein(0.2, kappa=kappa, norm=2)
            value, lam = ball.budget(loss, m, c, w)
            grid = np.linspace(np.linalg.norm(w), 20.0, 400_001)
            f = [c.sum() * 0.2 * t + c @ np.maximum(loss.value(m), loss.value(-m) - t * kappa) for t in grid[::100]]
            assert value <= min(f) + 1e-12 and value >= min(f) - 1e-3
            assert lam >= np.linalg.norm(w)


@pytest.mark.parametrize("kappa", [np.inf, 0.4])
def test_worst_case_distribution_is_in_the_ball_and_below_the_dual(kappa):
    X, y = make_classification(60, 4, seed=2)
    ball = rs.Wasserstein(0.1, kappa=kappa, norm=2)
    prob = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(0.05), uncertainty=ball)
    sol = prob.solve(X, y, tol=1e-10)
    yy = 2.0 * y - 1.0
    c = np.full(60, 1 / 60)
    wc = ball.worst_case(rs.Hinge(), X, yy, sol.w, sol.b, c)
    assert abs(wc.weight.sum() - 1.0) < 1e-12 and np.all(wc.weight >= 0)
    # the transport cost, computed here from the atoms: original atoms moved, and flipped copies
    moved = wc.X[:60] - X
    cost = float(wc.weight[:60] @ np.linalg.norm(moved, axis=1)) + (kappa * wc.weight[60:].sum() if wc.y.size > 60
                                                                    else 0.0)
    assert cost <= 0.1 + 1e-12
    value = float(wc.weight @ np.maximum(0.0, 1 - wc.y * (wc.X @ sol.w + sol.b)))
    assert abs(value - wc.value) < 1e-12
    assert value <= wc.bound + 1e-12  # weak duality: no distribution in the ball beats the dual value
    assert wc.bound - value < 1e-6  # the hinge's supremum is attained (the moved atom stays in the linear piece)
    # the bound is the loss part of the certified objective
    assert abs(wc.bound + 0.025 * sol.w @ sol.w - sol.objective) < 1e-9


def test_integer_weights_are_duplicated_samples():
    X, y = make_classification(40, 3, seed=6)
    k = np.random.default_rng(0).integers(1, 4, 40)
    prob = rs.Problem(loss=rs.Logistic(), penalty=rs.L2(0.05), uncertainty=rs.Wasserstein(0.1, kappa=1.0, norm=1))
    a = prob.solve(X, y, sample_weight=k.astype(float), tol=1e-10)
    b = prob.solve(np.repeat(X, k, axis=0), np.repeat(y, k), tol=1e-10)
    assert abs(a.objective - b.objective) <= a.gap + b.gap + 1e-10


def test_bad_input_and_refusals():
    X, y = make_classification(30, 3, seed=1)
    with pytest.raises(ValueError, match="eps"):
        rs.Wasserstein(-0.1)
    with pytest.raises(ValueError, match="kappa"):
        rs.Wasserstein(0.1, kappa=0.0)
    with pytest.raises(ValueError, match="norm"):
        rs.Wasserstein(0.1, norm=3)
    with pytest.raises(ValueError, match="Lipschitz"):
        rs.Problem(loss=rs.SquaredHinge(), penalty=rs.L2(0.1), uncertainty=rs.Wasserstein(0.1)).solve(X, y)
    with pytest.raises(rs.UnsupportedModelError, match="uncertainty"):
        rs.Problem(penalty=rs.L2(0.1), uncertainty=rs.Wasserstein(0.1)).solve(X, y, solver="dcd")
    with pytest.raises(rs.UnsupportedModelError, match="kappa = inf"):
        rs.Problem(penalty=rs.L2(0.1), uncertainty=rs.Wasserstein(0.1, kappa=1.0)).solve(X, y, solver="robust-dcd")


def test_a_radius_at_solve_time_replaces_eps():
    X, y = make_classification(50, 3, seed=4)
    prob = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(0.1), uncertainty=rs.Wasserstein(0.5, kappa=1.0))
    a = prob.solve(X, y, radius=0.05, tol=1e-10)
    b = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(0.1), uncertainty=rs.Wasserstein(0.05, kappa=1.0)).solve(
        X, y, tol=1e-10)
    assert abs(a.objective - b.objective) <= a.gap + b.gap + 1e-10


@pytest.mark.parametrize("kappa", [np.inf, 1.0])
@pytest.mark.parametrize("norm", [1, 2, np.inf])
def test_without_a_penalty_the_ball_alone_is_certified(kappa, norm):
    """No L2: the conjugate is finite only on a set; the redundant ‖w*‖_* ≤ P/(Cε) keeps the bound tight."""
    X, y = make_classification(80, 4, seed=12)
    prob = rs.Problem(loss=rs.Hinge(), uncertainty=rs.Wasserstein(0.1, kappa=kappa, norm=norm))
    sol = prob.solve(X, y, solver="clarabel", tol=1e-9)
    value, _, _ = jmlr_model(X, y, "hinge", 0.0, 0.0, np.zeros(4), 0.1, kappa, norm, np.ones(80))
    assert sol.status == "optimal" and sol.gap < 1e-6
    assert sol.objective - sol.gap <= value + 1e-8 and sol.objective >= value - 1e-7


@pytest.mark.parametrize("kappa", [np.inf, 0.7])
def test_problem_certify_takes_a_point_from_elsewhere(kappa):
    """The JMLR model's optimum, certified from its margins alone: tight for κ = ∞; for a finite κ the samples at
    the kink split their weight in a way the margins do not show, so the bound is valid but looser."""
    X, y = make_classification(60, 4, seed=9)
    signs = np.array([1, 0, 0, -1])
    prob = rs.Problem(loss=rs.Logistic(), penalty=rs.L2(0.05), signs=signs,
                      uncertainty=rs.Wasserstein(0.1, kappa=kappa, norm=2))
    value, w_ref, b_ref = jmlr_model(X, y, "logistic", 0.05, 0.0, signs, 0.1, kappa, 2, np.ones(60))
    cert = prob.certify(X, y, w_ref, b_ref)
    assert cert.feasible and abs(cert.objective - value) < 1e-7
    assert cert.bound <= value + 1e-9  # weak duality against the independent model's optimum
    if np.isfinite(kappa):
        assert cert.gap < 2e-2
    else:
        assert cert.status == "optimal" and cert.gap < 1e-6
    bad = prob.certify(X, y, -np.abs(w_ref) - 0.1, b_ref)  # the first weight breaks its sign
    assert not bad.feasible and bad.status == "infeasible" and bad.gap == np.inf
    assert bad.projected_objective >= value - 1e-9 and bad.projected_gap >= bad.projected_objective - value - 1e-9


@pytest.mark.parametrize("norm", [2, np.inf])
@pytest.mark.parametrize("intercept", [True, False])
def test_fast_route_for_an_infinite_kappa(norm, intercept):
    """κ = ∞ is the penalty Cε‖w‖_*: logistic-dcd solves it (a 2-ball with A = Cε, or λ1 + Cε) and agrees."""
    X, y = make_classification(150, 8, seed=2)
    prob = rs.Problem(loss=rs.Logistic(), penalty=rs.L2(0.05) + rs.L1(0.01), signs=[1, -1, 0, 0, 1, 0, 0, 0],
                      uncertainty=rs.Wasserstein(0.1, norm=norm), intercept=intercept)
    fast = prob.solve(X, y, solver="logistic-dcd", tol=1e-9, random_state=0)
    ref = prob.solve(X, y, solver="clarabel", tol=1e-10)
    assert fast.status == "optimal" and fast.gap <= 1e-9 * max(1.0, fast.objective)
    assert abs(fast.objective - ref.objective) <= fast.gap + ref.gap + 1e-12


def test_fast_route_refuses_a_finite_kappa_and_the_one_norm():
    X, y = make_classification(40, 3, seed=1)
    for ball in (rs.Wasserstein(0.1, kappa=1.0), rs.Wasserstein(0.1, norm=1)):
        with pytest.raises(rs.UnsupportedModelError, match="kappa = inf"):
            rs.Problem(loss=rs.Logistic(), penalty=rs.L2(0.1), uncertainty=ball).solve(X, y, "logistic-dcd")

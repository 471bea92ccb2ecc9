"""The one objective module, checked against formulas written here independently."""

from __future__ import annotations

import numpy as np
import pytest

import robustsvm as rs
from robustsvm import objective

from .conftest import make_classification


def _by_hand(X, y01, w, b, *, l2, l1, mu, radius, squared, mean):
    y = np.where(y01 == 1, 1.0, -1.0)
    margin = y * (X @ w + b) - radius * np.sum(np.abs(w))  # Box(radius), unit widths: σ(z) = ‖z‖₁
    loss = np.maximum(0.0, 1.0 - margin) ** (2 if squared else 1)
    c = np.full(len(y), 1.0 / len(y)) if mean else np.ones(len(y))
    return 0.5 * l2 * w @ w + l1 * np.abs(w).sum() + 0.5 * mu * b * b + c @ loss


@pytest.mark.parametrize("squared", [False, True])
@pytest.mark.parametrize("mean", [False, True])
def test_objective_matches_the_formula(squared, mean):
    X, y = make_classification(30, 4, seed=1)
    rng = np.random.default_rng(0)
    w, b = rng.normal(size=4), 0.3
    loss = (rs.SquaredHinge if squared else rs.Hinge)(reduction="mean" if mean else "sum")
    prob = rs.Problem(loss=loss, penalty=rs.L2(0.7) + rs.L1(0.2), uncertainty=rs.Box(0.05), intercept=rs.L2(1.5))
    model = prob.normalize(X, y)
    expected = _by_hand(X, y, w, b, l2=0.7, l1=0.2, mu=1.5, radius=0.05, squared=squared, mean=mean)
    assert objective.objective(model, w, b) == pytest.approx(expected, rel=1e-12)
    assert prob.objective(X, y, w, b) == pytest.approx(expected, rel=1e-12)


def test_violation_of_signs_and_hard_margin():
    X, y = make_classification(20, 3, seed=4)
    prob = rs.Problem(loss=rs.HardMargin(), penalty=rs.L2(1.0), signs=[1, -1, 0], intercept=False)
    model = prob.normalize(X, y)
    w = np.array([-0.2, -0.1, 0.5])
    ym = np.where(y == 1, 1.0, -1.0)
    expected = max(0.2, float(np.max(1.0 - ym * (X @ w))))
    assert objective.violation(model, w, 0.0) == pytest.approx(expected)


@pytest.mark.parametrize("loss", [rs.Hinge(), rs.SquaredHinge(), rs.HardMargin()])
def test_kernel_objective_equals_the_linear_objective_for_the_linear_kernel(loss):
    """With k(x, x') = x·x', the expansion a over support vectors S is w = Σ a_j x_j."""
    X, y = make_classification(25, 3, seed=7)
    rng = np.random.default_rng(1)
    support = np.array([0, 3, 5, 11])
    a, b = rng.normal(size=4), -0.2
    kprob = rs.Problem(loss=loss, penalty=rs.L2(0.4), intercept=rs.L2(0.8), kernel=rs.Linear())
    prob = rs.Problem(loss=loss, penalty=rs.L2(0.4), intercept=rs.L2(0.8))
    w = X[support].T @ a
    km = kprob.normalize(X, y)
    assert objective.kernel_scores(km, a, X[support], b)[0] == pytest.approx(prob.objective(X, y, w, b), rel=1e-12)
    assert objective.kernel_scores(km, a, X[support], b)[1] == pytest.approx(prob.violation(X, y, w, b), abs=1e-12)


def test_kernel_solution_objective_is_recomputed_by_the_objective_module():
    X, y = make_classification(40, 3, seed=3)
    prob = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(0.1), intercept=rs.L2(1.0), kernel=rs.RBF(1.0))
    for solver in ("m3", "clarabel"):
        sol = prob.solve(X, y, solver=solver, tol=1e-8, max_iter=50000)
        model = prob.normalize(X, y)
        value = objective.kernel_scores(model, sol.dual_coef, sol.support_vectors, sol.b)[0]
        assert sol.objective == value
        # and by hand: (λ/2) aᵀK_SS a + (μ/2) b² + mean hinge of y f(x)
        K = rs.RBF(1.0)(X, sol.support_vectors)
        f = K @ sol.dual_coef + sol.b
        ym = np.where(y == 1, 1.0, -1.0)
        Kss = rs.RBF(1.0)(sol.support_vectors, sol.support_vectors)
        by_hand = (0.05 * sol.dual_coef @ Kss @ sol.dual_coef + 0.5 * sol.b**2
                   + np.mean(np.maximum(0, 1 - ym * f)))
        assert value == pytest.approx(by_hand, rel=1e-10)


@pytest.mark.parametrize("squared", [False, True])
def test_optimal_intercept_is_a_minimizer(squared):
    rng = np.random.default_rng(3)
    z, y, c = rng.normal(size=60), np.where(rng.random(60) < 0.4, 1.0, -1.0), rng.random(60)

    def phi(b):
        r = np.maximum(0.0, 1.0 - y * (z + b))
        return c @ (r * r if squared else r)

    b_star = objective.optimal_intercept(z, y, c, squared=squared)
    grid = np.linspace(-4, 4, 4001)
    assert phi(b_star) <= min(phi(g) for g in grid) + 1e-12


@pytest.mark.parametrize("squared", [False, True])
def test_nominal_soft_margin_is_the_objective_from_the_product(squared):
    """``nominal_soft_margin`` (one compiled pass) against the closed form in NumPy, with an L1 term and an
    intercept; ``objective_from_products`` adds the intercept's own term and leaves robust models to the margins."""
    from robustsvm.objective import nominal_soft_margin, objective_from_products

    rng = np.random.default_rng(11)
    n, d = 120, 9
    X, w = rng.standard_normal((n, d)), rng.standard_normal(d)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    c = rng.random(n)
    z, b, l2, l1 = X @ w, 0.3, 0.7, 0.2
    e = np.maximum(0.0, 1.0 - y * (z + b))
    want = 0.5 * l2 * w @ w + l1 * np.abs(w).sum() + c @ (e * e if squared else e)
    assert nominal_soft_margin(w, z, y, c, b, l2, l1, squared) == pytest.approx(want, rel=1e-13)
    loss = rs.SquaredHinge() if squared else rs.Hinge()
    model = rs.Problem(loss=loss, penalty=rs.L2(l2) + rs.L1(l1), intercept=rs.L2(0.5)).normalize(X, y)
    assert objective_from_products(model, w, b, z) == pytest.approx(objective.objective(model, w, b), rel=1e-13)
    robust = rs.Problem(loss=loss, penalty=rs.L2(l2), uncertainty=rs.Box(0.1)).normalize(X, y)
    assert objective_from_products(robust, w, b, z) is None

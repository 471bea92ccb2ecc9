"""Robust models without a penalty (λ1 = λ2 = 0) are certified through a proved bound on the optimal weights.

References: CVXPY models written here from the maths (docs/certificates.md, "Models without a penalty"), and a
brute-force search along rays for the bound on the weights.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

import robustsvm as rs
from robustsvm.certificates import duality
from robustsvm.certificates.reach import _onto_simplices, unpenalized_reach

from .conftest import make_classification

D = 5
SHAPE = np.eye(D) + 0.6 * np.ones((D, D)) / D  # an ellipsoid whose axes are not the features'


def _sets():
    return {"box": rs.Box(0.1), "ball2": rs.Ball(0.1), "ballinf": rs.Ball(0.1, p=np.inf),
            "ball1": rs.Ball(0.1, p=1), "ball1.5": rs.Ball(0.1, p=1.5),
            "ellipsoid": rs.Ellipsoid(shape=SHAPE, radius=0.1)}


def _sigma_cvx(name, w):
    """σ_V(w) of the unit set, written from its definition."""
    if name == "box":
        return cp.norm(w, 1)
    if name == "ball2":
        return cp.norm(w, 2)
    if name == "ballinf":
        return cp.norm(w, 1)
    if name == "ball1":
        return cp.norm(w, "inf")
    if name == "ball1.5":
        return cp.norm(w, 3)  # the dual exponent of p = 1.5
    return cp.norm(np.linalg.cholesky(SHAPE).T @ w, 2)


def _reference(name, X, s, intercept):
    """The unpenalized robust hinge as a CVXPY model: its optimum, a minimizer, and the margins' multipliers."""
    n, d = X.shape
    w, b, xi = cp.Variable(d), cp.Variable(), cp.Variable(n)
    bb = b if intercept else 0.0
    margins = cp.multiply(s, X @ w + bb) - 0.1 * _sigma_cvx(name, w)
    cons = [xi >= 0, xi >= 1 - margins]
    prob = cp.Problem(cp.Minimize(cp.sum(xi) / n), cons)
    prob.solve(solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    return prob.value, w.value, np.asarray(cons[1].dual_value, dtype=float)


@pytest.mark.parametrize("intercept", [True, False])
@pytest.mark.parametrize("name", list(_sets()))
def test_an_unpenalized_robust_model_is_certified(name, intercept):
    """Clarabel's answer is "optimal" with a gap ≤ 1e-6·max(1, |P|); the bound it reports is at most the CVXPY
    optimum, and the proved reach holds at the CVXPY minimizer (computed from the CVXPY model's own multipliers)."""
    X, y = make_classification(150, D, seed=4)
    s = np.where(y == 1, 1.0, -1.0)
    U = _sets()[name]
    prob = rs.Problem(uncertainty=U, intercept=intercept)
    sol = prob.solve(X, y, solver="clarabel")
    assert sol.status == "optimal", sol.message
    assert sol.gap <= 1e-6 * max(1.0, abs(sol.objective))
    ref_value, ref_w, ref_a = _reference(name, X, s, intercept)
    assert sol.objective - sol.gap <= ref_value + 1e-7
    assert sol.objective >= ref_value - 1e-7
    model = prob.normalize(X, y)
    a = duality.admissible_multipliers(ref_a, model.y, model.c, model.loss, model.intercept.mode)
    reach = unpenalized_reach(model, a, sol.objective)
    assert np.all(np.isfinite(reach))
    assert np.all(np.abs(ref_w) <= reach)


def _noisy(n, d, seed=0):
    """Standardized Gaussian features, labels ``sign(x·w₀ + 2ε)``: the classes' hulls overlap deeply, and their
    nearest points need many weights moved at once."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.sign(X @ rng.normal(size=d) + 2.0 * rng.normal(size=n))
    y[y == 0] = 1.0
    return (X - X.mean(axis=0)) / X.std(axis=0), y


@pytest.mark.parametrize("name", ["box", "ball2"])
def test_a_larger_noisy_unpenalized_model_is_certified(name):
    """5,000 × 30 noisy samples: Clarabel's answer is "optimal" with a gap ≤ 1e-6·max(1, |P|), the bound is at
    most the CVXPY optimum, and the proved reach holds at the CVXPY minimizer."""
    X, y = _noisy(5000, 30)
    prob = rs.Problem(uncertainty=_sets()[name])
    sol = prob.solve(X, y, solver="clarabel")
    assert sol.status == "optimal", sol.message
    assert sol.gap <= 1e-6 * max(1.0, abs(sol.objective))
    ref_value, ref_w, ref_a = _reference(name, X, y, True)
    assert sol.objective - sol.gap <= ref_value + 1e-7
    model = prob.normalize(X, y)
    a = duality.admissible_multipliers(ref_a, model.y, model.c, model.loss, model.intercept.mode)
    reach = unpenalized_reach(model, a, sol.objective)
    assert np.all(np.isfinite(reach))
    assert np.all(np.abs(ref_w) <= reach)


def test_the_l1_ball_on_the_breast_cancer_data_is_certified():
    """Standardized breast cancer data (569 × 30, strongly correlated features), ``Ball(0.1, p=1)``: the gauge is
    ``‖v‖₁``, so the hull point must bring ``v`` close to 0 in every feature; the answer is certified and sound."""
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    s = np.where(y == 1, 1.0, -1.0)
    sol = rs.Problem(uncertainty=rs.Ball(0.1, p=1)).solve(X, y, solver="clarabel")
    assert sol.status == "optimal", sol.message
    ref_value, _, _ = _reference("ball1", X, s, True)
    assert sol.objective - sol.gap <= ref_value + 1e-7


def test_the_hull_steps_project_onto_the_classes_simplices():
    """The sorting projection onto the product of two simplices is the nearest point a CVXPY model finds."""
    rng = np.random.default_rng(3)
    for _ in range(12):
        n = int(rng.integers(2, 30))
        z = rng.normal(size=n) * 10 ** rng.uniform(-3, 2)
        classes = [np.arange(0, n // 2), np.arange(n // 2, n)]
        lam = _onto_simplices(z, classes)
        x = cp.Variable(n)
        cp.Problem(cp.Minimize(cp.sum_squares(x - z)), [x >= 0] + [cp.sum(x[idx]) == 1 for idx in classes]).solve(
            solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
        assert np.all(lam >= 0) and all(abs(lam[idx].sum() - 1) <= 1e-12 for idx in classes)
        assert np.sum((lam - z) ** 2) <= np.sum((x.value - z) ** 2) + 1e-9
        assert np.max(np.abs(lam - x.value)) <= 1e-6


R_TINY = 0.1


def _tiny():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(14, 2))
    y = np.where(np.arange(14) % 2 == 0, 1, -1)
    X[:, 0] += 0.8 * y
    return X, y


def _min_over_b(X, y, w, r):
    """``min_b (1/n) Σ_i max(0, 1 − y_i(x_i·w + b) + r‖w‖₂)``: convex piecewise linear in ``b``, so the minimum is at
    a breakpoint ``b = y_i(1 + r‖w‖) − x_i·w``."""
    t = 1 + r * np.linalg.norm(w)
    bs = y * t - X @ w
    vals = np.maximum(0.0, t - y[None, :] * (X @ w + bs[:, None])).mean(axis=1)
    return float(vals.min())


def test_the_reach_holds_along_every_ray_of_a_tiny_problem():
    """Brute force on 14 samples in the plane, a 2-ball: along 360 rays from the minimizer, the farthest ``w`` whose
    best intercept keeps the objective at a level (the optimum's, and above it; bisection on a convex function of
    the scale) is within the reach; and ``P(w, b) ≥ K(a) + (ρ(a) − ‖v(a)‖₂)‖w‖₂`` at every sampled point."""
    X, y = _tiny()
    prob = rs.Problem(uncertainty=rs.Ball(R_TINY))
    sol = prob.solve(X, y, solver="clarabel")
    model = prob.normalize(X, y)
    _, w_ref, ref_a = _reference_ball(X, y, R_TINY)
    a = duality.admissible_multipliers(ref_a, model.y, model.c, model.loss, model.intercept.mode)
    for level in (sol.objective, sol.objective + 0.05):  # the reach holds for every w with P(w) ≤ the level
        reach = unpenalized_reach(model, a, level)
        assert np.all(np.isfinite(reach))
        far = 0.0
        for ang in np.linspace(0, 2 * np.pi, 360, endpoint=False):  # rays from the minimizer: a convex sub-level set
            direction = np.array([np.cos(ang), np.sin(ang)])
            lo, hi = 0.0, 1.0
            while _min_over_b(X, y, w_ref + hi * direction, R_TINY) <= level:
                lo, hi = hi, 2 * hi
            for _ in range(60):
                mid = 0.5 * (lo + hi)
                lo, hi = (mid, hi) if _min_over_b(X, y, w_ref + mid * direction, R_TINY) <= level else (lo, mid)
            assert np.all(np.abs(w_ref + lo * direction) <= reach)
            far = max(far, float(np.max(np.abs(w_ref + lo * direction) / reach)))
        assert far > 0.01  # the search met points the bound is about
    # the inequality behind it, at the mixed point's ingredients recomputed here (any balanced a in the box)
    rng = np.random.default_rng(0)
    c = np.full(len(y), 1 / len(y))
    for _ in range(20):
        a = rng.random(len(y)) * c
        pos, neg = a[y > 0].sum(), a[y < 0].sum()
        a = np.where(y > 0, a * min(1, neg / pos), a * min(1, pos / neg))
        v = X.T @ (a * y)
        K, rho, gamma = a.sum(), R_TINY * a.sum(), np.linalg.norm(v)
        for _ in range(20):
            w, b = rng.normal(size=2) * 10 ** rng.uniform(-2, 2), rng.normal() * 3
            P = np.maximum(0.0, 1 - y * (X @ w + b) + R_TINY * np.linalg.norm(w)).mean()
            assert P >= K + (rho - gamma) * np.linalg.norm(w) - 1e-12


def _reference_ball(X, y, r):
    n, d = X.shape
    w, b, xi = cp.Variable(d), cp.Variable(), cp.Variable(n)
    cons = [xi >= 0, xi >= 1 - (cp.multiply(y, X @ w + b) - r * cp.norm(w, 2))]
    prob = cp.Problem(cp.Minimize(cp.sum(xi) / n), cons)
    prob.solve(solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    return prob.value, w.value, np.asarray(cons[1].dual_value, dtype=float)


def test_separable_data_keep_the_bound_zero():
    """Data separated with room to spare: the optimum is 0, the bound 0 is already tight; the answer is
    "optimal" with an objective ~0."""
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 60)
    X = rng.normal(size=(60, 3)) * 0.3 + 4.0 * (2 * y - 1)[:, None]
    sol = rs.Problem(uncertainty=rs.Ball(0.1)).solve(X, y, solver="clarabel")
    assert sol.status == "optimal"
    assert sol.objective <= 1e-6
    assert sol.objective - sol.gap == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("uncertainty", [rs.Ball(0.1), rs.Box(0.1), rs.Ellipsoid(shape=SHAPE, radius=0.1)])
def test_a_penalized_model_never_asks_for_the_reach(uncertainty, monkeypatch):
    """With a penalty the certifier's path is the one it had: the reach is never computed (a call would raise),
    so the bound is the same to the bit."""
    X, y = make_classification(100, D, seed=2)

    def refuse(*_args, **_kwargs):
        raise AssertionError("the reach was asked for a penalized model")

    for penalty in (rs.L2(1e-3), rs.L1(1e-3), rs.L2(1e-3) + rs.L1(1e-4)):
        prob = rs.Problem(penalty=penalty, uncertainty=uncertainty)
        before = prob.solve(X, y, solver="clarabel")
        monkeypatch.setattr(duality, "unpenalized_reach", refuse)
        after = prob.solve(X, y, solver="clarabel")
        monkeypatch.undo()
        assert after.gap == before.gap and after.objective == before.objective and after.status == before.status

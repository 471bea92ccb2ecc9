"""Models without a penalty or set (``rs.Problem()``'s default) are certified through a bound on the optimal weights
proved from the data.

References: the hinge and squared-hinge models as linear / quadratic programs solved by scipy's HiGHS or a CVXPY
model written here from the maths (docs/certificates.md, "Models without a penalty or set"), and brute force along
rays for the bound on the weights.
"""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pytest
from scipy.optimize import linprog

import robustsvm as rs
from robustsvm.certificates import duality
from robustsvm.certificates.reach import nominal_reach, nominal_repair


def _noisy(n, d, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * rng.uniform(0.2, 5.0, d)
    y = np.sign(X[:, 0] / X[:, 0].std() + rng.standard_normal(n))
    y[y == 0] = 1
    return X, y


def _hinge_lp(X, y, c, intercept, signs=None):
    """The optimum of ``Σ_i c_i (1 − y_i(x_i·w + b))_+`` over the signs' box, by HiGHS (a simplex)."""
    n, d = X.shape
    nb = 1 if intercept else 0
    cost = np.concatenate([np.zeros(d + nb), c])
    A = np.hstack([-(y[:, None] * X)] + ([-y[:, None]] if intercept else []) + [-np.eye(n)])
    box = [(None, None)] * d if signs is None else [(0, None) if s > 0 else (None, 0) if s < 0 else (None, None)
                                                    for s in signs]
    res = linprog(cost, A_ub=A, b_ub=-np.ones(n), bounds=box + [(None, None)] * nb + [(0, None)] * n,
                  method="highs", options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10})
    assert res.status == 0
    return float(res.fun), res.x[:d], (float(res.x[d]) if intercept else 0.0)


def _squared_hinge_value(X, y, c, intercept):
    """The squared-hinge optimum as a CVXPY model."""
    d = X.shape[1]
    w, b = cp.Variable(d), cp.Variable()
    m = cp.multiply(y, X @ w + (b if intercept else 0.0))
    prob = cp.Problem(cp.Minimize(c @ cp.square(cp.pos(1 - m))))
    prob.solve(solver="CLARABEL", tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11)
    return float(prob.value)


@pytest.mark.parametrize("intercept", [True, False, rs.L2(1.0)])
@pytest.mark.parametrize("seed", range(3))
def test_the_default_model_is_certified(intercept, seed):
    """Hinge, no penalty, noisy data that no hyperplane separates: Clarabel's answer is "optimal" with a gap
    ≤ 1e-6·max(1, |P|) and its lower bound is at most the optimum HiGHS finds (free or absent intercept)."""
    X, y = _noisy(400 + 300 * seed, 4 + 3 * seed, seed)
    sol = rs.Problem(intercept=intercept).solve(X, y, solver="clarabel")
    assert sol.status == "optimal", sol.message
    assert sol.gap <= 1e-6 * max(1.0, abs(sol.objective))
    if intercept is True or intercept is False:
        best, _, _ = _hinge_lp(X, y, np.full(len(y), 1 / len(y)), intercept)
        assert sol.objective - sol.gap <= best + 1e-9
        assert abs(sol.objective - best) <= sol.gap + 1e-8


def test_the_squared_hinge_without_penalty_is_certified():
    X, y = _noisy(600, 6, 5)
    for intercept in (True, False):
        sol = rs.Problem(loss=rs.SquaredHinge(), intercept=intercept).solve(X, y, solver="clarabel")
        assert sol.status == "optimal", sol.message
        best = _squared_hinge_value(X, y, np.full(len(y), 1 / len(y)), intercept)
        assert sol.objective - sol.gap <= best + 1e-9
        assert abs(sol.objective - best) <= sol.gap + 1e-8


@pytest.mark.parametrize("seed", range(4))
def test_signs_without_penalty_are_certified(seed):
    """Signs that clip some features: the features the signs hold at 0 carry their own multiplier, which the bound
    counts; the lower bound is at most HiGHS's optimum of the signed program, and the weights keep their signs."""
    rng = np.random.default_rng(10 + seed)
    X, y = _noisy(300, 6, 10 + seed)
    signs = rng.choice([-1, 0, 1], 6)
    intercept = bool(seed % 2)
    sol = rs.Problem(signs=signs, intercept=intercept).solve(X, y, solver="clarabel")
    best, _, _ = _hinge_lp(X, y, np.full(len(y), 1 / len(y)), intercept, signs)
    assert sol.status == "optimal", sol.message
    assert sol.objective - sol.gap <= best + 1e-9
    assert np.all(signs * sol.w >= -1e-12)


def test_the_reach_holds_along_rays(monkeypatch):
    """The proved radius bounds every point whose objective is at most the level: at 1.01 times the radius along
    random directions of (w, b) the objective exceeds the level; the HiGHS minimizer lies within it."""
    X, y = _noisy(120, 2, 3)
    seen = []

    def keep(model, a):
        seen.append(nominal_repair(model, a))
        return seen[-1]

    monkeypatch.setattr(duality, "nominal_repair", keep)
    prob = rs.Problem()
    sol = prob.solve(X, y, solver="clarabel")
    assert sol.status == "optimal" and seen
    model = prob.normalize(X, y)
    _, w_ref, b_ref = _hinge_lp(X, y, model.c, True)
    rng = np.random.default_rng(0)
    for level in (sol.objective, sol.objective + 0.05):
        R = nominal_reach(model, seen[-1], level)[0]
        assert np.isfinite(R)
        assert np.linalg.norm(np.append(w_ref, b_ref)) <= R
        for _ in range(500):
            u = rng.standard_normal(3)
            w_b = 1.01 * R * u / np.linalg.norm(u)
            assert float(np.mean(np.maximum(0.0, 1 - y * (X @ w_b[:2] + w_b[2])))) > level


def test_the_inequality_behind_the_reach():
    """``P(θ) ≥ K_ε(a) − ṽ(a)·θ + Σ_i ε_i |x̃_i·θ|`` for random admissible ``a`` and random ``θ`` (the move of each
    ``a_i`` by ``±ε_i`` against the sign of ``y_i x̃_i·θ``), the hinge's ``K_ε = Σ_i (a_i − ε_i)``."""
    X, y = _noisy(50, 3, 4)
    n = len(y)
    c = np.full(n, 1 / n)
    Xt = np.hstack([X, np.ones((n, 1))])
    rng = np.random.default_rng(1)
    for _ in range(200):
        a = rng.random(n) * c
        eps = np.minimum(a, c - a)
        theta = rng.standard_normal(4) * 10 ** rng.uniform(-2, 2)
        P = float(c @ np.maximum(0.0, 1 - y * (Xt @ theta)))
        bound = (a - eps).sum() - (Xt.T @ (a * y)) @ theta + eps @ np.abs(Xt @ theta)
        assert P >= bound - 1e-12


def test_features_of_lower_rank_stay_uncertified():
    """A repeated feature leaves a direction the data do not bound: no bound on the weights is proved, and the answer
    says it is not certified (and why) rather than claiming a gap."""
    X, y = _noisy(300, 3, 7)
    X = np.hstack([X, X[:, :1]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = rs.Problem().solve(X, y, solver="clarabel")
    assert sol.status != "optimal"
    assert "penalty" in sol.message


def test_a_model_with_a_set_keeps_its_own_route(monkeypatch):
    """A robust model never takes the nominal route: its bound comes from the set."""
    X, y = _noisy(200, 4, 8)

    def refuse(*_args, **_kwargs):
        raise AssertionError("the nominal bound was asked for a robust model")

    import robustsvm.certificates.reach as reach

    monkeypatch.setattr(reach, "nominal_reach", refuse)
    sol = rs.Problem(uncertainty=rs.Ball(0.1)).solve(X, y, solver="clarabel")
    assert sol.status == "optimal"

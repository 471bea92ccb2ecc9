"""Answers that used to be wrong without a word: every backend's gap must bound its distance to the optimum.

The optimum is always computed independently: Clarabel on a well-scaled copy of the model (same
objective, variables rescaled), cross-checked where it matters against a CVXPY formulation written
here from the model's definition.
"""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pytest

import robustsvm as rs
from robustsvm.backends.registry import get_backend
from robustsvm.exceptions import ConvergenceWarning, SolverError, UnsupportedModelError


def _solve(problem, X, y, solver, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return problem.solve(X, y, solver, **options)


def _hand_hinge_box(X, y01, lam, radius):
    """min (λ/2)‖w‖² + mean max(0, 1 − y(x·w + b) + r‖w‖₁), written here from the definition."""
    y = 2.0 * y01 - 1.0
    w, b = cp.Variable(X.shape[1]), cp.Variable()
    margin = cp.multiply(y, X @ w + b) - radius * cp.norm1(w)
    prob = cp.Problem(cp.Minimize(0.5 * lam * cp.sum_squares(w) + cp.sum(cp.pos(1 - margin)) / X.shape[0]))
    prob.solve(solver="CLARABEL")
    return prob.value


def _assert_certified(sol, optimum, rtol=1e-8, tol=1e-5):
    """The reported gap bounds the distance to the optimum; an ``optimal`` status means a gap within ``tol``.

    ``tol`` is the relative gap the solve was asked for (a backend's declared default when none was given).
    """
    slack = rtol * max(1.0, abs(optimum))
    assert sol.objective - optimum <= sol.gap + slack, (sol.objective, optimum, sol.gap, sol.status)
    if sol.status == "optimal":
        assert sol.objective - optimum <= tol * max(1.0, abs(optimum)) + slack, (sol.objective, optimum, sol.gap)


@pytest.fixture(scope="module")
def wdbc_scaled():
    X, y = rs.datasets.load("wdbc").X[:60, :5], rs.datasets.load("wdbc").y[:60]
    return X, y


@pytest.mark.parametrize("radius", [1e5, None])
def test_scs_on_badly_scaled_data_is_not_optimal_far_from_the_optimum(wdbc_scaled, radius):
    X, y = wdbc_scaled
    big = X * 1e6
    unc = None if radius is None else rs.Box(radius)
    prob = rs.Problem(penalty=rs.L2(1e-2), uncertainty=unc)
    # the same model on X: w' = 1e6·w, λ2' = λ2·1e-12, r' = r·1e-6 (same objective value)
    copy = rs.Problem(penalty=rs.L2(1e-14), uncertainty=None if radius is None else rs.Box(radius * 1e-6))
    optimum = _solve(copy, X, y, "clarabel", tol=1e-10).objective
    hand = _hand_hinge_box(X, y, 1e-14, 0.0 if radius is None else radius * 1e-6)
    assert abs(hand - optimum) <= 1e-7 * max(1.0, optimum)
    for solver in ("scs", "clarabel"):
        sol = _solve(prob, big, y, solver)
        _assert_certified(sol, optimum)


def test_scs_sonar_polyhedron_with_per_sample_radii():
    ds = rs.datasets.load("sonar")
    X, y = ds.X, ds.y
    rng = np.random.default_rng(3)
    d = X.shape[1]
    G = rng.standard_normal((3 * d, d))
    h = np.ones(3 * d)
    r = rng.uniform(0.0, 0.5, X.shape[0])
    prob = rs.Problem(loss=rs.SquaredHinge(reduction="sum"), penalty=rs.L2(0.5), intercept=rs.L2(2),
                      uncertainty=rs.Polyhedron(G, h, radius=r))
    ref = _solve(prob, X, y, "clarabel", tol=1e-10)
    assert ref.gap <= 1e-6 * ref.objective
    sol = _solve(prob, X, y, "scs")
    _assert_certified(sol, ref.objective - ref.gap, rtol=1e-9)


def test_disagreement_is_flagged_with_the_numbers():
    """A solver stopped far from the optimum while claiming optimality gets 'inaccurate' and a warning."""
    X, y = rs.datasets.load("wdbc").X[:60, :5] * 1e6, rs.datasets.load("wdbc").y[:60]
    prob = rs.Problem(penalty=rs.L2(1e-2))
    with pytest.warns(ConvergenceWarning, match="gap"):
        sol = prob.solve(X, y, "scs", solver_options={"eps_abs": 1e-2, "eps_rel": 1e-2})
    assert sol.status != "optimal"
    assert "objective" in sol.message


# ----------------------------------------------------------------- first-order and m3
def _nonseparable(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 2))
    y = (rng.random(n) < 0.5).astype(int)
    X[y == 1] += 0.3  # heavy overlap
    return X, y


def test_m3_hard_margin_on_non_separable_data_raises():
    X, y = _nonseparable()
    prob = rs.Problem(loss=rs.HardMargin(), penalty=rs.L2(1.0), intercept=False)
    with pytest.raises(SolverError, match="infeasible"):
        prob.solve(X, y, "clarabel")  # the second solver agrees the data are not separable
    with pytest.raises(SolverError, match="hard-margin"):
        _solve(prob, X, y, "m3", max_iter=2000)


def test_m3_hard_margin_separable_point_is_feasible_and_certified():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((40, 3))
    y = (X @ np.array([1.0, -2.0, 0.5]) > 0).astype(int)
    X[y == 1] += 0.5
    X[y == 0] -= 0.5
    prob = rs.Problem(loss=rs.HardMargin(), penalty=rs.L2(1.0), intercept=rs.L2(1.0))
    ref = _solve(prob, X, y, "clarabel", tol=1e-10)
    for max_iter in (3, 30, 10000):
        try:
            sol = _solve(prob, X, y, "m3", max_iter=max_iter)
        except SolverError as exc:  # an early iterate no rescaling makes feasible: refused, not returned
            assert max_iter < 10000 and "hard-margin" in str(exc)
            continue
        assert sol.violation <= 1e-12
        _assert_certified(sol, ref.objective)


@pytest.fixture(scope="module")
def wdbc_std():
    ds = rs.datasets.load("wdbc")
    X = ds.X[:150, :10]
    X = (X - X.mean(0)) / X.std(0)
    return X, ds.y[:150]


SIGNS = np.array([1, -1, 1, -1, 0, 1, -1, 0, 1, -1])


@pytest.mark.parametrize("solver", ["m3", "frank-wolfe", "pegasos", "dcd"])
@pytest.mark.parametrize("max_iter", [2, 10, 60])
def test_first_order_points_satisfy_signs_and_gaps_bound_the_distance(wdbc_std, solver, max_iter):
    X, y = wdbc_std
    intercept = False if solver == "m3" else True
    prob = rs.Problem(penalty=rs.L2(1e-2), signs=SIGNS, intercept=intercept)
    ref = _solve(prob, X, y, "clarabel", tol=1e-10)
    sol = _solve(prob, X, y, solver, max_iter=max_iter)
    assert np.all(SIGNS * sol.w >= 0.0)
    assert sol.violation == 0.0
    _assert_certified(sol, ref.objective - ref.gap, tol=get_backend(solver).defaults["tol"])


def test_m3_squared_hinge_and_pq_gaps(wdbc_std):
    X, y = wdbc_std
    prob = rs.pq_svm(1.0, 0.1, 0.05)
    ref = _solve(prob, X, y, "clarabel", tol=1e-10)
    for solver in ("m3", "pq"):
        for max_iter in (3, 50):
            sol = _solve(prob, X, y, solver, max_iter=max_iter)
            _assert_certified(sol, ref.objective - ref.gap)


# ----------------------------------------------------------------- backend behaviour
def test_highs_honours_max_iter_and_time_limit():
    ds = rs.datasets.load("wisconsin")
    prob = rs.Problem(uncertainty=rs.Box(0.1))
    with pytest.warns(ConvergenceWarning):
        sol = prob.solve(ds.X, ds.y, "highs", max_iter=5)
    assert sol.status in ("max_iter", "inaccurate")
    assert np.isfinite(sol.gap)
    with warnings.catch_warnings(record=True) as caught:  # the LP may finish within the limit, then certified
        warnings.simplefilter("always")
        sol = prob.solve(ds.X, ds.y, "highs", time_limit=0.5)
    assert sol.status in ("time_limit", "max_iter", "inaccurate", "optimal_inaccurate", "optimal")
    if sol.status == "optimal":
        assert sol.gap <= 1e-6 * max(1.0, abs(sol.objective))
    else:
        assert any(issubclass(c.category, ConvergenceWarning) for c in caught)


def test_qp_only_solvers_refuse_cone_models():
    prob = rs.Problem(uncertainty=rs.Ball(2.0))
    rows = {r["name"]: r for r in rs.solvers(prob)}
    for name in ("osqp", "highs"):
        if name in rows:
            assert rows[name]["accepts"] is False
            assert "cone" in rows[name]["reasons"][0]
    X, y = _nonseparable()
    if "osqp" in rows:
        with pytest.raises(UnsupportedModelError, match="osqp"):
            prob.solve(X, y, "osqp")
    box = {r["name"]: r for r in rs.solvers(rs.Problem(uncertainty=rs.Box(0.1)))}
    assert box.get("osqp", {"accepts": True})["accepts"]


def test_infeasibility_from_another_solver_is_checked(monkeypatch):
    """A solver's infeasibility claim on a separable model is not reported as 'not separable'."""
    from robustsvm import conic as conic_module

    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 2))
    y = (X[:, 0] > 0).astype(int)
    X[:, 0] += np.where(y == 1, 1e-3, -1e-3)  # separable with a tiny margin
    prob = rs.Problem(loss=rs.HardMargin(), penalty=rs.L2(1.0), intercept=False)
    assert np.isfinite(_solve(prob, X, y, "clarabel").objective)
    real_solve = conic_module.ConicProgram.solve

    def osqp_says_infeasible(self, solver="CLARABEL", **kw):
        res = real_solve(self, solver, **kw)
        if solver.upper() == "OSQP":
            res.status = cp.INFEASIBLE
        return res

    monkeypatch.setattr(conic_module.ConicProgram, "solve", osqp_says_infeasible)
    with pytest.raises(SolverError) as err:
        prob.solve(X, y, "osqp")
    assert "not separable" not in str(err.value)
    assert "Clarabel solves it" in str(err.value)


def test_error_names_the_solver_used(monkeypatch):
    X, y = _nonseparable()
    prob = rs.Problem(uncertainty=rs.Box(0.1))

    def broken(cls, sets, Z):
        raise cp.error.SolverError("Solver 'CLARABEL' failed.")

    monkeypatch.setattr(rs.Box, "support_many", classmethod(broken))
    with pytest.raises(SolverError) as err:
        prob.solve(X, y, "scs")
    assert "solver 'scs' returned a point" in str(err.value)
    assert "support functions" in str(err.value)


def test_clarabel_time_limit_is_reported_as_such(wdbc_std):
    X, y = wdbc_std
    prob = rs.Problem(uncertainty=rs.Ball(0.1))
    with pytest.warns(ConvergenceWarning, match="time_limit"):
        sol = prob.solve(X, y, "clarabel", solver_options={"time_limit": 1e-9})
    assert sol.status == "time_limit"
    with pytest.warns(ConvergenceWarning):
        sol = prob.solve(X, y, "clarabel", max_iter=2)
    assert sol.status == "max_iter"

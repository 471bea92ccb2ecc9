"""The compiled backends (``dcd``, ``robust-dcd``, ``feature-ipm``) at the edges: data too large to square, an
ellipsoid of condition 1e12, an optimum at ``w = 0``, and the batched solve's floating-point warnings.

The references are closed forms (the objective at ``w = 0`` minimized over ``b`` by a scalar search written
here) and the package's own certificate of the returned point (``Solution.gap``, from ``duality.certify``).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

import robustsvm as rs
from robustsvm._validation import check_fit_data
from robustsvm.backends import _second_order_cone as soc
from robustsvm.backends.feature_ipm import solve_feature_ipm_many
from robustsvm.exceptions import ConvergenceWarning
from robustsvm.model import normalize

from .conftest import standardized


@pytest.mark.parametrize("solver", ["feature-ipm", "robust-dcd", "dcd"])
def test_rows_too_large_to_square_end_with_a_clear_status(solver):
    """X × 1e160: the squared row norms overflow. The backend says so in its status and message (the user never set
    the ρ it used to complain about), so that ``solver="auto"`` can fall back on the status."""
    X, y = standardized("wdbc", 120)
    uncertainty = None if solver == "dcd" else rs.Box(0.1)
    prob = rs.Problem(penalty=rs.L2(1e-2), uncertainty=uncertainty)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        sol = prob.solve(X * 1e160, y, solver=solver)
    assert sol.status == "numerical_error"
    assert "overflow" in sol.message and "rescale" in sol.message
    assert np.all(sol.w == 0)


def _ill_conditioned_ellipsoid(d: int, seed: int = 0, cond: float = 1e12) -> np.ndarray:
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.standard_normal((d, d)))
    M = Q @ np.diag(np.logspace(0, -np.log10(cond), d)) @ Q.T
    return (M + M.T) / 2


@pytest.mark.parametrize(("loss", "intercept", "l2", "seed"),
                         [(rs.Hinge(), True, 1e-4, 0), (rs.SquaredHinge(), True, 1e-2, 1)])
def test_ill_conditioned_ellipsoid_is_certified_optimal(loss, intercept, l2, seed):
    """An ellipsoid of condition 1e12: the point is optimal and the backend's own certificate says so (its dual
    bound also tries the worst case of its primal point, not only the inner iteration's u)."""
    X, y = standardized("pima")
    V = rs.Ellipsoid(_ill_conditioned_ellipsoid(X.shape[1], seed), 1.0)
    prob = rs.Problem(loss=loss, penalty=rs.L2(l2), uncertainty=V, intercept=intercept)
    sol = prob.solve(X, y, solver="feature-ipm", tol=1e-6)
    assert sol.status == "optimal", sol.message
    assert sol.rel_gap <= 1e-6
    assert sol.gap <= 1e-6 * abs(sol.objective)  # the package's own certificate of the point agrees


def _objective_at_zero(y, c, loss, intercept) -> float:
    """``min_b Σ c_i ℓ(y_i b) [+ (μ/2) b²]`` by a bounded scalar search (the minimizer lies in [−1, 1])."""
    mu = intercept.l2 if isinstance(intercept, rs.Penalty) else 0.0
    if intercept is False:
        return float(c.sum())  # ℓ(0) = 1

    def f(b):
        m = np.maximum(0.0, 1.0 - y * b)
        return float(c @ (m * m if isinstance(loss, rs.SquaredHinge) else m)) + 0.5 * mu * b * b

    res = minimize_scalar(f, bounds=(-1.0, 1.0), method="bounded", options={"xatol": 1e-12})
    return min(f(res.x), f(-1.0), f(1.0))


@pytest.mark.parametrize(("loss", "intercept"), [(rs.SquaredHinge(), rs.L2(1.0)), (rs.Hinge("sum"), rs.L2(1.0)),
                                                 (rs.SquaredHinge(), True), (rs.Hinge(), False)])
def test_huge_radius_optimum_at_zero_is_certified(loss, intercept):
    """``Ball(1e6)``: every ``w ≠ 0`` costs more than it gains, ``w = 0``; the optimum is the best intercept alone."""
    X, y = standardized("pima")
    prob = rs.Problem(loss=loss, penalty=rs.L2(1e-2), uncertainty=rs.Ball(1e6), intercept=intercept)
    sol = prob.solve(X, y, solver="feature-ipm")
    ys = np.where(y == np.max(y), 1.0, -1.0)
    c = np.full(y.size, 1.0 if loss.reduction == "sum" else 1.0 / y.size)
    ref = _objective_at_zero(ys, c, loss, intercept)
    assert sol.status == "optimal", sol.message
    assert np.all(sol.w == 0)
    assert abs(sol.objective - ref) <= 1e-9 * max(1.0, ref) and sol.gap <= 1e-6 * max(1.0, ref)


@pytest.mark.parametrize("solver", ["feature-ipm", "robust-dcd"])
def test_one_class_weighted_zero_is_certified_at_the_trivial_optimum(solver):
    """Only one class weighted: ``b = ±1`` puts every weighted margin at 1, ``P* = 0``; the relative gap of a
    zero objective has no meaning, the absolute one certifies it."""
    X, y = standardized("wdbc", 150)
    sw = np.where(y == y[0], 1.0, 0.0)
    prob = rs.Problem(penalty=rs.L2(1e-2), uncertainty=rs.Box(0.1))
    sol = prob.solve(X, y, solver=solver, sample_weight=sw)
    assert sol.status == "optimal", sol.message
    assert 0.0 <= sol.objective <= 1e-12 and sol.gap <= 1e-12


def test_batched_solve_leaks_no_floating_point_warning():
    """A grid over λ2 and radii on an ill-conditioned ellipsoid drives cone points to the boundary; no warning leaks."""
    X, y = standardized("sonar")
    V = rs.Ellipsoid(np.diag(np.logspace(0, -6, X.shape[1])), 1.0)
    prob = rs.Problem(loss=rs.SquaredHinge(), penalty=rs.L2(1.0), uncertainty=V)
    model = normalize(prob, check_fit_data(X, y, signs=prob.signs))
    values = [{"l2": a, "radius": r} for a in (1e-6, 1e-3, 1.0, 1e3) for r in (0.0, 1e-3, 0.1, 10.0, 1e4)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        results = solve_feature_ipm_many(model, values)
    assert len(results) == len(values)
    assert all(r.status != "optimal" or r.gap <= 1e-6 * max(1.0, abs(r.primal_objective)) for r in results)


def test_jordan_solve_on_the_boundary_is_silent():
    """``λ`` on the cone's boundary (``λ₀ = ‖λ̄‖``) has no Jordan inverse: the row is inf/NaN, without a warning."""
    lam = np.array([[1.0, 1.0, 0.0], [2.0, 0.5, 0.5]])
    rhs = np.array([[1.0, 0.0, 0.0], [1.0, 1.0, 0.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x = soc.jordan_solve(lam, rhs)
    assert not np.all(np.isfinite(x[0]))
    np.testing.assert_allclose(soc.jordan(lam[1:], x[1:]), rhs[1:], atol=1e-12)


@pytest.mark.parametrize("solver", ["robust-dcd", "dcd"])
def test_an_unfinished_solve_names_features_whose_scales_differ(solver):
    """A solve that stops short (here at its epoch budget) on features whose largest |x| differ by more than 1,000×
    (computed here) names the two columns and advises standardizing, in its message and its warning; on features of
    one scale the message says nothing of scales."""
    X, y = standardized("wdbc", 200)
    raw = np.c_[X, 1e6 * X[:, 0]]
    names = [f"f{h}" for h in range(raw.shape[1])]
    scale = np.abs(raw).max(axis=0)
    big, small = int(np.argmax(scale)), int(np.argmin(scale))
    problem = rs.Problem(penalty=rs.L2(0.01), uncertainty=rs.Box(0.1) if solver == "robust-dcd" else None)
    with pytest.warns(ConvergenceWarning) as record:
        sol = problem.solve(raw, y, solver=solver, max_iter=2, feature_names=names)
    assert sol.status == "max_iter"
    expected = f"{scale[big]:.4g} in feature {big} (f{big}), {scale[small]:.4g} in feature {small} (f{small})"
    assert expected in sol.message and "StandardScaler" in sol.message
    assert any(expected in str(w.message) for w in record)
    with pytest.warns(ConvergenceWarning):
        plain = problem.solve(X, y, solver=solver, max_iter=2)
    assert plain.status == "max_iter" and "scales differ" not in plain.message

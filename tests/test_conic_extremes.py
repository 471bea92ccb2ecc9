"""The conic path on extreme but finite data and at degenerate optima: an answer the package certifies.

Each reference is a closed form: with features of size ε the optimum differs from the one at X = 0 by at
most ``max‖x_i‖·‖w*‖`` (``‖w*‖ ≤ √(2P(0)/λ2)``), and at X = 0 the model is ``min_b`` of the hinge terms
of ``y_i b`` alone, whose value is ``2·min(p₊, p₋)`` (``p±`` the class weights) for the mean hinge.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import robustsvm as rs
from robustsvm.conic import ConicProgram

from .conftest import ellipsoid_shape, standardized


def _hinge_optimum_at_zero_data(y01) -> float:
    """``min_b mean_i max(0, 1 − y_i b) = 2·min(p₊, p₋)`` (b = ±1 puts every hinge of the larger class at 0)."""
    p = float(np.mean(y01 == 1))
    return 2.0 * min(p, 1.0 - p)


def _sets(d):
    return {"none": None, "box": rs.Box(0.1), "box-widths": rs.Box(0.1, widths=np.linspace(0.5, 2.0, d)),
            "ball": rs.Ball(0.1), "ball-inf": rs.Ball(0.1, p=np.inf),
            "ellipsoid": rs.Ellipsoid(ellipsoid_shape(d), 0.1)}


@pytest.fixture(scope="module")
def wdbc100():
    return standardized("wdbc", n=100)


@pytest.mark.parametrize("scale", [1e-160, 1e-300])
@pytest.mark.parametrize("name", list(_sets(30)))
def test_tiny_features_are_solved_and_certified(wdbc100, scale, name):
    X, y = wdbc100
    X = X * scale
    prob = rs.Problem(penalty=rs.L2(1e-2), uncertainty=_sets(30)[name])
    sol = prob.solve(X, y, solver="clarabel")
    reference = _hinge_optimum_at_zero_data(y)
    slack = float(np.max(np.linalg.norm(X, axis=1))) * np.sqrt(2.0 / 1e-2)  # |P*(X) − P*(0)| ≤ this (≈ 1e-158)
    assert sol.status == "optimal", sol.message
    assert sol.gap <= 1e-6
    assert reference - slack - 1e-12 <= sol.objective <= reference + 1e-6
    # the package's gap bounds the distance to the known optimum
    assert sol.objective - reference <= sol.gap + slack + 1e-12


def test_a_parameter_that_overflows_in_program_units_is_refused_by_name():
    X, y = standardized("wdbc", n=60)
    program = ConicProgram(rs.Problem(penalty=rs.L2(1e-2)).normalize(X * 1e-30, y))
    assert program.kappa > 1e28  # compiled on X rescaled to order one
    with pytest.raises(ValueError, match="l2 times the data scale"):
        program.set_values(l2=1e260)


@pytest.mark.parametrize("radius", [0.1, 1.0, 5.0])
@pytest.mark.parametrize("penalty", [rs.L2(0.1), rs.L2(0.1) + rs.L1(0.01)])
@pytest.mark.parametrize("unc", ["box", "box-widths", "ball", "ball-inf", "ellipsoid"])
def test_all_zero_features_at_the_exact_optimum_are_certified_optimal(radius, penalty, unc):
    """w = 0 is optimal whatever the set; the certificate must find the bound 1 that proves it."""
    n, d = 20, 3
    X = np.zeros((n, d))
    y = np.r_[np.zeros(n // 2), np.ones(n - n // 2)]
    uset = _sets(d)[unc].with_radius(radius)
    with warnings.catch_warnings():
        warnings.simplefilter("error", rs.exceptions.ConvergenceWarning)
        sol = rs.Problem(penalty=penalty, uncertainty=uset).solve(X, y, solver="clarabel")
    assert sol.status == "optimal", sol.message
    assert sol.objective == pytest.approx(_hinge_optimum_at_zero_data(y), abs=1e-7)
    assert sol.gap <= 1e-7
    assert sol.objective - sol.gap <= _hinge_optimum_at_zero_data(y) + 1e-12


#: sonar models (standardized, squared hinge) on which Clarabel with its default settings ends in a solver
#: error or AlmostSolved, while SCS and feature-ipm solve them
_HARD_SONAR = [("sum", "ellipsoid", 0.1, 0.1), ("sum", "ball", 1.0, 0.01), ("mean", "ball", 1e-5, 0.316),
               ("sum", "ellipsoid", 0.0031622776601683794, 0.001), ("sum", "ellipsoid", 0.31622776601683794, 0.1),
               ("sum", "ball", 0.01, 0.1), ("mean", "ellipsoid", 0.001, 0.31622776601683794),
               ("mean", "ball", 1e-4, 0.01)]


@pytest.fixture(scope="module")
def sonar():
    return standardized("sonar")


@pytest.mark.parametrize("reduction, kind, lam, radius", _HARD_SONAR)
def test_clarabel_recovers_on_hard_squared_hinge_models(sonar, reduction, kind, lam, radius):
    X, y = sonar
    uset = rs.Ball(radius) if kind == "ball" else rs.Ellipsoid(ellipsoid_shape(X.shape[1]), radius)
    prob = rs.Problem(loss=rs.SquaredHinge(reduction=reduction), penalty=rs.L2(lam), uncertainty=uset)
    sol = prob.solve(X, y, solver="clarabel")
    assert sol.status == "optimal", sol.message
    scale = max(1.0, abs(sol.objective))
    assert sol.gap <= 1e-6 * scale
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rs.exceptions.ConvergenceWarning)
        other = prob.solve(X, y, solver="scs", tol=1e-9)
    # SCS's point is feasible (no constraint but the model's own): its objective bounds the optimum from above
    assert sol.objective - sol.gap <= other.objective + 1e-12 * scale
    assert sol.objective <= other.objective + 1e-6 * scale


@pytest.fixture
def failing_conic(monkeypatch):
    """Every conic solve raises the solver's error."""
    import robustsvm.backends.conic as conic_backend
    from robustsvm._lazy import cvxpy as cp

    def failing(self, *args, **kwargs):
        raise cp.error.SolverError("numerical trouble")

    monkeypatch.setattr(conic_backend.ConicProgram, "solve", failing)


def test_a_failed_conic_solve_names_features_whose_scales_differ(failing_conic):
    """When the conic solver fails, the error names the columns with the largest and smallest max |x| (computed
    here) if they differ by more than a factor of 1,000, and advises standardizing; equal scales add nothing."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 4))
    y = np.where(X[:, 0] > 0, 1, 0)
    scaled = X * [1.0, 5e3, 1e-2, 1.0]
    top, bottom = np.abs(scaled).max(axis=0)[1], np.abs(scaled).max(axis=0)[2]
    problem = rs.Problem(uncertainty=rs.Ball(0.1, p=3))
    with pytest.raises(rs.SolverError) as info:
        problem.solve(scaled, y, solver="clarabel", feature_names=["a", "b", "c", "d"])
    text = str(info.value)
    assert "numerical trouble" in text and f"differ by a factor of {top / bottom:.3g}" in text
    assert f"{top:.4g} in feature 1 (b)" in text and f"{bottom:.4g} in feature 2 (c)" in text
    assert "StandardScaler" in text
    with pytest.raises(rs.SolverError) as info:
        problem.solve(X, y, solver="clarabel")
    assert "scales differ" not in str(info.value)


@pytest.mark.parametrize("factor", [1e8, 1e-8])
def test_a_failed_conic_solve_names_features_far_from_order_one(failing_conic, factor):
    """Features of equal scale but far from 1 (all times 1e8, or 1e-8): the error names the largest |x| (computed
    here) and its column and advises standardizing or scaling λ2; features of order 1 add nothing."""
    rng = np.random.default_rng(1)
    X = rng.standard_normal((40, 3))
    y = np.where(X[:, 0] > 0, 1, 0)
    top = np.abs(X * factor).max(axis=0)
    with pytest.raises(rs.SolverError) as info:
        rs.Problem(penalty=rs.L2(1.0)).solve(X * factor, y, solver="clarabel")
    text = str(info.value)
    assert f"largest |x| is {top.max():.4g} (in feature {int(np.argmax(top))})" in text
    assert "StandardScaler" in text and "scale λ2 with the features" in text
    with pytest.raises(rs.SolverError) as info:
        rs.Problem(penalty=rs.L2(1.0)).solve(X, y, solver="clarabel")
    assert "largest |x|" not in str(info.value)

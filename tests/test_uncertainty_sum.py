"""The Minkowski sum of two sets: support, worst case and membership against brute force and closed forms,
serialization, validation, and robust models against a CVXPY model written here."""

from __future__ import annotations

import json

import cvxpy as cp
import numpy as np
import pytest

import robustsvm as rs
from robustsvm.uncertainty import CoordinateEllipsoid, SetSum, robust_check, uncertainty_from_dict

from .conftest import make_classification

SHAPE = np.array([[2.0, 0.6], [0.6, 1.0]])


def _ellipse_points(shape, radius, m=20000):
    """``m`` points on the boundary of ``{v : vᵀ S⁻¹ v ≤ r²}`` in R²."""
    t = np.linspace(0.0, 2 * np.pi, m, endpoint=False)
    return radius * np.column_stack([np.cos(t), np.sin(t)]) @ np.linalg.cholesky(shape).T


def _box_vertices(widths, radius):
    return radius * np.array([[sx, sy] for sx in (-1, 1) for sy in (-1, 1)]) * widths


def test_support_and_worst_case_of_box_plus_ellipsoid_equal_a_brute_force_maximum():
    box, ell = rs.Box(0.3, widths=[1.0, 2.0]), rs.Ellipsoid(SHAPE, radius=0.5)
    S = box + ell
    assert isinstance(S, SetSum) and S.radius == 0.5
    # every point of r_A V_A + r_B V_B: a box vertex plus an ellipse boundary point (the maxima are there)
    points = (_box_vertices(np.array([1.0, 2.0]), 0.3)[:, None, :] + _ellipse_points(SHAPE, 0.5)[None]).reshape(-1, 2)
    for z in np.random.default_rng(0).normal(size=(6, 2)):
        brute = float(np.max(points @ z))
        value = S.radius * S.support(z)
        assert brute <= value + 1e-12
        assert value - brute <= 1e-6 * np.linalg.norm(z)
        v = S.worst_case(z)
        assert S.contains(v) and S.radius * (z @ v) == pytest.approx(value, rel=1e-12)
        assert not S.contains(1.001 * v)
    Z = np.random.default_rng(1).normal(size=(4, 2))
    np.testing.assert_allclose(S.support(Z), [S.support(z) for z in Z], rtol=1e-14)


def test_sum_of_two_boxes_is_the_box_of_summed_widths():
    """``a B(δ) + b B(δ') = B(aδ + bδ')``: support and membership against the closed form."""
    S = rs.Box(0.2, widths=[1.0, 3.0, 0.5]) + rs.Box(1.0, widths=[2.0, 1.0, 1.0])
    total = rs.Box(1.0, widths=0.2 * np.array([1.0, 3.0, 0.5]) + np.array([2.0, 1.0, 1.0]))
    assert S.symmetric and S.is_polyhedral
    rng = np.random.default_rng(2)
    for z in rng.normal(size=(5, 3)):
        assert S.radius * S.support(z) == pytest.approx(total.support(z), rel=1e-14)
    for v in rng.uniform(-3.0, 3.0, size=(40, 3)):
        assert S.contains(v / S.radius) == total.contains(v, tol=0.0)


def test_membership_retraction_and_centre():
    S = rs.Ball(0.5) + rs.Box(0.25)
    assert S.contains(np.zeros(2)) and np.allclose(S.center(2), 0.0)
    far = np.array([3.0, -2.0])
    assert not S.contains(far)
    r = S.retract(far)
    assert S.contains(r)
    # the nearest point of the sum in the max-norm sense: a ball point plus a box corner
    assert np.max(np.abs(far - r)) <= np.max(np.abs(far)) - 0.5 + 1e-6


def test_key_json_round_trip_and_clone():
    S = rs.Ellipsoid(SHAPE, radius=0.4) + rs.Box(0.1, widths=[1.0, 2.0])
    back = uncertainty_from_dict(json.loads(json.dumps(S.to_dict())))
    assert isinstance(back, SetSum) and back.key() == S.key() and back.radius == S.radius
    z = np.array([0.3, -1.2])
    assert back.support(z) == pytest.approx(S.support(z), rel=1e-15)
    assert S.key() != (rs.Box(0.1, widths=[1.0, 2.0]) + rs.Ellipsoid(SHAPE, radius=0.4)).key()
    per_sample = S.with_radius(np.array([0.1, 0.2, 0.3]))
    assert uncertainty_from_dict(json.loads(json.dumps(per_sample.to_dict()))).radius.tolist() == [0.1, 0.2, 0.3]
    assert S.get_params()["second__radius"] == 0.1


def test_validation_names_the_argument():
    with pytest.raises(TypeError, match="second must be an uncertainty set"):
        SetSum(rs.Box(0.1), 3.0)
    with pytest.raises(TypeError):
        rs.Box(0.1) + 3.0
    with pytest.raises(ValueError, match="first set of a sum needs a scalar radius"):
        SetSum(rs.Box(np.array([0.1, 0.2])), rs.Ball(0.1))
    with pytest.raises(ValueError, match="cannot add a set in R\\^2 to a set in R\\^3"):
        rs.Box(0.1, widths=[1.0, 1.0]) + rs.Box(0.1, widths=[1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="radius must be finite and non-negative"):
        SetSum(rs.Box(0.1), rs.Ball(0.1), radius=-1.0)


def _direct(X, y_pm, l2, penalties):
    """Mean hinge at the robust margin ``y(x·w + b) − penalties(w)_i``, written here; its optimal value."""
    w, b = cp.Variable(X.shape[1]), cp.Variable()
    margin = cp.multiply(y_pm, X @ w + b) - penalties(w)
    prob = cp.Problem(cp.Minimize(0.5 * l2 * cp.sum_squares(w) + cp.sum(cp.pos(1 - margin)) / X.shape[0]))
    prob.solve(solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    return prob.value


def test_shared_sum_fits_the_model_with_added_supports():
    X, y = make_classification(50, 3, seed=4)
    y_pm = np.where(y == 1, 1.0, -1.0)
    S3 = np.diag([1.0, 0.5, 2.0])
    model = rs.Problem(penalty=rs.L2(0.5), uncertainty=rs.Box(0.1) + rs.Ellipsoid(S3, radius=0.2))
    sol = model.solve(X, y_pm)
    L = np.linalg.cholesky(S3)
    p_star = _direct(X, y_pm, 0.5, lambda w: (0.1 * cp.norm1(w) + 0.2 * cp.norm(L.T @ w, 2)) * np.ones(50))
    assert sol.status == "optimal"
    assert p_star - 1e-7 <= sol.objective <= p_star + sol.gap + 1e-7
    assert robust_check(sol, X, y_pm).holds


def test_per_sample_sums_with_coordinate_ellipsoids():
    X, y = make_classification(40, 3, seed=5)
    y_pm = np.where(y == 1, 1.0, -1.0)
    noise = rs.Box(0.05)
    ell = [CoordinateEllipsoid(np.array([[1.5]]), [i % 3], 3, radius=0.3) for i in range(40)]
    sets = [noise + e for e in ell]
    sol = rs.Problem(penalty=rs.L2(1.0), uncertainty=sets).solve(X, y_pm)
    coords = np.array([i % 3 for i in range(40)])
    p_star = _direct(X, y_pm, 1.0, lambda w: 0.05 * cp.norm1(w) + 0.3 * np.sqrt(1.5) * cp.abs(w[coords]))
    assert p_star - 1e-7 <= sol.objective <= p_star + sol.gap + 1e-7
    check = robust_check(sol, X, y_pm)
    assert check.holds and check.contained.all()


def test_a_stored_model_with_per_sample_sums_reads_back_and_validates(tmp_path):
    X, y = make_classification(30, 3, seed=6)
    sets = [rs.Box(0.05) + CoordinateEllipsoid(np.array([[1.5]]), [i % 3], 3, radius=0.3) for i in range(30)]
    sol = rs.Problem(uncertainty=sets, penalty=rs.L2(0.5)).solve(X, y)
    sol.to_json(tmp_path / "model.json", X, y)
    back = rs.Solution.from_json(tmp_path / "model.json")
    assert [s.key() for s in back.problem.uncertainty] == [s.key() for s in sets]
    report = rs.validate(back, X, y)
    assert report.ok and report.objective_recomputed == pytest.approx(sol.objective, rel=1e-12)

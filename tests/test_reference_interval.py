"""The tests' reference optima (tests/_reference.py): the interval contains the optimum, and a wrong model is caught."""

from __future__ import annotations

from functools import partial

import cvxpy as cp
import numpy as np
import pytest

import robustsvm as rs

from ._reference import Formulation, certified_reference
from .conftest import make_classification


def _hinge_model(X, y, l2) -> Formulation:
    """Mean hinge with a free intercept and ½λ2‖w‖², written here."""
    ys = np.where(y == 1, 1.0, -1.0)
    n, d = X.shape
    w, b, xi = cp.Variable(d), cp.Variable(), cp.Variable(n, nonneg=True)
    margins = xi >= 1 - cp.multiply(ys, X @ w + b)
    return Formulation(l2 / 2 * cp.sum_squares(w) + cp.sum(xi) / n, [margins], w, b, margins)


def test_interval_contains_the_optimum_found_by_another_backend():
    X, y = make_classification(60, 4, seed=11)
    prob = rs.Problem(penalty=rs.L2(0.1))
    ref = certified_reference(prob, X, y, partial(_hinge_model, X, y, 0.1), package_fallback=())
    assert 0.0 <= ref.gap <= 1e-8 * ref.scale()
    assert prob.objective(X, y, ref.w, ref.b) == pytest.approx(ref.objective, rel=1e-12)
    assert ref.model_value == pytest.approx(ref.objective, rel=1e-6)
    sol = prob.solve(X, y, solver="dcd", tol=1e-9, max_iter=50000, random_state=0)
    assert sol.status == "optimal"
    # both sides are certified: each value lies above the other's lower bound
    assert ref.bound <= sol.objective + 1e-12
    assert sol.objective - sol.gap <= ref.objective + 1e-12


def test_a_test_model_that_is_not_the_package_model_is_caught():
    """The test's CVXPY model with twice the penalty: its optimum is not the package model's optimum, so the
    package's certificate of that point is loose and the reference refuses (instead of returning a wrong value)."""
    X, y = make_classification(60, 4, seed=11)
    prob = rs.Problem(penalty=rs.L2(0.1))
    with pytest.raises(AssertionError, match="no reference point certified"):
        certified_reference(prob, X, y, partial(_hinge_model, X, y, 0.2), package_fallback=())


def test_a_test_model_with_another_value_at_the_same_point_is_caught():
    """The same minimizer, the value shifted by 0.01: the point is certified, and the check that the test's model
    and the package's objective agree there fails."""
    X, y = make_classification(60, 4, seed=11)
    prob = rs.Problem(penalty=rs.L2(0.1))

    def shifted():
        model = _hinge_model(X, y, 0.1)
        return model._replace(objective=model.objective + 0.01)

    with pytest.raises(AssertionError, match="differ at"):
        certified_reference(prob, X, y, shifted, package_fallback=())

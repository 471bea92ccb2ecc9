"""Problem: the model object, its numpy objective and the path of Problem.solve."""

import numpy as np
import pytest

import robustsvm as rs
from robustsvm.exceptions import SolverError


def test_intercept_modes(small):
    X, y = small
    X = X + 3.0  # shifted data needs an intercept
    free = rs.Problem(penalty=rs.L2(0.1), intercept=True).solve(X, y)
    none = rs.Problem(penalty=rs.L2(0.1), intercept=False).solve(X, y)
    ridge = rs.Problem(penalty=rs.L2(0.1), intercept=rs.L2(1.0)).solve(X, y)
    assert none.b == 0.0
    assert free.objective <= ridge.objective + 1e-8 <= none.objective + 1e-6
    # intercept ridge: check against the direct objective with (mu/2) b^2
    n = X.shape[0]
    m = (2 * y - 1) * (X @ ridge.w + ridge.b)
    f = 0.05 * ridge.w @ ridge.w + 0.5 * ridge.b**2 + np.maximum(0, 1 - m).sum() / n
    assert abs(f - ridge.objective) < 1e-12


def test_hard_margin_separable_and_infeasible():
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(size=(20, 2)) + 4, rng.normal(size=(20, 2)) - 4])
    y = np.r_[np.ones(20), np.zeros(20)]
    sol = rs.Problem(loss=rs.HardMargin(), penalty=rs.L2(1.0)).solve(X, y)
    margins = (2 * y - 1) * (X @ sol.w + sol.b)
    assert margins.min() >= 1 - 1e-7
    assert sol.violation < 1e-7
    # the max-margin classifier has its closest points at margin exactly 1
    assert margins.min() < 1 + 1e-5
    Xbad = np.vstack([X, [[4.0, 4.0]]])
    ybad = np.r_[y, 0]
    with pytest.raises(SolverError, match="infeasible"):
        rs.Problem(loss=rs.HardMargin(), penalty=rs.L2(1.0)).solve(Xbad, ybad)


def test_objective_rejects_bad_w(small):
    X, y = small
    prob = rs.Problem(penalty=rs.L2(0.1), intercept=False)
    with pytest.raises(ValueError, match="w must have shape"):
        prob.objective(X, y, np.zeros(3))
    with pytest.raises(ValueError, match="b must be 0"):
        prob.objective(X, y, np.zeros(X.shape[1]), 1.0)

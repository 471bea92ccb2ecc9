"""A loss owns its conic weight and its margin multiplier: a new loss needs no change to the compiler.

The cubed hinge ``max(0, 1 − m)³`` is written here with ``cvx(ξ, w) = Σ (w_i ξ_i)³``, so its conic
weight is ``c^{1/3}`` (the compiler would otherwise weigh the terms by ``c³``). The conic solution is
checked against a quasi-Newton solve of the smooth primal written here, and its certificate and
``Problem.certify`` against that reference.
"""

from __future__ import annotations

from dataclasses import dataclass

import cvxpy as cp
import numpy as np
import pytest
from scipy.optimize import minimize

import robustsvm as rs
from robustsvm.terms.losses import LOSSES

from .conftest import make_classification


@dataclass(frozen=True)
class CubedHinge(rs.Loss):
    name = "cubed_hinge_for_tests"

    def value(self, margin):
        return np.maximum(0.0, 1.0 - np.asarray(margin, dtype=np.float64)) ** 3

    def dual_term(self, alpha):
        """``α − ℓ*(α)`` with ``ℓ*(α) = sup_t αt − t³ = 2(α/3)^{3/2}``."""
        alpha = np.asarray(alpha, dtype=np.float64)
        return alpha - 2.0 * (alpha / 3.0) ** 1.5

    def conic_weight(self, coef):
        return np.cbrt(np.asarray(coef, dtype=np.float64))

    def cvx(self, xi, weight):
        return cp.sum(cp.power(cp.multiply(weight, xi), 3))


@pytest.fixture
def cubed():
    try:
        yield CubedHinge()
    finally:
        LOSSES.pop(CubedHinge.name, None)


def test_builtin_losses_say_their_conic_weight_and_multiplier():
    c = np.array([0.25, 1.0, 4.0])
    np.testing.assert_array_equal(rs.Hinge().conic_weight(c), c)
    np.testing.assert_allclose(rs.SquaredHinge().conic_weight(c), [0.5, 1.0, 2.0])
    m = np.array([-1.0, 0.5, 1.0, 2.0])
    np.testing.assert_array_equal(rs.Hinge().multiplier(m), [1.0, 1.0, 0.0, 0.0])
    np.testing.assert_allclose(rs.SquaredHinge().multiplier(m), [4.0, 1.0, 0.0, 0.0])
    np.testing.assert_array_equal(rs.HardMargin().multiplier(m), 0.0)


def test_a_new_loss_compiles_with_its_own_weight_and_is_certified(cubed):
    X, y = make_classification(70, 4, seed=3)
    lam = 0.1
    ypm = np.where(y == np.unique(y)[1], 1.0, -1.0)
    n = X.shape[0]
    weights = np.linspace(0.5, 2.0, n)  # sample weights: the conic weight is not all ones
    c = weights / weights.sum()

    def primal(theta):  # (λ/2)‖w‖² + Σ c_i max(0, 1 − y_i(x_i·w + b))³, with its gradient
        w, b = theta[:-1], theta[-1]
        t = np.maximum(0.0, 1.0 - ypm * (X @ w + b))
        g = -3.0 * c * t**2 * ypm
        return 0.5 * lam * w @ w + c @ t**3, np.r_[lam * w + X.T @ g, g.sum()]

    res = minimize(primal, np.zeros(X.shape[1] + 1), jac=True, method="L-BFGS-B",
                   options={"ftol": 1e-15, "gtol": 1e-12, "maxiter": 10_000})
    problem = rs.Problem(loss=cubed, penalty=rs.L2(lam))
    sol = problem.solve(X, y, sample_weight=weights, tol=1e-9)
    upper = primal(res.x)[0]  # the objective at a point: at least the optimum
    assert sol.objective == pytest.approx(upper, rel=1e-6, abs=1e-9)
    assert sol.objective - sol.gap <= upper + 1e-12  # the package's bound on the optimum is below it
    cert = problem.certify(X, y, res.x[:-1], res.x[-1], sample_weight=weights)
    assert cert.feasible and cert.bound <= sol.objective + 1e-12
    assert cert.gap >= cert.objective - sol.objective - 1e-12
    assert cert.gap <= 1e-5

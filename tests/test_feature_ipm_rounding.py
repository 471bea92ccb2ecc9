"""``feature-ipm``'s certificate at rounded multipliers and its compiled row passes, against independent checks.

Near the optimum the interior point certifies at its margin multipliers rounded to their bounds (0 off the
margin, ``c_i`` inside the loss): the rounded point is checked against the rule written out in NumPy, and the
solve's certificate against Clarabel's optimum of the model written in CVXPY (``test_feature_ipm``'s
reference). The compiled passes over the rows (``A z``, ``Aᵀ v``, both from one read) are checked against
``A = [y∘X, r, y]`` written out.
"""

from __future__ import annotations

import numpy as np
import pytest

import robustsvm as rs
from robustsvm.backends import _ipm_design, _ipm_kernels

from .test_feature_ipm import SLACK, _clarabel_optimum


def _gaussian(n: int, d: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.sign(X @ rng.normal(size=d) + 2.0 * rng.normal(size=n))
    y[y == 0] = 1.0
    return X, y


@pytest.mark.parametrize("squared", [False, True], ids=["hinge", "squared-hinge"])
def test_purified_multipliers_follow_the_rule(squared):
    """α_i → 0 where s_i > α_i/c_i; (hinge) α_i → c_i where ξ_i > β_i/c_i; the complementarity of the others."""
    rng = np.random.default_rng(3)
    P, n = 2, 500
    c = rng.uniform(0.5, 2.0, size=n) / n
    s, xi = np.exp(rng.uniform(-8, 2, size=(P, n))), np.exp(rng.uniform(-8, 2, size=(P, n)))
    alpha = c * rng.uniform(1e-6, 1.0, size=(P, n))
    beta = c - alpha
    got, kept = _ipm_kernels.purified_multipliers(squared, s, alpha, xi, beta, c)
    zero = s > alpha / c
    full = np.zeros_like(zero) if squared else (xi > beta / c) & ~zero
    want = np.where(zero, 0.0, np.where(full, c, alpha))
    assert np.array_equal(got, want)
    left = ~zero & ~full
    pair = s * alpha + (0.0 if squared else xi * beta)
    assert np.allclose(kept, (pair * left).sum(axis=1), rtol=1e-12)
    assert np.any(zero) and np.any(left) and (squared or np.any(full))


@pytest.mark.parametrize("set_name", ["box", "ball", "ellipsoid"])
def test_rounded_certificate_agrees_with_clarabel(set_name):
    """At the default tolerance on Gaussian data the certificate is taken at rounded multipliers (exact zeros
    and exact c_i among them) and its gap bounds the distance to Clarabel's optimum."""
    X, y = _gaussian(3000, 12, seed=4)
    n, d = X.shape
    rng = np.random.default_rng(5)
    B = rng.normal(size=(d, d))
    V = {"box": rs.Box(0.05), "ball": rs.Ball(0.2), "ellipsoid": rs.Ellipsoid(B @ B.T / d + np.eye(d), 0.1)}[set_name]
    prob = rs.Problem(penalty=rs.L2(1.0 / n), uncertainty=V)
    tol = 1e-4
    sol = prob.solve(X, y, solver="feature-ipm", tol=tol)
    assert sol.status == "optimal", sol.message
    a = sol.dual_alpha
    assert np.sum(a == 0.0) > n // 4 and np.sum(a == 1.0) > n // 50  # rounded: off the margin and in the loss
    ref = _clarabel_optimum(prob, X, y, V, V.radius, l2=1.0 / n)
    acc = SLACK * ref.scale()
    P = prob.objective(X, y, sol.w, sol.b)
    assert abs(P - ref.objective) <= sol.gap + ref.gap + acc
    assert P >= ref.bound - acc and sol.dual_objective <= ref.objective + acc
    assert sol.gap <= tol * abs(P) * (1 + 1e-9)


@pytest.mark.parametrize("layout", ["C", "F"])
def test_compiled_row_passes_match_the_matrix(monkeypatch, layout):
    """``A z`` and ``Aᵀ v`` in double precision (one read for both) and from the single-precision copy."""
    monkeypatch.setattr(_ipm_design.Design, "BLOCK", 100)  # the block Gram, which makes the single-precision copy
    rng = np.random.default_rng(9)
    n, d = 700, 9
    X = np.asarray(rng.normal(size=(n, d)) * np.logspace(-1, 1, d), order=layout)
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    r = rng.uniform(0.0, 0.3, size=n)
    A = np.column_stack([y[:, None] * X, r, y])
    z, v = rng.normal(size=d + 2), rng.normal(size=n)
    design = _ipm_design.Design(X, y, r)
    az, atv = design.dot_tdot(z[None], v[None])
    bound_z, bound_v = np.abs(A) @ np.abs(z), np.abs(A).T @ np.abs(v)
    assert np.all(np.abs(az[0] - A @ z) <= 1e-12 * bound_z)
    assert np.all(np.abs(atv[0] - A.T @ v) <= 1e-12 * bound_v)
    assert np.all(np.abs(design.dot(z[None])[0] - A @ z) <= 1e-12 * bound_z)
    design.gram(np.ones((1, n)), coarse=True)
    assert design._single is not None
    assert np.all(np.abs(design.dot_coarse(z[None])[0] - A @ z) <= 1e-5 * bound_z)
    assert np.all(np.abs(design.tdot_coarse(v[None])[0] - A.T @ v) <= 1e-5 * bound_v)

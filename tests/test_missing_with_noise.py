"""Missing values and measurement noise in one model: ``RobustSVC(missing="uncertain", uncertainty=rs.Box(r))``
against a CVXPY model written here, and ``robust_check`` after the fit against a brute-force minimum."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
from scipy import stats

pytest.importorskip("sklearn")

import robustsvm as rs
from robustsvm.uncertainty import SetSum, robust_check

R, L2, LEVEL = 0.05, 0.1, 0.9


@pytest.fixture(scope="module")
def incomplete():
    rng = np.random.default_rng(0)
    n = 60
    X = rng.normal(size=(n, 3))
    X[:, 1] += 0.5 * X[:, 0]
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=n) > 0, 1, 0)
    Xm = X.copy()
    Xm[rng.random((n, 3)) < 0.15] = np.nan
    Xm[0, :] = X[0, :]
    Xm[1, 0] = np.nan
    est = rs.RobustSVC(missing="uncertain", missing_level=LEVEL, uncertainty=rs.Box(R), l2=L2).fit(Xm, y)
    return Xm, y, est


def _conditional(mean, cov, x):
    """Centre and conditional covariance of a row's missing coordinates (Schur complement, written here)."""
    M, O = np.flatnonzero(np.isnan(x)), np.flatnonzero(~np.isnan(x))
    gain = cov[np.ix_(M, O)] @ np.linalg.inv(cov[np.ix_(O, O)])
    centre = x.copy()
    centre[M] = mean[M] + gain @ (x[O] - mean[O])
    return M, centre, cov[np.ix_(M, M)] - gain @ cov[np.ix_(O, M)]


def test_fit_equals_the_model_with_the_two_supports_added(incomplete):
    Xm, y, est = incomplete
    g = est.imputation_
    y_pm = np.where(y == 1, 1.0, -1.0)
    w, b = cp.Variable(3), cp.Variable()
    rows, centres = [], []
    for i, x in enumerate(Xm):
        M, c, C = _conditional(g.mean, g.covariance, x)
        centres.append(c)
        penalty = R * cp.norm1(w)
        if M.size:  # κ ‖Lᵀ w_M‖ with C = LLᵀ and κ² the χ² quantile of |M| degrees of freedom
            kappa = np.sqrt(stats.chi2.ppf(LEVEL, M.size))
            penalty = penalty + kappa * cp.norm(np.linalg.cholesky(C).T @ w[M], 2)
        rows.append(cp.pos(1 - (y_pm[i] * (c @ w + b) - penalty)))
    p_star = cp.Problem(cp.Minimize(0.5 * L2 * cp.sum_squares(w) + cp.sum(cp.hstack(rows)) / len(rows))).solve(
        solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    sol = est.solution_
    assert sol.status == "optimal"
    assert p_star - 1e-7 <= sol.objective <= p_star + sol.gap + 1e-7
    np.testing.assert_allclose(est.imputation_.impute(Xm), np.array(centres), atol=1e-10)
    # the noise set changes the answer: without it the optimum is smaller
    plain = rs.RobustSVC(missing="uncertain", missing_level=LEVEL, l2=L2).fit(Xm, y)
    assert plain.solution_.objective < sol.objective - 1e-4


def test_uncertainty_is_kept_and_robust_check_agrees_with_a_brute_force_minimum(incomplete):
    Xm, y, est = incomplete
    sets = est.uncertainty_
    incomplete_rows = np.isnan(Xm).any(axis=1)
    assert len(sets) == len(y)
    assert all(isinstance(s, SetSum) == bool(m) for s, m in zip(sets, incomplete_rows, strict=True))
    assert sets[0] is est.uncertainty  # a complete row keeps the noise set itself
    check = robust_check(est, Xm, y)
    assert check.holds
    # brute force: every box vertex plus points on each row's ellipsoid, the smallest margin over them
    w, b = est.coef_[0], est.intercept_[0]
    centres = est.imputation_.impute(Xm)
    y_pm = np.where(y == 1, 1.0, -1.0)
    vertices = R * np.array([[a, c, e] for a in (-1, 1) for c in (-1, 1) for e in (-1, 1)], dtype=float)
    directions = np.random.default_rng(1).normal(size=(4000, 3))
    for i in np.flatnonzero(incomplete_rows)[:12]:
        M, _, C = _conditional(est.imputation_.mean, est.imputation_.covariance, Xm[i])
        u = directions[:, : M.size] / np.linalg.norm(directions[:, : M.size], axis=1, keepdims=True)
        E = np.zeros((u.shape[0], 3))
        E[:, M] = np.sqrt(stats.chi2.ppf(LEVEL, M.size)) * u @ np.linalg.cholesky(C).T
        points = centres[i] + (vertices[:, None, :] + E[None]).reshape(-1, 3)
        brute = float(np.min(y_pm[i] * (points @ w + b)))
        assert brute >= check.robust_margins[i] - 1e-9          # no sampled point beats the certificate
        assert brute <= check.robust_margins[i] + 1e-3          # and the sampled points come close to it
        assert check.worst_margins[i] == pytest.approx(check.robust_margins[i], abs=1e-9)


def test_without_missing_values_the_noise_set_alone():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 3))
    y = (X[:, 0] > 0).astype(int)
    est = rs.RobustSVC(missing="uncertain", uncertainty=rs.Box(R), l2=L2).fit(X, y)
    ref = rs.RobustSVC(uncertainty=rs.Box(R), l2=L2).fit(X, y)
    assert est.solution_.objective == pytest.approx(ref.solution_.objective, abs=1e-9)
    assert isinstance(est.uncertainty_, rs.Box)
    assert robust_check(est, X, y).holds


def test_bad_noise_sets_are_refused(incomplete):
    Xm, y, _ = incomplete
    with pytest.raises(ValueError, match="needs a scalar radius"):
        rs.RobustSVC(missing="uncertain", uncertainty=rs.Box(np.full(len(y), 0.1))).fit(Xm, y)
    with pytest.raises(TypeError, match="'uncertainty' parameter of RobustSVC must be"):
        rs.RobustSVC(missing="uncertain", uncertainty="box").fit(Xm, y)
    multi = rs.RobustSVC(missing="uncertain", uncertainty=rs.Box(0.1))
    multi.solutions_ = [None, None]
    multi.solution_ = None
    with pytest.raises(ValueError, match="one binary model"):
        robust_check(multi, Xm, y)

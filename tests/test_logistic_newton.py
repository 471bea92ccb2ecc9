"""``logistic-newton``: the smooth logistic model by projected Newton steps, against scikit-learn and CVXPY."""

from functools import partial

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp

import robustsvm as rs
from robustsvm.backends import logistic_newton
from robustsvm.solve_path import choose_backend

from ._reference import Formulation, certified_reference
from .conftest import make_classification


def _sklearn(X, y, lam, intercept=True, sample_weight=None):
    """scikit-learn's lbfgs at a tight tolerance: ``C = 1/(λ Σ_i s_i)`` is the package's mean model."""
    from sklearn.linear_model import LogisticRegression

    total = X.shape[0] if sample_weight is None else float(np.sum(sample_weight))
    clf = LogisticRegression(C=1.0 / (lam * total), tol=1e-12, max_iter=100_000, fit_intercept=intercept)
    clf.fit(X, y, sample_weight=sample_weight)
    return clf.coef_.ravel(), float(clf.intercept_[0]) if intercept else 0.0


def _agree(sol, other, lam):
    """Both points are certified: their intervals ``[P − gap, P]`` hold the optimum, so the objectives agree within
    the gaps, and by λ-strong convexity ``‖w − w*‖² ≤ 2 gap/λ`` for each (the gap plus the objective's rounding)."""
    assert abs(sol.objective - other.objective) <= sol.gap + other.gap + 1e-12
    rounding = 1e-15 * max(1.0, abs(sol.objective))
    bound = np.sqrt(2 * (sol.gap + rounding) / lam) + np.sqrt(2 * (other.gap + rounding) / lam)
    assert np.linalg.norm(sol.w - other.w) <= bound


@pytest.mark.parametrize("intercept", [True, False])
@pytest.mark.parametrize("weighted", [False, True])
def test_unconstrained_matches_scikit_learn(wdbc, intercept, weighted):
    X, y, _ = wdbc
    lam = 1e-3
    sw = np.random.default_rng(2).uniform(0.2, 3.0, X.shape[0]) if weighted else None
    prob = rs.Problem(loss=rs.Logistic(), penalty=rs.L2(lam), intercept=intercept)
    sol = prob.solve(X, y, solver="logistic-newton", sample_weight=sw)
    assert sol.status == "optimal" and sol.gap <= 1e-6 * max(1.0, sol.objective)
    w_sk, b_sk = _sklearn(X, y, lam, intercept, sw)
    sk = prob.certify(X, y, w_sk, b_sk, sample_weight=sw)
    assert sk.gap < 1e-6
    _agree(sol, sk, lam)


def test_sparse_input_matches_scikit_learn_on_the_same_matrix():
    X, y = make_classification(400, 60, seed=5, sparse=True)
    assert sp.issparse(X)
    lam = 1e-3
    prob = rs.Problem(loss=rs.Logistic(), penalty=rs.L2(lam))
    sol = prob.solve(X, y, solver="logistic-newton", tol=1e-9)
    assert sol.status == "optimal" and sol.extra["hessian"] == "conjugate gradients"
    sk = prob.certify(X, y, *_sklearn(X, y, lam))
    _agree(sol, sk, lam)
    dense = prob.solve(X.toarray(), y, solver="logistic-newton", tol=1e-9)
    assert dense.extra["hessian"] == "dense"
    _agree(sol, dense, lam)


def cone_model(X, y01, lam2, lower, upper, intercept, sample_weight) -> Formulation:
    """The model written from the maths: ``(λ2/2)‖w‖² + I(b) + (1/Σs) Σ_i s_i log(1 + e^{−y_i(x_i·w + b)})`` with
    ``l ≤ w ≤ u`` (CVXPY's ``logistic`` atom, exponential cones); ``I(b)`` 0, ``b = 0`` or ``(μ/2)b²``."""
    n, d = X.shape
    y = 2.0 * y01 - 1.0
    w = cp.Variable(d)
    b = 0.0 if intercept is False else cp.Variable()
    s = np.ones(n) if sample_weight is None else sample_weight
    obj = lam2 / 2 * cp.sum_squares(w) + (s / s.sum()) @ cp.logistic(-cp.multiply(y, X @ w + b))
    if isinstance(intercept, rs.Penalty):
        obj = obj + intercept.l2 / 2 * cp.square(b)
    cons = [w[np.isfinite(lower)] >= lower[np.isfinite(lower)], w[np.isfinite(upper)] <= upper[np.isfinite(upper)]]
    return Formulation(obj, cons, w, b)


@pytest.mark.parametrize("intercept", [True, False, rs.L2(0.5)])
@pytest.mark.parametrize("wide", [False, True])
def test_signs_and_bounds_against_an_exponential_cone_model(intercept, wide, monkeypatch):
    """Signs and bounds that bind, by the Hessian route and by conjugate gradients (``wide``: the dense data are
    solved as if wide), against the test's own CVXPY model."""
    if wide:
        monkeypatch.setattr(logistic_newton, "DENSE_HESSIAN_MAX_D", 0)
    X, y = make_classification(150, 8, seed=9)
    sw = np.random.default_rng(4).uniform(0.5, 2.0, 150)
    signs = np.array([1, -1, 0, 1, 0, -1, 0, 1])
    lam2 = 0.01
    prob = rs.Problem(loss=rs.Logistic(), penalty=rs.L2(lam2), signs=signs, intercept=intercept,
                      bounds={2: (-0.3, 0.2), 4: (0.1, None), 7: (None, 0.05)})
    model = prob.normalize(X, y, sample_weight=sw)
    lower, upper = model.feasible_set.lower, model.feasible_set.upper
    sol = prob.solve(X, y, solver="logistic-newton", sample_weight=sw, tol=1e-9)
    assert sol.status == "optimal" and sol.extra["hessian"] == ("conjugate gradients" if wide else "dense")
    ref = certified_reference(prob, X, y, partial(cone_model, X, y, lam2, lower, upper, intercept, sw),
                              sample_weight=sw, package_fallback=(), max_rtol=1e-7)
    assert sol.objective - ref.objective <= sol.gap + 1e-12
    assert sol.objective >= ref.bound - 1e-12
    assert sol.violation == 0.0 and np.all(sol.w >= lower) and np.all(sol.w <= upper)
    # the constraints bind: the unconstrained optimum is elsewhere
    free = rs.Problem(loss=rs.Logistic(), penalty=rs.L2(lam2), intercept=intercept).solve(
        X, y, solver="logistic-newton", sample_weight=sw)
    assert free.objective < sol.objective - 1e-4


def test_refuses_what_it_cannot_solve_and_says_why():
    X, y = make_classification(40, 3, seed=1)
    cases = [
        (rs.Problem(loss=rs.Logistic(), penalty=rs.L2(0.1) + rs.L1(0.01)), "L1"),
        (rs.Problem(loss=rs.Logistic(), penalty=rs.L1(0.1)), "L2"),
        (rs.Problem(loss=rs.Logistic(), penalty=rs.L2(0.1), uncertainty=rs.Box(0.1)), "uncertainty"),
        (rs.Problem(loss=rs.Logistic(), penalty=rs.L2(0.1), uncertainty=rs.Wasserstein(0.1)), "uncertainty"),
        (rs.Problem(loss=rs.Hinge(), penalty=rs.L2(0.1)), "logistic"),
    ]
    for prob, word in cases:
        with pytest.raises(rs.UnsupportedModelError, match=word):
            prob.solve(X, y, solver="logistic-newton")


def test_linear_constraints_are_refused():
    from scipy.optimize import LinearConstraint

    X, y = make_classification(40, 3, seed=1)
    prob = rs.Problem(loss=rs.Logistic(), penalty=rs.L2(0.1),
                      constraints=[LinearConstraint(np.ones((1, 3)), -1.0, 1.0)])
    with pytest.raises(rs.UnsupportedModelError, match="linear constraints"):
        prob.solve(X, y, solver="logistic-newton")


def test_max_iter_is_reported_not_hidden():
    X, y = make_classification(300, 8, seed=3)
    prob = rs.Problem(loss=rs.Logistic(), penalty=rs.L2(1e-6))
    with pytest.warns(rs.ConvergenceWarning):
        sol = prob.solve(X, y, solver="logistic-newton", max_iter=1, tol=1e-12)
    assert sol.status == "max_iter" and sol.iterations == 1 and sol.gap > 0


def test_auto_chooses_it_for_the_models_it_accepts():
    X, y = make_classification(200, 6, seed=2)
    smooth = rs.Problem(loss=rs.Logistic(), penalty=rs.L2(1e-2), signs=[1, 0, 0, -1, 0, 0])
    assert choose_backend(smooth, X) == "logistic-newton"
    assert choose_backend(smooth, sp.csr_matrix(X)) == "logistic-newton"
    sol = smooth.solve(X, y, solver="auto")
    assert sol.solver == "logistic-newton" and sol.status == "optimal"
    robust = rs.Problem(loss=rs.Logistic(), penalty=rs.L2(1e-2), uncertainty=rs.Box(0.1))
    assert choose_backend(robust, X) != "logistic-newton"


@pytest.mark.parametrize("sparse", [False, True])
def test_every_weight_at_its_bound(sparse):
    """Bounds that hold every weight at the optimum (a tiny box, no intercept): the Newton block is empty and the
    point is the box's corner the exponential-cone model finds."""
    X, y = make_classification(120, 4, seed=6, sparse=sparse)
    lam2 = 1e-3
    prob = rs.Problem(loss=rs.Logistic(), penalty=rs.L2(lam2), intercept=False,
                      bounds=(np.full(4, -1e-3), np.full(4, 1e-3)))
    sol = prob.solve(X, y, solver="logistic-newton", tol=1e-9)
    assert sol.status == "optimal"
    model = prob.normalize(X, y)
    Xd = X.toarray() if sparse else X
    ref = certified_reference(prob, X, y, partial(cone_model, Xd, y, lam2, model.feasible_set.lower,
                                                  model.feasible_set.upper, False, None),
                              package_fallback=(), max_rtol=1e-7)
    assert sol.objective - ref.objective <= sol.gap + 1e-12
    assert np.all(np.abs(np.abs(sol.w) - 1e-3) < 1e-12)


def test_hessian_by_blocks_of_rows(monkeypatch):
    """The Hessian's product summed over blocks of 1,024 rows (3 blocks here, a column subset when a bound is
    active) gives scikit-learn's optimum and the bound-constrained one of the exponential-cone model."""
    monkeypatch.setattr(logistic_newton, "GRAM_BLOCK", 1)
    X, y = make_classification(2500, 5, seed=8)
    curv = np.random.default_rng(1).uniform(0.0, 0.25, 2500)
    cols = np.array([0, 2, 3])
    gram, col = logistic_newton.weighted_gram(X, curv, cols)
    np.testing.assert_allclose(gram, X[:, cols].T @ (curv[:, None] * X[:, cols]), rtol=1e-12)
    np.testing.assert_allclose(col, X[:, cols].T @ curv, rtol=1e-12)
    terms = logistic_newton.Terms(X, X.T, np.ones(2500), np.ones(2500), 0.5, 0.0, True, np.full(5, -np.inf),
                                  np.full(5, np.inf))
    np.testing.assert_allclose(logistic_newton.hessian_diagonal(terms, None, curv, cols), np.diag(gram) + 0.5,
                               rtol=1e-12)
    lam = 1e-3
    prob = rs.Problem(loss=rs.Logistic(), penalty=rs.L2(lam))
    sol = prob.solve(X, y, solver="logistic-newton", tol=1e-9)
    assert sol.status == "optimal" and sol.extra["hessian"] == "dense"
    _agree(sol, prob.certify(X, y, *_sklearn(X, y, lam)), lam)
    bounded = rs.Problem(loss=rs.Logistic(), penalty=rs.L2(lam), bounds={0: (-0.05, 0.05)})
    got = bounded.solve(X, y, solver="logistic-newton", tol=1e-9)
    model = bounded.normalize(X, y)
    ref = certified_reference(bounded, X, y, partial(cone_model, X, y, lam, model.feasible_set.lower,
                                                     model.feasible_set.upper, True, None),
                              package_fallback=(), max_rtol=1e-7)
    assert got.status == "optimal" and got.objective - ref.objective <= got.gap + 1e-12
    assert abs(got.w[0]) == pytest.approx(0.05)

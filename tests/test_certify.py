"""``Problem.certify``: points computed elsewhere (liblinear, perturbed, sign-violating) get a valid bound.

The optimum comes from a tight Clarabel solve whose own certificate is checked: with ``ref.gap`` the
package's gap at the reference, ``ref.objective − ref.gap ≤ P* ≤ ref.objective``. So a certified bound
on a point's excess ``P(w) − P*`` must be at least ``P(w) − ref.objective``, and the lower bound on the
optimum at most ``ref.objective``: claims the test can prove without trusting any solver's status.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.svm import LinearSVC

import robustsvm as rs
import robustsvm.certificates.certify as certify_module

from .conftest import standardized

LAM = 1e-2


@pytest.fixture(scope="module")
def wdbc_std():
    return standardized("wdbc")


def _reference(problem, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = problem.solve(X, y, solver="clarabel", tol=1e-10)
    assert ref.gap <= 1e-7 * max(1.0, ref.objective), (ref.gap, ref.status)  # its own certificate holds
    return ref


def _liblinear(X, y, **kw):
    n = X.shape[0]
    # liblinear: ½‖w‖² + C Σ hinge; the model (λ/2)‖w‖² + (1/n) Σ hinge is it times λ with C = 1/(λn)
    clf = LinearSVC(loss="hinge", C=1.0 / (LAM * n), dual=True, tol=1e-8, max_iter=200_000, random_state=0, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return clf.fit(X, y)


def _hand_objective(X, y, w, b=0.0):
    """(λ/2)‖w‖² + mean max(0, 1 − y(x·w + b)), written here."""
    ypm = np.where(y == np.unique(y)[1], 1.0, -1.0)
    return 0.5 * LAM * w @ w + np.mean(np.maximum(0.0, 1.0 - ypm * (X @ w + b)))


def _assert_valid(cert, ref):
    assert cert.bound <= ref.objective + 1e-12 * max(1.0, ref.objective)
    assert cert.gap >= cert.objective - ref.objective - 1e-12 * max(1.0, ref.objective)


def test_liblinear_point_on_the_unconstrained_model_is_certified_tightly(wdbc_std):
    X, y = wdbc_std
    clf = _liblinear(X, y, fit_intercept=False)
    problem = rs.Problem(penalty=rs.L2(LAM), intercept=False)
    ref = _reference(problem, X, y)
    cert = problem.certify(X, y, clf.coef_, 0.0)
    assert cert.objective == pytest.approx(_hand_objective(X, y, clf.coef_.ravel()), rel=1e-12)
    assert cert.feasible and cert.violation == 0.0
    _assert_valid(cert, ref)
    excess_upper = cert.objective - ref.objective + ref.gap
    # the margins alone leave the samples on the margin at a_i = c_i: loose; the ascent closes it
    assert cert.recovered_bound < cert.bound
    assert cert.gap <= 1e-5 * max(1.0, cert.objective) + 10 * max(excess_upper, 0.0), (cert.gap, excess_upper)


def test_liblinear_with_a_large_intercept_scaling_on_the_free_intercept_model(wdbc_std):
    X, y = wdbc_std
    clf = _liblinear(X, y, fit_intercept=True, intercept_scaling=100.0)
    problem = rs.Problem(penalty=rs.L2(LAM))
    ref = _reference(problem, X, y)
    cert = problem.certify(X, y, clf.coef_, clf.intercept_)
    assert cert.objective == pytest.approx(_hand_objective(X, y, clf.coef_.ravel(), float(clf.intercept_[0])),
                                           rel=1e-12)
    _assert_valid(cert, ref)
    excess_upper = cert.objective - ref.objective + ref.gap
    assert cert.gap <= 1e-5 * max(1.0, cert.objective) + 10 * max(excess_upper, 0.0), (cert.gap, excess_upper)


@pytest.mark.parametrize("scale", [1e-3, 3e-2, 0.3])
def test_a_perturbed_point_gets_a_bound_above_its_true_excess(wdbc_std, scale):
    X, y = wdbc_std
    clf = _liblinear(X, y, fit_intercept=False)
    problem = rs.Problem(penalty=rs.L2(LAM), intercept=False)
    ref = _reference(problem, X, y)
    w = clf.coef_.ravel() + scale * np.random.default_rng(5).normal(size=X.shape[1])
    cert = problem.certify(X, y, w)
    _assert_valid(cert, ref)
    excess = cert.objective - ref.objective
    assert excess > 0 and cert.status == "feasible"
    assert cert.gap <= 2.0 * (excess + ref.gap) + 1e-6  # and close to it


def test_bound_stays_valid_whatever_the_steps_do(wdbc_std, monkeypatch):
    X, y = wdbc_std
    problem = rs.Problem(penalty=rs.L2(LAM), intercept=False)
    ref = _reference(problem, X, y)
    w = ref.w + 0.05
    # far too long steps (a curvature estimate a million times too small) and a handful of them
    monkeypatch.setattr(certify_module._Dual, "curvature", lambda self, a: 1e-6)
    for steps in (0, 3, 50):
        cert = problem.certify(X, y, w, ascent_steps=steps)
        _assert_valid(cert, ref)
        assert cert.steps <= steps


def test_a_point_violating_the_signs_is_reported_infeasible_with_its_violation(wdbc_std):
    X, y = wdbc_std
    d = X.shape[1]
    signs = np.zeros(d)
    signs[:10] = 1.0
    clf = _liblinear(X, y, fit_intercept=False)
    w = clf.coef_.ravel()
    expected = float(np.max(np.maximum(-signs * w, 0.0)))
    assert expected > 0  # liblinear does not know the signs
    problem = rs.Problem(penalty=rs.L2(LAM), signs=signs, intercept=False)
    ref = _reference(problem, X, y)
    cert = problem.certify(X, y, w)
    assert cert.status == "infeasible" and not cert.feasible
    assert cert.violation == pytest.approx(expected, rel=1e-12)
    assert cert.sign_violation == pytest.approx(expected, rel=1e-12)
    assert "violates" in cert.message
    # the bound is still a bound on the optimum; the projected point is feasible and certified by it
    assert cert.bound <= ref.objective + 1e-12
    wp = np.where(signs * w < 0, 0.0, w)
    assert cert.projected_objective == pytest.approx(_hand_objective(X, y, wp), rel=1e-12)
    assert cert.projected_gap >= cert.projected_objective - ref.objective - 1e-12
    assert ref.problem.violation(X, y, wp) == 0.0


@pytest.mark.parametrize("uncertainty", [rs.Box(0.05), rs.Ball(0.1), rs.Ball(0.1, p=1)])
def test_robust_models_get_valid_bounds(wdbc_std, uncertainty):
    X, y = wdbc_std
    X, y = X[:200], y[:200]
    problem = rs.Problem(loss=rs.SquaredHinge(), penalty=rs.L2(LAM), uncertainty=uncertainty,
                         intercept=rs.L2(1.0))
    ref = _reference(problem, X, y)
    at_optimum = problem.certify(X, y, ref.w, ref.b)
    _assert_valid(at_optimum, ref)
    assert at_optimum.gap <= 1e-6 * max(1.0, ref.objective)
    w = ref.w + 0.02 * np.random.default_rng(1).normal(size=X.shape[1])
    cert = problem.certify(X, y, w, ref.b)
    _assert_valid(cert, ref)
    assert cert.gap <= 3.0 * (cert.objective - ref.objective + ref.gap) + 1e-6


def test_bad_points_are_refused_with_the_argument_named(wdbc_std):
    X, y = wdbc_std
    problem = rs.Problem(penalty=rs.L2(LAM), intercept=False)
    with pytest.raises(ValueError, match="w must have shape"):
        problem.certify(X, y, np.ones(3))
    with pytest.raises(ValueError, match="w contains NaN"):
        problem.certify(X, y, np.full(X.shape[1], np.nan))
    with pytest.raises(ValueError, match="b must be 0"):
        problem.certify(X, y, np.zeros(X.shape[1]), 1.0)
    with pytest.raises(ValueError, match="ascent_steps"):
        problem.certify(X, y, np.zeros(X.shape[1]), ascent_steps=-1)
    with pytest.raises(ValueError, match="linear model"):
        rs.Problem(kernel=rs.RBF(1.0), penalty=rs.L2(LAM)).certify(X, y, np.zeros(X.shape[1]))


def test_summary_and_dict_say_what_was_found(wdbc_std):
    X, y = wdbc_std
    problem = rs.Problem(penalty=rs.L2(LAM), intercept=False)
    cert = problem.certify(X, y, np.zeros(X.shape[1]))
    assert cert.objective == pytest.approx(1.0)  # w = 0: every hinge is 1
    assert "objective - optimum <=" in cert.summary()
    doc = cert.to_dict()
    assert doc["gap"] == cert.gap and doc["status"] == cert.status and len(doc["w"]) == X.shape[1]


@pytest.mark.parametrize("bounded", [True, False])
def test_projection_on_the_free_intercept_dual_set_matches_a_cvxpy_projection(bounded):
    import cvxpy as cp

    rng = np.random.default_rng(3)
    for _ in range(20):
        n = int(rng.integers(3, 25))
        y = np.where(np.arange(n) % 3 == 0, -1.0, 1.0)
        dual = certify_module._Dual.__new__(certify_module._Dual)
        dual.y, dual.mode = y, "free"
        dual.upper = rng.uniform(0.1, 1.0, n) if bounded else np.full(n, np.inf)
        a = 2.0 * rng.normal(size=n)
        p = dual.project(a)
        x = cp.Variable(n)
        cons = [x >= 0, y @ x == 0] + ([x <= dual.upper] if bounded else [])
        cp.Problem(cp.Minimize(cp.sum_squares(x - a)), cons).solve(solver="CLARABEL")
        # p is feasible (exactly) and at least as close to a as the solver's point: the projection
        assert np.sum((p - a) ** 2) <= np.sum((x.value - a) ** 2) + 1e-7
        assert abs(p @ y) <= 1e-9 * max(1.0, np.abs(p).sum()) and np.all(p >= 0) and np.all(p <= dual.upper)


def test_hard_margin_point_shrunk_inside_the_margins_is_infeasible_and_its_rescaling_certified(wdbc_std):
    X, y = wdbc_std
    X, y = X[:200], y[:200]
    problem = rs.Problem(loss=rs.HardMargin(), penalty=rs.L2(1.0))
    ref = _reference(problem, X, y)
    cert = problem.certify(X, y, 0.9 * ref.w, 0.9 * ref.b)  # every margin times 0.9: the tight ones below 1
    ypm = np.where(y == np.unique(y)[1], 1.0, -1.0)
    expected = float(np.max(1.0 - 0.9 * ypm * (X @ ref.w + ref.b)))
    assert cert.status == "infeasible" and cert.violation == pytest.approx(expected, rel=1e-6)
    # dividing by the smallest margin puts the point back on the constraints: certified, near the optimum
    assert cert.projected_gap >= cert.projected_objective - ref.objective - 1e-10
    assert cert.bound <= ref.objective + 1e-10
    outside = problem.certify(X, y, 1.1 * ref.w, 1.1 * ref.b)  # feasible, objective 1.21 times the optimum
    assert outside.feasible
    _assert_valid(outside, ref)


def test_sparse_data_with_l1_and_signs(wdbc_std):
    import scipy.sparse as sp

    X, y = wdbc_std
    Xs = sp.csr_matrix(np.where(np.abs(X) > 0.5, X, 0.0))
    signs = np.where(np.arange(X.shape[1]) < 5, 1, 0)
    problem = rs.Problem(penalty=rs.L2(LAM) + rs.L1(1e-3), signs=signs)
    ref = _reference(problem, Xs, y)
    cert = problem.certify(Xs, y, ref.w + 0.01, ref.b)
    _assert_valid(cert, ref)
    assert cert.gap <= 2.0 * (cert.objective - ref.objective + ref.gap) + 1e-6


def test_dual_projection_is_the_euclidean_projection():
    """The projection on {0 ≤ a ≤ U, Σ y_i a_i = 0} against a CVXPY model of the same projection.

    Ties among the breakpoints (integer points) and infinite upper bounds included; the returned point
    must be feasible and no farther from ``a`` than CVXPY's point (up to CVXPY's own accuracy).
    """
    import cvxpy as cp

    rng = np.random.default_rng(1)
    for trial in range(60):
        n = int(rng.integers(2, 30))
        y = rng.choice([-1.0, 1.0], n)
        y[0], y[1] = 1.0, -1.0
        upper = rng.uniform(0.1, 2.0, n)
        if trial % 3 == 0:
            upper[rng.random(n) < 0.3] = np.inf
        a = rng.normal(scale=2.0, size=n)
        if trial % 5 == 0:
            a = np.round(a)
        dual = certify_module._Dual.__new__(certify_module._Dual)
        dual.mode, dual.y, dual.upper = "free", y, upper
        p = dual.project(a)
        assert abs(float(y @ p)) <= 1e-9 * max(1.0, float(np.abs(a).sum()))
        assert np.all(p >= 0.0) and np.all(p <= upper)
        x = cp.Variable(n)
        finite = np.isfinite(upper)
        cp.Problem(cp.Minimize(cp.sum_squares(x - a)),
                   [x >= 0, y @ x == 0, x[finite] <= upper[finite]]).solve(solver="CLARABEL")
        assert np.sum((p - a) ** 2) <= np.sum((x.value - a) ** 2) + 1e-6


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_the_one_pass_products_of_a_csr_matrix_are_its_two_products(index_dtype):
    """``margins_and_image`` reads a CSR ``X`` once for ``Xw`` and ``Xᵀu``: both against dense NumPy products."""
    import scipy.sparse as sp

    from robustsvm.certificates.products import margins_and_image

    rng = np.random.default_rng(3)
    X = sp.random(300, 70, density=0.05, format="csr", random_state=4, data_rvs=rng.standard_normal)
    X.indices, X.indptr = X.indices.astype(index_dtype), X.indptr.astype(index_dtype)
    w, u = rng.standard_normal(70), rng.standard_normal(300)
    dense = X.toarray()
    for data in (X, dense):
        z, s = margins_and_image(data, w, u)
        np.testing.assert_allclose(z, dense @ w, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(s, dense.T @ u, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("intercept", [False, True])
def test_a_csr_point_gets_the_bound_of_its_dense_copy(wdbc_std, intercept):
    """The certifier on a CSR ``X`` (one compiled pass for ``Xw`` and ``Xᵀ(a∘y)``) and on the same data dense (two
    BLAS products) gives the same objective and bound for the same point and multipliers, the bound below a tight
    reference optimum."""
    import scipy.sparse as sp

    from robustsvm.certificates.duality import certify
    from robustsvm.result import Result

    X, y = wdbc_std
    signs = np.where(np.arange(X.shape[1]) % 3 == 0, 1, np.where(np.arange(X.shape[1]) % 3 == 1, -1, 0))
    problem = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(LAM), signs=signs, intercept=intercept)
    ref = _reference(problem, X, y)
    sol = problem.solve(X, y, solver="dcd", tol=1e-3)
    point = Result(w=sol.w, b=sol.b, status="optimal", multipliers=sol.multipliers, dual_feasible=False)
    dense = certify(problem.normalize(X, y), point, tol=1e-3)
    csr = certify(problem.normalize(sp.csr_matrix(X), y), point, tol=1e-3)
    assert csr.dual_value == pytest.approx(dense.dual_value, rel=1e-10, abs=1e-12)
    assert csr.objective == pytest.approx(dense.objective, rel=1e-10, abs=1e-12)
    assert csr.dual_value <= ref.objective + 1e-9 and csr.status == "optimal"
    assert csr.objective - csr.dual_value <= 1e-3 * abs(csr.objective)


def test_the_certifier_s_decision_is_x_times_its_returned_point(wdbc_std):
    """``certify_with_decision`` returns ``Xw`` at the point it certified (after the projection on the signs and the
    rescaling onto a hard margin), against a dense NumPy product at the returned ``w``; a degeneracy report built
    from it equals the one built from that product."""
    import scipy.sparse as sp

    from robustsvm.certificates import degenerate
    from robustsvm.certificates.duality import certify_with_decision
    from robustsvm.result import Result

    X, y = wdbc_std
    X, y = X[:200], y[:200]
    signs = np.where(np.arange(X.shape[1]) % 2 == 0, 1, -1)
    rng = np.random.default_rng(5)
    for problem, scale in ((rs.Problem(loss=rs.Hinge(), penalty=rs.L2(LAM), signs=signs), 1.0),
                           (rs.Problem(loss=rs.HardMargin(), penalty=rs.L2(1.0)), 0.9)):
        ref = _reference(problem, X, y)
        w = scale * ref.w + (0.05 * rng.standard_normal(ref.w.size) if scale == 1.0 else 0.0)  # off the signs
        for data in (X, sp.csr_matrix(X)):
            model = problem.normalize(data, y)
            point = Result(w=w, b=scale * ref.b, status="optimal", multipliers=np.asarray(ref.multipliers))
            cert, decision = certify_with_decision(model, point, tol=1e-3)
            np.testing.assert_allclose(decision, X @ cert.w, rtol=1e-10, atol=1e-10)
            assert scale == 1.0 or not np.allclose(cert.w, w)  # the hard-margin point was rescaled
            args = (model, cert.w, cert.b, cert.gap, cert.objective)
            assert degenerate.diagnose(*args, decision=decision) == degenerate.diagnose(*args)


def _hinge_objective(X, y, w, b, lam, signs):
    """``(λ/2)‖w‖² + mean max(0, 1 − y(Xw + b))`` at ``w`` clipped to the signs, in NumPy."""
    w = np.where(signs * w < 0, 0.0, w)
    return 0.5 * lam * w @ w + np.mean(np.maximum(0.0, 1.0 - y * (X @ w + b)))


def test_the_certifiers_objective_of_a_signed_sparse_point_is_numpys(wdbc_std):
    """The certifier forms ``X w`` itself and its compiled nominal objective: at a sign-feasible point the objective
    and the decision are NumPy's at that point; at a point with weights on the wrong side, those of the point
    projected on the signs."""
    import scipy.sparse as sp

    from robustsvm.certificates.duality import certify_with_decision
    from robustsvm.result import Result

    X, y = wdbc_std
    X, y = X[:250], y[:250]
    d = X.shape[1]
    signs = np.where(np.arange(d) % 3 == 0, 1, np.where(np.arange(d) % 3 == 1, -1, 0))
    problem = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(LAM), signs=signs)
    sol = problem.solve(X, y, solver="dcd", tol=1e-6)
    model = problem.normalize(sp.csr_matrix(X), y)
    yy = model.y
    cert, decision = certify_with_decision(model, Result(w=sol.w, b=0.0, status="optimal",
                                                         multipliers=sol.multipliers), tol=1e-6)
    want = 0.5 * LAM * sol.w @ sol.w + np.mean(np.maximum(0.0, 1.0 - yy * (X @ sol.w)))
    assert cert.objective == pytest.approx(want, rel=1e-12)
    np.testing.assert_allclose(decision, X @ sol.w, rtol=1e-12, atol=1e-12)
    off = sol.w + 0.05 * np.random.default_rng(2).standard_normal(d)  # some weights on the wrong side
    assert np.any(signs * off < 0)
    cert, decision = certify_with_decision(model, Result(w=off, b=0.0, status="max_iter", multipliers=sol.multipliers),
                                           tol=1e-6)
    projected = np.where(signs * off < 0, 0.0, off)
    np.testing.assert_array_equal(cert.w, projected)
    assert cert.objective == pytest.approx(_hinge_objective(X, yy, off, 0.0, LAM, signs), rel=1e-12)
    np.testing.assert_allclose(decision, X @ projected, rtol=1e-12, atol=1e-12)

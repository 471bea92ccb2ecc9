"""Kernels and kernel models: Gram matrices, the expansion, objectives and the conic dual path."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics.pairwise import polynomial_kernel, rbf_kernel

import robustsvm as rs
from robustsvm.duals import KernelDual, kernel_primal, solve_nqp_cvxpy
from tests.conftest import make_classification

TIGHT = {"tol_gap_abs": 1e-11, "tol_gap_rel": 1e-11, "tol_feas": 1e-11}


@pytest.mark.parametrize("sparse", [False, True])
def test_gram_matrices_match_scikit_learn(sparse):
    X, _ = make_classification(20, 5, seed=1, sparse=sparse)
    Z, _ = make_classification(7, 5, seed=2, sparse=sparse)
    for sigma in (0.3, 1.0, 3.0):
        assert np.allclose(rs.RBF(sigma)(X, Z), rbf_kernel(X, Z, gamma=1 / (2 * sigma**2)))
    for k in (2, 4, 6):
        assert np.allclose(rs.Polynomial(k)(X, Z), polynomial_kernel(X, Z, degree=k, gamma=1.0, coef0=1.0))
    assert np.allclose(rs.Linear()(X, Z), np.asarray((X @ Z.T).toarray() if sparse else X @ Z.T))
    assert np.allclose(rs.RBF(1.0).diagonal(X), np.diag(rs.RBF(1.0)(X)))
    assert np.allclose(rs.Polynomial(3).diagonal(X), np.diag(rs.Polynomial(3)(X)))


def test_decision_function_is_the_kernel_expansion():
    X, y = make_classification(50, 3, seed=3)
    Xt, _ = make_classification(20, 3, seed=4)
    kernel = rs.RBF(0.8)
    prob = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(0.05), intercept=rs.L2(1.0), kernel=kernel)
    sol = prob.solve(X, y, solver="m3", tol=1e-9, max_iter=100000)
    data = prob.prepare(X, y)
    alpha = sol.extra["dual_point"]
    # f(x) = Σ_j y_j α_j k(x, x_j)/λ + Σ_j y_j α_j/μ, computed from scratch with scikit-learn's Gram
    f = rbf_kernel(Xt, X, gamma=1 / (2 * 0.8**2)) @ (data.y * alpha) / 0.05 + data.y @ alpha / 1.0
    assert np.allclose(sol.decision_function(Xt), f, atol=1e-10)
    assert np.array_equal(sol.predict(Xt), np.where(f > 0, 1, 0))
    assert sol.b == pytest.approx(data.y @ alpha)


@pytest.mark.parametrize("loss", [rs.Hinge(), rs.SquaredHinge(), rs.HardMargin()])
def test_kernel_objective_equals_primal_objective_for_linear_kernel(loss):
    """kernel_primal at w = Σ a_j x_j equals Problem.objective at that w (independent formulas)."""
    X, y = make_classification(30, 4, seed=5)
    rng = np.random.default_rng(0)
    kprob = rs.Problem(loss=loss, penalty=rs.L2(0.3), intercept=rs.L2(0.4), kernel=rs.Linear())
    pprob = rs.Problem(loss=loss, penalty=rs.L2(0.3), intercept=rs.L2(0.4))
    model = kprob.normalize(X, y)
    K = X @ X.T
    for _ in range(5):
        coef, b = rng.normal(size=30) * 0.1, rng.normal()
        w = X.T @ coef
        value, violation = kernel_primal(model, K, coef, b)
        assert value == pytest.approx(pprob.objective(X, y, w, b))
        assert violation == pytest.approx(pprob.violation(X, y, w, b))


@pytest.mark.parametrize("solver", ["clarabel", "m3"])
def test_linear_kernel_model_equals_linear_model(solver):
    X, y = make_classification(60, 5, seed=6)
    Xt, _ = make_classification(25, 5, seed=7)
    for intercept in (False, rs.L2(5.0)):
        kprob = rs.Problem(loss=rs.SquaredHinge(), penalty=rs.L2(0.1), intercept=intercept, kernel=rs.Linear())
        pprob = rs.Problem(loss=rs.SquaredHinge(), penalty=rs.L2(0.1), intercept=intercept)
        ksol = kprob.solve(X, y, solver=solver, **({"solver_options": TIGHT} if solver == "clarabel" else
                                                   {"tol": 1e-10, "max_iter": 100000}))
        psol = pprob.solve(X, y, solver="clarabel", solver_options=TIGHT)
        assert ksol.w is None
        assert np.allclose(ksol.decision_function(Xt), psol.decision_function(Xt), atol=1e-6)
        assert ksol.objective == pytest.approx(psol.objective, rel=1e-7)
        assert ksol.status == "optimal" and -1e-12 <= ksol.gap < 1e-7


def test_sparse_input_kernel_model():
    X, y = make_classification(40, 6, seed=8, sparse=True)
    prob = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(0.1), intercept=False, kernel=rs.RBF(1.0))
    a = prob.solve(X, y, solver="clarabel", solver_options=TIGHT)
    b = prob.solve(X.toarray(), y, solver="clarabel", solver_options=TIGHT)
    assert sp.issparse(a.support_vectors)
    assert np.allclose(a.decision_function(X), b.decision_function(X.toarray()), atol=1e-8)


def _free_intercept_kernel_fit(loss, lam, kernel, X, y):
    """The free-intercept kernel dual: the NQP plus yᵀα = 0 by clarabel, b the multiplier."""
    prob = rs.Problem(loss=loss, penalty=rs.L2(lam), kernel=kernel)
    dual = KernelDual(prob.normalize(X, y), allow_free=True)
    res = solve_nqp_cvxpy(dual.nqp, solver_options=TIGHT, equality=dual.equality)
    assert res.status == "optimal" and res.kkt_residual < 1e-7
    assert abs(dual.equality @ res.v) < 1e-9
    return dual, res, dual.recover(res.v, b=res.multiplier)


@pytest.mark.parametrize("loss", [rs.Hinge(), rs.SquaredHinge(), rs.Hinge(reduction="sum")])
def test_free_intercept_kernel_dual_through_the_equality(loss):
    """A free intercept: the dual gains yᵀα = 0 and b is its multiplier (Linear kernel vs the primal)."""
    X, y = make_classification(50, 4, seed=3)
    dual, res, rec = _free_intercept_kernel_fit(loss, 0.2, rs.Linear(), X, y)
    psol = rs.Problem(loss=loss, penalty=rs.L2(0.2)).solve(X, y, solver="clarabel", solver_options=TIGHT)
    assert rec.b == pytest.approx(psol.b, abs=1e-7)
    assert np.allclose(np.asarray(rec.support_vectors).T @ rec.dual_coef, psol.w, atol=1e-7)
    assert rec.objective == pytest.approx(psol.objective, rel=1e-9)
    assert dual.dual_value(res.v) == pytest.approx(psol.objective, rel=1e-9)


def test_free_intercept_rbf_matches_libsvm():
    """Hinge, mean reduction, free intercept = scikit-learn's SVC with C = 1/(λn)."""
    from sklearn.svm import SVC

    X, y = make_classification(80, 3, seed=12)
    Xt, _ = make_classification(40, 3, seed=13)
    lam, sigma = 0.05, 1.5
    _, _, rec = _free_intercept_kernel_fit(rs.Hinge(), lam, rs.RBF(sigma), X, y)
    svc = SVC(C=1 / (lam * 80), kernel="rbf", gamma=1 / (2 * sigma**2), tol=1e-10).fit(X, y)
    # SVC's decision function is that of ½‖w‖² + C Σξ, i.e. ours: same w and b
    f = rs.RBF(sigma)(Xt, rec.support_vectors) @ rec.dual_coef + rec.b
    assert np.allclose(f, svc.decision_function(Xt), atol=1e-5)


def test_backends_on_free_intercept_kernel_models():
    X, y = make_classification(20, 3)
    prob = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(1.0), kernel=rs.RBF(1.0))  # intercept=True
    # m3 cannot take the equality yᵀα = 0; the conic backends solve the dual with it
    assert any("free intercept" in r for r in rs.get_backend("m3").check(prob))
    assert rs.get_backend("clarabel").check(prob) == []
    with pytest.raises(rs.UnsupportedModelError, match="intercept"):
        prob.solve(X, y, solver="m3")
    sol = prob.solve(X, y, solver="clarabel")
    assert sol.status == "optimal" and sol.gap < 1e-6
    assert rs.get_backend("clarabel").check(
        rs.Problem(loss=rs.Hinge(), penalty=rs.L2(1.0), intercept=False, kernel=rs.RBF(1.0),
                   uncertainty=rs.Box(0.1)))
    dual = KernelDual(prob.normalize(X, y), allow_free=True)
    with pytest.raises(ValueError, match="pass b"):
        dual.recover(np.zeros(20))
    with pytest.raises(ValueError, match="equality"):
        KernelDual(prob.normalize(X, y))


def test_hard_margin_kernel_dual_is_infeasible_when_not_separable():
    """Duplicated points with opposite labels: no separating function, the dual is unbounded."""
    X = np.array([[0.0, 1.0], [0.0, 1.0], [1.0, 0.0]])
    y = np.array([0, 1, 1])
    prob = rs.Problem(loss=rs.HardMargin(), penalty=rs.L2(1.0), intercept=False, kernel=rs.RBF(1.0))
    dual = KernelDual(prob.normalize(X, y))
    v = np.array([1.0, 1.0, 0.0]) * 1e6  # along this ray F decreases without bound
    assert dual.nqp.objective(v) < -1e5
    with pytest.raises(rs.SolverError):
        prob.solve(X, y, solver="clarabel")

"""Conic solves of nominal models, checked against independent computations."""

from functools import partial

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp

import robustsvm as rs
from robustsvm.exceptions import ConvergenceWarning

from ._reference import Formulation, certified_reference
from .conftest import make_classification


def direct_cvxpy(X, y01, lam2, lam1, signs, loss, reduction, intercept) -> Formulation:
    """The objective of DESIGN §1 written out by hand in CVXPY (no robustsvm code)."""
    n, d = X.shape
    y = 2.0 * y01 - 1.0
    w = cp.Variable(d)
    b = cp.Variable() if intercept else 0.0
    m = cp.multiply(y, X @ w + b)
    h = cp.Variable(n, nonneg=True)  # max(0, 1 − m) at the optimum
    margins = h >= 1 - m  # its duals: the margin multipliers
    terms = h if loss == "hinge" else cp.square(h)
    data = cp.sum(terms) / (n if reduction == "mean" else 1)
    obj = lam2 / 2 * cp.sum_squares(w) + lam1 * cp.norm1(w) + data
    cons = [w[signs > 0] >= 0, w[signs < 0] <= 0, margins]
    return Formulation(obj, cons, w, b, margins)


def test_matches_liblinear_without_intercept(wdbc):
    from sklearn.svm import LinearSVC

    X, y, _ = wdbc
    n = X.shape[0]
    lam = 1e-2
    prob = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(lam), intercept=False)
    sol = prob.solve(X, y, tol=1e-10)
    svc = LinearSVC(loss="hinge", C=1 / (lam * n), fit_intercept=False, tol=1e-12, max_iter=1_000_000,
                    dual=True, random_state=0).fit(X, y)
    f_lib = prob.objective(X, y, svc.coef_.ravel(), 0.0)
    assert sol.objective <= f_lib * (1 + 1e-7)
    assert abs(sol.objective - f_lib) / f_lib < 1e-4
    assert sol.status == "optimal" and sol.gap < 1e-6


@pytest.mark.parametrize("loss", ["hinge", "squared_hinge"])
@pytest.mark.parametrize("reduction", ["mean", "sum"])
@pytest.mark.parametrize("sparse", [False, True])
def test_l1_l2_signs_intercept_three_ways(loss, reduction, sparse):
    X, y = make_classification(70, 8, seed=3, sparse=sparse)
    signs = np.array([1, -1, 0, 1, 0, -1, 1, 0])
    lam2, lam1 = 0.05, 0.01
    L = rs.Hinge(reduction=reduction) if loss == "hinge" else rs.SquaredHinge(reduction=reduction)
    prob = rs.Problem(loss=L, penalty=rs.L2(lam2) + rs.L1(lam1), signs=signs, intercept=True)
    s_cl = prob.solve(X, y, solver="clarabel", tol=1e-10)
    s_scs = prob.solve(X, y, solver="scs", tol=1e-10, max_iter=200_000)
    Xd = X.toarray() if sp.issparse(X) else X
    # the direct model solved by Clarabel (then SCS), not by the package: its point certified by the package's
    # bound (tests/_reference.py), and CVXPY's value there equal to the objective recomputed in numpy (1e-7)
    direct = certified_reference(prob, X, y, partial(direct_cvxpy, Xd, y, lam2, lam1, signs, loss, reduction, True),
                                 agree_rtol=1e-7, package_fallback=())
    f_direct, w_direct = direct.objective, direct.w
    scale = direct.scale()
    assert abs(s_cl.objective - f_direct) / scale < 1e-6
    assert abs(s_scs.objective - f_direct) / scale < 1e-5
    assert abs(prob.objective(X, y, w_direct, direct.b) - direct.model_value) / scale < 1e-7
    np.testing.assert_allclose(s_cl.w, w_direct, atol=1e-4)
    for s in (s_cl, s_scs):
        assert np.all(s.w[signs > 0] >= -1e-8) and np.all(s.w[signs < 0] <= 1e-8)
        assert s.violation < 1e-7


def test_sign_constraints_bind(wdbc):
    X, y, _ = wdbc
    free = rs.Problem(penalty=rs.L2(1e-2)).solve(X, y)
    # constrain every feature to the opposite of its free sign: all must bind
    flip = -np.sign(free.w).astype(int)
    sol = rs.Problem(penalty=rs.L2(1e-2), signs=flip).solve(X, y)
    assert np.all(flip * sol.w >= -1e-8)
    assert sol.objective > free.objective


def test_iteration_limit_is_reported(wdbc):
    X, y, _ = wdbc
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        sol = rs.Problem(penalty=rs.L2(1e-3)).solve(X, y, solver="clarabel", max_iter=2)
    assert sol.status == "max_iter"


def test_dpp_second_solve_does_not_recompile(monkeypatch, wdbc):
    from cvxpy.reductions.dcp2cone.dcp2cone import Dcp2Cone

    X, y, _ = wdbc
    calls = {"n": 0}
    original = Dcp2Cone.apply

    def counting(self, problem):
        calls["n"] += 1
        return original(self, problem)

    monkeypatch.setattr(Dcp2Cone, "apply", counting)
    prob = rs.Problem(penalty=rs.L2(1e-2) + rs.L1(1e-3))
    program = prob.compile(X, y)
    first = program.solve("CLARABEL")
    n_first = calls["n"]
    assert n_first >= 1
    program.set_values(l2=0.5, l1=0.02)
    second = program.solve("CLARABEL")
    assert calls["n"] == n_first, "changing a parameter value recompiled the problem"
    assert second.time_compile < first.time_compile
    # the re-solved program equals a fresh solve of the new model
    fresh = rs.Problem(penalty=rs.L2(0.5) + rs.L1(0.02)).solve(X, y)
    np.testing.assert_allclose(second.w, fresh.w, atol=1e-6)


def test_sample_weights_as_fold_masks(wdbc):
    X, y, _ = wdbc
    prob = rs.Problem(penalty=rs.L2(1e-2))
    program = prob.compile(X, y, weights_as_parameter=True)
    mask = np.zeros(len(y))
    mask[::2] = 1.0
    program.set_values(sample_weight=mask)
    res = program.solve("CLARABEL")
    refit = prob.solve(X[::2], y[::2])
    np.testing.assert_allclose(res.w, refit.w, atol=1e-6)


def test_solvers_table_and_compare(small):
    X, y = small
    table = rs.solvers()
    names = [r["name"] for r in table]
    assert "clarabel" in names and "scs" in names
    assert "clarabel" in repr(table)
    rows = rs.compare(rs.Problem(penalty=rs.L2(0.1)), X, y, solvers=["scs"],
                      options={"scs": {"tol": 1e-9, "max_iter": 100000}})
    assert [r["solver"] for r in rows] == ["clarabel", "scs"]
    assert abs(rows[1]["rel_obj_diff"]) < 1e-6
    assert "max_abs_dw" in repr(rows)


def test_masks_and_per_sample_radius_squared_hinge(wdbc):
    X, y, _ = wdbc
    X = X[:200, :8]
    y = y[:200]
    r = np.linspace(0.0, 0.2, len(y))
    prob = rs.Problem(loss=rs.SquaredHinge(), penalty=rs.L2(1e-2), uncertainty=rs.Box(radius=r))
    program = prob.compile(X, y, weights_as_parameter=True)
    assert program.radius_per_sample
    mask = (np.arange(len(y)) % 3 != 0).astype(float)
    program.set_values(sample_weight=mask)
    res = program.solve("CLARABEL")
    keep = mask > 0
    refit = rs.Problem(loss=rs.SquaredHinge(), penalty=rs.L2(1e-2), uncertainty=rs.Box(radius=r[keep])).solve(
        X[keep], y[keep])
    np.testing.assert_allclose(res.w, refit.w, atol=1e-6)
    assert abs(res.b - refit.b) < 1e-6


def test_scalar_radius_sweep_reuses_program(wdbc):
    X, y, _ = wdbc
    prob = rs.Problem(penalty=rs.L2(1e-2), uncertainty=rs.Ball(radius=0.1))
    program = prob.compile(X, y)
    assert not program.radius_per_sample
    program.set_values(radius=0.3)
    res = program.solve("CLARABEL")
    fresh = rs.Problem(penalty=rs.L2(1e-2), uncertainty=rs.Ball(radius=0.3)).solve(X, y)
    np.testing.assert_allclose(res.w, fresh.w, atol=1e-6)
    with pytest.raises(ValueError, match="radius_per_sample=True"):
        program.set_values(radius=np.full(len(y), 0.1))
    with pytest.raises(ValueError, match="weights_as_parameter=True"):
        program.set_values(sample_weight=np.ones(len(y)))


@pytest.mark.parametrize("loss", [rs.Hinge(), rs.SquaredHinge(), rs.Hinge(reduction="sum")])
def test_fold_groups_equal_refit(wdbc, loss):
    X, y, _ = wdbc
    folds = np.arange(len(y)) % 5
    prob = rs.Problem(loss=loss, penalty=rs.L2(1e-2) + rs.L1(1e-3), uncertainty=rs.Ball(radius=0.05))
    program = prob.compile(X, y, sample_groups=folds)
    for k in (0, 3):
        g = np.ones(5)
        g[k] = 0.0
        program.set_values(group_weight=g, l2=0.05)
        res = program.solve("CLARABEL")
        keep = folds != k
        refit = rs.Problem(loss=loss, penalty=rs.L2(0.05) + rs.L1(1e-3), uncertainty=rs.Ball(radius=0.05)).solve(
            X[keep], y[keep])
        scale = max(1.0, np.abs(refit.w).max())
        np.testing.assert_allclose(res.w, refit.w, atol=1e-4 * scale)
        assert abs(res.b - refit.b) < 1e-4 * scale
        # same optimum: the refit's objective at the grouped program's point
        f_at_res = refit.problem.objective(X[keep], y[keep], res.w, res.b)
        assert abs(f_at_res - refit.objective) <= 1e-7 * max(1.0, refit.objective)
    with pytest.raises(ValueError, match="shape \\(5,\\)"):
        program.set_values(group_weight=np.ones(3))


def test_kernel_model_with_free_intercept_matches_libsvm(wdbc):
    from sklearn.svm import SVC

    X, y, _ = wdbc
    X, y = X[:200, :10], y[:200]
    lam, sigma = 0.05, 2.0
    sol = rs.Problem(penalty=rs.L2(lam), kernel=rs.RBF(sigma), intercept=True).solve(X, y, solver="clarabel")
    svc = SVC(C=1 / (lam * len(y)), kernel="rbf", gamma=1 / (2 * sigma**2), tol=1e-10).fit(X, y)
    # same minimizer: (λ/2)‖f‖² + (1/n)Σ hinge is λ times libsvm's ½‖f‖² + C Σ hinge with C = 1/(λn)
    np.testing.assert_allclose(sol.decision_function(X), svc.decision_function(X), atol=2e-4)
    assert sol.status == "optimal"


def test_a_compiled_program_answers_with_the_backend_result_type():
    """``ConicProgram.solve`` returns the one :class:`Result`: the solver's own primal and dual values as the typed
    fields the certifier reads (its dual value marked as unchecked), the margin multipliers in model units."""
    from robustsvm.result import Result

    X, y = make_classification(n=60, d=4, seed=1)
    prob = rs.Problem(penalty=rs.L2(0.5), uncertainty=rs.Box(0.05))
    res = prob.compile(X, y).solve("CLARABEL")
    assert isinstance(res, Result) and res.status == "optimal" and not res.certified
    assert res.dual_feasible is False
    assert res.primal_value - res.dual_value == pytest.approx(res.gap, abs=1e-12 * max(1.0, abs(res.primal_value)))
    assert res.multipliers.shape == (60,) and np.all(res.multipliers >= -1e-9)
    assert res.message.startswith("CVXPY status optimal") and "solver_status" in res.extra
    # the solver's primal value is the model's objective at its point (an independent recomputation)
    assert res.primal_value == pytest.approx(prob.objective(X, y, res.w, res.b), rel=1e-7)

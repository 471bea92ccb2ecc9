"""The NQP layer and the reductions of models to it, each checked three ways."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.sparse.linalg import aslinearoperator

import robustsvm as rs
from robustsvm.backends.m3 import m3_solve
from robustsvm.duals import NQP, KernelDual, LinearDual, dual_reasons, reduce_model, solve_nqp_cvxpy
from tests.conftest import make_classification

TIGHT = {"tol_gap_abs": 1e-11, "tol_gap_rel": 1e-11, "tol_feas": 1e-11}


def brute_force_nqp(A: np.ndarray, b: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, float]:
    """Enumerate every split of the variables into at-0 / at-c / free and keep the best feasible KKT point."""
    k = b.size
    best, best_v = np.inf, None
    for pattern in itertools.product((0, 1, 2), repeat=k):
        pattern = np.array(pattern)
        if np.any((pattern == 1) & ~np.isfinite(c)):
            continue
        v = np.where(pattern == 1, np.where(np.isfinite(c), c, 0.0), 0.0)
        free = np.flatnonzero(pattern == 2)
        if free.size:
            fixed = np.flatnonzero(pattern != 2)
            rhs = -b[free] - A[np.ix_(free, fixed)] @ v[fixed]
            sol, *_ = np.linalg.lstsq(A[np.ix_(free, free)], rhs, rcond=None)
            v[free] = sol
        if np.any(v < -1e-12) or np.any(v > c + 1e-12):
            continue
        f = 0.5 * v @ A @ v + b @ v
        if f < best:
            best, best_v = f, v
    return best_v, best


def random_nqp(rng, k: int, bounded: bool = True) -> NQP:
    M = rng.normal(size=(k, k))
    A = M @ M.T + 0.1 * np.eye(k)
    b = rng.normal(size=k) * 3
    c = rng.uniform(0.2, 2.0, size=k) if bounded else np.full(k, np.inf)
    if bounded:
        c[rng.random(k) < 0.3] = np.inf
    return NQP(A, b, c)


# ------------------------------------------------------------ the NQP itself
def test_nqp_validation():
    A = np.eye(3)
    with pytest.raises(TypeError, match="b"):
        NQP(A)
    with pytest.raises(ValueError, match="c must be non-negative"):
        NQP(A, np.ones(3), -1.0)
    with pytest.raises(ValueError, match="c must be a scalar"):
        NQP(A, np.ones(3), np.ones(2))
    with pytest.raises(ValueError, match="symmetric"):
        NQP(np.triu(np.ones((3, 3))), np.ones(3))
    with pytest.raises(ValueError, match="shape"):
        NQP(np.eye(2), np.ones(3))
    with pytest.raises(ValueError, match="NaN"):
        NQP(A, np.array([1.0, np.nan, 0.0]))
    with pytest.raises(TypeError, match="either A or factor"):
        NQP(A, np.ones(3), factor=np.ones((3, 1)))
    with pytest.raises(ValueError, match="diag"):
        NQP(b=np.ones(3), factor=np.ones((3, 1)), diag=-np.ones(3))
    with pytest.raises(ValueError, match="init"):
        NQP(A, np.ones(3)).check_point(-np.ones(3), name="init")


def test_factor_operator_and_dense_agree():
    rng = np.random.default_rng(0)
    F = rng.normal(size=(6, 2))
    dg = rng.uniform(0, 1, size=6)
    dense = F @ F.T + np.diag(dg)
    b = rng.normal(size=6)
    nf = NQP(b=b, factor=F, diag=dg)
    nd = NQP(dense, b)
    no = NQP(aslinearoperator(dense), b)
    v = rng.uniform(size=6)
    for q in (nf, nd, no):
        assert np.allclose(q.matvec(v), dense @ v)
        assert q.objective(v) == pytest.approx(0.5 * v @ dense @ v + b @ v)
    assert np.allclose(nf.dense(), dense)
    with pytest.raises(TypeError, match="LinearOperator"):
        no.dense()
    with pytest.raises(TypeError, match="LinearOperator"):
        solve_nqp_cvxpy(no)
    with pytest.raises(TypeError, match="A"):
        m3_solve(no)


@pytest.mark.parametrize("seed", range(6))
def test_cvxpy_and_m3_match_brute_force(seed):
    rng = np.random.default_rng(seed)
    q = random_nqp(rng, 5)
    v_bf, f_bf = brute_force_nqp(q.dense(), q.b, q.c)
    ref = solve_nqp_cvxpy(q, solver_options=TIGHT)
    # at 1e-11 Clarabel's "optimal" or "optimal_inaccurate" depends on the BLAS kernel: the brute force decides
    assert ref.status in ("optimal", "optimal_inaccurate"), ref.status
    assert ref.objective == pytest.approx(f_bf, abs=1e-8)
    assert np.allclose(ref.v, v_bf, atol=1e-6)
    assert q.kkt_residual(v_bf) < 1e-9
    res = m3_solve(q, tol=1e-9, max_iter=100000)
    assert res.status == "optimal"
    assert np.allclose(res.v, v_bf, atol=1e-6)


# --------------------------------------------------------------- reductions
def _three_ways(dual, m3_tol=1e-9):
    """The dual NQP solved by m3 and by clarabel: the same minimizer and objective.

    Clarabel at 1e-11 ends "optimal" or "optimal_inaccurate" as the BLAS kernel has it: its answer is checked
    against m3's (whose own KKT test makes its status), not by its status."""
    ref = solve_nqp_cvxpy(dual.nqp, solver_options=TIGHT)
    res = m3_solve(dual.nqp, tol=m3_tol, max_iter=200000)
    assert ref.status in ("optimal", "optimal_inaccurate") and res.status == "optimal"
    assert dual.nqp.objective(res.v) == pytest.approx(ref.objective, rel=1e-7, abs=1e-9)
    return ref, res


@pytest.mark.parametrize(("loss", "lam", "intercept"), [
    (rs.Hinge(), 0.2, False), (rs.Hinge(), 0.2, rs.L2(0.7)), (rs.SquaredHinge(), 0.2, False),
    (rs.SquaredHinge(), 0.2, rs.L2(0.7)), (rs.Hinge(reduction="sum"), 5.0, False),
])
def test_linear_kernel_dual_matches_primal(loss, lam, intercept):
    """KernelDual(Linear) three ways: m3, clarabel on the NQP, and the primal conic model."""
    X, y = make_classification(50, 4, seed=3)
    kprob = rs.Problem(loss=loss, penalty=rs.L2(lam), intercept=intercept, kernel=rs.Linear())
    pprob = rs.Problem(loss=loss, penalty=rs.L2(lam), intercept=intercept)
    dual = KernelDual(kprob.normalize(X, y))
    ref, res = _three_ways(dual)
    primal = pprob.solve(X, y, solver="clarabel", solver_options=TIGHT)
    for v in (ref.v, res.v):
        rec = dual.recover(v)
        w = np.asarray(rec.support_vectors).T @ rec.dual_coef
        assert np.allclose(w, primal.w, atol=1e-6)
        assert rec.b == pytest.approx(primal.b, abs=1e-6)
        assert rec.objective == pytest.approx(primal.objective, rel=1e-7)
        # strong duality: the dual value reaches the primal optimum
        assert dual.dual_value(v) == pytest.approx(primal.objective, rel=1e-7)


def test_hard_margin_kernel_dual_matches_primal():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(40, 3))
    y = np.where(X @ np.array([1.0, -2.0, 0.5]) > 0, 1, -1)
    X = X + 0.4 * y[:, None] * np.array([1.0, -2.0, 0.5]) / np.linalg.norm([1.0, -2.0, 0.5])
    kprob = rs.Problem(loss=rs.HardMargin(), penalty=rs.L2(1.0), intercept=False, kernel=rs.Linear())
    dual = KernelDual(kprob.normalize(X, y))
    ref, res = _three_ways(dual, m3_tol=1e-10)
    primal = rs.Problem(loss=rs.HardMargin(), penalty=rs.L2(1.0), intercept=False).solve(
        X, y, solver="clarabel", solver_options=TIGHT)
    for v in (ref.v, res.v):
        rec = dual.recover(v)
        assert np.allclose(np.asarray(rec.support_vectors).T @ rec.dual_coef, primal.w, atol=1e-6)
        assert rec.violation < 1e-6


@pytest.mark.parametrize("loss", [rs.Hinge(), rs.SquaredHinge(), rs.HardMargin()])
def test_sign_constrained_dual_matches_primal(loss):
    """LinearDual in (α, β) three ways, with sign constraints active at the optimum."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(45, 5))
    w_true = np.array([1.0, -1.0, 0.5, 2.0, -0.3])
    y = np.where(X @ w_true > 0, 1, -1)
    X = X + 0.5 * y[:, None] * w_true / np.linalg.norm(w_true)
    # the constrained features fight the data: active constraints (the hard margin stays separable)
    signs = np.array([1, -1, 0, 1, 1]) if isinstance(loss, rs.HardMargin) else np.array([-1, 1, 0, 1, 0])
    n_active = 1 if isinstance(loss, rs.HardMargin) else 2
    for intercept in (False, rs.L2(2.0)):
        prob = rs.Problem(loss=loss, penalty=rs.L2(0.5), signs=signs, intercept=intercept)
        dual = LinearDual(prob.normalize(X, y))
        ref, res = _three_ways(dual, m3_tol=1e-10)
        primal = prob.solve(X, y, solver="clarabel", solver_options=TIGHT)
        assert np.count_nonzero(np.abs(primal.w[signs != 0]) < 1e-7) == n_active
        for v in (ref.v, res.v):
            rec = dual.recover(v)
            assert np.allclose(rec.w, primal.w, atol=2e-6)
            assert rec.b == pytest.approx(primal.b, abs=2e-6)
            assert dual.dual_value(v) == pytest.approx(primal.objective, rel=1e-6)


def test_weak_duality_at_random_points():
    """Any feasible dual point is a lower bound on the model's optimum (clarabel's)."""
    X, y = make_classification(40, 4, seed=8)
    rng = np.random.default_rng(0)
    for prob in (
        rs.Problem(loss=rs.Hinge(), penalty=rs.L2(0.3), intercept=rs.L2(1.0), kernel=rs.Linear()),
        rs.Problem(loss=rs.SquaredHinge(), penalty=rs.L2(0.3), signs=[1, 0, -1, 0], intercept=False),
        rs.pq_svm(nu=1.0, lam2=0.5, radius=0.05),
    ):
        dual = reduce_model(prob.normalize(X, y))
        opt = (prob if prob.kernel is None else rs.Problem(loss=prob.loss, penalty=prob.penalty,
                                                          intercept=prob.intercept)).solve(
            X, y, solver="clarabel", solver_options=TIGHT).objective
        c = np.where(np.isfinite(dual.nqp.c), dual.nqp.c, 1.0)
        for _ in range(20):
            v = rng.uniform(0, 1, size=dual.nqp.size) * c * rng.uniform(0, 0.2)
            assert dual.dual_value(v) <= opt + 1e-9


def test_reasons_and_errors():
    assert dual_reasons(rs.Problem(penalty=rs.L2(1.0), kernel=rs.RBF(1.0)))  # free intercept
    assert any("L1" in r for r in dual_reasons(rs.Problem(penalty=rs.L1(1.0), intercept=False)))
    assert any("pq-SVM" in r for r in dual_reasons(
        rs.Problem(penalty=rs.L2(1.0), uncertainty=rs.Ball(0.1), intercept=False)))
    assert dual_reasons(rs.pq_svm(1.0, 1.0, 0.1)) == []
    X, y = make_classification(20, 3)
    prob = rs.Problem(penalty=rs.L2(1.0), intercept=True)
    with pytest.raises(ValueError, match="equality"):
        reduce_model(prob.normalize(X, y))

"""The pq-SVM: its model, its dual (Q, η, Q⁻¹η) and the pq backend against CVXPY."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp

import robustsvm as rs
from robustsvm.datasets import load
from robustsvm.duals import PQDual, solve_nqp_cvxpy
from robustsvm.pq_model import pq_parameters
from tests._reference import Formulation, certified_reference
from tests.conftest import make_classification

TIGHT = {"tol_gap_abs": 1e-12, "tol_gap_rel": 1e-12, "tol_feas": 1e-12}


def pq_primal_cvxpy(X, y, nu, lam2, radius, widths=None, weight=None):
    """The pq primal of Woolnough et al. written directly in CVXPY, in (p, q, b, ξ)."""
    n, d = X.shape
    ypm = np.where(y == np.unique(y)[1], 1.0, -1.0)
    delta = np.ones(d) if widths is None else widths
    s = np.ones(n) if weight is None else weight
    r = np.broadcast_to(np.asarray(radius, dtype=float), (n,))

    def model():
        p, q, b, xi = cp.Variable(d), cp.Variable(d), cp.Variable(), cp.Variable(n)
        margins = cp.multiply(ypm, X @ (p - q) + b) - r * (delta @ (p + q)) + xi >= 1
        obj = nu / 2 * cp.sum(cp.multiply(s, cp.square(xi))) + lam2 / 2 * (cp.sum_squares(p) + cp.sum_squares(q)) \
            + 0.5 * cp.square(b)
        # on the scale of the package's objective (2/ν times the pq primal), so both give a point one value
        return Formulation(2 / nu * obj, [margins, p >= 0, q >= 0], p - q, b, margins)

    # Clarabel's point (then SCS's), certified by the package: its status depends on the BLAS kernel
    ref = certified_reference(rs.pq_svm(nu, lam2, radius, widths), X, y, model, sample_weight=weight,
                              clarabel_options=TIGHT)
    return ref.w, ref.b, nu / 2 * ref.model_value


def rel(a, b):
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b)))) / max(1e-12, float(np.max(np.abs(b))))


# ------------------------------------------------------------------ the model
def test_pq_svm_model_and_parameters():
    prob = rs.pq_svm(nu=0.5, lam2=2.0, radius=0.1)
    assert isinstance(prob.loss, rs.SquaredHinge) and prob.loss.reduction == "sum"
    assert prob.penalty == rs.L2(8.0)
    assert prob.intercept_mode == ("l2", 4.0)
    assert isinstance(prob.uncertainty, rs.Box)
    X, y = make_classification(20, 3)
    par = pq_parameters(prob.normalize(X, y))
    assert par.nu == pytest.approx(0.5) and par.lam2 == pytest.approx(2.0)
    assert np.allclose(par.radius, 0.1) and np.allclose(par.widths, 1.0)
    with pytest.raises(ValueError, match="nu"):
        rs.pq_svm(0.0, 1.0, 0.1)
    with pytest.raises(TypeError, match="lam2"):
        rs.pq_svm(1.0, "a", 0.1)


def test_objective_is_scaled_pq_primal():
    """The model's objective is 2/ν times the pq primal (evaluated independently in numpy)."""
    X, y = make_classification(30, 4, seed=2)
    nu, lam2, r = 0.7, 1.3, 0.2
    prob = rs.pq_svm(nu, lam2, r)
    rng = np.random.default_rng(0)
    ypm = np.where(y == 1, 1.0, -1.0)
    for _ in range(5):
        w, b = rng.normal(size=4), rng.normal()
        xi = np.maximum(0, 1 - ypm * (X @ w + b) + r * np.abs(w).sum())
        pq = nu / 2 * xi @ xi + lam2 / 2 * w @ w + b * b / 2
        assert prob.objective(X, y, w, b) == pytest.approx(2 / nu * pq)


def test_pq_check_refuses_everything_else():
    pq = rs.get_backend("pq")
    assert pq.check(rs.pq_svm(1.0, 1.0, 0.1)) == []
    assert pq.check(rs.pq_svm(1.0, 1.0, np.full(5, 0.1))) == []
    bad = {
        "SquaredHinge": rs.Problem(loss=rs.Hinge(reduction="sum"), penalty=rs.L2(1), uncertainty=rs.Box(0.1),
                                   intercept=rs.L2(1)),
        "reduction": rs.Problem(loss=rs.SquaredHinge(), penalty=rs.L2(1), uncertainty=rs.Box(0.1),
                                intercept=rs.L2(1)),
        "L1": rs.Problem(loss=rs.SquaredHinge(reduction="sum"), penalty=rs.L2(1) + rs.L1(1),
                         uncertainty=rs.Box(0.1), intercept=rs.L2(1)),
        "intercept": rs.Problem(loss=rs.SquaredHinge(reduction="sum"), penalty=rs.L2(1), uncertainty=rs.Box(0.1)),
        "Box": rs.Problem(loss=rs.SquaredHinge(reduction="sum"), penalty=rs.L2(1), uncertainty=rs.Ball(0.1),
                          intercept=rs.L2(1)),
        "sign": rs.Problem(loss=rs.SquaredHinge(reduction="sum"), penalty=rs.L2(1), uncertainty=rs.Box(0.1),
                           intercept=rs.L2(1), signs=[1, 0]),
        "positive strength": rs.Problem(loss=rs.SquaredHinge(reduction="sum"), uncertainty=rs.Box(0.1),
                                        intercept=rs.L2(1)),
    }
    for word, prob in bad.items():
        reasons = pq.check(prob)
        assert any(word in r for r in reasons), (word, reasons)
    X, y = make_classification(20, 2)
    with pytest.raises(rs.UnsupportedModelError, match="pq"):
        bad["Box"].solve(X, y, solver="pq")


# ------------------------------------------------------------------- the dual
def explicit_q(X, y, nu, lam2, r, delta, s):
    """Q and η of the pq dual built entry by entry from the Lagrangian (docs/derivations/pq_dual.md)."""
    m, d = X.shape
    Gp = y[:, None] * X - np.outer(r, delta)
    Gq = -y[:, None] * X - np.outer(r, delta)
    Q = np.zeros((m + 2 * d, m + 2 * d))
    Q[:m, :m] = np.diag(1 / (nu * s)) + (Gp @ Gp.T + Gq @ Gq.T) / lam2 + np.outer(y, y)
    Q[:m, m:m + d] = Gp / lam2
    Q[:m, m + d:] = Gq / lam2
    Q[m:, :m] = Q[:m, m:].T
    Q[m:, m:] = np.eye(2 * d) / lam2
    return Q, np.concatenate([np.ones(m), np.zeros(2 * d)])


def test_dual_operator_and_initial_point():
    X, y01 = make_classification(25, 3, seed=4)
    y = np.where(y01 == 1, 1.0, -1.0)
    rng = np.random.default_rng(1)
    r, delta, s = rng.uniform(0, 0.3, 25), np.array([1.0, 0.5, 2.0]), rng.uniform(0.5, 2, 25)
    prob = rs.pq_svm(0.8, 1.7, r, widths=delta)
    dual = PQDual.from_model(prob.normalize(X, y01, sample_weight=s))
    Q, eta = explicit_q(X, y, 0.8, 1.7, r, delta, s)
    assert np.all(np.linalg.eigvalsh(Q) > 0)  # strictly convex
    u = rng.normal(size=Q.shape[0])
    assert np.allclose(dual.matvec(u), Q @ u)
    assert np.allclose(dual.to_nqp().dense(), Q)
    assert np.allclose(dual.eta, eta)
    assert np.allclose(dual.solve_eta(), np.linalg.solve(Q, eta))
    assert dual.pq_dual_value(u) == pytest.approx(eta @ u - 0.5 * u @ Q @ u)
    # the factored form the reduced iteration uses, from Bᵀu and the α block alone
    assert dual.pq_dual_value(u[:25], Btu=dual.Bt(u)) == pytest.approx(eta @ u - 0.5 * u @ Q @ u)
    from robustsvm.backends.pq import largest_eigenvalue

    assert largest_eigenvalue(dual) == pytest.approx(np.linalg.eigvalsh(Q)[-1], rel=1e-6)


def test_three_ways_on_the_pq_dual():
    """pq backend, m3 on the same NQP and clarabel on the NQP and on the primal."""
    X, y = make_classification(40, 3, seed=6)
    nu, lam2, r = 0.1, 3.0, 0.05
    prob = rs.pq_svm(nu, lam2, r)
    dual = PQDual.from_model(prob.normalize(X, y))
    w_ref, b_ref, _ = pq_primal_cvxpy(X, y, nu, lam2, r)
    ref = solve_nqp_cvxpy(dual.nqp, solver_options=TIGHT)
    m3sol = prob.solve(X, y, solver="m3", tol=1e-10, max_iter=200000)
    sol = prob.solve(X, y, solver="pq", tol=1e-10, max_iter=100000)
    assert m3sol.status == "optimal" and sol.status == "optimal"
    for v in (ref.v, m3sol.extra["dual_point"], sol.extra["u"]):
        w, b = dual.wb(v)
        assert rel(np.append(w, b), np.append(w_ref, b_ref)) < 1e-6
    assert rel(np.append(m3sol.w, m3sol.b), np.append(w_ref, b_ref)) < 1e-6
    assert m3sol.objective == pytest.approx(sol.objective, rel=1e-9)


def test_paper_iteration_converges_on_a_well_conditioned_case():
    """The plain iteration u ← max(u − α(Qu − η), 0), α from Prop. 8.1, reaches the optimum."""
    X, y = make_classification(40, 3, seed=0)
    nu, lam2, r = 0.05, 5.0, 0.1
    w_ref, b_ref, val = pq_primal_cvxpy(X, y, nu, lam2, r)
    sol = rs.pq_svm(nu, lam2, r).solve(X, y, solver="pq", paper=True, tol=1e-10, max_iter=50000)
    assert sol.status == "optimal"
    assert rel(np.append(sol.w, sol.b), np.append(w_ref, b_ref)) < 1e-6
    assert sol.objective == pytest.approx(2 / nu * val, rel=1e-8)
    h = sol.history
    assert np.isnan(h["gap"][0])  # u⁰ = Q⁻¹η has negative entries: no dual value yet
    assert np.all(h["gap"][1:] >= -1e-9)  # weak duality at every later iterate
    assert np.all(np.diff(h["dual"][1:]) >= -1e-9)  # projected gradient ascent on the dual never goes back
    assert 0 <= sol.gap < 1e-6
    assert sol.extra["step_size"] < 2 / sol.extra["lambda_max"]


@pytest.mark.parametrize("name", ["wdbc", "pima"])
def test_pq_matches_cvxpy_primal_on_real_data(name, wdbc):
    if name == "wdbc":
        X, y, _ = wdbc
        nu, lam2, r = 0.1, 1.0, 0.01
    else:
        X, y, _ = load("pima")
        X = (X - X.mean(axis=0)) / X.std(axis=0)
        nu, lam2, r = 0.1, 1.0, 0.05
    w_ref, b_ref, val = pq_primal_cvxpy(X, y, nu, lam2, r)
    prob = rs.pq_svm(nu, lam2, r)
    for options in ({"accelerate": True}, {"accelerate": True, "eliminate": True}, {"eliminate": True}):
        sol = prob.solve(X, y, solver="pq", tol=1e-8, max_iter=100000, **options)
        assert sol.status == "optimal"
        assert rel(sol.w, w_ref) < 1e-5
        assert abs(sol.b - b_ref) / max(1.0, abs(b_ref)) < 1e-5
        assert sol.objective == pytest.approx(2 / nu * val, rel=1e-7)
        assert -1e-12 <= sol.gap <= 1e-5 * sol.objective
    # the paper's iteration at its defaults (maxiter 1000, tol 1e-4) stops short on this conditioning, and says so
    with pytest.warns(rs.ConvergenceWarning, match="max_iter"):
        short = prob.solve(X, y, solver="pq", paper=True)
    assert short.iterations == 1000 and short.status == "max_iter"
    assert short.history["residual"][-1] > 1e-4


def test_sparse_weights_and_per_sample_radius():
    X, y = make_classification(50, 6, seed=7, sparse=True)
    rng = np.random.default_rng(3)
    r = rng.uniform(0, 0.1, 50)
    s = rng.uniform(0.5, 2.0, 50)
    s[:3] = 0.0  # zero-weight samples drop out
    prob = rs.pq_svm(0.2, 1.5, r)
    sol = prob.solve(X, y, solver="pq", tol=1e-10, max_iter=100000, accelerate=True, sample_weight=s)
    dense = prob.solve(X.toarray(), y, solver="pq", tol=1e-10, max_iter=100000, accelerate=True, sample_weight=s)
    w_ref, b_ref, _ = pq_primal_cvxpy(X.toarray(), y, 0.2, 1.5, r, weight=s)
    assert sp.issparse(X)
    assert rel(np.append(sol.w, sol.b), np.append(w_ref, b_ref)) < 1e-6
    assert np.allclose(sol.w, dense.w, atol=1e-10)
    ref = prob.solve(X, y, solver="clarabel", sample_weight=s, solver_options=TIGHT)
    assert sol.objective == pytest.approx(ref.objective, rel=1e-8)


def test_eliminated_iterates_are_dual_feasible_and_match_the_full_dual():
    """With β eliminated every iterate (α, β(α)) is dual feasible; its u solves the full dual's KKT system."""
    X, y = make_classification(60, 4, seed=11)
    prob = rs.pq_svm(0.5, 1.0, 0.1)
    sol = prob.solve(X, y, solver="pq", tol=1e-10, max_iter=50000, eliminate=True, accelerate=True)
    assert sol.status == "optimal"
    h = sol.history
    assert np.all(np.isfinite(h["gap"])) and np.all(h["gap"] >= -1e-9)
    dual = PQDual.from_model(prob.normalize(X, y))
    u = sol.extra["u"]
    g = dual.matvec(u) - dual.eta
    assert np.all(u >= 0) and np.max(np.abs(u - np.maximum(u - g, 0))) < 1e-8  # KKT of the full (QP)
    w_ref, b_ref, _ = pq_primal_cvxpy(X, y, 0.5, 1.0, 0.1)
    assert rel(np.append(sol.w, sol.b), np.append(w_ref, b_ref)) < 1e-6


def test_step_validation():
    X, y = make_classification(20, 2)
    with pytest.raises(ValueError, match="step"):
        rs.pq_svm(1.0, 1.0, 0.1).solve(X, y, solver="pq", step=1.5)


def _standardized(name):
    X, y, _ = load(name)
    return (X - X.mean(axis=0)) / X.std(axis=0), y


@pytest.mark.parametrize("name", ["wdbc", "pima", "wisconsin"])
@pytest.mark.parametrize(("nu", "lam2", "r"), [(0.1, 1.0, 0.01), (0.5, 0.5, 0.05)])
def test_pq_defaults_reach_clarabel(name, nu, lam2, r):
    """``solver="pq"`` with no option reaches Clarabel's optimum of the same model (relative 1e-6)."""
    X, y = _standardized(name)
    prob = rs.pq_svm(nu, lam2, r)
    ref = prob.solve(X, y, solver="clarabel", solver_options=TIGHT)
    sol = prob.solve(X, y, solver="pq")
    assert sol.status == "optimal"
    assert abs(sol.objective - ref.objective) <= 1e-6 * ref.objective
    assert rel(np.append(sol.w, sol.b), np.append(ref.w, ref.b)) < 1e-6
    assert -1e-12 * sol.objective <= sol.gap <= 1e-6 * sol.objective  # the certificate agrees


@pytest.mark.filterwarnings("ignore:overflow:RuntimeWarning")
def test_paper_alpha_search_and_divergence():
    """``paper=True, alpha="search"`` tries 1e-16…1e-4 and keeps the smallest final objective."""
    from robustsvm.backends.pq import PAPER_ALPHAS

    X, y = _standardized("pima")
    prob = rs.pq_svm(0.1, 1.0, 0.05)
    ref = prob.solve(X, y, solver="clarabel", solver_options=TIGHT)
    with pytest.warns(rs.ConvergenceWarning):
        sol = prob.solve(X, y, solver="pq", paper=True, alpha="search")
    tried = sol.extra["alpha_search"]
    assert [a for a, _, _ in tried] == list(PAPER_ALPHAS) and len(tried) == 13
    assert sol.extra["step_size"] in PAPER_ALPHAS
    finite = [v for _, status, v in tried if status != "diverged"]
    assert sol.objective == pytest.approx(min(finite), rel=1e-12)
    assert sol.objective >= ref.objective * (1 - 1e-9)  # truncated, never below the optimum
    assert sol.iterations == 1000
    # a fixed α far above Prop. 8.1's bound 2/λ_max(Q) diverges and says so
    lam_max = sol.extra["lambda_max"]
    with pytest.warns(rs.ConvergenceWarning):
        bad = prob.solve(X, y, solver="pq", paper=True, alpha=50.0 / lam_max)
    assert bad.status == "diverged"
    with pytest.raises(ValueError, match="paper=True"):
        prob.solve(X, y, solver="pq", alpha=1e-6)
    with pytest.raises(ValueError, match="accelerate"):
        prob.solve(X, y, solver="pq", paper=True, accelerate=True)
    with pytest.raises(ValueError, match="alpha"):
        prob.solve(X, y, solver="pq", paper=True, alpha="grid")
    with pytest.raises(ValueError, match="alpha"):
        prob.solve(X, y, solver="pq", paper=True, alpha=-1.0)

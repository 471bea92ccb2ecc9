"""The ``pegasos`` backend against Clarabel's optimum and the bound of Theorem 4.1."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import robustsvm as rs
from robustsvm.backends.pegasos import ball_radius
from robustsvm.certificates.iteration_bounds import pegasos_bound
from robustsvm.exceptions import ConvergenceWarning

from .conftest import make_classification


def _signs(d: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).choice([-1, 0, 1], size=d).astype(int)


def _solve(prob, X, y, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return prob.solve(X, y, solver="pegasos", **options)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("intercept", [False, True, "l2"])
@pytest.mark.parametrize("batch_size", [None, 25])
def test_agrees_with_clarabel(sparse, intercept, batch_size):
    seed = 21 + 3 * sparse + (intercept is True) + 2 * (intercept == "l2")
    X, y = make_classification(150, 10, seed=seed, sparse=sparse)
    signs = _signs(10, seed)
    icpt = rs.L2(0.7) if intercept == "l2" else intercept
    prob = rs.Problem(penalty=rs.L2(0.05), signs=signs, intercept=icpt)
    ref = prob.solve(X, y, solver="clarabel")
    sol = _solve(prob, X, y, max_iter=4000 if batch_size is None else 8000, tol=1e-9,
                 batch_size=batch_size, random_state=0)
    assert sol.status == "max_iter"
    assert (sol.objective - ref.objective) / ref.objective <= 1e-3
    assert ref.objective <= sol.objective + 1e-9
    # the certificate is valid: P_best − gap is a lower bound of the optimum
    assert sol.objective - sol.gap <= ref.objective + 1e-8
    h = sol.history
    assert np.all(h["objective"] >= h["dual"])  # weak duality at every evaluation
    assert np.all(h["dual"] <= ref.objective + 1e-8)
    assert np.all(sol.w * signs >= 0.0)  # exactly
    assert sol.w @ sol.w <= ball_radius(0.05) ** 2 * (1 + 1e-12) or intercept == "l2"
    if intercept is False:
        assert sol.b == 0.0


def test_reaches_tolerance_and_reports_optimal():
    X, y = make_classification(120, 6, seed=3)
    prob = rs.Problem(penalty=rs.L2(0.1), signs=_signs(6, 3), intercept=False)
    ref = prob.solve(X, y, solver="clarabel")
    sol = prob.solve(X, y, solver="pegasos", tol=1e-2, max_iter=20_000)
    assert sol.status == "optimal"
    assert sol.gap <= 1e-2 * sol.objective
    assert sol.objective - ref.objective <= sol.gap + 1e-9
    assert sol.iterations < 20_000


def test_mini_batch_is_reproducible_with_a_seed():
    X, y = make_classification(100, 5, seed=1)
    prob = rs.Problem(penalty=rs.L2(0.1), signs=_signs(5, 1), intercept=True)
    a = _solve(prob, X, y, batch_size=10, max_iter=300, random_state=7)
    b = _solve(prob, X, y, batch_size=10, max_iter=300, random_state=7)
    c = _solve(prob, X, y, batch_size=10, max_iter=300, random_state=8)
    np.testing.assert_array_equal(a.w, b.w)
    assert a.b == b.b
    assert not np.array_equal(a.w, c.w)
    # one evaluation per epoch (10 steps) plus the first and last step
    assert len(a.history["iteration"]) == 300 // 10 + 1


def test_best_iterate_is_returned():
    X, y = make_classification(100, 5, seed=2)
    prob = rs.Problem(penalty=rs.L2(0.01), signs=_signs(5, 2), intercept=False)
    sol = _solve(prob, X, y, max_iter=200)
    h = sol.history
    assert sol.objective == pytest.approx(h["objective"].min(), rel=1e-12)
    np.testing.assert_allclose(h["best_objective"], np.minimum.accumulate(h["objective"]))


@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_optimum_lies_in_the_ball(reduction):
    # the projection onto the ball never cuts off the optimum (Clarabel's, independent)
    X, y = make_classification(80, 6, seed=9)
    sw = np.random.default_rng(0).uniform(0.5, 2.0, size=80)
    for lam in (1e-3, 1e-1, 10.0):
        prob = rs.Problem(loss=rs.Hinge(reduction=reduction), penalty=rs.L2(lam), signs=_signs(6, 9))
        ref = prob.solve(X, y, solver="clarabel", sample_weight=sw)
        total = 1.0 if reduction == "mean" else sw.sum()
        assert np.linalg.norm(ref.w) <= ball_radius(lam, total) * (1 + 1e-6)


def test_best_iterate_within_theorem_4_1_bound():
    X, y = make_classification(200, 8, seed=6)
    X = X / np.linalg.norm(X, axis=1, keepdims=True)  # R = 1
    lam = 0.2
    prob = rs.Problem(penalty=rs.L2(lam), signs=_signs(8, 6), intercept=False)
    ref = prob.solve(X, y, solver="clarabel")
    sol = _solve(prob, X, y, max_iter=2000, tol=1e-12)
    best = np.minimum.accumulate(sol.history["objective"])
    T = np.arange(1, best.size + 1)
    bound = np.array([pegasos_bound(int(t), 1.0, lam) for t in T])
    assert np.all(best - ref.objective <= bound + 1e-9)
    assert bound[-1] < best[0] - ref.objective  # the bound is not vacuous at the end


@pytest.mark.parametrize("bad", [0, -3, 2.5, 10_000])
def test_bad_batch_size(bad):
    X, y = make_classification(50, 4, seed=0)
    prob = rs.Problem(penalty=rs.L2(0.1))
    with pytest.raises(ValueError, match="batch_size"):
        prob.solve(X, y, solver="pegasos", batch_size=bad)


def test_bad_eval_every():
    X, y = make_classification(50, 4, seed=0)
    prob = rs.Problem(penalty=rs.L2(0.1))
    with pytest.raises(ValueError, match="eval_every"):
        prob.solve(X, y, solver="pegasos", eval_every=0)


def test_unknown_option_is_refused():
    X, y = make_classification(50, 4, seed=0)
    with pytest.raises(TypeError, match="step"):
        rs.Problem(penalty=rs.L2(0.1)).solve(X, y, solver="pegasos", step=0.1)


def test_full_batch_step_costs_one_product_each_way(count_products):
    calls = count_products
    X, y = make_classification(80, 6, seed=3, sparse=True)
    prob = rs.Problem(penalty=rs.L2(0.01), signs=_signs(6, 3), intercept=True)
    sol = _solve(prob, X, y, max_iter=30, tol=1e-12)
    assert sol.iterations == 30
    # the certificate is accumulated from the subgradient's own product: no extra pass over X
    assert calls == {"matvec": 30, "rmatvec": 30}

"""The primal point from the margin equations of the free samples (``robustsvm.backends.margin_equations``): its
compiled parts against scipy and dense linear algebra, the point against an optimum found by Clarabel, and its use
in ``dcd`` (a candidate that can only lower the certified primal value)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator, minres

from robustsvm import L2, Hinge, Problem
from robustsvm.backends import _margin_kernels as mk
from robustsvm.backends import dcd
from robustsvm.backends import margin_equations as me
from robustsvm.backends._products_kernels import csr_parts
from robustsvm.datasets import make_cora_like

from ._reference import certified_reference


def _bag_of_words(n=300, d=200, seed=0):
    """Sparse 0/1 rows with a few frequent columns (the structure the preconditioner is for) and ±1 labels."""
    rng = np.random.default_rng(seed)
    p = 0.02 + 0.3 * (np.arange(d) < 8)  # eight frequent columns
    X = sp.csr_matrix((rng.random((n, d)) < p).astype(float))
    X.sort_indices()
    w0 = rng.standard_normal(d)
    y = np.where(X @ w0 + 0.3 * rng.standard_normal(n) > 0, 1.0, -1.0)
    return X, y


def _gathered(X, y, rows, keep):
    return mk.gather_rows(*csr_parts(X), rows.astype(np.int64), keep, y)


def test_gathered_rows_are_the_signed_rows_on_the_kept_columns():
    X, y = _bag_of_words()
    rng = np.random.default_rng(1)
    rows = np.sort(rng.choice(X.shape[0], 80, replace=False))
    keep = rng.random(X.shape[1]) < 0.7
    ptr, cols, vals, features = _gathered(X, y, rows, keep)
    got = np.zeros((rows.size, X.shape[1]))
    for j in range(rows.size):
        got[j, features[cols[ptr[j]:ptr[j + 1]]]] = vals[ptr[j]:ptr[j + 1]]
    want = (X[rows].toarray() * y[rows, None]) * keep
    np.testing.assert_array_equal(got, want)
    assert np.all(keep[features]) and np.unique(features).size == features.size


def _preconditioner(ptr, cols, vals, n_cols, k):
    """The ``k`` most frequent columns deflated: the rows renumbered in place (those columns ``0..k−1``, first in
    each row) and their :data:`mk.Deflation`."""
    counts = np.bincount(cols, minlength=n_cols)
    position = np.full(n_cols, -1, dtype=np.int64)
    position[np.argsort(counts)[n_cols - k:]] = np.arange(k)
    mid, label, D, S = mk.deflate_rows(ptr, cols, vals, position, k, 1e-3)
    deflated = position >= 0
    assert np.array_equal(np.sort(label), np.arange(n_cols)) and np.array_equal(label[deflated], position[deflated])
    return mk.GatheredRows(ptr, cols, vals), me._factored(mid, D, S)


def _dense(rows, n_rows, n_cols):
    A = np.zeros((n_rows, n_cols))
    for j in range(n_rows):
        A[j, rows.cols[rows.ptr[j]:rows.ptr[j + 1]]] = rows.vals[rows.ptr[j]:rows.ptr[j + 1]]
    return A


def test_preconditioner_is_the_inverse_of_the_diagonal_plus_the_frequent_columns():
    """``precondition`` applies ``(D + C Cᵀ)⁻¹``: checked against the dense matrix built from the rows; the
    deflated rows hold the gathered rows' entries, those of ``C`` first."""
    X, y = _bag_of_words()
    rows = np.arange(120)
    ptr, cols, vals, features = _gathered(X, y, rows, np.ones(X.shape[1], dtype=bool))
    n_cols, k = features.size, 10
    before = np.sort(_dense(mk.GatheredRows(ptr, cols, vals), rows.size, n_cols), axis=1)
    deflated, pre = _preconditioner(ptr, cols, vals, n_cols, k)
    A = _dense(deflated, rows.size, n_cols)
    np.testing.assert_array_equal(np.sort(A, axis=1), before)  # the same rows, columns renumbered
    for j in range(rows.size):
        assert np.all(cols[ptr[j]:pre.mid[j]] < k) and np.all(cols[pre.mid[j]:ptr[j + 1]] >= k)
    rest = (A[:, k:] ** 2).sum(axis=1) + 1e-3
    M = np.diag(rest) + A[:, :k] @ A[:, :k].T
    np.testing.assert_allclose(pre.D, rest, rtol=1e-13)
    r = np.random.default_rng(2).standard_normal(rows.size)
    out = np.empty(rows.size)
    mk.precondition(deflated, pre, r, out)
    np.testing.assert_allclose(out, np.linalg.solve(M, r), rtol=1e-9, atol=1e-12)


def test_compiled_minres_matches_scipy_and_solves_the_system():
    """Few iterations: the iterates of scipy's MINRES on the same operator and preconditioner; many: the solution
    of ``A Aᵀ x = r``."""
    X, y = _bag_of_words(n=200, d=400)
    rows = np.arange(150)
    ptr, cols, vals, features = _gathered(X, y, rows, np.ones(X.shape[1], dtype=bool))
    n_cols, k = features.size, 8
    rows_, pre = _preconditioner(ptr, cols, vals, n_cols, k)
    A = _dense(rows_, rows.size, n_cols)
    G = A @ A.T
    rhs = np.random.default_rng(3).standard_normal(rows.size)

    def prec(r):
        out = np.empty(r.size)
        mk.precondition(rows_, pre, r, out)
        return out
    n = rows.size
    none = np.zeros(rows.size)
    ours, done = mk.minres_solve(rows_, n_cols, pre, rhs, 6, none, 0.0)
    assert done == 6
    theirs, _ = minres(LinearOperator((n, n), matvec=lambda p: G @ p), rhs, maxiter=6, rtol=1e-15,
                       M=LinearOperator((n, n), matvec=prec))
    np.testing.assert_allclose(ours, theirs, rtol=1e-7, atol=1e-9 * np.abs(theirs).max())
    full, _ = mk.minres_solve(rows_, n_cols, pre, rhs, 400, none, 0.0)
    assert np.linalg.norm(G @ full - rhs) <= 1e-8 * np.linalg.norm(rhs)


def _primal(X, y, w, b, lam):
    return 0.5 * lam * w @ w + np.mean(np.maximum(0.0, 1.0 - y * (X @ w + b)))


@pytest.mark.parametrize("intercept", [False, True], ids=["no-b", "free-b"])
def test_the_point_at_the_optimal_dual_is_the_optimum(intercept):
    """From α at the optimum, the margin equations give the optimal ``w``: its objective lies within 1e-6 of a
    certified lower bound on the optimum of the same signed model (the conic solve's interval, independent of
    dcd)."""
    X, y = _bag_of_words(n=250, d=120, seed=4)
    n, lam = X.shape[0], 1.0 / X.shape[0]
    signs = np.random.default_rng(5).choice(np.array([1, -1, 0]), X.shape[1])
    prob = Problem(loss=Hinge(), penalty=L2(lam), signs=signs, intercept=intercept)
    ref = certified_reference(prob, X, y)
    sol = prob.solve(X, y, solver="dcd", tol=1e-10, max_iter=200_000, random_state=0)
    alpha = sol.dual_alpha
    v = X.T @ (y * alpha / n)
    free = (signs == 0) | (signs * v >= 0)
    b = sol.b if intercept else None
    w_full = me.margin_point(csr_parts(X), y, alpha, 1.0, v, free, lam, b, max_iter=500).w
    w = np.where(signs * w_full >= 0, w_full, 0.0)
    P = _primal(X, y, w, sol.b if intercept else 0.0, lam)
    assert ref.bound - 1e-12 <= P <= ref.bound + 1e-6 * ref.scale()
    # and the same point from rows without the features the signs clip (dcd's restricted rows)
    Xk = sp.csr_matrix(X.multiply(free[None, :]))
    Xk.eliminate_zeros()
    wk = me.margin_point(csr_parts(Xk), y, alpha, 1.0, v, free, lam, b, max_iter=500).w
    np.testing.assert_allclose(wk, w_full, rtol=1e-8, atol=1e-10 * np.abs(w).max())


def test_no_free_sample_gives_no_point():
    X, y = _bag_of_words(n=40, d=30)
    alpha = np.where(np.arange(40) % 2 == 0, 0.0, 1.0)
    assert me.margin_point(csr_parts(X), y, alpha, 1.0, np.zeros(30), np.ones(30, bool), 0.1, None) is None


def _cora(n=3000, d=4000):
    ds = make_cora_like(n, d, seed=0, density=0.0015 * 12644 / d)
    y = np.where(np.asarray(ds.y) == 1, 1.0, -1.0)
    signs = np.random.default_rng(1).choice(np.array([1, -1, 0], dtype=np.int8), size=d, p=[0.4, 0.4, 0.2])
    return ds.X, y, signs


@pytest.mark.parametrize("intercept", [False, True], ids=["no-b", "free-b"])
def test_dcd_keeps_a_margin_point_and_certifies_fewer_passes(intercept, monkeypatch):
    """On bag-of-words data with signs, dcd forms the margin-equation point once its dual has settled, keeps it
    as its primal point, and certifies the same optimum (within both certified gaps) in fewer passes than
    without it."""
    X, y, signs = _cora()
    prob = Problem(loss=Hinge(), penalty=L2(1.0 / X.shape[0]), signs=signs, intercept=intercept)
    with_point = prob.solve(X, y, solver="dcd", random_state=0)
    monkeypatch.setattr(dcd, "MARGIN_POINT", False)
    without = prob.solve(X, y, solver="dcd", random_state=0)
    assert with_point.status == without.status == "optimal"
    assert with_point.extra["margin_points_kept"] >= 1 and without.extra["margin_points"] == 0
    assert abs(with_point.objective - without.objective) <= with_point.gap + without.gap
    assert with_point.extra["passes"] < without.extra["passes"]


def test_a_useless_margin_point_is_not_kept(monkeypatch):
    """A candidate worse than the averaged iterate (here: zero weights) is evaluated and discarded: with the
    schedule of a solve without candidates the solve ends where that one does; with the shorter schedule of
    :data:`dcd.MARGIN_SCHEDULE` it certifies the same optimum within both gaps."""
    X, y, signs = _cora(1500, 2000)
    prob = Problem(loss=Hinge(), penalty=L2(1.0 / X.shape[0]), signs=signs)
    monkeypatch.setattr(dcd, "MARGIN_POINT", False)
    ref = prob.solve(X, y, solver="dcd", random_state=1)
    monkeypatch.setattr(dcd, "MARGIN_POINT", True)
    useless = me.MarginPoint(np.zeros(X.shape[1]), np.zeros(X.shape[0]), 0)
    monkeypatch.setattr(dcd.margin_equations, "margin_point", lambda *a, **k: useless)
    monkeypatch.setattr(dcd, "MARGIN_SCHEDULE", 1.0)
    sol = prob.solve(X, y, solver="dcd", random_state=1)
    assert sol.status == "optimal"
    assert sol.extra["margin_points"] >= 1 and sol.extra["margin_points_kept"] == 0
    assert sol.objective == pytest.approx(ref.objective, rel=1e-12)
    monkeypatch.undo()
    monkeypatch.setattr(dcd.margin_equations, "margin_point", lambda *a, **k: useless)
    short = prob.solve(X, y, solver="dcd", random_state=1)
    assert short.status == "optimal" and short.extra["margin_points_kept"] == 0
    assert abs(short.objective - ref.objective) <= short.gap + ref.gap


def _free_system(X, y, alpha, v, free, lam, b):
    """The margin equations written densely: ``(F, A, rhs, w0)`` with ``A = diag(y_F) X_{F,H}`` on every feature
    (zero outside ``H``), ``rhs = λ(1 − y_F(X_F w0 + b))`` and ``w0 = w(α)`` on ``H``."""
    F = np.flatnonzero((alpha > 0) & (alpha < 1))
    A = X[F].toarray() * y[F, None] * free[None, :]
    w0 = np.where(free, v, 0.0) / lam
    rhs = lam * (1.0 - (A @ w0 + (0.0 if b is None else y[F] * b)))
    return F, A, rhs, w0


def _settled(X, y, signs, intercept, tol):
    n, lam = X.shape[0], 1.0 / X.shape[0]
    sol = Problem(loss=Hinge(), penalty=L2(lam), signs=signs, intercept=intercept).solve(
        X, y, solver="dcd", tol=tol, max_iter=200_000, random_state=0)
    alpha = sol.dual_alpha
    v = X.T @ (y * alpha / n)
    return alpha, v, (signs == 0) | (signs * v >= 0), (sol.b if intercept else None)


@pytest.mark.parametrize("intercept", [False, True], ids=["no-b", "free-b"])
def test_warm_started_point_is_the_least_squares_solution(intercept):
    """Started from the multipliers of a point formed at another dual iterate, MINRES reaches the same solution of
    the margin equations as a dense least-squares solve written here; started from that solution's own
    multipliers it needs no iteration."""
    X, y = _bag_of_words(n=250, d=400, seed=6)
    n, lam = X.shape[0], 1.0 / X.shape[0]
    c = np.full(n, 1.0 / n)
    signs = np.random.default_rng(7).choice(np.array([1, -1, 0]), X.shape[1])
    alpha, v, free, b = _settled(X, y, signs, intercept, 1e-9)
    F, A, rhs, w0 = _free_system(X, y, alpha, v, free, lam, b)
    assert 0 < F.size == np.linalg.matrix_rank(A)  # A Aᵀ nonsingular: one solution
    step = np.linalg.lstsq(A @ A.T, rhs, rcond=None)[0]
    exact = w0 + A.T @ step / lam
    earlier_alpha, earlier_v, earlier_free, _ = _settled(X, y, signs, intercept, 1e-2)
    earlier = me.margin_point(csr_parts(X), y, earlier_alpha, 1.0, earlier_v, earlier_free, lam, b, max_iter=300, c=c)
    warm = me.margin_point(csr_parts(X), y, alpha, 1.0, v, free, lam, b, max_iter=300, c=c, start=earlier.multipliers)
    scale = np.abs(exact).max()
    np.testing.assert_allclose(warm.w, exact, atol=1e-8 * scale)
    np.testing.assert_allclose(warm.multipliers[F], c[F] * alpha[F] + step, atol=1e-8 * np.abs(step).max())
    start = c * alpha
    start[F] += step
    again = me.margin_point(csr_parts(X), y, alpha, 1.0, v, free, lam, b, c=c, start=start, target=1e-12)
    assert again.iterations == 0
    np.testing.assert_allclose(again.w, exact, atol=1e-10 * scale)


def test_minres_stops_at_the_first_iterate_whose_margin_errors_meet_the_target():
    """With a target, the point's margin errors on the free samples (computed here from ``w``) cost less than it,
    and one iteration fewer does not."""
    X, y = _bag_of_words(n=250, d=400, seed=6)
    n, lam = X.shape[0], 1.0 / X.shape[0]
    c = np.full(n, 1.0 / n)
    signs = np.random.default_rng(7).choice(np.array([1, -1, 0]), X.shape[1])
    alpha, v, free, _ = _settled(X, y, signs, False, 1e-9)
    F = np.flatnonzero((alpha > 0) & (alpha < 1))

    def cost(w):
        return float(c[F] @ np.abs(1.0 - y[F] * (X[F] @ w)))
    start = cost(np.where(free, v, 0.0) / lam)
    target = 1e-3 * start
    point = me.margin_point(csr_parts(X), y, alpha, 1.0, v, free, lam, None, max_iter=300, c=c, target=target)
    assert 0 < point.iterations < 300
    assert cost(point.w) < target * (1 + 1e-6)
    fewer = me.margin_point(csr_parts(X), y, alpha, 1.0, v, free, lam, None, max_iter=point.iterations - 1, c=c)
    assert cost(fewer.w) >= target * (1 - 1e-6)


def test_more_free_samples_than_free_features_give_no_point():
    """``A Aᵀ`` is singular when the free samples outnumber the free features: no point is formed."""
    X, y = _bag_of_words(n=60, d=30)
    alpha = np.full(60, 0.5)
    assert me.margin_point(csr_parts(X), y, alpha, 1.0, np.ones(30), np.ones(30, bool), 0.1, None) is None


@pytest.mark.parametrize("intercept", [False, True], ids=["no-b", "free-b"])
def test_certified_gap_of_a_kept_point_bounds_the_distance_to_the_cvxpy_optimum(intercept):
    """A signed sparse solve that ends on a margin-equation point: its objective is within its certified gap of
    the optimum of the model written in CVXPY here (Clarabel's point, certified by the package's bound)."""
    import cvxpy as cp

    from ._reference import Formulation

    X, y, signs = _cora(600, 800)
    n, lam = X.shape[0], 1.0 / X.shape[0]
    prob = Problem(loss=Hinge(), penalty=L2(lam), signs=signs, intercept=intercept)
    sol = prob.solve(X, y, solver="dcd", random_state=0)
    assert sol.status == "optimal" and sol.extra["margin_points_kept"] >= 1

    def model():
        w = cp.Variable(X.shape[1])
        b = cp.Variable() if intercept else 0.0
        r = cp.Variable(n, nonneg=True)
        margins = r >= 1 - cp.multiply(y, X @ w + b)
        cons = [w[signs > 0] >= 0, w[signs < 0] <= 0, margins]
        return Formulation(lam / 2 * cp.sum_squares(w) + cp.sum(r) / n, cons, w, b, margins)
    ref = certified_reference(prob, X, y, model)
    assert sol.objective >= ref.bound - 1e-12 * ref.scale()
    assert sol.objective - ref.objective <= sol.gap + 1e-12 * ref.scale()
    assert sol.gap <= 1e-4 * abs(sol.objective)


@pytest.mark.parametrize("b", [None, 0.4])
def test_the_equations_right_hand_side_and_the_point_from_a_step(b):
    """``margin_rhs``: ``w0 = v/λ`` on the free features (0 elsewhere) and ``λ(1 − y_F(X_{F,H} w0 + b))``;
    ``margin_weights``: ``w0 + A_Fᵀ step/λ`` and ``c∘α`` with ``step`` added on ``F`` — against dense NumPy;
    ``deflation_energy``: each column's ``Σ a²`` (0 in fewer than two rows), a row's mean and the count above a
    multiple of it."""
    X, y = _bag_of_words()
    rng = np.random.default_rng(9)
    F = np.sort(rng.choice(X.shape[0], 60, replace=False)).astype(np.int64)
    free = rng.random(X.shape[1]) < 0.6
    v, lam = rng.standard_normal(X.shape[1]), 0.3
    ptr, cols, vals, features = mk.gather_rows(*csr_parts(X), F, free, y)
    A = np.zeros((F.size, features.size))
    for j in range(F.size):
        A[j, cols[ptr[j]:ptr[j + 1]]] = vals[ptr[j]:ptr[j + 1]]
    w0, rhs = mk.margin_rhs(ptr, cols, vals, free, v, features, y, F, 0.0 if b is None else b, b is not None, lam)
    want_w0 = np.where(free, v, 0.0) / lam
    np.testing.assert_allclose(w0, want_w0, rtol=1e-15)
    dense = X.toarray()
    want_rhs = lam * (1.0 - y[F] * (dense[F] @ want_w0 + (0.0 if b is None else b)))
    np.testing.assert_allclose(rhs, want_rhs, rtol=1e-12, atol=1e-12)
    step, c, alpha = rng.standard_normal(F.size), rng.random(X.shape[0]), rng.random(X.shape[0])
    w, multipliers = mk.margin_weights(ptr, cols, vals, step, w0, features, lam, c, alpha, F)
    want_w = want_w0.copy()
    want_w[features] += A.T @ step / lam
    np.testing.assert_allclose(w, want_w, rtol=1e-12, atol=1e-12)
    want_m = c * alpha
    want_m[F] += step
    np.testing.assert_allclose(multipliers, want_m, rtol=1e-15)
    energy, mean_row, above = mk.deflation_energy(cols, vals, F.size, features.size, 2.0)
    counts = (A != 0).sum(axis=0)
    want_e = np.where(counts >= 2, (A ** 2).sum(axis=0), 0.0)
    np.testing.assert_allclose(energy, want_e, rtol=1e-13)
    assert mean_row == pytest.approx((A ** 2).sum() / F.size, rel=1e-13)
    assert above == np.count_nonzero(want_e >= 2.0 * mean_row)

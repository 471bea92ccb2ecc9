"""dcd's fast paths against the paths they stand for: bounds followed on the signs' path while they do not bind,
the epochs run in blocks between certificates, the fused certificate of the signs-only model, the certificate
schedule."""

from __future__ import annotations

from functools import partial

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp

import robustsvm as rs
from robustsvm.backends import _dcd_kernels as kern
from robustsvm.backends import _products_kernels as products
from robustsvm.backends import dcd
from robustsvm.backends.dcd import _SignRelaxation, signs_certificate, weight_box
from robustsvm.backends.dual_ascent import CAP_CHECKS, CertificateSchedule, Products
from robustsvm.backends.shared_set import SharedSetArrays, dual_certificate

from ._reference import Formulation, certified_reference
from .conftest import make_classification

SIGNS = np.array([1, -1, 0, 1, -1, 1, 1, -1])


def _data(sparse: bool, seed: int = 3, n: int = 200):
    return make_classification(n, SIGNS.size, seed=seed, sparse=sparse, density=0.5)


def _bounded_model(X, y, lam, lower, upper) -> Formulation:
    """Hinge + L2 with ``lower ≤ w ≤ upper``, free intercept, written directly in CVXPY."""
    X = X.toarray() if sp.issparse(X) else np.asarray(X)
    ys = np.where(np.asarray(y) == 1, 1.0, -1.0)
    n, d = X.shape
    w, b = cp.Variable(d), cp.Variable()
    r = cp.Variable(n, nonneg=True)
    margins = r >= 1 - cp.multiply(ys, X @ w + b)
    fin_lo, fin_up = np.isfinite(lower), np.isfinite(upper)
    cons = [w[fin_lo] >= lower[fin_lo], w[fin_up] <= upper[fin_up], margins]
    return Formulation(lam / 2 * cp.sum_squares(w) + cp.sum(r) / n, cons, w, b, margins)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_bounds_that_never_bind_take_the_signs_path(sparse, monkeypatch):
    """A far finite side keeps the solve on the signs' path (same epochs, same point up to the certificate's
    rounding) and it says so. The margin-equation point (and its schedule) serves sign constraints alone, not a box
    followed on the signs' path, so both solves run without it."""
    monkeypatch.setattr(dcd, "MARGIN_POINT", False)
    X, y = _data(sparse)
    lower = np.where(SIGNS > 0, 0.0, np.where(SIGNS < 0, -1e3, -np.inf))
    upper = np.where(SIGNS < 0, 0.0, np.where(SIGNS > 0, 1e3, np.inf))
    signs = rs.Problem(penalty=rs.L2(0.05), signs=SIGNS).solve(X, y, solver="dcd", tol=1e-8, random_state=0)
    far = rs.Problem(penalty=rs.L2(0.05), bounds=(lower, upper)).solve(X, y, solver="dcd", tol=1e-8,
                                                                        random_state=0)
    assert far.status == "optimal" and not far.extra["bounds_bind"]
    assert far.iterations == signs.iterations
    np.testing.assert_allclose(far.w, signs.w, rtol=0, atol=1e-9 * np.abs(signs.w).max())


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_bounds_that_bind_during_the_solve_are_certified(sparse):
    """A finite side at half the signs' largest weight binds after some epochs: the solve moves to the clipped
    path and its certified bracket contains the optimum of an independent CVXPY model."""
    X, y = _data(sparse)
    lam = 0.05
    top = np.abs(rs.Problem(penalty=rs.L2(lam), signs=SIGNS).solve(X, y, solver="dcd", tol=1e-8).w).max()
    lower = np.where(SIGNS > 0, 0.0, -0.5 * top)
    upper = np.where(SIGNS < 0, 0.0, 0.5 * top)
    prob = rs.Problem(penalty=rs.L2(lam), bounds=(lower, upper))
    model = prob.normalize(X, y)
    arrays = SharedSetArrays.from_model(model)
    assert _SignRelaxation.of(arrays, weight_box(arrays)) is not None  # w = 0 is inside: the solve starts relaxed
    ref = certified_reference(prob, X, y, partial(_bounded_model, X, y, lam, lower, upper))
    sol = prob.solve(X, y, solver="dcd", tol=1e-8, random_state=0)
    assert sol.status == "optimal" and sol.extra["bounds_bind"]
    assert model.feasible.box_violation(sol.w) == 0.0
    slack = 1e-12 * max(1.0, abs(ref.objective))
    assert sol.objective - ref.objective <= sol.gap + slack
    assert sol.objective >= ref.bound - slack


def test_the_relaxation_checks_only_the_sides_that_are_not_signs():
    """``[a_h, b_h]``, where the signs' weight equals the box's clip, from the box and its implied signs."""
    lam = 0.5
    lower = np.array([0.0, 0.0, -2.0, -np.inf, -3.0, 0.0, 1.0])
    upper = np.array([np.inf, 4.0, 0.0, np.inf, 5.0, 0.0, 3.0])
    X = np.eye(7)[:2]
    model = rs.Problem(penalty=rs.L2(lam), bounds=(lower[:6], upper[:6])).normalize(X[:, :6], np.array([0, 1]))
    arrays = SharedSetArrays.from_model(model)
    relax = _SignRelaxation.of(arrays, weight_box(arrays))
    np.testing.assert_array_equal(relax.index, [1, 2, 4, 5])
    np.testing.assert_array_equal(relax.a, [-1e300, lam * -2.0, lam * -3.0, -1e300])
    np.testing.assert_array_equal(relax.b, [lam * 4.0, 1e300, lam * 5.0, 0.0])
    # a lower bound above 0 binds at w(α = 0) = 0: no relaxation
    model = rs.Problem(penalty=rs.L2(lam), bounds=(lower, upper)).normalize(X, np.array([0, 1]))
    arrays = SharedSetArrays.from_model(model)
    assert _SignRelaxation.of(arrays, weight_box(arrays)) is None
    assert kern.outside(np.array([0.0, 2.1]), np.array([1], dtype=np.int64), np.array([-1.0]), np.array([2.0]))
    assert not kern.outside(np.array([9.0, 2.0]), np.array([1], dtype=np.int64), np.array([-1.0]), np.array([2.0]))


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("intercept", [False, True], ids=["none", "free"])
def test_epochs_in_blocks_take_the_steps_of_single_epochs(sparse, intercept):
    """With a time limit the epochs run one per call; without, in blocks up to the next certificate: the same
    iterates, certificates and point."""
    X, y = _data(sparse)
    prob = rs.Problem(penalty=rs.L2(0.01), signs=SIGNS, intercept=intercept)
    block = prob.solve(X, y, solver="dcd", tol=1e-7, random_state=1)
    single = prob.solve(X, y, solver="dcd", tol=1e-7, random_state=1, time_limit=1e9)
    assert block.iterations == single.iterations and block.status == single.status == "optimal"
    np.testing.assert_array_equal(block.history["iteration"], single.history["iteration"])
    np.testing.assert_allclose(block.w, single.w, rtol=0, atol=1e-12 * np.abs(single.w).max())


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("intercept", [False, True, rs.L2(0.5)], ids=["none", "free", "ridge"])
@pytest.mark.parametrize("loss", [rs.Hinge(), rs.SquaredHinge()], ids=["hinge", "sqhinge"])
def test_signs_certificate_is_the_shared_certificate(sparse, intercept, loss):
    """The fused certificate of the signs-only model gives the values of :func:`.shared_set.dual_certificate`."""
    X, y = _data(sparse, n=120)
    model = rs.Problem(loss=loss, penalty=rs.L2(0.05), signs=SIGNS, intercept=intercept).normalize(X, y)
    arrays = SharedSetArrays.from_model(model)
    rng = np.random.default_rng(0)
    alpha = rng.random(120) * (rng.random(120) < 0.6) * (1.0 if isinstance(loss, rs.Hinge) else 3.0)
    w = np.where(SIGNS * rng.standard_normal(SIGNS.size) >= 0, rng.standard_normal(SIGNS.size), 0.0)
    w = np.where(SIGNS * w >= 0, w, 0.0)
    ops = Products(arrays.X)
    for hint in (None, 0.3):
        ours = signs_certificate(arrays, ops, alpha, hint, w.copy())
        shared = dual_certificate(arrays, ops, alpha, None, b_hint=hint, points=[w.copy()], dual_primal=False)
        assert ours.P == pytest.approx(shared.P, rel=1e-13, abs=1e-15)
        assert ours.D == pytest.approx(shared.D, rel=1e-13, abs=1e-15)
        assert ours.b == pytest.approx(shared.b, rel=1e-13, abs=1e-15)
        np.testing.assert_allclose(ours.images, shared.images, rtol=1e-13, atol=1e-15)


def test_restricted_rows_keep_their_dtypes():
    """The rebuilt rows have the index dtypes of the full rows (the compiled epochs keep their specialization)."""
    X = sp.random(30, 20, density=0.3, random_state=1, format="csr")
    keep = np.arange(20) % 3 != 0
    ptr, idx, _, _ = products.restrict_columns(X.indptr, X.indices, X.data, keep)
    assert ptr.dtype == X.indptr.dtype and idx.dtype == X.indices.dtype


def test_csr_parts_view_int32_indices_and_convert_others():
    """int32 indices are read as uint32 in place (no copy of the caller's arrays, the same values); int64 ones are
    converted."""
    X = sp.random(40, 30, density=0.2, random_state=2, format="csr")
    assert X.indices.dtype == np.int32
    ptr, idx, _ = products.csr_parts(X)
    assert idx.dtype == np.uint32 and np.shares_memory(idx, X.indices) and ptr.dtype == np.uint32
    np.testing.assert_array_equal(idx, X.indices)
    np.testing.assert_array_equal(ptr, X.indptr)
    wide = X.copy()
    wide.indices, wide.indptr = X.indices.astype(np.int64), X.indptr.astype(np.int64)  # as scipy makes them past 2³¹
    ptr64, idx64, _ = products.csr_parts(wide)
    assert idx64.dtype == np.uint32 and not np.shares_memory(idx64, wide.indices)
    np.testing.assert_array_equal(idx64, X.indices)
    np.testing.assert_array_equal(ptr64, X.indptr)


def test_column_counts_are_the_stored_entries_per_column():
    X = sp.random(80, 25, density=0.15, random_state=6, format="csr")
    _, idx, _ = products.csr_parts(X)
    counts = products.column_counts(idx, 25)
    np.testing.assert_array_equal(counts, (X.toarray() != 0).sum(axis=0))
    assert counts.dtype == np.int64 and counts[np.setdiff1d(np.arange(25), X.indices)].sum() == 0


def test_row_norms_of_canonical_and_duplicate_entries():
    """The squared row norms of the shared arrays are those of the dense rows: empty rows give 0, and duplicate
    stored entries are summed before squaring (as the matrix they represent)."""
    from robustsvm.backends.shared_set import _rows

    X = sp.random(50, 30, density=0.1, random_state=5, format="csr")
    X[7, :] = 0.0
    X.eliminate_zeros()
    _, sq, none = _rows(X)
    np.testing.assert_allclose(sq, (X.toarray() ** 2).sum(axis=1), rtol=1e-15, atol=0)
    assert sq[7] == 0.0 and none is None
    dup = sp.csr_matrix((np.array([1.0, 2.0, 3.0]), np.array([1, 1, 0]), np.array([0, 2, 3])), shape=(2, 3))
    assert not dup.has_canonical_format
    _, sq, _ = _rows(dup)
    np.testing.assert_array_equal(sq, [9.0, 9.0])


def test_row_norms_with_column_counts_in_one_pass():
    """``_rows(X, column_counts=True)``: the same squared row norms bit for bit, and the stored entries of each
    column of the canonical matrix (duplicates summed first), against the dense matrix; dense data have none."""
    from robustsvm.backends.shared_set import _rows

    rng = np.random.default_rng(3)
    X = sp.random(200, 40, density=0.1, random_state=4, format="csr", data_rvs=rng.standard_normal)
    _, sq, none = _rows(X)
    _, sq2, counts = _rows(X, column_counts=True)
    np.testing.assert_array_equal(sq2, sq)
    np.testing.assert_array_equal(counts, (X.toarray() != 0).sum(axis=0))
    assert counts.dtype == np.int64 and none is None
    dup = sp.csr_matrix((np.array([1.0, 2.0, 3.0]), np.array([1, 1, 0]), np.array([0, 2, 3])), shape=(2, 3))
    _, sq, counts = _rows(dup, column_counts=True)
    np.testing.assert_array_equal(sq, [9.0, 9.0])
    np.testing.assert_array_equal(counts, [1, 1, 0])
    assert _rows(X.toarray(), column_counts=True)[2] is None


def test_certificate_products_read_the_restricted_rows_only_where_they_are_the_same():
    """With ``w`` zero on the dropped columns, ``Xw`` from the restricted rows and the class images from the full
    rows equal the products of the full matrix; :meth:`Products.rows_for` falls back to all of ``X`` as soon as
    ``w`` is nonzero on a dropped column."""
    rng = np.random.default_rng(8)
    n, d = 120, 60
    X = sp.random(n, d, density=0.15, random_state=9, format="csr")
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    c = np.full(n, 1.0 / n)
    alpha = np.where(rng.random(n) < 0.4, 0.0, rng.random(n) * 1.2)  # zeros and values beyond the box
    dropped = rng.random(d) < 0.4
    w = np.where(dropped, 0.0, rng.standard_normal(d))
    ops = Products(X)
    ops.restrict(products.restrict_columns(X.indptr, X.indices, X.data, ~dropped)[:3], dropped)
    assert ops.rows_for(w) is ops.restricted[0]
    images, z, sums = products.certificate_sparse(*ops.parts, *ops.rows_for(w), d, c, y, alpha, 1.0, w)
    ca = c * np.clip(alpha, 0.0, 1.0)
    Xd = X.toarray()
    np.testing.assert_allclose(z, Xd @ w, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(images[0], Xd[y > 0].T @ ca[y > 0], rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(images[1], -(Xd[y < 0].T @ ca[y < 0]), rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(sums, [ca[y > 0].sum(), ca[y < 0].sum()], rtol=1e-13)
    w[np.flatnonzero(dropped)[0]] = 0.5
    assert ops.rows_for(w) is ops.parts
    np.testing.assert_allclose(ops.matvec(w), Xd @ w, rtol=1e-13, atol=1e-15)


def test_the_schedule_runs_past_the_predicted_end_when_a_certificate_costs_more():
    """With a certificate worth ``r`` epochs, the next one comes after ``max(0.7k, min(0.7k + r, 1.2k + 1))``
    epochs (``k`` the epochs the rate predicts): never sooner than without ``r``, never past ``1.2k + 1``."""
    from robustsvm.backends.dual_ascent import next_check as _next_check

    last, now, tol = (0, 4.62e-4), (29, 1.98e-4), 1e-4
    k = np.log(1.98) / (np.log(4.62 / 1.98) / 29)
    assert _next_check(last, now, tol, 10) == int(np.ceil(0.7 * k))
    assert _next_check(last, now, tol, 10, cert_epochs=5.2) == int(np.ceil(0.7 * k + 5.2))
    assert _next_check(last, now, tol, 10, cert_epochs=1e3) == int(np.ceil(1.2 * k + 1))
    counts = [_next_check(last, now, tol, 10, cert_epochs=r) for r in np.linspace(0, 40, 41)]
    assert counts == sorted(counts)


def test_the_schedule_backs_off_in_a_stall_and_follows_the_rate_otherwise():
    """The next certificate from the last two: ``0.7·log(gap/tol)/rate`` epochs while the gap falls geometrically,
    the cap ``CAP_CHECKS·check_every·2^stalls`` when it does not halve."""
    steady = CertificateSchedule(1e-4, 10, 0)
    for epoch, gap in [(10, 1e-2), (20, 1e-3)]:
        steady.record(epoch, gap)
    rate = np.log(10.0) / 10
    assert steady.stalls == 0 and steady.next == int(np.ceil(0.7 * np.log(1e-3 / 1e-4) / rate))
    stalled = CertificateSchedule(1e-6, 10, 0)
    for epoch, gap in [(10, 1e-2), (20, 0.9e-2), (30, 0.85e-2)]:
        stalled.record(epoch, gap)
    assert stalled.stalls == 2 and stalled.next == CAP_CHECKS * 10 * 2 ** 2


@pytest.mark.parametrize("intercept", [False, True], ids=["none", "free"])
def test_signs_certificate_of_bounds_that_do_not_bind(intercept):
    """With bounds beyond signs, the fused certificate is the shared (box) one while the dual image lies where the
    bounds do not bind, and declines (None) where one binds."""
    X, y = _data(False, n=120)
    rng = np.random.default_rng(2)
    alpha = rng.random(120) * (rng.random(120) < 0.6)
    w = np.where(SIGNS * rng.standard_normal(SIGNS.size) >= 0, 0.1, 0.0) * np.where(SIGNS < 0, -1.0, 1.0)
    for cap, fits in ((1e3, True), (1e-4, False)):
        lower = np.where(SIGNS > 0, 0.0, -cap)
        upper = np.where(SIGNS < 0, 0.0, cap)
        model = rs.Problem(penalty=rs.L2(0.05), bounds=(lower, upper), intercept=intercept).normalize(X, y)
        arrays = SharedSetArrays.from_model(model)
        relax = _SignRelaxation.of(arrays, weight_box(arrays))
        ops = Products(arrays.X)
        point = np.clip(w, model.feasible.lower, model.feasible.upper)
        ours = signs_certificate(arrays, ops, alpha, 0.2 if intercept else None, point.copy(), relax)
        if not fits:
            assert ours is None
            continue
        shared = dual_certificate(arrays, ops, alpha, None, b_hint=0.2 if intercept else None, points=[point.copy()],
                                  dual_primal=False)
        assert ours.P == pytest.approx(shared.P, rel=1e-13, abs=1e-15)
        assert ours.D == pytest.approx(shared.D, rel=1e-13, abs=1e-15)


def test_the_sign_kernels_of_the_certificates_bookkeeping():
    """``sign_bounds``, ``sign_free``, ``clip_to_signs``, ``zero_where`` and ``any_nonzero_at`` against NumPy."""
    rng = np.random.default_rng(12)
    d = 50
    sg = rng.choice(np.array([1, -1, 0], dtype=np.int8), size=d)
    pos, neg = rng.standard_normal(d), rng.standard_normal(d)
    lo, up = products.sign_bounds(sg, 1e300)
    np.testing.assert_array_equal(lo, np.where(sg > 0, 0.0, -1e300))
    np.testing.assert_array_equal(up, np.where(sg < 0, 0.0, 1e300))
    frozen = rng.random(d) < 0.3
    v = pos + neg
    for use in (False, True):
        got_v, free, count = products.sign_free(pos, neg, sg, frozen, use)
        want = ((sg == 0) | (sg * v >= 0)) & (~frozen if use else True)
        np.testing.assert_array_equal(got_v, v)
        np.testing.assert_array_equal(free, want)
        assert count == want.sum()
    np.testing.assert_array_equal(products.clip_to_signs(v, sg), np.where(sg * v >= 0, v, 0.0))
    w = v.copy()
    products.zero_where(w, frozen)
    np.testing.assert_array_equal(w, np.where(frozen, 0.0, v))
    index = np.flatnonzero(frozen)
    assert not products.any_nonzero_at(w, index) and products.any_nonzero_at(v, index)
    assert not products.any_nonzero_at(v, index[:0])

"""The dual coordinate-descent backend against independent solvers and closed forms."""

from __future__ import annotations

import tracemalloc
import warnings
from functools import partial

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize_scalar

import robustsvm as rs
from robustsvm.backends._dcd_kernels import dual_sums
from robustsvm.backends.dual_ascent import visiting_order
from robustsvm.objective import optimal_intercept

from ._reference import Formulation, Reference, certified_reference
from .conftest import make_classification

SIGNS = np.array([1, -1, 0, 1, -1, 1, 1, -1])


def _data(sparse: bool, seed: int = 3, n: int = 150):
    return make_classification(n, SIGNS.size, seed=seed, sparse=sparse, density=0.5)


def _cvxpy_model(X, y, lam, squared, reduction, intercept, signs, sample_weight=None) -> Formulation:
    """The model written directly in CVXPY (independent of robustsvm.conic)."""
    X = X.toarray() if sp.issparse(X) else np.asarray(X)
    ys = np.where(np.asarray(y) == 1, 1.0, -1.0)
    n, d = X.shape
    sw = np.ones(n) if sample_weight is None else np.asarray(sample_weight, float)
    c = sw / sw.sum() if reduction == "mean" else sw
    w = cp.Variable(d)
    b = cp.Variable() if intercept is not False else 0.0
    r = cp.Variable(n, nonneg=True)  # max(0, 1 − y_i(x_i·w + b)) at the optimum
    margins = r >= 1 - cp.multiply(ys, X @ w + b)  # its duals: the margin multipliers
    loss = c @ (cp.square(r) if squared else r)
    obj = lam / 2 * cp.sum_squares(w) + loss
    if isinstance(intercept, rs.Penalty):
        obj = obj + intercept.l2 / 2 * cp.square(b)
    cons = [w[signs > 0] >= 0, w[signs < 0] <= 0, margins]
    return Formulation(obj, cons, w, b, margins)


def _cvxpy_optimum(X, y, lam, squared, reduction, intercept, signs, sample_weight=None) -> Reference:
    """The optimum of the model above: Clarabel's point (to 1e-10, then SCS's) and the package's certificate of
    it give an interval ``[bound, objective] ∋ P*`` (:mod:`tests._reference`; Clarabel's status is not trusted,
    it depends on the BLAS kernel)."""
    loss = (rs.SquaredHinge if squared else rs.Hinge)(reduction=reduction)
    prob = rs.Problem(loss=loss, penalty=rs.L2(lam), signs=signs, intercept=intercept)
    return certified_reference(
        prob, X, y, partial(_cvxpy_model, X, y, lam, squared, reduction, intercept, signs, sample_weight),
        sample_weight=sample_weight, clarabel_options={"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10})


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("intercept", [False, True, rs.L2(0.5)], ids=["none", "free", "ridge"])
@pytest.mark.parametrize("squared", [False, True], ids=["hinge", "sqhinge"])
@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_agrees_with_clarabel(sparse, intercept, squared, reduction):
    X, y = _data(sparse)
    lam = 0.05 if reduction == "mean" else 5.0  # C = 1/(λn) moderate for both reductions
    loss = rs.SquaredHinge(reduction=reduction) if squared else rs.Hinge(reduction=reduction)
    prob = rs.Problem(loss=loss, penalty=rs.L2(lam), signs=SIGNS, intercept=intercept)
    sol = prob.solve(X, y, solver="dcd", tol=1e-7, random_state=0, max_iter=20000)
    ref = _cvxpy_optimum(X, y, lam, squared, reduction, intercept, SIGNS)
    assert sol.status == "optimal"
    assert sol.violation == 0.0  # signs exact, not approximately
    assert np.all(SIGNS * sol.w >= 0)
    scale = ref.scale()
    # the certificate bounds the suboptimality: P(w) − P* ≤ gap (P* ≤ ref.objective)
    assert sol.objective - ref.objective <= sol.gap + 1e-7 * scale
    assert sol.objective >= ref.bound - 1e-7 * scale
    # the dual value is a lower bound of the optimum
    assert sol.dual_objective <= ref.objective + 1e-7 * scale
    assert sol.gap <= 1e-7 * abs(sol.objective) * (1 + 1e-9)
    if intercept is False:
        assert sol.b == 0.0


def test_matches_robustsvm_clarabel_backend_with_sample_weights():
    X, y = _data(False, seed=5, n=120)
    sw = np.random.default_rng(0).uniform(0.0, 2.0, size=y.size)
    sw[:5] = 0.0  # zero weights drop samples from the dual entirely
    prob = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(0.02), signs=SIGNS, intercept=True)
    ref = prob.solve(X, y, solver="clarabel", sample_weight=sw)
    sol = prob.solve(X, y, solver="dcd", sample_weight=sw, tol=1e-7, random_state=1, max_iter=20000)
    assert sol.status == "optimal"
    direct = _cvxpy_optimum(X, y, 0.02, False, "mean", True, SIGNS, sample_weight=sw)
    assert abs(ref.objective - direct.objective) <= 1e-6 * direct.scale()
    assert direct.bound - 1e-7 <= sol.objective <= direct.objective + sol.gap + 1e-7
    np.testing.assert_allclose(sol.w, ref.w, atol=2e-3)


def test_unconstrained_matches_liblinear():
    from sklearn.svm import LinearSVC

    X, y = _data(False, seed=7, n=200)
    lam = 0.01
    n = y.size
    prob = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(lam), intercept=False)
    sol = prob.solve(X, y, solver="dcd", tol=1e-9, random_state=0, max_iter=50000)
    svc = LinearSVC(loss="hinge", C=1.0 / (lam * n), dual=True, fit_intercept=False, tol=1e-10,
                    max_iter=1_000_000).fit(X, y)
    p_lib = prob.objective(X, y, svc.coef_.ravel(), 0.0)
    assert sol.objective <= p_lib + 1e-9
    assert p_lib - sol.objective <= 1e-6
    np.testing.assert_allclose(sol.w, svc.coef_.ravel(), atol=1e-3)


def _phi(b, z, y, c, squared):
    r = np.maximum(0.0, 1.0 - y * (z + b))
    return float(c @ (r * r if squared else r))


@pytest.mark.parametrize("squared", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_optimal_intercept_is_the_exact_minimizer(squared, seed):
    rng = np.random.default_rng(seed)
    n = 40
    y = np.where(rng.random(n) < 0.3 + 0.1 * seed, 1.0, -1.0)
    z = rng.normal(scale=2.0, size=n)
    c = rng.uniform(0.1, 1.0, size=n)
    b = optimal_intercept(z, y, c, squared=squared)
    val = _phi(b, z, y, c, squared)
    # brute force: every breakpoint (a hinge minimum lies on one) and a fine bounded scalar search
    breaks = y - z
    brute = min(_phi(t, z, y, c, squared) for t in breaks)
    res = minimize_scalar(lambda t: _phi(t, z, y, c, squared), bounds=(breaks.min() - 5, breaks.max() + 5),
                          method="bounded", options={"xatol": 1e-12})
    assert val <= brute + 1e-12
    assert val <= res.fun + 1e-12
    if squared:  # smooth: the derivative vanishes at the minimizer
        r = np.maximum(0.0, 1.0 - y * (z + b))
        assert abs(-2 * float(c @ (y * r))) <= 1e-9


def test_sparse_is_never_densified():
    rng = np.random.default_rng(0)
    n, d = 200, 400_000  # a dense copy would be 640 MB
    X = sp.random(n, d, density=2e-5, random_state=1, format="csr") + sp.eye(n, d, format="csr")
    y = np.where(rng.random(n) < 0.5, 1, -1)
    signs = np.where(rng.random(d) < 0.5, 1, -1)
    prob = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(0.1), signs=signs, intercept=True)
    with pytest.warns(rs.ConvergenceWarning):  # two epochs only: compile outside the measurement
        prob.solve(X[:20], y[:20], solver="dcd", max_iter=2, tol=1e-12)
    tracemalloc.start()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rs.ConvergenceWarning)
        sol = prob.solve(X, y, solver="dcd", tol=1e-6)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 60e6
    assert sol.violation == 0.0


def test_stops_short_with_status_and_warning():
    X, y = _data(False)
    prob = rs.Problem(loss=rs.Hinge(reduction="sum"), penalty=rs.L2(0.01), signs=SIGNS)
    with pytest.warns(rs.ConvergenceWarning, match="max_iter"):
        sol = prob.solve(X, y, solver="dcd", max_iter=2, tol=1e-12)
    assert sol.status == "max_iter"
    assert sol.iterations == 2
    assert sol.gap > 0
    assert sol.violation == 0.0


def test_history_records_every_certificate():
    X, y = _data(True)
    prob = rs.Problem(loss=rs.SquaredHinge(), penalty=rs.L2(0.01), signs=SIGNS, intercept=True)
    sol = prob.solve(X, y, solver="dcd", tol=1e-8, check_every=1, random_state=0)
    h = sol.history
    for key in ("iteration", "objective", "dual", "gap", "rel_gap", "time"):
        assert len(h[key]) == len(h["iteration"]) >= 2
    assert np.all(h["objective"] >= h["dual"] - 1e-12)  # weak duality at every certificate
    np.testing.assert_allclose(h["gap"], h["objective"] - h["dual"], atol=1e-15)
    assert h["rel_gap"][-1] <= 1e-8
    assert h["iteration"][-1] == sol.iterations
    assert np.isclose(h["objective"][-1], sol.objective, rtol=1e-9)


def test_shrinking_off_reaches_the_same_optimum():
    X, y = _data(False, seed=11)
    prob = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(0.01), signs=SIGNS, intercept=True)
    a = prob.solve(X, y, solver="dcd", tol=1e-8, shrinking=True, random_state=0)
    b = prob.solve(X, y, solver="dcd", tol=1e-8, shrinking=False, random_state=0)
    assert abs(a.objective - b.objective) <= a.gap + b.gap


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_free_intercept_weight_changes_the_path_not_the_optimum(sparse):
    """The default ρ is the documented ``0.03·mean‖x_i‖²/λ``; larger and smaller weights certify the same optimum
    (the augmented Lagrangian's fixed point does not depend on ρ)."""
    X, y = _data(sparse, seed=5)
    lam = 0.01
    prob = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(lam), signs=SIGNS, intercept=True)
    default = prob.solve(X, y, solver="dcd", tol=1e-8, random_state=0)
    sq = np.asarray(X.multiply(X).sum(axis=1)).ravel() if sp.issparse(X) else np.einsum("ij,ij->i", X, X)
    assert default.extra["rho"] == pytest.approx(0.03 * sq.mean() / lam, rel=1e-12)
    for factor in (0.003, 0.3, 3.0):
        other = prob.solve(X, y, solver="dcd", tol=1e-8, random_state=0, rho=factor * sq.mean() / lam)
        assert other.status == "optimal"
        assert abs(other.objective - default.objective) <= other.gap + default.gap + 1e-12
        assert abs(other.b - default.b) <= 1e-3 * max(1.0, abs(default.b))


@pytest.mark.parametrize(
    ("kwargs", "reason"),
    [
        ({"penalty": rs.L2(1.0) + rs.L1(0.1)}, "L2 penalty only"),
        ({"penalty": rs.L1(0.1)}, "positive strength"),
        ({"uncertainty": rs.Box(radius=0.1)}, "uncertainty"),
        ({"kernel": rs.RBF(1.0)}, "kernels"),
        ({"loss": rs.HardMargin()}, "soft-margin"),
    ],
)
def test_refuses_models_out_of_reach(kwargs, reason):
    args = {"loss": rs.Hinge(), "penalty": rs.L2(1.0)} | kwargs
    prob = rs.Problem(**args)
    assert reason in "; ".join(rs.get_backend("dcd").check(prob))
    X, y = _data(False)
    with pytest.raises(rs.UnsupportedModelError, match="dcd"):
        prob.solve(X, y, solver="dcd")


@pytest.mark.parametrize(
    ("options", "error"),
    [({"check_every": 0}, ValueError), ({"rho": -1.0}, ValueError), ({"shrinking": "yes"}, TypeError),
     ({"single_precision": "yes"}, ValueError)],
)
def test_bad_options(options, error):
    X, y = _data(False)
    prob = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(0.1), intercept=True)
    with pytest.raises(error, match=next(iter(options))):
        prob.solve(X, y, solver="dcd", **options)


# --------------------------------------------------------------------------- dense path: float32 rows


@pytest.mark.parametrize("intercept", [False, True], ids=["none", "free"])
def test_float32_rows_reach_the_float64_optimum(intercept):
    """The epochs on the float32 copy certify X's own model: the two solves' objectives bracket each other within
    their gaps, and the gap is the package's (its certificate evaluates X in float64), also at 1e-8 where the
    epochs return to X."""
    X, y = make_classification(2000, 30, seed=4)
    signs = np.resize(np.array([1, -1, 0]), 30)
    prob = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(1e-3), signs=signs, intercept=intercept)
    single = prob.solve(X, y, solver="dcd", tol=1e-8, single_precision=True, max_iter=20000)
    double = prob.solve(X, y, solver="dcd", tol=1e-8, single_precision=False, max_iter=20000)
    assert single.status == double.status == "optimal"
    assert 0 < single.extra["single_precision_passes"] < single.extra["passes"]  # read the copy, then X
    assert double.extra["single_precision_passes"] == 0
    assert single.objective - single.gap <= double.objective and double.objective - double.gap <= single.objective
    np.testing.assert_allclose(single.w, double.w, atol=1e-3)
    ref = _cvxpy_optimum(X, y, 1e-3, False, "mean", intercept, signs)
    assert ref.bound - 1e-9 * ref.scale() <= single.objective <= ref.objective + single.gap + 1e-9 * ref.scale()


def test_float32_rows_at_a_loose_tolerance_stay_on_the_copy():
    X, y = make_classification(2000, 30, seed=5)
    prob = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(1e-3), intercept=True)
    sol = prob.solve(X, y, solver="dcd", tol=1e-4, single_precision=True)
    assert sol.status == "optimal" and sol.gap <= 1e-4 * abs(sol.objective)
    assert sol.extra["single_precision_passes"] == sol.extra["passes"]


def test_auto_reads_float32_rows_once_they_outgrow_the_cache(monkeypatch):
    from robustsvm.backends import single_rows

    X, y = make_classification(3000, 40, seed=6)  # 960 kB
    prob = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(1e-3))
    assert prob.solve(X, y, solver="dcd").extra["single_precision_passes"] == 0
    monkeypatch.setattr(single_rows, "SINGLE_MIN_BYTES", X.nbytes)
    assert prob.solve(X, y, solver="dcd").extra["single_precision_passes"] > 0
    Xs = sp.csr_matrix(X)  # sparse rows are read as they are
    assert prob.solve(Xs, y, solver="dcd", single_precision=True).extra["single_precision_passes"] == 0


def test_no_float32_copy_without_the_memory_or_the_range(monkeypatch):
    """``"auto"`` makes no copy that would take more than half the available memory, and no setting makes a copy
    where an entry overflows float32 (it would hold infinities); the solve then reads X and still certifies."""
    from robustsvm.backends import single_rows

    X, y = make_classification(2000, 30, seed=8)
    prob = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(1e-3))
    monkeypatch.setattr(single_rows, "SINGLE_MIN_BYTES", 0)
    monkeypatch.setattr(single_rows, "available_memory", lambda: X.nbytes // 2 - 8)  # the copy is X.nbytes / 2
    assert prob.solve(X, y, solver="dcd").extra["single_precision_passes"] == 0
    monkeypatch.setattr(single_rows, "available_memory", lambda: X.nbytes)
    assert prob.solve(X, y, solver="dcd").extra["single_precision_passes"] > 0
    big = X.copy()
    big[:, 0] *= 1e39  # beyond float32's 3.4e38
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the scaled column makes the solve slow on X as well
        sol = prob.solve(big, y, solver="dcd", single_precision=True, max_iter=50)
        plain = prob.solve(big, y, solver="dcd", single_precision=False, max_iter=50)
    assert sol.extra["single_precision_passes"] == 0
    assert sol.objective == plain.objective and sol.iterations == plain.iterations  # the very epochs on X


def test_available_memory_is_positive_where_known():
    from robustsvm.backends.single_rows import available_memory

    room = available_memory()
    assert room is None or room > 0


def test_the_prefetch_hints_change_no_value(monkeypatch):
    """The epochs over short float32 rows ask for rows ahead (a hint to the cache): the same solve without the hints
    runs the very same steps."""
    from robustsvm.backends import single_rows

    X, y = make_classification(3000, 40, seed=9)  # rows of 160 bytes in float32
    assert single_rows.prefetch_distance(X.astype(np.float32)) == single_rows.PREFETCH_AHEAD > 0
    assert single_rows.prefetch_distance(X) == 0  # float64 rows: none
    assert single_rows.prefetch_distance(np.zeros((2, 300), dtype=np.float32)) == 0  # 1,200 bytes: none
    prob = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(1e-3), intercept=True)
    hinted = prob.solve(X, y, solver="dcd", single_precision=True)
    monkeypatch.setattr(single_rows, "PREFETCH_AHEAD", 0)
    plain = prob.solve(X, y, solver="dcd", single_precision=True)
    assert hinted.iterations == plain.iterations and hinted.objective == plain.objective
    np.testing.assert_array_equal(hinted.w, plain.w)


def test_a_drifting_float32_image_moves_the_epochs_to_x(monkeypatch):
    """Rounding that does not cancel makes the copy another model: the carried image drifts from X's and the epochs
    return to X (here the drift bound is set to 0, so the first certificate above tol moves them)."""
    from robustsvm.backends import single_rows

    X, y = make_classification(2000, 30, seed=7)
    monkeypatch.setattr(single_rows, "SINGLE_DRIFT", 0.0)
    prob = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(1e-3))
    sol = prob.solve(X, y, solver="dcd", tol=1e-6, single_precision=True, check_every=2, max_iter=20000)
    assert sol.status == "optimal"
    assert 0 < sol.extra["single_precision_passes"] <= 2.0 + 1e-9


# --------------------------------------------------------------------------- sparse path: frozen features


def _cora_small(seed: int = 0):
    ds = rs.datasets.make_cora_like(500, 300, density=0.03, seed=seed)
    y = np.where(np.asarray(ds.y) == 1, 1, -1)
    signs = np.random.default_rng(seed + 1).choice(np.array([1, -1, 0]), size=300, p=[0.4, 0.4, 0.2])
    return ds.X, y, signs


def test_epoch_time_is_reported_within_the_solve():
    """``extra["time_epochs"]`` is the CPU time of the compiled epochs: positive and within the solve's CPU time."""
    import time

    X, y, signs = _cora_small()
    prob = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(1.0 / y.size), signs=signs, intercept=False)
    prob.solve(X, y, solver="dcd", random_state=0)  # compiled
    t0 = time.process_time()
    sol = prob.solve(X, y, solver="dcd", random_state=0)
    cpu = time.process_time() - t0
    assert sol.status == "optimal" and sol.extra["passes"] > 0
    assert 0.0 < sol.extra["time_epochs"] <= cpu


@pytest.mark.parametrize("intercept", [False, True], ids=["none", "free"])
def test_frozen_features_keep_the_certificate(intercept, monkeypatch):
    import robustsvm.backends.dcd as dcd_mod

    X, y, signs = _cora_small()
    lam = 1.0 / y.size
    prob = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(lam), signs=signs, intercept=intercept)
    sol = prob.solve(X, y, solver="dcd", tol=1e-7, random_state=0, max_iter=20000)
    assert sol.status == "optimal"
    assert sol.extra["frozen_features"] > 0 and sol.extra["restrictions"] >= 1  # the mechanism was exercised
    assert np.all(signs * sol.w >= 0)
    ref = _cvxpy_optimum(X, y, lam, False, "mean", intercept, signs)
    assert sol.objective - ref.objective <= sol.gap + 1e-7 * abs(ref.objective)
    assert sol.objective >= ref.bound - 1e-7 * abs(ref.objective)
    monkeypatch.setattr(dcd_mod, "FEATURE_SHRINKING", False)
    plain = prob.solve(X, y, solver="dcd", tol=1e-7, random_state=0, max_iter=20000)
    assert plain.extra["frozen_features"] == 0
    assert abs(plain.objective - sol.objective) <= plain.gap + sol.gap


@pytest.mark.parametrize("intercept", [False, True], ids=["none", "free"])
def test_the_local_step_switch_keeps_the_optimum(intercept, monkeypatch):
    """The local-curvature step always on (share threshold 0), switched off once few clipped entries remain (the
    default) and off after the first certificate (threshold above 1) certify the same optimum."""
    import robustsvm.backends.dcd as dcd_mod

    X, y, signs = _cora_small(seed=2)
    prob = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(1.0 / y.size), signs=signs, intercept=intercept)
    sols = []
    for share in (0.0, dcd_mod.LOCAL_MIN_SHARE, 1.5):
        monkeypatch.setattr(dcd_mod, "LOCAL_MIN_SHARE", share)
        sols.append(prob.solve(X, y, solver="dcd", tol=1e-7, random_state=0, max_iter=20000))
    ref = _cvxpy_optimum(X, y, 1.0 / y.size, False, "mean", intercept, signs)
    for sol in sols:
        assert sol.status == "optimal" and np.all(signs * sol.w >= 0)
        assert abs(sol.objective - sols[0].objective) <= sol.gap + sols[0].gap
        assert sol.objective - ref.objective <= sol.gap + 1e-7 * abs(ref.objective)  # the independent formulation
        assert sol.objective >= ref.bound - 1e-7 * abs(ref.objective)


def test_clipped_share_counts_the_clipped_entries_not_frozen():
    from robustsvm.backends.frozen_features import FeatureShrinking

    X = sp.random(60, 12, density=0.3, random_state=4, format="csr")
    sg = np.array([1, -1, 0, 1, 1, -1, -1, 0, 1, -1, 1, -1], dtype=np.int8)
    fs = FeatureShrinking(X.indptr, X.indices.astype(np.uint32), X.data, sg, np.full(60, 1 / 60), 0.1, 0.0, 0.0)
    v = np.random.default_rng(1).normal(size=12)
    fs.frozen[[0, 5]] = True
    clipped = (sg * v < 0) & ~fs.frozen
    expected = (X[:, clipped] != 0).sum() / X.nnz
    assert fs.clipped_share(v) == pytest.approx(expected, rel=1e-12)
    assert fs.clipped_share(np.abs(v) * sg) == 0.0


def test_a_frozen_feature_found_free_is_restored_for_good():
    from robustsvm.backends.frozen_features import FeatureShrinking

    X = sp.csr_matrix(np.array([[1.0, 2.0, 0.0, 3.0], [0.0, 1.0, 1.0, 0.0], [4.0, 0.0, 5.0, 1.0]]))
    sg = np.array([1, -1, 1, 0], dtype=np.int8)
    c = np.full(3, 1 / 3)
    fs = FeatureShrinking(X.indptr, X.indices, X.data, sg, c, 0.5, 0.0, 0.0)
    assert fs.update(np.array([-1.0, 1.0, -1.0, 2.0])) is None  # first look: nothing to compare with
    # features 0 and 1 clipped and farther from 0 than they moved; feature 2 moved too much to be frozen
    rows = fs.update(np.array([-1.1, 1.2, -0.5, 2.0]))
    assert rows is not None
    np.testing.assert_array_equal(fs.frozen, [True, True, False, False])
    kept = X[:, [2, 3]].toarray()
    restricted = sp.csr_matrix((rows[2], rows[1], rows[0]), shape=X.shape).toarray()
    np.testing.assert_array_equal(restricted[:, [2, 3]], kept)
    assert not restricted[:, [0, 1]].any()
    np.testing.assert_allclose(rows[3], c * (kept**2).sum(axis=1) / 0.5)  # curvature bound of the restricted rows
    # feature 0 turns free: restored, and never frozen again even when clipped anew
    rows = fs.update(np.array([0.2, 1.3, -0.1, 2.0]))
    assert rows is not None
    np.testing.assert_array_equal(fs.frozen, [False, True, False, False])
    # the rebuilt rows (written over the arrays of the first rebuild) hold the columns kept now
    restricted = sp.csr_matrix((rows[2], rows[1], rows[0]), shape=X.shape).toarray()
    np.testing.assert_array_equal(restricted[:, [0, 2, 3]], X[:, [0, 2, 3]].toarray())
    assert not restricted[:, 1].any()
    fs.update(np.array([-3.0, 1.4, -0.6, 2.0]))
    fs.update(np.array([-3.0, 1.4, -0.6, 2.0]))
    assert not fs.frozen[0]


def test_restrict_columns_matches_scipy_slicing():
    from robustsvm.backends._products_kernels import restrict_columns

    X = sp.random(40, 30, density=0.2, random_state=3, format="csr")
    keep = np.random.default_rng(0).random(30) < 0.6
    ptr, idx, dat, sq = restrict_columns(X.indptr, X.indices, X.data, keep)
    got = sp.csr_matrix((dat, idx, ptr), shape=X.shape).toarray()
    want = X.toarray() * keep
    np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(sq, (want**2).sum(axis=1))


@pytest.mark.parametrize("seed", range(4))
def test_the_freeze_scan_is_the_rule_written_with_masks(seed):
    """``freeze_scan`` and ``clipped_entries`` (one compiled pass each) against the frozen-set rule written with
    NumPy masks: released = frozen and not clipped; wanted = clipped, not released, ``s v + |Δv| < 0``."""
    from robustsvm.backends._products_kernels import clipped_entries, freeze_scan

    rng = np.random.default_rng(seed)
    d = 200
    v, prev = rng.normal(size=d), rng.normal(size=d)
    v[:10] = -0.0
    sg = rng.choice(np.array([1, -1, 0], dtype=np.int8), size=d)
    frozen, released = rng.random(d) < 0.3, rng.random(d) < 0.1
    counts = rng.integers(0, 50, size=d)
    sv = sg * v
    clipped = sv < 0
    back = frozen & ~clipped
    new_released = released | back
    want = clipped & (sv + np.abs(v - prev) < 0) & ~new_released
    assert clipped_entries(v, sg, frozen, counts) == counts[clipped & ~frozen].sum()
    prev_in, released_in = prev.copy(), released.copy()
    got, got_back, added, grown = freeze_scan(v, prev_in, sg, frozen, released_in, counts, 1.0)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(released_in, new_released)
    np.testing.assert_array_equal(prev_in, v)
    assert got_back == back.any() and added == counts[want & ~frozen].sum()
    assert grown == (not np.any(frozen & ~want))
    assert freeze_scan(v, v.copy(), sg, want, new_released.copy(), counts, 1.0)[3]  # the wanted set, frozen: grown


def test_restricting_rows_in_place_drops_the_columns_as_from_the_full_rows():
    """``restrict_columns_into`` with its output arrays as its input (the frozen set of dcd only grew): twice in a
    row on the same arrays, each time the dense rows times the mask of the columns kept so far."""
    from robustsvm.backends._products_kernels import restrict_columns_into

    X = sp.random(50, 40, density=0.25, random_state=5, format="csr")
    ptr, idx, dat = X.indptr.copy(), X.indices.copy(), X.data.copy()
    sq = np.empty(50)
    keep = np.ones(40, dtype=bool)
    rng = np.random.default_rng(2)
    for _ in range(2):
        keep &= rng.random(40) < 0.7
        kept = restrict_columns_into(ptr, idx, dat, keep, ptr, idx, dat, sq)
        got = sp.csr_matrix((dat[:kept], idx[:kept], ptr), shape=X.shape).toarray()
        want = X.toarray() * keep
        np.testing.assert_array_equal(got, want)
        np.testing.assert_allclose(sq, (want**2).sum(axis=1))


def test_a_growing_frozen_set_rebuilds_the_rows_of_the_kept_columns(monkeypatch):
    """Two rebuilds of :class:`FeatureShrinking` where the second only adds frozen features (its rows are the first
    rebuild's without them, read in place): the rows equal ``X`` on the features not frozen, their curvature bound
    too."""
    from robustsvm.backends import dcd
    from robustsvm.backends.frozen_features import FeatureShrinking

    sources = []
    restrict = dcd.products.restrict_columns_into

    def recorded(indptr, *args):
        sources.append(indptr)
        return restrict(indptr, *args)

    monkeypatch.setattr(dcd.products, "restrict_columns_into", recorded)

    X = sp.random(80, 10, density=0.4, random_state=6, format="csr")
    sg = np.ones(10, dtype=np.int8)
    c = np.full(80, 1 / 80)
    fs = FeatureShrinking(X.indptr, X.indices.astype(np.uint32), X.data, sg, c, 0.5, 0.0, 0.0)
    v = np.ones(10)
    v[[0, 1]] = -1.0
    assert fs.update(v) is None  # first look
    for frozen in ([0, 1], [0, 1, 2, 3]):  # clipped at two looks in a row without moving: frozen
        v = v.copy()
        v[frozen] = -1.0
        if len(frozen) > 2:
            assert fs.update(v) is None  # features 2 and 3 just clipped: they moved more than their distance to 0
        rows = fs.update(v)
        assert rows is not None
        keep = np.ones(10, dtype=bool)
        keep[frozen] = False
        np.testing.assert_array_equal(fs.frozen, ~keep)
        restricted = sp.csr_matrix((rows[2], rows[1].astype(np.int64), rows[0]), shape=X.shape).toarray()
        np.testing.assert_array_equal(restricted, X.toarray() * keep)
        np.testing.assert_allclose(rows[3], c * ((X.toarray() * keep) ** 2).sum(axis=1) / 0.5)
    assert fs.rebuilds == 2
    assert sources[0] is fs.indptr and sources[1] is fs._buffers[0]  # the second pass read the restricted rows


@pytest.mark.parametrize("seed", range(3))
def test_weighted_quantile_matches_the_sorted_definition(seed):
    from robustsvm.objective import _weighted_quantile as weighted_quantile

    rng = np.random.default_rng(seed)
    for _ in range(300):
        n = int(rng.integers(1, 30))
        t = rng.integers(0, 5, size=n).astype(float)  # many ties
        c = rng.integers(0, 3, size=n) / 2.0  # zero weights included; sums exact in binary
        for target in (0.0, c.sum() / 2, c.sum(), c.sum() + 1.0, float(rng.integers(0, 2 * n + 1)) / 2):
            ts = np.sort(t)
            # definition: the smallest t_k with Σ_{t_i ≤ t_k} c_i ≥ target, else the largest t
            ok = [tk for tk in ts if c[t <= tk].sum() >= target]
            for hint in (np.nan, 2.0, 2.5, -1.0, 9.0):  # split first at a breakpoint, between them, outside
                assert weighted_quantile(t, np.zeros(n), c, target, hint, False) == (ok[0] if ok else ts[-1])


def test_weighted_quantile_with_equal_weights_and_a_rounded_target():
    """Weights ``1/n`` and the target ``Σ_{y_i>0} c_i`` (what the exact hinge intercept asks for): where the
    cumulative weight meets the target only up to rounding, the partial sums of two levels of the selection can
    disagree; the result is still a weighted quantile to within rounding (it was the largest ``t_i`` in about 1% of
    such draws, which put a warm start's intercept multiplier far from the optimum)."""
    from robustsvm.objective import _weighted_quantile as weighted_quantile

    rng = np.random.default_rng(0)
    for _ in range(3000):
        n = int(rng.integers(50, 400))
        t = rng.standard_normal(n)
        c = np.full(n, 1.0 / n)
        target = float(c[rng.random(n) < rng.uniform(0.2, 0.8)].sum())
        q = weighted_quantile(t, np.zeros(n), c, target, float(rng.normal()) if rng.random() < 0.5 else np.nan, False)
        assert c[t <= q].sum() >= target - 1e-12 and c[t < q].sum() < target + 1e-12


def test_certificates_are_spaced_out_where_the_ascent_stalls():
    """Certificates that do not halve the gap widen the spacing (up to 16×); progress resets it; no timing used."""
    from robustsvm.backends.dual_ascent import CAP_CHECKS
    from robustsvm.backends.dual_ascent import next_check as _next_check
    from robustsvm.backends.dual_ascent import stalls as _stalls

    last, now = (10, 1e-1), (20, 9e-2)  # slow progress: the rate alone asks for ⌈0.7·1082.7⌉ = 758 epochs
    assert _next_check(last, now, 1e-6, 10) == CAP_CHECKS * 10
    assert _next_check(last, now, 1e-6, 10, stalls=2) == CAP_CHECKS * 10 * 4
    assert _next_check(last, now, 1e-6, 10, stalls=9) == min(758, CAP_CHECKS * 10 * 16)  # the cap at most 16×
    assert _next_check((10, 1e-3), (20, 2e-4), 1e-4, 10, stalls=4) < 30  # near the tolerance the rate decides
    # a scale multiplies the predicted count before the bounds: rate ln(5)/10, k = ln(2)/rate = 4.31 → ⌈0.7·k⌉
    k = np.log(2.0) / (np.log(5.0) / 10)
    assert _next_check((10, 1e-3), (20, 2e-4), 1e-4, 10) == int(np.ceil(0.7 * k))
    assert _next_check((10, 1e-3), (20, 2e-4), 1e-4, 10, scale=0.5) == max(int(np.ceil(0.35 * k)), 2)
    assert _next_check(last, now, 1e-6, 10, stalls=9, scale=0.5) == int(np.ceil(0.5 * 0.7 * 1082.7))
    assert _stalls(None, (10, 0.5), 3) == 0
    assert _stalls((10, 0.5), (20, 0.4), 3) == 4
    assert _stalls((10, 0.5), (20, 0.2), 3) == 0


def test_a_seeded_solve_is_reproducible(wdbc):
    """The certificate schedule depends on the iterates only: two seeded solves give the same bits."""
    X, y, _ = wdbc
    prob = rs.Problem(loss=rs.Hinge(reduction="sum"), penalty=rs.L2(2.0**-8), signs=np.ones(X.shape[1]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = prob.solve(X, y, solver="dcd", max_iter=400, random_state=3)
        b = prob.solve(X, y, solver="dcd", max_iter=400, random_state=3)
    assert np.array_equal(a.w, b.w) and a.b == b.b and np.array_equal(a.history["iteration"], b.history["iteration"])


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_signs_only_epoch_matches_the_epoch_with_zero_bounds(sparse):
    """The int8-sign variant of the compiled epochs takes the steps of the variant with the bounds [0, ∞) / (−∞, 0]:
    same α, and in both ``v = Xᵀ(c∘y∘α)`` and ``w = clip(v, λl, λu)/λ`` recomputed here from α."""
    from robustsvm.backends import _dcd_kernels as kern
    from robustsvm.backends._compiled import CsrRows, DenseRows

    rng = np.random.default_rng(3)
    n, d, lam, rho = 300, 40, 0.05, 2.0
    X = sp.random(n, d, density=0.2, random_state=4, format="csr") if sparse else rng.standard_normal((n, d))
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    c = np.full(n, 1.0 / n)
    sg = rng.choice(np.array([-1, 0, 1], dtype=np.int8), d)
    lo, up = np.where(sg > 0, 0.0, -1e300), np.where(sg < 0, 0.0, 1e300)
    sqn = np.asarray(X.multiply(X).sum(axis=1)).ravel() if sparse else np.einsum("ij,ij->i", X, X)
    qdiag = c * (sqn / lam + rho)
    alpha0 = rng.random(n) * (rng.random(n) < 0.7)
    v0 = np.asarray(X.T @ (c * y * alpha0)).ravel()
    prm = kern.DcdParams(inv_lam=1.0 / lam, upper=1.0, dii=0.0, rho=rho, shrinking=True, local=sparse)
    rows = CsrRows(X.indptr, X.indices, X.data) if sparse else DenseRows(X)
    epoch = kern.epoch
    outcomes = []
    for box in (kern.DcdSigns(sg), kern.DcdBox(lo, up)):
        alpha = alpha0.copy()
        st = kern.DcdState(v0.copy(), np.clip(v0, lo, up) / lam, kern.dual_sums(0.1, float(np.sum(c * y * alpha0))))
        index = np.arange(n, dtype=np.int64)
        out = epoch(rows, kern.DcdSamples(y, c, qdiag), alpha, st, box, prm, index,
                    visiting_order(12345), n, np.inf, -np.inf)
        assert out[3] > 0
        v_ref = np.asarray(X.T @ (c * y * alpha)).ravel()
        np.testing.assert_allclose(st.v, v_ref, rtol=0, atol=1e-12)
        np.testing.assert_allclose(st.w, np.clip(st.v, lo, up) / lam, rtol=1e-15, atol=0)
        outcomes.append((out, alpha))
    assert outcomes[0][0][0] == outcomes[1][0][0] and outcomes[0][0][3] == outcomes[1][0][3]
    np.testing.assert_allclose(outcomes[0][1], outcomes[1][1], rtol=0, atol=1e-12)


def _wdbc_signs(d: int) -> np.ndarray:
    """A third of the features free, a third ≥ 0, a third ≤ 0."""
    return np.array([0, 1, -1] * (d // 3 + 1), dtype=np.int8)[:d]


@pytest.mark.parametrize("intercept", [False, True], ids=["none", "free"])
def test_default_budget_counts_passes_and_certifies_ill_conditioned_data(wdbc, intercept):
    """Standardized WDBC at λ = 0.1/n (C = 10) needs more than 1,000 epochs, most of them over a small shrunk set:
    counted in passes over the data the default budget certifies it, and the point agrees with liblinear
    (unconstrained)."""
    from sklearn.svm import LinearSVC

    X, t, _ = wdbc
    y = np.where(t == 1, 1.0, -1.0)
    n = y.size
    prob = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(0.1 / n), intercept=intercept)
    sol = prob.solve(X, y, solver="dcd", random_state=0)  # default tol 1e-4 and budget
    assert sol.status == "optimal"
    assert sol.iterations > 1000  # more epochs than the budget has passes
    assert sol.extra["passes"] <= 1000
    assert sol.gap <= 1e-4 * sol.objective * (1 + 1e-9)
    if not intercept:  # liblinear regularizes its intercept: the same model only without one
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            svc = LinearSVC(loss="hinge", C=10.0, dual=True, fit_intercept=False, tol=1e-10,
                            max_iter=1_000_000).fit(X, y)
        p_lib = prob.objective(X, y, svc.coef_.ravel(), 0.0)
        assert sol.objective - p_lib <= sol.gap  # P − P* ≤ gap, and P* ≤ P(liblinear)
        assert p_lib >= sol.dual_objective - 1e-12  # the dual value bounds liblinear's point too


def test_default_budget_certifies_ill_conditioned_data_with_signs(wdbc):
    """The same data with signs: the certified answer of the default budget agrees with a CVXPY model."""
    X, t, _ = wdbc
    n, d = X.shape
    signs = _wdbc_signs(d)
    sol = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(0.1 / n), signs=signs, intercept=False).solve(
        X, t, solver="dcd", random_state=0)
    assert sol.status == "optimal"
    assert sol.iterations > 1000
    assert sol.extra["passes"] <= 1000
    ref = _cvxpy_optimum(X, t, 0.1 / n, False, "mean", False, signs)
    scale = ref.scale()
    assert sol.objective - ref.objective <= sol.gap + 1e-8 * scale
    assert sol.objective >= ref.bound - 1e-8 * scale
    assert np.all(signs * sol.w >= 0)


def test_a_budget_in_passes_still_bounds_the_epochs():
    """Every epoch costs at least MIN_PASS of a pass, so at most max_iter / MIN_PASS epochs run."""
    from robustsvm.backends.dual_ascent import MIN_PASS

    X, y = _data(False)
    prob = rs.Problem(loss=rs.Hinge(reduction="sum"), penalty=rs.L2(1e-4), signs=SIGNS)
    with pytest.warns(rs.ConvergenceWarning, match="max_iter"):
        sol = prob.solve(X, y, solver="dcd", max_iter=3, tol=1e-15)
    assert sol.status == "max_iter"
    assert 3 <= sol.iterations <= int(np.ceil(3 / MIN_PASS))
    assert 3 - 1e-9 <= sol.extra["passes"] < 4


def test_a_stalled_shrunk_problem_restores_every_sample():
    """Two certificates in a row that do not halve the previous one's gap while samples are set aside: the next
    epoch sees every sample."""
    from robustsvm.backends.dual_ascent import DualCertificate, ascend

    seen = []

    def run_epoch(active, pg_max_old, pg_min_old):
        seen.append(active)
        return 5, 1.0, -1.0, 1  # half the samples set aside, a wide projected-gradient spread (never "solved")

    def certify(b_eff):
        return DualCertificate(1.0, 0.5, np.zeros(2), 0.0, scale=1.0)  # the same gap every time

    run = ascend(run_epoch, certify, n_total=10, sums=dual_sums(), rho=0.0, free=False, tol=1e-6, check_every=2,
                 max_iter=12, name="test", verbose=False, unshrink_after=2)
    epochs = run.history.arrays()["iteration"]
    assert len(epochs) >= 3
    stalled = int(epochs[2])  # the third certificate is the second in a row that did not halve: restore after it
    assert seen[stalled] == 10
    assert all(a == 5 for a in seen[1:stalled])  # shrunk in between (the first epoch sees all 10)
    never = []
    run_epoch_never = lambda *a: (never.append(a[0]), (5, 1.0, -1.0, 1))[1]  # noqa: E731
    ascend(run_epoch_never, certify, n_total=10, sums=dual_sums(), rho=0.0, free=False, tol=1e-6, check_every=2,
           max_iter=12, name="test", verbose=False, unshrink_after=0)
    assert never[0] == 10 and all(a == 5 for a in never[1:])


def test_unshrinking_after_stalls_reaches_the_same_optimum(wdbc, monkeypatch):
    """With and without the restore after stalled certificates, the certified answers bracket the same optimum."""
    import robustsvm.backends.dcd as dcd_module

    X, t, _ = wdbc
    n = t.size
    prob = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(0.1 / n), intercept=True)
    with_restore = prob.solve(X, t, solver="dcd", random_state=1, tol=1e-6, max_iter=20000)
    monkeypatch.setattr(dcd_module, "UNSHRINK_AFTER", 0)
    without = prob.solve(X, t, solver="dcd", random_state=1, tol=1e-6, max_iter=20000)
    for a, b in ((with_restore, without), (without, with_restore)):
        assert a.status == "optimal"
        assert a.objective - a.gap <= b.objective + 1e-12  # each lower bound is below the other's feasible value


@pytest.mark.parametrize("intercept", [False, True])
def test_dcds_own_objective_on_sparse_signed_data_is_numpys(intercept):
    """On sparse data with signs, dcd's own objective at its returned point (its compiled nominal objective) is
    NumPy's closed form there."""
    import scipy.sparse as sp

    from robustsvm.backends.dcd import solve_dcd
    from robustsvm.datasets import make_cora_like

    ds = make_cora_like(400, 300, seed=3, density=0.03)
    X = sp.csr_matrix(ds.X)
    y = np.where(np.asarray(ds.y) == 1, 1.0, -1.0)
    signs = np.random.default_rng(4).choice(np.array([1, -1, 0]), size=300, p=[0.4, 0.4, 0.2])
    lam = 1.0 / 400
    problem = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(lam), signs=signs, intercept=intercept)
    res = solve_dcd(problem.normalize(X, y), tol=1e-6)
    dense = X.toarray()
    P = 0.5 * lam * res.w @ res.w + np.mean(np.maximum(0.0, 1.0 - y * (dense @ res.w + res.b)))
    assert res.primal_objective == pytest.approx(P, rel=1e-12)

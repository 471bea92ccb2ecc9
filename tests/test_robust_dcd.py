"""The robust dual coordinate-ascent backend against the model written directly in CVXPY (Clarabel)."""

from __future__ import annotations

import warnings
from functools import partial

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp

import robustsvm as rs
from robustsvm import solve_path
from robustsvm.backends import cost
from robustsvm.exceptions import ConvergenceWarning, UnsupportedModelError

from ._reference import Formulation, Reference, certified_reference
from .conftest import ellipsoid_shape as _ellipsoid_shape
from .conftest import mixed_signs as _signs
from .conftest import standardized as _standardized

#: accuracy asked of Clarabel (absolute and relative gap, feasibility); the comparisons allow 10× that
#: relative to max(1, |P*|)
CLARABEL_TOL = 1e-8
SLACK = 1e-7





def _support_cvx(V, w):
    """``σ_V(w)`` written from the set's definition (independent of ``robustsvm.uncertainty``'s CVXPY code)."""
    if isinstance(V, rs.Box):
        return cp.sum(cp.multiply(np.ones(w.shape[0]) if V.widths is None else V.widths, cp.abs(w)))
    if isinstance(V, rs.Ball):
        return cp.norm(w, {1.0: "inf", 2.0: 2, np.inf: 1}[V.p])
    return cp.norm(np.linalg.cholesky(V.shape).T @ w, 2)


def _cvxpy_model(X, y, V, radius, *, l2, l1=0.0, signs=None, intercept=True, squared=False, reduction="mean",
                 sample_weight=None) -> Formulation:
    """The robust model in CVXPY."""
    X = X.toarray() if sp.issparse(X) else np.asarray(X)
    ys = np.where(np.asarray(y) == np.max(y), 1.0, -1.0)
    n, d = X.shape
    sw = np.ones(n) if sample_weight is None else np.asarray(sample_weight, float)
    c = sw / sw.sum() if reduction == "mean" else sw
    w = cp.Variable(d)
    b = cp.Variable() if intercept is not False else 0.0
    t = cp.Variable()  # epigraph of σ_V(w) (symmetric sets: one value for both labels)
    r = np.broadcast_to(np.asarray(radius, float), (n,))
    slack = cp.Variable(n, nonneg=True)  # max(0, 1 − y_i(x_i·w + b) + r_i σ_V(w)) at the optimum
    margins = slack >= 1 - cp.multiply(ys, X @ w + b) + r * t  # its duals: the margin multipliers
    obj = l2 / 2 * cp.sum_squares(w) + l1 * cp.norm1(w) + c @ (cp.square(slack) if squared else slack)
    if isinstance(intercept, rs.Penalty):
        obj = obj + intercept.l2 / 2 * cp.square(b)
    cons = [t >= _support_cvx(V, w), margins]
    if signs is not None:
        cons += [w[signs > 0] >= 0, w[signs < 0] <= 0]
    return Formulation(obj, cons, w, b, margins)


def _clarabel_optimum(prob, X, y, V, radius, *, sample_weight=None, **model) -> Reference:
    """The optimum of ``prob`` from the model above solved by Clarabel to ``CLARABEL_TOL`` (then SCS): the
    interval ``[bound, objective] ∋ P*`` of its point, certified by the package (:mod:`tests._reference`);
    Clarabel's status is not trusted, it depends on the BLAS kernel."""
    return certified_reference(
        prob, X, y, partial(_cvxpy_model, X, y, V, radius, sample_weight=sample_weight, **model),
        sample_weight=sample_weight,
        clarabel_options={"tol_gap_abs": CLARABEL_TOL, "tol_gap_rel": CLARABEL_TOL, "tol_feas": CLARABEL_TOL})


def _check_certified(sol, ref, signs, *, tol):
    """The certificate's promises against the reference interval ``ref.bound ≤ P* ≤ ref.objective``."""
    acc = SLACK * ref.scale()
    assert sol.status == "optimal", sol.message
    if signs is not None:
        assert np.all(signs * sol.w >= 0.0)  # exactly, not approximately
        assert sol.violation == 0.0
    # gap ≥ true excess: P(w, b) − P* ≤ gap (P* ≤ ref.objective)
    assert sol.objective - ref.objective <= sol.gap + acc
    assert sol.objective >= ref.bound - acc
    # the dual value is a lower bound of the optimum, within the gap of the objective
    assert sol.dual_objective <= ref.objective + acc
    assert abs(sol.objective - ref.objective) <= sol.gap + ref.gap + acc
    assert sol.gap <= tol * abs(sol.objective) * (1 + 1e-9)


def _sets(d: int):
    widths = np.linspace(0.5, 1.5, d)
    return {
        "box": rs.Box(0.08),
        "box-widths": rs.Box(0.08, widths=widths),
        "ball2": rs.Ball(0.4),
        "ball1": rs.Ball(0.4, p=1),
        "ballinf": rs.Ball(0.05, p=np.inf),
        "ellipsoid": rs.Ellipsoid(_ellipsoid_shape(d), 0.4),
    }


SET_NAMES = ["box", "box-widths", "ball2", "ball1", "ballinf", "ellipsoid"]
INTERCEPTS = {"free": True, "none": False, "ridge": rs.L2(0.5)}


@pytest.fixture(scope="module")
def wdbc_small():
    return _standardized("wdbc", n=220, seed=1)


@pytest.mark.parametrize("intercept", list(INTERCEPTS))
@pytest.mark.parametrize("squared", [False, True], ids=["hinge", "sqhinge"])
@pytest.mark.parametrize("set_name", SET_NAMES)
def test_wdbc_agrees_with_clarabel(wdbc_small, set_name, squared, intercept):
    X, y = wdbc_small
    d = X.shape[1]
    V = _sets(d)[set_name]
    # signs and L1 on in alternating cases, so every set meets both with each loss
    with_extras = (SET_NAMES.index(set_name) + list(INTERCEPTS).index(intercept) + squared) % 2 == 0
    signs = _signs(d) if with_extras else None
    l1 = 0.004 if with_extras else 0.0
    loss = rs.SquaredHinge() if squared else rs.Hinge()
    pen = rs.L2(0.02) + rs.L1(l1) if l1 else rs.L2(0.02)
    prob = rs.Problem(loss=loss, penalty=pen, uncertainty=V, signs=signs, intercept=INTERCEPTS[intercept])
    sol = prob.solve(X, y, solver="robust-dcd", tol=1e-7, max_iter=20000, random_state=0)
    ref = _clarabel_optimum(prob, X, y, V, V.radius, l2=0.02, l1=l1, signs=signs, intercept=INTERCEPTS[intercept],
                            squared=squared)
    _check_certified(sol, ref, signs, tol=1e-7)
    if intercept == "none":
        assert sol.b == 0.0


@pytest.mark.parametrize("tol", [1e-2, 1e-3])
@pytest.mark.parametrize("set_name", SET_NAMES)
def test_loose_gap_still_bounds_the_true_excess(wdbc_small, set_name, tol):
    """At a loose tolerance the gap is far above Clarabel's accuracy: the bound is tested where it bites."""
    X, y = wdbc_small
    d = X.shape[1]
    V = _sets(d)[set_name]
    prob = rs.Problem(penalty=rs.L2(0.005) + rs.L1(0.001), uncertainty=V, signs=_signs(d))
    sol = prob.solve(X, y, solver="robust-dcd", tol=tol, max_iter=20000, random_state=0, check_every=1)
    ref = _clarabel_optimum(prob, X, y, V, V.radius, l2=0.005, l1=0.001, signs=_signs(d))
    acc = SLACK * ref.scale()
    assert sol.status == "optimal"
    assert 0.0 <= sol.objective - ref.bound + acc and sol.objective - ref.objective + acc <= sol.gap + 2 * acc
    assert ref.objective - sol.dual_objective >= -acc
    assert sol.gap <= tol * sol.objective * (1 + 1e-9)


@pytest.mark.parametrize("set_name", ["box", "ball2", "ball1", "ellipsoid"])
def test_sparse_input_matches_dense_and_clarabel(wdbc_small, set_name):
    X, y = wdbc_small
    Xs = X.copy()
    Xs[np.abs(Xs) < 0.6] = 0.0  # about half the entries become zeros
    Xs = sp.csr_matrix(Xs)
    d = X.shape[1]
    V = _sets(d)[set_name]
    signs = _signs(d)
    prob = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(0.02) + rs.L1(0.002), uncertainty=V, signs=signs)
    sol = prob.solve(Xs, y, solver="robust-dcd", tol=1e-7, max_iter=20000, random_state=0)
    dense = prob.solve(Xs.toarray(), y, solver="robust-dcd", tol=1e-7, max_iter=20000, random_state=0)
    ref = _clarabel_optimum(prob, Xs, y, V, V.radius, l2=0.02, l1=0.002, signs=signs)
    _check_certified(sol, ref, signs, tol=1e-7)
    _check_certified(dense, ref, signs, tol=1e-7)


@pytest.mark.parametrize("name", ["pima", "sonar", "bands"])
@pytest.mark.parametrize("set_name", ["box", "ball2", "ball1", "ellipsoid"])
def test_keel_agrees_with_clarabel(name, set_name):
    X, y = _standardized(name, n=300)
    d = X.shape[1]
    V = _sets(d)[set_name]
    signs = _signs(d)
    prob = rs.Problem(loss=rs.Hinge(reduction="sum"), penalty=rs.L2(2.0) + rs.L1(0.1), uncertainty=V, signs=signs)
    sol = prob.solve(X, y, solver="robust-dcd", tol=1e-7, max_iter=20000, random_state=0)
    ref = _clarabel_optimum(prob, X, y, V, V.radius, l2=2.0, l1=0.1, signs=signs, reduction="sum")
    _check_certified(sol, ref, signs, tol=1e-7)


@pytest.mark.parametrize("set_name", ["box", "ball2", "ball1", "ellipsoid"])
@pytest.mark.parametrize("squared", [False, True], ids=["hinge", "sqhinge"])
def test_per_sample_radii_and_weights(wdbc_small, set_name, squared):
    X, y = wdbc_small
    n, d = X.shape
    rng = np.random.default_rng(4)
    radius = rng.uniform(0.0, 2.0, size=n) * _sets(d)[set_name].radius
    radius[:10] = 0.0  # some samples are certain
    V = type(_sets(d)[set_name])  # the same set class with the per-sample radii
    base = _sets(d)[set_name]
    if isinstance(base, rs.Ellipsoid):
        Vr = V(base.shape, radius)
    elif isinstance(base, rs.Ball):
        Vr = V(radius, p=base.p)
    else:
        Vr = V(radius)
    sw = rng.uniform(0.0, 2.0, size=n)
    sw[:4] = 0.0
    loss = rs.SquaredHinge() if squared else rs.Hinge()
    prob = rs.Problem(loss=loss, penalty=rs.L2(0.02), uncertainty=Vr, signs=_signs(d))
    sol = prob.solve(X, y, solver="robust-dcd", tol=1e-7, max_iter=20000, random_state=0, sample_weight=sw)
    ref = _clarabel_optimum(prob, X, y, Vr, radius, l2=0.02, signs=_signs(d), squared=squared, sample_weight=sw)
    _check_certified(sol, ref, _signs(d), tol=1e-7)
    # the package's own Clarabel backend agrees too
    conic = prob.solve(X, y, solver="clarabel", sample_weight=sw)
    assert abs(conic.objective - ref.objective) <= 1e-5 * ref.scale()


def test_list_of_identical_sets_is_accepted(wdbc_small):
    X, y = wdbc_small
    n = X.shape[0]
    radius = np.linspace(0.0, 0.2, n)
    sets = [rs.Box(float(r)) for r in radius]
    prob = rs.Problem(penalty=rs.L2(0.02), uncertainty=sets)
    sol = prob.solve(X, y, solver="robust-dcd", tol=1e-7, max_iter=20000, random_state=0)
    ref = _clarabel_optimum(prob, X, y, rs.Box(radius), radius, l2=0.02)
    _check_certified(sol, ref, None, tol=1e-7)


def test_nominal_model_with_l1_matches_clarabel(wdbc_small):
    X, y = wdbc_small
    prob = rs.Problem(penalty=rs.L2(0.02) + rs.L1(0.01), signs=_signs(X.shape[1]))
    sol = prob.solve(X, y, solver="robust-dcd", tol=1e-7, max_iter=20000, random_state=0)
    ref = _clarabel_optimum(prob, X, y, rs.Box(0.0), 0.0, l2=0.02, l1=0.01, signs=_signs(X.shape[1]))
    _check_certified(sol, ref, _signs(X.shape[1]), tol=1e-7)


def test_stops_short_with_status_and_warning(wdbc_small):
    X, y = wdbc_small
    prob = rs.Problem(penalty=rs.L2(0.001), uncertainty=rs.Ball(0.3))
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        sol = prob.solve(X, y, solver="robust-dcd", tol=1e-12, max_iter=3, random_state=0)
    assert sol.status == "max_iter"
    assert "not reached" in sol.message
    # still a certified pair of bounds
    ref = _clarabel_optimum(prob, X, y, rs.Ball(0.3), 0.3, l2=0.001)
    assert sol.objective - ref.objective <= sol.gap + SLACK
    assert sol.dual_objective <= ref.objective + SLACK


def test_history_is_monotone_and_consistent(wdbc_small):
    X, y = wdbc_small
    prob = rs.Problem(penalty=rs.L2(0.01), uncertainty=rs.Box(0.1))
    sol = prob.solve(X, y, solver="robust-dcd", tol=1e-8, max_iter=20000, random_state=0)
    h = sol.history
    assert np.all(np.diff(h["objective"]) <= 0) and np.all(np.diff(h["dual"]) >= 0)
    assert np.allclose(h["gap"], h["objective"] - h["dual"])
    assert h["rel_gap"][-1] <= 1e-8
    assert sol.iterations == h["iteration"][-1]


def test_warm_start_along_a_radius_path(wdbc_small):
    X, y = wdbc_small
    cold_epochs = warm_epochs = 0
    previous = None
    for r in [0.02, 0.04, 0.06, 0.08]:
        prob = rs.Problem(penalty=rs.L2(0.01), uncertainty=rs.Ball(r))
        cold = prob.solve(X, y, solver="robust-dcd", tol=1e-7, max_iter=20000, random_state=0)
        warm = prob.solve(X, y, solver="robust-dcd", tol=1e-7, max_iter=20000, random_state=0,
                          warm_start=previous if previous is not None else None)
        assert abs(warm.objective - cold.objective) <= cold.gap + warm.gap
        cold_epochs += cold.iterations
        warm_epochs += warm.iterations
        previous = warm.dual_alpha
    assert warm_epochs < cold_epochs


def test_warm_start_is_validated(wdbc_small):
    X, y = wdbc_small
    prob = rs.Problem(penalty=rs.L2(0.01), uncertainty=rs.Box(0.1))
    with pytest.raises(ValueError, match="warm_start"):
        prob.solve(X, y, solver="robust-dcd", warm_start=np.zeros(3))


@pytest.mark.parametrize(
    ("model", "match"),
    [
        (lambda d: rs.Problem(penalty=rs.L2(1.0),
                              uncertainty=rs.Polyhedron(np.vstack([np.eye(d), -np.eye(d)]), np.ones(2 * d))),
         "Polyhedron"),
        (lambda d: rs.Problem(penalty=rs.L2(1.0), uncertainty=rs.Box(0.1) & rs.Ball(0.2)), "Intersection"),
        (lambda d: rs.Problem(penalty=rs.L2(1.0), uncertainty=rs.Ball(0.2, p=3)), "p ∈"),
        (lambda d: rs.Problem(penalty=rs.L1(0.1), uncertainty=rs.Box(0.1)), "L2 penalty"),
        (lambda d: rs.Problem(loss=rs.HardMargin(), penalty=rs.L2(1.0), uncertainty=rs.Box(0.1)), "HardMargin"),
        (lambda d: rs.Problem(penalty=rs.L2(1.0), kernel=rs.RBF(1.0)), "kernels"),
    ],
    ids=["polyhedron", "intersection", "ball-p3", "no-l2", "hard-margin", "kernel"],
)
def test_refuses_with_reason(model, match):
    X, y = _standardized("pima", n=40)
    prob = model(X.shape[1])
    reasons = rs.solvers(prob)
    row = next(r for r in reasons if r["name"] == "robust-dcd")
    assert not row["accepts"]
    assert any(match in reason for reason in row["reasons"])
    with pytest.raises(UnsupportedModelError, match="clarabel"):
        prob.solve(X, y, solver="robust-dcd")


def test_refuses_per_sample_different_sets():
    X, y = _standardized("pima", n=40)
    sets = [rs.Box(0.1) if i % 2 else rs.Ball(0.1) for i in range(X.shape[0])]
    with pytest.raises(UnsupportedModelError, match="one set shared by all samples"):
        rs.Problem(penalty=rs.L2(1.0), uncertainty=sets).solve(X, y, solver="robust-dcd")


def test_spectrahedron_is_refused():
    d = 3
    A0 = np.eye(d + 1)
    blocks = [np.zeros((d + 1, d + 1)) for _ in range(d)]
    for k in range(d):
        blocks[k][0, k + 1] = blocks[k][k + 1, 0] = 1.0
    with pytest.warns(UserWarning, match="arrow LMI"):
        V = rs.Spectrahedron(A0, blocks, radius=0.1)
    prob = rs.Problem(penalty=rs.L2(1.0), uncertainty=V)
    row = next(r for r in rs.solvers(prob) if r["name"] == "robust-dcd")
    assert not row["accepts"] and any("Spectrahedron" in s for s in row["reasons"])


def test_bad_options_raise():
    X, y = _standardized("pima", n=40)
    prob = rs.Problem(penalty=rs.L2(1.0), uncertainty=rs.Box(0.1))
    with pytest.raises(TypeError, match="shrinking"):
        prob.solve(X, y, solver="robust-dcd", shrinking="yes")
    with pytest.raises(ValueError, match="check_every"):
        prob.solve(X, y, solver="robust-dcd", check_every=0)
    with pytest.raises(ValueError, match="inner"):
        prob.solve(X, y, solver="robust-dcd", inner=0)


def test_zero_radius_equals_nominal_dcd(wdbc_small):
    X, y = wdbc_small
    signs = _signs(X.shape[1])
    nominal = rs.Problem(penalty=rs.L2(0.02), signs=signs).solve(X, y, solver="dcd", tol=1e-8, max_iter=20000)
    robust = rs.Problem(penalty=rs.L2(0.02), signs=signs, uncertainty=rs.Ball(0.0)).solve(
        X, y, solver="robust-dcd", tol=1e-8, max_iter=20000)
    assert abs(robust.objective - nominal.objective) <= robust.gap + nominal.gap


def test_no_warning_when_optimal(wdbc_small):
    X, y = wdbc_small
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sol = rs.Problem(penalty=rs.L2(0.05), uncertainty=rs.Box(0.05)).solve(X, y, solver="robust-dcd")
    assert sol.status == "optimal" and sol.rel_gap <= 1e-4


def test_grid_search_warm_starts_and_agrees_with_compiled_clarabel(wdbc_small, monkeypatch):
    from robustsvm.backends import registry, robust_dcd

    X, y = wdbc_small
    prob = rs.Problem(penalty=rs.L2(0.01), uncertainty=rs.Box(0.05))
    grid = {"l2": [0.01, 0.03], "radius": [0.02, 0.05, 0.1]}
    seen = []
    original = registry.get_backend("robust-dcd")

    def spy(model, **options):
        seen.append(options.get("warm_start") is not None)
        return robust_dcd.solve_robust_dcd(model, **options)

    monkeypatch.setitem(registry._REGISTRY, "robust-dcd",
                        registry.Backend(name="robust-dcd", solve=spy, needs=original.needs, summary="",
                                         options=original.options))
    fast = rs.grid_search(prob, X, y, grid, cv=3, solver="robust-dcd",
                          solver_options={"tol": 1e-7, "max_iter": 20000, "random_state": 0},
                          progress=False)
    ref = rs.grid_search(prob, X, y, grid, cv=3, solver="clarabel", progress=False)
    assert np.all(fast.statuses == "optimal")
    # the first point of each fold starts cold, every later one from the previous point's dual solution
    assert sum(seen) == len(seen) - 3
    assert np.allclose(fast.weights, ref.weights, atol=1e-4)
    assert fast.best_index == ref.best_index


def test_estimator_auto_solver_choice(wdbc_small):
    """"auto": the cost model's choice among the backends that accept the model (feature-ipm, robust-dcd, dcd,
    Clarabel), certified; the 1-ball goes to a backend that takes it; options meant for another backend are left
    out."""
    X, y = wdbc_small
    opts = {"tol": 1e-8, "warm_start": True, "check_every": 1}
    for V, data in ((rs.Ball(0.1), X), (rs.Ball(0.1, p=1), X), (rs.Box(0.01), np.hstack([X] * 5))):
        est = rs.RobustSVC(uncertainty=V, solver="auto", solver_options=opts).fit(data, y)
        problem = rs.Problem(penalty=rs.L2(est.l2), uncertainty=V)
        chosen = solve_path.choose_backend(problem, data)
        assert est.solution_.solver == chosen and est.solution_.status == "optimal"
        assert rs.backends.get_backend(chosen).accepts(problem)
        ref = rs.RobustSVC(uncertainty=V).fit(data, y)
        assert ref.solution_.solver == "clarabel"
        assert abs(est.solution_.objective - ref.solution_.objective) <= est.solution_.gap + ref.solution_.gap + 1e-6
    assert solve_path.choose_backend(rs.Problem(penalty=rs.L2(0.1), uncertainty=rs.Ball(0.1, p=1)), X) != "feature-ipm"


def test_estimator_warm_refits(wdbc_small):
    X, y = wdbc_small
    est = rs.RobustSVC(uncertainty=rs.Ball(0.1), solver="robust-dcd",
                       solver_options={"tol": 1e-8, "warm_start": True, "check_every": 1, "random_state": 0})
    est.fit(X, y)
    est.set_params(uncertainty=rs.Ball(0.11)).fit(X, y)
    cold = rs.RobustSVC(uncertainty=rs.Ball(0.11), solver="robust-dcd",
                        solver_options={"tol": 1e-8, "check_every": 1, "random_state": 0}).fit(X, y)
    # the refit starts from the previous dual point: its first certificate is already far tighter
    assert est.solution_.history["rel_gap"][0] < 0.1 * cold.solution_.history["rel_gap"][0]
    ref = rs.RobustSVC(uncertainty=rs.Ball(0.11)).fit(X, y)
    assert ref.solution_.solver == "clarabel"
    assert abs(est.solution_.objective - ref.solution_.objective) <= 1e-6
    poly = rs.RobustSVC(uncertainty=rs.Ball(0.1, p=3), solver="auto").fit(X[:60], y[:60])
    assert poly.solution_.solver == "clarabel"


@pytest.mark.parametrize("width", [1, 5])  # 30 features: feature-ipm first; 150: robust-dcd first
def test_estimator_auto_falls_back_to_clarabel_when_the_first_backend_stops_short(wdbc_small, width, monkeypatch):
    """A tiny λ2 on nearly separable data and 5 iterations: the first backend cannot certify, "auto" hands over
    to the next backend of ``cost.fallback_order`` (feature-ipm after robust-dcd; Clarabel after feature-ipm, as
    robust-dcd is predicted to stop short there) (the first backend is set here)."""
    X, y = wdbc_small
    X = np.hstack([X] * width)
    kwargs = dict(loss=rs.Hinge(reduction="sum"), l2=2.0**-10, uncertainty=rs.Box(1e-3))
    forced = "feature-ipm" if width == 1 else "robust-dcd"
    with monkeypatch.context() as patch:
        patch.setattr(solve_path, "choose_backend", lambda problem, data: forced)
        with warnings.catch_warnings():
            warnings.simplefilter("error", ConvergenceWarning)  # the stopped attempt is not reported as a warning
            est = rs.RobustSVC(**kwargs, solver="auto", solver_options={"max_iter": 5}).fit(X, y)
        # an attempt that certifies is kept as it is
        easy = rs.RobustSVC(uncertainty=rs.Box(1e-3), solver="auto").fit(X, y)
    problem = rs.Problem(loss=kwargs["loss"], penalty=rs.L2(kwargs["l2"]), uncertainty=kwargs["uncertainty"])
    order = cost.fallback_order(solve_path.auto_predictions(problem, X), (forced,))
    assert order[-1] == "clarabel" and forced not in order
    assert est.solution_.solver == order[0] and est.solution_.status == "optimal"
    first = est.solution_.auto_fallback
    assert first.solver == forced
    assert first.status == "max_iter" and first.iterations == 5
    assert first.rel_gap > 1e-4
    ref = rs.RobustSVC(**kwargs, solver="clarabel").fit(X, y)
    assert abs(est.solution_.objective - ref.solution_.objective) <= 1e-7 * max(1.0, abs(ref.solution_.objective))
    assert easy.solution_.solver == forced and easy.solution_.auto_fallback is None


@pytest.mark.parametrize(
    ("squared", "radius", "penalty", "intercept"),
    [
        (False, "per-sample", "l2", True),  # no L1, no signs: the plain step
        (True, "per-sample", "l2+l1", True),
        (False, 0.3, "l2+l1", False),
        (False, 50.0, "l2", True),  # a radius so large that w = 0 (the shrink factor is 0)
    ],
    ids=["hinge-radii", "sqhinge-radii-l1", "no-intercept", "w-zero"],
)
def test_sparse_ball2_steps_touch_only_the_row(wdbc_small, squared, radius, penalty, intercept):
    """The 2-ball's sparse epoch keeps only z and ‖z‖² per step: it must reach Clarabel's optimum like the dense one."""
    X, y = wdbc_small
    n, d = X.shape
    Xs = X.copy()
    Xs[np.abs(Xs) < 0.8] = 0.0
    Xs = sp.csr_matrix(Xs)
    if radius == "per-sample":
        radius = np.random.default_rng(7).uniform(0.0, 0.4, size=n)
        radius[:15] = 0.0
    pen = rs.L2(0.05) + rs.L1(0.003) if penalty == "l2+l1" else rs.L2(0.05)
    loss = rs.SquaredHinge() if squared else rs.Hinge()
    signs = _signs(d) if penalty == "l2+l1" else None
    prob = rs.Problem(loss=loss, penalty=pen, uncertainty=rs.Ball(1.0), signs=signs, intercept=intercept)
    sol = prob.solve(Xs, y, solver="robust-dcd", tol=1e-7, max_iter=20000, random_state=1, radius=radius)
    ref = certified_reference(prob, Xs, y, radius=radius)  # the package's Clarabel (then SCS), certified
    acc = SLACK * ref.scale()
    assert sol.status == "optimal"
    assert 0.0 <= sol.objective - ref.bound + acc and sol.objective - ref.objective + acc <= sol.gap + 2 * acc
    if signs is not None:
        assert np.all(sol.w * signs >= 0.0)
    if radius is not None and np.isscalar(radius) and radius > 10:
        assert np.all(sol.w == 0.0)

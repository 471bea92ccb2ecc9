"""Bounds and linear constraints on the weights: resolution, the box conjugate, solves against CVXPY models
written here, refusals, and the certificate (never below the true excess)."""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pandas as pd
import pytest
from scipy.optimize import Bounds, LinearConstraint

import robustsvm as rs
from robustsvm.backends.registry import capable_backends, get_backend
from robustsvm.certificates.duality import box_maximizer, certify, penalty_conjugate
from robustsvm.exceptions import SolverError, UnsupportedModelError
from robustsvm.priors.constraints import resolve_bounds, resolve_constraints
from robustsvm.result import Result

NAMES = np.array(["a", "b", "c", "d"], dtype=object)


# ------------------------------------------------------------------ resolution
@pytest.mark.parametrize("spec", [
    {"b": (0, 0.5), "d": (None, 1.0)},
    {1: (0, 0.5), -1: (-np.inf, 1.0)},
    pd.Series({"b": (0, 0.5), "d": (None, 1.0)}),
    pd.DataFrame({"lower": [0.0, -np.inf], "upper": [0.5, 1.0]}, index=["b", "d"]),
    Bounds([-np.inf, 0, -np.inf, -np.inf], [np.inf, 0.5, np.inf, 1.0]),
    ([-np.inf, 0, -np.inf, -np.inf], [np.inf, 0.5, np.inf, 1.0]),
    np.array([[-np.inf, np.inf], [0, 0.5], [-np.inf, np.inf], [-np.inf, 1.0]]),
])
def test_every_form_resolves_to_the_same_box(spec):
    lower, upper = resolve_bounds(spec, 4, NAMES)
    np.testing.assert_array_equal(lower, [-np.inf, 0, -np.inf, -np.inf])
    np.testing.assert_array_equal(upper, [np.inf, 0.5, np.inf, 1.0])


@pytest.mark.parametrize("spec, match", [
    ({"c": (1.0, 0.5)}, r"feature 2 \('c'\)"),
    ({"c": (np.inf, np.inf)}, r"feature 2 \('c'\)"),
    ({"zz": (0, 1)}, "unknown feature 'zz'"),
    ({"a": (0, 1), 0: (0, 2)}, "twice"),
    (Bounds([0, 0, 0, 0], [1, 1, -1, 1]), r"feature 2 \('c'\)"),
    (([0.0] * 3, [1.0] * 3), "length 4"),
    ({"a": (np.nan, 1)}, r"bounds\['a'\] contains NaN"),
])
def test_bad_bounds_name_the_feature(spec, match):
    with pytest.raises(ValueError, match=match):
        resolve_bounds(spec, 4, NAMES)


def test_bounds_of_the_wrong_type_are_a_type_error():
    with pytest.raises(TypeError, match=r"bounds\['a'\] must be a pair"):
        resolve_bounds({"a": "big"}, 4, NAMES)
    with pytest.raises(TypeError, match="bounds must be"):
        rs.Problem(bounds="wide")


def _data(n=60, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X @ np.array([1.0, -1.0, 0.5, 0.2]) + 0.3 * rng.normal(size=n) > 0, "yes", "no")
    return pd.DataFrame(X, columns=list(NAMES)), y


def test_bounds_meeting_signs_intersect_and_contradictions_name_the_feature():
    X, y = _data()
    prob = rs.Problem(penalty=rs.L2(0.1), signs={"a": -1}, bounds={"a": (-0.5, 2.0), "b": (0.1, 0.4)},
                      positive_class="yes")
    f = prob.normalize(X, y).feasible
    np.testing.assert_array_equal(f.lower, [-0.5, 0.1, -np.inf, -np.inf])
    np.testing.assert_array_equal(f.upper, [0.0, 0.4, np.inf, np.inf])
    bad = rs.Problem(penalty=rs.L2(0.1), signs={"a": -1}, bounds={"a": (0.2, 1.0)}, positive_class="yes")
    with pytest.raises(ValueError, match=r"feature 0 \('a'\).*signs"):
        bad.solve(X, y)


def test_bounds_flip_with_positive_class_like_signs():
    X, y = _data()  # classes ['no', 'yes']: 'yes' is classes[1]
    spec = {"b": (0.1, 0.4)}
    toward_yes = rs.Problem(penalty=rs.L2(0.1), bounds=spec, positive_class="yes").normalize(X, y).feasible
    toward_no = rs.Problem(penalty=rs.L2(0.1), bounds=spec, positive_class="no").normalize(X, y).feasible
    assert (toward_yes.lower[1], toward_yes.upper[1]) == (0.1, 0.4)
    assert (toward_no.lower[1], toward_no.upper[1]) == (-0.4, -0.1)
    sol = rs.Problem(penalty=rs.L2(0.1), bounds=spec, positive_class="no").solve(X, y)
    # the weight towards 'no' is −w (w is oriented to classes[1] = 'yes'), and it lies in [0.1, 0.4]
    assert 0.1 - 1e-12 <= -sol.w[1] <= 0.4 + 1e-12


def test_ordered_and_linear_constraints_resolve_by_name():
    lin = resolve_constraints([rs.ordered(["c", "a", "d"]), LinearConstraint([[1, 1, 0, 0]], 1.0, 1.0)], 4, NAMES)
    np.testing.assert_array_equal(lin.A, [[-1, 0, 1, 0], [1, 0, 0, -1], [1, 1, 0, 0]])
    np.testing.assert_array_equal(lin.lb, [-np.inf, -np.inf, 1.0])
    np.testing.assert_array_equal(lin.ub, [0.0, 0.0, 1.0])
    with pytest.raises(ValueError, match="3 columns"):
        resolve_constraints([LinearConstraint(np.ones((1, 3)), 0, 1)], 4, NAMES)
    with pytest.raises(ValueError, match=r"row 0 has lb 2 > ub 1"):
        resolve_constraints([LinearConstraint(np.ones((1, 4)), 2, 1)], 4, NAMES)
    with pytest.raises(TypeError, match="LinearConstraint"):
        resolve_constraints([np.ones(4)], 4, NAMES)
    with pytest.raises(ValueError, match="unknown feature 'zz'"):
        resolve_constraints([rs.ordered(["a", "zz"])], 4, NAMES)


# ------------------------------------------------------------- the box conjugate
@pytest.mark.parametrize("l2, l1", [(0.3, 0.5), (1.0, 0.0), (0.0, 0.7)])
def test_box_conjugate_is_the_clipped_soft_threshold(l2, l1):
    rng = np.random.default_rng(1)
    lower = np.array([-np.inf, 0.0, 0.2, -1.0, -2.0, -0.3])
    upper = np.array([np.inf, np.inf, 0.5, -0.5, 0.1, 0.3])
    if l2 == 0:  # a bounded box: the conjugate is finite
        lower, upper = np.clip(lower, -3, 3), np.clip(upper, -3, 3)
    for _ in range(4):
        s = 2.0 * rng.normal(size=6)
        w = cp.Variable(6)
        obj = s @ w - l1 * cp.norm1(w) - 0.5 * l2 * cp.sum_squares(w)
        fin_lo, fin_up = np.isfinite(lower), np.isfinite(upper)
        cp.Problem(cp.Maximize(obj), [w[fin_lo] >= lower[fin_lo], w[fin_up] <= upper[fin_up]]).solve(
            solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12)
        value = penalty_conjugate(s, l2, l1, None, lower=lower, upper=upper)
        assert value == pytest.approx(obj.value, abs=1e-7)
        t = np.sign(s) * np.maximum(np.abs(s) - l1, 0)
        if l2 > 0:
            np.testing.assert_allclose(box_maximizer(t, l2, lower, upper), w.value, atol=1e-6)
    # with the signs' box it is the signs' formula
    s = rng.normal(size=6)
    signs = np.array([1, -1, 0, 1, 0, -1])
    box = (np.where(signs > 0, 0.0, -np.inf), np.where(signs < 0, 0.0, np.inf))
    assert penalty_conjugate(s, 0.4, 0.1, signs) == pytest.approx(
        penalty_conjugate(s, 0.4, 0.1, None, lower=box[0], upper=box[1]), rel=1e-12)
    # an infinite side the slope points to: +inf
    assert penalty_conjugate(np.array([2.0]), 0.0, 1.0, None, lower=np.array([0.0]),
                             upper=np.array([np.inf])) == np.inf


# --------------------------------------------------- bounds reducing to signs
_SIGN_MODELS = {"nominal": {}, "box": {"uncertainty": rs.Box(radius=0.05)}, "ball": {"uncertainty": rs.Ball(0.05)}}


@pytest.fixture(scope="module")
def dask_client():
    """One local Dask cluster for the module (the distributed backends need a client)."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        yield client


@pytest.mark.parametrize("kind", sorted(_SIGN_MODELS))
def test_bounds_that_are_signs_give_the_signs_solution(kind, dask_client):
    """Every backend that solves the signs' model: bounds that are signs are the signs' model (the same arrays),
    hence the same answer."""
    X, y = _data()
    extra = _SIGN_MODELS[kind]
    signs = rs.Problem(penalty=rs.L2(0.1), signs={"a": 1, "b": -1}, positive_class="yes", **extra)
    bounds = rs.Problem(penalty=rs.L2(0.1), bounds={"a": (0, None), "b": (-np.inf, 0), "c": (None, None)},
                        positive_class="yes", **extra)
    assert not bounds.has_bounds and bounds.has_signs
    m1, m2 = signs.normalize(X, y), bounds.normalize(X, y)
    np.testing.assert_array_equal(m1.signs, m2.signs)
    assert not m2.has_bounds and not m2.has_constraints  # the box is the signs': the sign path of every backend
    able = capable_backends(signs)
    assert able == capable_backends(bounds) and len(able) >= 3
    for solver in able:
        extra_opts = {"client": dask_client} if "client" in get_backend(solver).options else {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s1 = signs.solve(X, y, solver=solver, random_state=0, **extra_opts)
            s2 = bounds.solve(X, y, solver=solver, random_state=0, **extra_opts)
        # the same model: two runs agree to rounding (BLAS reductions may differ between runs), and both
        # certified points lie within √(2 gap/λ2) of the one optimum (λ2-strong convexity)
        reach = np.sqrt(2 * s1.gap / 0.1) + np.sqrt(2 * s2.gap / 0.1)
        assert np.linalg.norm(s1.w - s2.w) <= reach + 1e-12 * max(1.0, np.linalg.norm(s1.w)), solver
        assert abs(s1.objective - s2.objective) <= s1.gap + s2.gap + 1e-12, solver
        assert s2.w[0] >= 0 and s2.w[1] <= 0, solver


@pytest.mark.parametrize("solver, unc", [("dcd", None), ("robust-dcd", None), ("robust-dcd", rs.Box(radius=0.05)),
                                         ("robust-dcd", rs.Ball(radius=0.05, p=np.inf))])
def test_bounds_path_agrees_with_the_signs_path(solver, unc):
    """Bounds with an inactive finite side take the clipped (box) path; the signs' model takes the sign path:
    both certified, their points within the distance strong convexity allows, ‖w − w*‖ ≤ √(2 gap/λ2)."""
    X, y = _data(n=120)
    lam = 0.1
    signs = rs.Problem(penalty=rs.L2(lam), signs={"a": 1, "b": -1}, uncertainty=unc, positive_class="yes")
    bounds = rs.Problem(penalty=rs.L2(lam), bounds={"a": (0, 1e6), "b": (-1e6, 0)}, uncertainty=unc,
                        positive_class="yes")
    assert bounds.has_bounds and not signs.has_bounds
    s1 = signs.solve(X, y, solver=solver, tol=1e-9, random_state=0)
    s2 = bounds.solve(X, y, solver=solver, tol=1e-9, random_state=0)
    assert s1.status == s2.status == "optimal"
    assert abs(s1.objective - s2.objective) <= s1.gap + s2.gap + 1e-14
    reach = np.sqrt(2 * s1.gap / lam) + np.sqrt(2 * s2.gap / lam)
    assert np.linalg.norm(s1.w - s2.w) <= reach + 1e-12


# ----------------------------------------------- real data against CVXPY models
def _standardized(name):
    data = rs.datasets.load(name)
    X = np.asarray(data.X, dtype=np.float64)
    X = (X - X.mean(0)) / X.std(0)
    return X, np.asarray(data.y), list(data.feature_names)


def _cases():
    wdbc = dict(bounds={"mean radius": (0, 0.3), "worst texture": (0.05, None), 2: (-0.2, 0.2)},
                constraints=[rs.ordered(["mean area", "worst area"]),
                             LinearConstraint(np.r_[np.ones(10), np.zeros(20)][None, :], 0.2, 0.2)])
    pima = dict(bounds={"Plas": (0.2, 0.5), "Age": (None, 0.1), 0: (-0.1, 0.1)},
                constraints=[rs.ordered(["Preg", "Mass", "Pedi"]), LinearConstraint(np.ones((1, 8)), 1.0, 1.0)],
                uncertainty=rs.Box(radius=0.05))
    sonar = dict(bounds=Bounds(-0.3, 0.3),
                 constraints=[rs.ordered([f"Band{i}" for i in range(1, 6)]),
                              LinearConstraint(np.ones((1, 60)), -1.0, 1.0)])
    return {"wdbc": wdbc, "pima": pima, "sonar": sonar}


def _cvxpy_reference(prob, X, y, names):
    """The model written out in CVXPY (hinge, L2, free intercept, Box uncertainty when given), solved tight,
    with the package's certificate of its point (margin and constraint multipliers from this model)."""
    model = prob.normalize(X, y, feature_names=names)
    f, lin = model.feasible, model.feasible.linear
    n, d = X.shape
    ypm = np.where(y == np.unique(y)[1], 1.0, -1.0)
    w, b, xi = cp.Variable(d), cp.Variable(), cp.Variable(n, nonneg=True)
    margin = cp.multiply(ypm, X @ w + b)
    if prob.uncertainty is not None:  # σ of the unit box (and ∞-ball) is the 1-norm, of the 2-ball the 2-norm
        two = isinstance(prob.uncertainty, rs.Ball) and prob.uncertainty.p == 2
        margin = margin - prob.uncertainty.radius * (cp.norm(w, 2) if two else cp.norm1(w))
    margins = xi >= 1 - margin
    cons = [margins]
    lo, up = np.isfinite(f.lower), np.isfinite(f.upper)
    cons += [w[lo] >= f.lower[lo], w[up] <= f.upper[up]]
    rows = {}
    if lin is not None:
        eq = lin.lb == lin.ub
        up_rows, lo_rows = ~eq & np.isfinite(lin.ub), ~eq & np.isfinite(lin.lb)
        rows = {"eq": (eq, lin.A[eq] @ w == lin.ub[eq]),
                "up": (up_rows, lin.A[up_rows] @ w <= lin.ub[up_rows]),
                "lo": (lo_rows, lin.A[lo_rows] @ w >= lin.lb[lo_rows])}
    cons += [c for mask, c in rows.values() if mask.any()]
    objective = 0.5 * prob.penalty.l2 * cp.sum_squares(w) + prob.penalty.l1 * cp.norm1(w) + cp.sum(xi) / n
    cp.Problem(cp.Minimize(objective), cons).solve(solver="CLARABEL", tol_gap_abs=1e-11, tol_gap_rel=1e-11,
                                                   tol_feas=1e-11)
    nu = np.zeros(0 if lin is None else lin.k)
    for kind, (mask, c) in rows.items():
        if mask.any():
            nu[mask] = -c.dual_value if kind == "lo" else c.dual_value
    cert = certify(model, Result(w=w.value, b=float(b.value), status="optimal", multipliers=margins.dual_value,
                                 constraint_multipliers=None if lin is None else nu))
    return model, cert, nu, float(objective.value)


@pytest.mark.parametrize("name", ["wdbc", "pima", "sonar"])
def test_bounds_and_constraints_against_a_cvxpy_model(name):
    X, y, names = _standardized(name)
    prob = rs.Problem(penalty=rs.L2(0.05), **_cases()[name])
    assert prob.has_bounds and prob.has_constraints
    model, ref, nu, own = _cvxpy_reference(prob, X, y, names)
    scale = max(1.0, abs(ref.objective))
    # the reference is tight by its own certificate, and the test's model agrees with the package's objective
    assert ref.gap <= 1e-7 * scale, ref.message
    assert own == pytest.approx(ref.objective, rel=1e-7)
    lin = model.feasible.linear
    ref_violation = model.feasible.violation(ref.w)
    # an infeasible point may lie below the optimum by at most ‖ν‖₁·violation (the relaxed problem's dual)
    slack = np.abs(nu).sum() * ref_violation + 1e-12 * scale
    able = capable_backends(prob)
    assert {"clarabel", "scs"} <= set(able)
    options = {"scs": {"solver_options": {"eps_abs": 1e-9, "eps_rel": 1e-9, "max_iters": 200000}},
               "clarabel": {"tol": 1e-10}}
    for solver in able:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                sol = prob.solve(X, y, solver=solver, feature_names=names, **options.get(solver, {}))
            except SolverError:
                # a QP solver failing says so (HiGHS on sonar's QP); the conic ones must answer
                assert solver in ("highs", "osqp"), solver
                continue
        violation = model.feasible.violation(sol.w)
        # never below the optimum by more than the reference's own slack, never above it by more than the gap
        assert sol.objective >= ref.dual_value - slack - np.abs(nu).sum() * violation, solver
        assert sol.objective - ref.objective <= sol.gap + slack, (solver, sol.status, sol.gap)
        assert sol.objective - sol.gap <= ref.objective + slack, solver
        assert sol.violation == pytest.approx(violation, abs=1e-15)
        if sol.status == "optimal":
            assert violation <= 1e-9 * max(1.0, np.abs(lin.A).max() * np.abs(sol.w).sum()), solver
            assert model.feasible.box_violation(sol.w) == 0.0  # bounds are met exactly (the certifier clips)
    sol = prob.solve(X, y, feature_names=names, tol=1e-10)
    assert sol.status == "optimal" and sol.gap <= 1e-6 * scale
    assert model.feasible.violation(sol.w) <= 1e-9


@pytest.mark.parametrize("name", ["wdbc", "pima", "sonar"])
@pytest.mark.parametrize("loss", [rs.Hinge(), rs.SquaredHinge()])
def test_dcd_solves_bounds_against_a_cvxpy_model(name, loss):
    """dcd clips w to [l, u] after its step (a sign is the bound 0); its gap is checked against the reference."""
    import scipy.sparse as sp

    X, y, names = _standardized(name)
    bounds = _cases()[name]["bounds"]
    prob = rs.Problem(loss=loss, penalty=rs.L2(0.05), bounds=bounds)
    assert "dcd" in capable_backends(prob) and prob.has_bounds
    if isinstance(loss, rs.Hinge):
        model, ref, _, _ = _cvxpy_reference(prob, X, y, names)
        assert ref.gap <= 1e-7 * max(1.0, abs(ref.objective)), ref.message
    else:  # the squared hinge: the package's conic path as the reference, its certificate checked
        model = prob.normalize(X, y, feature_names=names)
        found = prob.solve(X, y, feature_names=names, tol=1e-10)
        ref = certify(model, Result(w=found.w, b=found.b, status="optimal"))
        assert ref.gap <= 1e-7 * max(1.0, abs(ref.objective))
    for data in (X, sp.csr_matrix(X)):
        sol = prob.solve(data, y, solver="dcd", feature_names=names, tol=1e-8, random_state=0)
        assert sol.status == "optimal", sol.message
        assert model.feasible.box_violation(sol.w) == 0.0
        assert sol.objective - ref.objective <= sol.gap + 1e-12
        assert sol.objective - sol.gap <= ref.objective + 1e-12
        assert sol.objective >= ref.dual_value - 1e-12


@pytest.mark.parametrize("name", ["wdbc", "pima", "sonar"])
@pytest.mark.parametrize("unc, l1", [(rs.Box(radius=0.05), 0.0), (rs.Ball(radius=0.03, p=np.inf), 0.01),
                                     (rs.Ball(radius=0.1, p=2), 0.0), (rs.Ball(radius=0.05, p=2), 0.01)])
def test_robust_dcd_solves_bounds_against_a_cvxpy_model(name, unc, l1):
    """robust-dcd with a Box set (the separable prox clip(soft(v, λ1 + Aδ)/λ2, l, u)) and the 2-ball
    (clip(s z, l, u) at the root s): bounds excluding 0 with a free intercept (pima's Plas, wdbc's worst texture),
    infinite sides, L1; dense and CSR rows."""
    import scipy.sparse as sp

    X, y, names = _standardized(name)
    prob = rs.Problem(penalty=rs.L2(0.05) + rs.L1(l1), bounds=_cases()[name]["bounds"], uncertainty=unc)
    assert "robust-dcd" in capable_backends(prob) and prob.has_bounds
    model, ref, _, own = _cvxpy_reference(prob, X, y, names)
    assert ref.gap <= 1e-7 * max(1.0, abs(ref.objective)), ref.message
    assert own == pytest.approx(ref.objective, rel=1e-7)  # the test's CVXPY model is the package's objective
    for data in (X, sp.csr_matrix(X)):
        sol = prob.solve(data, y, solver="robust-dcd", feature_names=names, tol=1e-8, random_state=0, max_iter=20000)
        assert sol.status == "optimal", sol.message
        assert model.feasible.box_violation(sol.w) == 0.0
        assert sol.objective - ref.objective <= sol.gap + 1e-12
        assert sol.objective - sol.gap <= ref.objective + 1e-12
        assert sol.objective >= ref.dual_value - 1e-12


def test_robust_dcd_bounds_flip_with_the_positive_class():
    """positive_class = classes[0]: [l, u] bounds the weight towards it, −w; the answer is the conic one."""
    X, y, names = _standardized("pima")
    classes = np.unique(y)
    spec = {"Plas": (0.2, 0.5), "Age": (None, 0.1), "Pedi": (-0.05, 0.05)}
    prob = rs.Problem(penalty=rs.L2(0.05), bounds=spec, uncertainty=rs.Box(radius=0.05), positive_class=classes[0])
    sol = prob.solve(X, y, solver="robust-dcd", feature_names=names, tol=1e-9)
    ref = prob.solve(X, y, solver="clarabel", feature_names=names, tol=1e-10)
    assert sol.status == "optimal"
    toward = -sol.w  # sol.w points to classes[1]
    k = {n: i for i, n in enumerate(names)}
    assert 0.2 <= toward[k["Plas"]] <= 0.5 and toward[k["Age"]] <= 0.1 and -0.05 <= toward[k["Pedi"]] <= 0.05
    assert abs(sol.objective - ref.objective) <= sol.gap + ref.gap + 1e-12
    assert np.linalg.norm(sol.w - ref.w) <= np.sqrt(2 * sol.gap / 0.05) + np.sqrt(2 * ref.gap / 0.05) + 1e-9


@pytest.mark.parametrize("solver", ["feature-ipm", "frank-wolfe", "pegasos", "m3", "pq"])
def test_backends_without_bounds_refuse_naming_the_reason(solver):
    X, y = _data()
    prob = rs.Problem(penalty=rs.L2(0.1), bounds={"a": (0, 0.5)}, uncertainty=rs.Box(radius=0.01), positive_class="yes")
    with pytest.raises(UnsupportedModelError, match="takes no bounds on the weights beyond signs") as info:
        prob.solve(X, y, solver=solver)
    if solver == "feature-ipm":  # the reason names who solves them
        assert "robust-dcd" in str(info.value) and "conic" in str(info.value)


@pytest.mark.parametrize("unc", [rs.Ball(radius=0.05, p=1),
                                 rs.Ellipsoid(radius=0.05, shape=np.diag([1.0, 2.0, 0.5, 1.0]))])
def test_robust_dcd_refuses_bounds_where_the_prox_has_no_exact_form(unc):
    X, y = _data()
    prob = rs.Problem(penalty=rs.L2(0.1), bounds={"a": (0.1, 0.5)}, uncertainty=unc, positive_class="yes")
    with pytest.raises(UnsupportedModelError, match=r"Box or Ball\(p=2, ∞\) set only.*clarabel, scs"):
        prob.solve(X, y, solver="robust-dcd")
    assert "robust-dcd" not in capable_backends(prob)
    # signs (a cone) stay exact with every set
    signs = rs.Problem(penalty=rs.L2(0.1), bounds={"a": (0, None)}, uncertainty=unc, positive_class="yes")
    assert "robust-dcd" in capable_backends(signs)


@pytest.mark.parametrize("solver", ["dcd", "robust-dcd", "feature-ipm", "frank-wolfe", "pegasos", "m3", "pq"])
def test_backends_without_constraints_refuse_naming_the_reason(solver):
    X, y = _data()
    prob = rs.Problem(penalty=rs.L2(0.1), constraints=[rs.ordered(["a", "b"])])
    with pytest.raises(UnsupportedModelError, match="takes no linear constraints on the weights"):
        prob.solve(X, y, solver=solver)


# ------------------------------------------------------------ the certificate
@pytest.mark.parametrize("name", ["pima", "sonar"])
def test_gap_is_never_below_the_true_excess(name):
    X, y, names = _standardized(name)
    prob = rs.Problem(penalty=rs.L2(0.05), **_cases()[name])
    model, ref, nu, _ = _cvxpy_reference(prob, X, y, names)
    assert ref.gap <= 1e-7 * max(1.0, abs(ref.objective))
    # another feasible point: the optimum of a stronger penalty under the same constraints
    other = rs.Problem(penalty=rs.L2(0.5), **_cases()[name]).solve(X, y, feature_names=names, tol=1e-10)
    rng = np.random.default_rng(3)
    slack = np.abs(nu).sum() * model.feasible.violation(ref.w) + 1e-10
    for t in (1e-4, 1e-2, 0.1, 0.5, 1.0):
        w = (1 - t) * ref.w + t * other.w  # feasible: a convex combination of feasible points
        b = ref.b + 0.1 * t * rng.normal()
        for mult in (None, nu):
            cert = certify(model, Result(w=w, b=b, status="optimal", constraint_multipliers=mult))
            excess_at_least = cert.objective - ref.objective
            assert cert.gap >= excess_at_least - slack, (t, cert.gap, excess_at_least)
            assert cert.dual_value <= ref.objective + slack
    # a point outside the constraints is not called optimal
    w_bad = ref.w + 1e-4 * model.feasible.linear.A[0]
    cert = certify(model, Result(w=model.feasible.clip(w_bad), b=ref.b, status="optimal", constraint_multipliers=nu))
    if model.feasible.linear.violation(model.feasible.clip(w_bad)) > 1e-8:
        assert cert.status == "inaccurate" and "violates the constraints" in cert.message


def test_public_certify_with_bounds_is_a_valid_bound():
    X, y, names = _standardized("pima")
    prob = rs.Problem(penalty=rs.L2(0.05), bounds=_cases()["pima"]["bounds"])
    model, ref, _, _ = _cvxpy_reference(rs.Problem(penalty=rs.L2(0.05), bounds=_cases()["pima"]["bounds"],
                                                   constraints=[LinearConstraint(np.zeros((1, 8)), -1, 1)]),
                                        X, y, names)
    other = rs.Problem(penalty=rs.L2(1.0)).solve(X, y).w
    pc = prob.certify(X, y, 0.5 * (ref.w + model.feasible.clip(other)), ref.b, feature_names=names)
    assert pc.objective - (pc.objective - pc.gap) >= 0
    assert pc.objective - pc.gap <= ref.objective + 1e-9


@pytest.mark.parametrize("bounds", [{"b": (0.1, 0.5), "d": (None, 1.0)}, Bounds(-1, 1), ([-1.0, 0, -1, -1], 2.0)])
def test_bounds_and_constraints_survive_json(bounds):
    import json

    X, y = _data()
    prob = rs.Problem(penalty=rs.L2(0.1), bounds=bounds,
                      constraints=[rs.ordered(["a", "c"]), LinearConstraint([[1, 0, 0, 1]], -np.inf, 0.5)])
    back = rs.Problem.from_dict(json.loads(json.dumps(prob.to_dict(), allow_nan=False)))
    f1, f2 = prob.normalize(X, y).feasible, back.normalize(X, y).feasible
    np.testing.assert_array_equal(f1.lower, f2.lower)
    np.testing.assert_array_equal(f1.upper, f2.upper)
    np.testing.assert_array_equal(f1.linear.A, f2.linear.A)
    np.testing.assert_array_equal(f1.linear.ub, f2.linear.ub)
    np.testing.assert_array_equal(f1.linear.lb, f2.linear.lb)


def test_oriented_models_and_grid_search_keep_bounds_and_constraints():
    from robustsvm.model_selection import grid_search

    X, y = _data()
    prob = rs.Problem(penalty=rs.L2(0.1), bounds={"a": (0.1, 0.4)}, constraints=[rs.ordered(["b", "c"])],
                      positive_class="no")
    oriented = prob.oriented(prob.prepare(X, y))  # labels as ±1, the direction folded into the arrays
    f1, f2 = prob.normalize(X, y).feasible, oriented.normalize(X.to_numpy(), y).feasible
    np.testing.assert_array_equal(f1.lower, [-0.4, -np.inf, -np.inf, -np.inf])
    np.testing.assert_array_equal(f2.lower, f1.lower)
    np.testing.assert_array_equal(f2.upper, f1.upper)
    np.testing.assert_array_equal(f2.linear.A, f1.linear.A)
    result = grid_search(prob, X, y, {"l2": [0.1, 1.0]}, cv=3, solver="clarabel")
    # at the default tolerance Clarabel's points meet the rows to its feasibility (1e-8): certified optimal
    assert np.all(np.asarray(result.statuses) == "optimal"), result.statuses
    for w in np.asarray(result.weights).reshape(-1, 4):  # every fold's weights meet the oriented constraints
        assert -0.4 - 1e-9 <= w[0] <= -0.1 + 1e-9
        assert -w[1] <= -w[2] + 1e-8  # towards 'no': w_b ≤ w_c on −w


def test_bounds_without_positive_class_say_which_class_they_point_to():
    X, y = _data()  # labels 'no' / 'yes'
    with pytest.warns(rs.exceptions.SignDirectionWarning, match="bounds or linear constraints.*'yes'"):
        rs.Problem(penalty=rs.L2(0.1), bounds={"a": (0.1, 0.4)}).solve(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", rs.exceptions.SignDirectionWarning)
        rs.Problem(penalty=rs.L2(0.1), bounds={"a": (0.1, 0.4)}, positive_class="yes").solve(X, y)


# ------------------------------------------------ the prox of a set plus bounds
def _cvxpy_prox(z, tau, lower, upper, kind):
    """``argmin_{l ≤ w ≤ u} ½‖w − z‖² + τ σ(w)`` with σ the 1-norm (Box) or the 2-norm (2-ball), by CVXPY."""
    w = cp.Variable(z.size)
    sigma = cp.norm1(w) if kind == "box" else cp.norm(w, 2)
    cp.Problem(cp.Minimize(0.5 * cp.sum_squares(w - z) + tau * sigma), [w >= lower, w <= upper]).solve(
        solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    return w.value


def test_the_bounded_prox_is_a_clip_for_the_box_and_not_for_the_ball():
    """docs/derivations/robust_dcd.md, "Bounds": with a Box set the prox is clip(soft(z, τ), l, u) for every box;
    with the 2-ball neither order of clip and shrink is the prox of a box that is not a cone, but
    clip(s·z, l, u) is, for the scalar s ∈ (0, 1] solving ‖clip(s z, l, u)‖(1 − s) = τ s (what robust-dcd does)."""
    from scipy.optimize import brentq

    rng = np.random.default_rng(5)
    lower = np.array([-0.5, 0.2, -np.inf, -1.0, -0.1, 0.0])
    upper = np.array([0.4, 1.0, -0.3, np.inf, 0.1, np.inf])
    shrink = 0
    for _ in range(5):
        z, tau = 2.0 * rng.normal(size=6), 0.3 + rng.uniform()
        exact = _cvxpy_prox(z, tau, lower, upper, "box")
        np.testing.assert_allclose(np.clip(np.sign(z) * np.maximum(np.abs(z) - tau, 0), lower, upper), exact,
                                   atol=1e-7)
        exact = _cvxpy_prox(z, tau, lower, upper, "ball")
        s = brentq(_ball_equation, 1e-12, 1.0, args=(z, tau, lower, upper))
        np.testing.assert_allclose(np.clip(s * z, lower, upper), exact, atol=1e-6)
        wrong = max(np.abs(np.clip(_ball_shrink(z, tau), lower, upper) - exact).max(),
                    np.abs(_ball_shrink(np.clip(z, lower, upper), tau) - exact).max())
        shrink += wrong > 1e-3
    assert shrink >= 3  # the clip-and-shrink shortcuts are wrong in most draws
    # a cone (signs): shrink after the clip is exact
    cone_lo, cone_up = np.array([0.0, -np.inf, 0.0]), np.array([np.inf, 0.0, np.inf])
    z = np.array([1.0, 2.0, -0.5])
    exact = _cvxpy_prox(z, 0.4, cone_lo, cone_up, "ball")
    np.testing.assert_allclose(_ball_shrink(np.clip(z, cone_lo, cone_up), 0.4), exact, atol=1e-7)


def _ball_shrink(p, tau):
    """The 2-ball prox without bounds: ``max(0, 1 − τ/‖p‖) p``."""
    return max(0.0, 1 - tau / np.linalg.norm(p)) * p


def _ball_equation(s, z, tau, lower, upper):
    """``‖clip(s z, l, u)‖(1 − s) − τ s``, decreasing in s; its root gives the bounded 2-ball prox."""
    return np.linalg.norm(np.clip(s * z, lower, upper)) * (1 - s) - tau * s


# ------------------------------------------------------ estimator, CLI, files
def test_estimator_takes_bounds_and_constraints_as_parameters():
    from sklearn.base import clone

    data = rs.datasets.load("pima")
    X = pd.DataFrame((data.X - data.X.mean(0)) / data.X.std(0), columns=list(data.feature_names))
    spec = {"Plas": (0.2, 0.5), "Age": (None, 0.1)}
    cons = [rs.ordered(["Preg", "Mass", "Pedi"])]
    est = rs.RobustSVC(l2=0.05, bounds=spec, constraints=cons, positive_class=1)
    assert est.get_params()["bounds"] is spec and est.get_params()["constraints"] is cons
    twin = clone(est)
    assert twin.get_params()["bounds"] == spec
    est.fit(X, data.y)
    ref = rs.Problem(penalty=rs.L2(0.05), bounds=spec, constraints=cons, positive_class=1).solve(
        X, data.y, tol=1e-9)
    w = est.coef_[0]
    k = {n: i for i, n in enumerate(data.feature_names)}
    assert 0.2 <= w[k["Plas"]] <= 0.5 and w[k["Age"]] <= 0.1
    assert w[k["Preg"]] <= w[k["Mass"]] + 1e-9 and w[k["Mass"]] <= w[k["Pedi"]] + 1e-9
    assert abs(est.solution_.objective - ref.objective) <= est.solution_.gap + ref.gap + 1e-12
    est.set_params(bounds=None, constraints=None, solver="robust-dcd", uncertainty=rs.Box(radius=0.01))
    est.set_params(bounds={"Plas": (0.2, 0.5)})
    est.fit(X, data.y)
    assert est.solution_.status == "optimal" and 0.2 <= est.coef_[0, k["Plas"]] <= 0.5


def test_estimator_bounds_with_three_classes_apply_to_every_model():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(150, 3))
    y = np.argmax(X @ rng.normal(size=(3, 3)) + 0.2 * rng.normal(size=(150, 3)), axis=1)
    est = rs.RobustSVC(l2=0.1, bounds={0: (-0.2, 0.2)}).fit(X, y)
    assert est.coef_.shape == (3, 3) and np.all(np.abs(est.coef_[:, 0]) <= 0.2)
    per_class = rs.RobustSVC(l2=0.1, bounds=rs.PerClass({0: {0: (0.1, 0.3)}}, default=None)).fit(X, y)
    assert 0.1 <= per_class.coef_[0, 0] <= 0.3
    with pytest.raises(ValueError, match="bounds=PerClass"):
        rs.RobustSVC(bounds=rs.PerClass({0: {0: (0, 1)}})).fit(X, (y > 0).astype(int))


def test_cli_parses_bounds_and_names_the_feature_on_errors():
    import argparse

    from robustsvm.cli.main import parse_bounds

    assert parse_bounds("age=0:inf,dose=-1:1,3=:0.5, mean radius = -inf: ") == {
        "age": (0.0, np.inf), "dose": (-1.0, 1.0), 3: (-np.inf, 0.5), "mean radius": (-np.inf, np.inf)}
    for text, match in [("dose=1:-1", "no value for 'dose'"), ("dose=1", "FEATURE=LOWER:UPPER"),
                        ("dose=a:1", "bound for 'dose'.*not a number"), ("age=0:1,age=0:2", "'age' twice"),
                        ("", "empty")]:
        with pytest.raises(argparse.ArgumentTypeError, match=match):
            parse_bounds(text)


def test_cli_fit_with_bounds_meets_them_and_writes_them_to_the_file(tmp_path):
    import json
    import subprocess
    import sys

    out = tmp_path / "sol.json"
    cmd = [sys.executable, "-m", "robustsvm", "fit", "pima", "--bounds", "Plas=0.2:0.5,Age=:0.1,0=-0.1:0.1",
           "--positive", "1", "--solver", "dcd", "--tol", "1e-8", "--json", "--output", str(out)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    w = doc["solution"]["w"]
    sol = rs.formats.io.read_solution(out)
    names = list(sol.feature_names)
    assert 0.2 <= w[names.index("Plas")] <= 0.5 and w[names.index("Age")] <= 0.1 and abs(w[0]) <= 0.1
    assert sol.problem.has_bounds and doc["solution"]["status"] == "optimal"
    bad = subprocess.run([*cmd[:6], "Plas=0.5:0.2"], capture_output=True, text=True, timeout=600)
    assert bad.returncode != 0 and "'Plas'" in bad.stderr
    bad = subprocess.run([*cmd[:6], "Glucose=0:1"], capture_output=True, text=True, timeout=600)
    assert bad.returncode != 0 and "'Glucose'" in bad.stderr and "--bounds" in bad.stderr


def test_a_solution_with_bounds_and_constraints_survives_its_file(tmp_path):
    X, y, names = _standardized("pima")
    prob = rs.Problem(penalty=rs.L2(0.05), **_cases()["pima"])
    sol = prob.solve(X, y, feature_names=names, tol=1e-9)
    path = sol.to_json(tmp_path / "s.json", X, y)
    back = rs.formats.io.read_solution(path)
    report = rs.validate(back, X, y)
    assert report.ok, str(report)
    f1 = prob.normalize(X, y, feature_names=names).feasible
    f2 = back.problem.normalize(X, y, feature_names=names).feasible
    np.testing.assert_array_equal(f1.lower, f2.lower)
    np.testing.assert_array_equal(f1.linear.A, f2.linear.A)
    assert f2.violation(back.w) <= 1e-9

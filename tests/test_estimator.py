"""RobustSVC against scikit-learn's conventions, libsvm and CVXPY models written here."""

from __future__ import annotations

import pickle
import re

import cvxpy as cp
import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
from sklearn.utils.estimator_checks import check_estimator

import robustsvm as rs
from robustsvm import RobustSVC

from .conftest import make_classification

#: m3 options that reach a duality gap near 1e-8 on these small problems
M3 = {"tol": 1e-6, "max_iter": 100000}


def direct_fit(X, y, *, l2, l1=0.0, signs=None, radius=None, box=True, weights=None, squared=False, mu=None):
    """The RobustSVC objective written directly in CVXPY (labels 0/1 → −1/+1, mean reduction; ``mu``: (μ/2)b²)."""
    n, d = X.shape
    ypm = np.where(y == np.unique(y)[1], 1.0, -1.0)
    c = np.ones(n) / n if weights is None else weights / weights.sum()
    w, b = cp.Variable(d), cp.Variable()
    margin = cp.multiply(ypm, X @ w + b)
    if radius is not None:
        margin = margin - np.broadcast_to(radius, (n,)) * (cp.norm1(w) if box else cp.norm2(w))
    hinge = cp.pos(1 - margin)
    loss = c @ cp.square(hinge) if squared else c @ hinge
    cons = []
    if signs is not None:
        cons = [cp.multiply(signs, w) >= 0]
    # LPs/QPs are solved to 1e-10; cone models to Clarabel's default
    tight = {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10} if radius is None else {}
    ridge_b = 0 if mu is None else 0.5 * mu * cp.square(b)
    cp.Problem(cp.Minimize(0.5 * l2 * cp.sum_squares(w) + l1 * cp.norm1(w) + ridge_b + loss), cons).solve(
        solver="CLARABEL", **tight)
    return w.value, float(b.value)


def test_check_estimator_passes():
    check_estimator(RobustSVC())
    # three classes fit three QPs; at Clarabel's 1e-9 the third one's decision values agree with the
    # repeated-sample fit to ~2e-7 (its certified gap allows more), so this one asks for 1e-10
    check_estimator(RobustSVC(loss="squared_hinge", l1=0.01, uncertainty=rs.Box(0.05), solver_options={"tol": 1e-10}))
    # the new parameters: per-class weights, probabilities by internal cross-validation, warm starts.
    # "balanced" weights count the samples of each class (scikit-learn's meaning): repeating a sample changes
    # them, weighting it does not, so the weighted and the repeated fits differ by design. As for scikit-learn's
    # SVC(probability=True), repeated samples also fall in other internal folds than one weighted sample. And
    # predict keeps the sign of the certified decision function while Platt's sigmoid moves the 1/2 level by
    # B/A, so the most probable class can differ from the prediction near the boundary (also as for SVC).
    # dcd visits the samples in a seeded order, so that refits of the same data, which the checks compare,
    # agree exactly (their noise-only data leave the one-vs-rest decision values within rounding of a tie).
    balanced = "class_weight='balanced' counts samples: repeating one changes the class weights, weighting it not"
    threshold = "predict is sign(f); argmax of predict_proba is f > -B/A (Platt's sigmoid), as for SVC"
    weights = {"check_sample_weight_equivalence_on_dense_data": balanced,
               "check_sample_weight_equivalence_on_sparse_data": balanced}
    dcd = {"tol": 1e-10, "random_state": 0}
    check_estimator(RobustSVC(class_weight="balanced", warm_start=True, solver="dcd", solver_options=dcd),
                    expected_failed_checks=weights)
    folds = "the internal folds of probability=True split repeated samples, not weighted ones"
    check_estimator(RobustSVC(probability=True, warm_start=True, solver="dcd", solver_options=dcd),
                    expected_failed_checks={**dict.fromkeys(weights, folds), "check_classifiers_train": threshold})


def test_check_estimator_with_a_cone_model():
    # a Ball set compiles to second-order cones, solved to Clarabel's default 1e-8: everything passes except
    # the comparison of weighted and repeated-sample fits, which asks for decision values equal to rtol 1e-7
    results = check_estimator(RobustSVC(uncertainty=rs.Ball(0.05)), on_fail=None)
    failed = {r["check_name"] for r in results if r["status"] == "failed"}
    assert failed <= {"check_sample_weight_equivalence_on_dense_data", "check_sample_weight_equivalence_on_sparse_data"}
    assert sum(r["status"] == "passed" for r in results) > 50


def test_matches_libsvm_svc():
    X, y = make_classification(120, 5, seed=3)
    l2 = 0.05
    est = RobustSVC(l2=l2).fit(X, y)
    # (l2/2)‖w‖² + (1/n)Σξ  ⇔  ½‖w‖² + C Σξ with C = 1/(n·l2)
    ref = SVC(kernel="linear", C=1.0 / (X.shape[0] * l2), tol=1e-10).fit(X, y)
    np.testing.assert_allclose(est.coef_, ref.coef_, atol=1e-5)
    np.testing.assert_allclose(est.decision_function(X), ref.decision_function(X), atol=1e-4)
    assert est.coef_.shape == (1, 5) and est.intercept_.shape == (1,)
    np.testing.assert_array_equal(est.classes_, [0, 1])


@pytest.mark.parametrize("box", [True, False])
def test_robust_l1_squared_hinge_matches_direct_cvxpy(box):
    X, y = make_classification(80, 4, seed=5)
    unc = rs.Box(0.1) if box else rs.Ball(0.1)
    est = RobustSVC(loss="squared_hinge", l2=0.2, l1=0.01, uncertainty=unc).fit(X, y)
    assert est.solution_.status == "optimal"
    w, b = direct_fit(X, y, l2=0.2, l1=0.01, radius=0.1, box=box, squared=True)
    np.testing.assert_allclose(est.coef_[0], w, atol=1e-5)
    assert est.intercept_[0] == pytest.approx(b, abs=1e-5)


def test_per_sample_radius_and_weights_match_direct_cvxpy():
    X, y = make_classification(70, 3, seed=6)
    rng = np.random.default_rng(0)
    radius = rng.uniform(0, 0.3, size=70)
    weights = rng.uniform(0.5, 2.0, size=70)
    est = RobustSVC(l2=0.1, uncertainty=rs.Box(0.0)).fit(X, y, sample_weight=weights, radius=radius)
    w, b = direct_fit(X, y, l2=0.1, radius=radius, weights=weights)
    np.testing.assert_allclose(est.coef_[0], w, atol=1e-6)
    assert est.intercept_[0] == pytest.approx(b, abs=1e-6)
    # the same radii inside the set, then pickled and cloned
    est2 = RobustSVC(l2=0.1, uncertainty=rs.Box(radius)).fit(X, y, sample_weight=weights)
    np.testing.assert_allclose(est2.coef_, est.coef_, atol=1e-8)
    again = pickle.loads(pickle.dumps(est2))
    np.testing.assert_array_equal(again.decision_function(X), est2.decision_function(X))
    cloned = clone(est2)
    assert not hasattr(cloned, "coef_") and cloned.get_params()["uncertainty"] is not est2.uncertainty
    with pytest.raises(ValueError, match="radius has 69 values"):
        RobustSVC(uncertainty=rs.Box(0.1)).fit(X, y, radius=radius[:-1])
    with pytest.raises(ValueError, match=r"uncertainty\.radius has 70 values but X has 60"):
        est2.fit(X[:60], y[:60])


def test_per_sample_radius_is_sliced_by_grid_search():
    X, y = make_classification(60, 3, seed=7)
    radius = np.linspace(0.0, 0.2, 60)
    search = GridSearchCV(RobustSVC(uncertainty=rs.Box(0.0)), {"l2": [0.1, 1.0]}, cv=3)
    search.fit(X, y, radius=radius)
    w, _ = direct_fit(X, y, l2=search.best_params_["l2"], radius=radius)
    np.testing.assert_allclose(search.best_estimator_.coef_[0], w, atol=1e-6)


def test_signs_by_name_through_pandas_and_pipeline(wdbc):
    X, y, names = wdbc
    frame = pd.DataFrame(X, columns=names)
    free = RobustSVC(l2=0.1).fit(frame, y)
    # constrain the features whose free weight has the "wrong" sign
    flipped = [names[h] for h in np.flatnonzero(free.coef_[0] > 1e-3)[:3]]
    signs = {name: -1 for name in flipped}
    est = RobustSVC(l2=0.1, signs=signs).fit(frame, y)
    idx = [names.index(n) for n in flipped]
    assert np.all(est.coef_[0, idx] <= 1e-9)
    np.testing.assert_array_equal(est.feature_names_in_, names)
    s = np.zeros(len(names))
    s[idx] = -1
    w, _ = direct_fit(X, y, l2=0.1, signs=s)
    np.testing.assert_allclose(est.coef_[0], w, atol=1e-6)
    # a scaler that outputs pandas keeps the names for the classifier
    raw = pd.DataFrame(X * 3.0 + 1.0, columns=names)
    pipe = make_pipeline(StandardScaler().set_output(transform="pandas"), RobustSVC(l2=0.1, signs=signs))
    pipe.fit(raw, y)
    np.testing.assert_allclose(pipe[-1].coef_[0], w, atol=1e-6)
    assert pipe.score(raw, y) == pytest.approx(est.score(frame, y))
    # names without a DataFrame are an error that says what to pass
    with pytest.raises(ValueError, match="no feature names"):
        RobustSVC(signs=signs).fit(X, y)


def test_grid_search_cv_refits_the_best_point():
    X, y = make_classification(90, 4, seed=8)
    search = GridSearchCV(RobustSVC(uncertainty=rs.Ball(0.05)), {"l2": [0.01, 1.0], "l1": [0.0, 0.05]}, cv=3)
    search.fit(X, y)
    best = RobustSVC(uncertainty=rs.Ball(0.05), **search.best_params_).fit(X, y)
    np.testing.assert_allclose(search.best_estimator_.coef_, best.coef_, atol=1e-10)
    assert set(search.cv_results_["params"][0]) == {"l2", "l1"}


def test_kernel_model_matches_direct_cvxpy_dual_free_form():
    X, y = make_classification(50, 2, seed=9)
    kernel = rs.RBF(1.5)
    est = RobustSVC(kernel=kernel, l2=0.1, fit_intercept=False, solver="m3", solver_options=M3).fit(X, y)
    # f = K a in the RKHS: (l2/2) aᵀKa + (1/n) Σ max(0, 1 − y_i f_i)
    K = kernel(X)
    L = np.linalg.cholesky(K + 1e-10 * np.eye(len(X)))
    ypm = np.where(y == 1, 1.0, -1.0)
    a = cp.Variable(len(X))
    f = K @ a
    cp.Problem(cp.Minimize(0.05 * cp.sum_squares(L.T @ a) + cp.sum(cp.pos(1 - cp.multiply(ypm, f))) / len(X))).solve(
        solver="CLARABEL")
    X_new = make_classification(20, 2, seed=10)[0]
    np.testing.assert_allclose(est.decision_function(X_new), kernel(X_new, X) @ a.value, atol=1e-3)
    assert not hasattr(est, "coef_")
    # the linear kernel exposes coef_, equal to the primal fit
    lin = RobustSVC(kernel=rs.Linear(), l2=0.1, fit_intercept=False, solver="m3",
                    solver_options=M3).fit(X, y)
    primal = RobustSVC(l2=0.1, fit_intercept=False).fit(X, y)
    np.testing.assert_allclose(lin.coef_, primal.coef_, atol=1e-4)
    # a ridge intercept (μ/2)b² is accepted by the dual backend and agrees with the conic primal
    ridge = RobustSVC(kernel=rs.Linear(), l2=0.1, intercept_l2=2.0, solver="m3", solver_options=M3)
    ridge_primal = RobustSVC(l2=0.1, intercept_l2=2.0).fit(X, y)
    np.testing.assert_allclose(ridge.fit(X, y).intercept_, ridge_primal.intercept_, atol=1e-4)


def test_bad_input_is_named():
    X, y = make_classification(30, 3, seed=11)
    with pytest.raises(ValueError, match=r"'loss' parameter of RobustSVC must be a str among .*'hinge'"):
        RobustSVC(loss="cross_entropy").fit(X, y)
    with pytest.raises(ValueError, match=r"'l2' parameter of RobustSVC must be a float in the range \[0.0, inf\)"):
        RobustSVC(l2=-1.0).fit(X, y)
    with pytest.raises(TypeError, match="fit_intercept"):
        RobustSVC(fit_intercept="yes").fit(X, y)
    with pytest.raises(ValueError, match="positive_class=1 applies to two classes"):
        RobustSVC(positive_class=1).fit(X, np.arange(30) % 3)
    with pytest.raises(ValueError, match="1 class"):
        RobustSVC().fit(X, np.zeros(30))
    with pytest.raises(ValueError, match="radius= was given but the model has no uncertainty set"):
        RobustSVC().fit(X, y, radius=0.1)
    with pytest.raises(TypeError, match="solver_options"):
        RobustSVC(solver_options=[1]).fit(X, y)
    with pytest.raises(NotFittedError):
        RobustSVC().predict(X)
    est = RobustSVC().fit(X, y)
    with pytest.raises(ValueError, match="X has 2 features"):
        est.predict(X[:, :2])


def test_fit_intercept_is_a_bool_and_the_ridge_intercept_has_its_own_parameter():
    X, y = make_classification(40, 3, seed=12)
    # numbers are refused (fit_intercept=1 once meant a ridge intercept with μ = 1), naming the parameter to use
    for value in (1, 0, 2.0, 0.5):
        with pytest.raises(TypeError, match=r"'fit_intercept' parameter .* must be True or False.*intercept_l2=μ"):
            RobustSVC(fit_intercept=value).fit(X, y)
    with pytest.raises(TypeError, match="'fit_intercept' parameter of RobustSVC must be True or False"):
        RobustSVC(fit_intercept=None).fit(X, y)
    with pytest.raises(ValueError, match="fit_intercept=False"):
        RobustSVC(fit_intercept=False, intercept_l2=1.0).fit(X, y)
    for bad in (0.0, -1.0, np.inf):
        with pytest.raises(ValueError, match=r"'intercept_l2' parameter .* must be a float in the range \(0.0, inf\)"):
            RobustSVC(intercept_l2=bad).fit(X, y)
    with pytest.raises(TypeError, match="intercept_l2"):
        RobustSVC(intercept_l2="1").fit(X, y)
    # numpy booleans are booleans
    assert RobustSVC(fit_intercept=np.False_).fit(X, y).intercept_[0] == 0.0
    # the ridge intercept against the objective written in CVXPY with (μ/2)b²; μ = 50 moves b visibly
    free = RobustSVC(l2=0.1).fit(X, y)
    ridge = RobustSVC(l2=0.1, intercept_l2=50.0).fit(X, y)
    assert ridge.make_problem().intercept_mode == ("l2", 50.0)
    w, b = direct_fit(X, y, l2=0.1, mu=50.0)
    np.testing.assert_allclose(ridge.coef_[0], w, atol=1e-6)
    assert ridge.intercept_[0] == pytest.approx(b, abs=1e-6)
    assert abs(ridge.intercept_[0] - free.intercept_[0]) > 1e-3


def test_uncertainty_sets_take_part_in_get_and_set_params():
    box = rs.Box(0.1)
    assert box.get_params() == {"radius": 0.1, "widths": None}
    assert box.set_params(radius=0.3) is box and box.radius == 0.3
    with pytest.raises(ValueError, match="radius must be finite and non-negative"):
        box.set_params(radius=-1.0)
    assert box.radius == 0.3  # a refused value leaves the set as it was
    with pytest.raises(ValueError, match="invalid parameter 'p' for Box"):
        box.set_params(p=2)
    ball = rs.Ball(0.2, p=2).set_params(p=np.inf)
    assert ball.p == np.inf and ball.support(np.array([3.0, -4.0])) == pytest.approx(7.0)  # the 1-norm now
    inter = rs.Intersection(rs.Box(1.0), rs.Ball(1.0), radius=0.5)
    deep = inter.get_params(deep=True)
    assert deep["first__radius"] == 1.0 and deep["second__p"] == 2.0 and deep["radius"] == 0.5
    second = inter.second
    inter.set_params(second__p=1.0)
    assert inter.second.p == 1.0 and second.p == 2.0  # the component is replaced, not edited in place
    # the estimator sees the nested parameters; clone copies the set instead of sharing it
    est = RobustSVC(uncertainty=rs.Box(0.1))
    assert est.get_params()["uncertainty__radius"] == 0.1
    est.set_params(uncertainty__radius=0.25)
    assert est.uncertainty.radius == 0.25
    assert clone(est).uncertainty is not est.uncertainty and clone(est).uncertainty.radius == 0.25


def test_grid_search_over_a_pipeline_with_l2_and_uncertainty_radius():
    X, y = make_classification(60, 3, seed=13)
    raw = X * [1.0, 4.0, 0.5] + [2.0, -1.0, 0.0]
    box = rs.Box(0.05)
    pipe = make_pipeline(StandardScaler(), RobustSVC(uncertainty=box))
    grid = {"robustsvc__l2": [0.05, 1.0], "robustsvc__uncertainty__radius": [0.0, 0.3]}
    search = GridSearchCV(pipe, grid, cv=3).fit(raw, y)
    assert len(search.cv_results_["params"]) == 4
    assert box.radius == 0.05  # the user's set is never mutated: every candidate works on a copy
    best = search.best_params_
    assert search.best_estimator_[-1].uncertainty.radius == best["robustsvc__uncertainty__radius"]
    # the refitted best model is the robust objective written directly in CVXPY on the scaled data
    Z = StandardScaler().fit_transform(raw)
    l2, r = best["robustsvc__l2"], best["robustsvc__uncertainty__radius"]
    w, b = direct_fit(Z, y, l2=l2, radius=r)
    fitted = search.best_estimator_[-1]
    np.testing.assert_allclose(fitted.coef_[0], w, atol=1e-5)

    def box_objective(w, b):  # (l2/2)‖w‖² + mean hinge of the robust margin y(z·w + b) − r‖w‖₁
        margin = np.where(y == 1, 1.0, -1.0) * (Z @ w + b) - r * np.abs(w).sum()
        return 0.5 * l2 * w @ w + np.maximum(0.0, 1.0 - margin).mean()

    # b of a hinge LP can be non-unique: compare the objective, which is
    assert box_objective(fitted.coef_[0], fitted.intercept_[0]) == pytest.approx(box_objective(w, b), rel=1e-7)
    # and the radius reaches the fit: each candidate of the grid is that model, fitted on its own
    for params in search.cv_results_["params"]:
        fitted = clone(pipe).set_params(**params).fit(raw, y)[-1]
        w, _ = direct_fit(Z, y, l2=params["robustsvc__l2"], radius=params["robustsvc__uncertainty__radius"])
        np.testing.assert_allclose(fitted.coef_[0], w, atol=1e-5)


@pytest.mark.slow
def test_docs_estimator_examples_run():
    # every Python block of docs/estimator.md, as a reader would paste it
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "estimator.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert len(blocks) >= 2
    namespaces = []
    for block in blocks:
        namespace: dict = {}
        exec(compile(block, "docs/estimator.md", "exec"), namespace)
        namespaces.append(namespace)
    clf = namespaces[0]["clf"]
    names = list(clf[-1].feature_names_in_)
    assert clf[-1].coef_[0, names.index("mean radius")] <= 1e-9
    assert clf[-1].coef_[0, names.index("mean concave points")] <= 1e-9
    search = next(ns["search"] for ns in namespaces if "search" in ns)  # the grid-search block
    assert len(search.cv_results_["params"]) == 6 and search.best_estimator_[-1].solution_.status == "optimal"

"""RobustSVC beyond one binary fit: class weights, probabilities, one-vs-rest, warm starts, bad data named."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.calibration import CalibratedClassifierCV
from sklearn.compose import ColumnTransformer
from sklearn.model_selection import StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.class_weight import compute_sample_weight

import robustsvm as rs
from robustsvm import RobustSVC
from robustsvm.estimators.calibration import fit_sigmoid

from .conftest import make_classification
from .test_estimator import direct_fit


def imbalanced(n=90, d=4, seed=3):
    X, y = make_classification(n, d, seed=seed)
    keep = (y == 1) | (np.arange(n) % 3 == 0)  # about one negative for three positives
    return X[keep], y[keep]


def three_classes(n=150, d=4, seed=0):
    """Three overlapping Gaussian classes; feature 0 separates class 2, feature 1 class 1."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 3
    X = rng.normal(size=(n, d))
    X[:, 0] += 1.2 * (y == 2) - 0.6
    X[:, 1] += 1.2 * (y == 1) - 0.6
    return X, np.array(["setosa", "versicolor", "virginica"])[y]


# ------------------------------------------------------------------ class_weight
#: every backend that takes sample weights, on a model it solves, with options that certify tightly
BACKENDS = {
    "clarabel": ({}, {}),
    "scs": ({}, {"tol": 1e-9, "max_iter": 200000}),
    "dcd": ({}, {"tol": 1e-10}),
    "robust-dcd": ({"uncertainty": rs.Box(0.05)}, {"tol": 1e-10}),
    "feature-ipm": ({"uncertainty": rs.Box(0.05)}, {"tol": 1e-10}),
    "frank-wolfe": ({"fit_intercept": False}, {"tol": 1e-6, "max_iter": 200000}),
    "pegasos": ({"fit_intercept": False}, {"tol": 1e-2, "max_iter": 20000, "random_state": 0}),
    "m3": ({"fit_intercept": False}, {"tol": 1e-8, "max_iter": 200000}),
}


@pytest.mark.parametrize("solver", sorted(BACKENDS))
def test_balanced_class_weight_is_the_explicit_sample_weights(solver):
    X, y = imbalanced()
    params, options = BACKENDS[solver]
    explicit = compute_sample_weight("balanced", y)
    assert explicit.min() < 0.8 < 1.2 < explicit.max()  # the classes are far from balanced
    base = dict(l2=0.1, solver=solver, solver_options=options, **params)
    balanced = RobustSVC(class_weight="balanced", **base).fit(X, y)
    weighted = RobustSVC(**base).fit(X, y, sample_weight=explicit)
    np.testing.assert_allclose(balanced.coef_, weighted.coef_, rtol=0, atol=1e-8)
    np.testing.assert_allclose(balanced.intercept_, weighted.intercept_, rtol=0, atol=1e-8)
    # and the weights changed the model: the unweighted fit is elsewhere
    assert np.max(np.abs(RobustSVC(**base).fit(X, y).coef_ - balanced.coef_)) > 1e-3


def test_class_weight_mapping_composes_with_sample_weight_as_scikit_learn_does():
    X, y = imbalanced()
    s = np.random.default_rng(0).uniform(0.5, 2.0, size=y.size)
    est = RobustSVC(l2=0.1, class_weight={0: 3.0}).fit(X, y, sample_weight=s)  # class 1 keeps weight 1
    w, b = direct_fit(X, y, l2=0.1, weights=s * np.where(y == 0, 3.0, 1.0))
    np.testing.assert_allclose(est.coef_[0], w, atol=1e-6)
    assert est.intercept_[0] == pytest.approx(b, abs=1e-6)
    with pytest.raises(ValueError, match=r"'class_weight' parameter of RobustSVC must be a str among \{'balanced'\}"):
        RobustSVC(class_weight="even").fit(X, y)
    with pytest.raises(ValueError, match=r"class_weight names \[7\], which are not classes of y: the classes are"):
        RobustSVC(class_weight={7: 2.0}).fit(X, y)


# ----------------------------------------------------------------- probabilities
@pytest.mark.parametrize("n_classes", [2, 3])
def test_predict_proba_is_platt_scaling_on_the_folds_of_calibrated_classifier_cv(n_classes):
    X, y = (make_classification(120, 4, seed=5) if n_classes == 2 else three_classes())
    s = np.random.default_rng(1).uniform(0.5, 2.0, size=y.size)
    est = RobustSVC(l2=0.1, probability=True).fit(X, y, sample_weight=s)
    # the same folds, the same decision values (out of fold), the same sigmoid; the classifier fitted on all
    ref = CalibratedClassifierCV(RobustSVC(l2=0.1), method="sigmoid", cv=StratifiedKFold(5), ensemble=False)
    ref.fit(X, y, sample_weight=s)
    proba = est.predict_proba(X)
    # scikit-learn's L-BFGS stops at a gradient of 1e-6; the sigmoids then agree to ~1e-8 (measured 4e-9)
    np.testing.assert_allclose(proba, ref.predict_proba(X), rtol=0, atol=1e-6)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.exp(est.predict_log_proba(X)), proba, rtol=1e-12, atol=1e-15)
    # CalibratedClassifierCV predicts the most probable class (RobustSVC, like SVC, the sign of f)
    np.testing.assert_array_equal(est.classes_[np.argmax(proba, axis=1)], ref.predict(X))
    assert not hasattr(RobustSVC(), "predict_proba") and not hasattr(RobustSVC().fit(X, y), "predict_proba")


def test_platt_sigmoid_minimizes_the_regularized_cross_entropy():
    from scipy.optimize import minimize

    rng = np.random.default_rng(2)
    f = rng.normal(size=200) * 3.0
    t = (rng.random(200) < 1.0 / (1.0 + np.exp(1.7 * f - 0.4))).astype(int)
    s = rng.uniform(0.2, 3.0, size=200)
    n1, n0 = s[t == 1].sum(), s[t == 0].sum()
    target = np.where(t == 1, (n1 + 1) / (n1 + 2), 1 / (n0 + 2))

    def loss(ab):  # written out: −Σ s [T log p + (1 − T) log(1 − p)], p = 1/(1 + exp(a f + b))
        p = 1.0 / (1.0 + np.exp(ab[0] * f + ab[1]))
        return -np.sum(s * (target * np.log(p) + (1 - target) * np.log(1 - p)))

    best = minimize(loss, [0.0, 0.0], method="Nelder-Mead", options={"xatol": 1e-10, "fatol": 1e-13,
                                                                       "maxiter": 20000})
    fitted = fit_sigmoid(f, t, s)
    assert loss([fitted.a, fitted.b]) <= best.fun + 1e-10
    np.testing.assert_allclose([fitted.a, fitted.b], best.x, atol=1e-5)


# -------------------------------------------------------------------- one-vs-rest
def test_three_classes_with_signs_are_three_certified_binary_fits():
    X, y = three_classes()
    signs = {0: +1, 1: -1}  # each model: feature 0 is evidence for its class, feature 1 against it
    est = RobustSVC(l2=0.1, signs=signs, uncertainty=rs.Box(0.05)).fit(X, y)
    np.testing.assert_array_equal(est.classes_, ["setosa", "versicolor", "virginica"])
    assert est.coef_.shape == (3, 4) and est.intercept_.shape == (3,) and len(est.solutions_) == 3
    scores = est.decision_function(X)
    assert scores.shape == (150, 3)
    np.testing.assert_array_equal(est.predict(X), est.classes_[np.argmax(scores, axis=1)])
    for k, c in enumerate(est.classes_):
        binary = RobustSVC(l2=0.1, signs=signs, uncertainty=rs.Box(0.05)).fit(X, y == c)
        np.testing.assert_allclose(est.coef_[k], binary.coef_[0], atol=1e-7)
        sol = est.solutions_[k]
        assert sol.status == "optimal" and sol.gap <= 1e-6
        assert est.coef_[k, 0] >= -1e-9 and est.coef_[k, 1] <= 1e-9
        # against the model written in CVXPY (class c against the rest)
        w, b = direct_fit(X, (y == c).astype(int), l2=0.1, signs=np.array([1, -1, 0, 0]), radius=0.05)
        np.testing.assert_allclose(est.coef_[k], w, atol=1e-5)
        assert est.intercept_[k] == pytest.approx(b, abs=1e-5)
    assert est.gap_ == max(sol.gap for sol in est.solutions_)
    summary = est.solutions_[2].summary()
    assert "+1 = 'virginica', -1 = the other classes" in summary
    assert "a +1 sign pushes towards 'virginica' (this model's class)" in summary
    assert est.solution_ in est.solutions_


def test_per_class_signs_and_sets():
    X, y = three_classes()
    signs = rs.PerClass({"virginica": {0: +1}, "setosa": {0: -1}})  # versicolor: free
    est = RobustSVC(l2=0.1, signs=signs, uncertainty=rs.PerClass({"setosa": rs.Ball(0.1)})).fit(X, y)
    expected = {"setosa": ({0: -1}, rs.Ball(0.1)), "versicolor": (None, None), "virginica": ({0: +1}, None)}
    for k, c in enumerate(est.classes_):
        s, unc = expected[c]
        binary = RobustSVC(l2=0.1, signs=s, uncertainty=unc).fit(X, y == c)
        np.testing.assert_allclose(est.coef_[k], binary.coef_[0], atol=1e-6)
    with pytest.raises(ValueError, match=r"names \['iris'\], which are not classes of y"):
        RobustSVC(signs=rs.PerClass({"iris": [1, 0, 0, 0]})).fit(X, y)
    with pytest.raises(ValueError, match=r"PerClass\(\.\.\.\) needs more than two classes"):
        RobustSVC(signs=rs.PerClass({True: [1, 0, 0, 0]})).fit(X, y == "setosa")


def test_warm_start_reuses_each_models_dual_point():
    X, y = three_classes(300, 6)
    est = RobustSVC(l2=0.1, uncertainty=rs.Box(0.05), solver="robust-dcd", solver_options={"tol": 1e-7},
                    warm_start=True).fit(X, y)
    cold = np.asarray(est.n_iter_)
    again = est.fit(X, y)  # the same model from its own optimum: at most a check of the stopping rule
    assert np.all(np.asarray(again.n_iter_) < cold)
    fresh = RobustSVC(l2=0.1, uncertainty=rs.Box(0.05), solver="robust-dcd", solver_options={"tol": 1e-7}).fit(X, y)
    np.testing.assert_allclose(again.coef_, fresh.coef_, atol=1e-4)
    # without warm_start the refit starts afresh
    assert np.all(np.asarray(clone(est).set_params(warm_start=False).fit(X, y).n_iter_) > 10)


# ------------------------------------------------------------------- bad data named
def test_nan_and_inf_errors_name_the_column_and_the_first_rows():
    X, y = make_classification(40, 3, seed=2)
    frame = pd.DataFrame(X, columns=["age", "dose", "weight"])
    frame.iloc[[4, 9], 1] = np.nan
    frame.iloc[7, 2] = np.inf
    message = r"X contains NaN or infinity: column 'dose' \(index 1\) has NaN in 2 rows \(first: 4, 9\); " \
              r"column 'weight' \(index 2\) has infinity in 1 row \(first: 7\)"
    with pytest.raises(ValueError, match=message):
        RobustSVC().fit(frame, y)
    with pytest.raises(ValueError, match=message):
        rs.Problem(penalty=rs.L2(1.0)).solve(frame, y)
    est = RobustSVC().fit(frame.fillna(0.0).replace(np.inf, 0.0), y)
    with pytest.raises(ValueError, match=r"column 'dose' \(index 1\) has NaN in 2 rows"):
        est.predict(frame)
    with pytest.raises(ValueError, match=r"column 0 has infinity in 1 row \(first: 3\)"):
        RobustSVC().fit(np.where(np.arange(40)[:, None] == 3, np.inf, X)[:, :1], y)


def test_signs_by_name_through_a_column_transformer_and_did_you_mean(wdbc):
    X, y, names = wdbc
    frame = pd.DataFrame(X, columns=names)
    pre = ColumnTransformer([("num", StandardScaler(), names)]).set_output(transform="pandas")
    pipe = make_pipeline(pre, RobustSVC(l2=0.1, signs={"mean radius": -1, "worst area": -1}, positive_class=1))
    pipe.fit(frame, y)
    out = list(pipe[-1].feature_names_in_)
    assert out[names.index("mean radius")] == "num__mean radius"
    direct = RobustSVC(l2=0.1, signs={"mean radius": -1, "worst area": -1}).fit(frame, y)
    np.testing.assert_allclose(pipe[-1].coef_, direct.coef_, atol=1e-6)
    bad = make_pipeline(pre, RobustSVC(l2=0.1, signs={"mean raduis": -1}))
    with pytest.raises(ValueError, match=r"unknown feature 'mean raduis'; did you mean 'num__mean radius'"):
        bad.fit(frame, y)
    two = pd.concat([frame.add_prefix("a__"), frame.add_prefix("b__")], axis=1)
    with pytest.raises(ValueError, match=r"several transformed columns end with: \['a__mean radius', 'b__mean"):
        RobustSVC(signs={"mean radius": -1}).fit(two, y)


def test_probabilities_with_signs_by_name_and_a_kernel_model_with_three_classes():
    X, y = three_classes()
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    named = RobustSVC(l2=0.1, signs={"a": +1}, probability=True).fit(frame, y)  # the internal folds keep the names
    plain = RobustSVC(l2=0.1, signs=[1, 0, 0, 0], probability=True).fit(X, y)
    np.testing.assert_allclose(named.predict_proba(frame), plain.predict_proba(X), atol=1e-7)
    m3 = {"tol": 1e-6, "max_iter": 100000}
    kernel = RobustSVC(l2=0.1, kernel=rs.RBF(1.0), fit_intercept=False, solver="m3", solver_options=m3).fit(X, y)
    scores = kernel.decision_function(X)
    assert scores.shape == (150, 3) and not hasattr(kernel, "coef_")
    for k, c in enumerate(kernel.classes_):
        binary = RobustSVC(l2=0.1, kernel=rs.RBF(1.0), fit_intercept=False, solver="m3", solver_options=m3)
        np.testing.assert_allclose(scores[:, k], binary.fit(X, y == c).decision_function(X), atol=1e-9)
    np.testing.assert_array_equal(kernel.predict(X), kernel.classes_[np.argmax(scores, axis=1)])


"""Grid search with a scorer, class weights and sample weights, against scikit-learn's cross-validation of
``RobustSVC`` on the same splits; ties at the majority rate on imbalanced data."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

pytest.importorskip("sklearn")
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import GridSearchCV, PredefinedSplit, cross_val_score

import robustsvm as rs
from robustsvm import model_selection as ms
from robustsvm.model_selection.scoring import constant_within_gap

RADII = [1.0, 0.3, 0.05]
L2 = 0.1


@pytest.fixture(scope="module")
def imbalanced():
    """70/30 labels, a signal on two of four features, three stratified folds."""
    rng = np.random.default_rng(3)
    n = 120
    y = np.where(rng.random(n) < 0.3, 1, 0)
    X = rng.normal(size=(n, 4))
    X[:, 0] += 0.8 * y
    X[:, 1] -= 0.4 * y
    return X, y, ms.stratified_folds(y, 3, seed=0)


def _search(X, y, folds, scoring, **kw):
    prob = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(L2), uncertainty=rs.Box(0.1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rs.SelectionTieWarning)
        return ms.grid_search(prob, X, y, {"radius": RADII}, folds=folds, progress=False, scoring=scoring,
                              solver_options={"tol": 1e-9}, **kw)


def _sklearn(X, y, folds, scoring, probability=False, **kw):
    est = rs.RobustSVC(l2=L2, probability=probability, **kw)
    gs = GridSearchCV(est, {"uncertainty": [rs.Box(r) for r in RADII]}, scoring=scoring, cv=PredefinedSplit(folds))
    gs.fit(X, y)
    return np.column_stack([gs.cv_results_[f"split{k}_test_score"] for k in range(np.unique(folds).size)])


@pytest.mark.parametrize("scoring", ["accuracy", "roc_auc", "balanced_accuracy"])
def test_decision_scorers_with_balanced_weights_equal_gridsearchcv(imbalanced, scoring):
    X, y, folds = imbalanced
    res = _search(X, y, folds, scoring, class_weight="balanced")
    sk = _sklearn(X, y, folds, scoring, class_weight="balanced")
    assert res.scoring == scoring
    varying = ~res.constant.any(axis=1)
    assert varying.sum() >= 2  # the two smaller radii fit a model on every fold
    np.testing.assert_allclose(res.scores[varying], sk[varying], atol=1e-9)


def test_constant_model_scores_what_the_scorer_says(imbalanced):
    """At radius 1 the certificate admits w = 0 on every fold: AUC and balanced accuracy are exactly 0.5."""
    X, y, folds = imbalanced
    auc = _search(X, y, folds, "roc_auc", class_weight="balanced")
    bal = _search(X, y, folds, "balanced_accuracy", class_weight="balanced")
    assert auc.constant[0].all() and bal.constant[0].all()
    np.testing.assert_array_equal(auc.scores[0], 0.5)
    np.testing.assert_array_equal(bal.scores[0], 0.5)
    # the flag is the strong-convexity bound: ‖w‖ ≤ √(2 gap / λ2) admits w* = 0, a larger ‖w‖ excludes it
    for k in range(3):
        assert np.linalg.norm(auc.weights[0, k]) <= np.sqrt(2 * auc.gaps[0, k] / L2)
        assert np.linalg.norm(auc.weights[2, k]) > np.sqrt(2 * auc.gaps[2, k] / L2)
    # independently: the fold models written here in CVXPY (balanced class weights of the training rows)
    for r, zero in ((RADII[0], True), (RADII[2], False)):
        w = _direct_fold_weights(X, y, folds != 0, r)
        assert (np.linalg.norm(w) < 1e-6) == zero
    assert not constant_within_gap(np.array([1e-3]), 1e-9, 1.0)
    assert constant_within_gap(np.array([1e-5]), 1e-9, 1.0)
    assert not constant_within_gap(np.array([1e-12]), np.nan, 1.0)


def _direct_fold_weights(X, y, train, radius):
    """Box-robust mean hinge with balanced class weights on the rows ``train``, written here; its ``w``."""
    import cvxpy as cp

    Xt, yt = X[train], np.where(y[train] == 1, 1.0, -1.0)
    kappa = np.where(yt > 0, yt.size / (2 * np.sum(yt > 0)), yt.size / (2 * np.sum(yt < 0)))
    w, b = cp.Variable(X.shape[1]), cp.Variable()
    loss = cp.pos(1 - cp.multiply(yt, Xt @ w + b) + radius * cp.norm1(w))
    cp.Problem(cp.Minimize(0.5 * L2 * cp.sum_squares(w) + kappa @ loss / kappa.sum())).solve(
        solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    return w.value


@pytest.mark.parametrize("scoring", ["neg_brier_score", "neg_log_loss"])
def test_probability_scorers_equal_gridsearchcv_with_platt_on_training_folds(imbalanced, scoring):
    X, y, folds = imbalanced
    res = _search(X, y, folds, scoring, class_weight="balanced")
    sk = _sklearn(X, y, folds, scoring, probability=True, class_weight="balanced")
    varying = ~res.constant.any(axis=1)
    assert varying.sum() >= 2
    # the sigmoids come from refits at the grid's tolerance: decision values agree to ~1e-8
    np.testing.assert_allclose(res.scores[varying], sk[varying], atol=1e-6)
    assert np.all(res.scores < 0)


def test_sample_and_class_weights_equal_cross_val_score_on_each_route(imbalanced):
    X, y, folds = imbalanced
    sw = np.random.default_rng(0).uniform(0.2, 2.0, size=y.size)
    cw = {0: 1.0, 1: 2.5}
    prob = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(L2), uncertainty=rs.Box(0.05))
    # compiled once (a group per fold and class), refit per fold, and feature-ipm's batched solve per fold
    routes = [ms.grid_search(prob, X, y, {"radius": [0.05]}, folds=folds, progress=False, scoring="roc_auc",
                             class_weight=cw, sample_weight=sw, solver=solver, compile_once=once,
                             solver_options={"tol": 1e-9})
              for solver, once in (("clarabel", True), ("clarabel", False), ("feature-ipm", False))]
    assert set(routes[2].extra["solvers"].ravel()) == {"feature-ipm"}
    est = rs.RobustSVC(l2=L2, uncertainty=rs.Box(0.05), class_weight=cw)
    sk = cross_val_score(est, X, y, cv=PredefinedSplit(folds), scoring="roc_auc", params={"sample_weight": sw})
    for res in routes:
        assert not res.constant.any()
        np.testing.assert_allclose(res.scores[0], sk, atol=1e-9)
    # the weights change the fit: unweighted scores differ
    plain = ms.grid_search(prob, X, y, {"radius": [0.05]}, folds=folds, progress=False, scoring="roc_auc")
    assert np.max(np.abs(plain.weights - routes[0].weights)) > 1e-3


def test_accuracy_ties_at_the_majority_rate_and_auc_with_balanced_weights_does_not():
    """70/30 labels and a weak signal: every point scores accuracy 0.7; ROC AUC with balanced weights picks a model."""
    rng = np.random.default_rng(7)
    y = np.r_[np.zeros(70, int), np.ones(30, int)]
    X = rng.normal(size=(100, 3))
    X[:, 0] += 0.7 * y
    folds = ms.stratified_folds(y, 5, seed=0)
    prob = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(1.0), uncertainty=rs.Box(0.1))
    grid = {"radius": [1.0, 0.5, 0.2, 0.05, 0.01]}
    with pytest.warns(rs.SelectionTieWarning, match="5 grid points tie at the best mean accuracy 0.7"):
        acc = ms.grid_search(prob, X, y, grid, folds=folds, progress=False)
    assert acc.ties.size == 5 and acc.constant.any()
    with warnings.catch_warnings():
        warnings.simplefilter("error", rs.SelectionTieWarning)
        auc = ms.grid_search(prob, X, y, grid, folds=folds, progress=False, scoring="roc_auc",
                             class_weight="balanced")
    best = auc.best_index
    assert auc.ties.size == 1 and not auc.constant[best].any()
    assert auc.best_score > 0.7 > np.max(auc.mean_scores[auc.constant.any(axis=1)])
    # the chosen point's scores, recomputed here from its weights with scikit-learn's roc_auc_score
    for k in range(5):
        val = folds == k
        f = X[val] @ auc.weights[best, k] + auc.intercepts[best, k]
        assert auc.scores[best, k] == pytest.approx(roc_auc_score(y[val], f), abs=1e-12)
    assert auc.table()["constant_folds"].tolist() == auc.constant.sum(axis=1).tolist()


def test_callable_scorer_sees_the_original_labels(imbalanced):
    X, y, folds = imbalanced
    labels = np.where(y == 1, "relapse", "none")
    seen = set()

    def share_predicted_relapse(model, X_val, y_val):
        seen.update(np.unique(y_val).tolist())
        return float(np.mean(model.predict(X_val) == "relapse"))

    res = _search(X, labels, folds, share_predicted_relapse, class_weight={"relapse": 2.0})
    assert seen == {"none", "relapse"} and res.scoring == "share_predicted_relapse"
    assert np.all((res.scores >= 0) & (res.scores <= 1))


def test_bad_scoring_and_weights_are_refused(imbalanced):
    X, y, folds = imbalanced
    prob = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(1.0))
    run = {"folds": folds, "progress": False}
    with pytest.raises(ValueError, match="scoring='auc_roc' is not a scikit-learn scorer"):
        ms.grid_search(prob, X, y, {"l2": [1.0]}, scoring="auc_roc", **run)
    with pytest.raises(TypeError, match="scoring must be"):
        ms.grid_search(prob, X, y, {"l2": [1.0]}, scoring=3, **run)
    with pytest.raises(ValueError, match="class_weight"):
        ms.grid_search(prob, X, y, {"l2": [1.0]}, class_weight="balance", **run)
    with pytest.raises(ValueError, match="class_weight names"):
        ms.grid_search(prob, X, y, {"l2": [1.0]}, class_weight={2: 1.0}, **run)
    with pytest.raises(ValueError, match="sample_weight must have shape"):
        ms.grid_search(prob, X, y, {"l2": [1.0]}, sample_weight=np.ones(3), **run)
    with pytest.raises(ValueError, match="sample_weight must be non-negative"):
        ms.grid_search(prob, X, y, {"l2": [1.0]}, sample_weight=-np.ones(y.size), **run)


def test_weighted_folds_in_processes_equal_the_serial_search(imbalanced):
    pytest.importorskip("joblib")
    X, y, folds = imbalanced
    serial = _search(X, y, folds, "balanced_accuracy", class_weight="balanced")
    parallel = _search(X, y, folds, "balanced_accuracy", class_weight="balanced", n_jobs=2)
    np.testing.assert_array_equal(parallel.scores, serial.scores)
    np.testing.assert_allclose(parallel.weights, serial.weights, atol=1e-12)

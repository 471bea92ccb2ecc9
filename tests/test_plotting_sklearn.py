"""Figures of scikit-learn objects: a fitted Pipeline ending in RobustSVC, a fitted GridSearchCV over it
(the plotted data checked against the objects' own fitted numbers, with matplotlib's Agg backend)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest

pytest.importorskip("sklearn")
pd = pytest.importorskip("pandas")
from sklearn.compose import ColumnTransformer  # noqa: E402
from sklearn.model_selection import GridSearchCV, PredefinedSplit  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

import robustsvm as rs  # noqa: E402
from robustsvm import model_selection as ms  # noqa: E402
from robustsvm import plotting  # noqa: E402

from .conftest import make_classification  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def frame():
    X, y = make_classification(90, 3, seed=11)
    return pd.DataFrame(X * [1.0, 10.0, 0.1], columns=["age", "dose", "marker"]), y


def test_weights_of_a_pipeline_are_its_last_steps_weights_with_the_pipelines_names(frame):
    X, y = frame
    pipe = make_pipeline(ColumnTransformer([("scale", StandardScaler(), ["age", "dose", "marker"])]),
                         rs.RobustSVC(l2=0.1, signs=[1, -1, 0])).fit(X, y)
    _, ax = plotting.weights(pipe)
    svc = pipe[-1]
    np.testing.assert_allclose([p.get_height() for p in ax.patches], svc.coef_[0])
    assert [t.get_text() for t in ax.get_xticklabels()] == ["scale__age", "scale__dose", "scale__marker"]
    # the same bars as the bare estimator and its Solution
    for model in (svc, svc.solution_):
        _, other = plotting.weights(model, feature_names=["scale__age", "scale__dose", "scale__marker"])
        assert [p.get_height() for p in other.patches] == [p.get_height() for p in ax.patches]
    with pytest.raises(TypeError, match="Pipeline ending in it"):
        plotting.weights(make_pipeline(StandardScaler()).fit(X))


def test_validation_scores_of_a_gridsearchcv_and_the_same_grid_of_the_package():
    X, y = make_classification(90, 3, seed=12)
    folds = ms.stratified_folds(y, 3, seed=0)
    radii, lambdas = [0.0, 0.05, 0.2], [0.05, 0.5]
    pipe = make_pipeline(StandardScaler(), rs.RobustSVC(uncertainty=rs.Box(0.1)))
    search = GridSearchCV(pipe, {"robustsvc__uncertainty": [rs.Box(r) for r in radii], "robustsvc__l2": lambdas},
                          scoring="roc_auc", cv=PredefinedSplit(folds)).fit(X, y)
    _, ax = plotting.validation_scores(search, "radius")  # the set is read as robustsvc__uncertainty__radius
    assert ax.get_ylabel() == "validation roc_auc (3 folds)" and len(ax.lines) == 2
    res = search.cv_results_
    for line, lam in zip(ax.lines, lambdas, strict=True):
        rows = [k for k, p in enumerate(res["params"]) if p["robustsvc__l2"] == lam]
        rows.sort(key=lambda k: res["params"][k]["robustsvc__uncertainty"].radius)
        np.testing.assert_allclose(line.get_xdata(), radii)
        np.testing.assert_allclose(line.get_ydata(), res["mean_test_score"][rows], rtol=1e-12)
        assert line.get_label() == f"robustsvc__l2 = {lam:g}"
    best = ax.collections[-1].get_offsets()[0]
    chosen = res["params"][search.best_index_]
    np.testing.assert_allclose(best, [chosen["robustsvc__uncertainty"].radius, search.best_score_])
    # the old name draws the package's own grid, labelled by its scorer
    Z = StandardScaler().fit_transform(X)
    grid = ms.grid_search(rs.Problem(penalty=rs.L2(0.1), uncertainty=rs.Box(0.1)), Z, y,
                          {"l2": lambdas, "radius": radii}, folds=folds, progress=False, scoring="roc_auc")
    _, ax2 = plotting.validation_accuracy(grid, "radius")
    assert ax2.get_ylabel() == "validation roc_auc (3 folds)"
    np.testing.assert_allclose(ax2.collections[-1].get_offsets()[0], [grid.best_params["radius"], grid.best_score])


def test_searches_that_cannot_be_drawn_say_why(frame):
    X, y = frame
    search = GridSearchCV(rs.RobustSVC(), {"l2": [0.1, 1.0]}, cv=3)
    with pytest.raises(TypeError, match="GridSearchCV is not fitted"):
        plotting.validation_scores(search, "l2")
    search.fit(X.to_numpy(), y)
    with pytest.raises(ValueError, match="no parameter 'radius'"):
        plotting.validation_scores(search, "radius")
    _, ax = plotting.validation_scores(search, "l2")
    assert ax.get_ylabel() == "validation accuracy (3 folds)"
    with pytest.raises(TypeError, match="grid must be a GridResult"):
        plotting.validation_scores({"points": []}, "l2")

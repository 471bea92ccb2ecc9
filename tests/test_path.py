"""``rs.path``: from the critical value down, every point certified; cross-validation along it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

import robustsvm as rs
from tests._gbsg2_like import gbsg2_like

SIGNS = {"pnodes": +1, "age": -1, "horTh=yes": -1}


@pytest.fixture(scope="module")
def data():
    X, y, names = gbsg2_like()
    return pd.DataFrame(X, columns=names), y


def test_every_point_is_certified_and_the_path_starts_constant(data):
    Xf, y = data
    problem = rs.Problem(penalty=rs.L2(1e-2), signs=SIGNS, uncertainty=rs.Box(0.05))
    result = rs.path(problem, Xf, y, n_points=5, solver="robust-dcd")
    assert result.parameter == "radius"
    assert result.critical == pytest.approx(rs.critical_radius(problem, Xf, y), rel=1e-9)
    assert np.allclose(result.values, np.geomspace(result.critical, result.critical / 100, 5))
    assert np.all(result.certified) and np.all(np.isfinite(result.gaps))
    for sol, r in zip(result.solutions, result.values, strict=True):
        # the certificate is the package's: an independent conic solve lies within the gap
        ref = problem.solve(Xf, y, solver="clarabel", radius=r, tol=1e-10)
        assert sol.objective - ref.objective <= sol.gap + ref.gap + 1e-12
        assert ref.objective - sol.objective <= sol.gap + ref.gap + 1e-12
    assert result.solutions[0].degenerate is not None  # at the critical radius the model is constant
    assert result.solutions[-1].degenerate is None


def test_l1_path_starts_at_the_critical_l1(data):
    Xf, y = data
    problem = rs.Problem(penalty=rs.L2(1e-2), signs=SIGNS)
    result = rs.path(problem, Xf, y, n_points=4)
    assert result.parameter == "l1"
    assert result.critical == pytest.approx(rs.critical_l1(problem, Xf, y), rel=1e-9)
    assert np.all(result.certified)
    assert result.solutions[0].nonzeros == 0 and result.solutions[-1].nonzeros > 0


def test_cross_validation_with_auc_and_balanced_weights_picks_a_model_that_is_not_constant(data):
    Xf, y = data
    problem = rs.Problem(penalty=rs.L2(1e-2), signs=SIGNS, uncertainty=rs.Box(0.05))
    result = rs.path(problem, Xf, y, n_points=6, cv=3, scoring="roc_auc", class_weight="balanced")
    assert result.scores.shape == (6, 3) and np.all(result.fold_statuses == "optimal")
    best = result.best_solution
    assert best.degenerate is None and best.nonzeros > 0
    assert len(np.unique(best.predict(Xf))) == 2
    # the mean score is what scikit-learn gives on each held-out part (the first part recomputed here)
    folds = rs.model_selection.stratified_folds(y, 3, seed=0)
    train, val = folds != 0, folds == 0
    from sklearn.utils.class_weight import compute_sample_weight

    X = Xf.to_numpy()
    sol = problem.solve(X[train], y[train], solver="robust-dcd", feature_names=list(Xf.columns),
                        sample_weight=compute_sample_weight("balanced", y[train]),
                        radius=result.values[result.best_index], tol=1e-10)
    assert roc_auc_score(y[val], sol.decision_function(X[val])) == pytest.approx(
        result.scores[result.best_index, 0], abs=1e-3)


@pytest.mark.parametrize("scoring", ["balanced_accuracy", "neg_brier_score", "neg_log_loss"])
def test_other_scorers(data, scoring):
    Xf, y = data
    problem = rs.Problem(penalty=rs.L2(1e-2), signs=SIGNS, uncertainty=rs.Ball(0.05))
    result = rs.path(problem, Xf, y, n_points=3, cv=2, scoring=scoring, class_weight={0: 2.4, 1: 1.0})
    assert np.all(np.isfinite(result.scores))
    if scoring != "balanced_accuracy":
        assert np.all(result.scores < 0)


def test_refusals(data):
    Xf, y = data
    problem = rs.Problem(uncertainty=rs.Box(0.05))
    with pytest.raises(ValueError, match="scoring"):
        rs.path(problem, Xf, y, scoring="f2")
    with pytest.raises(ValueError, match="not both"):
        rs.path(problem, Xf, y, radius=[0.1], l1=[0.1])
    with pytest.raises(ValueError, match="class_weight"):
        rs.path(problem, Xf, y, class_weight="even")
    with pytest.raises(ValueError, match="uncertainty set"):
        rs.path(rs.Problem(), Xf, y, radius=[0.1])


def test_auto_solves_a_point_again_when_its_first_answer_stops_short(data):
    """A first-order answer cut off by ``max_iter`` is not kept by ``"auto"``: the point is solved again by the
    next backend and certified; a named backend keeps its status (never better than its answer)."""
    Xf, y = data
    problem = rs.Problem(penalty=rs.L2(1e-2), signs=SIGNS, uncertainty=rs.Box(0.05))
    named = rs.path(problem, Xf, y, n_points=3, solver="robust-dcd", max_iter=2)
    assert "max_iter" in set(named.statuses[1:])
    auto = rs.path(problem, Xf, y, n_points=3, max_iter=2)
    assert np.all(auto.statuses == "optimal") and np.all(auto.certified)
    refolded = [s for s in auto.solutions if s.auto_fallback is not None]
    assert refolded and all(s.auto_fallback.status == "max_iter" for s in refolded)
    for sol, r in zip(auto.solutions, auto.values, strict=True):
        ref = problem.solve(Xf, y, solver="clarabel", radius=r, tol=1e-10)
        assert abs(sol.objective - ref.objective) <= sol.gap + ref.gap + 1e-12


def test_a_seeded_path_is_reproducible(data):
    Xf, y = data
    problem = rs.Problem(penalty=rs.L2(1e-2), signs=SIGNS, uncertainty=rs.Box(0.05))
    runs = [rs.path(problem, Xf, y, n_points=4, cv=2, solver="robust-dcd", seed=3) for _ in range(2)]
    assert [s.iterations for s in runs[0].solutions] == [s.iterations for s in runs[1].solutions]
    assert np.array_equal(runs[0].scores, runs[1].scores)


def test_a_constant_point_of_the_path_says_why(data):
    """At and above the critical radius the path's constant points name the cause, as a single solve does."""
    Xf, y = data
    problem = rs.Problem(penalty=rs.L2(1e-2), signs=SIGNS, uncertainty=rs.Box(0.05))
    top = rs.critical_radius(problem, Xf, y)
    result = rs.path(problem, Xf, y, radius=[2 * top, top / 100], solver="robust-dcd")
    first = result.solutions[0].degenerate
    assert first is not None and first["explained"] and first["proved"]
    assert "exceeds the critical radius" in first["cause"] and first["critical_radius"] == pytest.approx(top)
    with pytest.warns(rs.DegenerateSolutionWarning) as caught:
        problem.solve(Xf, y, solver="robust-dcd", radius=2 * top)
    assert f"{top:.4g}" in str(caught[0].message) and f"{top:.4g}" in first["cause"]
    assert result.solutions[1].degenerate is None

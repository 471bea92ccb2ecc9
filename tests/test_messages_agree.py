"""Messages and statuses that agree with their numbers.

- robust-dcd with every weight fixed (``l = u``): the intercept is optimized and the message's gap is a gap
  the package's certificate confirms (it used to certify ``w = 0``, a point the bounds exclude: "relative
  duality gap 0 after 0 epochs", then "inaccurate");
- HiGHS on linear constraints with redundant rows: a failure says which rows and what to do;
- a pooled replicate set names the feature with no within-subject spread instead of accepting a width of
  rounding noise or failing on a singular matrix without a name.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import LinearConstraint, minimize_scalar

import robustsvm as rs


@pytest.mark.parametrize("seed", range(6))
def test_robust_dcd_with_every_weight_fixed_optimizes_the_intercept(seed):
    rng = np.random.default_rng(seed)
    n, d = 60, 4
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=n) > 0, 1, 0)
    w0 = rng.normal(size=d)
    loss = [rs.Hinge(), rs.SquaredHinge()][seed % 2]
    unc = [rs.Box(0.1), rs.Ball(0.2), None][seed % 3]
    problem = rs.Problem(loss=loss, penalty=rs.L2(0.1), uncertainty=unc, bounds=(w0, w0))
    sol = problem.solve(X, y, solver="robust-dcd", tol=1e-6)
    np.testing.assert_array_equal(sol.w, w0)
    # the best intercept for the fixed w, by a bounded scalar search on the model's objective (convex in b)
    best = minimize_scalar(lambda b: problem.objective(X, y, w0, b), bounds=(-20, 20), method="bounded",
                           options={"xatol": 1e-12})
    assert sol.objective <= best.fun + 1e-7 * max(1.0, best.fun)
    assert sol.objective - best.fun <= sol.gap + 1e-9  # the certified gap bounds the excess
    assert sol.status == "optimal", sol.message
    claimed = re.search(r"relative duality gap (\S+) after (\d+) epochs", sol.message)
    assert claimed is not None and int(claimed.group(2)) > 0, sol.message
    assert float(claimed.group(1)) <= 1e-6 and sol.gap <= 1e-6 * max(1.0, sol.objective)


def test_highs_on_redundant_rows_says_so():
    rng = np.random.default_rng(12)
    X = rng.normal(size=(60, 4))
    y = np.where(X @ rng.normal(size=4) + 0.3 * rng.normal(size=60) > 0, 1, 0)
    A = np.array([[1.0, 1, 0, 0], [3, 3, 0, 0], [0.1, 0.1, 0, 0], [0, 0, 1, 1], [0, 0, 1, 1]])
    rhs = np.array([0.3, 0.9, 0.03, 0.7, 0.7])  # 3 × 0.3 ≠ 0.9 in floating point: the rows disagree by an ulp
    problem = rs.Problem(penalty=rs.L2(0.1), constraints=[LinearConstraint(A, rhs, rhs)])
    reference = problem.solve(X, y, solver="clarabel")
    assert reference.status == "optimal"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rs.ConvergenceWarning)
        try:
            sol = problem.solve(X, y, solver="highs")
        except rs.SolverError as exc:
            message, status = str(exc), "solver_error"
        else:
            message, status = sol.message, sol.status
    if status == "optimal":  # then it is the optimum
        assert abs(sol.objective - reference.objective) <= sol.gap + reference.gap + 1e-8
    else:
        assert "redundant rows" in message and "rows 0, 1, 2; 3, 4" in message, message
        assert "solver='clarabel'" in message


def _replicates():
    rng = np.random.default_rng(0)
    means = rng.normal(size=(20, 3))
    ids = np.repeat(np.arange(20), 3)
    rows = means[ids] + 0.1 * rng.normal(size=(60, 3))
    rows[:, 1] = np.repeat(0.1 + 0.7 * np.arange(20) / 3, 3)  # each subject's dose repeated exactly
    return pd.DataFrame(rows, columns=["age", "dose", "score"]), ids


@pytest.mark.parametrize("kind", ["ellipsoid", "box"])
def test_a_pooled_set_names_the_feature_without_spread(kind):
    frame, ids = _replicates()
    rows = frame.to_numpy()
    means = np.add.reduceat(rows, np.arange(0, 60, 3)) / 3
    spread = np.sqrt(((rows - means[ids]) ** 2).sum(axis=0) / (60 - 20))
    assert 0 < spread[1] < 1e-15  # the subject means leave rounding noise, not spread
    with pytest.raises(ValueError, match=r"feature 1 \('dose'\) has no spread within subjects"):
        rs.from_replicates(frame, ids, kind=kind)
    with pytest.raises(ValueError, match=r"feature 1 has no spread within subjects"):
        rs.from_replicates(rows, ids, kind=kind)
    # with the feature left out, the set is built
    rep = rs.from_replicates(frame[["age", "score"]], ids, kind=kind)
    assert rep.X.shape == (20, 2)


def test_a_per_subject_box_names_the_feature_without_spread():
    frame, ids = _replicates()
    with pytest.raises(ValueError, match=r"subject 0: feature 1 \('dose'\) has no spread over its 3 replicates"):
        rs.from_replicates(frame, ids, kind="box", pooled=False)

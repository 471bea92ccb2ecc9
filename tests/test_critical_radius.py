"""The critical radius and the critical λ1 (``rs.critical_radius``, ``rs.critical_l1``).

Checked against a bisection on "w = 0 is optimal" that judges w = 0 by the certificate alone: a solution with
gap ``g`` lies within ``sqrt(2g/λ2)`` of the optimum (λ2-strong convexity; ``g`` plus the rounding of the two
sums it is the difference of), so ``‖w‖`` above that proves
``w* ≠ 0`` and ``‖w‖`` below it is read as ``w* = 0``; and against closed forms on tiny data.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

import robustsvm as rs
from tests._gbsg2_like import gbsg2_like

L2 = 1e-3  # a small λ2: the optimum grows fast below the critical radius, the certificate's ball stays small


#: the answers tried in turn at a radius until one proves w* ≠ 0 (an interior point is the most accurate here,
#: but ends on a numerical error at some radii; a gap is valid whatever the status)
ATTEMPTS = (("feature-ipm", 1e-13), ("feature-ipm", 1e-12), ("clarabel", 1e-14))


def _certified_nonzero(problem, X, y, radius):
    """Whether a certified solution at ``radius`` proves ``w* ≠ 0``; False when none of the attempts does."""
    for solver, tol in ATTEMPTS:
        with warnings.catch_warnings():  # the judgement reads the certified gap, whatever the status
            warnings.simplefilter("ignore")
            sol = problem.solve(X, y, solver=solver, radius=radius, tol=tol)
        assert np.isfinite(sol.gap) and sol.gap >= 0
        # the gap is a difference of two sums of ~n terms near the objective: a few ulps of it are rounding
        rounding = 64 * np.finfo(float).eps * max(1.0, abs(sol.objective))
        if np.linalg.norm(sol.w) > math.sqrt(2.0 * (sol.gap + rounding) / L2):
            return True
    return False


def _bisect(problem, X, y, rtol=1e-7):
    lo, hi = 0.0, 1.0
    while _certified_nonzero(problem, X, y, hi):
        lo, hi = hi, 2.0 * hi
    while hi - lo > rtol * hi:
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if _certified_nonzero(problem, X, y, mid) else (lo, mid)
    return lo, hi


@pytest.fixture(scope="module")
def gbsg2():
    X, y, names = gbsg2_like()
    signs = {"pnodes": +1, "age": -1, "horTh=yes": -1}
    return X, y, names, signs


@pytest.mark.parametrize("unc", [rs.Box(0.1), rs.Ball(0.1, p=2),
                                 rs.Ellipsoid(shape=np.diag(np.linspace(0.5, 2.0, 13)), radius=0.1)],
                         ids=["box", "ball2", "ellipsoid"])
def test_critical_radius_equals_a_certified_bisection(gbsg2, unc):
    X, y, names, signs = gbsg2
    problem = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(L2), signs=signs, uncertainty=unc)
    Xf = pd.DataFrame(X, columns=names)
    rc = rs.critical_radius(problem, Xf, y)
    lo, hi = _bisect(problem, Xf, y)
    assert 0 < rc < math.inf
    assert lo * (1 - 1e-6) <= rc <= hi * (1 + 1e-6)
    assert abs(rc - 0.5 * (lo + hi)) <= 1e-6 * rc


def test_critical_radius_does_not_depend_on_l2(gbsg2):
    X, y, names, signs = gbsg2
    Xf = pd.DataFrame(X, columns=names)
    values = [rs.critical_radius(rs.Problem(penalty=rs.L2(l2), signs=signs, uncertainty=rs.Box(0.1)), Xf, y)
              for l2 in (1e-3, 1.0)]
    assert values[0] == pytest.approx(values[1], rel=1e-7)
    # with no L2 at all w = 0 is optimal above the critical radius too: the certified objective equals the
    # constant classifier's (no point does better)
    problem = rs.Problem(penalty=rs.L1(1e-4), signs=signs, uncertainty=rs.Box(0.1))
    rc = rs.critical_radius(problem, Xf, y)
    sol = problem.solve(Xf, y, solver="clarabel", radius=1.01 * rc, tol=1e-10)
    constant = problem.objective(Xf, y, np.zeros(13), 1.0)  # hinge, 245 > 101 positives: b = 1
    assert constant - sol.objective <= sol.gap + 1e-12


def test_closed_form_one_feature_free_intercept():
    # two positives (x = 1, 3), one negative (x = 0), mean hinge, free intercept: b = 1, the positives share
    # α1 + α2 = 1, the negative has α = 1; v = (α1 + 3α2 − 0)/3 and a(α) = (α1 + α2 + 1)/3 = 2/3, so
    # ρ = min |α1 + 3α2| / 2 = 1/2 (at α1 = 1)
    X, y = np.array([[1.0], [3.0], [0.0]]), np.array([1, 1, -1])
    assert rs.critical_radius(rs.Problem(uncertainty=rs.Box(1.0)), X, y) == pytest.approx(0.5, rel=1e-7)
    # the negative at x = 2 lies inside the positives' hull: w = 0 already optimal
    X2 = np.array([[1.0], [3.0], [2.0]])
    assert rs.critical_radius(rs.Problem(uncertainty=rs.Box(1.0)), X2, y) == pytest.approx(0.0, abs=1e-8)
    # L1 takes λ1 off the numerator: ρ = (1/3 − λ1)·3/2 with λ1 = 0.1
    assert rs.critical_radius(rs.Problem(penalty=rs.L2(1.0) + rs.L1(0.1), uncertainty=rs.Box(1.0)), X, y) == (
        pytest.approx((1 / 3 - 0.1) * 1.5, rel=1e-7))
    # a sign that excludes the direction the data push (w ≤ 0 while v > 0): the constant classifier is optimal
    assert rs.critical_radius(rs.Problem(signs=[-1], uncertainty=rs.Box(1.0)), X, y) == pytest.approx(0, abs=1e-8)
    # and the critical λ1 is |v| = 1/3 at the best α (no set)
    assert rs.critical_l1(rs.Problem(), X, y) == pytest.approx(1 / 3, rel=1e-7)


def test_closed_form_two_features_ball_without_intercept():
    # no intercept: α = 1 for every sample; v = Σ c_i y_i x_i, a = Σ c_i s_i; Ball(2): ρ = ‖v‖₂ / a
    rng = np.random.default_rng(3)
    X, y = rng.normal(size=(7, 2)), np.array([1, 1, 1, -1, -1, 1, -1])
    scale = rng.uniform(0.5, 2.0, size=7)
    problem = rs.Problem(intercept=False, uncertainty=rs.Ball(scale))
    v = (y[:, None] * X).mean(axis=0)
    a = np.mean(scale / scale.max())
    assert rs.critical_radius(problem, X, y) == pytest.approx(np.linalg.norm(v) / a, rel=1e-7)
    # the squared hinge: α = 2, so v and a both double and ρ is the same
    sq = rs.Problem(loss=rs.SquaredHinge(), intercept=False, uncertainty=rs.Ball(scale))
    assert rs.critical_radius(sq, X, y) == pytest.approx(np.linalg.norm(v) / a, rel=1e-7)


def test_a_set_that_differs_between_labels_is_bisected():
    # a polyhedron that is not symmetric: V = [0, 1] in one dimension; no intercept, α = 1:
    # v = Σ c_i y_i x_i ∈ ρ Σ c_i (−y_i V) = ρ [−C+, C−]
    X, y = np.array([[2.0], [1.0], [0.5]]), np.array([1, 1, -1])
    V = rs.Polyhedron(G=np.array([[1.0], [-1.0]]), h=np.array([1.0, 0.0]))
    v = (2.0 + 1.0 - 0.5) / 3
    rc = rs.critical_radius(rs.Problem(intercept=False, uncertainty=V), X, y)
    assert rc == pytest.approx(v / (1 / 3), rel=1e-7)  # v > 0 is covered by the negatives' side C− = 1/3


def test_refusals():
    X, y = np.array([[1.0], [3.0], [0.0]]), np.array([1, 1, -1])
    with pytest.raises(ValueError, match="uncertainty set"):
        rs.critical_radius(rs.Problem(), X, y)
    with pytest.raises(ValueError, match="hinge"):
        rs.critical_radius(rs.Problem(loss=rs.HardMargin(), penalty=rs.L2(1.0), uncertainty=rs.Box(1.0)), X, y)
    with pytest.raises(ValueError, match="not feasible"):
        from scipy.optimize import Bounds

        rs.critical_radius(rs.Problem(bounds=Bounds([0.5], [2.0]), uncertainty=rs.Box(1.0)), X, y)


def _zero_is_optimal(problem, X, y, radius, l2):
    """The certified judgement of the bisection on tiny data: ``‖w‖`` within the certificate's ball of 0."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rs.DegenerateSolutionWarning)
        sol = problem.solve(X, y, solver="clarabel", radius=radius, tol=1e-12)
    rounding = 64 * np.finfo(float).eps * max(1.0, abs(sol.objective))
    return bool(np.linalg.norm(sol.w) <= math.sqrt(2.0 * (sol.gap + rounding) / l2))


@pytest.mark.parametrize(("loss", "intercept", "expected"), [
    # hinge, ridge μ = 0.1: (C+ − C−)/μ > 1 so b = 1; the positives share α1 + α2 = 3(μ + 1/3) = 1.3, the
    # negative α = 1; ρ = min(α1 + 3α2)/(α1 + α2 + 1) = 1.9/2.3 at α1 = 1, α2 = 0.3
    (rs.Hinge(), rs.L2(0.1), 1.9 / 2.3),
    # squared hinge, free: b = (C+ − C−)/C = 1/3, α+ = 2(1 − 1/3) = 4/3, α− = 8/3; v = 16/9, a = 16/9: ρ = 1
    (rs.SquaredHinge(), True, 1.0),
    # hinge without intercept: α = 1, v = (1 + 3 − 0)/3, a = 1: ρ = 4/3
    (rs.Hinge(), False, 4 / 3),
])
def test_closed_forms_of_the_intercepts_and_losses(loss, intercept, expected):
    X, y = np.array([[1.0], [3.0], [0.0]]), np.array([1, 1, -1])
    problem = rs.Problem(loss=loss, penalty=rs.L2(1e-3), intercept=intercept, uncertainty=rs.Box(1.0))
    rc = rs.critical_radius(problem, X, y)
    assert rc == pytest.approx(expected, rel=1e-7)
    # the solver agrees on each side (judged by the certificate alone)
    assert _zero_is_optimal(problem, X, y, 1.001 * rc, 1e-3)
    assert not _zero_is_optimal(problem, X, y, 0.999 * rc, 1e-3)

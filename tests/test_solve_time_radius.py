"""A radius given at solve time is the radius every later reader of the solution sees.

``solve(..., radius=r)`` and ``RobustSVC.fit(..., radius=r)`` replace the
sets' own radii for that solve; ``robust_check``, the stored JSON, the repr and
``validate`` must then describe the model that was solved, not the set the
user built with another radius.
"""

from __future__ import annotations

import numpy as np
import pytest

import robustsvm as rs
from robustsvm.conic import ConicProgram
from robustsvm.uncertainty import resolve_uncertainty, sample_radii

from .conftest import make_classification, standardized


def _ball_margins(X, y01, w, b, radius):
    """``y_i(x_i·w + b) − r_i ‖w‖₂`` written out: the robust margins of a 2-ball of radius r_i."""
    y = np.where(y01 == 1, 1.0, -1.0)
    return y * (X @ w + b) - np.asarray(radius) * np.linalg.norm(w)


def _hinge_ball_objective(X, y01, w, b, lam, radius):
    return 0.5 * lam * w @ w + np.mean(np.maximum(0.0, 1.0 - _ball_margins(X, y01, w, b, radius)))


@pytest.fixture(scope="module")
def wdbc():
    return standardized("wdbc")


@pytest.mark.parametrize("radius", [0.3, "per-sample"])
def test_solve_radius_reaches_robust_check_json_repr_and_validate(tmp_path, wdbc, radius):
    X, y = wdbc
    r = np.linspace(0.1, 0.5, X.shape[0]) if radius == "per-sample" else radius
    prob = rs.Problem(penalty=rs.L2(1e-2), uncertainty=rs.Ball(0.0))
    sol = prob.solve(X, y, radius=r)
    assert prob.uncertainty.radius == 0.0  # the user's set is not changed
    # the objective is the one of the radius solved with (closed-form support of the 2-ball)
    assert sol.objective == pytest.approx(_hinge_ball_objective(X, y, sol.w, sol.b, 1e-2, r), rel=1e-10)
    # robust_check: its robust margins are those of radius r, not of radius 0
    check = sol.robust_check(X, y)
    np.testing.assert_allclose(check.robust_margins, _ball_margins(X, y, sol.w, sol.b, r), atol=1e-9)
    assert check.holds
    # the stored file carries r, reads back, and validates untouched
    back = rs.Solution.from_json(sol.to_json(tmp_path / "r.json", X, y))
    np.testing.assert_array_equal(np.broadcast_to(back.problem.uncertainty.radius, X.shape[0]),
                                  np.broadcast_to(r, X.shape[0]))
    report = rs.validate(back, X, y)
    assert report.ok, str(report)
    assert report.objective_recomputed == pytest.approx(
        _hinge_ball_objective(X, y, back.w, back.b, 1e-2, r), rel=1e-10)
    # the repr names the radius solved with (summarized when per sample)
    text = repr(sol.problem)
    if radius == "per-sample":
        assert f"<{X.shape[0]} per-sample radii in [0.1, 0.5]>" in text
    else:
        assert "Ball(radius=0.3" in text


def test_estimator_fit_radius_reaches_the_solution(tmp_path, wdbc):
    X, y = wdbc
    est = rs.RobustSVC(l2=1e-2, uncertainty=rs.Ball(0.0)).fit(X, y, radius=0.2)
    sol = est.solution_
    np.testing.assert_allclose(sol.robust_check(X, y).robust_margins,
                               _ball_margins(X, y, sol.w, sol.b, 0.2), atol=1e-9)
    assert rs.validate(rs.Solution.from_json(sol.to_json(tmp_path / "e.json", X, y)), X, y).ok
    assert est.uncertainty.radius == 0.0


def test_per_sample_sets_with_a_solve_radius_keep_their_sets():
    X, y = make_classification(24, 3, seed=2)
    sets = [rs.Box(0.0) if i % 2 else rs.Ball(0.0) for i in range(24)]
    r = np.linspace(0.0, 0.3, 24)
    sol = rs.Problem(penalty=rs.L2(0.1), uncertainty=sets).solve(X, y, radius=r)
    solved = sol.problem.uncertainty
    assert [type(s) for s in solved] == [type(s) for s in sets]
    np.testing.assert_array_equal([s.radius for s in solved], r)
    # independent margins: Box support is ‖w‖₁, Ball(2) support is ‖w‖₂
    Y = np.where(y == 1, 1.0, -1.0)
    sigma = np.where(np.arange(24) % 2, np.abs(sol.w).sum(), np.linalg.norm(sol.w))
    np.testing.assert_allclose(sol.robust_check(X, y).robust_margins, Y * (X @ sol.w + sol.b) - r * sigma,
                               atol=1e-9)


def test_without_a_solve_radius_the_solution_keeps_the_users_problem():
    X, y = make_classification(20, 2, seed=1)
    prob = rs.Problem(penalty=rs.L2(0.1), uncertainty=rs.Box(0.1))
    assert prob.solve(X, y).problem is prob
    assert prob.solve(X, y, radius=0.1).problem is prob  # the same radius: nothing to record


def test_one_validation_of_a_radius():
    """Every way a radius reaches a model reports the same error, from one function."""
    X, y = make_classification(10, 2, seed=0)
    prob = rs.Problem(penalty=rs.L2(0.1), uncertainty=rs.Box(0.1))
    for bad, kind, match in ((-1.0, ValueError, "non-negative"), (np.full(3, 0.1), ValueError, "3 values"),
                             ("big", TypeError, "real number"), (np.inf, ValueError, "finite")):
        with pytest.raises(kind, match=match):
            sample_radii(bad, 10)
        with pytest.raises(kind, match=match):
            prob.solve(X, y, radius=bad)
        with pytest.raises(kind, match=match):
            resolve_uncertainty(prob.uncertainty, 10, 2, radius=bad)
        with pytest.raises(kind, match=match):
            prob.normalize(X, y).with_values(radius=bad)
    with pytest.raises(ValueError, match="no uncertainty"):
        rs.Problem(penalty=rs.L2(0.1)).solve(X, y, radius=0.1)


def test_compiled_program_model_follows_set_values():
    """A compiled program's model (what its certificate reads) carries the parameters it solves with."""
    X, y = make_classification(30, 3, seed=4)
    prob = rs.Problem(penalty=rs.L2(0.1), uncertainty=rs.Box(0.05))
    program = ConicProgram(prob.normalize(X, y))
    program.set_values(radius=0.2, l2=0.3)
    np.testing.assert_array_equal(program.model.layout.radius, np.full(30, 0.2))
    assert program.model.l2 == 0.3
    res = program.solve()
    direct = rs.Problem(penalty=rs.L2(0.3), uncertainty=rs.Box(0.2)).solve(X, y)
    # same optimum as the model written with those values (both certified by the package)
    assert rs.Problem(penalty=rs.L2(0.3), uncertainty=rs.Box(0.2)).objective(X, y, res.w, res.b) == pytest.approx(
        direct.objective, abs=10 * max(direct.gap, 1e-7))
    with pytest.raises(ValueError, match="radius_per_sample"):
        program.set_values(radius=np.linspace(0, 1, 30))


@pytest.mark.parametrize("make", [
    lambda r: rs.Ball(r), lambda r: rs.Box(r, widths=[1.0, 2.0]), lambda r: rs.Ball(r, p=np.inf),
    lambda r: rs.Intersection(rs.Box(0.5), rs.Ball(1.0), radius=r),
])
def test_repr_summarizes_per_sample_radii(make):
    r = np.linspace(0.05, 0.75, 5000)
    text = repr(rs.Problem(uncertainty=make(r)))
    assert "<5000 per-sample radii in [0.05, 0.75]>" in text
    assert len(text) < 300  # not one number per sample
    assert repr(make(0.25)).count("0.25") == 1  # a scalar radius is printed as it is

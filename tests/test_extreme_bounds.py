"""Bounds of ±1e6 … ±1e15 (effectively free) give the unbounded model's answer, or an honest status.

Clarabel used to raise ``SolverError`` or call such a feasible model "infeasible". A side no minimizer can
reach (``|w_h| ≤ √(2 P(0)/λ2)``, from ``P(w*) ≤ P(0)``) is now left out before the solver sees it; the model
without the bounds is the reference, each solve certified by the package's own gap.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import robustsvm as rs
from robustsvm.conic import ConicProgram
from robustsvm.result import Result

SETS = {"none": None, "box": rs.Box(0.1), "ball-inf": rs.Ball(0.1, p=np.inf)}
LOSSES = {"hinge": rs.Hinge(), "squared": rs.SquaredHinge()}


def random_model(seed: int):
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(20, 60)), int(rng.integers(2, 8))
    X = rng.normal(size=(n, d))
    y = np.where(X @ rng.normal(size=d) + rng.normal(size=n) > 0, 1, 0)
    return X, y


@pytest.mark.parametrize(("exponent", "loss", "uncertainty"),
                         list(itertools.product((6, 9, 12, 15), sorted(LOSSES), sorted(SETS))))
def test_huge_bounds_give_the_unbounded_optimum(exponent, loss, uncertainty):
    seed = 100 * exponent + 10 * sorted(LOSSES).index(loss) + sorted(SETS).index(uncertainty)
    X, y = random_model(seed)
    d = X.shape[1]
    big = 10.0 ** exponent
    rng = np.random.default_rng(seed + 1)
    lower = -big * rng.uniform(1, 3, d)
    upper = big * rng.uniform(1, 3, d)
    kwargs = {"loss": LOSSES[loss], "penalty": rs.L2(0.1), "uncertainty": SETS[uncertainty]}
    free = rs.Problem(**kwargs).solve(X, y, solver="clarabel")
    bounded = rs.Problem(**kwargs, bounds=(lower, upper)).solve(X, y, solver="clarabel")
    assert free.status == "optimal"
    assert bounded.status == "optimal", bounded.message
    assert bounded.violation == 0.0
    # both gaps are the package's own bounds on objective − optimum, and the optima coincide
    assert abs(bounded.objective - free.objective) <= bounded.gap + free.gap + 1e-9 * max(1.0, free.objective)
    assert bounded.gap <= 1e-6 * max(1.0, bounded.objective)


def test_a_bound_within_reach_still_binds():
    X, y = random_model(7)
    free = rs.Problem(penalty=rs.L2(0.1)).solve(X, y)
    h = int(np.argmax(np.abs(free.w)))
    cap = 0.5 * abs(free.w[h])
    upper = np.full(X.shape[1], 1e12)
    lower = -upper.copy()
    if free.w[h] > 0:
        upper[h] = cap
    else:
        lower[h] = -cap
    sol = rs.Problem(penalty=rs.L2(0.1), bounds=(lower, upper)).solve(X, y)
    assert sol.status == "optimal"
    assert abs(sol.w[h]) == pytest.approx(cap, rel=1e-6)  # the bound binds
    assert sol.objective > free.objective + free.gap


def test_a_compiled_program_keeps_a_bound_that_a_smaller_l2_lets_bind():
    """A side left out at λ2 = 100 (out of reach) is put back when ``set_values`` lowers λ2 to 1e-3."""
    X, y = random_model(11)
    loose = rs.Problem(penalty=rs.L2(1e-3)).solve(X, y)
    h = int(np.argmax(np.abs(loose.w)))
    cap = 0.5 * abs(loose.w[h])  # binds at λ2 = 1e-3, out of reach at λ2 = 100 (|w_h| ≤ √(2/100) < cap)
    assert cap > 2 * np.sqrt(2 / 100)
    bounds = {h: (-cap, cap)}
    prog = rs.Problem(penalty=rs.L2(100.0), bounds=bounds).compile(X, y)
    assert prog.bounds_dropped_beyond == pytest.approx(cap)
    prog.set_values(l2=1e-3)
    res = prog.solve("CLARABEL")
    reference = rs.Problem(penalty=rs.L2(1e-3), bounds=bounds).solve(X, y)
    assert abs(res.w[h]) <= cap * (1 + 1e-7)
    np.testing.assert_allclose(res.w, reference.w, atol=1e-5)


def test_a_false_infeasibility_claim_is_overturned(monkeypatch):
    """A solver that calls a feasible model infeasible is not believed: a point of W overturns it."""
    X, y = random_model(3)
    original = ConicProgram.solve

    def lying(self, solver="CLARABEL", **kwargs):
        if solver.upper() == "CLARABEL":
            return Result(w=None, b=0.0, status="infeasible", message="CLARABEL status PrimalInfeasible")
        return original(self, solver, **kwargs)

    monkeypatch.setattr(ConicProgram, "solve", lying)
    problem = rs.Problem(loss=rs.SquaredHinge(), penalty=rs.L2(0.1), bounds=(-1e14, 1e14))
    sol = problem.solve(X, y, solver="clarabel", tol=1e-9)
    assert "reported the model infeasible" in sol.message and "overturned" in sol.message
    monkeypatch.setattr(ConicProgram, "solve", original)
    free = rs.Problem(loss=rs.SquaredHinge(), penalty=rs.L2(0.1)).solve(X, y)
    assert sol.violation == 0.0
    assert abs(sol.objective - free.objective) <= sol.gap + free.gap + 1e-6

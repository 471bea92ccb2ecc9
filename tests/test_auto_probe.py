"""``"auto"``'s bounded first-order attempt and the ``time_limit`` of the dual coordinate methods.

The attempt (:func:`robustsvm.backends.cost.probe`) runs a first-order backend for a fifth of the chosen
backend's predicted time: its answer is kept only when the package certifies it; otherwise the chosen backend
answers. Every answer is checked against a Clarabel reference through the package's own certificate.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import robustsvm as rs
from robustsvm import solve_path
from robustsvm.backends import cost

from .conftest import standardized


@pytest.fixture(scope="module")
def wdbc():
    X, y = standardized("wdbc")
    return X, np.where(y == 1, 1.0, -1.0)


def _reference(problem, X, y):
    ref = problem.solve(X, y, solver="clarabel", tol=1e-9)
    return ref.objective - ref.gap  # a proved lower bound on the optimum


def _prediction(name, seconds, per_epoch=None, epochs=10.0):
    terms = {} if per_epoch is None else {"per_epoch": per_epoch, "own": seconds}
    return cost.Prediction(name, seconds, epochs, terms=terms)


def test_the_probe_rule():
    shape = cost.DataShape(20000, 400, 20000 * 400)
    x = cost.cost_inputs(rs.Problem(penalty=rs.L2(1e-3), uncertainty=rs.Box(0.1)), shape)
    # robust-dcd's 800 predicted epochs take 8 s, but it is charged a likely fall-back (30 s): attempted first
    slow_ipm = [_prediction("feature-ipm", 10.0), _prediction("robust-dcd", 30.0, 0.01, epochs=800.0)]
    probe = cost.probe(slow_ipm, x)
    assert probe.backend == "robust-dcd" and probe.chosen == "feature-ipm"
    assert probe.time_limit == pytest.approx(cost.PROBE_FRACTION * 10.0)
    # epochs that take the ratio's limit still are attempted; beyond it, not
    limit = cost.PROBE_MAX_OWN_RATIO * 10.0 / 0.01
    assert cost.probe([slow_ipm[0], _prediction("robust-dcd", 30.0, 0.01, epochs=limit)], x) is not None
    assert cost.probe([slow_ipm[0], _prediction("robust-dcd", 30.0, 0.01, epochs=1.01 * limit)], x) is None
    # of two first-order backends, the one whose predicted epochs take least (not the lower capped time)
    both = [slow_ipm[0], _prediction("robust-dcd", 30.0, 0.00077, epochs=1830.0),
            _prediction("dcd", 31.0, 0.00088, epochs=545.0)]
    assert cost.probe(both, x).backend == "dcd"
    # no attempt: a first-order choice, a quick choice, too little room for epochs, a grid, no first-order candidate
    assert cost.probe([_prediction("robust-dcd", 3.0, 0.01), _prediction("feature-ipm", 10.0)], x) is None
    assert cost.probe([_prediction("feature-ipm", 0.5), _prediction("robust-dcd", 3.0, 0.01)], x) is None
    assert cost.probe([_prediction("feature-ipm", 10.0), _prediction("robust-dcd", 30.0, 1.0, epochs=8.0)], x) is None
    grid = cost.cost_inputs(rs.Problem(penalty=rs.L2(1e-3)), shape, points=5)
    assert cost.probe(slow_ipm, grid) is None
    assert cost.probe([_prediction("clarabel", 10.0)], x) is None


@pytest.mark.parametrize("solver", ["dcd", "robust-dcd"])
def test_a_time_limit_stops_with_that_status_and_a_valid_gap(wdbc, solver):
    X, y = wdbc
    V = None if solver == "dcd" else rs.Ball(0.1)
    problem = rs.Problem(penalty=rs.L2(1e-4), uncertainty=V)
    low = _reference(problem, X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = problem.solve(X, y, solver=solver, tol=1e-12, max_iter=100000, time_limit=1e-9)
    assert sol.status == "time_limit"
    assert sol.iterations == 1  # one epoch, then the certificate
    assert sol.objective - low <= sol.gap + 1e-9  # the gap still bounds the distance to the optimum
    assert sol.gap > 1e-6


def _forced_probe(monkeypatch, time_limit):
    """``auto`` chooses feature-ipm and makes an attempt with robust-dcd of ``time_limit`` seconds."""
    monkeypatch.setattr(solve_path, "choose_backend", lambda problem, data, distributed=None: "feature-ipm")
    trial = cost.Probe("robust-dcd", time_limit, "feature-ipm", 10.0)
    monkeypatch.setattr(solve_path, "auto_probe", lambda problem, data, predictions=None: trial)


def test_a_certified_attempt_is_the_answer(wdbc, monkeypatch):
    X, y = wdbc
    problem = rs.Problem(penalty=rs.L2(1e-2), uncertainty=rs.Box(0.05))
    _forced_probe(monkeypatch, 60.0)
    sol = problem.solve(X, y, solver="auto")
    assert sol.solver == "robust-dcd" and sol.status == "optimal"
    assert sol.auto_probe.status == "optimal"
    assert sol.auto_probe.instead_of == "feature-ipm"
    assert sol.objective - _reference(problem, X, y) <= sol.gap + 1e-9


def test_an_attempt_out_of_time_leaves_the_answer_to_the_choice(wdbc, monkeypatch):
    X, y = wdbc
    problem = rs.Problem(penalty=rs.L2(1e-4), uncertainty=rs.Box(0.05))
    _forced_probe(monkeypatch, 1e-9)
    sol = problem.solve(X, y, solver="auto")
    assert sol.solver == "feature-ipm" and sol.status == "optimal"
    assert sol.auto_probe.solver == "robust-dcd"
    assert sol.auto_probe.status == "time_limit"
    assert sol.objective - _reference(problem, X, y) <= sol.gap + 1e-9
    # a caller's own iteration or time budget is the caller's: no attempt then
    sol = problem.solve(X, y, solver="auto", max_iter=500)
    assert sol.auto_probe is None

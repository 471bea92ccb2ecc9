"""``"auto"``'s order of attempts: the fall-back chain, the attempt before a Clarabel choice, the wide form of
feature-ipm's cost and the predictions made once per solve.

Every answer is checked against a Clarabel reference through the package's own certificate (a proved lower
bound on the optimum); nothing is timed.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

import robustsvm as rs
from robustsvm import solve_path
from robustsvm.backends import cost, registry

from .conftest import standardized


@pytest.fixture(scope="module")
def wdbc():
    X, y = standardized("wdbc")
    return X, np.where(y == 1, 1.0, -1.0)


def _lower_bound(problem, X, y) -> float:
    ref = problem.solve(X, y, solver="clarabel", tol=1e-9)
    return ref.objective - ref.gap


def _pred(name: str, seconds: float, falls_back: bool = False, own: float | None = None) -> cost.Prediction:
    terms = {"own": seconds if own is None else own}
    return cost.Prediction(name, seconds, 10.0, falls_back=falls_back, terms=terms)


def test_the_fall_back_order():
    """The candidates not tried yet, expected to certify and predicted faster than Clarabel, by their own
    predicted time; Clarabel last."""
    preds = [_pred("robust-dcd", 0.1), _pred("feature-ipm", 0.3), _pred("dcd", 0.2), _pred("clarabel", 1.0)]
    assert cost.fallback_order(preds, ("robust-dcd",)) == ["dcd", "feature-ipm", "clarabel"]
    assert cost.fallback_order(preds, ("robust-dcd", "dcd")) == ["feature-ipm", "clarabel"]
    # likely to stop short: not a fall-back; predicted slower than Clarabel: Clarabel comes first, and last
    preds = [_pred("feature-ipm", 0.3), _pred("robust-dcd", 5.0, falls_back=True, own=0.2),
             _pred("dcd", 3.0), _pred("clarabel", 2.0)]
    assert cost.fallback_order(preds, ("feature-ipm",)) == ["clarabel"]
    assert cost.fallback_order([_pred("dcd", 0.1)], ("dcd",)) == ["clarabel"]  # Clarabel did not accept: still last


def _raising(name: str) -> registry.Backend:
    def solve(model, **options):
        raise FloatingPointError("overflow in the data")

    return registry.Backend(name=name, solve=solve, needs=registry.Needs(sets="any"), summary="raises")


def test_a_first_backend_that_stops_short_hands_over_to_the_next_one(wdbc, monkeypatch):
    """robust-dcd stopped after one epoch, the next backend raises, the one after certifies: every attempt is
    recorded in order, the first also as ``auto_fallback``; Clarabel is not reached."""
    X, y = wdbc
    problem = rs.Problem(penalty=rs.L2(1e-2), uncertainty=rs.Box(0.05))
    low = _lower_bound(problem, X, y)
    broken = registry.register(_raising("raises-on-these-data"))
    try:
        monkeypatch.setattr(solve_path, "choose_backend", lambda problem, data, distributed=None: "robust-dcd")
        monkeypatch.setattr(cost, "fallback_order",
                            lambda preds, tried=(): ["raises-on-these-data", "feature-ipm", "clarabel"])
        sol = problem.solve(X, y, solver="auto", max_iter=1)
    finally:
        registry.unregister(broken.name)
    assert sol.solver == "feature-ipm" and sol.status == "optimal"
    attempts = sol.auto_attempts
    assert [a.solver for a in attempts] == ["robust-dcd", "raises-on-these-data"]
    assert attempts[0].status == "max_iter" and attempts[0].iterations == 1
    assert attempts[1].status.startswith("error") and "overflow" in attempts[1].status
    assert sol.auto_fallback == attempts[0]
    assert sol.objective - low <= sol.gap + 1e-9


def test_the_real_order_skips_clarabel_where_feature_ipm_certifies(wdbc, monkeypatch):
    """The grid's 1,000 × 300 Ball case in small: robust-dcd stops short, feature-ipm answers, not Clarabel."""
    X, y = wdbc
    problem = rs.Problem(penalty=rs.L2(1e-2), uncertainty=rs.Ball(0.1))
    monkeypatch.setattr(solve_path, "choose_backend", lambda problem, data, distributed=None: "robust-dcd")
    sol = problem.solve(X, y, solver="auto", max_iter=2)
    assert sol.solver == "feature-ipm" and sol.status == "optimal"
    assert [a.solver for a in sol.auto_attempts] == ["robust-dcd"]
    assert sol.objective - _lower_bound(problem, X, y) <= sol.gap + 1e-9


def test_a_clarabel_choice_is_preceded_by_the_bounded_attempt(wdbc, monkeypatch):
    X, y = wdbc
    problem = rs.Problem(penalty=rs.L2(1e-2), uncertainty=rs.Box(0.05))
    trial = cost.Probe("robust-dcd", 60.0, "clarabel", 300.0)
    monkeypatch.setattr(solve_path, "choose_backend", lambda problem, data, distributed=None: "clarabel")
    monkeypatch.setattr(solve_path, "auto_probe", lambda problem, data, predictions=None: trial)
    sol = problem.solve(X, y, solver="auto")
    assert sol.solver == "robust-dcd" and sol.status == "optimal"
    assert sol.auto_probe.instead_of == "clarabel"
    assert sol.objective - _lower_bound(problem, X, y) <= sol.gap + 1e-9
    # out of time: Clarabel answers, the attempt recorded
    monkeypatch.setattr(solve_path, "auto_probe",
                        lambda problem, data, predictions=None: cost.Probe("robust-dcd", 1e-9, "clarabel", 300.0))
    sol = problem.solve(X, y, solver="auto")
    assert sol.solver == "clarabel" and sol.auto_attempts[0].status == "time_limit"


def test_an_auto_solve_costs_the_candidates_once(wdbc, monkeypatch):
    """The choice, the attempt's plan and the fall-back order read the same predictions (the overhead path)."""
    X, y = wdbc
    problem = rs.Problem(penalty=rs.L2(1e-2), uncertainty=rs.Box(0.05))
    calls = []
    original = cost.predict

    def counting(name, x, table=None):
        calls.append(name)
        return original(name, x, table)

    monkeypatch.setattr(cost, "predict", counting)
    cost.reload_constants()
    monkeypatch.setattr(solve_path, "choose_backend",  # a second-order choice: the attempt is planned too
                        lambda problem, data, distributed=None: (solve_path.auto_predictions(problem, data),
                                                                 "feature-ipm")[1])
    sol = problem.solve(X, y, solver="auto", max_iter=1)  # stops short: the fall-back order is read as well
    assert sol.auto_attempts
    assert sorted(calls) == sorted(solve_path._accepting(cost.CANDIDATES, problem))


def test_the_wide_form_is_used_only_when_feature_ipm_declares_it(monkeypatch):
    problem = rs.Problem(penalty=rs.L2(1e-3))
    shape = cost.DataShape(n=1000, d=3000, nnz=3_000_000)
    module = sys.modules[registry.get_backend("feature-ipm").solve.__module__]
    monkeypatch.delattr(module, "wide_path", raising=False)
    assert not cost.wide_path_available()
    dense = cost.predict("feature-ipm", cost.cost_inputs(problem, shape))
    assert dense.terms["form"] == "dense"
    monkeypatch.setattr(module, "wide_path", True, raising=False)
    assert cost.wide_path_available()
    x = cost.cost_inputs(problem, shape)
    assert x.wide
    wide = cost.predict("feature-ipm", x)
    assert wide.terms["form"] == "wide" and wide.seconds < dense.seconds  # the n × n system: 1,000 against 6,002
    tall = cost.cost_inputs(problem, cost.DataShape(n=3000, d=1000, nnz=3_000_000))
    assert not tall.wide and cost.predict("feature-ipm", tall).terms["form"] == "dense"
    ellipsoid = rs.Problem(penalty=rs.L2(1e-3), uncertainty=rs.Ellipsoid(np.eye(3000), 0.1))
    assert not cost.cost_inputs(ellipsoid, shape).wide  # its cone term keeps feature-ipm on the dense path
    narrow = cost.cost_inputs(problem, cost.DataShape(n=20, d=50, nnz=1000))
    assert not narrow.wide  # below 64 features the dense system is kept


@pytest.mark.parametrize(("n", "d", "lam_n", "V", "expected"), [
    (20000, 400, 1.0, rs.Box(0.05), {"feature-ipm"}),     # tall, noisy, robust: the interior point
    (1000, 300, 1.0, None, {"dcd", "feature-ipm"}),        # nominal dense: both certify within 1.6x of each other
    (2000, 100_000, 1.0, None, {"dcd", "robust-dcd"}),     # wide sparse nominal
    (1000, 3000, 10.0, rs.Ball(0.2), {"robust-dcd"}),
])
def test_the_choice_on_representative_shapes(n, d, lam_n, V, expected):
    problem = rs.Problem(penalty=rs.L2(lam_n / n), uncertainty=V)
    sparse = d > 10 * n
    shape = cost.DataShape(n=n, d=d, nnz=50 * n if sparse else n * d, sparse=sparse)
    assert solve_path.choose_backend(problem, shape) in expected


def test_a_wide_dense_nominal_model_is_answered_by_a_first_order_method_first():
    """1,000 × 3,000 dense: whatever the fit predicts for the epochs there (few cells of that shape), either a
    first-order backend is chosen or it is tried first, within a bounded time, before the slower choice."""
    problem = rs.Problem(penalty=rs.L2(1e-3))
    shape = cost.DataShape(n=1000, d=3000, nnz=3_000_000)
    chosen = solve_path.choose_backend(problem, shape)
    if chosen not in cost.FIRST_ORDER:
        trial = solve_path.auto_probe(problem, shape)
        assert trial is not None and trial.backend in cost.FIRST_ORDER and trial.chosen == chosen
        assert 0 < trial.time_limit <= cost.PROBE_FRACTION * trial.chosen_seconds
        assert trial.epochs >= cost.PROBE_MIN_EPOCHS

"""``"auto"``'s bounded first-order attempt and the ``time_limit`` of the dual coordinate methods.

The probe (:func:`robustsvm.backends.cost.probe`) runs a first-order backend for the epochs that take a tenth of
the chosen backend's predicted time: its answer is kept only when the package certifies it; otherwise the decay
of its certified gap decides whether it is continued or the chosen backend answers
(:func:`robustsvm.backends.cost.probe_forecast`). Every answer is checked against a Clarabel reference or a
second backend through the package's own certificate.
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
    # robust-dcd's 800 predicted epochs take 8 s, but it is charged a likely fall-back (30 s): probed first, for
    # the epochs that take PROBE_FRACTION of the choice's predicted time at its predicted cost per epoch
    slow_ipm = [_prediction("feature-ipm", 10.0), _prediction("robust-dcd", 30.0, 0.01, epochs=800.0)]
    probe = cost.probe(slow_ipm, x)
    assert probe.backend == "robust-dcd" and probe.chosen == "feature-ipm"
    assert probe.epochs == int(cost.PROBE_FRACTION * 10.0 / max(0.01, cost.PROBE_EPOCH_SECONDS_PER_NNZ * shape.nnz))
    assert probe.time_limit == pytest.approx(cost.PROBE_FRACTION * 10.0)
    # epochs that take the ratio's limit still are probed; beyond it, not
    limit = cost.PROBE_MAX_OWN_RATIO * 10.0 / 0.01
    assert cost.probe([slow_ipm[0], _prediction("robust-dcd", 30.0, 0.01, epochs=limit)], x) is not None
    assert cost.probe([slow_ipm[0], _prediction("robust-dcd", 30.0, 0.01, epochs=1.01 * limit)], x) is None
    # of two first-order backends, the one whose predicted epochs take least (not the lower capped time)
    both = [slow_ipm[0], _prediction("robust-dcd", 30.0, 0.00077, epochs=1830.0),
            _prediction("dcd", 31.0, 0.00088, epochs=545.0)]
    assert cost.probe(both, x).backend == "dcd"
    # no probe: a first-order choice, a short choice, too little room for epochs, a grid, no first-order candidate
    assert cost.probe([_prediction("robust-dcd", 3.0, 0.01), _prediction("feature-ipm", 10.0)], x) is None
    short = cost.PROBE_MIN_SECONDS * 0.9
    assert cost.probe([_prediction("feature-ipm", short), _prediction("robust-dcd", short, 1e-6)], x) is None
    assert cost.probe([_prediction("feature-ipm", 10.0), _prediction("robust-dcd", 30.0, 1.0, epochs=8.0)], x) is None
    grid = cost.cost_inputs(rs.Problem(penalty=rs.L2(1e-3)), shape, points=5)
    assert cost.probe(slow_ipm, grid) is None
    assert cost.probe([_prediction("clarabel", 10.0)], x) is None


def test_the_probe_pays_its_certificates_out_of_its_share():
    """With a certificate law ``K(k) = e^κ₀ k^κ₁`` of ``t_cert`` seconds each, the probe runs the most epochs ``k``
    with ``k·t_epoch + K(k)·t_cert`` within ``PROBE_FRACTION`` of the choice's predicted time (found here by
    counting up), and a first-order backend whose certificates make it slower than the ratio's limit is not probed."""
    shape = cost.DataShape(20000, 400, 20000 * 400)
    x = cost.cost_inputs(rs.Problem(penalty=rs.L2(1e-3), uncertainty=rs.Box(0.1)), shape)
    law, t_cert, t_epoch = {"const": 0.4, "log_epochs": 0.45}, 0.05, 0.012
    terms = {"per_epoch": t_epoch, "own": 30.0, "per_certificate": t_cert, "certificate_law": law}
    preds = [_prediction("feature-ipm", 10.0), cost.Prediction("robust-dcd", 30.0, 800.0, terms=terms)]
    probe = cost.probe(preds, x)

    def spent(k):
        return k * t_epoch + np.exp(law["const"]) * k ** law["log_epochs"] * t_cert

    k = 0
    while spent(k + 1) <= cost.PROBE_FRACTION * 10.0:
        k += 1
    assert probe.epochs == k < int(cost.PROBE_FRACTION * 10.0 / t_epoch)  # fewer than without its certificates
    # 800 epochs take 9.6 s, within 1.2 × 10 s; their certificates (~28 of 0.15 s) take it beyond
    heavy = {**terms, "per_certificate": 0.15}
    assert cost.probe([preds[0], cost.Prediction("robust-dcd", 30.0, 800.0, terms=heavy)], x) is None
    assert cost.probe([preds[0], cost.Prediction("robust-dcd", 30.0, 800.0, terms={**heavy, "per_certificate": 0.0})],
                      x) is not None


def test_the_forecast_of_a_probe_is_the_power_law_through_its_last_gaps():
    # g(e) = 1/e²: from e = 100 (g = 1e-4) to tol 1e-6 takes e = 1000, 900 more epochs at 0.01 s each
    e = np.array([10.0, 25.0, 50.0, 75.0, 100.0])
    assert cost.probe_forecast({"iteration": e, "rel_gap": e ** -2.0}, 100, 1.0, 1e-6) == pytest.approx(9.0)
    # a geometric decay is forecast no faster than it goes (the power law through the same points is slower)
    g = 0.5 ** (e / 10.0)
    exact = (np.log2(g[-1] / 1e-6) * 10.0) * 0.01
    assert cost.probe_forecast({"iteration": e, "rel_gap": g}, 100, 1.0, 1e-6) >= exact
    # reached already; a gap that does not decrease; too few certificates
    assert cost.probe_forecast({"iteration": e, "rel_gap": e ** -2.0}, 100, 1.0, 1e-3) == 0.0
    assert cost.probe_forecast({"iteration": e, "rel_gap": np.full(5, 0.3)}, 100, 1.0, 1e-4) == np.inf
    assert cost.probe_forecast({"iteration": e[:1], "rel_gap": e[:1]}, 10, 1.0, 1e-4) == np.inf
    assert cost.probe_forecast({}, 10, 1.0, 1e-4) == np.inf


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


def _same_shape_pair(n=600, d=600, seed=0):
    """Two data sets of one shape and one mean squared row norm (the same cost inputs, so the same shape-only
    choice): Gaussian rows with noisy labels, and Gaussian rows moved away from a hyperplane (a wide margin,
    rescaled to the noisy rows' norm)."""
    rng = np.random.default_rng(seed)
    w0 = rng.standard_normal(d)
    w0 /= np.linalg.norm(w0)
    noisy = rng.standard_normal((n, d))
    y_noisy = np.where(noisy @ w0 + rng.standard_normal(n) > 0, 1.0, -1.0)
    wide = rng.standard_normal((n, d))
    y_wide = np.where(wide @ w0 > 0, 1.0, -1.0)
    wide += np.outer(10.0 * y_wide, w0)
    wide *= np.sqrt(np.sum(noisy ** 2) / np.sum(wide ** 2))
    return (wide, y_wide), (noisy, y_noisy)


def test_the_probe_tells_apart_two_data_sets_of_one_shape():
    """Same shape, same row norm, same model: the shape-only rule picks feature-ipm on both. robust-dcd certifies
    the wide-margin data within the probe's epochs (a tenth of feature-ipm's predicted time: the fastest) and stops
    at its budget on the noisy data (feature-ipm the fastest certified): ``auto`` answers with each one's fastest."""
    problem = rs.Problem(penalty=rs.L2(10 / 600), uncertainty=rs.Box(0.05))
    (Xw, yw), (Xn, yn) = _same_shape_pair()
    shape_w, shape_n = cost.DataShape.of(Xw), cost.DataShape.of(Xn)
    assert shape_w.sq_norm == pytest.approx(shape_n.sq_norm)
    assert solve_path.choose_backend(problem, shape_w) == solve_path.choose_backend(problem, shape_n) == "feature-ipm"
    trial = solve_path.auto_probe(problem, shape_w)
    assert trial is not None and trial.backend == "robust-dcd" and trial.epochs is not None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        runs = {(name, k): problem.solve(X, y, solver=name)
                for k, (X, y) in (("wide", (Xw, yw)), ("noisy", (Xn, yn))) for name in ("robust-dcd", "feature-ipm")}
    assert runs["robust-dcd", "wide"].status == "optimal" and runs["robust-dcd", "wide"].iterations <= trial.epochs
    assert runs["robust-dcd", "noisy"].status != "optimal" and runs["feature-ipm", "noisy"].status == "optimal"
    for key, X, y, fastest, other in (("wide", Xw, yw, "robust-dcd", "feature-ipm"),
                                      ("noisy", Xn, yn, "feature-ipm", "robust-dcd")):
        sol = problem.solve(X, y, solver="auto")
        assert sol.solver == fastest and sol.status == "optimal"
        assert sol.auto_probe is not None and sol.auto_probe.solver == "robust-dcd"
        ref = runs[other, key]  # a second backend's certified answer (its gap valid at any status)
        assert abs(sol.objective - ref.objective) <= sol.gap + ref.gap + 1e-9


def test_a_probe_that_is_forecast_to_finish_is_continued_from_its_dual_point(monkeypatch):
    problem = rs.Problem(penalty=rs.L2(10 / 600), uncertainty=rs.Box(0.05))
    (Xw, yw), _ = _same_shape_pair()
    alone = problem.solve(Xw, yw, solver="robust-dcd")
    assert alone.status == "optimal" and alone.iterations > 20
    trial = cost.Probe("robust-dcd", 1.0, "feature-ipm", 100.0, epochs=20)
    monkeypatch.setattr(solve_path, "auto_probe", lambda problem, data, predictions=None: trial)
    sol = problem.solve(Xw, yw, solver="auto")
    assert sol.solver == "robust-dcd" and sol.status == "optimal"
    assert sol.auto_probe.status == "max_iter" and sol.auto_probe.iterations == 20
    assert sol.iterations < alone.iterations  # started from the probe's dual point, not from zero
    assert abs(sol.objective - alone.objective) <= sol.gap + alone.gap + 1e-9


@pytest.mark.parametrize("d", [5, 20])
def test_no_probe_on_millisecond_problems(d, monkeypatch):
    """On the 1,000 × 5 and 1,000 × 20 cells (solves of a few milliseconds) ``auto`` makes no probe, whatever the
    set and λ: it runs its choice alone."""
    rng = np.random.default_rng(1)
    X = rng.standard_normal((1000, d))
    y = np.where(X @ rng.standard_normal(d) + 0.5 * rng.standard_normal(1000) > 0, 1.0, -1.0)
    made = []
    original = solve_path._attempt
    monkeypatch.setattr(solve_path, "_attempt", lambda *a, **k: made.append(a) or original(*a, **k))
    for V in (None, rs.Box(0.05), rs.Ball(0.2), rs.Ellipsoid(np.eye(d), 0.2)):
        for lam_n in (1.0, 10.0):
            problem = rs.Problem(penalty=rs.L2(lam_n / 1000), uncertainty=V)
            assert solve_path.auto_probe(problem, cost.DataShape.of(X)) is None
            sol = problem.solve(X, y, solver="auto")
            assert sol.auto_probe is None and sol.status == "optimal"
    assert made == []


def test_a_continued_probe_that_stops_short_leaves_the_answer_to_the_choice(wdbc, monkeypatch):
    """A forecast that is wrong (here forced to a few epochs) costs a bounded continuation: ``max_iter`` twice the
    forecast, then the chosen backend answers, every attempt recorded."""
    X, y = wdbc
    problem = rs.Problem(penalty=rs.L2(1e-4), uncertainty=rs.Box(0.05))
    trial = cost.Probe("robust-dcd", 1.0, "feature-ipm", 100.0, epochs=5)
    monkeypatch.setattr(solve_path, "choose_backend", lambda problem, data, distributed=None: "feature-ipm")
    monkeypatch.setattr(solve_path, "auto_probe", lambda problem, data, predictions=None: trial)
    monkeypatch.setattr(cost, "probe_forecast", lambda history, epochs, seconds, tol: 0.0)
    sol = problem.solve(X, y, solver="auto")
    assert sol.solver == "feature-ipm" and sol.status == "optimal"
    assert [(a.solver, a.status) for a in sol.auto_attempts] == [("robust-dcd", "max_iter"), ("robust-dcd", "max_iter")]
    assert sol.auto_attempts[1].iterations <= 10  # the continuation's bound: twice the forecast, at least 10
    assert sol.objective - _reference(problem, X, y) <= sol.gap + 1e-9

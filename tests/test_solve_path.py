"""The one solve path: every caller certified by the package, "auto" decided in one place, grid routes included."""

from __future__ import annotations

import dataclasses
import json
import warnings

import numpy as np
import pytest

import robustsvm as rs
from robustsvm import solve_path
from robustsvm.backends import cost, registry
from robustsvm.cli.main import main
from robustsvm.conic import ConicProgram
from robustsvm.exceptions import ConvergenceWarning
from robustsvm.model_selection import grid_search

from .conftest import make_classification


def _pm(y):
    return np.where(np.asarray(y) == np.unique(y)[1], 1.0, -1.0)


def _reference(problem, X, y, rows, **solve_args):
    """Clarabel on the fold's training rows, and its certified lower bound ``objective − gap``."""
    sol = problem.solve(X[rows], y[rows], solver="clarabel", tol=1e-9, **solve_args)
    return sol.objective, sol.objective - sol.gap


# ------------------------------------------------------------- grid routes are certified
def test_compile_once_grid_reports_an_scs_optimum_the_package_cannot_certify():
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    X, y = X[:60, :5] * 1e6, _pm(y[:60])
    problem = rs.Problem(penalty=rs.L2(1e-2), uncertainty=rs.Box(1e5))
    folds = np.arange(60) % 3
    with pytest.warns(ConvergenceWarning, match="1 of 1 grid points .* did not certify optimal"):
        res = grid_search(problem, X, y, {"l2": [1e-2]}, folds=folds, solver="scs", progress=False)
    # the compile-once route; each answer the package does not certify is solved again on its fold's own program
    assert res.n_compiles == 1 + 3
    for k in range(3):
        train = folds != k
        # SCS's own verdict on the same fold program: optimal
        fold = ConicProgram(problem.normalize(X[train], y[train]))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            raw = fold.solve("SCS")
        assert raw.status == "optimal"
        # the grid reports the package's verdict: not optimal, with a gap beyond the tolerance
        assert res.statuses[0, k] != "optimal"
        w, b = res.weights[0, k], res.intercepts[0, k]
        objective = problem.objective(X[train], y[train], w, b)
        with warnings.catch_warnings():  # Clarabel's point is no better certified at this scale
            warnings.simplefilter("ignore", ConvergenceWarning)
            best, _ = _reference(problem, X, y, train)
        # the gap bounds the excess over the optimum, so over Clarabel's objective (≥ the optimum) too
        assert objective - best <= res.gaps[0, k] * (1 + 1e-6) + 1e-9
        assert res.gaps[0, k] > 1e-6 * max(1.0, objective)
    assert not res.certified[0]


def _overclaiming(original: registry.Backend, victim: int) -> registry.Backend:
    """``original`` whose ``solve_many`` claims an exact optimum at ten times the point it found for ``victim``."""

    def solve_many(model, values, **options):
        results = original.solve_many(model, values, **options)
        bad = results[victim]
        results[victim] = dataclasses.replace(bad, w=10.0 * bad.w, b=10.0 * bad.b, status="optimal", gap=0.0)
        return results

    return dataclasses.replace(original, name="overclaiming-ipm", solve_many=solve_many)


def test_batched_grid_reports_an_overclaimed_point_and_the_selection_skips_it(wdbc):
    X, y, _ = wdbc
    X, y = X[:150, :6], _pm(y[:150])
    problem = rs.Problem(penalty=rs.L2(0.1), uncertainty=rs.Box(0.1))
    folds = np.arange(150) % 3
    backend = registry.register(_overclaiming(registry.get_backend("feature-ipm"), victim=0))
    try:
        # the same point twice: the over-claimed copy (w, b scaled by 10) predicts exactly as the honest one
        with pytest.warns(ConvergenceWarning, match="1 of 2 grid points .* skips them"):
            res = grid_search(problem, X, y, [{"l2": 0.1}, {"l2": 0.1}], folds=folds, solver=backend.name,
                              progress=False)
    finally:
        registry.unregister(backend.name)
    assert res.n_compiles == 0 and set(res.extra["solvers"].ravel()) == {"overclaiming-ipm"}
    np.testing.assert_array_equal(res.scores[0], res.scores[1])
    assert np.all(res.statuses[0] == "inaccurate") and np.all(res.statuses[1] == "optimal")
    for k in range(3):
        train = folds != k
        objective = problem.objective(X[train], y[train], res.weights[0, k], res.intercepts[0, k])
        best, lower = _reference(problem, X, y, train)
        assert objective - best > 1e-3  # truly far from the optimum (Clarabel's objective is ≥ the optimum)
        assert objective - lower <= res.gaps[0, k] * (1 + 1e-9) + 1e-9
        assert res.gaps[1, k] <= 1e-5 * max(1.0, best)
    # the tie is broken by grid order, but the first point is not certified: the selection takes the second
    assert res.mean_scores[0] == res.mean_scores[1]
    assert res.best_index == 1 and list(res.certified) == [False, True]


# ---------------------------------------------------------------- grid defects (item 7)
@pytest.mark.parametrize("solver", ["feature-ipm", "robust-dcd", "auto"])
def test_grid_slices_per_sample_radii_to_the_folds(solver):
    X, y = make_classification(90, 5, seed=3)
    y = _pm(y)
    radii = np.random.default_rng(0).uniform(0.02, 0.2, size=90)
    problem = rs.Problem(penalty=rs.L2(0.1), uncertainty=rs.Box(radii))
    folds = np.arange(90) % 3
    res = grid_search(problem, X, y, {"l2": [0.05, 0.2]}, folds=folds, solver=solver, progress=False,
                      solver_options={"tol": 1e-8})
    assert np.all(res.statuses == "optimal"), res.statuses
    for k in range(3):
        train = np.flatnonzero(folds != k)
        for j, l2 in enumerate([0.05, 0.2]):
            fold_problem = rs.Problem(penalty=rs.L2(l2), uncertainty=rs.Box(radii[train]))
            best, lower = _reference(fold_problem, X, y, train)
            objective = fold_problem.objective(X[train], y[train], res.weights[j, k], res.intercepts[j, k])
            assert lower - 1e-12 <= objective <= best + res.gaps[j, k] + 1e-9


@pytest.mark.parametrize("solver", ["feature-ipm", "robust-dcd", "auto"])
def test_a_grid_point_with_l2_zero_goes_to_a_conic_backend(solver):
    X, y = make_classification(90, 5, seed=4)
    y = _pm(y)
    problem = rs.Problem(penalty=rs.L2(0.1) + rs.L1(0.02), uncertainty=rs.Box(0.1))
    folds = np.arange(90) % 3
    res = grid_search(problem, X, y, {"l2": [0.0, 0.1]}, folds=folds, solver=solver, progress=False)
    assert set(res.extra["solvers"][0]) == {"clarabel"}  # refused by the first-order backends: the fallback
    assert solver == "auto" or set(res.extra["solvers"][1]) == {solver}
    assert np.all(res.statuses == "optimal"), res.statuses
    for k in range(3):
        train = np.flatnonzero(folds != k)
        ref_problem = rs.Problem(penalty=rs.L1(0.02), uncertainty=rs.Box(0.1))
        best, lower = _reference(ref_problem, X, y, train)
        objective = ref_problem.objective(X[train], y[train], res.weights[0, k], res.intercepts[0, k])
        assert lower - 1e-12 <= objective <= best + res.gaps[0, k] + 1e-9


# ------------------------------------------------------------ "auto" is decided in the path
@pytest.fixture
def auto_picks_scs(monkeypatch):
    """The path's chooser replaced by one that picks SCS (no caller would choose it by itself)."""
    calls = []

    def choose(problem, n_features):
        calls.append(n_features)
        return "scs"

    monkeypatch.setattr(solve_path, "choose_backend", choose)
    return calls


def test_every_caller_follows_the_paths_choice_for_auto(auto_picks_scs, tmp_path, capsys):
    X, y = make_classification(60, 4, seed=5)
    problem = rs.Problem(penalty=rs.L2(0.1), uncertainty=rs.Ball(0.1))
    options = {"tol": 1e-7}
    assert problem.solve(X, y, solver="auto", **options).solver == "scs"
    est = rs.RobustSVC(l2=0.1, uncertainty=rs.Ball(0.1), solver="auto", solver_options=options).fit(X, y)
    assert est.solution_.solver == "scs"
    res = grid_search(problem, X, y, {"l2": [0.1, 0.3]}, cv=2, solver="auto", progress=False)
    assert res.n_compiles == 1 and set(res.extra["solvers"].ravel()) == {"scs"}  # compiled once, as for SCS
    csv = tmp_path / "d.csv"
    np.savetxt(csv, np.column_stack([X, y]), delimiter=",", header="a,b,c,d,label", comments="")
    assert main(["fit", str(csv), "--target", "label", "--l2", "0.1", "--uncertainty", "ball:0.1",
                 "--solver", "auto", "--json", "--no-progress"]) == 0
    assert json.loads(capsys.readouterr().out)["solution"]["solver"] == "scs"
    assert len(auto_picks_scs) >= 4


def _raising(name: str) -> registry.Backend:
    def solve(model, **options):
        raise ValueError("rho must be positive, got inf")

    return registry.Backend(name=name, solve=solve, needs=registry.Needs(sets="any"), summary="raises")


def test_auto_falls_back_when_its_choice_raises_or_stops_short(monkeypatch):
    """The next backend is the next accepting candidate expected to certify (``cost.fallback_order``), Clarabel
    last; every attempt is recorded."""
    X, y = make_classification(60, 4, seed=6)
    problem = rs.Problem(penalty=rs.L2(0.1), uncertainty=rs.Box(0.1))
    ref = problem.solve(X, y, solver="clarabel")
    preds = solve_path.auto_predictions(problem, problem.normalize(X, y))
    backend = registry.register(_raising("raises-on-data"))
    try:
        monkeypatch.setattr(solve_path, "choose_backend", lambda problem, d: "raises-on-data")
        sol = problem.solve(X, y, solver="auto")
        est = rs.RobustSVC(l2=0.1, uncertainty=rs.Box(0.1), solver="auto").fit(X, y)
    finally:
        registry.unregister(backend.name)
    for s in (sol, est.solution_):
        assert s.solver == cost.fallback_order(preds, ("raises-on-data",))[0] and s.status == "optimal"
        assert s.auto_fallback.solver == "raises-on-data"
        assert "rho must be positive" in s.auto_fallback.status
        assert [a.solver for a in s.auto_attempts] == ["raises-on-data"]
        assert abs(s.objective - ref.objective) <= s.gap + ref.gap + 1e-9
    # a first answer short of its tolerance: robust-dcd stopped after one epoch
    monkeypatch.setattr(solve_path, "choose_backend", lambda problem, d: "robust-dcd")
    short = problem.solve(X, y, solver="auto", max_iter=1)
    assert short.solver == cost.fallback_order(preds, ("robust-dcd",))[0] != "robust-dcd"
    assert short.auto_fallback.solver == "robust-dcd"
    assert short.auto_fallback.status != "optimal"
    assert abs(short.objective - ref.objective) <= short.gap + ref.gap + 1e-9


def test_the_certifier_reads_typed_fields_not_backend_names():
    X, y = make_classification(60, 4, seed=7)
    problem = rs.Problem(penalty=rs.L2(0.1), uncertainty=rs.Box(0.1))
    ref = problem.solve(X, y, solver="clarabel", tol=1e-9)
    model = problem.normalize(X, y)
    # a point claimed optimal, with a dual bound the backend did not check: the package's own gap decides
    claim = rs.result.Result(w=ref.w * 1.5, b=ref.b, status="optimal", gap=0.0, dual_value=ref.objective * 10,
                             dual_feasible=False)
    verdict = solve_path.certify("any-name", model, claim)
    assert verdict.certified and verdict.status == "inaccurate"
    assert verdict.dual_value <= ref.objective + 1e-9  # the solver's "bound" above the optimum was not used
    assert verdict.objective - ref.objective <= verdict.gap + 1e-9
    # the verdict depends on the result's fields only, never on the backend's name
    for name in ("clarabel", "conic", "feature-ipm"):
        again = solve_path.certify(name, model, claim)
        assert (again.status, again.gap, again.dual_value) == (verdict.status, verdict.gap, verdict.dual_value)


# ------------------------------------------------------------------ the typed contract
TYPED = ("dual_alpha", "rel_gap", "dual_bound", "dual_objective", "primal_objective", "margin_multipliers")


def test_what_other_code_reads_travels_in_typed_fields_not_in_extra():
    X, y = make_classification(80, 4, seed=2)
    problem = rs.Problem(penalty=rs.L2(0.1), uncertainty=rs.Box(0.1))
    sol = problem.solve(X, y, solver="robust-dcd", tol=1e-8)
    ref = problem.solve(X, y, solver="clarabel", tol=1e-9)
    scale = max(1.0, abs(ref.objective))
    assert not set(sol.extra) & set(TYPED) and not any(k.startswith("auto_") for k in sol.extra)
    # the package's bound behind the gap, below the optimum (Clarabel's objective is above it)
    assert sol.objective - sol.dual_bound == pytest.approx(sol.gap, abs=1e-12 * scale)
    assert sol.dual_bound <= ref.objective + 1e-9 * scale
    # the backend's own numbers: its dual value is a bound too, and the package's is at least as good
    assert sol.dual_objective <= ref.objective + 1e-9 * scale and sol.dual_objective <= sol.dual_bound + 1e-12 * scale
    assert sol.primal_objective >= ref.objective - 1e-9 * scale and 0 <= sol.rel_gap <= 1e-8
    # the dual point: α in the hinge's box, and the margin multipliers c∘α (c = 1/n, reduction "mean")
    assert sol.dual_alpha.shape == (80,) and np.all((sol.dual_alpha >= 0) & (sol.dual_alpha <= 1))
    np.testing.assert_allclose(sol.multipliers, sol.dual_alpha / 80, rtol=1e-12, atol=0)
    assert sol.auto_attempts == () and sol.auto_fallback is None and sol.auto_probe is None


def test_quiet_records_a_solvers_user_warnings_and_still_shows_the_others():
    from robustsvm._validation import check_fit_data
    from robustsvm.model import normalize

    clarabel = registry.get_backend("clarabel")

    def noisy(model, **options):
        warnings.warn("the answer may be inaccurate", UserWarning, stacklevel=1)
        warnings.warn("overflow in a ratio", RuntimeWarning, stacklevel=1)
        return clarabel.solve(model, **options)

    backend = dataclasses.replace(clarabel, name="noisy", solve=noisy)
    X, y = make_classification(40, 3, seed=4)
    problem = rs.Problem(penalty=rs.L2(0.1))
    model = normalize(problem, check_fit_data(X, y, signs=problem.signs))
    for quiet, shown_texts, recorded in ((True, ["overflow in a ratio"], ["UserWarning: the answer may be inaccurate"]),
                                         (False, ["the answer may be inaccurate", "overflow in a ratio"], None)):
        with warnings.catch_warnings(record=True) as shown:
            warnings.simplefilter("always")
            sol = solve_path.solve_model(problem, backend, model, {}, warn=False, quiet=quiet)
        assert [str(w.message) for w in shown] == shown_texts
        assert sol.extra.get("warnings") == recorded and sol.status == "optimal"

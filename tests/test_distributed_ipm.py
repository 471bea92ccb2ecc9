"""Data on a Dask cluster: partitions kept on the workers, rounds over them, and the distributed interior point.

One LocalCluster of two worker processes per module. Every fit is compared with an independent in-memory
solve (feature-ipm, Clarabel) through intervals the certificates prove: the reference's own
``[objective − gap, objective]`` must meet the distributed fit's ``[objective − gap, objective]``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import numpy as np
import pytest

import robustsvm as rs
from robustsvm.distributed.data import ROUND_RETRIES, WorkerLostError, partition

from .conftest import make_classification

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                                  memory_limit="1GB") as c:
        yield c


@pytest.fixture(scope="module")
def client(cluster):
    # not the default client: a call without client= must find none and say so
    with distributed.Client(cluster, set_as_default=False) as c:
        yield c


def _pid(block):
    return os.getpid()


def _row_sums(block, w):
    return np.asarray(block.rows() @ w).ravel().sum(), block.n, float(block.y.sum())


def _missing_file(block):
    raise FileNotFoundError("no such rows")  # an OSError raised by the round, its worker alive


def _tall(n=1200, d=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.where(X @ np.linspace(1.0, -0.5, d) + 0.7 * rng.standard_normal(n) > 0, "yes", "no")
    return X, y


# ------------------------------------------------------------------------------------------ partitions
def test_partitions_stay_on_the_workers_and_rounds_sum_them(client):
    X, y = _tall()
    Xd = da.from_array(X, chunks=(300, 3))  # column chunks are merged: each partition holds whole rows
    parts = partition(Xd, y, client=client)
    assert parts.k == 4 and parts.n == 1200 and parts.d == 6
    assert list(parts.classes) == ["no", "yes"]
    w = np.arange(6.0)
    out = parts.map(_row_sums, w)
    assert [o[1] for o in out] == [300] * 4
    np.testing.assert_allclose(sum(o[0] for o in out), (X @ w).sum(), rtol=1e-12)
    assert sum(o[2] for o in out) == np.sum(y == "yes") - np.sum(y == "no")  # ±1 with classes[1] = +1
    assert len(set(parts.map(_pid))) == 2  # both workers hold partitions
    assert parts.rounds == 2 and parts.bytes_received > 0


def test_partition_refuses_bad_input_by_name(client):
    X, y = _tall(200, 3)
    bad = X.copy()
    bad[150, 1] = np.nan
    with pytest.raises(ValueError, match=r"X \(rows 100-199\) contains NaN"):
        partition(da.from_array(bad, chunks=(100, 3)), y, client=client)
    with pytest.raises(ValueError, match="exactly two classes"):
        partition(da.from_array(X, chunks=(100, 3)), np.arange(200) % 3, client=client)
    with pytest.raises(ValueError, match="y has 199 entries"):
        partition(da.from_array(X, chunks=(100, 3)), y[:199], client=client)
    with pytest.raises(ValueError, match=r"sample_weight must be finite and non-negative"):
        partition(da.from_array(X, chunks=(100, 3)), y, client=client, sample_weight=-np.ones(200))
    with pytest.raises(TypeError, match=r"dask\.array"):
        partition(X, y, client=client)
    with pytest.raises(ValueError, match=r"needs a dask\.distributed client"):
        partition(da.from_array(X, chunks=(100, 3)), y)


def test_a_killed_worker_costs_a_round_not_the_data(client):
    """The blocks a dead worker held are recomputed from their graph; the round's sums stay exact."""
    X, y = _tall(800, 4, seed=3)
    parts = partition(da.from_array(X, chunks=(200, 4)), y, client=client)
    w = np.ones(4)
    before = parts.map(_row_sums, w)
    victim = parts.map(_pid)[0]
    os.kill(victim, signal.SIGKILL)
    after = parts.map(_row_sums, w)
    np.testing.assert_allclose([a[0] for a in after], [b[0] for b in before], rtol=1e-12)
    assert victim not in set(parts.map(_pid))
    client.wait_for_workers(2, timeout=60)


def test_a_round_that_keeps_failing_is_a_clear_error_never_a_partial_sum(client, monkeypatch):
    from distributed.comm import CommClosedError

    X, y = _tall(400, 3, seed=5)
    parts = partition(da.from_array(X, chunks=(100, 3)), y, client=client)
    parts.map(_row_sums, np.ones(3))  # the servers exist
    seen = {"n": 0}

    def call(server, method, *args):
        seen["n"] += 1
        raise CommClosedError("the worker went away")

    monkeypatch.setattr(type(parts), "_call", call)
    with pytest.raises(WorkerLostError, match=f"failed {ROUND_RETRIES + 1} times"):
        parts.map(_row_sums, np.ones(3))
    servers = len(parts._servers())
    assert seen["n"] == servers * (ROUND_RETRIES + 1) and parts.resubmitted == ROUND_RETRIES + 1


def test_an_error_of_the_round_itself_is_raised_not_retried(client):
    X, y = _tall(400, 3, seed=5)
    parts = partition(da.from_array(X, chunks=(100, 3)), y, client=client)
    with pytest.raises(FileNotFoundError, match="no such rows"):
        parts.map(_missing_file)
    assert parts.resubmitted == 0


def _count_state(block, state, add):
    total = (0.0 if state is None else state) + add
    return total, (total, block.n)


def test_round_servers_are_balanced_by_rows_when_the_blocks_sit_on_one_worker(client, monkeypatch):
    X, y = _tall(800, 3, seed=6)
    parts = partition(da.from_array(X, chunks=(200, 3)), y, client=client)
    workers = sorted(client.scheduler_info(n_workers=-1)["workers"])
    real, blocks = parts.client.who_has, {f.key for f in parts.futures}

    def who_has(futures):  # every block on the first worker; the servers' own futures where they are
        return {**real([f for f in futures if f.key not in blocks]),
                **{f.key: (workers[0],) for f in futures if f.key in blocks}}

    monkeypatch.setattr(parts.client, "who_has", who_has)
    assert sorted(parts._placement()).count(workers[0]) == 2  # two of the four blocks move
    sums = parts.map(_row_sums, np.ones(3))
    monkeypatch.undo()
    assert {s.address for s in parts._servers()} == set(workers)
    np.testing.assert_allclose(sum(o[0] for o in sums), X.sum(), rtol=1e-12)


def test_states_dropped_by_the_caller_are_freed_and_an_older_one_can_be_resumed(client):
    X, y = _tall(600, 3, seed=7)
    parts = partition(da.from_array(X, chunks=(200, 3)), y, client=client)
    states, _ = parts.map_state(_count_state, None, 1.0)
    kept = states
    for _ in range(6):
        states, out = parts.map_state(_count_state, states, 1.0)
    assert [o[0] for o in out] == [7.0] * parts.k
    out = parts.map_state(_count_state, kept, 10.0)[1]  # an older version, still held by the caller
    assert [o[0] for o in out] == [11.0] * parts.k
    assert len(parts._lineage) == 8  # the chain to the last version and the branch: what a replay needs
    del states  # the caller lets the chain go: only the kept version stays, with its lineage
    branch, _ = parts.map_state(_count_state, kept, 1.0)
    assert set(parts._lineage) == {kept.version, branch.version}
    held = [parts._call(server, "versions").result() for server in parts._servers()]
    assert held == [sorted({kept.version, branch.version})] * len(held)
    del kept, branch
    parts.free_states()  # what a backend does when its fit ends
    assert [parts._call(server, "versions").result() for server in parts._servers()] == [[]] * len(held)


def test_data_read_from_npy_files_stay_on_disk(client, tmp_path):
    X, y = _tall(1000, 5, seed=4)
    da.to_npy_stack(str(tmp_path), da.from_array(X, chunks=(250, 5)))
    Xd = da.from_npy_stack(str(tmp_path), mmap_mode="r")
    parts = partition(Xd, y, client=client, hold=False)
    assert all(parts.map(_on_disk))
    np.testing.assert_allclose(sum(o[0] for o in parts.map(_row_sums, np.ones(5))), X.sum(), rtol=1e-12)


def test_dask_ipm_on_rows_streamed_from_disk_agrees_with_feature_ipm(client, tmp_path):
    """Rows read from disk at every pass (no single-precision copy, every round's state kept with the tried
    step's): the fit certifies the optimum feature-ipm certifies in memory."""
    from dataclasses import replace

    from robustsvm.distributed.ipm import solve_dask_ipm
    from robustsvm.distributed.model import distributed_model

    X, y = _tall(1200, 5, seed=8)
    da.to_npy_stack(str(tmp_path), da.from_array(X, chunks=(300, 5)))
    Xd = da.from_npy_stack(str(tmp_path), mmap_mode="r")
    problem = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(1e-2), uncertainty=rs.Ball(0.05), signs=[1, 0, 0, 0, -1])
    streamed = replace(distributed_model(problem, Xd, y, client=client),
                       data=partition(Xd, y, client=client, hold=False))
    assert all(streamed.data.map(_on_disk))
    res = solve_dask_ipm(streamed, tol=1e-7)
    ref = problem.solve(X, y, "feature-ipm", tol=1e-9)
    assert res.status == "optimal" and res.gap <= 1e-7 * abs(res.primal_objective) + 1e-12
    assert abs(res.primal_objective - ref.objective) <= res.gap + ref.gap + 1e-10
    assert res.w[0] >= 0 >= res.w[4]


def test_mapped_files_that_fit_are_read_once_into_the_workers_memory(client, tmp_path):
    X, y = _tall(1000, 5, seed=4)
    da.to_npy_stack(str(tmp_path), da.from_array(X, chunks=(250, 5)))
    parts = partition(da.from_npy_stack(str(tmp_path), mmap_mode="r"), y, client=client)  # 40 kB, workers of 1 GB
    assert not any(parts.map(_on_disk))
    assert not any(parts.map(_maps_a_file))  # a copy in memory, not a view of the mapped file
    np.testing.assert_allclose(sum(o[0] for o in parts.map(_row_sums, np.ones(5))), X.sum(), rtol=1e-12)


class _Cluster:
    """What ``workers_hold`` reads of a client: the workers' memory limits."""

    def __init__(self, limits):
        self.limits = limits

    def scheduler_info(self, n_workers=5):
        return {"workers": {f"w{j}": {"memory_limit": lim} for j, lim in enumerate(self.limits)}}


def test_rows_are_held_when_their_share_fits_a_quarter_of_the_smallest_worker():
    from robustsvm.distributed._sources import HOLD_FRACTION, workers_hold

    assert HOLD_FRACTION == 0.25
    two = _Cluster([1e9, 4e9])  # the smallest limit counts: each worker holds half the rows
    assert workers_hold(two, 2 * 0.25e9)
    assert not workers_hold(two, 2 * 0.25e9 + 8)
    assert workers_hold(_Cluster([0, 0]), 1e15)  # no limit
    assert not workers_hold(_Cluster([]), 1.0)  # no worker yet: stream


def test_a_memmap_given_to_from_array_warns_and_goes_straight_to_the_workers(client, tmp_path):
    X, y = _tall(1000, 5, seed=5)
    np.save(tmp_path / "X.npy", X)
    Xd = da.from_array(np.load(tmp_path / "X.npy", mmap_mode="r"), chunks=(250, 5))
    with pytest.warns(UserWarning, match=r"da\.from_npy_stack\(folder, mmap_mode='r'\)"):
        parts = partition(Xd, y, client=client)
    assert parts.k == 4 and list(parts.sizes) == [250] * 4
    sums = parts.map(_row_sums, np.arange(5.0))
    np.testing.assert_allclose([o[0] for o in sums],
                               [float((X[j:j + 250] @ np.arange(5.0)).sum()) for j in range(0, 1000, 250)], rtol=1e-12)
    assert not any(parts.map(_maps_a_file))


def test_a_dask_array_of_an_in_memory_array_does_not_warn(client, recwarn):
    X, y = _tall(400, 5, seed=6)
    partition(da.from_array(X, chunks=(100, 5)), y, client=client)
    assert not [w for w in recwarn if "from_npy_stack" in str(w.message)]


def _on_disk(block):
    return block.on_disk


def _maps_a_file(block):
    base = block.X
    while base is not None:
        if isinstance(base, np.memmap):
            return True
        base = getattr(base, "base", None)
    return False


# --------------------------------------------------------------------------------------- the interior point
def _interval(sol):
    return sol.objective - sol.gap, sol.objective


def _agree(a, b, slack=1e-9):
    """The optimum lies in both certified intervals, so they must meet (up to rounding)."""
    lo_a, hi_a = _interval(a)
    lo_b, hi_b = _interval(b)
    scale = slack * max(1.0, abs(hi_a))
    assert lo_a <= hi_b + scale and lo_b <= hi_a + scale, (_interval(a), _interval(b))


@pytest.mark.parametrize("unc", [pytest.param(None, marks=pytest.mark.slow), rs.Box(0.05),
                                 pytest.param(rs.Ball(0.1), marks=pytest.mark.slow),
                                 pytest.param(rs.Ball(0.05, p=np.inf), marks=pytest.mark.slow)],
                         ids=["nominal", "box", "ball2", "ballinf"])
def test_dask_ipm_agrees_with_feature_ipm_on_a_generated_set(client, unc):
    X, y = make_classification(900, 6, seed=7)
    problem = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(0.1) + rs.L1(0.01), uncertainty=unc,
                         signs=[1, 0, -1, 0, 0, 0])
    weight = np.where(np.arange(900) % 10 == 3, 0.0, 1.0 + (np.arange(900) % 3))  # rows weighted 0 drop out
    sol = problem.solve(da.from_array(X, chunks=(300, 6)), y, "dask-ipm", client=client, tol=1e-7,
                        sample_weight=weight)
    ref = problem.solve(X, y, "feature-ipm", tol=1e-9, sample_weight=weight)
    assert sol.status == "optimal" and sol.gap <= 1e-7 * abs(sol.objective) + 1e-12
    _agree(sol, ref)
    assert np.all(sol.w[0] >= 0) and np.all(sol.w[2] <= 0)
    assert sol.extra["rounds"] > 0 and sol.extra["partitions"] <= 2  # three chunks, one block per worker
    np.testing.assert_array_equal(sol.classes, ref.classes)


def test_rounds_run_one_task_per_worker_on_the_same_iterations(client, monkeypatch):
    from robustsvm.distributed.data import Partitions

    X, y = make_classification(2000, 8, seed=11)
    Xd = da.from_array(X, chunks=(250, 8))  # eight chunks on two workers
    parts = partition(Xd, y, client=client)
    merged = parts.per_worker()
    assert merged is parts.per_worker()  # merged once
    holders = set(parts._placement())  # where the blocks are, balanced by rows
    assert merged.k == len(holders) < parts.k and merged.n == parts.n == 2000
    assert {server.address for server in merged._servers()} == holders  # each group served where it is
    np.testing.assert_allclose(sum(o[0] for o in merged.map(_row_sums, np.arange(8.0))), (X @ np.arange(8.0)).sum(),
                               rtol=1e-12)
    problem = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(1e-3), uncertainty=rs.Ball(0.1))
    sol = problem.solve(Xd, y, "dask-ipm", client=client, tol=1e-6)
    monkeypatch.setattr(Partitions, "per_worker", lambda self: self)  # one task per chunk, as before
    per_chunk = problem.solve(Xd, y, "dask-ipm", client=client, tol=1e-6)
    assert sol.extra["partitions"] == len(holders) and per_chunk.extra["partitions"] == 8
    assert sol.iterations == per_chunk.iterations and sol.extra["rounds"] == per_chunk.extra["rounds"]
    assert sol.status == per_chunk.status == "optimal"
    _agree(sol, per_chunk)
    _agree(sol, problem.solve(X, y, "feature-ipm", tol=1e-9))


# ------------------------------------------------------------------------------ results are ordinary solutions
def test_a_distributed_solution_validates_predicts_and_round_trips(client, tmp_path):
    X, y = _tall(1500, 5, seed=11)
    Xd = da.from_array(X, chunks=(500, 5))
    problem = rs.Problem(loss=rs.SquaredHinge(), penalty=rs.L2(0.5), uncertainty=rs.Box(0.02), intercept=rs.L2(2.0))
    sol = problem.solve(Xd, y, "dask-ipm", client=client, tol=1e-8)
    assert sol.status == "optimal"
    # the objective computed in partitions is the in-memory one
    assert sol.objective == pytest.approx(problem.objective(X, y, sol.w, sol.b), rel=1e-12)
    report = rs.validate(sol, Xd, y, client=client)
    assert report.ok, report.mismatches
    assert rs.validate(sol, X, y).objective_recomputed == pytest.approx(report.objective_recomputed, rel=1e-12)
    moved = sol.w.copy()
    moved[0] += 0.1
    tampered = rs.Solution(**{**sol.__dict__, "w": moved})
    assert not rs.validate(tampered, Xd, y, client=client).ok
    scores = sol.decision_function(Xd)
    assert isinstance(scores, da.Array)
    np.testing.assert_allclose(client.compute(scores).result(), X @ sol.w + sol.b, rtol=1e-12)
    np.testing.assert_array_equal(client.compute(sol.predict(Xd)).result(), sol.predict(X))
    path = tmp_path / "sol.json"
    sol.to_json(path)
    back = rs.Solution.from_json(path)
    assert rs.validate(back, Xd, y, client=client).ok
    check = sol.robust_check(Xd, y)
    memory = sol.robust_check(X, y)
    assert check.holds == memory.holds is True
    np.testing.assert_allclose(client.compute(check.robust_margins).result(), memory.robust_margins, rtol=1e-12)
    assert check.max_disagreement == pytest.approx(memory.max_disagreement, abs=1e-12)


@pytest.mark.slow
def test_the_estimator_fits_and_predicts_a_dask_array(client):
    X, y = _tall(1000, 4, seed=12)
    est = rs.RobustSVC(l2=0.5, uncertainty=rs.Ball(0.05), solver="auto", solver_options={"client": client})
    est.fit(da.from_array(X, chunks=(250, 4)), y)
    assert est.solution_.solver == "dask-ipm" and est.solution_.status == "optimal"
    assert list(est.classes_) == ["no", "yes"]
    ref = rs.RobustSVC(l2=0.5, uncertainty=rs.Ball(0.05), solver="feature-ipm").fit(X, y)
    _agree(est.solution_, ref.solution_)
    pred = est.predict(da.from_array(X, chunks=(250, 4)))
    np.testing.assert_array_equal(client.compute(pred).result(), est.predict(X))
    with pytest.raises(ValueError, match="probability is not available on a dask array"):
        rs.RobustSVC(probability=True, solver="auto").fit(da.from_array(X, chunks=(250, 4)), y)


def test_the_estimator_on_a_dask_array_takes_feature_names_and_class_weights(client):
    """Signs by name and balanced class weights on a dask array: the certified interval of the in-memory fit of
    the same model (a DataFrame, scikit-learn's class weights) meets the distributed one."""
    import pandas as pd

    X, y = _tall(900, 4, seed=21)
    y = np.where(X[:, 0] + 0.7 * np.random.default_rng(2).standard_normal(900) > 0.6, "yes", "no")  # about 30 % yes
    names = ["age", "dose", "bmi", "score"]
    options = {"l2": 0.5, "uncertainty": rs.Box(0.05), "signs": {"dose": -1, "age": 1}, "class_weight": "balanced",
               "positive_class": "yes"}
    est = rs.RobustSVC(**options, solver="auto", solver_options={"client": client})
    est.fit(da.from_array(X, chunks=(300, 4)), y, feature_names=names)
    ref = rs.RobustSVC(**options, solver="feature-ipm").fit(pd.DataFrame(X, columns=names), y)
    assert est.solution_.status == "optimal" and list(est.solution_.feature_names) == names
    _agree(est.solution_, ref.solution_)
    assert est.coef_[0][1] <= 0 <= est.coef_[0][0]
    plain = rs.RobustSVC(l2=0.5, uncertainty=rs.Box(0.05), solver="feature-ipm").fit(X, y)
    assert plain.solution_.objective != pytest.approx(ref.solution_.objective, rel=1e-3)  # the weights matter
    with pytest.raises(ValueError, match="feature_names applies to a dask array"):
        rs.RobustSVC().fit(X, y, feature_names=names)


def test_auto_on_a_dask_array_and_refusals(client):
    X, y = _tall(600, 4, seed=13)
    Xd = da.from_array(X, chunks=(200, 4))
    problem = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(1.0), uncertainty=rs.Box(0.1))
    assert problem.solve(Xd, y, "auto", client=client).solver == "dask-ipm"
    with pytest.raises(rs.UnsupportedModelError, match="needs X in memory"):
        problem.solve(Xd, y, "clarabel", client=client)
    with pytest.raises(rs.UnsupportedModelError, match="dask-ipm"):
        rs.Problem(loss=rs.Hinge(), penalty=rs.L2(1.0), uncertainty=rs.Ball(0.1, p=1)).solve(
            Xd, y, "dask-ipm", client=client)
    at_radius = problem.solve(Xd, y, "dask-ipm", client=client, radius=0.2, tol=1e-8)
    assert at_radius.problem.uncertainty.radius == 0.2 and problem.uncertainty.radius == 0.1
    _agree(at_radius, problem.solve(X, y, "feature-ipm", radius=0.2, tol=1e-10))
    assert rs.validate(at_radius, Xd, y, client=client).ok
    with pytest.raises(ValueError, match="one number for every sample"):
        problem.solve(Xd, y, "dask-ipm", client=client, radius=np.full(600, 0.1))


# ------------------------------------------------------------------------- real data, every term, the certificate
@pytest.mark.slow
@pytest.mark.parametrize("unc", [rs.Box(0.02), rs.Ball(0.1), rs.Ball(0.02, p=np.inf)], ids=["box", "ball2", "ballinf"])
def test_dask_ipm_agrees_with_clarabel_and_feature_ipm_on_wdbc(client, wdbc, unc):
    X, y, _ = wdbc
    signs = np.zeros(30, dtype=int)
    signs[:5], signs[20:23] = 1, -1
    problem = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(0.05), uncertainty=unc, signs=signs)
    sol = problem.solve(da.from_array(X, chunks=(150, 30)), y, "dask-ipm", client=client, tol=1e-7)
    assert sol.status == "optimal" and sol.gap <= 1e-7 * abs(sol.objective) + 1e-12
    assert np.all(signs * sol.w >= 0)
    _agree(sol, problem.solve(X, y, "feature-ipm", tol=1e-9))
    _agree(sol, problem.solve(X, y, "clarabel"), slack=1e-7)


@pytest.fixture(scope="module")
def magic():
    from .conftest import standardized

    return standardized("magic", 4000, seed=1)


@pytest.mark.slow
@pytest.mark.parametrize("intercept, loss", [(True, rs.Hinge()), (False, rs.Hinge()), (rs.L2(0.5), rs.Hinge()),
                                             (True, rs.SquaredHinge(reduction="sum"))],
                         ids=["free", "none", "ridge", "squared-sum"])
def test_dask_ipm_agrees_on_keel_magic_with_l1_signs_and_each_intercept(client, magic, intercept, loss):
    X, y = magic
    problem = rs.Problem(loss=loss, penalty=rs.L2(0.02) + rs.L1(0.01), uncertainty=rs.Ball(0.05),
                         signs=[1, 0, 0, -1, 0, 0, 0, 0, 0, 1], intercept=intercept)
    sol = problem.solve(da.from_array(X, chunks=(1000, 10)), y, "dask-ipm", client=client, tol=1e-8)
    assert sol.status == "optimal"
    if intercept is False:
        assert sol.b == 0.0
    _agree(sol, problem.solve(X, y, "feature-ipm", tol=1e-10))


def test_the_gap_is_never_below_the_true_excess(client, wdbc):
    """Stopped after a few iterations, the certified gap still bounds the distance to the optimum: the
    optimum is at most the objective of two independent in-memory solves, and at least their bounds."""
    X, y, _ = wdbc
    problem = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(0.05) + rs.L1(0.005), uncertainty=rs.Ball(0.1),
                         signs=[1] * 5 + [0] * 25, intercept=rs.L2(1.0))
    refs = [problem.solve(X, y, "feature-ipm", tol=1e-10), problem.solve(X, y, "clarabel")]
    upper = min(r.objective for r in refs)  # ≥ P*
    lower = max(r.objective - r.gap for r in refs)  # ≤ P*
    Xd = da.from_array(X, chunks=(200, 30))
    for max_iter in (2, 5):
        with pytest.warns(rs.ConvergenceWarning):
            sol = problem.solve(Xd, y, "dask-ipm", client=client, max_iter=max_iter, tol=1e-12)
        assert sol.status == "max_iter" and sol.iterations == max_iter
        excess_at_least = sol.objective - upper
        assert excess_at_least > 0  # the comparison can fail: the point is not optimal yet
        assert sol.gap >= excess_at_least
        assert sol.objective - sol.gap <= upper  # the dual bound is below a feasible value
        assert sol.objective >= lower - 1e-12


@pytest.mark.slow
def test_a_worker_killed_mid_fit_does_not_lose_the_fit(client, monkeypatch):
    """A worker process is killed in the tenth round of an interior-point fit: its partitions and the rows'
    variables are recomputed (from the source graph and the rounds' lineage), and the fit ends certified."""
    from robustsvm.distributed.data import Partitions

    X, y = _tall(2000, 6, seed=21)
    problem = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(0.1), uncertainty=rs.Box(0.05))
    original = Partitions.map_state
    calls = {"n": 0, "killed": None}

    def map_state(self, func, states, *args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 10:
            calls["killed"] = self.map(_pid)[0]
            os.kill(calls["killed"], signal.SIGKILL)
        return original(self, func, states, *args, **kwargs)

    monkeypatch.setattr(Partitions, "map_state", map_state)
    sol = problem.solve(da.from_array(X, chunks=(500, 6)), y, "dask-ipm", client=client, tol=1e-8)
    monkeypatch.setattr(Partitions, "map_state", original)
    assert calls["killed"] is not None and calls["n"] > 10
    assert sol.extra["resubmitted_rounds"] >= 1 and sol.extra["replayed_rounds"] >= 9  # the lost states' rounds
    assert sol.status == "optimal"
    _agree(sol, problem.solve(X, y, "feature-ipm", tol=1e-10))
    client.wait_for_workers(2, timeout=60)


def test_a_time_limit_stops_with_that_status_and_a_valid_gap(client, wdbc):
    X, y, _ = wdbc
    problem = rs.Problem(loss=rs.SquaredHinge(), penalty=rs.L2(0.05), uncertainty=rs.Box(0.05))
    ref = problem.solve(X, y, "feature-ipm", tol=1e-10)
    with pytest.warns(rs.ConvergenceWarning, match="time_limit"):
        sol = problem.solve(da.from_array(X, chunks=(300, 30)), y, "dask-ipm", client=client, time_limit=1e-6,
                            tol=1e-12)
    assert sol.status == "time_limit" and sol.iterations == 1
    assert sol.objective - sol.gap <= ref.objective and sol.gap >= sol.objective - ref.objective > 0


@pytest.mark.slow
def test_in_memory_and_sparse_data_through_dask_ipm(client):
    import scipy.sparse as sp

    X, y = make_classification(800, 12, seed=5, sparse=True, density=0.4)
    problem = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(0.1), uncertainty=rs.Ball(0.05), intercept=False)
    ref = problem.solve(X, y, "feature-ipm", tol=1e-10)
    chunks = [sp.csr_matrix(X[lo:lo + 200]) for lo in range(0, 800, 200)]
    Xd = da.concatenate([da.from_array(c, chunks=c.shape, asarray=False) for c in chunks], axis=0)
    sol = problem.solve(Xd, y, "dask-ipm", client=client, tol=1e-8)
    assert sol.status == "optimal"
    _agree(sol, ref)
    # an in-memory X is partitioned over the workers of the client given
    dense = problem.solve(X.toarray(), y, "dask-ipm", client=client, tol=1e-8)
    assert dense.status == "optimal"
    _agree(dense, ref)


def test_auto_sends_tall_dense_data_to_dask_ipm_and_wide_or_sparse_data_to_dask_cocoa():
    from types import SimpleNamespace

    from robustsvm.distributed.model import DASK_IPM_MAX_FEATURES, choose_distributed_backend

    box = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(1.0), uncertainty=rs.Box(0.1))
    assert choose_distributed_backend(box, SimpleNamespace(is_sparse=False, n=10_000, d=50)) == "dask-ipm"
    assert choose_distributed_backend(box, SimpleNamespace(is_sparse=True, n=10_000, d=50)) == "dask-cocoa"
    # wide dense data: dask-ipm while the rows are at least twice the features and d ≤ 2048
    assert choose_distributed_backend(box, SimpleNamespace(is_sparse=False, n=4000, d=1500)) == "dask-ipm"
    assert choose_distributed_backend(box, SimpleNamespace(is_sparse=False, n=2999, d=1500)) == "dask-cocoa"
    assert choose_distributed_backend(box, SimpleNamespace(is_sparse=False, n=10 ** 7,
                                                           d=DASK_IPM_MAX_FEATURES + 1)) == "dask-cocoa"
    one_ball = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(1.0), uncertainty=rs.Ball(0.1, p=1))
    assert choose_distributed_backend(one_ball, SimpleNamespace(is_sparse=False, n=10_000, d=50)) == "dask-cocoa"
    with pytest.raises(rs.UnsupportedModelError, match="no distributed backend solves this model"):
        choose_distributed_backend(rs.Problem(loss=rs.Hinge(), penalty=rs.L2(1.0), uncertainty=rs.Ball(0.1, p=3)),
                                   SimpleNamespace(is_sparse=False, n=10_000, d=50))


def test_auto_follows_the_rule_before_the_rows_are_partitioned():
    """``choose_backend`` on a dask array not partitioned yet (the shape alone) applies the documented rule:
    ``dask-ipm`` for dense data with at most 2048 features and twice as many rows only, whatever the cost model
    would predict."""
    import scipy.sparse as sp

    from robustsvm import solve_path
    from robustsvm.distributed.model import DASK_IPM_MAX_FEATURES

    box = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(1.0), uncertainty=rs.Box(0.1))
    wide = DASK_IPM_MAX_FEATURES + 100
    chunk = sp.random(50, wide, density=0.01, format="csr", random_state=0)
    sparse = da.concatenate([da.from_array(chunk, chunks=chunk.shape, asarray=False)] * 4, axis=0)
    assert solve_path.choose_backend(box, sparse) == "dask-cocoa"
    narrow = da.concatenate([da.from_array(chunk[:, :40], chunks=(50, 40), asarray=False)] * 4, axis=0)
    assert solve_path.choose_backend(box, narrow) == "dask-cocoa"  # sparse: never the d × d reductions
    assert solve_path.choose_backend(box, da.zeros((400, 40), chunks=(100, 40))) == "dask-ipm"
    assert solve_path.choose_backend(box, da.zeros((400, wide), chunks=(100, wide))) == "dask-cocoa"


def test_a_model_dask_cocoa_refuses_on_wide_sparse_data_is_not_sent_to_dask_ipm():
    from types import SimpleNamespace

    from robustsvm.backends.robust_dcd import ELLIPSOID_MAX_FEATURES
    from robustsvm.distributed.model import DASK_IPM_MAX_FEATURES, choose_distributed_backend

    d = max(ELLIPSOID_MAX_FEATURES, DASK_IPM_MAX_FEATURES) + 1
    too_big = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(1.0), uncertainty=rs.Ellipsoid(np.eye(d), 0.1))
    with pytest.raises(rs.UnsupportedModelError, match="dask-ipm reduces the rows to dense"):
        choose_distributed_backend(too_big, SimpleNamespace(is_sparse=True, d=d))


def test_dask_ipm_named_on_wide_sparse_data_refuses_before_it_starts_naming_dask_cocoa(client):
    import scipy.sparse as sp

    from robustsvm.distributed.model import DASK_IPM_MAX_FEATURES, DASK_IPM_MAX_SPARSE_FEATURES

    rng = np.random.default_rng(21)
    d = DASK_IPM_MAX_SPARSE_FEATURES + 88
    chunks = [sp.random(60, d, density=0.02, format="csr", random_state=k) for k in range(3)]
    Xd = da.concatenate([da.from_array(c, chunks=c.shape, asarray=False) for c in chunks], axis=0)
    y = np.where(rng.random(180) > 0.5, 1, -1)
    problem = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(1.0))
    with pytest.raises(rs.UnsupportedModelError, match="solver='dask-cocoa' solves it") as info:
        problem.solve(Xd, y, "dask-ipm", client=client)
    assert f"{d} × {d}" in str(info.value)
    dense = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(1.0))  # dense data beyond the client's Newton matrix
    Xw = da.zeros((60, DASK_IPM_MAX_FEATURES + 1), chunks=(30, DASK_IPM_MAX_FEATURES + 1))
    with pytest.raises(rs.UnsupportedModelError, match="solver='dask-cocoa' solves it"):
        dense.solve(Xw, y[:60], "dask-ipm", client=client)


def test_dask_ipm_certifies_wide_dense_data_as_feature_ipm_does(client):
    """Dense data with more than 512 features (the former limit) and twice as many rows: ``auto`` chooses dask-ipm,
    which certifies the robust, sign-constrained model; its certified interval meets feature-ipm's."""
    rng = np.random.default_rng(5)
    n, d = 1400, 600
    X = rng.standard_normal((n, d))
    w0 = rng.standard_normal(d) / np.sqrt(d)
    y = np.where(X @ w0 + 0.5 * rng.standard_normal(n) > 0, 1, -1)
    signs = np.zeros(d, dtype=int)
    signs[: d // 2] = np.where(w0[: d // 2] > 0, 1, -1)
    problem = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(1.0 / n), uncertainty=rs.Ball(0.1), signs=signs)
    sol = problem.solve(da.from_array(X, chunks=(n // 2, d)), y, "auto", client=client, tol=1e-6)
    assert sol.solver == "dask-ipm" and sol.status == "optimal"
    assert sol.gap <= 1e-6 * abs(sol.objective) + 1e-12
    ref = problem.solve(X, y, "feature-ipm", tol=1e-8)
    _agree(sol, ref)
    assert np.all(sol.w[signs > 0] >= 0) and np.all(sol.w[signs < 0] <= 0)


@pytest.mark.parametrize("tried", [0.97, 1e6], ids=["tried-step", "always-refused"])
def test_fused_rounds_cut_rounds_and_a_refused_step_costs_a_round_not_the_answer(client, monkeypatch, tried):
    """The corrector's round forms the next Newton system at a tried step: fewer than three rounds per
    iteration when the step is taken; when every tried step is refused (the step then taken by a round of its
    own) the fit still certifies the same optimum, in three rounds per iteration."""
    from robustsvm.distributed import ipm

    monkeypatch.setattr(ipm, "_TRY", tried)
    X, y = make_classification(1600, 8, seed=3)
    problem = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(1e-3), uncertainty=rs.Box(0.02), signs=[1, 0, 0, -1, 0, 0,
                                                                                                 0, 0])
    sol = problem.solve(da.from_array(X, chunks=(800, 8)), y, "dask-ipm", client=client, tol=1e-6)
    assert sol.status == "optimal" and sol.gap <= 1e-6 * abs(sol.objective) + 1e-12
    _agree(sol, problem.solve(X, y, "feature-ipm", tol=1e-9))
    if tried < 1:  # three rounds per iteration and four more without the fused round
        assert sol.extra["rounds"] < 3 * sol.iterations, (sol.extra["rounds"], sol.iterations)
    else:  # the start, the first Newton round, then three per iteration
        assert sol.extra["rounds"] >= 3 * sol.iterations + 2, (sol.extra["rounds"], sol.iterations)


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_the_fit_snippet_of_the_docs_runs_pasted_into_a_script(tmp_path):
    """docs/distributed.md's "A fit" block, as a script: the cluster's worker processes import it again, so it
    needs its ``if __name__ == "__main__":`` guard; run here on a cohort written to .npy files."""
    import re
    import subprocess
    import sys
    from pathlib import Path

    page = (Path(__file__).resolve().parents[1] / "docs" / "distributed.md").read_text(encoding="utf-8")
    section = page[page.index("## A fit"):]
    script = re.search(r"```text\n(.*?)```", section, re.DOTALL).group(1)
    assert 'if __name__ == "__main__":' in script
    rng = np.random.default_rng(3)
    X = rng.standard_normal((2000, 5))
    y = np.where(X @ [1.0, 0.3, 0.0, -1.0, 0.2] + 0.5 * rng.standard_normal(2000) > 0.4, "case", "control")
    (tmp_path / "cohort").mkdir()
    da.to_npy_stack(tmp_path / "cohort" / "X", da.from_array(X, chunks=(500, 5)))
    da.to_npy_stack(tmp_path / "cohort" / "y", da.from_array(y.astype("U7"), chunks=500))
    (tmp_path / "fit.py").write_text(script, encoding="utf-8")
    out = subprocess.run([sys.executable, "fit.py"], capture_output=True, text=True, timeout=540, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "status" in out.stdout and (tmp_path / "model.json").is_file()


def test_round_states_go_to_files_above_the_memory_limit_and_come_back_whole(tmp_path):
    from robustsvm.distributed._spilled_states import SpilledStates

    states = SpilledStates(limit=1.0, folder=str(tmp_path))  # any process is above one byte: every old state goes
    arrays = {(v, k): np.arange(1000.0) * (v + 10 * k) for v in range(3) for k in range(2)}
    for key, value in arrays.items():
        states.put(key, value, keep=[(2, 0)])
    assert states.written == len(arrays) - 2  # all but the newest and the one kept
    assert set(states) == set(arrays) and len(list(tmp_path.rglob("*.pkl"))) == states.written
    for key, value in arrays.items():
        np.testing.assert_array_equal(states[key], value)
    states.drop([0, 1])
    assert set(states) == {(2, 0), (2, 1)} and len(list(tmp_path.rglob("*.pkl"))) == 0
    unlimited = SpilledStates(limit=None, folder=str(tmp_path))
    unlimited.limit = None
    unlimited.put((0, 0), np.zeros(3))
    assert unlimited.written == 0


_FAULTS = """
import resource
import numpy as np
from robustsvm.distributed._worker_memory import reuse_freed_memory

def faults():
    live = [np.ones(200_000) for _ in range(4)]  # 1.6 MB each: a round's per-sample arrays
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for i in range(50):
        live[i % 4] = None
        live[i % 4] = np.ones(200_000)
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before

fresh = faults()
applied = reuse_freed_memory()
faults()
print(fresh, faults(), applied, reuse_freed_memory())
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc")
def test_a_worker_environment_that_fixes_malloc_reuses_freed_arrays_once_the_thresholds_are_set():
    env = {**os.environ, "MALLOC_TRIM_THRESHOLD_": "65536"}  # what Dask's nanny gives its workers
    env.pop("MALLOC_MMAP_THRESHOLD_", None)
    out = subprocess.run([sys.executable, "-c", _FAULTS], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    fresh, reused, applied, again = out.stdout.split()
    assert applied == again == "True"
    # without the thresholds each array is a new mapping: its 391 pages fault on first touch; with them, the
    # freed arrays are reused
    assert int(fresh) >= 50 * 350 and int(reused) <= int(fresh) / 20
    env["MALLOC_MMAP_THRESHOLD_"] = "131072"  # a threshold the user chose is kept
    out = subprocess.run([sys.executable, "-c", _FAULTS], capture_output=True, text=True, env=env, timeout=120)
    assert out.stdout.split()[2] == "False"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc")
def test_round_servers_set_the_thresholds_on_workers_started_by_a_nanny(client):
    X, y = _tall()
    data = partition(da.from_array(X, chunks=(300, -1)), y, client=client).per_worker()
    assert data.serve() is data and data.rounds == 0  # the servers made before any round
    assert [data._call(server, "memory_reuse").result() for server in data._servers()] == [True, True]
    assert [data._call(server, "busy_seconds").result() for server in data._servers()] == [0.0, 0.0]


def test_the_rows_products_in_single_precision_are_close_and_in_double_precision_exact():
    from robustsvm.distributed import _ipm_rows as rows
    from robustsvm.distributed.blocks import Block

    rng = np.random.default_rng(3)
    n, d, radius = 80_000, 8, 0.1  # n·(d+2)(d+3)/2 above Design.BLOCK: the Gram matrix made a float32 copy
    X = rng.standard_normal((n, d))
    y = np.where(rng.standard_normal(n) > 0, 1.0, -1.0)
    block = Block(X, y, np.ones(n), 0)
    z0 = np.zeros(d + 2)
    z0[:d] = 0.1
    st, _ = rows.start(block, None, z0, 1.0 / n, radius, False)
    st, _ = rows.advance_and_newton(block, st, 0.0, None, True, None)  # a single-precision Gram: its copy made
    A = np.column_stack([y[:, None] * X, np.full(n, radius), y])  # the rows a_i = (y_i x_i, r, y_i)
    V = rng.standard_normal((2, n))
    exact = V @ A
    np.testing.assert_allclose(st.tdot(block, V), exact, rtol=1e-12, atol=1e-12 * np.abs(exact).max())
    single = st.tdot(block, V, coarse=True)
    assert np.abs(single - exact).max() <= 1e-5 * np.abs(V).sum(axis=1).max() * np.abs(X).max()
    assert np.abs(single - exact).max() > 1e-9 * np.abs(exact).max()  # read from the float32 copy
    z = rng.standard_normal(d + 2)
    np.testing.assert_allclose(st.dot(block, z), A @ z, rtol=1e-12, atol=1e-12)
    assert np.abs(st.dot(block, z, coarse=True) - A @ z).max() <= 1e-5 * np.abs(z).sum() * np.abs(X).max()

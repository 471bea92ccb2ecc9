"""Data on a Dask cluster: partitions kept on the workers, rounds over them, and the distributed interior point.

One LocalCluster of two worker processes per module. Every fit is compared with an independent in-memory
solve (feature-ipm, Clarabel) through intervals the certificates prove: the reference's own
``[objective − gap, objective]`` must meet the distributed fit's ``[objective − gap, objective]``.
"""

from __future__ import annotations

import os
import signal

import numpy as np
import pytest

import robustsvm as rs
from robustsvm.distributed.data import WorkerLostError, partition

from .conftest import make_classification

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
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


def test_data_read_from_npy_files_stay_on_disk(client, tmp_path):
    X, y = _tall(1000, 5, seed=4)
    da.to_npy_stack(str(tmp_path), da.from_array(X, chunks=(250, 5)))
    Xd = da.from_npy_stack(str(tmp_path), mmap_mode="r")
    parts = partition(Xd, y, client=client)
    assert all(parts.map(_on_disk))
    np.testing.assert_allclose(sum(o[0] for o in parts.map(_row_sums, np.ones(5))), X.sum(), rtol=1e-12)


def _on_disk(block):
    return block.on_disk


def test_worker_lost_error_is_a_clear_failure():
    assert issubclass(WorkerLostError, RuntimeError)


# --------------------------------------------------------------------------------------- the interior point
def _interval(sol):
    return sol.objective - sol.gap, sol.objective


def _agree(a, b, slack=1e-9):
    """The optimum lies in both certified intervals, so they must meet (up to rounding)."""
    lo_a, hi_a = _interval(a)
    lo_b, hi_b = _interval(b)
    scale = slack * max(1.0, abs(hi_a))
    assert lo_a <= hi_b + scale and lo_b <= hi_a + scale, (_interval(a), _interval(b))


@pytest.mark.parametrize("unc", [None, rs.Box(0.05), rs.Ball(0.1), rs.Ball(0.05, p=np.inf)],
                         ids=["nominal", "box", "ball2", "ballinf"])
def test_dask_ipm_agrees_with_feature_ipm_on_a_generated_set(client, unc):
    X, y = make_classification(900, 6, seed=7)
    problem = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(0.1) + rs.L1(0.01), uncertainty=unc,
                         signs=[1, 0, -1, 0, 0, 0])
    sol = problem.solve(da.from_array(X, chunks=(300, 6)), y, "dask-ipm", client=client, tol=1e-7)
    ref = problem.solve(X, y, "feature-ipm", tol=1e-9)
    assert sol.status == "optimal" and sol.gap <= 1e-7 * abs(sol.objective) + 1e-12
    _agree(sol, ref)
    assert np.all(sol.w[0] >= 0) and np.all(sol.w[2] <= 0)
    assert sol.extra["rounds"] > 0 and sol.extra["partitions"] == 3
    np.testing.assert_array_equal(sol.classes, ref.classes)

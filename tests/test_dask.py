"""A grid on a Dask cluster of two worker processes returns exactly the serial numbers."""

from __future__ import annotations

import numpy as np
import pytest

import robustsvm as rs
from robustsvm import model_selection as ms

from .conftest import make_classification

# a cluster that does not start or answer fails the test instead of hanging the suite
pytestmark = pytest.mark.timeout(180)


@pytest.fixture(scope="module")
def cluster():
    from distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as c:
        yield c


def test_dask_grid_equals_serial(cluster):
    from distributed import Client

    X, y = make_classification(80, 4, seed=31)
    model = rs.Problem(loss=rs.Hinge(reduction="sum"), penalty=rs.L2(1.0) + rs.L1(0.1), uncertainty=rs.Ball(0.01))
    grid = {"l2": [0.25, 2.0], "l1": [0.0, 0.5], "radius": [1e-4, 0.05]}
    serial = ms.grid_search(model, X, y, grid, cv=3, progress=False)
    with Client(cluster) as client:
        on_dask = ms.grid_search(model, X, y, grid, cv=3, client=client, progress=False)
        assert len(client.nthreads()) == 2
    assert on_dask.n_compiles == 2  # one program per task, one task per worker
    np.testing.assert_array_equal(on_dask.weights, serial.weights)
    np.testing.assert_array_equal(on_dask.intercepts, serial.intercepts)
    np.testing.assert_array_equal(on_dask.scores, serial.scores)
    np.testing.assert_array_equal(on_dask.statuses, serial.statuses)
    # an address opens and closes its own client; more chunks than workers
    by_address = ms.grid_search(model, X, y, grid, cv=3, client=cluster.scheduler_address, n_chunks=4,
                                progress=False)
    assert by_address.n_compiles == 4
    np.testing.assert_array_equal(by_address.weights, serial.weights)

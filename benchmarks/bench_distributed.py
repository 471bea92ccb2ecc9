"""One model on a Dask cluster: the distributed interior point (``dask-ipm``) on tall data stored on disk.

Tall part (n ≫ d). A generated set (Gaussian rows, labels from a sparse sign-consistent ``w`` with 10 %
flipped) is written chunk by chunk to ``.npy`` files (``dask.array.to_npy_stack``: never in memory at once),
its size larger than each worker's ``memory_limit``; the workers read it memory-mapped and stream it in
slices every round. The Box-robust, sign-constrained hinge SVM is fitted to a certified relative gap of
1e-4. In one run it measures:

* the fit on the large set with 2 workers: time, interior-point iterations, rounds, the bytes the client
  received per round, and the client's peak memory (RSS sampled every 20 ms) against the data size;
* (each timed fit follows an untimed one on 20,000 rows: imports and compiled kernels are loaded first)
* on the largest size of the list that fits one process: ``feature-ipm`` in memory against ``dask-ipm``
  with 2 workers and with 1 worker (same data, same tolerance), and the relative difference of the
  certified objectives.

Wide sparse part (``benchmarks/_bench_distributed_wide.py``): ``dask-cocoa`` (CoCoA+) against single-process
``robust-dcd`` on a Cora-shaped sparse set with ten times Cora's rows (``--quick``: Cora's rows).

Against Spark (``--spark``, ``benchmarks/_bench_distributed_spark.py``): ``dask-ipm`` with 2 and 1 workers
against Spark MLlib ``LinearSVC`` in ``local[2]`` and ``local[1]`` on dense tall data (``--rows`` × 100),
nominal hinge + L2(1e-4) with a free intercept, interleaved rounds (``--rounds``), loading excluded for both
(needs the ``bench-spark`` extra: ``pip install -e .[bench-spark]`` and Java 17).

Two workers against one and wide dense data (``--scaling``, ``benchmarks/_bench_distributed_scaling.py``):
``dask-cocoa`` with 2 and 1 workers on the Cora-shaped set × 10 (the same two partitions, interleaved rounds,
beside the bare products' own speed-up), and ``dask-ipm`` on wide dense 4,000 × 1,500 (``Ball(0.1)``, signs on
half the features) against in-memory ``feature-ipm`` and ``robust-dcd``.

Writes ``benchmarks/results/distributed.md`` (``distributed_spark.md`` with ``--spark``,
``distributed_scaling.md`` with ``--scaling``). Run::

    nice -n 10 .venv/bin/python benchmarks/bench_distributed.py            # 4e6 x 50 on disk (1.6 GB)
    nice -n 10 .venv/bin/python benchmarks/bench_distributed.py --quick    # 2e5 x 20
    nice -n 10 .venv/bin/python benchmarks/bench_distributed.py --spark --rows 200000 --rounds 3
    nice -n 10 .venv/bin/python benchmarks/bench_distributed.py --scaling --rounds 3

Dask's configuration applies to the clusters they start; for instance, with the workers' statistical profiler
off: ``DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED=False`` before the command (and ``--output`` another file).
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import tempfile
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np

import robustsvm as rs

ROOT = Path(__file__).resolve().parents[1]
OUTPUT = ROOT / "benchmarks" / "results" / "distributed.md"


def machine() -> str:
    import dask

    profiler = "on" if dask.config.get("distributed.worker.profile.enabled", True) else "off"
    return (f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, numpy "
            f"{np.__version__}, dask {dask.__version__}; the workers' statistical profiler {profiler} "
            "(`distributed.worker.profile.enabled`)")


def _block(block_id, d: int, rows: int, seed: int):
    """Rows of chunk ``block_id``: Gaussian features (deterministic per chunk)."""
    rng = np.random.default_rng([seed, block_id[0]])
    return rng.standard_normal((rows, d))


def _labels(X: np.ndarray, w: np.ndarray, seed: int) -> np.ndarray:
    rng = np.random.default_rng([seed, int(abs(X[0, 0]) * 1e6)])
    y = np.where(X @ w > 0, 1.0, -1.0)
    flip = rng.random(y.size) < 0.1
    return np.where(flip, -y, y)


def write_tall(folder: Path, n: int, d: int, chunk: int, seed: int = 0):
    """Write X (n × d float64) and y to ``folder/X`` and ``folder/y`` as npy stacks, one chunk at a time."""
    import dask.array as da

    sizes = [chunk] * (n // chunk) + ([n % chunk] if n % chunk else [])
    w = np.zeros(d)
    w[: d // 5] = np.linspace(1.0, 0.2, d // 5)
    w[d // 5: d // 4] = -0.5
    X = da.map_blocks(lambda block_id=None: _block(block_id, d, sizes[block_id[0]], seed), dtype=np.float64,
                      chunks=(tuple(sizes), (d,)))
    y = X.map_blocks(_labels, w, seed, drop_axis=1, dtype=np.float64)
    folder.mkdir(parents=True, exist_ok=True)
    da.to_npy_stack(str(folder / "X"), X)
    da.to_npy_stack(str(folder / "y"), y)
    return w


class PeakMemory:
    """The peak resident memory of this process while the block runs (sampled every 20 ms)."""

    def __enter__(self):
        import psutil

        self._proc = psutil.Process()
        self.start = self.peak = self._proc.memory_info().rss
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self):
        while not self._stop.wait(0.02):
            self.peak = max(self.peak, self._proc.memory_info().rss)

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def problem_for(d: int) -> rs.Problem:
    signs = np.zeros(d, dtype=int)
    signs[: d // 5] = 1
    return rs.Problem(loss=rs.Hinge(), penalty=rs.L2(1e-3), uncertainty=rs.Box(0.01), signs=signs)


def fit_on_cluster(folder: Path, workers: int, memory_limit: str | None, tol: float, on_disk: bool = True):
    """The fit on a LocalCluster; ``on_disk``: the workers stream the memory-mapped files and the time includes
    the partitioning; else they load their chunks into memory before the clock starts (loading excluded, as for
    the in-memory ``feature-ipm``). ``memory_limit`` None: LocalCluster's default, the machine's memory shared
    among the workers."""
    import dask.array as da
    from distributed import Client, LocalCluster

    from robustsvm.distributed.ipm import solve_dask_ipm
    from robustsvm.distributed.model import distributed_model

    X = da.from_npy_stack(str(folder / "X"), mmap_mode="r" if on_disk else None)
    y = da.from_npy_stack(str(folder / "y"), mmap_mode="r")
    problem = problem_for(X.shape[1])
    limit = {} if memory_limit is None else {"memory_limit": memory_limit}
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0",
                      **limit) as cluster, Client(cluster) as client:
        # imports and compiled kernels loaded in every worker (a chunk each), not timed
        warm = min(X.shape[0], 20_000)
        chunk = -(-warm // workers)
        problem.solve(X[:warm].rechunk((chunk, -1)), y[:warm].rechunk(chunk), "dask-ipm", client=client, tol=tol)
        model = None
        if not on_disk:  # the rows partitioned, placed and held by the workers first
            model = distributed_model(problem, X, y, client=client)
            model.data.per_worker().serve()
        with PeakMemory() as mem:
            t0 = time.perf_counter()
            if model is None:
                sol = problem.solve(X, y, "dask-ipm", client=client, tol=tol)
            else:
                res = solve_dask_ipm(model, tol=tol)
                sol = SimpleNamespace(status=res.status, relative_gap=res.rel_gap, iterations=res.iterations,
                                      objective=res.primal_objective, extra=res.extra)
            elapsed = time.perf_counter() - t0
    return sol, elapsed, mem


def in_one_process(folder: Path, sol, elapsed: float, tol: float) -> list[str]:
    """The same on-disk data loaded whole into this process and fitted by the in-memory feature-ipm."""
    import dask.array as da

    t0 = time.perf_counter()
    X = np.asarray(da.from_npy_stack(str(folder / "X")).compute())
    y = np.asarray(da.from_npy_stack(str(folder / "y")).compute())
    t_load = time.perf_counter() - t0
    problem = problem_for(X.shape[1])
    problem.solve(X[:20_000], y[:20_000], "feature-ipm", tol=tol)  # compiled kernels, not timed
    t0 = time.perf_counter()
    ref = problem.solve(X, y, "feature-ipm", tol=tol)
    t_fit = time.perf_counter() - t0
    n = len(y)
    del X, y
    rel = (sol.objective - ref.objective) / max(1.0, abs(ref.objective))
    return [f"The same {n:,} rows loaded whole into one "
            f"process ({t_load:.1f} s to read) and fitted by the in-memory `feature-ipm`: {ref.status}, relative gap "
            f"{ref.relative_gap:.1e}, {ref.iterations} iterations, **{t_fit:.1f} s**; dask-ipm on 2 workers took "
            f"{elapsed / t_fit:.2f}× that, reading the rows from disk at every round (objectives differ by "
            f"{rel:+.1e}, relative).", ""]


def tall(args) -> list[str]:
    n_big, d, chunk = (200_000, 20, 25_000) if args.quick else (4_000_000, 50, 250_000)
    n_mem = 100_000 if args.quick else 1_000_000
    tol = 1e-4
    lines = [f"### Tall data: dask-ipm on {n_big:,} × {d} stored on disk", "",
             f"Command: `{args.command}`. Machine: {machine()}. LocalCluster of worker processes, one thread "
             f"each, `memory_limit={args.memory_limit}`; the data are written chunk by chunk to `.npy` files "
             f"(`dask.array.to_npy_stack`, chunks of {chunk:,} rows) and read memory-mapped; model: hinge, "
             f"L2(1e-3), Box(0.01), {d // 5} signs, free intercept; `tol={tol:g}` (certified relative gap)."
             + (" A `--quick` run on reduced sizes: it checks the machinery, and its times are only indicative."
                if args.quick else ""), ""]
    base = Path(tempfile.mkdtemp(prefix="bench-distributed-", dir=args.scratch))
    try:
        write_tall(base / "big", n_big, d, chunk)
        data_bytes = n_big * d * 8
        sol, elapsed, mem = fit_on_cluster(base / "big", 2, args.memory_limit, tol)
        lines += ["| data on disk | workers | status | rel. gap | iterations | rounds | bytes to the client per "
                  "round | client peak RSS (growth) | time |", "|---|---|---|---|---|---|---|---|---|",
                  f"| {data_bytes / 1e9:.2f} GB | 2 | {sol.status} | {sol.relative_gap:.1e} | {sol.iterations} | "
                  f"{sol.extra['rounds']} | {sol.extra['bytes_per_round']:,.0f} | {mem.peak / 1e6:.0f} MB "
                  f"(+{(mem.peak - mem.start) / 1e6:.0f} MB) | {elapsed:.1f} s |", ""]
        lines += in_one_process(base / "big", sol, elapsed, tol)
        # the largest size of the list that fits one process: in memory against 2 and 1 workers
        write_tall(base / "mem", n_mem, d, max(n_mem // 8, 1))
        import dask.array as da

        Xm = np.asarray(da.from_npy_stack(str(base / "mem" / "X")).compute())
        ym = np.asarray(da.from_npy_stack(str(base / "mem" / "y")).compute())
        problem = problem_for(d)
        problem.solve(Xm[:20_000], ym[:20_000], "feature-ipm", tol=tol)  # compiled kernels, not timed
        t0 = time.perf_counter()
        ref = problem.solve(Xm, ym, "feature-ipm", tol=tol)
        t_mem = time.perf_counter() - t0
        del Xm
        rows = [("feature-ipm, in memory", ref, t_mem)]
        for workers in (2, 1):
            s, t, _ = fit_on_cluster(base / "mem", workers, None, tol, on_disk=False)
            rows.append((f"dask-ipm, {workers} worker{'s' if workers > 1 else ''}", s, t))
        lines += [f"In memory against the cluster on {n_mem:,} × {d} (the same data, loaded into the workers' "
                  "memory before the clock starts, as it is for `feature-ipm`; workers without the limit above, "
                  "LocalCluster's default share of the machine's memory; one interleaved run):", "",
                  "| solver | status | rel. gap | iterations | time | time / feature-ipm | objective − feature-ipm's "
                  "(relative) |", "|---|---|---|---|---|---|---|"]
        for name, s, t in rows:
            rel = (s.objective - ref.objective) / max(1.0, abs(ref.objective))
            lines.append(f"| {name} | {s.status} | {s.relative_gap:.1e} | {s.iterations} | {t:.2f} s | "
                         f"{t / t_mem:.2f} | {rel:+.1e} |")
        two, one = rows[1][2], rows[2][2]
        lines += ["", f"Speed-up of 2 workers over 1: {one / two:.2f}×. Every round moves, per partition, the "
                      f"upper triangle of a ({d}+2)² Gram matrix or a few vectors of {d}+2 numbers, plus scalars; "
                      "the rows never leave the workers.", ""]
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return lines


def wide(args) -> list[str]:
    """The wide sparse part: ``dask-cocoa`` against single-process robust-dcd (``_bench_distributed_wide``)."""
    import sys

    from distributed import Client, LocalCluster

    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from benchmarks._bench_distributed_wide import bench_wide_sparse

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                      memory_limit=args.memory_limit) as cluster, Client(cluster) as client:
        return [bench_wide_sparse(client, quick=args.quick)["markdown"]]


def against_spark(args) -> int:
    """dask-ipm (2 and 1 workers) against Spark ``LinearSVC`` (``local[2]``, ``local[1]``), interleaved."""
    import sys

    import dask.array as da

    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from benchmarks._bench_distributed_spark import bench_spark, tall_data

    X, y = tall_data(args.rows, 100)
    base = Path(tempfile.mkdtemp(prefix="bench-spark-", dir=args.scratch))
    try:
        chunk = -(-args.rows // 8)
        da.to_npy_stack(str(base / "X"), da.from_array(X, chunks=(chunk, 100)))
        da.to_npy_stack(str(base / "y"), da.from_array(y, chunks=chunk))
        command = f"python benchmarks/bench_distributed.py --spark --rows {args.rows} --rounds {args.rounds}"
        lines = bench_spark(base, X, y, args.rounds, command, machine())
    finally:
        shutil.rmtree(base, ignore_errors=True)
    output = args.output if args.output != OUTPUT else OUTPUT.with_name("distributed_spark.md")
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    return 0


def scaling(args) -> int:
    """Two workers against one on the sparse wide case, and dask-ipm on wide dense data."""
    import sys

    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from benchmarks._bench_distributed_scaling import scaling_section

    command = (f"python benchmarks/bench_distributed.py --scaling --rounds {args.rounds}"
               + (" --quick" if args.quick else ""))
    lines = scaling_section(args.rounds, command, machine(), quick=args.quick)
    output = args.output if args.output != OUTPUT else OUTPUT.with_name("distributed_scaling.md")
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="reduced sizes (checks the machinery)")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    parser.add_argument("--memory-limit", default="1GB", help="each worker's memory_limit")
    parser.add_argument("--scratch", default=None, help="folder for the generated files (a temporary one)")
    parser.add_argument("--spark", action="store_true", help="only dask-ipm against Spark LinearSVC")
    parser.add_argument("--scaling", action="store_true",
                        help="only 2 against 1 workers (sparse wide) and dask-ipm on wide dense data")
    parser.add_argument("--rows", type=int, default=400_000, help="rows of the --spark data (100 features)")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds of --spark and --scaling")
    args = parser.parse_args(argv)
    if args.spark:
        return against_spark(args)
    if args.scaling:
        return scaling(args)
    args.command = "python benchmarks/bench_distributed.py" + (" --quick" if args.quick else "")
    lines = ["## Distributed fits (Dask)", "", *tall(args), *wide(args)]
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

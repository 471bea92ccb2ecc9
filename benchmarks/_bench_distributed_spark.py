"""dask-ipm against Spark MLlib ``LinearSVC`` (local mode) on the model Spark has: nominal hinge, L2, free intercept.

The model. Spark's linear methods minimise ``λ R(w) + (1/n) Σ_i L(w; x_i, y_i)`` with ``R(w) = ½‖w‖²`` for L2
(``regParam`` is λ; the intercept is not penalised), and ``LinearSVC`` uses the hinge. With
``standardization=False`` (the default ``True`` penalises the coefficients of the standardised features, a
different model) that is the package's ``Problem(loss=Hinge(), penalty=L2(λ))`` with the mean loss and a free
intercept. Spark stops on its own tolerance and reports no bound: its ``(w, b)`` is scored here by the package's
objective, beside the certified objective and gap of ``dask-ipm``.

Timing. Wall time of the fit alone for both: the data are loaded before the clock starts (``dask-ipm``: the rows
partitioned and held on the workers, :func:`robustsvm.distributed.model.distributed_model`; Spark: the
DataFrame assembled, cached and counted). Rounds are interleaved (``dask-ipm`` with 2 and 1 workers, Spark
``local[2]`` and ``local[1]``), so the machine's load touches every configuration alike; the ratios of each
round are reported with their spread. Each fit has the machine to itself: a cluster is started for each
``dask-ipm`` fit (its rows partitioned and a first fit run, untimed) and closed after it, and each Spark fit runs
in a Python process of its own (its JVM warmed by a small fit first), so that no idle cluster or JVM shares the
two cores with the fit being timed.

Where a ``dask-ipm`` fit's time goes: the client's CPU seconds, the busiest worker's compute seconds (Dask's task
stream) and the wall time outside that worker's compute per round (the client's steps, the scheduler, transfers),
medians over the rounds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import robustsvm as rs

LAM = 1e-4


def tall_data(n: int, d: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Gaussian rows; labels of a dense ``w₀`` with Gaussian noise (about 20 % of the labels disagree with
    ``sign(X w₀)``)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    w0 = rng.standard_normal(d) / np.sqrt(d)
    y = np.where(X @ w0 + 0.6 * rng.standard_normal(n) > 0, 1.0, -1.0)
    return X, y


def problem() -> rs.Problem:
    return rs.Problem(loss=rs.Hinge(), penalty=rs.L2(LAM))


class DaskFit:
    """A LocalCluster of ``workers`` single-threaded workers with the rows already partitioned on it."""

    def __init__(self, folder: Path, workers: int):
        import dask.array as da
        from distributed import Client, LocalCluster

        from robustsvm.distributed.model import distributed_model

        self.workers = workers
        self.cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0")
        self.client = Client(self.cluster, set_as_default=False)
        X = da.from_npy_stack(str(folder / "X"), mmap_mode="r")
        y = da.from_npy_stack(str(folder / "y"))
        t0 = time.perf_counter()
        self.model = distributed_model(problem(), X, y, client=self.client)
        self.load = time.perf_counter() - t0
        self.fit()  # imports and compiled kernels loaded on the workers, not timed

    def fit(self):
        """The fit: ``(result, wall seconds)``; :attr:`where` keeps where its time went (client CPU seconds, the
        busiest worker's compute seconds as its round server counts them, rounds)."""
        from robustsvm.distributed.ipm import solve_dask_ipm

        data = self.model.data.per_worker()
        busy0 = data.busy_seconds()
        c0 = time.process_time()
        t0 = time.perf_counter()
        res = solve_dask_ipm(self.model, tol=1e-4, max_iter=100)
        elapsed = time.perf_counter() - t0
        cpu = time.process_time() - c0
        busy = [b - a for a, b in zip(busy0, data.busy_seconds(), strict=True)]
        self.where = {"client_cpu": cpu, "rounds": res.extra["rounds"], "compute": max(busy), "wall": elapsed}
        return res, elapsed

    def products(self) -> float:
        """Seconds for every worker to form its rows' ``XᵀX`` five times (about one interior-point iteration's
        arithmetic, no rounds): the speed-up the machine allows the bare products."""
        data = self.model.data.per_worker()
        t0 = time.perf_counter()
        data.map(_gram_five_times)
        return time.perf_counter() - t0

    def close(self):
        self.client.close()
        self.cluster.close()


def _gram_five_times(block) -> float:
    X = block.rows()
    return float(sum(np.trace(X.T @ X) for _ in range(5)))


def spark_fit(X: np.ndarray, y: np.ndarray, cores: int):
    """Spark ``LinearSVC`` in ``local[cores]``: ``(w, b, fit seconds, load seconds, iterations)``."""
    import pandas as pd
    from pyspark.ml.classification import LinearSVC
    from pyspark.ml.feature import VectorAssembler
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master(f"local[{cores}]").appName("bench-distributed")
             .config("spark.driver.memory", "4g").config("spark.ui.enabled", "false")
             .config("spark.sql.execution.arrow.pyspark.enabled", "true")
             .config("spark.default.parallelism", str(cores)).config("spark.sql.shuffle.partitions", str(cores))
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    try:
        t0 = time.perf_counter()
        names = [f"f{j}" for j in range(X.shape[1])]
        frame = pd.DataFrame(X, columns=names)
        frame["label"] = (y > 0).astype(np.float64)
        df = VectorAssembler(inputCols=names, outputCol="features").transform(spark.createDataFrame(frame))
        df = df.select("features", "label").repartition(cores).cache()
        df.count()
        load = time.perf_counter() - t0
        svc = LinearSVC(regParam=LAM, standardization=False, fitIntercept=True, maxIter=100, tol=1e-6)
        t0 = time.perf_counter()
        model = svc.fit(df)
        elapsed = time.perf_counter() - t0
        w, b = np.asarray(model.coefficients.toArray()), float(model.intercept)
        iters = int(model.summary().totalIterations) if model.hasSummary else -1
        df.unpersist()
    finally:
        spark.stop()
    return w, b, elapsed, load, iters


def spark_in_process(folder: Path, cores: int) -> tuple:
    """:func:`spark_fit` on the rows of ``folder`` in a Python process of its own, after a small untimed fit
    that starts the JVM and compiles its code: ``(w, b, fit seconds, load seconds, iterations)``."""
    root = Path(__file__).resolve().parent.parent
    out = subprocess.run([sys.executable, "-m", "benchmarks._bench_distributed_spark", str(folder), str(cores)],
                         capture_output=True, text=True, cwd=root, check=True)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    return np.asarray(got["w"]), got["b"], got["fit"], got["load"], got["iterations"]


def bench_spark(folder: Path, X: np.ndarray, y: np.ndarray, rounds: int, command: str, machine: str) -> list[str]:
    """Interleaved rounds of dask-ipm (2 and 1 workers) and Spark (local[2], local[1]), each fit alone on the
    machine; a Markdown section."""
    n, d = X.shape
    load_avg = ", ".join(f"{v:.2f}" for v in os.getloadavg())
    prob = problem()
    rows, times = [], {"dask-ipm, 2 workers": [], "dask-ipm, 1 worker": [], "Spark local[2]": [],
                       "Spark local[1]": []}
    bare = {2: [], 1: []}
    where = {2: [], 1: []}
    for r in range(rounds):
        for workers in (2, 1):
            fit = DaskFit(folder, workers)
            try:
                res, t = fit.fit()
                where[workers].append(fit.where)
                bare[workers].append(fit.products())  # after the fit: a fit right after products ran slower
            finally:
                fit.close()
            name = f"dask-ipm, {workers} worker{'s' if workers > 1 else ''}"
            times[name].append(t)
            P = prob.objective(X, y, res.w, res.b)
            rows.append((r, name, res.status, P, res.rel_gap, f"{res.iterations} it., {res.extra['rounds']} "
                         f"rounds", t, fit.load))
            print(rows[-1], flush=True)
        for cores in (2, 1):
            w, b, t, load, iters = spark_in_process(folder, cores)
            times[f"Spark local[{cores}]"].append(t)
            rows.append((r, f"Spark local[{cores}]", "no certificate", prob.objective(X, y, w, b), np.nan,
                         f"{iters} it.", t, load))
            print(rows[-1], flush=True)
    best = min(row[3] for row in rows)
    lines = [f"## Distributed: dask-ipm against Spark MLlib `LinearSVC` on {n:,} × {d} (the model Spark has)", "",
             f"Command: `{command}`. Machine: {machine}; load average at the start {load_avg} (ratios of "
             "interleaved rounds, with their spread). Model: hinge, L2(λ = 1e-4), free intercept, mean loss — "
             "Spark's objective `λ·½‖w‖² + (1/n) Σ hinge` with `regParam = λ`, `standardization=False` "
             "(Spark's default standardises the features and penalises those coefficients: another model), "
             "`tol=1e-6`, `maxIter=100`. dask-ipm: `tol=1e-4` (certified relative gap), data as a "
             "`.npy` stack opened with `mmap_mode='r'`, held in the workers' memory. **Times are wall times of "
             "the fit alone: loading is excluded for both** (the load column: partitioning the rows on the "
             "workers; Spark's DataFrame built, cached and counted). Spark certifies nothing: its objective "
             "is recomputed by the package (`Problem.objective`) from its `(w, b)`.", "",
             "| round | solver | status | objective − best | certified rel. gap | iterations | fit (s) | "
             "load (s) |", "|---|---|---|---|---|---|---|---|"]
    for r, name, status, P, gap, its, t, load in rows:
        gap_s = "—" if np.isnan(gap) else f"{gap:.1e}"
        lines.append(f"| {r + 1} | {name} | {status} | {P - best:.1e} | {gap_s} | {its} | {t:.1f} | {load:.1f} |")
    d2, d1 = np.array(times["dask-ipm, 2 workers"]), np.array(times["dask-ipm, 1 worker"])
    s2, s1 = np.array(times["Spark local[2]"]), np.array(times["Spark local[1]"])

    def spread(a):
        return f"{np.median(a):.2f}× (rounds {', '.join(f'{v:.2f}' for v in a)})"

    b2, b1 = np.array(bare[2]), np.array(bare[1])
    lines += ["", "Per round, speed-up of two over one (time with 1 ÷ time with 2): dask-ipm "
                  f"{spread(d1 / d2)}; the bare products alone (every worker forms `XᵀX` of its rows five times, no "
                  f"rounds) {spread(b1 / b2)}; Spark {spread(s1 / s2)}. Spark's time ÷ dask-ipm's (above 1: "
                  f"dask-ipm faster): `local[2]` against 2 workers {spread(s2 / d2)}; `local[1]` against 1 worker "
                  f"{spread(s1 / d1)}.", ""]
    lines += ["Where a dask-ipm fit's time goes (medians over the rounds): the client's CPU time (its own steps and "
              "Dask's client threads, which overlap the rounds), the busiest worker's compute time (the time its "
              "round server spent in the rounds' functions), and the wall time outside that worker's compute per "
              "round (the client's steps and the messages):", "",
              "| workers | wall s | rounds | client CPU s | busiest worker's compute s | "
              "wall outside it per round (ms) |", "|---|---|---|---|---|---|"]
    for workers in (2, 1):
        ws = where[workers]
        wall = float(np.median([w["wall"] for w in ws]))
        comp = float(np.median([w["compute"] for w in ws]))
        cpu = float(np.median([w["client_cpu"] for w in ws]))
        n_rounds = int(np.median([w["rounds"] for w in ws]))
        rest = float(np.median([(w["wall"] - w["compute"]) / w["rounds"] for w in ws]))
        lines.append(f"| {workers} | {wall:.2f} | {n_rounds} | {cpu:.2f} | {comp:.2f} | {1e3 * rest:.0f} |")
    lines.append("")
    return lines


if __name__ == "__main__":  # one Spark fit in a process of its own (:func:`spark_in_process`)
    import dask.array as da

    source, n_cores = Path(sys.argv[1]), int(sys.argv[2])
    X_all = np.asarray(da.from_npy_stack(str(source / "X")).compute())
    y_all = np.asarray(da.from_npy_stack(str(source / "y")).compute())
    spark_fit(X_all[:5000], y_all[:5000], n_cores)  # the JVM started and its code compiled, not timed
    w_, b_, fit_s, load_s, its = spark_fit(X_all, y_all, n_cores)
    print(json.dumps({"w": w_.tolist(), "b": b_, "fit": fit_s, "load": load_s, "iterations": its}))

"""The wide sparse part of ``benchmarks/bench_distributed.py``: CoCoA+ (``dask-cocoa``) against single-process
``robust-dcd`` on a Cora-shaped sparse set with ten times Cora's rows.

    .venv/bin/python benchmarks/_bench_distributed_wide.py [--quick]    # alone: prints its section

The data are :func:`robustsvm.datasets.make_cora_like` (binary bag of words, Cora's 12,644 words and density,
``benchmarks/bench_suite.py``'s generator) with 10 × 15,396 = 153,960 rows (``--quick``: 15,396), signs drawn as in
the suite (+1, −1, free with probabilities 0.4, 0.4, 0.2). Model: hinge, ``L2(1e-4)``, ``Ball(0.05)``, signs, no
intercept, ``tol = 1e-4`` (relative duality gap, certified by the package in both runs). ``dask-cocoa`` runs on the
given client with one partition per worker (CSR chunks); the times are wall-clock seconds of one run each,
interleaved, and the CPU seconds of the client process.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

#: Cora's rows and words (``bench_suite``'s Cora-shaped case) and the row multiple of the full run
CORA_ROWS, CORA_WORDS, ROW_MULTIPLE = 15396, 12644, 10
LAMBDA, RADIUS, TOL = 1e-4, 0.05, 1e-4


def _data(rows: int, seed: int = 0):
    from robustsvm.datasets import make_cora_like

    ds = make_cora_like(rows, CORA_WORDS, seed=seed, density=0.0015)
    signs = np.random.default_rng(seed + 1).choice(np.array([1, -1, 0], dtype=np.int8), size=CORA_WORDS,
                                                   p=[0.4, 0.4, 0.2])
    return ds.X, ds.y, signs


def _row(name: str, sol, seconds: float, cpu: float, **more) -> dict:
    return {"solver": name, "status": sol.status, "objective": sol.objective,
            "rel_gap": sol.gap / max(abs(sol.objective), 1e-300), "seconds": seconds, "client_cpu": cpu,
            "iterations": sol.iterations, **more}


def bench_wide_sparse(client, *, quick: bool = False) -> dict:
    """Fit the Cora-shaped × 10 model by ``robust-dcd`` in this process and by ``dask-cocoa`` on ``client``.

    Returns
    -------
    dict
        ``rows`` (one dict per solver: status, objective, relative gap, seconds, client CPU seconds, epochs or
        rounds, bytes per round), ``shape``, ``nnz`` and ``markdown`` (the section for the page).
    """
    import dask.array as da

    import robustsvm as rs

    rows = CORA_ROWS * (1 if quick else ROW_MULTIPLE)
    X, y, signs = _data(rows)
    prob = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(LAMBDA), uncertainty=rs.Ball(RADIUS), signs=signs,
                      intercept=False)
    out = []
    t0, c0 = time.perf_counter(), time.process_time()
    sol = prob.solve(X, y, "robust-dcd", tol=TOL, max_iter=100_000)
    out.append(_row("robust-dcd (1 process)", sol, time.perf_counter() - t0, time.process_time() - c0,
                    unit="epochs"))
    workers = max(len(client.scheduler_info().get("workers", {})), 1)
    Xd = da.from_array(X, chunks=(-(-rows // workers), CORA_WORDS), asarray=False)
    t0, c0 = time.perf_counter(), time.process_time()
    sol_c = prob.solve(Xd, y, "dask-cocoa", client=client, tol=TOL, max_iter=5000)
    out.append(_row(f"dask-cocoa ({workers} workers)", sol_c, time.perf_counter() - t0, time.process_time() - c0,
                    unit="rounds", bytes_per_round=sol_c.extra["bytes_per_round"],
                    seconds_rounds=sol_c.extra["time_rounds"],
                    partitions=sol_c.extra["partitions"]))
    agree = abs(sol_c.objective - sol.objective) <= sol_c.gap + sol.gap + 1e-12
    return {"rows": out, "shape": X.shape, "nnz": int(X.nnz), "agree": bool(agree),
            "markdown": _markdown(out, X.shape, int(X.nnz), agree, quick)}


def _markdown(rows: list[dict], shape, nnz: int, agree: bool, quick: bool) -> str:
    n, d = shape
    lines = [
        "### Wide sparse data: CoCoA+ against single-process robust-dcd",
        "",
        f"Cora-shaped sparse set {'(Cora’s rows, `--quick`)' if quick else '× 10 rows'}: {n:,} × {d:,}, "
        f"{nnz:,} non-zeros (`make_cora_like`, Cora’s density). Model: hinge, `L2({LAMBDA:g})`, "
        f"`Ball({RADIUS:g})`, signs on 80 % of the words, no intercept; both fits certified to a relative duality "
        f"gap of {TOL:g} by the package. `dask-cocoa`: one partition per worker, robust-dcd's epochs as the exact "
        "local solver, the client adds the partitions' sums (σ′ = K) and certifies every round.",
        "",
        "| solver | status | objective | rel. gap | wall s | of which rounds | client CPU s | epochs / rounds | "
        "bytes per round |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        per_round = f"{r['bytes_per_round'] / 1e3:,.0f} kB" if "bytes_per_round" in r else "—"
        in_rounds = f"{r['seconds_rounds']:.2f}" if "seconds_rounds" in r else "—"
        lines.append(f"| {r['solver']} | {r['status']} | {r['objective']:.8g} | {r['rel_gap']:.2e} | "
                     f"{r['seconds']:.2f} | {in_rounds} | {r['client_cpu']:.2f} | {r['iterations']} {r['unit']} | "
                     f"{per_round} |")
    base, cocoa = rows[0], rows[1]
    lines += ["", f"Time ratio dask-cocoa / robust-dcd: {cocoa['seconds'] / base['seconds']:.2f} (wall; the rest of "
              "dask-cocoa's time is the partitioning of the in-memory X onto the workers and the final "
              "certificate's pass). "
              f"The certified intervals {'meet' if agree else 'do NOT meet'}. Bytes per round count what the client "
              "sends (the primal point, v and a few scalars per partition) and receives (each partition's class "
              "images, 2 × d numbers, and its scalars)."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    import argparse

    import distributed

    parser = argparse.ArgumentParser(prog="python benchmarks/_bench_distributed_wide.py",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="Cora's rows instead of ten times them")
    args = parser.parse_args(argv)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        print(bench_wide_sparse(client, quick=args.quick)["markdown"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

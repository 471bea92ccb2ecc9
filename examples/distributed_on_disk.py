"""Fit a certified robust, sign-constrained SVM on data stored on disk, larger than each worker's memory.

The rows are written chunk by chunk to ``.npy`` files (never in memory at once), read memory-mapped by the
workers (``dask.array.from_npy_stack(..., mmap_mode="r")``) and streamed a slice at a time in every round of
the distributed interior point; the client receives only Gram matrices and vectors of d numbers.

    python examples/distributed_on_disk.py --rows 4000000 --features 50    # 1.6 GB, workers of 1 GB
    python examples/distributed_on_disk.py                                  # 400,000 x 50 (160 MB)
"""

from __future__ import annotations

import argparse
import tempfile

import dask.array as da
import numpy as np
from distributed import Client, LocalCluster

import robustsvm as rs


def _rows(block_id=None, rows=0, d=0):
    return np.random.default_rng(block_id[0]).standard_normal((rows, d))


def _labels(X, w):
    return np.where(X @ w + 0.5 * np.random.default_rng(int(1e6 * abs(X[0, 0]))).standard_normal(len(X)) > 0,
                    "case", "control")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=400_000)
    parser.add_argument("--features", type=int, default=50)
    parser.add_argument("--chunk", type=int, default=250_000)
    parser.add_argument("--memory-limit", default="1GB")
    args = parser.parse_args()
    n, d, chunk = args.rows, args.features, min(args.chunk, args.rows)
    sizes = (chunk,) * (n // chunk) + ((n % chunk,) if n % chunk else ())
    w_true = np.where(np.arange(d) < d // 5, 1.0, 0.0)
    with tempfile.TemporaryDirectory() as folder:
        X = da.map_blocks(lambda block_id=None: _rows(block_id, sizes[block_id[0]], d), dtype=np.float64,
                          chunks=(sizes, (d,)))
        da.to_npy_stack(f"{folder}/X", X)  # one chunk at a time
        da.to_npy_stack(f"{folder}/y", X.map_blocks(_labels, w_true, drop_axis=1, dtype="<U7"))
        print(f"wrote {n:,} x {d} float64 ({n * d * 8 / 1e9:.2f} GB) to {folder}")
        X = da.from_npy_stack(f"{folder}/X", mmap_mode="r")
        y = da.from_npy_stack(f"{folder}/y")
        signs = np.where(np.arange(d) < d // 5, 1, 0)  # the first fifth push towards "case" or not at all
        problem = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(1e-3), uncertainty=rs.Box(0.01), signs=signs,
                             positive_class="case")
        with LocalCluster(n_workers=2, threads_per_worker=1, memory_limit=args.memory_limit,
                          dashboard_address=":0") as cluster, Client(cluster) as client:
            sol = problem.solve(X, y, "auto", client=client, tol=1e-4)
            print(sol.summary())
            print(f"rounds {sol.extra['rounds']}, bytes to the client per round {sol.extra['bytes_per_round']:,.0f}")
            print(rs.validate(sol, X, y, client=client))
            accuracy = (sol.predict(X) == y).mean().compute()
            print(f"training accuracy {accuracy:.3f}")


if __name__ == "__main__":
    main()

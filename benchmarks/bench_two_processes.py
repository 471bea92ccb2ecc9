"""What two processes on this machine allow: the same arithmetic split over two processes against one, no Dask.

The distributed backends ask two worker processes to share one model's rows. Before a speed-up of two workers over
one is blamed on the hardware, this measures the hardware alone: each kernel below runs in one process over all the
rows, then in two processes over half of them each (started together, the slower one timed), in fresh
``spawn``-ed processes with single-threaded BLAS, in interleaved rounds. The ratio (one ÷ two) is the speed-up the
machine allows that kernel; the distributed benchmarks' own ratios (``bench_distributed.py --scaling`` and
``--spark``) are read against it.

Kernels, on the shapes of those benchmarks:

* ``Gram``: ``XᵀX`` of dense 400,000 × 100 rows, five times (the interior point's normal matrix; compute-bound);
* ``passes``: ``Xᵀ(X w)`` of the same rows, 100 times (the products of the predictor and the certificate;
  memory-bound);
* ``sparse``: ``Xᵀ(X w)`` of 153,960 × 12,644 CSR rows at Cora's density (the Cora-shaped set × 10), 20 times.

Run from the repository root::

    .venv/bin/python benchmarks/bench_two_processes.py [--rounds 3]

Writes ``benchmarks/results/two_processes.md``.
"""

from __future__ import annotations

import os

if __name__ in ("__main__", "__mp_main__"):  # single-threaded BLAS, set before numpy loads, here and in the pool
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, "1")

import argparse
import platform
import time
from multiprocessing import get_context
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent / "results" / "two_processes.md"
#: kernel: (rows, columns, repetitions, what it forms)
KERNELS = {"Gram": (400_000, 100, 5, "`XᵀX`, dense"), "passes": (400_000, 100, 100, "`Xᵀ(X w)`, dense"),
           "sparse": (153_960, 12_644, 20, "`Xᵀ(X w)`, CSR at Cora's density (3,005,033 non-zeros in all)")}
SPARSE_DENSITY = 3_005_033 / (153_960 * 12_644)


def kernel_seconds(kind: str, part: int, parts: int) -> float:
    """Seconds of ``kind`` over this process's share (``1/parts``) of the rows; the data are made before the clock."""
    import scipy.sparse as sp

    rows, d, reps, _ = KERNELS[kind]
    rng = np.random.default_rng(part)
    m = rows // parts
    X = (sp.random(m, d, density=SPARSE_DENSITY, format="csr", random_state=part, dtype=np.float64)
         if kind == "sparse" else rng.standard_normal((m, d)))
    w = rng.standard_normal(d)
    start = time.perf_counter()
    for _ in range(reps):
        if kind == "Gram":
            X.T @ X
        else:
            X.T @ (X @ w)
    return time.perf_counter() - start


def split_seconds(kind: str, parts: int) -> float:
    """The slowest of ``parts`` processes, each running :func:`kernel_seconds` on its share at the same time."""
    with get_context("spawn").Pool(parts) as pool:
        return max(pool.starmap(kernel_seconds, [(kind, k, parts) for k in range(parts)]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--output", type=Path, default=OUT)
    args = parser.parse_args(argv)
    load = os.getloadavg()
    lines = ["## What two processes allow: one kernel split over two processes against one, no Dask", "",
             f"Command: `python benchmarks/bench_two_processes.py --rounds {args.rounds}`. Machine: "
             f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, numpy "
             f"{np.__version__}; single-threaded BLAS; load average at the start {load[0]:.2f}, {load[1]:.2f}, "
             f"{load[2]:.2f}. Each kernel over all the rows in one process, then over half of them in each of two "
             "processes started together (the slower timed); the data made before the clock; rounds interleaved.",
             "", "| kernel | what | one process s | two processes s | one ÷ two (rounds) |", "|---|---|---|---|---|"]
    for kind, (rows, d, reps, what) in KERNELS.items():
        one, two = [], []
        for _ in range(args.rounds):
            one.append(split_seconds(kind, 1))
            two.append(split_seconds(kind, 2))
            print(kind, one[-1], two[-1], flush=True)
        ratio = np.array(one) / np.array(two)
        lines.append(f"| {kind} | {what}, {rows:,} × {d:,}, {reps} times | {np.median(one):.2f} | "
                     f"{np.median(two):.2f} | {np.median(ratio):.2f}× ({', '.join(f'{r:.2f}' for r in ratio)}) |")
    load = os.getloadavg()
    lines += ["", f"Load average at the end: {load[0]:.2f}, {load[1]:.2f}, {load[2]:.2f}.", ""]
    args.output.write_text("\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

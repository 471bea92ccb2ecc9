"""The constants of ``logistic-newton``'s cost form (``robustsvm/backends/cost.py``), fitted on shapes and checked
on held-out ones.

The form (``docs/auto.md``) is ``T = e + I·(a·G + c·nnz + r·n)`` with ``G = n(d+1)²`` the Hessian's product for
dense data (``d ≤ DENSE_HESSIAN_MAX_D``) and, for sparse or wide data, ``G = 0`` and ``(1 + J)`` products of
``nnz`` per iteration (``J`` conjugate-gradient steps per Newton iteration); ``r·n`` is the per-sample work of an
iteration (the loss, its derivatives, the certificate). ``I`` and ``J`` are the medians measured on the fitting
shapes; ``a``, ``c``, ``r`` and ``e`` are fitted by least squares on the relative error. Data: Gaussian
features (sparse: a fixed number of unit entries per row), labels from a linear rule with 10 % flipped,
``λ2 = 1/n``, a free intercept, the model solved by ``Problem.solve(..., solver="logistic-newton")``.

Run from the repository root::

    .venv/bin/python benchmarks/fit_logistic_cost.py
"""

from __future__ import annotations

import os

if __name__ == "__main__":
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
        os.environ.setdefault(_var, "1")

import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

#: (n, d, entries per row or None for dense)
FIT = [(2000, 10, None), (20000, 10, None), (5000, 60, None), (20000, 100, None), (2000, 400, None),
       (20000, 5000, 20), (5000, 20000, 50), (50000, 2000, 10)]
HELD_OUT = [(10000, 30, None), (50000, 20, None), (4000, 200, None), (10000, 2000, 20), (30000, 10000, 30)]


def make(n: int, d: int, per_row: int | None, seed: int = 0):
    rng = np.random.default_rng(seed)
    if per_row is None:
        X = rng.normal(size=(n, d))
    else:
        cols = rng.integers(0, d, size=(n, per_row))
        X = sp.csr_matrix((np.ones(n * per_row), (np.repeat(np.arange(n), per_row), cols.ravel())), shape=(n, d))
        X.sum_duplicates()
    rule = rng.normal(size=d)
    y = np.sign(X @ rule + 1e-9)
    flip = rng.random(n) < 0.1
    y[flip] = -y[flip]
    return X, y


def measure(shape, repeats: int = 3) -> dict:
    import robustsvm as rs

    n, d, per_row = shape
    X, y = make(n, d, per_row)
    prob = rs.Problem(loss=rs.Logistic(), penalty=rs.L2(1.0 / n))
    times, sol = [], None
    for _ in range(repeats):
        t0 = time.process_time()
        sol = prob.solve(X, y, solver="logistic-newton")
        times.append(time.process_time() - t0)
    nnz = X.nnz if sp.issparse(X) else n * d
    dense = sol.extra["hessian"] == "dense"
    return {"shape": shape, "time": float(np.median(times)), "iterations": sol.iterations,
            "cg": sol.extra["cg_steps"] / max(sol.iterations, 1), "dense": dense, "n": n, "d": d, "nnz": nnz,
            "status": sol.status}


def regressors(r: dict, iters_dense: float, iters_cg: float, cg: float) -> np.ndarray:
    if r["dense"]:
        return np.array([1.0, iters_dense * r["n"] * (r["d"] + 1.0) ** 2, iters_dense * r["nnz"],
                         iters_dense * r["n"]])
    return np.array([1.0, 0.0, iters_cg * (1.0 + cg) * r["nnz"], iters_cg * r["n"]])


def main() -> int:
    fit = [measure(s) for s in FIT]
    held = [measure(s) for s in HELD_OUT]
    iters_dense = float(np.median([r["iterations"] for r in fit if r["dense"]]))
    iters_cg = float(np.median([r["iterations"] for r in fit if not r["dense"]]))
    cg = float(np.median([r["cg"] for r in fit if not r["dense"]]))
    A = np.array([regressors(r, iters_dense, iters_cg, cg) for r in fit])
    t = np.array([r["time"] for r in fit])
    k, *_ = np.linalg.lstsq(A / t[:, None], np.ones(len(t)), rcond=None)
    k = np.maximum(k, 0.0)
    print(f"iterations dense {iters_dense:g}, CG path {iters_cg:g}, CG steps per iteration {cg:.3g}")
    print(f"constants: fixed {k[0]:.3g}, gram {k[1]:.3g}, pass {k[2]:.3g}, rows {k[3]:.3g}")
    for label, rows in (("fit", fit), ("held out", held)):
        for r in rows:
            pred = float(regressors(r, iters_dense, iters_cg, cg) @ k)
            print(f"{label:8s} {r['shape']} {r['status']} iterations {r['iterations']:2d} cg/it {r['cg']:5.1f} "
                  f"measured {r['time']:.4f} s predicted {pred:.4f} s ratio {pred / r['time']:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

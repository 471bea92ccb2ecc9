"""``solver="auto"`` against every backend that accepts the model, on a grid of shapes; refits the cost model.

Run from the repository root::

    .venv/bin/python benchmarks/bench_auto.py            # the full grid (<= 10 min on 2 quiet cores), then refit
    .venv/bin/python benchmarks/bench_auto.py --quick    # a few cells, a few minutes; printed, no refit
    .venv/bin/python benchmarks/auto_fit.py              # refit from benchmarks/results/auto_grid.json only

Each cell of the grid is a shape (n from 10³ to 10⁵, d from 5 to 10⁴, dense or sparse), a set (none, ``Box``,
2-``Ball``, ``Ellipsoid``) and λ = 1/n or 10/n (hinge loss, mean reduction, free intercept). Labels are
``sign(x·w₀/std + 0.5 ε)`` (about 15 % of them on the wrong side: noisy data). In a cell every candidate that
accepts the model (``dcd``, ``robust-dcd``, ``feature-ipm``, ``clarabel``) is run at its declared defaults and
certified by the package, unless its predicted time (the cost model of ``robustsvm.backends.cost``, a likely
fall-back included) exceeds 30× the best prediction, or a hard cap makes it infeasible (a dense system or a
conic program too large for the run); ``solver="auto"`` is run as a user would, whatever it picks. Times are CPU
seconds of this process (single-threaded BLAS and Numba); ``auto`` and the backends are timed in interleaved
rounds, the median kept (``timed_runs``: after the first round, ``auto`` and the certified backends within 1.6×
of the fastest are repeated, up to 7 rounds, at least 3 when a round takes under 2.5 s). The run
writes ``benchmarks/results/auto_grid.json`` (every run), refits the constants
(``robustsvm/backends/cost_constants.json``, by ``benchmarks/auto_fit.py``), re-runs ``"auto"`` on the cells
whose choice the refit changes, and writes the fragment ``benchmarks/results/auto.md`` (``docs/benchmarks.md`` is
assembled from it by ``benchmarks/assemble.py``).
"""

from __future__ import annotations

import os

for _k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS",
           "RAYON_NUM_THREADS"):
    os.environ[_k] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from multiprocessing import get_context  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from pinning import add_cpu_argument, command_option, describe, pin_run  # noqa: E402

import robustsvm as rs  # noqa: E402
from robustsvm.backends import cost  # noqa: E402
from robustsvm.solve_path import auto_probe, choose_backend  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
OUT_JSON = RESULTS / "auto_grid.json"
OUT_MD = RESULTS / "auto.md"
#: the cells finished so far, one JSON object a line (``auto_fit.py --results`` reads it too)
PARTIAL = RESULTS / "auto_grid.partial.jsonl"

#: (n, d, density): density None is dense
FULL_SHAPES = [
    (1000, 5, None), (1000, 50, None), (1000, 300, None), (1000, 3000, None),
    (5000, 5, None), (5000, 50, None), (5000, 200, None),
    (20000, 20, None), (20000, 100, None), (20000, 400, None), (100000, 5, None), (100000, 50, None),
    (2000, 10000, 5e-3), (10000, 5000, 2e-3), (100000, 10000, 2e-4),
]
QUICK_SHAPES = [(1000, 50, None), (20000, 100, None), (2000, 10000, 5e-3)]
#: ``--held-out``: shapes the cost model was not fitted to (none is in FULL_SHAPES), data from another seed
HELD_OUT_SHAPES = [
    (1000, 20, None), (1000, 1000, None), (3000, 30, None), (2500, 150, None), (8000, 600, None),
    (50000, 10, None), (50000, 200, None), (5000, 20000, 1e-3), (30000, 3000, 3e-3),
]
HELD_OUT_SEED = 7
#: the seed of the grid's data (``--held-out`` sets HELD_OUT_SEED; the worker processes are forked after it)
DATA_SEED = 0
#: λ·n of the grid (λ = 1/n and 10/n)
LAMBDA_N = (1.0, 10.0)
SETS = ("none", "box", "ball", "ellipsoid")
#: a backend predicted slower than this multiple of the best prediction is not run
SKIP_FACTOR = 30.0
#: hard caps on what one run may build (memory and time of the whole grid)
MAX_IPM_SYSTEM = 3000          # feature-ipm: size of the dense factored system d + free + 2
MAX_CONIC_NNZ = 400_000        # clarabel: non-zeros of the data
MAX_ELLIPSOID_DENSE = 500      # the ellipsoid's dense d x d shape matrix
MAX_ELLIPSOID_EPOCH = 2e8      # robust-dcd on an ellipsoid: n d² work per epoch
#: the millisecond shapes on which ``auto``'s own overhead is measured (no probe runs there)
OVERHEAD_SHAPES = ((1000, 5, None), (1000, 20, None))
#: print each run before it starts (--verbose)
VERBOSE = False
#: the timing rounds of a cell (``timed_runs``): at most MAX_ROUNDS, as many as fit in ROUND_BUDGET CPU seconds,
#: at least MIN_ROUNDS when a round is shorter than LONG_ROUND seconds; after the first round only ``auto`` and
#: the certified runs within CONTENDER of the fastest one are repeated
MAX_ROUNDS = 15
MIN_ROUNDS = 3
ROUND_BUDGET = 1.5
LONG_ROUND = 2.5
CONTENDER = 1.6


# ------------------------------------------------------------------------------------------------------ data
def make_data(n: int, d: int, density: float | None, seed: int = 0):
    """Gaussian features (dense, or sparse with the given density), noisy labels ``sign(s/std(s) + 0.5 ε)``."""
    rng = np.random.default_rng(seed)
    if density is None:
        X = rng.standard_normal((n, d))
    else:
        X = sp.random(n, d, density=density, format="csr", random_state=rng, data_rvs=rng.standard_normal)
    w0 = rng.standard_normal(d)
    s = X @ w0
    y = np.sign(s / max(float(np.std(s)), 1e-12) + 0.5 * rng.standard_normal(n))
    y[y == 0] = 1.0
    return X, y


def make_set(kind: str, d: int, seed: int = 0):
    if kind == "none":
        return None
    if kind == "box":
        return rs.Box(0.05)
    if kind == "ball":
        return rs.Ball(0.2)
    rng = np.random.default_rng(seed + 1)
    B = rng.standard_normal((d, d)) / np.sqrt(d)
    return rs.Ellipsoid(0.5 * np.eye(d) + B @ B.T / 2, 0.2)


def cells_of(shapes) -> list[dict]:
    out = []
    for n, d, density in shapes:
        for kind in SETS:
            if kind == "ellipsoid" and (density is not None or d > MAX_ELLIPSOID_DENSE):
                continue
            for lamn in LAMBDA_N:
                out.append({"n": n, "d": d, "density": density, "set": kind, "lambda_n": lamn})
    return out


# ------------------------------------------------------------------------------------------------------ timing
def solve_once(problem, X, y, solver: str) -> tuple[float, object]:
    """One certified solve at the backend's defaults: its CPU time and the solution (or the error raised)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = time.process_time()
        try:
            sol = problem.solve(X, y, solver=solver)
        except Exception as exc:  # a backend that raises on the data: recorded, not fatal
            return time.process_time() - t, exc
        return time.process_time() - t, sol


def describe_run(times: list[float], sol) -> dict:
    """The record of a solver's runs in a cell: the median CPU time, the rounds, the status, the work."""
    if isinstance(sol, Exception):
        return {"time": float(np.median(times)), "rounds": len(times), "status": f"error: {sol}"[:200],
                "certified": False, "fell_back": False}
    fallback = sol.auto_fallback
    out = {"time": float(np.median(times)), "rounds": len(times), "times": [float(t) for t in times],
           "status": sol.status, "certified": sol.status == "optimal", "solver": sol.solver,
           "iterations": int(sol.iterations), "objective": float(sol.objective), "gap": float(sol.gap),
           "fell_back": fallback is not None,
           "first": None if fallback is None else {k: getattr(fallback, k) for k in ("solver", "status", "iterations")}}
    if "passes" in sol.extra:  # dcd's budget unit: an epoch over the samples shrinking left counts as a fraction
        out["passes"] = float(sol.extra["passes"])
    if "certificates" in sol.extra:  # the first-order methods' certificates (their cost form counts them)
        out["certificates"] = int(sol.extra["certificates"])
    if sol.auto_attempts:
        out["attempts"] = [{k: getattr(a, k) for k in ("solver", "status", "iterations", "time", "time_limit")}
                           for a in sol.auto_attempts]
    if sol.auto_probe is not None:
        out["probe"] = {k: getattr(sol.auto_probe, k) for k in ("solver", "status", "time_limit")}
    return out


def timed_runs(problem, X, y, solvers: list[str]) -> dict[str, dict]:
    """Every solver of ``solvers`` timed in interleaved rounds (the order rotated each round), the median kept.

    The first round runs them all, in the order given, to the end (no time limit: a backend's own time limit is
    wall time, which a loaded machine stretches, and a run stopped early leaves its epochs unknown to the fit).
    The later rounds run ``"auto"`` and the contenders (the certified runs within :data:`CONTENDER` of the
    fastest certified one) only, so that ``auto`` and the fastest backend are timed the same way: the same
    rounds, interleaved, the median. Rounds are added up to :data:`MAX_ROUNDS` while they fit in
    :data:`ROUND_BUDGET` CPU seconds, and at least :data:`MIN_ROUNDS` are made when a round is shorter than
    :data:`LONG_ROUND` seconds.
    """
    times: dict[str, list[float]] = {s: [] for s in solvers}
    last: dict[str, object] = {}
    certified: dict[str, float] = {}
    for name in solvers:
        t, last[name] = solve_once(problem, X, y, name)
        times[name].append(t)
        if name != "auto" and not isinstance(last[name], Exception) and last[name].status == "optimal":
            certified[name] = t
    best = min(certified.values()) if certified else math.inf
    again = [s for s in solvers if s == "auto" or (s in certified and certified[s] <= CONTENDER * best)]
    if len(again) < 2:
        return {s: describe_run(times[s], last[s]) for s in solvers}
    round_time = sum(times[s][0] for s in again)
    rounds = min(MAX_ROUNDS, max(int(ROUND_BUDGET / max(round_time, 1e-9)),
                                 MIN_ROUNDS if round_time < LONG_ROUND else 1))
    for r in range(1, rounds):
        k = r % len(again)
        for name in again[k:] + again[:k]:
            t, last[name] = solve_once(problem, X, y, name)
            times[name].append(t)
    return {s: describe_run(times[s], last[s]) for s in solvers}


def cap(name: str, cell: dict, problem, X) -> str | None:
    """Why ``name`` is not run in ``cell`` for the grid's memory and time caps (None: it is run)."""
    n, d = X.shape
    system = min(2 * d + 2, n) if n < d and cost.wide_path_available() else 2 * d + 2  # the wide path: n × n
    if name == "feature-ipm" and system > MAX_IPM_SYSTEM:
        return f"dense system of {system} > {MAX_IPM_SYSTEM}"
    if name == "clarabel" and (X.nnz if sp.issparse(X) else n * d) > MAX_CONIC_NNZ:
        return f"conic program of more than {MAX_CONIC_NNZ:,} non-zeros"
    if name == "robust-dcd" and cell["set"] == "ellipsoid" and n * d * d > MAX_ELLIPSOID_EPOCH:
        return f"O(n d²) = {n * d * d:.1e} per epoch"
    return None


def run_cell(cell: dict, X, y) -> dict:
    n, d = X.shape
    problem = rs.Problem(penalty=rs.L2(cell["lambda_n"] / n), uncertainty=make_set(cell["set"], d))
    shape = cost.DataShape.of(X)
    inputs = cost.cost_inputs(problem, shape)
    able = [b for b in cost.CANDIDATES if rs.backends.get_backend(b).accepts(problem)]
    preds = {p.backend: p for p in cost.predict_all(able, inputs)}
    runnable = [p.seconds for b, p in preds.items() if cap(b, cell, problem, X) is None]
    best_pred = min(runnable) if runnable else math.inf
    out = {**cell, "nnz": shape.nnz, "sparse": shape.sparse, "C": inputs.C, "sq_norm": shape.sq_norm,
           "accepting": able,
           "wide_path": cost.wide_path_available(),
           "predicted": {b: {"seconds": p.seconds, "iterations": p.iterations, "falls_back": p.falls_back}
                         for b, p in preds.items()},
           "runs": {}, "skipped": {}}
    run = []
    for name in able:
        why = cap(name, cell, problem, X)
        own = preds[name].terms.get("own", preds[name].seconds)  # what running it here costs
        if why is None and own > SKIP_FACTOR * best_pred:
            why = f"predicted {own:.3g} s > {SKIP_FACTOR:g}× the best prediction"
        if why is not None:
            out["skipped"][name] = why
            continue
        run.append(name)
    if VERBOSE:
        print(f"    {_label(cell)}: {', '.join(run)} and auto", flush=True)
    run.sort(key=lambda b: preds[b].terms.get("own", preds[b].seconds))  # the likely fastest first
    runs = timed_runs(problem, X, y, [*run, "auto"])
    out["auto"] = {"pick": choose_backend(problem, shape), "plan": plan_of(problem, shape), **runs.pop("auto")}
    out["runs"] = runs
    return summarize(out)


def plan_of(problem, shape) -> list:
    """What ``"auto"`` will run on a cell before any answer: its choice and its first-order probe (backend,
    epochs) or None; a refit that changes either is timed again (:func:`rerun_changed`)."""
    trial = auto_probe(problem, shape)
    return [choose_backend(problem, shape), None if trial is None else [trial.backend, trial.epochs]]


def summarize(cell: dict) -> dict:
    """The fastest certified run, auto's ratio to it and whether auto fell back where another certified."""
    certified = {b: r for b, r in cell["runs"].items() if r["certified"]}
    auto = cell["auto"]
    cell["fastest"] = min(certified, key=lambda b: certified[b]["time"]) if certified else None
    if cell["fastest"] is not None:
        cell["ratio"] = auto["time"] / max(certified[cell["fastest"]]["time"], 1e-9)
        others = [b for b in certified if b != "clarabel"]
        cell["needless_fallback"] = bool(auto["fell_back"] and auto.get("solver") == "clarabel" and others)
    else:
        cell["ratio"], cell["needless_fallback"] = float("nan"), False
    return cell


def run_shape(args: tuple) -> list[dict]:
    shape, cells = args
    X, y = make_data(*shape, seed=DATA_SEED)
    out = []
    for cell in cells:
        t = time.perf_counter()
        out.append(run_cell(cell, X, y))
        with PARTIAL.open("a", encoding="utf-8") as f:  # kept when the run is stopped
            f.write(json.dumps(out[-1], default=float) + "\n")
        print(f"  {_label(cell)}: auto {out[-1]['auto']['pick']} {out[-1]['auto']['time']:.3g} s, fastest "
              f"{out[-1]['fastest']}, ratio {out[-1]['ratio']:.2f} ({time.perf_counter() - t:.1f} s)", flush=True)
    return out


def warm_up() -> None:
    """Compile every kernel the grid reaches (dense and CSR, each set) before anything is timed."""
    X, y = make_data(200, 6, None)
    Xs, ys = make_data(200, 30, 0.2)
    for data, yy in ((X, y), (Xs, ys)):
        for kind in SETS:
            if kind == "ellipsoid" and sp.issparse(data):
                continue
            problem = rs.Problem(penalty=rs.L2(0.01), uncertainty=make_set(kind, data.shape[1]))
            for name in cost.CANDIDATES:
                if rs.backends.get_backend(name).accepts(problem):
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        problem.solve(data, yy, solver=name)


def overhead(shape=(1000, 5, None), pairs: int = 60) -> dict:
    """``auto``'s own cost on millisecond cells: the choice alone (``choose_backend``), and the median over
    interleaved pairs of ``solver="auto"`` minus its choice named directly (both through ``Problem.solve``)."""
    X, y = make_data(*shape)
    out = []
    for kind in SETS:
        for lamn in LAMBDA_N:
            problem = rs.Problem(penalty=rs.L2(lamn / shape[0]), uncertainty=make_set(kind, shape[1]))
            pick = choose_backend(problem, X)
            probe = auto_probe(problem, cost.DataShape.of(X)) is not None
            for name in ("auto", pick) * 2:  # warm
                solve_once(problem, X, y, name)
            t = time.process_time()
            for _ in range(200):
                choose_backend(problem, X)
            choose = (time.process_time() - t) / 200
            diff, base = [], []
            for i in range(pairs):
                order = ("auto", pick) if i % 2 else (pick, "auto")
                ts = {name: solve_once(problem, X, y, name)[0] for name in order}
                diff.append(ts["auto"] - ts[pick])
                base.append(ts[pick])
            out.append({"set": kind, "lambda_n": lamn, "pick": pick, "probe": probe, "choose_ms": 1e3 * choose,
                        "solve_ms": 1e3 * float(np.median(base)), "auto_minus_pick_ms": 1e3 * float(np.median(diff))})
    return {"shape": list(shape), "cells": out}


def overhead_line(o: dict) -> str:
    rel = [c["auto_minus_pick_ms"] / c["solve_ms"] for c in o["cells"]]
    choose = [c["choose_ms"] for c in o["cells"]]
    ms = [c["auto_minus_pick_ms"] for c in o["cells"]]
    n, d = o["shape"][:2]
    return (f"`auto`'s own overhead on the {n:,} × {d:,} cells (solves of "
            f"{min(c['solve_ms'] for c in o['cells']):.1f}–{max(c['solve_ms'] for c in o['cells']):.1f} ms): the "
            f"choice takes {min(choose):.3f}–{max(choose):.3f} ms; `auto` minus its choice named directly, median "
            f"of interleaved pairs: {100 * min(rel):+.1f} % to {100 * max(rel):+.1f} % of the solve "
            f"({min(ms):+.3f} to {max(ms):+.3f} ms); a probe on {sum(c.get('probe', False) for c in o['cells'])} "
            "of them.")


# ------------------------------------------------------------------------------------------------------ output
def _label(cell: dict) -> str:
    dens = "dense" if cell["density"] is None else f"sparse {cell['density']:g}"
    return f"{cell['n']:,} × {cell['d']:,} {dens}, {cell['set']}, λn = {cell['lambda_n']:g}"


def machine() -> dict:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                                text=True).stdout.strip()
    except OSError:
        commit = ""
    return {"python": platform.python_version(), "numpy": np.__version__, "cpu": platform.processor() or
            platform.machine(), "cores": os.cpu_count(), "load": load, "commit": commit,
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}


def fragment(report: dict) -> str:
    cells = report["cells"]
    ratios = np.array([c["ratio"] for c in cells if c["fastest"] is not None])
    needless = sum(c["needless_fallback"] for c in cells)
    m = report["machine"]
    title = ("## auto on a held-out grid: shapes and data the cost model was not fitted to"
             if report.get("held_out") else "## auto: the backend chosen by the cost model")
    lines = [
        title,
        "",
        f"`{report['command']}` ({report['grid']} grid, {len(cells)} cells; "
        f"{m['cpu']}, {m['cores']} cores, load average {m['load']:.1f} at the start, {m['date']}, commit "
        f"{m['commit']}, {m.get('pinning', 'not pinned to a CPU')}). Every accepting backend at its defaults, "
        "certified by the package; CPU seconds (single-threaded), the median of interleaved rounds in which "
        "`auto` and the fastest backends are run alike; the ratio is `auto`'s time (its choice, its attempts and "
        "fall-backs included) over the fastest certified backend's; `a → b`: `auto` chose `a`, `b` answered (its "
        "probe, certified or continued, or a fall-back). Backends predicted slower than 30× the best were not run "
        "(`skip`). The model, its fit and the grid: [auto](auto.md).",
        "",
        f"`auto` within 1.3× of the fastest certified backend on {int(np.sum(ratios <= 1.3))} of {ratios.size} "
        f"cells (median ratio {np.median(ratios):.2f}, worst {np.max(ratios):.2f}); a fall-back to Clarabel "
        f"where another backend certified: {needless} cell(s).",
        "",
        "| n × d | data | set | λn | auto's choice | auto (s) | fastest certified (s) | ratio | "
        "dcd (s) | robust-dcd (s) | feature-ipm (s) | clarabel (s) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for c in cells:
        def show(b: str, c=c) -> str:
            if b in c["runs"]:
                r = c["runs"][b]
                return f"{r['time']:.3g}" + ("" if r["certified"] else f" ({r['status']})")
            if b in c["skipped"]:
                return "skip"
            return "—"
        auto = c["auto"]
        answered = auto.get("solver", auto["pick"])
        choice = auto["pick"] + (f" → {answered}" if answered != auto["pick"] else "")
        fastest = "—" if c["fastest"] is None else f"{c['runs'][c['fastest']]['time']:.3g} ({c['fastest']})"
        data = "dense" if c["density"] is None else f"sparse {c['density']:g}"
        lines.append(f"| {c['n']:,} × {c['d']:,} | {data} | {c['set']} | {c['lambda_n']:g} | {choice} | "
                     f"{auto['time']:.3g} | {fastest} | {c['ratio']:.2f} | {show('dcd')} | {show('robust-dcd')} | "
                     f"{show('feature-ipm')} | {show('clarabel')} |")
    overheads = report.get("overhead") or []
    for o in [overheads] if isinstance(overheads, dict) else overheads:
        lines += ["", overhead_line(o)]
    fit = report.get("fit")
    if fit:
        lines += ["", f"Refit from this run: {fit}."]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------------------------ main
def run_grid(shapes, jobs: int) -> list[dict]:
    groups = []
    for shape in shapes:
        cells = [c for c in cells_of([shape])]
        groups.append((shape, cells))
    groups.sort(key=lambda g: -g[0][0] * g[0][1] * (g[0][2] or 1.0))  # the largest first
    if jobs <= 1:
        return [c for g in groups for c in run_shape(g)]
    with get_context("fork").Pool(jobs, initializer=warm_up) as pool:
        return [c for part in pool.imap_unordered(run_shape, groups) for c in part]


def rerun_changed(cells: list[dict]) -> int:
    """Run ``"auto"`` again on the cells whose plan (:func:`plan_of`: the choice and the probe) the refitted
    constants change; the number of such cells."""
    cost.reload_constants()
    changed = 0
    data_cache: dict = {}
    for cell in cells:
        key = (cell["n"], cell["d"], cell["density"])
        if key not in data_cache:
            data_cache.clear()
            data_cache[key] = make_data(*key)
        X, y = data_cache[key]
        problem = rs.Problem(penalty=rs.L2(cell["lambda_n"] / cell["n"]), uncertainty=make_set(cell["set"], cell["d"]))
        shape = cost.DataShape.of(X)
        plan = plan_of(problem, shape)
        if plan[0] != cell["auto"]["pick"] or ("plan" in cell["auto"] and plan != cell["auto"]["plan"]):
            pick = plan[0]
            changed += 1
            certified = {b: r["time"] for b, r in cell["runs"].items() if r["certified"]}
            best = min(certified.values()) if certified else math.inf
            again = [b for b, t in certified.items() if t <= CONTENDER * best]
            # auto timed again next to the contenders, in the same rounds, so that the ratio compares like with like
            runs = timed_runs(problem, X, y, [*again, "auto"])
            cell["auto"] = {"before_refit": cell["auto"]["pick"], "pick": pick, "plan": plan, **runs.pop("auto")}
            for b, r in runs.items():
                cell["runs"][b] = {**r, "earlier": cell["runs"][b]}
            summarize(cell)
    return changed


def parse_shape(text: str) -> tuple[int, int, float | None]:
    """``"1000x50"`` → (1000, 50, None); ``"5000x5000:0.002"`` → a sparse shape of that density."""
    size, _, density = text.partition(":")
    n, d = (int(float(v)) for v in size.lower().split("x"))
    return n, d, float(density) if density else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few cells, to check a change under load")
    parser.add_argument("--jobs", type=int, default=2, help="shapes solved in parallel (one process each)")
    parser.add_argument("--shapes", nargs="+", metavar="NxD[:DENSITY]",
                        help="run these shapes instead of the grid (e.g. 1000x50 5000x5000:0.002)")
    parser.add_argument("--resume", type=Path, metavar="JSONL",
                        help="keep the cells of a stopped run (auto_grid.partial.jsonl) and run only the others")
    parser.add_argument("--held-out", action="store_true",
                        help="the second grid (HELD_OUT_SHAPES, another data seed) the cost model was not fitted "
                             "to; never refits; writes results/auto_heldout.{json,md}")
    parser.add_argument("--verbose", action="store_true", help="print each run before it starts")
    parser.add_argument("--no-refit", action="store_true", help="keep the constants file as it is")
    add_cpu_argument(parser)
    args = parser.parse_args(argv)
    # one process: pinned (the backends of a cell are compared on one core); with --jobs > 1 the workers need both
    cpu = pin_run(args.cpu, args.quick) if args.jobs <= 1 else None
    shapes = QUICK_SHAPES if args.quick else HELD_OUT_SHAPES if args.held_out else FULL_SHAPES
    global DATA_SEED
    if args.held_out:
        DATA_SEED = HELD_OUT_SEED
    if args.shapes:
        shapes = [parse_shape(text) for text in args.shapes]
    global VERBOSE
    VERBOSE = args.verbose
    start = time.perf_counter()
    RESULTS.mkdir(parents=True, exist_ok=True)
    kept = []
    if args.resume is not None:
        kept = [json.loads(line) for line in args.resume.read_text(encoding="utf-8").splitlines() if line.strip()]
    done = {(c["n"], c["d"], c["density"]) for c in kept}
    if args.resume is None or args.resume.resolve() != PARTIAL.resolve():
        PARTIAL.unlink(missing_ok=True)
    if args.jobs <= 1:
        warm_up()
    command = "benchmarks/bench_auto.py" + (" --quick" if args.quick else "") + \
        (" --held-out" if args.held_out else "") + \
        (" --shapes " + " ".join(args.shapes) if args.shapes else "") + command_option(args.cpu) + \
        (f" --resume {args.resume.name} ({len(kept)} cells measured earlier)" if args.resume is not None else "")
    report = {"command": command, "quick": args.quick or bool(args.shapes),
              "grid": "a quick" if args.quick else "a reduced" if args.shapes else
              "the held-out" if args.held_out else "the full", "held_out": args.held_out,
              "machine": {**machine(), "pinning": describe(cpu)},
              "cells": kept + run_grid([s for s in shapes if s not in done], args.jobs)}
    key = {s: i for i, s in enumerate(shapes)}
    report["cells"].sort(key=lambda c: (key[(c["n"], c["d"], c["density"])], SETS.index(c["set"]), c["lambda_n"]))
    if args.jobs > 1:
        warm_up()  # the overhead pairs and the re-runs below are in this process
    report["overhead"] = [overhead(shape) for shape in OVERHEAD_SHAPES]
    refit = not args.quick and not args.no_refit and not args.held_out
    RESULTS.mkdir(parents=True, exist_ok=True)
    json_path = RESULTS / "auto_grid_quick.json" if args.quick else RESULTS / "auto_heldout.json" \
        if args.held_out else OUT_JSON
    json_path.write_text(json.dumps(report, indent=1, default=float), encoding="utf-8")
    if refit:
        import auto_fit

        table = auto_fit.fit_file(json_path)
        auto_fit.write_constants(table)
        changed = rerun_changed(report["cells"])
        report["fit"] = (f"{auto_fit.describe(table)}; `auto` re-run on the {changed} cell(s) whose choice the "
                         "refit changed")
        json_path.write_text(json.dumps(report, indent=1, default=float), encoding="utf-8")
    report["seconds"] = time.perf_counter() - start
    if args.quick:  # a check under load: printed, never written into the documentation
        print(fragment(report))
        print(f"wrote {json_path} in {report['seconds']:.0f} s")
        return 0
    out_md = RESULTS / "auto_heldout.md" if args.held_out else OUT_MD
    out_md.write_text(fragment(report), encoding="utf-8")  # docs/benchmarks.md is assembled from it later
    print(f"wrote {json_path} and {out_md} in {report['seconds']:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

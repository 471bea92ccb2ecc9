"""Refit the constants of the backend cost model (``robustsvm/backends/cost_constants.json``) from a grid run.

    .venv/bin/python benchmarks/auto_fit.py [--results benchmarks/results/auto_grid.json] [--dry-run]

Reads the runs that ``benchmarks/bench_auto.py`` recorded and fits, per backend, the constants of its cost form
(``robustsvm.backends.cost``; the forms and this fit are described in ``docs/auto.md``):

* the work constants by non-negative least squares on the relative error of the time, ``Σ ((T̂ − T)/T)²``,
  with the measured iterations or epochs in the regressors;
* ``feature-ipm``'s iterations per set as the 75th percentile of the measured ones (a little pessimistic);
* the first-order epochs, ``log E = θ·φ``, by ridge least squares (weight 0.1, the intercept free) on the
  measured epochs (dcd's passes); a run stopped at its budget enters at twice the budget (it needed more).

Without ``--dry-run`` it writes the constants file; it prints the fit's median and worst relative errors.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import numpy as np
from scipy.optimize import nnls

from robustsvm.backends import cost

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_RESULTS = ROOT / "benchmarks" / "results" / "auto_grid.json"
#: set kinds with their own refresh constant in the first-order per-epoch work
REFRESH_KINDS = ("none", "box", "ball", "ball1", "ellipsoid")
#: the ridge weight of the epoch regression
RIDGE = 0.1


def inputs_of(cell: dict) -> cost.CostInputs:
    return cost.CostInputs(n=cell["n"], d=cell["d"], nnz=cell["nnz"], sparse=cell["sparse"], set_kind=cell["set"],
                           loss=cell.get("loss", "hinge"), C=cell["C"], free=cell.get("free", cell["d"]),
                           l1=bool(cell.get("l1", False)), intercept=cell.get("intercept", "free"),
                           wide=bool(cell.get("wide_path", False)) and cell["n"] < cell["d"],
                           sq_norm=cell.get("sq_norm"))


def runs_of(cells: list[dict], name: str) -> list[tuple[cost.CostInputs, dict]]:
    """The runs of backend ``name`` with their cost inputs; ``r["epochs"]`` is the unit of the first-order budget
    (dcd's passes over the data where recorded, else the epochs)."""
    out = []
    for c in cells:
        r = c["runs"].get(name)
        if r is not None and "iterations" in r and r["time"] > 0:
            out.append((inputs_of(c), {**r, "epochs": r.get("passes", r["iterations"])}))
    return out


def is_wide(x: cost.CostInputs) -> bool:
    """A feature-ipm run costed by the wide form: n < d with the backend's wide path."""
    return x.wide and x.n < x.d


def _nnls_relative(A: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Non-negative ``k`` minimizing ``Σ ((A k − t)/t)²`` (columns scaled to unit norm for conditioning)."""
    W = A / t[:, None]
    scale = np.linalg.norm(W, axis=0)
    scale[scale == 0] = 1.0
    k, _ = nnls(W / scale, np.ones_like(t))
    return k / scale


def _errors(pred: np.ndarray, t: np.ndarray) -> tuple[float, float]:
    ratio = np.abs(np.log(pred / t))
    return float(np.exp(np.median(ratio))), float(np.exp(np.max(ratio)))


def fit_wide(runs, old: dict) -> tuple[dict | None, str]:
    """The wide form's constants (``a·n²d + b·n³ + c·nnz`` per iteration) from the runs on the wide path."""
    if len(runs) < 3:
        return old.get("wide"), f"feature-ipm wide path: {len(runs)} runs, constants kept"
    rows, t = [], []
    for x, r in runs:
        g, f, p = cost.wide_work(x)
        it = r["iterations"]
        rows.append([it * g, it * f, it * p])
        # the dense form's fixed, setup and per-iteration (step, rows) terms apply to the wide path as well
        t.append(r["time"] - old["fixed"] - old["setup"] * x.nnz
                 - it * (old.get("step", 0.0) + old.get("rows", 0.0) * x.n))
    A, t = np.array(rows, dtype=float), np.maximum(np.array(t), 1e-4)
    k = _nnls_relative(A, t)
    med, worst = _errors(np.maximum(A @ k, 1e-9), t)
    return ({"gram": k[0], "factor": k[1], "pass": k[2]},
            f"feature-ipm wide path: {len(runs)} runs, time within ×{med:.2f} (median), ×{worst:.1f} (worst)")


def fit_feature_ipm(all_runs, old: dict) -> tuple[dict, str]:
    runs = [(x, r) for x, r in all_runs if not is_wide(x)]
    if len(runs) < 4:
        return old, "feature-ipm: too few runs, kept"
    by_set: dict[str, list[float]] = {}
    for x, r in runs:
        by_set.setdefault(x.set_kind, []).append(r["iterations"])
    iterations = {k: float(np.percentile(v, 75)) for k, v in by_set.items()}
    iterations["default"] = float(np.percentile([r["iterations"] for _, r in runs], 75))
    rows, t = [], []
    for x, r in runs:
        m = x.d + x.free + 2.0
        it = r["iterations"]
        rows.append([it * cost.gram_work(x), it * m ** 3, it * x.nnz, 1.0, x.nnz, it, it * x.n])
        t.append(r["time"])
    A, t = np.array(rows), np.array(t)
    k = _nnls_relative(A, t)
    table = {"iterations": iterations, "gram": k[0], "factor": k[1], "pass": k[2], "fixed": max(k[3], 1e-4),
             "setup": k[4], "step": k[5], "rows": k[6]}
    pred = np.array([cost.predict("feature-ipm", x, {"feature-ipm": table}).seconds for x, _ in runs])
    med, worst = _errors(pred, t)
    note = f"feature-ipm: {len(runs)} runs, time within ×{med:.2f} (median), ×{worst:.1f} (worst)"
    wide, wide_note = fit_wide([(x, r) for x, r in all_runs if is_wide(x)], {**old, **table})
    if wide is not None:
        table["wide"] = wide
    return table, f"{note}; {wide_note}"


def fit_epochs(runs) -> np.ndarray:
    """``θ`` of ``log E = θ·φ`` by ridge least squares (the intercept free) on the measured epochs; a run stopped
    at its budget counts as twice the budget (it needed more)."""
    Phi = np.array([cost.epoch_features(x) for x, _ in runs])
    budget = cost.EPOCH_BUDGET
    target = np.array([math.log(2 * budget) if (r["status"] == "max_iter" or r["epochs"] >= budget)
                       else math.log(max(r["epochs"], 1)) for _, r in runs])
    penalty = RIDGE * np.eye(Phi.shape[1])
    penalty[0, 0] = 0.0
    return np.linalg.solve(Phi.T @ Phi + penalty, Phi.T @ target)


def fit_certificates(runs) -> dict | None:
    """``κ`` of the certificate count ``log K = κ₀ + κ₁ log E`` by least squares on the runs that recorded their
    certificates (None: too few)."""
    pairs = [(math.log(max(r["epochs"], 1.0)), math.log(r["certificates"])) for _, r in runs
             if r.get("certificates", 0) > 0]
    if len(pairs) < 4:
        return None
    logE, logK = (np.array(v) for v in zip(*pairs, strict=True))
    slope, const = np.polyfit(logE, logK, 1)
    return {"const": float(const), "log_epochs": float(slope)}


def fit_first_order(name: str, runs, old: dict) -> tuple[dict, str]:
    """A first-order backend's constants: the work per epoch and per certificate, the fixed and setup terms
    (non-negative least squares on the relative error of the time, with the measured epochs and certificates),
    the certificate count (:func:`fit_certificates`) and the epochs (:func:`fit_epochs`)."""
    if len(runs) < 4:
        return old, f"{name}: too few runs, kept"
    counts = fit_certificates(runs)
    rows, t = [], []
    for x, r in runs:
        E = r["epochs"]
        K = r.get("certificates", 0) if counts is not None else 0.0
        row = [E * x.nnz, E * x.n, E * x.d]
        row += [E * cost.refresh_work(x) * (x.set_kind == kind) for kind in REFRESH_KINDS]
        row += [E * x.n * x.d ** 2 * (x.set_kind == "ellipsoid"), 1.0, x.nnz, K * x.nnz, K * x.n, K]
        rows.append(row)
        t.append(r["time"])
    A, t = np.array(rows, dtype=float), np.array(t)
    k = _nnls_relative(A, t)
    nk = len(REFRESH_KINDS)
    theta = fit_epochs(runs)
    table = {"fixed": max(k[4 + nk], 1e-4), "setup": k[5 + nk], "nnz": k[0], "n": k[1], "d": k[2],
             "refresh": {kind: k[3 + i] for i, kind in enumerate(REFRESH_KINDS)}, "ellipsoid": k[3 + nk],
             "epochs": {f: float(v) for f, v in zip(cost.EPOCH_FEATURES, theta, strict=True)}}
    if counts is not None:
        table["certificates"] = counts
        table["certificate"] = {"nnz": k[6 + nk], "n": k[7 + nk], "fixed": k[8 + nk]}
    certified = [(x, r) for x, r in runs if r["status"] == "optimal"]
    pred = np.array([cost.predict(name, x, {name: table, "clarabel": {"fixed": 0, "nnz": 0, "factor": 0, "cube": 0}})
                     for x, _ in certified], dtype=object)
    epochs = np.array([p.iterations for p in pred])
    measured = np.array([r["epochs"] for _, r in certified], dtype=float)
    med, worst = _errors(np.maximum(epochs, 1.0), np.maximum(measured, 1.0)) if len(certified) else (math.nan,) * 2
    seconds = np.array([p.seconds for p in pred], dtype=float)
    spent = np.array([r["time"] for _, r in certified], dtype=float)
    tmed, tworst = _errors(seconds, spent) if len(certified) else (math.nan,) * 2
    stopped = [(x, r) for x, r in runs if r["status"] != "optimal"]
    flagged = sum(cost.predict(name, x, {name: table, "clarabel": {"fixed": 0, "nnz": 0, "factor": 0, "cube": 0}})
                  .falls_back for x, _ in stopped)
    return table, (f"{name}: {len(runs)} runs, epochs of the certified ones within ×{med:.2f} (median), "
                   f"×{worst:.1f} (worst), their time within ×{tmed:.2f} (median), ×{tworst:.1f} (worst); {flagged} of "
                   f"{len(stopped)} runs that stopped short predicted to fall back")


def fit_conic(runs, old: dict) -> tuple[dict, str]:
    if len(runs) < 3:
        return old, "clarabel: too few runs, kept"
    rows, t = [], []
    for x, r in runs:
        extra = x.d ** 2 if x.set_kind == "ellipsoid" else 0.0
        rows.append([1.0, x.nnz + x.n + extra, x.n * min(x.n, x.d) ** 2, x.d ** 3])
        t.append(r["time"])
    A, t = np.array(rows, dtype=float), np.array(t)
    k = _nnls_relative(A, t)
    table = {"fixed": max(k[0], 1e-3), "nnz": k[1], "factor": k[2], "cube": k[3],
             "iterations": float(np.median([r["iterations"] for _, r in runs]))}
    pred = A @ np.array([table["fixed"], k[1], k[2], k[3]])
    med, worst = _errors(pred, t)
    return table, f"clarabel: {len(runs)} runs, time within ×{med:.2f} (median), ×{worst:.1f} (worst)"


def fit(cells: list[dict], old: dict | None = None) -> tuple[dict, list[str]]:
    """The refitted constants table and one line per backend on the fit's accuracy."""
    old = dict(cost.constants() if old is None else old)
    table, notes = dict(old), []
    table["feature-ipm"], note = fit_feature_ipm(runs_of(cells, "feature-ipm"), old["feature-ipm"])
    notes.append(note)
    for name in ("dcd", "robust-dcd"):
        table[name], note = fit_first_order(name, runs_of(cells, name), old[name])
        notes.append(note)
    table["clarabel"], note = fit_conic(runs_of(cells, "clarabel"), old["clarabel"])
    notes.append(note)
    return table, notes


def simulate(cell: dict, table: dict) -> float | None:
    """``"auto"``'s time in a measured cell under the constants ``table``, from the measured runs: its first-order
    probe (the run's time when it certified within the probe's epochs, else the probe's share of it), its choice,
    then the fall-back order (``cost.fallback_order``) until a run certified. None: a run it needs was not made."""
    x = inputs_of(cell)
    preds = cost.predict_all(cell["accepting"], x, table)
    if not preds:
        return None
    runs = cell["runs"]
    spent, tried = 0.0, []
    trial = cost.probe(preds, x)
    if trial is not None:
        run = runs.get(trial.backend)
        if run is None:
            return None
        epochs = trial.epochs if trial.epochs is not None else math.inf
        used = run.get("passes", run.get("iterations", 0))  # in the unit of the budget (dcd: passes)
        if run["certified"] and (trial.epochs is not None or run["time"] <= trial.time_limit) and used <= epochs:
            return run["time"]
        # its probe's share of the run (the measured runs keep no gap history: a continued probe is not replayed)
        share = min(1.0, epochs / max(used, 1))
        spent, tried = share * run["time"] if trial.epochs is not None else trial.time_limit, [trial.backend]
    order = [preds[0].backend] + [b for b in cost.fallback_order(preds, (*tried, preds[0].backend))
                                  if b != preds[0].backend]
    for name in order:
        run = runs.get(name)
        if run is None:
            return None
        spent += run["time"]
        if run["certified"]:
            return spent
    return spent


def replay(cells: list[dict], table: dict) -> dict:
    """``"auto"`` under ``table`` in each measured cell (:func:`simulate`), scored by the measured times: the
    ratio of its time to the fastest certified run's."""
    ratios, unmeasured = [], 0
    for c in cells:
        certified = {b: r["time"] for b, r in c["runs"].items() if r["certified"]}
        if not certified:
            continue
        t = simulate(c, table)
        if t is None:
            unmeasured += 1
        else:
            ratios.append(t / min(certified.values()))
    r = np.array(ratios)
    return {"cells": len(r), "within_1.3": int(np.sum(r <= 1.3)), "worst": float(r.max()) if r.size else math.nan,
            "median": float(np.median(r)) if r.size else math.nan, "fall_backs": 0, "unmeasured": unmeasured}


def read_report(path: Path) -> dict:
    """A grid run: the JSON report, or the cells of a run that was stopped (``auto_grid.partial.jsonl``)."""
    text = Path(path).read_text(encoding="utf-8")
    if Path(path).suffix == ".jsonl":
        cells = [json.loads(line) for line in text.splitlines() if line.strip()]
        return {"cells": cells, "machine": {"date": "", "commit": "", "load": math.nan}, "path": path}
    return {**json.loads(text), "path": path}


#: the margins tried for the first-order backends (the smallest of the best is kept)
MARGINS = (1.0, 1.2, 1.5, 2.0, 3.0)
#: the fractions of the epoch budget beyond which a first-order backend is deemed likely to stop short
FALL_BACK_FRACTIONS = (0.5, 0.4, 0.3)


def choose_margins(cells: list[dict], table: dict) -> tuple[dict, dict]:
    """The first-order margin and the fall-back fraction of each first-order backend whose replay
    (:func:`simulate`) leaves the fewest cells above 1.3× (then the smallest median, then the smallest worst
    ratio; ties: the first tried)."""
    best, key = None, None
    for fd in FALL_BACK_FRACTIONS:
        for fr in FALL_BACK_FRACTIONS:
            for m in MARGINS:
                trial = {**table, "margins": {"dcd": m, "robust-dcd": m},
                         "dcd": {**table["dcd"], "fall_back_fraction": fd},
                         "robust-dcd": {**table["robust-dcd"], "fall_back_fraction": fr}}
                r = replay(cells, trial)
                score = (r["cells"] - r["within_1.3"] + r["unmeasured"], round(r["median"], 3), r["worst"])
                if key is None or score < key:
                    best, key = (m, fd, fr), score
    return {"dcd": best[0], "robust-dcd": best[0]}, {"dcd": best[1], "robust-dcd": best[2]}


def _score(r: dict) -> tuple:
    """A replay's rank, smaller is better: the cells above 1.3× (or unmeasured), the median, the worst ratio."""
    return (r["cells"] - r["within_1.3"] + r["unmeasured"], round(r["median"], 3), round(r["worst"], 3))


def fit_file(path: Path = DEFAULT_RESULTS) -> dict:
    """The refitted constants of a grid run, with the constants in use kept for the backends whose refit replays
    worse (:func:`keep_per_backend`); the constants in use are kept whole when their replay on the
    run's measured times (:func:`replay`) ranks better than the refit's (a refit on a run whose shapes and
    backends have not changed moves the boundaries with the timing noise; after a backend changed, the old
    constants replay worse and the refit is taken)."""
    report = read_report(path)
    current = {k: v for k, v in cost.constants().items() if k != "_fit"}
    refit = keep_per_backend(report["cells"], _refit(report), current)
    before, after = replay(report["cells"], current), replay(report["cells"], refit)
    if _score(before) < _score(after):
        kept = {**current, "_fit": {**refit["_fit"], "notes": [
            *refit["_fit"]["notes"],
            f"kept the constants in use: their replay is within 1.3× on {before['within_1.3']} of "
            f"{before['cells']} cells (median {before['median']:.2f}, worst {before['worst']:.2f})"]}}
        return kept
    return refit


def _with_margins(cells: list[dict], table: dict) -> dict:
    """``table`` with the first-order margin and fall-back fractions :func:`choose_margins` gives it."""
    margins, fractions = choose_margins(cells, table)
    out = {**table, "margins": margins}
    for name, fraction in fractions.items():
        out[name] = {**out[name], "fall_back_fraction": fraction}
    return out


def keep_per_backend(cells: list[dict], refit: dict, current: dict) -> dict:
    """The refit with each backend's constants in use put back, one backend at a time (in the order of
    ``cost.CANDIDATES``), when the replay with them (margins and fractions chosen again) ranks better (:func:`_score`):
    a backend whose new constants move a boundary the wrong way on the measured cells keeps its old ones, while
    the others take the refit. The note says which were kept."""
    table, kept = refit, []
    for name in cost.CANDIDATES:
        if name not in current or name not in refit or current[name] == refit[name]:
            continue
        trial = _with_margins(cells, {**table, name: current[name]})
        if _score(replay(cells, trial)) < _score(replay(cells, table)):
            table, kept = trial, [*kept, name]
    if not kept:
        return refit
    r = replay(cells, table)
    notes = [*refit["_fit"]["notes"],
             f"kept the constants in use for {', '.join(kept)}: with them the replay is within 1.3× on "
             f"{r['within_1.3']} of {r['cells']} cells (median {r['median']:.2f}, worst {r['worst']:.2f}), first-order "
             f"margin ×{table['margins'].get('dcd', 1.0):g}, likely to stop short beyond "
             f"{table['dcd'].get('fall_back_fraction', 0.5):g} (dcd) and "
             f"{table['robust-dcd'].get('fall_back_fraction', 0.5):g} (robust-dcd) of the epoch budget"]
    return {**table, "_fit": {**refit["_fit"], "notes": notes}}


def _refit(report: dict) -> dict:
    path = report["path"]
    table, notes = fit(report["cells"])
    table["margins"], fractions = choose_margins(report["cells"], table)
    for name, fraction in fractions.items():
        table[name] = {**table[name], "fall_back_fraction": fraction}
    notes.append(f"first-order margin ×{table['margins'].get('dcd', 1.0):g}; likely to stop short beyond "
                 f"{fractions['dcd']:g} (dcd) and {fractions['robust-dcd']:g} (robust-dcd) of the epoch budget")
    check = replay(report["cells"], table)
    notes.append(f"replayed on the measured times (its attempt, choice and fall-backs), `auto` with the refit "
                 f"is within 1.3× of the fastest certified backend on {check['within_1.3']} of {check['cells']} "
                 f"cells (median {check['median']:.2f}, worst {check['worst']:.2f}); {check['unmeasured']} cell(s) "
                 "need a run the grid did not make")
    table["_fit"] = {"results": str(Path(path).relative_to(ROOT)) if Path(path).is_relative_to(ROOT) else str(path),
                     "date": report["machine"]["date"], "commit": report["machine"]["commit"],
                     "load": report["machine"]["load"], "cells": len(report["cells"]), "notes": notes}
    return table


def describe(table: dict) -> str:
    return "; ".join(table.get("_fit", {}).get("notes", []))


def write_constants(table: dict, path: Path = cost.CONSTANTS_FILE) -> None:
    path.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    cost.reload_constants()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=DEFAULT_RESULTS)
    parser.add_argument("--dry-run", action="store_true", help="print the fit, write nothing")
    args = parser.parse_args(argv)
    table = fit_file(args.results)
    for note in table["_fit"]["notes"]:
        print(note)
    if not args.dry_run:
        write_constants(table)
        print(f"wrote {cost.CONSTANTS_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Robust SVMs by ``robust-dcd`` and ``feature-ipm`` against Clarabel and liblinear (nominal); writes
``benchmarks/results/robust.md``.

Run from the repository root::

    .venv/bin/python benchmarks/bench_robust.py            # everything (~15-30 min on 2 cores)
    .venv/bin/python benchmarks/bench_robust.py --quick    # small sizes, a minute

Cases (hinge loss, ``reduction="mean"``, ``L2(λ)`` with λ = 1/n, free intercept unless stated):

* Gaussian 20,000 × 100, ``y = sign(X·w₀ + 2ε)``: Box(r = 0.05) and 2-Ball(r = 0.2) by ``robust-dcd`` and
  ``feature-ipm`` to a certified relative gap of ``--tol`` and by Clarabel; liblinear
  (``LinearSVC(loss="hinge", dual=True, C=1)``, its own stopping rule, no certificate) and ``dcd`` on the nominal
  model.
* MNIST-shaped 60,000 × 784 (``make_mnist_like``, rows of unit norm): Box(r = 0.004) and Ball(r = 0.02) by
  ``robust-dcd``; liblinear nominal; Clarabel on the first tenth of the rows, for scale.
* Cora-shaped sparse 15,396 × 12,644 (``make_cora_like``, CSR): Ball(r = 0.05) and Box(r = 0.05) by
  ``robust-dcd``; liblinear nominal; Clarabel on the first tenth of the rows, for scale.
* Woolnough et al. (2022)'s WDBC Box-SVM protocol (``woolnough_protocol``, sum of hinges, L2 + L1, 5 folds; the
  paper's 2,250-point grid, 600 of its points with ``--quick``): ``feature-ipm`` (every point of a fold in one
  batch) and ``robust-dcd`` (refit per point, warm-started along the grid) against Clarabel compiled once.

Every solver runs in this process, single-threaded, after a warm-up of the compiled code; times are wall
times of one run each (the machine may be shared: the load average is recorded).
"""

from __future__ import annotations

import os

for _k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS",
           "RAYON_NUM_THREADS"):
    os.environ.setdefault(_k, "1")

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402
from pinning import add_cpu_argument, command_option, describe, pin_run  # noqa: E402

import robustsvm as rs  # noqa: E402
from robustsvm.solve_path import choose_backend  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "robust.md"
#: feature-ipm runs up to this many features, and beyond where it is "auto"'s choice
IPM_MAX_FEATURES = 128


def gaussian(n: int, d: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    w0 = rng.normal(size=d)
    y = np.sign(X @ w0 + 2.0 * rng.normal(size=n))
    y[y == 0] = 1.0
    return X, y


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def solve(problem, X, y, solver, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol, t = timed(lambda: problem.solve(X, y, solver=solver, **options))
    return {"solver": solver, "time": t, "objective": sol.objective, "status": sol.status,
            "rel_gap": sol.rel_gap if np.isfinite(sol.rel_gap) else sol.gap / max(abs(sol.objective), 1e-300),
            "iterations": sol.iterations, "answered_by": sol.solver, "probe": sol.auto_probe}


def auto_row(problem, X, y, label: str, tol: float) -> dict:
    """``solver="auto"`` as a user runs it: the backend that answered, and its bounded first attempt if any."""
    row = solve(problem, X, y, "auto", tol=tol)
    how, attempt = row["answered_by"], row["probe"]
    if attempt is not None and attempt.status == "optimal" and how == attempt.solver:
        how += f", its first attempt (limit {attempt.time_limit:.2g} s) instead of {attempt.instead_of}"
    elif attempt is not None:
        how += f", after a {attempt.solver} attempt of {attempt.time:.2g} s ({attempt.status})"
    row["solver"], row["label"] = f"auto → {how}", label
    return row


def liblinear(X, y, lam: float, tol: float):
    from sklearn.svm import LinearSVC

    n = X.shape[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est, t = timed(lambda: LinearSVC(loss="hinge", dual=True, C=1.0 / (lam * n), tol=tol).fit(X, y))
    w, b = est.coef_.ravel(), float(est.intercept_[0])
    obj = rs.Problem(penalty=rs.L2(lam)).objective(X, y, w, b)
    return {"solver": "liblinear (nominal)", "time": t, "objective": obj, "status": "—", "rel_gap": float("nan"),
            "iterations": int(np.max(est.n_iter_))}


def warm_up() -> None:
    X, y = gaussian(200, 5)
    for data in (X, sp.csr_matrix(X)):  # the dense and the CSR kernels are compiled separately
        for V in (rs.Box(0.1), rs.Ball(0.1)):
            for solver in ("robust-dcd", "feature-ipm"):
                rs.Problem(penalty=rs.L2(0.01), uncertainty=V).solve(data, y, solver=solver)
        rs.Problem(penalty=rs.L2(0.01)).solve(data, y, solver="dcd")
    liblinear(X, y, 0.01, 1e-4)


def fmt_row(r: dict, ref: float | None) -> str:
    ratio = "" if ref is None else f"{r['time'] / ref:.2f}"
    gap = "—" if not np.isfinite(r["rel_gap"]) else f"{r['rel_gap']:.1e}"
    return (f"| {r['label']} | {r['solver']} | {r['time']:.3g} | {ratio} | {r['status']} | {r['objective']:.7g} | "
            f"{gap} | {r['iterations']} |")


HEAD = ("| model | solver | time (s) | ratio to the fastest robust backend | status | objective | "
        "certified rel. gap | iterations |\n|---|---|---|---|---|---|---|---|")


def shape_case(title: str, X, y, sets: list[tuple[str, object]], *, tol: float, clarabel_rows: int | None,
               max_iter: int) -> tuple[str, list[str]]:
    n = X.shape[0]
    lam = 1.0 / n
    rows, bars = [], []
    nominal = liblinear(X, y, lam, tol)
    nominal["label"] = "nominal"
    dcd_nom = solve(rs.Problem(penalty=rs.L2(lam)), X, y, "dcd", tol=tol, max_iter=max_iter, random_state=0)
    dcd_nom["label"] = "nominal"
    d = X.shape[1]
    for label, V in sets:
        prob = rs.Problem(penalty=rs.L2(lam), uncertainty=V)
        auto = choose_backend(prob, X)
        group = []
        for solver in ("robust-dcd", "feature-ipm"):
            if solver == "feature-ipm" and d > IPM_MAX_FEATURES and auto != "feature-ipm":
                continue  # a Gram matrix of this many features, and not "auto"'s choice
            opts = {"max_iter": max_iter, "random_state": 0} if solver == "robust-dcd" else {}
            row = solve(prob, X, y, solver, tol=tol, **opts)
            row["label"] = label + (" (the cost model's pick)" if solver == auto else "")
            group.append(row)
        fast = min(group, key=lambda r: r["time"])
        group.append(auto_row(prob, X, y, label, tol))
        if clarabel_rows is None:
            cl = solve(prob, X, y, "clarabel")
            cl["label"] = label
        else:
            m = clarabel_rows
            sub = rs.Problem(penalty=rs.L2(1.0 / m), uncertainty=V)
            cl = solve(sub, X[:m], y[:m], "clarabel")
            cl["label"] = f"{label}, first {m} rows only (a smaller problem)"
        group.append(cl)
        for r in group:
            rows.append(fmt_row(r, fast["time"]))
        for r in group[:-1]:
            bars.append(f"| {title} | {label} | {r['solver']}{' (cost model)' if r['solver'] == auto else ''} | "
                        f"{r['time']:.3g} s ({r['status']}, gap {r['rel_gap']:.1e}) | "
                        f"{cl['time'] / r['time']:.1f}×{' (subsample)' if clarabel_rows else ''} | "
                        f"{r['time'] / nominal['time']:.2f}× |")
    rows.append(fmt_row(nominal, None))
    rows.append(fmt_row(dcd_nom, None))
    return "\n".join([HEAD, *rows]), bars


def woolnough(full: bool, tol: float, max_iter: int) -> str:
    from robustsvm.datasets import load
    from robustsvm.model_selection import standardize, stratified_split, woolnough_protocol
    from robustsvm.reproduce.woolnough2022 import _problem, grids
    from robustsvm.uncertainty import radius_upper_bound

    data = load("wdbc")
    train, _ = stratified_split(data.y, 0.2, seed=0)
    upper = radius_upper_bound(standardize(data.X)[train], data.y[train])
    grid = grids("Box-SVM", upper, "full" if full else "default")  # the paper's 2,250 points, or 600 of them
    prob = _problem("Box-SVM")
    out = {}
    runs = (("feature-ipm", {"tol": tol}), ("robust-dcd", {"tol": tol, "max_iter": max_iter, "random_state": 0}),
            ("clarabel", None))
    for solver, opts in runs:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res, t = timed(lambda s=solver, o=opts: woolnough_protocol(prob, data.X, data.y, grid, seed=0,
                                                                          solver=s, solver_options=o,
                                                                          progress=False))
        out[solver] = (res, t)
    slow = out["clarabel"]
    lines = [
        "| solver | grid wall time (s) | solves | solves at the tolerance | best point | CV accuracy | test accuracy |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, (res, t) in out.items():
        st = res.grid.statuses
        ok = int(np.sum(st == "optimal"))
        lines.append(f"| {name}{' (compiled once)' if name == 'clarabel' else ''} | {t:.1f} | {st.size} | {ok} | "
                     f"{ {k: float(f'{v:.4g}') for k, v in res.best_params.items()} } | {100 * res.cv_score:.2f}% | "
                     f"{100 * res.test_accuracy:.2f}% |")
    n_points = len(slow[0].grid.points)
    lines.append("")
    sizes = " × ".join(f"{len(v)} {k}" for k, v in grid.items())
    whose = "λ1, λ2 the paper's, 10 radii the package's choice" if n_points == 2250 else "a reduced one"
    lines.append(f"Grid: {sizes} ({whose}), {n_points} points × 5 folds; tol {tol:g} (robust-dcd max_iter "
                 f"{max_iter}); feature-ipm solves the {n_points:,} points of a fold as one batch (`grid_search` "
                 f"with a backend that has `solve_many`).")
    lines.append("")
    for name in ("feature-ipm", "robust-dcd"):
        res, t = out[name]
        st = res.grid.statuses
        short = int(np.sum(st != "optimal"))
        lines.append(f"- {name}: Clarabel / {name} = **{slow[1] / t:.2f}×**; same selected point: "
                     f"**{'yes' if res.best_params == slow[0].best_params else 'no'}**; {short} of {st.size} solves "
                     f"short of the tolerance (their points still carry a certified gap).")
    return "\n".join(lines)


def machine() -> str:
    import platform

    load = os.getloadavg()
    return (f"- machine: {os.cpu_count()} cores, {platform.processor() or platform.machine()}; load average at start "
            f"{load[0]:.2f}, {load[1]:.2f}, {load[2]:.2f} (shared machine)\n"
            f"- Python {platform.python_version()}, numpy {np.__version__}; single-threaded BLAS and numba")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python benchmarks/bench_robust.py", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    parser.add_argument("--tol", type=float, default=1e-4, help="certified relative gap of robust-dcd")
    parser.add_argument("--max-iter", type=int, default=5000, help="epochs of robust-dcd and dcd")
    parser.add_argument("--output", type=Path, default=OUT)
    add_cpu_argument(parser)
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    header = machine() + f"\n- {describe(pin_run(args.cpu, args.quick))}"
    warm_up()
    gn, gd = (2000, 100) if args.quick else (20000, 100)
    mn, md = (3000, 784) if args.quick else (60000, 784)
    X, y = gaussian(gn, gd)
    g_table, g_bars = shape_case(f"Gaussian {gn}×{gd}", X, y, [("Box r = 0.05", rs.Box(0.05)),
                                                               ("Ball r = 0.2", rs.Ball(0.2))],
                                 tol=args.tol, clarabel_rows=None, max_iter=args.max_iter)
    data = rs.datasets.make_mnist_like(mn, md, seed=0)
    ym = np.where(data.y > 0, 1.0, -1.0)
    m_table, m_bars = shape_case(f"MNIST-shaped {mn}×{md}", data.X, ym, [("Box r = 0.004", rs.Box(0.004)),
                                                                         ("Ball r = 0.02", rs.Ball(0.02))],
                                 tol=args.tol, clarabel_rows=mn // 10, max_iter=args.max_iter)
    cn, cd = (3000, 2000) if args.quick else (15396, 12644)
    cora = rs.datasets.make_cora_like(cn, cd, seed=0, density=min(1.0, 0.0015 * 12644 / cd))
    yc = np.where(np.asarray(cora.y) == 1, 1.0, -1.0)
    c_table, c_bars = shape_case(f"Cora-shaped sparse {cn}×{cd}", cora.X, yc, [("Ball r = 0.05", rs.Ball(0.05)),
                                                                               ("Box r = 0.05", rs.Box(0.05))],
                                 tol=args.tol, clarabel_rows=cn // 10, max_iter=args.max_iter)
    w_table = woolnough(not args.quick, args.tol, 1000)
    command = "python benchmarks/bench_robust.py" + (" --quick" if args.quick else "") + command_option(args.cpu)
    text = f"""## Robust SVMs fast: robust-dcd and feature-ipm against Clarabel and liblinear

Command: `{command}`  (total {(time.perf_counter() - t0) / 60:.1f} min)

{header}

Model: hinge loss, `reduction="mean"`, `L2(λ)` with λ = 1/n (LinearSVC's C = 1), free intercept, one
uncertainty set shared by every sample. `robust-dcd` and `feature-ipm` stop at a certified relative duality gap
of {args.tol:g} (or after {args.max_iter} epochs / 100 interior-point iterations: status `max_iter`); `feature-ipm`
runs up to {IPM_MAX_FEATURES} features and wherever it is the cost model's pick; the row `auto → …` is
`solver="auto"` as a user runs it (the cost model's pick, after a bounded first-order attempt when the pick
is predicted to take a second or more: `docs/auto.md`); Clarabel at its default
tolerances; liblinear
(`LinearSVC(loss="hinge", dual=True)`, tol {args.tol:g}, its own stopping rule, no certificate, intercept
regularized as a feature) and `dcd` solve the nominal model. Wall time of one solve each, in one process
after a warm-up; objectives recomputed by `Problem.objective`. `robust-dcd` is dual coordinate ascent (O(nnz) per
epoch), `feature-ipm` an interior point whose linear algebra lives in the feature space (O(n d²) per iteration);
both certify with the package's own duality gap.

### The package's robust backends (certified) against Clarabel (robust) and liblinear (nominal)

| data | set | backend | time | Clarabel / backend | backend / liblinear nominal |
|---|---|---|---|---|---|
{chr(10).join(g_bars + m_bars + c_bars)}

### Gaussian {gn}×{gd}, y = sign(X·w₀ + 2ε)

{g_table}

### MNIST-shaped {mn}×{md}

{m_table}

### Cora-shaped sparse {cn}×{cd} (binary bag of words, CSR, never densified)

The 2-ball's sparse step touches the row's stored entries only; the box's also refreshes its O(d) state.

{c_table}

### Woolnough et al. (2022) Box-SVM protocol on WDBC (sum of hinges, L2 + L1, 5 folds)

{w_table}
"""
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

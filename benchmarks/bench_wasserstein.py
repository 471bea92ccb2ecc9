"""rs.Wasserstein against the ``dro`` package's ``WassersteinDRO(model_type="svm")``: objective, gap and time.

Both fit the Wasserstein-robust hinge model of Shafieezadeh-Abadeh, Kuhn & Esfahani (JMLR 2019) without any other
penalty, transport cost ``‖x − x′‖₂ + κ[y ≠ y′]`` and a free intercept:

    minimize  λε + (1/n) Σ_i s_i,   s_i ≥ max(0, 1 − m_i),  s_i ≥ max(0, 1 + m_i) − λκ,  ‖w‖₂ ≤ λ.

``robustsvm`` compiles it once in CVXPY (vectorized) and solves it with Clarabel; ``dro`` (version as installed)
builds its own CVXPY model and solves it with Clarabel too. Every point is scored by the package's objective, and
the package's certificate gives each one's gap (relative to max(1, P)). Times are wall-clock seconds of the fit
(model building included), median of ``--repeats`` interleaved rounds. Data: two Gaussian classes, ``n × 20``.

``dro`` installs from PyPI with torch and CUDA wheels as dependencies, and its package ``__init__`` imports them; its
linear models need only cvxpy, numpy, scipy and scikit-learn. Install it apart and point to it::

    .venv/bin/python -m pip install --no-deps --target /tmp/dro_pkg dro
    .venv/bin/python benchmarks/bench_wasserstein.py --dro-path /tmp/dro_pkg [--quick]

The full run writes ``benchmarks/results/wasserstein.md``. ``--fast`` times instead the fast route of a ball with
``κ = ∞`` (the logistic loss and the hinge, ``p = 2``, L2(1e-3), signs on a third of the features, free intercept,
``n × 100``): ``logistic-dcd`` and ``robust-dcd`` against Clarabel, all certified by the package, into
``benchmarks/results/wasserstein_fast.md``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import types
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

RESULTS = ROOT / "benchmarks" / "results" / "wasserstein.md"
FAST_RESULTS = ROOT / "benchmarks" / "results" / "wasserstein_fast.md"


def load_dro(path: str | None):
    """``WassersteinDRO`` from an installed ``dro``, or from the sources at ``path`` without its package init."""
    if path is None:
        from dro.linear_model.wasserstein_dro import WassersteinDRO

        return WassersteinDRO
    for name, folder in (("dro", "dro"), ("dro.linear_model", "dro/linear_model")):
        module = types.ModuleType(name)
        module.__path__ = [str(Path(path) / folder)]
        sys.modules[name] = module
    from dro.linear_model.wasserstein_dro import WassersteinDRO

    return WassersteinDRO


def data(n: int, d: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    X = rng.normal(size=(n, d)) + 0.6 * np.outer(y, rng.normal(size=d)) / np.sqrt(d)
    return X, y


def fit_both(WassersteinDRO, X, y, eps: float, kappa: float) -> dict:
    import robustsvm as rs
    from robustsvm.duals.wasserstein import certify

    prob = rs.Problem(loss=rs.Hinge(), uncertainty=rs.Wasserstein(eps, kappa=kappa, norm=2))
    out = {}
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = prob.solve(X, y, solver="clarabel")
    out["robustsvm"] = {"time": time.perf_counter() - t0, "objective": sol.objective,
                        "gap": sol.gap / max(1.0, sol.objective), "status": sol.status}
    t0 = time.perf_counter()
    model = WassersteinDRO(input_dim=X.shape[1], model_type="svm")
    model.update({"eps": eps, "p": 2, "kappa": "inf" if not np.isfinite(kappa) else kappa})
    fitted = model.fit(X, y)
    seconds = time.perf_counter() - t0
    cert = certify(prob.normalize(X, y), np.asarray(fitted["theta"], dtype=np.float64),
                               float(np.ravel(fitted["b"])[0]), status="max_iter")
    out["dro"] = {"time": seconds, "objective": cert.objective, "gap": cert.gap / max(1.0, cert.objective),
                  "status": ""}
    return out


def run(args: argparse.Namespace) -> str:
    from bench_dcd import machine

    WassersteinDRO = load_dro(args.dro_path)
    import dro.linear_model.wasserstein_dro as dro_module

    version = getattr(sys.modules.get("dro"), "__version__", None) or Path(dro_module.__file__).parent.parent.name
    lines = ["## Wasserstein balls: rs.Wasserstein against dro's WassersteinDRO(model_type='svm')", "",
             f"Command: `.venv/bin/python benchmarks/bench_wasserstein.py --dro-path /tmp/dro_pkg"
             f"{' --quick' if args.quick else ''}` ({args.repeats} interleaved rounds, medians; dro from "
             f"`{version}`). Machine: {machine()}.", "",
             "Model: hinge loss, no other penalty, free intercept, transport cost ‖x − x′‖₂ + κ[y ≠ y′], radius "
             "ε = 0.05; both solved by Clarabel through CVXPY. Objective: the package's, at each point. Gap: the "
             "package's certified duality gap at each point, relative to max(1, P) (from the point's margins for "
             "dro's, which reports no multipliers). Ratio: dro's time over robustsvm's (below 1: dro is faster).",
             "",
             "| n × d | κ | solver | seconds | ratio dro/robustsvm | objective | rel. gap | status |",
             "|---|---|---|---|---|---|---|---|"]
    sizes = [(500, 20), (2000, 20)] if args.quick else [(1000, 20), (5000, 20), (20000, 20)]
    for n, d in sizes:
        X, y = data(n, d)
        for kappa in (np.inf, 1.0):
            rounds = [fit_both(WassersteinDRO, X, y, 0.05, kappa) for _ in range(args.repeats)]
            res = {s: {**rounds[0][s], "time": statistics.median(r[s]["time"] for r in rounds)}
                   for s in ("robustsvm", "dro")}
            ratio = statistics.median(r["dro"]["time"] / r["robustsvm"]["time"] for r in rounds)
            for s, r in res.items():
                lines.append(f"| {n} × {d} | {kappa:g} | {s} | {r['time']:.3f} | "
                             f"{f'{ratio:.2f}' if s == 'dro' else ''} | {r['objective']:.10f} | {r['gap']:.1e} "
                             f"| {r['status']} |")
                print(lines[-1], flush=True)
    return "\n".join(lines) + "\n"


#: the fast routes of ``--fast``: (loss, [(row label, solver, options)]), Clarabel last as the reference
FAST_ROUTES = (
    ("Logistic", [("logistic-dcd", "logistic-dcd", {}), ("clarabel", "clarabel", {})]),
    ("Hinge", [("robust-dcd", "robust-dcd", {}), ("robust-dcd tol 1e-5", "robust-dcd", {"tol": 1e-5}),
               ("clarabel", "clarabel", {})]),
)


def _fast_rows(n: int, d: int, loss: str, routes: list, repeats: int) -> list[str]:
    """The rows of one model and size: ``repeats`` rounds, the solvers in a rotated order each round."""
    import robustsvm as rs

    X, y = data(n, d, seed=1)
    signs = np.zeros(d, dtype=int)
    signs[: d // 3], signs[d // 3: 2 * (d // 3)] = 1, -1
    prob = rs.Problem(loss=getattr(rs, loss)(), penalty=rs.L2(1e-3), signs=signs,
                      uncertainty=rs.Wasserstein(0.05, norm=2))
    times: dict[str, list] = {label: [] for label, _, _ in routes}
    sols = {}
    for k in range(repeats):
        for label, solver, options in routes[k % len(routes):] + routes[: k % len(routes)]:
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                sols[label] = prob.solve(X, y, solver=solver, random_state=0, **options)
            times[label].append(time.perf_counter() - t0)
    lines = []
    for label, _, _ in routes:
        sol = sols[label]
        rounds = zip(times["clarabel"], times[label], strict=True)
        ratio = "" if label == "clarabel" else f"{statistics.median(c / f for c, f in rounds):.1f}"
        lines.append(f"| {n} × {d} | {loss.lower()} | {label} | {statistics.median(times[label]):.3f} | {ratio} | "
                     f"{sol.objective:.10f} | {sol.gap / max(1.0, sol.objective):.1e} | {sol.status} |")
        print(lines[-1], flush=True)
    return lines


def run_fast(args: argparse.Namespace) -> str:
    from bench_dcd import machine

    lines = ["## Wasserstein balls with κ = ∞: logistic-dcd and robust-dcd against Clarabel", "",
             f"Command: `.venv/bin/python benchmarks/bench_wasserstein.py --fast{' --quick' if args.quick else ''}` "
             f"({args.repeats} interleaved rounds, the solvers' order rotated each round; medians of the times and of "
             f"the per-round ratios). Machine: {machine()}.", "",
             "Model: `Problem(loss=Logistic() or Hinge(), penalty=L2(1e-3), signs=..., uncertainty=Wasserstein(0.05, "
             "norm=2))` (signs +1/−1 on a third of the features each), free intercept. Each backend at its default "
             "tolerance (logistic-dcd 1e-6, robust-dcd 1e-4, relative gap) unless the row says otherwise. Seconds: "
             "wall clock of `Problem.solve`; ratio: Clarabel's time over the row's, median of the rounds; gap: the "
             "package's certified gap relative to max(1, P).", "",
             "| n × d | loss | solver | seconds | ratio clarabel/solver | objective | rel. gap | status |",
             "|---|---|---|---|---|---|---|---|"]
    sizes = [(2000, 100)] if args.quick else [(5000, 100), (20000, 100)]
    for n, d in sizes:
        for loss, routes in FAST_ROUTES:
            lines.extend(_fast_rows(n, d, loss, routes, args.repeats))
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="reduced sizes, printed only")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--dro-path", default=None, help="a folder holding the dro sources (pip --target)")
    parser.add_argument("--fast", action="store_true", help="the fast route of κ = ∞ against Clarabel")
    parser.add_argument("--output", type=Path, default=None)
    args = parser.parse_args(argv)
    text = run_fast(args) if args.fast else run(args)
    print(text)
    out = args.output or (None if args.quick else FAST_RESULTS if args.fast else RESULTS)
    if out is not None:
        out.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

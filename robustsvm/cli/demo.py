"""The demonstration run by ``robustsvm demo`` (and ``make demo``).

Fits a few models on the Wisconsin diagnostic breast cancer data that
scikit-learn ships (569 samples, 30 features), standardized, on an 80/20
stratified split, and prints one row per model and solver.

One-time costs are kept out of the time column: before the table, each
solver is called once on a few samples (:func:`first_calls`). That first call
compiles the numba loops of ``dcd`` (or loads them from numba's cache) and
does the lazy imports and set-up of the others; its duration is printed on
its own line.
"""

from __future__ import annotations

import time
import warnings
from typing import TextIO

import numpy as np

from ..exceptions import ConvergenceWarning

__all__ = ["demo_models", "first_calls", "run_demo"]

#: samples of the first (untimed) call of each solver
FIRST_CALL_SAMPLES = 40
#: the backends whose inner loops numba compiles on their first call
JIT_BACKENDS = ("dcd", "robust-dcd", "feature-ipm")


def _load_wdbc():
    try:
        from sklearn.datasets import load_breast_cancer
        from sklearn.model_selection import train_test_split
    except ImportError as exc:  # pragma: no cover - the dev/data extra installs it
        raise ImportError("the demo needs scikit-learn: pip install 'robustsvm[data]'") from exc
    data = load_breast_cancer()
    X_tr, X_te, y_tr, y_te = train_test_split(
        data.data, data.target, test_size=0.2, random_state=0, stratify=data.target
    )
    mean, std = X_tr.mean(axis=0), X_tr.std(axis=0)
    names = [str(n) for n in data.feature_names]
    return (X_tr - mean) / std, (X_te - mean) / std, y_tr, y_te, names


def demo_models():
    """The models the demo fits, as ``(label, Problem, {solver: options})``.

    In scikit-learn's copy, class 1 is *benign*. Every size and shape
    measurement of the nuclei (radius, perimeter, area, smoothness,
    compactness, concavity, concave points, symmetry, in their "mean" and
    "worst" versions) grows with malignancy, so the sign constraints ask for a
    non-positive weight on each; the unconstrained fit gives some of them a
    positive weight through collinearity.
    """
    import robustsvm as rs

    shapes = ["radius", "perimeter", "area", "smoothness", "compactness", "concavity", "concave points", "symmetry"]
    signs = {f"{kind} {shape}": -1 for kind in ("mean", "worst") for shape in shapes}
    lam = 1e-2
    first_order = {
        "dcd": {"tol": 1e-6},
        "frank-wolfe": {"tol": 1e-4, "max_iter": 20_000},
        "pegasos": {"max_iter": 3000},
    }
    models = [
        ("SVM  hinge + L2", rs.Problem(penalty=rs.L2(lam)), {"clarabel": {}, "scs": {}, **first_order}),
        ("SVM  hinge + L2, signs", rs.Problem(penalty=rs.L2(lam), signs=signs),
         {"clarabel": {}, "scs": {}, **first_order}),
        ("SVM  sq. hinge + L2 + L1", rs.Problem(loss=rs.SquaredHinge(), penalty=rs.L2(lam) + rs.L1(1e-3)),
         {"clarabel": {}, "scs": {}}),
        ("Box-SVM  r = 0.05", rs.Problem(penalty=rs.L2(lam), uncertainty=rs.Box(radius=0.05)),
         {"clarabel": {}, "scs": {}, "robust-dcd": {"tol": 1e-6}, "feature-ipm": {"tol": 1e-6}}),
        ("Ball-SVM r = 0.2, signs", rs.Problem(penalty=rs.L2(lam), signs=signs, uncertainty=rs.Ball(radius=0.2)),
         {"clarabel": {}, "robust-dcd": {"tol": 1e-6}, "feature-ipm": {"tol": 1e-6}}),
        ("Box-pq-SVM (nu=1, lam2=0.5)", rs.pq_svm(nu=1.0, lam2=0.5, radius=0.05),
         {"clarabel": {}, "pq": {"eliminate": True, "accelerate": True, "tol": 1e-7, "max_iter": 20_000}}),
        ("RBF kernel SVM (sigma=3)", rs.Problem(penalty=rs.L2(lam), kernel=rs.RBF(sigma=3.0), intercept=rs.L2(1.0)),
         {"clarabel": {}, "m3": {"tol": 1e-4, "max_iter": 20_000}}),
    ]
    return models, signs


def first_calls(models: list, X: np.ndarray, y: np.ndarray, names: list[str]) -> dict[str, float]:
    """Call every solver of ``models`` once per model on the first ``FIRST_CALL_SAMPLES`` samples; seconds per
    solver, summed over its models.

    Each call runs with the model's options and at most 50 iterations: what is timed is the one-time work of a
    first call (numba compilation for :data:`JIT_BACKENDS`, once for each model's kind of set and prior, imports
    and caches for all), not the solve itself.
    """
    m = min(FIRST_CALL_SAMPLES, X.shape[0])
    seconds: dict[str, float] = {}
    for _, prob, solvers in models:
        for solver, options in solvers.items():
            opts = {**options, "max_iter": min(int(options.get("max_iter", 50)), 50)}
            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # a result thrown away: its accuracy does not matter
                prob.solve(X[:m], y[:m], solver=solver, feature_names=names, **opts)
            seconds[solver] = seconds.get(solver, 0.0) + time.perf_counter() - start
    return seconds


def run_demo(out: TextIO | None = None) -> list[dict]:
    """Fit the demo models and print the table; returns its rows.

    Each row holds ``model``, ``solver``, ``objective``, ``gap``, ``status``,
    ``accuracy`` (on the test split), ``time`` (seconds of the solve, after
    the solver's first call) and ``first_call`` (seconds of that first call
    on a few samples, see :func:`first_calls`).
    """
    import sys

    out = out or sys.stdout
    X_tr, X_te, y_tr, y_te, names = _load_wdbc()
    models, _ = demo_models()
    print("Wisconsin diagnostic breast cancer (scikit-learn copy): "
          f"{X_tr.shape[0]} training / {X_te.shape[0]} test samples, {X_tr.shape[1]} features", file=out)
    warm = first_calls(models, X_tr, y_tr, names)
    jit = [s for s in warm if s in JIT_BACKENDS]
    print(f"first call of each solver on each of its models ({min(FIRST_CALL_SAMPLES, X_tr.shape[0])} samples), "
          "not in the time column "
          f"(numba compilation or cache load for {', '.join(jit) or 'none'}; imports and set-up for all): "
          + ", ".join(f"{s} {t:.3f} s" for s, t in warm.items()), file=out)
    width = max(len(label) for label, _, _ in models)
    header = (f"{'model':<{width}} {'solver':<12} {'objective':>13} {'gap':>9} {'status':<10} "
              f"{'accuracy':>8} {'time [s]':>9}")
    print(header, file=out)
    print("-" * len(header), file=out)
    rows = []
    for label, prob, solvers in models:
        for solver, options in solvers.items():
            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                sol = prob.solve(X_tr, y_tr, solver=solver, feature_names=names, **options)
            elapsed = time.perf_counter() - start
            acc = float(np.mean(sol.predict(X_te) == y_te))
            rows.append({"model": label, "solver": solver, "objective": sol.objective, "gap": sol.gap,
                         "status": sol.status, "accuracy": acc, "time": elapsed, "first_call": warm[solver]})
            print(f"{label:<{width}} {solver:<12} {sol.objective:>13.8f} {sol.gap:>9.2g} {sol.status:<10} "
                  f"{acc:>8.3f} {elapsed:>9.3f}", file=out)
    print("\nobjective: recomputed from (w, b) for every solver; gap: the solver's certified duality gap "
          "(absolute); time: wall-clock seconds of the solve, one-time compilation excluded (see the first-call "
          "line above).", file=out)
    return rows

"""``feature-ipm`` with thousands of features against Clarabel and ``robust-dcd``; writes
``benchmarks/results/ipm_wide.md``.

Run from the repository root::

    .venv/bin/python benchmarks/bench_ipm_wide.py            # everything (~20 min on 2 cores)
    .venv/bin/python benchmarks/bench_ipm_wide.py --quick    # small sizes, a few minutes

Cases (hinge loss, ``reduction="mean"``, ``L2(λ)`` with λ = 1/n, free intercept):

* 1,000 × 3,000 Gaussian (``y = sign(X·w₀ + 2ε)``), nominal, Box(r = 0.05) and 2-Ball(r = 0.2): fewer samples
  than features, ``feature-ipm`` takes its Woodbury path (``n × n`` systems, no ``(d+2)²`` Gram);
* 5,000 × 2,000 Gaussian, Box and 2-Ball: more samples than features, the dense path;
* a Cora-shaped sparse bag of words (:func:`robustsvm.datasets.make_cora_like`, 2,000 × 6,000, about 30 words a
  document, 0/1 entries) at 2-Ball(r = 0.05) with signs (+1 on the first third of the words, −1 on the next
  sixth, the rest free): the Woodbury path on CSR data.

``feature-ipm`` and ``robust-dcd`` stop at a certified relative gap of ``--tol`` (``robust-dcd`` within its default
budget of epochs, its status said), Clarabel at its defaults within ``--clarabel-limit`` seconds. Every solver runs
once per cell, in this process, single-threaded (BLAS and numba); times are wall and CPU seconds, the ratios are
CPU-time ratios of the same run.
"""

from __future__ import annotations

import os

for _k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS",
           "RAYON_NUM_THREADS"):
    os.environ.setdefault(_k, "1")

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

import robustsvm as rs  # noqa: E402
from robustsvm.datasets import make_cora_like  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_ipm_floor import gaussian, machine, run  # noqa: E402  (the same data, timing and machine line)

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "ipm_wide.md"

TABLE_HEAD = ("| data | set | feature-ipm path | feature-ipm | iterations | robust-dcd | Clarabel | "
              "Clarabel / feature-ipm | robust-dcd / feature-ipm |\n|---|---|---|---|---|---|---|---|---|")


def mixed_signs(d: int) -> np.ndarray:
    s = np.zeros(d, dtype=int)
    s[: d // 3] = 1
    s[d // 3: d // 2] = -1
    return s


def describe(res: dict) -> str:
    sol = res["value"]
    gap = sol.gap / max(abs(sol.objective), 1e-300)  # the package's certified gap, relative
    return f"{res['wall']:.3g} s (CPU {res['cpu']:.3g} s; {sol.status}, certified gap {gap:.1e})"


def cell(title: str, X, y, label: str, prob: rs.Problem, *, tol: float, clarabel_limit: float) -> str:
    """One table row: feature-ipm, robust-dcd and Clarabel on ``prob``."""
    ipm = run(lambda: prob.solve(X, y, solver="feature-ipm", tol=tol))
    counts = ipm["value"].extra["ipm_counts"]
    path = "Woodbury (n × n)" if counts.get("wide_systems", 0) else "dense ((d+2)² Gram)"
    dcd = run(lambda: prob.solve(X, y, solver="robust-dcd", tol=tol))
    cl = run(lambda: prob.solve(X, y, solver="clarabel", time_limit=clarabel_limit))
    return (f"| {title} | {label} | {path} | {describe(ipm)} | {counts['iterations']} | {describe(dcd)} | "
            f"{describe(cl)} | **{cl['cpu'] / ipm['cpu']:.1f}×** | {dcd['cpu'] / ipm['cpu']:.2f}× |")


def warm_up() -> None:
    X, y = gaussian(60, 100)
    for V in (None, rs.Box(0.1), rs.Ball(0.1)):
        for solver in ("feature-ipm", "robust-dcd"):
            rs.Problem(penalty=rs.L2(0.01), uncertainty=V).solve(X, y, solver=solver)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python benchmarks/bench_ipm_wide.py", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (a few minutes)")
    parser.add_argument("--tol", type=float, default=1e-4, help="certified relative gap of feature-ipm and robust-dcd")
    parser.add_argument("--clarabel-limit", type=float, default=300.0, help="Clarabel's time limit in seconds")
    parser.add_argument("--output", type=Path, default=OUT)
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    header = machine()
    warm_up()
    q = args.quick
    gauss = [((300, 900), [("nominal", None), ("Box r = 0.05", rs.Box(0.05)), ("Ball r = 0.2", rs.Ball(0.2))]),
             ((1500, 600), [("Box r = 0.05", rs.Box(0.05)), ("Ball r = 0.2", rs.Ball(0.2))])] if q else \
            [((1000, 3000), [("nominal", None), ("Box r = 0.05", rs.Box(0.05)), ("Ball r = 0.2", rs.Ball(0.2))]),
             ((5000, 2000), [("Box r = 0.05", rs.Box(0.05)), ("Ball r = 0.2", rs.Ball(0.2))])]
    rows = []
    for (n, d), sets in gauss:
        X, y = gaussian(n, d)
        for label, V in sets:
            prob = rs.Problem(penalty=rs.L2(1.0 / n), uncertainty=V)
            rows.append(cell(f"{n:,} × {d:,} Gaussian", X, y, label, prob, tol=args.tol,
                             clarabel_limit=args.clarabel_limit))
            print(rows[-1], flush=True)
    n, d = (600, 2000) if q else (2000, 6000)
    data = make_cora_like(n, d, density=30.0 / d, seed=0)
    prob = rs.Problem(penalty=rs.L2(1.0 / n), uncertainty=rs.Ball(0.05), signs=mixed_signs(d))
    rows.append(cell(f"{n:,} × {d:,} Cora-like CSR ({data.X.nnz:,} non-zeros)", data.X, data.y,
                     "Ball r = 0.05, signs", prob, tol=args.tol, clarabel_limit=args.clarabel_limit))
    print(rows[-1], flush=True)
    command = "python benchmarks/bench_ipm_wide.py" + (" --quick" if q else "")
    text = f"""## feature-ipm with thousands of features: the Woodbury path for n < d

Command: `{command}`  (total {(time.perf_counter() - t0) / 60:.1f} min)

{header}

Model: hinge loss, `reduction="mean"`, `L2(λ)` with λ = 1/n, free intercept, one shared set. `feature-ipm` and
`robust-dcd` stop at a certified relative gap of {args.tol:g} (`robust-dcd` within its default budget of epochs;
its status says when it stopped short), Clarabel at its defaults within {args.clarabel_limit:g} s; one solve each.
When the samples are fewer than the features (and d ≥ 64, the set not an ellipsoid) `feature-ipm` solves each
Newton system by Woodbury through an n × n matrix, O(n² d + n³) per iteration (`docs/derivations/feature_ipm.md`
§11); otherwise by its dense (d + f + 2)² system after a (d+2)² Gram matrix, O(n d² + (d + f)³). The ratios are
of CPU times in this run.

{TABLE_HEAD}
{chr(10).join(rows)}
"""
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

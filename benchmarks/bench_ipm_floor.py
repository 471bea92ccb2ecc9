"""``feature-ipm`` at its floor: its time per iteration in Gram products, against Clarabel and liblinear, and the
ellipsoid by ``"auto"`` against the box; writes ``benchmarks/results/ipm_floor.md``.

Run from the repository root::

    .venv/bin/python benchmarks/bench_ipm_floor.py            # everything (~10 min on 2 cores)
    .venv/bin/python benchmarks/bench_ipm_floor.py --quick    # small sizes, about a minute
    .venv/bin/python benchmarks/bench_ipm_floor.py --profile  # where a solve's CPU time goes, 20,000 × 100

Cases (hinge loss, ``reduction="mean"``, ``L2(λ)`` with λ = 1/n, free intercept, Gaussian data
``y = sign(X·w₀ + 2ε)`` as in ``bench_robust.py``):

* 20,000 × 100, Box(r = 0.05), 2-Ball(r = 0.2) and Ellipsoid(M, r = 0.1) with ``M = BBᵀ/d + I`` (``B`` standard
  Gaussian, a well-conditioned random shape): ``feature-ipm`` to a certified relative gap of ``--tol``
  (median of 7 solves, four before and three after Clarabel's one solve) against Clarabel; per iteration, the
  Gram products the solve formed (double precision, single precision, and their double-precision equivalent
  counting a single-precision one as half), the passes over the data, and the time per iteration in units of
  NumPy's ``XᵀX`` on the same data (the floor: one Gram product per iteration).
* 20,000 × 400 and 100,000 × 100: the same, beside liblinear on the nominal model
  (``LinearSVC(loss="hinge", dual=True)``, its own stopping rule).
* The ellipsoid (``Ellipsoid(M, 0.1)``, ``M = BBᵀ/d + I``) and the box by ``solver="auto"`` at 20,000 × 100 and
  20,000 × 400: the backend ``auto`` ran and its time.

Every solver runs in this process, single-threaded: BLAS by ``threadpoolctl`` (and the thread variables set before
NumPy loads), numba by ``NUMBA_NUM_THREADS``, Clarabel by its own ``max_threads = 1`` (passed through
``solver_options``). Times are wall and CPU seconds; the ratio against Clarabel is of CPU times.
"""

from __future__ import annotations

import os

for _k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS",
           "RAYON_NUM_THREADS"):
    os.environ.setdefault(_k, "1")

import argparse  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from pinning import add_cpu_argument, command_option, describe, pin_run  # noqa: E402

import robustsvm as rs  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "ipm_floor.md"
#: feature-ipm solves per cell, half before and half after Clarabel's one solve (their median is reported)
REPEATS = 7
#: Clarabel's own thread pool held to one thread (its default, 0, lets it choose)
CLARABEL = {"max_threads": 1}


TABLE_HEAD = ("| data | set | feature-ipm | iterations | Gram products f64 + f32 | f64-equivalent per iteration | "
              "passes per iteration | time per iteration (× XᵀX) | Clarabel | Clarabel / feature-ipm | "
              "feature-ipm / liblinear nominal |\n|---|---|---|---|---|---|---|---|---|---|---|")


def gaussian(n: int, d: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    w0 = rng.normal(size=d)
    y = np.sign(X @ w0 + 2.0 * rng.normal(size=n))
    y[y == 0] = 1.0
    return X, y


def ellipsoid(d: int, radius: float, seed: int = 1) -> rs.Ellipsoid:
    rng = np.random.default_rng(seed)
    B = rng.normal(size=(d, d))
    return rs.Ellipsoid(shape=B @ B.T / d + np.eye(d), radius=radius)


def run(fn, repeats: int = 1) -> dict:
    """The median (over ``repeats``) wall and CPU seconds of ``fn()`` and its last value."""
    walls, cpus, out = [], [], None
    for _ in range(repeats):
        w0, c0 = time.perf_counter(), time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = fn()
        walls.append(time.perf_counter() - w0)
        cpus.append(time.process_time() - c0)
    return {"wall": float(np.median(walls)), "cpu": float(np.median(cpus)), "value": out, "walls": walls, "cpus": cpus}


def pooled(*runs: dict) -> dict:
    """The runs of :func:`run` taken as one: medians over all their repeats, the last value."""
    walls = [t for r in runs for t in r["walls"]]
    cpus = [t for r in runs for t in r["cpus"]]
    return {"wall": float(np.median(walls)), "cpu": float(np.median(cpus)), "value": runs[-1]["value"],
            "walls": walls, "cpus": cpus}


def gram_time(X: np.ndarray) -> float:
    """CPU seconds of NumPy's ``XᵀX`` in double precision (median of 5): the unit of the per-iteration cost."""
    X.T @ X
    times = []
    for _ in range(5):
        c0 = time.process_time()
        X.T @ X
        times.append(time.process_time() - c0)
    return float(np.median(times))


def liblinear(X, y, tol: float) -> dict:
    from sklearn.svm import LinearSVC

    return run(lambda: LinearSVC(loss="hinge", dual=True, C=1.0, tol=tol).fit(X, y))


def floor_rows(title: str, X, y, sets, *, tol: float, repeats: int, clarabel: bool, nominal: dict | None):
    """Table rows of feature-ipm against Clarabel (and liblinear) on ``X`` for each set."""
    n = X.shape[0]
    unit = gram_time(X)
    rows = []
    for label, V in sets:
        prob = rs.Problem(penalty=rs.L2(1.0 / n), uncertainty=V)
        def solve_ipm(p=prob):
            return p.solve(X, y, solver="feature-ipm", tol=tol)

        # half of the feature-ipm solves before Clarabel's and half after: both sides of the ratio see the same
        # stretch of the machine's load
        first = run(solve_ipm, (repeats + 1) // 2)
        cl = run(lambda p=prob: p.solve(X, y, solver="clarabel", solver_options=CLARABEL)) if clarabel else None
        ipm = pooled(first, run(solve_ipm, repeats // 2)) if repeats > 1 else first
        sol = ipm["value"]
        counts = sol.extra["ipm_counts"]
        its = max(counts["iterations"], 1)
        g64, g32 = counts["gram_float64"], counts["gram_float32"]
        equiv = (g64 + 0.5 * g32) / its
        per_it = ipm["cpu"] / its / unit
        ratio = "—" if cl is None else f"**{cl['cpu'] / ipm['cpu']:.0f}×** (wall {cl['wall'] / ipm['wall']:.0f}×)"
        cl_time = "—" if cl is None else f"{cl['wall']:.3g} s (CPU {cl['cpu']:.3g} s; {cl['value'].status})"
        lib = "—" if nominal is None else f"{ipm['wall'] / nominal['wall']:.2f}×"
        rows.append(f"| {title} | {label} | {ipm['wall']:.3g} s (CPU {ipm['cpu']:.3g} s; {sol.status}, gap "
                    f"{sol.rel_gap:.1e}) | {counts['iterations']} | {g64} + {g32} | {equiv:.2f} | "
                    f"{(counts['passes'] + 0.5 * counts.get('passes_float32', 0)) / its:.1f} | {per_it:.2f} | "
                    f"{cl_time} | {ratio} | {lib} |")
    return rows, unit


def auto_rows(title: str, X, y, *, tol: float) -> list[str]:
    """The box and the ellipsoid by ``solver="auto"`` (the backend it ran, its time, the ratio)."""
    n, d = X.shape
    out, base = [], None
    for label, V in (("Box r = 0.05", rs.Box(0.05)), ("Ellipsoid r = 0.1", ellipsoid(d, 0.1))):
        prob = rs.Problem(penalty=rs.L2(1.0 / n), uncertainty=V)
        res = run(lambda p=prob: p.solve(X, y, solver="auto", tol=tol))
        sol = res["value"]
        fallback = sol.auto_fallback
        ran = sol.solver
        if fallback:
            ran = f"{ran} (after {fallback.solver}: {fallback.status}, {fallback.time:.3g} s)"
        base = res["wall"] if base is None else base
        out.append(f"| {title} | {label} | {ran} | {res['wall']:.3g} s (CPU {res['cpu']:.3g} s; {sol.status}) | "
                   f"{res['wall'] / base:.2f}× |")
    return out


#: the parts of a solve :func:`profile_rows` reports: the functions (by name) whose own CPU time each part sums
PARTS = {"Gram": ("_gram_blocks", "scaled_rows"), "passes": ("dot", "tdot", "dot_coarse", "tdot_coarse", "dot_tdot",
                                               "transposed_product", "row_margins", "transposed_margins",
                                               "margin_products"),
         "per-sample kernels": ("sample_rho", "sample_steps", "sample_complementarity", "purified_multipliers"),
         "cone": ("NTScaling", "jordan", "jordan_solve", "max_step", "apply", "apply_inverse",
                  "inverse_squared_congruence", "_nt_scaling", "_jordan_solve", "_max_step", "_reflection"),
         "certificate": ("dual_certificate", "trivial_certificate")}


def profile_rows(n: int, d: int, *, tol: float, repeats: int = 5) -> list[str]:
    """Per set: iterations, the step lengths, the CPU time per iteration (× ``XᵀX``) and its shares by part
    (cProfile on CPU time over ``repeats`` solves; the certificate's share includes what it calls)."""
    import cProfile
    import pstats

    X, y = gaussian(n, d)
    unit = gram_time(X)
    rows = []
    for label, V in (("Box r = 0.05", rs.Box(0.05)), ("Ball r = 0.2", rs.Ball(0.2)),
                     ("Ellipsoid r = 0.1", ellipsoid(d, 0.1))):
        prob = rs.Problem(penalty=rs.L2(1.0 / n), uncertainty=V)
        sol = prob.solve(X, y, solver="feature-ipm", tol=tol)
        prof = cProfile.Profile(time.process_time)
        c0 = time.process_time()
        prof.enable()
        for _ in range(repeats):
            prob.solve(X, y, solver="feature-ipm", tol=tol)
        prof.disable()
        total = time.process_time() - c0
        stats = pstats.Stats(prof).stats
        shares = {}
        for part, names in PARTS.items():
            own = part != "certificate"
            shares[part] = sum(st[2] if own else st[3] for (path, _, name), st in stats.items()
                               if name in names and "robustsvm" in path) / total
        its = sol.extra["ipm_counts"]["iterations"]
        steps = " ".join(f"{a:.2f}" for a in sol.history["step"])
        rows.append(f"| {n:,} × {d} | {label} | {its} | {steps} | {total / repeats / its / unit:.2f} | "
                    + " | ".join(f"{100 * v:.0f}%" for v in shares.values())
                    + f" | {100 * (1 - sum(shares.values())):.0f}% |")
    return rows


def machine() -> str:
    load = os.getloadavg()
    return (f"- machine: {os.cpu_count()} cores, {platform.processor() or platform.machine()}; load average at start "
            f"{load[0]:.2f}, {load[1]:.2f}, {load[2]:.2f}\n"
            f"- Python {platform.python_version()}, numpy {np.__version__}; single-threaded BLAS and numba")


def blas_threads() -> str:
    """The BLAS libraries loaded and their thread counts, as ``threadpoolctl`` reports them."""
    from threadpoolctl import threadpool_info

    libs = [f"{i.get('internal_api')} {i.get('num_threads')} thread(s)" for i in threadpool_info()
            if i.get("user_api") == "blas"]
    return "BLAS (threadpoolctl): " + (", ".join(libs) or "none found") + "; Clarabel max_threads = 1"


def warm_up() -> None:
    X, y = gaussian(300, 5)
    for V in (rs.Box(0.1), rs.Ball(0.1), ellipsoid(5, 0.1)):
        rs.Problem(penalty=rs.L2(0.01), uncertainty=V).solve(X, y, solver="feature-ipm")
        rs.Problem(penalty=rs.L2(0.01), uncertainty=V).solve(X, y, solver="auto")
    big = gaussian(4000, 30)  # the block path and its single-precision copy
    rs.Problem(penalty=rs.L2(1e-3), uncertainty=rs.Ball(0.1)).solve(*big, solver="feature-ipm")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python benchmarks/bench_ipm_floor.py", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (about a minute)")
    parser.add_argument("--tol", type=float, default=1e-4, help="certified relative gap of feature-ipm")
    parser.add_argument("--output", type=Path, default=OUT)
    parser.add_argument("--profile", action="store_true",
                        help="only the profile of feature-ipm at 20,000 × 100 (results/ipm_profile.md)")
    add_cpu_argument(parser)
    args = parser.parse_args(argv)
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):  # every BLAS this process loaded, on one thread
        return _main(args)


def _main(args) -> int:
    if args.profile:
        return _profile(args)
    t0 = time.perf_counter()
    header = machine() + f"\n- {describe(pin_run(args.cpu, args.quick))}\n- {blas_threads()}"
    warm_up()
    shapes = [(4000, 100), (4000, 200), (20000, 50)] if args.quick else [(20000, 100), (20000, 400), (100000, 100)]
    rows, units = [], []
    for k, (n, d) in enumerate(shapes):
        X, y = gaussian(n, d)
        sets = [("Box r = 0.05", rs.Box(0.05)), ("Ball r = 0.2", rs.Ball(0.2)),
                ("Ellipsoid r = 0.1", ellipsoid(d, 0.1))]
        nominal = None if k == 0 else liblinear(X, y, args.tol)
        part, unit = floor_rows(f"{n:,} × {d}", X, y, sets, tol=args.tol, repeats=REPEATS, clarabel=True,
                                nominal=nominal)
        rows += part
        units.append(f"{n:,} × {d}: {1e3 * unit:.2f} ms")
        if nominal is not None:
            rows.append(f"| {n:,} × {d} | nominal | liblinear {nominal['wall']:.3g} s (CPU {nominal['cpu']:.3g} s) "
                        f"| | | | | | | | |")
    auto_shapes = [(4000, 100), (4000, 200)] if args.quick else [(20000, 100), (20000, 400)]
    auto = []
    for n, d in auto_shapes:
        X, y = gaussian(n, d)
        auto += auto_rows(f"{n:,} × {d}", X, y, tol=args.tol)
    command = "python benchmarks/bench_ipm_floor.py" + (" --quick" if args.quick else "") + command_option(args.cpu)
    text = f"""## feature-ipm at its Gram floor; the ellipsoid by `auto`

Command: `{command}`  (total {(time.perf_counter() - t0) / 60:.1f} min)

{header}

Model: hinge loss, `reduction="mean"`, `L2(λ)` with λ = 1/n, free intercept, one shared set; Gaussian data
`y = sign(X·w₀ + 2ε)`. `feature-ipm` stops at a certified relative gap of {args.tol:g} (median of {REPEATS} solves,
half before and half after Clarabel's), Clarabel at its defaults but `max_threads = 1` (one solve), liblinear
(`LinearSVC(loss="hinge", dual=True, C=1)`, tol {args.tol:g}, no certificate) solves the nominal model. The
column Clarabel / feature-ipm is the ratio of CPU times (of wall times in parentheses); the target is 80×.

Per iteration: **Gram products** `f64 + f32` as formed (one weighted `Aᵀdiag(1/e)A` per iteration, in single
precision while the gap is far from the tolerance), their **double-precision equivalent** (a single-precision
product counted as half: it takes about half the time), **passes** over the data (products `Az`, `Aᵀv`; one over the
single-precision copy counted as half) and the **CPU time per iteration in units of NumPy's `XᵀX`** on the same
data (the floor is one: {"; ".join(units)}).

{TABLE_HEAD}
{chr(10).join(rows)}

### The ellipsoid by `auto` against the box by `auto`

`robust-dcd` refuses an ellipsoid in more than 64 dimensions (each coordinate step finds the worst case by
inner steps of O(d²)), so `auto` sends it to `feature-ipm`; the last column is the time relative to the box.

| data | set | backend `auto` ran | time | / box |
|---|---|---|---|---|
{chr(10).join(auto)}
"""
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text)
    print(text)
    return 0


def _profile(args) -> int:
    header = machine() + f"\n- {describe(pin_run(args.cpu, False))}\n- {blas_threads()}"
    warm_up()
    rows = profile_rows(20000, 100, tol=args.tol)
    head = ("| data | set | iterations | step lengths | CPU per iteration (× XᵀX) | "
            + " | ".join(PARTS) + " | rest |\n|" + "---|" * (len(PARTS) + 6))
    text = ("## feature-ipm: where the iterations and the time go (20,000 × 100)\n\n"
            f"Command: `python benchmarks/bench_ipm_floor.py --profile{command_option(args.cpu)}`\n\n{header}\n\n"
            f"{head}\n" + "\n".join(rows) + "\n")
    (OUT.parent / "ipm_profile.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

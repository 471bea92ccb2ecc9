"""The benchmark suite: dcd against liblinear, Clarabel, SCS and the first-order backends.

Every case is one model solved by every solver in the same run:

    minimize (λ/2)‖w‖² + (1/n) Σ_i max(0, 1 − y_i (x_i·w + b))   s.t. s_h w_h ≥ 0,

with ``λ = 1/n`` (scikit-learn's default ``C = 1`` in ``LinearSVC``), on data
shaped like MNIST (dense, non-negative rows of unit norm) and Cora (sparse bag of
words), with and without a free intercept. ``dcd``, ``frank-wolfe``, ``pegasos``,
``clarabel`` and ``scs`` solve the sign-constrained model to a relative duality
gap of ``tol``; ``liblinear`` (``LinearSVC(loss="hinge", dual=True, C=1/(λn))``)
and ``dcd (no signs)`` solve the unconstrained one. Each solver runs in its own
subprocess (single-threaded BLAS) after the data are loaded and compiled code is
warmed up: the wall time of ``Problem.solve`` (compile included) is the median of
``--repeats`` runs, the memory is the peak resident set during the solves above
the resident set before them (Linux: the peak is reset with ``/proc/self/clear_refs``),
and a solver still running after ``--cap`` seconds is stopped and reported as
``> cap`` (Clarabel is then also timed on a tenth of the rows, for scale).
The results, dcd's time against liblinear's and Clarabel's, the profile of
dcd and log–log plots of time against n and d are written as a markdown
section.

Run from the repository root (``make bench`` runs the full suite)::

    .venv/bin/python benchmarks/bench_suite.py            # full suite, ~10-15 min
    .venv/bin/python benchmarks/bench_suite.py --quick    # tiny sizes, seconds

It writes ``benchmarks/results/suite.md`` and ``docs/figures/scaling_*.png``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import select
import subprocess
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

__all__ = ["Case", "add_arguments", "main", "make_case", "run", "run_case", "scaling"]

#: solvers of the suite, in table order; the first-order ones are included only when registered
SOLVERS = ("dcd", "dcd (no signs)", "liblinear", "frank-wolfe", "pegasos", "clarabel", "scs")
#: solvers that are only run once per case (slow at full size)
_ONCE = {"frank-wolfe", "pegasos", "clarabel", "scs"}
#: environment of the workers: every solver single-threaded
_THREADS_ENV = {k: "1" for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                                 "NUMBA_NUM_THREADS", "RAYON_NUM_THREADS", "VECLIB_MAXIMUM_THREADS")}


@dataclass
class Case:
    """One benchmark problem: a data shape, its size and whether the intercept is free."""

    kind: str  # "dense" (MNIST-shaped) or "sparse" (Cora-shaped)
    n: int
    d: int
    intercept: bool
    seed: int = 0

    @property
    def name(self) -> str:
        shape = "MNIST-shaped" if self.kind == "dense" else "Cora-shaped"
        return f"{shape} {self.n}×{self.d}, " + ("free b" if self.intercept else "no b")


@dataclass
class Measurement:
    """What one solver did on one case."""

    solver: str
    times: list = field(default_factory=list)
    status: str = ""
    objective: float = float("nan")
    rel_gap: float = float("nan")
    iterations: int = 0
    memory_mb: float = float("nan")
    capped: bool = False
    note: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def time(self) -> float:
        return float(np.median(self.times)) if self.times else float("nan")


# --------------------------------------------------------------------------- data
def make_case(kind: str, n: int, d: int, seed: int = 0) -> tuple[Any, np.ndarray, np.ndarray]:
    """Data ``(X, y, signs)`` of one case, generated (nothing is downloaded).

    ``kind="dense"``: :func:`robustsvm.datasets.make_mnist_like` (non-negative
    rows of unit norm); ``"sparse"``: :func:`robustsvm.datasets.make_cora_like`
    (binary bag of words, CSR). Labels are ±1. Signs: each feature is +1, −1 or
    free with probabilities 0.4, 0.4, 0.2 (seeded), so that many constraints are
    active at the optimum.
    """
    from robustsvm.datasets import make_cora_like, make_mnist_like

    if kind == "dense":
        ds = make_mnist_like(n, d, seed=seed)
    elif kind == "sparse":
        ds = make_cora_like(n, d, seed=seed, density=min(1.0, 0.0015 * 12644 / d))
    else:
        raise ValueError(f"kind must be 'dense' or 'sparse', got {kind!r}")
    y = np.where(np.asarray(ds.y) == 1, 1.0, -1.0)
    signs = np.random.default_rng(seed + 1).choice(np.array([1, -1, 0], dtype=np.int8), size=d, p=[0.4, 0.4, 0.2])
    return ds.X, y, signs


def _problem(n: int, intercept: bool, signs: np.ndarray | None):
    from robustsvm import L2, Hinge, Problem

    return Problem(loss=Hinge(), penalty=L2(1.0 / n), signs=signs, intercept=intercept)


# ------------------------------------------------------------------- one solve
def _solve_once(solver: str, X, y, signs, intercept: bool, tol: float, seed: int,
                first_order_max_iter: int = 10_000_000) -> dict:
    """Solve one case with one solver; returns status, objective, relative gap, iterations and extras."""
    n = X.shape[0]
    if solver == "liblinear":
        from sklearn.svm import LinearSVC

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = LinearSVC(loss="hinge", C=1.0, dual=True, fit_intercept=intercept, tol=tol,
                            max_iter=1_000_000, random_state=seed).fit(X, y)
        prob = _problem(n, intercept, None)
        w, b = est.coef_.ravel(), float(est.intercept_[0]) if intercept else 0.0
        return {"status": "optimal" if est.n_iter_ < 1_000_000 else "max_iter",
                "objective": prob.objective(X, y, w, b), "rel_gap": float("nan"), "iterations": int(est.n_iter_),
                "extra": {}}
    unconstrained = solver == "dcd (no signs)"
    prob = _problem(n, intercept, None if unconstrained else signs)
    name = "dcd" if unconstrained else solver
    options: dict = {"tol": tol}
    if name in ("dcd", "pegasos"):
        options["random_state"] = seed
    if name in ("frank-wolfe", "pegasos"):
        options["max_iter"] = first_order_max_iter  # isolated runs: stopped by the time cap instead
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = prob.solve(X, y, solver=name, **options)
    extra = {}
    if name == "dcd":
        extra = {"epochs": sol.iterations, "certificates": sol.extra.get("certificates"),
                 "time_certificates": sol.extra.get("time_certificates"), "time_solve": sol.time}
    return {"status": sol.status, "objective": sol.objective,
            "rel_gap": float(sol.gap) / max(abs(sol.objective), 1e-300), "iterations": sol.iterations,
            "extra": extra}


def _warm_up(solver: str, X, y, signs, intercept: bool) -> None:
    """Load compiled kernels (numba cache) and lazy imports outside the timed region."""
    m = min(X.shape[0], 60)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if solver.startswith("dcd"):
            _problem(m, intercept, signs).solve(X[:m], y[:m], solver="dcd", max_iter=2)
        elif solver == "liblinear":
            from sklearn.svm import LinearSVC

            LinearSVC(loss="hinge", dual=True, max_iter=5).fit(X[:m], y[:m])
        else:
            import cvxpy  # noqa: F401


def _proc_status_mb(key: str) -> float | None:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) / 1024.0  # kB
    except OSError:
        pass
    return None


def _reset_peak_rss() -> float:
    """Reset the process's peak resident set (Linux ``clear_refs``) and return the current one (MB).

    Without ``/proc`` (not Linux), falls back to the lifetime peak of ``getrusage``.
    """
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        rss = _proc_status_mb("VmRSS")
        if rss is not None:
            return rss
    except OSError:
        pass
    return _peak_rss_mb()


def _peak_rss_mb() -> float:
    """Peak resident set since the last :func:`_reset_peak_rss` (MB)."""
    hwm = _proc_status_mb("VmHWM")
    if hwm is not None:
        return hwm
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KiB on Linux


def _worker(spec_path: str) -> int:
    """Body of a worker subprocess: load the case, warm up, print READY, time the solves, print JSON."""
    spec = json.loads(Path(spec_path).read_text())
    if spec.get("memory_cap_gb"):  # address-space limit: a solver that needs more fails instead of swapping
        limit = int(spec["memory_cap_gb"] * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    base = Path(spec["data"])
    X = sp.load_npz(base / "X.npz") if spec["sparse"] else np.load(base / "X.npy")
    meta = np.load(base / "meta.npz")
    y, signs = meta["y"], meta["signs"]
    if spec.get("subsample"):
        X, y = X[: spec["subsample"]], y[: spec["subsample"]]
    _warm_up(spec["solver"], X, y, signs, spec["intercept"])
    before = _reset_peak_rss()
    print("READY", flush=True)
    times, out = [], {}
    for _ in range(spec["repeats"]):
        t0 = time.perf_counter()
        out = _solve_once(spec["solver"], X, y, signs, spec["intercept"], spec["tol"], spec["seed"])
        times.append(time.perf_counter() - t0)
    out.update(times=times, memory_mb=max(0.0, _peak_rss_mb() - before))
    print("RESULT " + json.dumps(out), flush=True)
    return 0


def _run_isolated(spec: dict, cap: float, setup_timeout: float = 300.0) -> Measurement:
    """Run one worker; stop it when its timed part exceeds ``cap`` seconds."""
    meas = Measurement(solver=spec["solver"])
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
        json.dump(spec, fh)
    env = os.environ | _THREADS_ENV
    errfile = tempfile.TemporaryFile("w+")
    proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--worker", fh.name],
                            stdout=subprocess.PIPE, stderr=errfile, text=True, env=env)
    try:
        deadline = time.monotonic() + setup_timeout
        ready_at = None
        lines = []
        while True:
            limit = (ready_at + cap * spec["repeats"]) if ready_at is not None else deadline
            remaining = limit - time.monotonic()
            if remaining <= 0:
                proc.kill()
                meas.capped = ready_at is not None
                meas.status = f"> {cap:g} s" if meas.capped else "setup timeout"
                return meas
            ready, _, _ = select.select([proc.stdout], [], [], remaining)
            if not ready:
                continue
            line = proc.stdout.readline()
            if not line:  # the worker ended without a result
                proc.wait()
                errfile.seek(0)
                err = errfile.read().strip().splitlines()
                meas.status = "error"
                meas.note = err[-1] if err else f"exit code {proc.returncode}"
                return meas
            lines.append(line)
            if line.startswith("READY"):
                ready_at = time.monotonic()
            elif line.startswith("RESULT "):
                res = json.loads(line[len("RESULT "):])
                proc.wait()
                break
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        Path(fh.name).unlink(missing_ok=True)
        errfile.close()
    meas.times = res["times"]
    meas.status = res["status"]
    meas.objective = res["objective"]
    meas.rel_gap = res["rel_gap"]
    meas.iterations = res["iterations"]
    meas.memory_mb = res["memory_mb"]
    meas.extra = res.get("extra", {})
    return meas


def _run_inline(solver: str, X, y, signs, intercept: bool, tol: float, seed: int, repeats: int,
                max_iter: int = 2000) -> Measurement:
    """Run one solver in this process (``--no-isolate``).

    There is no time cap here: Frank-Wolfe and Pegasos stop after ``max_iter``
    iterations instead (their status says so). Memory is tracemalloc's peak
    (NumPy-level allocations).
    """
    import tracemalloc

    meas = Measurement(solver=solver)
    _warm_up(solver, X, y, signs, intercept)
    tracemalloc.start()
    try:
        for _ in range(repeats):
            t0 = time.perf_counter()
            res = _solve_once(solver, X, y, signs, intercept, tol, seed, first_order_max_iter=max_iter)
            meas.times.append(time.perf_counter() - t0)
        meas.memory_mb = tracemalloc.get_traced_memory()[1] / 2**20
    except Exception as exc:  # a failing solver is a row of the table, not the end of the suite
        meas.status, meas.note = "error", f"{type(exc).__name__}: {exc}"
        return meas
    finally:
        tracemalloc.stop()
    meas.status, meas.objective, meas.rel_gap = res["status"], res["objective"], res["rel_gap"]
    meas.iterations, meas.extra = res["iterations"], res["extra"]
    return meas


def available_solvers(requested: list[str] | None = None) -> list[str]:
    """The suite's solvers that are available here (first-order ones only when registered)."""
    from robustsvm.backends import get_backend

    out = []
    for name in SOLVERS:
        if requested is not None and name not in requested:
            continue
        if name in ("dcd (no signs)", "liblinear"):
            if name == "liblinear":
                try:
                    import sklearn  # noqa: F401
                except ImportError:
                    continue
            out.append(name)
            continue
        try:
            get_backend(name)
        except ValueError:
            continue
        out.append(name)
    return out


def run_case(case: Case, solvers: list[str], *, tol: float, repeats: int, cap: float, isolate: bool,
             subsample_factor: int | None = 10, memory_cap_gb: float | None = 8.0, first_order_cap: float = 15.0,
             log=print) -> list[Measurement]:
    """Measure every solver on ``case``.

    Solves are stopped after ``cap`` seconds (``first_order_cap`` for Frank-Wolfe and Pegasos, which are far
    from the tolerance at these sizes). Clarabel, when stopped, is also timed on the first
    ``n // subsample_factor`` rows (None: not).
    """
    X, y, signs = make_case(case.kind, case.n, case.d, case.seed)
    rows = []
    with tempfile.TemporaryDirectory(prefix="robustsvm-bench-") as tmp:
        if isolate:
            if sp.issparse(X):
                sp.save_npz(Path(tmp) / "X.npz", sp.csr_matrix(X), compressed=False)
            else:
                np.save(Path(tmp) / "X.npy", X)
            np.savez(Path(tmp) / "meta.npz", y=y, signs=signs)
        for solver in solvers:
            reps = 1 if solver in _ONCE else repeats
            spec = {"data": tmp, "sparse": bool(sp.issparse(X)), "solver": solver, "intercept": case.intercept,
                    "tol": tol, "seed": case.seed, "repeats": reps, "memory_cap_gb": memory_cap_gb}
            solver_cap = min(cap, first_order_cap) if solver in ("frank-wolfe", "pegasos") else cap
            if isolate:
                meas = _run_isolated(spec, solver_cap)
            else:
                meas = _run_inline(solver, X, y, signs, case.intercept, tol, case.seed, reps)
            log(f"  {case.name:40s} {solver:16s} {meas.time:9.3f} s  {meas.status}")
            rows.append(meas)
            if (subsample_factor and isolate and meas.capped and solver == "clarabel"
                    and case.n >= 20 * subsample_factor):
                m = case.n // subsample_factor
                sub = _run_isolated(spec | {"subsample": m}, cap)
                sub.solver = f"{solver} (n={m})"
                sub.note = f"the first {m} rows only (a smaller problem), for scale"
                log(f"  {case.name:40s} {sub.solver:16s} {sub.time:9.3f} s  {sub.status}")
                rows.append(sub)
    return rows


# ------------------------------------------------------------------- scaling
def scaling(kind: str, sizes: list[tuple[int, int]], solvers: list[str], *, tol: float, repeats: int, cap: float,
            isolate: bool, conic_max_nd: float, log=print) -> dict[str, list[tuple[int, int, float]]]:
    """Median times over ``sizes`` (pairs n, d) for each solver: ``{solver: [(n, d, seconds or nan)]}``.

    Conic solvers are run only while ``n·d ≤ conic_max_nd`` (and once capped, not on larger sizes).
    """
    out: dict[str, list[tuple[int, int, float]]] = {s: [] for s in solvers}
    stopped = set()
    for n, d in sizes:
        case = Case(kind, n, d, intercept=False)
        run = [s for s in solvers if not (s in ("clarabel", "scs") and (n * d > conic_max_nd or s in stopped))]
        for meas in run_case(case, run, tol=tol, repeats=repeats, cap=cap, isolate=isolate, subsample_factor=None,
                             log=log):
            if meas.solver not in out:
                continue
            t = meas.time if meas.status not in ("error",) and not meas.capped else float("nan")
            if meas.capped:
                stopped.add(meas.solver)
            out[meas.solver].append((n, d, t))
    return out


def _plot(results: dict, axis: str, title: str, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    fig, ax = plt.subplots(figsize=(5.5, 4))
    k = 0 if axis == "n" else 1
    for solver, pts in results.items():
        pts = [(p[k], p[2]) for p in pts if np.isfinite(p[2])]
        if pts:
            xs, ts = zip(*pts, strict=True)
            ax.loglog(xs, ts, "o-", label=solver)
    sizes = sorted({p[k] for pts in results.values() for p in pts})
    ax.set_xticks(sizes)
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda x, _: f"{x:,.0f}"))
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.set_xlabel(axis)
    ax.set_ylabel("time to the tolerance (s)")
    ax.set_title(title, fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _slope(pts: list[tuple[int, int, float]], k: int) -> float:
    pts = [(p[k], p[2]) for p in pts if np.isfinite(p[2]) and p[2] > 0]
    if len(pts) < 2:
        return float("nan")
    xs, ts = np.log([p[0] for p in pts]), np.log([p[1] for p in pts])
    return float(np.polyfit(xs, ts, 1)[0])


# -------------------------------------------------------------------- report
def _fmt_t(m: Measurement) -> str:
    if m.capped:
        return m.status
    if not m.times:
        return "—"
    return f"{m.time:.3g}"


def _fmt(x: float, spec: str = ".3g") -> str:
    return "—" if x is None or not np.isfinite(x) else format(x, spec)


def _pinning():
    """:mod:`pinning` (imported as ``benchmarks.pinning`` from the tests, as ``pinning`` by the script)."""
    try:
        from benchmarks import pinning
    except ImportError:
        import pinning
    return pinning


def machine_description() -> str:
    """Cores, CPU, load, Python, NumPy/BLAS and solver versions, one markdown list."""
    import importlib.metadata as md

    def version(pkg: str) -> str:
        try:
            return md.version(pkg)
        except md.PackageNotFoundError:
            return "not installed"

    blas = "unknown"
    try:
        cfg = np.show_config(mode="dicts")
        b = cfg["Build Dependencies"]["blas"]
        blas = f"{b.get('name')} {b.get('version')}"
    except Exception:  # the layout of show_config differs between NumPy versions
        pass
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "n/a"
    pkgs = ", ".join(f"{p} {version(p)}" for p in ("numpy", "scipy", "numba", "scikit-learn", "cvxpy", "clarabel",
                                                   "scs"))
    return (f"- machine: {os.cpu_count()} cores, {cpu}; load average at start {load} (shared machine)\n"
            f"- Python {platform.python_version()}, BLAS {blas} (workers single-threaded)\n"
            f"- {pkgs}")


def _profile_row(case: Case, rows: list[Measurement]) -> str | None:
    """Where dcd's time goes, and the factors separating it from liblinear.

    ``dcd / liblinear = (dcd / dcd without signs) × (dcd without signs / liblinear)``: the first factor is
    what the sign constraints cost (more epochs), the second what the algorithm costs on the very model
    liblinear solves (epochs to a certified gap instead of liblinear's stopping rule, time per epoch,
    certificates).
    """
    by = {m.solver: m for m in rows}
    dcd, free, lib = by.get("dcd"), by.get("dcd (no signs)"), by.get("liblinear")
    if dcd is None or not dcd.times or not dcd.extra:
        return None

    def per_epoch(m: Measurement) -> str:
        e = m.extra
        kernel = e.get("time_solve", 0.0) - e.get("time_certificates", 0.0)
        return (f"{e.get('epochs')} epochs × {1e3 * kernel / max(e.get('epochs') or 1, 1):.2g} ms + "
                f"{e.get('certificates')} certificates {e.get('time_certificates', 0.0):.2g} s")

    cells = [case.name, per_epoch(dcd)]
    if free is not None and free.times and free.extra:
        cells += [per_epoch(free), f"{dcd.time / free.time:.2f}×"]
    else:
        cells += ["—", "—"]
    if lib is not None and lib.times:
        cells.append(f"{lib.iterations} iterations, {1e3 * lib.time / max(lib.iterations, 1):.2g} ms each")
        cells.append(f"{free.time / lib.time:.2f}×" if free is not None and free.times else "—")
    else:
        cells += ["—", "—"]
    return "| " + " | ".join(cells) + " |"


def _comparison_row(case: Case, rows: list[Measurement]) -> str:
    by = {m.solver: m for m in rows}
    dcd, lib, cla = by.get("dcd"), by.get("liblinear"), by.get("clarabel")
    if dcd is None or not dcd.times:
        return f"| {case.name} | — | — | dcd did not run |"
    parts = []
    if lib is not None and lib.times:
        r = dcd.time / lib.time
        parts.append(f"dcd takes {r:.2f}× liblinear's time")
    if cla is not None:
        if cla.capped:
            cap = float(cla.status.split()[1])
            parts.append(f"Clarabel > {cap / dcd.time:.0f}× dcd's (stopped at the {cap:g} s cap)")
            sub = by.get(next((k for k in by if k.startswith("clarabel (n=")), ""), None)
            if sub is not None and sub.times:
                parts.append(f"Clarabel on the first n/10 rows alone takes {sub.time / dcd.time:.1f}× "
                             "dcd's full-size time")
        elif cla.times:
            parts.append(f"Clarabel {cla.time / dcd.time:.0f}× dcd's")
    return f"| {case.name} | {dcd.time:.3g} s | {_fmt(lib.time if lib else float('nan'))} s | {'; '.join(parts)} |"


def render(cases_rows: list[tuple[Case, list[Measurement]]], *, command: str, tol: float, repeats: int, cap: float,
           isolate: bool, scaling_results: dict | None, figures: dict | None, elapsed: float,
           first_order_cap: float = 15.0, cpu: int | None = None) -> str:
    """The markdown section of the suite (``cpu``: the CPU the run was pinned to, if any)."""
    mem = "peak RSS above the loaded data (MB)" if isolate else "tracemalloc peak (MB)"
    out = ["## Benchmark suite: dcd against liblinear, Clarabel, SCS and the first-order backends", "",
           f"Command: `{command}`  (total {elapsed / 60:.1f} min)", "",
           machine_description() + f"\n- every solver's process {_pinning().describe(cpu)}", "",
           "Model: hinge loss, `reduction=\"mean\"`, `L2(λ)` with λ = 1/n (LinearSVC's default C = 1), "
           "sign constraints on 80% of the features (+1 or −1 at random, seeded). "
           f"Sign-constrained solvers stop at a certified relative duality gap of {tol:g}; `liblinear` "
           f"(`LinearSVC(loss=\"hinge\", dual=True)`, tol {tol:g}, its own projected-gradient rule, no certificate, "
           "intercept regularized as a feature of value 1) and `dcd (no signs)` solve the unconstrained model. "
           f"Time: wall time of one solve including CVXPY compilation, median of {repeats} runs "
           f"(1 run for the slow solvers); cap {cap:g} s per solve (Frank-Wolfe and Pegasos: "
           f"{first_order_cap:g} s). "
           + ("Each solver runs in its own subprocess with single-threaded BLAS after a warm-up. " if isolate else
              "Solvers run in this process (no cap). ")
           + "Objective: the exact objective recomputed by `Problem.objective` (the unconstrained objective is "
             "smaller: fewer constraints).", ""]
    for case, rows in cases_rows:
        out += [f"### {case.name}", "",
                f"| solver | time (s) | ratio to dcd | status | objective | certified rel. gap | iterations | {mem} "
                f"| note |", "|---|---|---|---|---|---|---|---|---|"]
        dcd = next((m for m in rows if m.solver == "dcd" and m.times), None)
        for m in rows:
            ratio = (m.time / dcd.time) if (dcd and m.times) else float("nan")
            if m.capped and dcd:
                ratio_txt = f"> {float(m.status.split()[1]) / dcd.time:.0f}"
            else:
                ratio_txt = _fmt(ratio, ".2f")
            note = m.note
            if m.solver == "dcd" and m.extra:
                e = m.extra
                note = (f"{e.get('epochs')} epochs, {e.get('certificates')} certificates taking "
                        f"{e.get('time_certificates', 0):.3g} s of {e.get('time_solve', 0):.3g} s")
            out.append(f"| {m.solver} | {_fmt_t(m)} | {ratio_txt} | {m.status} | {_fmt(m.objective, '.6g')} | "
                       f"{_fmt(m.rel_gap, '.1e')} | {m.iterations or '—'} | {_fmt(m.memory_mb, '.1f')} | {note} |")
        out.append("")
    out += ["### dcd (signs, certified gap) against liblinear (unconstrained) and Clarabel (signs)", "",
            "| case | dcd | liblinear | time ratios |", "|---|---|---|---|"]
    out += [_comparison_row(case, rows) for case, rows in cases_rows]
    out += ["", "### Profile of dcd: where the ratio to liblinear comes from", "",
            "dcd / liblinear = (dcd / dcd without signs) × (dcd without signs / liblinear). The first factor is the "
            "cost of the sign constraints (more epochs to the same certified gap), the second the cost of the "
            "algorithm on the model liblinear solves (epochs to a certified gap against liblinear's own stopping "
            "rule, time per epoch, certificates). Epoch and certificate times are from the last timed run.", "",
            "| case | dcd (signs) | dcd (no signs) | signs factor | liblinear | no-signs / liblinear |",
            "|---|---|---|---|---|---|"]
    out += [r for r in (_profile_row(case, rows) for case, rows in cases_rows) if r]
    out.append("")
    if scaling_results:
        out += ["### How time grows with n and d", ""]
        for label, (axis, res) in scaling_results.items():
            k = 0 if axis == "n" else 1
            out += [f"{label} — fitted log–log slopes: "
                    + ", ".join(f"{s} {_fmt(_slope(p, k), '.2f')}" for s, p in res.items()), "",
                    f"| {axis} | " + " | ".join(res) + " |", "|---" * (len(res) + 1) + "|"]
            keys = sorted({p[k] for pts in res.values() for p in pts})
            for key in keys:
                cells = []
                for pts in res.values():
                    t = next((p[2] for p in pts if p[k] == key), float("nan"))
                    cells.append(_fmt(t))
                out.append(f"| {key} | " + " | ".join(cells) + " |")
            out.append("")
            if figures and label in figures:
                out += [f"![{label}]({figures[label]})", ""]
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------- CLI
def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of the suite."""
    parser.add_argument("--quick", action="store_true",
                        help="tiny sizes, one repeat, solvers in this process (for tests and smoke runs)")
    parser.add_argument("--repeats", type=int, default=None, help="timed runs per fast solver (default 3; quick 1)")
    parser.add_argument("--cap", type=float, default=None,
                        help="seconds after which a solve is stopped and reported as '> cap' (default 45)")
    parser.add_argument("--cap-first-order", type=float, default=15.0,
                        help="cap for frank-wolfe and pegasos (default 15 s; never above --cap)")
    parser.add_argument("--tol", type=float, default=1e-4, help="relative duality gap to reach (default 1e-4)")
    parser.add_argument("--solvers", type=lambda s: [t.strip() for t in s.split(",") if t.strip()], default=None,
                        help=f"comma-separated subset of: {', '.join(SOLVERS)}")
    parser.add_argument("--output", default="benchmarks/results/suite.md",
                        help="markdown file to write (default benchmarks/results/suite.md); '-' prints only")
    parser.add_argument("--figures", default="docs/figures",
                        help="directory of the scaling plots scaling_n.png and scaling_d.png")
    parser.add_argument("--no-scaling", action="store_true", help="skip the scaling study")
    isolate = parser.add_mutually_exclusive_group()
    isolate.add_argument("--isolate", dest="isolate", action="store_true", default=None,
                         help="one subprocess per solve (time cap, peak RSS); the default without --quick")
    isolate.add_argument("--no-isolate", dest="isolate", action="store_false",
                         help="run the solvers in this process (no cap); the default with --quick")
    parser.add_argument("--seed", type=int, default=0, help="seed of the data, the signs and the solvers")
    _pinning().add_cpu_argument(parser)  # the workers inherit the pinning
    parser.add_argument("--worker", help=argparse.SUPPRESS)


def _check_args(args: argparse.Namespace) -> None:
    if args.repeats is not None and args.repeats < 1:
        raise ValueError(f"--repeats must be a positive integer, got {args.repeats}")
    if args.cap is not None and not args.cap > 0:
        raise ValueError(f"--cap must be positive, got {args.cap}")
    if not args.cap_first_order > 0:
        raise ValueError(f"--cap-first-order must be positive, got {args.cap_first_order}")
    if not (args.tol > 0 and np.isfinite(args.tol)):
        raise ValueError(f"--tol must be positive, got {args.tol}")
    if args.solvers is not None:
        unknown = sorted(set(args.solvers) - set(SOLVERS))
        if unknown:
            raise ValueError(f"--solvers: unknown {unknown}; choose from {', '.join(SOLVERS)}")


def run(args: argparse.Namespace) -> int:
    """Run the suite with the options of :func:`add_arguments`; write the markdown section."""
    if getattr(args, "worker", None):
        return _worker(args.worker)
    _check_args(args)
    t_start = time.perf_counter()
    quick = bool(args.quick)
    cpu = _pinning().pin_run(args.cpu, quick)  # the workers inherit the affinity
    repeats = args.repeats or (1 if quick else 3)
    cap = args.cap or (20.0 if quick else 45.0)
    isolate = (not quick) if args.isolate is None else bool(args.isolate)
    solvers = available_solvers(args.solvers)
    if quick:
        shapes = [("dense", 600, 64), ("sparse", 500, 1500)]
    else:
        shapes = [("dense", 60000, 784), ("sparse", 15396, 12644)]
    cases = [Case(kind, n, d, intercept=b, seed=args.seed) for kind, n, d in shapes for b in (False, True)]
    cases_rows = []
    for case in cases:
        print(f"case {case.name}", flush=True)
        cases_rows.append((case, run_case(case, solvers, tol=args.tol, repeats=repeats, cap=cap, isolate=isolate,
                                          first_order_cap=args.cap_first_order)))

    scaling_results, figures = None, None
    if not args.no_scaling:
        scal_solvers = [s for s in ("dcd", "liblinear", "clarabel") if s in solvers]
        if quick:
            n_sizes = [(200, 64), (400, 64)]
            d_sizes = [(300, 500), (300, 1000)]
        else:
            n_sizes = [(2000, 784), (6000, 784), (20000, 784), (60000, 784)]
            d_sizes = [(15396, 1000), (15396, 3000), (15396, 12644), (15396, 40000)]
        print("scaling in n (dense)", flush=True)
        res_n = scaling("dense", n_sizes, scal_solvers, tol=args.tol, repeats=repeats, cap=cap, isolate=isolate,
                        conic_max_nd=6000 * 784)
        print("scaling in d (sparse)", flush=True)
        res_d = scaling("sparse", d_sizes, scal_solvers, tol=args.tol, repeats=repeats, cap=cap, isolate=isolate,
                        conic_max_nd=15396 * 3000)
        scaling_results = {f"time against n (MNIST-shaped, d = {n_sizes[0][1]}, no b)": ("n", res_n),
                           f"time against d (Cora-shaped, n = {d_sizes[0][0]}, no b)": ("d", res_d)}
        if args.figures and args.output != "-":
            fig_dir = Path(args.figures)
            figures = {}
            for (label, (axis, res)), fname in zip(scaling_results.items(), ("scaling_n.png", "scaling_d.png"),
                                                   strict=True):
                _plot(res, axis, label, fig_dir / fname)
                try:
                    rel = os.path.relpath(fig_dir / fname, Path(args.output).parent)
                except ValueError:
                    rel = str(fig_dir / fname)
                figures[label] = rel
    command = getattr(args, "prog", "python benchmarks/bench_suite.py") + " " + " ".join(_argv_of(args))
    text = render(cases_rows, command=command.strip(), tol=args.tol, repeats=repeats, cap=cap, isolate=isolate,
                  scaling_results=scaling_results, figures=figures, elapsed=time.perf_counter() - t_start,
                  first_order_cap=min(cap, args.cap_first_order), cpu=cpu)
    if args.output == "-":
        print(text)
    else:
        path = Path(args.output)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        print(f"wrote {path}")
    return 0


def _argv_of(args: argparse.Namespace) -> list[str]:
    """The options of ``args`` that differ from the defaults, as command-line words."""
    out = []
    if args.quick:
        out.append("--quick")
    for opt, val, default in (("--repeats", args.repeats, None), ("--cap", args.cap, None),
                              ("--cap-first-order", args.cap_first_order, 15.0), ("--tol", args.tol, 1e-4),
                              ("--output", args.output, "benchmarks/results/suite.md"),
                              ("--figures", args.figures, "docs/figures"), ("--seed", args.seed, 0)):
        if val != default:
            out.append(f"{opt} {val}")
    if args.solvers:
        out.append("--solvers '" + ",".join(args.solvers) + "'")
    if args.no_scaling:
        out.append("--no-scaling")
    if getattr(args, "cpu", None) is not None:
        out.append(_pinning().command_option(args.cpu).strip())
    if args.isolate is not None:
        out.append("--isolate" if args.isolate else "--no-isolate")
    return out


def main(argv: list[str] | None = None, prog: str = "python benchmarks/bench_suite.py") -> int:
    """``python benchmarks/bench_suite.py [options]`` (``prog`` is the command recorded in the results)."""
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n")[0])
    add_arguments(parser)
    args = parser.parse_args(argv)
    args.prog = prog
    return run(args)


if __name__ == "__main__":
    sys.exit(main())

"""The first fit on an empty numba cache: seconds per compiled entry point, for each fast backend and set kind.

The compiled backends keep their machine code in numba's on-disk cache (``cache=True``); a machine with an empty
cache (a new user, a CI run) pays the compile at its first fit. Each case is one model on 300 × 10 Gaussian data
(hinge, ``L2(0.1)``, a free intercept), fitted once in a fresh process whose ``NUMBA_CACHE_DIR`` is a new empty
directory (``cold``), then once more in another fresh process on the cache the first one wrote (``warm``: the load
from disk a second run pays). The cases: ``dcd`` (dense and CSR), ``robust-dcd`` with each kind of set (Box,
Ball(p=2), Ball(p=1), Ellipsoid; Box and Ball(p=2) also on CSR rows) and ``feature-ipm`` with a 2-ball.

Per case: the wall and CPU seconds of the first ``Problem.solve`` (import excluded), and per compiled entry point
(a numba dispatcher compiled from Python, not from another compiled function) the seconds of its compile,
what it compiles inside it included (numba's ``numba:compile`` events), and how many functions numba compiled
in all (one per function and argument types, numba's own implementations of NumPy included). Every figure is
the median over ``--processes`` cold processes. With ``--base PATH`` (another checkout, e.g. a worktree of an
earlier commit) every case also runs on that checkout's package, in the same rounds, and the table shows both.

Run from the repository root::

    .venv/bin/python benchmarks/bench_cold_compile.py                  # 3 processes per case, about 5 minutes
    .venv/bin/python benchmarks/bench_cold_compile.py --processes 1 --cases dcd robust-dcd-box
    .venv/bin/python benchmarks/bench_cold_compile.py --base ../robustsvm-base   # before / after, about 13 minutes

Writes ``benchmarks/results/cold_compile.md`` (not with ``--cases``, unless ``--output``).
"""

from __future__ import annotations

import os

if __name__ == "__main__":  # single-threaded BLAS and numba, set before numpy loads (not when imported)
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
        os.environ.setdefault(_var, "1")

import argparse
import json
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "cold_compile.md"

#: case → (solver, set: a constructor name and its arguments, or None, sparse rows)
CASES = {
    "dcd": ("dcd", None, False),
    "dcd-csr": ("dcd", None, True),
    "robust-dcd-box": ("robust-dcd", ("Box", {"radius": 0.1}), False),
    "robust-dcd-ball2": ("robust-dcd", ("Ball", {"radius": 0.1}), False),
    "robust-dcd-ball1": ("robust-dcd", ("Ball", {"radius": 0.1, "p": 1}), False),
    "robust-dcd-ellipsoid": ("robust-dcd", ("Ellipsoid", {"radius": 0.1}), False),
    "robust-dcd-box-csr": ("robust-dcd", ("Box", {"radius": 0.1}), True),
    "robust-dcd-ball2-csr": ("robust-dcd", ("Ball", {"radius": 0.1}), True),
    "feature-ipm-ball2": ("feature-ipm", ("Ball", {"radius": 0.1}), False),
}


def _data(sparse: bool):
    import numpy as np
    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 10))
    y = np.where(X[:, 0] + rng.normal(size=300) > 0, 1, -1)
    return (sp.csr_matrix(X) if sparse else X), y


def _uncertainty(rs, spec, d: int):
    if spec is None:
        return None
    name, kw = spec
    if name == "Ellipsoid":
        import numpy as np

        M = np.eye(d) + 0.1 * np.ones((d, d))
        return rs.Ellipsoid(M, radius=kw["radius"])
    return getattr(rs, name)(**kw)


def worker(case: str, root: Path) -> dict:
    """One first fit of ``case`` in this process, with the package of the checkout ``root``: its seconds and the
    compile seconds of each entry point."""
    from numba.core import event

    sys.path.insert(0, str(root))
    import robustsvm as rs

    assert Path(rs.__file__).resolve().is_relative_to(root.resolve()), rs.__file__

    solver, spec, sparse = CASES[case]
    X, y = _data(sparse)
    problem = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(0.1), uncertainty=_uncertainty(rs, spec, X.shape[1]))
    entries: dict[str, float] = defaultdict(float)
    signatures: dict[str, int] = defaultdict(int)
    stack: list[float] = []

    class Compiles(event.Listener):
        def on_start(self, ev):
            stack.append(time.perf_counter())

        def on_end(self, ev):
            took = time.perf_counter() - stack.pop()
            disp = ev.data["dispatcher"]
            name = f"{disp.py_func.__module__.rsplit('.', 1)[-1]}.{disp.py_func.__qualname__}"
            signatures[name] += 1
            if not stack:  # compiled from Python: an entry point
                entries[name] += took

    warnings.simplefilter("ignore")
    wall, cpu = time.perf_counter(), time.process_time()
    with event.install_listener("numba:compile", Compiles()):
        sol = problem.solve(X, y, solver=solver)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return {"wall": wall, "cpu": cpu, "entries": dict(entries), "signatures": dict(signatures),
            "status": sol.status, "iterations": sol.iterations}


def run_case(case: str, cache: str, root: Path) -> dict:
    env = dict(os.environ, NUMBA_CACHE_DIR=cache)
    out = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--worker", case, "--root", str(root)],
                         env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def measure(cases: list[str], processes: int, roots: dict[str, Path]) -> dict[str, dict]:
    """Per (checkout, case): the cold runs and the warm ones, each in its own process, the cases and checkouts
    interleaved in every round (A B B A)."""
    runs: dict[str, dict] = {label: {c: {"cold": [], "warm": []} for c in cases} for label in roots}
    for k in range(processes):
        for case in cases if k % 2 == 0 else cases[::-1]:
            for label in list(roots) if k % 2 == 0 else list(roots)[::-1]:
                with tempfile.TemporaryDirectory(prefix="numba-cold-") as cache:
                    got = runs[label][case]
                    got["cold"].append(run_case(case, cache, roots[label]))
                    got["warm"].append(run_case(case, cache, roots[label]))
                print(f"{label} {case}: cold {got['cold'][-1]['wall']:.2f} s, warm {got['warm'][-1]['wall']:.2f} s",
                      flush=True)
    return runs


def _median(values) -> float:
    return statistics.median(values) if values else 0.0


def _commit(root: Path) -> str:
    return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True,
                          text=True).stdout.strip() or str(root)


def table(runs: dict[str, dict]) -> str:
    """The markdown tables: one row per (case, checkout), then one per (case, checkout, compiled entry point)."""
    lines = ["| case | commit | first fit, cold: wall s | cpu s | compiled in all: s | functions compiled | "
             "first fit, warm cache: wall s |", "|---|---|---:|---:|---:|---:|---:|"]
    detail = ["| case | commit | compiled entry point | cold compile s | specializations of it |",
              "|---|---|---|---:|---:|"]
    cases = list(next(iter(runs.values())))
    for case in cases:
        for label, per_case in runs.items():
            cold, warm = per_case[case]["cold"], per_case[case]["warm"]
            total = _median([sum(r["entries"].values()) for r in cold])
            nsig = _median([sum(r["signatures"].values()) for r in cold])
            lines.append(f"| {case} | {label} | {_median([r['wall'] for r in cold]):.2f} | "
                         f"{_median([r['cpu'] for r in cold]):.2f} | {total:.2f} | {nsig:.0f} | "
                         f"{_median([r['wall'] for r in warm]):.2f} |")
            names = sorted({n for r in cold for n in r["entries"]},
                           key=lambda n: -_median([r["entries"].get(n, 0.0) for r in cold]))
            for name in names:
                secs = _median([r["entries"].get(name, 0.0) for r in cold])
                if secs >= 0.1:
                    detail.append(f"| {case} | {label} | `{name}` | {secs:.2f} | "
                                  f"{_median([r['signatures'].get(name, 0) for r in cold]):.0f} |")
    return "\n".join(lines) + "\n\nPer compiled entry point (at least 0.1 s, what it compiles inside it included; " \
        "the specializations of that function itself, compiled from Python or from other compiled code):\n\n" + \
        "\n".join(detail) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--root", type=Path, default=ROOT, help=argparse.SUPPRESS)
    parser.add_argument("--processes", type=int, default=3, help="cold processes per case (default 3)")
    parser.add_argument("--cases", nargs="+", choices=list(CASES), help="a subset of the cases (default: all)")
    parser.add_argument("--base", type=Path, help="another checkout to measure in the same rounds")
    parser.add_argument("--output", type=Path, help="the markdown file (default: results/cold_compile.md, "
                                                    "not written with --cases)")
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.root)))
        return
    cases = args.cases or list(CASES)
    roots = {_commit(args.base): args.base} if args.base else {}
    roots[_commit(ROOT)] = ROOT
    runs = measure(cases, args.processes, roots)
    text = (f"# The first fit on an empty numba cache\n\nCommit {', '.join(roots)}, "
            f"{platform.processor() or platform.machine()}, Python {platform.python_version()}; medians of "
            f"{args.processes} fresh processes per case (`benchmarks/bench_cold_compile.py"
            f"{' --base …' if args.base else ''}`).\n\n{table(runs)}")
    print(text)
    output = args.output or (None if args.cases else RESULTS)
    if output is not None:
        output.write_text(text)


if __name__ == "__main__":
    main()

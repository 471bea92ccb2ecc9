"""The rows of ``bench_dcd.py`` and ``bench_robust.py`` solved by this checkout and by an earlier commit, interleaved in
one run; writes ``benchmarks/results/against_commit.md``.

Run from the repository root::

    .venv/bin/python benchmarks/bench_against_commit.py                  # against a131272, 5 rounds
    .venv/bin/python benchmarks/bench_against_commit.py --base HEAD~10 --rounds 3 --quick

The earlier commit is checked out in a temporary git worktree. Two worker processes, one importing each
checkout's ``robustsvm``, receive the same solves in turn; the data are built once, by this checkout, and read by
both from ``.npy`` files, so the two solve the very same arrays. In each round every row is solved by both
workers, the order alternating from row to row and from round to round (ABBA), so that a drift of the machine's
load falls on both sides alike. Times are the CPU seconds of ``Problem.solve`` inside the worker (single-threaded
BLAS and numba), after an untimed warm-up solve of every row; the ratio of a row is the median over the rounds of
``this checkout / base`` within a round, with its smallest and largest in brackets. The seed of every solve is
fixed, so both sides make the same random choices where their algorithms agree.

Rows: ``bench_dcd.py``'s signed ``dcd`` solves (KEEL magic, spambase, letter, optdigits, penbased, twonorm and
the Cora-shaped data, with and without a free intercept) and ``bench_robust.py``'s certified robust solves
(Gaussian 20,000 × 100 with Box(0.05) and Ball(0.2) by ``robust-dcd`` and ``feature-ipm``; MNIST-shaped
60,000 × 784 with Box(0.004) and Ball(0.02) and the Cora-shaped data with Box(0.05) and Ball(0.05) by
``robust-dcd``), at the scripts' tolerances. Not included: the scripts' peers (liblinear, Clarabel), which do
not change between commits, and ``bench_robust.py``'s Woolnough grid (two minutes a solve).
"""

from __future__ import annotations

import os

for _k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS",
           "RAYON_NUM_THREADS"):
    os.environ.setdefault(_k, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "against_commit.md"
#: the last commit before the package was reorganized around one normalized model and its terms
BASE = "a131272"


def build_cases(folder: Path, quick: bool) -> list[dict]:
    """Write every row's data to ``folder`` and return the rows (what each worker solves)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from bench_dcd import KEEL_SETS, load_keel, signs_for
    from bench_robust import gaussian
    from bench_suite import make_case

    import robustsvm as rs

    rows, data = [], {}

    def store(name: str, X, y, signs=None) -> None:
        if sp.issparse(X):
            sp.save_npz(folder / f"{name}.X.npz", sp.csr_matrix(X))
        else:
            np.save(folder / f"{name}.X.npy", np.ascontiguousarray(X))
        np.save(folder / f"{name}.y.npy", np.asarray(y, dtype=np.float64))
        if signs is not None:
            np.save(folder / f"{name}.signs.npy", signs)
        data[name] = X.shape

    for name in KEEL_SETS:
        X, y = load_keel(name, rows=2000 if quick else None)
        store(name, X, y, signs_for(X.shape[1]))
    cn, cd = (3000, 4000) if quick else (15396, 12644)
    X, y, signs = make_case("sparse", cn, cd)
    store("cora", X, y, signs)
    for name, (n, _) in data.items():
        label = f"{name} (KEEL)" if name != "cora" else "Cora-shaped"
        for intercept in (False, True):
            rows.append({"group": "bench_dcd", "label": f"{label} {n}×{data[name][1]}", "data": name,
                         "solver": "dcd", "signs": True, "intercept": intercept, "set": None, "options": {}})
    gn = 2000 if quick else 20000
    store("gaussian", *gaussian(gn, 100))
    mn = 3000 if quick else 60000
    mnist = rs.datasets.make_mnist_like(mn, 784, seed=0)
    store("mnist", mnist.X, np.where(mnist.y > 0, 1.0, -1.0))
    robust = {"tol": 1e-4, "max_iter": 5000}
    for set_ in (["Box", 0.05], ["Ball", 0.2]):
        for solver in ("robust-dcd", "feature-ipm"):
            rows.append({"group": "bench_robust", "label": f"Gaussian {gn}×100", "data": "gaussian", "solver": solver,
                         "signs": False, "intercept": True, "set": set_,
                         "options": robust if solver == "robust-dcd" else {"tol": 1e-4}})
    for data_name, label, sets in (("mnist", f"MNIST-shaped {mn}×784", (["Box", 0.004], ["Ball", 0.02])),
                                   ("cora", f"Cora-shaped {cn}×{cd}", (["Ball", 0.05], ["Box", 0.05]))):
        for set_ in sets:
            rows.append({"group": "bench_robust", "label": label, "data": data_name, "solver": "robust-dcd",
                         "signs": False, "intercept": True, "set": set_, "options": robust})
    return rows


def worker(folder: str) -> None:
    """Read solves as JSON lines on stdin, answer each with its time, status, iterations and objective."""
    import warnings

    import robustsvm as rs

    cache: dict = {}

    def arrays(name: str):
        if name not in cache:
            base = Path(folder) / name
            X = sp.load_npz(f"{base}.X.npz") if Path(f"{base}.X.npz").exists() else np.load(f"{base}.X.npy")
            signs = np.load(f"{base}.signs.npy") if Path(f"{base}.signs.npy").exists() else None
            cache[name] = (X, np.load(f"{base}.y.npy"), signs)
        return cache[name]

    print(json.dumps({"robustsvm": rs.__file__}), flush=True)
    for line in sys.stdin:
        row = json.loads(line)
        X, y, signs = arrays(row["data"])
        unc = None if row["set"] is None else getattr(rs, row["set"][0])(row["set"][1])
        prob = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(1.0 / X.shape[0]), signs=signs if row["signs"] else None,
                          uncertainty=unc, intercept=row["intercept"])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t0 = time.process_time()
            seeded = {"random_state": 0} if row["solver"] in ("dcd", "robust-dcd") else {}
            sol = prob.solve(X, y, solver=row["solver"], **seeded, **row["options"])
            t = time.process_time() - t0
        rel = float(sol.gap) / max(abs(float(sol.objective)), 1e-300)
        print(json.dumps({"time": t, "status": sol.status, "iterations": int(sol.iterations),
                          "objective": float(sol.objective), "rel_gap": rel}), flush=True)


class Worker:
    """One checkout's worker process."""

    def __init__(self, tree: Path, folder: Path) -> None:
        env = dict(os.environ, PYTHONPATH=str(tree))
        self.proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--worker", str(folder)],
                                     cwd=str(tree), env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.module = json.loads(self.proc.stdout.readline())["robustsvm"]
        if not self.module.startswith(str(tree)):
            raise RuntimeError(f"the worker for {tree} imported robustsvm from {self.module}")

    def solve(self, row: dict) -> dict:
        self.proc.stdin.write(json.dumps(row) + "\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def run_rounds(rows: list[dict], base: Worker, new: Worker, rounds: int) -> list[dict]:
    """Warm-up, then ``rounds`` timed rounds; every row's measurements on both sides."""
    for row in rows:
        base.solve(row)
        new.solve(row)
    runs = [{"base": [], "new": []} for _ in rows]
    for r in range(rounds):
        for i, row in enumerate(rows):
            pair = (("base", base), ("new", new)) if (r + i) % 2 == 0 else (("new", new), ("base", base))
            for side, w in pair:
                runs[i][side].append(w.solve(row))
    return runs


def summarize(row: dict, run: dict) -> str:
    ratios = [n["time"] / b["time"] for n, b in zip(run["new"], run["base"], strict=True)]
    tb = statistics.median(m["time"] for m in run["base"])
    tn = statistics.median(m["time"] for m in run["new"])
    ob, on = run["base"][0]["objective"], run["new"][0]["objective"]
    gap = max(m["rel_gap"] for m in run["base"] + run["new"])
    status = sorted({m["status"] for m in run["base"] + run["new"]})
    it = f"{statistics.median(m['iterations'] for m in run['base']):.0f} / " \
         f"{statistics.median(m['iterations'] for m in run['new']):.0f}"
    set_ = "—" if row["set"] is None else f"{row['set'][0]}({row['set'][1]:g})"
    b = "free" if row["intercept"] else "none"
    return (f"| {row['group']} | {row['label']} | {set_} | {b} | {row['solver']} | {tb * 1e3:.1f} | {tn * 1e3:.1f} | "
            f"**{statistics.median(ratios):.2f}** ({min(ratios):.2f}–{max(ratios):.2f}) | {it} | "
            f"{abs(on - ob) / max(abs(ob), 1e-300):.1e} | {gap:.1e} | {', '.join(status)} |")


def machine() -> str:
    import numba

    load = ", ".join(f"{v:.2f}" for v in os.getloadavg())
    return (f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, numpy {np.__version__},"
            f" numba {numba.__version__}; load average at start {load}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python benchmarks/bench_against_commit.py",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--base", default=BASE, help=f"the earlier commit (default {BASE})")
    parser.add_argument("--rounds", type=int, default=5, help="timed rounds (default 5)")
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    parser.add_argument("--output", type=Path, default=OUT)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(args.worker)
        return 0
    t0 = time.perf_counter()
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout.strip()
    base_commit = subprocess.run(["git", "rev-parse", "--short", args.base], cwd=ROOT, capture_output=True, text=True,
                                 check=True).stdout.strip()
    header = machine()
    with tempfile.TemporaryDirectory() as tmp:
        folder, tree = Path(tmp) / "data", Path(tmp) / "base"
        folder.mkdir()
        subprocess.run(["git", "worktree", "add", "--detach", str(tree), base_commit], cwd=ROOT, check=True,
                       capture_output=True)
        try:
            rows = build_cases(folder, args.quick)
            base, new = Worker(tree, folder), Worker(ROOT, folder)
            runs = run_rounds(rows, base, new, args.rounds)
            base.close()
            new.close()
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, capture_output=True)
    ratios = [statistics.median(n["time"] / b["time"] for n, b in zip(run["new"], run["base"], strict=True))
              for run in runs]
    command = "python benchmarks/bench_against_commit.py" + (f" --base {args.base}" if args.base != BASE else "") \
        + (f" --rounds {args.rounds}" if args.rounds != 5 else "") + (" --quick" if args.quick else "")
    lines = [
        f"## This checkout against commit {base_commit}: the rows of bench_dcd and bench_robust, interleaved",
        "",
        f"Command: `{command}` (commit {head} against {base_commit}; total "
        f"{(time.perf_counter() - t0) / 60:.1f} min); {header}.",
        "",
        "Each row is solved by both checkouts in the same process pair, on the same arrays, alternating which goes "
        f"first, in {args.rounds} rounds after a warm-up. Times: CPU milliseconds inside the worker, medians over "
        "the rounds; the ratio is this checkout's time over the base's, the median over the rounds of the ratio "
        "within a round (smallest and largest in brackets): below 1 is faster. Iterations are epochs "
        "(`dcd`, `robust-dcd`) or interior-point iterations (`feature-ipm`), base / this checkout. ΔP is the "
        "relative difference of the two objectives; gap the largest certified relative gap of either side.",
        "",
        f"Median ratio over the {len(rows)} rows: **{statistics.median(ratios):.2f}**; geometric mean "
        f"{float(np.exp(np.mean(np.log(ratios)))):.2f}; largest {max(ratios):.2f}.",
        "",
        "| script | data | set | intercept | backend | base (ms) | this (ms) | this / base | iterations | ΔP | gap "
        "| status |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    lines += [summarize(row, run) for row, run in zip(rows, runs, strict=True)]
    text = "\n".join(lines) + "\n"
    args.output.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

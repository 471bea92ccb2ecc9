"""One cell of ``bench_auto.py``'s grids timed again with more interleaved rounds: ``"auto"`` against named backends.

    .venv/bin/python benchmarks/bench_auto_cell.py 1000 1000 ball 1 --against robust-dcd feature-ipm --rounds 7

The grid times a long cell in few rounds; this script re-times one cell (the same data generator, seed and set as
the grid's, ``--held-out`` for the held-out grid's seed) in ``--rounds`` rounds, the order of the solvers reversed
every other round, after one untimed warm-up solve each. Times are CPU seconds of one solve
(``bench_auto.solve_once``) with BLAS and numba single-threaded, pinned to one CPU (``benchmarks/pinning.py``);
each ratio is the median over the rounds of ``time / time of the first --against backend`` within a round. Writes
``benchmarks/results/auto_cell.md`` (``--output``; ``--append`` adds a section) and prints it.
"""

from __future__ import annotations

import os

for _k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_k, "1")

import argparse  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_auto  # noqa: E402
import pinning  # noqa: E402

import robustsvm as rs  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "auto_cell.md"


def time_cell(n: int, d: int, kind: str, lambda_n: float, solvers: list[str], rounds: int, seed: int) -> dict:
    """CPU seconds of every solver on the cell, per round, and the last answer of each."""
    X, y = bench_auto.make_data(n, d, None, seed=seed)
    problem = rs.Problem(penalty=rs.L2(lambda_n / n),
                         uncertainty=None if kind == "none" else bench_auto.make_set(kind, d))
    answers = {s: problem.solve(X, y, solver=s) for s in solvers}  # warm-up (compilation), untimed
    times: dict[str, list[float]] = {s: [] for s in solvers}
    for r in range(rounds):
        for s in solvers if r % 2 == 0 else solvers[::-1]:
            seconds, answers[s] = bench_auto.solve_once(problem, X, y, s)
            if isinstance(answers[s], Exception):
                raise answers[s]
            times[s].append(seconds)
    return {"times": times, "answers": answers}


def report(args: argparse.Namespace, cell: dict, load: tuple[float, float, float]) -> str:
    solvers = ["auto", *args.against]
    base = np.asarray(cell["times"][args.against[0]])
    rows = []
    for s in solvers:
        t = np.asarray(cell["times"][s])
        sol = cell["answers"][s]
        ratio = t / base
        rows.append(f"| {s} | {sol.solver} | {sol.status} | {sol.iterations} | {np.median(t):.4g} | "
                    f"{np.median(ratio):.2f} ({ratio.min():.2f}–{ratio.max():.2f}) |")
    against = " ".join(args.against)
    seed = "--held-out " if args.held_out else ""
    append = " --append" if args.append else ""
    return "\n".join([
        f"## auto on one cell, more rounds: {args.n:,} × {args.d:,} dense, {args.set}, λn = {args.lambda_n:g}", "",
        f"Command: `python benchmarks/bench_auto_cell.py {args.n} {args.d} {args.set} {args.lambda_n:g} {seed}"
        f"--against {against} --rounds {args.rounds}{append}{pinning.command_option(args.cpu)}`; {platform.machine()}, "
        f"{os.cpu_count()} cores, load average at start {load[0]:.2f}, {load[1]:.2f}, {load[2]:.2f}, "
        f"{pinning.describe(args.cpu)}. The cell's data and set as in "
        "`bench_auto.py`; CPU "
        "seconds, single-threaded, medians over the rounds; the ratio is against the first backend after `auto` "
        "(median of the per-round ratios, smallest and largest in brackets).", "",
        "| solver asked | answered by | status | iterations | time (s) | ratio |", "|---|---|---|---|---|---|",
        *rows, ""])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n", type=int)
    parser.add_argument("d", type=int)
    parser.add_argument("set", choices=["none", "box", "ball", "ellipsoid"])
    parser.add_argument("lambda_n", type=float)
    parser.add_argument("--against", nargs="+", required=True, help="backends timed beside auto (the first: the "
                        "reference of the ratios)")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--held-out", action="store_true", help="the held-out grid's data seed")
    parser.add_argument("--output", type=Path, default=OUT)
    parser.add_argument("--append", action="store_true", help="add this cell's section to the output file")
    pinning.add_cpu_argument(parser)
    args = parser.parse_args()
    args.cpu = pinning.pin_run(args.cpu, quick=False)
    load = os.getloadavg()
    seed = bench_auto.HELD_OUT_SEED if args.held_out else bench_auto.DATA_SEED
    cell = time_cell(args.n, args.d, args.set, args.lambda_n, ["auto", *args.against], args.rounds, seed)
    text = report(args, cell, load)
    if args.append and args.output.exists():
        section = text.replace("## auto on one cell", "### auto on one cell")
        text = args.output.read_text().rstrip("\n") + "\n\n" + section
    args.output.write_text(text)
    print(text)


if __name__ == "__main__":
    main()

"""The cost of one dcd pass against one streaming product ``X @ v``, from 5,000 to 200,000 rows at d = 100.

A pass of dual coordinate descent reads each row of X twice (the margin ``x_i·w`` and the update
``w += δ x_i``), in a random order of the samples (by random blocks of consecutive rows once the rows outgrow
the cache); a streaming product reads each row once, in storage order.
This benchmark measures what a pass costs as n grows, and how close it stays to that floor:

* **per pass**: a dcd solve (hinge, L2 with λ = 1/n, no intercept, no shrinking, no certificate before the last
  epoch, ``tol`` unreachable) run for ``k₁`` and for ``k₂ > k₁`` epochs; the time of one pass is the difference
  over ``k₂ − k₁`` (the set-up and the final certificate cancel); the same with a plain random permutation of
  the rows each epoch (``ORDER_BLOCK = 0``), and with the float64 rows of X (``single_precision=False``: by
  default the epochs read a float32 copy of rows that outgrow the cache), for comparison;
* **X @ v**: one matrix–vector product over the same array (single-threaded BLAS);
* the **slope** of log(time per pass) against log(n), fitted over the rows (1: linear in n), and the ratio of a
  pass to one product at every n.

The two are timed in interleaved rounds in one process (pinned to one CPU), the median of the rounds kept.

Run from the repository root::

    .venv/bin/python benchmarks/bench_dcd_pass.py             # n = 5k … 200k, 7 rounds; writes results/dcd_pass.md
    .venv/bin/python benchmarks/bench_dcd_pass.py --quick     # n = 5k … 50k, 3 rounds, printed only
"""

from __future__ import annotations

import os

if __name__ == "__main__":  # single-threaded BLAS and numba, set before numpy loads (not when imported)
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
        os.environ.setdefault(_var, "1")

import argparse
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import robustsvm as rs  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "dcd_pass.md"
FULL_N = (5_000, 10_000, 20_000, 50_000, 100_000, 200_000)
QUICK_N = (5_000, 20_000, 50_000)
D = 100
#: the two epoch counts whose difference gives the time of a pass
EPOCHS = (4, 14)


def data(n: int, d: int = D, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Gaussian features, labels ``sign(x·w₀ + ε)`` (noisy: many samples stay active in every pass)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.where(X @ rng.standard_normal(d) + rng.standard_normal(n) > 0, 1.0, -1.0)
    return X, y


def dcd_seconds(X: np.ndarray, y: np.ndarray, epochs: int, block: int | None = None,
                single_precision: bool | str = "auto") -> float:
    """CPU seconds of a solve of ``epochs`` epochs; ``block`` overrides the visiting order's block length (0: a
    plain random permutation of the rows, :data:`robustsvm.backends.dual_ascent.ORDER_BLOCK`);
    ``single_precision`` is dcd's option."""
    from robustsvm.backends import dual_ascent

    default = dual_ascent.ORDER_BLOCK
    dual_ascent.ORDER_BLOCK = default if block is None else block
    problem = rs.Problem(penalty=rs.L2(1.0 / X.shape[0]), intercept=False)
    t = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the solve stops at max_iter by design
        sol = problem.solve(X, y, solver="dcd", tol=1e-15, max_iter=epochs, shrinking=False,
                            check_every=10**6, warn=False, single_precision=single_precision)
    elapsed = time.process_time() - t
    dual_ascent.ORDER_BLOCK = default
    if sol.iterations != epochs:
        raise RuntimeError(f"dcd ran {sol.iterations} epochs, not {epochs}")
    return elapsed


def dcd_single_bytes() -> int:
    """The bytes of dense rows from which dcd's epochs read their float32 copy by default."""
    from robustsvm.backends import single_rows

    return single_rows.SINGLE_MIN_BYTES


def product_seconds(X: np.ndarray, v: np.ndarray, repeats: int = 5) -> float:
    t = time.process_time()
    for _ in range(repeats):
        X @ v
    return (time.process_time() - t) / repeats


def measure(n: int, rounds: int) -> dict:
    X, y = data(n)
    v = np.random.default_rng(1).standard_normal(X.shape[1])
    dcd_seconds(X, y, 2)  # compiled and warm
    per_pass, plain, double, product = [], [], [], []
    for _ in range(rounds):
        short, long_ = dcd_seconds(X, y, EPOCHS[0]), dcd_seconds(X, y, EPOCHS[1])
        per_pass.append((long_ - short) / (EPOCHS[1] - EPOCHS[0]))
        short, long_ = dcd_seconds(X, y, EPOCHS[0], block=0), dcd_seconds(X, y, EPOCHS[1], block=0)
        plain.append((long_ - short) / (EPOCHS[1] - EPOCHS[0]))
        short, long_ = (dcd_seconds(X, y, EPOCHS[0], single_precision=False),
                        dcd_seconds(X, y, EPOCHS[1], single_precision=False))
        double.append((long_ - short) / (EPOCHS[1] - EPOCHS[0]))
        product.append(product_seconds(X, v))
    ratios = np.array(per_pass) / np.array(product)
    return {"n": n, "pass": float(np.median(per_pass)), "plain": float(np.median(plain)),
            "double": float(np.median(double)), "single": X.nbytes >= dcd_single_bytes(),
            "product": float(np.median(product)), "ratio": float(np.median(ratios)),
            "plain_ratio": float(np.median(np.array(plain) / np.array(product)))}


def slope(rows: list[dict], key: str) -> float:
    n = np.log([r["n"] for r in rows])
    t = np.log([r[key] for r in rows])
    return float(np.polyfit(n, t, 1)[0])


def machine() -> str:
    import numba

    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    return (f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, numpy "
            f"{np.__version__}, numba {numba.__version__}; load average at start {load[0]:.2f}, {load[1]:.2f}, "
            f"{load[2]:.2f}")


def fragment(rows: list[dict], command: str, where: str, header: str, seconds: float) -> str:
    lines = [
        "## dcd: the cost of a pass as n grows, against one streaming product",
        "",
        f"Command: `{command}` (total {seconds:.0f} s); {header}; {where}.",
        "",
        f"Model: hinge loss, `L2(1/n)`, no intercept, Gaussian data at d = {D}, `y = sign(x·w₀ + ε)`. Per pass: "
        f"(time of {EPOCHS[1]} epochs − time of {EPOCHS[0]}) / {EPOCHS[1] - EPOCHS[0]}, without shrinking and "
        "without certificates in between (CPU time); X @ v: one single-threaded product over the same array. "
        "Medians of interleaved rounds; the ratio is the median of the ratios within a round. dcd visits the "
        "rows by random blocks of consecutive rows once they outgrow the cache (`docs/derivations/dcd.md` §7); "
        "`plain permutation` is the same pass in a uniformly random order of the rows (`ORDER_BLOCK = 0`); the "
        "epochs read a float32 copy of rows of at least 8 MiB (`rows` column; derivation §8), and `float64 rows` is "
        "the same pass on the float64 rows of X (`single_precision=False`).",
        "",
        "| n | rows | dcd per pass | plain permutation | float64 rows | X @ v | pass / product | plain / product |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(f"| {r['n']:,} | {'float32' if r['single'] else 'float64'} | {r['pass'] * 1e3:.3g} ms | "
                     f"{r['plain'] * 1e3:.3g} ms | {r['double'] * 1e3:.3g} ms | "
                     f"{r['product'] * 1e3:.3g} ms | {r['ratio']:.2f} | {r['plain_ratio']:.2f} |")
    lines += ["", f"Fitted log–log slope in n: dcd per pass **{slope(rows, 'pass'):.2f}**, plain permutation "
              f"{slope(rows, 'plain'):.2f}, float64 rows {slope(rows, 'double'):.2f}, "
              f"X @ v {slope(rows, 'product'):.2f}."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    from pinning import add_cpu_argument, command_option, describe, pin_run

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer sizes and rounds, printed only")
    parser.add_argument("--rounds", type=int, default=None, help="interleaved rounds (default 7, quick 3)")
    add_cpu_argument(parser)
    args = parser.parse_args(argv)
    cpu = pin_run(args.cpu, args.quick)
    header = machine()
    start = time.perf_counter()
    rounds = args.rounds or (3 if args.quick else 7)
    rows = []
    for n in QUICK_N if args.quick else FULL_N:
        rows.append(measure(n, rounds))
        print(f"n = {n}: pass {rows[-1]['pass'] * 1e3:.3g} ms, plain {rows[-1]['plain'] * 1e3:.3g} ms, "
              f"product {rows[-1]['product'] * 1e3:.3g} ms, "
              f"ratio {rows[-1]['ratio']:.2f}", flush=True)
    command = ".venv/bin/python benchmarks/bench_dcd_pass.py" + (" --quick" if args.quick else "") + \
        command_option(args.cpu)
    text = fragment(rows, command, describe(cpu), header, time.perf_counter() - start)
    print(text)
    if not args.quick:
        RESULTS.write_text(text, encoding="utf-8")
        print(f"wrote {RESULTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

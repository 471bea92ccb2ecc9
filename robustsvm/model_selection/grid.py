"""Grid search with cross-validation that compiles each model once.

The hyperparameters λ2, λ1, μ and the radii are CVXPY parameters of a
:class:`~robustsvm.conic.ConicProgram` (DPP), and so is one weight per
fold (``sample_groups``). One program compiled on the whole training set
serves every fold: for fold ``k`` the fold weights are the 0/1 mask
``g_j = 1[j ≠ k]``, so that ``c_i = g_{fold(i)} / Σ_l g_{fold(l)}`` (mean) or
``g_{fold(i)}`` (sum)
and the objective is exactly the one of a refit on the fold's training part
(the masked samples' slacks are free and drop out).

Grid points are split into chunks; a chunk is one task that compiles its own
program once and solves each of its points on every fold. Chunks run serially,
in processes through joblib (``n_jobs``) or on a Dask cluster (``client``);
Clarabel's result depends only on the data and the parameter values, so every
mode returns the same numbers. Clarabel has no warm start; with SCS
``warm_start=True`` starts each solve from the previous one in the chunk.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import solve_path
from .._validation import check_fit_data
from ..exceptions import ConvergenceWarning, SelectionTieWarning
from ..problem import Problem
from .folds import accuracy, evaluate_chunk
from .points import (
    GRID_KEYS,
    expand_grid,
    exponential_range,
    fold_problem,
    point_radius,
    program_values,
    stratified_folds,
    with_values,
)
from .scoring import ACCURACY, check_scoring, score_folds
from .weights import fold_weights

__all__ = [
    "TIE_RTOL",
    "GRID_KEYS",
    "GridResult",
    "accuracy",
    "evaluate_chunk",
    "expand_grid",
    "exponential_range",
    "fold_problem",
    "grid_search",
    "point_radius",
    "program_values",
    "stratified_folds",
    "with_values",
]

#: mean scores equal within this (relative and absolute) tie for the CV selection
TIE_RTOL = 1e-9


# ------------------------------------------------------------------- results
@dataclass
class GridResult:
    """Cross-validation scores of every grid point.

    Attributes
    ----------
    points : list of dict
        The grid points, in grid order.
    scores : ndarray of shape (n_points, n_folds)
        The score (``scoring``; larger is better) of the model fitted without fold ``k``, on fold ``k``.
        A model the certificate cannot tell from ``w = 0`` is scored as the constant it is
        (:mod:`robustsvm.model_selection.scoring`).
    weights : ndarray of shape (n_points, n_folds, d)
    intercepts : ndarray of shape (n_points, n_folds)
    statuses : ndarray of str, shape (n_points, n_folds)
        The package's status of each answer (:func:`robustsvm.solve_path.certify`): ``"optimal"`` only
        when its own duality gap confirms the solver's claim; ``"error: ..."`` for a failed solve.
    gaps : ndarray of shape (n_points, n_folds)
        The package's duality gap of each answer (an upper bound on objective − optimum; NaN for a
        failed solve, or a kernel model's backend gap).
    solve_times : ndarray of shape (n_points, n_folds)
        Seconds in the numerical solver (plus compilation for refits).
    n_compiles : int
        How many times a CVXPY problem was compiled (0 for a backend that is not conic).
    wall_time : float
        Seconds for the whole search.
    extra : dict
        ``solvers``: the backend that gave each answer (a point a backend refuses, or with
        ``solver="auto"`` one it did not certify, is solved by the conic fallback).
    scoring : str
        The name of the scorer.
    constant : ndarray of bool, shape (n_points, n_folds)
        Whether the certificate admits ``w = 0`` for the model of the point on the fold
        (``‖w‖₂ ≤ √(2·gap/λ2)``): a constant classifier.

    The CV selection (:attr:`best_index`, :attr:`best_params`, :attr:`best_score`) **skips** every
    point with a fold the package did not certify optimal (:attr:`certified`); when no point is
    certified it ranks them all. Among points tied at the best mean score (:attr:`ties`), one that is not
    constant on any fold comes first, then grid order. :func:`grid_search` warns, naming how many points it
    skipped, and when points tie with a constant classifier among them
    (:class:`~robustsvm.exceptions.SelectionTieWarning`).
    """

    points: list[dict]
    scores: np.ndarray
    weights: np.ndarray
    intercepts: np.ndarray
    statuses: np.ndarray
    solve_times: np.ndarray
    n_compiles: int
    wall_time: float
    extra: dict = field(default_factory=dict)
    gaps: np.ndarray | None = None
    scoring: str = ACCURACY
    constant: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.gaps is None:
            self.gaps = np.full(np.shape(self.scores), np.nan)
        if self.constant is None:
            self.constant = np.zeros(np.shape(self.scores), dtype=bool)

    @property
    def certified(self) -> np.ndarray:
        """Per point: whether the package certified the answer on every fold optimal."""
        return np.all(self.statuses == "optimal", axis=1)

    @property
    def mean_scores(self) -> np.ndarray:
        """Mean validation score over the folds, per point."""
        return np.nanmean(self.scores, axis=1)

    @property
    def ties(self) -> np.ndarray:
        """Indices of the ranked points that share the best mean score (within ``TIE_RTOL``).

        The ranked points are the certified ones, or all of them when none is certified.
        """
        means = np.asarray(self.mean_scores, dtype=np.float64)
        ok = self.certified & np.isfinite(means)
        if not np.any(ok):
            ok = np.isfinite(means)
        if not np.any(ok):
            return np.arange(min(1, len(self.points)))
        best = np.max(means[ok])
        return np.flatnonzero(ok & np.isclose(means, best, rtol=TIE_RTOL, atol=TIE_RTOL))

    @property
    def best_index(self) -> int:
        """The certified point of highest mean score; on ties one not constant on any fold, then grid order.

        Points with a fold the package did not certify optimal are skipped, unless no point is certified.
        """
        ties = self.ties
        varying = ties[~np.any(self.constant[ties], axis=1)]
        return int(varying[0] if varying.size else ties[0])

    @property
    def best_params(self) -> dict:
        return dict(self.points[self.best_index])

    @property
    def best_score(self) -> float:
        return float(self.mean_scores[self.best_index])

    @property
    def n_not_optimal(self) -> int:
        """Solves that ended with a status other than ``"optimal"``."""
        return int(np.sum(self.statuses != "optimal"))

    def table(self):
        """A pandas DataFrame: one row per point, its parameters, mean and std score, constant folds."""
        import pandas as pd

        frame = pd.DataFrame(self.points)
        frame["mean_score"] = self.mean_scores
        frame["std_score"] = np.nanstd(self.scores, axis=1)
        frame["not_optimal"] = np.sum(self.statuses != "optimal", axis=1)
        frame["constant_folds"] = np.sum(self.constant, axis=1)
        frame["max_gap"] = np.max(np.where(np.isnan(self.gaps), np.inf, self.gaps), axis=1)
        return frame


def _chunks(n_points: int, n_chunks: int) -> list[np.ndarray]:
    n_chunks = max(1, min(int(n_chunks), n_points))
    return [c for c in np.array_split(np.arange(n_points), n_chunks) if c.size]


# ------------------------------------------------------------------ the search
def grid_search(
    problem: Problem,
    X: Any,
    y: Any,
    param_grid: Mapping[str, Iterable[float]] | Sequence[Mapping[str, float]],
    *,
    cv: int = 5,
    folds: Any = None,
    seed: int | None = 0,
    solver: str = "clarabel",
    solver_options: dict | None = None,
    compile_once: bool | None = None,
    n_jobs: int | None = 1,
    client: Any = None,
    n_chunks: int | None = None,
    progress: bool = True,
    scoring: str | Callable | None = ACCURACY,
    class_weight: Any = None,
    sample_weight: Any = None,
) -> GridResult:
    """Cross-validated score of ``problem`` at every point of ``param_grid``.

    Parameters
    ----------
    problem : Problem
        The model; each point overrides its ``l2``, ``l1``, ``mu``,
        ``radius`` (and ``nu`` for pq-SVM models, see :func:`program_values`).
    X, y : training data
    param_grid : dict of str to list, or list of dict
        ``{"l2": [...], "l1": [...], "radius": [...]}`` (Cartesian product)
        or explicit points.
    cv : int, default 5
        Number of stratified folds (ignored when ``folds`` is given).
    folds : array of shape (n,), optional
        Fold index of every sample.
    seed : int, optional
        Shuffling of the stratified folds.
    solver : str, default "clarabel"
        A conic backend (compiled once) or any registered backend (refit per point; a backend with a
        batched solve, ``feature-ipm``, solves all the points of a fold at once when the grid varies only
        ``l2``, ``l1`` and ``radius``), or ``"auto"`` (:func:`robustsvm.solve_path.choose_backend` on the
        model and the number of features; a point it does not certify optimal is solved again by
        ``clarabel``). Every answer is certified by the package (``GridResult.statuses``, ``gaps``); a point
        the backend refuses (an L2 strength of zero for ``feature-ipm`` or ``robust-dcd``) is solved by
        ``clarabel``, and a radius per sample is sliced to each fold.
    solver_options : dict, optional
        ``tol``, ``max_iter``, ``verbose``, ``solver_options`` (the CVXPY
        solver's own), ``warm_start`` (SCS; for first-order backends that take an
        initial dual point, such as ``robust-dcd``, each fold starts from the previous
        grid point's solution unless ``warm_start=False``).
    compile_once : bool, optional
        Default: True for conic backends, False for the others. An answer of the program compiled once that the
        package does not certify optimal is solved again on the fold's own model, compiled for it.
    n_jobs : int, default 1
        Processes for joblib (−1: all cores). Ignored when ``client`` is set.
    client : dask.distributed.Client or str, optional
        Run the chunks on this Dask cluster (an address string opens and
        closes a client).
    n_chunks : int, optional
        Number of tasks, each compiling once (default: 1 serially, the number
        of workers in parallel).
    progress : bool, default True
        Show a tqdm progress bar (when tqdm is installed).
    scoring : str or callable, default "accuracy"
        A scikit-learn scorer name (``"roc_auc"``, ``"balanced_accuracy"``, ``"neg_brier_score"``,
        ``"neg_log_loss"``, …) or a callable ``scorer(model, X_val, y_val)`` (scikit-learn's convention: the
        model is a fitted classifier with ``decision_function``, ``predict`` and ``predict_proba``, and the
        labels are those of ``y``). Probabilities come from Platt's sigmoid fitted on the training folds only,
        as ``RobustSVC(probability=True)`` fits it (five more solves per point and fold, see
        :mod:`robustsvm.model_selection.scoring`). Scores are not weighted by ``sample_weight``.
    class_weight : None, "balanced" or dict {label: weight}, optional
        Weights of the loss terms per class, computed on each fold's training rows, as
        ``RobustSVC(class_weight=...)`` computes them on the rows it is fitted on.
    sample_weight : array-like of shape (n,), optional
        Non-negative weights of the loss terms (multiplied by ``class_weight``).

    Returns
    -------
    GridResult
        With a :class:`~robustsvm.exceptions.SelectionTieWarning` when several points share the best mean
        score and one of them is a constant classifier on some fold.
    """
    start = time.perf_counter()
    points = expand_grid(param_grid)
    if not isinstance(problem, Problem):
        raise TypeError(f"problem must be a robustsvm Problem, got {type(problem).__name__}")
    if problem.loss.is_constraint:
        raise ValueError("cross-validation masks need a loss term: a hard-margin model cannot be cross-validated")
    data = check_fit_data(X, y, signs=problem.signs, positive_class=problem.positive_class)
    problem = problem.oriented(data)  # the folds see labels mapped to ±1
    backend = solve_path.lookup(solver, problem, data, points=len(points))  # "auto": the path's choice
    if compile_once is None:  # a set of distributions may compile its weights as constants: no fold masks
        compile_once = backend.kind == "conic" and not getattr(problem.uncertainty, "weights_as_constants", False)
    if compile_once and backend.kind != "conic":
        raise ValueError(f"compile_once needs a conic backend; {backend.name!r} is {backend.kind!r}")
    if folds is None:
        folds = stratified_folds(data.y, cv, seed=seed)
    folds = np.asarray(folds)
    if folds.shape != (data.n,):
        raise ValueError(f"folds must have shape ({data.n},), got {folds.shape}")
    X_arg = X if hasattr(X, "columns") else data.X
    scorer = check_scoring(scoring)
    weights = fold_weights(data.y, data.classes, sample_weight, class_weight)
    n_total = len(points) * np.unique(folds).size

    bar = _progress_bar(n_total, progress, f"grid {backend.name}")
    kwargs = {"solver": solver, "solver_options": solver_options, "compile_once": compile_once, "weights": weights,
              "chosen": backend.name}  # "auto" decided once, for the whole grid
    try:
        if client is not None:
            parts, chunks = _run_dask(client, problem, X_arg, data.y, folds, points, kwargs, n_chunks, bar)
        elif n_jobs not in (None, 1):
            parts, chunks = _run_joblib(n_jobs, problem, X_arg, data.y, folds, points, kwargs, n_chunks, bar)
        else:
            chunks = _chunks(len(points), n_chunks or 1)
            parts = [evaluate_chunk(problem, X_arg, data.y, folds, [points[i] for i in c], **kwargs,
                                    callback=bar.update if bar is not None else None) for c in chunks]
    finally:
        if bar is not None:
            bar.close()
    res = _assemble(points, chunks, parts)
    res.scoring = scorer.name
    res.scores, res.constant = score_folds(
        problem, data.X, data.y, data.classes, folds, points,
        {"weights": res.weights, "intercepts": res.intercepts, "gaps": res.gaps, "statuses": res.statuses}, scorer,
        weights=weights, solver=solver, solver_options=solver_options, feature_names=data.feature_names)
    res.wall_time = time.perf_counter() - start
    _warn_selection(res)
    return res


def _assemble(points: list[dict], chunks: list[np.ndarray], parts: list[dict]) -> GridResult:
    P = len(points)
    K = parts[0]["scores"].shape[1]
    d = parts[0]["weights"].shape[2]
    out = {"scores": np.empty((P, K)), "weights": np.empty((P, K, d)), "intercepts": np.empty((P, K)),
           "statuses": np.empty((P, K), dtype=object), "gaps": np.empty((P, K)), "solve_times": np.empty((P, K))}
    solvers = np.empty((P, K), dtype=object)
    for c, part in zip(chunks, parts, strict=True):
        for key in out:
            out[key][c] = part[key]
        solvers[c] = part["solvers"]
    return GridResult(points=points, n_compiles=sum(p["n_compiles"] for p in parts), wall_time=0.0,
                      extra={"solvers": solvers}, **out)


def _warn_selection(res: GridResult) -> None:
    """Warn about points the selection skips (not certified) and about ties at the best mean score."""
    P = len(res.points)
    skipped = int(np.sum(~res.certified))
    if skipped:
        what = ("the CV selection (best_index, best_params) skips them" if skipped < P else
                "none is certified, so the CV selection ranks them all")
        warnings.warn(f"{skipped} of {P} grid points have a fold whose answer the package did not certify optimal "
                      f"(GridResult.statuses, GridResult.gaps); {what}", ConvergenceWarning, stacklevel=3)
    ties = res.ties
    n_constant = int(np.sum(np.any(res.constant[ties], axis=1)))
    if ties.size > 1 and n_constant:
        best = res.best_index
        kind = "a constant classifier on some fold" if np.any(res.constant[best]) else "not constant on any fold"
        warnings.warn(f"{ties.size} grid points tie at the best mean {res.scoring} {res.mean_scores[best]:.6g} "
                      f"({n_constant} of them constant on some fold, GridResult.constant); the selection takes point "
                      f"{best} {res.points[best]}, {kind}. A scorer that ranks decisions (scoring='roc_auc') or "
                      "class_weight='balanced' may separate them", SelectionTieWarning, stacklevel=3)


def _progress_bar(total: int, progress: bool, desc: str):
    if not progress:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover - tqdm is an optional dependency
        return None
    return tqdm(total=total, desc=desc, leave=False)


def _run_joblib(n_jobs, problem, X, y, folds, points, kwargs, n_chunks, bar):
    from joblib import Parallel, cpu_count, delayed

    workers = cpu_count() if n_jobs == -1 else int(n_jobs)
    if workers < 1:
        raise ValueError(f"n_jobs must be a positive integer or -1, got {n_jobs!r}")
    chunks = _chunks(len(points), n_chunks or workers)
    K = np.unique(folds).size
    tasks = (delayed(evaluate_chunk)(problem, X, y, folds, [points[i] for i in c], **kwargs) for c in chunks)
    parts = []
    for c, part in zip(chunks, Parallel(n_jobs=workers, return_as="generator")(tasks), strict=True):
        parts.append(part)
        if bar is not None:
            bar.update(c.size * K)
    return parts, chunks


def _run_dask(client, problem, X, y, folds, points, kwargs, n_chunks, bar):
    from distributed import Client, as_completed

    own = isinstance(client, str)
    if own:
        client = Client(client)
    elif not isinstance(client, Client):
        raise TypeError(f"client must be a dask.distributed.Client or an address string, got {client!r}")
    try:
        workers = max(1, sum(client.nthreads().values()))
        chunks = _chunks(len(points), n_chunks or workers)
        K = np.unique(folds).size
        X_f, y_f, folds_f = client.scatter([X, y, folds], broadcast=True)
        futures = [client.submit(evaluate_chunk, problem, X_f, y_f, folds_f, [points[i] for i in c], **kwargs,
                                 pure=False) for c in chunks]
        index = {f.key: i for i, f in enumerate(futures)}
        parts: list[dict | None] = [None] * len(futures)
        for fut in as_completed(futures):
            i = index[fut.key]
            parts[i] = fut.result()
            if bar is not None:
                bar.update(chunks[i].size * K)
        return parts, chunks
    finally:
        if own:
            client.close()

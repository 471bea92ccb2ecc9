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

import itertools
import math
import time
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import solve_path
from .._validation import check_fit_data
from ..backends import registry
from ..exceptions import SolverError
from ..model import normalize
from ..penalties import L1, L2, Penalty
from ..problem import Problem

__all__ = [
    "GridResult",
    "accuracy",
    "evaluate_chunk",
    "expand_grid",
    "exponential_range",
    "grid_search",
    "point_radius",
    "program_values",
    "stratified_folds",
    "with_values",
]

#: names a grid point may set: those of ConicProgram.set_values, and ν for pq-SVM models
GRID_KEYS = frozenset({"l2", "l1", "mu", "radius", "nu"})


# --------------------------------------------------------------------- grids
def exponential_range(low: float, high: float, num: int) -> np.ndarray:
    """``num`` values from ``low`` to ``high`` equally spaced in ``log``: ``low·(high/low)^(j/(num−1))``."""
    low, high = float(low), float(high)
    if not (0 < low <= high and math.isfinite(high)):
        raise ValueError(f"exponential_range needs 0 < low <= high < inf, got low={low}, high={high}")
    if int(num) != num or num < 1:
        raise ValueError(f"num must be a positive integer, got {num!r}")
    return np.geomspace(low, high, int(num)) if num > 1 else np.array([low])


def expand_grid(param_grid: Mapping[str, Iterable[float]] | Sequence[Mapping[str, float]]) -> list[dict]:
    """All points of a grid: the Cartesian product of a dict of value lists, in order.

    A list of dicts is taken as the points themselves.
    """
    if isinstance(param_grid, Mapping):
        keys = list(param_grid)
        values = [list(np.atleast_1d(np.asarray(param_grid[k], dtype=np.float64))) for k in keys]
        points = [dict(zip(keys, (float(v) for v in combo), strict=True)) for combo in itertools.product(*values)]
    else:
        points = [{k: float(v) for k, v in p.items()} for p in param_grid]
    if not points:
        raise ValueError("param_grid is empty")
    for p in points:
        unknown = set(p) - GRID_KEYS
        if unknown:
            raise ValueError(f"param_grid sets unknown parameter(s) {sorted(unknown)}; known: {sorted(GRID_KEYS)}")
    return points


def program_values(point: Mapping[str, float]) -> dict:
    """Map a grid point to :meth:`ConicProgram.set_values` arguments.

    A point with ``nu`` is a pq-SVM point (Woolnough et al. (2022) §4): its ``l2`` is the
    pq model's λ2 and the program gets ``l2 = 2λ2/ν`` and ``μ = 2/ν`` (see
    ``rs.pq_svm``). Other points pass through.
    """
    values = dict(point)
    if "nu" in values:
        nu = values.pop("nu")
        if not nu > 0:
            raise ValueError(f"nu must be positive, got {nu}")
        if "mu" in values:
            raise ValueError("a pq-SVM grid point sets nu, which fixes mu = 2/nu: do not set mu too")
        values["mu"] = 2.0 / nu
        if "l2" in values:
            values["l2"] = 2.0 * values["l2"] / nu
    return values


def point_radius(problem: Problem, point: Mapping[str, float]) -> float | None:
    """The radius a grid point sets (None when it sets none), checked against the model."""
    if "radius" not in point:
        return None
    if problem.uncertainty is None or isinstance(problem.uncertainty, (list, tuple)):
        raise ValueError("radius applies only to a model with one uncertainty set")
    return point["radius"]


def with_values(problem: Problem, point: Mapping[str, float]) -> Problem:
    """A new model: ``problem`` with the penalty, intercept ridge and radius of ``point``.

    The radius goes to a copy of the set made by :meth:`UncertaintySet.with_radius`
    (validated); ``problem`` and its set are not changed.
    """
    values = program_values(point)
    pen: Penalty = problem.penalty
    l2 = values.get("l2", pen.l2)
    l1 = values.get("l1", pen.l1)
    intercept = problem.intercept
    if "mu" in values:
        if problem.intercept_term.mode != "ridge":
            raise ValueError("mu (or nu) applies only to a model with intercept=rs.L2(mu)")
        intercept = L2(values["mu"])
    radius = point_radius(problem, values)
    uncertainty = problem.uncertainty if radius is None else problem.uncertainty.with_radius(radius)
    return Problem(loss=problem.loss, penalty=L2(l2) + L1(l1), signs=problem.signs,
                   uncertainty=uncertainty, intercept=intercept, kernel=problem.kernel,
                   positive_class=problem.positive_class)


def stratified_folds(y: Any, n_splits: int = 5, *, seed: int | None = 0) -> np.ndarray:
    """Fold index (0 … n_splits−1) of every sample, each class spread evenly over the folds.

    Within each class the samples are shuffled (``seed``) and dealt in turn.
    """
    y = np.asarray(y)
    if int(n_splits) != n_splits or n_splits < 2:
        raise ValueError(f"n_splits must be an integer ≥ 2, got {n_splits!r}")
    rng = np.random.default_rng(seed)
    folds = np.empty(y.shape[0], dtype=np.intp)
    offset = 0
    for c in np.unique(y):
        idx = np.flatnonzero(y == c)
        if idx.size < n_splits:
            raise ValueError(f"class {c!r} has {idx.size} samples, fewer than n_splits={n_splits}")
        idx = rng.permutation(idx)
        folds[idx] = (np.arange(idx.size) + offset) % n_splits
        offset += idx.size
    return folds


# ------------------------------------------------------------------- results
@dataclass
class GridResult:
    """Cross-validation scores of every grid point.

    Attributes
    ----------
    points : list of dict
        The grid points, in grid order.
    scores : ndarray of shape (n_points, n_folds)
        Validation accuracy of the model fitted without fold ``k``, on fold ``k``.
    weights : ndarray of shape (n_points, n_folds, d)
    intercepts : ndarray of shape (n_points, n_folds)
    statuses : ndarray of str, shape (n_points, n_folds)
    solve_times : ndarray of shape (n_points, n_folds)
        Seconds in the numerical solver (plus compilation for refits).
    n_compiles : int
        How many times a CVXPY problem was compiled (0 for a backend that is not conic).
    wall_time : float
        Seconds for the whole search.
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

    @property
    def mean_scores(self) -> np.ndarray:
        """Mean validation accuracy over the folds, per point."""
        return np.nanmean(self.scores, axis=1)

    @property
    def best_index(self) -> int:
        """The point of highest mean accuracy (the first in grid order on ties)."""
        return int(np.nanargmax(self.mean_scores))

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
        """A pandas DataFrame: one row per point, its parameters, mean and std accuracy."""
        import pandas as pd

        frame = pd.DataFrame(self.points)
        frame["mean_score"] = self.mean_scores
        frame["std_score"] = np.nanstd(self.scores, axis=1)
        frame["not_optimal"] = np.sum(self.statuses != "optimal", axis=1)
        return frame


# ----------------------------------------------------------------- the tasks
def accuracy(X, y_pm: np.ndarray, w: np.ndarray | None, b: float) -> float:
    if w is None:
        return float("nan")
    f = np.asarray(X @ w).ravel() + b
    return float(np.mean(np.where(f > 0, 1.0, -1.0) == y_pm))


def _rows(X, idx: np.ndarray):
    """Rows ``idx`` of a dense array or CSR matrix (CSR row slicing keeps it sparse)."""
    return X[idx]


def _batched(solver: str, problem: Problem, points: Sequence[Mapping[str, float]]) -> bool:
    """Whether ``solver`` solves all of ``points`` in one batched call (its ``solve_many``): the grid varies only
    ``l2``, ``l1`` and ``radius`` of a linear model."""
    backend = registry.get_backend(solver)
    if backend.solve_many is None or problem.kernel is not None or not points:
        return False
    return all(set(program_values(point)) <= {"l2", "l1", "radius"} for point in points)


def evaluate_chunk(
    problem: Problem,
    X: Any,
    y: Any,
    folds: np.ndarray,
    points: Sequence[Mapping[str, float]],
    *,
    solver: str = "clarabel",
    solver_options: dict | None = None,
    compile_once: bool = True,
    callback: Callable[[int], Any] | None = None,
) -> dict:
    """Solve every point of ``points`` on every fold; one task of :func:`grid_search`.

    With ``compile_once`` the model is compiled once on all of ``X`` and each
    fold is a 0/1 sample-weight mask; otherwise every (point, fold) is a new
    :meth:`Problem.solve` on the fold's rows (which compiles again for conic
    backends, and is the only route for non-conic ones).

    Returns
    -------
    dict
        ``scores``, ``weights``, ``intercepts``, ``statuses``, ``solve_times``
        (arrays indexed [point, fold]) and ``n_compiles``.
    """
    options = dict(solver_options or {})
    data = check_fit_data(X, y, signs=problem.signs)
    Xd, y_pm = data.X, data.y
    folds = np.asarray(folds)
    fold_ids = np.unique(folds)
    P, K, d = len(points), fold_ids.size, data.d
    scores = np.full((P, K), np.nan)
    weights = np.full((P, K, d), np.nan)
    intercepts = np.full((P, K), np.nan)
    statuses = np.full((P, K), "", dtype=object)
    times = np.zeros((P, K))
    n_compiles = 0
    if compile_once:
        needs_l1 = problem.penalty.l1 > 0 or any(p.get("l1", 0.0) > 0 for p in points)
        # one scalar weight parameter per fold (not a length-n weight vector,
        # whose canonicalization grows like n²)
        prog = problem.compile(Xd, y_pm, with_l1=needs_l1, sample_groups=folds,
                               feature_names=data.feature_names)
        n_compiles = 1
        warm = bool(options.pop("warm_start", False))
        for k, fid in enumerate(fold_ids):
            train = folds != fid
            val = ~train
            prog.set_values(group_weight=(fold_ids != fid).astype(np.float64))
            for j, point in enumerate(points):
                prog.set_values(**program_values(point))
                with warnings.catch_warnings():  # the status records an inaccurate solve
                    warnings.simplefilter("ignore", UserWarning)
                    res = prog.solve(solver.upper(), warm_start=warm, **_conic_options(options))
                statuses[j, k] = res.status
                times[j, k] = res.time_compile + res.time_solve
                if res.w is not None:
                    weights[j, k], intercepts[j, k] = res.w, res.b
                    scores[j, k] = accuracy(_rows(Xd, np.flatnonzero(val)), y_pm[val], res.w, res.b)
                if callback is not None:
                    callback(1)
    elif _batched(solver, problem, points):
        backend = registry.get_backend(solver)
        registry.require(backend, problem)
        values = [program_values(point) for point in points]
        for k, fid in enumerate(fold_ids):
            train = np.flatnonzero(folds != fid)
            val = np.flatnonzero(folds == fid)
            t0 = time.perf_counter()
            fold = check_fit_data(_rows(Xd, train), y_pm[train], signs=problem.signs,
                                  feature_names=data.feature_names)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                results = backend.solve_many(normalize(problem, fold), values, **options)
            times[:, k] = (time.perf_counter() - t0) / len(points)
            for j, res in enumerate(results):
                statuses[j, k] = res.status
                weights[j, k], intercepts[j, k] = res.w, res.b
                scores[j, k] = accuracy(_rows(Xd, val), y_pm[val], res.w, res.b)
            if callback is not None:
                callback(len(points))
    else:
        backend = registry.get_backend(solver)
        conic = backend.kind == "conic"
        # first-order backends that take an initial dual point: warm-start each fold along the grid's path
        path_warm = "warm_start" in backend.options and not conic
        if path_warm:
            path_warm = options.pop("warm_start", True) is not False
        for k, fid in enumerate(fold_ids):
            train = np.flatnonzero(folds != fid)
            val = np.flatnonzero(folds == fid)
            previous = None
            for j, point in enumerate(points):
                model = with_values(problem, point)
                t0 = time.perf_counter()
                try:
                    extra = {"warm_start": previous} if previous is not None else {}
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", UserWarning)
                        sol = model.solve(_rows(Xd, train), y_pm[train], solver=solver,
                                          feature_names=data.feature_names, **options, **extra)
                    if path_warm:
                        previous = sol.extra.get("dual_alpha")
                    statuses[j, k] = sol.status
                    weights[j, k], intercepts[j, k] = sol.w, sol.b
                    scores[j, k] = accuracy(_rows(Xd, val), y_pm[val], sol.w, sol.b)
                except SolverError as exc:
                    statuses[j, k] = f"error: {exc}"
                times[j, k] = time.perf_counter() - t0
                n_compiles += int(conic)
                if callback is not None:
                    callback(1)
    return {"scores": scores, "weights": weights, "intercepts": intercepts, "statuses": statuses,
            "solve_times": times, "n_compiles": n_compiles}


def _conic_options(options: dict) -> dict:
    allowed = {"tol", "max_iter", "verbose", "solver_options"}
    unknown = set(options) - allowed - {"warm_start"}
    if unknown:
        raise TypeError(f"unknown solver option(s) {sorted(unknown)} for a compiled program; accepted: "
                        f"{sorted(allowed | {'warm_start'})}")
    return {k: v for k, v in options.items() if k in allowed}


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
) -> GridResult:
    """Cross-validated accuracy of ``problem`` at every point of ``param_grid``.

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
        model and the number of features).
    solver_options : dict, optional
        ``tol``, ``max_iter``, ``verbose``, ``solver_options`` (the CVXPY
        solver's own), ``warm_start`` (SCS; for first-order backends that take an
        initial dual point, such as ``robust-dcd``, each fold starts from the previous
        grid point's solution unless ``warm_start=False``).
    compile_once : bool, optional
        Default: True for conic backends, False for the others.
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

    Returns
    -------
    GridResult
    """
    start = time.perf_counter()
    points = expand_grid(param_grid)
    if not isinstance(problem, Problem):
        raise TypeError(f"problem must be a robustsvm Problem, got {type(problem).__name__}")
    if problem.loss.is_constraint:
        raise ValueError("cross-validation masks need a loss term: a hard-margin model cannot be cross-validated")
    data = check_fit_data(X, y, signs=problem.signs, positive_class=problem.positive_class)
    problem = problem.oriented(data)  # the folds see labels mapped to ±1
    if solver == "auto":
        solver = solve_path.lookup(solve_path.AUTO, problem, data.d).name
    backend = registry.get_backend(solver)
    if compile_once is None:
        compile_once = backend.kind == "conic"
    if compile_once and backend.kind != "conic":
        raise ValueError(f"compile_once needs a conic backend; {solver!r} is {backend.kind!r}")
    if folds is None:
        folds = stratified_folds(data.y, cv, seed=seed)
    folds = np.asarray(folds)
    if folds.shape != (data.n,):
        raise ValueError(f"folds must have shape ({data.n},), got {folds.shape}")
    X_arg = X if hasattr(X, "columns") else data.X
    n_total = len(points) * np.unique(folds).size

    bar = _progress_bar(n_total, progress, f"grid {solver}")
    kwargs = {"solver": solver, "solver_options": solver_options, "compile_once": compile_once}
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
    return _assemble(points, chunks, parts, time.perf_counter() - start)


def _assemble(points: list[dict], chunks: list[np.ndarray], parts: list[dict], wall: float) -> GridResult:
    P = len(points)
    K = parts[0]["scores"].shape[1]
    d = parts[0]["weights"].shape[2]
    out = {"scores": np.empty((P, K)), "weights": np.empty((P, K, d)), "intercepts": np.empty((P, K)),
           "statuses": np.empty((P, K), dtype=object), "solve_times": np.empty((P, K))}
    for c, part in zip(chunks, parts, strict=True):
        for key in out:
            out[key][c] = part[key]
    return GridResult(points=points, n_compiles=sum(p["n_compiles"] for p in parts), wall_time=wall, **out)


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

"""One task of a grid search: every point of a chunk solved on every fold, each answer certified.

Three routes, all through :mod:`robustsvm.solve_path` (run, then the package's certificate):

* **compiled once** (a conic backend): one program on all samples, each fold a 0/1 weight per
  fold; each point's result is certified on the fold's own model (its training rows, with the
  program's margin multipliers of those rows);
* **batched** (a backend with ``solve_many``, a grid varying only ``l2``, ``l1`` and ``radius``):
  one call per fold, each point's result certified on that point's model;
* **refit**: one :func:`robustsvm.solve_path.solve_model` per point and fold.

A point the backend refuses (an L2 strength of zero for ``feature-ipm`` or ``robust-dcd``) is
solved by the path's fall-back order instead (:func:`robustsvm.solve_path.solve_point`, the conic
:data:`~robustsvm.solve_path.FALLBACK` last); with ``solver="auto"`` a point whose first answer is not
certified optimal is solved again the same way. A radius or a set per sample is sliced to each fold's
training rows (:func:`~robustsvm.model_selection.points.fold_problem`); each fold's model is normalized
once and each point's model derived from it (``Model.with_values``). A solver's own warnings (an
inaccurate conic answer) are recorded in the result's diagnostics, not shown: the status and the
certificate report them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from .. import solve_path
from .._validation import check_fit_data
from ..backends import registry
from ..exceptions import SolverError
from ..model import normalize
from ..problem import Problem
from .points import fold_problem, program_values, with_values
from .weights import FoldWeights

__all__ = ["accuracy", "evaluate_chunk"]


def accuracy(X, y_pm: np.ndarray, w: np.ndarray | None, b: float) -> float:
    """Share of the samples whose label ``y_pm`` (±1) is the sign of ``x·w + b`` (NaN without ``w``)."""
    if w is None:
        return float("nan")
    f = np.asarray(X @ w).ravel() + b
    return float(np.mean(np.where(f > 0, 1.0, -1.0) == y_pm))


def _rows(X, idx: np.ndarray):
    """Rows ``idx`` of a dense array or CSR matrix (CSR row slicing keeps it sparse)."""
    return X[idx]


def _batched(backend: registry.Backend, problem: Problem, points: Sequence[Mapping[str, float]]) -> bool:
    """Whether ``backend`` solves all of ``points`` in one batched call (its ``solve_many``): the grid varies only
    ``l2``, ``l1`` and ``radius`` of a linear model."""
    if backend.solve_many is None or problem.kernel is not None or not points:
        return False
    return all(set(program_values(point)) <= {"l2", "l1", "radius"} for point in points)


def _conic_options(options: dict) -> dict:
    allowed = {"tol", "max_iter", "verbose", "solver_options", "warm_start", "time_limit"}
    unknown = set(options) - allowed
    if unknown:
        raise TypeError(f"unknown solver option(s) {sorted(unknown)} for a compiled program; accepted: "
                        f"{sorted(allowed)}")
    return dict(options)


class _Table:
    """The arrays of one chunk, indexed [point, fold]."""

    def __init__(self, P: int, K: int, d: int) -> None:
        self.scores = np.full((P, K), np.nan)
        self.weights = np.full((P, K, d), np.nan)
        self.intercepts = np.full((P, K), np.nan)
        self.statuses = np.full((P, K), "", dtype=object)
        self.gaps = np.full((P, K), np.nan)
        self.solvers = np.full((P, K), "", dtype=object)
        self.times = np.zeros((P, K))

    def record(self, j: int, k: int, name: str, w, b: float, status: str, gap: float, X_val, y_val) -> None:
        self.statuses[j, k], self.gaps[j, k], self.solvers[j, k] = status, gap, name
        if w is not None:
            self.weights[j, k], self.intercepts[j, k] = w, b
            self.scores[j, k] = accuracy(X_val, y_val, w, b)

    def error(self, j: int, k: int, name: str, exc: Exception) -> None:
        self.statuses[j, k], self.solvers[j, k] = f"error: {exc}", name

    def as_dict(self, n_compiles: int) -> dict:
        return {"scores": self.scores, "weights": self.weights, "intercepts": self.intercepts,
                "statuses": self.statuses, "gaps": self.gaps, "solvers": self.solvers, "solve_times": self.times,
                "n_compiles": n_compiles}


def _certified(name: str, model, result, tol, table: _Table, j: int, k: int, X_val, y_val):
    """Certify one point's result on its fold model and record it (a failed solve as its error); the certified
    result, or None."""
    try:
        cert = solve_path.certify(name, model, result, tol=tol)
    except SolverError as exc:
        table.error(j, k, name, exc)
        return None
    table.record(j, k, name, cert.w, cert.b, cert.status, cert.gap, X_val, y_val)
    return cert


def _solve_point(problem: Problem, model, backend, solver: str, options: dict, table: _Table, j: int, k: int,
                 X_val, y_val, first=None):
    """One answer through the path (:func:`robustsvm.solve_path.solve_point`): the backend, ``"auto"``'s
    choice, or the fall-back order for a point the backend refuses or whose answer ``first`` stops short."""
    try:
        sol = solve_path.solve_point(problem, model, solver, options, first=first, quiet=True)
    except SolverError as exc:
        table.error(j, k, backend.name, exc)
        return None
    table.record(j, k, sol.solver, sol.w, sol.b, sol.status, sol.gap, X_val, y_val)
    return sol


def _point_model(fold_model, point: Mapping[str, float]):
    """The fold's normalized model at a grid point's values (validated by ``Model.with_values``)."""
    return fold_model.with_values(**program_values(point))


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
    weights: FoldWeights | None = None,
    chosen: str | None = None,
) -> dict:
    """Solve every point of ``points`` on every fold; one task of :func:`grid_search`.

    With ``compile_once`` the model is compiled once on all of ``X`` and each fold is a 0/1
    sample-weight mask (an answer of that program the package does not certify optimal is solved again on the
    fold's own model, compiled for it: one more compile each); otherwise every (point, fold) is solved on the
    fold's rows (in one batched call per fold when the backend has ``solve_many``). Every answer gets the
    package's certificate. ``weights`` (:func:`~robustsvm.model_selection.weights.fold_weights`) weigh each fold's
    loss terms by the sample weights times the class weights of its training rows. ``chosen`` is the backend
    :func:`grid_search` looked up for the whole grid (its ``"auto"`` decided once); None looks it up for this chunk.

    Returns
    -------
    dict
        ``scores``, ``weights``, ``intercepts``, ``statuses``, ``gaps`` (the package's duality gaps),
        ``solvers`` (the backend that solved each point), ``solve_times`` (arrays indexed
        [point, fold]) and ``n_compiles``.
    """
    options = dict(solver_options or {})
    data = check_fit_data(X, y, signs=problem.signs)
    folds = np.asarray(folds)
    fold_ids = np.unique(folds)
    table = _Table(len(points), fold_ids.size, data.d)
    backend = registry.get_backend(chosen) if chosen else solve_path.lookup(solver, problem, data, points=len(points))
    args = (problem, data, folds, fold_ids, points, backend, solver, options, table, callback, weights)
    if compile_once:
        n_compiles = _compiled_once(*args)
    elif _batched(backend, problem, points):
        n_compiles = _batched_route(*args)
    else:
        n_compiles = _refit_route(*args)
    return table.as_dict(n_compiles)


def _fold(problem: Problem, data, folds, fid, weights: FoldWeights | None = None):
    train = np.flatnonzero(folds != fid)
    val = np.flatnonzero(folds == fid)
    fold = check_fit_data(_rows(data.X, train), data.y[train], signs=problem.signs, feature_names=data.feature_names,
                          sample_weight=None if weights is None else weights.of_rows(train))
    return train, fold, _rows(data.X, val), data.y[val]


def _compiled_once(problem, data, folds, fold_ids, points, backend, solver, options, table, callback, weights) -> int:
    opts = _conic_options(options)
    needs_l1 = problem.penalty.l1 > 0 or any(p.get("l1", 0.0) > 0 for p in points)
    # one scalar weight parameter per fold (not a length-n weight vector, whose canonicalization grows like n²)
    # with class weights, one group per (fold, class): the class weights of each fold's training rows
    groups = folds if weights is None or weights.class_weight is None else weights.groups(folds)
    prog = problem.compile(data.X, data.y, with_l1=needs_l1, sample_groups=groups, feature_names=data.feature_names,
                           sample_weight=None if weights is None else weights.sample_weight)
    compiles = 1
    for k, fid in enumerate(fold_ids):
        train, fold, X_val, y_val = _fold(problem, data, folds, fid, weights)
        base = fold_problem(problem, train)
        fold_model = normalize(base, fold)
        prog.set_values(group_weight=(fold_ids != fid).astype(np.float64) if groups is folds
                        else weights.group_weight(folds, fid))
        for j, point in enumerate(points):
            prog.set_values(**program_values(point))
            model = _point_model(fold_model, point)
            result, _ = solve_path.run(backend, model, {**opts, "program": prog}, quiet=True)
            if result.multipliers is not None and np.shape(result.multipliers) == (data.n,):
                result.multipliers = np.asarray(result.multipliers)[train]  # the fold's rows; the others weigh 0
            table.times[j, k] = result.time_compile + result.time_solve
            _certified(backend.name, model, result, opts.get("tol"), table, j, k, X_val, y_val)
            if table.statuses[j, k] != solve_path.OPTIMAL:
                # the shared program's answer is not certified: the fold's own model, compiled afresh (its scaling
                # is the fold's, not all rows' with zero weights), answers instead
                t0 = time.perf_counter()
                _solve_point(with_values(base, point), model, backend, solver, options, table, j, k, X_val, y_val)
                table.times[j, k] += time.perf_counter() - t0
                compiles += 1
            if callback is not None:
                callback(1)
    return compiles


def _batched_route(problem, data, folds, fold_ids, points, backend, solver, options, table, callback, weights) -> int:
    point_problems = [with_values(problem, point) for point in points]
    inside = [j for j, p in enumerate(point_problems) if backend.accepts(p)]
    values = [program_values(points[j]) for j in inside]
    opts = solve_path.accepted_options(backend, options) if solver == solve_path.AUTO else options
    for k, fid in enumerate(fold_ids):
        train, fold, X_val, y_val = _fold(problem, data, folds, fid, weights)
        base = fold_problem(problem, train)
        fold_model = normalize(base, fold)
        t0 = time.perf_counter()
        results = solve_path.run_many(backend, fold_model, values, opts, quiet=True) if inside else []
        share = (time.perf_counter() - t0) / max(len(inside), 1)
        for j, res in zip(inside, results, strict=True):
            table.times[j, k] = share
            model = _point_model(fold_model, points[j])
            cert = _certified(backend.name, model, res, opts.get("tol"), table, j, k, X_val, y_val)
            if solver == solve_path.AUTO and cert is not None and cert.status != solve_path.OPTIMAL:
                point = with_values(base, points[j])  # solved again in the path's fall-back order
                first = solve_path.to_solution(point, backend.name, model, cert, share, warn=False)
                _solve_point(point, model, backend, solver, options, table, j, k, X_val, y_val, first=first)
        for j in sorted(set(range(len(points))) - set(inside)):  # refused points: the path's fall-back order
            t1 = time.perf_counter()
            point = with_values(base, points[j])
            _solve_point(point, _point_model(fold_model, points[j]), backend, solver, options, table, j, k,
                         X_val, y_val)
            table.times[j, k] = time.perf_counter() - t1
        if callback is not None:
            callback(len(points))
    return 0


def _refit_route(problem, data, folds, fold_ids, points, backend, solver, options, table, callback, weights) -> int:
    conic = backend.kind == "conic"
    # first-order backends that take an initial dual point: warm-start each fold along the grid's path
    path_warm = "warm_start" in backend.options and not conic
    if path_warm:
        path_warm = options.pop("warm_start", True) is not False
    n_compiles = 0
    for k, fid in enumerate(fold_ids):
        train, fold, X_val, y_val = _fold(problem, data, folds, fid, weights)
        base = fold_problem(problem, train)
        fold_model = normalize(base, fold)
        previous = None
        for j, point in enumerate(points):
            point_problem = with_values(base, point)
            t0 = time.perf_counter()
            extra = {"warm_start": previous} if previous is not None else {}
            sol = _solve_point(point_problem, _point_model(fold_model, point), backend, solver,
                               {**options, **extra}, table, j, k, X_val, y_val)
            if path_warm:
                previous = None if sol is None else sol.dual_alpha
            table.times[j, k] = time.perf_counter() - t0
            n_compiles += int(registry.get_backend(table.solvers[j, k] or backend.name).kind == "conic")
            if callback is not None:
                callback(1)
    return n_compiles

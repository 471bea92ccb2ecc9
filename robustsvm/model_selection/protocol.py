"""Woolnough et al. (2022)'s protocol (§5): split, standardize, grid search, select features, test.

The radius grid's upper bound is :func:`robustsvm.uncertainty.radius_upper_bound`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from .. import solve_path
from .._validation import check_fit_data
from ..problem import Problem
from .grid import GridResult, accuracy, grid_search, with_values

__all__ = ["ProtocolResult", "select_features", "standardize", "stratified_split", "woolnough_protocol"]


def select_features(w: Any, threshold: float = 1e-2) -> np.ndarray:
    """Mask of the significant features: ``|w_k| ≥ threshold · max_j |w_j|``.

    Woolnough et al. (2022), §5.1 keep a feature when its weight is significant against
    the largest one and zero the others before testing.
    """
    w = np.abs(np.asarray(w, dtype=np.float64))
    if not 0 <= threshold < 1:
        raise ValueError(f"threshold must be in [0, 1), got {threshold}")
    top = w.max() if w.size else 0.0
    if top == 0:
        return np.zeros(w.shape, dtype=bool)
    return w >= threshold * top


def stratified_split(y: Any, test_size: float = 0.2, *, seed: int | None = 0) -> tuple[np.ndarray, np.ndarray]:
    """Indices ``(train, test)``: ``round(test_size · n_c)`` test samples drawn from each class ``c``."""
    y = np.asarray(y)
    if not 0 < test_size < 1:
        raise ValueError(f"test_size must be in (0, 1), got {test_size}")
    rng = np.random.default_rng(seed)
    test = []
    for c in np.unique(y):
        idx = rng.permutation(np.flatnonzero(y == c))
        test.append(idx[: round(test_size * idx.size)])
    test_idx = np.sort(np.concatenate(test))
    train_idx = np.setdiff1d(np.arange(y.shape[0]), test_idx)
    return train_idx, test_idx


def standardize(X: Any) -> Any:
    """Columns scaled to zero mean and unit variance (sparse: unit variance, not centred; constant columns kept)."""
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64)
        mean = np.asarray(X.mean(axis=0)).ravel()
        var = np.asarray(X.multiply(X).mean(axis=0)).ravel() - mean**2
        scale = np.sqrt(np.maximum(var, 0.0))
        scale[scale == 0] = 1.0
        return sp.csr_matrix(X @ sp.diags(1.0 / scale))
    X = np.asarray(X, dtype=np.float64)
    scale = X.std(axis=0)
    scale[scale == 0] = 1.0
    return (X - X.mean(axis=0)) / scale


@dataclass
class ProtocolResult:
    """One row of Woolnough et al. (2022)'s Table 1.

    Attributes
    ----------
    best_params : dict
        The grid point of best mean cross-validation accuracy.
    cv_score : float
        Its mean cross-validation accuracy.
    train_accuracy : float
        Accuracy on the training part of the model refitted at ``best_params``.
    test_accuracy : float
        Accuracy on the test part after zeroing the insignificant weights.
    test_accuracy_all : float
        Accuracy on the test part with every weight kept.
    fit_time : float
        Seconds of the final fit (compile and solve).
    n_features, n_total : int
        Significant features and all features.
    selected : ndarray of bool
    w : ndarray, b : float
        The final weights (insignificant ones zeroed) and intercept.
    status : str
        Status of the final fit.
    grid : GridResult
    """

    best_params: dict
    cv_score: float
    train_accuracy: float
    test_accuracy: float
    test_accuracy_all: float
    fit_time: float
    n_features: int
    n_total: int
    selected: np.ndarray
    w: np.ndarray
    b: float
    status: str
    grid: GridResult


def woolnough_protocol(
    problem: Problem,
    X: Any,
    y: Any,
    param_grid: Mapping[str, Iterable[float]] | Sequence[Mapping[str, float]],
    *,
    test_size: float = 0.2,
    cv: int = 5,
    seed: int | None = 0,
    threshold: float = 1e-2,
    solver: str = "clarabel",
    final_solver: str | None = None,
    solver_options: dict | None = None,
    final_options: dict | None = None,
    n_jobs: int | None = 1,
    client: Any = None,
    n_chunks: int | None = None,
    progress: bool = True,
) -> ProtocolResult:
    """The model-selection protocol of Woolnough et al. (2022), §5.1.

    Standardize the features; split 80/20 (stratified, ``seed``); pick the
    grid point of best ``cv``-fold accuracy on the training part
    (:func:`grid_search`); refit there on the whole training part; keep the
    features with ``|w_k| ≥ threshold · max_j |w_j|`` (:func:`select_features`),
    zero the others and score the test part.

    ``final_solver`` (default ``solver``) fits the final model, with
    ``final_options``; the remaining arguments are those of :func:`grid_search`.
    """
    data = check_fit_data(X, y, signs=problem.signs, positive_class=problem.positive_class)
    problem = problem.oriented(data)  # the split sees labels mapped to ±1
    Xs = standardize(data.X)
    train, test = stratified_split(data.y, test_size, seed=seed)
    Xtr, ytr, Xte, yte = Xs[train], data.y[train], Xs[test], data.y[test]
    grid = grid_search(problem, Xtr, ytr, param_grid, cv=cv, seed=seed, solver=solver, solver_options=solver_options,
                       n_jobs=n_jobs, client=client, n_chunks=n_chunks, progress=progress)
    best = grid.best_params
    model = with_values(problem, best)
    # the status is part of the result: no ConvergenceWarning, the solver's own warnings recorded
    sol = solve_path.solve(model, Xtr, ytr, final_solver or solver, warn=False, quiet=True, **(final_options or {}))
    selected = select_features(sol.w, threshold)
    w_sel = np.where(selected, sol.w, 0.0)
    return ProtocolResult(
        best_params=best,
        cv_score=grid.best_score,
        train_accuracy=accuracy(Xtr, ytr, sol.w, sol.b),
        test_accuracy=accuracy(Xte, yte, w_sel, sol.b),
        test_accuracy_all=accuracy(Xte, yte, sol.w, sol.b),
        fit_time=sol.time,
        n_features=int(selected.sum()),
        n_total=data.d,
        selected=selected,
        w=w_sel,
        b=sol.b,
        status=sol.status,
        grid=grid,
    )

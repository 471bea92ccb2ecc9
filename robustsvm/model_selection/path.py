"""A certified regularization path: from the critical radius (or λ1) down, warm-started, every point certified.

The path starts where the model becomes constant (:func:`robustsvm.critical_radius`, or glmnet's ``λ_max``,
:func:`robustsvm.critical_l1`) and goes down a geometric grid; each point is solved through the one solve path
(so it carries its status and certified gap), a first-order backend starting from the previous point's dual.
With ``cv=k`` the same grid is solved on each of ``k`` stratified training parts and scored on the held-out
part with a scikit-learn metric; the chosen point is the best mean score among the points certified optimal on
every part.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import solve_path
from ..backends import registry
from ..certificates.critical import critical_l1, critical_radius
from ..certificates.degenerate import explain_with_critical
from ..problem import Problem
from ..solution import Solution
from ..solve_path import OPTIMAL, takes_dual_start
from .points import fold_problem, stratified_folds, with_values

__all__ = ["SCORERS", "PathResult", "path"]


def _probability(train_decision: np.ndarray, train_y: np.ndarray, decision: np.ndarray) -> np.ndarray:
    """Platt's sigmoid fitted on the training part's decision values, applied to ``decision``."""
    from ..estimators.calibration import fit_sigmoid

    return fit_sigmoid(train_decision, train_y > 0).probability(decision)


def _scorers() -> dict[str, tuple[Callable, str]]:
    from sklearn import metrics

    return {
        "roc_auc": (metrics.roc_auc_score, "decision"),
        "balanced_accuracy": (metrics.balanced_accuracy_score, "predict"),
        "accuracy": (metrics.accuracy_score, "predict"),
        "neg_brier_score": (lambda t, p: -metrics.brier_score_loss(t, p), "probability"),
        "neg_log_loss": (lambda t, p: -metrics.log_loss(t, p, labels=[0, 1]), "probability"),
    }


#: the scorers ``path`` accepts (scikit-learn's names; larger is better): what each reads of the model
SCORERS = ("roc_auc", "balanced_accuracy", "accuracy", "neg_brier_score", "neg_log_loss")


@dataclass
class PathResult:
    """The path: one certified solution per value, and the cross-validation scores when asked.

    Attributes
    ----------
    parameter : {"radius", "l1"}
    values : ndarray of shape (P,)
        The values, largest (the critical value) first.
    critical : float
        The critical value of the parameter on all the data.
    solutions : list of Solution
        The solution on all the data at each value (its ``status``, ``gap`` and ``degenerate`` report).
    scores : ndarray of shape (P, k) or None
        The held-out score of each value on each part (``cv=k``); NaN where a part's solve was not certified.
    fold_statuses : ndarray of shape (P, k) or None
    scoring : str or None
    """

    parameter: str
    values: np.ndarray
    critical: float
    solutions: list[Solution]
    scores: np.ndarray | None = None
    fold_statuses: np.ndarray | None = None
    scoring: str | None = None

    @property
    def statuses(self) -> np.ndarray:
        return np.array([s.status for s in self.solutions])

    @property
    def gaps(self) -> np.ndarray:
        return np.array([s.gap for s in self.solutions])

    @property
    def certified(self) -> np.ndarray:
        """Whether each point's solution on all the data is certified optimal."""
        return self.statuses == OPTIMAL

    @property
    def mean_scores(self) -> np.ndarray | None:
        return None if self.scores is None else np.nanmean(self.scores, axis=1)

    @property
    def best_index(self) -> int | None:
        """The value with the best mean score among those certified optimal on every part and on all the data
        (the largest such value on a tie: the most regularized)."""
        if self.scores is None:
            return None
        ok = self.certified & np.all(self.fold_statuses == OPTIMAL, axis=1)
        if not ok.any():
            raise ValueError("no point of the path is certified optimal on every part")
        means = np.where(ok, self.mean_scores, -np.inf)
        return int(np.argmax(means))

    @property
    def best_value(self) -> float | None:
        i = self.best_index
        return None if i is None else float(self.values[i])

    @property
    def best_solution(self) -> Solution | None:
        i = self.best_index
        return None if i is None else self.solutions[i]


def _weights(y: np.ndarray, class_weight: Any, sample_weight: Any) -> np.ndarray | None:
    """The per-sample loss weights: ``class_weight`` (scikit-learn's rule) times ``sample_weight``."""
    if class_weight is None:
        return None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    from sklearn.utils.class_weight import compute_sample_weight

    if not (class_weight == "balanced" or isinstance(class_weight, dict)):
        raise ValueError(f"class_weight must be 'balanced', a dict of label to weight or None, got {class_weight!r}")
    w = compute_sample_weight(class_weight, y)
    return w if sample_weight is None else w * np.asarray(sample_weight, dtype=np.float64)


def _grid(problem: Problem, X: Any, y: Any, parameter: str, values: Any, n_points: int, ratio: float,
          sample_weight: Any, feature_names: Any) -> tuple[np.ndarray, float]:
    """The path's values (descending) and the critical value on all the data."""
    critical = critical_radius if parameter == "radius" else critical_l1
    top = float(critical(problem, X, y, sample_weight=sample_weight, feature_names=feature_names))
    if values is not None:
        out = np.sort(np.asarray(values, dtype=np.float64).ravel())[::-1]
        if out.size == 0 or not np.all(np.isfinite(out)) or np.any(out < 0):
            raise ValueError(f"{parameter} must hold finite non-negative values")
        return out, top
    if not (np.isfinite(top) and top > 0):
        raise ValueError(f"the critical {parameter} is {top!r}: no geometric path starts there; pass {parameter}=")
    if int(n_points) != n_points or n_points < 2:
        raise ValueError(f"n_points must be an integer ≥ 2, got {n_points!r}")
    if not 0 < ratio < 1:
        raise ValueError(f"ratio must lie in (0, 1), got {ratio!r}")
    return np.geomspace(top, top * ratio, int(n_points)), top


def _run(problem: Problem, X: np.ndarray, y: np.ndarray, parameter: str, values: np.ndarray, scale: Any,
         weights: Any, feature_names: Any, solver: str, options: dict) -> list[Solution]:
    """The solutions along ``values`` on ``(X, y)``, each warm-started from the previous one's dual point."""
    out, previous = [], None
    for v in values:
        point = problem if parameter == "radius" else with_values(problem, {"l1": float(v)})
        radius = None if parameter != "radius" else float(v) * scale
        # "auto" is resolved at each point, so an answer short of optimal is solved again by the next backend
        # (solve_path's fall-back); each point's status and degeneracy are kept on its solution (warn=False), a
        # solver's own notes in its extra["warnings"] (quiet=True)
        sol = solve_path.solve(point, X, y, solver, sample_weight=weights, feature_names=feature_names,
                               radius=radius, dual_start=previous, warn=False, quiet=True, **options)
        previous = sol.dual_alpha if takes_dual_start(registry.get_backend(sol.solver)) else None
        out.append(sol)
    return out


def path(problem: Problem, X: Any, y: Any, *, radius: Any = None, l1: Any = None, n_points: int = 10,
         ratio: float = 1e-2, cv: int | None = None, scoring: str = "roc_auc", class_weight: Any = None,
         sample_weight: Any = None, solver: str = "auto", seed: int | None = 0, **options: Any) -> PathResult:
    """Solve ``problem`` along a path of radii (or of λ1) from the critical value down, every point certified.

    Parameters
    ----------
    problem : Problem
        A linear model; with ``radius`` (the default when it has an uncertainty set) the path varies its radius
        ``ρ`` (per-sample radii keep their ratios: ``r_i = ρ s_i``, as in :func:`robustsvm.critical_radius`),
        with ``l1`` its λ1.
    X, y : the data (a DataFrame's column names name the signs)
    radius, l1 : None, True or array-like
        The parameter the path varies: its values, or None / True for ``n_points`` values from the critical one
        down to ``ratio`` times it, geometrically.
    cv : int, optional
        Cross-validate the path on ``cv`` stratified parts (:func:`~robustsvm.model_selection.stratified_folds`).
    scoring : str
        One of :data:`SCORERS` (scikit-learn's metric names; larger is better). ``neg_brier_score`` and
        ``neg_log_loss`` score Platt's sigmoid fitted on the training part's decision values.
    class_weight : "balanced", dict or None
        Per-sample loss weights from the labels (:func:`sklearn.utils.class_weight.compute_sample_weight`),
        multiplied by ``sample_weight``; recomputed on each training part.
    solver : str
        A backend or ``"auto"``; a first-order backend that takes a dual starting point is warm-started along
        the path. ``"auto"`` chooses at each point and solves a point again with the next backend when its
        first answer is not certified optimal.
    seed : int or None
        The seed of the stratified parts and the ``random_state`` of the solves (unless ``options`` sets one),
        so a path and its scores are reproducible.
    **options
        The solver's options (``tol``, ``max_iter``, ...).
    """
    if seed is not None:
        options = {"random_state": seed, **options}
    if scoring not in SCORERS:
        raise ValueError(f"scoring must be one of {SCORERS}, got {scoring!r}")
    if radius is not None and l1 is not None:
        raise ValueError("pass radius= or l1=, not both: the path varies one parameter")
    parameter = "l1" if l1 is not None or (radius is None and problem.uncertainty is None) else "radius"
    given = l1 if parameter == "l1" else radius
    given = None if given is True else given
    if parameter == "radius" and problem.uncertainty is None:
        raise ValueError("radius= needs a model with an uncertainty set")
    feature_names = list(X.columns) if hasattr(X, "columns") else None
    X = np.asarray(X, dtype=np.float64) if hasattr(X, "columns") else X
    y = np.asarray(y)
    weights = _weights(y, class_weight, sample_weight)
    values, top = _grid(problem, X, y, parameter, given, n_points, ratio, weights, feature_names)
    scale = _radius_scale(problem, y.shape[0]) if parameter == "radius" else None
    sols = _run(problem, X, y, parameter, values, scale, weights, feature_names, solver, options)
    for sol, v in zip(sols, values, strict=True):  # a constant point's cause, from the critical value known here
        if sol.degenerate is not None and not sol.degenerate.get("explained") and np.isfinite(top):
            sol.degenerate = explain_with_critical(sol.degenerate, sol.w, parameter, float(v), top)
    result = PathResult(parameter=parameter, values=values, critical=top, solutions=sols)
    if cv is None:
        return result
    return _cross_validate(result, problem, X, y, int(cv), scoring, class_weight, sample_weight, feature_names,
                           solver, seed, options)


def _radius_scale(problem: Problem, n: int) -> np.ndarray | float:
    r = np.asarray(problem.uncertainty.radius, dtype=np.float64)
    if r.ndim == 0 or r.size == 0 or r.max() <= 0:
        return 1.0
    if r.shape[0] != n:
        raise ValueError(f"the set has {r.shape[0]} radii but X has {n} samples")
    return r / r.max()


def _cross_validate(result: PathResult, problem: Problem, X: Any, y: np.ndarray, cv: int, scoring: str,
                    class_weight: Any, sample_weight: Any, feature_names: Any, solver: str, seed: Any,
                    options: dict) -> PathResult:
    metric, reads = _scorers()[scoring]
    folds = stratified_folds(y, cv, seed=seed)
    classes = np.unique(y)
    P = result.values.shape[0]
    scores, statuses = np.full((P, cv), np.nan), np.empty((P, cv), dtype=object)
    scale = _radius_scale(problem, y.shape[0]) if result.parameter == "radius" else None
    sw = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    for k in range(cv):
        train, val = np.flatnonzero(folds != k), np.flatnonzero(folds == k)
        part = fold_problem(problem, train)
        weights = _weights(y[train], class_weight, None if sw is None else sw[train])
        sols = _run(part, X[train], y[train], result.parameter, result.values,
                    None if scale is None else (scale if np.ndim(scale) == 0 else scale[train]), weights,
                    feature_names, solver, options)
        truth = (y[val] == classes[1]).astype(int)
        for j, sol in enumerate(sols):
            statuses[j, k] = sol.status
            decision = sol.decision_function(X[val])
            if reads == "decision":
                scores[j, k] = metric(truth, decision)
            elif reads == "predict":
                scores[j, k] = metric(truth, (decision > 0).astype(int))
            else:
                train_truth = np.where(y[train] == classes[1], 1, -1)
                scores[j, k] = metric(truth, _probability(sol.decision_function(X[train]), train_truth, decision))
    result.scores, result.fold_statuses, result.scoring = scores, statuses, scoring
    return result

"""Scores of the grid points on the validation folds, with any scikit-learn scorer.

The model of point ``j`` fitted without fold ``k`` is the linear decision ``f(x) = x·w_{jk} + b_{jk}``;
its score on fold ``k`` is ``scorer(model, X_k, y_k)`` with scikit-learn's scorer convention, the
model seen as a fitted classifier (:func:`fold_model`) with ``decision_function``, ``predict`` and,
for the probability scorers, ``predict_proba`` by Platt's sigmoid (:mod:`robustsvm.estimators.calibration`).

**Probabilities** are those :class:`~robustsvm.RobustSVC` with ``probability=True`` gives after a fit
on the fold's training rows ``T``: the sigmoid is fitted on out-of-fold decision values of a
5-fold stratified split of ``T`` (not shuffled; the point's model refitted on each part, weighted
as the fold is), so no validation row enters it. They cost five more solves per point and fold,
made only when the scorer asks for probabilities.

**A constant model scores as one.** When the certificate of an answer certified optimal cannot tell
``w`` from zero, the fold is scored with ``w = 0``: the objective is λ2-strongly convex in ``w``, so a
point within ``gap`` of the optimum satisfies ``(λ2/2)‖w − w*‖² ≤ gap``, and ``‖w‖₂ ≤ √(2·gap/λ2)``
admits ``w* = 0``. The decision is then the constant ``b`` on every row: ROC AUC 0.5, balanced accuracy
0.5, and accuracy the share of the class ``b`` points to. (Without an L2 term, only ``w = 0`` itself
counts.) An answer not certified optimal is scored with its own ``w``; the selection skips it anyway.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import solve_path
from ..estimators import calibration
from ..problem import Problem
from .points import fold_problem, with_values
from .weights import FoldWeights

__all__ = ["ACCURACY", "PROBABILITY_FOLDS", "Scorer", "check_scoring", "constant_within_gap", "fold_model",
           "score_folds"]

#: the default scorer, computed without scikit-learn
ACCURACY = "accuracy"
#: folds of the split of each training part behind the probabilities (as ``RobustSVC(probability=True)``)
PROBABILITY_FOLDS = 5


@dataclass(frozen=True)
class Scorer:
    """A scorer ``score(model, X, y)`` (larger is better) and the name results report."""

    name: str
    score: Callable[[Any, Any, np.ndarray], float]


def _accuracy(model: Any, X: Any, y: np.ndarray) -> float:
    return float(np.mean(model.predict(X) == y))


@dataclass(frozen=True)
class _Linear:
    """``f(x) = x·coef + intercept`` with ``predict``: all the built-in accuracy needs (no scikit-learn)."""

    coef: np.ndarray
    intercept: float
    classes: np.ndarray

    def predict(self, X: Any) -> np.ndarray:
        return np.asarray(self.classes)[(np.asarray(X @ self.coef).ravel() + self.intercept > 0).astype(np.intp)]


def check_scoring(scoring: str | Callable | None) -> Scorer:
    """The scorer of ``scoring``: a scikit-learn scorer name, a callable ``(model, X, y) → float``, or None.

    None and ``"accuracy"`` are computed here; other names are looked up with
    :func:`sklearn.metrics.get_scorer` (``"roc_auc"``, ``"balanced_accuracy"``, ``"neg_brier_score"``,
    ``"neg_log_loss"``, …).

    Raises
    ------
    ValueError
        A name scikit-learn does not know.
    TypeError
        Neither a string, a callable nor None.
    """
    if scoring is None or (isinstance(scoring, str) and scoring == ACCURACY):
        return Scorer(ACCURACY, _accuracy)
    if isinstance(scoring, str):
        try:
            from sklearn.metrics import get_scorer
        except ImportError as exc:  # pragma: no cover - scikit-learn is an optional dependency
            raise ImportError(f"scoring={scoring!r} needs scikit-learn (pip install scikit-learn)") from exc
        try:
            return Scorer(scoring, get_scorer(scoring))
        except ValueError as exc:
            raise ValueError(f"scoring={scoring!r} is not a scikit-learn scorer name (see "
                             "sklearn.metrics.get_scorer_names())") from exc
    if callable(scoring):
        return Scorer(getattr(scoring, "__name__", type(scoring).__name__), scoring)
    raise TypeError(f"scoring must be a scorer name, a callable (model, X, y) -> float or None, got {scoring!r}")


def constant_within_gap(w: np.ndarray, gap: float, l2: float) -> bool:
    """Whether the certificate admits ``w* = 0``: ``‖w‖₂ ≤ √(2·gap/λ2)`` (only ``w = 0`` without λ2 or a gap)."""
    norm = float(np.linalg.norm(w))
    if l2 > 0 and np.isfinite(gap) and gap >= 0:
        return norm <= np.sqrt(2.0 * gap / l2)
    return norm == 0.0


@functools.cache
def _fold_model_type() -> type:
    from sklearn.base import BaseEstimator, ClassifierMixin

    class FoldModel(ClassifierMixin, BaseEstimator):
        """The linear model of one grid point fitted on one fold's training rows, as a fitted classifier.

        ``decision_function(X) = X·coef + intercept``; ``predict`` gives ``classes[1]`` where it is positive;
        ``predict_proba`` applies Platt's sigmoid, which ``sigmoid()`` fits on first use.
        """

        def __init__(self, coef: Any = None, intercept: float = 0.0, classes: Any = None,
                     sigmoid: Callable[[], calibration.Sigmoid] | None = None) -> None:
            self.coef = coef
            self.intercept = intercept
            self.classes = classes
            self.sigmoid = sigmoid

        @property
        def classes_(self) -> np.ndarray:
            return np.asarray(self.classes)

        def decision_function(self, X: Any) -> np.ndarray:
            return np.asarray(X @ self.coef).ravel() + self.intercept

        def predict(self, X: Any) -> np.ndarray:
            return self.classes_[(self.decision_function(X) > 0).astype(np.intp)]

        def predict_proba(self, X: Any) -> np.ndarray:
            p1 = self._fitted_sigmoid().probability(self.decision_function(X))
            return np.column_stack([1.0 - p1, p1])

        def _fitted_sigmoid(self) -> calibration.Sigmoid:
            """The sigmoid, fitted on the first call and kept on the model."""
            if "_platt" not in self.__dict__:
                if self.sigmoid is None:
                    raise AttributeError("this model has no probabilities")
                self.__dict__["_platt"] = self.sigmoid()
            return self.__dict__["_platt"]

    return FoldModel


def fold_model(coef: np.ndarray, intercept: float, classes: np.ndarray,
               sigmoid: Callable[[], calibration.Sigmoid] | None = None) -> Any:
    """A fitted scikit-learn classifier over ``f(x) = x·coef + intercept`` (see the module docstring)."""
    return _fold_model_type()(coef=coef, intercept=intercept, classes=classes, sigmoid=sigmoid)


@dataclass
class _Search:
    """What scoring a search needs: the oriented model, the data (labels ±1), folds, weights and solver."""

    problem: Problem
    X: Any
    y: np.ndarray
    classes: np.ndarray
    folds: np.ndarray
    weights: FoldWeights | None
    solver: str
    options: dict
    feature_names: Any = None

    def weight_of(self, rows: np.ndarray) -> np.ndarray | None:
        return None if self.weights is None else self.weights.of_rows(rows)

    def sigmoid(self, point: Mapping[str, float], train: np.ndarray) -> calibration.Sigmoid:
        """Platt's sigmoid of the point's model on the rows ``train``, from out-of-fold decision values."""
        from sklearn.model_selection import StratifiedKFold

        y = self.y[train]
        decision = np.empty(train.size)
        split = StratifiedKFold(n_splits=PROBABILITY_FOLDS).split(np.zeros((train.size, 1)), y)
        for inner, held in split:
            rows = train[inner]
            model = fold_problem(with_values(self.problem, point), rows)
            sol = solve_path.solve(model, self.X[rows], y[inner], self.solver, sample_weight=self.weight_of(rows),
                                   feature_names=self.feature_names, stacklevel=4, **self.options)
            decision[held] = sol.decision_function(self.X[train[held]])
        user = None if self.weights is None else self.weights.sample_weight[train]
        return calibration.fit_sigmoid(decision, y > 0, user)


def score_folds(
    problem: Problem,
    X: Any,
    y: np.ndarray,
    classes: np.ndarray,
    folds: np.ndarray,
    points: Sequence[Mapping[str, float]],
    result: Mapping[str, np.ndarray],
    scorer: Scorer,
    *,
    weights: FoldWeights | None = None,
    solver: str = "clarabel",
    solver_options: Mapping[str, Any] | None = None,
    feature_names: Any = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The score of every point on every validation fold, and which models are constant.

    Parameters
    ----------
    problem : Problem
        The model oriented to the labels ±1 (``classes[1]`` is +1).
    X : array or CSR matrix of shape (n, d)
    y : ndarray of shape (n,)
        Labels ±1.
    classes : ndarray of shape (2,)
        The original labels: the scorer sees ``y`` and the predictions in them.
    folds : ndarray of shape (n,)
    points : list of dict
    result : dict
        ``weights`` (P, K, d), ``intercepts`` (P, K), ``gaps`` (P, K) and ``statuses`` (P, K) of the search.
    scorer : Scorer
    weights : FoldWeights, optional
        The loss weights of the folds (for the refits behind probabilities).
    solver, solver_options
        The backend and its options, for those refits.

    Returns
    -------
    scores : ndarray of shape (P, K)
        NaN where the fold has no linear model (a failed solve, a kernel model).
    constant : ndarray of bool, shape (P, K)
        The answer is certified optimal and its certificate admits ``w = 0`` (:func:`constant_within_gap`);
        such a fold is scored as constant. An answer not certified optimal is scored with its own ``w``.
    """
    options = {k: v for k, v in (solver_options or {}).items() if k in ("tol", "max_iter", "verbose")}
    search = _Search(problem, X, y, classes, folds, weights, solver, options, feature_names)
    fold_ids = np.unique(folds)
    labels = np.asarray(classes)[(y > 0).astype(np.intp)]
    P, K = len(points), fold_ids.size
    scores, constant = np.full((P, K), np.nan), np.zeros((P, K), dtype=bool)
    for j, point in enumerate(points):
        l2 = with_values(problem, point).penalty.l2
        for k, fid in enumerate(fold_ids):
            w, b = result["weights"][j, k], float(result["intercepts"][j, k])
            if not (np.all(np.isfinite(w)) and np.isfinite(b)):
                continue
            certified = result["statuses"][j, k] == solve_path.OPTIMAL  # an uncertified answer is scored as given
            constant[j, k] = certified and constant_within_gap(w, float(result["gaps"][j, k]), l2)
            train, val = np.flatnonzero(folds != fid), np.flatnonzero(folds == fid)
            sigmoid = functools.partial(search.sigmoid, point, train)
            coef = np.zeros_like(w) if constant[j, k] else w
            model = _Linear(coef, b, classes) if scorer.score is _accuracy else fold_model(coef, b, classes, sigmoid)
            scores[j, k] = float(scorer.score(model, X[val], labels[val]))
    return scores, constant

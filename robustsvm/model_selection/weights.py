"""The loss weights of a cross-validation fold.

A model fitted on a fold's training rows ``T`` weighs the loss term of sample ``i ∈ T`` by
``s_i · κ_T(y_i)``: the user's ``sample_weight`` ``s_i`` times the class weight of its label,
computed on the training rows alone (``"balanced"``: ``κ_T(c) = |T| / (2 |{i ∈ T : y_i = c}|)``),
exactly as :class:`~robustsvm.RobustSVC` weighs a fit on those rows, so a cross-validation of the
grid and one of scikit-learn over the estimator solve the same models.

A program compiled once on all rows (:func:`robustsvm.model_selection.folds.evaluate_chunk`) reaches the
same weights through one parameter per (fold, class) group: ``g_{(k, c)} = 1[k ≠ k_val] κ_T(c)``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validation import check_sample_weight
from ..estimators.multiclass import class_sample_weight

__all__ = ["FoldWeights", "fold_weights"]

_CLASSES = np.array([-1, 1])


@dataclass(frozen=True)
class FoldWeights:
    """The user's per-sample weights and class weights, resolved against labels ``y ∈ {−1, +1}``.

    Attributes
    ----------
    sample_weight : ndarray of shape (n,)
        ``s_i ≥ 0`` (ones when none was given).
    class_weight : None, "balanced" or dict {−1: κ₋, +1: κ₊}
    y : ndarray of shape (n,)
        The labels, ±1.
    """

    sample_weight: np.ndarray
    class_weight: Any
    y: np.ndarray

    def of_rows(self, rows: np.ndarray) -> np.ndarray:
        """``s_i κ_T(y_i)`` for the rows ``T = rows`` (the class weights computed on those rows)."""
        y = self.y[rows]
        return self.sample_weight[rows] * class_sample_weight(self.class_weight, _CLASSES, y)

    def groups(self, folds: np.ndarray) -> np.ndarray:
        """One group label per sample, ``2·fold + [y_i = +1]``: the (fold, class) pairs of a compiled program."""
        fold_index = np.unique(folds, return_inverse=True)[1]
        return 2 * fold_index + (self.y > 0)

    def group_weight(self, folds: np.ndarray, validation: Any) -> np.ndarray:
        """``g`` per group label of :meth:`groups` (in sorted order) for the fold ``validation`` held out."""
        fold_ids = np.unique(folds)
        labels = np.unique(self.groups(folds))
        train_y = self.y[folds != validation]
        kappa = class_sample_weight(self.class_weight, _CLASSES, train_y)
        by_class = {int(c): float(kappa[train_y == c][0]) for c in np.unique(train_y)}
        return np.array([0.0 if fold_ids[label // 2] == validation else by_class.get(1 if label % 2 else -1, 0.0)
                         for label in labels])

def fold_weights(y_pm: np.ndarray, classes: np.ndarray, sample_weight: Any = None,
                 class_weight: Any = None) -> FoldWeights | None:
    """The weights of :func:`~robustsvm.model_selection.grid_search` (None when neither is given).

    Parameters
    ----------
    y_pm : ndarray of shape (n,)
        Labels mapped to ±1 (``classes[1]`` is +1).
    classes : ndarray of shape (2,)
        The original labels, which the keys of a ``class_weight`` mapping name.
    sample_weight : array-like of shape (n,), optional
    class_weight : None, "balanced" or mapping {label: weight}

    Raises
    ------
    ValueError
        For a negative, NaN or misshapen ``sample_weight``, or a ``class_weight`` that is not
        ``"balanced"`` or a mapping of the classes of ``y``.
    """
    if sample_weight is None and class_weight is None:
        return None
    n = y_pm.shape[0]
    sw = check_sample_weight(sample_weight, n)
    if isinstance(class_weight, Mapping):  # keyed by the labels ±1 the folds see (validated against ``classes``)
        kappa = class_sample_weight(class_weight, classes, classes)
        class_weight = {-1: float(kappa[0]), 1: float(kappa[1])}
    elif class_weight is not None:
        class_sample_weight(class_weight, classes, classes)  # "balanced", or an error naming the argument
    return FoldWeights(sample_weight=sw, class_weight=class_weight, y=np.asarray(y_pm))

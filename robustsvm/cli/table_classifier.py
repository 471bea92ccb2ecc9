"""A classifier of a table's raw rows that learns the preprocessing statistics from the rows it is fitted on.

``cv`` cross-validates the whole procedure of ``fit`` and ``predict``: in each training fold,
:class:`TableClassifier` refits the statistics of the preprocessing rules on the fold's rows
(:meth:`robustsvm.tabular.preprocessing.Preprocessing.refit_statistics`: the fill values of ``--impute median``
and the z-score means and scales), rebuilds the priors that read the z-scores (the ordering constraints of
``--ordered``: :meth:`robustsvm.cli.priors.TablePriors.scaled_parameters`), fits its
:class:`~robustsvm.RobustSVC` on the fold's features and scores the held-out rows through the fold's rules, as
scikit-learn's ``Pipeline`` of a scaler and a classifier does. The columns, categories and reference levels stay
those of the whole table (the feature space; its labels are not read).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

__all__ = ["TableClassifier"]


def _inner_has_probability(self: TableClassifier) -> bool:
    return hasattr(self.estimator, "predict_proba")


class TableClassifier(ClassifierMixin, BaseEstimator):
    """``estimator`` on the features that ``rules``, refitted on the training rows, make of a table's rows.

    ``fit(table, y)``: ``rules_ = rules.refit_statistics(table, y)``; ``estimator_`` is a clone of ``estimator``
    with ``priors.scaled_parameters(rules_)`` set, fitted on ``rules_.transform(table, y).X`` (a DataFrame with the
    features' names, so signs and bounds by name resolve). ``decision_function``, ``predict`` and
    ``predict_proba`` apply ``rules_`` to the rows given, then ``estimator_``.

    Parameters
    ----------
    rules : Preprocessing
        The rules fitted on the whole table: their columns, kinds, categories and reference levels are kept,
        their statistics learned anew at each ``fit``.
    estimator : RobustSVC
        The classifier of the preprocessed features (its parameters are this one's ``estimator__...``).
    priors : TablePriors, optional
        Gives the estimator's parameters that depend on the rules' z-scores (``--ordered``); None: none do.
    """

    def __init__(self, rules: Any, estimator: Any, priors: Any = None) -> None:
        self.rules = rules
        self.estimator = estimator
        self.priors = priors

    def fit(self, X: Any, y: Any) -> TableClassifier:
        """Learn the rules' statistics from the rows ``X`` (a DataFrame of the table's columns), then fit.

        Returns
        -------
        self
        """
        self.rules_ = self.rules.refit_statistics(X, y)
        prepared = self.rules_.transform(X, y)
        if prepared.rows.size != len(X):
            raise ValueError(f"the preprocessing keeps {prepared.rows.size} of {len(X)} rows: drop the rows with "
                             "missing values before the folds")
        inner = clone(self.estimator)
        if self.priors is not None:
            inner.set_params(**self.priors.scaled_parameters(self.rules_))
        self.estimator_ = inner.fit(self._named(prepared.X), prepared.y)
        self.classes_ = self.estimator_.classes_
        return self

    def _features(self, X: Any) -> Any:
        """The features ``rules_`` makes of the rows ``X``, every row kept (a row it cannot score is an error)."""
        check_is_fitted(self, "estimator_")
        prepared = self.rules_.transform(X, predict=True)
        if prepared.rows.size != len(X):
            raise ValueError(f"{len(X) - prepared.rows.size} of {len(X)} rows have missing values the preprocessing "
                             "does not impute: drop them before the folds")
        return self._named(prepared.X)

    def _named(self, Z: np.ndarray) -> Any:
        import pandas as pd

        return pd.DataFrame(Z, columns=self.rules.feature_names)

    def decision_function(self, X: Any) -> np.ndarray:
        """The estimator's decision values of the rows ``X`` through the fitted rules."""
        return self.estimator_.decision_function(self._features(X))

    def predict(self, X: Any) -> np.ndarray:
        """The estimator's labels of the rows ``X`` through the fitted rules."""
        return self.estimator_.predict(self._features(X))

    @available_if(_inner_has_probability)
    def predict_proba(self, X: Any) -> np.ndarray:
        """The estimator's class probabilities of the rows ``X`` through the fitted rules."""
        return self.estimator_.predict_proba(self._features(X))

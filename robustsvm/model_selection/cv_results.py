"""The scores of a cross-validated grid, from the package's :class:`GridResult` or a fitted scikit-learn search.

Figures and reports read one shape: the grid points (numbers per parameter), the score of every
point on every fold, the point the search chose and the scorer's name. :func:`grid_scores` builds
it from a :class:`~robustsvm.model_selection.grid.GridResult` or from a fitted ``GridSearchCV`` /
``RandomizedSearchCV`` (its ``cv_results_``: ``params`` and ``split{k}_test_score``; with several
metrics, those of ``refit``). A parameter ``name`` whose values are uncertainty sets is read as their
radius, under ``name__radius`` (scikit-learn's name of that radius).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .grid import GridResult

__all__ = ["GridScores", "grid_scores"]


@dataclass(frozen=True)
class GridScores:
    """Points, fold scores, the chosen point and the scorer of a cross-validated grid.

    Attributes
    ----------
    points : list of dict
        Each point's numeric parameters (an uncertainty set as its radius).
    scores : ndarray of shape (n_points, n_folds)
    best_index : int
        The point the search chose.
    scoring : str
    """

    points: list[dict]
    scores: np.ndarray
    best_index: int
    scoring: str

    def parameter(self, name: str) -> str:
        """The grid parameter ``name`` or the one that ends in ``__name`` (``"l2"`` for ``"robustsvc__l2"``).

        Raises
        ------
        ValueError
            No parameter, or several, go by that name (the message lists the parameters).
        """
        keys = sorted(self.points[0])
        if name in keys and all(name in p for p in self.points):
            return name
        found = [k for k in keys if k.endswith(f"__{name}") and all(k in p for p in self.points)]
        if len(found) != 1:
            what = "no parameter" if not found else f"several parameters ({found}) for"
            raise ValueError(f"the grid has {what} {name!r}; its parameters: {keys}")
        return found[0]

    def groups(self, parameter: str) -> dict[tuple, list[int]]:
        """The points by the values of the other parameters: ``{((name, value), ...): [point indices]}``."""
        out: dict[tuple, list[int]] = {}
        for k, p in enumerate(self.points):
            out.setdefault(tuple(sorted((key, v) for key, v in p.items() if key != parameter)), []).append(k)
        return out


def _numeric(name: str, value: Any) -> tuple[str, float] | None:
    """``(name, number)`` of a parameter value; an uncertainty set as ``(name__radius, its radius)``; else None."""
    if not isinstance(value, (int, float, np.number)) and hasattr(value, "radius"):
        name, value = f"{name}__radius", value.radius
    if np.ndim(value) != 0 or isinstance(value, (str, bool)) or not isinstance(value, (int, float, np.number)):
        return None
    return name, float(value)


def _from_search(search: Any) -> GridScores:
    results = search.cv_results_
    metric = "score"
    scoring = search.scoring
    if isinstance(scoring, (dict, list, tuple, set)):
        if not isinstance(search.refit, str):
            raise ValueError("a search with several metrics needs refit=<metric name> to say which one to draw")
        metric, scoring = search.refit, search.refit
    tail = f"_test_{metric}"
    splits = sorted(int(k[5:-len(tail)]) for k in results if k.startswith("split") and k.endswith(tail))
    scores = np.column_stack([np.asarray(results[f"split{k}_test_{metric}"], dtype=np.float64) for k in splits])
    # a parameter that is not a number (nor a set with one radius) stays off the axes
    points = [dict(filter(None, (_numeric(k, v) for k, v in p.items()))) for p in results["params"]]
    best = int(getattr(search, "best_index_", np.argmin(results[f"rank_test_{metric}"])))
    name = scoring if isinstance(scoring, str) else ("accuracy" if scoring is None else getattr(
        scoring, "__name__", type(scoring).__name__))
    return GridScores(points=points, scores=scores, best_index=best, scoring=name)


def grid_scores(grid: Any) -> GridScores:
    """The :class:`GridScores` of a :class:`GridResult` or of a fitted scikit-learn search.

    Raises
    ------
    TypeError
        Neither a GridResult nor a search with ``cv_results_`` (an unfitted ``GridSearchCV`` included).
    """
    if isinstance(grid, GridResult):
        return GridScores(points=[dict(p) for p in grid.points], scores=np.asarray(grid.scores, dtype=np.float64),
                          best_index=grid.best_index, scoring=grid.scoring)
    if hasattr(grid, "cv_results_") and hasattr(grid, "scoring"):
        return _from_search(grid)
    if hasattr(grid, "param_grid") or hasattr(grid, "param_distributions"):
        raise TypeError(f"the {type(grid).__name__} is not fitted: call fit(X, y) first")
    raise TypeError(f"grid must be a GridResult of robustsvm.grid_search or a fitted scikit-learn GridSearchCV, "
                    f"got {type(grid).__name__}")

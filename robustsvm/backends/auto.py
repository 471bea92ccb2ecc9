"""``solver="auto"``: which backend solves a model fastest, from its form and the data's shape.

The rule, measured in ``benchmarks/results/robust.md``:

* a robust model that ``feature-ipm`` accepts, with at most :data:`FEATURE_IPM_MAX_FEATURES` features: the
  feature-space interior point (``O(n d²)`` per iteration, about 15–25 iterations whatever the conditioning);
* a robust model with more features that ``robust-dcd`` accepts: the dual coordinate ascent (``O(nnz)`` per
  epoch; its epoch count grows as λ2 shrinks, but a Gram matrix of many features costs more);
* anything else: ``clarabel``.

A caller that gets a first-order answer short of its tolerance refits with ``clarabel`` (see
:class:`robustsvm.RobustSVC`).
"""

from __future__ import annotations

from typing import Any

from .registry import get_backend

__all__ = ["FEATURE_IPM_MAX_FEATURES", "choose_backend"]

#: the largest number of features for which ``"auto"`` prefers ``feature-ipm`` to ``robust-dcd``
FEATURE_IPM_MAX_FEATURES = 128


def choose_backend(problem: Any, n_features: int) -> str:
    """The backend ``"auto"`` stands for, for ``problem`` on data with ``n_features`` columns.

    Parameters
    ----------
    problem : Problem
    n_features : int
        ``d``, the number of columns of ``X``.

    Returns
    -------
    str
        ``"feature-ipm"``, ``"robust-dcd"`` or ``"clarabel"``.
    """
    if problem.uncertainty is not None:
        if n_features <= FEATURE_IPM_MAX_FEATURES and get_backend("feature-ipm").accepts(problem):
            return "feature-ipm"
        if get_backend("robust-dcd").accepts(problem):
            return "robust-dcd"
    return "clarabel"

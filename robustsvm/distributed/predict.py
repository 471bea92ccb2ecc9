"""Decisions and the per-sample robust check on a dask array: lazy dask arrays, one task per row chunk."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..uncertainty.certificate import RobustCheck

__all__ = ["decision_function", "robust_check"]


def _decision(block: Any, w: np.ndarray, b: float) -> np.ndarray:
    return np.asarray(block @ w).ravel() + b


def _columns(X: Any, d: int, name: str = "X"):
    if X.ndim != 2:
        raise ValueError(f"{name} must be two-dimensional (n_samples, n_features), got shape {X.shape}")
    if X.shape[1] != d:
        raise ValueError(f"{name} has {X.shape[1]} features, but the model was fitted with {d}")
    return X.rechunk({1: -1}) if len(X.chunks[1]) > 1 else X


def decision_function(X: Any, w: np.ndarray, b: float):
    """``X w + b`` as a dask array of shape (n,), chunked like the rows of ``X`` (nothing is computed)."""
    w = np.asarray(w, dtype=np.float64)
    X = _columns(X, w.shape[0])
    return X.map_blocks(_decision, w, float(b), drop_axis=1, dtype=np.float64)


def _labels(y: Any, chunks: tuple, classes: np.ndarray):
    import dask.array as da

    if not hasattr(y, "rechunk"):
        y = da.from_array(np.asarray(y), chunks=(chunks,))
    return y.rechunk({0: chunks})


def _pm(y: np.ndarray, classes: np.ndarray) -> np.ndarray:
    if not np.all(np.isin(y, classes)):
        raise ValueError(f"y holds labels outside the solution's classes {classes.tolist()}")
    return np.where(y == classes[1], 1.0, -1.0)


def robust_check(solution: Any, X: Any, y: Any, *, tol: float = 1e-6) -> RobustCheck:
    """:func:`robustsvm.robust_check` on a dask array: the per-sample arrays are dask arrays (lazy), the maximum
    disagreement is computed (one pass). One set shared by every sample: its two maximizers (``z = −w`` for
    ``y = +1``, ``z = w`` for ``y = −1``) are computed once on the client.
    """
    import dask.array as da

    if getattr(solution, "w", None) is None:
        raise ValueError("robust_check needs a linear solution with weights w")
    w, b = np.asarray(solution.w, dtype=np.float64), float(solution.b)
    X = _columns(X, w.shape[0])
    classes = np.asarray(solution.classes)
    y_pm = _labels(y, X.chunks[0], classes).map_blocks(_pm, classes, dtype=np.float64)
    nominal = y_pm * decision_function(X, w, b)
    unc = solution.problem.uncertainty
    if unc is None:
        zeros = da.zeros(X.shape, chunks=X.chunks)
        return RobustCheck(zeros, nominal, nominal, da.ones(X.shape[0], dtype=bool, chunks=X.chunks[0]), 0.0, tol)
    if isinstance(unc, (list, tuple)) or np.ndim(unc.radius) != 0:
        raise ValueError("on a dask array robust_check takes one shared set with one radius")
    r = float(unc.radius)
    v_pos, v_neg = (np.asarray(unc.worst_case(z), dtype=np.float64).ravel() for z in (-w, w))
    inside = np.array([bool(unc.contains(v_pos, tol=tol)), bool(unc.contains(v_neg, tol=tol))])
    s_pos, s_neg = float(unc.support((-w)[None])[0]), float(unc.support(w[None])[0])
    pos = y_pm > 0
    V = da.where(pos[:, None], v_pos[None, :], v_neg[None, :])
    worst = nominal + y_pm * r * da.where(pos, float(v_pos @ w), float(v_neg @ w))
    robust = nominal - r * da.where(pos, s_pos, s_neg)
    contained = da.where(pos, inside[0], inside[1])
    return RobustCheck(perturbations=V, worst_margins=worst, robust_margins=robust, contained=contained,
                       max_disagreement=float(abs(worst - robust).max().compute()), tol=tol)

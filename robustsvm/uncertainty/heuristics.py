"""The radius grid bound of Woolnough et al. (2022), §5.2 (a heuristic: not where a model becomes constant)."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.spatial.distance import cdist

from .._validation import check_labels, check_X

__all__ = ["radius_upper_bound"]


def radius_upper_bound(X: Any, y: Any, *, p: float = 2, chunk_size: int = 1024) -> float:
    """The upper end of Woolnough et al. (2022)'s radius grid: a heuristic, kept for their protocol.

    ``U = max_c min_{i ∈ c} max_{j ∉ c} ‖x_i − x_j‖_p``: for each sample, the
    largest distance to a sample of the other class; the smallest such value
    within each class; the largest over the two classes. Woolnough et al.
    (2022) tune the radius on an exponential grid from ``2^-20`` up to ``U``.

    ``U`` is no guide to useful radii: it ignores the loss, λ1, the signs, the
    intercept and the set's shape, and a robust model is usually constant far
    below it (on a GBSG2-like table, a Box model at radius 0.12 against
    ``U ≈ 7.6``). The radius at which ``w = 0`` becomes optimal is
    :func:`robustsvm.critical_radius`, exactly; :func:`robustsvm.model_selection.path`
    starts there.

    Parameters
    ----------
    X : array-like or scipy.sparse matrix of shape (n, d)
    y : array-like of shape (n,)
        Two classes.
    p : float, default 2
        The norm of the distance (``p ≥ 1`` or ``np.inf``). A sparse ``X``
        supports ``p = 2`` only, computed from inner products without
        densifying.
    chunk_size : int, default 1024
        Rows of one class processed at a time (memory ``chunk_size × n``).

    Returns
    -------
    float
    """
    X = check_X(X)
    y_pm, _ = check_labels(y, X.shape[0])
    p = float(p)
    if np.isnan(p) or p < 1:
        raise ValueError(f"p must be ≥ 1 or np.inf, got {p!r}")
    if sp.issparse(X) and p != 2:
        raise ValueError("a sparse X supports p = 2 only")
    if int(chunk_size) < 1:
        raise ValueError(f"chunk_size must be a positive integer, got {chunk_size!r}")
    per_class = []
    for label in (-1, 1):
        A = X[y_pm == label]
        B = X[y_pm != label]
        per_class.append(float(np.min(_farthest(A, B, p, int(chunk_size)))))
    return max(per_class)


def _farthest(A, B, p: float, chunk: int) -> np.ndarray:
    """``max_j ‖a_i − b_j‖_p`` for each row ``a_i`` of ``A``."""
    out = np.empty(A.shape[0])
    if sp.issparse(A):
        nb = np.asarray(B.multiply(B).sum(axis=1)).ravel()
        for s in range(0, A.shape[0], chunk):
            Ac = A[s:s + chunk]
            na = np.asarray(Ac.multiply(Ac).sum(axis=1)).ravel()
            sq = na[:, None] + nb[None, :] - 2.0 * np.asarray((Ac @ B.T).todense())
            out[s:s + chunk] = np.sqrt(np.maximum(sq.max(axis=1), 0.0))
        return out
    metric_kw = {"metric": "chebyshev"} if np.isinf(p) else {"metric": "minkowski", "p": p}
    for s in range(0, A.shape[0], chunk):
        out[s:s + chunk] = cdist(A[s:s + chunk], B, **metric_kw).max(axis=1)
    return out

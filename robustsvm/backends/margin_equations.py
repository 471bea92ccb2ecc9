"""A primal point from the margin equations of the free samples (hinge loss, L2 penalty, signs).

At the optimum of the hinge SVM every free sample (``0 < α_i < 1``) lies on its margin, ``y_i (x_i·w + b) = 1``,
and ``λw = Σ_i c_i y_i α_i x_i`` on the features the signs leave free. A dual coordinate method finds α to a high
accuracy long before its primal iterates put the free samples on their margins: the duality gap of a primal point
is first order in its margin errors, the dual error second order (``docs/derivations/dcd.md`` §4). Given α, the
free samples ``F`` and the free features ``H``, the point of this module solves those equations for the
multipliers of ``F`` with the intercept held at its current value ``b``:

    ``A Aᵀ Δβ = λ (1 − y_F ∘ (X_{F,H} w(α)_H + b))``,   ``A = diag(y_F) X_{F,H}``,
    ``w_H = w(α)_H + Aᵀ Δβ / λ``   (``Δβ`` the change of ``c_F ∘ α_F``),

by preconditioned MINRES from ``Δβ = 0`` (the residual norm, which bounds the margin errors, falls at every
iteration). ``A Aᵀ`` of bag-of-words rows is ill-conditioned through its frequent columns (a column in ``k`` rows
adds an eigenvalue of about ``k``); the preconditioner keeps those columns and the diagonal of the others,
``M = D + C Cᵀ``, inverted by the Woodbury identity. The point is only a candidate: the caller projects it on the
signs, evaluates its primal objective exactly at its best intercept and keeps it only where it is lower, so a
wrong guess of the partition costs time, never correctness.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla

from . import _margin_kernels as mk
from ._products_kernels import matvec_sparse

__all__ = ["DEFLATED_COLUMNS", "MAX_ITER", "margin_point"]

#: MINRES iterations per candidate (each: two products with the rows of the free samples)
MAX_ITER = 25
#: the most frequent columns among the free samples' rows that the preconditioner keeps exactly
DEFLATED_COLUMNS = 200


def margin_point(parts: tuple, y: np.ndarray, alpha: np.ndarray, upper: float, v: np.ndarray, free: np.ndarray,
                 lam: float, b: float | None, max_iter: int = MAX_ITER) -> np.ndarray | None:
    """The candidate ``w`` from the margin equations of the free samples, or None (no free sample).

    Parameters
    ----------
    parts : tuple
        ``(indptr, indices, data)`` of the CSR rows of ``X`` (:func:`._products_kernels.csr_parts`), or of ``X``
        without some features, none of which is in ``free``.
    y, alpha : ndarray
        Labels ±1 and the dual point, ``0 ≤ α ≤ upper``.
    upper : float
        The upper end of the dual box (1 for the hinge).
    v : ndarray
        ``Σ_i c_i y_i α_i x_i`` on every feature.
    free : ndarray of bool
        The features the signs leave free at ``v`` (``H``): ``w(α)_h = v_h/λ`` there, 0 elsewhere.
    lam : float
        The L2 weight λ.
    b : float or None
        The intercept held fixed in the margins (a free intercept's current value; its exact value for the
        returned ``w`` is the caller's to find), None without one.
    max_iter : int
        MINRES iterations.

    Returns
    -------
    ndarray or None
        ``w`` (zero outside ``H``; not yet projected on the signs), or None when no sample is free or the
        iteration broke down.
    """
    F = np.flatnonzero((alpha > 0.0) & (alpha < upper))
    if F.size == 0:
        return None
    ptr, cols, vals, features = mk.gather_rows(*parts, F.astype(np.int64), free, y)
    rows, n_cols = mk.GatheredRows(ptr, cols, vals), features.size
    w0 = np.where(free, v, 0.0) / lam
    margins = matvec_sparse(ptr, cols, vals, w0[features]) + (0.0 if b is None else y[F] * b)
    step = mk.minres_solve(rows, n_cols, _deflation(rows, n_cols), lam * (1.0 - margins), int(max_iter))
    if not np.all(np.isfinite(step)):
        return None
    t = np.empty(n_cols)
    mk.transposed_into(ptr, cols, vals, step, t)
    w = w0.copy()
    w[features] += t / lam
    return w


def _deflation(rows, n_cols: int):
    """The preconditioner ``M = D + C Cᵀ`` of the gathered rows (:data:`._margin_kernels.Deflation`): ``C`` their
    :data:`DEFLATED_COLUMNS` most frequent columns (each in two rows at least), ``D`` the squared row norms on the
    others plus a thousandth of the mean squared row norm (so that ``D`` stays positive on a row whose entries are
    all in ``C``), ``I + Cᵀ D⁻¹ C`` by its Cholesky factor."""
    counts = np.bincount(rows.cols, minlength=n_cols)
    k = int(min(DEFLATED_COLUMNS, np.count_nonzero(counts > 1)))
    position = np.full(n_cols, -1, dtype=np.int64)
    if k:
        position[np.argpartition(counts, n_cols - k)[n_cols - k:]] = np.arange(k)
    shift = 1e-3 * max(float(rows.vals @ rows.vals) / max(rows.ptr.size - 1, 1), 1e-300)
    D, S, cptr, cpos, cval = mk.deflation_parts(rows.ptr, rows.cols, rows.vals, position, k, shift)
    R = sla.cholesky(S, lower=False, check_finite=False) if k else np.zeros((0, 0))
    return mk.Deflation(cptr, cpos, cval, D, R, np.ascontiguousarray(R.T))

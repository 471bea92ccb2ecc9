"""A primal point from the margin equations of the free samples (hinge loss, L2 penalty, signs).

At the optimum of the hinge SVM every free sample (``0 < α_i < 1``) lies on its margin, ``y_i (x_i·w + b) = 1``,
and ``λw = Σ_i c_i y_i α_i x_i`` on the features the signs leave free. A dual coordinate method finds α to a high
accuracy long before its primal iterates put the free samples on their margins: the duality gap of a primal point
is first order in its margin errors, the dual error second order (``docs/derivations/dcd.md`` §4). Given α, the
free samples ``F`` and the free features ``H``, the point of this module solves those equations for the
multipliers of ``F`` with the intercept held at its current value ``b``:

    ``A Aᵀ Δβ = λ (1 − y_F ∘ (X_{F,H} w(α)_H + b))``,   ``A = diag(y_F) X_{F,H}``,
    ``w_H = w(α)_H + Aᵀ Δβ / λ``   (``Δβ`` the change of ``c_F ∘ α_F``),

by preconditioned MINRES from ``Δβ = 0`` or from an earlier point's multipliers (the residual norm falls at every
iteration), stopped once the margin errors of the free samples cost less than the caller's target at first order
(the point's primal excess over the equations' exact solution is about half that cost). ``A Aᵀ`` of bag-of-words
rows is ill-conditioned through its frequent columns (a column in ``k`` rows adds an eigenvalue of about ``k``); the
preconditioner keeps the columns of large energy and the diagonal of the others, ``M = D + C Cᵀ``, inverted by the
Woodbury identity. The point is only a candidate: the caller projects it on the
signs, evaluates its primal objective exactly at its best intercept and keeps it only where it is lower, so a
wrong guess of the partition costs time, never correctness.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
from scipy.linalg import lapack

from . import _margin_kernels as mk

__all__ = ["DEFLATION_ENERGY", "MAX_ITER", "MarginPoint", "margin_point"]

#: the candidate of :func:`margin_point`: ``w``, the multipliers ``c∘α + Δβ`` of the free samples (``c∘α``
#: elsewhere; the start of a later point) and the MINRES iterations it took
MarginPoint = namedtuple("MarginPoint", ["w", "multipliers", "iterations"])

#: MINRES iterations per candidate at most (each: two products with the rows of the free samples); fewer once the
#: margin errors cost less than the caller's target
MAX_ITER = 40
#: the preconditioner keeps exactly the columns whose energy is at least this multiple of a row's mean energy
DEFLATION_ENERGY = 2.0


def margin_point(parts: tuple, y: np.ndarray, alpha: np.ndarray, upper: float, v: np.ndarray, free: np.ndarray,
                 lam: float, b: float | None, max_iter: int | None = None, *, c: np.ndarray | None = None,
                 start: np.ndarray | None = None, target: float = 0.0) -> MarginPoint | None:
    """The candidate ``w`` from the margin equations of the free samples, or None (below).

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
    max_iter : int, optional
        MINRES iterations at most (default :data:`MAX_ITER`).
    c : ndarray, optional
        The loss coefficients ``c_i`` (default ``1/n``): the weights of the margin errors in ``target``.
    start : ndarray, optional
        The multipliers ``c∘α + Δβ`` of an earlier point (its :attr:`MarginPoint.multipliers`): the solve starts
        from ``Δβ = start_F − c_F∘α_F``, the same point written from the current α (the free set changes little
        between two certificates, so the start is close), instead of 0.
    target : float
        Stop MINRES once the margin errors of the free samples cost at most this much at first order,
        ``Σ_{i∈F} c_i |1 − y_i(x_i·w + b)| < target`` (0: run ``max_iter`` iterations).

    Returns
    -------
    MarginPoint or None
        ``w`` (zero outside ``H``; not yet projected on the signs), the multipliers ``c∘α + Δβ`` (length n) and
        the MINRES iterations, or None when no sample is free, when the free samples are at least as many as the
        free features their rows touch (``A Aᵀ`` is then singular: the equations have no solution in general, as
        on dense rows or sparse rows over few features), or when the iteration broke down.
    """
    F = np.flatnonzero((alpha > 0.0) & (alpha < upper))
    if F.size == 0 or F.size >= np.count_nonzero(free):
        return None
    c = np.full(y.size, 1.0 / y.size) if c is None else c
    ptr, cols, vals, features = mk.gather_rows(*parts, F.astype(np.int64), free, y)
    if vals.size < 2**32:  # unsigned offsets as well: half the time of a product with A Aᵀ (derivation §4)
        ptr = ptr.astype(np.uint32)
    n_cols = features.size
    if F.size >= n_cols:  # rank(A Aᵀ) ≤ n_cols < |F|: the free samples cannot all be put on their margins
        return None
    rows, pre, features = _deflation(mk.GatheredRows(ptr, cols, vals), features)
    if pre is None:
        return None
    ptr, cols, vals = rows
    w0, rhs = mk.margin_rhs(ptr, cols, vals, free, v, features, y, F, 0.0 if b is None else float(b), b is not None,
                            float(lam))
    cF = c[F]
    x0 = None
    if start is not None:  # A Aᵀ (x0 + x) = rhs solved for the correction x
        x0 = start[F] - cF * alpha[F]
        product = np.empty(F.size)
        mk.gram_into(ptr, cols, vals, x0, product, np.empty(n_cols))
        rhs -= product
    iterations = int(MAX_ITER if max_iter is None else max_iter)
    step, done = mk.minres_solve(rows, n_cols, pre, rhs, iterations, cF / lam, float(target))
    if x0 is not None:
        step += x0
    if not np.all(np.isfinite(step)):
        return None
    w, multipliers = mk.margin_weights(ptr, cols, vals, step, w0, features, float(lam), c, alpha, F)
    return MarginPoint(w, multipliers, int(done))


def _deflation(rows, features: np.ndarray):
    """The preconditioner ``M = D + C Cᵀ`` of the gathered rows: ``(rows, pre, features)`` with the rows (in place)
    and ``features`` renumbered so that ``C`` comes first (:func:`._margin_kernels.deflate_rows`) and ``pre`` their
    :data:`._margin_kernels.Deflation`. ``C``: the columns whose energy ``Σ_i a_ij²`` (the eigenvalue a column adds
    to ``A Aᵀ``) is at least :data:`DEFLATION_ENERGY` times the mean energy of a row (the typical entry of ``D``),
    each in two rows at least, the most energetic ``⌊√nnz(A)⌋`` of them at most (so that the two triangular solves
    with its factor cost no more than one product with ``A``); ``D`` the squared row norms on the others plus a
    thousandth of the mean squared row norm (so that ``D`` stays positive on a row whose entries are all in
    ``C``); ``I + Cᵀ D⁻¹ C`` by its Cholesky factor."""
    n_cols = features.size
    energy, mean_row, above = mk.deflation_energy(rows.cols, rows.vals, rows.ptr.size - 1, n_cols, DEFLATION_ENERGY)
    k = int(min(above, math.isqrt(rows.vals.size), n_cols))
    position = np.full(n_cols, -1, dtype=np.int64)
    if k:
        position[np.argpartition(energy, n_cols - k)[n_cols - k:]] = np.arange(k)
    shift = 1e-3 * max(mean_row, 1e-300)
    mid, label, D, S = mk.deflate_rows(rows.ptr, rows.cols, rows.vals, position, k, shift)
    renumbered = np.empty_like(features)
    renumbered[label] = features
    return rows, _factored(mid, D, S), renumbered


def _factored(mid: np.ndarray, D: np.ndarray, S: np.ndarray):
    """The :data:`._margin_kernels.Deflation` of ``D`` and ``S = I + Cᵀ D⁻¹ C`` given by its upper triangle
    (``mid``: where each row's entries in ``C`` end): ``S = RᵀR`` by its upper Cholesky factor ``R``, computed in the
    memory of ``S`` (read in Fortran order, its upper triangle is the lower one of ``S``, which LAPACK factors in
    place as ``L Lᵀ``, and that memory read in C order is ``R = Lᵀ``); None if the factorization fails."""
    if S.shape[0] == 0:
        R = np.zeros((0, 0))
    else:
        factor, info = lapack.dpotrf(S.T, lower=1, clean=0, overwrite_a=1)  # the other triangle is 0 already
        if info != 0:  # S = I + Cᵀ D⁻¹ C is positive definite: only a rounding disaster lands here
            return None
        R = factor.T
    diagonal = np.diag(R)
    return mk.Deflation(mid, D, 1.0 / D, np.ascontiguousarray(R.T), np.ascontiguousarray(R[::-1, ::-1]),
                        1.0 / diagonal, np.ascontiguousarray(1.0 / diagonal[::-1]))

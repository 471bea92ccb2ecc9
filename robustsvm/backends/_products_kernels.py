"""Compiled products over the data for the certificates of the dual coordinate methods: the class images
``Σ_{y_i=±1} u_i x_i``, ``X w`` and both in one pass, the squared row norms, and CSR rows without some columns
(with the scan of the features that dcd freezes).

Single-threaded loops rather than BLAS: they are memory-bound, and a threaded BLAS call on a busy machine can cost
more in thread wake-ups than the product itself.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from ._compiled import FASTMATH

__all__ = ["any_nonzero_at", "balanced_alpha", "certificate_dense", "certificate_sparse", "clip_to_signs",
           "clipped_entries", "column_counts", "csr_parts", "dual_images_dense", "dual_images_sparse", "freeze_scan",
           "matvec_dense", "matvec_sparse", "restrict_columns", "restrict_columns_into", "resync", "row_sq_norms",
           "row_sq_norms_and_counts", "sign_bounds", "sign_free", "signs_energy", "zero_where"]


_UINT32_MAX = np.iinfo(np.uint32).max


def csr_parts(X) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(indptr, indices, data)`` of a CSR ``X`` as the compiled loops read them: the column indices as uint32
    (and ``indptr`` too while ``nnz`` fits), ``data`` as contiguous float64.

    numba adds a negative-index wraparound to every read ``w[h]`` with a signed ``h`` loaded from memory; with
    unsigned indices there is none, and a sparse epoch over the Cora-shaped rows takes 0.55 ms instead of 0.91 ms
    (``docs/derivations/dcd.md`` §5). ``indptr`` stays int64 beyond 2³² stored entries (uint64 would mix with
    the signed loop counters into float64)."""
    if X.shape[1] > _UINT32_MAX + 1:
        raise ValueError(f"X has {X.shape[1]} columns; the compiled loops index at most 2**32")
    indptr = _unsigned(X.indptr) if X.nnz <= _UINT32_MAX else X.indptr.astype(np.int64, copy=False)
    return indptr, _unsigned(X.indices), np.ascontiguousarray(X.data, dtype=np.float64)


def _unsigned(a: np.ndarray) -> np.ndarray:
    """Non-negative indices as uint32: a view of int32 ones (the same bits), else a converted copy."""
    if a.dtype == np.int32 and a.flags.c_contiguous:
        return a.view(np.uint32)
    return np.ascontiguousarray(a, dtype=np.uint32)


@nb.njit(cache=True)
def restrict_columns(indptr, indices, data, keep):  # pragma: no cover - compiled
    """The CSR matrix with only the columns ``h`` where ``keep[h]``: ``(indptr, indices, data, sq_norms)``.

    Column indices stay those of the full matrix and the arrays keep their dtypes (so the compiled epochs keep
    their specialization). Fresh arrays; :func:`restrict_columns_into` writes into given ones.
    """
    n = indptr.size - 1
    new_ptr = np.empty(n + 1, dtype=indptr.dtype)
    new_idx = np.empty(indices.size, dtype=indices.dtype)
    new_dat = np.empty(indices.size, dtype=data.dtype)
    sq = np.empty(n)
    pos = restrict_columns_into(indptr, indices, data, keep, new_ptr, new_idx, new_dat, sq)
    return new_ptr, new_idx[:pos], new_dat[:pos], sq


@nb.njit(cache=True)
def restrict_columns_into(indptr, indices, data, keep, new_ptr, new_idx, new_dat, sq):  # pragma: no cover - compiled
    """:func:`restrict_columns` written into ``new_ptr`` (n + 1), ``new_idx`` and ``new_dat`` (at least the kept
    entries) and ``sq`` (n); returns the number of kept entries. One O(nnz) pass without a branch on ``keep``:
    every entry is written at the next free position, which advances only for a kept column (so ``new_idx`` and
    ``new_dat`` need ``nnz`` entries: the position reaches the kept count only after the last one). The output
    may be the input itself (rows restricted in place): an entry is written at or before the position it is read
    from, and each row's end is read before its new end is written."""
    n = indptr.size - 1
    start = indptr[0]
    new_ptr[0] = 0
    pos = 0
    for i in range(n):
        end = indptr[i + 1]
        acc = 0.0
        for k in range(start, end):
            h = indices[k]
            x = data[k]
            kk = 1 if keep[h] else 0
            new_idx[pos] = h
            new_dat[pos] = x
            acc += x * x * kk
            pos += kk
        sq[i] = acc
        new_ptr[i + 1] = pos
        start = end
    return pos


@nb.njit(cache=True)
def any_nonzero_at(w, index):  # pragma: no cover - compiled
    """Whether ``w[h] ≠ 0`` for some ``h`` in ``index`` (``np.any(w[index])`` without the gathered copy)."""
    for j in range(index.size):
        if w[index[j]] != 0.0:
            return True
    return False


@nb.njit(cache=True)
def sign_bounds(signs, huge):  # pragma: no cover - compiled
    """``(lo, up)``: the signs' bounds on ``λw``, ``[0, huge]`` where ``signs_h > 0``, ``[−huge, 0]`` where
    ``signs_h < 0``, ``[−huge, huge]`` elsewhere."""
    lo = np.empty(signs.size)
    up = np.empty(signs.size)
    for h in range(signs.size):
        lo[h] = 0.0 if signs[h] > 0 else -huge
        up[h] = 0.0 if signs[h] < 0 else huge
    return lo, up


@nb.njit(cache=True)
def sign_free(pos, neg, signs, frozen, use_frozen):  # pragma: no cover - compiled
    """``(v, free, count)``: ``v = pos + neg``, the features its signs leave free (``signs_h = 0`` or
    ``signs_h v_h ≥ 0``; not ``frozen`` with ``use_frozen``) and their number."""
    d = signs.size
    v = np.empty(d)
    free = np.empty(d, dtype=np.bool_)
    count = 0
    for h in range(d):
        x = pos[h] + neg[h]
        v[h] = x
        f = (signs[h] == 0) | (signs[h] * x >= 0.0)
        if use_frozen:
            f &= not frozen[h]
        free[h] = f
        count += 1 if f else 0
    return v, free, count


@nb.njit(cache=True)
def clip_to_signs(w, signs):  # pragma: no cover - compiled
    """``w`` with the entries its signs forbid (``signs_h w_h < 0``) set to 0, as a new array."""
    out = np.empty(w.size)
    for h in range(w.size):
        out[h] = w[h] if signs[h] * w[h] >= 0.0 else 0.0
    return out


@nb.njit(cache=True)
def zero_where(w, mask):  # pragma: no cover - compiled
    """``w[mask] = 0`` in place."""
    for h in range(w.size):
        if mask[h]:
            w[h] = 0.0


@nb.njit(cache=True)
def column_counts(indices, d):  # pragma: no cover - compiled
    """The stored entries of each of the ``d`` columns of a CSR matrix (its column ``indices``), as int64: one
    pass, without the int64 copy of the indices that ``np.bincount`` makes of unsigned ones."""
    counts = np.zeros(d, dtype=np.int64)
    for k in range(indices.size):
        counts[indices[k]] += 1
    return counts


@nb.njit(cache=True)
def freeze_scan(v, prev, signs, frozen, released, counts, margin):  # pragma: no cover - compiled
    """One pass over the features for the frozen set of dcd (``backends/frozen_features.py``, ``FeatureShrinking``):
    ``(want, back, added, grown)``.

    With ``s_h v_h < 0`` (clipped): a frozen feature not clipped is released (``released[h] = True``, ``back``);
    ``want[h]`` for a feature clipped, not released, with ``s_h v_h + margin·|v_h − prev_h| < 0`` (farther from
    the boundary than it moved); ``added`` the stored entries (``counts``) of the wanted features not frozen yet;
    ``grown`` whether every frozen feature is wanted. ``prev`` becomes ``v``.
    """
    d = v.size
    want = np.zeros(d, dtype=np.bool_)
    back = False
    grown = True
    added = 0
    for h in range(d):  # the tests combined by logical operators, not branches (they fall in no predictable order)
        x = v[h]
        sv = signs[h] * x
        clipped = sv < 0.0
        fz = frozen[h]
        free_now = fz & (not clipped)
        gone = released[h] | free_now
        released[h] = gone
        back |= free_now
        wanted = clipped & (not gone) & (sv + margin * abs(x - prev[h]) < 0.0)
        want[h] = wanted
        added += counts[h] if wanted & (not fz) else 0
        grown &= wanted | (not fz)
        prev[h] = x
    return want, back, added, grown


@nb.njit(cache=True)
def clipped_entries(v, signs, frozen, counts):  # pragma: no cover - compiled
    """``Σ_h counts_h`` over the features clipped at ``v`` (``signs_h v_h < 0``) and not ``frozen``."""
    total = 0
    for h in range(v.size):
        total += counts[h] if (signs[h] * v[h] < 0.0) & (not frozen[h]) else 0
    return total


@nb.njit(cache=True, fastmath=FASTMATH)
def signs_energy(pos, neg, fp, fn, signs):  # pragma: no cover - compiled
    """``Σ_h v_h²`` over the features with ``signs_h v_h ≥ 0`` for ``v = fp·pos + fn·neg`` (``λ²‖w‖²`` of
    ``w_h = v_h/λ`` there, 0 elsewhere: the class images of a dual point, each class scaled by its balance factor),
    without forming ``v`` or ``w``. A select rather than a branch: the test falls either way in no predictable order
    (23 µs against 1.7 µs over the 12,644 Cora-shaped features)."""
    acc = 0.0
    for h in range(pos.size):
        x = fp * pos[h] + fn * neg[h]
        acc += x * x if signs[h] * x >= 0.0 else 0.0
    return acc


@nb.njit(cache=True)
def resync(pos, neg, lo, up, lam, v, w):  # pragma: no cover - compiled
    """``v = pos + neg`` and ``w = clip(v, lo, up)/λ`` on every feature in one pass (dcd's weights from the class
    images of a certificate; the same numbers as numpy's add, clip and divide)."""
    for h in range(v.size):
        x = pos[h] + neg[h]
        v[h] = x
        w[h] = min(max(x, lo[h]), up[h]) / lam


@nb.njit(cache=True)
def balanced_alpha(alpha, y, upper, fp, fn):  # pragma: no cover - compiled
    """``α̃_i = f_i·clip(α_i, 0, upper)`` with ``f_i = fp`` where ``y_i > 0`` and ``fn`` elsewhere (the dual point of a
    certificate, each class scaled by its balance factor), in one pass instead of numpy's four temporaries."""
    out = np.empty(alpha.size)
    for i in range(alpha.size):
        a = min(max(alpha[i], 0.0), upper)
        out[i] = a * (fp if y[i] > 0 else fn)
    return out


@nb.njit(cache=True, fastmath=FASTMATH)
def row_sq_norms(indptr, data):  # pragma: no cover - compiled
    """``‖x_i‖² = Σ_k data_k²`` over the stored entries of each row of a CSR matrix (canonical: no duplicates)."""
    n = indptr.size - 1
    sq = np.empty(n)
    for i in range(n):
        acc = 0.0
        for k in range(indptr[i], indptr[i + 1]):
            acc += data[k] * data[k]
        sq[i] = acc
    return sq


@nb.njit(cache=True, fastmath=FASTMATH)
def row_sq_norms_and_counts(indptr, indices, data, d):  # pragma: no cover - compiled
    """:func:`row_sq_norms` and :func:`column_counts` (the stored entries of each of the ``d`` columns) in one
    pass over the stored entries."""
    n = indptr.size - 1
    sq = np.empty(n)
    counts = np.zeros(d, dtype=np.int64)
    for i in range(n):
        acc = 0.0
        for k in range(indptr[i], indptr[i + 1]):  # the loop of row_sq_norms (the same sums, bit for bit)
            acc += data[k] * data[k]
        sq[i] = acc
        for k in range(indptr[i], indptr[i + 1]):
            counts[indices[k]] += 1
    return sq, counts


@nb.njit(cache=True, fastmath=FASTMATH)
def dual_images_dense(X, u, pos):  # pragma: no cover - compiled
    """``out[0] = Σ_{i: pos_i} u_i x_i``, ``out[1] = Σ_{i: not pos_i} u_i x_i`` for a dense ``X``."""
    n, d = X.shape
    out = np.zeros((2, d))
    for i in range(n):
        ui = u[i]
        if ui == 0.0:
            continue
        r = 0 if pos[i] else 1
        for h in range(d):
            out[r, h] += ui * X[i, h]
    return out


@nb.njit(cache=True, fastmath=FASTMATH)
def dual_images_sparse(indptr, indices, data, d, u, pos):  # pragma: no cover - compiled
    """:func:`dual_images_dense` for a CSR ``X``, O(nnz)."""
    n = indptr.size - 1
    out = np.zeros((2, d))
    for i in range(n):
        ui = u[i]
        if ui == 0.0:
            continue
        r = 0 if pos[i] else 1
        for k in range(indptr[i], indptr[i + 1]):
            out[r, indices[k]] += ui * data[k]
    return out


@nb.njit(cache=True, fastmath=FASTMATH)
def certificate_dense(X, c, y, alpha, upper, w):  # pragma: no cover - compiled
    """One pass over a dense ``X`` for a certificate: ``(images, z, sums)`` with ``images`` those of
    :func:`dual_images_dense` at ``u = c∘y∘clip(α, 0, upper)``, ``z = X w`` and ``sums = [Σ_{y>0} c α,
    Σ_{y<0} c α]``."""
    n, d = X.shape
    out = np.zeros((2, d))
    z = np.empty(n)
    sums = np.zeros(2)
    for i in range(n):
        acc = 0.0
        for h in range(d):
            acc += X[i, h] * w[h]
        z[i] = acc
        ca = c[i] * min(max(alpha[i], 0.0), upper)
        if ca != 0.0:
            r = 0 if y[i] > 0 else 1
            sums[r] += ca
            ui = ca * y[i]
            for h in range(d):
                out[r, h] += ui * X[i, h]
    return out, z, sums


@nb.njit(cache=True, fastmath=FASTMATH)
def certificate_sparse(indptr, indices, data, rptr, ridx, rdat, d, c, y, alpha, upper,
                       w):  # pragma: no cover - compiled
    """:func:`certificate_dense` for a CSR ``X``, O(nnz).

    ``(rptr, ridx, rdat)`` are the rows of ``X`` without columns where ``w`` is zero (the frozen features of
    ``dcd``; or ``X`` itself): ``z_i`` is read from them on the rows with ``ᾱ_i = 0``, and from the full row,
    in the same loop as the row's share of the images, on the others.
    """
    n = indptr.size - 1
    out = np.zeros((2, d))
    z = np.empty(n)
    sums = np.zeros(2)
    for i in range(n):
        ca = c[i] * min(max(alpha[i], 0.0), upper)
        acc = 0.0
        if ca != 0.0:
            r = 0 if y[i] > 0 else 1
            sums[r] += ca
            ui = ca * y[i]
            for k in range(indptr[i], indptr[i + 1]):
                h = indices[k]
                x = data[k]
                acc += x * w[h]
                out[r, h] += ui * x
        else:
            for k in range(rptr[i], rptr[i + 1]):
                acc += rdat[k] * w[ridx[k]]
        z[i] = acc
    return out, z, sums


@nb.njit(cache=True, fastmath=FASTMATH)
def matvec_dense(X, w):  # pragma: no cover - compiled
    """``X @ w`` for a dense ``X``."""
    n, d = X.shape
    z = np.empty(n)
    for i in range(n):
        acc = 0.0
        for h in range(d):
            acc += X[i, h] * w[h]
        z[i] = acc
    return z


@nb.njit(cache=True, fastmath=FASTMATH)
def matvec_sparse(indptr, indices, data, w):  # pragma: no cover - compiled
    """``X @ w`` for a CSR ``X``, O(nnz)."""
    n = indptr.size - 1
    z = np.empty(n)
    for i in range(n):
        acc = 0.0
        for k in range(indptr[i], indptr[i + 1]):
            acc += data[k] * w[indices[k]]
        z[i] = acc
    return z


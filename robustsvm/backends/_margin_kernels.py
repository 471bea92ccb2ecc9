"""Compiled loops of the margin-equation point (:mod:`.margin_equations`): the rows of the free samples on the free
features with their columns renumbered, the products with ``A Aᵀ`` and the deflation preconditioner's parts."""

from __future__ import annotations

from collections import namedtuple

import numba as nb
import numpy as np

__all__ = ["Deflation", "GatheredRows", "column_energy", "deflation_parts", "gather_rows", "gram_into", "minres_solve",
           "precondition", "transposed_into"]

#: the rows of the free samples on the free features, columns renumbered ``0..n_cols−1`` (:func:`gather_rows`)
GatheredRows = namedtuple("GatheredRows", ["ptr", "cols", "vals"])
#: the preconditioner ``M = D + C Cᵀ``: ``C`` as CSR rows ``(cptr, cpos, cval)`` over its ``k`` columns, ``D``,
#: and ``S = I + Cᵀ D⁻¹ C = RᵀR`` by its upper Cholesky factor ``R`` and ``L = Rᵀ`` (C-contiguous)
Deflation = namedtuple("Deflation", ["cptr", "cpos", "cval", "D", "R", "L"])

#: reassociation and contraction only (no assumption that values are finite)
_FM = {"reassoc", "contract", "nsz", "arcp"}


@nb.njit(cache=True)
def gather_rows(indptr, indices, data, rows, keep, y):  # pragma: no cover - compiled
    """The rows ``rows`` of a CSR matrix, only the columns ``h`` where ``keep[h]``, times ``y`` of the row:
    ``(indptr, columns, values, features)`` with the columns renumbered ``0..m−1`` in order of first appearance
    (as uint32: the products then need no negative-index check on a loaded index) and ``features[j]`` the original
    index of column ``j``."""
    d = keep.size
    label = np.full(d, -1, dtype=np.int64)
    total = 0
    for j in range(rows.size):
        i = rows[j]
        total += indptr[i + 1] - indptr[i]
    ptr = np.empty(rows.size + 1, dtype=np.int64)
    cols = np.empty(total, dtype=np.uint32)
    vals = np.empty(total)
    features = np.empty(min(total, d), dtype=np.int64)
    m = 0
    pos = 0
    ptr[0] = 0
    for j in range(rows.size):
        i = rows[j]
        yi = y[i]
        for k in range(indptr[i], indptr[i + 1]):
            h = indices[k]
            if keep[h]:
                if label[h] < 0:
                    label[h] = m
                    features[m] = h
                    m += 1
                cols[pos] = label[h]
                vals[pos] = yi * data[k]
                pos += 1
        ptr[j + 1] = pos
    return ptr, cols[:pos], vals[:pos], features[:m]


@nb.njit(cache=True, fastmath=_FM)
def transposed_into(ptr, cols, vals, p, t):  # pragma: no cover - compiled
    """``t = Aᵀ p`` for the rows ``A`` (``ptr, cols, vals``; ``t`` as long as their columns)."""
    t[:] = 0.0
    for i in range(ptr.size - 1):
        pi = p[i]
        for k in range(ptr[i], ptr[i + 1]):
            t[cols[k]] += vals[k] * pi


@nb.njit(cache=True, fastmath=_FM)
def gram_into(ptr, cols, vals, p, out, t):  # pragma: no cover - compiled
    """``out = A Aᵀ p`` for the rows ``A`` (``ptr, cols, vals``), with ``t = Aᵀ p`` (length: the columns)."""
    transposed_into(ptr, cols, vals, p, t)
    for i in range(ptr.size - 1):
        acc = 0.0
        for k in range(ptr[i], ptr[i + 1]):
            acc += vals[k] * t[cols[k]]
        out[i] = acc


@nb.njit(cache=True)
def column_energy(cols, vals, n_cols):  # pragma: no cover - compiled
    """``(counts, energy)`` of the columns of the gathered rows: the entries of each column and ``Σ_i a_ij²``, in
    one pass over the entries (two ``np.bincount`` read them twice, and the weighted one squares a copy)."""
    counts = np.zeros(n_cols, dtype=np.int64)
    energy = np.zeros(n_cols)
    for k in range(cols.size):
        j = cols[k]
        counts[j] += 1
        energy[j] += vals[k] * vals[k]
    return counts, energy


@nb.njit(cache=True, fastmath=_FM)
def deflation_parts(ptr, cols, vals, position, k, shift):  # pragma: no cover - compiled
    """``(D, S, cptr, cpos, cval)`` of the preconditioner ``M = D + C Cᵀ``: ``C`` the columns with
    ``position[j] ≥ 0`` (its column ``position[j]`` of ``k``), as CSR rows ``(cptr, cpos, cval)``; ``D_i`` the
    squared norm of row ``i`` on the other columns plus ``shift``; ``S = I + Cᵀ D⁻¹ C`` (k × k)."""
    n = ptr.size - 1
    D = np.empty(n)
    S = np.eye(k)
    cptr = np.empty_like(ptr)
    cpos = np.empty(vals.size, dtype=np.uint32)
    cval = np.empty(vals.size)
    cptr[0] = 0
    q = 0
    for i in range(n):
        acc = shift
        for e in range(ptr[i], ptr[i + 1]):
            a = position[cols[e]]
            if a < 0:
                acc += vals[e] * vals[e]
            else:
                cpos[q] = a
                cval[q] = vals[e]
                q += 1
        cptr[i + 1] = q
        D[i] = acc
        inv = 1.0 / acc
        for e in range(cptr[i], q):
            va = cval[e] * inv
            a = cpos[e]
            for f in range(cptr[i], q):
                S[a, cpos[f]] += va * cval[f]
    return D, S, cptr, cpos[:q], cval[:q]


@nb.njit(cache=True, fastmath=_FM)
def precondition(pre, r, out):  # pragma: no cover - compiled
    """``out = M⁻¹ r = D⁻¹ (r − C S⁻¹ Cᵀ D⁻¹ r)`` for ``M = D + C Cᵀ`` (``pre`` a :data:`Deflation`)."""
    cptr, cpos, cval, D, R, L = pre.cptr, pre.cpos, pre.cval, pre.D, pre.R, pre.L
    k = R.shape[0]
    n = cptr.size - 1
    g = np.zeros(k)
    for i in range(n):
        ti = r[i] / D[i]
        for e in range(cptr[i], cptr[i + 1]):
            g[cpos[e]] += cval[e] * ti
    for a in range(k):  # Rᵀ z = g, from the rows of L = Rᵀ (contiguous)
        acc = g[a]
        for b in range(a):
            acc -= L[a, b] * g[b]
        g[a] = acc / R[a, a]
    for a in range(k - 1, -1, -1):  # R u = z
        acc = g[a]
        for b in range(a + 1, k):
            acc -= R[a, b] * g[b]
        g[a] = acc / R[a, a]
    for i in range(n):
        acc = r[i]
        for e in range(cptr[i], cptr[i + 1]):
            acc -= cval[e] * g[cpos[e]]
        out[i] = acc / D[i]


@nb.njit(cache=True, fastmath=_FM)
def minres_solve(rows, n_cols, pre, rhs, max_iter, weights, target):  # pragma: no cover - compiled
    """Preconditioned MINRES (Paige & Saunders) from 0 on ``A Aᵀ x = rhs`` (``A`` the :data:`GatheredRows`
    ``rows`` over ``n_cols`` columns), preconditioned by :func:`precondition` with ``pre``: ``(x, iterations)``
    after ``max_iter`` iterations at most, fewer once the residual ``r = rhs − A Aᵀ x`` falls to
    ``Σ_i weights_i |r_i| < target`` or vanishes. ``r`` follows the iterates by the recurrence of their search
    directions applied to the products ``A Aᵀ v`` already formed (no extra product)."""
    ptr, cols, vals = rows.ptr, rows.cols, rows.vals
    N = ptr.size - 1
    x = np.zeros(N)
    t = np.empty(n_cols)
    r1 = rhs.copy()
    res = rhs.copy()
    y = np.empty(N)
    precondition(pre, r1, y)
    beta1 = 0.0
    size = 0.0
    for i in range(N):
        beta1 += r1[i] * y[i]
        size += weights[i] * abs(res[i])
    if not beta1 > 0.0 or size < target:
        return x, 0
    beta1 = np.sqrt(beta1)
    oldb, beta, dbar, epsln, phibar = 0.0, beta1, 0.0, 0.0, beta1
    cs, sn = -1.0, 0.0
    w = np.zeros(N)
    w2 = np.zeros(N)
    aw = np.zeros(N)  # A Aᵀ w, A Aᵀ w2
    aw2 = np.zeros(N)
    av = np.empty(N)
    r2 = r1.copy()
    v = np.empty(N)
    done = 0
    while done < max_iter:
        done += 1
        s = 1.0 / beta
        for i in range(N):
            v[i] = s * y[i]
        gram_into(ptr, cols, vals, v, y, t)
        for i in range(N):
            av[i] = y[i]
        if oldb > 0.0:
            f = beta / oldb
            for i in range(N):
                y[i] -= f * r1[i]
        alfa = 0.0
        for i in range(N):
            alfa += v[i] * y[i]
        f = alfa / beta
        for i in range(N):
            y[i] -= f * r2[i]
            r1[i] = r2[i]
            r2[i] = y[i]
        precondition(pre, r2, y)
        oldb = beta
        bb = 0.0
        for i in range(N):
            bb += r2[i] * y[i]
        beta = np.sqrt(bb) if bb > 0.0 else 0.0
        oldeps = epsln
        delta = cs * dbar + sn * alfa
        gbar = sn * dbar - cs * alfa
        epsln = sn * beta
        dbar = -cs * beta
        gamma = max(np.sqrt(gbar * gbar + beta * beta), 1e-300)
        cs = gbar / gamma
        sn = beta / gamma
        phi = cs * phibar
        phibar = sn * phibar
        denom = 1.0 / gamma
        size = 0.0
        for i in range(N):
            w1 = w2[i]
            w2[i] = w[i]
            w[i] = (v[i] - oldeps * w1 - delta * w2[i]) * denom
            x[i] += phi * w[i]
            a1 = aw2[i]
            aw2[i] = aw[i]
            aw[i] = (av[i] - oldeps * a1 - delta * aw2[i]) * denom
            res[i] -= phi * aw[i]
            size += weights[i] * abs(res[i])
        if beta == 0.0 or size < target:
            break
    return x, done

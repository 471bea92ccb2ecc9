"""Compiled loops of the margin-equation point (:mod:`.margin_equations`): the rows of the free samples on the free
features with their columns renumbered, the products with ``A Aᵀ``, the deflation preconditioner and MINRES.

The preconditioner ``M = D + C Cᵀ`` keeps ``k`` columns ``C`` of the rows; :func:`deflate_rows` numbers them
``0..k−1`` and stores them first in every row, so that its products with ``C`` and ``Cᵀ`` read the entries that
the products with ``A`` and ``Aᵀ`` of the same iteration have just read (:func:`minres_solve`)."""

from __future__ import annotations

from collections import namedtuple

import numba as nb
import numpy as np

from ._compiled import FASTMATH
from ._products_kernels import matvec_sparse

__all__ = ["Deflation", "GatheredRows", "column_energy", "deflate_rows", "deflation_energy", "gather_rows", "gram_into",
           "margin_rhs", "margin_weights", "minres_solve", "precondition", "transposed_into"]

#: the rows of the free samples on the free features, columns renumbered ``0..n_cols−1`` (:func:`gather_rows`)
GatheredRows = namedtuple("GatheredRows", ["ptr", "cols", "vals"])
#: the preconditioner ``M = D + C Cᵀ`` of rows from :func:`deflate_rows` (``C``: their columns ``0..k−1``, the
#: entries ``ptr[i]..mid[i]`` of row ``i``): ``mid``, ``D`` and ``inv_d = 1/D``, and ``S = I + Cᵀ D⁻¹ C = RᵀR`` by
#: ``L = Rᵀ`` and ``R`` with its rows and columns reversed (``Rrev``, lower triangular: both triangular solves then
#: run forwards, which compiles to vectorized loops where a backward solve does not), with the inverses of their
#: diagonals ``dinv`` and ``dinv_rev``
Deflation = namedtuple("Deflation", ["mid", "D", "inv_d", "L", "Rrev", "dinv", "dinv_rev"])



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


@nb.njit(cache=True, fastmath=FASTMATH)
def transposed_into(ptr, cols, vals, p, t):  # pragma: no cover - compiled
    """``t = Aᵀ p`` for the rows ``A`` (``ptr, cols, vals``; ``t`` as long as their columns)."""
    t[:] = 0.0
    for i in range(ptr.size - 1):
        pi = p[i]
        for k in range(ptr[i], ptr[i + 1]):
            t[cols[k]] += vals[k] * pi


@nb.njit(cache=True, fastmath=FASTMATH)
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


@nb.njit(cache=True)
def deflation_energy(cols, vals, n_rows, n_cols, factor):  # pragma: no cover - compiled
    """``(energy, mean_row, above)``: the energy ``Σ_i a_ij²`` of each column of the gathered rows (0 for a column
    in fewer than two rows), the mean energy of a row (``Σ_ij a_ij² / n_rows``) and the number of columns whose
    energy is at least ``factor·mean_row`` (:func:`column_energy` and the selection of the deflated columns)."""
    counts, energy = column_energy(cols, vals, n_cols)
    total = 0.0
    for j in range(n_cols):
        total += energy[j]
    mean_row = total / max(n_rows, 1)
    above = 0
    for j in range(n_cols):
        if counts[j] < 2:
            energy[j] = 0.0
        above += 1 if energy[j] >= factor * mean_row else 0
    return energy, mean_row, above


@nb.njit(cache=True, fastmath=FASTMATH)
def margin_rhs(ptr, cols, vals, free, v, features, y, rows, b, has_b, lam):  # pragma: no cover - compiled
    """``(w0, rhs)`` of the margin equations: ``w0 = w(α)`` (``v/λ`` on the ``free`` features, 0 elsewhere) and
    ``rhs = λ (1 − y_F ∘ (X_{F,H} w0_H + b))`` from the gathered rows (``features[j]`` the feature of column ``j``,
    ``rows`` the samples ``F``; ``b`` read when ``has_b``)."""
    w0 = np.empty(v.size)
    for h in range(v.size):
        w0[h] = (v[h] if free[h] else 0.0) / lam
    wf = np.empty(features.size)
    for j in range(features.size):
        wf[j] = w0[features[j]]
    rhs = matvec_sparse(ptr, cols, vals, wf)
    for i in range(rhs.size):
        rhs[i] = lam * (1.0 - (rhs[i] + (y[rows[i]] * b if has_b else 0.0)))
    return w0, rhs


@nb.njit(cache=True, fastmath=FASTMATH)
def margin_weights(ptr, cols, vals, step, w0, features, lam, c, alpha, rows):  # pragma: no cover - compiled
    """``(w, multipliers)`` of a margin-equation solution ``step`` (the change of ``c_F∘α_F``):
    ``w = w0 + Aᵀ step / λ`` on the gathered columns (``features``), ``multipliers = c∘α`` with ``step`` added on
    the samples ``rows``."""
    t = np.empty(features.size)
    transposed_into(ptr, cols, vals, step, t)
    w = w0.copy()
    for j in range(features.size):
        w[features[j]] += t[j] / lam
    multipliers = np.empty(c.size)
    for i in range(c.size):
        multipliers[i] = c[i] * alpha[i]
    for i in range(rows.size):
        multipliers[rows[i]] += step[i]
    return w, multipliers


@nb.njit(cache=True, fastmath=FASTMATH)
def deflate_rows(ptr, cols, vals, position, k, shift):  # pragma: no cover - compiled
    """The rows rewritten in place with the columns ``position[j] ≥ 0`` (``C``, ``k`` of them) numbered
    ``position[j]`` and stored first in each row, the others numbered ``k..`` in their order: ``(mid, label, D, S)``
    with ``mid[i]`` the end of row ``i``'s entries in ``C``, ``label[j]`` the new number of column ``j``, ``D_i``
    the squared norm of row ``i`` outside ``C`` plus ``shift`` and the upper triangle of ``S = I + Cᵀ D⁻¹ C``
    (k × k; zero below the diagonal)."""
    n, m = ptr.size - 1, position.size
    label = np.empty(m, dtype=np.int64)
    rest = k
    longest = 0
    for j in range(m):
        if position[j] >= 0:
            label[j] = position[j]
        else:
            label[j] = rest
            rest += 1
    for i in range(n):
        longest = max(longest, np.int64(ptr[i + 1]) - np.int64(ptr[i]))
    row_cols = np.empty(longest, dtype=cols.dtype)
    row_vals = np.empty(longest)
    mid = np.empty(n, dtype=ptr.dtype)
    D = np.empty(n)
    S = np.eye(k)
    for i in range(n):
        start = np.int64(ptr[i])
        length = np.int64(ptr[i + 1]) - start
        in_c = 0
        for e in range(length):
            row_cols[e] = cols[start + e]
            row_vals[e] = vals[start + e]
            in_c += 1 if position[cols[start + e]] >= 0 else 0
        # each entry to the next place of its part, C first: a select, no branch on the part (half the entries are
        # in C, in no predictable order)
        qc, qr = start, start + in_c
        acc = shift
        for e in range(length):
            j = row_cols[e]
            x = row_vals[e]
            c = 1 if position[j] >= 0 else 0
            q = qc if c else qr
            cols[q] = label[j]
            vals[q] = x
            qc += c
            qr += 1 - c
            acc += (1 - c) * x * x
        mid[i] = qc
        D[i] = acc
        inv = 1.0 / acc
        for e in range(start, mid[i]):  # the upper triangle: S[a, b] for a ≤ b
            va = vals[e] * inv
            a = cols[e]
            for f in range(e, mid[i]):
                b = cols[f]
                S[min(a, b), max(a, b)] += va * vals[f]
    return mid, label, D, S


@nb.njit(cache=True, fastmath=FASTMATH)
def _factor_solve(L, Rrev, dinv, dinv_rev, g, z):  # pragma: no cover - compiled
    """``g ← S⁻¹ g`` for ``S = RᵀR`` (``L = Rᵀ``; ``Rrev`` is ``R`` reversed), ``z`` a workspace of ``g``'s length:
    ``Rᵀu = g`` forwards, then ``R x = u`` forwards in reversed order."""
    k = g.size
    _forward(L, dinv, g)
    for a in range(k):
        z[a] = g[k - 1 - a]
    _forward(Rrev, dinv_rev, z)
    for a in range(k):
        g[a] = z[k - 1 - a]


@nb.njit(cache=True, fastmath=FASTMATH, inline="always")
def _forward(M, dinv, x):  # pragma: no cover - compiled
    """``x ← M⁻¹x`` by forward substitution, ``M`` lower-triangular with inverse diagonal ``dinv``."""
    for a in range(x.size):
        acc = 0.0
        for b in range(a):
            acc += M[a, b] * x[b]
        x[a] = (x[a] - acc) * dinv[a]


@nb.njit(cache=True, fastmath=FASTMATH)
def _scaled_image(ptr, cols, vals, mid, inv_d, r, g):  # pragma: no cover - compiled
    """``g = Cᵀ D⁻¹ r``."""
    g[:] = 0.0
    for i in range(ptr.size - 1):
        ri = r[i] * inv_d[i]
        for e in range(ptr[i], mid[i]):
            g[cols[e]] += vals[e] * ri


@nb.njit(cache=True, fastmath=FASTMATH)
def precondition(rows, pre, r, out):  # pragma: no cover - compiled
    """``out = M⁻¹ r = D⁻¹ (r − C S⁻¹ Cᵀ D⁻¹ r)`` for ``M = D + C Cᵀ`` (``rows`` from :func:`deflate_rows`,
    ``pre`` their :data:`Deflation`)."""
    ptr, cols, vals = rows.ptr, rows.cols, rows.vals
    mid, inv_d = pre.mid, pre.inv_d
    k = pre.L.shape[0]
    g = np.empty(k)
    _scaled_image(ptr, cols, vals, mid, inv_d, r, g)
    _factor_solve(pre.L, pre.Rrev, pre.dinv, pre.dinv_rev, g, np.empty(k))
    for i in range(ptr.size - 1):
        acc = r[i]
        for e in range(ptr[i], mid[i]):
            acc -= vals[e] * g[cols[e]]
        out[i] = acc * inv_d[i]


@nb.njit(cache=True, fastmath=FASTMATH)
def _precondition_image(ptr, cols, vals, mid, inv_d, r, h, y, t):  # pragma: no cover - compiled
    """``y = D⁻¹ (r − C h)`` (``h = S⁻¹ Cᵀ D⁻¹ r``: ``y = M⁻¹ r``), ``t = Aᵀ y`` in the same pass over the rows;
    returns ``r·y``."""
    t[:] = 0.0
    ry = 0.0
    for i in range(ptr.size - 1):
        acc = r[i]
        for e in range(ptr[i], mid[i]):
            acc -= vals[e] * h[cols[e]]
        yi = acc * inv_d[i]
        y[i] = yi
        ry += r[i] * yi
        for e in range(ptr[i], ptr[i + 1]):
            t[cols[e]] += vals[e] * yi
    return ry


@nb.njit(cache=True, fastmath=FASTMATH)
def minres_solve(rows, n_cols, pre, rhs, max_iter, weights, target):  # pragma: no cover - compiled
    """Preconditioned MINRES (Paige & Saunders) from 0 on ``A Aᵀ x = rhs`` (``A`` the rows of :func:`deflate_rows`
    over ``n_cols`` columns), preconditioned by ``M = D + C Cᵀ`` (``pre``, :data:`Deflation`): ``(x, iterations)``
    after ``max_iter`` iterations at most, fewer once the residual ``r = rhs − A Aᵀ x`` falls to
    ``Σ_i weights_i |r_i| < target`` or vanishes. ``r`` follows the iterates by the recurrence of their search
    directions applied to the products ``A Aᵀ v`` already formed (no extra product).

    An iteration reads the rows twice. The product ``A t`` of the Lanczos vector ``v = y/β`` (``t = Aᵀ y``) gives
    ``C ᵀD⁻¹ (A Aᵀ v)`` in the same pass; the new Lanczos residual ``r₊ = A Aᵀ v − f₁ r₁ − f₂ r₂`` then has
    ``Cᵀ D⁻¹ r₊`` by the same recurrence in ``k`` dimensions, and one pass forms ``y₊ = M⁻¹ r₊`` from it with
    ``Aᵀ y₊`` for the next product (which the last iteration forms in vain)."""
    ptr, cols, vals = rows.ptr, rows.cols, rows.vals
    mid, inv_d, L, Rrev, dinv, dinv_rev = pre.mid, pre.inv_d, pre.L, pre.Rrev, pre.dinv, pre.dinv_rev
    N = ptr.size - 1
    k = L.shape[0]
    x = np.zeros(N)
    res = rhs.copy()
    size = 0.0
    for i in range(N):
        size += weights[i] * abs(res[i])
    r1 = rhs.copy()
    r2 = rhs.copy()
    g1 = np.empty(k)  # Cᵀ D⁻¹ r1, Cᵀ D⁻¹ r2
    _scaled_image(ptr, cols, vals, mid, inv_d, r1, g1)
    g2 = g1.copy()
    h = g2.copy()
    z = np.empty(k)
    _factor_solve(L, Rrev, dinv, dinv_rev, h, z)
    y = np.empty(N)
    t = np.empty(n_cols)
    beta1 = _precondition_image(ptr, cols, vals, mid, inv_d, r2, h, y, t)
    if not beta1 > 0.0 or size < target:
        return x, 0
    beta = np.sqrt(beta1)
    oldb, dbar, epsln, phibar = 0.0, 0.0, 0.0, beta
    cs, sn = -1.0, 0.0
    w = np.zeros(N)
    w2 = np.zeros(N)
    aw = np.zeros(N)  # A Aᵀ w, A Aᵀ w2
    aw2 = np.zeros(N)
    av = np.empty(N)
    v = np.empty(N)
    gc = np.empty(k)
    done = 0
    while done < max_iter:
        done += 1
        s = 1.0 / beta
        f1 = beta / oldb if oldb > 0.0 else 0.0
        gc[:] = 0.0
        vav = 0.0
        vr1 = 0.0
        for i in range(N):  # A Aᵀ v = A t / β, with Cᵀ D⁻¹ of it
            acc = 0.0
            for e in range(ptr[i], ptr[i + 1]):
                acc += vals[e] * t[cols[e]]
            o = acc * s
            av[i] = o
            vi = y[i] * s
            v[i] = vi
            vav += vi * o
            vr1 += vi * r1[i]
            q = o * inv_d[i]
            for e in range(ptr[i], mid[i]):
                gc[cols[e]] += vals[e] * q
        alfa = vav - f1 * vr1
        f2 = alfa / beta
        for i in range(N):
            rn = av[i] - f1 * r1[i] - f2 * r2[i]
            r1[i] = r2[i]
            r2[i] = rn
        for a in range(k):
            gn = gc[a] - f1 * g1[a] - f2 * g2[a]
            g1[a] = g2[a]
            g2[a] = gn
            h[a] = gn
        _factor_solve(L, Rrev, dinv, dinv_rev, h, z)
        bb = _precondition_image(ptr, cols, vals, mid, inv_d, r2, h, y, t)
        oldb = beta
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

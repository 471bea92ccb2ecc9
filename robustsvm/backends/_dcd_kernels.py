"""Compiled epochs of the dual coordinate-descent backend (numba): exact one-dimensional steps in a random order
with liblinear's shrinking, keeping ``v = Σ c_i y_i α_i x_i``, ``w = clip(v, λl, λu)/λ`` (``docs/derivations/dcd.md``).
"""

from __future__ import annotations

from collections import namedtuple

import numba as nb
import numpy as np

from ._compiled import FASTMATH, by_type, column, dense_rows, of_type, prefetch_row, row_of

__all__ = ["ORDER", "SUMS", "BoundCheck", "DcdBox", "DcdParams", "DcdSamples", "DcdSigns", "DcdState", "EpochBlock",
           "ShrinkState", "average_into", "begin_epoch", "clipped_weight", "dual_sums", "epoch", "free_at",
           "move_weights", "newton_step", "outside", "row_dot", "run_epochs", "screen", "shuffle", "worse_than_safe"]

#: per sample: labels ±1, loss coefficients, the dual's diagonal ``Q_ii``
DcdSamples = namedtuple("DcdSamples", ["y", "c", "qdiag"])
#: the maintained scalars: intercept multiplier ``b0``, ``S = Σ c_i y_i α_i``, radius mass ``A = Σ c_i α_i r_i``
SUMS = np.dtype([("b0", np.float64), ("S", np.float64), ("A", np.float64)])
DcdState = namedtuple("DcdState", ["v", "w", "sums"])
#: ``lo ≤ λw ≤ up`` (±1e300 for an absent side), or the signs only (int8, 0 = free), read with a sign test
DcdBox = namedtuple("DcdBox", ["lo", "up"])
DcdSigns = namedtuple("DcdSigns", ["sg"])
#: ``1/λ``, the dual box's end and diagonal term (``Loss.dual_upper``, ``Loss.dual_diagonal``), ρ, the switches, and
#: how many rows ahead of the current one an epoch asks for (float32 dense rows, :func:`._compiled.prefetch_row`; 0:
#: none)
DcdParams = namedtuple("DcdParams", ["inv_lam", "upper", "dii", "rho", "shrinking", "local", "ahead"], defaults=(0,))
#: liblinear's shrinking between epochs (:class:`.dual_ascent.Shrinking`)
ShrinkState = namedtuple("ShrinkState", ["active", "pg_max_old", "pg_min_old", "pg_eps"])
#: one compiled block of epochs (:func:`run_epochs`)
EpochBlock = namedtuple("EpochBlock", ["epochs", "n_total", "min_pass", "work_left", "since", "free", "avg_weight"])
#: bounds beyond signs followed on the signs' path: ``lo_k ≤ v_h ≤ up_k`` at ``h = index[k]``
BoundCheck = namedtuple("BoundCheck", ["index", "lo", "up"])
#: the visiting order (:func:`shuffle`): xorshift64* state, block length ``B`` (0: a permutation), fewest rows
ORDER = np.dtype([("state", np.uint64), ("block", np.int64), ("min_rows", np.int64)])


def dual_sums(b0: float = 0.0, S: float = 0.0, A: float = 0.0) -> np.ndarray:
    """A one-record array of :data:`SUMS`."""
    return np.array([(b0, S, A)], dtype=SUMS)


def _signs_weight(box, h, vh, inv_lam):
    return vh * inv_lam if box.sg[h] * vh >= 0.0 else 0.0


def _box_weight(box, h, vh, inv_lam):
    return min(max(vh, box.lo[h]), box.up[h]) * inv_lam


def _signs_free_at(box, h, wh):
    return 1.0 if (wh != 0.0) | (box.sg[h] == 0) else 0.0


def _box_free_at(box, h, wh):
    return 1.0 if (wh != 0.0) | ((box.lo[h] != 0.0) & (box.up[h] != 0.0)) else 0.0


#: ``w_h = clip(v_h, λl_h, λu_h)/λ`` (:data:`DcdBox`), ``v_h/λ if s_h v_h ≥ 0 else 0`` (:data:`DcdSigns`)
clipped_weight = by_type(of_type(DcdSigns), _signs_weight, _box_weight)
#: 1.0 when ``h`` is free at ``w_h`` (``w_h ≠ 0``, or no zero bound), else 0.0 (a factor, not a branch)
free_at = by_type(of_type(DcdSigns), _signs_free_at, _box_free_at)


@nb.njit(cache=True, inline="always")
def _draw(x, bound):  # pragma: no cover - compiled
    """One xorshift64* step from the state ``x`` and a draw in ``[0, bound)`` (Lemire's multiply-shift)."""
    x ^= x >> np.uint64(12)
    x ^= x << np.uint64(25)
    x ^= x >> np.uint64(27)
    r = (x * np.uint64(2685821657736338717)) >> np.uint64(32)
    return x, np.int64((r * np.uint64(bound)) >> np.uint64(32))


@nb.njit(cache=True)
def shuffle(index, active_size, rng):  # pragma: no cover - compiled
    """A random order of ``index[:active_size]`` in place: Fisher–Yates, or random blocks of ``B`` consecutive
    active rows each rotated at random (``dcd.md`` §7); ``rng`` is an :data:`ORDER` record, advanced in place."""
    order = rng[0]
    x = order.state
    k = active_size
    B = order.block
    blocked = B > 0 and k > B and k >= order.min_rows
    n_draws = (k + B - 1) // B if blocked else k  # the permuted items: blocks or samples
    items = _counting(n_draws, index.dtype) if blocked else index[:k]
    for t in range(n_draws - 1, 0, -1):  # Fisher–Yates over the items
        x, j = _draw(x, t + 1)
        items[t], items[j] = items[j], items[t]
    if blocked:
        rows = _in_storage_order(index, k)
        p = 0
        for t in range(n_draws):  # block t, rotated by q: rows[first + q:first + size], then rows[first:first + q]
            first = items[t] * B
            size = min(B, k - first)
            x, q = _draw(x, size)
            for j in range(q, size):
                index[p] = rows[first + j]
                p += 1
            for j in range(q):
                index[p] = rows[first + j]
                p += 1
    order.state = x


@nb.njit(cache=True, inline="always")
def _counting(n, dtype):  # pragma: no cover - compiled
    """``0, 1, …, n − 1`` of ``dtype`` (loops: they compile in a fraction of NumPy's array functions' time)."""
    out = np.empty(n, dtype=dtype)
    for t in range(n):
        out[t] = t
    return out


@nb.njit(cache=True, inline="always")
def _in_storage_order(index, k):  # pragma: no cover - compiled
    """The distinct rows ``index[:k]`` sorted, by a mark per row up to the largest."""
    top = 0
    for j in range(k):
        top = max(top, np.int64(index[j]))
    mark = np.zeros(top + 1, dtype=np.bool_)
    for j in range(k):
        mark[index[j]] = True
    rows = np.empty(k, dtype=index.dtype)
    m = 0
    for h in range(top + 1):
        if mark[h]:
            rows[m] = h
            m += 1
    return rows


@nb.njit(cache=True)
def newton_step(alpha_i, G, q, upper):  # pragma: no cover - compiled
    """Exact minimizer along α_i of the convex quadratic with slope G and curvature q, on [0, upper]."""
    a = alpha_i - G / q if q > 0.0 else (upper if G < 0.0 else 0.0)  # q = 0: linear, to the bound G points to
    return min(max(a, 0.0), upper)


@nb.njit(cache=True, inline="always")
def begin_epoch(index, active_size, rng, pg_max_old, pg_min_old):  # pragma: no cover - compiled
    """Shuffle ``index[:active_size]``; returns the old and the new (empty) gradient ranges, 0 updates, position 0."""
    shuffle(index, active_size, rng)
    return (pg_max_old, pg_min_old), (-np.inf, np.inf), 0, 0


@nb.njit(cache=True, inline="always")
def screen(index, s, active_size, ai, G, upper, shrinking, pg_old, pg):  # pragma: no cover - compiled
    """liblinear's test of ``index[s]`` with slope ``G``: shrink it (swap it behind the active prefix) when at a bound
    beyond ``pg_old``; returns ``(active_size, pg widened by PG, s_next, |PG| > 1e-12)`` (``dcd.md`` §2)."""
    if ai == 0.0 or ai == upper:
        low = ai == 0.0
        PG = min(G, 0.0) if low else max(G, 0.0)
        if shrinking and (G > pg_old[0] if low else G < pg_old[1]):
            active_size -= 1
            index[s], index[active_size] = index[active_size], index[s]
            return active_size, pg, s, False
    else:
        PG = G
    return active_size, (max(pg[0], PG), min(pg[1], PG)), s + 1, abs(PG) > 1e-12


@nb.njit(cache=True, fastmath=FASTMATH, inline="always")
def worse_than_safe(ai, a_new, a_safe, G, ci, q_safe, d_ww, b_old, dv, lam, dii, rho):  # pragma: no cover
    """Whether the local step's exact gain is below the safe step's bound ``−c_i(G Δ + ½ q_safe Δ²)``
    (``robust_dcd.md`` §3)."""
    gain = (ci * ((a_new - ai) - 0.5 * dii * (a_new * a_new - ai * ai)) - 0.5 * lam * d_ww
            - b_old * dv - 0.5 * rho * dv * dv)
    ds = a_safe - ai
    return gain < -ci * (G * ds + 0.5 * q_safe * ds * ds)


@nb.njit(cache=True, fastmath=FASTMATH, inline="always")
def row_dot(rows, i, w, box, local):  # pragma: no cover - compiled
    """``(x_i·w, Σ x_ih² and the number of the coordinates of row i free at w (with ``local``), its entries)``."""
    columns, values, start, stop = row_of(rows, i)
    acc = q_free = n_free = 0.0
    for k in range(start, stop):
        h, x = column(columns, k), values[k]
        wh = w[h]
        acc += x * wh
        if local:  # a product with the 0/1 indicator rather than a branch (the test is unpredictable)
            f = free_at(box, h, wh)
            q_free += x * x * f
            n_free += f
    return acc, q_free, n_free, stop - start


@nb.njit(cache=True, fastmath=FASTMATH, inline="always")
def move_weights(rows, i, delta, v, w, box, inv_lam, squares):  # pragma: no cover - compiled
    """``v += δ x_i`` and ``w`` clipped there; returns the change of ``‖w‖²`` with ``squares``, else 0."""
    columns, values, start, stop = row_of(rows, i)
    dw2 = 0.0
    if squares:  # two loops: the loop-invariant test is not hoisted out of one
        for k in range(start, stop):
            h = column(columns, k)
            vh = v[h] + delta * values[k]
            wh = clipped_weight(box, h, vh, inv_lam)
            dw2 += wh * wh - w[h] * w[h]
            v[h] = vh
            w[h] = wh
        return dw2
    for k in range(start, stop):
        h = column(columns, k)
        vh = v[h] + delta * values[k]
        v[h] = vh
        w[h] = clipped_weight(box, h, vh, inv_lam)
    return dw2


@nb.njit(cache=True, fastmath=FASTMATH)
def epoch(rows, samples, alpha, st, box, prm, index, rng, active_size, pg_max_old,
          pg_min_old):  # pragma: no cover - compiled
    """One epoch over ``index[:active_size]`` of dense or CSR rows (O(nnz) per epoch on CSR); returns
    ``(active_size, pg_max, pg_min, n_updates)``, ``alpha``, ``st`` and ``index`` updated in place. With ``local``
    on CSR rows, the local-curvature step where a coordinate of the row is clipped, kept only when it gains the
    safe step's bound (``dcd.md`` §2)."""
    y, c, qdiag = samples.y, samples.c, samples.qdiag
    v, w, state = st.v, st.w, st.sums[0]
    inv_lam, upper, dii, rho = prm.inv_lam, prm.upper, prm.dii, prm.rho
    local = prm.local and not dense_rows(rows)
    lam, b0, S = 1.0 / inv_lam, state.b0, state.S
    pg_old, pg, n_updates, s = begin_epoch(index, active_size, rng, pg_max_old, pg_min_old)
    while s < active_size:
        i = index[s]
        if prm.ahead > 0 and s + prm.ahead < active_size:
            prefetch_row(rows, index[s + prm.ahead])
        acc, q_free, n_free, n_row = row_dot(rows, i, w, box, local)
        yi, ai = y[i], alpha[i]
        G = yi * (acc + b0 + rho * S) - 1.0 + dii * ai
        active_size, pg, s, step = screen(index, s, active_size, ai, G, upper, prm.shrinking, pg_old, pg)
        if step:
            ci = c[i]
            a_safe = a = newton_step(ai, G, qdiag[i], upper)
            if local and n_free < n_row:  # some coordinate clipped: the local curvature is below qdiag
                a = newton_step(ai, G, ci * (q_free * inv_lam + rho) + dii, upper)
            delta = (a - ai) * yi * ci
            if delta != 0.0:
                n_updates += 1
                dw2 = move_weights(rows, i, delta, v, w, box, inv_lam, local and a != a_safe)
                if local and a != a_safe and worse_than_safe(ai, a, a_safe, G, ci, qdiag[i], dw2, b0 + rho * S, delta,
                                                             lam, dii, rho):
                    delta2 = (a_safe - a) * yi * ci  # the local step gained less than the safe step's bound
                    move_weights(rows, i, delta2, v, w, box, inv_lam, False)
                    delta += delta2
                    a = a_safe
                alpha[i] = a
                S += delta
    state.S = S
    return active_size, pg[0], pg[1], n_updates


@nb.njit(cache=True, fastmath=FASTMATH)
def average_into(avg, x, weight):  # pragma: no cover - compiled
    """``avg ← (1 − weight)·avg + weight·x`` in one pass."""
    keep = 1.0 - weight
    for k in range(avg.size):
        avg[k] = keep * avg[k] + weight * x[k]


@nb.njit(cache=True)
def outside(v, index, lo, up):  # pragma: no cover - compiled
    """Whether ``v_h < lo_k`` or ``v_h > up_k`` for some ``h = index[k]``."""
    for k in range(index.size):
        vh = v[index[k]]
        if vh < lo[k] or vh > up[k]:
            return True
    return False


@nb.njit(cache=True)
def run_epochs(rows, samples, alpha, st, box, prm, index, rng, shrink, block, avg, rx):  # pragma: no cover - compiled
    """Up to ``block.epochs`` epochs, each followed by ``b0 += ρ S``, the check of ``rx`` (:func:`outside`), the
    average ``avg ← (1 − a) avg + a w`` and the shrinking rule; stops when a bound binds, the active set looks
    solved, the budget is spent. Returns ``(epochs, looked_solved, passes, active, bound_binds, shrink)``."""
    n_total = block.n_total
    state = st.sums[0]
    w = st.w
    active, pg_max_old, pg_min_old, pg_eps = shrink.active, shrink.pg_max_old, shrink.pg_min_old, shrink.pg_eps
    work = 0.0
    e = 0
    looked = binds = False
    active_new = active
    while True:
        visited = active
        active_new, pg_max_new, pg_min_new, _ = epoch(rows, samples, alpha, st, box, prm, index, rng, visited,
                                                      pg_max_old, pg_min_old)
        e += 1
        work += max(visited / max(n_total, 1), block.min_pass)
        if block.free:
            state.b0 += prm.rho * state.S
        binds = outside(st.v, rx.index, rx.lo, rx.up)
        if not binds:
            average_into(avg, w, block.avg_weight)
        looked = active_new == 0 or pg_max_new - pg_min_new <= pg_eps
        active = active_new
        if looked:
            if active_new < n_total:
                active = n_total
                pg_max_old = np.inf
                pg_min_old = -np.inf
            else:
                pg_eps *= 0.1
        else:
            pg_max_old = pg_max_new if pg_max_new > 0 else np.inf
            pg_min_old = pg_min_new if pg_min_new < 0 else -np.inf
        if binds or (looked and block.since + e >= 2) or work >= block.work_left or e >= block.epochs:
            break
    return e, looked, work, active_new, binds, ShrinkState(active, pg_max_old, pg_min_old, pg_eps)

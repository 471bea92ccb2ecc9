"""Compiled inner loops of the dual coordinate-descent backend (numba).

One call runs epochs of exact one-dimensional updates over the active samples, in a random order, with
liblinear-style shrinking, maintaining ``v = Σ_i c_i y_i α_i x_i`` and ``w_h = clip(v_h, λl_h, λu_h)/λ`` (``box``:
``λl``, ``λu``, or only the signs as int8; one compiled variant each). ``st.sums`` is a record of :data:`SUMS`;
the intercept seen by the updates is ``b0 + ρ S``. The derivation is in ``docs/derivations/dcd.md``.
"""

from __future__ import annotations

from collections import namedtuple

import numba as nb
import numpy as np
from numba.extending import overload

__all__ = ["ORDER", "SUMS", "BoundCheck", "CsrRows", "DcdBox", "DcdParams", "DcdSamples", "DcdSigns", "DcdState",
           "DenseRows", "EpochBlock", "ShrinkState", "average_into", "clipped_weight", "dual_sums",
           "epoch_dense", "epoch_sparse", "free_at", "is_dense", "newton_step", "one_epoch",
           "outside", "run_epochs", "screen", "shuffle", "begin_epoch", "weighted_quantile", "worse_than_safe"]

#: the rows of a dense C-ordered ``X`` (the compiled epochs read ``rows.X``)
DenseRows = namedtuple("DenseRows", ["X"])
#: the rows of a CSR ``X``
CsrRows = namedtuple("CsrRows", ["indptr", "indices", "data"])
#: per sample: labels ±1, loss coefficients, the diagonal ``Q_ii`` of the dual
DcdSamples = namedtuple("DcdSamples", ["y", "c", "qdiag"])
#: the maintained scalars of a dual coordinate method, as the named fields of one record: the intercept multiplier
#: ``b0``, ``S = Σ c_i y_i α_i`` and the radius mass ``A = Σ c_i α_i r_i`` (0 for the nominal model)
SUMS = np.dtype([("b0", np.float64), ("S", np.float64), ("A", np.float64)])
#: the maintained vectors ``v``, ``w`` and ``sums`` (:data:`SUMS`)
DcdState = namedtuple("DcdState", ["v", "w", "sums"])
#: the bounds on ``w`` times λ: ``lo ≤ λw ≤ up`` (±1e300 for an absent side; a sign is a zero bound)
DcdBox = namedtuple("DcdBox", ["lo", "up"])
#: sign constraints only (``s_h`` as int8, 0 = free): the bounds ``[0, ∞)`` / ``(−∞, 0]`` of :data:`DcdBox` in one
#: byte per feature, which the epochs read with a sign test instead of a two-sided clip
DcdSigns = namedtuple("DcdSigns", ["sg"])
#: the scalars of one solve: ``1/λ``, the dual box's end and diagonal term of the loss (``Loss.dual_upper``,
#: ``Loss.dual_diagonal``), ρ, and the switches
DcdParams = namedtuple("DcdParams", ["inv_lam", "upper", "dii", "rho", "shrinking", "local"])
#: liblinear's shrinking state between epochs (:class:`.dual_ascent.Shrinking`): the active prefix of ``index``,
#: the previous epoch's projected-gradient range and the range below which the active set looks solved
ShrinkState = namedtuple("ShrinkState", ["active", "pg_max_old", "pg_min_old", "pg_eps"])
#: one compiled block of epochs (:func:`run_epochs`): at most ``epochs`` epochs over ``n_total`` samples, an epoch
#: counting at least ``min_pass`` passes, ``work_left`` passes of budget, ``since`` epochs since the last
#: certificate, whether the intercept is free and the weight of the newest iterate in the average
EpochBlock = namedtuple("EpochBlock", ["epochs", "n_total", "min_pass", "work_left", "since", "free", "avg_weight"])
#: bounds beyond signs followed on the signs' path: ``lo_k ≤ v_h ≤ up_k`` at ``h = index[k]`` (:func:`outside`)
BoundCheck = namedtuple("BoundCheck", ["index", "lo", "up"])


#: the epochs' visiting order (:func:`shuffle`): the xorshift64* state (odd, advanced in place), the block length
#: ``B`` (0: a plain permutation) and the fewest active samples visited by blocks
ORDER = np.dtype([("state", np.uint64), ("block", np.int64), ("min_rows", np.int64)])


def dual_sums(b0: float = 0.0, S: float = 0.0, A: float = 0.0) -> np.ndarray:
    """A one-record array of :data:`SUMS`."""
    out = np.zeros(1, dtype=SUMS)
    out[0] = (b0, S, A)
    return out

#: reassociation and contraction only (no assumption that values are finite)
_FM = {"reassoc", "contract", "nsz", "arcp"}


def _signs_weight(box, h, vh, inv_lam):
    return vh * inv_lam if box.sg[h] * vh >= 0.0 else 0.0


def _box_weight(box, h, vh, inv_lam):
    return min(max(vh, box.lo[h]), box.up[h]) * inv_lam


def _signs_free_at(box, h, wh):
    return 1.0 if (wh != 0.0) | (box.sg[h] == 0) else 0.0


def _box_free_at(box, h, wh):
    return 1.0 if (wh != 0.0) | ((box.lo[h] != 0.0) & (box.up[h] != 0.0)) else 0.0


def free_at(box, h, wh):
    """1.0 when coordinate ``h`` is free at ``w_h`` (``w_h ≠ 0``, or no zero bound), else 0.0; written with
    bitwise operators so that the compiled epochs multiply by it instead of branching on an unpredictable test."""
    return (_signs_free_at if isinstance(box, DcdSigns) else _box_free_at)(box, h, wh)


def clipped_weight(box, h, vh, inv_lam):
    """``w_h = clip(v_h, λl_h, λu_h)/λ`` for a :data:`DcdBox`, ``v_h/λ if s_h v_h ≥ 0 else 0`` for a :data:`DcdSigns`
    (the same value; compiled, the choice is made once per type of ``box``)."""
    return (_signs_weight if isinstance(box, DcdSigns) else _box_weight)(box, h, vh, inv_lam)


def _is_signs(box_type) -> bool:
    return getattr(box_type, "instance_class", None) is DcdSigns


@overload(clipped_weight)
def _clipped_weight(box, h, vh, inv_lam):  # pragma: no cover - compiled
    return _signs_weight if _is_signs(box) else _box_weight


@overload(free_at)
def _free_at(box, h, wh):  # pragma: no cover - compiled
    return _signs_free_at if _is_signs(box) else _box_free_at


@nb.njit(cache=True)
def shuffle(index, active_size, rng):  # pragma: no cover - compiled
    """A fresh random order of the active samples ``index[:active_size]`` (a permutation of them, in place).

    ``rng`` is a one-record array of :data:`ORDER`: ``state`` is that of a xorshift64* generator (non-zero),
    advanced in place; the bounded draw is Lemire's multiply-shift on the top 32 bits. With ``block = B > 0`` and
    more than ``B`` (and at least ``min_rows``) active samples, the order is by blocks: the active samples sorted
    by row (a byte mark per row up to the largest), cut into blocks of ``B`` consecutive active rows, the blocks
    visited in a uniformly random order and each block from a uniformly random row on, cyclically (a rotation),
    so that a pass reads ``X`` in runs of ``B`` rows in storage order; otherwise (``B = 0``) a Fisher–Yates
    shuffle of ``index[:active_size]``. Derivation §7.
    """
    order = rng[0]
    x = order.state
    k = active_size
    B = order.block
    blocked = B > 0 and k > B and k >= order.min_rows
    n_draws = (k + B - 1) // B if blocked else k  # the permuted items: blocks or samples
    items = np.arange(n_draws).astype(index.dtype) if blocked else index[:k]
    for t in range(n_draws - 1, 0, -1):  # Fisher–Yates over the items
        x ^= x >> np.uint64(12)
        x ^= x << np.uint64(25)
        x ^= x >> np.uint64(27)
        r = (x * np.uint64(2685821657736338717)) >> np.uint64(32)
        j = np.int64((r * np.uint64(t + 1)) >> np.uint64(32))
        tmp = items[t]
        items[t] = items[j]
        items[j] = tmp
    if blocked:
        top = 0
        for s in range(k):
            top = max(top, np.int64(index[s]))
        mark = np.zeros(top + 1, dtype=np.bool_)
        for s in range(k):
            mark[index[s]] = True
        rows = np.empty(k, dtype=index.dtype)  # the active rows in storage order
        p = 0
        for i in range(top + 1):
            if mark[i]:
                rows[p] = i
                p += 1
        p = 0
        for t in range(n_draws):
            first = items[t] * B
            size = min(B, k - first)
            x ^= x >> np.uint64(12)
            x ^= x << np.uint64(25)
            x ^= x >> np.uint64(27)
            r = (x * np.uint64(2685821657736338717)) >> np.uint64(32)
            q = np.int64((r * np.uint64(size)) >> np.uint64(32))  # the rotation
            for _ in range(size):
                index[p] = rows[first + q]
                p += 1
                q += 1
                if q == size:
                    q = 0
    order.state = x


@nb.njit(cache=True)
def newton_step(alpha_i, G, q, upper):  # pragma: no cover - compiled
    """Exact minimizer along α_i of the convex quadratic with slope G and curvature q, on [0, upper]."""
    if q > 0.0:
        a = alpha_i - G / q
    else:  # zero curvature: the quadratic is linear, go to the bound G points to
        a = upper if G < 0.0 else 0.0
    if a < 0.0:
        a = 0.0
    elif a > upper:
        a = upper
    return a


@nb.njit(cache=True, inline="always")
def begin_epoch(index, active_size, rng, pg_max_old, pg_min_old):  # pragma: no cover - compiled
    """An epoch's start: ``index[:active_size]`` shuffled (:func:`shuffle`); returns the previous epoch's
    projected-gradient range, this epoch's (empty), the update count and the first position for :func:`screen`."""
    shuffle(index, active_size, rng)
    return (pg_max_old, pg_min_old), (-np.inf, np.inf), 0, 0


@nb.njit(cache=True, inline="always")
def screen(index, s, active_size, ai, G, upper, shrinking, pg_old, pg):  # pragma: no cover - compiled
    """liblinear's test of the sample ``index[s]`` at ``α_i ∈ [0, upper]`` with the dual's slope ``G``.

    The projected gradient ``PG`` is ``min(G, 0)`` at 0, ``max(G, 0)`` at ``upper``, ``G`` inside. With
    ``shrinking``, a sample at a bound whose gradient points out of the box beyond the previous epoch's range
    ``pg_old = (max, min)`` is swapped behind the active prefix. Returns ``(active_size, pg, s_next, step)``:
    the range ``pg`` of this epoch widened by ``PG``, the next position and whether to step (``|PG| > 1e-12``).
    """
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


def is_dense(rows) -> bool:
    """Whether ``rows`` (or its numba type) is :data:`DenseRows`."""
    return isinstance(rows, DenseRows) or getattr(rows, "instance_class", None) is DenseRows


@nb.njit(cache=True, fastmath=_FM, inline="always")
def worse_than_safe(ai, a_new, a_safe, G, ci, q_safe, d_ww, b_old, dv, lam, dii, rho):  # pragma: no cover
    """Whether the local step ``a_new`` gains less than the safe step ``a_safe`` is guaranteed to,
    ``−c_i(G Δ + ½ q_safe Δ²)`` with ``Δ = a_safe − α_i``: its exact gain counts ``−(λ/2)Δ‖w‖²`` (``d_ww``), the
    intercept ``b_old`` and ρ (``dv`` the move of ``S``)."""
    gain = (ci * ((a_new - ai) - 0.5 * dii * (a_new * a_new - ai * ai)) - 0.5 * lam * d_ww
            - b_old * dv - 0.5 * rho * dv * dv)
    ds = a_safe - ai
    return gain < -ci * (G * ds + 0.5 * q_safe * ds * ds)


@nb.njit(cache=True, fastmath=_FM)
def epoch_dense(rows, samples, alpha, st, box, prm, index, rng, active_size, pg_max_old,
                pg_min_old):  # pragma: no cover - compiled
    """One epoch over ``index[:active_size]`` for a dense C-ordered ``rows.X``.

    ``samples`` is a :data:`DcdSamples`, ``st`` a :data:`DcdState`, ``box`` a :data:`DcdBox` (or a
    :data:`DcdSigns` when the only bounds are signs: one compiled variant per type), ``prm`` a
    :data:`DcdParams`.
    Returns ``(active_size, pg_max_new, pg_min_new, n_updates)``; ``alpha``, ``st`` and ``index``
    are updated in place.
    """
    X = rows.X
    y, c, qdiag = samples.y, samples.c, samples.qdiag
    v, w, state = st.v, st.w, st.sums[0]
    inv_lam, upper, dii, rho, shrinking = prm.inv_lam, prm.upper, prm.dii, prm.rho, prm.shrinking
    d = X.shape[1]
    b0, S = state.b0, state.S
    pg_old, pg, n_updates, s = begin_epoch(index, active_size, rng, pg_max_old, pg_min_old)
    while s < active_size:
        i = index[s]
        acc = 0.0
        for h in range(d):
            acc += X[i, h] * w[h]
        yi, ai = y[i], alpha[i]
        G = yi * (acc + b0 + rho * S) - 1.0 + dii * ai
        active_size, pg, s, step = screen(index, s, active_size, ai, G, upper, shrinking, pg_old, pg)
        if step:
            a_new = newton_step(ai, G, qdiag[i], upper)
            delta = (a_new - ai) * yi * c[i]
            if delta != 0.0:
                alpha[i] = a_new
                S += delta
                n_updates += 1
                for h in range(d):
                    vh = v[h] + delta * X[i, h]
                    v[h] = vh
                    w[h] = clipped_weight(box, h, vh, inv_lam)
    state.S = S
    return active_size, pg[0], pg[1], n_updates


@nb.njit(cache=True, fastmath=_FM)
def epoch_sparse(rows, samples, alpha, st, box, prm, index, rng, active_size, pg_max_old,
                 pg_min_old):  # pragma: no cover - compiled
    """One epoch over ``index[:active_size]`` for a CSR ``X`` (``rows`` a :data:`CsrRows`).

    Touches only the stored entries of each visited row: O(nnz) per epoch. With ``local``
    (sign constraints present, no other bounds: the gain check reads the dual's ``(λ/2)‖w‖²``),
    on a row with a coordinate clipped at the current point (on a row with none the local curvature is ``qdiag``
    itself, and the plain step is taken without the check: late in a solve with frozen features, every row),
    the α-step uses the curvature of the coordinates free at the current point, which is kept
    only when its exact dual gain is at least what the step with the full curvature ``qdiag``
    is guaranteed to gain; otherwise that step is taken instead (so every step gains at least
    as much as the plain Newton step's bound).
    Same arguments, returns and in-place updates as :func:`epoch_dense`.
    """
    indptr, indices, data = rows.indptr, rows.indices, rows.data
    y, c, qdiag = samples.y, samples.c, samples.qdiag
    v, w, state = st.v, st.w, st.sums[0]
    inv_lam, upper, dii, rho = prm.inv_lam, prm.upper, prm.dii, prm.rho
    shrinking, local = prm.shrinking, prm.local
    b0, S = state.b0, state.S
    pg_old, pg, n_updates, s = begin_epoch(index, active_size, rng, pg_max_old, pg_min_old)
    while s < active_size:
        i = index[s]
        start = indptr[i]
        stop = indptr[i + 1]
        acc = 0.0
        q_free = 0.0  # Σ x_ih² over coordinates free at the current point (local curvature)
        n_free = 0.0  # their number
        for k in range(start, stop):
            h = indices[k]
            x = data[k]
            wh = w[h]
            acc += x * wh
            # free at the current point: w_h ≠ 0, or unconstrained (w_h = 0 with a sign means clipped or v_h = 0);
            # a product with the 0/1 indicator rather than a branch (the test is unpredictable)
            if local:
                f = free_at(box, h, wh)
                q_free += x * x * f
                n_free += f
        yi, ai = y[i], alpha[i]
        G = yi * (acc + b0 + rho * S) - 1.0 + dii * ai
        active_size, pg, s, step = screen(index, s, active_size, ai, G, upper, shrinking, pg_old, pg)
        if step:
            ci = c[i]
            a_safe = newton_step(ai, G, qdiag[i], upper)
            a_new = a_safe
            if local and n_free < stop - start:  # some coordinate clipped: the local curvature is below qdiag
                a_new = newton_step(ai, G, ci * (q_free * inv_lam + rho) + dii, upper)
            delta = (a_new - ai) * yi * ci
            if delta != 0.0:
                dw2 = 0.0  # change of ‖w‖² on the touched coordinates (β re-solved there), for the gain check
                if a_new != a_safe:
                    for k in range(start, stop):
                        h = indices[k]
                        vh = v[h] + delta * data[k]
                        wh = clipped_weight(box, h, vh, inv_lam)
                        dw2 += wh * wh - w[h] * w[h]
                        v[h] = vh
                        w[h] = wh
                else:
                    for k in range(start, stop):
                        h = indices[k]
                        vh = v[h] + delta * data[k]
                        v[h] = vh
                        w[h] = clipped_weight(box, h, vh, inv_lam)
                if local and a_new != a_safe:
                    # exact gain of the dual against the gain the curvature-bound step is sure to make
                    gain = (ci * (a_new - ai) - 0.5 * dii * ci * (a_new * a_new - ai * ai) - 0.5 / inv_lam * dw2
                            - (b0 + rho * S) * delta - 0.5 * rho * delta * delta)
                    ds = a_safe - ai
                    if gain < -ci * (G * ds + 0.5 * qdiag[i] * ds * ds):
                        delta2 = (a_safe - a_new) * yi * ci
                        for k in range(start, stop):
                            h = indices[k]
                            vh = v[h] + delta2 * data[k]
                            v[h] = vh
                            w[h] = clipped_weight(box, h, vh, inv_lam)
                        delta += delta2
                        a_new = a_safe
                alpha[i] = a_new
                S += delta
                n_updates += 1
    state.S = S
    return active_size, pg[0], pg[1], n_updates


@nb.njit(cache=True)
def weighted_quantile(t, c, target):  # pragma: no cover - compiled
    """The smallest ``τ`` among the ``t_i`` with ``Σ_{t_i ≤ τ} c_i ≥ target`` (the largest ``t_i`` if none).

    Quickselect with a three-way partition around a median-of-three pivot, keeping the
    weight of the elements already known to lie below the searched range: O(n) expected,
    no sort. Works on copies of ``t`` and ``c``.

    The partial sums are formed in a different order at each level, so where ``Σ_{t_i ≤ τ} c_i`` equals
    ``target`` up to rounding (equal weights ``1/n`` and a target that is a sum of them) one level can find the
    target reached below a pivot and a later one not: the searched range then empties. The pivot of the last
    level that found it reached (the smallest ``τ`` known to reach it) is returned then, not the largest ``t_i``.
    """
    tt = t.copy()
    cc = c.copy()
    lo = 0
    hi = tt.size
    below = 0.0  # weight of the elements smaller than every element of tt[lo:hi]
    reached = np.max(t)  # the smallest pivot found to reach the target so far
    while hi > lo:
        a = tt[lo]
        b = tt[lo + (hi - lo) // 2]
        e = tt[hi - 1]
        p = max(min(a, b), min(max(a, b), e))
        lt = lo
        i = lo
        gt = hi - 1
        w_less = 0.0
        w_equal = 0.0
        while i <= gt:
            x = tt[i]
            if x < p:
                tt[i], tt[lt] = tt[lt], x
                cc[i], cc[lt] = cc[lt], cc[i]
                w_less += cc[lt]
                lt += 1
                i += 1
            elif x > p:
                tt[i], tt[gt] = tt[gt], x
                cc[i], cc[gt] = cc[gt], cc[i]
                gt -= 1
            else:
                w_equal += cc[i]
                i += 1
        # tt[lo:lt] < p, tt[lt:gt + 1] == p, tt[gt + 1:hi] > p
        if lt > lo and below + w_less >= target:
            hi = lt
            reached = p
        elif below + w_less + w_equal >= target:
            return p
        else:
            below += w_less + w_equal
            lo = gt + 1
    return reached


@nb.njit(cache=True, fastmath=_FM)
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


def one_epoch(rows, *args):
    """:func:`epoch_dense` or :func:`epoch_sparse`, chosen by the type of ``rows`` (compiled: once per type)."""
    return (epoch_dense if isinstance(rows, DenseRows) else epoch_sparse)(rows, *args)


@overload(one_epoch)
def _one_epoch(rows, samples, alpha, st, box, prm, index, rng, active_size, pg_max_old,
               pg_min_old):  # pragma: no cover - compiled
    fn = epoch_dense if getattr(rows, "instance_class", None) is DenseRows else epoch_sparse

    def impl(rows, samples, alpha, st, box, prm, index, rng, active_size, pg_max_old, pg_min_old):
        return fn(rows, samples, alpha, st, box, prm, index, rng, active_size, pg_max_old, pg_min_old)
    return impl


@nb.njit(cache=True)
def run_epochs(rows, samples, alpha, st, box, prm, index, rng, shrink, block, avg, rx):  # pragma: no cover - compiled
    """Up to ``block.epochs`` epochs in one call, each followed by what the epoch loop does after it (``dual_ascent``).

    ``shrink`` is liblinear's shrinking state (a :data:`ShrinkState`), ``block`` an :data:`EpochBlock`. After each
    epoch: the pass count ``max(visited/n_total, min_pass)``, the intercept multiplier step ``b0 += ρ S`` (free
    intercept), the check ``v ∉ [lo, up]`` on ``rx`` (a :data:`BoundCheck` of the bounds beyond signs,
    :func:`outside`), the average ``avg ← (1 − a) avg + a w`` (skipped after an epoch that failed the check) and the
    shrinking rule. Stops after the epoch that fails the check, that makes the active set look solved (once
    ``since`` plus the epochs run reach 2), that spends ``work_left`` passes, or the last.
    Returns ``(epochs, looked_solved, passes, active_after_epoch, bound_binds, shrink)`` with the new
    :data:`ShrinkState`.
    """
    n_total = block.n_total
    state = st.sums[0]
    w = st.w
    active, pg_max_old, pg_min_old, pg_eps = shrink.active, shrink.pg_max_old, shrink.pg_min_old, shrink.pg_eps
    work = 0.0
    e = 0
    looked = False
    binds = False
    active_new = active
    while True:
        visited = active
        active_new, pg_max_new, pg_min_new, _ = one_epoch(rows, samples, alpha, st, box, prm, index, rng, visited,
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

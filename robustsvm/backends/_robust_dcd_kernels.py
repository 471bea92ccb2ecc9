"""Compiled epochs of the robust dual coordinate ascent (numba): a step along α_i maximizes a concave quadratic
minorant of ``D_u(α)``, then moves ``v``, ``A`` and the set's prox (``docs/derivations/robust_dcd.md`` §1–3).
"""

from __future__ import annotations

from collections import namedtuple

import numba as nb
from numba.extending import overload

from ._ball2_bounds_kernels import ball2_candidates, ball2_list, ball2_scalars
from ._compiled import FASTMATH, by_type, column, of_type, row_of
from ._dcd_kernels import begin_epoch, newton_step, screen, worse_than_safe
from ._shared_set_kernels import refresh, refresh_clipped, refresh_separable, soft, unpacked

__all__ = ["Ball2Scale", "Refresh", "Samples", "Step", "add_products", "epoch", "finish", "move", "move_row",
           "products", "refresh_all", "refreshes", "retry", "row_products", "start", "take", "variant", "visit"]


#: the sparse 2-ball lists the candidates for the scales up to this factor times the current one
_SMAX_MARGIN = 1.05
#: per sample: labels ±1, loss coefficients, radii, squared row norms
Samples = namedtuple("Samples", ["y", "c", "r", "sqn"])

#: one visited sample: label, loss coefficient, radius, ``α_i``, slope ``G``, safe curvature and step
Step = namedtuple("Step", ["yi", "ci", "ri", "ai", "G", "q_safe", "a_safe"])


@nb.njit(cache=True, fastmath=FASTMATH, inline="always")
def visit(index, s, active_size, sample, products, b_eff, scal, prm, pg_old, pg):  # pragma: no cover - compiled
    """The step at ``index[s]`` from ``sample = (y_i, c_i, r_i, ‖x_i‖², α_i)`` and the row's ``products``: safe
    curvature ``c_i(‖x_i − y_i r_i u‖²/λ2 + ρ) + δ``, or the local one first (§3). Returns ``(active_size, pg,
    s_next, Step, α_i new, its move)``."""
    xw, xu, xa, xua = products
    yi, ci, ri, sqn_i, ai = sample
    lam, rho, dii, upper = prm.lam, prm.rho, prm.dii, prm.upper
    G = yi * (xw + b_eff) - 1.0 - ri * scal[0].uw + dii * ai
    active_size, pg, s, go = screen(index, s, active_size, ai, G, upper, prm.shrinking, pg_old, pg)
    if not go:
        return active_size, pg, s, Step(yi, ci, ri, ai, G, 0.0, ai), ai, 0.0
    xt2 = max(sqn_i - 2.0 * yi * ri * xu + ri * ri * scal[0].uu, 0.0)
    q_safe = ci * (xt2 / lam + rho) + dii
    a_safe = a_new = newton_step(ai, G, q_safe, upper)
    if prm.local:
        xl2 = max(xa - 2.0 * yi * ri * xua + ri * ri * scal[0].ua, 0.0)
        a_new = newton_step(ai, G, ci * (xl2 / lam + rho) + dii, upper)
    return active_size, pg, s, Step(yi, ci, ri, ai, G, q_safe, a_safe), a_new, a_new - ai


@nb.njit(cache=True, fastmath=FASTMATH, inline="always")
def take(alpha, i, stp, a, da, S, A):  # pragma: no cover - compiled
    """``α_i ← a``; returns ``S``, ``A`` (at least 0) and ``dv = da y_i c_i``, the move of ``S`` and of ``v``."""
    alpha[i] = a
    dv = da * stp.yi * stp.ci
    if stp.ri != 0.0:
        A = max(A + da * stp.ci * stp.ri, 0.0)
    return S + dv, A, dv


@nb.njit(cache=True, fastmath=FASTMATH, inline="always")
def retry(stp, a, d_ww, b_old, dv, prm):  # pragma: no cover - compiled
    """``(a_safe, a_safe − a)`` when the local step ``a`` gained less than the safe step's bound, else ``(a, 0)``."""
    if a != stp.a_safe and worse_than_safe(stp.ai, a, stp.a_safe, stp.G, stp.ci, stp.q_safe, d_ww, b_old, dv,
                                           prm.lam, prm.dii, prm.rho):
        return stp.a_safe, stp.a_safe - a
    return a, 0.0


@nb.njit(cache=True, fastmath=FASTMATH, inline="always")
def add_products(acc, xh, wh, uh):  # pragma: no cover - compiled
    """``acc = (x_i·w, x_i·u, Σ_{w_h≠0} x_ih², Σ_{w_h≠0} x_ih u_h)`` with the entry ``x_ih`` added."""
    on = wh != 0.0
    return acc[0] + xh * wh, acc[1] + xh * uh, acc[2] + xh * xh * on, acc[3] + xh * uh * on


@nb.njit(cache=True, fastmath=FASTMATH, inline="always")
def row_products(rows, i, w, u):  # pragma: no cover - compiled
    """``(x_i·w, x_i·u, Σ_{w_h≠0} x_ih², Σ_{w_h≠0} x_ih u_h)`` on a dense or a CSR row."""
    columns, values, start, stop = row_of(rows, i)
    acc = (0.0, 0.0, 0.0, 0.0)
    for k in range(start, stop):
        h = column(columns, k)
        acc = add_products(acc, values[k], w[h], u[h])
    return acc


@nb.njit(cache=True, fastmath=FASTMATH, inline="always")
def move_row(rows, i, dv, v):  # pragma: no cover - compiled
    """``v += dv·x_i``."""
    columns, values, start, stop = row_of(rows, i)
    for k in range(start, stop):
        v[column(columns, k)] += dv * values[k]


@nb.njit(cache=True, fastmath=FASTMATH, inline="always")
def _ball2_move(rows, i, dv, st, setk, prm, nz2, ncand, smax):  # pragma: no cover - compiled
    """``v += dv·x_i``, ``z = T(v)/λ2`` and ``‖z‖²`` (``Σ_{h∉C} z_h²`` with bounds) on the stored entries of row i,
    the candidates for the scales up to ``smax`` following each coordinate (flag 2: listed, no longer one)."""
    indices, data = rows.indices, rows.data
    v, z, cand, flag = st.v, st.z, st.cand, st.flag
    sg, cap, bounded = setk.sg, setk.cap, setk.bounded
    lam1 = prm.lam1
    inv_lam = 1.0 / prm.lam
    for k in range(rows.indptr[i], rows.indptr[i + 1]):
        h = indices[k]
        vh = v[h] + dv * data[k]
        v[h] = vh
        zh = soft(vh, lam1, sg[h]) * inv_lam
        zo = z[h]
        z[h] = zh
        now = bounded and smax * abs(zh) > cap[h]
        if not (now or (ncand > 0 and flag[h] == 1)):
            nz2 += zh * zh - zo * zo  # not a candidate before nor after (no flag read while none is listed)
        else:
            was = flag[h] == 1
            if not now:
                nz2 += zh * zh
                flag[h] = 2
            elif not was:
                nz2 -= zo * zo
                if flag[h] == 0:
                    cand[ncand] = h
                    ncand += 1
                flag[h] = 1
    return max(nz2, 0.0), ncand


@nb.njit(cache=True, fastmath=FASTMATH, inline="always")
def _ball2_level_of(st, setk, prm, A, nz2, ncand, s_last, smax):  # pragma: no cover - compiled
    """``(s, 1/m, nz2, ncand, smax)`` after a step (:func:`._ball2_bounds_kernels.ball2_scalars` while no coordinate
    is a candidate); a root above ``smax`` remakes the list for ``smax = min(1, 1.05 s)`` (§7)."""
    while True:
        if ncand > 0:
            shrink, inv_m, ncand = ball2_candidates(st, setk, prm, A, nz2, ncand, s_last)
        else:
            shrink, inv_m = ball2_scalars(nz2, A, prm.lam, st.scal)
        if shrink <= smax:
            return shrink, inv_m, nz2, ncand, smax
        smax = min(1.0, _SMAX_MARGIN * shrink)
        nz2, ncand = ball2_list(st, setk, smax)


@nb.njit(cache=True, fastmath=FASTMATH, inline="always")
def _ball2_start(st, setk, prm, A):  # pragma: no cover - compiled
    """``(s, 1/m, nz2, ncand, smax)`` from ``z``; with bounds the list is made for ``smax = 1``, then for
    ``smax = min(1, 1.05 s)`` at the scale found (§7)."""
    z = st.z
    nz2 = 0.0
    for h in range(z.size):
        nz2 += z[h] * z[h]
    ncand = 0
    smax = 1.0
    if setk.bounded:
        rest2, ncand = ball2_list(st, setk, 1.0)
        shrink, _, rest2, ncand, smax = _ball2_level_of(st, setk, prm, A, rest2, ncand, st.mu[0], smax)
        smax = min(1.0, _SMAX_MARGIN * shrink)
        rest2, ncand = ball2_list(st, setk, smax)
        if ncand > 0:  # else the same sum as without bounds (the same rounding: the signs' path)
            nz2 = rest2
    return _ball2_level_of(st, setk, prm, A, nz2, ncand, st.mu[0], smax)


@nb.njit(cache=True, fastmath=FASTMATH, inline="always")
def _ball2_row(rows, i, st, setk, shrink, listed):  # pragma: no cover - compiled
    """``(x_i·z, x_i·(w − s z), Σ_{w_h≠0} x_ih², x_i·(z − z_e))`` on row i: ``w = s z`` but at the candidates, where
    ``w_h = clip(s z_h, lo_h, hi_h)`` (§7)."""
    indices, data = rows.indices, rows.data
    z, flag, lo, hi = st.z, st.flag, setk.lo, setk.hi
    xz = xa = xc = xe = 0.0
    for k in range(rows.indptr[i], rows.indptr[i + 1]):
        h = indices[k]
        zh = z[h]
        xh = data[k]
        xz += xh * zh
        xa += xh * xh * (zh != 0.0)
        if listed and flag[h] == 1:
            t = shrink * zh
            wc = min(max(t, lo[h]), hi[h])
            xc += xh * (wc - t)
            xa += xh * xh * (1.0 * (wc != 0.0) - 1.0 * (zh != 0.0))
            xe += xh * zh * (min(max(zh, lo[h]), hi[h]) == 0.0)
    return xz, xc, xa, xe


def _piece():
    def piece(step, *args):  # compiled only: the implementation of the variant of ``step`` (:func:`variant`)
        raise NotImplementedError
    return piece


#: the pieces of :func:`epoch`: ``start(step, rows, st, setk, prm, A)``, the scalars ``run`` carried from step to
#: step; ``products(step, rows, i, z, w, u, st, setk, run)``, :func:`visit`'s; ``move(step, rows, i, dv, v, st, setk,
#: prm, A, run)``, ``v += dv·x_i`` and what the variant keeps of the prox at the new ``A``, returning ``run``;
#: ``finish(step, st, setk, prm, A)``, what the epoch leaves in ``st``
start, products, move, finish = _piece(), _piece(), _piece(), _piece()
#: the variants of :func:`epoch` defined here (the box's band: :data:`._box_sparse_kernels.BoxBand`); the refresh's
#: epoch refreshes the prox over all coordinates after each step (:func:`refreshes`, a constant of the type)
Refresh = namedtuple("Refresh", [])
Ball2Scale = namedtuple("Ball2Scale", [])
refreshes = by_type(of_type(Refresh), lambda step: True, lambda step: False, inline="always")


def variant(cls, pieces):
    """Make ``pieces`` (plain functions, inlined) :func:`epoch`'s ``start, products, move, finish`` for a ``step`` of
    the named tuple type ``cls``."""
    for stub, impl in zip((start, products, move, finish), pieces, strict=True):
        overload(stub, strict=False, inline="always", jit_options={"fastmath": FASTMATH})(
            lambda step, *args, impl=impl: impl if getattr(step, "instance_class", None) is cls else None)


@nb.njit(cache=True, fastmath=FASTMATH)
def epoch(step, rows, samples, alpha, st, setk, prm, index, rng, active_size, pg_max_old,
          pg_min_old):  # pragma: no cover - compiled
    """One epoch over ``index[:active_size]``; returns ``(active_size, pg_max, pg_min, n_updates)``, ``alpha``,
    ``index`` and ``st`` updated in place. The type of ``step`` chooses the pieces (:func:`variant`):
    :data:`Refresh`, the prox refreshed after each step on dense or CSR rows (O(d), §3); :data:`Ball2Scale`, the
    2-ball on CSR rows in O(nnz(x_i)) per step (plus O(|C|) with bounds; ``z`` and ``‖z‖²`` kept on the touched
    coordinates, ``w`` and ``u`` rebuilt at the end, §7); :data:`._box_sparse_kernels.BoxBand` (§8). The arrays
    are unpacked once (an array read from a named tuple in the loop costs a reference count)."""
    y, c, r, sqn = samples.y, samples.c, samples.r, samples.sqn
    separable, kind, arrays, bounds, bounded, v, z, w, u, scal = unpacked(setk, st)
    each, state = refreshes(step), st.sums[0]
    b0, S, A = state.b0, state.S, state.A
    run = start(step, rows, st, setk, prm, A)
    pg_old, pg, n_updates, s = begin_epoch(index, active_size, rng, pg_max_old, pg_min_old)
    while s < active_size:
        i = index[s]
        active_size, pg, s, stp, a, da = visit(index, s, active_size, (y[i], c[i], r[i], sqn[i], alpha[i]),
                                               products(step, rows, i, z, w, u, st, setk, run), b0 + prm.rho * S,
                                               scal, prm, pg_old, pg)
        n_updates += da != 0.0
        while da != 0.0:  # the local step, then the safe one when the local gains less
            ww_old, b_old = scal[0].ww, b0 + prm.rho * S
            S, A, dv = take(alpha, i, stp, a, da, S, A)
            run = move(step, rows, i, dv, v, st, setk, prm, A, run)
            if each and (not separable or refresh_separable(kind, v, z, w, u, scal, arrays, A, prm, bounds, bounded)):
                refresh_clipped(setk, st, A, prm, prm.inner)
            a, da = retry(stp, a, scal[0].ww - ww_old, b_old, dv, prm)
    state.S = S
    state.A = A
    finish(step, st, setk, prm, A)
    return active_size, pg[0], pg[1], n_updates


def _refresh_products(step, rows, i, z, w, u, st, setk, run):
    return row_products(rows, i, w, u)


def _refresh_move(step, rows, i, dv, v, st, setk, prm, A, run):
    move_row(rows, i, dv, v)
    return run


def _none(step, rows, st, setk, prm, A):
    return 0


def _unchanged(step, st, setk, prm, A):
    return 0


def refresh_all(step, st, setk, prm, A):
    """The prox over all coordinates (a variant's finish)."""
    refresh(setk, st, A, prm, prm.inner)


def _ball2_first(step, rows, st, setk, prm, A):
    return _ball2_start(st, setk, prm, A)


def _ball2_products(step, rows, i, z, w, u, st, setk, run):
    shrink, inv_m, _, ncand, _ = run
    xz, xc, xa, xe = _ball2_row(rows, i, st, setk, shrink, ncand > 0)
    xw = shrink * xz + xc
    xu = (xw if ncand > 0 and shrink > 0.0 else xz - xe) * inv_m  # 1/m is 1/‖w‖ while candidates are listed
    return (xw, xu, xa, xu) if shrink > 0.0 else (xw, xu, 0.0, 0.0)


def _ball2_step(step, rows, i, dv, v, st, setk, prm, A, run):
    shrink, _, nz2, ncand, smax = run
    nz2, ncand = _ball2_move(rows, i, dv, st, setk, prm, nz2, ncand, smax)
    return _ball2_level_of(st, setk, prm, A, nz2, ncand, shrink, smax)


variant(Refresh, (_none, _refresh_products, _refresh_move, _unchanged))
variant(Ball2Scale, (_ball2_first, _ball2_products, _ball2_step, refresh_all))

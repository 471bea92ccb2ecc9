"""Compiled epochs of the robust dual coordinate ascent (numba): one epoch, written once over the set's step.

The dual of the robust model (``docs/derivations/robust_dcd.md``) is, for any point ``u`` of the shared unit set
``V``, bounded below by ``D_u(α) = Σ_i c_i (α_i − ℓ*(α_i)) − (λ2/2)‖w_u‖² [− S²/(2μ)]``, ``w_u = T(v − A u)/λ2``,
with equality at the saddle point ``u*(v, A)``. One coordinate step maximizes the concave quadratic minorant of
``D_u`` along α_i (slope from the exact gradient, curvature ``c_i‖x_i − y_i r_i u‖²/λ2`` plus the loss's
``ℓ*''``), then moves ``v`` and ``A`` and the set's prox follows. :func:`epoch` is that loop; how the prox
follows a step is the set's declared sparse step, passed as the type of ``step``:

* :data:`RefreshStep`: ``w`` and ``u`` rebuilt by :func:`._shared_set_kernels.refresh` (O(d); dense or CSR rows);
* :data:`ScaleStep`: the 2-ball's ``w = s z`` kept through the scale ``s`` and ``‖z‖²`` in O(nnz(x_i)) (plus
  O(|C|) with bounds, :mod:`._ball2_bounds_kernels`);
* :data:`BandStep`: the box's four sums in O(nnz(x_i) + |C|) (:mod:`._box_sparse_kernels`).

``State.sums`` is a record of :data:`._dcd_kernels.SUMS`; ``scal = [u·w, ‖u‖², θ, ‖w‖², Σ_{w_h≠0} u_h²]``.
"""

from __future__ import annotations

from collections import namedtuple

import numba as nb
import numpy as np
from numba.extending import overload

from ._ball2_bounds_kernels import ball2_candidates, ball2_list, ball2_scalars
from ._box_sparse_kernels import band_move, band_products, band_start
from ._dcd_kernels import newton_step, row_entry, row_span, shuffle, visit
from ._shared_set_kernels import bound_arrays, is_separable, refresh, refresh_separable, set_arrays, soft

__all__ = ["STEPS", "BandStep", "RefreshStep", "Samples", "ScaleStep", "epoch"]

_FM = {"reassoc", "contract", "nsz", "arcp"}

#: the sparse 2-ball with bounds lists the candidates for the scales up to this factor times the current one
_SMAX_MARGIN = 1.05
#: per sample: labels ±1, loss coefficients, radii, squared row norms
Samples = namedtuple("Samples", ["y", "c", "r", "sqn"])
#: the set's step (``SetDescription.sparse_step``), as the type the compiled :func:`epoch` specializes on
RefreshStep = namedtuple("RefreshStep", [])
ScaleStep = namedtuple("ScaleStep", [])
BandStep = namedtuple("BandStep", [])
#: the steps by their declared names
STEPS = {"refresh": RefreshStep(), "scale": ScaleStep(), "band": BandStep()}


@nb.njit(cache=True, fastmath=_FM, inline="always")
def _steps(ai, G, ci, yi, ri, sqn_i, xu, xa, xua, scal, prm):  # pragma: no cover - compiled
    """The safe and the local step along α_i: ``(q_safe, a_safe, a_new)``.

    The safe curvature ``c_i(‖x_i − y_i r_i u‖²/λ2 + ρ) + δ`` bounds ``D_u``'s; the local one counts only the
    coordinates with ``w_h ≠ 0`` (used with L1 or signs, kept only if its exact gain is no worse, see
    :func:`_worse_than_safe`). Without ``local`` the two steps are the same.
    """
    lam, rho, dii, upper = prm.lam, prm.rho, prm.dii, prm.upper
    xt2 = max(sqn_i - 2.0 * yi * ri * xu + ri * ri * scal[1], 0.0)
    q_safe = ci * (xt2 / lam + rho) + dii
    a_safe = newton_step(ai, G, q_safe, upper)
    a_new = a_safe
    if prm.local:
        xl2 = max(xa - 2.0 * yi * ri * xua + ri * ri * scal[4], 0.0)
        a_new = newton_step(ai, G, ci * (xl2 / lam + rho) + dii, upper)
    return q_safe, a_safe, a_new


@nb.njit(cache=True, fastmath=_FM, inline="always")
def _worse_than_safe(ai, a_new, a_safe, G, ci, q_safe, d_ww, b_old, dv, prm):  # pragma: no cover
    """Whether the local step's exact dual gain is below the gain the safe step is guaranteed,
    ``−c_i(G Δ + ½ q_safe Δ²)`` with ``Δ = a_safe − α_i`` (then the safe step is taken instead)."""
    dii, lam, rho = prm.dii, prm.lam, prm.rho
    gain = (ci * ((a_new - ai) - 0.5 * dii * (a_new * a_new - ai * ai)) - 0.5 * lam * d_ww
            - b_old * dv - 0.5 * rho * dv * dv)
    ds = a_safe - ai
    return gain < -ci * (G * ds + 0.5 * q_safe * ds * ds)


@nb.njit(cache=True, fastmath=_FM, inline="always")
def _radius_mass(A, da, ci, ri):  # pragma: no cover - compiled
    """``A = Σ c_i α_i r_i`` after ``α_i`` moves by ``da`` (clipped at 0 against rounding)."""
    if ri != 0.0:
        A += da * ci * ri
        if A < 0.0:
            A = 0.0
    return A


def _is(step, cls) -> bool:
    return getattr(step, "instance_class", None) is cls


@nb.njit(cache=True, fastmath=_FM, inline="always")
def _refresh_products(rows, i, w, u):  # pragma: no cover - compiled
    """``(x_i·w, x_i·u, Σ_{w_h≠0} x_ih², Σ_{w_h≠0} x_ih u_h)`` on a dense or a CSR row (the last two: the local
    curvature)."""
    xw = 0.0
    xu = 0.0
    xa = 0.0
    xua = 0.0
    start, stop = row_span(rows, i)
    for k in range(start, stop):
        h, xh = row_entry(rows, i, k)
        wh = w[h]
        xw += xh * wh
        xu += xh * u[h]
        on = wh != 0.0
        xa += xh * xh * on
        xua += xh * u[h] * on
    return xw, xu, xa, xua


@nb.njit(cache=True, fastmath=_FM, inline="always")
def _move_row(rows, i, dv, v):  # pragma: no cover - compiled
    """``v += dv·x_i`` on a dense or a CSR row."""
    start, stop = row_span(rows, i)
    for k in range(start, stop):
        h, xh = row_entry(rows, i, k)
        v[h] += dv * xh


def start(step, rows, st, setk, prm, A):
    """The epoch's context of the set's step: what the products and the moves read and carry."""


def products(step, rows, i, st, setk, ctx):
    """``(x_i·w, x_i·u, Σ_{w_h≠0} x_ih², Σ_{w_h≠0} x_ih u_h)`` at the current point."""


def move(step, rows, i, dv, st, setk, prm, A, ctx):
    """``v += dv·x_i`` at the radius mass ``A`` and the prox after it; returns the new context."""


def finish(step, st, setk, prm, A):
    """``w`` and ``u`` formed at the end of the epoch when the step kept them implicit."""


@overload(finish, jit_options={"fastmath": _FM})
def _finish(step, st, setk, prm, A):  # pragma: no cover - compiled
    if _is(step, RefreshStep):
        return lambda step, st, setk, prm, A: None
    return lambda step, st, setk, prm, A: refresh(setk, st, A, prm, prm.inner)


@overload(start, jit_options={"fastmath": _FM})
def _start(step, rows, st, setk, prm, A):  # pragma: no cover - compiled
    if _is(step, RefreshStep):  # the arrays unpacked once per epoch: a read from a named tuple costs a reference
        return lambda step, rows, st, setk, prm, A: (is_separable(setk), setk.kind, st.v, st.z, st.w, st.u, st.scal,
                                                      set_arrays(setk), bound_arrays(setk), setk.bounded)
    if _is(step, ScaleStep):
        return lambda step, rows, st, setk, prm, A: _ball2_start(st, setk, prm, A)
    return lambda step, rows, st, setk, prm, A: band_start(st, setk, prm, A)


@overload(products, jit_options={"fastmath": _FM})
def _products(step, rows, i, st, setk, ctx):  # pragma: no cover - compiled
    if _is(step, RefreshStep):
        return lambda step, rows, i, st, setk, ctx: _refresh_products(rows, i, ctx[4], ctx[5])
    if _is(step, ScaleStep):
        return lambda step, rows, i, st, setk, ctx: _ball2_products(rows, i, st, setk, ctx)
    return lambda step, rows, i, st, setk, ctx: band_products(rows, i, ctx)


@overload(move, jit_options={"fastmath": _FM})
def _move(step, rows, i, dv, st, setk, prm, A, ctx):  # pragma: no cover - compiled
    if _is(step, RefreshStep):
        def impl(step, rows, i, dv, st, setk, prm, A, ctx):
            separable, kind, v, z, w, u, scal, arrays, bounds, bounded = ctx
            _move_row(rows, i, dv, v)
            if not separable or refresh_separable(kind, v, z, w, u, scal, arrays, A, prm, bounds, bounded):
                refresh(setk, st, A, prm, prm.inner)
            return ctx
        return impl
    if _is(step, ScaleStep):
        def impl(step, rows, i, dv, st, setk, prm, A, ctx):
            nz2, ncand, shrink, inv_m, smax = ctx
            nz2, ncand = _ball2_move(rows, i, dv, st, setk, prm, nz2, ncand, smax)
            shrink, inv_m, nz2, ncand, smax = _ball2_level_of(st, setk, prm, A, nz2, ncand, shrink, smax)
            return nz2, ncand, shrink, inv_m, smax
        return impl
    return lambda step, rows, i, dv, st, setk, prm, A, ctx: band_move(rows, i, dv, st, prm, A, ctx)


@nb.njit(cache=True, fastmath=_FM)
def epoch(rows, samples, alpha, st, setk, prm, index, rng, active_size, pg_max_old, pg_min_old,
          step):  # pragma: no cover - compiled
    """One epoch over ``index[:active_size]``, the prox following each step by the set's ``step``.

    A step takes the local curvature (with L1, signs or bounds, ``prm.local``) and falls back to the safe one when
    the local gains less than the safe step is guaranteed to (:func:`_worse_than_safe`). Returns ``(active_size,
    pg_max_new, pg_min_new, n_updates)``; ``alpha``, ``index`` and the ``State`` ``st`` are updated in place (``w``
    and ``u`` rebuilt at the end when the step kept them implicit).
    """
    y, c, r, sqn = samples.y, samples.c, samples.r, samples.sqn
    scal, state = st.scal, st.sums[0]
    upper, dii, rho, shrinking = prm.upper, prm.dii, prm.rho, prm.shrinking
    shuffle(index, active_size, rng)
    b0, S, A = state.b0, state.S, state.A
    ctx = start(step, rows, st, setk, prm, A)
    pg_range = (-np.inf, np.inf)
    n_updates = 0
    s = 0
    while s < active_size:
        i = index[s]
        xw, xu, xa, xua = products(step, rows, i, st, setk, ctx)
        yi, ai, ri = y[i], alpha[i], r[i]
        G = yi * (xw + b0 + rho * S) - 1.0 - ri * scal[0] + dii * ai
        leaves, steps, pg_range, active_size = visit(index, s, active_size, ai, G, upper, shrinking, pg_max_old,
                                                     pg_min_old, pg_range)
        if leaves:
            continue
        if steps:
            ci = c[i]
            q_safe, a_safe, a_new = _steps(ai, G, ci, yi, ri, sqn[i], xu, xa, xua, scal, prm)
            da = a_new - ai
            if da != 0.0:
                ww_old = scal[3]
                b_old = b0 + rho * S
                alpha[i] = a_new
                dv = da * yi * ci
                S += dv
                n_updates += 1
                A = _radius_mass(A, da, ci, ri)
                ctx = move(step, rows, i, dv, st, setk, prm, A, ctx)
                if a_new != a_safe and _worse_than_safe(ai, a_new, a_safe, G, ci, q_safe, scal[3] - ww_old, b_old,
                                                        dv, prm):
                    da2 = a_safe - a_new
                    dv2 = da2 * yi * ci
                    alpha[i] = a_safe
                    S += dv2
                    A = _radius_mass(A, da2, ci, ri)
                    ctx = move(step, rows, i, dv2, st, setk, prm, A, ctx)
        s += 1
    state.S = S
    state.A = A
    finish(step, st, setk, prm, A)
    return active_size, pg_range[0], pg_range[1], n_updates


@nb.njit(cache=True, fastmath=_FM, inline="always")
def _ball2_move(rows, i, dv, st, setk, prm, nz2, ncand, smax):  # pragma: no cover - compiled
    """``v += dv·x_i`` and ``z = T(v)/λ2`` on the stored entries of row i; returns the updated ``‖z‖²`` and
    ``ncand``. With bounds the sum is ``Σ_{h∉C} z_h²`` and a touched coordinate enters the candidates for the
    scales up to ``smax`` (``smax·|z_h| > cap_h``, :func:`._ball2_bounds_kernels.ball2_list`; appended to
    ``cand`` unless listed) or leaves them (flag 2, dropped from the list by
    :func:`._ball2_bounds_kernels.ball2_candidates`)."""
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


@nb.njit(cache=True, fastmath=_FM, inline="always")
def _ball2_level_of(st, setk, prm, A, nz2, ncand, s_last, smax):  # pragma: no cover - compiled
    """``(s, 1/m, nz2, ncand, smax)`` after a step: :func:`._ball2_bounds_kernels.ball2_scalars` while no
    coordinate is a candidate (also with bounds: then ``w = s z`` exactly, the signs' step), else
    :func:`._ball2_bounds_kernels.ball2_candidates` (``nz2`` is then ``Σ_{h∉C} z_h²``; ``1/m`` is ``1/‖w‖``
    while the list is not empty). Either root is at least the prox's scale, and equal to it when at most
    ``smax``; above, the list is remade for ``smax = min(1, 1.05 s)`` (O(d), rare: ``s`` moves little per step)."""
    while True:
        if ncand > 0:
            shrink, inv_m, ncand = ball2_candidates(st, setk, prm, A, nz2, ncand, s_last)
        else:
            shrink, inv_m = ball2_scalars(nz2, A, prm.lam, st.scal)
        if shrink <= smax:
            return shrink, inv_m, nz2, ncand, smax
        smax = min(1.0, _SMAX_MARGIN * shrink)
        nz2, ncand = ball2_list(st, setk, smax)


@nb.njit(cache=True, fastmath=_FM, inline="always")
def _ball2_start(st, setk, prm, A):  # pragma: no cover - compiled
    """The sparse 2-ball epoch's scalars from ``z`` as the last refresh left it: ``(nz2, ncand, s, 1/m, smax)``;
    with bounds the candidate list is made (O(d)) for ``smax = 1``, then again for ``smax = min(1, 1.05 s)`` at the
    scale ``s`` found, and ``nz2 = Σ_{h∉C} z_h²``."""
    z = st.z
    nz2 = 0.0
    for h in range(z.size):
        nz2 += z[h] * z[h]
    ncand = 0
    smax = 1.0
    if setk.bounded:
        rest2, ncand = ball2_list(st, setk, 1.0)
        shrink, inv_m, rest2, ncand, smax = _ball2_level_of(st, setk, prm, A, rest2, ncand, st.mu[0], smax)
        smax = min(1.0, _SMAX_MARGIN * shrink)
        rest2, ncand = ball2_list(st, setk, smax)
        if ncand > 0:  # else the same sum as without bounds (the same rounding: the signs' path)
            nz2 = rest2
    shrink, inv_m, nz2, ncand, smax = _ball2_level_of(st, setk, prm, A, nz2, ncand, st.mu[0], smax)
    return nz2, ncand, shrink, inv_m, smax


@nb.njit(cache=True, fastmath=_FM, inline="always")
def _ball2_row(rows, i, st, setk, shrink, listed):  # pragma: no cover - compiled
    """``(x_i·z, x_i·(w − s z), Σ_{w_h≠0} x_ih², x_i·(z − z_e))`` on the stored entries of row i (the third for
    ``s > 0``): ``w = s z`` except at the candidates (flag 1, only while the list is not empty: ``listed``), where
    ``w_h = clip(s z_h, lo_h, hi_h)``; ``z_e`` is 0 where the bound on the side of ``z_h`` is 0 (for ``u = z_e/τ``
    when ``w = 0``)."""
    indices, data = rows.indices, rows.data
    z, flag, lo, hi = st.z, st.flag, setk.lo, setk.hi
    xz = 0.0
    xa = 0.0
    xc = 0.0
    xe = 0.0
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


@nb.njit(cache=True, fastmath=_FM, inline="always")
def _ball2_products(rows, i, st, setk, ctx):  # pragma: no cover - compiled
    """The products of :func:`epoch` from ``z`` and the scalars of ``ctx`` (:func:`_ball2_row`): ``w = s z`` and
    ``u = z/m`` are never formed (``1/m`` is ``1/‖w‖`` while candidates are listed)."""
    ncand, shrink, inv_m = ctx[1], ctx[2], ctx[3]
    xz, xc, xa, xe = _ball2_row(rows, i, st, setk, shrink, ncand > 0)
    xw = shrink * xz + xc
    xu = (xw if ncand > 0 and shrink > 0.0 else xz - xe) * inv_m
    if shrink <= 0.0:
        xa = 0.0
    return xw, xu, xa, (xu if shrink > 0.0 else 0.0)

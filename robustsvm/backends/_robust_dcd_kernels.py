"""Compiled epochs of the robust dual coordinate ascent (numba).

The dual of the robust model (``docs/derivations/robust_dcd.md``) is, for any point ``u`` of the shared
unit set ``V``, bounded below by the nominal-looking function

    D_u(α) = Σ_i c_i (α_i − δ α_i²/4) − (λ2/2)‖w_u‖² [− S²/(2μ)],
    w_u = T(v − A u)/λ2,   T(p)_h = clip_{s_h}(soft(p_h, λ1)),
    v = Σ_i c_i y_i α_i x_i,   A = Σ_i c_i α_i r_i,

with equality at the saddle point ``u*(v, A)``; then ``w_u`` is the exact minimizer ``w(α)``. The maintained
state is ``v``, ``A``, ``u`` and ``w = w_u``, plus the prox's scalars ``scal`` (a record of
:data:`._shared_set_kernels.PROX`). One coordinate step maximizes the concave quadratic minorant of ``D_u`` along α_i
(slope from the exact gradient, curvature ``c_i‖x_i − y_i r_i u‖²/λ2`` bounds ``D_u``'s), then moves ``v``
and ``A`` and recomputes ``u`` and ``w`` (:func:`._shared_set_kernels.refresh`, the prox of each set).
``State.sums`` is a record of :data:`._dcd_kernels.SUMS`: the intercept multiplier ``b0``, ``S = Σ c_i y_i α_i`` and
``A``.

The compiled functions take the solve's arrays as a few named tuples (:data:`Samples`, and
:data:`._shared_set_kernels.SetKernel`, ``State``, ``Params``; the rows of ``X`` as
:data:`._dcd_kernels.DenseRows` or ``CsrRows``).
"""

from __future__ import annotations

from collections import namedtuple

import numba as nb
import numpy as np
from numba.extending import overload

from ._ball2_bounds_kernels import ball2_candidates, ball2_list, ball2_scalars
from ._dcd_kernels import DenseRows, drop_from_active, leaves_active_set, newton_step, projected_gradient, shuffle
from ._shared_set_kernels import bound_arrays, is_separable, refresh, refresh_separable, set_arrays, soft

__all__ = ["Samples", "epoch_refresh", "epoch_sparse_ball2", "move_row", "radius_mass", "row_products",
           "safe_and_local_steps", "worse_than_safe"]

_FM = {"reassoc", "contract", "nsz", "arcp"}

#: the sparse 2-ball with bounds lists the candidates for the scales up to this factor times the current one
_SMAX_MARGIN = 1.05
#: per sample: labels ±1, loss coefficients, radii, squared row norms
Samples = namedtuple("Samples", ["y", "c", "r", "sqn"])


@nb.njit(cache=True, fastmath=_FM, inline="always")
def _steps(ai, G, ci, yi, ri, sqn_i, xu, xa, xua, scal, prm):  # pragma: no cover - compiled
    """The safe and the local step along α_i: ``(q_safe, a_safe, a_new)``.

    The safe curvature ``c_i(‖x_i − y_i r_i u‖²/λ2 + ρ) + δ`` bounds ``D_u``'s; the local one counts only the
    coordinates with ``w_h ≠ 0`` (used with L1 or signs, kept only if its exact gain is no worse, see
    :func:`_worse_than_safe`). Without ``local`` the two steps are the same.
    """
    lam, rho, dii, upper = prm.lam, prm.rho, prm.dii, prm.upper
    xt2 = max(sqn_i - 2.0 * yi * ri * xu + ri * ri * scal[0].uu, 0.0)
    q_safe = ci * (xt2 / lam + rho) + dii
    a_safe = newton_step(ai, G, q_safe, upper)
    a_new = a_safe
    if prm.local:
        xl2 = max(xa - 2.0 * yi * ri * xua + ri * ri * scal[0].ua, 0.0)
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


def _products_dense(rows, i, w, u):
    X = rows.X
    xw = xu = xa = xua = 0.0
    for h in range(X.shape[1]):
        xh = X[i, h]
        wh = w[h]
        xw += xh * wh
        xu += xh * u[h]
        on = wh != 0.0
        xa += xh * xh * on
        xua += xh * u[h] * on
    return xw, xu, xa, xua


def _products_sparse(rows, i, w, u):
    indices, data = rows.indices, rows.data
    xw = xu = xa = xua = 0.0
    for k in range(rows.indptr[i], rows.indptr[i + 1]):
        h = indices[k]
        xh = data[k]
        wh = w[h]
        xw += xh * wh
        xu += xh * u[h]
        on = wh != 0.0
        xa += xh * xh * on
        xua += xh * u[h] * on
    return xw, xu, xa, xua


def _move_dense(rows, i, dv, v):
    X = rows.X
    for h in range(X.shape[1]):
        v[h] += dv * X[i, h]


def _move_sparse(rows, i, dv, v):
    indices, data = rows.indices, rows.data
    for k in range(rows.indptr[i], rows.indptr[i + 1]):
        v[indices[k]] += dv * data[k]


def row_products(rows, i, w, u):
    """``(x_i·w, x_i·u, Σ_{w_h≠0} x_ih², Σ_{w_h≠0} x_ih u_h)`` on a dense or a CSR row (the last two: the local
    curvature); compiled, the loop is chosen once per type of ``rows``."""
    return (_products_dense if isinstance(rows, DenseRows) else _products_sparse)(rows, i, w, u)


def move_row(rows, i, dv, v):
    """``v += dv·x_i`` on a dense or a CSR row (its stored entries)."""
    return (_move_dense if isinstance(rows, DenseRows) else _move_sparse)(rows, i, dv, v)


def _dense(rows) -> bool:
    return getattr(rows, "instance_class", None) is DenseRows


@overload(row_products, inline="always", jit_options={"fastmath": _FM})
def _row_products(rows, i, w, u):  # pragma: no cover - compiled
    return _products_dense if _dense(rows) else _products_sparse


@overload(move_row, inline="always", jit_options={"fastmath": _FM})
def _move_row(rows, i, dv, v):  # pragma: no cover - compiled
    return _move_dense if _dense(rows) else _move_sparse


@nb.njit(cache=True, fastmath=_FM)
def epoch_refresh(rows, samples, alpha, st, setk, prm, index, rng, active_size, pg_max_old,
                  pg_min_old):  # pragma: no cover - compiled
    """One epoch over ``index[:active_size]`` for dense C-ordered rows or CSR rows (the products touch the stored
    entries of row i only), the prox refreshed after each step (:func:`._shared_set_kernels.refresh`, O(d); the
    sets whose sparse step keeps it implicit have their own CSR epochs).

    Returns ``(active_size, pg_max_new, pg_min_new, n_updates)``; ``alpha``, ``index`` and the :data:`State`
    ``st`` are updated in place.
    """
    y, c, r, sqn = samples.y, samples.c, samples.r, samples.sqn
    v, w, u, scal, state = st.v, st.w, st.u, st.scal, st.sums[0]
    upper, dii, rho, inner, shrinking = prm.upper, prm.dii, prm.rho, prm.inner, prm.shrinking
    # the arrays of refresh_separable read from the named tuples once per epoch, not at every step
    separable, kind, z, arrays, bounds, bounded = (is_separable(setk), setk.kind, st.z, set_arrays(setk),
                                                   bound_arrays(setk), setk.bounded)
    b0 = state.b0
    S = state.S
    A = state.A
    pg_max_new = -np.inf
    pg_min_new = np.inf
    n_updates = 0
    shuffle(index, active_size, rng)
    s = 0
    while s < active_size:
        i = index[s]
        xw, xu, xa, xua = row_products(rows, i, w, u)
        yi = y[i]
        ai = alpha[i]
        ri = r[i]
        G = yi * (xw + b0 + rho * S) - 1.0 - ri * scal[0].uw + dii * ai
        PG = projected_gradient(ai, G, upper)
        if shrinking and leaves_active_set(ai, G, upper, pg_max_old, pg_min_old):
            active_size = drop_from_active(index, s, active_size)
            continue
        pg_max_new = max(pg_max_new, PG)
        pg_min_new = min(pg_min_new, PG)
        if abs(PG) > 1e-12:
            ci = c[i]
            q_safe, a_safe, a_new = _steps(ai, G, ci, yi, ri, sqn[i], xu, xa, xua, scal, prm)
            da = a_new - ai
            if da != 0.0:
                ww_old = scal[0].ww
                b_old = b0 + rho * S
                alpha[i] = a_new
                dv = da * yi * ci
                S += dv
                n_updates += 1
                move_row(rows, i, dv, v)
                A = _radius_mass(A, da, ci, ri)
                if not separable or refresh_separable(kind, v, z, w, u, scal, arrays, A, prm, bounds, bounded):
                    refresh(setk, st, A, prm, inner)
                if a_new != a_safe:
                    if _worse_than_safe(ai, a_new, a_safe, G, ci, q_safe, scal[0].ww - ww_old, b_old, dv, prm):
                        da2 = a_safe - a_new
                        dv2 = da2 * yi * ci
                        alpha[i] = a_safe
                        S += dv2
                        move_row(rows, i, dv2, v)
                        A = _radius_mass(A, da2, ci, ri)
                        if not separable or refresh_separable(kind, v, z, w, u, scal, arrays, A, prm, bounds,
                                                              bounded):
                            refresh(setk, st, A, prm, inner)
        s += 1
    state.S = S
    state.A = A
    return active_size, pg_max_new, pg_min_new, n_updates


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


@nb.njit(cache=True, fastmath=_FM)
def epoch_sparse_ball2(rows, samples, alpha, st, setk, prm, index, rng, active_size, pg_max_old,
                        pg_min_old):  # pragma: no cover - compiled
    """:func:`epoch_refresh` on CSR rows for the 2-ball in O(nnz(x_i)) per step (plus O(|C|) with bounds).

    ``w = σ z`` and ``u = z/m`` depend on the shrink level only through two scalars of ``‖z‖``, so the epoch
    keeps ``z = T(v)/λ2`` and ``‖z‖²`` up to date on the touched coordinates and never forms ``w`` or ``u``;
    they are rebuilt (O(d)) once at the end of the epoch. With bounds ``w = clip(s z, lo, hi)`` differs from
    ``s z`` only at the candidates C (``._ball2_bounds_kernels.ball2_candidates``, ``docs/derivations/robust_dcd.md``
    §7): the epoch also keeps their list and ``Σ_{h∉C} z_h²``, and the scale's root costs O(|C|).
    """
    y, c, r, sqn = samples.y, samples.c, samples.r, samples.sqn
    scal, state = st.scal, st.sums[0]
    upper, dii, rho, shrinking = prm.upper, prm.dii, prm.rho, prm.shrinking
    b0 = state.b0
    S = state.S
    A = state.A
    pg_max_new = -np.inf
    pg_min_new = np.inf
    n_updates = 0
    nz2, ncand, shrink, inv_m, smax = _ball2_start(st, setk, prm, A)
    shuffle(index, active_size, rng)
    s = 0
    while s < active_size:
        i = index[s]
        xz, xc, xa, xe = _ball2_row(rows, i, st, setk, shrink, ncand > 0)
        xw = shrink * xz + xc
        xu = (xw if ncand > 0 and shrink > 0.0 else xz - xe) * inv_m  # 1/m is 1/‖w‖ while candidates are listed
        if shrink <= 0.0:
            xa = 0.0
        xua = xu if shrink > 0.0 else 0.0
        yi = y[i]
        ai = alpha[i]
        ri = r[i]
        G = yi * (xw + b0 + rho * S) - 1.0 - ri * scal[0].uw + dii * ai
        PG = projected_gradient(ai, G, upper)
        if shrinking and leaves_active_set(ai, G, upper, pg_max_old, pg_min_old):
            active_size = drop_from_active(index, s, active_size)
            continue
        pg_max_new = max(pg_max_new, PG)
        pg_min_new = min(pg_min_new, PG)
        if abs(PG) > 1e-12:
            ci = c[i]
            q_safe, a_safe, a_new = _steps(ai, G, ci, yi, ri, sqn[i], xu, xa, xua, scal, prm)
            da = a_new - ai
            if da != 0.0:
                ww_old = scal[0].ww
                b_old = b0 + rho * S
                alpha[i] = a_new
                dv = da * yi * ci
                S += dv
                n_updates += 1
                nz2, ncand = _ball2_move(rows, i, dv, st, setk, prm, nz2, ncand, smax)
                A = _radius_mass(A, da, ci, ri)
                shrink, inv_m, nz2, ncand, smax = _ball2_level_of(st, setk, prm, A, nz2, ncand, shrink, smax)
                if a_new != a_safe:
                    if _worse_than_safe(ai, a_new, a_safe, G, ci, q_safe, scal[0].ww - ww_old, b_old, dv, prm):
                        da2 = a_safe - a_new
                        dv2 = da2 * yi * ci
                        alpha[i] = a_safe
                        S += dv2
                        nz2, ncand = _ball2_move(rows, i, dv2, st, setk, prm, nz2, ncand, smax)
                        A = _radius_mass(A, da2, ci, ri)
                        shrink, inv_m, nz2, ncand, smax = _ball2_level_of(st, setk, prm, A, nz2, ncand, shrink, smax)
        s += 1
    state.S = S
    state.A = A
    refresh(setk, st, A, prm, prm.inner)
    return active_size, pg_max_new, pg_min_new, n_updates


#: the step's pieces under public names, for the epochs of one set kept elsewhere (:mod:`._box_sparse_kernels`)
radius_mass, safe_and_local_steps, worse_than_safe = _radius_mass, _steps, _worse_than_safe

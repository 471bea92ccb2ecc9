"""The sparse epoch of ``robust-dcd`` for the box set without bounds, in O(nnz(x_i) + |C|) per step.

For the box (widths ``δ``) the prox at the shrink level ``τ = A/λ2`` is ``w_h = soft(z_h, τδ_h)`` and the saddle
point ``u_h = clip(z_h/τ, −δ_h, δ_h)``: with ``S1 = {h : |z_h| > τδ_h}`` (where ``w_h ≠ 0``),

    u·w = Σ_{S1} δ_h(|z_h| − τδ_h),   ‖u‖² = Σ_{h∉S1} z_h²/τ² + Σ_{S1} δ_h²,
    ‖w‖² = Σ_{S1} (|z_h| − τδ_h)²,      Σ_{w_h≠0} u_h² = Σ_{S1} δ_h².

Every step moves ``τ`` (through ``A``), so the generic epoch rebuilds ``w`` and ``u`` in O(d). Here the epoch
keeps four sums ``Z0 = Σ_{h∉S1} z_h²``, ``Q1 = Σ_{S1} δ_h²``, ``uw`` and ``ww`` and updates them exactly: a move of
``τ`` with ``S1`` fixed changes ``uw`` by ``−Δτ Q1`` and ``ww`` by ``−Δτ(2uw − Δτ Q1)``; a coordinate changes ``S1``
only when ``|z_h|/δ_h`` lies between the old and the new ``τ``, so only the candidates ``C`` with ``|z_h|/δ_h`` in a
band ``[τ/β, βτ]`` are checked (the list is remade in O(d) when ``τ`` leaves the band); the coordinates of the row
moved are taken out at their old ``z_h`` and put back at the new one. The products ``x_i·w`` and ``x_i·u`` are
formed on the row's stored entries from ``z`` and ``τ``; ``w`` and ``u`` themselves are rebuilt once, at the end
of the epoch (``docs/derivations/robust_dcd.md`` §8).
"""

from __future__ import annotations

import numba as nb
import numpy as np

from ._dcd_kernels import drop_from_active, leaves_active_set, projected_gradient, shuffle
from ._robust_dcd_kernels import radius_mass, safe_and_local_steps, worse_than_safe
from ._shared_set_kernels import refresh, soft

__all__ = ["BAND", "box_sums", "epoch_sparse_box"]

#: no contraction into fused multiply-adds: ``|z_h| − τδ_h > 0`` must be decided the same way in every function
#: (a coordinate at the threshold classified one way by the sums and the other by the move would corrupt them)
_FM = {"reassoc", "nsz", "arcp"}

#: the candidates' band: ``|z_h|/δ_h`` within a factor ``BAND`` of the shrink level
BAND = 1.02


@nb.njit(cache=True, fastmath=_FM)
def box_sums(z, delta, tau, cand, flag):  # pragma: no cover - compiled
    """``(Z0, Q1, uw, ww, ncand)`` at ``τ`` in one O(d) pass, and the candidate list ``cand[:ncand]`` (``flag`` 1
    on it, 0 elsewhere) of the band ``τ/BAND ≤ |z_h|/δ_h ≤ BAND·τ``."""
    lo = tau / BAND
    hi = tau * BAND
    z0 = 0.0
    q1 = 0.0
    uw = 0.0
    ww = 0.0
    ncand = 0
    for h in range(z.size):
        a = abs(z[h])
        dh = delta[h]
        e = a - tau * dh
        if e > 0.0:
            q1 += dh * dh
            uw += dh * e
            ww += e * e
        else:
            z0 += a * a
        if lo * dh <= a <= hi * dh:
            cand[ncand] = h
            ncand += 1
            flag[h] = 1
        else:
            flag[h] = 0
    return z0, q1, uw, ww, ncand


@nb.njit(cache=True, fastmath=_FM, inline="always")
def _tau_move(z, delta, cand, flag, ncand, tau_o, tau_n, z0, q1, uw, ww):  # pragma: no cover - compiled
    """The sums after ``τ`` moves from ``tau_o`` to ``tau_n`` inside the band (``z`` fixed); drops the entries
    flagged 2 (out of the band) from the list."""
    dt = tau_n - tau_o
    ww -= dt * (2.0 * uw - dt * q1)
    uw -= dt * q1
    k = 0
    while k < ncand:
        h = cand[k]
        if flag[h] != 1:
            flag[h] = 0
            ncand -= 1
            cand[k] = cand[ncand]
            continue
        a = abs(z[h])
        dh = delta[h]
        was = a > tau_o * dh
        now = a > tau_n * dh
        if was != now:
            e = a - tau_n * dh
            if was:  # leaves S1: the update above counted it at tau_n as if it stayed
                q1 -= dh * dh
                uw -= dh * e
                ww -= e * e
                z0 += a * a
            else:
                q1 += dh * dh
                uw += dh * e
                ww += e * e
                z0 -= a * a
        k += 1
    return z0, q1, uw, ww, ncand


@nb.njit(cache=True, fastmath=_FM, inline="always")
def _coordinate(a, dh, tau, sign, z0, q1, uw, ww):  # pragma: no cover - compiled
    """Add (``sign`` = 1) or take out (−1) the terms of one coordinate with ``|z_h| = a`` at ``τ``."""
    e = a - tau * dh
    if e > 0.0:
        q1 += sign * dh * dh
        uw += sign * dh * e
        ww += sign * e * e
    else:
        z0 += sign * a * a
    return z0, q1, uw, ww


@nb.njit(cache=True, fastmath=_FM, inline="always")
def _row_move(row, dv, arrays, lam1, inv_lam, tau, band, sums):  # pragma: no cover - compiled
    """``v += dv·x_i`` and ``z = T(v)/λ2`` on the stored entries ``row = (indices, data, start, stop)`` of row i,
    with the ``sums = (Z0, Q1, uw, ww, ncand)`` at ``τ`` and the candidates' list of the ``band = (lo, hi)``
    following each moved coordinate; ``arrays = (v, z, cand, flag, sg, delta)``, unpacked once per epoch (an
    array read from a named tuple costs a reference count at every step)."""
    indices, data, start, stop = row
    v, z, cand, flag, sg, delta = arrays
    lo, hi = band
    z0, q1, uw, ww, ncand = sums
    for k in range(start, stop):
        h = indices[k]
        vh = v[h] + dv * data[k]
        v[h] = vh
        zn = soft(vh, lam1, sg[h]) * inv_lam
        dh = delta[h]
        z0, q1, uw, ww = _coordinate(abs(z[h]), dh, tau, -1.0, z0, q1, uw, ww)
        z[h] = zn
        a = abs(zn)
        z0, q1, uw, ww = _coordinate(a, dh, tau, 1.0, z0, q1, uw, ww)
        if lo * dh <= a <= hi * dh:
            if flag[h] == 0:
                cand[ncand] = h
                ncand += 1
            flag[h] = 1
        elif flag[h] == 1:
            flag[h] = 2
    return z0, q1, uw, ww, ncand


@nb.njit(cache=True, fastmath=_FM, inline="always")
def _scalars(scal, tau, z0, q1, uw, ww):  # pragma: no cover - compiled
    """``scal``'s ``uw``, ``uu``, ``ww``, ``ua`` from the sums (at ``τ = 0``: ``u = δ sign(z)``)."""
    scal[0].uw = uw
    scal[0].uu = (z0 / (tau * tau) if tau > 0.0 else 0.0) + q1
    scal[0].ww = max(ww, 0.0)
    scal[0].ua = q1


@nb.njit(cache=True, fastmath=_FM)
def epoch_sparse_box(rows, samples, alpha, st, setk, prm, index, rng, active_size, pg_max_old,
                     pg_min_old):  # pragma: no cover - compiled
    """:func:`._robust_dcd_kernels.epoch_refresh` on CSR rows for the box without bounds: O(nnz(x_i) + |C|) per step.

    Same arguments, returns and in-place updates; ``st.cand`` and ``st.flag`` hold the candidates' list.
    """
    indptr, indices, data = rows.indptr, rows.indices, rows.data
    y, c, r, sqn = samples.y, samples.c, samples.r, samples.sqn
    v, z, scal, state, cand, flag = st.v, st.z, st.scal, st.sums[0], st.cand, st.flag
    sg, delta = setk.sg, setk.delta
    upper, dii, rho, shrinking, lam, lam1 = prm.upper, prm.dii, prm.rho, prm.shrinking, prm.lam, prm.lam1
    inv_lam = 1.0 / lam
    arrays = (v, z, cand, flag, sg, delta)
    b0 = state.b0
    S = state.S
    A = state.A
    tau = A * inv_lam
    lo = tau / BAND
    hi = tau * BAND
    z0, q1, uw, ww, ncand = box_sums(z, delta, tau, cand, flag)
    _scalars(scal, tau, z0, q1, uw, ww)
    pg_max_new = -np.inf
    pg_min_new = np.inf
    n_updates = 0
    shuffle(index, active_size, rng)
    s = 0
    while s < active_size:
        i = index[s]
        start = indptr[i]
        stop = indptr[i + 1]
        xw = 0.0
        xu = 0.0
        xa = 0.0
        xua = 0.0
        inv_tau = 1.0 / tau if tau > 0.0 else 0.0
        for k in range(start, stop):
            h = indices[k]
            xh = data[k]
            zh = z[h]
            dh = delta[h]
            t = tau * dh
            wh = max(zh - t, 0.0) + min(zh + t, 0.0)
            if tau > 0.0:
                uh = min(max(zh * inv_tau, -dh), dh)
            else:
                uh = dh if zh > 0.0 else (-dh if zh < 0.0 else 0.0)
            xw += xh * wh
            xu += xh * uh
            on = wh != 0.0
            xa += xh * xh * on
            xua += xh * uh * on
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
            q_safe, a_safe, a_new = safe_and_local_steps(ai, G, ci, yi, ri, sqn[i], xu, xa, xua, scal, prm)
            da = a_new - ai
            if da != 0.0:
                n_updates += 1
                for attempt in range(2):  # the local step, then the safe one when the local gains less
                    ww_old = scal[0].ww
                    b_old = b0 + rho * S
                    alpha[i] = ai + da if attempt == 0 else a_safe
                    dv = da * yi * ci
                    S += dv
                    A = radius_mass(A, da, ci, ri)
                    tau_n = A * inv_lam
                    inside = lo <= tau_n <= hi and tau > 0.0
                    if inside:
                        z0, q1, uw, ww, ncand = _tau_move(z, delta, cand, flag, ncand, tau, tau_n, z0, q1, uw, ww)
                    z0, q1, uw, ww, ncand = _row_move((indices, data, start, stop), dv, arrays, lam1, inv_lam,
                                                      tau_n, (lo, hi), (z0, q1, uw, ww, ncand))
                    if not inside:  # the level left the band (or is 0): remake the sums and the list at it
                        lo = tau_n / BAND
                        hi = tau_n * BAND
                        z0, q1, uw, ww, ncand = box_sums(z, delta, tau_n, cand, flag)
                    tau = tau_n
                    _scalars(scal, tau, z0, q1, uw, ww)
                    if attempt == 1 or a_new == a_safe:
                        break
                    if not worse_than_safe(ai, a_new, a_safe, G, ci, q_safe, scal[0].ww - ww_old, b_old, dv, prm):
                        break
                    da = a_safe - a_new
        s += 1
    state.S = S
    state.A = A
    refresh(setk, st, A, prm, prm.inner)
    return active_size, pg_max_new, pg_min_new, n_updates

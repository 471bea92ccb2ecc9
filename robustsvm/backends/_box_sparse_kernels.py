"""The sparse box epoch of ``robust-dcd``, O(nnz(x_i) + |C|) per step: the sums ``Z0 = Σ_{h∉S1} z_h²``,
``Q1 = Σ_{S1} δ_h²``, ``u·w``, ``‖w‖²`` kept over the band of candidates C (``docs/derivations/robust_dcd.md`` §8).
"""

from __future__ import annotations

from collections import namedtuple

import numba as nb

from ._robust_dcd_kernels import add_products, refresh_all, variant
from ._shared_set_kernels import box_pair, soft

__all__ = ["BAND", "BoxBand", "box_sums"]

#: no fused multiply-adds in :func:`box_sums`; whether ``|z_h| > τδ_h`` is decided by a comparison everywhere, which
#: no fusion changes, so the pieces inlined into the epoch (with its flags) count the same coordinates (§8)
_FM = {"reassoc", "nsz", "arcp"}

#: the candidates' band: ``|z_h|/δ_h`` within a factor ``BAND`` of the shrink level
BAND = 1.02


@nb.njit(cache=True, fastmath=_FM)
def box_sums(z, delta, tau, cand, flag):  # pragma: no cover - compiled
    """``(Z0, Q1, uw, ww, ncand)`` at ``τ`` and the list ``cand[:ncand]`` of ``τ/BAND ≤ |z_h|/δ_h ≤ BAND·τ``."""
    lo = tau / BAND
    hi = tau * BAND
    z0 = q1 = uw = ww = 0.0
    ncand = 0
    for h in range(z.size):
        a = abs(z[h])
        dh = delta[h]
        z0, q1, uw, ww = _coordinate(a, dh, tau, 1.0, z0, q1, uw, ww)
        if lo * dh <= a <= hi * dh:
            cand[ncand] = h
            ncand += 1
            flag[h] = 1
        else:
            flag[h] = 0
    return z0, q1, uw, ww, ncand


@nb.njit(cache=True, fastmath=_FM, inline="always")
def _tau_move(z, delta, cand, flag, ncand, tau_o, tau_n, z0, q1, uw, ww):  # pragma: no cover - compiled
    """The sums after ``τ`` moves inside the band; drops the list's entries flagged 2."""
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
        if was != now:  # leaves S1 (counted at tau_n above as if it stayed) or joins it
            e = a - tau_n * dh
            sign = -1.0 if was else 1.0
            q1 += sign * dh * dh
            uw += sign * dh * e
            ww += sign * e * e
            z0 -= sign * a * a
        k += 1
    return z0, q1, uw, ww, ncand


@nb.njit(cache=True, fastmath=_FM, inline="always")
def _coordinate(a, dh, tau, sign, z0, q1, uw, ww):  # pragma: no cover - compiled
    """Add (``sign`` = 1) or take out (−1) the terms of one coordinate with ``|z_h| = a`` at ``τ``."""
    if a > tau * dh:
        e = a - tau * dh
        q1 += sign * dh * dh
        uw += sign * dh * e
        ww += sign * e * e
    else:
        z0 += sign * a * a
    return z0, q1, uw, ww


@nb.njit(cache=True, fastmath=_FM, inline="always")
def _row_move(row, dv, arrays, lam1, inv_lam, tau, band, sums):  # pragma: no cover - compiled
    """``v += dv·x_i``, ``z = T(v)/λ2`` on ``row = (indices, data, start, stop)``, the ``sums`` and the list following
    each coordinate; ``arrays = (v, z, cand, flag, sg, delta)``."""
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


#: the box without bounds on CSR rows, O(nnz(x_i) + |C|) per step (§8): :func:`._robust_dcd_kernels.epoch`'s variant
#: whose ``run`` is ``(τ, the band's ends, Z0, Q1, u·w, ‖w‖², |C|)``
BoxBand = namedtuple("BoxBand", [])


def _start(step, rows, st, setk, prm, A):
    tau = A * (1.0 / prm.lam)
    z0, q1, uw, ww, ncand = box_sums(st.z, setk.delta, tau, st.cand, st.flag)
    _scalars(st.scal, tau, z0, q1, uw, ww)
    return tau, tau / BAND, tau * BAND, z0, q1, uw, ww, ncand


def _products(step, rows, i, z, w, u, st, setk, run):
    """:func:`._robust_dcd_kernels.visit`'s products from ``z`` and ``τ`` (:func:`._shared_set_kernels.box_pair`)."""
    indices, data, delta, tau = rows.indices, rows.data, setk.delta, run[0]
    acc = (0.0, 0.0, 0.0, 0.0)
    inv_tau = 1.0 / tau if tau > 0.0 else 0.0
    for k in range(rows.indptr[i], rows.indptr[i + 1]):
        wh, uh = box_pair(z[indices[k]], delta[indices[k]], tau, inv_tau)
        acc = add_products(acc, data[k], wh, uh)
    return acc


def _move(step, rows, i, dv, v, st, setk, prm, A, run):
    """``run`` after a step moving ``A``: the sums moved with ``τ`` inside the band, then along row i; made anew when
    ``τ`` left the band."""
    tau, lo, hi, z0, q1, uw, ww, ncand = run
    z, cand, flag, delta, inv_lam = st.z, st.cand, st.flag, setk.delta, 1.0 / prm.lam
    tau_n = A * inv_lam
    inside = lo <= tau_n <= hi and tau > 0.0
    if inside:
        z0, q1, uw, ww, ncand = _tau_move(z, delta, cand, flag, ncand, tau, tau_n, z0, q1, uw, ww)
    z0, q1, uw, ww, ncand = _row_move((rows.indices, rows.data, rows.indptr[i], rows.indptr[i + 1]), dv,
                                      (v, z, cand, flag, setk.sg, delta), prm.lam1, inv_lam, tau_n, (lo, hi),
                                      (z0, q1, uw, ww, ncand))
    if not inside:  # the level left the band (or is 0)
        lo, hi = tau_n / BAND, tau_n * BAND
        z0, q1, uw, ww, ncand = box_sums(z, delta, tau_n, cand, flag)
    _scalars(st.scal, tau_n, z0, q1, uw, ww)
    return tau_n, lo, hi, z0, q1, uw, ww, ncand


variant(BoxBand, (_start, _products, _move, refresh_all))

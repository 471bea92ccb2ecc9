"""The 2-ball's prox with bounds, compiled (numba): ``w = clip(s z, lo, hi)`` at the root ``s`` of
``‖clip(s z, lo, hi)‖(1 − s) = τ s``, found over the candidates C only (``docs/derivations/robust_dcd.md`` §7).
"""

from __future__ import annotations

import numba as nb
import numpy as np

from ._compiled import FASTMATH

__all__ = ["ball2_candidates", "ball2_list", "ball2_scalars", "refresh_ball2_bounded"]


@nb.njit(cache=True, fastmath=FASTMATH, inline="always")
def _z_effective(zh, lo, hi):  # pragma: no cover - compiled
    """``z_h``, or 0 where the bound on its side is 0 (``u = z_e/τ`` when ``w = 0``)."""
    return zh if min(max(zh, lo), hi) != 0.0 else 0.0


@nb.njit(cache=True, fastmath=FASTMATH, inline="always")
def _clip_terms(zh, vh, s, lo, hi, lam, lam1):  # pragma: no cover - compiled
    """``(c², c² if clipped, v_h c − λ1|c| − (λ2/2)c²)`` at ``c = clip(s z_h, lo, hi)``."""
    t = s * zh
    c = min(max(t, lo), hi)
    c2 = c * c
    return c2, c2 * (c != t), vh * c - lam1 * abs(c) - 0.5 * lam * c2


@nb.njit(cache=True, fastmath=FASTMATH)
def _clipped_norm(z, v, cand, nc, rest2, s, lo, hi, lam, lam1):  # pragma: no cover - compiled
    """The sums of :func:`_clip_terms` over ``cand[:nc]``, ``s² rest2`` added to the first."""
    n2 = s * s * rest2
    c2 = p = 0.0
    for j in range(nc):
        h = cand[j]
        a, b, e = _clip_terms(z[h], v[h], s, lo[h], hi[h], lam, lam1)
        n2 += a
        c2 += b
        p += e
    return n2, c2, p


@nb.njit(cache=True, fastmath=FASTMATH)
def _ball2_level(z, v, cand, nc, rest2, ze2, tau, setk, s, first, pen):  # pragma: no cover - compiled
    """The scale ``s`` (1 at ``τ = 0``, 0 when ``‖z_e‖ ≤ τ``) and :func:`_clipped_norm` there: safeguarded Newton on
    ``G(s) = ‖clip(s z)‖(1 − s)/s − τ`` from ``first``, its value at the start ``s`` (``robust_dcd.md`` §7)."""
    lo, hi, forced = setk.lo, setk.hi, setk.forced
    lam, lam1 = pen
    if tau <= 0.0:
        return 1.0, _clipped_norm(z, v, cand, nc, rest2, 1.0, lo, hi, lam, lam1)
    if not forced and rest2 + ze2 <= tau * tau:
        return 0.0, (0.0, 0.0, 0.0)
    if nc == 0:
        s = 1.0 - tau / np.sqrt(rest2)
        return s, (s * s * rest2, 0.0, 0.0)
    a = 0.0
    b = 1.0
    ev = first
    for _ in range(200):
        n2, c2 = ev[0], ev[1]
        g = np.sqrt(n2) / s
        G = g * (1.0 - s) - tau
        if abs(G) <= 1e-13 * (tau + g) or b - a <= 1e-16:
            break
        if G > 0.0:
            a = s
        else:
            b = s
        den = s * s * s * g
        dG = -g - (c2 / den if den > 0.0 else 0.0) * (1.0 - s)  # G'(s) = g'(1 − s) − g
        t = s - G / dG if dG < 0.0 else 0.5 * (a + b)
        s = t if a < t < b else 0.5 * (a + b)
        ev = _clipped_norm(z, v, cand, nc, rest2, s, lo, hi, lam, lam1)
    return s, ev


@nb.njit(cache=True, fastmath=FASTMATH)
def refresh_ball2_bounded(st, setk, tau, prm, nz2):  # pragma: no cover - compiled
    """``w = clip(s z, lo, hi)``, ``u = w/‖w‖`` (``z_e/τ`` at ``w = 0``) over all of ``z`` (the root kept in
    ``mu[0]``); returns ``(u·w, ‖u‖², h*(v − Au))``."""
    v, z, w, u, mu, cand = st.v, st.z, st.w, st.u, st.mu, st.cand
    lo, hi = setk.lo, setk.hi
    lam, lam1 = prm.lam, prm.lam1
    d = v.size
    nz = np.sqrt(nz2)
    smax = 1.0 if setk.forced or tau <= 0.0 else (1.0 - tau / nz if nz > tau else 0.0)
    rest2, nc = ball2_list(st, setk, smax)
    ze2 = 0.0
    for j in range(nc):
        ze = _z_effective(z[cand[j]], lo[cand[j]], hi[cand[j]])
        ze2 += ze * ze
    s0 = mu[0] if 0.0 < mu[0] < 1.0 else 0.5
    first = _clipped_norm(z, v, cand, nc, rest2, s0, lo, hi, lam, lam1)
    s, ev = _ball2_level(z, v, cand, nc, rest2, ze2, tau, setk, s0, first, (lam, lam1))
    nw2 = ev[0]
    if 0.0 < s < 1.0:
        mu[0] = s
    nw = np.sqrt(nw2)
    fu = 1.0 / nw if nw > 0.0 else (1.0 / tau if tau > 0.0 else 0.0)
    uw = uu = hs = 0.0
    A = tau * lam
    for h in range(d):
        wh = min(max(s * z[h], lo[h]), hi[h])
        uh = fu * (wh if nw > 0.0 else _z_effective(z[h], lo[h], hi[h]))
        w[h] = wh
        u[h] = uh
        uw += uh * wh
        uu += uh * uh
        hs += (v[h] - A * uh) * wh - lam1 * abs(wh) - 0.5 * lam * wh * wh
    return uw, uu, hs


@nb.njit(cache=True, fastmath=FASTMATH)
def ball2_list(st, setk, smax):  # pragma: no cover - compiled
    """The candidates for the scales ``s ≤ smax`` (``smax·|z_h| > cap_h``) in ``cand[:nc]`` with ``flag`` 1, else
    ``flag`` 0; returns ``(Σ_{h∉C} z_h², nc)``."""
    z, cand, flag, cap = st.z, st.cand, st.flag, setk.cap
    rest2 = 0.0
    nc = 0
    for h in range(z.size):
        zh = z[h]
        if smax * abs(zh) > cap[h]:
            flag[h] = 1
            cand[nc] = h
            nc += 1
        else:
            flag[h] = 0
            rest2 += zh * zh
    return rest2, nc


@nb.njit(cache=True, fastmath=FASTMATH, inline="always")
def ball2_scalars(nz2, A, lam, scal):  # pragma: no cover - compiled
    """``scal`` of ``w = σ z``, ``u = z/m`` from ``‖z‖²`` (``σ = max(0, 1 − τ/‖z‖)``, ``m = max(‖z‖, τ)``); returns
    ``(σ, 1/m)``."""
    nz = np.sqrt(nz2)
    tau = A / lam
    shrink = 1.0 - tau / nz if nz > tau else 0.0
    m = nz if nz > tau else tau
    inv_m = 1.0 / m if m > 0.0 else 0.0
    scal[0].uw = shrink * nz2 * inv_m
    scal[0].uu = nz2 * inv_m * inv_m
    scal[0].ww = shrink * shrink * nz2
    scal[0].ua = scal[0].uu if shrink > 0.0 else 0.0
    return shrink, inv_m


@nb.njit(cache=True, fastmath=FASTMATH)
def ball2_candidates(st, setk, prm, A, rest2, ncand, s_last):  # pragma: no cover - compiled
    """The sparse epoch's scalars in O(|C|): compacts the list (drops flag 2), finds ``s`` and writes ``scal`` of
    ``w = clip(s z, lo, hi)``, ``u = w/‖w‖``; returns ``(s, 1/‖w‖ (1/τ at w = 0), ncand)`` (§7)."""
    z, v, cand, flag, scal = st.z, st.v, st.cand, st.flag, st.scal
    lo, hi, lam, lam1 = setk.lo, setk.hi, prm.lam, prm.lam1
    tau = A / lam
    s0 = s_last if 0.0 < s_last < 1.0 else 0.5
    nc = np.intp(0)  # not a literal 0: numba would compile _ball2_level for it too
    ze2 = 0.0
    n2 = s0 * s0 * rest2
    c2 = p = 0.0
    for j in range(ncand):  # compaction, ‖z_e‖² over C and the first evaluation, in one pass
        h = cand[j]
        if flag[h] == 1:
            cand[nc] = h
            nc += 1
            zh = z[h]
            ze = _z_effective(zh, lo[h], hi[h])
            ze2 += ze * ze
            a, b, e = _clip_terms(zh, v[h], s0, lo[h], hi[h], lam, lam1)
            n2 += a
            c2 += b
            p += e
        else:
            flag[h] = 0
    if nc == 0:  # no candidate left: the unbounded scalars are exact
        shrink, inv_m = ball2_scalars(rest2, A, lam, scal)
        return shrink, inv_m, 0
    s, ev = _ball2_level(z, v, cand, nc, rest2, ze2, tau, setk, s0, (n2, c2, p), (lam, lam1))
    nw2, p = ev[0], ev[2]
    if nw2 > 0.0:
        inv_m = 1.0 / np.sqrt(nw2)
        hs = 0.5 * lam * s * s * rest2 + p - A * inv_m * (nw2 - s * s * rest2)  # h*(v − Au), u = w/‖w‖
        scal[0].uw = nw2 * inv_m
        scal[0].uu = nw2 * inv_m * inv_m
        scal[0].ww = 2.0 * hs / lam
        scal[0].ua = scal[0].uu
    else:
        inv_m = 1.0 / tau if tau > 0.0 else 0.0
        scal[0].uw = 0.0
        scal[0].uu = (rest2 + ze2) * inv_m * inv_m
        scal[0].ww = 0.0
        scal[0].ua = 0.0
    return s, inv_m, nc

"""The prox of the shared set's support function, compiled (numba): what every robust coordinate step recomputes.

:func:`refresh` computes the point ``u`` of the unit set ``V`` and ``w = w_u = T(v − A u)/λ2`` from
``v = Σ c_i y_i α_i x_i`` and ``A = Σ c_i α_i r_i``, with ``z = T(v)/λ2``, ``τ = A/λ2`` and, for kinds 0–2,
``u = (z − w)/τ`` (``docs/derivations/robust_dcd.md`` §2, bounds §7): ``kind`` 0 the box (also ``Ball(p=∞)``),
``w = soft(z, τδ)`` clipped to the bounds; 1 the 2-ball, ``w = max(0, 1 − τ/‖z‖) z`` or with bounds
``clip(s z, lo, hi)`` (:mod:`._ball2_bounds_kernels`); 2 the ℓ1-ball, ``w = z − proj_{τB₁}(z)``; 3 the ellipsoid,
``u = Lμ`` improved by projected-gradient steps (not exact: each still ascends ``D_u``). The arrays travel as the
named tuples :data:`SetKernel`, :data:`State` and :data:`Params`.
"""

from __future__ import annotations

from collections import namedtuple

import numba as nb
import numpy as np

from ._ball2_bounds_kernels import refresh_ball2_bounded

__all__ = ["KIND_BALL2", "KIND_BOX", "KIND_ELLIPSOID", "KIND_LINF", "PROX", "Params", "SetKernel", "State",
           "bound_arrays", "is_separable", "prox_scalars", "refresh", "refresh_clipped", "refresh_separable",
           "set_arrays", "soft", "softclip"]

_FM = {"reassoc", "contract", "nsz", "arcp"}

KIND_BOX, KIND_BALL2, KIND_LINF, KIND_ELLIPSOID = 0, 1, 2, 3

#: the set and signs: ``kind``, signs ``sg`` (int8; 2 where bounds ``[0, 0]`` fix the weight at 0),
#: ``okp``/``okn`` (1.0 where a positive/negative ``w_h`` is allowed), box widths ``delta``, ellipsoid factor ``L``
#: and ``‖L‖²``, and the bounds ``lo ≤ w ≤ hi`` beyond the signs (±1e300 where a side is free; read only when
#: ``bounded``), with ``clo``/``chi`` the bounds widened to ∓1e300 where they exclude 0 (``z_h ∉ [clo_h, chi_h]``:
#: a bound can clip ``s z_h`` for some ``s ≤ 1``), ``cap`` the 2-ball's candidate test ``smax|z_h| > cap_h`` (the
#: bound on the side the sign allows, the nearer one for a free sign, −1 where the bounds exclude 0) and ``forced``
#: (some bound excludes 0); the maintained vectors, the 2-ball's candidate list ``cand`` (int64) and its ``flag``
#: (int8), ``sums`` (a record of :data:`._dcd_kernels.SUMS`: ``b0``, ``S``, ``A``)
SetKernel = namedtuple("SetKernel", ["kind", "sg", "okp", "okn", "delta", "L", "lnorm2", "lo", "hi", "bounded", "clo",
                                     "chi", "cap", "forced"])
State = namedtuple("State", ["v", "z", "w", "u", "mu", "scal", "sums", "cand", "flag"])
#: the prox's scalars, ``State.scal`` (a one-record array, :func:`prox_scalars`): ``uw = u·w``, ``uu = ‖u‖²``,
#: ``theta`` (the ℓ1-ball projection's last level, its warm start), ``hs = 2h*(v − Au)/λ2`` (written when a bound
#: clips ``w``), ``ww`` (``‖w‖²``, or ``hs`` when a bound clips ``w``: ``−(λ2/2)Δww`` is the exact change of the
#: dual) and ``ua = Σ_{w_h≠0} u_h²`` (the local curvature's term)
PROX = np.dtype([(name, np.float64) for name in ("uw", "uu", "theta", "hs", "ww", "ua")])
#: the scalars of one solve (``inner``/``inner_tol``: the ellipsoid's projected-gradient steps on ``u``)
Params = namedtuple("Params", ["lam", "lam1", "upper", "dii", "rho", "inner", "inner_tol", "local", "shrinking"])


def prox_scalars() -> np.ndarray:
    """A zeroed one-record array of :data:`PROX`."""
    return np.zeros(1, dtype=PROX)


@nb.njit(cache=True)
def soft(p, lam1, s):  # pragma: no cover - compiled
    """``clip_s(soft(p, λ1))``: the soft threshold at λ1 followed by the sign clip (s ∈ {−1, 0, 1}; the kernels'
    s = 2 marks a weight fixed at 0 by bounds ``[0, 0]``: 0 on both sides)."""
    if p > lam1:
        return p - lam1 if 0 <= s <= 1 else 0.0
    if p < -lam1:
        return p + lam1 if -1 <= s <= 0 else 0.0
    return 0.0


@nb.njit(cache=True, fastmath=_FM)
def softclip(p, lam1, sg, inv_lam):  # pragma: no cover - compiled
    """``T(p)/λ2`` for a whole vector: the gradient of ``h*`` at ``p``."""
    out = np.empty(p.size)
    for h in range(p.size):
        out[h] = soft(p[h], lam1, sg[h]) * inv_lam
    return out


@nb.njit(cache=True, fastmath=_FM, inline="always")
def _mul_l(Lm, x, out):  # pragma: no cover - compiled
    """``out = L x`` for the lower-triangular ``L``."""
    for h in range(x.size):
        acc = 0.0
        for k in range(h + 1):
            acc += Lm[h, k] * x[k]
        out[h] = acc


@nb.njit(cache=True, fastmath=_FM, inline="always")
def _mul_lt(Lm, x, out):  # pragma: no cover - compiled
    """``out = Lᵀx`` for the lower-triangular ``L``; returns ``‖out‖²``."""
    d = x.size
    n2 = 0.0
    for k in range(d):
        acc = 0.0
        for h in range(k, d):
            acc += Lm[h, k] * x[h]
        out[k] = acc
        n2 += acc * acc
    return n2


@nb.njit(cache=True, fastmath=_FM)
def _ellipsoid(setk, st, A, prm, inner):  # pragma: no cover - compiled
    """Projected-gradient ascent on ``μ ↦ −h*(v − A Lμ)`` over ``‖μ‖ ≤ 1``, then ``u = Lμ`` and ``w = w_u``.

    Gradient ``A Lᵀ w_u``, Lipschitz constant ``A²‖L‖²/λ2``: step ``λ2/(A‖L‖²)`` on ``Lᵀw``. With ``A = 0``,
    μ is the maximizer of ``μ·Lᵀw`` (the worst case of ``w``). At most ``inner`` steps; stops when the step
    moves μ by less than ``prm.inner_tol`` (Euclidean).
    """
    v, mu, w, u, scal = st.v, st.mu, st.w, st.u, st.scal
    sg, Lm, lam1, inv_lam = setk.sg, setk.L, prm.lam1, 1.0 / prm.lam
    d = v.size
    g = np.empty(d)
    if A <= 0.0:
        for h in range(d):
            w[h] = soft(v[h], lam1, sg[h]) * inv_lam
        nrm = np.sqrt(_mul_lt(Lm, w, g))
        for k in range(d):
            mu[k] = g[k] / nrm if nrm > 0.0 else 0.0
    else:
        step = prm.lam / (A * setk.lnorm2)
        for _ in range(inner):
            _mul_l(Lm, mu, u)
            for h in range(d):
                w[h] = soft(v[h] - A * u[h], lam1, sg[h]) * inv_lam
            _mul_lt(Lm, w, g)
            nrm = 0.0
            for k in range(d):  # μ + step Lᵀw, projected on the unit ball
                g[k] = mu[k] + step * g[k]
                nrm += g[k] * g[k]
            f = 1.0 / np.sqrt(nrm) if nrm > 1.0 else 1.0
            moved = 0.0
            for k in range(d):
                t = g[k] * f
                moved += (t - mu[k]) * (t - mu[k])
                mu[k] = t
            if moved <= prm.inner_tol * prm.inner_tol:
                break
    _mul_l(Lm, mu, u)
    uw = 0.0
    uu = 0.0
    for h in range(d):
        wh = soft(v[h] - A * u[h], lam1, sg[h]) * inv_lam
        w[h] = wh
        uw += u[h] * wh
        uu += u[h] * u[h]
    scal[0].uw = uw
    scal[0].uu = uu


@nb.njit(cache=True, fastmath=_FM)
def refresh(setk, st, A, prm, inner):  # pragma: no cover - compiled
    """Recompute ``u`` (a point of V, the saddle point for kinds 0–2) and ``w = w_u`` from ``st.v`` and ``A``.

    Writes ``z = T(v)/λ2`` (kinds 0–2), ``w``, ``u`` and ``scal`` (:data:`PROX`) of the :data:`State` ``st``; O(d)
    for kinds 0–2, O(inner·d²) for the ellipsoid. The box and the 2-ball without bounds go to
    :func:`refresh_separable`.
    """
    if not is_separable(setk) or refresh_separable(setk.kind, st.v, st.z, st.w, st.u, st.scal, set_arrays(setk), A,
                                                    prm, bound_arrays(setk), setk.bounded):
        refresh_clipped(setk, st, A, prm, inner)


@nb.njit(cache=True, inline="always")
def is_separable(setk):  # pragma: no cover - compiled
    """Whether :func:`refresh_separable` is the set's refresh: a box or a 2-ball (with bounds: while none binds)."""
    return setk.kind == KIND_BOX or setk.kind == KIND_BALL2


@nb.njit(cache=True, inline="always")
def set_arrays(setk):  # pragma: no cover - compiled
    """``(sg, okp, okn, delta)`` of a :data:`SetKernel`, for :func:`refresh_separable`."""
    return setk.sg, setk.okp, setk.okn, setk.delta


@nb.njit(cache=True, inline="always")
def bound_arrays(setk):  # pragma: no cover - compiled
    """``(lo, hi, clo, chi)`` of a :data:`SetKernel`, for :func:`refresh_separable`."""
    return setk.lo, setk.hi, setk.clo, setk.chi


@nb.njit(cache=True, fastmath=_FM)
def refresh_separable(kind, v, z, w, u, scal, arrays, A, prm, bounds, bounded):  # pragma: no cover - compiled
    """:func:`refresh` for the box (``kind`` 0) and the 2-ball (``kind`` 1), on the arrays of the :data:`State`
    and of the :data:`SetKernel` (``arrays = (sg, okp, okn, delta)``, ``bounds = (lo, hi, clo, chi)``) themselves.
    Returns True when ``bounded`` and a bound may bind (some ``w_h`` of the unbounded prox outside its bounds, or
    for the 2-ball some ``z_h`` outside ``[clo_h, chi_h]``): the caller then runs :func:`refresh_clipped`; else the
    prox written is the bounded one too (``docs/derivations/robust_dcd.md`` §7).

    The epochs call it at every coordinate step with arrays they unpacked once: each array read from a named
    tuple in compiled code takes a reference (an atomic increment, and a decrement when released), which a
    refresh that unpacks ``st`` and ``setk`` pays at every step (about as much as the step's arithmetic on
    WDBC's 30 features).
    """
    sg, okp, okn, delta = arrays
    lo, hi, clo, chi = bounds
    tau = A / prm.lam
    if kind == KIND_BOX:
        uw, uu = _box(v, z, w, u, sg, okp, okn, delta, tau, prm)
        if bounded and _outside(w, lo, hi) > 0:
            return True
    else:
        if bounded:
            nz2, out = _ball2_z(v, z, okp, okn, clo, chi, prm, True)
            if out > 0:
                return True
        else:
            nz2, _ = _ball2_z(v, z, okp, okn, delta, delta, prm, False)
        uw, uu = _ball2_shrink(z, w, u, tau, nz2)
    scal[0].uw = uw
    scal[0].uu = uu
    _refresh_tail(w, u, scal, False)
    return False


@nb.njit(cache=True, fastmath=_FM, inline="always")
def _refresh_tail(w, u, scal, clipped):  # pragma: no cover - compiled
    """``scal``'s ``ww`` (``hs`` when a bound clips ``w``) and ``ua``."""
    ww = 0.0
    ua = 0.0
    for h in range(w.size):
        wh = w[h]
        ww += wh * wh
        ua += u[h] * u[h] * (wh != 0.0)
    # where w sits at a nonzero bound h*(p) ≠ (λ2/2)‖w‖²: the entry is 2h*(v − Au)/λ2 instead
    scal[0].ww = scal[0].hs if clipped else ww
    scal[0].ua = ua


@nb.njit(cache=True, fastmath=_FM)
def refresh_clipped(setk, st, A, prm, inner):  # pragma: no cover - compiled
    """:func:`refresh` for the sets :func:`refresh_separable` does not take (the ellipsoid, the ℓ1 ball), and the
    bounded prox of a box or a 2-ball where it found a bound that may bind (``docs/derivations/robust_dcd.md`` §7;
    ``scal.ww`` is then ``hs``): bounds that do not bind cost a comparison per coordinate."""
    kind, v, z, scal = setk.kind, st.v, st.z, st.scal
    tau = A / prm.lam
    if kind == KIND_ELLIPSOID:
        _ellipsoid(setk, st, A, prm, inner)
    else:
        if kind == KIND_BOX:
            uw, uu = _refresh_box_bounded(st, setk, tau, prm)
        elif kind == KIND_BALL2:
            nz2, _ = _ball2_z(v, z, setk.okp, setk.okn, setk.clo, setk.chi, prm, False)
            uw, uu = refresh_ball2_bounded(st, setk, tau, prm, nz2)
        else:  # KIND_LINF: σ_V = ‖·‖∞, V the unit ℓ1 ball
            uw, uu = _refresh_linf(st, setk.sg, tau, prm)
        scal[0].uw = uw
        scal[0].uu = uu
    _refresh_tail(st.w, st.u, scal, is_separable(setk))


@nb.njit(cache=True, fastmath=_FM, inline="always")
def _z_of(p, okp, okn, lam1, inv_lam):  # pragma: no cover - compiled
    """``z_h = T(p)_h/λ2`` branch-free (``okp``/``okn``: 1.0 where the sign allows a positive/negative weight)."""
    return (okp * max(p - lam1, 0.0) + okn * min(p + lam1, 0.0)) * inv_lam


@nb.njit(cache=True, fastmath=_FM, inline="always")
def _box_terms(p, okp, okn, dh, tau, inv_tau, lam1, inv_lam):  # pragma: no cover - compiled
    """``(z_h, soft(z_h, τδ_h), clip(z_h/τ, −δ_h, δ_h))`` at ``τ > 0``, branch-free."""
    zh = _z_of(p, okp, okn, lam1, inv_lam)
    t = tau * dh
    return zh, np.maximum(zh - t, 0.0) + np.minimum(zh + t, 0.0), np.minimum(np.maximum(zh * inv_tau, -dh), dh)


@nb.njit(cache=True, fastmath=_FM, inline="always")
def _box(v, z, w, u, sg, okp, okn, delta, tau, prm):  # pragma: no cover - compiled
    """The box prox without bounds: ``w = soft(z, τδ)``, ``u = clip(z/τ, −δ, δ)`` (``δ sign(z)`` when τ = 0),
    branch-free (vectorizable). Returns ``(u·w, ‖u‖²)``. When no ``w_h`` leaves its bounds (:func:`_outside`)
    this is the bounded prox and its saddle point too (``docs/derivations/robust_dcd.md`` §7)."""
    lam1, inv_lam = prm.lam1, 1.0 / prm.lam
    uw = 0.0
    uu = 0.0
    if tau > 0.0:
        inv_tau = 1.0 / tau
        for h in range(v.size):
            zh, wh, uh = _box_terms(v[h], okp[h], okn[h], delta[h], tau, inv_tau, lam1, inv_lam)
            z[h], w[h], u[h] = zh, wh, uh
            uw += uh * wh
            uu += uh * uh
    else:
        for h in range(v.size):
            zh = soft(v[h], lam1, sg[h]) * inv_lam
            z[h] = zh
            w[h] = zh
            uh = delta[h] if zh > 0.0 else (-delta[h] if zh < 0.0 else 0.0)
            u[h] = uh
            uw += uh * zh
            uu += uh * uh
    return uw, uu


@nb.njit(cache=True, fastmath=_FM, inline="always")
def _outside(w, lo, hi):  # pragma: no cover - compiled
    """The number of ``w_h`` outside ``[lo_h, hi_h]``: a comparison per coordinate."""
    out = 0
    for h in range(w.size):
        out += (w[h] > hi[h]) + (w[h] < lo[h])
    return out


@nb.njit(cache=True, fastmath=_FM)
def _refresh_box_bounded(st, setk, tau, prm):  # pragma: no cover - compiled
    """The box set's prox when a bound binds: ``w = clip(soft(z, τδ), lo, hi)``, ``u_h = δ_h sign(w_h)`` where
    the bounds exclude 0 and ``clip(z_h/τ, −δ_h, δ_h)`` elsewhere (the saddle point; δ sign(w) when τ = 0).
    Branch-free, as the unbounded loop; writes ``scal``'s ``hs = 2h*(v − Au)/λ2`` (the penalty's box conjugate,
    ``h*(p) = Σ p_h w_h − λ1|w_h| − (λ2/2)w_h²``) and returns ``(u·w, ‖u‖²)``."""
    v, z, w, u = st.v, st.z, st.w, st.u
    okp, okn, delta, lo, hi = setk.okp, setk.okn, setk.delta, setk.lo, setk.hi
    lam, lam1, inv_lam = prm.lam, prm.lam1, 1.0 / prm.lam
    A = tau * lam
    uw = 0.0
    uu = 0.0
    hs = 0.0
    if tau > 0.0:
        inv_tau = 1.0 / tau
        for h in range(v.size):
            p = v[h]
            z[h], ws, uc = _box_terms(p, okp[h], okn[h], delta[h], tau, inv_tau, lam1, inv_lam)
            f = 1.0 * (lo[h] > 0.0) - 1.0 * (hi[h] < 0.0)  # the sign the bounds force (0: they allow w_h = 0)
            wh, uh = min(max(ws, lo[h]), hi[h]), uc + abs(f) * (f * delta[h] - uc)
            w[h], u[h] = wh, uh
            uw += uh * wh
            uu += uh * uh
            hs += (p - A * uh) * wh - lam1 * abs(wh) - 0.5 * lam * wh * wh
    else:
        for h in range(v.size):
            p = v[h]
            zh = z[h] = _z_of(p, okp[h], okn[h], lam1, inv_lam)
            wh = min(max(zh, lo[h]), hi[h])
            uh = delta[h] * (1.0 * (wh > 0.0) - 1.0 * (wh < 0.0))
            w[h] = wh
            u[h] = uh
            uw += uh * wh
            uu += uh * uh
            hs += p * wh - lam1 * abs(wh) - 0.5 * lam * wh * wh
    st.scal[0].hs = 2.0 * hs * inv_lam
    return uw, uu


@nb.njit(cache=True, fastmath=_FM, inline="always")
def _ball2_z(v, z, okp, okn, clo, chi, prm, check):  # pragma: no cover - compiled
    """``z = T(v)/λ2`` (branch-free) and ``(‖z‖², out)``, ``out`` the number of candidates
    ``z_h ∉ [clo_h, chi_h]`` when ``check`` (a constant at each call: 0 without it, and ``clo``, ``chi`` unread).

    ``clip(s z, lo, hi)`` for ``s ∈ [0, 1]`` can differ from ``s z`` only at the candidates: outside them
    ``lo_h ≤ 0 ≤ hi_h`` and ``z_h ∈ [lo_h, hi_h]`` (``clo``/``chi`` are the bounds, with ∓∞ where the bounds
    exclude 0, which makes such coordinates candidates always)."""
    lam1, inv_lam = prm.lam1, 1.0 / prm.lam
    nz2 = 0.0
    out = 0
    for h in range(v.size):
        zh = z[h] = _z_of(v[h], okp[h], okn[h], lam1, inv_lam)
        nz2 += zh * zh
        if check:
            out += (zh > chi[h]) + (zh < clo[h])
    return nz2, out


@nb.njit(cache=True, fastmath=_FM)
def _ball2_shrink(z, w, u, tau, nz2):  # pragma: no cover - compiled
    """The 2-ball prox without an active bound: ``w = max(0, 1 − τ/‖z‖) z``, ``u = z/max(‖z‖, τ)``; returns
    ``(u·w, ‖u‖²)``."""
    nz = np.sqrt(nz2)
    s = 1.0 - tau / nz if nz > tau else 0.0
    m = nz if nz > tau else tau
    fu = 1.0 / m if m > 0.0 else 0.0
    uw = 0.0
    uu = 0.0
    for h in range(z.size):
        wh = s * z[h]
        uh = fu * z[h]
        w[h] = wh
        u[h] = uh
        uw += uh * wh
        uu += uh * uh
    return uw, uu


@nb.njit(cache=True, fastmath=_FM)
def _refresh_linf(st, sg, tau, prm):  # pragma: no cover - compiled
    """:func:`refresh_clipped` for the ℓ1 ball (``σ_V = ‖·‖∞``): ``w = z − proj_{τB₁}(z)``; returns ``(u·w, ‖u‖²)``."""
    v, z, w, u, scal = st.v, st.z, st.w, st.u, st.scal
    lam1, inv_lam = prm.lam1, 1.0 / prm.lam
    d = v.size
    uw = 0.0
    uu = 0.0
    l1 = 0.0
    amax = 0.0
    kmax = -1
    for h in range(d):
        zh = soft(v[h], lam1, sg[h]) * inv_lam
        z[h] = zh
        a = abs(zh)
        l1 += a
        if a > amax:
            amax = a
            kmax = h
    if tau <= 0.0:  # no shrink; u is the worst case of w
        for h in range(d):
            w[h] = z[h]
            u[h] = 0.0
        if kmax >= 0:
            u[kmax] = 1.0 if z[kmax] > 0.0 else -1.0
            uw = amax
            uu = 1.0
    elif l1 <= tau:  # w = 0, u = z/τ inside the ball
        for h in range(d):
            w[h] = 0.0
            uh = z[h] / tau
            u[h] = uh
            uu += uh * uh
    else:
        # θ > 0 with Σ (|z_h| − θ)_+ = τ: Newton from below on a convex decreasing piecewise-linear function
        theta = scal[0].theta
        f = -1.0
        if theta > 0.0 and theta < amax:
            f = -tau
            for h in range(d):
                a = abs(z[h])
                if a > theta:
                    f += a - theta
        if f < 0.0:
            theta = 0.0
        for _ in range(200):
            f = -tau
            cnt = 0
            for h in range(d):
                a = abs(z[h])
                if a > theta:
                    f += a - theta
                    cnt += 1
            if f <= 1e-15 * tau or cnt == 0:
                break
            nt = theta + f / cnt
            if nt <= theta:
                break
            theta = nt
        scal[0].theta = theta
        for h in range(d):
            zh = z[h]
            a = abs(zh)
            if a > theta:
                wh = theta if zh > 0.0 else -theta
                uh = (zh - wh) / tau
            else:
                wh = zh
                uh = 0.0
            w[h] = wh
            u[h] = uh
            uw += uh * wh
            uu += uh * uh
    return uw, uu

"""The prox of the shared set's support function, compiled (numba): ``u ∈ V`` and ``w = T(v − A u)/λ2`` from ``v`` and
``A`` (``docs/derivations/robust_dcd.md`` §2, bounds §7), for the box, the 2-ball, the ℓ1-ball and the ellipsoid.

The kind of set reaches the compiled code as the type of :attr:`SetKernel.kind` (one of :data:`KINDS`), and each
kind's prox is chosen by that type when the refresh is compiled: a fit compiles the prox of its own set only.
"""

from __future__ import annotations

from collections import namedtuple

import numba as nb
import numpy as np

from ._ball2_bounds_kernels import ball2_scalars, refresh_ball2_bounded
from ._compiled import FASTMATH, by_class

__all__ = ["KINDS", "KIND_BALL2", "KIND_BOX", "KIND_ELLIPSOID", "KIND_LINF", "PROX", "Params", "SetKernel", "State",
           "box_pair", "is_separable", "prox_scalars", "refresh", "refresh_clipped", "refresh_separable", "soft",
           "softclip", "unpacked"]


KIND_BOX, KIND_BALL2, KIND_LINF, KIND_ELLIPSOID = 0, 1, 2, 3
BoxKind = namedtuple("BoxKind", [])
Ball2Kind = namedtuple("Ball2Kind", [])
LinfKind = namedtuple("LinfKind", [])
EllipsoidKind = namedtuple("EllipsoidKind", [])
#: the value of :attr:`SetKernel.kind` for each ``KIND_`` number: an empty named tuple of the kind's own class, so
#: that numba types each kind apart and compiles only the chosen kind's prox
KINDS = (BoxKind(), Ball2Kind(), LinfKind(), EllipsoidKind())

#: the set, signs and bounds (:meth:`.shared_set.SharedSetArrays.set_kernel` says what each holds)
SetKernel = namedtuple("SetKernel", ["kind", "sg", "delta", "L", "lnorm2", "lo", "hi", "bounded", "clo", "chi", "cap",
                                     "forced"])
State = namedtuple("State", ["v", "z", "w", "u", "mu", "scal", "sums", "cand", "flag"])
#: ``State.scal``: ``u·w``, ``‖u‖²``, the ℓ1 level θ, ``hs = 2h*(v − Au)/λ2``, ``ww`` (``‖w‖²``, ``hs`` when a bound
#: clips ``w``) and ``Σ_{w_h≠0} u_h²``
PROX = np.dtype([(name, np.float64) for name in ("uw", "uu", "theta", "hs", "ww", "ua")])
#: the scalars of one solve (``inner``, ``inner_tol``: the ellipsoid's steps on ``u``)
Params = namedtuple("Params", ["lam", "lam1", "upper", "dii", "rho", "inner", "inner_tol", "local", "shrinking"])


def _yes(kind):
    """True, whatever the kind."""
    return True


def _no(kind):
    """False, whatever the kind."""
    return False


#: whether a kind's prox is separable (the box, the 2-ball: :func:`refresh_separable`), a constant of its type
is_separable = by_class({BoxKind: _yes, Ball2Kind: _yes, LinfKind: _no, EllipsoidKind: _no}, inline="always")


def prox_scalars() -> np.ndarray:
    """A zeroed one-record array of :data:`PROX`."""
    return np.zeros(1, dtype=PROX)


@nb.njit(cache=True, inline="always")
def soft(p, lam1, s):  # pragma: no cover - compiled
    """``clip_s(soft(p, λ1))`` for a sign ``s ∈ {−1, 0, 1}`` (2: a weight fixed at 0), branch-free."""
    return (0 <= s <= 1) * max(p - lam1, 0.0) + (-1 <= s <= 0) * min(p + lam1, 0.0)


@nb.njit(cache=True, fastmath=FASTMATH)
def softclip(p, lam1, sg, inv_lam):  # pragma: no cover - compiled
    """``T(p)/λ2`` for a whole vector: the gradient of ``h*`` at ``p``."""
    out = np.empty(p.size)
    for h in range(p.size):
        out[h] = soft(p[h], lam1, sg[h]) * inv_lam
    return out


@nb.njit(cache=True, fastmath=FASTMATH)
def _ellipsoid(setk, st, A, prm, inner):  # pragma: no cover - compiled
    """At most ``inner`` projected-gradient steps ``μ ← proj(μ + λ2 Lᵀw/(A‖L‖²))`` on ``‖μ‖ ≤ 1``, then ``u = Lμ``,
    ``w = w_u`` (``robust_dcd.md`` §2); ``L`` lower-triangular, its products by BLAS. Returns ``(u·w, ‖u‖²)``."""
    v, mu, w, u = st.v, st.mu, st.w, st.u
    sg, Lm, lam1, inv_lam = setk.sg, setk.L, prm.lam1, 1.0 / prm.lam
    d = v.size
    if A <= 0.0:
        w[:] = softclip(v, lam1, sg, inv_lam)
        g = Lm.T @ w
        nrm = np.sqrt(g @ g)
        mu[:] = g / nrm if nrm > 0.0 else g
    else:
        step = prm.lam / (A * setk.lnorm2)
        for _ in range(inner):
            u[:] = Lm @ mu
            w[:] = softclip(v - A * u, lam1, sg, inv_lam)
            g = mu + step * (Lm.T @ w)  # μ + step Lᵀw, projected on the unit ball
            nrm = np.sqrt(g @ g)
            g *= 1.0 / nrm if nrm > 1.0 else 1.0
            moved = (g - mu) @ (g - mu)
            mu[:] = g
            if moved <= prm.inner_tol * prm.inner_tol:
                break
    u[:] = Lm @ mu
    uw = uu = 0.0
    for h in range(d):
        wh = soft(v[h] - A * u[h], lam1, sg[h]) * inv_lam
        w[h] = wh
        uw += u[h] * wh
        uu += u[h] * u[h]
    return uw, uu


@nb.njit(cache=True, fastmath=FASTMATH)
def refresh(setk, st, A, prm, inner):  # pragma: no cover - compiled
    """``u`` (the saddle point but for the ellipsoid), ``w = w_u``, ``z`` and ``scal`` from ``st.v`` and ``A``."""
    separable, kind, arrays, bounds, bounded, v, z, w, u, scal = unpacked(setk, st)
    if not separable or refresh_separable(kind, v, z, w, u, scal, arrays, A, prm, bounds, bounded):
        refresh_clipped(setk, st, A, prm, inner)


@nb.njit(cache=True, inline="always")
def unpacked(setk, st):  # pragma: no cover - compiled
    """What :func:`refresh_separable` reads, unpacked once (an array read from a named tuple costs a reference
    count)."""
    return (is_separable(setk.kind), setk.kind, (setk.sg, setk.delta),
            (setk.lo, setk.hi, setk.clo, setk.chi), setk.bounded, st.v, st.z, st.w, st.u, st.scal)


@nb.njit(cache=True, fastmath=FASTMATH)
def refresh_separable(kind, v, z, w, u, scal, arrays, A, prm, bounds, bounded):  # pragma: no cover - compiled
    """:func:`refresh` of a box or a 2-ball on arrays unpacked once per epoch; True when a bound may bind, and
    :func:`refresh_clipped` must run (``robust_dcd.md`` §7), as always for the other kinds."""
    return _separable_prox(kind, v, z, w, u, scal, arrays, A, prm, bounds, bounded)


def _separable_box(kind, v, z, w, u, scal, arrays, A, prm, bounds, bounded):
    """The box's ``w = soft(z, τδ)``, ``u = clip(z/τ, −δ, δ)`` (:func:`box_pair`), unless a bound is crossed."""
    lo, hi = bounds[0], bounds[1]
    tau = A / prm.lam
    uw, uu, _ = _box(v, z, w, u, arrays, lo, hi, tau, prm, False)
    if bounded and _outside(w, lo, hi) > 0:
        return True
    scal[0].uw = uw
    scal[0].uu = uu
    _refresh_tail(w, u, scal, False)
    return False


def _separable_ball2(kind, v, z, w, u, scal, arrays, A, prm, bounds, bounded):
    """The 2-ball's ``w = max(0, 1 − τ/‖z‖) z``, ``u = z/max(‖z‖, τ)``, unless some ``z_h`` is a candidate of a
    bound."""
    clo, chi = bounds[2], bounds[3]
    nz2, out = _ball2_z(v, z, arrays[0], clo, chi, prm, bounded)
    if out > 0:
        return True
    shrink, inv_m = ball2_scalars(nz2, A, prm.lam, scal)
    for h in range(z.size):
        w[h] = shrink * z[h]
        u[h] = inv_m * z[h]
    return False


def _not_separable(kind, v, z, w, u, scal, arrays, A, prm, bounds, bounded):
    """No separable prox: :func:`refresh_clipped` runs."""
    return True


_separable_prox = by_class({BoxKind: _separable_box, Ball2Kind: _separable_ball2, LinfKind: _not_separable,
                            EllipsoidKind: _not_separable}, inline="always",
                           jit_options={"fastmath": FASTMATH})


@nb.njit(cache=True, fastmath=FASTMATH, inline="always")
def _refresh_tail(w, u, scal, clipped):  # pragma: no cover - compiled
    """``scal``'s ``ww`` (``hs`` when ``clipped``) and ``ua``."""
    ww = ua = 0.0
    for h in range(w.size):
        wh = w[h]
        ww += wh * wh
        ua += u[h] * u[h] * (wh != 0.0)
    scal[0].ww = scal[0].hs if clipped else ww
    scal[0].ua = ua


@nb.njit(cache=True, fastmath=FASTMATH)
def refresh_clipped(setk, st, A, prm, inner):  # pragma: no cover - compiled
    """:func:`refresh` of the ellipsoid, the ℓ1-ball, and of a box or a 2-ball whose bounds may bind."""
    kind, scal = setk.kind, st.scal
    uw, uu, hs = _clipped_prox(kind, setk, st, A, prm, inner)
    clipped = is_separable(kind)
    if clipped:  # ``hs = 2h*(v − Au)/λ2``
        scal[0].hs = 2.0 * hs * (1.0 / prm.lam)
    scal[0].uw = uw
    scal[0].uu = uu
    _refresh_tail(st.w, st.u, scal, clipped)


def _clipped_box(kind, setk, st, A, prm, inner):
    """The box's prox with ``w`` clipped to its bounds and the saddle point ``u`` (§7)."""
    return _box(st.v, st.z, st.w, st.u, (setk.sg, setk.delta), setk.lo, setk.hi, A / prm.lam, prm, True)


def _clipped_ball2(kind, setk, st, A, prm, inner):
    """The 2-ball's ``w = clip(s z, lo, hi)`` (:func:`._ball2_bounds_kernels.refresh_ball2_bounded`)."""
    nz2, _ = _ball2_z(st.v, st.z, setk.sg, setk.clo, setk.chi, prm, False)
    return refresh_ball2_bounded(st, setk, A / prm.lam, prm, nz2)


def _clipped_linf(kind, setk, st, A, prm, inner):
    """The ℓ1-ball's prox, ``σ_V = ‖·‖∞`` (:func:`_refresh_linf`)."""
    uw, uu = _refresh_linf(st, setk.sg, A / prm.lam, prm)
    return uw, uu, 0.0


def _clipped_ellipsoid(kind, setk, st, A, prm, inner):
    """The ellipsoid's ``u`` by projected-gradient steps (:func:`_ellipsoid`)."""
    uw, uu = _ellipsoid(setk, st, A, prm, inner)
    return uw, uu, 0.0


#: each kind's prox: ``(u·w, ‖u‖², h*(v − Au))`` (the last for the box and the 2-ball only)
_clipped_prox = by_class({BoxKind: _clipped_box, Ball2Kind: _clipped_ball2, LinfKind: _clipped_linf,
                          EllipsoidKind: _clipped_ellipsoid}, inline="always",
                         jit_options={"fastmath": FASTMATH})


@nb.njit(cache=True, fastmath=FASTMATH, inline="always")
def box_pair(zh, dh, tau, inv_tau):  # pragma: no cover - compiled
    """``(w_h, u_h) = (soft(z_h, τδ_h), clip(z_h/τ, −δ_h, δ_h))``, and ``(z_h, δ_h sign(z_h))`` at ``τ = 0``."""
    t = tau * dh
    uh = min(max(zh * inv_tau, -dh), dh) if tau > 0.0 else dh * (1.0 * (zh > 0.0) - 1.0 * (zh < 0.0))
    return max(zh - t, 0.0) + min(zh + t, 0.0), uh


@nb.njit(cache=True, fastmath=FASTMATH, inline="always")
def _box(v, z, w, u, arrays, lo, hi, tau, prm, clip):  # pragma: no cover - compiled
    """``z = T(v)/λ2`` and :func:`box_pair`; with ``clip`` (a constant), ``w = clip(soft(z, τδ), lo, hi)`` and its
    saddle point ``u`` (``robust_dcd.md`` §7). Returns ``(u·w, ‖u‖², h*(v − Au))`` (the last with ``clip``)."""
    sg, delta = arrays
    lam, lam1, inv_lam = prm.lam, prm.lam1, 1.0 / prm.lam
    A = tau * lam
    inv_tau = 1.0 / tau if tau > 0.0 else 0.0
    uw = uu = hs = 0.0
    for h in range(v.size):
        p = v[h]
        zh = soft(p, lam1, sg[h]) * inv_lam
        wh, uh = box_pair(zh, delta[h], tau, inv_tau)
        if clip:
            wh = min(max(wh, lo[h]), hi[h])
            if tau > 0.0:
                f = 1.0 * (lo[h] > 0.0) - 1.0 * (hi[h] < 0.0)  # the sign the bounds force (0: they allow w_h = 0)
                uh += abs(f) * (f * delta[h] - uh)
            else:
                uh = delta[h] * (1.0 * (wh > 0.0) - 1.0 * (wh < 0.0))
            hs += (p - A * uh) * wh - lam1 * abs(wh) - 0.5 * lam * wh * wh
        z[h], w[h], u[h] = zh, wh, uh
        uw += uh * wh
        uu += uh * uh
    return uw, uu, hs


@nb.njit(cache=True, fastmath=FASTMATH, inline="always")
def _outside(w, lo, hi):  # pragma: no cover - compiled
    """The number of ``w_h`` outside ``[lo_h, hi_h]``."""
    out = 0
    for h in range(w.size):
        out += (w[h] > hi[h]) + (w[h] < lo[h])
    return out


@nb.njit(cache=True, fastmath=FASTMATH, inline="always")
def _ball2_z(v, z, sg, clo, chi, prm, check):  # pragma: no cover - compiled
    """``z = T(v)/λ2`` and ``(‖z‖², out)``, ``out`` the number of ``z_h ∉ [clo_h, chi_h]`` when ``check``."""
    lam1, inv_lam = prm.lam1, 1.0 / prm.lam
    nz2 = 0.0
    out = 0
    for h in range(v.size):
        zh = z[h] = soft(v[h], lam1, sg[h]) * inv_lam
        nz2 += zh * zh
        if check:
            out += (zh > chi[h]) + (zh < clo[h])
    return nz2, out


@nb.njit(cache=True, fastmath=FASTMATH)
def _refresh_linf(st, sg, tau, prm):  # pragma: no cover - compiled
    """The ℓ1-ball's ``w = z − proj_{τB₁}(z) = clip(z, −θ, θ)`` and ``u = (z − w)/τ``, ``θ`` the root of
    ``Σ_h (|z_h| − θ)_+ = τ`` (0 when ``‖z‖₁ ≤ τ``); at ``τ = 0``, ``w = z`` and ``u`` the signed unit vector of
    ``z``'s largest entry. Returns ``(u·w, ‖u‖²)``."""
    v, z, w, u, scal = st.v, st.z, st.w, st.u, st.scal
    lam1, inv_lam = prm.lam1, 1.0 / prm.lam
    d = v.size
    l1 = amax = 0.0
    kmax = -1
    for h in range(d):
        zh = soft(v[h], lam1, sg[h]) * inv_lam
        z[h] = zh
        l1 += abs(zh)
        if abs(zh) > amax:
            amax = abs(zh)
            kmax = h
    if tau <= 0.0:
        w[:] = z
        u[:] = 0.0
        if kmax < 0:
            return 0.0, 0.0
        u[kmax] = 1.0 if z[kmax] > 0.0 else -1.0
        return amax, 1.0
    theta = 0.0
    if l1 > tau:  # Newton from below on the convex decreasing piecewise-linear Σ (|z_h| − θ)_+ − τ
        theta = scal[0].theta if 0.0 < scal[0].theta < amax else 0.0  # the last level, a warm start
        warm = theta > 0.0
        for _ in range(200):
            f = -tau
            cnt = 0
            for h in range(d):
                if abs(z[h]) > theta:
                    f += abs(z[h]) - theta
                    cnt += 1
            if f < 0.0 and warm:  # the warm start is past the root: from 0 again (Newton's own steps stay below it)
                theta = 0.0
                warm = False
                continue
            warm = False
            if f <= 1e-15 * tau or cnt == 0 or theta + f / cnt <= theta:
                break
            theta = theta + f / cnt
        scal[0].theta = theta
    uw = uu = 0.0
    for h in range(d):
        wh = min(max(z[h], -theta), theta)
        uh = (z[h] - wh) / tau
        w[h] = wh
        u[h] = uh
        uw += uh * wh
        uu += uh * uh
    return uw, uu

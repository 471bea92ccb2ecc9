"""Compiled inner loops of the robust dual coordinate-ascent backend (numba).

The dual of the robust model (``docs/derivations/robust_dcd.md``) is, for any point ``u`` of the shared
unit set ``V``, bounded below by the nominal-looking function

    D_u(α) = Σ_i c_i (α_i − δ α_i²/4) − (λ2/2)‖w_u‖² [− S²/(2μ)],
    w_u = T(v − A u)/λ2,   T(p)_h = clip_{s_h}(soft(p_h, λ1)),
    v = Σ_i c_i y_i α_i x_i,   A = Σ_i c_i α_i r_i,

with equality at the saddle point ``u*(v, A)``; then ``w_u`` is the exact minimizer ``w(α)``. The maintained
state is ``v``, ``A``, ``u`` and ``w = w_u``, plus two scalars ``scal = [u·w, ‖u‖², θ]`` (θ warm-starts the
ℓ1-ball projection). One coordinate step maximizes the concave quadratic minorant of ``D_u`` along α_i
(slope from the exact gradient, curvature ``c_i‖x_i − y_i r_i u‖²/λ2`` bounds ``D_u``'s), then moves ``v``
and ``A`` and recomputes ``u`` and ``w`` (:func:`refresh`):

* ``kind`` 0, box ``σ_V(w) = Σ δ_h|w_h|`` (also ``Ball(p=∞)``, δ = 1): ``w = soft(z, τδ)``;
* ``kind`` 1, 2-ball ``σ_V = ‖·‖₂``: ``w = max(0, 1 − τ/‖z‖) z``;
* ``kind`` 2, ℓ1-ball ``σ_V = ‖·‖∞`` (``Ball(p=1)``): ``w = z − proj_{τB₁}(z)``;
* ``kind`` 3, ellipsoid ``σ_V = ‖Lᵀ·‖₂``: ``u = Lμ`` improved by projected-gradient steps on ``‖μ‖ ≤ 1``
  (not exact: every step still ascends ``D_u``, a lower bound of ``D``),

with ``z = T(v)/λ2`` and ``τ = A/λ2``; for kinds 0–2 ``u = (z − w)/τ`` (the worst case of ``w`` when τ = 0).
``state`` holds ``[b0, S, A]``: the intercept multiplier, ``S = Σ c_i y_i α_i`` and ``A``.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from ._dcd_kernels import _shuffle, _step, drop_from_active, leaves_active_set, projected_gradient

__all__ = ["epoch_dense", "epoch_sparse", "refresh", "softclip"]

_FM = {"reassoc", "contract", "nsz", "arcp"}

KIND_BOX, KIND_BALL2, KIND_LINF, KIND_ELLIPSOID = 0, 1, 2, 3


@nb.njit(cache=True)
def _soft(p, lam1, s):  # pragma: no cover - compiled
    """``clip_s(soft(p, λ1))``: the soft threshold at λ1 followed by the sign clip (s ∈ {−1, 0, 1})."""
    if p > lam1:
        return p - lam1 if s >= 0 else 0.0
    if p < -lam1:
        return p + lam1 if s <= 0 else 0.0
    return 0.0


@nb.njit(cache=True, fastmath=_FM)
def softclip(p, lam1, sg, inv_lam):  # pragma: no cover - compiled
    """``T(p)/λ2`` for a whole vector: the gradient of ``h*`` at ``p``."""
    out = np.empty(p.size)
    for h in range(p.size):
        out[h] = _soft(p[h], lam1, sg[h]) * inv_lam
    return out


@nb.njit(cache=True, fastmath=_FM)
def _ellipsoid(v, A, lam, lam1, sg, Lm, lnorm2, mu, w, u, scal, inner, inner_tol):  # pragma: no cover - compiled
    """Projected-gradient ascent on ``μ ↦ −h*(v − A Lμ)`` over ``‖μ‖ ≤ 1``, then ``u = Lμ`` and ``w = w_u``.

    Gradient ``A Lᵀ w_u``, Lipschitz constant ``A²‖L‖²/λ2``: step ``λ2/(A‖L‖²)`` on ``Lᵀw``. With ``A = 0``,
    μ is the maximizer of ``μ·Lᵀw`` (the worst case of ``w``). At most ``inner`` steps; stops when the step
    moves μ by less than ``inner_tol`` (Euclidean).
    """
    d = v.size
    inv_lam = 1.0 / lam
    g = np.empty(d)
    if A <= 0.0:
        for h in range(d):
            w[h] = _soft(v[h], lam1, sg[h]) * inv_lam
        nrm = 0.0
        for k in range(d):
            acc = 0.0
            for h in range(k, d):
                acc += Lm[h, k] * w[h]
            g[k] = acc
            nrm += acc * acc
        nrm = np.sqrt(nrm)
        for k in range(d):
            mu[k] = g[k] / nrm if nrm > 0.0 else 0.0
    else:
        step = lam / (A * lnorm2)
        for _ in range(inner):
            for h in range(d):  # u = Lμ (L lower triangular)
                acc = 0.0
                for k in range(h + 1):
                    acc += Lm[h, k] * mu[k]
                u[h] = acc
            for h in range(d):
                w[h] = _soft(v[h] - A * u[h], lam1, sg[h]) * inv_lam
            nrm = 0.0
            for k in range(d):  # μ + step Lᵀw
                acc = 0.0
                for h in range(k, d):
                    acc += Lm[h, k] * w[h]
                g[k] = mu[k] + step * acc
                nrm += g[k] * g[k]
            nrm = np.sqrt(nrm)
            f = 1.0 / nrm if nrm > 1.0 else 1.0
            moved = 0.0
            for k in range(d):
                t = g[k] * f
                moved += (t - mu[k]) * (t - mu[k])
                mu[k] = t
            if moved <= inner_tol * inner_tol:
                break
    for h in range(d):
        acc = 0.0
        for k in range(h + 1):
            acc += Lm[h, k] * mu[k]
        u[h] = acc
    uw = 0.0
    uu = 0.0
    for h in range(d):
        wh = _soft(v[h] - A * u[h], lam1, sg[h]) * inv_lam
        w[h] = wh
        uw += u[h] * wh
        uu += u[h] * u[h]
    scal[0] = uw
    scal[1] = uu


@nb.njit(cache=True, fastmath=_FM)
def refresh(kind, v, A, lam, lam1, sg, okp, okn, delta, Lm, lnorm2, mu, z, w, u, scal, inner,
            inner_tol):  # pragma: no cover - compiled
    """Recompute ``u`` (a point of V, the saddle point for kinds 0–2) and ``w = w_u`` from ``v`` and ``A``.

    ``okp``/``okn`` are 1.0 where a positive/negative ``w_h`` is allowed by the signs (else 0.0).
    Writes ``z = T(v)/λ2`` (kinds 0–2), ``w``, ``u`` and ``scal = [u·w, ‖u‖², θ, ‖w‖², Σ_{w_h≠0} u_h²]``
    (θ: the last ℓ1-projection level). O(d) for kinds 0–2, O(inner·d²) for the ellipsoid.
    """
    _refresh_core(kind, v, A, lam, lam1, sg, okp, okn, delta, Lm, lnorm2, mu, z, w, u, scal, inner, inner_tol)
    ww = 0.0
    ua = 0.0
    for h in range(v.size):
        wh = w[h]
        ww += wh * wh
        ua += u[h] * u[h] * (wh != 0.0)
    scal[3] = ww
    scal[4] = ua


@nb.njit(cache=True, fastmath=_FM)
def _refresh_core(kind, v, A, lam, lam1, sg, okp, okn, delta, Lm, lnorm2, mu, z, w, u, scal, inner,
                  inner_tol):  # pragma: no cover
    """:func:`refresh` without the last two entries of ``scal``."""
    if kind == KIND_ELLIPSOID:
        _ellipsoid(v, A, lam, lam1, sg, Lm, lnorm2, mu, w, u, scal, inner, inner_tol)
        return
    d = v.size
    inv_lam = 1.0 / lam
    tau = A * inv_lam
    uw = 0.0
    uu = 0.0
    if kind == KIND_BOX:
        if tau > 0.0:  # branch-free (vectorizable): w = soft(z, τδ), u = clip(z/τ, −δ, δ)
            inv_tau = 1.0 / tau
            for h in range(d):
                p = v[h]
                zh = (okp[h] * max(p - lam1, 0.0) + okn[h] * min(p + lam1, 0.0)) * inv_lam
                z[h] = zh
                t = tau * delta[h]
                wh = np.maximum(zh - t, 0.0) + np.minimum(zh + t, 0.0)
                uh = np.minimum(np.maximum(zh * inv_tau, -delta[h]), delta[h])
                w[h] = wh
                u[h] = uh
                uw += uh * wh
                uu += uh * uh
        else:
            for h in range(d):
                zh = _soft(v[h], lam1, sg[h]) * inv_lam
                z[h] = zh
                w[h] = zh
                uh = delta[h] if zh > 0.0 else (-delta[h] if zh < 0.0 else 0.0)
                u[h] = uh
                uw += uh * zh
                uu += uh * uh
    elif kind == KIND_BALL2:
        nz2 = 0.0
        for h in range(d):
            p = v[h]
            zh = (okp[h] * max(p - lam1, 0.0) + okn[h] * min(p + lam1, 0.0)) * inv_lam
            z[h] = zh
            nz2 += zh * zh
        nz = np.sqrt(nz2)
        s = 1.0 - tau / nz if nz > tau else 0.0
        m = nz if nz > tau else tau
        fu = 1.0 / m if m > 0.0 else 0.0
        for h in range(d):
            wh = s * z[h]
            uh = fu * z[h]
            w[h] = wh
            u[h] = uh
            uw += uh * wh
            uu += uh * uh
    else:  # KIND_LINF: σ_V = ‖·‖∞, V the unit ℓ1 ball
        l1 = 0.0
        amax = 0.0
        kmax = -1
        for h in range(d):
            zh = _soft(v[h], lam1, sg[h]) * inv_lam
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
            theta = scal[2]
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
            scal[2] = theta
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
    scal[0] = uw
    scal[1] = uu


@nb.njit(cache=True, fastmath=_FM, inline="always")
def _steps(ai, G, ci, yi, ri, sqn_i, xu, xa, xua, scal, lam, rho, dii, upper, local):  # pragma: no cover - compiled
    """The safe and the local step along α_i: ``(q_safe, a_safe, a_new)``.

    The safe curvature ``c_i(‖x_i − y_i r_i u‖²/λ2 + ρ) + δ`` bounds ``D_u``'s; the local one counts only the
    coordinates with ``w_h ≠ 0`` (used with L1 or signs, kept only if its exact gain is no worse, see
    :func:`_worse_than_safe`). Without ``local`` the two steps are the same.
    """
    xt2 = max(sqn_i - 2.0 * yi * ri * xu + ri * ri * scal[1], 0.0)
    q_safe = ci * (xt2 / lam + rho) + dii
    a_safe = _step(ai, G, q_safe, upper)
    a_new = a_safe
    if local:
        xl2 = max(xa - 2.0 * yi * ri * xua + ri * ri * scal[4], 0.0)
        a_new = _step(ai, G, ci * (xl2 / lam + rho) + dii, upper)
    return q_safe, a_safe, a_new


@nb.njit(cache=True, fastmath=_FM, inline="always")
def _worse_than_safe(ai, a_new, a_safe, G, ci, q_safe, dii, lam, d_ww, b_old, dv, rho):  # pragma: no cover
    """Whether the local step's exact dual gain is below the gain the safe step is guaranteed,
    ``−c_i(G Δ + ½ q_safe Δ²)`` with ``Δ = a_safe − α_i`` (then the safe step is taken instead)."""
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


@nb.njit(cache=True, fastmath=_FM, inline="always")
def _move_dense(X, i, dv, v):  # pragma: no cover - compiled
    """``v += dv·x_i`` for a dense row."""
    for h in range(X.shape[1]):
        v[h] += dv * X[i, h]


@nb.njit(cache=True, fastmath=_FM, inline="always")
def _move_sparse(indptr, indices, data, i, dv, v):  # pragma: no cover - compiled
    """``v += dv·x_i`` on the stored entries of a CSR row."""
    for k in range(indptr[i], indptr[i + 1]):
        v[indices[k]] += dv * data[k]


@nb.njit(cache=True, fastmath=_FM)
def epoch_dense(X, y, c, r, sqn, alpha, v, z, w, u, mu, scal, state, sg, okp, okn, delta, Lm, lnorm2, kind, lam,
                lam1, upper, dii, rho, index, active_size, pg_max_old, pg_min_old, shrinking, rng, inner,
                inner_tol, local):  # pragma: no cover - compiled
    """One epoch over ``index[:active_size]`` for a dense C-ordered ``X``.

    Returns ``(active_size, pg_max_new, pg_min_new, n_updates)``; the state arrays are updated in place.
    """
    d = X.shape[1]
    b0 = state[0]
    S = state[1]
    A = state[2]
    pg_max_new = -np.inf
    pg_min_new = np.inf
    n_updates = 0
    _shuffle(index, active_size, rng)
    s = 0
    while s < active_size:
        i = index[s]
        xw = 0.0
        xu = 0.0
        xa = 0.0  # Σ over coordinates with w_h ≠ 0 of x_ih², and of x_ih u_h (local curvature)
        xua = 0.0
        for h in range(d):
            xh = X[i, h]
            wh = w[h]
            xw += xh * wh
            xu += xh * u[h]
            on = wh != 0.0
            xa += xh * xh * on
            xua += xh * u[h] * on
        yi = y[i]
        ai = alpha[i]
        ri = r[i]
        G = yi * (xw + b0 + rho * S) - 1.0 - ri * scal[0] + dii * ai
        PG = projected_gradient(ai, G, upper)
        if shrinking and leaves_active_set(ai, G, upper, pg_max_old, pg_min_old):
            active_size = drop_from_active(index, s, active_size)
            continue
        pg_max_new = max(pg_max_new, PG)
        pg_min_new = min(pg_min_new, PG)
        if abs(PG) > 1e-12:
            ci = c[i]
            q_safe, a_safe, a_new = _steps(ai, G, ci, yi, ri, sqn[i], xu, xa, xua, scal, lam, rho, dii, upper, local)
            da = a_new - ai
            if da != 0.0:
                ww_old = scal[3]
                b_old = b0 + rho * S
                alpha[i] = a_new
                dv = da * yi * ci
                S += dv
                n_updates += 1
                _move_dense(X, i, dv, v)
                A = _radius_mass(A, da, ci, ri)
                refresh(kind, v, A, lam, lam1, sg, okp, okn, delta, Lm, lnorm2, mu, z, w, u, scal, inner, inner_tol)
                if a_new != a_safe:
                    if _worse_than_safe(ai, a_new, a_safe, G, ci, q_safe, dii, lam, scal[3] - ww_old, b_old, dv, rho):
                        da2 = a_safe - a_new
                        dv2 = da2 * yi * ci
                        alpha[i] = a_safe
                        S += dv2
                        _move_dense(X, i, dv2, v)
                        A = _radius_mass(A, da2, ci, ri)
                        refresh(kind, v, A, lam, lam1, sg, okp, okn, delta, Lm, lnorm2, mu, z, w, u, scal, inner,
                                inner_tol)
        s += 1
    state[1] = S
    state[2] = A
    return active_size, pg_max_new, pg_min_new, n_updates


@nb.njit(cache=True, fastmath=_FM, inline="always")
def _ball2_scalars(nz2, A, lam, scal):  # pragma: no cover - compiled
    """The 2-ball's state from ``‖z‖²`` alone: ``w = σ z``, ``u = z/m`` with ``σ = max(0, 1 − τ/‖z‖)``,
    ``m = max(‖z‖, τ)``, ``τ = A/λ2``; writes ``scal`` (``[u·w, ‖u‖², ·, ‖w‖², Σ_{w_h≠0} u_h²]``) and
    returns ``(σ, 1/m)``."""
    nz = np.sqrt(nz2)
    tau = A / lam
    shrink = 1.0 - tau / nz if nz > tau else 0.0
    m = nz if nz > tau else tau
    inv_m = 1.0 / m if m > 0.0 else 0.0
    scal[0] = shrink * nz2 * inv_m
    scal[1] = nz2 * inv_m * inv_m
    scal[3] = shrink * shrink * nz2
    scal[4] = scal[1] if shrink > 0.0 else 0.0
    return shrink, inv_m


@nb.njit(cache=True, fastmath=_FM, inline="always")
def _ball2_move(indptr, indices, data, i, dv, v, z, sg, lam, lam1, nz2):  # pragma: no cover - compiled
    """``v += dv·x_i`` and ``z = T(v)/λ2`` on the stored entries of row i; returns the updated ``‖z‖²``."""
    inv_lam = 1.0 / lam
    for k in range(indptr[i], indptr[i + 1]):
        h = indices[k]
        vh = v[h] + dv * data[k]
        v[h] = vh
        zh = _soft(vh, lam1, sg[h]) * inv_lam
        nz2 += zh * zh - z[h] * z[h]
        z[h] = zh
    return max(nz2, 0.0)


@nb.njit(cache=True, fastmath=_FM)
def _epoch_sparse_ball2(indptr, indices, data, y, c, r, sqn, alpha, v, z, w, u, mu, scal, state, sg, okp, okn, delta,
                        Lm, lnorm2, kind, lam, lam1, upper, dii, rho, index, active_size, pg_max_old, pg_min_old,
                        shrinking, rng, inner, inner_tol, local):  # pragma: no cover - compiled
    """:func:`epoch_sparse` for the 2-ball in O(nnz(x_i)) per step.

    ``w = σ z`` and ``u = z/m`` depend on the shrink level only through two scalars of ``‖z‖``, so the epoch
    keeps ``z = T(v)/λ2`` and ``‖z‖²`` up to date on the touched coordinates and never forms ``w`` or ``u``;
    they are rebuilt (O(d)) once at the end of the epoch.
    """
    b0 = state[0]
    S = state[1]
    A = state[2]
    pg_max_new = -np.inf
    pg_min_new = np.inf
    n_updates = 0
    nz2 = 0.0
    for h in range(z.size):  # z = T(v)/λ2 as the last refresh left it
        nz2 += z[h] * z[h]
    shrink, inv_m = _ball2_scalars(nz2, A, lam, scal)
    _shuffle(index, active_size, rng)
    s = 0
    while s < active_size:
        i = index[s]
        xz = 0.0
        xa = 0.0
        for k in range(indptr[i], indptr[i + 1]):
            zh = z[indices[k]]
            xh = data[k]
            xz += xh * zh
            xa += xh * xh * (zh != 0.0)
        xw = shrink * xz
        xu = xz * inv_m
        if shrink <= 0.0:
            xa = 0.0
        xua = xu if shrink > 0.0 else 0.0
        yi = y[i]
        ai = alpha[i]
        ri = r[i]
        G = yi * (xw + b0 + rho * S) - 1.0 - ri * scal[0] + dii * ai
        PG = projected_gradient(ai, G, upper)
        if shrinking and leaves_active_set(ai, G, upper, pg_max_old, pg_min_old):
            active_size = drop_from_active(index, s, active_size)
            continue
        pg_max_new = max(pg_max_new, PG)
        pg_min_new = min(pg_min_new, PG)
        if abs(PG) > 1e-12:
            ci = c[i]
            q_safe, a_safe, a_new = _steps(ai, G, ci, yi, ri, sqn[i], xu, xa, xua, scal, lam, rho, dii, upper, local)
            da = a_new - ai
            if da != 0.0:
                ww_old = scal[3]
                b_old = b0 + rho * S
                alpha[i] = a_new
                dv = da * yi * ci
                S += dv
                n_updates += 1
                nz2 = _ball2_move(indptr, indices, data, i, dv, v, z, sg, lam, lam1, nz2)
                A = _radius_mass(A, da, ci, ri)
                shrink, inv_m = _ball2_scalars(nz2, A, lam, scal)
                if a_new != a_safe:
                    if _worse_than_safe(ai, a_new, a_safe, G, ci, q_safe, dii, lam, scal[3] - ww_old, b_old, dv, rho):
                        da2 = a_safe - a_new
                        dv2 = da2 * yi * ci
                        alpha[i] = a_safe
                        S += dv2
                        nz2 = _ball2_move(indptr, indices, data, i, dv2, v, z, sg, lam, lam1, nz2)
                        A = _radius_mass(A, da2, ci, ri)
                        shrink, inv_m = _ball2_scalars(nz2, A, lam, scal)
        s += 1
    state[1] = S
    state[2] = A
    refresh(kind, v, A, lam, lam1, sg, okp, okn, delta, Lm, lnorm2, mu, z, w, u, scal, inner, inner_tol)
    return active_size, pg_max_new, pg_min_new, n_updates


@nb.njit(cache=True, fastmath=_FM)
def epoch_sparse(indptr, indices, data, y, c, r, sqn, alpha, v, z, w, u, mu, scal, state, sg, okp, okn, delta, Lm,
                 lnorm2, kind, lam, lam1, upper, dii, rho, index, active_size, pg_max_old, pg_min_old, shrinking, rng,
                 inner, inner_tol, local):  # pragma: no cover - compiled
    """:func:`epoch_dense` for a CSR ``X``: the products touch the stored entries of row i only.

    The refresh of ``u`` and ``w`` after a step is O(d) (the shrink level moves with ``A``), except for the
    2-ball, whose step is O(nnz(x_i)) (:func:`_epoch_sparse_ball2`).
    """
    if kind == KIND_BALL2:
        return _epoch_sparse_ball2(indptr, indices, data, y, c, r, sqn, alpha, v, z, w, u, mu, scal, state, sg, okp,
                                   okn, delta, Lm, lnorm2, kind, lam, lam1, upper, dii, rho, index, active_size,
                                   pg_max_old, pg_min_old, shrinking, rng, inner, inner_tol, local)
    b0 = state[0]
    S = state[1]
    A = state[2]
    pg_max_new = -np.inf
    pg_min_new = np.inf
    n_updates = 0
    _shuffle(index, active_size, rng)
    s = 0
    while s < active_size:
        i = index[s]
        start = indptr[i]
        stop = indptr[i + 1]
        xw = 0.0
        xu = 0.0
        xa = 0.0
        xua = 0.0
        for k in range(start, stop):
            h = indices[k]
            xh = data[k]
            wh = w[h]
            xw += xh * wh
            xu += xh * u[h]
            on = wh != 0.0
            xa += xh * xh * on
            xua += xh * u[h] * on
        yi = y[i]
        ai = alpha[i]
        ri = r[i]
        G = yi * (xw + b0 + rho * S) - 1.0 - ri * scal[0] + dii * ai
        PG = projected_gradient(ai, G, upper)
        if shrinking and leaves_active_set(ai, G, upper, pg_max_old, pg_min_old):
            active_size = drop_from_active(index, s, active_size)
            continue
        pg_max_new = max(pg_max_new, PG)
        pg_min_new = min(pg_min_new, PG)
        if abs(PG) > 1e-12:
            ci = c[i]
            q_safe, a_safe, a_new = _steps(ai, G, ci, yi, ri, sqn[i], xu, xa, xua, scal, lam, rho, dii, upper, local)
            da = a_new - ai
            if da != 0.0:
                ww_old = scal[3]
                b_old = b0 + rho * S
                alpha[i] = a_new
                dv = da * yi * ci
                S += dv
                n_updates += 1
                _move_sparse(indptr, indices, data, i, dv, v)
                A = _radius_mass(A, da, ci, ri)
                refresh(kind, v, A, lam, lam1, sg, okp, okn, delta, Lm, lnorm2, mu, z, w, u, scal, inner, inner_tol)
                if a_new != a_safe:
                    if _worse_than_safe(ai, a_new, a_safe, G, ci, q_safe, dii, lam, scal[3] - ww_old, b_old, dv, rho):
                        da2 = a_safe - a_new
                        dv2 = da2 * yi * ci
                        alpha[i] = a_safe
                        S += dv2
                        _move_sparse(indptr, indices, data, i, dv2, v)
                        A = _radius_mass(A, da2, ci, ri)
                        refresh(kind, v, A, lam, lam1, sg, okp, okn, delta, Lm, lnorm2, mu, z, w, u, scal, inner,
                                inner_tol)
        s += 1
    state[1] = S
    state[2] = A
    return active_size, pg_max_new, pg_min_new, n_updates

"""Compiled loops of the batched feature-space interior point (:mod:`.feature_ipm`).

Many points share the data, so each iteration handles a stack of small normal matrices ``K_p``: NumPy
factors the stack in one call (``np.linalg.cholesky``) but has neither a batched triangular solve nor a fused
assembly of ``K_p`` from the Gram entries; these loops do both in O(k²) per point, without Python overhead per
point or temporary stacks.
"""

from __future__ import annotations

import numba as nb
import numpy as np

#: reassociation, contraction and no NaN: the per-sample loops read interior iterates only (finite, positive)
_FM = {"nnan", "nsz", "arcp", "contract", "reassoc"}

__all__ = ["cho_solve_batch", "margin_products", "normal_matrices", "purified_multipliers", "row_margins",
           "sample_complementarity", "sample_rho", "sample_steps", "scaled_rows", "transposed_margins",
           "transposed_product"]


@nb.njit(cache=True)
def cho_solve_batch(L: np.ndarray, rhs: np.ndarray) -> np.ndarray:  # pragma: no cover - compiled
    """``(L_p L_pᵀ)⁻¹ rhs_p`` for ``L`` of shape (P, k, k) (lower triangular) and ``rhs`` of shape (P, k).

    Forward substitution ``L z = r`` then back substitution ``Lᵀ x = z``.
    """
    P, k = rhs.shape
    out = np.empty((P, k))
    z = np.empty(k)
    for p in range(P):
        for i in range(k):
            acc = rhs[p, i]
            for j in range(i):
                acc -= L[p, i, j] * z[j]
            z[i] = acc / L[p, i, i]
        for i in range(k - 1, -1, -1):
            acc = z[i]
            for j in range(i + 1, k):
                acc -= L[p, j, i] * out[p, j]
            out[p, i] = acc / L[p, i, i]
    return out


@nb.njit(cache=True)
def normal_matrices(C: np.ndarray, pos: np.ndarray, sgn: np.ndarray, coef: np.ndarray, pos_r: np.ndarray,
                    pos_rr: int, rscale: np.ndarray, diag: np.ndarray) -> np.ndarray:  # pragma: no cover - compiled
    """``K_p = T_p C_p T_pᵀ + diag(diag_p)`` from the flattened Gram entries ``C`` (P, D(D+1)/2).

    ``K_p[j, l] = sgn_j sgn_l C[pos[j, l]] + ρ_p (sgn_j coef_l C[pos_r[j]] + coef_j sgn_l C[pos_r[l]])
    + ρ_p² coef_j coef_l C[pos_rr]``, plus ``diag_p[j]`` on the diagonal.
    """
    P = C.shape[0]
    k = sgn.size
    out = np.empty((P, k, k))
    for p in range(P):
        rho = rscale[p]
        crr = rho * rho * C[p, pos_rr]
        for j in range(k):
            cj = rho * sgn[j] * C[p, pos_r[j]]
            for l in range(j, k):
                v = sgn[j] * sgn[l] * C[p, pos[j, l]]
                if coef[l] != 0.0 or coef[j] != 0.0:
                    v += cj * coef[l] + rho * coef[j] * sgn[l] * C[p, pos_r[l]] + crr * coef[j] * coef[l]
                out[p, j, l] = v
                out[p, l, j] = v
            out[p, j, j] += diag[p, j]
    return out


@nb.njit(cache=True)
def sample_rho(squared: bool, rs: np.ndarray, rxi: np.ndarray, rhs_s: np.ndarray, rhs_xi: np.ndarray,
               s: np.ndarray, alpha: np.ndarray, xi: np.ndarray, beta: np.ndarray, c: np.ndarray,
               e: np.ndarray):  # pragma: no cover - compiled
    """The eliminated right-hand side ``ρ`` of the per-sample equations and ``ρ/e`` (arrays of shape (P, n)).

    Hinge: ``ρ = −r_s − (rhs_ξ − ξ r_ξ)/β + rhs_s/α``; squared hinge: ``ρ = −r_s + r_ξ/(2c) + rhs_s/α``
    (``rhs_xi`` and ``beta`` are not read).
    """
    P, n = rs.shape
    rho = np.empty((P, n))
    v = np.empty((P, n))
    for p in range(P):
        for i in range(n):
            if squared:
                r = -rs[p, i] + rxi[p, i] / (2.0 * c[i]) + rhs_s[p, i] / alpha[p, i]
            else:
                r = -rs[p, i] - (rhs_xi[p, i] - xi[p, i] * rxi[p, i]) / beta[p, i] + rhs_s[p, i] / alpha[p, i]
            rho[p, i] = r
            v[p, i] = r / e[p, i]
    return rho, v


@nb.njit(cache=True, fastmath=_FM)
def sample_steps(squared: bool, rho: np.ndarray, gxd: np.ndarray, e: np.ndarray, rhs_s: np.ndarray,
                 rhs_xi: np.ndarray, rxi: np.ndarray, s: np.ndarray, alpha: np.ndarray, xi: np.ndarray,
                 beta: np.ndarray, c: np.ndarray):  # pragma: no cover - compiled
    """The per-sample steps ``Δα = (ρ − GΔx)/e``, ``Δs = (rhs_s − sΔα)/α``, and ``Δξ, Δβ`` (hinge:
    ``Δβ = r_ξ − Δα``, ``Δξ = (rhs_ξ − ξ r_ξ + ξΔα)/β``; squared hinge: ``Δξ = (Δα − r_ξ)/(2c)``, ``Δβ`` unused),
    with the largest step ``a`` per point that keeps ``s, α, ξ, β ≥ 0`` (``inf`` if none decreases).

    The iterates are interior (``s, α, ξ, β > 0``), so ``1/a = max(0, max_i −Δα_i/α_i, −Δs_i/s_i, …)``: a
    maximum without branches, which the compiler vectorizes (a test per component does not).
    """
    P, n = rho.shape
    da = np.empty((P, n))
    ds = np.empty((P, n))
    dxi = np.empty((P, n))
    db = np.empty((P, n)) if not squared else np.empty((P, 0))
    amax = np.full(P, np.inf)
    for p in range(P):
        m = 0.0
        if squared:
            for i in range(n):
                a_i = (rho[p, i] - gxd[p, i]) / e[p, i]
                s_i = (rhs_s[p, i] - s[p, i] * a_i) / alpha[p, i]
                da[p, i] = a_i
                ds[p, i] = s_i
                dxi[p, i] = (a_i - rxi[p, i]) / (2.0 * c[i])
                m = max(m, max(-a_i / alpha[p, i], -s_i / s[p, i]))
        else:
            for i in range(n):
                a_i = (rho[p, i] - gxd[p, i]) / e[p, i]
                s_i = (rhs_s[p, i] - s[p, i] * a_i) / alpha[p, i]
                b_i = rxi[p, i] - a_i
                x_i = (rhs_xi[p, i] - xi[p, i] * rxi[p, i] + xi[p, i] * a_i) / beta[p, i]
                da[p, i] = a_i
                ds[p, i] = s_i
                db[p, i] = b_i
                dxi[p, i] = x_i
                m = max(m, max(max(-a_i / alpha[p, i], -s_i / s[p, i]), max(-b_i / beta[p, i], -x_i / xi[p, i])))
        if m > 0.0:
            amax[p] = 1.0 / m
    return da, ds, dxi, db, amax


@nb.njit(cache=True)
def sample_complementarity(squared: bool, s: np.ndarray, alpha: np.ndarray, xi: np.ndarray, beta: np.ndarray,
                           ds: np.ndarray, da: np.ndarray, dxi: np.ndarray, db: np.ndarray,
                           a: np.ndarray):  # pragma: no cover - compiled
    """``Σ_i (s + aΔs)(α + aΔα) [+ (ξ + aΔξ)(β + aΔβ)]`` per point (the hinge adds the bracket), without
    forming the advanced point."""
    P, n = s.shape
    out = np.zeros(P)
    for p in range(P):
        t = a[p]
        acc = 0.0
        for i in range(n):
            acc += (s[p, i] + t * ds[p, i]) * (alpha[p, i] + t * da[p, i])
            if not squared:
                acc += (xi[p, i] + t * dxi[p, i]) * (beta[p, i] + t * db[p, i])
        out[p] = acc
    return out


@nb.njit(cache=True)
def purified_multipliers(squared: bool, s: np.ndarray, alpha: np.ndarray, xi: np.ndarray, beta: np.ndarray,
                         c: np.ndarray, write: bool = True):  # pragma: no cover - compiled
    """The margin multipliers rounded to the bound their sample's pair points to, and the complementarity
    ``Σ s_i α_i [+ ξ_i β_i]`` of the samples left as they are (arrays of shape (P, n) → (P, n), (P,); without
    ``write`` the first is empty, (P, 0)).

    ``α_i → 0`` where ``s_i > α_i/c_i`` (the margin's slack outweighs the multiplier: a sample off the margin),
    for the hinge ``α_i → c_i`` where ``ξ_i > β_i/c_i`` (a sample inside the loss); ``β`` is not read for the
    squared hinge, whose ``α`` has no upper bound.
    """
    P, n = s.shape
    out = np.empty((P, n if write else 0))
    kept = np.zeros(P)
    for p in range(P):
        acc = 0.0
        for i in range(n):
            a = alpha[p, i]
            v = a
            if s[p, i] * c[i] > a:
                v = 0.0
            elif not squared and xi[p, i] * c[i] > beta[p, i]:
                v = c[i]
            else:
                acc += s[p, i] * a
                if not squared:
                    acc += xi[p, i] * beta[p, i]
            if write:
                out[p, i] = v
        kept[p] = acc
    return out, kept


@nb.njit(cache=True)
def transposed_product(X: np.ndarray, v: np.ndarray) -> np.ndarray:  # pragma: no cover - compiled
    """``Xᵀv`` for a C-ordered ``X`` (n, d): one pass over the rows, ``out += v_i x_i`` (in cache); faster here than
    BLAS's transposed matrix-vector product on row-major data."""
    n, d = X.shape
    out = np.zeros(d)
    for i in range(n):
        vi = v[i]
        if vi == 0.0:
            continue
        for j in range(d):
            out[j] += vi * X[i, j]
    return out


@nb.njit(cache=True, fastmath=_FM)
def row_margins(X: np.ndarray, y: np.ndarray, r: np.ndarray, z: np.ndarray) -> np.ndarray:  # pragma: no cover
    """``A z = y ∘ (X z_x + z_b) + r z_r`` for ``z = (z_x, z_r, z_b)``, one pass over the rows of ``X`` (double or
    single precision; each row's product accumulates in the precision of ``X``, the result is double)."""
    n, d = X.shape
    zx = z[:d].astype(X.dtype)
    zr, zb = z[d], z[d + 1]
    out = np.empty(n)
    for i in range(n):
        acc = X.dtype.type(0.0)
        for j in range(d):
            acc += X[i, j] * zx[j]
        out[i] = y[i] * (acc + zb) + r[i] * zr
    return out


@nb.njit(cache=True, fastmath=_FM)
def margin_products(X: np.ndarray, y: np.ndarray, r: np.ndarray, z: np.ndarray,
                    v: np.ndarray):  # pragma: no cover - compiled
    """``A z`` and ``Aᵀ v`` (``A`` with rows ``a_i = (y_i x_i, r_i, y_i)``) from one read of each row of ``X``:
    ``(A z)_i = y_i (x_i·z_x + z_b) + r_i z_r`` and ``Aᵀ v = Σ_i v_i a_i``, in double precision."""
    n, d = X.shape
    out = np.empty(n)
    t = np.zeros(d + 2)
    zr, zb = z[d], z[d + 1]
    for i in range(n):
        yv = y[i] * v[i]
        acc = 0.0
        for j in range(d):
            xij = X[i, j]
            acc += xij * z[j]
            t[j] += yv * xij
        out[i] = y[i] * (acc + zb) + r[i] * zr
        t[d] += v[i] * r[i]
        t[d + 1] += yv
    return out, t


@nb.njit(cache=True, fastmath=_FM)
def transposed_margins(X: np.ndarray, y: np.ndarray, r: np.ndarray, v: np.ndarray) -> np.ndarray:  # pragma: no cover
    """``Aᵀ v = (Xᵀ(y∘v), rᵀv, yᵀv)`` in one pass over the rows of ``X``; the ``Xᵀ`` part accumulates in the
    precision of ``X`` (single precision: the products that only steer), the result is double."""
    n, d = X.shape
    acc = np.zeros(d, dtype=X.dtype)
    tr = 0.0
    ty = 0.0
    for i in range(n):
        yv = y[i] * v[i]
        c = X.dtype.type(yv)
        for j in range(d):
            acc[j] += c * X[i, j]
        tr += r[i] * v[i]
        ty += yv
    out = np.empty(d + 2)
    out[:d] = acc
    out[d] = tr
    out[d + 1] = ty
    return out


@nb.njit(cache=True)
def scaled_rows(X: np.ndarray, sw: np.ndarray, swr: np.ndarray, extra: np.ndarray, lo: int,
                out: np.ndarray) -> None:  # pragma: no cover - compiled
    """Rows ``lo, lo + 1, …`` of ``√w_i ã_i = (√w_i x_i, √w_i y_i r_i, √w_i)`` written into ``out`` (one row each,
    in the precision of ``out``), with the column ``extra_i`` appended when ``extra`` is not empty: the block
    whose product ``outᵀout`` the weighted Gram matrix sums."""
    d = X.shape[1]
    for k in range(out.shape[0]):
        i = lo + k
        s = sw[i]
        for j in range(d):
            out[k, j] = X[i, j] * s
        out[k, d] = swr[i]
        out[k, d + 1] = s
        if extra.size:
            out[k, d + 2] = extra[i]

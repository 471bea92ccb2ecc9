"""Interior point in the feature space (``feature-ipm``): robust SVMs with few features, certified.

The model is ``robust-dcd``'s,

    minimize   (λ2/2)‖w‖² + λ1‖w‖₁ [+ (μ/2) b²] + Σ_i c_i ℓ(y_i (x_i·w + b) − r_i σ_V(w))
    subject to s_h w_h ≥ 0,

with the hinge or squared hinge and one shared ``Box``, ``Ball`` (p = 2 or ∞) or ``Ellipsoid``. Writing
``w = M u`` with ``u ≥ 0`` (one part per allowed sign of each feature) and, for a 2-ball or an ellipsoid,
``t ≥ ‖N u‖₂`` (``N = M`` or ``LᵀM``), it is the conic QP

    minimize   (λ2/2)‖u‖² + λ1 1ᵀu [+ (μ/2) b²] + Σ_i c_i ℓ(ξ_i)
    subject to g_iᵀ x + ξ_i − 1 = s_i ≥ 0,  ξ ≥ 0 (hinge),  u ≥ 0,  (t, N u) ∈ Q,

in ``x = (u, [t], [b])``, ``g_i = (y_i Mᵀx_i − r_i δ_u, −r_i, y_i)``. A Mehrotra predictor-corrector
with the Nesterov-Todd scaling eliminates the ``3n`` sample variables per sample, so each iteration
factors one dense ``(dim x)²`` matrix ``K + Σ_i g_i g_iᵀ/e_i`` built from ``Aᵀ diag(1/e) A`` with
``A = [y∘X, r, y]``: ``O(n d²)`` work per iteration and about 20 iterations whatever λ, the radii or
the conditioning. It is the method of choice when ``d`` is small against ``n`` (and for grids over
ill-conditioned models, where the first-order ``robust-dcd`` needs many epochs); ``robust-dcd`` is
the method for many features.

The answer is certified as ``robust-dcd``'s: the interior point's margin multipliers ``α`` give the
dual lower bound ``D_u(α̃)`` of :mod:`.robust_dcd`, the primal point is the better of the iterate's
``w = M u`` and ``w(α)``, and the iteration stops at the package's relative gap, not at its own
residuals. The derivation is in ``docs/derivations/feature_ipm.md``.
"""

from __future__ import annotations

import math
import time
from functools import partial

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from ..objective import objective_from_margins
from ..uncertainty import Ball, Box, Ellipsoid
from . import _robust_dcd_kernels as kern
from . import _second_order_cone as soc
from .dcd import _Products
from .registry import Backend, History, Needs, Result, register
from .robust_dcd import _Certificate, _certify, _SetSpec, _State

__all__ = ["NEEDS", "feature_ipm_arrays", "solve_feature_ipm"]


def _ball_exponent(problem) -> list[str]:
    unc = problem.uncertainty
    sets = list(unc) if isinstance(unc, (list, tuple)) else [unc]
    bad = sorted({s.p for s in sets if type(s) is Ball and s.p not in (2.0, math.inf)})
    if bad:
        return [f"feature-ipm solves Ball(p) for p ∈ {{2, ∞}} only (p = {', '.join(f'{p:g}' for p in bad)}); "
                "robust-dcd solves p = 1 and the conic backends (clarabel, scs) any p"]
    return []


#: what feature-ipm solves: robust-dcd's models except the 1-ball
NEEDS = Needs(
    losses=frozenset({"hinge", "squared_hinge"}),
    l2="required",
    l1=True,
    sets=(Box, Ball, Ellipsoid),
    per_sample_sets=False,
    why={"loss": "feature-ipm needs a soft-margin loss",
         "sets": "the conic backends (clarabel, scs) solve other sets"},
    extra=_ball_exponent,
)


class _Layout:
    """The variables ``x = (u, [t], [b])`` and the maps of the conic QP.

    ``T`` (``k × (d+2)``) gives the constraint rows ``g_i = T a_i`` from ``a_i = (y_i x_i, r_i, y_i)``;
    ``H`` (``(q+1) × k``) gives the cone point ``(t, N u) = H x``; ``feature``/``sign`` give ``w = M u``.
    """

    def __init__(self, d: int, sg: np.ndarray, spec: _SetSpec, mode: str, robust: bool) -> None:
        feats, signs = [], []
        for h in range(d):
            if sg[h] >= 0:
                feats.append(h)
                signs.append(1.0)
            if sg[h] <= 0:
                feats.append(h)
                signs.append(-1.0)
        self.feature = np.array(feats, dtype=np.int64)
        self.sign = np.array(signs)
        self.d = d
        m = self.m = self.feature.size
        self.cone = robust and spec.kind in (kern.KIND_BALL2, kern.KIND_ELLIPSOID)
        self.t = m if self.cone else None
        self.b = (m + (1 if self.cone else 0)) if mode != "none" else None
        k = self.k = m + (1 if self.cone else 0) + (1 if mode != "none" else 0)
        T = np.zeros((k, d + 2))
        T[np.arange(m), self.feature] = self.sign
        if robust and spec.kind == kern.KIND_BOX:
            T[np.arange(m), d] = -spec.delta[self.feature]
        if self.cone:
            T[self.t, d] = -1.0
        if self.b is not None:
            T[self.b, d + 1] = 1.0
        self.T = T
        self.H = None
        if self.cone:
            Mmat = np.zeros((d, m))
            Mmat[self.feature, np.arange(m)] = self.sign
            N = Mmat if spec.kind == kern.KIND_BALL2 else spec.L.T @ Mmat
            H = np.zeros((N.shape[0] + 1, k))
            H[0, self.t] = 1.0
            H[1:, :m] = N
            self.H = H

    def weights(self, x: np.ndarray) -> np.ndarray:
        """``w = M u``."""
        w = np.zeros(self.d)
        np.add.at(w, self.feature, self.sign * x[:self.m])
        return w


class _Design:
    """``A = [y∘X, r, y]`` (dense or CSR) and its three products."""

    def __init__(self, X, y: np.ndarray, r: np.ndarray) -> None:
        if sp.issparse(X):
            self.A = sp.hstack([sp.diags(y) @ X, r[:, None], y[:, None]], format="csr")
        else:
            self.A = np.hstack([X * y[:, None], r[:, None], y[:, None]])

    def gram(self, weights: np.ndarray) -> np.ndarray:
        """``Aᵀ diag(weights) A`` (dense, symmetric)."""
        A = self.A
        if sp.issparse(A):
            return np.asarray((A.T @ A.multiply(weights[:, None]).tocsr()).todense())
        B = A * np.sqrt(weights)[:, None]
        upper = sla.blas.dsyrk(1.0, B.T, trans=0)  # BᵀB, upper triangle, half a GEMM's work
        return np.triu(upper) + np.triu(upper, 1).T

    def dot(self, z: np.ndarray) -> np.ndarray:
        return self.A @ z

    def tdot(self, v: np.ndarray) -> np.ndarray:
        return self.A.T @ v


class _Iterate:
    """The primal-dual point: ``x``; per sample ``ξ, s`` and multipliers ``α, β``; ``ν`` of ``u ≥ 0``;
    ``ζ`` of the cone."""

    __slots__ = ("alpha", "beta", "gta", "gx", "nu", "s", "x", "xi", "zeta")

    def copy(self) -> _Iterate:
        out = _Iterate()
        for name in self.__slots__:
            value = getattr(self, name)
            setattr(out, name, None if value is None else value.copy())
        return out


#: iterations between exact recomputations of ``G x`` and ``Gᵀα`` (updated along the steps in between)
_RESYNC = 5
#: certify once ``degree·μ`` is below this multiple of the tolerance times the objective
_CERTIFY_FROM = 10.0


def _cholesky(K: np.ndarray):
    """Cholesky factor of the symmetric ``K``, with a growing diagonal shift when rounding breaks it."""
    shift = 0.0
    scale = max(float(np.max(np.abs(np.diag(K)))), 1e-300)
    for _ in range(8):
        try:
            return sla.cho_factor(K if shift == 0.0 else K + shift * np.eye(K.shape[0]), lower=True,
                                  check_finite=False)
        except sla.LinAlgError:
            shift = scale * (1e-14 if shift == 0.0 else 100.0 * shift / scale)
    raise np.linalg.LinAlgError("the interior point's normal matrix is not positive definite")


def _step_to_boundary(v: np.ndarray, dv: np.ndarray) -> float:
    """Largest ``a`` with ``v + a dv ≥ 0`` (∞ when ``dv ≥ 0``)."""
    neg = dv < 0
    if not np.any(neg):
        return math.inf
    return float(np.min(-v[neg] / dv[neg]))


class _Problem:
    """The conic QP's data and its Newton system at one iterate."""

    def __init__(self, design, layout, c, lam, lam1, mu_b, mode, squared):
        self.design, self.lay, self.c = design, layout, c
        self.squared = squared
        k, m = layout.k, layout.m
        self.qdiag = np.zeros(k)
        self.qdiag[:m] = lam
        if mode == "l2":
            self.qdiag[layout.b] = mu_b
        self.f = np.zeros(k)
        self.f[:m] = lam1
        self.degree = c.size * (1 if squared else 2) + m + (1 if layout.cone else 0)

    # products with G = A Tᵀ
    def g(self, x):
        return self.design.dot(self.lay.T.T @ x)

    def gt(self, v):
        return self.lay.T @ self.design.tdot(v)

    def residuals(self, it: _Iterate):
        """``r_x`` (stationarity in x), ``r_ξ`` (in ξ) and ``r_s`` (the sample constraints)."""
        lay = self.lay
        rx = self.qdiag * it.x + self.f - it.gta
        rx[:lay.m] -= it.nu
        if lay.cone:
            rx -= lay.H.T @ it.zeta
        if self.squared:
            rxi = 2.0 * self.c * it.xi - it.alpha
        else:
            rxi = self.c - it.alpha - it.beta
        rs = it.gx + it.xi - 1.0 - it.s
        return rx, rxi, rs

    def value(self, it: _Iterate) -> float:
        """The conic QP's objective at the iterate (``Σ c_i ℓ(ξ_i)`` from the ξ variables)."""
        x = it.x
        loss = it.xi * it.xi if self.squared else it.xi
        return 0.5 * float(self.qdiag @ (x * x)) + float(self.f @ x) + float(self.c @ loss)

    def gap_measure(self, it: _Iterate) -> float:
        """``(sᵀα + ξᵀβ + uᵀν + qᵀζ)/degree``."""
        total = float(it.s @ it.alpha) + float(it.x[:self.lay.m] @ it.nu)
        if not self.squared:
            total += float(it.xi @ it.beta)
        if self.lay.cone:
            total += float((self.lay.H @ it.x) @ it.zeta)
        return total / self.degree


class _Newton:
    """One factored Newton system (shared by the predictor and the corrector)."""

    def __init__(self, prob: _Problem, it: _Iterate) -> None:
        self.prob, self.it = prob, it
        lay, c = prob.lay, prob.c
        if prob.squared:
            self.e = 1.0 / (2.0 * c) + it.s / it.alpha
        else:
            self.e = it.xi / it.beta + it.s / it.alpha
        C = prob.design.gram(1.0 / self.e)
        self.GG = lay.T @ C @ lay.T.T  # Gᵀ diag(1/e) G
        K = self.GG.copy()
        K[np.diag_indices(lay.k)] += prob.qdiag
        K[np.arange(lay.m), np.arange(lay.m)] += it.nu / it.x[:lay.m]
        self.W = None
        if lay.cone:
            self.q = lay.H @ it.x
            self.W = soc.NTScaling(self.q, it.zeta)
            K += lay.H.T @ self.W.inverse_squared() @ lay.H
        self.factor = _cholesky(K)

    def direction(self, res, rhs_s, rhs_xi, rhs_u, rhs_c) -> _Iterate:
        """Solve the linearized KKT system for the complementarity right-hand sides ``rhs_*``.

        ``rhs_s = σμ − sα − (correction)`` and alike; ``rhs_c`` is the cone's in the scaled form
        ``λ ∘ (W⁻¹Δq + WΔζ) = rhs_c``.
        """
        prob, it, lay = self.prob, self.it, self.prob.lay
        rx, rxi, rs = res
        if prob.squared:
            rho = -rs + rxi / (2.0 * prob.c) + rhs_s / it.alpha
        else:
            rho = -rs - (rhs_xi - it.xi * rxi) / it.beta + rhs_s / it.alpha
        g_rho = prob.gt(rho / self.e)
        rhs = -rx + g_rho
        rhs[:lay.m] += rhs_u / it.x[:lay.m]
        kappa = None
        if lay.cone:
            kappa = soc.jordan_solve(self.W.lam, rhs_c)
            rhs += lay.H.T @ self.W.apply_inverse(kappa)
        d = _Iterate()
        d.x = sla.cho_solve(self.factor, rhs, check_finite=False)
        d.gx = prob.g(d.x)
        d.alpha = (rho - d.gx) / self.e
        d.gta = g_rho - self.GG @ d.x  # Gᵀ Δα without another pass over the data
        d.s = (rhs_s - it.s * d.alpha) / it.alpha
        if prob.squared:
            d.xi = (d.alpha - rxi) / (2.0 * prob.c)
            d.beta = None
        else:
            d.beta = rxi - d.alpha
            d.xi = (rhs_xi - it.xi * rxi + it.xi * d.alpha) / it.beta
        d.nu = (rhs_u - it.nu * d.x[:lay.m]) / it.x[:lay.m]
        d.zeta = None
        if lay.cone:
            d.zeta = self.W.apply_inverse(kappa - self.W.apply_inverse(lay.H @ d.x))
        return d

    def max_step(self, d: _Iterate) -> float:
        it, lay = self.it, self.prob.lay
        steps = [_step_to_boundary(it.s, d.s), _step_to_boundary(it.alpha, d.alpha),
                 _step_to_boundary(it.x[:lay.m], d.x[:lay.m]), _step_to_boundary(it.nu, d.nu)]
        if not self.prob.squared:
            steps += [_step_to_boundary(it.xi, d.xi), _step_to_boundary(it.beta, d.beta)]
        if lay.cone:
            steps += [soc.max_step(self.q, lay.H @ d.x), soc.max_step(it.zeta, d.zeta)]
        return min(steps)


def _advance(it: _Iterate, d: _Iterate, a: float) -> _Iterate:
    out = it.copy()
    for name in _Iterate.__slots__:
        step = getattr(d, name)
        if step is not None:
            getattr(out, name).__iadd__(a * step)
    return out


def _start(prob: _Problem, layout: _Layout, c: np.ndarray) -> _Iterate:
    """A strictly interior start: ``u = 1/√m``-scaled, slacks and multipliers balanced at ``μ₀``."""
    it = _Iterate()
    k, m = layout.k, layout.m
    x = np.zeros(k)
    x[:m] = 1.0 / math.sqrt(max(m, 1))
    if layout.cone:
        x[layout.t] = float(np.linalg.norm(layout.H[1:, :m] @ x[:m])) + 1.0
    it.x = x
    gx = it.gx = prob.g(x)
    it.xi = np.maximum(1.0 - gx, 0.0) + 1.0
    it.s = gx + it.xi - 1.0
    if prob.squared:
        it.alpha = c.copy()
        it.beta = None
    else:
        it.alpha = 0.5 * c
        it.beta = 0.5 * c
    it.gta = prob.gt(it.alpha)
    mu0 = float(it.s @ it.alpha) / c.size
    it.nu = np.full(m, mu0) / x[:m]
    it.zeta = None
    if layout.cone:
        q = layout.H @ x
        it.zeta = soc.identity(q.size) * (mu0 / q[0])
    return it


def _check(lam, lam1, max_iter) -> None:
    if not lam > 0:
        raise ValueError(f"l2 must be positive, got {lam!r}")
    if not lam1 >= 0:
        raise ValueError(f"l1 must be non-negative, got {lam1!r}")
    if max_iter < 1:
        raise ValueError(f"max_iter must be a positive integer, got {max_iter!r}")


def feature_ipm_arrays(X, y, c, *, l2, primal, l1=0.0, signs=None, intercept="free", mu=0.0, uncertainty=None,
                       radius=None, squared=False, tol=1e-6, max_iter=100, verbose=False) -> Result:
    """Solve the robust model on plain arrays by the feature-space interior point.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix of shape (n, d)
    y : ndarray of shape (n,)
        Labels −1/+1.
    c : ndarray of shape (n,)
        Loss coefficients ``c_i ≥ 0`` (samples with ``c_i = 0`` do not enter the problem).
    l2, l1 : float
        ``λ2 > 0`` and ``λ1 ≥ 0``.
    primal : callable
        ``primal(w, b, margins) -> P``, the model's objective from its robust margins.
    signs : ndarray of shape (d,), optional
        +1/0/−1 per feature.
    intercept : {"free", "none", "l2"}
        ``"l2"`` adds ``(μ/2) b²`` (``mu > 0``).
    uncertainty : Box, Ball (p ∈ {2, ∞}) or Ellipsoid, optional
        The shared unit set (pass the radii as ``radius``).
    radius : float or ndarray of shape (n,)
        ``r_i ≥ 0``.
    squared : bool
        Squared hinge instead of hinge.
    tol : float
        Stop when the certified relative duality gap is at most ``tol``.
    max_iter : int
        Interior-point iterations.
    verbose : bool
        Print one line per iteration.

    Returns
    -------
    Result
        ``gap`` the certified absolute gap; ``extra["margin_multipliers"]`` the multipliers ``α`` of the
        robust margin constraints (``c_i`` times ``robust-dcd``'s dual variables).
    """
    from .robust_dcd import _arrays  # the same validation and set description as robust-dcd

    t_start = time.perf_counter()
    lam, lam1, tol, max_iter = float(l2), float(l1), float(tol), int(max_iter)
    _check(lam, lam1, max_iter)
    X, y, c, r, spec, sg, _, mode, mu, _ = _arrays(X, y, c, lam, signs, intercept, mu, uncertainty, radius, None)
    n, d = X.shape
    robust = uncertainty is not None and bool(np.any(r > 0))
    if spec.kind == kern.KIND_LINF and robust:
        raise ValueError("feature-ipm solves Ball(p) for p ∈ {2, ∞} only; robust-dcd solves p = 1")
    keep = np.flatnonzero(c > 0)
    if keep.size == 0:
        raise ValueError("every loss coefficient is zero: sample_weight leaves no sample")
    layout = _Layout(d, sg, spec, mode, robust)
    Xk = X[keep]
    design = _Design(Xk, y[keep], r[keep])
    prob = _Problem(design, layout, c[keep], lam, lam1, mu, mode, squared)

    ops = _Products(X)
    work = _State(d)

    def certificate(it: _Iterate) -> _Certificate:
        alpha_full = np.zeros(n)
        alpha_full[keep] = it.alpha / c[keep]
        b_iter = float(it.x[layout.b]) if layout.b is not None else 0.0
        cert = _certify(ops, spec, y, c, r, alpha_full, lam, lam1, sg, squared, mode, mu, b_iter, work, 1e-13,
                        primal)
        w = layout.weights(it.x)
        sigma = spec.support(w) if robust else 0.0
        marg = y * (ops.matvec(w) + b_iter) - r * sigma
        P_iter = primal(w, b_iter, marg)
        if P_iter < cert.P:
            cert = _Certificate(P_iter, cert.D, w, b_iter)
        return cert

    it = _start(prob, layout, prob.c)
    hist = History()
    t_solve0 = time.perf_counter()
    hist.restart()
    best = None
    status, message = "max_iter", ""
    iteration = 0
    while iteration < max_iter:
        res = prob.residuals(it)
        mu_now = prob.gap_measure(it)
        try:
            newton = _Newton(prob, it)
        except np.linalg.LinAlgError as err:
            status, message = "numerical_error", str(err)
            break
        # predictor (affine scaling)
        cone_rhs = None if not layout.cone else -soc.jordan(newton.W.lam, newton.W.lam)
        aff = newton.direction(res, -it.s * it.alpha, None if squared else -it.xi * it.beta,
                               -it.x[:layout.m] * it.nu, cone_rhs)
        a_aff = min(1.0, newton.max_step(aff))
        trial = _advance(it, aff, a_aff)
        sigma = (prob.gap_measure(trial) / mu_now) ** 3 if mu_now > 0 else 0.0
        target = sigma * mu_now
        # corrector
        rhs_s = target - it.s * it.alpha - aff.s * aff.alpha
        rhs_xi = None if squared else target - it.xi * it.beta - aff.xi * aff.beta
        rhs_u = target - it.x[:layout.m] * it.nu - aff.x[:layout.m] * aff.nu
        if layout.cone:
            W = newton.W
            corr = soc.jordan(W.apply_inverse(layout.H @ aff.x), W.apply(aff.zeta))
            cone_rhs = -soc.jordan(W.lam, W.lam) + target * soc.identity(W.lam.size) - corr
        step = newton.direction(res, rhs_s, rhs_xi, rhs_u, cone_rhs)
        a = min(1.0, 0.99 * newton.max_step(step))
        it = _advance(it, step, a)
        iteration += 1
        if iteration % _RESYNC == 0:
            it.gx, it.gta = prob.g(it.x), prob.gt(it.alpha)
        mu_new = prob.gap_measure(it)
        # certify (O(nd)) once the iterate's own gap, degree·μ, is near the tolerance, and at the last iteration
        if mu_new * prob.degree <= _CERTIFY_FROM * tol * abs(prob.value(it)) or iteration == max_iter:
            cert = certificate(it)
            if best is None:
                best = cert
            else:
                top = cert if cert.P <= best.P else best
                best = _Certificate(top.P, max(cert.D, best.D), top.w, top.b)
        nan = math.nan
        hist.record(iteration, nan if best is None else best.P, nan if best is None else best.gap,
                    dual=nan if best is None else best.D, rel_gap=nan if best is None else best.rel_gap, step=a,
                    mu=mu_new)
        if verbose:
            shown = "not yet certified" if best is None else (f"P={best.P:.10g}  D={best.D:.10g}  "
                                                              f"rel.gap={best.rel_gap:.3e}")
            print(f"feature-ipm it {iteration:3d}  {shown}  step={a:.3f}  mu={mu_new:.2e}")
        if best is not None and best.rel_gap <= tol:
            status = "optimal"
            break
        if a < 1e-10:
            status, message = "stalled", f"step {a:.1e}: the interior point cannot move"
            break
    if best is None:
        best = certificate(it)
    if not message:
        message = (f"relative duality gap {best.rel_gap:.3g} after {iteration} interior-point iterations"
                   + ("" if status == "optimal" else f" (tolerance {tol:g} not reached)"))
    alpha_full = np.zeros(n)
    alpha_full[keep] = it.alpha
    return Result(
        w=best.w, b=float(best.b) if mode != "none" else 0.0, status=status, gap=best.gap, iterations=iteration,
        history=hist.arrays(), time_compile=t_solve0 - t_start, time_solve=time.perf_counter() - t_solve0,
        message=message, dual_value=best.D,
        extra={"dual_objective": best.D, "primal_objective": best.P, "rel_gap": best.rel_gap,
               "margin_multipliers": alpha_full, "dual_alpha": np.divide(alpha_full, c, out=np.zeros(n),
                                                                         where=c > 0)},
    )


def solve_feature_ipm(model, *, tol=None, max_iter=None, verbose=False, random_state=None) -> Result:
    """Solve a robust (or nominal) hinge / squared-hinge model by the feature-space interior point.

    Thin adapter from the normalized :class:`~robustsvm.model.Model` to :func:`feature_ipm_arrays`.

    Parameters
    ----------
    model : Model
        A normalized model inside :data:`NEEDS`.
    tol : float, default 1e-6
        Stop when the certified relative duality gap ``(P − D)/|P|`` is at most ``tol``.
    max_iter : int, default 100
        Interior-point iterations.
    verbose : bool
    random_state : ignored
        The method is deterministic.

    Returns
    -------
    Result
    """
    layout = model.layout
    V = None if layout is None else layout.sets[0]
    radius = None if layout is None else layout.radius
    mode = {"ridge": "l2"}.get(model.intercept.mode, model.intercept.mode)
    return feature_ipm_arrays(
        model.X, model.y, model.c, l2=model.l2, primal=partial(objective_from_margins, model), l1=model.l1,
        signs=model.signs, intercept=mode, mu=model.intercept.mu, uncertainty=V, radius=radius,
        squared=model.loss.name == "squared_hinge", tol=1e-6 if tol is None else tol,
        max_iter=100 if max_iter is None else max_iter, verbose=verbose)


register(
    Backend(
        name="feature-ipm",
        solve=solve_feature_ipm,
        needs=NEEDS,
        summary="interior point in the feature space, O(n d²) per iteration: hinge/squared hinge + L2 [+ L1], "
                "signs, shared Box, Ball (p = 2, ∞) or Ellipsoid set, any intercept; certified by the duality gap",
        options=frozenset(),
        kind="second-order",
        certificate="duality gap P(w, b) − D_u(α) at the interior point's multipliers (absolute)",
    ),
    replace=True,
)

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
with the Nesterov-Todd scaling eliminates the per-sample variables (Δs, Δξ, Δβ, Δα: 4n for the hinge, 3n for
the squared hinge), so each iteration factors one dense ``(dim x)²`` matrix ``K + Σ_i g_i g_iᵀ/e_i`` built from
``Aᵀ diag(1/e) A`` with ``A = [y∘X, r, y]``: ``O(n d²)`` work per iteration and 11–45 iterations (measured) that
depend little on λ, the radii or the conditioning. It is the method of choice when ``d`` is small against
``n`` (and for grids over ill-conditioned models, where the first-order ``robust-dcd`` needs many epochs);
``robust-dcd`` is the method for many features. With fewer samples than features (``n < d``, ``d ≥ 64``, no
ellipsoid) each Newton system is solved by Woodbury through an ``n × n`` matrix instead (:mod:`._ipm_wide`):
``O(n² d + n³)`` per iteration, no ``(d+2)²`` Gram and no ``k × k`` factorization.

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

from .._validation import check_limits
from ..objective import objective_from_margins
from ..uncertainty import check_radius
from . import _second_order_cone as soc
from ._ipm_newton import Batch, Design, Layout, Newton, advance, start
from ._ipm_wide import takes_wide_path
from .dual_ascent import Ascent, DualCertificate, Products, certified_result
from .registry import Backend, History, Result, register
from .shared_set import (
    SharedSetArrays,
    Workspace,
    dual_certificate,
    overflow_result,
    shared_set_needs,
    trivial_certificate,
)

__all__ = ["DEFAULTS", "NEEDS", "solve_feature_ipm", "solve_feature_ipm_many", "wide_path"]

#: the backend solves wide data (fewer live samples than features) through the Woodbury identity
#: (:func:`._ipm_wide.takes_wide_path`); the cost model of ``solver="auto"`` reads this declaration
wide_path = True


#: what feature-ipm solves: robust-dcd's models except the 1-ball
NEEDS = shared_set_needs("feature-ipm", (2.0, math.inf),
                         "); robust-dcd solves p = 1 and the conic backends (clarabel, scs) any p",
                         "the conic backends (clarabel, scs) solve other sets",
                         no_bounds_hint="its split w = Mu, u ≥ 0 carries the signs only (a finite bound needs an "
                                        "upper bound on each part, which its Newton system has no slack for); "
                                        "robust-dcd (Box, Ball(p=2, ∞)) and the conic backends solve bounds")


#: ``tol`` and ``max_iter`` when the caller gives none (declared on the registration)
DEFAULTS = {"tol": 1e-6, "max_iter": 100}
#: iterations between exact recomputations of ``G x`` and ``Gᵀα`` (updated along the steps in between)
_RESYNC = 5
#: certify a point once its ``degree·μ`` is below this multiple of the tolerance times its objective
_CERTIFY_FROM = 3.0
#: a Gram matrix in single precision while every point's ``degree·μ`` exceeds this multiple of tol·|objective|
#: (the residuals stay in double precision, so the single-precision steps converge as far as the certificate
#: needs on well-scaled data; measured in ``benchmarks/results/robust.md``)
_COARSE = 1.0
#: single precision stops when, at a recomputation of Gᵀα, the drift of the carried product exceeds this
#: fraction of the true stationarity residual (the rounding then costs progress)
_DRIFT = 0.5
#: fraction of the step to the boundary taken
_STEP = 0.99



def _check(lam2: np.ndarray, lam1: np.ndarray, rscale: np.ndarray, max_iter: int) -> None:
    if not np.all(lam2 > 0):
        raise ValueError(f"l2 must be positive, got {lam2[~(lam2 > 0)][0]!r}")
    if not np.all(lam1 >= 0):
        raise ValueError(f"l1 must be non-negative, got {lam1[~(lam1 >= 0)][0]!r}")
    check_radius(rscale, name="radius")
    check_limits(max_iter=max_iter)


class _Outcome:
    """What the batch solve found for one point: its best certificate, status and multipliers."""

    __slots__ = ("alpha", "cert", "iterations", "message", "rounding", "status")

    def __init__(self) -> None:
        self.cert, self.status, self.message, self.iterations, self.alpha = None, "max_iter", "", 0, None
        #: the gap ``P − D`` of the last certificate at rounded multipliers over the iterate's ``degree·μ`` then
        #: (None before the first): the certified gaps that follow are predicted to shrink with ``degree·μ``
        self.rounding = None

    def cert_gap(self) -> float:
        """The relative gap of the best certificate so far (∞ before the first)."""
        return math.inf if self.cert is None else self.cert.rel_gap

    def take(self, cert: DualCertificate, alpha: np.ndarray) -> None:
        """Keep the better primal point and the larger dual value of ``cert`` and the best so far."""
        self.cert = cert if self.cert is None else self.cert.merge(cert)
        self.alpha = alpha


class _Precision:
    """When a batch forms its Gram matrices in single precision: while every point's ``degree·μ`` exceeds
    :data:`_COARSE` ``· tol · |objective|``, and until the product ``Gᵀα`` carried along single-precision steps has
    drifted from the recomputed one by more than :data:`_DRIFT` times the stationarity residual ``r_x`` (the
    single-precision normal matrix then steers the steps off); from then on in double precision."""

    def __init__(self, tol: float) -> None:
        self.tol, self.precise, self.switched, self.used = tol, False, False, False

    def coarse(self, batch: Batch, it, mu: np.ndarray) -> bool:
        """Single precision for this iteration? (``switched``: this is the first double-precision one.)"""
        coarse = not self.precise and bool(np.all(mu * batch.degree > _COARSE * self.tol * np.abs(batch.value(it))))
        self.switched = not coarse and not self.precise
        self.precise |= not coarse
        self.used |= coarse
        return coarse

    def resync(self, batch: Batch, it) -> None:
        """Recompute ``Gx`` and ``Gᵀα`` from the data; judge the drift of the carried ``Gᵀα``."""
        carried = it.gta
        it.gx, it.gta = batch.g_gt(it.x, it.alpha)
        if self.used and not self.precise:
            rx = batch.residuals(it)[0]
            drift = np.linalg.norm(it.gta - carried, axis=1)
            self.precise = bool(np.any(drift > _DRIFT * np.linalg.norm(rx, axis=1)))
        self.used = False


def _solve_batch(arrays: SharedSetArrays, lam2, lam1, rscale, primals, tol, max_iter, verbose,
                 hist: History | None):
    """Run the interior point on every point of the batch; each stops at its own certified gap.

    ``primals[p](w, b, margins)`` is point ``p``'s objective; the radii of point ``p`` are ``rscale_p · r``.
    A point whose ``w = 0`` is already certified (:func:`.shared_set.trivial_certificate`) does not iterate.
    """
    X, y, c, r = arrays.X, arrays.y, arrays.c, arrays.r
    n, d = X.shape
    robust = arrays.V is not None and bool(np.any(r > 0)) and bool(np.any(rscale > 0))
    keep = np.flatnonzero(c > 0)
    if keep.size == 0:
        raise ValueError("every loss coefficient is zero: sample_weight leaves no sample")
    mode, squared = arrays.intercept.mode, arrays.squared
    wide = takes_wide_path(keep.size, d, arrays.description.cone, robust)
    layout = Layout(d, arrays.sg, arrays.description, mode, robust, sparse=wide)
    design = Design(X, y, r) if keep.size == n else Design(X[keep], y[keep], r[keep])
    full = Batch(design, layout, c[keep], lam2, lam1, rscale, arrays.intercept.mu, mode, squared, wide=wide)
    ops = Products(X)
    work = Workspace(d)
    P = lam2.size
    outcomes = [_Outcome() for _ in range(P)]
    points = [arrays.point(l2=lam2[p], l1=lam1[p], r=rscale[p] * r, primal=primals[p]) for p in range(P)]

    n_cert = [0]

    def certify(p: int, x: np.ndarray, alpha: np.ndarray) -> float:
        """Certify point ``p`` at ``x`` and the multipliers ``alpha``; the gap ``P − D`` of this certificate."""
        n_cert[0] += 1
        alpha_full = np.zeros(n)
        alpha_full[keep] = alpha / c[keep]
        b_iter = float(x[layout.b]) if layout.b is not None else 0.0
        cert = dual_certificate(points[p], ops, alpha_full, work, b_hint=b_iter, points=[layout.weights(x)])
        outcomes[p].take(cert, alpha)
        return cert.gap

    trivial = np.zeros(P, dtype=bool)
    for p in range(P):
        cert, alpha = trivial_certificate(points[p], ops, work)
        if cert.rel_gap <= tol:
            outcomes[p].take(cert, (c * alpha)[keep])
            outcomes[p].status, trivial[p] = "optimal", True
    it_all = start(full)
    active = np.flatnonzero(~trivial)
    iteration = 0
    precision = _Precision(tol)
    while active.size and iteration < max_iter:
        batch = full.take(active) if active.size < P else full
        it = it_all.take(active) if active.size < P else it_all
        res = batch.residuals(it)
        mu_now = batch.gap_measure(it)
        coarse = precision.coarse(batch, it, mu_now)
        if precision.switched and iteration % _RESYNC:  # the first double-precision step starts from exact products
            it.gx, it.gta = batch.g_gt(it.x, it.alpha)
            res = batch.residuals(it)
        newton = Newton(batch, it, coarse=coarse, res=res)
        for j in np.flatnonzero(newton.failed):  # no step from here: the last iterate is certified as it is
            p = active[j]
            certify(p, it.x[j], it.alpha[j])
            outcomes[p].iterations = iteration
            if outcomes[p].cert.rel_gap <= tol:
                outcomes[p].status = "optimal"
            else:
                outcomes[p].status = "numerical_error"
                outcomes[p].message = (f"no Newton step after {iteration} iterations: {newton.why[j]}; relative "
                                       f"duality gap {outcomes[p].cert.rel_gap:.3g}")
        # predictor (affine scaling)
        m = layout.m
        cone_rhs = None if not layout.cone else -soc.jordan(newton.W.lam, newton.W.lam)
        aff = newton.direction(res, -it.s * it.alpha, None if squared else -it.xi * it.beta, -it.x[:, :m] * it.nu,
                               cone_rhs, predictor=True)
        a_aff = np.minimum(1.0, newton.max_step(aff))
        with np.errstate(divide="ignore", invalid="ignore"):
            sigma = np.where(mu_now > 0, (batch.gap_after(it, aff, a_aff) / mu_now) ** 3, 0.0)
        target = (sigma * mu_now)[:, None]
        # corrector
        rhs_s = target - it.s * it.alpha - aff.s * aff.alpha
        rhs_xi = None if squared else target - it.xi * it.beta - aff.xi * aff.beta
        rhs_u = target - it.x[:, :m] * it.nu - aff.x[:, :m] * aff.nu
        if layout.cone:
            W = newton.W
            corr = soc.jordan(W.apply_inverse(aff.x @ layout.H.T), W.apply(aff.zeta))
            cone_rhs = -soc.jordan(W.lam, W.lam) + target * soc.identity(*W.lam.shape) - corr
        step = newton.direction(res, rhs_s, rhs_xi, rhs_u, cone_rhs)
        a = np.minimum(1.0, _STEP * newton.max_step(step))
        if np.any(newton.failed):
            a[newton.failed] = 0.0
            step.zero(newton.failed)
        it = advance(it, step, a)
        iteration += 1
        if iteration % _RESYNC == 0:
            precision.resync(batch, it)
        mu_new = batch.gap_measure(it)
        done = _certify_due(batch, it, active, outcomes, certify, mu_new, tol, iteration, newton.failed.copy(),
                            last=iteration == max_iter)
        stalled = (a < 1e-10) & ~done
        for j in np.flatnonzero(stalled):
            p = active[j]
            outcomes[p].status = "stalled"
            outcomes[p].message = f"step {a[j]:.1e}: the interior point cannot move"
            outcomes[p].iterations = iteration
            done[j] = True
        if hist is not None:
            cert = outcomes[0].cert
            nan = math.nan
            hist.record(iteration, nan if cert is None else cert.P, nan if cert is None else cert.gap,
                        dual=nan if cert is None else cert.D, rel_gap=nan if cert is None else cert.rel_gap,
                        step=float(a[0]), mu=float(mu_new[0]))
        if verbose:
            print(f"feature-ipm it {iteration:3d}  points left {int(np.sum(~done))}/{P}  "
                  f"largest mu {float(mu_new.max()):.2e}  smallest step {float(a.min()):.3f}")
        it_all.put(active, it)
        for j in np.flatnonzero(done):
            if outcomes[active[j]].alpha is None:
                outcomes[active[j]].alpha = it.alpha[j]
        active = active[~done]
    _finish(outcomes, it_all, iteration, tol, certify)
    counts = {**design.counts, "certificates": n_cert[0], "points": P}
    return outcomes, keep, counts


def _certify_due(batch: Batch, it, active: np.ndarray, outcomes: list[_Outcome], certify, mu: np.ndarray, tol: float,
                 iteration: int, done: np.ndarray, *, last: bool) -> np.ndarray:
    """Certify (O(nd) per point) the active points whose gap is near the tolerance (all at the ``last`` iteration);
    ``done`` marks, in addition to the given ones, those that met ``tol``.

    First at the multipliers rounded to their bounds (:meth:`.Batch.purified`), once the predicted certified gap
    ``P − D`` is at most ``_CERTIFY_FROM · tol · |objective|``: before their first certificate the complementarity
    the rounding leaves (:meth:`.Batch.rounding_gap`), after it that certificate's gap shrunk in proportion to
    ``degree·μ``. Then at the iterate's own multipliers once ``degree·μ`` is near the tolerance, unless the
    rounded ones gave a gap below ``degree·μ`` at this iteration.
    """
    left = batch.rounding_gap(it)
    near = _CERTIFY_FROM * tol * np.abs(batch.value(it))
    measure = mu * batch.degree
    raw = (measure <= near) | last
    ratio = [outcomes[p].rounding for p in active]
    predicted = np.array([left[j] if ratio[j] is None else ratio[j] * measure[j] for j in range(active.size)])
    for j in np.flatnonzero(((predicted <= near) | raw) & ~done):
        p = active[j]
        gap = certify(p, it.x[j], batch.purified(it, j)) if predicted[j] <= near[j] else math.inf
        if gap < math.inf:
            outcomes[p].rounding = gap / max(measure[j], np.finfo(float).tiny)
        if raw[j] and outcomes[p].cert_gap() > tol and gap > measure[j]:  # the iterate's own may do better
            certify(p, it.x[j], it.alpha[j])
        outcomes[p].iterations = iteration
        if outcomes[p].cert.rel_gap <= tol:
            outcomes[p].status = "optimal"
            done[j] = True
    return done


def _finish(outcomes: list[_Outcome], it_all, iteration: int, tol: float, certify) -> None:
    """Certify the points the loop left uncertified and write every point's status message."""
    for p, out in enumerate(outcomes):
        if out.cert is None:
            certify(p, it_all.x[p], it_all.alpha[p])
            out.iterations = iteration
        if out.alpha is None:
            out.alpha = it_all.alpha[p]
        if out.status != "optimal" and out.cert.rel_gap <= tol:  # a certificate met the tolerance: that is optimal
            out.status, out.message = "optimal", ""
        if not out.message:
            out.message = (f"relative duality gap {out.cert.rel_gap:.3g} after {out.iterations} interior-point "
                           f"iterations" + ("" if out.status == "optimal" else f" (tolerance {tol:g} not reached)"))


def _result(out: _Outcome, keep: np.ndarray, arrays: SharedSetArrays, hist: History, t_start: float,
            t_solve0: float, counts: dict) -> Result:
    n, c = arrays.c.size, arrays.c
    alpha_full = np.zeros(n)
    alpha_full[keep] = out.alpha
    run = Ascent(out.cert, out.status, out.iterations, hist, 0.0, t_solve0)
    return certified_result(run, tol=math.nan, intercept=arrays.intercept, t_start=t_start, message=out.message,
                            multipliers=alpha_full, dual_alpha=np.divide(alpha_full, c, out=np.zeros(n), where=c > 0),
                            extra={"ipm_counts": counts})


def _solve_arrays(arrays: SharedSetArrays, *, tol: float, max_iter: int, verbose: bool, t_start: float) -> Result:
    """One point: :func:`_solve_batch` on a batch of one."""
    if arrays.description.cone == "none" and arrays.robust:
        raise ValueError("feature-ipm solves Ball(p) for p ∈ {2, ∞} only; robust-dcd solves p = 1")
    if arrays.overflow():
        return overflow_result(arrays, t_start)
    hist = History()
    t_solve0 = time.perf_counter()
    hist.restart()
    outcomes, keep, counts = _solve_batch(arrays, np.array([arrays.l2]), np.array([arrays.l1]), np.ones(1),
                                          [arrays.primal], tol, max_iter, verbose, hist)
    return _result(outcomes[0], keep, arrays, hist, t_start, t_solve0, {**counts, "iterations": outcomes[0].iterations})


def solve_feature_ipm_many(model, values, *, tol=DEFAULTS["tol"], max_iter=DEFAULTS["max_iter"],
                           verbose=False, random_state=None):
    """Solve ``model`` at many values of ``l2``, ``l1`` and ``radius`` at once (one batched interior point).

    Every point shares the data, so each iteration forms all the normal matrices from one pass of batched
    products: a grid over the penalty and the radius costs a few single solves.

    Parameters
    ----------
    model : Model
        A normalized model inside :data:`NEEDS`.
    values : sequence of dict
        Per point, any of ``"l2"``, ``"l1"`` and ``"radius"`` (a scalar radius for every sample); a missing key
        keeps the model's value.
    tol, max_iter, verbose, random_state
        As for :func:`solve_feature_ipm`.

    Returns
    -------
    list of Result
        One per point, in order; each certified by its own duality gap.
    """
    t_start = time.perf_counter()
    P = len(values)
    for v in values:
        unknown = set(v) - {"l2", "l1", "radius"}
        if unknown:
            raise ValueError(f"a batched feature-ipm solve varies l2, l1 and radius only, not {sorted(unknown)}")
    models = [model.with_values(l2=v.get("l2"), l1=v.get("l1"), radius=v.get("radius")) for v in values]
    lam2 = np.array([m.l2 for m in models], dtype=np.float64)
    lam1 = np.array([m.l1 for m in models], dtype=np.float64)
    arrays = SharedSetArrays.from_model(model)
    V = arrays.V
    if model.layout is None:
        r, rscale = np.zeros(model.n), np.zeros(P)
    else:
        r = np.ones(model.n)
        radii = [np.broadcast_to(m.layout.radius, (model.n,)) for m in models]
        if all(np.all(ri == ri[0]) for ri in radii):
            rscale = np.array([float(ri[0]) for ri in radii])
        else:  # per-sample radii that the points scale alike: keep the model's vector
            r, rscale = np.asarray(model.layout.radius, dtype=np.float64), np.ones(P)
            if any(not np.array_equal(ri, r) for ri in radii):
                raise ValueError("a batched feature-ipm solve needs one radius vector up to a scale")
    max_iter = int(max_iter)
    tol = float(tol)
    _check(lam2, lam1, rscale, max_iter)
    arrays = arrays.point(l2=arrays.l2, l1=arrays.l1, r=np.ascontiguousarray(r, dtype=np.float64),
                          primal=arrays.primal)
    primals = [partial(objective_from_margins, m) for m in models]
    if arrays.overflow():
        return [overflow_result(arrays, t_start) for _ in range(P)]
    results: list[Result | None] = [None] * P
    # points without uncertainty (radius 0) form their own batch: they have no cone
    nominal = rscale <= 0 if V is not None else np.ones(P, dtype=bool)
    for group in (np.flatnonzero(nominal), np.flatnonzero(~nominal)):
        if group.size == 0:
            continue
        t_solve0 = time.perf_counter()
        outcomes, keep, counts = _solve_batch(arrays, lam2[group], lam1[group], rscale[group],
                                              [primals[p] for p in group], tol, max_iter, verbose, None)
        for p, out in zip(group, outcomes, strict=True):
            results[p] = _result(out, keep, arrays, History(), t_start, t_solve0,
                                 {**counts, "iterations": out.iterations})
    return results


def solve_feature_ipm(model, *, tol=DEFAULTS["tol"], max_iter=DEFAULTS["max_iter"],
                      verbose=False, random_state=None) -> Result:
    """Solve a robust (or nominal) hinge / squared-hinge model by the feature-space interior point.

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
    t_start = time.perf_counter()
    max_iter = int(max_iter)
    arrays = SharedSetArrays.from_model(model)
    _check(np.array([arrays.l2]), np.array([arrays.l1]), np.ones(1), max_iter)
    return _solve_arrays(arrays, tol=float(tol), max_iter=max_iter, verbose=verbose,
                         t_start=t_start)


register(
    Backend(
        name="feature-ipm",
        solve=solve_feature_ipm,
        needs=NEEDS,
        summary="interior point in the feature space, O(n d²) per iteration (O(n² d) when n < d): hinge/squared "
                "hinge + L2 [+ L1], signs, shared Box, Ball (p = 2, ∞) or Ellipsoid set, any intercept; certified by "
                "the duality gap",
        options=frozenset(),
        kind="second-order",
        solve_many=solve_feature_ipm_many,
        certificate="duality gap P(w, b) − D_u(α) at the interior point's multipliers (absolute)",
        defaults=DEFAULTS,
    ),
    replace=True,
)

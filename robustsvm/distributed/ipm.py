"""``dask-ipm``: the feature-space interior point of ``feature-ipm`` on data partitioned over a Dask cluster.

The model and the algorithm are ``feature-ipm``'s (:mod:`robustsvm.backends.feature_ipm`, the derivation in
``docs/derivations/feature_ipm.md``): a Mehrotra predictor-corrector on the conic QP in ``x = (u, [t], [b])``
whose per-sample variables are eliminated, so each iteration factors the ``k × k`` matrix
``K = Q + Tᵀ(Aᵀ diag(1/e) A)T + diag(ν/u) + Hᵀ W⁻² H`` with ``A = [y∘X, r, y]``. Here the rows and their
variables stay on the workers (:mod:`._ipm_rows`); the client holds ``x``, ``ν``, ``ζ`` and ``Gᵀα`` and per
iteration runs two rounds, three when the step it tries is refused:

1. *Newton*: each partition takes the last step, returns the upper triangle of its ``Aᵀ diag(1/e) A``
   (``(d+2)(d+3)/2`` numbers, in single precision while the gap is far) and ``Aᵀ(ρ/e)``; the client factors
   ``K`` and solves the predictor;
2. *predictor*: each partition forms its part of the affine step and returns its largest step, three
   coefficients of the gap measure along it and two vectors ``Aᵀ(ρ₀/e)``, ``Aᵀ(ρ₁/e)``; the client picks the
   centering ``σ`` and solves the corrector;
3. *corrector and the next Newton system*: each partition forms the combined step and returns its largest
   step ``a_k``; when the step ``a_try`` the client sends is at most ``0.99 a_k`` it also takes it and forms
   the next round 1 in the same call. The client keeps ``a_try`` when every partition (and its own variables)
   took it; else it takes ``min(1, 0.99 min_k a_k)`` and runs round 1 on its own.

Certificate (in those rounds, once the interior point's own gap ``degree·μ`` is near the tolerance): the
Newton round's partitions also return the class images ``Σ c α̃ y x`` and the scalars of the dual point
``α̃ = clip(α/c)``; the client builds the dual value ``D_u(α̃)`` of
:func:`robustsvm.backends.shared_set.dual_certificate` (the free intercept's class balance, the saddle point
``u`` of the set) and two primal candidates, ``w = M u`` of the iterate and ``w(α̃)``, whose objectives the
partitions sum in the predictor's round (:func:`.model.margin_terms_many`). The fit stops when that relative
gap is at most ``tol``, else at ``max_iter`` or ``time_limit`` with that status.
"""

from __future__ import annotations

import math
import time

import numpy as np
import scipy.sparse as sp

from ..backends import building_blocks as soc
from ..backends.building_blocks import Batch, Design, Factor, Layout, softclip
from ..backends.dual_ascent import DualCertificate
from ..backends.registry import Backend, History, Result, register
from ..backends.shared_set import CERT_INNER, SharedSetArrays, Workspace, shared_set_needs
from ..backends.threads import one_blas_thread
from ..certificates.duality import class_balance
from ..exceptions import UnsupportedModelError
from ..uncertainty import Ellipsoid
from . import _ipm_rows as rows
from .data import WorkerLostError
from .model import DISTRIBUTED, DistributedModel, as_distributed, check_limits, dask_ipm_refusal, margin_terms_many

__all__ = ["DEFAULTS", "NEEDS", "solve_dask_ipm"]

#: what dask-ipm solves: feature-ipm's models (one shared set, scalar radius on a dask array)
NEEDS = shared_set_needs("dask-ipm", (2.0, math.inf), "); dask-cocoa solves p = 1 on a dask array",
                         "solve other sets in memory with the conic backends")
#: ``tol`` (relative duality gap) and ``max_iter`` when the caller gives none
DEFAULTS = {"tol": 1e-6, "max_iter": 100}
_RESYNC, _CERTIFY_FROM, _STEP = 5, 3.0, 0.99
#: the Newton round brings the certificate's sums along once ``degree·μ`` is below this multiple of tol·|objective|
_CERTIFY_AHEAD = 30.0
#: the step tried in the fused round: this fraction of the affine step times the last corrector's ratio to it
_TRY = 0.97
#: single precision for the Gram matrix while ``degree·μ`` exceeds this multiple of tol·|objective| ...
_COARSE = 30.0
#: ... and until the carried ``Gᵀα`` drifts from the recomputed one by this fraction of the stationarity residual
_DRIFT = 0.5


def _add(parts, key):
    vals = [p[key] for p in parts if p[key] is not None]
    return None if not vals else sum(vals[1:], vals[0].copy() if isinstance(vals[0], np.ndarray) else vals[0])


def _client_arrays(model: DistributedModel) -> SharedSetArrays:
    """The model's set, signs and parameters as :class:`SharedSetArrays` without rows (the client's half)."""
    empty = np.zeros(0)
    return SharedSetArrays(X=np.zeros((0, model.d)), y=empty, c=empty, r=empty, sqn=empty,
                           sg=np.ascontiguousarray(model.signs, dtype=np.int8), l2=model.l2, l1=model.l1,
                           intercept=model.intercept, loss=model.loss,
                           V=model.uncertainty if model.robust else None, primal=None)


class _Run:
    """The client's half of one distributed solve: the layout, the small variables and the certificates."""

    def __init__(self, model: DistributedModel) -> None:
        self.model, self.data = model, model.data.per_worker()  # one block per worker
        self.arrays = _client_arrays(model)
        self.squared = model.loss.name == "squared_hinge"
        robust = model.robust
        mode = model.intercept.mode
        self.lay = Layout(model.d, model.signs, self.arrays.description, mode, robust)
        self.batch = Batch(Design(np.zeros((0, model.d)), np.zeros(0), np.zeros(0)), self.lay, np.zeros(0),
                           np.array([model.l2]), np.array([model.l1]), np.ones(1), model.intercept.mu, mode,
                           self.squared)
        self.radius = model.radius if robust else 0.0
        self.work = Workspace(model.d)
        #: ``HᵀH`` of the cone block, sparse when at most a tenth of its entries are non-zero
        self.hth = None
        if self.lay.cone:
            hth = self.lay.HtH
            self.hth = sp.coo_matrix(hth) if np.count_nonzero(hth) <= 0.1 * hth.size else hth
        self.cert: DualCertificate | None = None
        self.states = None

    # the products with T (the radius scale is 1: the radius is in A's column)
    def tz(self, x: np.ndarray) -> np.ndarray:
        return x @ self.lay.T

    def gt(self, p: np.ndarray) -> np.ndarray:
        return self.lay.T @ p

    def round(self, func, *args) -> list:
        self.states, out = self.data.map_state(func, self.states, *args)
        return out

    # ----------------------------------------------------------------------------------------- certificate
    def certify(self, x: np.ndarray, sums: list | None = None, ahead: bool = False) -> DualCertificate:
        """The certificate of the current multipliers and of ``w = M u`` (two rounds, one when the multipliers'
        sums came with the Newton round); merged into the best."""
        if sums is None:
            sums = self.round(rows.certificate_sums, float(self.model.loss.dual_upper), ahead)
        pending = self.certificate_points(x, sums)
        model = self.model
        return self.certificate(pending, self.data.map(margin_terms_many, pending["points"], model.loss,
                                                       model.c_scale))

    def certificate_points(self, x: np.ndarray, out: list) -> dict:
        """From the partitions' certificate sums: the dual side's numbers and the primal candidates to price
        (``w(α̃)`` and ``w = M u`` of the iterate, at their intercepts)."""
        model, arrays, d = self.model, self.arrays, self.model.d
        images = _add(out, "images")
        m1, m2 = _add(out, "m1"), _add(out, "m2")
        VV = images[:, :d]
        a_pos, a_neg = float(images[0, d]), float(images[1, d])
        s_pos, s_neg = float(images[0, d + 1]), float(images[1, d + 1])
        v, A, S = VV[0] + VV[1], a_pos + a_neg, s_pos + s_neg
        if A > 0:
            self.work.refresh(arrays.set_kernel, arrays.params(rho=0.0), v, A, CERT_INNER)
            w_dual = self.work.state.w.copy()
        else:
            w_dual = softclip(v, model.l1, arrays.sg, 1.0 / model.l2)
        b_iter = float(x[self.lay.b]) if self.lay.b is not None else 0.0
        points = []
        for w in (w_dual, self.lay.weights(x)):
            bs = {"free": [b_iter], "ridge": [model.intercept.from_dual(S), b_iter], "none": [0.0]}
            for b in bs[model.intercept.mode]:
                points.append((w, float(b), model.shifts(w)))
        return {"points": points, "VV": VV, "a": (a_pos, a_neg), "s": (s_pos, s_neg), "S": S, "m1": m1, "m2": m2}

    def certificate(self, pending: dict, sums: list) -> DualCertificate:
        """The certificate from :meth:`certificate_points` and the partitions' prices of its candidates."""
        model, arrays = self.model, self.arrays
        lam, l1, sg = model.l2, model.l1, arrays.sg
        P_best, w_best, b_best = math.inf, None, 0.0
        for j, (w, b, _) in enumerate(pending["points"]):
            P = float(model.penalty.value(w) + model.intercept.value(b) + sum(s[j][0] for s in sums))
            if P < P_best:
                P_best, w_best, b_best = P, w, b
        (a_pos, a_neg), (s_pos, s_neg), VV = pending["a"], pending["s"], pending["VV"]
        fp, fn = (1.0, 1.0)
        if model.intercept.mode == "free":
            fp, fn = class_balance(s_pos, -s_neg)
        v_t, A_t = fp * VV[0] + fn * VV[1], fp * a_pos + fn * a_neg
        S_t = 0.0 if model.intercept.mode == "free" else pending["S"]
        f = np.array([fp, fn])
        loss_dual = float(f @ pending["m1"] - (0.25 * (f * f) @ pending["m2"] if self.squared else 0.0))
        if A_t <= 0:
            us = [None]
        else:
            self.work.refresh(arrays.set_kernel, arrays.params(rho=0.0), v_t, A_t, CERT_INNER)
            us = [self.work.state.u.copy()]
            if isinstance(model.uncertainty, Ellipsoid):
                us.append(model.uncertainty.worst_case(w_best))
        D = -math.inf
        for u in us:
            if u is None:
                wd = softclip(v_t, l1, sg, 1.0 / lam)
            else:
                g = arrays.description.gauge(u)
                wd = softclip(v_t - A_t * (u / g if g > 1.0 else u), l1, sg, 1.0 / lam)
            D = max(D, loss_dual - 0.5 * lam * float(wd @ wd) + model.intercept.dual_value(S_t))
        new = DualCertificate(P_best, D, w_best, b_best, scale=model.c_sum)
        self.cert = new if self.cert is None else self.cert.merge(new)
        return self.cert


def _client_steps(x_u, dx_u, nu, dnu, lay, q, dq, zeta, dzeta) -> float:
    """The largest step keeping ``u, ν ≥ 0`` and the cone points inside the cone."""
    best = math.inf
    for v, dv in ((x_u, dx_u), (nu, dnu)):
        neg = dv < 0
        if np.any(neg):
            best = min(best, float(np.min(-v[neg] / dv[neg])))
    if lay.cone:
        best = min(best, float(soc.max_step(q[None], dq[None])[0]), float(soc.max_step(zeta[None], dzeta[None])[0]))
    return best


def _add_cone_block(K: np.ndarray, W, lay, hth) -> tuple:
    """``K += Hᵀ W⁻² H`` in place from the rank-two form of ``W⁻²``: ``(HᵀH + 4(vᵀv) a aᵀ − 2(a bᵀ + b aᵀ))/β²``
    with ``a = HᵀJv``, ``b = Hᵀv`` (two rank-one updates of ``K``, no k × k temporaries: on 4,000 × 1,500 with
    signs on half the features, k = 2252, the dense form took 0.33 s of the client's 0.57 s per iteration).
    ``hth``: ``HᵀH`` as a sparse matrix (a norm ball's ``H`` maps each feature to one or two columns, so ``HᵀH``
    has O(k) entries) or dense. Returns ``(1/β², a, b, 4 vᵀv)`` for the products with the block."""
    from scipy.linalg import blas

    a, b = (W.Jv @ lay.H)[0], (W.v @ lay.H)[0]
    vv, inv = 4.0 * float(W.v[0] @ W.v[0]), 1.0 / float(W.beta[0]) ** 2
    if sp.issparse(hth):
        K[hth.row, hth.col] += inv * hth.data  # the entries of a COO matrix converted from dense are unique
    else:
        K += inv * hth
    # on the Fortran view Kᵀ, dger(α, x, y) adds α y xᵀ to K
    for alpha, x, y in ((1.0, inv * (vv * a - 2.0 * b), a), (-2.0 * inv, a, b)):
        out = blas.dger(alpha, x, y, a=K.T, overwrite_a=True)
        if not np.shares_memory(out, K):  # pragma: no cover - K is a fresh C-ordered array
            K[...] = out.T
    return inv, a, b, vv


class _Newton:
    """The factored Newton system of the current iterate (client side) and its directions."""

    def __init__(self, lay, qdiag, f, x, nu, zeta, q, gta, gram, batch, hth=None) -> None:
        m = lay.m
        self.lay, self.x, self.nu, self.hth = lay, x, nu, hth
        rx = qdiag * x + f - gta
        rx[:m] -= nu
        diag = qdiag.copy()
        diag[:m] += nu / x[:m]
        K = batch.normal_matrices(gram[None], diag[None])  # Tᵀ(Aᵀdiag(1/e)A)T + diag
        self.W = self.rank_two = None
        apex = False
        if lay.cone:
            self.W = soc.NTScaling(q[None], zeta[None])
            self.rank_two = _add_cone_block(K[0], self.W, lay, hth)
            apex = not bool(self.W.valid[0])
            rx -= zeta @ lay.H
        self.rx, self.diag = rx, diag
        self.factor = Factor(K)
        self.failed = bool(self.factor.failed[0]) or apex
        self.why = ("the cone point reached the cone's boundary" if apex
                    else "the normal matrix is not positive definite")

    def direction(self, g_rho, rhs_u, cone_rhs):
        """``(Δx, Δν, Δζ, Δ(Gᵀα))`` for ``g_rho = Gᵀ(ρ/e)`` and the right-hand sides of ``u∘ν`` and the cone."""
        lay, x, W, m = self.lay, self.x, self.W, self.lay.m
        rhs = -self.rx + g_rho
        rhs[:m] += rhs_u / x[:m]
        kappa = None
        if lay.cone:
            kappa = soc.jordan_solve(W.lam, cone_rhs[None])
            rhs += (W.apply_inverse(kappa) @ lay.H)[0]
        dx = self.factor.solve(rhs[None])[0]
        gg_dx = rhs - self.diag * dx  # Gᵀdiag(1/e)G Δx without forming it again
        dzeta = None
        if lay.cone:
            inv, a, b, vv = self.rank_two  # Hᵀ W⁻² H Δx from its rank-two form
            ad, bd = float(a @ dx), float(b @ dx)
            gg_dx -= inv * (self.hth @ dx + (vv * ad - 2.0 * bd) * a - 2.0 * ad * b)
            dzeta = W.apply_inverse(kappa - W.apply_inverse((lay.H @ dx)[None]))[0]
        return dx, (rhs_u - self.nu * dx[:m]) / x[:m], dzeta, g_rho - gg_dx


class _Precision:
    """Whether the next Newton round forms its Gram matrix in single precision: while ``degree·μ`` exceeds
    :data:`_COARSE` ``· tol · |objective|`` (decided one iteration ahead, with the last iterate's ``μ``) and
    until, at a recomputation of ``Gᵀα``, the product carried along the steps has drifted from it by more than
    :data:`_DRIFT` times the stationarity residual; from then on in double precision (``feature-ipm``'s rule).
    The predictor's and the corrector's products of an iteration follow ``precise`` as it stands at its
    predictor."""

    def __init__(self, tol: float) -> None:
        self.tol, self.precise = tol, False

    def coarse(self, gap: float, value: float) -> bool:
        self.precise |= not gap > _COARSE * self.tol * abs(value)
        return not self.precise

    def check_drift(self, carried: np.ndarray, exact: np.ndarray, residual: np.ndarray) -> None:
        self.precise |= float(np.linalg.norm(carried - exact)) > _DRIFT * float(np.linalg.norm(residual))


def _start(run: _Run):
    """The interior start and its round: ``(x, ν, ζ, Gᵀα, degree)``."""
    lay, squared = run.lay, run.squared
    m, k = lay.m, lay.k
    x = np.zeros(k)
    x[:m] = 1.0 / math.sqrt(max(m, 1))
    if lay.cone:
        x[lay.t] = float(np.linalg.norm(lay.H[1:, :m] @ x[:m])) + 1.0
    out = run.round(rows.start, run.tz(x), run.model.c_scale, run.radius, squared)
    N = sum(p["rows"] for p in out)
    if N == 0:
        raise ValueError("every loss coefficient is zero: sample_weight leaves no sample")
    gta = run.gt(_add(out, "ta"))
    mu0 = sum(p["s_alpha"] for p in out) / N
    nu = mu0 / x[:m]
    zeta = None
    if lay.cone:
        zeta = soc.identity(1, lay.H.shape[0])[0] * (mu0 / (lay.H @ x)[0])
    return x, nu, zeta, gta, N * (1 if squared else 2) + m + (1 if lay.cone else 0)


def _solve(run: _Run, tol: float, max_iter: int, time_limit: float | None, verbose: bool, hist: History):
    """The interior-point iterations, two rounds each when the step tried in the fused round is taken; returns
    ``(status, message, iterations)`` (the certificate in ``run``)."""
    lay, batch, model = run.lay, run.batch, run.model
    m = lay.m
    qdiag, f = batch.qdiag[0], batch.f[0]
    upper_c = float(model.loss.dual_upper)
    t0 = time.perf_counter()
    x, nu, zeta, gta, degree = _start(run)
    prec = _Precision(tol)
    a_prev, sync, iteration, ahead, near, ratio = 0.0, None, 0, False, False, 1.0
    out = run.round(rows.advance_and_newton, 0.0, None, True, None)
    while True:
        q = lay.H @ x if lay.cone else None
        s_total = sum(p["s_alpha"] + p["xi_beta"] for p in out) + float(x[:m] @ nu) + (
            float(q @ zeta) if lay.cone else 0.0)
        mu_now = s_total / degree
        value = 0.5 * float(qdiag @ (x * x)) + float(f @ x) + sum(p["loss"] for p in out)
        if sync is not None:
            exact = run.gt(_add(out, "ta"))
            prec.check_drift(gta, exact, qdiag * x + f - exact)
            gta = exact
        sums = [p["cert"] for p in out] if "cert" in out[0] else None
        pending = None
        if iteration > 0:
            timed_out = time_limit is not None and time.perf_counter() - t0 > time_limit
            if iteration >= max_iter or timed_out or a_prev < 1e-10:
                cert = run.certify(x, sums, ahead)
                hist.record(iteration, cert.P, cert.gap, dual=cert.D, rel_gap=cert.rel_gap, mu=mu_now)
                if cert.rel_gap <= tol:
                    return "optimal", "", iteration
                if iteration >= max_iter:
                    return "max_iter", "", iteration
                if timed_out:
                    return "time_limit", f"time limit {time_limit:g} s reached", iteration
                return "stalled", f"step {a_prev:.1e}: the interior point cannot move", iteration
            if mu_now * degree <= _CERTIFY_FROM * tol * abs(value):  # priced in the predictor's round
                pending = run.certificate_points(x, sums if sums is not None else run.round(
                    rows.certificate_sums, upper_c, ahead))
        newton = _Newton(lay, qdiag, f, x, nu, zeta, q, gta, _add(out, "gram"), batch, run.hth)
        if newton.failed:
            cert = run.certify(x, sums, ahead)
            if cert.rel_gap <= tol:
                return "optimal", "", iteration
            return "numerical_error", f"no Newton step after {iteration} iterations: {newton.why}", iteration
        W = newton.W
        cone_rhs = -soc.jordan(W.lam, W.lam)[0] if lay.cone else None
        dx_a, dnu_a, dzeta_a, _ = newton.direction(run.gt(_add(out, "g_rho")), -x[:m] * nu, cone_rhs)
        single = not prec.precise  # this iteration's products: single precision while the gap is far
        out = run.round(rows.predictor_step, run.tz(dx_a), ahead, None if pending is None else pending["points"],
                        model.loss, model.c_scale, single)
        if pending is not None:
            cert = run.certificate(pending, [p["priced"] for p in out])
            hist.record(iteration, cert.P, cert.gap, dual=cert.D, rel_gap=cert.rel_gap, mu=mu_now)
            if cert.rel_gap <= tol:
                return "optimal", "", iteration
        dq_a = lay.H @ dx_a if lay.cone else None
        a_aff = min(min(p["max_step"] for p in out),
                    _client_steps(x[:m], dx_a[:m], nu, dnu_a, lay, q, dq_a, zeta, dzeta_a))
        a_affine = min(1.0, a_aff)
        c0, c1, c2 = (sum(p["gap_coef"][j] for p in out) for j in range(3))
        mu_aff = c0 + a_affine * c1 + a_affine ** 2 * c2 + float(
            (x[:m] + a_affine * dx_a[:m]) @ (nu + a_affine * dnu_a))
        if lay.cone:
            mu_aff += float((q + a_affine * dq_a) @ (zeta + a_affine * dzeta_a))
        mu_aff /= degree
        target = (mu_aff / mu_now) ** 3 * mu_now if mu_now > 0 else 0.0
        rhs_u = target - x[:m] * nu - dx_a[:m] * dnu_a
        if lay.cone:
            corr = soc.jordan(W.apply_inverse(dq_a[None]), W.apply(dzeta_a[None]))
            cone_rhs = (-soc.jordan(W.lam, W.lam) + target * soc.identity(1, q.size) - corr)[0]
        g_rho = _add(out, "g_rho")
        dx, dnu, dzeta, dgta = newton.direction(run.gt(g_rho[0] + target * g_rho[1]), rhs_u, cone_rhs)
        dq = lay.H @ dx if lay.cone else None
        a_client = _client_steps(x[:m], dx[:m], nu, dnu, lay, q, dq, zeta, dzeta)
        # the next round: the corrector's step and, at the step tried, the next Newton system
        a_try = min(1.0, _STEP * min(a_client, _TRY * ratio * a_aff))
        resync = (iteration + 1) % _RESYNC == 0
        coarse = prec.coarse(mu_now * degree, value)
        near = mu_now * degree <= _CERTIFY_AHEAD * tol * abs(value) or iteration + 1 >= max_iter
        upper = upper_c if near else None
        out = run.round(rows.corrector_and_newton, run.tz(dx), float(target), a_try, _STEP,
                        run.tz(x + a_try * dx) if resync else None, coarse, upper, single)
        a_rows = min(p["max_step"] for p in out)
        ratio = a_rows / a_aff if a_aff > 0 else 1.0
        if all(p["newton"] is not None for p in out):
            a, ahead = a_try, True
            out = [p["newton"] for p in out]
        else:
            a, ahead = min(1.0, _STEP * min(min(p["max_step"] for p in out), a_client)), False
            out = run.round(rows.advance_and_newton, a, run.tz(x + a * dx) if resync else None, coarse, upper)
        sync = True if resync else None
        x, nu, gta = x + a * dx, nu + a * dnu, gta + a * dgta
        if lay.cone:
            zeta = zeta + a * dzeta
        iteration += 1
        a_prev = a
        if verbose:
            print(f"dask-ipm it {iteration:3d}  mu {mu_now:.2e}  step {a:.3f}  rounds {run.data.rounds}"
                  f"{'' if ahead else '  (step refused: a round more)'}")


def solve_dask_ipm(model, *, tol=DEFAULTS["tol"], max_iter=DEFAULTS["max_iter"],
                   time_limit=None, verbose=False, random_state=None,
                   client=None) -> Result:
    """Solve a robust (or nominal) hinge / squared-hinge model on a Dask cluster by the feature-space interior
    point.

    Parameters
    ----------
    model : DistributedModel or Model
        A model on partitioned data; an in-memory :class:`~robustsvm.model.Model` is partitioned over the
        workers of ``client`` first.
    tol : float, default 1e-6
        Stop when the certified relative duality gap ``(P − D)/|P|`` is at most ``tol``.
    max_iter : int, default 100
        Interior-point iterations (two or three rounds each).
    time_limit : float, optional
        Seconds; the fit stops with status ``"time_limit"`` (certified at the last iterate) after it.
    verbose : bool
    random_state : ignored
    client : distributed.Client, optional
        Only for an in-memory model (the current client by default).

    Returns
    -------
    Result
        ``gap`` and ``dual_value`` from the partition sums (``dual_feasible``); ``extra`` holds the rounds,
        the partitions and the bytes the client received.
    """
    t_start = time.perf_counter()
    if not isinstance(model, DistributedModel):
        model = as_distributed(model, client)
    refusal = dask_ipm_refusal(model)
    if refusal is not None:
        raise UnsupportedModelError(refusal)
    max_iter = int(max_iter)
    tol = float(tol)
    check_limits(model, max_iter, time_limit)
    run = _Run(model)
    hist = History()
    hist.restart()
    data = run.data
    rounds0, bytes0 = data.rounds, data.bytes_received
    try:
        with one_blas_thread():  # the client's factorizations
            status, message, iterations = _solve(run, tol, max_iter, time_limit, verbose, hist)
    except WorkerLostError as exc:
        if run.cert is None:
            raise
        status, message, iterations = "worker_lost", f"{exc}; the last certificate is reported", -1
    finally:
        run.states = None
        data.free_states()  # the workers free the rows' variables
    cert = run.cert
    rounds = data.rounds - rounds0
    if not message:
        message = (f"relative duality gap {cert.rel_gap:.3g} after {iterations} interior-point iterations"
                   + ("" if status == "optimal" else f" (tolerance {tol:g} not reached)"))
    return Result(w=cert.w, b=float(cert.b) if model.intercept.present else 0.0, status=status, gap=cert.gap,
                  iterations=max(iterations, 0), history=hist.arrays(), time_solve=time.perf_counter() - t_start,
                  message=message, dual_value=cert.D, dual_feasible=True, multipliers=None,
                  primal_objective=float(cert.P), rel_gap=float(cert.rel_gap),
                  extra={"rounds": rounds, "partitions": data.k,
                         "bytes_received": data.bytes_received - bytes0,
                         "bytes_per_round": (data.bytes_received - bytes0) / max(rounds, 1),
                         "resubmitted_rounds": data.resubmitted, "replayed_rounds": data.replayed})


register(
    Backend(
        name="dask-ipm",
        solve=solve_dask_ipm,
        needs=NEEDS,
        summary="feature-space interior point on a Dask cluster (tall data, n ≫ d): per iteration each "
                "partition sends its (d+2)² Gram part and a few vectors; feature-ipm's models; certified by the "
                "duality gap from partition sums",
        options=frozenset({"time_limit", "client"}),
        kind=DISTRIBUTED,
        certificate="duality gap P(w, b) − D_u(α) from partition sums (absolute)",
        defaults=DEFAULTS,
    ),
    replace=True,
)

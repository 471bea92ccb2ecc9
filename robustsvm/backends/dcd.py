"""Dual coordinate descent (``dcd``): sign-constrained hinge and squared-hinge SVMs with an L2 penalty.

The model is

    minimize   (λ/2)‖w‖² [+ (μ/2) b²] + Σ_i c_i ℓ(y_i (x_i·w + b))
    subject to s_h w_h ≥ 0,

with ``ℓ`` the hinge or squared hinge and ``c_i`` the loss coefficients
(``1/n`` for ``reduction="mean"``, ``1`` for ``"sum"``, times sample weights).
Its dual in ``(α, β)`` is

    maximize   D(α, β) = Σ_i c_i (α_i − δ α_i²/4) − (λ/2)‖w(α, β)‖² [− S²/(2μ)]
    w(α, β) = (Σ_i c_i y_i α_i x_i + β∘s) / λ,     S = Σ_i c_i y_i α_i,

over ``0 ≤ α_i ≤ 1`` (hinge, δ = 0) or ``α_i ≥ 0`` (squared hinge, δ = 1) and
``β ≥ 0`` on the constrained coordinates; a free intercept adds ``S = 0``.
Each α_i gets an exact projected Newton step from the gradient computed with the
maintained ``w``; each touched β_h gets its closed form ``max(0, β_h − λ s_h w_h)``
at once, so ``w`` is sign-feasible after every step. A free intercept is handled
exactly by the augmented Lagrangian of ``S = 0`` (its multiplier is ``b``).
Bounds beyond signs are followed on the signs' path while they do not bind (:class:`_SignRelaxation`), and the
epochs between two certificates run in one compiled call (:func:`._dcd_kernels.run_epochs`).
The stopping rule and certificate is the duality gap ``P(w, b) − D(α̃, β̃)`` at a
primal point (an exponential average of the recent sign-feasible iterates) and a
dual-feasible point rebuilt from all samples and features. The derivation is
in ``docs/derivations/dcd.md``.
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np
import scipy.sparse as sp

from ..certificates.duality import class_balance, dual_value
from ..model import Model
from . import _dcd_kernels as kern
from . import _products_kernels as products
from . import dual_ascent, margin_equations, single_rows
from ._compiled import CsrRows, DenseRows
from .dual_ascent import (
    MIN_PASS,
    DualCertificate,
    Products,
    Shrinking,
    Specialized,
    ascend,
    certified_result,
    intercept_rho,
    soft_margin_needs,
    visiting_order,
)
from .frozen_features import FeatureShrinking
from .registry import Backend, Result, register
from .shared_set import SharedSetArrays, dual_certificate, overflow_result

__all__ = ["DEFAULTS", "NEEDS", "signs_certificate", "solve_dcd"]

#: ``tol`` and ``max_iter`` when the caller gives none (declared on the registration)
DEFAULTS = {"tol": 1e-4, "max_iter": 1000}
#: a finite stand-in for ±∞ in the clip bounds (the kernels use fastmath without the no-inf flag anyway)
_HUGE = 1e300


#: what dcd solves: the nominal linear (squared-)hinge + L2 model, signs and bounds, any intercept
NEEDS = soft_margin_needs(
    "dcd",
    l1=False,
    sets=(),
    bounds=True,
    why={"l1": "it handles an L2 penalty only (the L1 term makes the dual non-smooth in w)",
         "constraints": "a linear constraint couples the weights, which the closed-form clip of w cannot keep",
         "sets": "the robust margin couples every sample through the support function of w, so the dual "
                 "loses its one-coordinate-per-sample form"},
)


#: freeze the features clipped by their sign at two certificates in a row (sparse data with signs)
FEATURE_SHRINKING = True
#: certificates in a row that do not halve the gap before the shrunk samples are all restored (0: never)
UNSHRINK_AFTER = 3
#: take the local-curvature step on sparse rows with signs (:func:`._dcd_kernels.epoch`)
LOCAL_STEP = True
#: with frozen features, the local-curvature step stays on while the clipped features that are not frozen hold at
#: least this share of the stored entries of the rows the epochs read (:meth:`FeatureShrinking.clipped_share`);
#: below it the rows it would change are few and its bookkeeping costs more than it gains (derivation §6)
LOCAL_MIN_SHARE = 0.05
#: try the primal point of the margin equations (:mod:`.margin_equations`) at each certificate from this one on
MARGIN_FROM = 3
#: ... once the dual value rose by at most this share of the gap since the previous certificate
MARGIN_SETTLED = 0.5
#: whether to try it at all (hinge loss, sign constraints alone, sparse X)
MARGIN_POINT = True
#: MINRES stops once the first-order cost of the free samples' margin errors is at most this share of the gap the
#: certificate needs (``tol·|P|``): the point's excess is about half that cost (derivation §4)
MARGIN_RESIDUAL = 1.0
#: the factor on the predicted epochs to the next certificate while the point may be formed there and none was kept
#: yet: the schedule's rate is the averaged point's, and the point closes the primal side of the gap faster (0.6 took
#: 18 epochs and 5 % of the time off the Cora-shaped solves at the same number of certificates; 0.5 and 0.4 placed
#: some certificates too early and needed more of them; derivation §4)
MARGIN_SCHEDULE = 0.6
#: weight of the newest iterate in the exponential average of the primal iterates that the certificate evaluates
AVG_WEIGHT = 0.25
#: no frozen features (:func:`._products_kernels.sign_free` on all of ``X``)
_NONE_FROZEN = np.zeros(0, dtype=bool)
#: the empty check of bounds beyond signs (no relaxation) for :func:`._dcd_kernels.run_epochs`
_NO_CHECK = kern.BoundCheck(np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0))
#: what a certificate costs in passes over the data, for the schedule (:func:`.dual_ascent.next_check`): its products
#: read the whole of ``X`` cold from memory after epochs over the active rows, plus its Python work (about 1.5 ms
#: against 0.2 ms for a late epoch over a fifth of the Cora-shaped rows); 1 → 2 took 1.2 of 7.3 certificates off
#: the Cora-shaped solves at the same passes and left the KEEL sets of ``bench_dcd`` within ±3 % of their passes
CERT_PASSES = 2.0
#: a free intercept's augmented-Lagrangian weight ρ in units of ``mean‖x_i‖²/λ`` (derivation §3): 0.1 → 0.03 took
#: the Cora-shaped signed model from 52 to 41 passes and left the KEEL sets of ``bench_dcd`` within 10 %
RHO_FACTOR = 0.03
#: the bytes of active rows from which the epochs visit them by blocks (:func:`.dual_ascent.order_block`): dense as
#: robust-dcd's, CSR from 512 KiB rather than 2 MiB. Shrinking leaves the active CSR rows scattered among the others
#: in storage, so a random order of them reads lines and pages of the whole matrix; the Cora-shaped signed solves
#: took 0.95-0.96x the time (2 MiB -> 512 KiB; 1 MiB: 0.99-1.00x, 256 KiB or always: as 512 KiB with the same
#: passes +2 %), held out: Zipf words 0.97x / 0.99x, uniform sparse 0.96x / 0.95x (derivation §7); robust-dcd lost
#: 3-7 % with it on the Cora-shaped rows and keeps 2 MiB
ORDER_MIN_BYTES = {"dense": dual_ascent.ORDER_MIN_BYTES["dense"], "sparse": 2**19}


def kernel_box(arrays: SharedSetArrays, box: kern.DcdBox) -> kern.DcdBox | kern.DcdSigns:
    """The bounds as the epochs read them: the int8 signs when there are no other bounds (one byte per feature
    and a sign test per update instead of two float64 bounds and a clip), else ``box``."""
    if arrays.box is None:
        return kern.DcdSigns(np.ascontiguousarray(arrays.sg, dtype=np.int8))
    return box


def weight_box(arrays: SharedSetArrays) -> kern.DcdBox:
    """The bounds on ``λw`` for the kernels: the model's box, or the signs' ``[0, ∞)`` / ``(−∞, 0]`` (±1e300 for ∞)."""
    if arrays.box is None:
        return kern.DcdBox(*products.sign_bounds(arrays.sg, _HUGE))
    lower, upper = arrays.box
    return kern.DcdBox(np.clip(arrays.l2 * lower, -_HUGE, _HUGE), np.clip(arrays.l2 * upper, -_HUGE, _HUGE))


class _SignRelaxation:
    """Bounds beyond signs, followed on the signs' path while they do not bind.

    With the model's box ``[l, u]`` and its implied signs ``s`` (+1 where ``l ≥ 0``, −1 where ``u ≤ 0``), the
    signs' weight ``w^s_h = v_h/λ if s_h v_h ≥ 0 else 0`` equals the box's ``clip(v_h, λl_h, λu_h)/λ`` exactly
    while ``a_h ≤ v_h ≤ b_h``, with ``a_h = −∞`` where ``s_h = +1, l_h = 0`` and ``λl_h`` otherwise, ``b_h = +∞``
    where ``s_h = −1, u_h = 0`` and ``λu_h`` otherwise (derivation §2). So the epochs run the signs' kernels (int8
    signs, the local-curvature step, the frozen features) and, after each, :func:`._dcd_kernels.outside` checks
    ``v`` on the features with a finite ``a_h`` or ``b_h`` (O(those features)); the first time it fails the solve
    moves to the clipped path for good. The certificate is always the box model's.
    """

    def __init__(self, index: np.ndarray, a: np.ndarray, b: np.ndarray) -> None:
        self.index, self.a, self.b = index, a, b

    @classmethod
    def of(cls, arrays: SharedSetArrays, box: kern.DcdBox) -> _SignRelaxation | None:
        """The relaxation of ``arrays.box`` (``box`` its bounds on ``λw``); None when a bound binds at ``v = 0``."""
        lower, upper = arrays.box
        sg = arrays.sg
        a = np.where((sg > 0) & (lower == 0), -_HUGE, box.lo)
        b = np.where((sg < 0) & (upper == 0), _HUGE, box.up)
        index = np.flatnonzero((a > -_HUGE) | (b < _HUGE)).astype(np.int64)
        a, b = np.ascontiguousarray(a[index]), np.ascontiguousarray(b[index])
        if np.any(a > 0.0) or np.any(b < 0.0):  # w(α = 0) is already clipped by a bound that is not a sign
            return None
        return cls(index, a, b)


def _local_step(X, signs: np.ndarray, bounded: bool) -> bool:
    """Whether the epochs try the local-curvature step: sparse rows with signs (the kernel's gain check holds for
    signs, not for bounds)."""
    return LOCAL_STEP and sp.issparse(X) and bool(np.any(signs != 0)) and not bounded


def _freezes_features(X, signs: np.ndarray, bounded: bool, shrinking: bool) -> bool:
    """Whether the epochs freeze the features clipped by their signs (:class:`FeatureShrinking`)."""
    return _local_step(X, signs, bounded) and bool(shrinking) and FEATURE_SHRINKING


def _epoch_runner(arrays: SharedSetArrays, qdiag, rho: float, alpha, st, box, index, shrinking: bool, rng_state,
                  parts=None, dense=None):
    """``(run_block, rows, features)``: compiled epochs over the active samples (:func:`._dcd_kernels.run_epochs`;
    ``run_block(shrink, block, avg, rx)`` with ``rx`` the :data:`._dcd_kernels.BoundCheck` of the bounds beyond
    signs).

    ``parts`` are the CSR arrays of ``X`` from :func:`._products_kernels.csr_parts` (``Products.parts``);
    ``dense`` the rows dense epochs read instead of ``X`` (its float32 copy, :func:`.single_rows.single_copy`).
    ``rows`` holds what the sparse epochs read: the (CSR) rows — all of ``X``, or ``X``
    without the frozen features of ``features`` (a :class:`FeatureShrinking`, on
    sparse data with signs; None otherwise) —, the samples and the :data:`._dcd_kernels.DcdParams`; it is a
    one-element list, replaced when the frozen set or the choice of the local-curvature step changes.
    """
    sg, lam = arrays.sg, arrays.l2
    dii = arrays.diagonal
    local = _local_step(arrays.X, sg, arrays.box is not None)
    prm = kern.DcdParams(inv_lam=1.0 / lam, upper=arrays.upper, dii=dii, rho=float(rho), shrinking=bool(shrinking),
                         local=local)
    features = None
    if sp.issparse(arrays.X):
        full = arrays.rows(parts)
        rows = [(full, kern.DcdSamples(arrays.y, arrays.c, qdiag), prm)]
        if _freezes_features(arrays.X, sg, arrays.box is not None, shrinking):
            features = FeatureShrinking(full.indptr, full.indices, full.data, sg, arrays.c, lam, rho, dii,
                                        arrays.col_nnz)

        run = Specialized(kern.run_epochs)

        def run_block(shrink, block, avg, rx):
            part, samples, params = rows[0]
            return run(rows[0], part, samples, alpha, st, box, params, index, rng_state, shrink, block, avg, rx)
        return run_block, rows, features

    rows_x = arrays.X if dense is None else dense
    part, samples = DenseRows(rows_x), kern.DcdSamples(arrays.y, arrays.c, qdiag)
    prm = prm._replace(ahead=single_rows.prefetch_distance(rows_x))
    run = Specialized(kern.run_epochs)
    key = (part, samples)

    def run_block(shrink, block, avg, rx):
        return run(key, part, samples, alpha, st, box, prm, index, rng_state, shrink, block, avg, rx)
    return run_block, None, features


def solve_dcd(model: Model, *, tol=DEFAULTS["tol"], max_iter=DEFAULTS["max_iter"], verbose=False, random_state=0,
              shrinking=True, check_every=10, rho=None, time_limit=None, single_precision="auto") -> Result:
    """Solve a sign-constrained (squared-)hinge + L2 SVM by dual coordinate descent.

    Parameters
    ----------
    model : Model
        A normalized model inside :data:`NEEDS`.
    tol : float, default 1e-4
        Stop when the relative duality gap ``(P − D)/|P|`` is at most ``tol``.
    max_iter : int, default 1000
        The budget in passes over the data: an epoch over the active samples that shrinking leaves counts as
        their fraction of all samples (at least :data:`.dual_ascent.MIN_PASS`), so the many cheap epochs a
        shrunk, ill-conditioned problem needs at the end (standardized KEEL sets at ``λ = 1/n``) do not exhaust
        a budget meant for full passes.
    verbose : bool
        Print one line per certificate evaluation.
    random_state : int or None, default 0
        Seed of the per-epoch orders (random permutations; by random blocks of rows once the active rows outgrow
        the cache, :func:`.dual_ascent.order_block`; a fixed default, so a solve is reproducible; None draws a fresh
        seed).
    shrinking : bool, default True
        Drop bounded variables whose gradient points outside the box (liblinear's rule),
        restoring all of them when the active set looks optimal; on sparse data with signs,
        also freeze between certificates the features that stay clipped by their sign
        (:class:`FeatureShrinking`).
    check_every : int, default 10
        Epochs between certificates while their rate of decrease is unknown; then the
        schedule follows the predicted number of epochs to ``tol`` (between 2 and
        ``5·check_every``). A certificate is also evaluated when the projected-gradient
        spread drops below its threshold.
    rho : float, optional
        Augmented-Lagrangian weight for a free intercept; default ``0.03·mean‖x_i‖²/λ`` (:data:`RHO_FACTOR`,
        measured on the benchmark shapes: see ``docs/derivations/dcd.md`` §3).
    time_limit : float, optional
        Seconds after which the epochs stop (status ``"time_limit"`` unless the certificate taken then reaches
        ``tol``); no limit by default.
    single_precision : {"auto", True, False}, default "auto"
        Whether the epochs read a float32 copy of dense ``X`` (half the memory traffic of a pass, at the cost of
        that copy's memory, half of ``X``'s): ``"auto"`` for rows of at least 8 MiB (those that outgrow the
        cache) when the copy takes at most half of the memory available; never where an entry exceeds float32's
        range. The epochs return to ``X`` once a certificate's relative gap is at most 1e-5, the gap stalls or the
        image they carry drifts from the exact one (:mod:`.single_rows`); the certificates always evaluate ``X``
        in float64, so the gap is ``X``'s. Sparse ``X`` is always read as it is.

    Returns
    -------
    Result
        ``gap`` is the absolute duality gap ``P − D``; ``history`` has one row per
        certificate (``iteration`` = epoch, ``objective`` = best P so far, ``dual`` = best D so far, ``gap``,
        ``rel_gap``, ``time``, ``active``); ``extra`` has the dual value, the final α,
        ``rho``, the time spent evaluating certificates (``time_certificates``, wall-clock) and the CPU time of the
        compiled epochs (``time_epochs``), the number of
        features frozen at the end (``frozen_features``), of rebuilds of the restricted rows
        (``restrictions``) and of passes over the data (``passes``, the budget's unit), whether bounds beyond
        signs were met by the clipped path (``bounds_bind``; False while they never bind, :class:`_SignRelaxation`),
        and the primal points formed from the margin equations of the free samples (``margin_points``), kept
        because their objective was lower (``margin_points_kept``) and the MINRES iterations they took
        (``margin_iterations``; :mod:`.margin_equations`).
        Data whose squared row norms overflow get the status ``"numerical_error"`` and the point ``w = 0``.
    """
    t_start = time.perf_counter()
    tol = float(tol)
    max_iter = int(max_iter)
    check_every = int(check_every)
    if check_every < 1:
        raise ValueError(f"check_every must be a positive integer, got {check_every!r}")
    if not isinstance(shrinking, (bool, np.bool_)):
        raise TypeError(f"shrinking must be True or False, got {shrinking!r}")
    single_rows.check_setting(single_precision)
    # the stored entries per column, for the frozen features (counted with the row norms)
    arrays = SharedSetArrays.from_model(model, column_counts=_freezes_features(model.X, model.signs, model.has_bounds,
                                                                               shrinking))
    if arrays.overflow():
        return overflow_result(arrays, t_start)
    c, lam = arrays.c, arrays.l2
    rho = intercept_rho(arrays.intercept, rho, c, arrays.sqn, lam, RHO_FACTOR)
    qdiag = c * (arrays.sqn / lam + rho) + arrays.diagonal
    box = weight_box(arrays)  # w = clip(v, λl, λu)/λ
    n, d = arrays.X.shape
    alpha = np.zeros(n)
    st = kern.DcdState(np.zeros(d), np.zeros(d), kern.dual_sums())  # v, w, (b0 intercept multiplier, S, A)
    index = np.flatnonzero(c > 0).astype(np.uint32)
    rng_state = visiting_order(random_state, arrays.X, ORDER_MIN_BYTES)  # the epochs' order, seeded
    relax = _SignRelaxation.of(arrays, box) if arrays.box is not None else None
    if relax is None and arrays.box is not None:
        np.clip(st.w, box.lo / lam, box.up / lam, out=st.w)  # w(α = 0): 0 clipped to the bounds
    loop = _Loop(arrays, box, relax, qdiag, rho, alpha, st, index, bool(shrinking), rng_state, tol,
                 single_rows.single_copy(arrays.X, single_precision))
    run = ascend(None, loop.certify, n_total=index.size, sums=st.sums, rho=rho, free=loop.free, tol=tol,
                 check_every=check_every, max_iter=max_iter, name="dcd", verbose=verbose, passes=True,
                 unshrink_after=UNSHRINK_AFTER, time_limit=time_limit, block=loop.block, cert_passes=CERT_PASSES,
                 next_scale=loop.next_scale)
    features = loop.features
    return certified_result(run, tol=tol, intercept=arrays.intercept, t_start=t_start,
                            multipliers=c * alpha, dual_alpha=alpha, extra={"rho": rho,
                                   "frozen_features": 0 if features is None else int(features.frozen.sum()),
                                   "restrictions": 0 if features is None else features.rebuilds,
                                   "passes": run.passes, "time_epochs": loop.time_epochs,
                                   "bounds_bind": loop.relax is None and arrays.box is not None,
                                   "margin_points": loop.margin_tried, "margin_points_kept": loop.margin_kept,
                                   "margin_iterations": loop.margin_iterations,
                                   "single_precision_passes": loop.single.passes})


class _Loop:
    """The epochs and certificates of one solve: the compiled epoch (on the signs' path while the bounds beyond
    signs do not bind, :class:`_SignRelaxation`), the averaged primal point and the certificate."""

    def __init__(self, arrays: SharedSetArrays, box: kern.DcdBox, relax: _SignRelaxation | None, qdiag, rho: float,
                 alpha, st, index, shrinking: bool, rng_state, tol: float, single: np.ndarray | None = None) -> None:
        self.arrays, self.box, self.relax, self.qdiag, self.rho = arrays, box, relax, qdiag, rho
        self.tol, self.certificates, self.last_dual = tol, 0, -np.inf
        self.margin_tried = self.margin_kept = 0  # margin-equation points formed, and kept as the best primal
        self.margin_start, self.margin_iterations = None, 0  # the last point's multipliers; MINRES iterations
        self.margin_singular = False  # the last certificate found at least as many free samples as free features
        self.time_epochs = 0.0  # CPU seconds in the compiled epochs
        self.single = single_rows.SingleRows(single)  # the float32 rows the epochs read (none: X)
        # the margin-equation candidate (margin_equations): hinge loss, sign constraints alone, no ridge intercept,
        # sparse X (derivation §4: where it was measured to pay for itself)
        self.margin = (MARGIN_POINT and not arrays.squared and arrays.box is None and sp.issparse(arrays.X)
                       and bool(np.any(arrays.sg != 0)) and arrays.intercept.mode in ("none", "free"))
        self.alpha, self.st, self.index, self.shrinking, self.rng_state = alpha, st, index, shrinking, rng_state
        self.free = arrays.intercept.mode == "free"
        self.ops = Products(arrays.X)
        self.w_avg = st.w.copy()
        self._runner(arrays if relax is None else replace(arrays, box=None))

    def _runner(self, arrays: SharedSetArrays) -> None:
        self.run_block, self.rows, self.features = _epoch_runner(
            arrays, self.qdiag, self.rho, self.alpha, self.st, kernel_box(arrays, self.box), self.index,
            self.shrinking, self.rng_state, self.ops.parts if self.ops.sparse else None, self.single.copy)
        relax = self.relax
        self.rx = _NO_CHECK if relax is None else kern.BoundCheck(relax.index, relax.a, relax.b)

    def block(self, shrink: Shrinking, epochs: int, work_left: float, since: int):
        """Up to ``epochs`` epochs in one compiled call (:func:`._dcd_kernels.run_epochs`), which also runs the
        epoch loop's per-epoch steps (the multiplier step, the average, liblinear's shrinking on ``shrink``) and
        the check of the bounds beyond signs, after which the solve leaves the signs' path
        (:meth:`leave_relaxation`). Returns ``(epochs run, looked solved, passes, active)``."""
        state = kern.ShrinkState(int(shrink.active), float(shrink.pg_max_old), float(shrink.pg_min_old),
                                 float(shrink.pg_eps))
        block = kern.EpochBlock(int(epochs), int(self.index.size), float(MIN_PASS), float(work_left), int(since),
                                bool(self.free), float(AVG_WEIGHT))
        t0 = time.process_time()
        ran, looked, work, active, binds, state = self.run_block(state, block, self.w_avg, self.rx)
        self.time_epochs += time.process_time() - t0
        self.single.count(work)
        shrink.active, shrink.pg_max_old, shrink.pg_min_old, shrink.pg_eps = state
        if binds:
            self.leave_relaxation()
            self.average()  # the average the compiled loop left out after that epoch
        return ran, looked, work, active

    def leave_relaxation(self) -> None:
        """Move to the clipped path: ``v`` rebuilt from α when features were frozen, ``w = clip(v, λl, λu)/λ``."""
        arrays, st = self.arrays, self.st
        if self.features is not None:
            images = self.ops.images(arrays.c * arrays.y * self.alpha, arrays.y > 0)
            np.add(images[0], images[1], out=st.v)
            self.ops.restricted = None
        np.clip(st.v, self.box.lo, self.box.up, out=st.w)
        np.divide(st.w, arrays.l2, out=st.w)
        self.relax = None
        self._runner(arrays)

    def leave_single(self, cert: DualCertificate) -> None:
        """Move the epochs to the float64 rows of ``X`` for good when :meth:`.single_rows.SingleRows.leave` says so
        after ``cert``; ``v`` and ``w`` are then resynchronized from the certificate's exact image."""
        arrays, st, images = self.arrays, self.st, cert.images  # both certificates keep their class images
        if not self.single.leave(cert.rel_gap, st.v, images[0] + images[1]):
            return
        products.resync(images[0], images[1], self.box.lo, self.box.up, arrays.l2, st.v, st.w)
        self._runner(arrays if self.relax is None else replace(arrays, box=None))

    def average(self) -> None:
        """``w̄ ← 0.75 w̄ + 0.25 w`` after every epoch (derivation §4)."""
        kern.average_into(self.w_avg, self.st.w, AVG_WEIGHT)

    def certify(self, b_eff: float):
        """The certificate at α and ``w̄`` (with ``b_eff`` as an intercept candidate), with the margin-equation
        point where it may close the gap; then, unless the gap is within ``tol`` (the solve ends), the frozen set
        is revised for the next epochs (:meth:`revise_features`)."""
        arrays, features = self.arrays, self.features
        b_hint = b_eff if self.free else None
        new = None
        if arrays.box is None or self.relax is not None:
            new = signs_certificate(arrays, self.ops, self.alpha, b_hint, self.w_avg.copy(), self.relax)
        if new is None:
            new = dual_certificate(arrays, self.ops, self.alpha, None, b_hint=b_hint, points=[self.w_avg.copy()],
                                   dual_primal=False)
        self.certificates += 1
        # the dual has settled relative to the gap (its last rise is at most half the gap): the gap is the primal
        # point's, which the margin equations of the free samples can close (derivation §4)
        if (self.margin and self.certificates >= MARGIN_FROM and new.rel_gap > self.tol
                and new.D - self.last_dual <= MARGIN_SETTLED * (new.P - new.D)):
            new = self.margin_candidate(new, b_hint)
        if features is not None and new.rel_gap > self.tol:  # the epochs go on: revise the frozen set for them
            self.revise_features(new.images)
        if self.single.copy is not None and new.rel_gap > self.tol:
            self.leave_single(new)
        self.last_dual = new.D
        new.images = None  # not kept between certificates (memory of d-long vectors on wide sparse data)
        return new

    def revise_features(self, images: np.ndarray) -> None:
        """Resynchronize ``v`` and ``w`` on every feature from the certificate's class ``images`` (the frozen
        features were not followed), revise the frozen set and the restricted rows (:class:`FeatureShrinking`),
        and choose the step: once few entries are clipped and not frozen, the plain one (derivation §6)."""
        arrays, features, st = self.arrays, self.features, self.st
        products.resync(images[0], images[1], self.box.lo, self.box.up, arrays.l2, st.v, st.w)
        restricted = features.update(st.v)
        part, samples, params = self.rows[0]
        if restricted is not None:
            ptr, idx, dat, qd = restricted
            part, samples = CsrRows(ptr, idx, dat), kern.DcdSamples(arrays.y, arrays.c, qd)
            products.zero_where(self.w_avg, features.frozen)  # still sign-feasible; the certificate reads fewer rows
            self.ops.restrict(restricted[:3], features.frozen)
        local = features.clipped_share(st.v) >= LOCAL_MIN_SHARE
        if restricted is not None or local != params.local:
            self.rows[0] = (part, samples, params._replace(local=local))

    def next_scale(self) -> float:
        """The schedule's factor on the epochs to the next certificate (:data:`MARGIN_SCHEDULE` while the
        margin-equation point may be formed there and none was kept yet, else 1; not while the last certificate
        found the equations singular)."""
        armed = (self.margin and self.certificates >= MARGIN_FROM and self.margin_kept == 0
                 and not self.margin_singular)
        return MARGIN_SCHEDULE if armed else 1.0

    def margin_candidate(self, cert: DualCertificate, b_hint: float | None) -> DualCertificate:
        """``cert`` with the primal point of :func:`.margin_equations.margin_point` where its objective is lower
        (evaluated exactly, its exact intercept and the equations' one tried)."""
        arrays, ops = self.arrays, self.ops
        sg = arrays.sg
        # v, and the features its signs leave free, without the frozen ones when the epochs read the rows without
        # them (ops.restricted)
        restricted = ops.restricted is not None
        frozen = self.features.frozen if restricted else _NONE_FROZEN
        v, free, n_free = products.sign_free(cert.images[0], cert.images[1], sg, frozen, restricted)
        parts = ops.restricted[0] if restricted else ops.parts
        # as many free samples as free features: A Aᵀ is singular, no point (margin_point)
        self.margin_singular = np.count_nonzero((self.alpha > 0.0) & (self.alpha < arrays.upper)) >= n_free
        if self.margin_singular:
            return cert
        b = b_hint if self.free else None
        point = margin_equations.margin_point(parts, arrays.y, self.alpha, arrays.upper, v, free, arrays.l2, b,
                                              c=arrays.c, start=self.margin_start,
                                              target=MARGIN_RESIDUAL * self.tol * abs(cert.P))
        if point is None:
            return cert
        self.margin_start, self.margin_iterations = point.multipliers, self.margin_iterations + point.iterations
        w = products.clip_to_signs(point.w, sg)
        S = cert.S  # Σ c_i y_i clip(α_i, 0, U), from the certificate's pass
        if not np.isfinite(S):
            S = float(np.sum(arrays.c * arrays.y * np.clip(self.alpha, 0.0, arrays.upper)))
        P, b = arrays.best_primal(w, ops.matvec(w), S, b)
        self.margin_tried += 1
        if P >= cert.P:
            return cert
        self.margin_kept += 1
        return DualCertificate(P, cert.D, w, b, scale=cert.scale, images=cert.images, S=cert.S)


def signs_certificate(arrays: SharedSetArrays, ops: Products, alpha: np.ndarray, b_hint: float | None,
                      w: np.ndarray, relax: _SignRelaxation | None = None) -> DualCertificate | None:
    """The certificate of :func:`.shared_set.dual_certificate` at the feasible ``w`` (``points=[w]``,
    ``dual_primal=False``) for the nominal model with signs alone, from one compiled pass over ``X``; with
    bounds beyond signs (``relax``, their :class:`_SignRelaxation`), the same while the dual image ``v`` of ``α̃``
    lies where the box's weight is the signs' one (there the box conjugate is ``(λ/2)‖w(α̃)‖²`` as well), else
    None.

    With ``ᾱ = clip(α, 0, U)``, the pass gives the class images ``Σ_{y_i=±1} c_i y_i ᾱ_i x_i``, ``z = Xw`` and
    ``Σ_{y_i=±1} c_i ᾱ_i``. Primal: ``P(w, b)`` at the best of the exact intercept of ``z`` (free), ``S/μ`` (ridge)
    or 0, and ``b_hint``. Dual: with a free intercept the heavier class of ``ᾱ`` scaled down so that ``S = 0``
    (:func:`robustsvm.certificates.duality.class_balance`), then ``D = Σ c (α̃ − ℓ*(α̃)) − (λ/2)‖w(α̃)‖² [− S²/(2μ)]``
    at ``w(α̃)_h = v_h/λ`` where ``s_h v_h ≥ 0``, else 0 (its norm one compiled sum over ``v``,
    :func:`._products_kernels.signs_energy`). ``images`` keeps the class images.
    """
    y, c, mode = arrays.y, arrays.c, arrays.intercept.mode
    if ops.sparse:
        images, z, sums = products.certificate_sparse(*ops.parts, *ops.rows_for(w), arrays.X.shape[1], c, y, alpha,
                                                      arrays.upper, w)
    else:
        images, z, sums = products.certificate_dense(arrays.X, c, y, alpha, arrays.upper, w)
    S = float(sums[0] - sums[1])
    fp, fn = class_balance(float(sums[0]), float(sums[1])) if mode == "free" else (1.0, 1.0)
    if relax is not None and kern.outside(fp * images[0] + fn * images[1], relax.index, relax.a, relax.b):
        return None
    best = arrays.best_primal(w, z, S, b_hint)
    alpha_t = products.balanced_alpha(alpha, y, arrays.upper, fp, fn)
    conjugate = products.signs_energy(images[0], images[1], fp, fn, arrays.sg) / (2.0 * arrays.l2)  # (λ/2)‖w(α̃)‖²
    D = dual_value(arrays.loss, c, alpha_t, conjugate, arrays.intercept, 0.0 if mode == "free" else S)
    return DualCertificate(best[0], D, w, best[1], scale=arrays.weight_total, images=images, S=S)


register(
    Backend(
        name="dcd",
        solve=solve_dcd,
        needs=NEEDS,
        summary="dual coordinate descent (liblinear-style, compiled): hinge/squared hinge + L2, signs, "
                "free or ridge intercept; certified by the duality gap",
        options=frozenset({"shrinking", "check_every", "rho", "time_limit", "single_precision"}),
        kind="first-order",
        certificate="duality gap P(w, b) − D(α, β) (absolute); history has the relative gap",
        defaults=DEFAULTS,
    ),
    replace=True,
)

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
The stopping rule and certificate is the duality gap ``P(w, b) − D(α̃, β̃)`` at a
primal point (an exponential average of the recent sign-feasible iterates) and a
dual-feasible point rebuilt from all samples and features. The derivation is
in ``docs/derivations/dcd.md``.
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from ..model import Model
from ..objective import objective_from_margins, optimal_intercept
from . import _dcd_kernels as kern
from .registry import Backend, History, Needs, Result, register

__all__ = ["NEEDS", "best_intercept", "solve_dcd"]

#: a finite stand-in for ±∞ in the clip bounds (the kernels use fastmath without the no-inf flag anyway)
_HUGE = 1e300


#: what dcd solves: the nominal linear (squared-)hinge + L2 model, signs, any intercept
NEEDS = Needs(
    losses=frozenset({"hinge", "squared_hinge"}),
    l2="required",
    l1=False,
    sets=(),
    why={"loss": "it needs a soft-margin loss",
         "l1": "it handles an L2 penalty only (the L1 term makes the dual non-smooth in w)",
         "sets": "the robust margin couples every sample through the support function of w, so the dual "
                 "loses its one-coordinate-per-sample form"},
)


def best_intercept(z: np.ndarray, y: np.ndarray, c: np.ndarray, squared: bool) -> float:
    """Exact minimizer over a free ``b`` of ``Σ_i c_i ℓ(y_i(z_i + b))``.

    For the hinge, the smallest breakpoint ``t_i = y_i − z_i`` where the weight of the
    breakpoints at or below it reaches ``Σ_{y_i=+1} c_i`` (the slope changes sign there), found
    by a weighted selection in O(n) expected (:func:`._dcd_kernels.weighted_quantile`); for the
    squared hinge, :func:`robustsvm.objective.optimal_intercept` (one sort).
    """
    if not squared:
        return float(kern.weighted_quantile(y - z, c, float(c[y > 0].sum())))
    return optimal_intercept(z, y, c, squared=squared)


class _Certificate:
    """Primal value, dual value and the primal point at one evaluation."""

    __slots__ = ("D", "P", "b", "w")

    def __init__(self, P: float, D: float, w: np.ndarray, b: float) -> None:
        self.P, self.D, self.w, self.b = P, D, w, b

    @property
    def gap(self) -> float:
        return max(self.P - self.D, 0.0)

    @property
    def rel_gap(self) -> float:
        return self.gap / max(abs(self.P), np.finfo(float).tiny)


class _Products:
    """The two O(nnz) products of the certificate, compiled, for a dense or CSR ``X``."""

    def __init__(self, X) -> None:
        self.X = X
        self.sparse = sp.issparse(X)
        if self.sparse:
            self.parts = (X.indptr, X.indices,
                          np.ascontiguousarray(X.data, dtype=np.float64))
        self.restricted = None  # (CSR parts without some columns, mask of those columns)

    def images(self, u: np.ndarray, pos: np.ndarray) -> np.ndarray:
        """``[Σ_{y_i>0} u_i x_i, Σ_{y_i<0} u_i x_i]`` as a (2, d) array."""
        if self.sparse:
            return kern.dual_images_sparse(*self.parts, self.X.shape[1], u, pos)
        return kern.dual_images_dense(self.X, u, pos)

    def restrict(self, parts, dropped: np.ndarray) -> None:
        """Use the CSR ``parts`` that lack the columns ``dropped`` for products with a ``w`` zero there."""
        self.restricted = (parts, dropped)

    def matvec(self, w: np.ndarray) -> np.ndarray:
        """``X @ w`` (from the restricted rows when ``w`` is zero on their dropped columns: the same product)."""
        if self.sparse:
            if self.restricted is not None and not np.any(w[self.restricted[1]]):
                return kern.matvec_sparse(*self.restricted[0], w)
            return kern.matvec_sparse(*self.parts, w)
        return kern.matvec_dense(self.X, w)


def _certify(model, ops, alpha, lo, hi, b_eff, v_out=None, w_avg=None) -> _Certificate:
    """Evaluate ``P`` at a sign-feasible primal point and ``D`` at a dual-feasible point.

    Primal: ``w_avg`` when given (any sign-feasible point certifies; the solver passes an
    average of its recent iterates), else ``w = clip(Xᵀ(c∘y∘α), lo, hi)/λ`` (the exact β); ``b`` its exact
    minimizer (free), ``S/μ`` (ridge) or 0. Dual: ``α`` itself, except with a free
    intercept where the class with the larger ``Σ c_i α_i`` is scaled down so that
    ``S = 0`` (still inside the box), and ``β`` at its closed form. Two O(nnz)
    products and, with a free intercept, one selection (hinge) or sort. ``P`` is the
    package's objective (:func:`robustsvm.objective.objective_from_margins`). ``v_out``,
    when given, receives ``v = Xᵀ(c∘y∘α)`` recomputed from all samples and features.
    """
    y, c, lam = model.y, model.c, model.l2
    squared = model.loss.name == "squared_hinge"
    mode = model.intercept.mode
    pos = y > 0
    cya = c * y * alpha
    VV = ops.images(cya, pos)
    v = VV[0] + VV[1]
    if v_out is not None:
        v_out[:] = v
    v_t, alpha_t = v, alpha
    if mode == "free":
        p_sum, n_sum = float(cya[pos].sum()), float(-cya[~pos].sum())
        if p_sum > n_sum:
            f = n_sum / p_sum
            alpha_t = np.where(pos, f * alpha, alpha)
            v_t = f * VV[0] + VV[1]
        elif n_sum > p_sum:
            f = p_sum / n_sum
            alpha_t = np.where(pos, alpha, f * alpha)
            v_t = VV[0] + f * VV[1]
    S = float(cya.sum())
    w = np.clip(v, lo, hi) / lam if w_avg is None else w_avg.copy()
    z = ops.matvec(w)
    if mode == "free":
        candidates = [best_intercept(z, y, c, squared), b_eff]
    else:
        candidates = [model.intercept.from_dual(S)]
    best = None
    for b in candidates:
        P = objective_from_margins(model, w, b, y * (z + b))
        if best is None or P < best[0]:
            best = (P, b)
    P, b = best
    wt = np.clip(v_t, lo, hi) / lam
    D = kern.dot(c, model.loss.dual_term(alpha_t)) - 0.5 * lam * kern.dot(wt, wt) + model.intercept.dual_value(
        S if mode != "free" else 0.0)
    return _Certificate(P, D, w, b)


#: freeze the features clipped by their sign at two certificates in a row (sparse data with signs)
FEATURE_SHRINKING = True
#: weight of the newest iterate in the exponential average of the primal iterates that the certificate evaluates
AVG_WEIGHT = 0.25
#: a clipped feature is frozen when ``s_h v_h`` is below −FREEZE_MARGIN times its change since the last certificate
FREEZE_MARGIN = 1.0
#: rebuild the restricted rows only when the newly frozen features hold at least this fraction of the stored entries
_REBUILD_FRACTION = 0.02


class _FeatureShrinking:
    """The set of features frozen at 0 between certificates (sparse X with sign constraints).

    A constrained feature whose unconstrained image ``v_h`` is on the wrong side of its
    sign at a certificate (``s_h v_h < 0``: clipped, ``w_h = 0``) by more than it moved
    since the previous certificate (``s_h v_h + FREEZE_MARGIN·|Δv_h| < 0``) is removed
    from the rows the epochs see, which then solve the model with ``w_h = 0`` fixed for
    those features (``β_h`` unrestricted in sign). The rows are rebuilt (one O(nnz)
    pass) when a frozen feature must be restored or the newly frozen ones hold at least
    ``_REBUILD_FRACTION`` of the stored entries. The certificate is computed
    on the full model from all samples and features, so the gap stays valid; when it
    finds a frozen feature free (``s_h v_h ≥ 0``) the feature is restored and never
    frozen again, so the rows are rebuilt finitely often and the last phase is the
    plain method.
    """

    def __init__(self, indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, sg: np.ndarray, c: np.ndarray,
                 lam: float, rho: float, dii: float) -> None:
        self.indptr, self.indices, self.data = indptr, indices, data
        self.sg, self.c, self.lam, self.rho, self.dii = sg, c, lam, rho, dii
        d = sg.size
        self.col_nnz = np.bincount(indices, minlength=d)
        self.frozen = np.zeros(d, dtype=bool)
        self.released = np.zeros(d, dtype=bool)  # frozen once and found free: never frozen again
        self.prev_v = np.zeros(d)
        self.first = True
        self.stored = int(indices.size)  # stored entries of the current rows
        self.rebuilds = 0

    def observe(self, v: np.ndarray) -> None:
        """Record ``v`` as the image the next :meth:`update` compares with."""
        self.prev_v = v.copy()
        self.first = False

    def update(self, v: np.ndarray) -> list | None:
        """Revise the frozen set from ``v = Xᵀ(c∘y∘α)``; the new ``[indptr, indices, data, qdiag]`` or None."""
        sv = self.sg * v
        clipped = sv < 0.0
        back = self.frozen & ~clipped
        self.released |= back
        # clipped now and before, and farther from the boundary than it moved since the last certificate
        want = clipped & (sv + FREEZE_MARGIN * np.abs(v - self.prev_v) < 0.0) & ~self.released
        if self.first:  # no earlier image to compare with
            want[:] = False
        self.observe(v)
        added = int(self.col_nnz[want & ~self.frozen].sum())
        if not back.any() and added < _REBUILD_FRACTION * max(self.stored, 1):
            return None
        self.frozen = want
        ptr, idx, dat, sq = kern.restrict_columns(self.indptr, self.indices, self.data, ~want)
        self.stored = int(idx.size)
        self.rebuilds += 1
        return [ptr, idx, dat, self.c * (sq / self.lam + self.rho) + self.dii]


#: first threshold of the projected-gradient spread that restores the shrunk samples and triggers a certificate
PG_EPS0 = 1e-3


class Shrinking:
    """liblinear's outer shrinking schedule over the epochs of a dual coordinate method.

    The compiled epoch sets aside samples at a bound whose gradient points out of the box by more than the
    previous epoch's largest violation (``pg_max_old``, ``pg_min_old``). When the spread of the projected
    gradients on the active set falls below ``pg_eps`` the shrunk problem looks solved: every sample is
    restored, or, if none was set aside, ``pg_eps`` is divided by 10.
    """

    def __init__(self, n_total: int) -> None:
        self.n_total = n_total
        self.active = n_total
        self.pg_max_old, self.pg_min_old = np.inf, -np.inf
        self.pg_eps = PG_EPS0

    def after_epoch(self, active: int, pg_max_new: float, pg_min_new: float) -> bool:
        """Record an epoch's active count and projected-gradient extremes; True when the active set looked solved."""
        self.active = active
        if active == 0 or pg_max_new - pg_min_new <= self.pg_eps:
            if active < self.n_total:  # looks optimal on the shrunk set: restore every sample
                self.active = self.n_total
                self.pg_max_old, self.pg_min_old = np.inf, -np.inf
            else:
                self.pg_eps *= 0.1
            return True
        self.pg_max_old = pg_max_new if pg_max_new > 0 else np.inf
        self.pg_min_old = pg_min_new if pg_min_new < 0 else -np.inf
        return False


def _next_check(last, now, tol: float, check_every: int, stalls: int = 0) -> int:
    """Epochs until the next certificate.

    The relative gap of coordinate descent falls roughly geometrically; from the
    last two certificates, ``k = log(gap/tol) / rate`` epochs remain. The next
    certificate comes after ``0.7 k`` epochs, between 2 and
    ``3·check_every·2^min(stalls, 4)`` (``check_every`` while no rate is known), where
    ``stalls`` counts the consecutive certificates that did not halve the gap: where
    the ascent stalls (tiny λ, nearly hard-margin data) certificates, which cost a pass
    over the data and Python work each, are spaced out. The schedule depends on the
    iterates only, never on timings, so a seeded solve is reproducible.
    """
    if last is None or now[1] <= 0 or last[1] <= now[1] or now[0] <= last[0]:
        return check_every * 2 ** min(stalls, 4)
    rate = (np.log(last[1]) - np.log(now[1])) / (now[0] - last[0])
    k = np.log(max(now[1], tol) / tol) / rate
    return int(min(max(np.ceil(0.7 * k), 2), 3 * check_every * 2 ** min(stalls, 4)))


def _stalls(last, now, stalls: int) -> int:
    """``stalls + 1`` when the certificate ``now`` did not halve the relative gap of ``last``, else 0."""
    return stalls + 1 if last is not None and now[1] > 0.5 * last[1] else 0


class CertificateSchedule:
    """When a dual coordinate loop evaluates its next certificate (:func:`_next_check`, :func:`_stalls`).

    A certificate is due after the predicted number of epochs, at the last epoch, or (after at least two
    epochs) when the shrunk problem looked solved.
    """

    def __init__(self, tol: float, check_every: int, max_iter: int) -> None:
        self.tol, self.check_every, self.max_iter = tol, check_every, max_iter
        self.since = 0
        self.next = check_every
        self.last = None  # (epoch, relative gap) of the previous certificate
        self.stalls = 0

    def due(self, epoch: int, looked_solved: bool) -> bool:
        """Count one epoch; True (and restart the count) when a certificate is due after it."""
        self.since += 1
        due = self.since >= self.next or epoch == self.max_iter or (looked_solved and self.since >= 2)
        if due:
            self.since = 0
        return due

    def record(self, epoch: int, rel_gap: float) -> None:
        """Take a certificate's relative gap into the schedule."""
        now = (epoch, rel_gap)
        self.stalls = _stalls(self.last, now, self.stalls)
        self.next = _next_check(self.last, now, self.tol, self.check_every, self.stalls)
        self.last = now


def intercept_rho(mode: str, rho: float | None, c: np.ndarray, sq_norms: np.ndarray, lam: float,
                  mu: float) -> float:
    """The intercept's weight ρ in the dual steps: ``1/μ`` (ridge, mode ``"l2"``), 0 (none), or for a free
    intercept the augmented-Lagrangian weight (default ``0.1·mean‖x_i‖²/λ`` over the weighted samples)."""
    if mode == "l2":
        return 1.0 / mu
    if mode != "free":
        return 0.0
    if rho is None:
        weighted = c > 0
        mean_sq = float(sq_norms[weighted].mean()) if np.any(weighted) else 0.0
        rho = 0.1 * (mean_sq if mean_sq > 0 else 1.0) / lam
    rho = float(rho)
    if not np.isfinite(rho) or rho <= 0:
        raise ValueError(f"rho must be positive, got {rho!r}")
    return rho


def certified_result(cert, *, status: str, epoch: int, tol: float, mode: str, hist: History, t_start: float,
                     t_solve0: float, extra: dict) -> Result:
    """The :class:`Result` of a dual coordinate method from its best certificate (``dcd``, ``robust-dcd``)."""
    message = (f"relative duality gap {cert.rel_gap:.3g} after {epoch} epochs"
               + ("" if status == "optimal" else f" (tolerance {tol:g} not reached)"))
    return Result(
        w=cert.w, b=float(cert.b) if mode != "none" else 0.0, status=status, gap=cert.gap, iterations=epoch,
        history=hist.arrays(), time_compile=t_solve0 - t_start, time_solve=time.perf_counter() - t_solve0,
        message=message, dual_value=cert.D,
        extra={"dual_objective": cert.D, "primal_objective": cert.P, "rel_gap": cert.rel_gap, **extra},
    )


class _Prepared:
    """The arrays and constants of one solve (see :func:`_prepare`)."""

    __slots__ = ("X", "c", "dii", "hi", "lo", "mode", "mu", "qdiag", "rho", "sg", "upper", "y")


def _prepare(model: Model, rho: float | None) -> _Prepared:
    """Contiguous data, the clip bounds of the signs, ρ and the diagonal ``Q_ii`` of the dual.

    ``mode`` is ``"free"``, ``"none"`` or ``"l2"`` (ridge); ``ρ`` is the augmented-Lagrangian
    weight of a free intercept (default ``0.1·mean‖x_i‖²/λ``), ``1/μ`` for a ridge one, 0 without.
    """
    p = _Prepared()
    lam = model.l2
    squared = model.loss.name == "squared_hinge"
    p.mode = {"ridge": "l2"}.get(model.intercept.mode, model.intercept.mode)
    p.mu = model.intercept.mu
    X = model.X
    p.y = np.ascontiguousarray(model.y, dtype=np.float64)
    p.c = model.c
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        sq_norms = np.asarray(X.multiply(X).sum(axis=1)).ravel()
    else:
        X = np.ascontiguousarray(X, dtype=np.float64)
        sq_norms = np.einsum("ij,ij->i", X, X)
    p.X = X
    signs = np.asarray(model.signs)
    p.lo = np.where(signs > 0, 0.0, -_HUGE)
    p.hi = np.where(signs < 0, 0.0, _HUGE)
    p.sg = np.ascontiguousarray(signs, dtype=np.int8)
    p.rho = rho = intercept_rho(p.mode, rho, p.c, sq_norms, lam, p.mu)
    p.upper = np.inf if squared else 1.0
    p.dii = 0.5 if squared else 0.0
    p.qdiag = p.c * (sq_norms / lam + rho) + p.dii
    return p


def _epoch_runner(p: _Prepared, lam, alpha, v, w, state, index, shrinking: bool, rng_state):
    """``(run_epoch, rows, features)``: one compiled epoch over the active samples.

    ``rows`` holds the (CSR) rows the sparse epochs read — all of ``X``, or ``X``
    without the frozen features of ``features`` (a :class:`_FeatureShrinking`, on
    sparse data with signs; None otherwise).
    """
    y, c, sg, upper, dii, rho = p.y, p.c, p.sg, p.upper, p.dii, p.rho
    local = bool(np.any(sg != 0))  # sparse rows: try the local-curvature step (kernel docstring)
    features = None
    if sp.issparse(p.X):
        X = p.X
        vals = np.ascontiguousarray(X.data, dtype=np.float64)
        rows = [X.indptr, X.indices, vals, p.qdiag]
        if local and shrinking and FEATURE_SHRINKING:
            features = _FeatureShrinking(X.indptr, X.indices, vals, sg, c, lam, rho, dii)

        def run_epoch(active, pg_max_old, pg_min_old):
            return kern.epoch_sparse(rows[0], rows[1], rows[2], y, c, rows[3], alpha, v, w, sg, 1.0 / lam, upper,
                                     dii, rho, state, index, active, pg_max_old, pg_min_old, shrinking,
                                     rng_state, local)
        return run_epoch, rows, features

    def run_epoch(active, pg_max_old, pg_min_old):
        return kern.epoch_dense(p.X, y, c, p.qdiag, alpha, v, w, sg, 1.0 / lam, upper, dii, rho, state,
                                index, active, pg_max_old, pg_min_old, shrinking, rng_state)
    return run_epoch, None, features


def solve_dcd(model: Model, *, tol=None, max_iter=None, verbose=False, random_state=None,
              shrinking=True, check_every=10, rho=None) -> Result:
    """Solve a sign-constrained (squared-)hinge + L2 SVM by dual coordinate descent.

    Parameters
    ----------
    model : Model
        A normalized model inside :data:`NEEDS`.
    tol : float, default 1e-4
        Stop when the relative duality gap ``(P − D)/|P|`` is at most ``tol``.
    max_iter : int, default 1000
        Maximum number of epochs (one pass over the active samples each).
    verbose : bool
        Print one line per certificate evaluation.
    random_state : int, optional
        Seed of the per-epoch permutations.
    shrinking : bool, default True
        Drop bounded variables whose gradient points outside the box (liblinear's rule),
        restoring all of them when the active set looks optimal; on sparse data with signs,
        also freeze between certificates the features that stay clipped by their sign
        (:class:`_FeatureShrinking`).
    check_every : int, default 10
        Epochs between certificates while their rate of decrease is unknown; then the
        schedule follows the predicted number of epochs to ``tol`` (between 2 and
        ``3·check_every``). A certificate is also evaluated when the projected-gradient
        spread drops below its threshold.
    rho : float, optional
        Augmented-Lagrangian weight for a free intercept; default ``0.1·mean‖x_i‖²/λ`` (tuned on the
        benchmark shapes: see ``docs/derivations/dcd.md``).

    Returns
    -------
    Result
        ``gap`` is the absolute duality gap ``P − D``; ``history`` has one row per
        certificate (``iteration`` = epoch, ``objective`` = best P so far, ``dual`` = best D so far, ``gap``,
        ``rel_gap``, ``time``, ``active``); ``extra`` has the dual value, the final α,
        ``rho``, the time spent evaluating certificates (``time_certificates``), the number of
        features frozen at the end (``frozen_features``) and of rebuilds of the restricted rows
        (``restrictions``).
    """
    t_start = time.perf_counter()
    tol = 1e-4 if tol is None else float(tol)
    max_iter = 1000 if max_iter is None else int(max_iter)
    check_every = int(check_every)
    if check_every < 1:
        raise ValueError(f"check_every must be a positive integer, got {check_every!r}")
    if not isinstance(shrinking, (bool, np.bool_)):
        raise TypeError(f"shrinking must be True or False, got {shrinking!r}")
    prep = _prepare(model, rho)
    X, c, lam, mode, rho = prep.X, prep.c, model.l2, prep.mode, prep.rho
    lo, hi = prep.lo, prep.hi
    n, d = X.shape
    alpha = np.zeros(n)
    v = np.zeros(d)
    w = np.zeros(d)
    state = np.zeros(2)  # [b0 (intercept multiplier), S = Σ c_i y_i α_i]
    index = np.flatnonzero(c > 0).astype(np.int64)
    n_total = index.size
    # state of the kernels' xorshift generator (odd, hence non-zero), seeded from random_state
    rng_state = np.array([np.random.default_rng(random_state).integers(1, 2**62) * 2 + 1], dtype=np.uint64)
    run_epoch, rows, features = _epoch_runner(prep, lam, alpha, v, w, state, index, bool(shrinking), rng_state)

    ops = _Products(X)
    v_full = np.empty(d)
    w_avg = np.zeros(d)
    hist = History()
    shrink = Shrinking(n_total)
    schedule = CertificateSchedule(tol, check_every, max_iter)
    status = "max_iter"
    cert = None
    time_cert = 0.0
    t_solve0 = time.perf_counter()
    hist.restart()
    epoch = 0
    while epoch < max_iter:
        active, pg_max_new, pg_min_new, _ = run_epoch(shrink.active, shrink.pg_max_old, shrink.pg_min_old)
        epoch += 1
        if mode == "free":
            state[0] += rho * state[1]  # multiplier step of the augmented Lagrangian
        kern.average_into(w_avg, w, AVG_WEIGHT)  # exponential average of the sign-feasible iterates (derivation §4)
        if not schedule.due(epoch, shrink.after_epoch(active, pg_max_new, pg_min_new)):
            continue
        b_eff = state[0] + rho * state[1]
        t_cert = time.perf_counter()
        new = _certify(model, ops, alpha, lo, hi, b_eff,
                       v_out=v_full if features is not None else None, w_avg=w_avg)
        if features is not None:
            # resynchronize v and w on every feature (the frozen ones were not followed) and revise the frozen set
            v[:] = v_full
            np.clip(v_full, lo, hi, out=w)
            w /= lam
            restricted = features.update(v_full)
            if restricted is not None:
                rows[:] = restricted
                w_avg[features.frozen] = 0.0  # still sign-feasible; lets the certificate use the restricted rows
                ops.restrict(restricted[:3], features.frozen)
        # keep the best primal point and the best dual value so far: both bounds stay valid
        if cert is None:
            cert = new
        else:
            best = new if new.P <= cert.P else cert
            cert = _Certificate(best.P, max(new.D, cert.D), best.w, best.b)
        time_cert += time.perf_counter() - t_cert
        schedule.record(epoch, cert.rel_gap)
        hist.record(epoch, cert.P, cert.gap, dual=cert.D, rel_gap=cert.rel_gap, active=active)
        if verbose:
            print(f"dcd epoch {epoch:5d}  P={cert.P:.10g}  D={cert.D:.10g}  rel.gap={cert.rel_gap:.3e}  "
                  f"active={active}/{n_total}")
        if cert.rel_gap <= tol:
            status = "optimal"
            break
    return certified_result(cert, status=status, epoch=epoch, tol=tol, mode=mode, hist=hist, t_start=t_start,
                            t_solve0=t_solve0,
                            extra={"dual_alpha": alpha, "margin_multipliers": model.c * alpha, "rho": rho,
                                   "time_certificates": time_cert, "certificates": len(hist),
                                   "frozen_features": 0 if features is None else int(features.frozen.sum()),
                                   "restrictions": 0 if features is None else features.rebuilds})


register(
    Backend(
        name="dcd",
        solve=solve_dcd,
        needs=NEEDS,
        summary="dual coordinate descent (liblinear-style, compiled): hinge/squared hinge + L2, signs, "
                "free or ridge intercept; certified by the duality gap",
        options=frozenset({"shrinking", "check_every", "rho"}),
        kind="first-order",
        certificate="duality gap P(w, b) − D(α, β) (absolute); history has the relative gap",
    ),
    replace=True,
)

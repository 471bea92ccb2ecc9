"""The toolkit of the dual coordinate methods (``dcd``, ``robust-dcd``) and of the certificates they share with
``feature-ipm``.

* :class:`Products`: the two O(nnz) products of a certificate (class images ``Σ u_i x_i`` and ``X w``), compiled
  (:mod:`._products_kernels`);
* :func:`intercept_rho`: the intercept's weight ρ in the dual steps (augmented Lagrangian of ``S = 0``);
* :class:`DualCertificate`: the one certificate type — primal value ``P``, dual value ``D``, the primal point;
* :class:`Shrinking` and :class:`CertificateSchedule`: liblinear's outer shrinking and when to certify;
* :func:`ascend`: the epoch loop (epoch, multiplier step, schedule, certificate, stopping rule) and
  :func:`certified_result`, the :class:`~robustsvm.result.Result` of its best certificate.

The derivations are in ``docs/derivations/dcd.md`` and ``docs/derivations/robust_dcd.md``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from . import _dcd_kernels as kern
from . import _products_kernels as products
from .registry import History, Needs, Result

__all__ = ["MIN_PASS", "ORDER_BLOCK", "ORDER_MIN_BYTES", "Ascent", "CertificateSchedule", "DualCertificate", "Products",
           "Shrinking", "Specialized", "argument_types", "ascend", "certified_result", "compiled_entry",
           "intercept_rho", "next_check", "order_block", "soft_margin_needs", "stalls", "visiting_order"]

#: the rows of a block of the epochs' visiting order (:func:`._dcd_kernels.shuffle`; 0: a plain permutation always),
#: the same at every size of the data: 64 saves a fifth of a pass at 160 MB but not the time to the certified gap
ORDER_BLOCK = 32
#: the bytes of the active rows from which they are visited by blocks, dense and CSR (a CSR row is read from two
#: arrays): 4× and 1× the L2 cache of the benchmark machine; below, blocks cost more epochs than the reads they save
#: (``robust-dcd``'s; ``dcd`` reads its CSR rows by blocks from fewer bytes, :data:`.dcd.ORDER_MIN_BYTES`)
ORDER_MIN_BYTES = {"dense": 2**23, "sparse": 2**21}


def order_block(X, min_bytes: dict | None = None) -> tuple[int, int]:
    """:data:`ORDER_BLOCK` and the fewest active samples visited by blocks (:func:`._dcd_kernels.shuffle`): those
    that fill ``min_bytes`` (default :data:`ORDER_MIN_BYTES`; keys ``"dense"`` and ``"sparse"``) at the mean bytes
    of a row (dense: ``d`` values; CSR: stored entries and their int32 indices). The block length does not grow
    with the bytes of the rows. Derivation §7."""
    sparse = sp.issparse(X)
    row_bytes = X.nnz * (X.dtype.itemsize + 4) / max(X.shape[0], 1) if sparse else X.shape[1] * X.itemsize
    limits = ORDER_MIN_BYTES if min_bytes is None else min_bytes
    rows = np.ceil(limits["sparse" if sparse else "dense"] / max(row_bytes, 1.0))
    return (int(ORDER_BLOCK), int(rows)) if ORDER_BLOCK > 0 else (0, 0)


def visiting_order(seed, X=None, min_bytes: dict | None = None) -> np.ndarray:
    """The epochs' visiting order as a one-record array of :data:`._dcd_kernels.ORDER`: the generator's state
    drawn from ``seed`` (odd, hence non-zero) and, for data ``X``, the block length and threshold of
    :func:`order_block` (with ``min_bytes``; without ``X``: a plain permutation every epoch)."""
    out = np.zeros(1, dtype=kern.ORDER)
    block = order_block(X, min_bytes) if X is not None else (0, 0)
    out[0] = (np.random.default_rng(seed).integers(1, 2**62) * 2 + 1, *block)
    return out


#: the smallest positive normal float64
_TINY = float(np.finfo(float).tiny)
#: a gap below this fraction of the objective's scale ``Σ_i c_i`` (its value at ``w = 0, b = 0``) counts as 0 in the
#: relative gap: at an optimum at or near 0 (one class weighted zero) the relative gap has no meaning
TRIVIAL_SCALE = 1e-9


def soft_margin_needs(name: str, *, why: dict[str, str] | None = None, **fields) -> Needs:
    """What a dual coordinate method solves: a hinge or squared hinge loss (its dual is a box-constrained quadratic,
    one coordinate per sample) and ``λ2 > 0`` (``w(α)`` needs the penalty's strong convexity); ``fields`` are
    the rest of the backend's :class:`~.registry.Needs` and ``why`` its reasons for refusing the rest."""
    return Needs(losses=frozenset({"hinge", "squared_hinge"}), l2="required",
                 why={"loss": f"{name} needs a soft-margin loss", **(why or {})}, **fields)


class DualCertificate:
    """Primal value ``P``, dual value ``D`` and the primal point ``(w, b)`` of one evaluation.

    ``gap = max(P − D, 0)`` bounds ``P − P*``; ``rel_gap = gap / max(|P|, TRIVIAL_SCALE·scale)`` with ``scale``
    the objective's value at ``w = 0, b = 0`` (``Σ c_i``), so that an optimum at 0 is certified by its absolute
    gap. ``images`` keeps ``[Σ_{y_i>0} c_i α_i y_i x_i, Σ_{y_i<0} …]`` of the certified ``α`` and ``S`` its
    ``Σ_i c_i y_i clip(α_i, 0, U)`` (a fresh evaluation only: a merged certificate drops them; NaN where not formed).
    """

    __slots__ = ("D", "P", "S", "b", "images", "scale", "w")

    def __init__(self, P: float, D: float, w: np.ndarray, b: float, *, scale: float = 0.0, images=None,
                 S: float = float("nan")) -> None:
        self.P, self.D, self.w, self.b, self.scale, self.images = float(P), float(D), w, float(b), scale, images
        self.S = float(S)

    @property
    def gap(self) -> float:
        return max(self.P - self.D, 0.0)

    @property
    def rel_gap(self) -> float:
        return self.gap / max(abs(self.P), TRIVIAL_SCALE * self.scale, _TINY)

    def merge(self, new: DualCertificate) -> DualCertificate:
        """The better primal point of ``self`` and ``new`` with the larger dual value: both bounds stay valid."""
        best = new if new.P <= self.P else self
        return DualCertificate(best.P, max(new.D, self.D), best.w, best.b, scale=max(self.scale, new.scale))


class Products:
    """The two O(nnz) products of the certificate, compiled, for a dense or CSR ``X``."""

    def __init__(self, X) -> None:
        self.X = X
        self.sparse = sp.issparse(X)
        if self.sparse:
            self.parts = products.csr_parts(X)
        self.restricted = None  # (CSR parts without some columns, the indices of those columns)

    def images(self, u: np.ndarray, pos: np.ndarray) -> np.ndarray:
        """``[Σ_{y_i>0} u_i x_i, Σ_{y_i<0} u_i x_i]`` as a (2, d) array."""
        if self.sparse:
            return products.dual_images_sparse(*self.parts, self.X.shape[1], u, pos)
        return products.dual_images_dense(self.X, u, pos)

    def restrict(self, parts, dropped: np.ndarray) -> None:
        """Use the CSR ``parts`` that lack the columns ``dropped`` (a boolean mask) for products with a ``w`` zero
        there."""
        self.restricted = (parts, np.flatnonzero(dropped))

    def rows_for(self, w: np.ndarray) -> tuple:
        """The CSR parts to multiply ``w`` with: the restricted rows when ``w`` is zero on their dropped columns
        (the same product, fewer entries), else all of ``X``."""
        if self.restricted is not None and not products.any_nonzero_at(w, self.restricted[1]):
            return self.restricted[0]
        return self.parts

    def matvec(self, w: np.ndarray) -> np.ndarray:
        """``X @ w`` (from :meth:`rows_for`)."""
        if self.sparse:
            return products.matvec_sparse(*self.rows_for(w), w)
        return products.matvec_dense(self.X, w)


def intercept_rho(intercept, rho: float | None, c: np.ndarray, sq_norms: np.ndarray, lam: float,
                  factor: float = 0.1) -> float:
    """The intercept's weight ρ in the dual steps: ``1/μ`` (ridge), 0 (none), or for a free intercept the
    augmented-Lagrangian weight (default ``factor·mean‖x_i‖²/λ`` over the weighted samples)."""
    if intercept.mode == "ridge":
        return 1.0 / intercept.mu
    if intercept.mode != "free":
        return 0.0
    if rho is None:
        weighted = c > 0
        mean_sq = float(sq_norms[weighted].mean()) if np.any(weighted) else 0.0
        rho = factor * (mean_sq if mean_sq > 0 else 1.0) / lam
    rho = float(rho)
    if not np.isfinite(rho) or rho <= 0:
        raise ValueError(f"rho must be positive, got {rho!r}")
    return rho


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

    def restore(self) -> None:
        """Make every sample active again, with no shrinking threshold for the next epoch."""
        self.active = self.n_total
        self.pg_max_old, self.pg_min_old = np.inf, -np.inf

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


#: the most epochs between two certificates, in units of ``check_every`` (doubled per stall, up to 16×):
#: 3 → 5 took one or two certificates off every dcd solve of ``bench_dcd`` (Cora-shaped, KEEL) at the same passes
CAP_CHECKS = 5


def next_check(last, now, tol: float, check_every: int, stalls: int = 0, cert_epochs: float = 0.0,
               scale: float = 1.0) -> int:
    """Epochs until the next certificate.

    The relative gap of coordinate descent falls roughly geometrically; from the
    last two certificates, ``k = log(gap/tol) / rate`` epochs remain. The next
    certificate comes after ``0.7 k`` epochs, or, when a certificate costs ``cert_epochs`` epochs, after
    ``min(0.7 k + cert_epochs, 1.2 k + 1)`` if that is later: the rate slows near the end, so a certificate
    placed short of ``k`` tends to need another one, which costs more than the epochs run past the tolerance.
    The count is between 2 and ``5·check_every·2^min(stalls, 4)`` (``check_every`` while no rate is known), where
    ``stalls`` counts the consecutive certificates that did not halve the gap: where
    the ascent stalls (tiny λ, nearly hard-margin data) certificates, which cost a pass
    over the data and Python work each, are spaced out. ``scale`` multiplies the predicted count (below 1 when
    the caller expects its next certificate to fall faster than the last two did: dcd's margin-equation point).
    The schedule depends on the iterates only, never on timings, so a seeded solve is reproducible.
    """
    if last is None or now[1] <= 0 or last[1] <= now[1] or now[0] <= last[0]:
        return check_every * 2 ** min(stalls, 4)
    rate = (np.log(last[1]) - np.log(now[1])) / (now[0] - last[0])
    k = np.log(max(now[1], tol) / tol) / rate
    epochs = scale * max(0.7 * k, min(0.7 * k + cert_epochs, 1.2 * k + 1.0))
    return int(min(max(np.ceil(epochs), 2), CAP_CHECKS * check_every * 2 ** min(stalls, 4)))


def stalls(last, now, count: int) -> int:
    """``count + 1`` when the certificate ``now`` did not halve the relative gap of ``last``, else 0."""
    return count + 1 if last is not None and now[1] > 0.5 * last[1] else 0


class CertificateSchedule:
    """When a dual coordinate loop evaluates its next certificate (:func:`next_check`, :func:`stalls`).

    A certificate is due after the predicted number of epochs, at the last epoch, or (after at least two
    epochs) when the shrunk problem looked solved.
    """

    def __init__(self, tol: float, check_every: int, max_iter: int) -> None:
        self.tol, self.check_every, self.max_iter = tol, check_every, max_iter
        self.since = 0
        self.next = check_every
        self.last = None  # (epoch, relative gap) of the previous certificate
        self.stalls = 0

    def due(self, epoch: int, looked_solved: bool, last: bool = False) -> bool:
        """Count one epoch; True (and restart the count) when a certificate is due after it (``last``: the budget
        ends with it)."""
        self.since += 1
        due = self.since >= self.next or last or epoch == self.max_iter or (looked_solved and self.since >= 2)
        if due:
            self.since = 0
        return due

    def record(self, epoch: int, rel_gap: float, cert_epochs: float = 0.0, scale: float = 1.0) -> None:
        """Take a certificate's relative gap into the schedule (the rate from the previous certificate);
        ``cert_epochs`` is what a certificate costs in epochs and ``scale`` a factor on the prediction
        (:func:`next_check`)."""
        now = (epoch, rel_gap)
        self.stalls = stalls(self.last, now, self.stalls)
        self.next = next_check(self.last, now, self.tol, self.check_every, self.stalls, cert_epochs, scale)
        self.last = now


#: a certificate's cost in epochs over all the samples: one pass over the data for its products plus its Python work,
#: against two reads of each active row per epoch (gradient and step); :func:`next_check` weighs the epochs it may
#: run past the predicted end against ``CERT_PASSES · n_total / active``
CERT_PASSES = 1.0
#: in a budget counted in passes (``ascend(passes=True)``), an epoch costs at least this fraction of a pass (its
#: fixed cost: the call, the shrinking bookkeeping), so the number of epochs stays below ``max_iter / MIN_PASS``
MIN_PASS = 0.02


@dataclass
class Ascent:
    """What :func:`ascend` ran to: its best certificate, status, epochs, history and time spent certifying."""

    cert: DualCertificate
    status: str
    epoch: int
    history: History
    time_certificates: float
    t_start: float
    passes: float = 0.0


def ascend(run_epoch: Callable | None, certify: Callable, *, n_total: int, sums: np.ndarray, rho: float, free: bool,
           tol: float, check_every: int, max_iter: int, name: str, verbose: bool,
           after_epoch: Callable | None = None, first: DualCertificate | None = None,
           passes: bool = False, unshrink_after: int = 0, time_limit: float | None = None,
           block: Callable | None = None, cert_passes: float = CERT_PASSES,
           next_scale: Callable[[], float] | None = None) -> Ascent:
    """The epoch loop of a dual coordinate method.

    ``run_epoch(active, pg_max_old, pg_min_old)`` runs one compiled epoch and returns
    ``(active, pg_max_new, pg_min_new, n_updates)``; with a free intercept the multiplier ``b0`` of ``sums`` (a
    record of :data:`._dcd_kernels.SUMS`) then moves by ``ρ·S`` (the augmented Lagrangian of ``S = 0``);
    ``after_epoch()`` follows. When the :class:`CertificateSchedule` says so, ``certify(b_eff)``
    (``b_eff = b0 + ρ S``) evaluates a
    :class:`DualCertificate`; the best primal point and the best dual value so far are kept, and the loop stops
    when the relative gap is at most ``tol`` (status ``"optimal"``) or after ``max_iter`` epochs. ``first``, when
    given, is a certificate from before the first epoch (already below ``tol``: no epoch runs). With ``passes``
    the budget ``max_iter`` counts passes over the data: an epoch over ``a`` of the ``n_total`` samples (the
    active set liblinear's shrinking leaves) costs ``max(a/n_total, MIN_PASS)``, so that the cheap epochs of a
    shrunk problem do not exhaust the budget of a full pass. With ``unshrink_after = k > 0``, ``k`` certificates
    in a row that do not halve the gap while samples are set aside restore every sample (the shrunk problem has
    stalled: what it lacks is among the samples set aside). With ``time_limit`` (seconds), the first epoch that
    ends past it is followed by a certificate, and the loop stops there with status ``"time_limit"`` unless
    that certificate reaches ``tol``. ``block(shrink, epochs, passes_left, since)`` (with ``passes``), when given,
    replaces ``run_epoch`` and ``after_epoch``: it runs up to ``epochs`` epochs with the per-epoch steps above,
    the shrinking rule on ``shrink`` included, stopping early when the active set looks solved (once ``since`` plus
    its epochs reach 2) or the passes are spent, and returns ``(epochs, looked_solved, passes, active)``; the
    epochs then run in one compiled call up to the next certificate that is due (one at a time with a
    ``time_limit``). ``cert_passes`` is what a certificate costs in passes over the data (:data:`CERT_PASSES`;
    the schedule weighs it against the epochs it may run past the predicted end, :func:`next_check`);
    ``next_scale()``, asked after each certificate, is the factor on the epochs to the next one (1 without it).
    """
    if block is not None and not passes:
        raise ValueError("block needs a budget counted in passes")
    hist = History()
    shrink = Shrinking(n_total)
    schedule = CertificateSchedule(tol, check_every, 0 if passes else max_iter)  # passes: `last` ends it
    status, cert, time_cert, epoch = "max_iter", first, 0.0, 0
    work = 0.0  # passes over the data so far
    hist.restart()
    t_start = time.perf_counter()
    if first is not None:
        hist.record(0, first.P, first.gap, dual=first.D, rel_gap=first.rel_gap, active=n_total)
        if first.rel_gap <= tol:
            return Ascent(first, "optimal", 0, hist, 0.0, t_start)
    while (work if passes else epoch) < max_iter:
        if block is not None:  # several epochs in one call, up to the next certificate that is due
            epochs = 1 if time_limit is not None else max(schedule.next - schedule.since, 1)
            ran, looked, spent, active = block(shrink, epochs, max_iter - work, schedule.since)
        else:
            visited = shrink.active
            active, pg_max_new, pg_min_new, _ = run_epoch(visited, shrink.pg_max_old, shrink.pg_min_old)
            ran, spent = 1, max(visited / max(n_total, 1), MIN_PASS)
            if free:
                sums["b0"] += rho * sums["S"]  # multiplier step of the augmented Lagrangian
            if after_epoch is not None:
                after_epoch()
            looked = shrink.after_epoch(active, pg_max_new, pg_min_new)
        epoch += ran
        work += spent
        timed_out = time_limit is not None and time.perf_counter() - t_start >= time_limit
        last = (passes and work >= max_iter) or timed_out
        schedule.since += ran - 1
        if not schedule.due(epoch, looked, last):
            continue
        t_cert = time.perf_counter()
        new = certify(float(sums["b0"][0] + rho * sums["S"][0]))
        cert = new if cert is None else cert.merge(new)
        del new  # its arrays are not kept until the next certificate
        time_cert += time.perf_counter() - t_cert
        schedule.record(epoch, cert.rel_gap, cert_passes * n_total / max(active, 1),
                        1.0 if next_scale is None else next_scale())
        if unshrink_after and schedule.stalls >= unshrink_after and shrink.active < n_total:
            shrink.restore()
        hist.record(epoch, cert.P, cert.gap, dual=cert.D, rel_gap=cert.rel_gap, active=active)
        if verbose:
            print(f"{name} epoch {epoch:5d}  P={cert.P:.10g}  D={cert.D:.10g}  rel.gap={cert.rel_gap:.3e}  "
                  f"active={active}/{n_total}")
        if cert.rel_gap <= tol:
            status = "optimal"
            break
        if timed_out:
            status = "time_limit"
            break
    if cert is None:  # max_iter < 1 is refused by the callers
        raise RuntimeError(f"{name} evaluated no certificate")
    return Ascent(cert, status, epoch, hist, time_cert, t_start, work)


def certified_result(run: Ascent, *, tol: float, intercept, t_start: float, multipliers: np.ndarray,
                     dual_alpha: np.ndarray, extra: dict, unit: str = "epochs", message: str | None = None) -> Result:
    """The :class:`Result` of a certified method from its best certificate (``dcd``, ``robust-dcd``,
    ``feature-ipm``); ``multipliers`` are the margin multipliers ``c ∘ α`` of the dual point ``α``
    (``dual_alpha``)."""
    cert = run.cert
    if message is None:
        message = (f"relative duality gap {cert.rel_gap:.3g} after {run.epoch} {unit}"
                   + ("" if run.status == "optimal" else f" (tolerance {tol:g} not reached)"))
    return Result(
        w=cert.w, b=float(cert.b) if intercept.present else 0.0, status=run.status, gap=cert.gap,
        iterations=run.epoch, history=run.history.arrays(), time_compile=run.t_start - t_start,
        time_solve=time.perf_counter() - run.t_start, message=message, dual_value=cert.D,
        dual_feasible=True, multipliers=np.asarray(multipliers, dtype=np.float64), dual_alpha=dual_alpha,
        primal_objective=float(cert.P), rel_gap=float(cert.rel_gap),
        extra={"time_certificates": run.time_certificates, "certificates": len(run.history), **extra},
    )


#: compiled entry points by (dispatcher, argument types as :func:`argument_types` reads them)
_ENTRIES: dict = {}


def compiled_entry(dispatcher, args: tuple):
    """The compiled specialization of the numba dispatcher ``dispatcher`` for ``args`` (cached in :data:`_ENTRIES`):
    calling it skips numba's typing of the arguments, which for arrays in named tuples costs several times a short
    compiled call (dcd's and robust-dcd's epochs)."""
    key = (dispatcher, argument_types(args))
    entry = _ENTRIES.get(key)
    if entry is None:
        entry = _ENTRIES[key] = dispatcher.compile(tuple(dispatcher.typeof_pyval(a) for a in args))
    return entry


def argument_types(x) -> object:
    """What numba's typing reads of ``x``: an array's dtype, dimension, layout and flags, a tuple's type and
    items, a scalar's type."""
    if isinstance(x, np.ndarray):  # the flags: C and F contiguous, aligned, writeable (not who owns the data)
        return (x.dtype, x.ndim, x.flags.num & _TYPED_FLAGS)
    if isinstance(x, tuple):
        return (type(x), tuple([argument_types(a) for a in x]))
    return type(x)


#: the bits of ``ndarray.flags.num`` numba's typing reads: C_CONTIGUOUS, F_CONTIGUOUS, ALIGNED, WRITEABLE
_TYPED_FLAGS = 0x1 | 0x2 | 0x100 | 0x400


class Specialized:
    """A compiled function called through its specialization for the argument types, resolved again only when
    ``key`` changes to arrays of other types: numba's dispatch (typing a dozen arrays in named tuples) costs
    several times an epoch on a small shrunk set (18 µs against 3 µs per call on twonorm), and ill-conditioned
    data run thousands of them. ``key`` is a tuple of named tuples of arrays (the rows and the samples, which the
    frozen features replace); the arrays' dtype, dimension, layout and flags decide the specialization, so
    rows rebuilt with the same types keep it. The specializations are also kept between solves
    (:func:`.dual_ascent.compiled_entry`, by the types of every argument): numba's typing of the arguments
    costs about 0.3 ms."""

    def __init__(self, dispatcher) -> None:
        self.dispatcher, self.key, self.types, self.entry = dispatcher, None, None, None

    def __call__(self, key, *args):
        if key is not self.key:
            types = argument_types(key)  # what numba's typing reads of the arrays
            if types != self.types:
                self.entry = compiled_entry(self.dispatcher, args)
                self.types = types
            self.key = key
        return self.entry(*args)

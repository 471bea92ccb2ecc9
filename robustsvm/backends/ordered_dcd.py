"""Dual coordinate ascent with ordering priors (``ordered-dcd``): the prox of the chains after every step.

The model is

    minimize   (λ2/2)‖w‖² + λ1‖w‖₁ [+ (μ/2) b²] + Σ_i c_i ℓ(y_i (x_i·w + b))
    subject to l ≤ w ≤ u (signs included) and chains w_{G_1} ≤ … ≤ w_{G_m} (rs.Increasing, rs.Decreasing,
               rs.Order, rs.Equal, rs.ordered or difference rows of a LinearConstraint),

``ℓ`` the hinge or squared hinge. With ``h(w) = (λ2/2)‖w‖² + λ1‖w‖₁ + I_W(w)`` its dual is

    maximize   D(α) = Σ_i c_i (α_i − ℓ*(α_i)) − h*(v),     v = Σ_i c_i y_i α_i x_i,

and ``∇h*(v) = w(v)``, the prox of :class:`~robustsvm.priors.ordering.ChainStructure` (pool-adjacent-violators on
each chain), is ``1/λ2``-Lipschitz. Each α_i takes the step of the quadratic model with curvature
``c_i ‖x_i‖²/λ2`` (an upper bound, so every step raises ``D``), then ``w(v)`` is recomputed: O(d) per step, as
the step itself on dense rows. A free intercept is the augmented Lagrangian of ``S = Σ c_i y_i α_i = 0`` (its
multiplier is ``b``), as in ``dcd``; the epoch loop, its shrinking and certificate schedule are
:func:`.dual_ascent.ascend`'s. The certificate is the package's Lagrangian bound at the balanced ``α`` with the
chain rows' multipliers from :meth:`ChainStructure.multipliers`. The derivation is in
``docs/derivations/ordering.md``.
"""

from __future__ import annotations

import time
from collections import namedtuple
from dataclasses import replace

import numba as nb
import numpy as np
import scipy.sparse as sp

from ..certificates.duality import BoundTerms, admissible_multipliers, lagrangian_bound
from ..exceptions import UnsupportedModelError
from ..model import Model
from ..objective import objective_from_margins, optimal_intercept
from ..priors.base import Prior
from ..priors.constraints import Ordered
from ..priors.ordering import WORK_ROWS, ChainStructure, OrderingPrior, chain_prox_into, chain_structure
from ._compiled import FASTMATH
from ._dcd_kernels import SUMS
from .dual_ascent import (
    DualCertificate,
    ascend,
    certified_result,
    intercept_rho,
    soft_margin_needs,
)
from .registry import Backend, Result, register

__all__ = ["DEFAULTS", "NEEDS", "solve_ordered_dcd"]

#: ``tol`` (relative duality gap) and ``max_iter`` (epochs) when the caller gives none
DEFAULTS = {"tol": 1e-4, "max_iter": 20000}
#: a free intercept's augmented-Lagrangian weight ρ in units of ``mean‖x_i‖²/λ2``
RHO_FACTOR = 0.03
#: weight of the newest iterate in the exponential average of the iterates ``w(v)``, the certificate's second
#: primal point (the iterates of the hinge dual oscillate about the optimum; their average settles sooner)
AVG_WEIGHT = 0.25
#: certificates in a row at which the average beats the iterate, after which only the average is scored
AVERAGE_SETTLES = 2
#: certificates in a row that do not halve the gap before the samples set aside by the shrinking are restored
UNSHRINK_AFTER = 3

#: reassociation and contraction only (bounds may be infinite)
#: the maintained vectors: ``v``, ``w = w(v)``, ``sums = [b0, S, A]`` (read by the driver as one record of
#: the dual-coordinate family's named sums, :data:`SUMS`)
State = namedtuple("State", ["v", "w", "sums"])
#: per sample: labels ±1, loss coefficients, the step's curvature ``c_i(‖x_i‖²/λ2 + ρ) + δ``
Samples = namedtuple("Samples", ["y", "c", "qdiag"])
#: the weight set: bounds, the chains (:class:`ChainStructure`'s arrays), the free features and PAV's scratch
PriorArrays = namedtuple("PriorArrays", ["lower", "upper", "order", "group_ptr", "chain_ptr", "free", "work",
                                         "uniform"])
#: the scalars of one solve
Params = namedtuple("Params", ["l2", "l1", "upper", "dii", "rho", "shrinking", "local", "block", "local_below"])
#: the samples of an epoch come in a random order of blocks of this many rows (:func:`_shuffle_blocks`); chosen
#: with LOCAL_BELOW among 1, 4, 16, 64 × 0.9, 1.0 on magic, spambase and two generated shapes, checked on four
#: held-out KEEL sets and a third shape (``benchmarks/bench_ordering.py --constants``; 64 took 8% longer)
BLOCK = 16
#: try the local-curvature step when its curvature is below this fraction of the global bound
LOCAL_BELOW = 0.9


def _needs_rows(problem) -> list[str]:
    """The constraints must be orderings: priors, ``rs.ordered`` chains, or rows ``a(w_p − w_q)`` against 0."""
    out = []
    for j, c in enumerate(problem.constraints or []):
        if isinstance(c, (OrderingPrior, Ordered)):
            continue
        if isinstance(c, Prior):  # its rows exist once the data name the features: judged by its kind
            out.append(f"ordered-dcd takes orderings only (rs.Increasing, rs.Decreasing, rs.Order, rs.Equal): "
                       f"constraints[{j}] is {c!r}")
            continue
        A = c.A.toarray() if sp.issparse(c.A) else np.atleast_2d(np.asarray(c.A, dtype=np.float64))
        nz = (A != 0).sum(axis=1)
        if np.any(nz != 2) or np.any(A.sum(axis=1) != 0):
            out.append(f"ordered-dcd takes orderings only (rs.Increasing, rs.Decreasing, rs.Order, rs.Equal): "
                       f"constraints[{j}] has rows that are not differences of two weights")
    return out


NEEDS = soft_margin_needs(
    "ordered-dcd",
    l1=True,
    sets=(),
    bounds=True,
    constraints=True,
    extra=_needs_rows,
    why={"sets": "the robust margin couples the samples through the support function of w",
         "l2": "the prox of the chains needs a strongly convex penalty"},
)


@nb.njit(cache=True)
def _seed(seed):  # pragma: no cover - compiled
    """Seed the compiled code's generator (numba keeps its own state, which the epochs' shuffle draws from)."""
    np.random.seed(seed)  # noqa: NPY002


@nb.njit(cache=True, inline="always")
def _weights(v, w, prior, prm):  # pragma: no cover - compiled
    """``w = w(v)``: soft-threshold and clip off the chains, pool-adjacent-violators on them."""
    for k in range(prior.free.size):
        h = prior.free[k]
        t = v[h]
        t = (t - prm.l1 if t > prm.l1 else (t + prm.l1 if t < -prm.l1 else 0.0)) / prm.l2
        w[h] = min(max(t, prior.lower[h]), prior.upper[h])
    chain_prox_into(v, prm.l2, prm.l1, prior.lower, prior.upper, prior.order, prior.group_ptr, prior.chain_ptr, w,
                    prior.work, prior.uniform)


@nb.njit(cache=True, inline="always")
def _shuffle_blocks(index, active, scratch, block):  # pragma: no cover - compiled
    """``index[:active]`` in a random order of its blocks of ``block`` (:data:`BLOCK`) entries (each block kept in
    order): the rows were put in a random order once (:func:`solve_ordered_dcd`), so the samples come in a random
    order while the rows are read from memory in runs."""
    blocks = (active + block - 1) // block
    k = 0
    for j in np.random.permutation(blocks):  # noqa: NPY002  (numba's generator, seeded by _seed)
        for t in range(j * block, min((j + 1) * block, active)):
            scratch[k] = index[t]
            k += 1
    index[:active] = scratch[:active]


@nb.njit(cache=True, inline="always")
def _conjugate(v, w, prm):  # pragma: no cover - compiled
    """``h*(v) = v·w − (λ2/2)‖w‖² − λ1‖w‖₁`` at ``w = w(v)``."""
    out = 0.0
    for h in range(v.size):
        out += v[h] * w[h] - 0.5 * prm.l2 * w[h] * w[h] - prm.l1 * abs(w[h])
    return out


@nb.njit(cache=True, inline="always")
def _local_curvature(x, w, prior, prm):  # pragma: no cover - compiled
    """``xᵀ(∂w/∂v)x``: ``x_h²/λ2`` on the free features strictly inside their bounds and off the soft-threshold's
    zero, and ``(Σ_{h ∈ B} x_h)²/(|B| λ2)`` on each block ``B`` of equal weights on a chain likewise (the blocks of
    the last prox, kept in ``prior.work``, on a chain pooled on its means; else read from ``w``)."""
    q = 0.0
    for k in range(prior.free.size):
        h = prior.free[k]
        if prior.lower[h] < w[h] < prior.upper[h] and (w[h] != 0.0 or prm.l1 == 0.0):
            q += x[h] * x[h]
    for c in range(prior.chain_ptr.size - 1):
        base = prior.chain_ptr[c]
        k, k_end = prior.group_ptr[base], prior.group_ptr[prior.chain_ptr[c + 1]]
        if prior.uniform[c]:
            h0 = prior.order[k]
            lo, up = prior.lower[h0], prior.upper[h0]
            for b in range(base, base + int(prior.work[6, base])):
                stop = prior.group_ptr[int(prior.work[4, b])]
                t = w[prior.order[k]]
                if (t != 0.0 or prm.l1 == 0.0) and lo < t < up:
                    sx = x[prior.order[k]]
                    if stop - k == 1:
                        q += sx * sx
                    else:
                        for j in range(k + 1, stop):
                            sx += x[prior.order[j]]
                        q += sx * sx / (stop - k)
                k = stop
            continue
        while k < k_end:
            t = w[prior.order[k]]
            sx, n, inside = 0.0, 0.0, t != 0.0 or prm.l1 == 0.0
            while k < k_end and w[prior.order[k]] == t:
                h = prior.order[k]
                sx += x[h]
                n += 1.0
                inside = inside and prior.lower[h] < t < prior.upper[h]
                k += 1
            if inside:
                q += sx * sx / n
    return q / prm.l2


@nb.njit(cache=True, fastmath=FASTMATH, inline="always")
def _move(X, i, delta, v, w, prior, prm):  # pragma: no cover - compiled
    for h in range(X.shape[1]):
        v[h] += delta * X[i, h]
    _weights(v, w, prior, prm)


@nb.njit(cache=True, fastmath=FASTMATH, inline="always")
def _local_step(X, i, G, ai, smp, st, prior, prm):  # pragma: no cover - compiled
    """The step with the curvature of ``h*`` at the current point (:func:`_local_curvature`), kept when the dual
    rises by at least a quarter of its quadratic model's prediction; else undone. Returns the new ``α_i``
    (``ai`` when undone)."""
    ci, v, w, sums = smp.c[i], st.v, st.w, st.sums
    q = ci * (_local_curvature(X[i], w, prior, prm) + prm.rho) + prm.dii
    if not q < prm.local_below * smp.qdiag[i] or q <= 0.0:
        return ai
    t = min(max(ai - G / q, 0.0), prm.upper) - ai
    if t == 0.0:
        return ai
    before = _conjugate(v, w, prm)
    delta = t * smp.y[i] * ci
    _move(X, i, delta, v, w, prior, prm)
    S = sums[1]
    gain = (ci * (t - 0.5 * prm.dii * ((ai + t) ** 2 - ai * ai)) - (_conjugate(v, w, prm) - before)
            - sums[0] * delta - 0.5 * prm.rho * ((S + delta) ** 2 - S * S))
    if gain >= 0.25 * ci * (-G * t - 0.5 * q * t * t):
        return ai + t
    _move(X, i, -delta, v, w, prior, prm)
    return ai


@nb.njit(cache=True, fastmath=FASTMATH)
def _epoch(X, smp, alpha, st, prior, prm, index, scratch, active, pg_max_old,
           pg_min_old):  # pragma: no cover - compiled
    """One epoch over ``index[:active]`` in a random order of blocks (liblinear's shrinking); returns ``(active,
    pg_max, pg_min, updates)``."""
    d = X.shape[1]
    v, w, sums = st.v, st.w, st.sums
    _shuffle_blocks(index, active, scratch, prm.block)
    pg_max, pg_min, updates = -np.inf, np.inf, 0
    s = 0
    while s < active:
        i = index[s]
        acc = 0.0
        for h in range(d):
            acc += X[i, h] * w[h]
        ai = alpha[i]
        G = smp.y[i] * (acc + sums[0] + prm.rho * sums[1]) - 1.0 + prm.dii * ai
        PG = min(G, 0.0) if ai == 0.0 else (max(G, 0.0) if ai == prm.upper else G)
        if prm.shrinking and ((ai == 0.0 and G > pg_max_old) or (ai == prm.upper and G < pg_min_old)):
            active -= 1
            index[s], index[active] = index[active], index[s]
            continue
        pg_max, pg_min = max(pg_max, PG), min(pg_min, PG)
        if abs(PG) > 1e-12:
            a_new = _local_step(X, i, G, ai, smp, st, prior, prm) if prm.local else ai
            if a_new != ai:  # taken: v and w already moved
                sums[1] += (a_new - ai) * smp.y[i] * smp.c[i]
            else:  # the step of the global curvature bound (the dual rises)
                a_new = min(max(ai - G / smp.qdiag[i], 0.0), prm.upper)
                delta = (a_new - ai) * smp.y[i] * smp.c[i]
                if delta != 0.0:
                    sums[1] += delta
                    _move(X, i, delta, v, w, prior, prm)
            if a_new != ai:
                alpha[i] = a_new
                updates += 1
        s += 1
    return active, pg_max, pg_min, updates


def _no_chains(d: int) -> ChainStructure:
    empty = np.zeros(0, dtype=np.int64)
    return ChainStructure(d=d, order=empty, group_ptr=np.zeros(1, np.int64), chain_ptr=np.zeros(1, np.int64),
                          free=np.arange(d, dtype=np.int64), tree=np.zeros((0, 3), np.int64), A=np.zeros((0, d)))


def model_chains(model: Model) -> ChainStructure:
    """The model's linear constraints as chains; ``UnsupportedModelError`` saying why when they are not."""
    if not model.has_constraints:
        return _no_chains(model.d)
    chains = chain_structure(model.feasible.linear)
    if isinstance(chains, str):
        raise UnsupportedModelError(f"ordered-dcd solves orderings that form disjoint chains: {chains}; the conic "
                                    "backends (clarabel, scs) solve any linear constraints")
    return chains


class _Certifier:
    """The certificate at a dual point: the package's Lagrangian bound with the chain multipliers, and the primal
    point ``w(v)`` with its best intercept; keeps the multipliers of the best bound."""

    def __init__(self, model: Model, chains: ChainStructure, alpha: np.ndarray, rows: np.ndarray, prm: Params,
                 iterate: np.ndarray, average: np.ndarray) -> None:
        self.model, self.chains, self.alpha, self.rows, self.prm = model, chains, alpha, rows, prm
        self.iterate, self.average = iterate, average
        f = model.feasible_set
        self.lower, self.upper = f.lower, f.upper
        self.box = (f.lower, f.upper) if model.has_bounds else None
        self.linear = f.linear if model.has_constraints else None
        self.best = (-np.inf, None, None)
        self.average_wins = 0  # certificates in a row at which the average had the lower objective

    def model_alpha(self) -> np.ndarray:
        """``α`` in the model's order of the samples (the epochs read the rows in the order ``rows``)."""
        out = np.empty_like(self.alpha)
        out[self.rows] = self.alpha
        return out

    def __call__(self, b_eff: float) -> DualCertificate:
        m, prm = self.model, self.prm
        c, y = m.c, m.y
        a = admissible_multipliers(c * self.model_alpha(), y, c, m.loss, m.intercept.mode)
        s = np.asarray(m.X.T @ (a * y)).ravel()
        w, nu = self.chains.multipliers(s, prm.l2, prm.l1, self.lower, self.upper)
        terms = BoundTerms(m.X, y, c, m.loss, m.l2, m.l1, m.signs, m.intercept.mode, m.intercept.mu, box=self.box,
                           linear=self.linear)
        D, _ = lagrangian_bound(terms, a, nu=nu if self.linear is not None else None)
        if D > self.best[0]:
            self.best = (D, a, nu)
        best = None
        # both in W: w(v) and an average of such points; once the average has won AVERAGE_SETTLES certificates in
        # a row, the iterate is no longer scored (each point costs a product with X and its exact intercept)
        points = [self.average.copy()]
        if self.average_wins < AVERAGE_SETTLES:
            points.insert(0, self.iterate.copy())
        for w in points:
            z = np.asarray(m.X @ w).ravel()
            b = {"free": lambda: optimal_intercept(z, y, c, squared=m.loss.name == "squared_hinge"),  # noqa: B023
                 "ridge": lambda: float(b_eff), "none": lambda: 0.0}[m.intercept.mode]()
            P = objective_from_margins(m, w, b, y * (z + b))
            if best is None or P < best[0]:
                best = (P, w, b)
        self.average_wins = self.average_wins + 1 if best[1] is points[-1] else 0
        return DualCertificate(best[0], D, best[1], best[2], scale=float(c.sum()))


def solve_ordered_dcd(model: Model, *, tol: float = DEFAULTS["tol"], max_iter: int = DEFAULTS["max_iter"],
                      verbose: bool = False, random_state: int | None = None, shrinking: bool = True,
                      local: bool = True,
                      check_every: int = 10, time_limit: float | None = None) -> Result:
    """Solve ``model`` by dual coordinate ascent with the chains' prox; certified by the package's duality gap.

    Parameters
    ----------
    model : Model
        Hinge or squared hinge, λ2 > 0, any λ1, bounds, orderings forming disjoint chains, any intercept.
    tol : float
        Relative duality gap at which to stop (:data:`DEFAULTS`, declared on the registration).
    max_iter : int
        Epochs.
    random_state : int, optional
        Seed of the order of the samples (0 when None: the same run every time).
    shrinking : bool
        liblinear's shrinking of the samples at a bound.
    local : bool
        Try the step with the local curvature of ``h*`` first (kept on a sufficient rise of the dual).
    check_every : int
        Epochs before the first certificate (then the schedule of :func:`.dual_ascent.next_check`).
    time_limit : float, optional
        Seconds.
    """
    t_start = time.perf_counter()
    if model.is_sparse:
        raise UnsupportedModelError("ordered-dcd reads dense rows: pass X as a dense array (or solve with clarabel)")
    chains = model_chains(model)
    n, d = model.X.shape
    seed = 0 if random_state is None else int(random_state)  # a run is reproducible without a seed too
    _seed(seed)
    rows = np.random.default_rng(seed).permutation(n)  # the rows in a random order, read in runs
    X = np.ascontiguousarray(model.X[rows], dtype=np.float64)
    lam, c, y = float(model.l2), model.c[rows], model.y[rows]
    squared = model.loss.name == "squared_hinge"
    sq = np.einsum("ij,ij->i", X, X)
    rho = intercept_rho(model.intercept, None, c, sq, lam, factor=RHO_FACTOR)
    prm = Params(lam, float(model.l1), np.inf if squared else 1.0, 0.5 if squared else 0.0, rho, bool(shrinking),
                 bool(local), int(BLOCK), float(LOCAL_BELOW))
    smp = Samples(y, c, c * (sq / lam + rho) + prm.dii)
    f = model.feasible_set
    lower, upper = np.ascontiguousarray(f.lower, np.float64), np.ascontiguousarray(f.upper, np.float64)
    prior = PriorArrays(lower, upper, chains.order, chains.group_ptr, chains.chain_ptr, chains.free,
                  np.empty((WORK_ROWS, max(chains.n_groups, 1))), chains.uniform_bounds(lower, upper))
    st = State(np.zeros(d), np.zeros(d), np.zeros(3))
    _weights(st.v, st.w, prior, prm)
    alpha = np.zeros(n)  # of the rows in their new order
    index, scratch = np.arange(n, dtype=np.int64), np.empty(n, dtype=np.int64)
    average = st.w.copy()
    certify = _Certifier(model, chains, alpha, rows, prm, st.w, average)

    def run_epoch(active: int, pg_max_old: float, pg_min_old: float):
        return _epoch(X, smp, alpha, st, prior, prm, index, scratch, active, pg_max_old, pg_min_old)

    def after_epoch() -> None:
        np.multiply(average, 1.0 - AVG_WEIGHT, out=average)
        np.add(average, AVG_WEIGHT * st.w, out=average)

    run = ascend(run_epoch, certify, n_total=n, sums=st.sums.view(SUMS), rho=rho, free=model.intercept.mode == "free",
                 tol=tol, check_every=check_every, max_iter=max_iter, name="ordered-dcd", verbose=verbose,
                 time_limit=time_limit, after_epoch=after_epoch, unshrink_after=UNSHRINK_AFTER)
    _, a, nu = certify.best
    result = certified_result(run, tol=tol, intercept=model.intercept, t_start=t_start,
                              multipliers=model.c * certify.model_alpha() if a is None else a,
                              dual_alpha=certify.model_alpha(), extra={"rho": rho, "chains": chains.chain_ptr.size - 1})
    return replace(result, constraint_multipliers=None if certify.linear is None else nu)


register(
    Backend(
        name="ordered-dcd",
        solve=solve_ordered_dcd,
        needs=NEEDS,
        summary="dual coordinate ascent with the prox of ordering priors (pool-adjacent-violators, compiled): "
                "hinge/squared hinge + L2 [+ L1], bounds, rs.Increasing / Decreasing / Order / Equal chains; "
                "certified by the duality gap",
        options=frozenset({"shrinking", "local", "check_every", "time_limit"}),
        kind="first-order",
        certificate="duality gap P(w, b) − D(α, ν) (absolute), ν the chain rows' multipliers",
        defaults=DEFAULTS,
    ),
)

"""The client's side of CoCoA+: the certificate from the blocks' sums and the loop of rounds.

The client holds, per block, the :class:`~._local.BlockSums` of its current dual block ``α_[k]`` (``v``, ``A``,
``S`` and the class sums are their totals, so the state is consistent with ``α`` by construction) and the
intercept multiplier ``b0``. A round sends the primal point ``w(v, A)``, ``σ_V(w)``, a few intercepts and the
:class:`~._local.LocalStart` to every block; a block answers with its loss sums at those intercepts (the primal
side of the certificate of the current state) and, after its local ascent, the sums of its new ``α_[k]``. The
client adds them (the CoCoA+ sum with σ′ = K) and moves ``b0 ← b0 + ρ S`` (a free intercept). The derivation
is ``docs/derivations/cocoa_robust.md``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..backends.building_blocks import softclip
from ..backends.dual_ascent import DualCertificate
from ..backends.shared_set import CERT_INNER, SharedSetArrays, Workspace
from ..certificates.duality import class_balance
from ..result import History
from ._local import BlockSums, LocalStart

__all__ = ["BlockAnswer", "RoundPlan", "Rounds", "RoundFailedError", "RoundsOutcome", "dual_bound", "primal_point",
           "run_rounds"]

#: intercepts each block prices per round around the multiplier's intercept (a free or ridge intercept)
N_INTERCEPTS = 9


def _kernel_params(spec: SharedSetArrays):
    from ..backends.robust_dcd import INNER_TOL

    return spec.params(rho=0.0, inner_tol=INNER_TOL)


def primal_point(spec: SharedSetArrays, work: Workspace, total: BlockSums) -> tuple[np.ndarray, float]:
    """``w(α) = T(v − A u*)/λ2`` at the saddle point of the global ``(v, A)``, and ``σ_V(w)``."""
    v, A = total.v, total.radius_total
    if A > 0:
        work.refresh(spec.set_kernel, _kernel_params(spec), v, A, CERT_INNER)
        w = work.state.w.copy()
    else:
        w = softclip(v, spec.l1, spec.sg, 1.0 / spec.l2)
    return w, spec.support(w)


def dual_bound(spec: SharedSetArrays, work: Workspace, total: BlockSums, w: np.ndarray) -> float:
    """``D_u(α̃)`` from the sums alone: the lower bound of :func:`robustsvm.backends.shared_set.dual_certificate`.

    With a free intercept the heavier class is scaled by ``f ∈ [0, 1]`` so that ``S = 0``
    (:func:`robustsvm.certificates.duality.class_balance`); the dual term of a class scaled by ``f`` is ``a f + b f²``
    with ``a + b`` and ``a/2 + b/4`` its values at ``f = 1`` and ``1/2`` (``BlockSums.terms``). ``u`` is the saddle
    point of the scaled ``(v, A)`` (for the ellipsoid also the worst case of ``w``), pulled into ``V`` by its
    gauge; ``w_u = T(v − A u)/λ2``.
    """
    free = spec.intercept.mode == "free"
    f = np.array(class_balance(float(total.mass[0]), float(total.mass[1])) if free else (1.0, 1.0))
    t1, th = total.terms[:, 0], total.terms[:, 1]
    quad = 2.0 * t1 - 4.0 * th
    lin = float(np.sum((t1 - quad) * f + quad * f * f))
    v_t = f[0] * total.images[0] + f[1] * total.images[1]
    A_t = float(f @ total.radius)
    S_t = 0.0 if free else total.label_sum
    inv = 1.0 / spec.l2
    if A_t <= 0:
        wds = [softclip(v_t, spec.l1, spec.sg, inv)]
    else:
        work.refresh(spec.set_kernel, _kernel_params(spec), v_t, A_t, CERT_INNER)
        us = [work.state.u.copy()]
        if not spec.description.exact:
            us.append(spec.V.worst_case(w))
        wds = []
        for u in us:
            g = spec.description.gauge(u)
            wds.append(softclip(v_t - A_t * (u / g if g > 1.0 else u), spec.l1, spec.sg, inv))
    return max(lin - 0.5 * spec.l2 * float(wd @ wd) + spec.intercept.dual_value(S_t) for wd in wds)


class RoundFailedError(RuntimeError):
    """A round could not be completed on every block (workers lost beyond what the cluster recomputes)."""


@dataclass(frozen=True)
class RoundPlan:
    """What a round sends to every block: the primal point, ``σ_V(w)``, the intercepts to price, the local
    problem's start, the local epochs (0: price only) and the round's seed."""

    w: np.ndarray
    support: float
    intercepts: np.ndarray
    start: LocalStart
    epochs: int
    seed: int

    @property
    def nbytes(self) -> int:
        return int(self.w.nbytes + self.intercepts.nbytes + self.start.v.nbytes + 64)


@dataclass
class BlockAnswer:
    """A block's answer to a round: its loss sums at the plan's intercepts and the sums of its new ``α_[k]``
    (None when it only priced, or when the block was lost); ``info`` as :func:`~._local.local_ascent`'s."""

    losses: np.ndarray | None
    sums: BlockSums | None
    info: dict = field(default_factory=dict)


class Rounds:
    """The blocks as the loop of rounds sees them (a serial list, or partitions on a Dask cluster).

    ``run(plan)`` runs one round on every block and returns one :class:`BlockAnswer` per block, keeping each new
    ``α_[k]`` pending; ``accept()`` makes the pending blocks current; ``restart(k)`` returns the sums the client
    must hold for block ``k`` after it was lost (its dual block restored from the last copy, or 0).
    """

    n_blocks: int

    def run(self, plan: RoundPlan) -> list[BlockAnswer]:  # pragma: no cover - interface
        raise NotImplementedError

    def accept(self) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    def restart(self, k: int) -> BlockSums:  # pragma: no cover - interface
        raise NotImplementedError


@dataclass
class RoundsOutcome:
    """What :func:`run_rounds` ran to: the best certificate, status, rounds, history and traffic."""

    cert: DualCertificate
    status: str
    rounds: int
    history: History
    bytes_down: int
    bytes_up: int
    restarts: int
    undone: int
    time_rounds: float
    message: str = ""


def _intercepts(spec: SharedSetArrays, total: BlockSums, b0: float, rho: float, spread: float,
                best_b: float | None) -> np.ndarray:
    mode = spec.intercept.mode
    if mode == "none":
        return np.zeros(1)
    centre = b0 + rho * total.label_sum if mode == "free" else spec.intercept.from_dual(total.label_sum)
    grid = centre + spread * np.linspace(-1.0, 1.0, N_INTERCEPTS)
    return grid if best_b is None else np.append(grid, best_b)


def run_rounds(rounds: Rounds, spec: SharedSetArrays, sums: list[BlockSums], *, penalty: Callable[[np.ndarray], float],
               scale: float, rho: float, tol: float, max_iter: int, time_limit: float | None, epochs: int,
               seed: int, verbose: bool = False, b0: float = 0.0) -> RoundsOutcome:
    """The loop of CoCoA+ rounds from the blocks' current ``sums`` (updated in place).

    Every round certifies the current state (primal ``P(w(α), b)`` at the best priced intercept, dual
    :func:`dual_bound`), stops when the relative gap is at most ``tol`` (``"optimal"``), after ``max_iter`` ascent
    rounds (``"max_iter"``, the last state certified by a pricing-only round) or past ``time_limit`` seconds
    (``"time_limit"``); else the blocks' ascents are accepted. A block lost in a round (no answer) is restarted
    (:meth:`Rounds.restart`) and the round's certificate skipped: the state stays consistent with ``α``. A round
    that fails on the cluster (:class:`RoundFailedError`) ends the loop with status ``"worker_lost"`` and the best
    certificate so far (raised again when there is none).
    ``penalty(w)`` is the model's ``R(w)``; ``scale`` the objective at ``w = 0, b = 0`` (``Σ c_i``).
    """
    d = spec.sg.size
    work = Workspace(d)
    hist = History()
    t0 = time.perf_counter()
    cert, status, done, best_b = None, "max_iter", 0, None
    spread = 1.0
    down = up = restarts = undone = 0
    b0 = float(b0)
    message = ""
    while True:
        total = sum(sums[1:], sums[0])
        w, support = primal_point(spec, work, total)
        last = done >= max_iter or (time_limit is not None and time.perf_counter() - t0 > time_limit)
        start = LocalStart(total.v, total.radius_total, total.label_sum, b0, rho)
        plan = RoundPlan(w, support, _intercepts(spec, total, b0, rho, spread, best_b), start,
                         0 if last else epochs, seed + done)
        try:
            answers = rounds.run(plan)
        except RoundFailedError as exc:
            if cert is None:
                raise
            status, message = "worker_lost", f"{exc}; the last certificate is reported"
            break
        down += plan.nbytes * rounds.n_blocks
        lost = [k for k, a in enumerate(answers) if a.losses is None]
        if not lost:
            losses = np.sum([a.losses for a in answers], axis=0)
            pen = penalty(w)
            P_b = [pen + spec.intercept.value(b) + loss for b, loss in zip(plan.intercepts, losses, strict=True)]
            j = int(np.argmin(P_b))
            new = DualCertificate(P_b[j], dual_bound(spec, work, total, w), w, float(plan.intercepts[j]),
                                  scale=scale)
            cert = new if cert is None else cert.merge(new)
            best_b = float(plan.intercepts[j])
            if spec.intercept.mode != "none" and j < N_INTERCEPTS:  # the grid's best: narrow it, or widen at an end
                spread = spread * 2.0 if j in (0, N_INTERCEPTS - 1) else spread * 0.5
            hist.record(done, cert.P, cert.gap, dual=cert.D, rel_gap=cert.rel_gap, round_primal=new.P, round_dual=new.D)
            if verbose:
                print(f"cocoa round {done:5d}  P={cert.P:.10g}  D={cert.D:.10g}  rel.gap={cert.rel_gap:.3e}")
            if cert.rel_gap <= tol:
                status = "optimal"
                break
            if last:
                status = "max_iter" if done >= max_iter else "time_limit"
                break
        elif last and cert is not None:  # the pricing round lost a block: the best certificate so far stands
            status = "max_iter" if done >= max_iter else "time_limit"
            break
        for k, a in enumerate(answers):
            if a.sums is None:
                sums[k] = rounds.restart(k)
                restarts += 1
            else:
                sums[k] = a.sums
                up += a.sums.nbytes + (0 if a.losses is None else a.losses.nbytes)
                undone += int(bool(a.info.get("undone")))
        rounds.accept()
        done += 1
        if spec.intercept.mode == "free":
            b0 += rho * sum(sums[1:], sums[0]).label_sum  # multiplier step of the augmented Lagrangian of S = 0
    return RoundsOutcome(cert, status, done, hist, down, up, restarts, undone, time.perf_counter() - t0, message)

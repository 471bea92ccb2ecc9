"""CoCoA+ with the exact local robust-dcd problem (``dask-cocoa``), and its serial simulation.

The model is robust-dcd's (``docs/derivations/robust_dcd.md``): hinge or squared hinge, ``λ2 > 0`` with optional
``λ1``, signs, one shared Box, Ball (p = 1, 2, ∞) or Ellipsoid, every intercept mode. The rows are split into
``K`` blocks; every round each block ascends its exact local problem (:func:`._local.local_ascent`: robust-dcd's
epochs with ``λ2/K``, ``λ1/K``, ``ρK`` from ``v/K``, ``A/K``, ``S/K``), the client adds the blocks' new sums
(σ′ = K) and certifies the state by the duality gap from a few scalars per block
(:func:`._cocoa_rounds.run_rounds`). The derivation is ``docs/derivations/cocoa_robust.md``.

:func:`solve_cocoa_blocks` runs the same rounds on an in-memory model split into contiguous row blocks in one
process: the reference the Dask backend is tested against, and the check of the derivation.
"""

from __future__ import annotations

import math
import time
from dataclasses import replace
from itertools import pairwise

import numpy as np
import scipy.sparse as sp

from ..backends.dual_ascent import intercept_rho
from ..backends.registry import Backend, register
from ..backends.shared_set import SharedSetArrays, shared_set_needs
from ..backends.threads import one_blas_thread
from ..result import Result
from ._cocoa_rounds import BlockAnswer, RoundFailedError, RoundPlan, Rounds, RoundsOutcome, run_rounds
from ._local import ELLIPSOID_MAX_FEATURES, Block, BlockSums, block_losses, block_sums, local_ascent, make_block
from .model import DISTRIBUTED, check_limits

__all__ = ["DEFAULTS", "LOCAL_EPOCHS", "NEEDS", "DaskRounds", "SerialRounds", "client_spec", "cocoa_result",
           "default_rho", "distributed_spec", "solve_cocoa_blocks", "solve_dask_cocoa"]

#: ``tol`` (relative duality gap) and ``max_iter`` (rounds) when the caller gives none
DEFAULTS = {"tol": 1e-4, "max_iter": 500}
#: robust-dcd epochs of each block per round when the caller gives none
LOCAL_EPOCHS = 2


def default_rho(intercept, rho, c, sq_norms, lam: float, K: int) -> float:
    """The intercept weight ρ of the rounds: ``1/μ`` (ridge), 0 (none), or for a free intercept ``rho`` when given,
    else robust-dcd's default over ``K²`` (the local weight ``Kρ`` is robust-dcd's over ``K``)."""
    if intercept.mode == "free" and rho is None:
        return intercept_rho(intercept, None, c, sq_norms, lam) / K**2
    return intercept_rho(intercept, rho, c, sq_norms, lam)


def client_spec(arrays: SharedSetArrays) -> SharedSetArrays:
    """``arrays`` without its rows: the model's scalars, signs, set and loss (small enough to send anywhere)."""
    d = arrays.sg.size
    empty = np.zeros(0)
    return replace(arrays, X=sp.csr_matrix((0, d)), y=empty, c=empty, r=empty, sqn=empty, primal=None)


class SerialRounds(Rounds):
    """The blocks in this process (the serial simulation of the rounds); ``lose`` maps a round to the blocks
    whose answers are dropped in it (a test of the restart)."""

    def __init__(self, blocks: list[Block], alphas: list[np.ndarray], lose: dict | None = None) -> None:
        self.blocks, self.alphas = blocks, alphas
        self.n_blocks = len(blocks)
        self.pending: list[np.ndarray | None] = [None] * self.n_blocks
        self.lose = dict(lose or {})
        self.count = 0

    def run(self, plan: RoundPlan) -> list[BlockAnswer]:
        lost = self.lose.get(self.count, ())
        self.count += 1
        out = []
        for k, (block, alpha) in enumerate(zip(self.blocks, self.alphas, strict=True)):
            if k in lost:
                self.pending[k] = None
                out.append(BlockAnswer(None, None))
                continue
            losses = block_losses(block, plan.w, plan.support, plan.intercepts)
            if plan.epochs:
                new, info = local_ascent(block, alpha, plan.start, epochs=plan.epochs, seed=plan.seed * 7919 + k)
                self.pending[k] = new
                out.append(BlockAnswer(losses, block_sums(block, new), info))
            else:
                self.pending[k] = alpha
                out.append(BlockAnswer(losses, None))
        return out

    def accept(self) -> None:
        self.alphas = [a if p is None else p for a, p in zip(self.alphas, self.pending, strict=True)]

    def restart(self, k: int) -> BlockSums:
        self.alphas[k] = np.zeros_like(self.alphas[k])
        return block_sums(self.blocks[k], self.alphas[k])


def cocoa_result(run: RoundsOutcome, *, tol: float, intercept, t_start: float, multipliers, extra: dict,
                 dual_alpha: np.ndarray | None = None) -> Result:
    """The :class:`Result` of the rounds' best certificate."""
    cert = run.cert
    message = run.message or (f"relative duality gap {cert.rel_gap:.3g} after {run.rounds} rounds"
               + ("" if run.status == "optimal" else f" (tolerance {tol:g} not reached: {run.status})"))
    return Result(
        w=cert.w, b=float(cert.b) if intercept.present else 0.0, status=run.status, gap=cert.gap,
        iterations=run.rounds, history=run.history.arrays(), time_solve=time.perf_counter() - t_start,
        message=message, dual_value=cert.D, dual_feasible=True, multipliers=multipliers, dual_alpha=dual_alpha,
        primal_objective=float(cert.P), rel_gap=float(cert.rel_gap),
        extra={"bytes_down": run.bytes_down, "bytes_up": run.bytes_up,
               "bytes_per_round": (run.bytes_down + run.bytes_up) / max(run.rounds, 1),
               "restarted_blocks": run.restarts, "undone_local_epochs": run.undone, "time_rounds": run.time_rounds,
               **extra},
    )


def solve_cocoa_blocks(model, n_blocks: int = 2, *, tol=DEFAULTS["tol"], max_iter=DEFAULTS["max_iter"],
                       time_limit=None, local_epochs=None,
                       random_state=0, rho=None, verbose=False, lose=None) -> Result:
    """CoCoA+ on an in-memory model split into ``n_blocks`` contiguous row blocks, in this process.

    Parameters
    ----------
    model : Model
        A normalized model inside robust-dcd's declaration.
    n_blocks : int
        ``K``.
    tol, max_iter, time_limit, local_epochs
        Relative duality gap, rounds, seconds (:data:`DEFAULTS`) and robust-dcd epochs per block and round
        (:data:`LOCAL_EPOCHS`).
    random_state : int
        Seed of the local epochs' orders.
    rho : float, optional
        Augmented-Lagrangian weight of a free intercept (:func:`default_rho`).
    lose : dict, optional
        ``{round: blocks}`` whose answers are dropped in that round (the restart of a lost block).

    Returns
    -------
    Result
        ``dual_alpha`` the final α in row order.
    """
    t_start = time.perf_counter()
    tol = float(tol)
    max_iter = int(max_iter)
    epochs = LOCAL_EPOCHS if local_epochs is None else int(local_epochs)
    arrays = SharedSetArrays.from_model(model)
    n = arrays.y.size
    K = int(n_blocks)
    if not 1 <= K <= n:
        raise ValueError(f"n_blocks must be between 1 and the number of samples {n}, got {n_blocks!r}")
    spec = client_spec(arrays)
    edges = np.linspace(0, n, K + 1).astype(int)
    blocks = [make_block(spec, arrays.X[lo:hi], arrays.y[lo:hi], arrays.c[lo:hi], arrays.r[lo:hi], K)
              for lo, hi in pairwise(edges)]
    alphas = [np.zeros(b.arrays.y.size) for b in blocks]
    rho = default_rho(arrays.intercept, rho, arrays.c, arrays.sqn, arrays.l2, K)
    rounds = SerialRounds(blocks, alphas, lose)
    sums = [block_sums(b, a) for b, a in zip(blocks, alphas, strict=True)]
    run = run_rounds(rounds, spec, sums, penalty=model.penalty.value, scale=float(arrays.c.sum()), rho=rho,
                     tol=tol, max_iter=max_iter, time_limit=time_limit, epochs=epochs, seed=int(random_state),
                     verbose=verbose)
    alpha = np.concatenate(rounds.alphas)
    return cocoa_result(run, tol=tol, intercept=arrays.intercept, t_start=t_start, multipliers=arrays.c * alpha,
                        dual_alpha=alpha, extra={"rho": rho, "n_blocks": K})


# ------------------------------------------------------------------------------------------------ on a cluster
def distributed_spec(model) -> SharedSetArrays:
    """The client's half of a :class:`~.model.DistributedModel`: its scalars, signs, set and loss, no rows."""
    empty = np.zeros(0)
    return SharedSetArrays(X=sp.csr_matrix((0, model.d)), y=empty, c=empty, r=empty, sqn=empty,
                           sg=np.ascontiguousarray(model.signs, dtype=np.int8), l2=float(model.l2),
                           l1=float(model.l1), intercept=model.intercept, loss=model.loss,
                           V=model.uncertainty if model.robust else None, primal=None)


def _local_block(part, spec: SharedSetArrays, c_scale: float, radius: float, K: int) -> Block:
    """The CoCoA+ block of a partition (:class:`~.data.Block`; rows kept on disk are read whole)."""
    X = part.rows() if part.on_disk else part.X
    return make_block(spec, X, part.y, c_scale * part.weight, np.full(part.n, radius), K)


def _weighted_norms(part) -> tuple[float, float]:
    """``(Σ ‖x_i‖², count)`` over the partition's samples of positive weight (robust-dcd's default ρ)."""
    total, count = 0.0, 0.0
    for lo, hi, X in part.row_slices():
        keep = part.weight[lo:hi] > 0
        sq = np.asarray(X.multiply(X).sum(axis=1)).ravel() if sp.issparse(X) else np.einsum("ij,ij->i", X, X)
        total += float(sq[keep].sum())
        count += float(keep.sum())
    return total, count


def _block_round(part, alpha, spec: SharedSetArrays, c_scale: float, radius: float, K: int,
                 plan: RoundPlan) -> tuple[np.ndarray, dict]:
    """One round on a worker: the block's loss sums at the plan's point, then its local ascent from its ``α_[k]``
    (0 in the first round); returns the new ``α_[k]`` (kept on the worker) and the small answer."""
    block = _local_block(part, spec, c_scale, radius, K)
    alpha = np.zeros(part.n) if alpha is None else alpha
    losses = block_losses(block, plan.w, plan.support, plan.intercepts)
    if not plan.epochs:
        return alpha, {"losses": losses, "sums": None, "info": {}}
    new, info = local_ascent(block, alpha, plan.start, epochs=plan.epochs, seed=plan.seed * 7919 + part.start)
    return new, {"losses": losses, "sums": block_sums(block, new), "info": info}


class DaskRounds(Rounds):
    """The partitions of a :class:`~.model.DistributedModel` as blocks: each ``α_[k]`` is the state of a
    :meth:`~.data.Partitions.map_state` round, kept on the worker that holds the rows."""

    def __init__(self, model, spec: SharedSetArrays) -> None:
        self.data, self.spec = model.data, spec
        self.c_scale, self.radius = float(model.c_scale), float(model.radius if model.robust else 0.0)
        self.n_blocks = self.data.k
        self.states = self.pending = None

    def run(self, plan: RoundPlan) -> list[BlockAnswer]:
        from .data import WorkerLostError

        try:
            self.pending, small = self.data.map_state(_block_round, self.states, self.spec, self.c_scale,
                                                      self.radius, self.n_blocks, plan)
        except WorkerLostError as exc:
            raise RoundFailedError(str(exc)) from exc
        return [BlockAnswer(s["losses"], s["sums"], s["info"]) for s in small]

    def accept(self) -> None:
        self.states = self.pending

    def restart(self, k: int) -> BlockSums:  # pragma: no cover - map_state answers for every block or raises
        raise RoundFailedError(f"partition {k} did not answer")


def solve_dask_cocoa(model, *, tol=DEFAULTS["tol"], max_iter=DEFAULTS["max_iter"],
                     time_limit=None, verbose=False, random_state=0,
                     client=None, local_epochs=None, rho=None) -> Result:
    """Solve robust-dcd's model on a Dask cluster by CoCoA+ with the exact local problem.

    Parameters
    ----------
    model : DistributedModel or Model
        A model on partitioned data (one block per partition); an in-memory
        :class:`~robustsvm.model.Model` is partitioned over the workers of ``client`` first.
    tol : float, default 1e-4
        Stop when the certified relative duality gap ``(P − D)/|P|`` is at most ``tol``.
    max_iter : int, default 500
        Rounds (each: one local ascent per partition and one certificate).
    time_limit : float, optional
        Seconds; the fit stops with status ``"time_limit"`` and its last certificate after it.
    verbose : bool
    random_state : int, default 0
        Seed of the local epochs' orders (a round is a deterministic function of its inputs).
    client : distributed.Client, optional
        Only for an in-memory model (the current client by default).
    local_epochs : int, default 2
        robust-dcd epochs of each block per round.
    rho : float, optional
        Augmented-Lagrangian weight of a free intercept (:func:`default_rho`).

    Returns
    -------
    Result
        ``gap`` and ``dual_value`` from the blocks' sums (``dual_feasible``); ``extra`` holds the rounds, the
        partitions, the bytes sent and received per round and the restarted blocks. A round that cannot be
        completed on the cluster ends the fit with status ``"worker_lost"`` and its last certificate.
    """
    from .model import DistributedModel, as_distributed

    t_start = time.perf_counter()
    if not isinstance(model, DistributedModel):
        model = as_distributed(model, client)
    tol = float(tol)
    max_iter = int(max_iter)
    epochs = LOCAL_EPOCHS if local_epochs is None else int(local_epochs)
    check_limits(model, max_iter, time_limit)
    if epochs < 1:
        raise ValueError(f"local_epochs must be a positive integer, got {local_epochs!r}")
    spec = distributed_spec(model)
    K = model.data.k
    if model.intercept.mode == "free":
        total, count = (sum(t) for t in zip(*model.data.map(_weighted_norms), strict=True))
        rho = default_rho(model.intercept, rho, np.ones(1), np.array([total / max(count, 1.0)]), model.l2, K)
    else:
        rho = default_rho(model.intercept, rho, np.ones(1), np.ones(1), model.l2, K)
    rounds = DaskRounds(model, spec)
    rounds0, resubmitted0 = model.data.rounds, model.data.resubmitted
    try:
        with one_blas_thread():  # the client's certificate between rounds (backends.threads.one_blas_thread)
            run = run_rounds(rounds, spec, [BlockSums.zeros(model.d) for _ in range(K)],
                             penalty=model.penalty.value, scale=model.c_sum, rho=rho, tol=tol, max_iter=max_iter,
                             time_limit=time_limit, epochs=epochs, seed=int(random_state or 0), verbose=verbose)
    finally:
        rounds.states = rounds.pending = None
        model.data.free_states()  # the workers free the dual blocks
    return cocoa_result(run, tol=tol, intercept=model.intercept, t_start=t_start, multipliers=None,
                        extra={"rho": rho, "partitions": K, "rounds": model.data.rounds - rounds0,
                               "resubmitted_rounds": model.data.resubmitted - resubmitted0})


#: what dask-cocoa solves: robust-dcd's models (soft-margin losses, L2 > 0 with optional L1, signs, every intercept
#: mode, nominal or one shared Box, Ball with p = 1, 2, ∞ or an Ellipsoid in at most ELLIPSOID_MAX_FEATURES
#: dimensions)
NEEDS = shared_set_needs(
    "dask-cocoa", (1.0, 2.0, math.inf),
    ": the prox of its dual norm has no closed form); solve it in memory with the conic backends",
    "other sets have no cheap prox of their support function; solve them in memory with the conic backends",
    ellipsoid_max_dim=ELLIPSOID_MAX_FEATURES,
    ellipsoid_hint=": its local coordinate step costs O(d²) per inner step there; dask-ipm solves it on a dask array")

register(
    Backend(
        name="dask-cocoa",
        solve=solve_dask_cocoa,
        needs=NEEDS,
        summary="CoCoA+ on a Dask cluster (wide or sparse data) with robust-dcd as the exact local solver: per "
                "round each partition sends d (2d with a free intercept) numbers and a few scalars; robust-dcd's "
                "models; certified by the duality gap from partition sums",
        options=frozenset({"time_limit", "client", "local_epochs", "rho"}),
        kind=DISTRIBUTED,
        certificate="duality gap P(w, b) − D_u(α) from partition sums (absolute)",
        defaults=DEFAULTS,
    ),
    replace=True,
)

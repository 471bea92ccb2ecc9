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

import time
from dataclasses import replace
from itertools import pairwise

import numpy as np
import scipy.sparse as sp

from ..backends.dual_ascent import intercept_rho
from ..backends.shared_set import SharedSetArrays
from ..result import Result
from ._cocoa_rounds import BlockAnswer, RoundPlan, Rounds, RoundsOutcome, run_rounds
from ._local import Block, BlockSums, block_losses, block_sums, local_ascent, make_block

__all__ = ["DEFAULTS", "SerialRounds", "client_spec", "cocoa_result", "default_rho", "solve_cocoa_blocks"]

#: ``tol`` (relative duality gap), ``max_iter`` (rounds) and local epochs per round when the caller gives none
DEFAULTS = {"tol": 1e-4, "max_iter": 500, "local_epochs": 5}


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


def cocoa_result(run: RoundsOutcome, *, tol: float, intercept, t_start: float, multipliers, extra: dict) -> Result:
    """The :class:`Result` of the rounds' best certificate."""
    cert = run.cert
    message = (f"relative duality gap {cert.rel_gap:.3g} after {run.rounds} rounds"
               + ("" if run.status == "optimal" else f" (tolerance {tol:g} not reached: {run.status})"))
    return Result(
        w=cert.w, b=float(cert.b) if intercept.present else 0.0, status=run.status, gap=cert.gap,
        iterations=run.rounds, history=run.history.arrays(), time_solve=time.perf_counter() - t_start,
        message=message, dual_value=cert.D, dual_feasible=True, multipliers=multipliers,
        extra={"dual_objective": cert.D, "primal_objective": cert.P, "rel_gap": cert.rel_gap,
               "bytes_down": run.bytes_down, "bytes_up": run.bytes_up,
               "bytes_per_round": (run.bytes_down + run.bytes_up) / max(run.rounds, 1),
               "restarted_blocks": run.restarts, "undone_local_epochs": run.undone, **extra},
    )


def solve_cocoa_blocks(model, n_blocks: int = 2, *, tol=None, max_iter=None, time_limit=None, local_epochs=None,
                       random_state=0, rho=None, verbose=False, lose=None) -> Result:
    """CoCoA+ on an in-memory model split into ``n_blocks`` contiguous row blocks, in this process.

    Parameters
    ----------
    model : Model
        A normalized model inside robust-dcd's declaration.
    n_blocks : int
        ``K``.
    tol, max_iter, time_limit, local_epochs
        Relative duality gap, rounds, seconds and robust-dcd epochs per block and round (:data:`DEFAULTS`).
    random_state : int
        Seed of the local epochs' orders.
    rho : float, optional
        Augmented-Lagrangian weight of a free intercept (:func:`default_rho`).
    lose : dict, optional
        ``{round: blocks}`` whose answers are dropped in that round (the restart of a lost block).

    Returns
    -------
    Result
        ``extra["dual_alpha"]`` the final α in row order.
    """
    t_start = time.perf_counter()
    tol = DEFAULTS["tol"] if tol is None else float(tol)
    max_iter = DEFAULTS["max_iter"] if max_iter is None else int(max_iter)
    epochs = DEFAULTS["local_epochs"] if local_epochs is None else int(local_epochs)
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
                        extra={"dual_alpha": alpha, "rho": rho, "n_blocks": K})

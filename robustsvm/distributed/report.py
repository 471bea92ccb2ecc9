"""The certifier's one pass over the partitions: the objective, the violation, what the degeneracy report reads.

At the certified point ``(w, b)`` each partition ``k`` forms its decisions ``z_i = x_i·w`` where its rows are (a slice
at a time from disk, :meth:`.data.Block.row_slices`) and returns O(d) numbers (:func:`certify_terms`): the loss sum
``Σ_{i∈k} c_i ℓ(m_i)`` and ``min_i m_i`` of the robust margins ``m_i = y_i(z_i + b) − r σ_V(∓w)`` (as
:func:`.model.margin_terms`), ``min_i z_i`` and ``max_i z_i``, the weighted counts ``Σ c_i [y_i(z_i + b) > 0]``,
``Σ c_i [z_i + b > 0]``, ``Σ_{y_i = +1} c_i``, ``Σ c_i``, the first, smallest and largest ``c_i``, and, for a
point its backend did not claim optimal, the columns' ``max_i |x_ih|``. The client combines them
(:func:`certify_pass`) into ``P(w, b)``, the violation, the
:class:`~robustsvm.certificates.degenerate.DecisionSummary` and the columns' scales (the note of an unfinished
solve, :func:`robustsvm.conic.scaling.scales_note`; a claimed optimum the certificate does not confirm reads them
in a round of their own, :func:`column_scales`). Neither ``X`` nor the n decisions leave the workers: the client
receives ``11k`` numbers (``k(d + 11)`` with the scales), in the round that re-scores the objective (no second
read of the rows). The columns' scales are not formed on every fit: two more passes over the rows, the round on
400,000 × 50 rows (8 partitions, two workers) took 80.7 ms with them, 55.6 ms without, 51.3 ms for the objective
alone (medians, alternated on one cluster).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..certificates.degenerate import DecisionSummary
from ..conic.scaling import column_scale
from ..terms.losses import Loss
from .blocks import Block
from .model import DistributedModel

__all__ = ["certify_pass", "certify_terms", "column_scales"]


def certify_terms(block: Block, w: np.ndarray, b: float, shifts: tuple[float, float], loss: Loss,
                  c_scale: float, scales: bool = False) -> dict:
    """One partition's sums at ``(w, b)`` (see the module docstring), in one pass over its rows (``scales``: with
    the columns' ``max_i |x_ih|``)."""
    out = {"loss": 0.0, "margin": np.inf, "low": np.inf, "high": -np.inf, "correct": 0.0, "predicted": 0.0,
           "positive": 0.0, "total": 0.0, "first": np.nan, "c_low": np.inf, "c_high": -np.inf,
           "scale": np.zeros(w.shape[0]) if scales else None}
    for lo, hi, X in block.row_slices():
        if hi == lo:
            continue
        y = block.y[lo:hi]
        c = c_scale * block.weight[lo:hi]
        z = np.asarray(X @ w).ravel()
        scores = z + b
        m = y * scores - np.where(y > 0, shifts[0], shifts[1])
        if not loss.is_constraint:
            out["loss"] += float(c @ loss.value(m))
        if lo == 0:
            out["first"] = float(c[0])
        out["margin"] = min(out["margin"], float(m.min()))
        out["low"], out["high"] = min(out["low"], float(z.min())), max(out["high"], float(z.max()))
        out["correct"] += float(c @ (y * scores > 0))
        out["predicted"] += float(c @ (scores > 0))
        out["positive"] += float(c @ (y > 0))
        out["total"] += float(c.sum())
        out["c_low"], out["c_high"] = min(out["c_low"], float(c.min())), max(out["c_high"], float(c.max()))
        if scales:
            out["scale"] = np.maximum(out["scale"], column_scale(X))
    return out


def _block_scale(block: Block) -> np.ndarray:
    scale = np.zeros(block.X.shape[1])
    for lo, hi, X in block.row_slices():
        if hi > lo:
            scale = np.maximum(scale, column_scale(X))
    return scale


def column_scales(model: DistributedModel) -> np.ndarray:
    """The columns' ``max_i |x_ih|`` over the partitions (one round)."""
    return np.max(model.data.map(_block_scale), axis=0)


def certify_pass(model: DistributedModel, w: np.ndarray, b: float, *,
                 scales: bool = False) -> tuple[float, float, DecisionSummary, np.ndarray | None]:
    """``P(w, b)``, the largest violation of the signs (and of the hard margins), the decision's
    :class:`~robustsvm.certificates.degenerate.DecisionSummary` and, with ``scales``, the columns' ``max_i |x_ih|``
    (else None), in one round."""
    w = np.asarray(w, dtype=np.float64)
    parts = [p for p in model.data.map(certify_terms, w, float(b), model.shifts(w), model.loss, model.c_scale,
                                       bool(scales)) if np.isfinite(p["low"])]  # the partitions with rows
    objective = float(model.penalty.value(w) + model.intercept.value(b) + sum(p["loss"] for p in parts))
    v = float(np.max(-model.signs * w)) if model.has_signs else 0.0
    if model.loss.is_constraint:
        v = max(v, 1.0 - min(p["margin"] for p in parts))
    summary = DecisionSummary(spread=max(p["high"] for p in parts) - min(p["low"] for p in parts),
                              correct=sum(p["correct"] for p in parts),
                              predicted_positive=sum(p["predicted"] for p in parts),
                              positive=sum(p["positive"] for p in parts), total=sum(p["total"] for p in parts),
                              weighted=_varies(parts))
    return objective, max(0.0, v), summary, np.max([p["scale"] for p in parts], axis=0) if scales else None


def _varies(parts: list[dict[str, Any]]) -> bool:
    """Whether the ``c_i`` differ as ``np.allclose(c, c_0)`` judges (``|c_i − c_0| ≤ 1e-8 + 1e-5 |c_0|``): from
    the first ``c_0`` and the smallest and largest ``c_i``."""
    first = next(p["first"] for p in parts if np.isfinite(p["first"]))
    low, high = min(p["c_low"] for p in parts), max(p["c_high"] for p in parts)
    return bool(max(high - first, first - low) > 1e-8 + 1e-5 * abs(first))

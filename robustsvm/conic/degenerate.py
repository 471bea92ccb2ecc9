"""A degenerate answer: a certified solution whose decision is constant on its training data.

With L2(λ2), λ2 > 0, the objective is λ2-strongly convex in ``w``, so a point with certified gap ``g`` lies
within ``δ = sqrt(2(g + ε)/λ2)`` of the optimal weights (``‖w − w*‖₂ ≤ δ``; ``ε`` is the rounding of the two
sums the gap is the difference of, 64 ulps of the objective): :func:`weight_resolution`. A weight below ``δ``
may be 0 at the optimum, and a decision ``x_i·w`` whose spread over the training rows is at most ``2δ max_i ‖x_i‖``
may be constant at the optimum. :func:`diagnose` reports such a solution and names the cause: the radius or λ1
beyond its critical value (:mod:`robustsvm.conic.critical`), or data for which the constant classifier is
optimal.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import scipy.sparse as sp

from . import critical

__all__ = ["count_nonzeros", "diagnose", "explain_report", "weight_resolution"]

#: ulps of the objective counted as rounding in a computed gap
_ROUNDING_ULPS = 64
#: without λ2 the certificate does not bound ‖w − w*‖: weights below this are read as zero
_FLOOR = 1e-8


def weight_resolution(gap: float, objective: float, l2: float) -> float:
    """``sqrt(2(g + ε)/λ2)``, the radius of the ball around ``w`` that holds ``w*`` (NaN without λ2 or gap)."""
    if not (l2 > 0 and math.isfinite(gap) and math.isfinite(objective)):
        return math.nan
    rounding = _ROUNDING_ULPS * np.finfo(float).eps * max(1.0, abs(objective))
    return math.sqrt(2.0 * (max(gap, 0.0) + rounding) / l2)


def _row_norm_max(X: Any) -> float:
    if X.shape[0] == 0:
        return 0.0
    if sp.issparse(X):
        return float(np.sqrt(np.max(np.asarray(X.multiply(X).sum(axis=1)).ravel())))
    return float(np.max(np.linalg.norm(X, axis=1)))


def diagnose(model: Any, w: np.ndarray, b: float, gap: float, objective: float, *,
             explain: bool = True) -> dict | None:
    """The degeneracy report of a linear solution ``(w, b)`` of ``model`` (None when it is not degenerate).

    Degenerate: the spread ``max_i x_i·w − min_i x_i·w`` is at most ``2δ max_i ‖x_i‖`` (:func:`weight_resolution`;
    ``1e-9 max(1, |b|)`` without λ2), so the certificate cannot tell the decision from a constant one. The
    report (JSON-ready) has ``cause`` (a sentence), ``predicts`` (+1 or −1, the class the constant decision
    gives), ``weight_resolution``, ``explained`` and, where they apply, ``critical_radius`` (the model's largest
    radius compared with it) and ``critical_l1``. With ``explain=False`` (the grid search's points) the critical
    values are not computed and the cause names the resolution only: :func:`explain_report` completes it.
    """
    if model.n == 0:
        return None
    resolution = weight_resolution(gap, objective, float(model.l2))
    decision = np.asarray(model.X @ w).ravel()
    spread = float(decision.max() - decision.min())
    allowed = 2.0 * resolution * _row_norm_max(model.X) if math.isfinite(resolution) else 1e-9 * max(1.0, abs(b))
    if spread > allowed:
        return None
    report: dict[str, Any] = {"predicts": 1 if b > 0 else -1, "decision_spread": spread,
                              "weight_resolution": resolution if math.isfinite(resolution) else None,
                              "critical_radius": None, "critical_l1": None, "explained": False}
    report["cause"] = _unexplained(w, resolution)
    if explain:
        explain_report(model, w, report)
    return report


def explain_report(model: Any, w: np.ndarray, report: dict) -> dict:
    """Complete ``report`` with the cause: the critical radius and λ1 compared with the model's (in place)."""
    report["cause"] = _cause(model, w, report)
    report["explained"] = True
    return report


def _unexplained(w: np.ndarray, resolution: float) -> str:
    norm = float(np.linalg.norm(w))
    if math.isfinite(resolution):
        return (f"the weights (‖w‖ = {norm:.3g}) are zero within what the certificate resolves "
                f"({resolution:.3g})")
    return f"the decision x·w is constant on the training data (‖w‖ = {norm:.3g})"


def _cause(model: Any, w: np.ndarray, report: dict) -> str:
    """The sentence naming why the model is constant (fills ``report``'s critical values it computes)."""
    resolution = report["weight_resolution"]
    try:
        if model.layout is not None:
            rc = critical.critical_radius(model)
            report["critical_radius"] = rc
            radius = float(np.max(model.layout.radius))
            if radius >= rc * (1 - 1e-9):
                verb = "exceeds" if radius > rc * (1 + 1e-6) else "reaches"
                return (f"the radius {radius:.4g} {verb} the critical radius {rc:.4g} at which the model becomes "
                        "constant")
        cl1 = critical.critical_l1(model)
        report["critical_l1"] = cl1
        if cl1 <= 0:
            return "the constant classifier is optimal for these data: no weight improves on it"
        if model.l1 >= cl1 * (1 - 1e-9):
            verb = "exceeds" if model.l1 > cl1 * (1 + 1e-6) else "reaches"
            return f"λ1 = {model.l1:.4g} {verb} the critical λ1 {cl1:.4g} at which the model becomes constant"
    except (ValueError, RuntimeError):  # a model the critical values are not derived for
        pass
    return _unexplained(w, math.nan if resolution is None else resolution)


def count_nonzeros(w: np.ndarray, resolution: float) -> int:
    """The weights the certificate proves nonzero: ``|w_h| > δ`` (``1e-8`` when there is no ``δ``)."""
    threshold = resolution if math.isfinite(resolution) else _FLOOR
    return int(np.count_nonzero(np.abs(w) > threshold))

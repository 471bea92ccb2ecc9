"""The package's verdict on a distributed backend's point: the objective re-scored in partitions.

As :func:`robustsvm.certificates.duality.certify` for a model with signs: ``w`` is projected on the signs, ``P(w, b)``
and the violation are computed in one round (:func:`.report.certify_pass`, which also sums what the degeneracy
report reads of the decision and the columns' scales noted on an unfinished solve), and the gap is ``P − D`` with
``D`` the backend's own dual value, which it computed from partition sums at a dual point it made feasible
(``Result.dual_feasible``); without one there is no bound and the gap is infinite. A claimed optimum whose gap
exceeds ``max(1e-6, tol)·max(1, |P|)`` plus the claimed gap becomes ``"inaccurate"``.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..certificates.degenerate import DecisionSummary
from ..certificates.duality import CERT_RTOL
from ..conic.scaling import scales_note
from ..result import Result
from .model import DistributedModel
from .report import certify_pass, column_scales

__all__ = ["certify", "certify_with_summary"]


def certify(model: DistributedModel, result: Result, tol: float | None = None) -> Result:
    """The certified :class:`Result` of ``result`` on ``model`` (``certified=True``)."""
    return certify_with_summary(model, result, tol)[0]


def certify_with_summary(model: DistributedModel, result: Result,
                         tol: float | None = None) -> tuple[Result, DecisionSummary]:
    """:func:`certify` and the :class:`~robustsvm.certificates.degenerate.DecisionSummary` of the certified point's
    decision, from the same round; a status other than ``"optimal"`` notes features far from order 1
    (:func:`robustsvm.conic.scaling.scales_note`; the columns' scales taken in that round when the backend's status
    was not ``"optimal"`` already, else in a round of their own)."""
    w = np.asarray(result.w, dtype=np.float64).copy()
    w[model.signs * w < 0] = 0.0
    b = float(result.b) if model.intercept.present else 0.0
    objective, violation, summary, scale = certify_pass(model, w, b, scales=result.status != "optimal")
    bound = float(result.dual_value) if result.dual_feasible and np.isfinite(result.dual_value) else -np.inf
    gap = max(objective - bound, 0.0) if np.isfinite(bound) and np.isfinite(objective) else float("inf")
    rtol = max(CERT_RTOL, float(tol) if tol is not None else 0.0)
    claimed = float(result.gap) if np.isfinite(result.gap) and result.gap > 0 else 0.0
    status, messages = result.status, [result.message] if result.message else []
    if status == "optimal" and not gap <= rtol * max(1.0, abs(objective)) + claimed:
        status = "inaccurate"
        messages.append(f"the package's duality gap {gap:.3g} (objective {objective:.10g}, dual bound {bound:.10g}) "
                        f"exceeds the solver's claim ({claimed:.3g}) and the tolerance {rtol:.1g}·max(1, |P|)")
    if status != "optimal" and scale is None:  # a claimed optimum the certificate does not confirm
        scale = column_scales(model)
    note = scales_note(scale, model.feature_names) if status != "optimal" else ""
    if note and note[2:] not in "; ".join(messages):
        messages.append(note[2:])
    return replace(result, w=w, b=b, status=status, gap=gap, dual_value=bound, dual_feasible=True,
                   dual_objective=float(result.dual_value), objective=objective, violation=violation,
                   message="; ".join(messages), certified=True), summary

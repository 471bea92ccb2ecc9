"""A degenerate answer: a certified solution whose decision is constant on its training data.

With L2(λ2), λ2 > 0, the objective is λ2-strongly convex in ``w``, so a point with certified gap ``g`` lies
within ``δ = sqrt(2(g + ε)/λ2)`` of the optimal weights (``‖w − w*‖₂ ≤ δ``; ``ε`` is the rounding of the two
sums the gap is the difference of, 64 ulps of the objective): :func:`weight_resolution`. A weight below ``δ``
may be 0 at the optimum. :func:`diagnose` reports a solution whose decision is constant, or whose weights are all
within ``δ`` of 0 while the exact conditions at ``w = 0`` (:mod:`robustsvm.certificates.critical`) do not prove
``w* ≠ 0``, and names the cause: the radius or λ1 beyond its critical value, or data for which the constant
classifier is optimal. An objective below the constant classifier's proves ``w* ≠ 0`` first, in O(n)
(:func:`improves_on_constant`). A solution whose scores vary but that classifies its training data no better than
the constant classifier (one class for every sample is the extreme case) is reported too (:func:`uninformative`,
``report["uninformative"]``), with what outweighs the data. Both read the decision through a
:class:`DecisionSummary` (its spread, the weighted training accuracy, the classes' weights), formed from ``Xw`` in
memory (:func:`summarize`) or summed in the certifier's pass over the partitions of data on a cluster
(:mod:`robustsvm.distributed.report`), where the critical values are not computed.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import objective as objective_module
from ..exceptions import DegenerateSolutionWarning
from . import critical

__all__ = ["UNINFORMATIVE", "DecisionSummary", "announce", "compare_critical", "count_nonzeros", "diagnose",
           "explain_report", "explain_with_critical", "improves_on_constant", "summarize", "uninformative",
           "weight_resolution"]

#: ulps of the objective counted as rounding in a computed gap
_ROUNDING_ULPS = 64
#: without λ2 the certificate does not bound ‖w − w*‖: weights below this are read as zero
_FLOOR = 1e-8
#: the largest model whose report is explained by the critical-value programs after a solve (their conic program
#: has a variable per sample and several per feature). Measured on constant Box models after solves of under a
#: second (a loaded 2-core machine): 19,020 × 10 dense (1.9·10⁵ entries) 1.3 s, 20,000 × 100 dense (2·10⁶)
#: 108 s, 2,000 × 1,500 dense 423 s, 5,000 × 20,000 sparse (10⁵ non-zeros, 2·10⁴ features) 69 s. Above either
#: limit the report names the certificate's resolution and points to :func:`robustsvm.critical_radius` /
#: :func:`robustsvm.critical_l1`
EXPLAIN_MAX_FEATURES = 2_000
#: a critical λ1 below this fraction of ``Σ_i c_i max|x_ih|`` (the largest it can be) is 0 up to its program's rounding
_CRITICAL_ROUNDING = 1e-9
#: how the warning on a model no better than a constant one begins (:func:`uninformative`)
UNINFORMATIVE = "the model classifies its training data no better than a constant one"
EXPLAIN_MAX_ENTRIES = 200_000


def weight_resolution(gap: float, objective: float, l2: float) -> float:
    """``sqrt(2(g + ε)/λ2)``, the radius of the ball around ``w`` that holds ``w*`` (NaN without λ2 or gap)."""
    if not (l2 > 0 and math.isfinite(gap) and math.isfinite(objective)):
        return math.nan
    rounding = _ROUNDING_ULPS * np.finfo(float).eps * max(1.0, abs(objective))
    return math.sqrt(2.0 * (max(gap, 0.0) + rounding) / l2)


@dataclass(frozen=True)
class DecisionSummary:
    """What the degeneracy report reads of the decision ``z_i = x_i·w`` of a solution ``(w, b)`` on its training
    data, weighted by the model's ``c`` (sample and class weights): O(1) numbers, summed over partitions on a
    cluster.

    Attributes
    ----------
    spread : float
        ``max_i z_i − min_i z_i``.
    correct : float
        ``Σ_i c_i [y_i (z_i + b) > 0]``.
    predicted_positive : float
        ``Σ_i c_i [z_i + b > 0]``.
    positive : float
        ``Σ_{y_i = +1} c_i``.
    total : float
        ``Σ_i c_i``.
    weighted : bool
        Whether the ``c_i`` differ (``np.allclose(c, c_0)`` fails).
    """

    spread: float
    correct: float
    predicted_positive: float
    positive: float
    total: float
    weighted: bool

    @property
    def negative(self) -> float:
        """``Σ_{y_i = −1} c_i``."""
        return self.total - self.positive


def summarize(model: Any, decision: np.ndarray, b: float) -> DecisionSummary:
    """The :class:`DecisionSummary` of ``decision`` (``Xw``, or a kernel expansion's scores without ``b``) on an
    in-memory ``model``."""
    c = np.asarray(model.c, dtype=np.float64)
    y = np.asarray(model.y, dtype=np.float64)
    scores = decision + b
    return DecisionSummary(spread=float(decision.max() - decision.min()) if decision.size else 0.0,
                           correct=float(c @ (y * scores > 0)), predicted_positive=float(c @ (scores > 0)),
                           positive=float(c @ (y > 0)), total=float(c.sum()),
                           weighted=bool(c.size) and not np.allclose(c, c[0]))


def diagnose(model: Any, w: np.ndarray, b: float, gap: float, objective: float, *,
             explain: bool = True, decision: np.ndarray | DecisionSummary | None = None) -> dict | None:
    """The degeneracy report of a linear solution ``(w, b)`` of ``model`` (None when it is not degenerate).

    Degenerate: the decision ``x_i·w`` is constant on the training data (its spread at most ``1e-9 max(1, |b|)``),
    or ``‖w‖₂ ≤ δ`` (:func:`weight_resolution`: ``w* = 0`` cannot be excluded) and the exact conditions at
    ``w = 0`` do not exclude it either: a radius below the critical radius, or λ1 below the critical λ1, proves
    ``w* ≠ 0`` and clears the report (:func:`explain_report`). The report (JSON-ready) has ``cause`` (a sentence),
    ``predicts`` (+1 or −1, the class the constant decision gives), ``weight_resolution``, ``explained`` and,
    where computed, ``critical_radius`` (the model's largest radius compared with it) and ``critical_l1``. With
    ``explain=False`` (a grid search's points) the critical values are not computed and the cause names the
    resolution only: :func:`explain_report` completes it. ``decision`` is ``Xw`` when the caller has it (the
    certifier's, :func:`robustsvm.certificates.duality.certify_with_decision`), else formed here; on a cluster it is
    the :class:`DecisionSummary` the certifier summed over the partitions (:mod:`robustsvm.distributed.report`).
    """
    if model.n == 0:
        return None
    resolution = weight_resolution(gap, objective, float(model.l2))
    if not isinstance(decision, DecisionSummary):
        decision = np.asarray(model.X @ w).ravel() if decision is None else decision
    spread = decision.spread if isinstance(decision, DecisionSummary) else float(decision.max() - decision.min())
    constant = spread <= 1e-9 * max(1.0, abs(b))
    unresolved = math.isfinite(resolution) and float(np.linalg.norm(w)) <= resolution
    summary = decision if isinstance(decision, DecisionSummary) else None
    if not (constant or unresolved) or (not constant and improves_on_constant(model, objective, summary)):
        return uninformative(model, summary if summary is not None else summarize(model, decision, b))
    report: dict[str, Any] = {"predicts": 1 if b > 0 else -1, "decision_spread": spread, "constant_decision": constant,
                              "weight_resolution": resolution if math.isfinite(resolution) else None,
                              "critical_radius": None, "critical_l1": None, "explained": False}
    report["cause"] = _unexplained(w, resolution)
    if explain:
        return explain_report(model, w, report)
    return report


def uninformative(model: Any, summary: DecisionSummary) -> dict | None:
    """The report of a solution whose scores ``x_i·w + b`` vary but classify the training data no better than the
    constant classifier: ``Σ_i c_i [y_i (x_i·w + b) > 0] ≤ max(Σ_{y=+1} c_i, Σ_{y=−1} c_i)``, accuracies weighted
    by the model's ``c`` (sample and class weights) — one class for every sample is the extreme case. None
    otherwise. Its scores may still rank the samples; as a classifier it is useless on these data. The cause names
    what the data weigh less than: the penalty, the set, the class balance. ``summary``: the scores' sums
    (:class:`DecisionSummary`)."""
    total = summary.total
    if model.n < 2 or not total > 0:
        return None
    accuracy = summary.correct / total
    share_pos = summary.positive / total
    constant = max(share_pos, 1.0 - share_pos)
    if accuracy > constant * (1 + 1e-12):
        return None
    predicted_pos = summary.predicted_positive / total
    weighted = summary.weighted
    spread = summary.spread
    what = "weighted training accuracy" if weighted else "training accuracy"
    levers = [f"a smaller {name} (here {value:.3g})" for name, value in (("λ2", float(model.l2)),
                                                                           ("λ1", float(model.l1))) if value > 0]
    if _has_set(model):
        levers.append("a smaller radius")
    if model.kernel is not None:
        levers.append(f"another kernel or kernel parameter (here {model.kernel!r})")
    if _restricted(model):
        levers.append("fewer or other signs, bounds or constraints (they may rule out the direction that separates "
                      "the classes)")
    if not weighted:
        levers.append("class weights that balance the classes (class_weight='balanced'; --class-weight balanced on "
                      "the command line)")
    if levers:
        joined = ", ".join(levers[:-1]) + " or " + levers[-1] if len(levers) > 1 else levers[0]
        advice = f"{joined[0].upper()}{joined[1:]} let the model separate the classes"
    else:
        advice = "The features may carry no signal this model can use"
    cause = (f"its {what} {accuracy:.4f} is no better than always predicting the larger class ({constant:.4f}); "
             f"its scores vary (spread {spread:.3g}) and may still rank the samples. {advice}")
    return {"predicts": 1 if predicted_pos >= 0.5 else -1, "decision_spread": spread, "constant_decision": False,
            "uninformative": True, "training_accuracy": accuracy, "constant_accuracy": constant,
            "weight_resolution": None, "critical_radius": None, "critical_l1": None, "explained": True,
            "proved": True, "cause": cause}


def _on_cluster(model: Any) -> bool:
    """Whether the model's rows are partitioned on a cluster (:class:`robustsvm.distributed.model.DistributedModel`:
    no ``X``, one shared set)."""
    return bool(getattr(model, "on_cluster", False))


def _has_set(model: Any) -> bool:
    """Whether the model has an uncertainty set (a radius to lower)."""
    if _on_cluster(model):
        return model.uncertainty is not None
    return model.layout is not None or model.distribution is not None


def _restricted(model: Any) -> bool:
    """Whether signs, bounds or linear constraints restrict the weights."""
    if _on_cluster(model):  # signs only
        return model.has_signs
    ws = model.feasible_set
    return bool(np.any(ws.lower > -np.inf) or np.any(ws.upper < np.inf) or model.has_constraints)


def improves_on_constant(model: Any, objective: float, summary: DecisionSummary | None = None) -> bool:
    """True when the objective ``P(w, b)`` of a feasible point proves ``w* ≠ 0``: it is below ``P(0, b₀)``, the
    value of the constant classifier ``b₀`` (:func:`robustsvm.certificates.critical.constant_classifier`, the best
    objective with ``w = 0``), by more than the rounding of the sums (:data:`_ROUNDING_ULPS` ulps). Every point with
    ``w = 0`` then has an objective above ``P* ≤ P(w, b)``. O(n), against a conic program for the critical λ1.

    On a cluster ``P(0, b₀) = I(b₀) + C₊ ℓ(b₀) + C₋ ℓ(−b₀)`` (``C±`` the classes' weights, from ``summary``: at
    ``w = 0`` every margin is ``±b₀``, a set's shift ``r σ_V(0)`` is 0); without ``summary`` it is not known: False.
    """
    if not math.isfinite(objective) or model.distribution is not None:
        return False  # a set of distributions keeps a budget at w = 0 that b₀ does not minimize
    try:
        if _on_cluster(model):
            if summary is None:
                return False
            b0 = critical.constant_intercept(model.loss, model.intercept, summary.positive, summary.negative)
            value = float(model.intercept.value(b0) + summary.positive * float(model.loss.value(np.array([b0]))[0])
                          + summary.negative * float(model.loss.value(np.array([-b0]))[0]))
        else:
            const = critical.constant_classifier(model)
            value = float(objective_module.objective(model, np.zeros(model.d), const.b))
    except ValueError:  # a loss the constant classifier is not derived for
        return False
    rounding = _ROUNDING_ULPS * np.finfo(float).eps * max(1.0, abs(value), abs(objective))
    return bool(objective < value - rounding)


def explain_report(model: Any, w: np.ndarray, report: dict) -> dict | None:
    """``report`` completed with its cause, the critical radius and λ1 compared with the model's (in place); None
    when they prove ``w* ≠ 0`` and the decision of ``w`` is not constant (the report is withdrawn)."""
    cause, verdict = _cause(model, w, report)
    if verdict == "refuted" and report["constant_decision"]:
        cause = _below_rounding(model, report)
    return _completed(report, w, cause, verdict)


def _completed(report: dict, w: np.ndarray, cause: str, verdict: str) -> dict | None:
    constant = bool(report["constant_decision"])
    if verdict == "refuted" and not constant:
        return None
    report["cause"] = cause if cause else _unexplained(w, math.nan)
    report["proved"] = verdict == "proved" or constant
    report["explained"] = True
    return report


def _unexplained(w: np.ndarray, resolution: float | None) -> str:
    norm = float(np.linalg.norm(w))
    if resolution is not None and math.isfinite(resolution):
        return (f"the weights (‖w‖ = {norm:.3g}) are zero within what the certificate resolves "
                f"({resolution:.3g})")
    return f"the decision x·w is constant on the training data (‖w‖ = {norm:.3g})"


def _cause(model: Any, w: np.ndarray, report: dict) -> tuple[str, str]:
    """The sentence naming why the model is constant and the critical values' verdict: ``"proved"`` (``w* = 0``),
    ``"refuted"`` (``w* ≠ 0``) or ``"unknown"`` (not derived for this model, or above the size the programs are
    run for after a solve: :data:`EXPLAIN_MAX_FEATURES`, :data:`EXPLAIN_MAX_ENTRIES`); fills ``report``'s critical
    values."""
    if _on_cluster(model):
        which = "critical_radius" if _has_set(model) else "critical_l1"
        return (f"{_unexplained(w, report['weight_resolution'])}; the critical values are not computed for data on a "
                f"cluster ({model.n:,} × {model.d:,}): rs.{which} computes it on the data in memory"), "unknown"
    if not _explainable(model):
        which = "critical_radius" if _has_set(model) else "critical_l1"
        return (f"{_unexplained(w, report['weight_resolution'])}; the critical value is not computed after a solve "
                f"of this size ({model.n:,} × {model.d:,}): rs.{which} computes it"), "unknown"
    try:
        if model.layout is not None:
            rc = critical.model_critical_radius(model)
            report["critical_radius"] = rc
            radii = np.asarray(model.layout.radius, dtype=np.float64)
            return compare_critical("radius", float(np.max(radii)), rc, varying=bool(np.ptp(radii) > 0))
        cl1 = critical.model_critical_l1(model)
        report["critical_l1"] = cl1
        X = model.X
        scale = float(np.sum(model.c)) * float(abs(X).max() if X.shape[0] and X.shape[1] else 0.0)
        if cl1 <= _CRITICAL_ROUNDING * scale:  # 0 but for the rounding of its conic program
            return ("the constant classifier is optimal for these data: no weight " + (
                "the signs, bounds or constraints allow improves on it (fewer or other ones may let the model "
                "separate the classes)" if _restricted(model) else "improves on it")), "proved"
        return compare_critical("l1", float(model.l1), cl1)
    except (ValueError, RuntimeError):  # a model the critical values are not derived for
        return _unexplained(w, report["weight_resolution"]), "unknown"


def _below_rounding(model: Any, report: dict) -> str:
    """The cause of a decision constant on the training data at weights the critical value proves are not 0: the
    optimal decision varies less than its rounding, its features being small next to the penalty."""
    X = model.X
    largest = float(abs(X).max()) if X.shape[0] and X.shape[1] else 0.0
    critical_value = report["critical_radius"] if report["critical_radius"] is not None else report["critical_l1"]
    which = "radius" if report["critical_radius"] is not None else "λ1"
    lever = (f"λ2 = {float(model.l2):.3g} is large next to the features' scale (largest |x| {largest:.3g}): "
             "standardize the features (StandardScaler) or lower λ2" if model.l2 > 0 else
             f"the features' scale (largest |x| {largest:.3g}) is too small: standardize them (StandardScaler)")
    return (f"the optimal weights are not 0 (the model's {which} is below the critical {which} {critical_value:.4g}), "
            f"but the decision x·w they give varies by {report['decision_spread']:.3g} on the training data: {lever}")


def _explainable(model: Any) -> bool:
    """Whether the critical-value programs are cheap enough to run after a solve of ``model``."""
    X = model.X
    entries = int(X.nnz) if hasattr(X, "nnz") else int(np.prod(X.shape))
    return model.d <= EXPLAIN_MAX_FEATURES and entries <= EXPLAIN_MAX_ENTRIES


def compare_critical(parameter: str, value: float, critical_value: float, *,
                     varying: bool = False) -> tuple[str, str]:
    """The cause sentence and verdict (``"proved"``/``"refuted"``) of a model whose ``parameter`` (``"radius"`` or
    ``"l1"``) is ``value``, against the critical value at and above which ``w* = 0`` (``varying``: per-sample
    radii, ``value`` their largest, scaled together)."""
    if critical_value <= 0:
        if parameter == "radius":
            return ("the constant classifier is optimal for these data, without uncertainty (critical radius 0)",
                    "proved")
        return "the constant classifier is optimal for these data: no weight improves on it", "proved"
    if value < critical_value * (1 - 1e-9):
        return "", "refuted"
    verb = "exceeds" if value > critical_value * (1 + 1e-6) else "reaches"
    if parameter == "radius":
        if varying:
            return (f"the largest of the samples' radii, {value:.4g}, {verb} the critical radius "
                    f"{critical_value:.4g} at which the model becomes constant (all radii scaled in proportion)",
                    "proved")
        return (f"the radius {value:.4g} {verb} the critical radius {critical_value:.4g} at which the model becomes "
                "constant", "proved")
    return f"λ1 = {value:.4g} {verb} the critical λ1 {critical_value:.4g} at which the model becomes constant", "proved"


def explain_with_critical(report: dict, w: np.ndarray, parameter: str, value: float,
                          critical_value: float) -> dict | None:
    """:func:`explain_report` when the critical value of ``parameter`` is already known (a path computes it once):
    the report completed in place, or None when ``value`` below it and a non-constant decision refute it."""
    report["critical_radius" if parameter == "radius" else "critical_l1"] = critical_value
    return _completed(report, w, *compare_critical(parameter, value, critical_value))


def count_nonzeros(w: np.ndarray, resolution: float) -> int:
    """The weights the certificate proves nonzero: ``|w_h| > δ`` (``1e-8`` when there is no ``δ``)."""
    threshold = resolution if math.isfinite(resolution) else _FLOOR
    return int(np.count_nonzero(np.abs(w) > threshold))


def announce(sol: Any, model: Any, *, stacklevel: int = 1) -> Any:
    """Warn (:class:`DegenerateSolutionWarning`) when ``sol`` is degenerate, its cause computed first if it was
    not (a solution built with ``warn=False``, then returned to a caller that warns)."""
    report = sol.degenerate
    if report is not None and not report.get("explained"):
        report = explain_report(model, sol.w, report)  # None: the critical values prove w* ≠ 0
        sol.degenerate = report
    if report is None:
        return sol
    label = model.classes[1] if report["predicts"] > 0 else model.classes[0]
    label = label.item() if isinstance(label, np.generic) else label
    if report.get("uninformative"):
        warnings.warn(f"{UNINFORMATIVE}: {report['cause']}",
                      DegenerateSolutionWarning, stacklevel=stacklevel + 1)
        return sol
    verb = "is" if report.get("proved") else "may be (its certificate cannot tell)"
    warnings.warn(f"the model {verb} constant on its training data (it predicts {label!r} for every sample): "
                  f"{report['cause']}", DegenerateSolutionWarning, stacklevel=stacklevel + 1)
    return sol

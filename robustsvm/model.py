"""The normalized model: what every backend reads, built once per solve.

:func:`normalize` turns a :class:`~robustsvm.problem.Problem` (what the user
wrote) and validated data into a :class:`Model`, an immutable record of the
numbers that define the objective

    P(w, b) = (λ2/2)‖w‖² + λ1‖w‖₁ + I(b) + Σ_i c_i ℓ(y_i(x_i·w + b) − r_i σ_{V_i}(−y_i w))
    subject to w ∈ W = {l ≤ w ≤ u, lb ≤ A w ≤ ub}  (signs: the intervals [0, ∞) and (−∞, 0]),

with ``I`` the intercept term (:class:`~robustsvm.terms.intercept.Intercept`). The
per-sample loss coefficients ``c``, the sign vector, the uncertainty layout
(which set and which radius each sample has) and the intercept mode are
resolved here and nowhere else (the bounds and linear constraints as one
:class:`~robustsvm.priors.constraints.WeightSet`); parameters have one name each: ``l2``, ``l1``,
``intercept.mu``, ``layout.radius``, ``sample_weight``.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ._validation import DataShape, FitData, check_sample_weight, sign_orientation
from .priors.constraints import WeightSet, weight_set
from .terms.intercept import Intercept, intercept_term
from .terms.kernels import Kernel
from .terms.losses import Loss
from .terms.penalties import Penalty
from .uncertainty import DistributionalSet, RobustLayout, UncertaintySet, check_radius_applies, resolve_uncertainty

__all__ = ["Model", "ModelSummary", "normalize", "solved_problem", "summarize", "weight_reach"]


@dataclass(frozen=True, eq=False)
class Model(DataShape):
    """A model with its data, normalized for the backends.

    Attributes
    ----------
    X : ndarray of shape (n, d) or scipy.sparse CSR matrix
        Features, float64 (never densified).
    y : ndarray of shape (n,)
        Labels in −1.0 / +1.0 (``classes[1]`` is +1).
    classes : ndarray of shape (2,)
        The original label values.
    sample_weight : ndarray of shape (n,)
        The user's sample weights ``s_i`` (ones by default).
    c : ndarray of shape (n,)
        The loss coefficients: ``s_i/Σ s`` (``reduction="mean"``) or ``s_i`` (``"sum"``);
        ones for a hard margin.
    loss : Loss
        The margin loss (its value, dual box and conic form).
    l2, l1 : float
        Penalty strengths λ2 and λ1.
    intercept : Intercept
        ``free``, ``none`` or ``ridge`` with ``mu``.
    signs : ndarray of shape (d,), int8
        +1 (``w_h ≥ 0``), −1 (``w_h ≤ 0``) or 0: the signs the feasible set implies (bounds ``[0, ∞)``
        are a sign), so a backend that takes signs only reads them here.
    layout : RobustLayout or None
        The distinct sets, each sample's set and radius; None for the nominal model.
    kernel : Kernel or None
        None for the linear primal model.
    feature_names : ndarray of str or None
    feasible : WeightSet or None
        The box ``[lower, upper]`` (signs and bounds intersected, oriented to ``classes[1]``) and the
        linear constraints; None means the signs alone (:attr:`feasible_set`).
    distribution : DistributionalSet or None
        A set of distributions around the whole sample (the loss term is its worst expected loss).
    """

    X: Any
    y: np.ndarray
    classes: np.ndarray
    sample_weight: np.ndarray
    c: np.ndarray
    loss: Loss
    l2: float
    l1: float
    intercept: Intercept
    signs: np.ndarray
    layout: RobustLayout | None
    kernel: Kernel | None
    feature_names: np.ndarray | None = None
    feasible: WeightSet | None = None
    distribution: DistributionalSet | None = None
    #: the rows are in memory (a :class:`~robustsvm.distributed.model.DistributedModel`'s are on a cluster)
    on_cluster = False

    # ------------------------------------------------------------- terms (n, d, is_sparse: DataShape)
    @property
    def has_signs(self) -> bool:
        return bool(np.any(self.signs))

    @property
    def feasible_set(self) -> WeightSet:
        """The feasible set of ``w`` (from the signs when the model carries none)."""
        return self.feasible if self.feasible is not None else WeightSet.from_signs(self.signs)

    @property
    def has_bounds(self) -> bool:
        """Whether ``w`` has bounds beyond signs."""
        return self.feasible is not None and self.feasible.has_bounds

    @property
    def has_constraints(self) -> bool:
        """Whether ``w`` has linear constraints."""
        return self.feasible is not None and self.feasible.has_constraints

    @property
    def penalty(self) -> Penalty:
        """The penalty term ``(λ2/2)‖w‖² + λ1‖w‖₁``."""
        return Penalty(l2=self.l2, l1=self.l1)

    @property
    def robust(self) -> bool:
        return self.layout is not None

    @property
    def shared_set(self) -> UncertaintySet | None:
        """The one set every sample shares (any radii), or None."""
        if self.layout is None or len(self.layout.sets) != 1:
            return None
        return self.layout.sets[0]

    @property
    def radius(self) -> np.ndarray | None:
        """Each sample's radius ``r_i`` (None for the nominal model)."""
        return None if self.layout is None else self.layout.radius

    @property
    def data(self) -> FitData:
        """The validated data as a :class:`FitData` (labels ±1, signs, weights)."""
        return FitData(X=self.X, y=self.y, classes=self.classes, signs=self.signs,
                       sample_weight=self.sample_weight, feature_names=self.feature_names)

    # ---------------------------------------------------------- parameters
    def with_values(self, *, l2: float | None = None, l1: float | None = None, mu: float | None = None,
                    radius: Any = None, sample_weight: Any = None) -> Model:
        """A copy with new parameter values (validated), the rest shared.

        ``radius`` is a scalar or one value per sample; ``mu`` needs a ridge
        intercept; ``sample_weight`` recomputes ``c`` with the loss's reduction.
        """
        changes = penalty_changes(self, l2=l2, l1=l1, mu=mu)
        if radius is not None and self.distribution is not None:  # the set's one radius
            changes["distribution"] = self.distribution.with_radius(radius)
        elif radius is not None:
            check_radius_applies(self.layout, radius)
            changes["layout"] = self.layout.with_radius(radius)
        if sample_weight is not None:
            sw = check_sample_weight(sample_weight, self.n)
            changes.update(sample_weight=sw, c=self.loss.coefficients(sw))
        return replace(self, **changes)


@dataclass(frozen=True, eq=False)
class ModelSummary:
    """What a model is without its data: the terms a backend's declared capabilities are checked against.

    Available before the data are seen (from a :class:`~robustsvm.problem.Problem`) and after
    (from a :class:`Model`), so that ``Backend.check``, ``rs.solvers(problem)`` and the path's
    refusals read one thing.

    Attributes
    ----------
    loss : Loss
    penalty : Penalty
        ``(λ2/2)‖w‖² + λ1‖w‖₁``.
    intercept_term : Intercept
        ``free``, ``none`` or ``ridge`` with ``mu``.
    has_signs, has_bounds, has_constraints : bool
        Whether ``w`` has sign constraints, bounds beyond signs, linear constraints.
    uncertainty : UncertaintySet, tuple of UncertaintySet or None
        The one set of the model, the sets of its samples, or None for the nominal model.
    kernel : Kernel or None
    constraints : tuple
        The linear constraints on ``w`` as written (``scipy.optimize.LinearConstraint``, ordering priors), or for a
        normalized model its stacked rows (one :class:`~robustsvm.priors.constraints.LinearConstraints`).
    """

    loss: Loss
    penalty: Penalty
    intercept_term: Intercept
    has_signs: bool
    has_bounds: bool
    has_constraints: bool
    uncertainty: UncertaintySet | tuple | None
    kernel: Kernel | None
    constraints: tuple = ()

    @property
    def polyhedral(self) -> bool:
        """Whether the robust margins add only linear constraints (no set, or sets that say they are polyhedral):
        the model is then an LP or a QP."""
        unc = self.uncertainty
        sets = () if unc is None else unc if isinstance(unc, tuple) else (unc,)
        return all(s.is_polyhedral for s in sets)


def summarize(model: Any) -> ModelSummary:
    """The :class:`ModelSummary` of a :class:`Model`, of a :class:`~robustsvm.problem.Problem` (what the user
    wrote, before any data) or of a model that provides its own (``model.summary``); a summary as is."""
    if isinstance(model, ModelSummary):
        return model
    if isinstance(model, Model):
        sets = () if model.layout is None else tuple(model.layout.sets)
        return ModelSummary(loss=model.loss, penalty=model.penalty, intercept_term=model.intercept,
                            has_signs=model.has_signs, has_bounds=model.has_bounds,
                            has_constraints=model.has_constraints,
                            uncertainty=model.distribution if model.distribution is not None else
                            None if not sets else sets[0] if len(sets) == 1 else sets,
                            kernel=model.kernel,
                            constraints=(model.feasible.linear,) if model.has_constraints else ())
    if hasattr(model, "summary"):
        return model.summary
    unc = model.uncertainty
    return ModelSummary(loss=model.loss, penalty=model.penalty, intercept_term=model.intercept_term,
                        has_signs=model.has_signs, has_bounds=model.has_bounds,
                        has_constraints=model.has_constraints,
                        uncertainty=tuple(unc) if isinstance(unc, list) else unc, kernel=model.kernel,
                        constraints=tuple(getattr(model, "constraints", None) or ()))


def penalty_changes(model: Any, *, l2: float | None = None, l1: float | None = None,
                    mu: float | None = None) -> dict[str, Any]:
    """The validated changes of λ2, λ1 and the ridge intercept's μ for ``model`` (a :class:`Model` or a model
    of the same fields: ``l2``, ``l1``, ``intercept``), as keyword arguments of ``dataclasses.replace``."""
    changes: dict[str, Any] = {}
    if l2 is not None or l1 is not None:
        pen = Penalty(l2=model.l2 if l2 is None else l2, l1=model.l1 if l1 is None else l1)
        changes.update(l2=pen.l2, l1=pen.l1)
    if mu is not None:
        if model.intercept.mode != "ridge":
            raise ValueError("mu applies only to a model with intercept=rs.L2(mu)")
        changes["intercept"] = Intercept("ridge", mu)
    return changes


def normalize(problem, data: FitData, *, radius: Any = None) -> Model:
    """Build the :class:`Model` of ``problem`` on validated ``data``.

    Parameters
    ----------
    problem : Problem
    data : FitData
        From :meth:`Problem.prepare` (labels ±1, resolved signs, sample weights).
    radius : float or array of shape (n,), optional
        Radii that replace those of the model's uncertainty set(s): a scalar for
        every sample or one value per sample. This is the one way to give
        per-sample radii at solve time (the sets themselves are not changed).
    """
    loss: Loss = problem.loss
    dist = problem.uncertainty if isinstance(problem.uncertainty, DistributionalSet) else None
    if dist is not None:  # a set of distributions: no per-sample layout (its radius replaced by radius=)
        dist.check_loss(loss)
        dist = dist if radius is None else dist.with_radius(radius)
    layout = None if dist is not None else resolve_uncertainty(problem.uncertainty, data.n, data.d, radius=radius)
    bounds, constraints = getattr(problem, "bounds", None), getattr(problem, "constraints", None)
    feasible = None  # the signs alone: no arrays built (a model may have 10⁶ features)
    if bounds is not None or constraints:
        feasible = weight_set(np.asarray(data.signs, dtype=np.int8), bounds, constraints,
                              feature_names=data.feature_names,
                              orientation=sign_orientation(data.classes, getattr(problem, "positive_class", None)))
    return Model(
        X=data.X,
        y=data.y,
        classes=data.classes,
        sample_weight=data.sample_weight,
        c=np.ascontiguousarray(loss.coefficients(data.sample_weight), dtype=np.float64),
        loss=loss,
        l2=float(problem.penalty.l2),
        l1=float(problem.penalty.l1),
        intercept=intercept_term(problem.intercept),
        signs=np.asarray(data.signs, dtype=np.int8) if feasible is None else feasible.signs,
        layout=layout,
        kernel=problem.kernel,
        feature_names=data.feature_names,
        feasible=feasible,
        distribution=dist,
    )


def weight_reach(model: Model, loss_total: float | None = None) -> float:
    """A bound on ``|w_h|`` at every minimizer of ``model`` (``inf`` when none is proved).

    When ``w = 0, b = 0`` is feasible, a minimizer cannot do worse: ``P(w*, b*) ≤ P(0, 0) = C ℓ(0)``
    with ``C = Σ_i c_i`` (every robust margin is 0 at ``w = 0``). Every loss term is at least
    ``ℓ_min = −ℓ*(0)``, the loss's ``dual_term(0)`` (``ℓ(m) = max_α α(1 − m) − ℓ*(α) ≥ −ℓ*(0)``), and the
    intercept term is non-negative, so ``(λ2/2)‖w*‖² + λ1‖w*‖₁ ≤ E = C (ℓ(0) − ℓ_min)``, which gives
    ``|w*_h| ≤ min(√(2E/λ2), E/λ1)``. ``loss_total`` replaces ``C`` (a program whose loss weights
    changed). See ``docs/prior_knowledge.md``, "Very large bounds".
    """
    loss = model.loss
    if loss.is_constraint or (model.l2 <= 0 and model.l1 <= 0) or model.kernel is not None:
        return np.inf
    ws = model.feasible_set
    if np.any(ws.lower > 0) or np.any(ws.upper < 0) or (ws.has_constraints and (
            np.any(ws.linear.lb > 0) or np.any(ws.linear.ub < 0))):
        return np.inf  # w = 0 is not feasible
    total = float(np.sum(model.c)) if loss_total is None else float(loss_total)
    excess = total * float(loss.value(np.zeros(1))[0] - loss.dual_term(np.zeros(1))[0])
    if not (np.isfinite(excess) and excess >= 0):
        return np.inf
    reach = np.inf
    if model.l2 > 0:
        reach = np.sqrt(2.0 * excess / model.l2)
    if model.l1 > 0:
        reach = min(reach, excess / model.l1)
    return float(reach)


def solved_problem(problem, model: Model):
    """``problem`` as ``model`` solved it: its uncertainty carrying the radii the solve used.

    A radius given at solve time (``solve(..., radius=r)``) lives in the
    model's layout only; the :class:`~robustsvm.solution.Solution` keeps this
    copy, so that ``robust_check``, the stored JSON, the repr and ``validate``
    see the radius the solution was computed with. ``problem`` itself is
    returned when the radii are the sets' own, and is never changed.
    """
    layout = model.layout
    if layout is None:
        return problem
    unc = problem.uncertainty
    own = [s.radius for s in unc] if isinstance(unc, (list, tuple)) else getattr(unc, "radius", None)
    if own is not None and np.shape(own) in ((), (model.n,)) and np.array_equal(
            np.broadcast_to(own, (model.n,)), layout.radius):
        return problem
    out = copy.copy(problem)
    out.uncertainty = layout.uncertainty()
    return out

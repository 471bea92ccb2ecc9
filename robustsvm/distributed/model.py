"""The normalized model of data kept on a cluster, and its objective computed in partitions.

:class:`DistributedModel` is :class:`robustsvm.model.Model` without the per-sample arrays: the rows, labels
and weights stay in the :class:`~.data.Partitions`; the client holds the model's numbers (λ2, λ1, the
intercept, the signs, one shared set and its radius, ``c_scale`` with ``c_i = c_scale · s_i``). The objective

    P(w, b) = (λ2/2)‖w‖² + λ1‖w‖₁ + I(b) + Σ_k Σ_{i ∈ k} c_i ℓ(y_i(x_i·w + b) − r σ_V(−y_i w))

is the one of :mod:`robustsvm.objective` (its penalty, intercept and loss terms), the loss sum formed on each
partition (:func:`objective`, :func:`violation`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._validation import check_limits as check_solve_limits
from .._validation import sign_orientation
from ..exceptions import UnsupportedModelError
from ..model import penalty_changes
from ..priors.signs import check_signs
from ..terms.intercept import Intercept, intercept_term
from ..terms.losses import Loss
from ..terms.penalties import Penalty
from ..uncertainty import UncertaintySet, check_radius, check_radius_applies
from .blocks import Block
from .data import Partitions, partition

__all__ = ["DISTRIBUTED", "DistributedModel", "distributed_model", "objective", "violation"]

#: the ``Backend.kind`` of the backends that solve a :class:`DistributedModel`
DISTRIBUTED = "distributed"


@dataclass(frozen=True, eq=False)
class DistributedModel:
    """A model whose data are row partitions on a Dask cluster.

    Attributes
    ----------
    data : Partitions
        The rows, labels (±1) and sample weights, on the workers.
    classes : ndarray of shape (2,)
    loss : Loss
    l2, l1 : float
    intercept : Intercept
    signs : int8 ndarray of shape (d,)
        Oriented to ``classes[1]``.
    uncertainty : UncertaintySet or None
        One set shared by every sample, with the scalar radius ``radius``.
    radius : float
    c_scale : float
        ``c_i = c_scale · s_i`` (``1/Σ s`` for ``reduction="mean"``, 1 for ``"sum"``).
    feature_names : ndarray of str or None
    """

    data: Partitions
    classes: np.ndarray
    loss: Loss
    l2: float
    l1: float
    intercept: Intercept
    signs: np.ndarray
    uncertainty: UncertaintySet | None
    radius: float
    c_scale: float
    feature_names: np.ndarray | None = None
    #: what the in-memory :class:`~robustsvm.model.Model` has and this one has not
    kernel = None
    layout = None
    distribution = None
    feasible = None
    #: the rows are on the workers (the in-memory model's is False)
    on_cluster = True
    has_bounds = False
    has_constraints = False

    @property
    def n(self) -> int:
        return self.data.n

    @property
    def d(self) -> int:
        return self.data.d

    @property
    def shape(self) -> tuple[int, int]:
        return self.data.shape

    @property
    def is_sparse(self) -> bool:
        return self.data.sparse

    @property
    def has_signs(self) -> bool:
        return bool(np.any(self.signs))

    @property
    def penalty(self) -> Penalty:
        return Penalty(l2=self.l2, l1=self.l1)

    @property
    def robust(self) -> bool:
        return self.uncertainty is not None and self.radius > 0

    @property
    def c_sum(self) -> float:
        """``Σ_i c_i``."""
        return self.c_scale * self.data.weight_sum

    def shifts(self, w: np.ndarray) -> tuple[float, float]:
        """``(r σ_V(−w), r σ_V(w))``: what the robust margin subtracts for ``y = +1`` and ``y = −1``."""
        if not self.robust:
            return 0.0, 0.0
        V = self.uncertainty
        return (self.radius * float(V.support(-w[None])[0]) if w.size else 0.0,
                self.radius * float(V.support(w[None])[0]) if w.size else 0.0)

    def with_values(self, *, l2: float | None = None, l1: float | None = None, mu: float | None = None,
                    radius: Any = None) -> DistributedModel:
        """A copy with new values of λ2, λ1, the ridge intercept's μ or the (scalar) radius."""
        changes = penalty_changes(self, l2=l2, l1=l1, mu=mu)
        if radius is not None:
            check_radius_applies(self.uncertainty, radius)
            changes["radius"] = _scalar_radius(radius)
        return replace(self, **changes)


def _scalar_radius(radius: Any) -> float:
    r = np.asarray(radius, dtype=np.float64)
    if r.ndim != 0:
        raise ValueError("on a dask array the radius must be one number for every sample (a radius per sample "
                         "is solved in memory)")
    return float(check_radius(float(r)))


def distributed_model(problem: Any, X: Any, y: Any, *, client: Any = None, sample_weight: Any = None,
                      feature_names: Any = None, radius: Any = None) -> DistributedModel:
    """Partition ``(X, y)`` on the cluster (:func:`.data.partition`) and normalize ``problem`` on it.

    Raises
    ------
    UnsupportedModelError
        A kernel model, sets given per sample, or bounds / linear constraints on ``w`` (solved in memory).
    ValueError, TypeError
        Bad data or arguments (named).
    """
    if problem.kernel is not None:
        raise UnsupportedModelError("a kernel model is solved in memory: the distributed backends fit linear "
                                    "models on a dask array")
    if getattr(problem, "bounds", None) is not None or getattr(problem, "constraints", None):
        raise UnsupportedModelError("bounds and linear constraints on the weights are solved in memory; on a dask "
                                    "array give signs")
    unc = problem.uncertainty
    if isinstance(unc, (list, tuple)):
        raise UnsupportedModelError("sets given per sample are solved in memory; on a dask array give one shared "
                                    "set")
    data = partition(X, y, client=client, sample_weight=sample_weight)
    names = None if feature_names is None else np.asarray([str(f) for f in feature_names], dtype=object)
    if names is not None and names.shape[0] != data.d:
        raise ValueError(f"feature_names has {names.shape[0]} entries but X has {data.d} features")
    if unc is not None:
        unc.check_dim(data.d)
    check_radius_applies(unc, radius)
    r = 0.0 if unc is None else _scalar_radius(unc.radius if radius is None else radius)
    positive = getattr(problem, "positive_class", None)
    signs = (check_signs(problem.signs, data.d, names) * sign_orientation(data.classes, positive)).astype(np.int8)
    loss = problem.loss
    c_scale = 1.0 if loss.is_constraint or loss.reduction == "sum" else 1.0 / data.weight_sum
    return DistributedModel(data=data, classes=data.classes, loss=loss, l2=float(problem.penalty.l2),
                            l1=float(problem.penalty.l1), intercept=intercept_term(problem.intercept), signs=signs,
                            uncertainty=unc, radius=r, c_scale=c_scale, feature_names=names)


# --------------------------------------------------------------------------------------------- objective
def margin_terms_many(block: Block, points: list, loss: Loss, c_scale: float) -> list[tuple[float, float]]:
    """Per point ``(w, b, shifts)``: ``(Σ_{i∈k} c_i ℓ(m_i), min_i m_i)`` over the block's rows, with
    ``m_i = y_i(x_i·w + b) − shift(y_i)`` and ``shifts = (r σ_V(−w), r σ_V(w))`` (one pass over the rows)."""
    totals = [[0.0, np.inf] for _ in points]
    for lo, hi, X in block.row_slices():
        y = block.y[lo:hi]
        c = c_scale * block.weight[lo:hi]
        pos = y > 0
        Z = np.asarray(X @ np.column_stack([p[0] for p in points])).reshape(hi - lo, len(points))
        for j, (_, b, shifts) in enumerate(points):
            m = y * (Z[:, j] + b) - np.where(pos, shifts[0], shifts[1])
            if m.size:
                totals[j][1] = min(totals[j][1], float(m.min()))
            if not loss.is_constraint:
                totals[j][0] += float(c @ loss.value(m))
    return [(t[0], t[1]) for t in totals]


def margin_terms(block: Block, w: np.ndarray, b: float, shifts: tuple[float, float], loss: Loss,
                 c_scale: float) -> tuple[float, float]:
    """:func:`margin_terms_many` for one point."""
    return margin_terms_many(block, [(w, b, shifts)], loss, c_scale)[0]


def as_distributed(model: Any, client: Any = None) -> DistributedModel:
    """An in-memory :class:`~robustsvm.model.Model` with its rows partitioned over the workers of ``client``
    (one partition per worker)."""
    import dask.array as da

    from .data import get_client

    if model.layout is not None and (len(model.layout.sets) != 1 or np.ptp(model.layout.radius) > 0):
        raise UnsupportedModelError("on a cluster the samples share one set and one radius; solve per-sample "
                                    "sets or radii in memory")
    if model.has_bounds or model.has_constraints or model.kernel is not None:
        raise UnsupportedModelError("bounds, linear constraints and kernels are solved in memory")
    if sp.issparse(model.X):
        raise TypeError("pass a sparse model's X as a dask array of scipy.sparse chunks")
    client = get_client(client)
    workers = max(len(client.scheduler_info().get("workers", {})), 1)
    rows = -(-model.n // workers)
    data = partition(da.from_array(model.X, chunks=(rows, model.d)), model.y, client=client,
                     sample_weight=model.sample_weight)
    unc = None if model.layout is None else model.layout.sets[0]
    return DistributedModel(data=data, classes=model.classes, loss=model.loss, l2=model.l2, l1=model.l1,
                            intercept=model.intercept, signs=model.signs, uncertainty=unc,
                            radius=0.0 if unc is None else float(model.layout.radius[0]),
                            c_scale=1.0 if model.loss.reduction == "sum" else 1.0 / float(model.sample_weight.sum()),
                            feature_names=model.feature_names)


def _terms(model: DistributedModel, w: np.ndarray, b: float) -> tuple[float, float]:
    parts = model.data.map(margin_terms, np.asarray(w, dtype=np.float64), float(b), model.shifts(w), model.loss,
                           model.c_scale)
    return float(sum(p[0] for p in parts)), float(min(p[1] for p in parts))


def objective(model: DistributedModel, w: np.ndarray, b: float = 0.0) -> float:
    """``P(w, b)``: penalty and intercept term on the client, the loss sum in partitions (one round)."""
    w = np.asarray(w, dtype=np.float64)
    loss_sum, _ = _terms(model, w, b)
    return float(model.penalty.value(w) + model.intercept.value(b) + loss_sum)


def objective_and_violation(model: DistributedModel, w: np.ndarray, b: float = 0.0) -> tuple[float, float]:
    """``P(w, b)`` and the largest violation of the signs (and of the hard margins), in one round."""
    w = np.asarray(w, dtype=np.float64)
    loss_sum, smallest = _terms(model, w, b)
    v = float(np.max(-model.signs * w)) if model.has_signs else 0.0
    if model.loss.is_constraint:
        v = max(v, 1.0 - smallest)
    return float(model.penalty.value(w) + model.intercept.value(b) + loss_sum), max(0.0, v)


def violation(model: DistributedModel, w: np.ndarray, b: float = 0.0) -> float:
    """The largest violation of the signs (and of the hard margins) at ``(w, b)``."""
    return objective_and_violation(model, w, b)[1]


# ------------------------------------------------------------------------------------------------ choice
#: the most features of dense data ``dask-ipm`` takes: its client factors a ``k × k`` Newton matrix, ``k ≤ 2d + 2``
DASK_IPM_MAX_FEATURES = 2048
#: the most features of sparse data ``dask-ipm`` takes (its dense ``d × d`` reductions against sparse rows)
DASK_IPM_MAX_SPARSE_FEATURES = 512
#: ``solver="auto"`` sends dense data to ``dask-ipm`` while ``d`` is at most this fraction of the rows ``n``
DASK_IPM_ROWS_PER_FEATURE = 2


def _is_sparse(model: Any) -> bool:
    return bool(model.is_sparse if hasattr(model, "is_sparse") else model.sparse)


def dask_ipm_refusal(model: Any) -> str | None:
    """Why ``dask-ipm`` refuses the data of ``model`` before it starts (None: it takes them): sparse data with more
    than :data:`DASK_IPM_MAX_SPARSE_FEATURES` features, dense data with more than :data:`DASK_IPM_MAX_FEATURES`
    (its dense ``d × d`` reductions and the client's Newton matrix outgrow a worker and the client)."""
    sparse = _is_sparse(model)
    limit = DASK_IPM_MAX_SPARSE_FEATURES if sparse else DASK_IPM_MAX_FEATURES
    if model.d > limit:
        return (f"dask-ipm reduces the rows to dense {model.d} × {model.d} matrices, too large for the workers on "
                f"{'sparse' if sparse else 'dense'} data with more than {limit} features; solver='dask-cocoa' "
                "solves it")
    return None


def dask_ipm_suits(model: Any) -> bool:
    """Whether ``solver="auto"`` sends the data to ``dask-ipm`` first: dense, at most
    :data:`DASK_IPM_MAX_FEATURES` features and ``n ≥`` :data:`DASK_IPM_ROWS_PER_FEATURE` ``· d`` rows.

    Then the upper triangle of the ``(d+2)²`` Gram matrix a partition returns per round, ``(d+2)(d+3)/2``
    numbers, is at most a quarter of the data's ``n·d`` numbers (half a partition's on two workers), and the
    client's ``O(d³)`` factorization stays below the workers' ``O(n d²)`` products (``docs/distributed.md``).
    """
    return (not _is_sparse(model) and model.d <= DASK_IPM_MAX_FEATURES
            and model.n >= DASK_IPM_ROWS_PER_FEATURE * model.d)


def choose_distributed_backend(problem: Any, model: Any) -> str:
    """What ``solver="auto"`` stands for on a dask array: ``"dask-ipm"`` for dense data it suits
    (:func:`dask_ipm_suits`: a few dozen ``d × d`` reductions, cheap against the rows), ``"dask-cocoa"`` for wide
    or sparse data (``d`` numbers per partition per round); the other one when the first refuses the model (never
    ``dask-ipm`` on data it refuses, :func:`dask_ipm_refusal`).

    ``model`` is the :class:`DistributedModel`, or the data's :class:`~robustsvm.backends.cost.DataShape`
    (``n``, ``d`` and ``sparse``) when the choice is made before the rows are partitioned.

    Raises
    ------
    UnsupportedModelError
        No registered distributed backend solves the model.
    """
    from ..backends import registry

    wide = dask_ipm_refusal(model)
    order = ["dask-ipm", "dask-cocoa"] if dask_ipm_suits(model) else ["dask-cocoa", "dask-ipm"]
    reasons = [] if wide is None else [wide]
    for name in order if wide is None else ["dask-cocoa"]:
        try:
            backend = registry.get_backend(name)
        except ValueError:
            continue
        why = backend.check(problem)
        if not why:
            return name
        reasons += why
    raise UnsupportedModelError("no distributed backend solves this model on a dask array ("
                                + "; ".join(reasons) + "); solve it in memory")


def check_limits(model: DistributedModel, max_iter: int, time_limit: Any) -> None:
    """Refuse a non-positive ``max_iter`` or ``time_limit``, and a model without λ2 (both distributed backends
    need the strongly concave dual)."""
    check_solve_limits(max_iter=max_iter, time_limit=time_limit)
    if not model.l2 > 0:
        raise ValueError(f"l2 must be positive, got {model.l2!r}")

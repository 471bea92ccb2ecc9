"""Grid points: the values a point sets, the model at a point, the folds of a cross-validation."""

from __future__ import annotations

import copy
import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from ..problem import Problem
from ..terms.penalties import L1, L2, Penalty
from ..uncertainty import check_radius_applies

__all__ = ["GRID_KEYS", "expand_grid", "exponential_range", "fold_problem", "point_radius", "program_values",
           "stratified_folds", "with_values"]

#: names a grid point may set: those of ConicProgram.set_values, and ν for pq-SVM models
GRID_KEYS = frozenset({"l2", "l1", "mu", "radius", "nu"})


# --------------------------------------------------------------------- grids
def exponential_range(low: float, high: float, num: int) -> np.ndarray:
    """``num`` values from ``low`` to ``high`` equally spaced in ``log``: ``low·(high/low)^(j/(num−1))``."""
    low, high = float(low), float(high)
    if not (0 < low <= high and math.isfinite(high)):
        raise ValueError(f"exponential_range needs 0 < low <= high < inf, got low={low}, high={high}")
    if int(num) != num or num < 1:
        raise ValueError(f"num must be a positive integer, got {num!r}")
    return np.geomspace(low, high, int(num)) if num > 1 else np.array([low])


def expand_grid(param_grid: Mapping[str, Iterable[float]] | Sequence[Mapping[str, float]]) -> list[dict]:
    """All points of a grid: the Cartesian product of a dict of value lists, in order.

    A list of dicts is taken as the points themselves.
    """
    if isinstance(param_grid, Mapping):
        keys = list(param_grid)
        values = [list(np.atleast_1d(np.asarray(param_grid[k], dtype=np.float64))) for k in keys]
        points = [dict(zip(keys, (float(v) for v in combo), strict=True)) for combo in itertools.product(*values)]
    else:
        points = [{k: float(v) for k, v in p.items()} for p in param_grid]
    if not points:
        raise ValueError("param_grid is empty")
    for p in points:
        unknown = set(p) - GRID_KEYS
        if unknown:
            raise ValueError(f"param_grid sets unknown parameter(s) {sorted(unknown)}; known: {sorted(GRID_KEYS)}")
    return points


def program_values(point: Mapping[str, float]) -> dict:
    """Map a grid point to :meth:`ConicProgram.set_values` arguments.

    A point with ``nu`` is a pq-SVM point (Woolnough et al. (2022) §4): its ``l2`` is the
    pq model's λ2 and the program gets ``l2 = 2λ2/ν`` and ``μ = 2/ν`` (see
    ``rs.pq_svm``). Other points pass through.
    """
    values = dict(point)
    if "nu" in values:
        nu = values.pop("nu")
        if not nu > 0:
            raise ValueError(f"nu must be positive, got {nu}")
        if "mu" in values:
            raise ValueError("a pq-SVM grid point sets nu, which fixes mu = 2/nu: do not set mu too")
        values["mu"] = 2.0 / nu
        if "l2" in values:
            values["l2"] = 2.0 * values["l2"] / nu
    return values


def point_radius(problem: Problem, point: Mapping[str, float]) -> float | None:
    """The radius a grid point sets (None when it sets none), checked against the model."""
    if "radius" not in point:
        return None
    check_radius_applies(problem.uncertainty, point["radius"], shared=True)
    return point["radius"]


def with_values(problem: Problem, point: Mapping[str, float]) -> Problem:
    """A new model: ``problem`` with the penalty, intercept ridge and radius of ``point``.

    The radius goes to a copy of the set made by :meth:`UncertaintySet.with_radius`
    (validated); ``problem`` and its set are not changed.
    """
    values = program_values(point)
    pen: Penalty = problem.penalty
    l2 = values.get("l2", pen.l2)
    l1 = values.get("l1", pen.l1)
    intercept = problem.intercept
    if "mu" in values:
        if problem.intercept_term.mode != "ridge":
            raise ValueError("mu (or nu) applies only to a model with intercept=rs.L2(mu)")
        intercept = L2(values["mu"])
    radius = point_radius(problem, values)
    uncertainty = problem.uncertainty if radius is None else problem.uncertainty.with_radius(radius)
    return Problem(loss=problem.loss, penalty=L2(l2) + L1(l1), signs=problem.signs,
                   uncertainty=uncertainty, intercept=intercept, kernel=problem.kernel,
                   positive_class=problem.positive_class, bounds=problem.bounds, constraints=problem.constraints)


def stratified_folds(y: Any, n_splits: int = 5, *, seed: int | None = 0) -> np.ndarray:
    """Fold index (0 … n_splits−1) of every sample, each class spread evenly over the folds.

    Within each class the samples are shuffled (``seed``) and dealt in turn.
    """
    y = np.asarray(y)
    if int(n_splits) != n_splits or n_splits < 2:
        raise ValueError(f"n_splits must be an integer ≥ 2, got {n_splits!r}")
    rng = np.random.default_rng(seed)
    folds = np.empty(y.shape[0], dtype=np.intp)
    offset = 0
    for c in np.unique(y):
        idx = np.flatnonzero(y == c)
        if idx.size < n_splits:
            raise ValueError(f"class {c!r} has {idx.size} samples, fewer than n_splits={n_splits}")
        idx = rng.permutation(idx)
        folds[idx] = (np.arange(idx.size) + offset) % n_splits
        offset += idx.size
    return folds


def fold_problem(problem: Problem, rows: np.ndarray) -> Problem:
    """``problem`` restricted to the samples ``rows``: a radius per sample, or a set per sample, sliced to them.

    A model whose sets are shared and whose radius is one number is returned unchanged; otherwise a
    copy carries the rows' radii (``UncertaintySet.with_radius``) or the rows' sets, so the model
    can be solved on a fold's training part.
    """
    unc = problem.uncertainty
    if isinstance(unc, (list, tuple)):
        sliced: Any = [unc[i] for i in rows]
    elif unc is not None and np.ndim(unc.radius) == 1:
        sliced = unc.with_radius(np.asarray(unc.radius)[rows])
    else:
        return problem
    out = copy.copy(problem)
    out.uncertainty = sliced
    return out

"""Reference optima a test can prove, on any BLAS kernel.

A conic solver asked for 1e-8 ends ``optimal`` or ``optimal_inaccurate`` depending on the order of
floating-point reductions (``OPENBLAS_CORETYPE``), not on the quality of its point. So a test does not
trust a status: its reference is an interval ``[bound, objective]`` that contains the optimum ``P*``:

- ``objective`` is the exact objective :meth:`Problem.objective` at a feasible point (the reference point
  projected on the signs), so ``objective ≥ P*``;
- ``bound`` is the package's Lagrangian lower bound at that point (:func:`robustsvm.certificates.duality.certify`,
  weak duality from a dual point it checked), so ``bound ≤ P*``, whatever solver produced the point.

The point comes from a model the test writes itself in CVXPY (independent of ``robustsvm.conic``): Clarabel
first, at each of the given objective scales, then SCS at a tight ``eps``; the model's own value at the
point must agree with the package's objective there (else the two models differ). As a last resort the
package's own conic backends are asked. Intervals of several points intersect (the smallest objective,
the largest bound). A test then asserts only what the interval proves, e.g. for an answer ``P`` with gap
``g``: ``P − ref.objective ≤ g`` (the gap is not below the excess), ``P ≥ ref.bound`` (nothing is below
the optimum), ``dual ≤ ref.objective`` (a lower bound is below a feasible value).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

import cvxpy as cp
import numpy as np

from robustsvm.certificates.duality import certify
from robustsvm.exceptions import SolverError
from robustsvm.result import Result

#: the reference's certified gap, relative to max(1, |P*|): more points are tried while it is larger, and a
#: reference ends with no more unless a test says otherwise
REF_RTOL = 1e-8
#: how far the test's own model value at a point may be from the package's objective there (relative)
AGREE_RTOL = 1e-6
#: Clarabel's accuracy (absolute and relative gap, feasibility) and SCS's eps for the reference points
CLARABEL_TOL = 1e-8
SCS_EPS = 1e-10
SCS_MAX_ITERS = 50000


class Formulation(NamedTuple):
    """A model written in CVXPY by a test: minimize ``objective`` subject to ``constraints``.

    ``w`` and ``b`` are expressions whose values are the model's point in the package's units (``b`` may be
    a float when there is no intercept); ``margins`` is, optionally, the constraint ``ξ ≥ 1 − m`` whose dual
    values are the margin multipliers in model units (then given to the certificate).
    """

    objective: Any
    constraints: list
    w: Any
    b: Any
    margins: Any = None


@dataclass(frozen=True)
class Reference:
    """An interval ``[bound, objective]`` containing the optimum, with the feasible point of ``objective``.

    Attributes
    ----------
    objective : float
        ``P(w, b) ≥ P*``, the exact objective at the feasible point ``(w, b)``.
    bound : float
        A certified lower bound ``≤ P*``.
    w : ndarray of shape (d,)
    b : float
    sources : tuple of str
        The solves tried, with their statuses and certified gaps.
    model_value : float
        The test's own CVXPY model's value at ``(w, b)`` (NaN when the point came from the package).
    """

    objective: float
    bound: float
    w: np.ndarray
    b: float
    sources: tuple[str, ...]
    model_value: float = float("nan")

    @property
    def gap(self) -> float:
        """``objective − bound ≥ objective − P*``."""
        return self.objective - self.bound

    def scale(self) -> float:
        return max(1.0, abs(self.objective))


class _Interval:
    """The intersection of the intervals of the points seen so far."""

    def __init__(self, prob, X, y, sample_weight, radius):
        self.prob, self.X, self.y, self.sample_weight, self.radius = prob, X, y, sample_weight, radius
        self.model = prob.normalize(X, y, sample_weight=sample_weight, radius=radius)
        self.best = None  # (objective, w, b, the test's model's value there)
        self.bound = -np.inf
        self.sources: list[str] = []

    def add(self, name: str, objective: float, bound: float, w: np.ndarray, b: float,
            model_value: float = float("nan")) -> None:
        if np.isfinite(objective) and (self.best is None or objective < self.best[0]):
            self.best = (float(objective), np.asarray(w, float).copy(), float(b), float(model_value))
        if np.isfinite(bound):
            self.bound = max(self.bound, float(bound))
        self.sources.append(f"{name}: objective {objective:.12g}, bound {bound:.12g}")

    def certify_point(self, name: str, w: np.ndarray, b: float, multipliers=None,
                      model_value: float = float("nan")) -> tuple[float, float]:
        """The package's certificate of a point: adds it, returns ``(objective, bound)``."""
        point = Result(w=np.asarray(w, float), b=float(b), status="optimal", multipliers=multipliers)
        cert = certify(self.model, point)
        bound = cert.dual_value
        if multipliers is not None:  # the bound from the multipliers recovered at the point is valid too
            bound = max(bound, certify(self.model, replace(point, multipliers=None)).dual_value)
        self.add(name, cert.objective, bound, cert.w, cert.b, model_value)
        return float(cert.objective), float(bound)

    def gap(self) -> float:
        return np.inf if self.best is None else self.best[0] - self.bound

    def scale(self) -> float:
        return 1.0 if self.best is None else max(1.0, abs(self.best[0]))

    def done(self, rtol: float) -> bool:
        return self.gap() <= rtol * self.scale()


def _value(expr) -> Any:
    return expr.value if hasattr(expr, "value") else expr


def _solve_formulation(interval: _Interval, formulation: Formulation, name: str, solver: str, scale: float,
                       options: dict, agree_rtol: float | None) -> None:
    problem = cp.Problem(cp.Minimize(scale * formulation.objective), formulation.constraints)
    name = f"{solver} on {name} (objective ×{scale:.6g})"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Solution may be inaccurate": the certificate decides
        try:
            problem.solve(solver=solver, **options)
        except cp.error.SolverError as exc:
            interval.sources.append(f"{name}: {exc}")
            return
    w, b = _value(formulation.w), _value(formulation.b)
    if problem.status not in ("optimal", "optimal_inaccurate") or w is None or b is None:
        interval.sources.append(f"{name}: status {problem.status}")
        return
    multipliers = None
    if formulation.margins is not None and formulation.margins.dual_value is not None:
        multipliers = np.asarray(formulation.margins.dual_value, float) / scale
    own = float(problem.value) / scale
    objective, bound = interval.certify_point(f"{name} {problem.status}", np.ravel(w), float(b), multipliers, own)
    interval.sources[-1] += f", its own value {own:.12g}"
    if agree_rtol is not None and objective - bound <= REF_RTOL * max(1.0, abs(objective)):
        # a point the certificate calls (near) optimal: the test's model must give it the package's value
        assert abs(own - objective) <= agree_rtol * max(1.0, abs(objective)), (
            f"the test's CVXPY model and the package's objective differ at {name}'s point: {own!r} vs {objective!r}")


def _solve_package(interval: _Interval, solver: str, options: dict) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            sol = interval.prob.solve(interval.X, interval.y, solver=solver, sample_weight=interval.sample_weight,
                                      radius=interval.radius, **options)
        except SolverError as exc:
            interval.sources.append(f"package {solver}: {exc}")
            return
    interval.add(f"package {solver} {sol.status}", sol.objective, sol.objective - sol.gap, sol.w, sol.b)


#: the package's backends asked when no point of the test's own model is certified well enough
PACKAGE_FALLBACK = (
    ("clarabel", {"solver_options": {"tol_gap_abs": 1e-11, "tol_gap_rel": 1e-11, "tol_feas": 1e-11}}),
    ("scs", {"solver_options": {"eps_abs": 1e-11, "eps_rel": 1e-11, "max_iters": SCS_MAX_ITERS}}),
)


def certified_reference(
    prob,
    X,
    y,
    formulation: Callable[[], Formulation] | Sequence[Callable[[], Formulation]] | None = None,
    *,
    sample_weight=None,
    radius=None,
    scales: Sequence[float] = (1.0,),
    clarabel_options: dict | None = None,
    rtol: float = REF_RTOL,
    max_rtol: float | None = None,
    agree_rtol: float | None = AGREE_RTOL,
    package_fallback: Sequence[tuple[str, dict]] = PACKAGE_FALLBACK,
) -> Reference:
    """The interval ``[bound, objective] ∋ P*`` of ``prob`` on ``(X, y)``, certified to ``max_rtol``.

    Parameters
    ----------
    prob : Problem
        The model the reference is for (its objective and certificate evaluate every point).
    X, y, sample_weight, radius
        As for :meth:`Problem.solve`.
    formulation : callable returning Formulation, or a sequence of them, optional
        The test's own CVXPY model(s) of ``prob`` (built anew for each solve; several are equivalent models
        tried in turn). Without one, only the package's backends are asked.
    scales : sequence of float
        Factors the objective is multiplied by for Clarabel (a sum of losses solves better on some data).
    clarabel_options : dict, optional
        Clarabel's settings; ``CLARABEL_TOL`` for gaps and feasibility by default.
    rtol : float
        Further points are solved while the certified gap is above ``rtol·max(1, |P*|)``.
    max_rtol : float, optional
        The certified gap the reference must reach (``rtol`` by default; an AssertionError naming every solve
        otherwise).
    agree_rtol : float or None
        Tolerance of the check that the test's model and the package's objective agree at a certified point.
    package_fallback : sequence of (solver, options)
        The package's solves tried last.
    """
    max_rtol = rtol if max_rtol is None else max_rtol
    interval = _Interval(prob, X, y, sample_weight, radius)
    builders = [] if formulation is None else [formulation] if callable(formulation) else list(formulation)
    options = clarabel_options or {"tol_gap_abs": CLARABEL_TOL, "tol_gap_rel": CLARABEL_TOL,
                                   "tol_feas": CLARABEL_TOL, "max_iter": 400}
    scales = list(dict.fromkeys(float(s) for s in scales))
    attempts = [(k, "CLARABEL", s, options) for k in range(len(builders)) for s in scales]
    attempts += [(k, "SCS", scales[0], {"eps_abs": SCS_EPS, "eps_rel": SCS_EPS, "max_iters": SCS_MAX_ITERS})
                 for k in range(len(builders))]
    for k, solver, scale, opts in attempts:
        if interval.done(rtol):
            break
        _solve_formulation(interval, builders[k](), f"the test's model {k + 1}", solver, scale, opts, agree_rtol)
    for solver, opts in package_fallback:
        if interval.done(rtol):
            break
        _solve_package(interval, solver, opts)
    assert interval.best is not None and interval.done(max_rtol), (
        f"no reference point certified to {max_rtol:g}·max(1, |P*|): " + "; ".join(interval.sources))
    objective, w, b, model_value = interval.best
    return Reference(objective=objective, bound=interval.bound, w=w, b=b, sources=tuple(interval.sources),
                     model_value=model_value)

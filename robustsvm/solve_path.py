"""The one path from a model to a certified :class:`~robustsvm.solution.Solution`.

Every answer the package gives — :meth:`Problem.solve`, each grid point of
:func:`~robustsvm.model_selection.grid_search` (compiled once, batched or refitted), :class:`~robustsvm.RobustSVC`,
:func:`~robustsvm.compare` and the command line — takes these steps, in this module only:

1. **look up** the backend (:func:`lookup`; ``"auto"`` is :func:`choose_backend`'s choice),
2. **check** the options against the backend's declaration (:func:`check_options`) and the model against its
   :class:`~robustsvm.backends.registry.Needs` (refusals name the backends that can solve it),
3. **run** it with the defaults declared on its registration (:func:`run`), which returns one
   :class:`~robustsvm.result.Result`,
4. **certify** the result with the package's own duality gap (:func:`certify`, reading only the result's typed
   fields: multipliers, the solver's primal value, its dual bound and whether that bound was checked,
   infeasibility evidence),
5. **report**: build the :class:`Solution` and warn when the status is not ``"optimal"`` (:func:`to_solution`).

``"auto"`` picks the backend with the smallest predicted time among those that accept the model
(:func:`choose_backend`, the cost model of :mod:`robustsvm.backends.cost`), after a first-order probe when that
pick is a second-order or conic solve and a first-order backend is predicted close to it (:func:`auto_probe`:
certified, the probe is the answer; forecast to finish first, it is continued); a first answer short of
its tolerance, or a backend that raises on the data (extreme scales), is solved again by the next accepting
backend expected to certify, :data:`FALLBACK` last (:func:`fall_back`,
:func:`robustsvm.backends.cost.fallback_order`), each attempt recorded in ``Solution.auto_attempts``.
"""

from __future__ import annotations

import copy
import time
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import numpy as np

from . import objective as objective_module
from ._validation import check_fit_data, unnamed_direction
from .backends import cost, registry
from .backends.registry import Backend, accepted_options, check_options, with_defaults
from .backends.threads import on_one_blas_thread, one_blas_thread
from .certificates import degenerate
from .certificates.degenerate import announce as announce_degenerate
from .certificates.duality import certify_with_decision as certify_linear
from .conic.scaling import scale_note
from .distributed import certify as distributed_certify
from .distributed import cocoa as _cocoa  # noqa: F401  (registers dask-cocoa)
from .distributed import ipm as _ipm  # noqa: F401  (registers dask-ipm)
from .distributed.data import is_dask_array
from .distributed.model import DISTRIBUTED, DistributedModel, choose_distributed_backend, distributed_model
from .duals.distributional import distribution_dual
from .exceptions import ConvergenceWarning, SignDirectionWarning, SolverError, UnsupportedModelError
from .model import Model, normalize, solved_problem, summarize
from .result import Attempt, Result
from .solution import Solution

__all__ = ["AUTO", "FALLBACK", "FAILED", "OPTIMAL", "announce_degenerate", "certify", "certify_with_decision",
           "check_options", "auto_probe", "choose_backend", "fall_back", "lookup", "run", "run_many", "solve",
           "solve_distributed", "solve_model", "solve_normalized", "solve_point", "takes_dual_start", "tight_defaults",
           "to_solution"]

#: the solver name that lets this module choose the backend
AUTO = "auto"
#: the conic backend ``"auto"`` falls back to last (and routes models the others refuse to)
FALLBACK = "clarabel"
#: the status that passes silently; every other one warns
OPTIMAL = "optimal"
#: statuses for which no usable point exists: raise
FAILED = frozenset({"infeasible", "infeasible_inaccurate", "unbounded", "unbounded_inaccurate", "solver_error"})
#: the conic fallback's tolerance on an LP/QP model for a caller that asks for tight answers (:func:`tight_defaults`)
TIGHT_CONIC_TOL = 1e-9
#: errors of a backend on data it cannot handle numerically, after which ``"auto"`` falls back
_NUMERICAL_ERRORS = (ValueError, ArithmeticError, np.linalg.LinAlgError, SolverError)


# ----------------------------------------------------------------- choosing
def choose_backend(problem: Any, data: Any, distributed: DistributedModel | None = None) -> str:
    """The backend ``"auto"`` stands for, for ``problem`` on ``data``.

    ``data`` is what :meth:`robustsvm.backends.cost.DataShape.of` reads: the model or the validated data, an
    array (dense or sparse), or the number of features alone. Among the candidates
    (:data:`~robustsvm.backends.cost.CANDIDATES`: ``dcd``, ``robust-dcd``, ``feature-ipm``, ``logistic-newton``,
    ``clarabel``)
    that accept the model (``Backend.check``), the one with the smallest predicted time
    (:mod:`robustsvm.backends.cost`, fitted to the shape grid of ``benchmarks/bench_auto.py``; ``docs/auto.md``).
    A first-order backend predicted to need more than half its epoch budget is charged its budget plus a
    Clarabel solve, so a backend likely to fall back is never preferred; a model no candidate accepts goes to
    :data:`FALLBACK`. A :class:`~robustsvm.backends.cost.DataShape` with ``points > 1`` stands for a grid
    (``grid_search``): the interior point solves its points in one batch, the others one by one.

    On data partitioned over a cluster (``distributed``, from a dask array) the choice is
    :func:`robustsvm.distributed.model.choose_distributed_backend`'s: ``dask-ipm`` for tall dense data,
    ``dask-cocoa`` for wide or sparse data (the place for their cost forms:
    :data:`~robustsvm.backends.cost.DISTRIBUTED_CANDIDATES`, :func:`~robustsvm.backends.cost.register_cost_form`).

    Returns
    -------
    str
        The registered name of the chosen backend.
    """
    if distributed is not None:
        return choose_distributed_backend(problem, distributed)
    shape = cost.DataShape.of(data)
    if shape.distributed:  # a dask array not partitioned yet: the same rule, from its shape
        return choose_distributed_backend(problem, shape)
    able = _accepting(cost.CANDIDATES, problem)
    if not able:
        return FALLBACK
    return cost.predict_all(able, cost.cost_inputs(problem, shape))[0].backend


def auto_predictions(problem: Any, data: Any) -> list[cost.Prediction]:
    """The predictions of the in-memory candidates that accept ``problem``, cheapest first (empty: none accepts,
    or the data are distributed). :func:`robustsvm.backends.cost.predict_all` keeps its last answer, so the
    choice, the attempt and the fall-back order of one ``"auto"`` solve cost the candidates once."""
    shape = cost.DataShape.of(data)
    if shape.distributed:
        return []
    able = _accepting(cost.CANDIDATES, problem)
    if not able:
        return []
    return cost.predict_all(able, cost.cost_inputs(problem, shape))


def auto_probe(problem: Any, data: Any, predictions: list[cost.Prediction] | None = None) -> cost.Probe | None:
    """The first-order probe ``"auto"`` makes before its choice on in-memory ``data`` (None: none).

    See :func:`robustsvm.backends.cost.probe`: when the cheapest predicted backend is an interior point or a
    conic solve of at least ``PROBE_MIN_SECONDS`` and a first-order backend is predicted close to it, that backend
    runs first for the epochs of ``PROBE_FRACTION`` of that predicted time; its answer is kept when certified
    optimal, and it is continued when :func:`robustsvm.backends.cost.probe_forecast` says it finishes first.
    """
    preds = auto_predictions(problem, data) if predictions is None else predictions
    if not preds:
        return None
    return cost.probe(preds, cost.cost_inputs(problem, cost.DataShape.of(data)))


def _accepting(names: tuple[str, ...], problem: Any) -> list[str]:
    """The registered backends among ``names`` that accept ``problem``."""
    out = []
    for name in names:
        try:
            backend = registry.get_backend(name)
        except ValueError:  # not registered (a distributed backend without its extra installed)
            continue
        if backend.accepts(problem):
            out.append(name)
    return out


def lookup(solver: str, problem: Any = None, data: Any = None, *, points: int = 1) -> Backend:
    """The registered backend named ``solver``; for ``"auto"`` the one :func:`choose_backend` picks for ``problem``
    on ``data`` (the data, the model or the number of features) and ``points`` grid points."""
    if isinstance(solver, str) and solver.lower() == AUTO:
        if problem is None or data is None:
            raise ValueError('solver="auto" needs the model and the data (or their shape) to choose a backend')
        if points != 1:
            data = replace(cost.DataShape.of(data), points=int(points))
        return registry.get_backend(choose_backend(problem, data))
    return registry.get_backend(solver)


# ------------------------------------------------------------------ running
@contextmanager
def recorded_warnings(quiet: bool) -> Iterator[list[str]]:
    """With ``quiet``, the :class:`UserWarning` s raised inside (a solver's note that its answer may be inaccurate,
    which the status and the certificate report) are recorded, not shown: the texts fill the yielded list. Other
    warnings are shown as usual. Without ``quiet`` nothing is caught (no filter is entered: that invalidates the
    interpreter's warning caches, 0.05 ms of a 1 ms solve)."""
    texts: list[str] = []
    if not quiet:
        yield texts
        return
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UserWarning)
        yield texts
    for w in caught:
        if issubclass(w.category, UserWarning):
            texts.append(f"{w.category.__name__}: {w.message}")
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)


def _noted(result: Result, texts: list[str]) -> Result:
    """``result`` with the recorded warnings among its diagnostics (``extra["warnings"]``)."""
    if texts:
        result.extra = {**result.extra, "warnings": list(texts)}
    return result


@on_one_blas_thread
def run(backend: Backend, model: Model, options: Mapping[str, Any], *, quiet: bool = False) -> tuple[Result, float]:
    """``backend.solve(model, **options)`` with the declared defaults; the result and the seconds it took
    (``quiet``: :func:`recorded_warnings`)."""
    start = time.perf_counter()
    with recorded_warnings(quiet) as texts:
        result = backend.solve(model, **with_defaults(backend, options))
    return _noted(result, texts), time.perf_counter() - start


@on_one_blas_thread
def run_many(backend: Backend, model: Model, values: list[dict], options: Mapping[str, Any], *,
             quiet: bool = False) -> list[Result]:
    """``backend.solve_many(model, values, **options)`` with the declared defaults (one result per point)."""
    with recorded_warnings(quiet) as texts:
        results = backend.solve_many(model, values, **with_defaults(backend, options))
    if len(results) != len(values):
        raise SolverError(f"solver {backend.name!r} returned {len(results)} results for {len(values)} points")
    return [_noted(r, texts) for r in results]


# --------------------------------------------------------------- certifying
def _refuse(name: str, model: Model, result: Result, detail: str = "") -> SolverError:
    hint = ""
    if model.loss.is_constraint and result.status.startswith("infeasible") and result.infeasibility:
        hint = " (the hard-margin model is infeasible when the data are not separable)"
    text = detail or result.message
    return SolverError(f"solver {name!r} returned status {result.status!r}" + (f": {text}" if text else "") + hint)


def certify(name: str, model: Model, result: Result, tol: float | None = None) -> Result:
    """The certified result of :func:`certify_with_decision` alone."""
    return certify_with_decision(name, model, result, tol)[0]


@on_one_blas_thread
def certify_with_decision(name: str, model: Model, result: Result, tol: float | None = None) -> tuple:
    """The package's verdict on a backend's result, as a :class:`Result` with ``certified=True``, and ``Xw`` at its
    point where the certifier formed it (on a cluster its summary; None elsewhere), which the degeneracy check reads.

    A linear model's point goes through :func:`robustsvm.certificates.duality.certify_with_decision`: projected on
    the signs (rescaled onto a hard margin), re-scored by :mod:`robustsvm.objective`, and given the gap
    ``P(w, b) − D`` with ``D`` the package's Lagrangian bound from ``result.multipliers`` (or the backend's own
    bound when ``result.dual_feasible``); a claimed optimum the numbers do not support becomes ``"inaccurate"``.
    A kernel expansion is re-scored (objective and violation) and keeps its backend's gap.

    Raises
    ------
    SolverError
        No usable point (a failed, infeasible or unbounded status).
    """
    if result.status in FAILED or (result.w is None and result.dual_coef is None):
        raise _refuse(name, model, result)
    if isinstance(model, DistributedModel):  # the objective and the decision's summary in partitions, one round
        return distributed_certify.certify_with_summary(model, result, tol)
    if result.w is None:
        objective, violation, decision = objective_module.kernel_scores(model, result.dual_coef, result.support_vectors,
                                                                        result.b)  # re-scored; its scores for below
        return replace(result, b=float(result.b), objective=objective, violation=violation,
                       dual_objective=float(result.dual_value)), decision
    from ._lazy import cvxpy as cp  # imported only if the except clause below is reached

    if model.distribution is not None:  # the set's own dual (its multipliers: the rows of its conic duals)
        certify_own = distribution_dual(model.distribution).certify
        cert = certify_own(model, result.w, float(result.b), multipliers=result.multipliers, status=result.status,
                           claimed_gap=float(result.gap), solver_objective=float(result.primal_value), tol=tol,
                           own_bound=float(result.dual_value) if result.dual_feasible else float("nan"))
        message = "; ".join(m for m in (result.message, cert.message) if m)  # the certifier's point and numbers
        return replace(result, w=cert.w, b=cert.b, status=cert.status, gap=cert.gap, dual_value=cert.dual_value,
                       dual_feasible=True, objective=cert.objective, violation=cert.violation, message=message,
                       certified=True), None
    try:
        cert, decision = certify_linear(model, result, tol)
    except cp.error.SolverError as exc:
        raise SolverError(
            f"solver {name!r} returned a point, but evaluating the uncertainty sets' support functions there "
            f"(a Clarabel solve inside the package) failed: {exc}"
        ) from exc
    if cert.status in FAILED:
        raise _refuse(name, model, result, cert.message)
    return cert, decision


def to_solution(problem: Any, name: str, model: Model, result: Result, elapsed: float, *,
                warn: bool = True, stacklevel: int = 1, decision: Any = None) -> Solution:
    """The :class:`Solution` of a certified result; a :class:`ConvergenceWarning` when it is not optimal, a
    :class:`DegenerateSolutionWarning` when its decision is constant on the training data
    (:func:`robustsvm.certificates.degenerate.diagnose` on ``decision``, the certifier's ``Xw`` when it has one or
    its summary on a cluster, kept in ``Solution.degenerate``)."""
    extra = {k: v for k, v in result.extra.items() if k != "program"}
    if result.status != OPTIMAL and not isinstance(model, DistributedModel) and model.kernel is None:
        note = scale_note(model.X, model.feature_names)
        if note and note not in result.message:
            result = replace(result, message=(result.message + note) if result.message else note[2:])
    primal = result.primal_objective if np.isfinite(result.primal_objective) else result.primal_value
    sol = Solution(
        w=result.w, b=float(result.b), objective=result.objective, gap=float(result.gap), status=result.status,
        solver=name, iterations=int(result.iterations), time=elapsed, time_compile=float(result.time_compile),
        time_solve=float(result.time_solve), history={k: np.asarray(v) for k, v in (result.history or {}).items()},
        violation=result.violation, classes=model.classes, problem=solved_problem(problem, model),
        feature_names=model.feature_names,
        message=result.message, dual_coef=result.dual_coef, support_vectors=result.support_vectors, extra=extra,
        multipliers=result.multipliers, dual_bound=float(result.dual_value) if result.certified else float("nan"),
        dual_objective=float(result.dual_objective), primal_objective=float(primal), rel_gap=float(result.rel_gap),
        dual_alpha=result.dual_alpha,
    )
    if warn and result.status != OPTIMAL:
        warnings.warn(
            f"solver {name!r} stopped with status {result.status!r}"
            + (f" ({result.message})" if result.message else "") + "; the solution may not be optimal",
            ConvergenceWarning, stacklevel=stacklevel + 1,
        )
    report = _degeneracy(model, result, explain=warn, decision=decision)
    if report is not None:
        sol.degenerate = report
        if warn:
            announce_degenerate(sol, model, stacklevel=stacklevel + 1)
    return sol


def _degeneracy(model: Model, result: Result, *, explain: bool, decision: Any = None) -> dict | None:
    """The degeneracy report of a solution (the gap counts only when optimal; a kernel's: uninformative)."""
    if result.w is None and (decision is None or model.kernel is None):
        return None
    if model.kernel is not None:
        return degenerate.uninformative(model, degenerate.summarize(model, decision, float(result.b)))
    gap = float(result.gap) if result.status == OPTIMAL else np.nan
    return degenerate.diagnose(model, np.asarray(result.w), float(result.b), gap, float(result.objective),
                               explain=explain, decision=decision)


def solve_model(problem: Any, backend: Backend, model: Model, options: Mapping[str, Any], *,
                warn: bool = True, quiet: bool = False, stacklevel: int = 1) -> Solution:
    """Steps 2–5 on a normalized model: refuse, run, certify, report (``warn=False``: no
    :class:`ConvergenceWarning`; ``quiet``: the solver's own warnings recorded, :func:`recorded_warnings`)."""
    check_options(backend, options)
    reasons = backend.check(problem)
    if reasons:
        able = registry.capable_backends(problem)
        raise UnsupportedModelError(f"backend {backend.name!r} cannot solve this model ({'; '.join(reasons)}); "
                                    f"backends that can: {', '.join(able) if able else 'none registered'}")
    with one_blas_thread():  # the report's work too (its warnings keep their stack level: no decorator here)
        result, elapsed = run(backend, model, options, quiet=quiet)
        result, decision = certify_with_decision(backend.name, model, result, tol=options.get("tol"))
        return to_solution(problem, backend.name, model, result, elapsed, warn=warn, stacklevel=stacklevel + 1,
                           decision=decision)


# ----------------------------------------------------------------- the path
def solve(problem: Any, X: Any, y: Any, solver: str = "clarabel", *, sample_weight: Any = None,
          feature_names: Any = None, radius: Any = None, option_defaults: Mapping[str, dict] | None = None,
          dual_start: Any = None, warn: bool = True, quiet: bool = False, stacklevel: int = 1,
          **options: Any) -> Solution:
    """Solve ``problem`` on ``(X, y)``: the path every caller takes (see the module docstring).

    Parameters
    ----------
    problem : Problem
    X, y, sample_weight, feature_names, radius
        As for :meth:`Problem.solve`.
    solver : str
        A registered backend, or ``"auto"``.
    option_defaults : dict of backend name to dict, optional
        A caller's own defaults for a backend, used where ``options`` sets nothing (the estimator's
        tighter Clarabel tolerance on LP/QP models); also applied to the backend ``"auto"`` chooses or
        falls back to.
    dual_start : ndarray of shape (n,), optional
        A dual point ``α`` to start from (``Solution.dual_alpha`` of a nearby model): passed as ``warm_start`` to
        the backend that runs (the one ``"auto"`` chooses) when it takes a dual point (:func:`takes_dual_start`),
        where it also replaces a ``warm_start=True`` of ``options``; other backends keep their options.
    warn, quiet : bool
        ``warn=False``: no :class:`ConvergenceWarning` (the status says it); ``quiet``: the solver's own
        warnings recorded in ``Solution.extra["warnings"]`` (:func:`recorded_warnings`). In memory only.
    stacklevel : int
        Where a :class:`ConvergenceWarning` points (1: the caller of this function, 2: its caller).
    **options
        ``tol``, ``max_iter``, ``verbose``, ``random_state`` and the backend's own options.
    """
    if is_dask_array(X):
        return solve_distributed(problem, X, y, solver, sample_weight=sample_weight, feature_names=feature_names,
                                 radius=radius, stacklevel=stacklevel + 1, **options)
    if not (isinstance(solver, str) and solver.lower() == AUTO):
        registry.get_backend(solver)  # an unknown name fails before the data are read
    positive_class = getattr(problem, "positive_class", None)
    data = check_fit_data(X, y, signs=problem.signs, sample_weight=sample_weight, feature_names=feature_names,
                          positive_class=positive_class)
    note = unnamed_direction(data.classes, positive_class, data.signs)
    if note is None and (getattr(problem, "bounds", None) is not None or getattr(problem, "constraints", None)):
        note = unnamed_direction(data.classes, positive_class, np.ones(1))  # bounds have a direction too
        if note is not None:
            note = note.replace("signs were given", "bounds or linear constraints on the weights were given", 1)
    if note is not None:  # signs on labels that do not say which class they point to
        warnings.warn(note, SignDirectionWarning, stacklevel=stacklevel + 1)
    model = normalize(problem, data, radius=radius)  # resolves (and validates) the uncertainty layout once
    return solve_normalized(problem, model, solver, option_defaults=option_defaults, dual_start=dual_start,
                            warn=warn, quiet=quiet, stacklevel=stacklevel + 1,
                            **options)


def solve_distributed(problem: Any, X: Any, y: Any, solver: str, *, sample_weight: Any = None,
                      feature_names: Any = None, radius: Any = None, client: Any = None, stacklevel: int = 1,
                      **options: Any) -> Solution:
    """:func:`solve` on a dask array ``X``: the rows partitioned on the cluster of ``client`` (the current one by
    default), a distributed backend (``"auto"``: :func:`choose_backend`), the certificate from partition sums.

    There is no fallback: an ``"auto"`` answer short of its tolerance is returned with its status (and a
    :class:`ConvergenceWarning`).
    """
    auto = isinstance(solver, str) and solver.lower() == AUTO
    if not auto:
        backend = registry.get_backend(solver)
        if backend.kind != DISTRIBUTED:
            able = sorted(b for b in registry.capable_backends(problem) if registry.get_backend(b).kind == DISTRIBUTED)
            raise UnsupportedModelError(f"solver {backend.name!r} needs X in memory; for a dask array X use "
                                        f"solver='auto' or one of: {', '.join(able) if able else 'none registered'}")
    model = distributed_model(problem, X, y, client=client, sample_weight=sample_weight,
                              feature_names=feature_names, radius=radius)
    if radius is not None:  # the solution's problem carries the radius it was solved with
        problem = copy.copy(problem)
        problem.uncertainty = model.uncertainty.with_radius(model.radius)
    note = unnamed_direction(model.classes, getattr(problem, "positive_class", None), model.signs)
    if note is not None:
        warnings.warn(note, SignDirectionWarning, stacklevel=stacklevel + 1)
    if auto:
        backend = registry.get_backend(choose_backend(problem, model.d, model))
        options = accepted_options(backend, options)
    return solve_model(problem, backend, model, options, stacklevel=stacklevel + 1)


def solve_normalized(problem: Any, model: Model, solver: str, *, option_defaults: Mapping[str, dict] | None = None,
                     dual_start: Any = None, warn: bool = True, quiet: bool = False, stacklevel: int = 1,
                     **options: Any) -> Solution:
    """:func:`solve` on an already normalized model (a grid search's fold): choose, refuse, run, certify, report.

    With ``solver="auto"`` the backend is :func:`choose_backend`'s choice for ``problem`` on
    ``model``'s data; its options are those of ``options`` it declares. A first answer that
    is not certified optimal, or an error of that backend on the data, is solved again by the next backend of
    :func:`robustsvm.backends.cost.fallback_order` (the accepting candidates expected to certify, by predicted
    time, :data:`FALLBACK` last) with only ``tol`` and ``verbose`` carried over: each attempt is recorded in
    ``Solution.auto_attempts``, the first one also in ``Solution.auto_fallback``.
    """
    defaults = dict(option_defaults or {})
    if not (isinstance(solver, str) and solver.lower() == AUTO):
        backend = registry.get_backend(solver)
        opts = _started(backend, {**defaults.get(backend.name, {}), **options}, dual_start)
        return solve_model(problem, backend, model, opts, warn=warn, quiet=quiet, stacklevel=stacklevel + 1)
    shape = cost.DataShape.of(model)  # read once (its row scale is a pass over the data) for every use below
    backend = lookup(AUTO, problem, shape)
    opts = _started(backend, {**defaults.get(backend.name, {}), **accepted_options(backend, options)}, dual_start)
    # an attempt precedes only a second-order or conic choice, and only without a caller's own budget; the
    # predictions are those the choice just made (kept by the cost module), read only when needed
    first_order = backend.name in cost.FIRST_ORDER
    preds = None if first_order else auto_predictions(problem, shape)
    own_budget = "max_iter" in options or "time_limit" in options
    trial = None if own_budget or first_order else auto_probe(problem, shape, preds)
    record = None
    if trial is not None and trial.chosen == backend.name:
        attempt, record, resume = _attempt(problem, model, trial, options, defaults, quiet)
        if attempt is not None:
            return announce_degenerate(attempt, model, stacklevel=stacklevel + 1) if warn else attempt
        if resume is not None:  # its gap's decay says it finishes first: continued (from its dual point)
            backend = registry.get_backend(trial.backend)
            opts = _started(backend, {**defaults.get(backend.name, {}), **accepted_options(backend, options)},
                            resume[0].dual_alpha if takes_dual_start(backend) else None)
            opts["max_iter"] = resume[1]  # twice the forecast: a wrong one costs a bounded time
    if backend.name == FALLBACK:  # the solve of last resort: its answer, whatever its status
        sol = solve_model(problem, backend, model, opts, warn=warn, quiet=quiet, stacklevel=stacklevel + 1)
        if record is not None:
            sol.auto_probe, sol.auto_attempts = record, (record,)
        return sol
    start = time.perf_counter()
    try:  # warn=False: a first attempt that stops short is solved again below, not reported (no warnings
        # filter is set: entering one invalidates the interpreter's warning caches, 0.05 ms of a 1 ms solve)
        first: Solution | Exception = solve_model(problem, backend, model, opts, warn=False, quiet=quiet)
    except _NUMERICAL_ERRORS as exc:
        first = exc
    if isinstance(first, Solution) and record is not None:
        first.auto_probe, first.auto_attempts = record, (record,)
    if isinstance(first, Solution) and first.status == OPTIMAL:
        return announce_degenerate(first, model, stacklevel=stacklevel + 1) if warn else first
    tried = (backend.name,) + ((trial.backend,) if record is not None else ())
    return fall_back(problem, model, first, options, option_defaults=defaults, warn=warn, quiet=quiet,
                     stacklevel=stacklevel + 1, first_backend=backend.name, started=start,
                     order=cost.fallback_order(auto_predictions(problem, shape) if preds is None else preds, tried),
                     probe=record)


def solve_point(problem: Any, model: Model, solver: str, options: Mapping[str, Any], *,
                first: Solution | None = None, quiet: bool = False) -> Solution:
    """A grid point's answer on its fold's model: the path's choice, refusal and fall-back, no warning.

    ``"auto"``: :func:`solve_normalized`. A named backend: its answer when it accepts the model; when it refuses
    it, or from ``first`` (its certified answer short of optimal, which an ``"auto"`` grid solves again), the
    backends of :func:`robustsvm.backends.cost.fallback_order` with that backend counted as tried
    (:func:`fall_back`, :data:`FALLBACK` last).
    """
    if first is None and isinstance(solver, str) and solver.lower() == AUTO:
        return solve_normalized(problem, model, AUTO, warn=False, quiet=quiet, **options)
    name = registry.get_backend(solver).name if first is None else first.solver
    outcome: Solution | Exception | None = first
    if outcome is None:
        backend = registry.get_backend(name)
        reasons = backend.check(problem)
        if not reasons:
            return solve_model(problem, backend, model, options, warn=False, quiet=quiet)
        outcome = UnsupportedModelError(f"backend {name!r} cannot solve this model ({'; '.join(reasons)})")
    order = cost.fallback_order(auto_predictions(problem, model), (name,))
    return fall_back(problem, model, outcome, options, warn=False, quiet=quiet, first_backend=name, order=order)


def tight_defaults(problem: Any) -> dict[str, dict]:
    """The ``option_defaults`` of a tight answer (the estimator's): :data:`FALLBACK` at :data:`TIGHT_CONIC_TOL` on
    a model whose robust margins are linear (an LP/QP: :attr:`~robustsvm.model.ModelSummary.polyhedral`), where a
    conic solver's default tolerance leaves visible digits; nothing otherwise."""
    return {FALLBACK: {"tol": TIGHT_CONIC_TOL}} if summarize(problem).polyhedral else {}


def takes_dual_start(backend: Backend) -> bool:
    """Whether ``backend`` starts from a dual point: a non-conic backend with a ``warm_start`` option."""
    return backend.kind != "conic" and "warm_start" in backend.options


def _started(backend: Backend, options: dict, dual_start: Any) -> dict:
    """``options`` with the dual start for a backend that takes one (:func:`solve`'s ``dual_start``)."""
    if takes_dual_start(backend) and (dual_start is not None or options.get("warm_start") is True):
        return {**options, "warm_start": dual_start}
    return options


def _attempt(problem: Any, model: Model, trial: cost.Probe, options: Mapping[str, Any], defaults: Mapping[str, dict],
             quiet: bool = False) -> tuple[Solution | None, Attempt, tuple[Solution, int] | None]:
    """Run ``trial`` (a first-order probe): its solution when certified optimal, its record, and the probe's
    solution with the epochs to continue for (twice the forecast) when :func:`robustsvm.backends.cost.probe_forecast`
    says that backend finishes first."""
    backend = registry.get_backend(trial.backend)
    bound = {"time_limit": trial.time_limit} if trial.epochs is None else {"max_iter": int(trial.epochs)}
    opts = {**defaults.get(backend.name, {}), **accepted_options(backend, options), **bound}
    bounded = {"time_limit": trial.time_limit, "instead_of": trial.chosen, "predicted_seconds": trial.chosen_seconds}
    try:
        sol = solve_model(problem, backend, model, opts, warn=False, quiet=quiet)
    except _NUMERICAL_ERRORS as exc:
        return None, Attempt(solver=trial.backend, status=f"error: {exc}", **bounded), None
    record = Attempt(solver=trial.backend, status=sol.status, iterations=sol.iterations, rel_gap=sol.rel_gap,
                     time=float(sol.time), **bounded)
    if sol.status == OPTIMAL:
        sol.auto_probe = record
        return sol, record, None
    full = with_defaults(backend, accepted_options(backend, options))
    more = cost.probe_forecast(sol.history, 1, 1.0, float(full.get("tol", 1e-4)))  # epochs still to run
    # at the probe's predicted cost per epoch (not its wall time: the decision is the same on every run)
    per = trial.time_limit / trial.epochs if trial.epochs else float(sol.time) / max(sol.iterations, 1)
    again = 0 if takes_dual_start(backend) else sol.iterations  # started again: the probe's epochs run again
    if (more + again) * per > cost.PROBE_CONTINUE * trial.chosen_seconds or \
            2 * more + sol.iterations > full.get("max_iter", cost.EPOCH_BUDGET):
        return None, record, None
    return None, record, (sol, int(max(2 * more + again, 10)))


def _record(first: Solution | Exception, name: str, started: float | None) -> Attempt:
    """What ``Solution.auto_attempts`` keeps of an attempt: its backend, status, iterations, gap and time."""
    if isinstance(first, Solution):
        return Attempt(solver=first.solver, status=first.status, iterations=first.iterations,
                       rel_gap=float(first.rel_gap), time=float(first.time))
    return Attempt(solver=name, status=f"error: {first}",
                   time=time.perf_counter() - started if started is not None else float("nan"))


def fall_back(problem: Any, model: Model, first: Solution | Exception, options: Mapping[str, Any], *,
              option_defaults: Mapping[str, dict] | None = None, warn: bool = True, quiet: bool = False,
              stacklevel: int = 1, first_backend: str = "", started: float | None = None,
              order: list[str] | None = None, probe: Attempt | None = None) -> Solution:
    """Solve ``model`` again after ``first`` (a solution short of optimal, or the error raised).

    The backends of ``order`` (default: :data:`FALLBACK` alone; :func:`solve_normalized` passes
    :func:`robustsvm.backends.cost.fallback_order`) are tried in turn until one certifies; the last one's
    answer is returned whatever its status (a :class:`ConvergenceWarning` when it is not optimal). Only ``tol``
    and ``verbose`` carry over from ``options`` (iteration caps and the first backend's own options do not).
    ``Solution.auto_attempts`` lists every attempt before the answer in order (the bounded attempt
    ``probe`` first when one was made, then ``first``), and ``Solution.auto_fallback`` is ``first``'s.
    """
    defaults = dict(option_defaults or {})
    kept = {k: v for k, v in options.items() if k in ("tol", "verbose")}
    names = list(order) if order else [FALLBACK]
    attempts = [_record(first, first_backend, started)]
    announce = False  # an answer before the last one was built without warnings
    for i, name in enumerate(names):
        last = i == len(names) - 1
        backend = registry.get_backend(name)
        opts = {**defaults.get(name, {}), **{k: v for k, v in kept.items() if k in registry.COMMON_OPTIONS
                                              | backend.options}}
        if last:
            sol = solve_model(problem, backend, model, opts, warn=warn, quiet=quiet, stacklevel=stacklevel + 1)
            break
        t0 = time.perf_counter()
        try:
            sol = solve_model(problem, backend, model, opts, warn=False, quiet=quiet)
        except _NUMERICAL_ERRORS as exc:
            attempts.append(_record(exc, name, t0))
            continue
        if sol.status == OPTIMAL:
            announce = warn
            break
        attempts.append(_record(sol, name, t0))
    if probe is not None:
        sol.auto_probe = probe
    sol.auto_fallback = attempts[0]
    sol.auto_attempts = tuple(([probe] if probe is not None else []) + attempts)
    return announce_degenerate(sol, model, stacklevel=stacklevel + 1) if announce else sol

"""Conic backends: the model compiled by CVXPY and solved by Clarabel, SCS or
any other CVXPY solver installed."""

from __future__ import annotations

import time
import warnings
from dataclasses import replace

import numpy as np

from .._lazy import cvxpy as cp
from .._lazy import is_installed
from ..conic import STATUS, ConicProgram, native_options, solver_output
from ..conic.scaling import scale_note
from ..duals import KernelDual, solve_nqp_cvxpy
from ..model import Model
from .registry import Backend, Needs, Result, capable_backends, get_backend, register

__all__ = ["solve_conic", "CONIC_SOLVERS", "default_backends", "is_linear_program"]

#: CVXPY solvers registered as backends when installed (lower-case backend names)
CONIC_SOLVERS = ("CLARABEL", "SCS", "ECOS", "MOSEK", "GUROBI", "CVXOPT", "OSQP", "PIQP", "HIGHS", "COPT")



#: solvers through CVXPY that take linear and quadratic programs only (no second-order, power or PSD cones)
QP_ONLY = frozenset({"OSQP", "HIGHS", "PIQP"})
#: default time limit (seconds) of the solvers that have none by default, declared on their registration
#: (``Backend.defaults``) and passed by :mod:`robustsvm.solve_path`
DEFAULT_TIME_LIMIT = {"HIGHS": 600.0, "OSQP": 600.0}
#: each solver's own name of its time-limit option (None: not translated)
_TIME_LIMIT_OPTION = {"CLARABEL": "time_limit", "SCS": "time_limit_secs", "OSQP": "time_limit",
                      "HIGHS": "time_limit"}


#: backends a default list (``compare``'s, the CLI's ``compare``) offers for linear programs only: HiGHS's
#: QP solver can loop without end, ignoring its time limit (ERGO-Code/HiGHS#992, #1583); asked for by
#: name on a QP it runs with an iteration limit its QP solver checks (:data:`HIGHS_QP_ITERATION_LIMIT`)
LP_ONLY_BY_DEFAULT = frozenset({"highs"})
#: ``qp_iteration_limit`` of HiGHS on a QP when the caller sets neither it nor ``max_iter``: this many, or
#: :data:`HIGHS_QP_ITERATIONS_PER_VARIABLE` per variable of the compiled program when that is more
HIGHS_QP_ITERATION_LIMIT = 50_000
HIGHS_QP_ITERATIONS_PER_VARIABLE = 25


def qp_representable(uncertainty_set) -> bool:
    """Whether ``σ_V`` compiles to linear and quadratic pieces only (CVXPY's ``is_qp`` on a probe)."""
    d = uncertainty_set.dim or 2
    z = cp.Variable(d)
    t = cp.Variable()
    expr, cons = uncertainty_set.support_cvx(z)
    return cp.Problem(cp.Minimize(t + cp.sum_squares(z)), [expr <= t, *cons]).is_qp()


def lp_representable(uncertainty_set) -> bool:
    """Whether ``σ_V`` compiles to linear pieces only (Box, the 1- and ∞-balls, polyhedra; CVXPY's ``is_lp``)."""
    d = uncertainty_set.dim or 2
    z = cp.Variable(d)
    t = cp.Variable()
    expr, cons = uncertainty_set.support_cvx(z)
    return cp.Problem(cp.Minimize(t), [expr <= t, *cons]).is_lp()


def is_linear_program(problem) -> bool:
    """Whether ``problem`` compiles to a linear program.

    True for a linear (no kernel) model with the hinge loss or a hard margin,
    no L2 term (an L1 term is linear), no ridge intercept and uncertainty sets
    whose support functions are polyhedral.
    """
    if problem.kernel is not None or problem.loss.name not in ("hinge", "hard_margin"):
        return False
    if problem.penalty.l2 > 0 or problem.intercept_term.mode == "ridge":
        return False
    unc = problem.uncertainty
    sets = [] if unc is None else (list(unc) if isinstance(unc, (list, tuple)) else [unc])
    distinct = {s.key(): s for s in sets}
    return all(lp_representable(s) for s in distinct.values())


def default_backends(problem) -> list[str]:
    """The backends a default list offers for ``problem``: every one that accepts it, except that a
    backend of :data:`LP_ONLY_BY_DEFAULT` is left out unless the model is a linear program, and the
    distributed backends (kind ``"distributed"``: they solve a dask array on a cluster) are left out."""
    able = [name for name in capable_backends(problem) if get_backend(name).kind != "distributed"]
    if any(name in LP_ONLY_BY_DEFAULT for name in able) and not is_linear_program(problem):
        able = [name for name in able if name not in LP_ONLY_BY_DEFAULT]
    return able


def _qp_iteration_limit(solver_name: str, program: cp.Problem | None, max_iter, solver_options: dict) -> dict:
    """``solver_options`` with HiGHS's ``qp_iteration_limit`` on a QP unless the caller bounds it already.

    ``program`` is the compiled CVXPY problem (None: a QP of unknown size).
    """
    if solver_name.upper() != "HIGHS" or max_iter is not None or (program is not None and program.is_lp()):
        return solver_options
    size = 0 if program is None else int(program.size_metrics.num_scalar_variables)
    limit = max(HIGHS_QP_ITERATION_LIMIT, HIGHS_QP_ITERATIONS_PER_VARIABLE * size)
    return {"qp_iteration_limit": limit, **solver_options}


def _qp_reasons(problem) -> list[str]:
    """Why a linear/quadratic-program solver cannot take ``problem``'s loss or sets (empty when it can)."""
    if problem.loss.cone is not None:
        return [f"the {problem.loss.name} loss needs the {problem.loss.cone} cone; this solver takes linear and "
                "quadratic programs only"]
    unc = problem.uncertainty
    sets = [] if unc is None else (list(unc) if isinstance(unc, (list, tuple)) else [unc])
    seen: set = set()
    for s in sets:
        key = s.key()
        if key in seen:
            continue
        seen.add(key)
        if not qp_representable(s):
            return [f"{type(s).__name__} {s!r} needs a second-order, power or semidefinite cone; "
                    "this solver takes linear and quadratic programs only"]
    return []


#: every linear model, any uncertainty set
LINEAR_NEEDS = Needs(sets="any", per_sample_sets=True, bounds=True, constraints=True)
#: linear models whose sets compile to an LP/QP
QP_NEEDS = Needs(sets="any", per_sample_sets=True, bounds=True, constraints=True, extra=_qp_reasons)


def _with_time_limit(solver_name: str, time_limit, solver_options) -> dict:
    """``solver_options`` plus the solver's own time-limit option (None: none; the solve path passes the
    default a backend declares, :data:`DEFAULT_TIME_LIMIT` for HiGHS and OSQP)."""
    opts = dict(solver_options or {})
    if time_limit is None:
        return opts
    key = _TIME_LIMIT_OPTION.get(solver_name.upper())
    if key is None:
        raise ValueError(f"time_limit is not translated for solver {solver_name!r}; pass its own option in "
                         "solver_options")
    time_limit = float(time_limit)
    if not np.isfinite(time_limit) or time_limit <= 0:
        raise ValueError(f"time_limit must be a positive number of seconds, got {time_limit!r}")
    opts.setdefault(key, time_limit)
    return opts


def _second_opinion(model: Model, solver_name: str) -> tuple[bool, str]:
    """Ask Clarabel whether a model another solver found infeasible is infeasible: ``(agrees, message)``."""
    try:
        res = ConicProgram(model).solve("CLARABEL")
    except cp.error.SolverError as exc:  # pragma: no cover - Clarabel failing as well
        return False, (f"{solver_name} reports the model infeasible and Clarabel, asked to confirm, failed ({exc}); "
                       "the model's feasibility is unknown")
    if res.status.startswith("infeasible"):
        return True, ""
    return False, (f"{solver_name} reports the model infeasible, but Clarabel solves it (status {res.status}, "
                   f"objective {res.primal_value:.6g}): {solver_name}'s infeasibility detection failed at its "
                   "tolerance (for a hard margin, the data are separable); use solver='clarabel'")


def _redundant_rows_note(model: Model, solver_name: str) -> str:
    """What to say when a solver fails on a model whose linear constraints repeat a row (empty otherwise)."""
    if not model.has_constraints:
        return ""
    groups = model.feasible_set.linear.parallel_rows()
    if not groups:
        return ""
    rows = "; ".join(", ".join(str(j) for j in g) for g in groups[:3]) + (" ..." if len(groups) > 3 else "")
    return (f"; the linear constraints have redundant rows, multiples of one another (rows {rows} of the stacked "
            f"constraints), on which {solver_name} can fail: merge them into one row, or use solver='clarabel', "
            "which solves such models")


def _refuted(model: Model, solver_name: str, res: Result, point: np.ndarray, compile_time: float) -> Result:
    """A solver called a model infeasible that has the feasible point ``point``: the claim is overturned.

    The model is solved again by another conic solver (SCS, or Clarabel after another solver); when that
    fails too, the feasible point itself is returned with the status ``"infeasible_refuted"``, for the
    package to score and certify like any other point.
    """
    claim = (f"{solver_name} reported the model infeasible ({res.message}), but the package found a point of "
             f"its feasible set (largest violation {model.feasible_set.violation(point):.3g}): the claim is "
             "overturned")
    other = "SCS" if solver_name.upper() != "SCS" and is_installed("scs") else "CLARABEL"
    if other.upper() != solver_name.upper():
        try:
            again = ConicProgram(model).solve(other)
        except cp.error.SolverError:
            again = None
        if again is not None and again.w is not None and again.status not in STATUS_FAILED:
            return replace(again, message=f"{claim}; {other} solved it: {again.message}",
                           time_compile=compile_time + res.time_compile + again.time_compile,
                           time_solve=res.time_solve + again.time_solve, infeasibility="",
                           extra={**again.extra, "refuted_infeasibility": res.message})
    return Result(w=point, b=0.0, status="infeasible_refuted", message=f"{claim}; the feasible point is returned",
                  time_compile=compile_time + res.time_compile, time_solve=res.time_solve,
                  extra={"refuted_infeasibility": res.message})


#: statuses without a usable point
STATUS_FAILED = frozenset({"infeasible", "infeasible_inaccurate", "unbounded", "unbounded_inaccurate",
                           "solver_error"})
#: kernel models go through their dual NQP (plus yᵀα = 0 for a free intercept)
KERNEL_NEEDS = Needs(losses=frozenset({"hinge", "squared_hinge", "hard_margin"}), l2="required", l1=False,
                     signs=False, sets=(),
                     why={"l1": "the kernel dual has no L1 term", "signs": "signs act on w, which a kernel hides",
                          "bounds": "bounds act on w, which a kernel hides",
                          "constraints": "linear constraints act on w, which a kernel hides",
                          "sets": "kernel models have no uncertainty sets"})


def _solve_kernel_dual(model: Model, solver_name: str, verbose: bool, solver_options) -> Result:
    """A kernel model: its dual NQP solved by the conic solver, mapped back to the expansion."""
    t0 = time.perf_counter()
    dual = KernelDual(model, allow_free=True)
    t1 = time.perf_counter()
    try:
        with solver_output(verbose):
            res = solve_nqp_cvxpy(dual.nqp, solver_name, verbose=verbose, solver_options=solver_options,
                                  equality=dual.equality)
    except cp.error.SolverError as exc:
        return Result(w=None, b=0.0, status="solver_error", message=str(exc), time_compile=t1 - t0)
    if not np.all(np.isfinite(res.v)):
        return Result(w=None, b=0.0, status=res.status if res.status != "optimal" else "solver_error",
                      message=res.message, time_compile=t1 - t0)
    status = STATUS.get(res.status, str(res.status))
    rec = dual.recover(res.v, b=res.multiplier if dual.free else None)
    gap = rec.objective - dual.dual_value(res.v)
    history = {"iteration": np.array([0]), "objective": np.array([rec.objective]), "gap": np.array([gap]),
               "time": np.array([res.time])}
    return Result(
        w=None, b=rec.b, status=status, gap=float(gap), iterations=0, history=history,
        time_compile=t1 - t0, time_solve=res.time, message=res.message + " (dual NQP of the kernel model)",
        dual_coef=rec.dual_coef, support_vectors=rec.support_vectors, dual_value=dual.dual_value(res.v),
        dual_feasible=False,
        infeasibility=f"{solver_name}'s certificate of infeasibility"
        if status.startswith("infeasible") and solver_name.upper() == "CLARABEL" else "",
        extra={"support": rec.support, "kkt_residual": res.kkt_residual, "dual_point": res.v},
    )


def solve_conic(solver_name: str):
    """Make the ``solve`` function of the conic backend for CVXPY solver ``solver_name``."""

    def solve(model: Model, *, tol=None, max_iter=None, verbose=False, random_state=None,
              solver_options=None, warm_start=False, program=None, time_limit=None) -> Result:
        solver_options = _with_time_limit(solver_name, time_limit, solver_options)
        if model.kernel is not None:
            opts = native_options(solver_name, tol, max_iter)
            opts.update(_qp_iteration_limit(solver_name, None, max_iter, solver_options))
            return _solve_kernel_dual(model, solver_name, verbose, opts)
        t0 = time.perf_counter()
        # λ2 = 0 compiles no quadratic term: a hinge model with polyhedral sets stays a linear program
        prog = program if program is not None else ConicProgram(model, with_l2=model.l2 > 0)
        t1 = time.perf_counter()
        solver_options = _qp_iteration_limit(solver_name, prog.cvxpy_problem, max_iter, solver_options)
        try:
            res = prog.solve(solver_name, tol=tol, max_iter=max_iter, verbose=verbose,
                             warm_start=warm_start, solver_options=solver_options)
        except cp.error.SolverError as exc:
            return Result(w=None, b=0.0, status="solver_error",
                          message=f"{solver_name}: {exc}{_redundant_rows_note(model, solver_name)}"
                                  f"{scale_note(model.X, model.feature_names)}",
                          time_compile=t1 - t0)
        if res.status != "optimal":
            res = replace(res, message=res.message + _redundant_rows_note(model, solver_name))
        status = res.status
        confirmed = solver_name.upper() == "CLARABEL"
        evidence = ""
        if status.startswith("infeasible") and not model.loss.is_constraint:
            point = model.feasible_set.point()  # a soft-margin model is feasible exactly when W is not empty
            if point is not None:
                return _refuted(model, solver_name, res, point, t1 - t0)
        if status.startswith("infeasible"):
            evidence = f"{solver_name}'s certificate of infeasibility"
            if not confirmed:
                confirmed, note = _second_opinion(model, solver_name)
                if not confirmed:
                    return Result(w=None, b=0.0, status="solver_error", message=note,
                                  time_compile=t1 - t0 + res.time_compile, time_solve=res.time_solve)
                evidence = f"{solver_name} reports infeasibility and Clarabel's certificate confirms it"
        history = {
            "iteration": np.array([res.iterations]),
            "objective": np.array([np.nan]),
            "gap": np.array([res.gap]),
            "time": np.array([res.time_solve]),
        }
        return replace(res, history=history, time_compile=(t1 - t0) + res.time_compile, infeasibility=evidence,
                       extra={**res.extra, "program": prog})

    return solve


#: the Python module behind each CVXPY solver, found without importing CVXPY (``cp.installed_solvers()`` would)
SOLVER_MODULES = {"CLARABEL": "clarabel", "SCS": "scs", "ECOS": "ecos", "MOSEK": "mosek", "GUROBI": "gurobipy",
                  "CVXOPT": "cvxopt", "OSQP": "osqp", "PIQP": "piqp", "HIGHS": "highspy", "COPT": "coptpy"}


def _register_installed() -> None:
    installed = {name for name, module in SOLVER_MODULES.items() if is_installed(module)}
    for name in CONIC_SOLVERS:
        if name not in installed:
            continue
        if name == "OSQP":
            summary = "OSQP via CVXPY: QP models only (no SOC/SDP uncertainty), ADMM"
        elif name == "HIGHS":
            summary = ("HiGHS via CVXPY: LP/QP models only; offered by default for LPs only (its QP solver "
                       "runs with an iteration limit)")
        elif name == "CLARABEL":
            summary = "Clarabel interior point via CVXPY: every linear model, any uncertainty set (default)"
        elif name == "SCS":
            summary = "SCS splitting via CVXPY: every linear model, any uncertainty set; warm starts"
        else:
            summary = f"{name} via CVXPY: the models its cones allow"
        register(
            Backend(
                name=name.lower(),
                solve=solve_conic(name),
                needs=QP_NEEDS if name in QP_ONLY else LINEAR_NEEDS,
                kernel_needs=KERNEL_NEEDS,
                summary=summary,
                options=frozenset({"solver_options", "warm_start", "program", "time_limit"}),
                defaults={"time_limit": DEFAULT_TIME_LIMIT[name]} if name in DEFAULT_TIME_LIMIT else {},
                kind="conic",
                certificate="the package's duality gap: recomputed objective minus the Lagrangian bound built from "
                            "the solver's margin multipliers (robustsvm.certificates.duality)",
            ),
            replace=True,
        )


with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    _register_installed()

"""Conic backends: the model compiled by CVXPY and solved by Clarabel, SCS or
any other CVXPY solver installed."""

from __future__ import annotations

import time
import warnings

import cvxpy as cp
import numpy as np

from ..conic import STATUS, ConicProgram, native_options
from ..duals import KernelDual, solve_nqp_cvxpy
from ..model import Model
from .registry import Backend, Needs, Result, register

__all__ = ["solve_conic", "CONIC_SOLVERS"]

#: CVXPY solvers registered as backends when installed (lower-case backend names)
CONIC_SOLVERS = ("CLARABEL", "SCS", "ECOS", "MOSEK", "GUROBI", "CVXOPT", "OSQP", "PIQP", "HIGHS", "COPT")



#: every linear model, any uncertainty set
LINEAR_NEEDS = Needs(sets="any", per_sample_sets=True)
#: kernel models go through their dual NQP (plus yᵀα = 0 for a free intercept)
KERNEL_NEEDS = Needs(losses=frozenset({"hinge", "squared_hinge", "hard_margin"}), l2="required", l1=False,
                     signs=False, sets=(),
                     why={"l1": "the kernel dual has no L1 term", "signs": "signs act on w, which a kernel hides",
                          "sets": "kernel models have no uncertainty sets"})


def _solve_kernel_dual(model: Model, solver_name: str, verbose: bool, solver_options) -> Result:
    """A kernel model: its dual NQP solved by the conic solver, mapped back to the expansion."""
    t0 = time.perf_counter()
    dual = KernelDual(model, allow_free=True)
    t1 = time.perf_counter()
    try:
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
        extra={"support": rec.support, "kkt_residual": res.kkt_residual, "dual_point": res.v},
    )


def solve_conic(solver_name: str):
    """Make the ``solve`` function of the conic backend for CVXPY solver ``solver_name``."""

    def solve(model: Model, *, tol=None, max_iter=None, verbose=False, random_state=None,
              solver_options=None, warm_start=False, program=None) -> Result:
        if model.kernel is not None:
            opts = native_options(solver_name, tol, max_iter)
            opts.update(solver_options or {})
            return _solve_kernel_dual(model, solver_name, verbose, opts)
        t0 = time.perf_counter()
        prog = program if program is not None else ConicProgram(model)
        t1 = time.perf_counter()
        try:
            res = prog.solve(solver_name, tol=tol, max_iter=max_iter, verbose=verbose,
                             warm_start=warm_start, solver_options=solver_options)
        except cp.error.SolverError as exc:
            return Result(w=None, b=0.0, status="solver_error", message=str(exc), time_compile=t1 - t0)
        status = res.status
        history = {
            "iteration": np.array([res.iterations]),
            "objective": np.array([np.nan]),
            "gap": np.array([res.gap]),
            "time": np.array([res.time_solve]),
        }
        return Result(
            w=res.w,
            b=res.b,
            status=status,
            gap=res.gap,
            iterations=res.iterations,
            history=history,
            time_compile=(t1 - t0) + res.time_compile,
            time_solve=res.time_solve,
            message=f"CVXPY status {res.raw_status}",
            dual_value=res.dual_objective,
            extra={"primal_objective": res.primal_objective, "dual_objective": res.dual_objective,
                   "program": prog},
        )

    return solve


def _register_installed() -> None:
    installed = set(cp.installed_solvers())
    for name in CONIC_SOLVERS:
        if name not in installed:
            continue
        if name == "OSQP":
            summary = "OSQP via CVXPY: QP models only (no SOC/SDP uncertainty), ADMM"
        elif name == "HIGHS":
            summary = "HiGHS via CVXPY: LP/QP models only"
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
                needs=LINEAR_NEEDS,
                kernel_needs=KERNEL_NEEDS,
                summary=summary,
                options=frozenset({"solver_options", "warm_start", "program"}),
                kind="conic",
                certificate="the solver's primal-dual gap (absolute) where it reports one",
            ),
            replace=True,
        )


with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    _register_installed()

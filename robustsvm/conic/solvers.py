"""The CVXPY solvers' side of a conic solve: option names, statuses, retries and what they print.

Each solver names ``tol`` and ``max_iter`` its own way (:func:`native_options`),
reports its own status strings (:data:`STATUS`, :func:`solver_status`) and its
own primal and dual values (:func:`raw_objectives`); those written in C, C++
or Rust print to file descriptor 1 whatever Python does (:func:`solver_output`).
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Iterator
from typing import Any

__all__ = ["CLARABEL_RETRIES", "RETRIED", "STATUS", "native_options", "raw_objectives", "solver_output",
           "solver_status"]

#: Clarabel settings tried in turn after an ``AlmostSolved`` end or a numerical failure (each only when the
#: caller did not set those options): iterative refinement to 1e-14, then also shorter steps, then less
#: static regularization, then no equilibration
_REFINE = {"iterative_refinement_reltol": 1e-14, "iterative_refinement_abstol": 1e-14,
           "iterative_refinement_max_iter": 50}
CLARABEL_RETRIES = (
    _REFINE,
    {**_REFINE, "max_step_fraction": 0.95},
    {**_REFINE, "static_regularization_constant": 1e-9},
    {"equilibrate_enable": False},
)
#: statuses after which a Clarabel solve is retried (a user limit or a proved infeasibility is not)
RETRIED = frozenset({"optimal_inaccurate", "solver_error"})

#: CVXPY statuses (the string values of ``cp.OPTIMAL``, ``cp.USER_LIMIT``, ...: written out so that importing
#: this module does not import CVXPY) in the package's words (the ``status`` of ``ConicProgram.solve``'s
#: Result; the raw one is in its ``message``)
STATUS = {
    "optimal": "optimal",
    "optimal_inaccurate": "optimal_inaccurate",
    "user_limit": "max_iter",
    "infeasible": "infeasible",
    "infeasible_inaccurate": "infeasible_inaccurate",
    "unbounded": "unbounded",
    "unbounded_inaccurate": "unbounded_inaccurate",
    "solver_error": "solver_error",
}


#: descriptor 1 as it was before the outermost :func:`solver_output`, and how many are open (all threads)
_REDIRECT: dict[str, Any] = {"depth": 0, "saved": None}
_REDIRECT_LOCK = threading.Lock()


@contextlib.contextmanager
def solver_output(verbose: bool = False) -> Iterator[None]:
    """Keep what a solver writes off standard output: to standard error when ``verbose``, else discarded.

    Solvers written in C, C++ or Rust print from their own code to file
    descriptor 1 (HiGHS prints its banner whatever its options), past
    ``sys.stdout``; a command's ``--json`` output must stay JSON. Descriptor 1
    itself is pointed elsewhere while any solve runs, and restored when the
    last one ends: solves in several threads share one redirection, the
    outermost deciding where it goes (so output of other threads meanwhile
    goes there too).
    """
    with _REDIRECT_LOCK:
        if _REDIRECT["depth"] == 0:
            _REDIRECT["saved"] = _redirect_stdout(verbose)
        _REDIRECT["depth"] += 1
    try:
        yield
    finally:
        with _REDIRECT_LOCK:
            _REDIRECT["depth"] -= 1
            saved = _REDIRECT["saved"]
            if _REDIRECT["depth"] == 0 and saved is not None:
                with contextlib.suppress(OSError, ValueError, AttributeError):
                    sys.stdout.flush()
                os.dup2(saved, 1)
                os.close(saved)
                _REDIRECT["saved"] = None


def _redirect_stdout(verbose: bool) -> int | None:
    """Point descriptor 1 at stderr or the null device; a copy of the old one (None: no usable descriptor 1)."""
    try:
        sys.stdout.flush()
        saved = os.dup(1)
    except (OSError, ValueError, AttributeError):  # no usable descriptor 1 (an embedded interpreter)
        return None
    target = os.dup(2) if verbose else os.open(os.devnull, os.O_WRONLY)
    os.dup2(target, 1)
    os.close(target)
    return saved


def solver_status(raw: Any) -> str:
    """The solver's own status string from its raw output ('' when unknown)."""
    for getter in (lambda r: r.status, lambda r: r["info"]["status"], lambda r: r["model_status"],
                   lambda r: r["status"]):
        try:
            return str(getter(raw))
        except (AttributeError, KeyError, TypeError, IndexError):
            continue
    return ""


def native_options(solver: str, tol: float | None, max_iter: int | None) -> dict:
    """Translate the common ``tol`` / ``max_iter`` into a solver's own option names."""
    name = solver.upper()
    opts: dict[str, Any] = {}
    if name == "CLARABEL":
        if tol is not None:
            opts.update(tol_gap_abs=tol, tol_gap_rel=tol, tol_feas=tol)
        if max_iter is not None:
            opts["max_iter"] = int(max_iter)
    elif name == "SCS":
        if tol is not None:
            opts.update(eps_abs=tol, eps_rel=tol)
        if max_iter is not None:
            opts["max_iters"] = int(max_iter)
    elif name == "OSQP":
        if tol is not None:
            opts.update(eps_abs=tol, eps_rel=tol)
        if max_iter is not None:
            opts["max_iter"] = int(max_iter)
    elif name == "HIGHS":
        if tol is not None:
            opts.update(primal_feasibility_tolerance=tol, dual_feasibility_tolerance=tol,
                        ipm_optimality_tolerance=tol)
        if max_iter is not None:
            opts.update(ipm_iteration_limit=int(max_iter), simplex_iteration_limit=int(max_iter),
                        qp_iteration_limit=int(max_iter))
    elif name == "ECOS":
        if tol is not None:
            opts.update(abstol=tol, reltol=tol, feastol=tol)
        if max_iter is not None:
            opts["max_iters"] = int(max_iter)
    else:
        if tol is not None or max_iter is not None:
            raise ValueError(
                f"tol and max_iter are not translated for solver {solver!r}; "
                "pass its own option names in solver_options"
            )
    return opts


def raw_objectives(solver: str, raw: Any) -> tuple[float, float, float]:
    """Primal and dual objective values and their gap from a solver's raw output."""
    name = solver.upper()
    nan = float("nan")
    try:
        if name == "CLARABEL":
            p, d = float(raw.obj_val), float(raw.obj_val_dual)
            return p, d, abs(p - d)
        if name == "SCS":
            info = raw["info"]
            return float(info["pobj"]), float(info["dobj"]), float(abs(info["gap"]))
    except (AttributeError, KeyError, TypeError):
        pass
    return nan, nan, nan

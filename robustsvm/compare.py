"""Run several backends on one model and tabulate them against a reference."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .backends.conic import default_backends
from .exceptions import ConvergenceWarning

__all__ = ["compare", "ComparisonTable"]


class ComparisonTable(list):
    """Rows of :func:`compare` (dicts), printed as an aligned table."""

    columns = ("solver", "status", "objective", "gap", "rel_obj_diff", "max_abs_dw", "iterations", "time")

    def __repr__(self) -> str:
        def fmt(key: str, value: Any) -> str:
            if isinstance(value, float):
                if key in ("objective",):
                    return f"{value:.10g}"
                if key == "time":
                    return f"{value:.4g}"
                return f"{value:.3g}"
            return str(value)

        cells = [[fmt(k, row.get(k, "")) for k in self.columns] for row in self]
        widths = [max(len(c), *(len(r[j]) for r in cells)) for j, c in enumerate(self.columns)]
        lines = ["  ".join(c.ljust(wd) for c, wd in zip(self.columns, widths, strict=True))]
        lines += ["  ".join(c.ljust(wd) for c, wd in zip(r, widths, strict=True)) for r in cells]
        return "\n".join(lines)

    __str__ = __repr__

    def to_pandas(self):
        import pandas as pd

        return pd.DataFrame(list(self), columns=[c for c in self.columns])


def compare(
    problem,
    X: Any,
    y: Any,
    solvers: list[str] | None = None,
    *,
    reference: str = "clarabel",
    options: dict[str, dict] | None = None,
    **fit_args: Any,
) -> ComparisonTable:
    """Solve ``problem`` with each backend and compare with a reference solution.

    Parameters
    ----------
    problem : Problem
    X, y : training data
    solvers : list of str, optional
        Backend names; default: every registered backend that accepts the model, HiGHS only when the
        model is a linear program (:func:`robustsvm.backends.conic.default_backends`).
    reference : str, default "clarabel"
        The backend whose solution the others are measured against (solved
        first, included in the table).
    options : dict of backend name to dict, optional
        Per-backend solve options (``tol``, ``max_iter``...).
    **fit_args
        ``sample_weight`` / ``feature_names`` passed to every solve.

    Returns
    -------
    ComparisonTable
        One row per backend: ``solver``, ``status``, ``objective``, ``gap``,
        ``rel_obj_diff`` = (objective − reference objective)/max(1, |reference|),
        ``max_abs_dw`` = max |w − w_ref| (and |b − b_ref|), ``iterations``,
        ``time``; a backend that fails gets its error in ``status``.
    """

    options = options or {}
    if solvers is None:
        solvers = default_backends(problem)
    names = [reference] + [s for s in solvers if s != reference]
    table = ComparisonTable()
    ref = None
    for name in names:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                sol = problem.solve(X, y, solver=name, **options.get(name, {}), **fit_args)
        except Exception as exc:  # a failing backend is reported in its row, not raised
            if name == reference:
                raise
            table.append({"solver": name, "status": f"error: {exc}"})
            continue
        if ref is None:
            ref = sol
        row = {
            "solver": name,
            "status": sol.status,
            "objective": sol.objective,
            "gap": sol.gap,
            "rel_obj_diff": (sol.objective - ref.objective) / max(1.0, abs(ref.objective)),
            "max_abs_dw": _max_abs_diff(sol, ref),
            "iterations": sol.iterations,
            "time": sol.time,
            "solution": sol,
        }
        table.append(row)
    return table


def _max_abs_diff(sol, ref) -> float:
    if sol.w is None or ref.w is None:
        return float("nan")
    return float(max(np.max(np.abs(sol.w - ref.w)), abs(sol.b - ref.b)))

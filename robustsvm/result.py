"""What every backend returns: one :class:`Result` type and one :class:`History` recorder.

:class:`Result` is the contract between a backend and the package's certifier
(:func:`robustsvm.certificates.duality.certify`, run by :mod:`robustsvm.solve_path`). A
backend hands back the point it found (``w, b``, or a kernel expansion), why it
stopped (``status``, ``message``), its progress (``history``) and, as typed
fields, what the certifier may use: the margin multipliers (``multipliers``),
its own primal value (``primal_value``) and dual bound (``dual_value``, with
``dual_feasible`` saying whether that value is a bound the backend checked),
and evidence that the model is infeasible (``infeasibility``). The certifier
reads these fields and never a backend's name. It returns the same type with
``objective``, ``violation``, ``gap``, ``dual_value`` and ``status`` replaced
by the package's own numbers (``certified=True``).

What other code reads travels in typed fields too: the final dual point
(``dual_alpha``, a warm start for a nearby model), the backend's own relative
gap (``rel_gap``), the objective it evaluated at its point
(``primal_objective``) and, once certified, the dual value it reported
(``dual_objective``). ``extra`` carries only diagnostics no code reads, under
names that say what they are (``step_size``, ``passes``, ...).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["Attempt", "History", "Result"]


@dataclass
class Result:
    """The outcome of one backend solve.

    Attributes
    ----------
    w : ndarray of shape (d,) or None
        Weights of a linear model (None for a kernel expansion).
    b : float
        Intercept (0 without one).
    status : str
        ``"optimal"`` when the backend's stopping rule was met; otherwise why it
        stopped (``"max_iter"``, ``"time_limit"``, ``"inaccurate"``, ``"infeasible"``, ...).
    gap : float
        The certificate: an upper bound on ``objective − optimum`` (absolute, in
        the model's units), NaN when the backend has none.
    dual_value : float
        The backend's own lower bound on the optimum, the one ``gap`` was computed
        from (NaN if none).
    iterations : int
    history : dict of str to ndarray
        Equal-length arrays from :class:`History`: at least ``iteration``,
        ``objective``, ``gap`` and ``time``.
    time_compile, time_solve : float
        Seconds spent preparing (compiling, factorizing) and iterating.
    message : str
    dual_coef, support_vectors : kernel expansion ``f(x) = Σ_j a_j k(x, x_j) + b``
    extra : dict
        Backend-specific values under self-describing names.
    multipliers : ndarray of shape (n,) or None
        Multipliers ``a_i`` of the margin constraints ``ξ_i ≥ 1 − m_i`` in model
        units (``c_i α_i`` of a dual method, the conic duals of an external
        solver); the certifier builds its Lagrangian bound from them (and from
        the margins when None).
    constraint_multipliers : ndarray of shape (k,) or None
        Multipliers ``ν`` of the linear constraints ``lb ≤ A w ≤ ub`` on the weights (``ν_k > 0`` prices the
        upper side, ``ν_k < 0`` the lower one); the certifier adds their term to its bound.
    primal_value : float
        The objective an external solver reports at its point, computed by the
        solver itself (NaN when the backend evaluates its objective with
        :mod:`robustsvm.objective`, as the package's own methods do). The
        certifier flags a claimed optimum whose report disagrees with the
        recomputed objective.
    dual_feasible : bool
        True when ``dual_value`` is the dual function at a point the backend
        made dual-feasible itself, so a lower bound on the optimum whatever the
        run's accuracy (the certifier may use it); False for a dual objective an
        external solver reports, which may be off when it stops early.
    infeasibility : str
        Evidence that the model has no feasible point, saying what established
        it (an interior-point infeasibility certificate, a second solver's
        confirmation); empty when there is none. A status ``"infeasible"``
        without it is a claim, not a finding.
    dual_alpha : ndarray of shape (n,) or None
        The final dual point ``α = a / c`` of a dual method (in the loss's dual box), the warm start of a nearby
        model (``warm_start=`` of ``robust-dcd``); None for a method without one.
    rel_gap : float
        The backend's own relative duality gap at its stop, ``(P − D) / max(1, |P|)`` from its last
        certificate (NaN when it has none).
    primal_objective : float
        The objective the backend evaluated at its point for its own gap, ``P`` of ``rel_gap`` (NaN for an
        external solver, whose report is ``primal_value``).
    dual_objective : float
        Set by the certifier: the dual value the backend reported (``dual_value`` before the certifier replaced
        it by the package's bound).
    objective, violation : float
        Set by the certifier: the objective recomputed by the package and the
        largest constraint violation at ``(w, b)`` (NaN in a backend's result).
    certified : bool
        Whether the certifier has replaced ``status``, ``gap`` and
        ``dual_value`` by the package's own verdict.
    """

    w: np.ndarray | None
    b: float
    status: str
    gap: float = float("nan")
    iterations: int = 0
    history: dict = field(default_factory=dict)
    time_compile: float = 0.0
    time_solve: float = 0.0
    message: str = ""
    dual_coef: np.ndarray | None = None
    support_vectors: Any = None
    extra: dict = field(default_factory=dict)
    dual_value: float = float("nan")
    multipliers: np.ndarray | None = None
    constraint_multipliers: np.ndarray | None = None
    primal_value: float = float("nan")
    dual_feasible: bool = True
    infeasibility: str = ""
    dual_alpha: np.ndarray | None = None
    rel_gap: float = float("nan")
    primal_objective: float = float("nan")
    dual_objective: float = float("nan")
    objective: float = float("nan")
    violation: float = float("nan")
    certified: bool = False


@dataclass(frozen=True)
class Attempt:
    """One solve ``"auto"`` made before its answer (a bounded first attempt, or an answer it solved again).

    Attributes
    ----------
    solver : str
        The backend that ran.
    status : str
        Its certified status, or ``"error: ..."`` when it raised on the data.
    iterations : int
    rel_gap : float
        The backend's own relative gap (:attr:`Result.rel_gap`; NaN when it has none or raised).
    time : float
        Seconds the attempt took.
    time_limit : float or None
        The budget of a bounded first attempt (None for the others).
    instead_of : str or None
        The backend a bounded first attempt ran before (None for the others).
    predicted_seconds : float or None
        The predicted time of that backend (:mod:`robustsvm.backends.cost`).
    """

    solver: str
    status: str
    iterations: int = 0
    rel_gap: float = float("nan")
    time: float = float("nan")
    time_limit: float | None = None
    instead_of: str | None = None
    predicted_seconds: float | None = None


class History:
    """Records one row per check of a solver's progress.

    ``record(iteration, objective, gap, **more)`` appends a row; the time
    column (seconds since the recorder was made, or since :meth:`restart`) is
    added automatically. :meth:`arrays` returns equal-length float arrays:
    ``iteration``, ``objective``, ``gap``, ``time`` and every extra column
    (NaN where a row did not give it).

    Parameters
    ----------
    verbose : bool or callable
        Print each row (or pass the formatted line to the callable).
    name : str
        Prefix of printed lines.
    every : int
        Print only every ``every``-th row.
    """

    def __init__(self, *, verbose: Any = False, name: str = "", every: int = 1) -> None:
        self.columns: dict[str, list] = {"iteration": [], "objective": [], "gap": [], "time": []}
        self.verbose = verbose
        self.name = name
        self.every = max(1, int(every))
        self.t0 = time.perf_counter()

    def restart(self) -> None:
        """Measure times from now on."""
        self.t0 = time.perf_counter()

    def __len__(self) -> int:
        return len(self.columns["iteration"])

    def record(self, iteration: int, objective: float, gap: float = float("nan"), **more: float) -> None:
        """Append one row."""
        rows = len(self)
        values = {"iteration": iteration, "objective": objective, "gap": gap,
                  "time": time.perf_counter() - self.t0, **more}
        for key, val in values.items():
            col = self.columns.get(key)
            if col is None:
                col = self.columns[key] = [np.nan] * rows
            col.append(val)
        for key, col in self.columns.items():
            if key not in values:
                col.append(np.nan)
        if self.verbose and rows % self.every == 0:
            line = f"{self.name} " + "  ".join(
                f"{k}={v:.10g}" if isinstance(v, float) else f"{k}={v}" for k, v in values.items() if k != "time"
            )
            (self.verbose if callable(self.verbose) else print)(line.strip())

    def last(self, key: str) -> float:
        return float(self.columns[key][-1])

    def arrays(self) -> dict[str, np.ndarray]:
        """The columns as float arrays (``iteration`` as integers)."""
        out = {k: np.asarray(v, dtype=np.float64) for k, v in self.columns.items()}
        out["iteration"] = out["iteration"].astype(np.int64)
        return out

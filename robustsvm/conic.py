"""Compile a normalized :class:`~robustsvm.model.Model` into a parametrized CVXPY problem.

The program is

    minimize   (λ2/2)‖w‖² + λ1 t1 + (μ/2) b² + Σ_i c_i ℓ(ξ_i)
    subject to ξ ≥ 0,  ξ ≥ 1 − (y ∘ (Xw + b) − r ∘ (S t)),  t1 ≥ ‖w‖₁,
               t_k ≥ σ_{V_k}(∓w)  (one epigraph variable per set and label),
               w_h ≥ 0 (h ∈ I+),  w_h ≤ 0 (h ∈ I−),

with ``ℓ(ξ) = ξ`` (hinge) or ``ξ²`` (squared hinge); the hard margin keeps
``y ∘ (Xw + b) − r ∘ (S t) ≥ 1`` and drops ξ. ``S`` is the constant 0/1 matrix
that hands each sample the epigraph variable of its set and label. λ1, λ2, μ,
the loss weights ``c`` and the radii ``r`` are ``cp.Parameter``s, so that a new
value re-uses the compiled problem (DPP). Every constraint is one vectorized
expression: nothing loops over samples.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from ._lazy import cvxpy as cp
from .model import Model

__all__ = ["STATUS", "ConicProgram", "ConicResult", "native_options"]

#: CVXPY statuses (the string values of ``cp.OPTIMAL``, ``cp.USER_LIMIT``, ...: written out so that importing
#: this module does not import CVXPY) in the package's words (``ConicResult.status``; the raw one is ``raw_status``)
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


@dataclass
class ConicResult:
    """Raw outcome of one conic solve."""

    w: np.ndarray | None
    b: float
    status: str
    gap: float
    iterations: int
    time_compile: float
    time_solve: float
    primal_objective: float
    dual_objective: float
    raw_status: str
    extra: dict = field(default_factory=dict)
    #: multipliers of the margin constraints ``ξ_i ≥ 1 − m_i`` (``m_i ≥ 1`` for a hard margin), in model units
    multipliers: np.ndarray | None = None
    #: the solver's own status string (``"MaxTime"``, ``"solved"``, ...), when it reports one
    solver_status: str = ""


class ConicProgram:
    """A model compiled once for fixed data; parameters change between solves.

    Parameters
    ----------
    model : Model
        The normalized model (:func:`robustsvm.model.normalize`).
    with_l1 : bool, optional
        Compile the L1 epigraph even when the model's λ1 is 0, so that a later
        :meth:`set_values` can make it positive (default: only when λ1 > 0).
    weights_as_parameter : bool, default False
        Make the per-sample loss coefficients ``c`` a ``cp.Parameter`` so that
        :meth:`set_values` can change the sample weights (for instance 0/1
        fold masks in cross-validation) without recompiling. Off by default:
        a length-n parameter makes CVXPY's canonicalization cost O(n²) memory
        (3 GiB at n = 20,000); prefer ``sample_groups`` for fold masks.
    sample_groups : array-like of int of shape (n,), optional
        Group label of each sample (for instance its cross-validation fold).
        Each group gets one scalar weight parameter, set with
        ``set_values(group_weight=...)``: sample ``i`` of group ``k`` then
        weighs ``s_i g_k``. Zeroing one group refits on the others without
        recompiling, at the cost of K scalar parameters only.
    radius_per_sample : bool, optional
        Make the radius an ``(n,)`` parameter (one value per sample) instead of
        a scalar one. Default: only when the model's radii differ between
        samples. A scalar radius parameter compiles several times faster.
    rescale : bool, default True
        Compile the model on ``κX``, ``κ`` the power of two nearest to
        ``1/max|X_ih|`` (1 when that entry is within a factor 16 of 1): the
        program's variable is ``w' = w/κ`` and its parameters are
        ``λ2' = λ2κ²``, ``λ1' = λ1κ``, ``r' = rκ`` (every support function is
        positively homogeneous), so the objective, the margins and the
        multipliers are those of the model while the solver works on entries of
        order one. :meth:`solve` maps ``w`` back and :meth:`set_values` takes
        model units; ``rescale=False`` writes the model in its own units (what
        :meth:`Problem.to_cvxpy` shows).

    Attributes
    ----------
    cvxpy_problem : cvxpy.Problem
        The compiled problem; its parameters are in :attr:`parameters`.
    parameters : dict of str to cvxpy.Parameter
        ``"l2"``, ``"l1"``, and when present ``"mu"`` (intercept ridge),
        ``"radius"`` (scalar, or ``(n,)`` with ``radius_per_sample``) and
        ``"weight"`` (with ``weights_as_parameter``: the loss coefficients c,
        as ``loss.conic_weight`` makes them: √c for the squared hinge).
    """

    def __init__(
        self,
        model: Model,
        *,
        with_l1: bool | None = None,
        weights_as_parameter: bool = False,
        radius_per_sample: bool | None = None,
        sample_groups: Any = None,
        rescale: bool = True,
    ) -> None:
        if model.kernel is not None:
            raise ValueError(
                "the conic compiler writes the primal in w and cannot use a kernel; "
                "kernel models are solved through their dual (see rs.solvers())"
            )
        self.model = model
        n, d = model.n, model.d
        X, y = model.X, model.y
        self.n, self.d = n, d
        self.kappa = _data_scale(X) if rescale else 1.0
        if self.kappa != 1.0:
            X = X * self.kappa

        w = cp.Variable(d, name="w")
        self.w = w
        intercept = model.intercept
        self.b = cp.Variable(name="b") if intercept.present else None

        k = self.kappa
        self.parameters: dict[str, cp.Parameter] = {
            "l2": cp.Parameter(nonneg=True, name="l2", value=model.l2 * k * k),
            "l1": cp.Parameter(nonneg=True, name="l1", value=model.l1 * k),
        }
        constraints: list[cp.Constraint] = []
        self.with_l1 = model.l1 > 0 if with_l1 is None else bool(with_l1)
        # the terms' own conic forms, with their strengths as parameters (DPP)
        objective = model.penalty.cvx(w, l2=self.parameters["l2"], l1=self.parameters["l1"] if self.with_l1 else 0.0)
        if intercept.mode == "ridge":
            self.parameters["mu"] = cp.Parameter(nonneg=True, name="mu", value=intercept.mu)
            objective = objective + intercept.cvx(self.b, mu=self.parameters["mu"])

        # sign constraints, one vectorized constraint per sign
        pos = np.flatnonzero(model.signs > 0)
        neg = np.flatnonzero(model.signs < 0)
        if pos.size:
            constraints.append(w[pos] >= 0)
        if neg.size:
            constraints.append(w[neg] <= 0)

        # nominal margins y ∘ (Xw + b)
        Xy = _scale_rows(X, y)
        margin = Xy @ w
        if self.b is not None:
            margin = margin + y * self.b
        # robust margins: subtract r_i σ_{V_i}(−y_i w), shared epigraph variables
        layout = model.layout
        self.layout = layout
        self.radius_per_sample = False
        if layout is not None:
            uniform = bool(np.all(layout.radius == layout.radius[0]))
            self.radius_per_sample = (not uniform) if radius_per_sample is None else bool(radius_per_sample)
            if not self.radius_per_sample and not uniform:
                raise ValueError("radius_per_sample=False needs the same radius for every sample")
            t_robust, S, cons = _support_epigraphs(layout, y, w)
            constraints.extend(cons)
            self.support_variables = t_robust
            if self.radius_per_sample:
                r = cp.Parameter(n, nonneg=True, name="radius", value=layout.radius * k)
                margin = margin - cp.multiply(r, S @ t_robust)
            else:
                r = cp.Parameter(nonneg=True, name="radius", value=float(layout.radius[0]) * k)
                margin = margin - r * (S @ t_robust)
            self.parameters["radius"] = r

        loss = model.loss
        coef = model.c
        self.weights_as_parameter = bool(weights_as_parameter)
        self.groups = None
        if sample_groups is not None:
            if self.weights_as_parameter:
                raise ValueError("pass either sample_groups or weights_as_parameter=True, not both")
            if loss.is_constraint:
                raise ValueError("sample_groups needs a loss: a hard-margin model has no loss terms to weight")
            self.groups = _check_groups(sample_groups, n)
        if loss.is_constraint:
            self.margin_constraint = margin >= 1
            constraints.append(self.margin_constraint)
            self.xi = None
        elif self.groups is not None:
            xi = cp.Variable(n, nonneg=True, name="xi")
            self.xi = xi
            self.margin_constraint = xi >= 1 - margin
            constraints.append(self.margin_constraint)
            labels, index = self.groups
            gw = cp.Parameter(len(labels), nonneg=True, name="group_weight")
            self.parameters["group_weight"] = gw
            sw = model.sample_weight
            for k in range(len(labels)):
                idx = np.flatnonzero(index == k)
                weight = loss.conic_weight(sw[idx])
                objective = objective + gw[k] * loss.cvx(xi[idx], weight)
            self.set_values(group_weight=np.ones(len(labels)))
        else:
            xi = cp.Variable(n, nonneg=True, name="xi")
            self.xi = xi
            self.margin_constraint = xi >= 1 - margin
            constraints.append(self.margin_constraint)
            weight = loss.conic_weight(coef)  # √c for the squared hinge (see Loss.conic_weight)
            if self.weights_as_parameter:
                weight = cp.Parameter(n, nonneg=True, name="weight", value=weight)
                self.parameters["weight"] = weight
            objective = objective + loss.cvx(xi, weight)

        self.cvxpy_problem = cp.Problem(cp.Minimize(objective), constraints)

    # -------------------------------------------------------------------------
    def set_values(
        self,
        *,
        l2: float | None = None,
        l1: float | None = None,
        mu: float | None = None,
        radius: Any = None,
        sample_weight: Any = None,
        group_weight: Any = None,
    ) -> None:
        """Change parameter values without recompiling.

        Parameters
        ----------
        l2, l1 : float, optional
            New penalty strengths. A positive ``l1`` needs a model compiled
            with an L1 term (``Problem(..., penalty=... + L1(>0))``).
        mu : float, optional
            New intercept ridge strength (only for ``intercept=rs.L2(mu)``).
        radius : float or array of shape (n,), optional
            New radii of the uncertainty sets.
        sample_weight : array of shape (n,), optional
            New per-sample weights; the loss coefficients are recomputed with
            the model's reduction (needs ``weights_as_parameter=True``).
        group_weight : array of shape (K,), optional
            Multipliers ``g_k ≥ 0`` of the sample groups (needs
            ``sample_groups``): ``c_i = s_i g_k / Σ_j s_j g_{k(j)}`` for
            ``reduction="mean"``, ``s_i g_k`` for ``"sum"``.
        """
        p = self.parameters
        k = self.kappa
        if l2 is not None:
            p["l2"].value = _nonneg(l2, "l2") * k * k
        if l1 is not None:
            value = _nonneg(l1, "l1")
            if value > 0 and not self.with_l1:
                raise ValueError("l1 > 0 needs a program compiled with with_l1=True or an L1 penalty")
            p["l1"].value = value * k
        if mu is not None:
            if "mu" not in p:
                raise ValueError("mu applies only to a model with intercept=rs.L2(mu)")
            p["mu"].value = _nonneg(mu, "mu")
        if l2 is not None or l1 is not None or mu is not None:
            self.model = self.model.with_values(l2=l2, l1=l1, mu=mu)
        if radius is not None:
            if "radius" not in p:
                raise ValueError("radius applies only to a model with uncertainty")
            model = self.model.with_values(radius=radius)  # the one validation of a radius
            r = model.layout.radius
            if self.radius_per_sample:
                p["radius"].value = k * r
            elif np.ndim(radius) == 0:
                p["radius"].value = float(r[0]) * k
            else:
                raise ValueError("a radius per sample needs a program compiled with radius_per_sample=True")
            self.model = model  # the radius the program solves with is the one its model (and certificate) sees
        if sample_weight is not None:
            if not self.weights_as_parameter:
                raise ValueError("sample_weight can change only in a program compiled with weights_as_parameter=True")
            loss = self.model.loss
            if loss.is_constraint:
                raise ValueError("a hard-margin model has no loss terms to weight")
            self.model = self.model.with_values(sample_weight=sample_weight)
            coef = self.model.c
            p["weight"].value = loss.conic_weight(coef)
        if group_weight is not None:
            if self.groups is None:
                raise ValueError("group_weight needs a program compiled with sample_groups=")
            labels, index = self.groups
            g = np.asarray(group_weight, dtype=np.float64)
            if g.shape != (len(labels),):
                raise ValueError(f"group_weight must have shape ({len(labels)},), one value per group, got {g.shape}")
            if not np.all(np.isfinite(g)) or np.any(g < 0):
                raise ValueError("group_weight must be finite and non-negative")
            total = float(self.model.sample_weight @ g[index])
            if total <= 0:
                raise ValueError("group_weight leaves no sample with a positive weight")
            p["group_weight"].value = g / total if self.model.loss.reduction == "mean" else g

    def solve(
        self,
        solver: str = "CLARABEL",
        *,
        tol: float | None = None,
        max_iter: int | None = None,
        verbose: bool = False,
        warm_start: bool = False,
        solver_options: dict | None = None,
    ) -> ConicResult:
        """Solve with a CVXPY solver; re-uses the compiled problem when possible."""
        opts = native_options(solver, tol, max_iter)
        opts.update(solver_options or {})
        prob = self.cvxpy_problem
        t0 = time.perf_counter()
        data, chain, inverse = prob.get_problem_data(solver, enforce_dpp=True, solver_opts=opts)
        t1 = time.perf_counter()
        raw = chain.solve_via_data(prob, data, warm_start, verbose, opts)
        t2 = time.perf_counter()
        prob.unpack_results(raw, chain, inverse)
        pobj, dobj, gap = _raw_objectives(solver, raw)
        stats = prob.solver_stats
        w = None if self.w.value is None else self.kappa * np.asarray(self.w.value, dtype=np.float64)
        b = 0.0
        if self.b is not None and self.b.value is not None:
            b = float(self.b.value)
        multipliers = None
        dual = self.margin_constraint.dual_value
        if dual is not None:
            multipliers = np.asarray(dual, dtype=np.float64).ravel().copy()
            if multipliers.shape != (self.n,):
                multipliers = None
        solver_status = _solver_status(raw)
        status = STATUS.get(prob.status, str(prob.status))
        if prob.status == cp.USER_LIMIT and "time" in solver_status.lower():
            status = "time_limit"  # a time limit reached is not an iteration limit
        return ConicResult(
            w=w,
            b=b,
            status=status,
            gap=gap,
            iterations=int(stats.num_iters or 0),
            time_compile=t1 - t0,
            time_solve=t2 - t1,
            primal_objective=pobj,
            dual_objective=dobj,
            raw_status=str(prob.status),
            multipliers=multipliers,
            solver_status=solver_status,
        )

    def size(self) -> dict:
        """Sizes of the compiled problem: variables, constraints and cone dimensions."""
        stats = self.cvxpy_problem.size_metrics
        cone_counts: dict[str, int] = {}
        for c in self.cvxpy_problem.constraints:
            cone_counts[type(c).__name__] = cone_counts.get(type(c).__name__, 0) + 1
        return {
            "variables": int(stats.num_scalar_variables),
            "equality_rows": int(stats.num_scalar_eq_constr),
            "inequality_rows": int(stats.num_scalar_leq_constr),
            "constraints_by_type": cone_counts,
        }


# -----------------------------------------------------------------------------
#: data whose largest entry lies in [1/RESCALE_RANGE, RESCALE_RANGE] are compiled as they are
RESCALE_RANGE = 16.0


def _data_scale(X) -> float:
    """The power of two nearest to ``1/max|X_ih|``; 1 when that entry is already within a factor 16 of 1.

    A power of two makes the scaling exact in floating point.
    """
    data = X.data if sp.issparse(X) else np.asarray(X)
    top = float(np.max(np.abs(data))) if data.size else 0.0
    if not np.isfinite(top) or top <= 0.0 or 1.0 / RESCALE_RANGE <= top <= RESCALE_RANGE:
        return 1.0
    return float(2.0 ** -np.round(np.log2(top)))


def _solver_status(raw: Any) -> str:
    """The solver's own status string from its raw output ('' when unknown)."""
    for getter in (lambda r: r.status, lambda r: r["info"]["status"], lambda r: r["model_status"],
                   lambda r: r["status"]):
        try:
            return str(getter(raw))
        except (AttributeError, KeyError, TypeError, IndexError):
            continue
    return ""


def _scale_rows(X, y: np.ndarray):
    """``diag(y) X`` without densifying a sparse X."""
    if sp.issparse(X):
        return sp.diags(y) @ X
    return X * y[:, None]


def _support_epigraphs(layout, y: np.ndarray, w: cp.Variable):
    """Epigraph variables ``t ≥ σ_V(∓w)`` per distinct set, and the sample-selection matrix.

    Returns
    -------
    t : cvxpy.Variable of shape (K,)
    S : scipy.sparse matrix of shape (n, K)
        ``(S t)_i`` is the variable of sample ``i``'s set and label.
    constraints : list
    """
    n = y.shape[0]
    columns: list[tuple[int, int]] = []  # (set index, direction sign: +1 means z = −w)
    col_of_sample = np.empty(n, dtype=np.intp)
    for k, s in enumerate(layout.sets):
        mask = layout.group == k
        if s.symmetric:
            col_of_sample[mask] = len(columns)
            columns.append((k, 0))
            continue
        for label, direction in ((1.0, 1), (-1.0, -1)):
            sel = mask & (y == label)
            if sel.any():
                col_of_sample[sel] = len(columns)
                columns.append((k, direction))
    K = len(columns)
    t = cp.Variable(K, name="t_support")
    S = sp.csr_matrix((np.ones(n), (np.arange(n), col_of_sample)), shape=(n, K))
    constraints: list[cp.Constraint] = []
    # batch the support expressions by set class
    by_class: dict[type, list[int]] = {}
    for j, (k, _) in enumerate(columns):
        by_class.setdefault(type(layout.sets[k]), []).append(j)
    for cls, cols in by_class.items():
        sets = [layout.sets[columns[j][0]] for j in cols]
        zs = [w if columns[j][1] == -1 else -w for j in cols]
        exprs, cons = cls.support_cvx_many(sets, zs)
        constraints.extend(cons)
        if isinstance(exprs, cp.Expression):  # one batched expression of shape (len(cols),)
            constraints.append(exprs <= t[np.asarray(cols)])
            continue
        for j, e in zip(cols, exprs, strict=True):
            constraints.append(e <= t[j])
    return t, S, constraints


def _check_groups(groups: Any, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Distinct group labels and each sample's group index."""
    g = np.asarray(groups)
    if g.shape != (n,):
        raise ValueError(f"sample_groups must have shape ({n},), one label per sample, got {g.shape}")
    labels, index = np.unique(g, return_inverse=True)
    return labels, index


def _nonneg(value: float, name: str) -> float:
    v = float(value)
    if not np.isfinite(v) or v < 0:
        raise ValueError(f"{name} must be finite and non-negative, got {value!r}")
    return v


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


def _raw_objectives(solver: str, raw: Any) -> tuple[float, float, float]:
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

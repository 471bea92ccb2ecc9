"""The compiled program: a normalized :class:`~robustsvm.model.Model` as a parametrized CVXPY problem.

The program is

    minimize   (λ2/2)‖w‖² + λ1 t1 + (μ/2) b² + Σ_i c_i ℓ(ξ_i)
    subject to ξ ≥ 0,  ξ ≥ 1 − (y ∘ (Xw + b) − r ∘ (S t)),  t1 ≥ ‖w‖₁,
               t_k ≥ σ_{V_k}(∓w)  (one epigraph variable per set and label),
               w_h ≥ 0 (h ∈ I+),  w_h ≤ 0 (h ∈ I−),  l ≤ w ≤ u,  lb ≤ A w ≤ ub,

with ``ℓ(ξ) = ξ`` (hinge) or ``ξ²`` (squared hinge); a loss given on the margin
(``Loss.conic_argument = "margin"``, the logistic) takes ``Σ_i c_i ℓ(u_i)``, ``u ≤ m^rob``
instead of the slacks; the hard margin keeps
``y ∘ (Xw + b) − r ∘ (S t) ≥ 1`` and drops ξ. ``S`` is the constant 0/1 matrix
that hands each sample the epigraph variable of its set and label. λ1, λ2, μ,
the loss weights ``c`` and the radii ``r`` are ``cp.Parameter``s, so that a new
value re-uses the compiled problem (DPP); bounds and linear constraints are constant data
(finite sides only, signs included in the bounds). Every constraint is one vectorized
expression: nothing loops over samples.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._lazy import cvxpy as cp
from ..model import Model, weight_reach
from ..result import Result
from . import solvers
from .scaling import RESCALE_RANGE, SCALED_PARAMETER_LIMIT, data_scale, scale_rows, scaled
from .solvers import CLARABEL_RETRIES, RETRIED, STATUS, native_options, raw_objectives, solver_output

__all__ = ["ConicProgram", "RESCALE_RANGE", "SCALED_PARAMETER_LIMIT"]


def _said(res: Result | None, otherwise: str) -> str:
    """The solver's own status of an earlier attempt (``otherwise`` when it raised)."""
    return res.extra["solver_status"] if res is not None else otherwise


def _note(solver: str, res: Result, text: str) -> None:
    """Append ``text`` to the solver status ``res`` reports (its ``extra["solver_status"]`` and ``message``)."""
    status = f"{res.extra['solver_status']} ({text})"
    res.extra["solver_status"] = status
    res.message = res.message.split(f", {solver} status ")[0] + f", {solver} status {status}"


class ConicProgram:
    """A model compiled once for fixed data; parameters change between solves.

    Parameters
    ----------
    model : Model
        The normalized model (:func:`robustsvm.model.normalize`).
    with_l1 : bool, optional
        Compile the L1 epigraph even when the model's λ1 is 0, so that a later
        :meth:`set_values` can make it positive (default: only when λ1 > 0).
    with_l2 : bool, default True
        Compile the quadratic term ``(λ2/2)‖w‖²`` with λ2 a parameter, so that
        :meth:`set_values` can change it. ``False`` (only for λ2 = 0) leaves it
        out: a hinge model with polyhedral sets and no L2 term is then a linear
        program, which LP solvers take as one.
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
    loss_as_cone : bool, default False
        Write the loss terms as epigraph constraints ``loss ≤ s`` with ``s`` in
        the objective, so that a quadratic loss (the squared hinge) reaches the
        solver as a second-order cone rather than as a quadratic objective. The
        minimizers are the same; Clarabel's numerics differ, and :meth:`solve`
        falls back on this form when the quadratic one fails.

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
        with_l2: bool = True,
        weights_as_parameter: bool = False,
        radius_per_sample: bool | None = None,
        sample_groups: Any = None,
        rescale: bool = True,
        loss_as_cone: bool = False,
    ) -> None:
        self._options = {"with_l1": with_l1, "with_l2": with_l2, "weights_as_parameter": weights_as_parameter,
                         "radius_per_sample": radius_per_sample, "sample_groups": sample_groups, "rescale": rescale}
        self.loss_as_cone = bool(loss_as_cone)
        if model.kernel is not None:
            raise ValueError(
                "the conic compiler writes the primal in w and cannot use a kernel; "
                "kernel models are solved through their dual (see rs.solvers())"
            )
        self.model = model
        n, d = model.n, model.d
        X, y = model.X, model.y
        self.n, self.d = n, d
        self.kappa = data_scale(X, model) if rescale else 1.0
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
        self.with_l2 = bool(with_l2)
        if not self.with_l2 and model.l2 > 0:
            raise ValueError(f"with_l2=False leaves out the L2 term, but the model has l2 = {model.l2:g}")
        # the terms' own conic forms, with their strengths as parameters (DPP)
        objective = model.penalty.cvx(w, l2=self.parameters["l2"] if self.with_l2 else 0.0,
                                      l1=self.parameters["l1"] if self.with_l1 else 0.0)
        if intercept.mode == "ridge":
            self.parameters["mu"] = cp.Parameter(nonneg=True, name="mu", value=intercept.mu)
            objective = objective + intercept.cvx(self.b, mu=self.parameters["mu"])

        # signs and bounds (one box; w is in units of 1/κ; sides no minimizer can reach left out, unless sample
        # groups may reweigh the loss), then the linear constraints
        reach = np.inf if sample_groups is not None else 2.0 * weight_reach(model)
        box, self.bounds_dropped_beyond = model.feasible_set.within(reach)
        constraints.extend(box.cvx_box(w, k))
        linear = model.feasible_set.linear
        self.linear_rows = [] if linear is None else linear.cvx_rows(w, k)
        constraints.extend(con for _, con in self.linear_rows)

        # nominal margins y ∘ (Xw + b)
        Xy = scale_rows(X, y)
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
        self.distribution_duals = None
        dist = model.distribution
        if dist is not None:  # the set's own epigraph of the worst expected loss
            if dist.weights_as_constants and (self.groups is not None or self.weights_as_parameter):
                raise ValueError(f"a {type(dist).__name__} model compiles its sample weights as constants")
            term, self.distribution_duals = dist.cvx_terms(loss, margin, coef, w, k, constraints)
            objective, self.margin_constraint, self.xi = objective + term, None, None
        elif loss.is_constraint:
            self.margin_constraint = margin >= 1
            constraints.append(self.margin_constraint)
            self.xi = None
        elif self.groups is not None:
            xi = self._loss_argument(loss, margin, constraints)
            labels, index = self.groups
            gw = cp.Parameter(len(labels), nonneg=True, name="group_weight")
            self.parameters["group_weight"] = gw
            sw = model.sample_weight
            for k in range(len(labels)):
                idx = np.flatnonzero(index == k)
                weight = loss.conic_weight(sw[idx])
                objective = objective + gw[k] * self._loss_term(loss.cvx(xi[idx], weight), constraints)
            self.set_values(group_weight=np.ones(len(labels)))
        else:
            xi = self._loss_argument(loss, margin, constraints)
            weight = loss.conic_weight(coef)  # √c for the squared hinge (see Loss.conic_weight)
            if self.weights_as_parameter:
                weight = cp.Parameter(n, nonneg=True, name="weight", value=weight)
                self.parameters["weight"] = weight
            objective = objective + self._loss_term(loss.cvx(xi, weight), constraints)

        self.cvxpy_problem = cp.Problem(cp.Minimize(objective), constraints)

    def _loss_argument(self, loss, margin, constraints: list) -> cp.Variable:
        """The variable the loss is written in (``Loss.conic_argument``), its margin constraint appended.

        Slacks ``ξ ≥ 0, ξ ≥ 1 − m`` for the hinge-type losses; ``u ≤ m`` for a loss given on the margin.
        Either constraint's dual is the margin multiplier ``c_i α_i``.
        """
        if loss.conic_argument == "margin":
            self.xi = cp.Variable(self.n, name="u_margin")
            self.margin_constraint = self.xi <= margin
        else:
            self.xi = cp.Variable(self.n, nonneg=True, name="xi")
            self.margin_constraint = self.xi >= 1 - margin
        constraints.append(self.margin_constraint)
        return self.xi

    def _loss_term(self, expr: cp.Expression, constraints: list) -> cp.Expression:
        """``expr`` itself, or with ``loss_as_cone`` an epigraph variable ``s ≥ expr`` (the constraint appended)."""
        if not self.loss_as_cone:
            return expr
        s = cp.Variable(name="loss_epigraph")
        constraints.append(expr <= s)
        return s

    def cone_form(self) -> ConicProgram:
        """This program with the loss as a cone (``loss_as_cone=True``) and the same parameter values."""
        other = ConicProgram(self.model, **self._options, loss_as_cone=True)
        for name, p in self.parameters.items():
            other.parameters[name].value = p.value
        return other

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
            value = _nonneg(l2, "l2")
            if value > 0 and not self.with_l2:
                raise ValueError("l2 > 0 needs a program compiled with with_l2=True")
            p["l2"].value = scaled(value * k * k, "l2", k)
        if l1 is not None:
            value = _nonneg(l1, "l1")
            if value > 0 and not self.with_l1:
                raise ValueError("l1 > 0 needs a program compiled with with_l1=True or an L1 penalty")
            p["l1"].value = scaled(value * k, "l1", k)
        if mu is not None:
            if "mu" not in p:
                raise ValueError("mu applies only to a model with intercept=rs.L2(mu)")
            p["mu"].value = _nonneg(mu, "mu")
        if l2 is not None or l1 is not None or mu is not None:
            self.model = self.model.with_values(l2=l2, l1=l1, mu=mu)
        if radius is not None:
            model = self.model.with_values(radius=radius)  # the one validation of a radius (and of its presence)
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
        if np.isfinite(self.bounds_dropped_beyond) and 2.0 * weight_reach(self.model) >= self.bounds_dropped_beyond:
            # a side left out at compile time could now bind: compile with it
            other = ConicProgram(self.model, **self._options, loss_as_cone=self.loss_as_cone)
            for name, param in self.parameters.items():
                other.parameters[name].value = param.value
            self.__dict__.update(other.__dict__)

    def solve(
        self,
        solver: str = "CLARABEL",
        *,
        tol: float | None = None,
        max_iter: int | None = None,
        verbose: bool = False,
        warm_start: bool = False,
        solver_options: dict | None = None,
    ) -> Result:
        """Solve with a CVXPY solver; re-uses the compiled problem when possible.

        A Clarabel solve that ends ``AlmostSolved`` or fails numerically is
        retried with the settings of :data:`CLARABEL_RETRIES` the caller did not
        set (tighter iterative refinement, shorter steps, less regularization);
        the first that solves is returned, else the first attempt's outcome.
        A model with a quadratic loss that still does not solve is solved once
        more in its cone form (:meth:`cone_form`).

        Returns
        -------
        Result
            The solver's point and its own report: ``primal_value`` and ``dual_value`` (the
            objectives it reports, ``dual_feasible=False``), ``gap`` (their difference), the margin
            and constraint ``multipliers`` in model units, and ``extra["solver_status"]``: the
            solver's own status string, saying when a retry was needed (``extra["retry_settings"]``,
            ``extra["loss_as_cone"]``). ``message`` gives CVXPY's and the solver's statuses.
        """
        opts = native_options(solver, tol, max_iter)
        opts.update(solver_options or {})
        attempts = [opts]
        if solver.upper() == "CLARABEL":
            attempts += [{**opts, **extra} for extra in CLARABEL_RETRIES if not set(extra) & set(opts)]
        first: Result | None = None
        failure: cp.error.SolverError | None = None
        spent = 0.0
        for k, attempt in enumerate(attempts):
            try:
                res = self._solve_once(solver, attempt, verbose, warm_start and k == 0)
            except cp.error.SolverError as exc:
                failure = failure or exc
                continue
            spent += res.time_solve
            if res.status == "optimal" or res.status not in RETRIED:
                if k > 0:
                    res.time_solve = spent
                    _note(solver, res, f"after {k} retr{'y' if k == 1 else 'ies'} with adjusted settings "
                                       f"{sorted(set(attempt) - set(opts))}; the first attempt ended "
                                       f"{_said(first, 'in a solver error')}")
                    res.extra["retry_settings"] = {key: attempt[key] for key in set(attempt) - set(opts)}
                return res
            first = first or res
        if solver.upper() == "CLARABEL" and not self.loss_as_cone and not self.cvxpy_problem.objective.expr.is_affine():
            try:
                res = self.cone_form()._solve_once(solver, opts, verbose, False)
            except cp.error.SolverError as exc:
                failure = failure or exc
            else:
                if res.status == "optimal" or first is None:
                    res.time_solve += spent
                    _note(solver, res, f"the loss written as a cone after {len(attempts)} attempts with a "
                                       f"quadratic objective ended {_said(first, 'in solver errors')}")
                    res.extra["loss_as_cone"] = True
                    return res
        if first is None:
            raise failure
        first.time_solve = spent
        return first

    def _solve_once(self, solver: str, opts: dict, verbose: bool, warm_start: bool) -> Result:
        prob = self.cvxpy_problem
        t0 = time.perf_counter()
        try:
            data, chain, inverse = prob.get_problem_data(solver, enforce_dpp=True, solver_opts=opts)
        except ValueError as exc:
            if "NaN or Inf" not in str(exc):
                raise
            values = {name: p.value for name, p in self.parameters.items()}
            raise ValueError(f"the compiled program holds a non-finite number (parameters in program units, "
                             f"data scale κ = {self.kappa:g}: {values}); the model's data or parameters are "
                             "too large or too small for float64 once combined") from exc
        t1 = time.perf_counter()
        with solver_output(verbose):
            raw = chain.solve_via_data(prob, data, warm_start, verbose, opts)
        t2 = time.perf_counter()
        prob.unpack_results(raw, chain, inverse)
        pobj, dobj, gap = raw_objectives(solver, raw)
        stats = prob.solver_stats
        w = None if self.w.value is None else self.kappa * np.asarray(self.w.value, dtype=np.float64)
        b = 0.0
        if self.b is not None and self.b.value is not None:
            b = float(self.b.value)
        multipliers = None
        dual = None if self.margin_constraint is None else self.margin_constraint.dual_value
        if self.distribution_duals is not None:
            multipliers = _stacked_duals(self.distribution_duals, self.n)
        elif dual is not None:
            multipliers = np.asarray(dual, dtype=np.float64).ravel().copy()
            if multipliers.shape != (self.n,):
                multipliers = None
        solver_status = solvers.solver_status(raw)
        nu = self.model.feasible_set.linear.multipliers(self.linear_rows) if self.linear_rows else None
        status = STATUS.get(prob.status, str(prob.status))
        if prob.status == cp.USER_LIMIT and "time" in solver_status.lower():
            status = "time_limit"  # a time limit reached is not an iteration limit
        return Result(
            w=w,
            b=b,
            status=status,
            gap=gap,
            iterations=int(stats.num_iters or 0),
            time_compile=t1 - t0,
            time_solve=t2 - t1,
            primal_value=pobj,
            dual_value=dobj,
            dual_feasible=False,  # the solver's report, not a bound the package checked
            multipliers=multipliers,
            constraint_multipliers=nu,
            message=f"CVXPY status {prob.status}" + (f", {solver} status {solver_status}" if solver_status else ""),
            extra={"solver_status": solver_status},
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


def _stacked_duals(constraints: tuple, n: int) -> np.ndarray | None:
    """The rows of multipliers a set of distributions reads (an array: a row known in advance), stacked."""
    rows = [con if isinstance(con, np.ndarray) else con.dual_value for con in constraints]
    if any(r is None for r in rows):
        return None
    return np.vstack([np.asarray(r, dtype=np.float64).ravel() for r in rows])


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



"""The backend registry: every solver under a name, with what it needs.

A backend is a function ``solve(model, **options) -> Result`` (``model`` the
normalized :class:`~robustsvm.model.Model`) and a declaration of what it can
solve, :class:`Needs`: the losses, penalties, intercept modes, uncertainty sets
and kernels it handles, as skglm solvers list the datafit and penalty
attributes they require. The reasons a backend refuses a model — in
:func:`require`, :func:`solvers` and ``Backend.check`` — are derived from that
declaration. :meth:`Problem.solve` looks the backend up, refuses a model it
cannot solve with an error naming those that can, and turns the result into a
:class:`~robustsvm.solution.Solution`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .._validation import check_limits
from ..exceptions import UnsupportedModelError
from ..model import summarize
from ..result import History, Result
from ..terms.losses import LOSSES
from ..uncertainty import UncertaintySet

__all__ = ["Backend", "History", "Needs", "Result", "register", "unregister", "get_backend", "solvers",
           "capable_backends", "accepted_options", "check_options", "with_defaults"]

#: options every backend accepts (each may ignore those that do not apply)
COMMON_OPTIONS = frozenset({"tol", "max_iter", "verbose", "random_state"})
#: the options whose defaults a backend declares on its registration (``Backend.defaults``)
DEFAULTED_OPTIONS = frozenset({"tol", "max_iter", "time_limit"})

_ALL_INTERCEPTS = frozenset({"free", "none", "ridge"})


@dataclass(frozen=True)
class Needs:
    """What a backend can solve, for one kind of model (linear primal or kernel).

    Attributes
    ----------
    losses : frozenset of str or None
        Short loss names (``"hinge"``, ``"squared_hinge"``, ``"hard_margin"``);
        None accepts every loss (a conic solver takes any loss with a conic form).
    reductions : frozenset of str
        ``"mean"`` and/or ``"sum"``.
    l2 : {"optional", "required"}
        Whether a positive λ2 is needed.
    l1 : bool
        Whether an L1 term is allowed.
    intercepts : frozenset of str
        Intercept modes handled: ``"free"``, ``"none"``, ``"ridge"``.
    signs : bool
        Whether sign constraints are allowed.
    bounds : bool
        Whether bounds ``l_h ≤ w_h ≤ u_h`` beyond signs are allowed.
    constraints : bool
        Whether linear constraints ``lb ≤ A w ≤ ub`` on the weights are allowed.
    sets : tuple of UncertaintySet subclasses, or "any"
        Set types allowed; the empty tuple means no uncertainty.
    per_sample_sets : bool
        Whether different sets per sample are allowed (a radius per sample always is).
    why : dict of str to str
        Optional explanations appended to a refusal, keyed by the requirement
        (``"l1"``, ``"l2"``, ``"intercept"``, ``"signs"``, ``"bounds"``, ``"constraints"``, ``"sets"``,
        ``"loss"``).
    extra : callable, optional
        ``extra(problem) -> list[str]``: requirements no field can state (a model's
        exact form, set parameters); keep it short.
    """

    losses: frozenset | None = None
    reductions: frozenset = frozenset({"mean", "sum"})
    l2: str = "optional"
    l1: bool = True
    intercepts: frozenset = _ALL_INTERCEPTS
    signs: bool = True
    bounds: bool = False
    constraints: bool = False
    sets: Any = ()
    per_sample_sets: bool = False
    why: dict = field(default_factory=dict)
    extra: Callable[[Any], list[str]] | None = None

    def reasons(self, problem, *, what: str) -> list[str]:
        """Why ``problem`` is outside this declaration (empty when it is inside).

        ``problem`` is a :class:`~robustsvm.model.ModelSummary` (:meth:`Backend.check` makes it)."""
        out: list[str] = []

        def add(key: str, text: str) -> None:
            hint = self.why.get(key)
            out.append(f"{text}: {hint}" if hint else text)

        loss = problem.loss
        if self.losses is not None and loss.name not in self.losses:
            short = sorted(self.losses)
            classes = ", ".join(f"rs.{LOSSES[k].__name__}" for k in short if k in LOSSES)
            add("loss", f"{what} solves the {' and '.join(short)} loss{'es' if len(short) > 1 else ''} only "
                        f"({classes}), not {type(loss).__name__}")
        elif loss.reduction not in self.reductions:
            add("loss", f"{what} needs reduction={' or '.join(repr(r) for r in sorted(self.reductions))}")
        pen = problem.penalty
        if pen.l1 > 0 and not self.l1:
            add("l1", f"{what} has no L1 penalty")
        if self.l2 == "required" and pen.l2 <= 0:
            add("l2", f"{what} needs an L2 penalty with positive strength (rs.L2(lam))")
        mode = problem.intercept_term.mode
        if mode not in self.intercepts:
            names = {"free": "a free intercept", "none": "no intercept (intercept=False)",
                     "ridge": "a ridge intercept (intercept=rs.L2(mu))"}
            add("intercept", f"{what} does not handle {names[mode]}; it handles "
                             + ", ".join(names[m] for m in sorted(self.intercepts)))
        if problem.has_signs and not self.signs:
            add("signs", f"{what} has no sign constraints")
        if problem.has_bounds and not self.bounds:
            add("bounds", f"{what} takes no bounds on the weights beyond signs")
        if problem.has_constraints and not self.constraints:
            add("constraints", f"{what} takes no linear constraints on the weights")
        unc = problem.uncertainty
        if unc is not None:
            sets = list(unc) if isinstance(unc, (list, tuple)) else [unc]
            if not self.sets:
                add("sets", f"{what} has no uncertainty sets")
            else:
                if isinstance(unc, (list, tuple)) and not self.per_sample_sets:
                    keys = {s.key() for s in sets if isinstance(s, UncertaintySet)}
                    if len(keys) > 1:
                        add("sets", f"{what} needs one set shared by all samples (a radius per sample is fine)")
                if self.sets != "any":
                    bad = sorted({type(s).__name__ for s in sets if not isinstance(s, self.sets)})
                    if bad:
                        allowed = ", ".join(t.__name__ for t in self.sets)
                        add("sets", f"{what} handles {allowed} uncertainty, not {', '.join(bad)}")
        if self.extra is not None and not out:
            out.extend(self.extra(problem))
        return out


@dataclass(frozen=True)
class Backend:
    """A registered solver.

    Attributes
    ----------
    name : str
        The name passed as ``solver=``.
    solve : callable
        ``solve(model, **options) -> Result``.
    needs : Needs or None
        What it solves among linear primal models (None: none).
    kernel_needs : Needs or None
        What it solves among kernel models (None: none).
    summary : str
        One line: the algorithm and the models it solves.
    options : frozenset of str
        Options accepted beyond ``tol``, ``max_iter``, ``verbose``, ``random_state``.
    kind : str
        ``"conic"``, ``"first-order"`` or ``"second-order"``.
    certificate : str
        What ``Solution.gap`` holds for this backend.
    solve_many : callable, optional
        ``solve_many(model, values, **options) -> list[Result]``: the model at many values of ``l2``, ``l1``
        and ``radius`` in one call (a grid search uses it when the grid varies only those).
    defaults : dict
        The values of ``tol``, ``max_iter`` and ``time_limit`` the backend uses when the caller gives none,
        declared once here: :mod:`robustsvm.solve_path` passes them to ``solve`` and ``solve_many``
        (a key left out: the backend has no such limit, or the solver's own default applies).
    mode_defaults : dict of str to dict
        Defaults of a mode the backend runs in when one of its options is given a true value, replacing
        those of ``defaults`` key by key (``{"paper": {"tol": 1e-4, "max_iter": 1000}}``: pq's
        ``paper=True`` runs the paper's algorithm with the paper's limits).
    """

    name: str
    solve: Callable[..., Result]
    needs: Needs | None
    summary: str
    kernel_needs: Needs | None = None
    options: frozenset = frozenset()
    kind: str = "first-order"
    certificate: str = "duality gap"
    solve_many: Callable[..., list[Result]] | None = None
    defaults: dict = field(default_factory=dict)
    mode_defaults: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        for where, declared in [("defaults", self.defaults),
                                *((f"mode_defaults[{k!r}]", v) for k, v in self.mode_defaults.items())]:
            unknown = set(declared) - DEFAULTED_OPTIONS
            if unknown:
                raise ValueError(f"Backend.{where} declares tol, max_iter and time_limit only, got {sorted(unknown)}")
            if "time_limit" in declared and "time_limit" not in self.options:
                raise ValueError("a backend with a default time_limit must accept the time_limit option")
        modes = set(self.mode_defaults) - self.options
        if modes:
            raise ValueError(f"Backend.mode_defaults names options the backend does not accept: {sorted(modes)}")

    def defaults_for(self, options: Mapping[str, Any]) -> dict:
        """The declared defaults that apply to a solve with ``options``: ``defaults``, replaced by those of
        every mode of ``mode_defaults`` whose option ``options`` sets to a true value."""
        out = dict(self.defaults)
        for option, declared in self.mode_defaults.items():
            if options.get(option):
                out.update(declared)
        return out

    def check(self, problem) -> list[str]:
        """Why this backend cannot solve ``problem`` (empty when it can), from its declarations.

        ``problem`` is a :class:`~robustsvm.problem.Problem`, a :class:`~robustsvm.model.Model` or their
        :class:`~robustsvm.model.ModelSummary`; the declarations read the summary (no data needed)."""
        problem = summarize(problem)
        if problem.kernel is not None:
            if self.kernel_needs is None:
                return [f"{self.name} solves linear models only, not kernels"]
            return self.kernel_needs.reasons(problem, what=f"{self.name} (kernel model)")
        if self.needs is None:
            return [f"{self.name} solves kernel models only"]
        return self.needs.reasons(problem, what=self.name)

    def accepts(self, problem) -> bool:
        return not self.check(problem)


_REGISTRY: dict[str, Backend] = {}


def register(backend: Backend, *, replace: bool = False) -> Backend:
    """Add ``backend`` to the registry under ``backend.name``."""
    key = backend.name.lower()
    if key in _REGISTRY and not replace:
        raise ValueError(f"a backend named {backend.name!r} is already registered")
    _REGISTRY[key] = backend
    return backend


def unregister(name: str) -> Backend:
    """Remove the backend registered under ``name`` and return it."""
    try:
        return _REGISTRY.pop(name.lower())
    except KeyError:
        raise ValueError(f"no backend named {name!r} is registered") from None


def get_backend(name: str) -> Backend:
    """Look a backend up by name (case-insensitive)."""
    if not isinstance(name, str):
        raise TypeError(f"solver must be a backend name, got {type(name).__name__}")
    try:
        return _REGISTRY[name.lower()]
    except KeyError:
        raise ValueError(f"unknown solver {name!r}; registered backends: {', '.join(sorted(_REGISTRY))}") from None


def capable_backends(problem) -> list[str]:
    """Names of the registered backends that can solve ``problem``."""
    return [name for name, b in _REGISTRY.items() if b.accepts(problem)]


def require(backend: Backend, problem) -> None:
    """Raise :class:`UnsupportedModelError` when ``backend`` cannot solve ``problem``."""
    reasons = backend.check(problem)
    if reasons:
        able = capable_backends(problem)
        raise UnsupportedModelError(
            f"backend {backend.name!r} cannot solve this model ({'; '.join(reasons)}); "
            f"backends that can: {', '.join(able) if able else 'none registered'}"
        )


class SolverTable(list):
    """The rows of :func:`solvers`, printed as a table.

    Without a model: name, kind and what each backend solves. For a model
    (rows with ``accepts``): name, kind, ``yes``/``no`` and, for a backend
    that does not accept it, why not.
    """

    def __repr__(self) -> str:
        if not self:
            return "(no backends)"
        width = max(len(r["name"]) for r in self)
        kind_w = max(len(r["kind"]) for r in self)
        if all("accepts" in r for r in self):
            lines = [f"{'name':<{width}}  {'kind':<{kind_w}}  accepts  why not"]
            lines += [f"{r['name']:<{width}}  {r['kind']:<{kind_w}}  {'yes' if r['accepts'] else 'no':<7}  "
                      + "; ".join(r["reasons"]) for r in self]
            able = [r["name"] for r in self if r["accepts"]]
            lines.append(f"{len(able)} of {len(self)} backends accept this model"
                         + (f": {', '.join(able)}" if able else ""))
            return "\n".join(line.rstrip() for line in lines)
        lines = [f"{'name':<{width}}  {'kind':<{kind_w}}  solves"]
        lines += [f"{r['name']:<{width}}  {r['kind']:<{kind_w}}  {r['summary']}" for r in self]
        return "\n".join(lines)

    __str__ = __repr__


def solvers(problem=None) -> SolverTable:
    """The registered backends and what each can solve.

    Parameters
    ----------
    problem : Problem, optional
        When given, each row also says whether the backend accepts it
        (``accepts``) and why not (``reasons``, empty when it does); the
        printed table then shows these two columns.
    """
    rows = SolverTable()
    for name in sorted(_REGISTRY):
        b = _REGISTRY[name]
        row = {
            "name": b.name,
            "kind": b.kind,
            "summary": b.summary,
            "certificate": b.certificate,
            "options": sorted(COMMON_OPTIONS | b.options),
            "defaults": dict(b.defaults),
        }
        if problem is not None:
            reasons = b.check(problem)
            row["accepts"] = not reasons
            row["reasons"] = reasons
        rows.append(row)
    return rows


def check_options(backend: Backend, options: Mapping[str, Any]) -> None:
    """Refuse options ``backend`` does not declare, and invalid ``tol`` / ``max_iter`` values."""
    accepted = COMMON_OPTIONS | backend.options
    unknown = set(options) - accepted
    if unknown:
        raise TypeError(f"unknown option(s) {sorted(unknown)} for solver {backend.name!r}; accepted: "
                        f"{sorted(accepted)}")
    check_limits(options.get("tol"), options.get("max_iter"))


def accepted_options(backend: Backend, options: Mapping[str, Any]) -> dict:
    """The part of ``options`` that ``backend`` declares (what ``"auto"`` passes on to the backend it chose)."""
    accepted = COMMON_OPTIONS | backend.options
    return {k: v for k, v in options.items() if k in accepted}


def with_defaults(backend: Backend, options: Mapping[str, Any]) -> dict:
    """``options`` completed by the defaults declared on ``backend`` (``tol``, ``max_iter``, ``time_limit``;
    those of a mode the options select, :meth:`Backend.defaults_for`)."""
    out = {k: v for k, v in backend.defaults_for(options).items() if v is not None}
    out.update({k: v for k, v in options.items() if v is not None or k not in out})
    return out

"""The backend registry: every solver under a name, with what it can solve.

A backend is a function ``solve(problem, data, **options) -> BackendResult``
plus a ``check(problem)`` that lists the reasons it cannot solve a model (an
empty list when it can). :meth:`Problem.solve` looks the backend up, refuses a
model it cannot solve with an error naming those that can, and turns the
result into a :class:`~robustsvm.solution.Solution`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..exceptions import UnsupportedModelError

__all__ = ["Backend", "BackendResult", "register", "get_backend", "solvers", "capable_backends"]

#: options every backend accepts (each may ignore those that do not apply)
COMMON_OPTIONS = frozenset({"tol", "max_iter", "verbose", "random_state"})


@dataclass
class BackendResult:
    """What a backend returns; :meth:`Problem.solve` adds the objective and checks."""

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


@dataclass(frozen=True)
class Backend:
    """A registered solver.

    Attributes
    ----------
    name : str
        The name passed as ``solver=``.
    solve : callable
        ``solve(problem, data, **options) -> BackendResult``.
    check : callable
        ``check(problem) -> list[str]``: why the model is out of reach (empty if not).
    summary : str
        One line: the algorithm and the models it solves.
    options : frozenset of str
        Options accepted beyond ``tol``, ``max_iter``, ``verbose``, ``random_state``.
    kind : str
        ``"conic"`` or ``"first-order"``.
    certificate : str
        What ``Solution.gap`` holds for this backend.
    """

    name: str
    solve: Callable[..., BackendResult]
    check: Callable[[Any], list[str]]
    summary: str
    options: frozenset = frozenset()
    kind: str = "first-order"
    certificate: str = "duality gap"

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
    """The rows of :func:`solvers`, printed as a table."""

    def __repr__(self) -> str:
        if not self:
            return "(no backends)"
        width = max(len(r["name"]) for r in self)
        kind_w = max(len(r["kind"]) for r in self)
        lines = [f"{'name':<{width}}  {'kind':<{kind_w}}  solves"]
        lines += [f"{r['name']:<{width}}  {r['kind']:<{kind_w}}  {r['summary']}" for r in self]
        return "\n".join(lines)

    __str__ = __repr__


def solvers(problem=None) -> SolverTable:
    """The registered backends and what each can solve.

    Parameters
    ----------
    problem : Problem, optional
        When given, each row also says whether the backend accepts it and why not.
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
        }
        if problem is not None:
            reasons = b.check(problem)
            row["accepts"] = not reasons
            row["reasons"] = reasons
        rows.append(row)
    return rows

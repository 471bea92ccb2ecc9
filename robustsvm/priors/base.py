"""What a prior on the weights is to the rest of the package: rows of linear constraints, a JSON form, a check.

A prior (:class:`Prior`) is a statement the user writes by feature name; :func:`resolve_constraints
<robustsvm.priors.constraints.resolve_constraints>` turns it into rows ``lb ≤ A w ≤ ub`` with
:meth:`Prior.linear_constraint` once the names meet the data. Each subclass with a ``tag`` registers itself in
:data:`PRIOR_TYPES` (its JSON key, read back by :func:`prior_from_dict`), and a prior module whose rows have a
structure the bounds can contradict registers a check of the normalized rows (:func:`register_row_check`), which
:func:`check_rows` runs where the feasible set of ``w`` is built; the check reads the rows, never the user's
objects, so hand-written rows of the same form are checked the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import numpy as np
from scipy.optimize import LinearConstraint

__all__ = ["PRIOR_TYPES", "Prior", "check_rows", "feature_keys", "prior_from_dict", "register_row_check"]

#: the one table of priors, JSON tag → class; every subclass with a ``tag`` is added when defined
PRIOR_TYPES: dict[str, type] = {}
#: ``check(linear, lower, upper, feature_names)`` of each prior module, run on the normalized rows
_ROW_CHECKS: list[Callable[..., None]] = []


def feature_keys(features: Any, what: str, minimum: int) -> tuple:
    """The feature names (str) or indices (int) a prior ``what`` lists, as a tuple of plain Python values; at least
    ``minimum`` of them. Raises ``TypeError``/``ValueError`` naming the prior."""
    if isinstance(features, (str, bytes)) or not isinstance(features, Sequence | np.ndarray):
        raise TypeError(f"{what} takes a list of feature names or indices, got {features!r}")
    keys = tuple(k.item() if isinstance(k, np.generic) else k for k in features)
    if len(keys) < minimum:
        raise ValueError(f"{what} needs at least {_COUNT.get(minimum, minimum)} features, got {list(keys)!r}")
    for k in keys:
        if isinstance(k, (bool, np.bool_)) or not isinstance(k, (str, int, np.integer)):
            raise TypeError(f"{what} takes feature names (str) or indices (int), got {k!r}")
    return keys


#: how an error spells a small count
_COUNT = {2: "two", 3: "three"}


class Prior:
    """Base class of the priors on ``w`` written by feature name (``rs.Increasing``, …)."""

    #: the key of the prior in JSON (``{tag: value}``); empty for a base class
    tag: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get("tag"):
            PRIOR_TYPES[cls.tag] = cls

    def linear_constraint(self, d: int, feature_names: np.ndarray | None = None) -> LinearConstraint:
        """The prior as rows ``lb ≤ A w ≤ ub`` over ``d`` features (names resolved against ``feature_names``)."""
        raise NotImplementedError

    def to_dict(self) -> dict:
        """``{tag: value}``, which :meth:`from_value` reads back."""
        raise NotImplementedError

    def __eq__(self, other: object) -> bool:  # the same statement: the same class and the same JSON form
        return type(other) is type(self) and other.to_dict() == self.to_dict()

    def __hash__(self) -> int:
        return hash(repr(self))

    @classmethod
    def from_value(cls, value: Any) -> Prior:
        """The prior whose :meth:`to_dict` is ``{tag: value}``."""
        return cls(value)


def prior_from_dict(spec: Any) -> Prior | None:
    """The prior a ``to_dict()`` wrote, or None when ``spec`` is not one (a one-entry dict with a known tag)."""
    if not isinstance(spec, dict) or len(spec) != 1:
        return None
    (tag, value), = spec.items()
    cls = PRIOR_TYPES.get(tag)
    return None if cls is None else cls.from_value(value)


def register_row_check(check: Callable[..., None]) -> Callable[..., None]:
    """Add ``check(linear, lower, upper, feature_names)`` to the checks :func:`check_rows` runs (a decorator)."""
    _ROW_CHECKS.append(check)
    return check


def check_rows(linear: Any, lower: np.ndarray, upper: np.ndarray, feature_names: np.ndarray | None = None) -> None:
    """Run every registered check of the normalized rows ``linear`` against the box ``[lower, upper]``; a check
    raises ``ValueError`` naming the features the bounds leave no point."""
    for check in _ROW_CHECKS:
        check(linear, lower, upper, feature_names)

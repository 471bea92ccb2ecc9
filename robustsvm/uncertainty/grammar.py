"""Uncertainty sets written as text: the command line's ``--uncertainty`` grammar, read off the set table.

::

    SET   := SUM ("&" SUM)*                      an intersection of the sums (rs.A & rs.B)
    SUM   := TERM ("+" TERM)*                    a Minkowski sum of the terms (rs.A + rs.B)
    TERM  := KIND ":" RADIUS (":" PARAM)*
    PARAM := NAME "=" VALUE | VALUE              a bare VALUE fills the next parameter in order
    KIND  := box | ball | ellipsoid | polyhedron | spectrahedron    (the names of SET_TYPES, any case)
           | wasserstein                                          (a set of distributions: written alone)
    VALUE := a number (inf allowed) | a file holding an array (.npy, .csv, .txt or .json)

The kinds and their parameters come from :data:`robustsvm.uncertainty.SET_TYPES` and
:data:`~robustsvm.uncertainty.DISTRIBUTIONAL_TYPES` and each class's constructor (its parameters other than the
radius), so a set type added to the package can be named here without touching this module. Examples:
``box:0.05``, ``box:0.05:widths=w.csv``, ``ball:0.1:p=inf`` (or ``ball:0.1:inf``), ``ellipsoid:0.1:shape=M.npy``,
``polyhedron:1:G=G.csv:h=h.csv``, ``spectrahedron:0.5:A0=A0.npy:A=A.npy``, ``box:0.1&ball:0.2``,
``box:0.05+ellipsoid:0.1:shape=M.npy`` (``+`` before a kind's name: ``1e+3`` stays a number),
``wasserstein:0.05`` (``kappa=inf``, ``norm=2``) or ``wasserstein:0.05:kappa=2:norm=1``.
"""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path
from typing import Any

import numpy as np

from . import serialize  # noqa: F401  (defines every set type)
from .base import SET_TYPES
from .distributional import DISTRIBUTIONAL_TYPES
from .pair import PairSet

__all__ = ["parse_set", "set_kinds", "describe_kinds", "GRAMMAR"]

#: one line for a usage message
GRAMMAR = "KIND:RADIUS[:NAME=VALUE...], terms joined by & for an intersection, by + for a sum"
#: a "+" that joins two terms: one followed by a kind's name (not the sign of an exponent, 1e+3)
_PLUS = re.compile(r"\+(?=\s*[A-Za-z])")
#: file suffixes an array parameter may be read from
_SUFFIXES = (".npy", ".csv", ".txt", ".json")


def set_kinds() -> dict[str, type]:
    """The kinds the grammar knows: lower-case class name → class, from :data:`SET_TYPES` (not the sets built
    from two others, :class:`~robustsvm.uncertainty.pair.PairSet`: ``&`` and ``+`` write those) and the sets of
    distributions of :data:`DISTRIBUTIONAL_TYPES`, whose radius is their constructor's first parameter."""
    kinds = {name.lower(): cls for name, cls in SET_TYPES.items() if not issubclass(cls, PairSet)}
    return kinds | {name.lower(): cls for name, cls in DISTRIBUTIONAL_TYPES.items()}


def _distributional(cls: type) -> bool:
    return cls in DISTRIBUTIONAL_TYPES.values()


def _parameters(cls: type) -> list[str]:
    if _distributional(cls):  # every constructor parameter after the radius
        return list(inspect.signature(cls.__init__).parameters)[2:]
    return [p for p in cls._param_names() if p != "radius"]


def describe_kinds() -> str:
    """``box[widths], ball[p], …``: each kind with its parameters, for help texts and errors."""
    return ", ".join(f"{kind}" + (f"[{','.join(_parameters(cls))}]" if _parameters(cls) else "")
                     for kind, cls in set_kinds().items())


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _array(text: str, *, name: str, kind: str) -> np.ndarray:
    """The array a parameter's file holds."""
    path = Path(text)
    if path.suffix.lower() not in _SUFFIXES:
        raise ValueError(f"{name}={text!r} of {kind} is neither a number nor a file ending in "
                         f"{', '.join(_SUFFIXES)}")
    if not path.exists():
        raise ValueError(f"no such file {text!r} (parameter {name} of {kind})")
    suffix = path.suffix.lower()
    try:
        if suffix == ".npy":
            return np.asarray(np.load(path, allow_pickle=False), dtype=np.float64)
        if suffix == ".json":
            return np.asarray(json.loads(path.read_text(encoding="utf-8")), dtype=np.float64)
        return np.loadtxt(path, delimiter="," if suffix == ".csv" else None, dtype=np.float64, ndmin=1)
    except (OSError, ValueError, TypeError) as exc:
        raise ValueError(f"cannot read {name} of {kind} from {text!r}: {' '.join(str(exc).split())}") from exc


def _term(text: str) -> Any:
    parts = [p.strip() for p in text.split(":")]
    kind = parts[0].lower()
    kinds = set_kinds()
    if kind not in kinds:
        raise ValueError(f"unknown set kind {parts[0]!r}: use one of {describe_kinds()} ({GRAMMAR})")
    if len(parts) < 2 or not parts[1]:
        raise ValueError(f"{kind} needs a radius: {kind}:RADIUS ({GRAMMAR})")
    cls = kinds[kind]
    radius = _number(parts[1])
    if radius is None:
        raise ValueError(f"the radius of {kind} must be a number, got {parts[1]!r}")
    names = _parameters(cls)
    kwargs: dict[str, Any] = {}
    position = 0
    for item in parts[2:]:
        name, sep, value = item.partition("=")
        if sep:
            by_lower = {n.lower(): n for n in names}  # names match in any case (G, h, A0, A)
            name = by_lower.get(name.strip().lower(), name.strip())
            if name not in names:
                raise ValueError(f"{kind} has no parameter {name!r}"
                                 + (f" (its parameters: {', '.join(names)})" if names else " (only a radius)"))
        else:
            value = item
            while position < len(names) and names[position] in kwargs:
                position += 1
            if position >= len(names):
                raise ValueError(f"too many values for {kind}: {text!r}"
                                 + (f" (its parameters: {', '.join(names)})" if names else " (only a radius)"))
            name = names[position]
        if name in kwargs:
            raise ValueError(f"parameter {name} of {kind} is given twice")
        value = value.strip()
        number = _number(value)
        kwargs[name] = number if number is not None else _array(value, name=name, kind=kind)
    missing = [n for n in _required(cls) if n not in kwargs]
    if missing:
        raise ValueError(f"{kind} needs {', '.join(missing)}: write {kind}:RADIUS:"
                         + ":".join(f"{n}=FILE" for n in missing))
    return cls(radius, **kwargs) if _distributional(cls) else cls(radius=radius, **kwargs)


def _required(cls: type) -> list[str]:
    """The constructor parameters without a default (other than the radius)."""
    params = inspect.signature(cls.__init__).parameters
    return [n for n in _parameters(cls) if params[n].default is inspect.Parameter.empty]


def parse_set(text: str) -> Any:
    """The uncertainty set ``text`` names (see the module docstring).

    Raises
    ------
    ValueError
        On an unknown kind or parameter, a missing radius or file, or parameters the set refuses; the
        message is one line naming what is wrong.
    """
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"an uncertainty set is written {GRAMMAR}, got {text!r}")
    terms = [t.strip() for t in text.split("&")]
    if any(not t for t in terms):
        raise ValueError(f"an empty term in {text!r}: write A&B with a set on each side")
    sets = [_sum(t) for t in terms]
    _alone(sets, "&", text)
    out = sets[0]
    for s in sets[1:]:
        out = out & s
    return out


def _sum(text: str) -> Any:
    """The Minkowski sum of the terms ``text`` joins with ``+`` (the term itself when there is one)."""
    terms = [t.strip() for t in _PLUS.split(text)]
    if any(not t for t in terms) or text.rstrip().endswith("+"):
        raise ValueError(f"an empty term in {text!r}: write A+B with a set on each side")
    sets = [_term(t) for t in terms]
    _alone(sets, "+", text)
    out = sets[0]
    for s in sets[1:]:
        out = out + s
    return out


def _alone(sets: list, op: str, text: str) -> None:
    """A set of distributions moves the whole sample, not each point: it joins no other set."""
    alone = [s for s in sets if _distributional(type(s))]
    if len(sets) > 1 and alone:
        raise ValueError(f"{text!r}: {alone[0].title} moves the whole sample, not each point: write it alone, "
                         f"not joined by {op} to other sets")

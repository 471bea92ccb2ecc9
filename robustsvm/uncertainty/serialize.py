"""Rebuild uncertainty sets from their ``to_dict()`` form."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import ball, box, coordinate_ellipsoid, ellipsoid, intersection, polyhedron, spectrahedron  # noqa: F401  (define the set types)
from .base import SET_TYPES
from .distributional import DISTRIBUTIONAL_TYPES

__all__ = ["DISTRIBUTIONAL_TYPES", "SET_TYPES", "uncertainty_from_dict"]

#: how strict JSON stores the non-finite numbers a set may hold (``Ball(p=np.inf)``)
_NON_FINITE = {"Infinity": np.inf, "-Infinity": -np.inf, "NaN": np.nan}


def _numbers(value: Any) -> Any:
    """``value`` with the strings ``"Infinity"``, ``"-Infinity"``, ``"NaN"`` read back as floats, at any depth."""
    if isinstance(value, str):
        return _NON_FINITE.get(value, value)
    if isinstance(value, list):
        return [_numbers(v) for v in value]
    if isinstance(value, dict):
        return {k: _numbers(v) for k, v in value.items()}
    return value


def uncertainty_from_dict(spec: Any) -> Any:
    """Rebuild an uncertainty set (or a list of them) from its ``to_dict()`` form.

    The class is looked up by ``spec["type"]`` in :data:`SET_TYPES` (a set of distributions in
    :data:`DISTRIBUTIONAL_TYPES`, which the sets of distributions fill as they are defined);
    a class with a ``from_dict`` classmethod builds itself, an ``Intersection``
    from its two rebuilt components, any other is called with the remaining
    entries as keyword arguments (``Box(radius, widths)``, ``Ball(radius, p)``,
    ``Ellipsoid(shape, radius)``, ``Polyhedron(G, h, radius)``,
    ``Spectrahedron(A0, A, radius)``). Non-finite numbers may be given as
    the strings strict JSON stores them as (``"Infinity"`` for ``p = ∞``).
    """
    if spec is None:
        return None
    if isinstance(spec, list):
        return [uncertainty_from_dict(s) for s in spec]
    if not isinstance(spec, dict) or "type" not in spec:
        raise ValueError(f"an uncertainty set is stored as a dict with a 'type', got {spec!r}")
    kind = spec["type"]
    cls = SET_TYPES.get(kind) or DISTRIBUTIONAL_TYPES.get(kind)
    if cls is None:
        raise ValueError(f"unknown uncertainty set type {kind!r} in a stored model")
    spec = {k: (v if k in ("type", "first", "second") else _numbers(v)) for k, v in spec.items()}
    if hasattr(cls, "from_dict"):
        return cls.from_dict(spec)
    kwargs = {k: v for k, v in spec.items() if k != "type"}
    if kind == "Intersection":  # components rebuilt first; its scales follow from their radii
        kwargs = {"first": uncertainty_from_dict(spec["first"]), "second": uncertainty_from_dict(spec["second"]),
                  "radius": spec.get("radius")}
    if isinstance(kwargs.get("radius"), list):
        kwargs["radius"] = np.asarray(kwargs["radius"], dtype=np.float64)
    return cls(**kwargs)

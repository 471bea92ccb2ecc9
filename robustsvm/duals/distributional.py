"""The certificate of a model with a set of distributions: the dual module the set names.

A set of distributions (:class:`robustsvm.uncertainty.DistributionalSet`) writes its own loss term, so the
package's Lagrangian bound over per-sample margins does not apply to it; its dual lives in the module of
:mod:`robustsvm.duals` that the set names by its ``dual_module`` attribute, which provides

* ``certify(model, w, b, *, multipliers, status, claimed_gap, solver_objective, tol, own_bound) -> Result``:
  the fields of :func:`robustsvm.certificates.duality.certify` for a backend's point, and
* ``point_certificate(model, w, b, **options) -> PointCertificate``: :meth:`Problem.certify` of a point from
  elsewhere.

The module is imported here, on first use, so that the set (a term, below the duals) never imports it.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

__all__ = ["distribution_dual"]


def distribution_dual(distribution: Any) -> ModuleType:
    """The dual module of ``distribution`` (``certify``, ``point_certificate``), named by its ``dual_module``."""
    name = getattr(distribution, "dual_module", "")
    if not name:
        raise TypeError(f"{type(distribution).__name__} names no dual module of robustsvm.duals (its 'dual_module')")
    return importlib.import_module(f"{__package__}.{name}")

"""Registered backends. Importing this package registers every built-in in-memory one; the distributed backends
(``dask-ipm``, ``dask-cocoa``, a layer above: :mod:`robustsvm.distributed`) register from the package front
(``robustsvm``'s public names) and from :mod:`robustsvm.solve_path`."""

from . import (
    conic,  # noqa: F401  (registers clarabel, scs, ...)
    dcd,  # noqa: F401  (registers dcd)
    feature_ipm,  # noqa: F401  (registers feature-ipm)
    frank_wolfe,  # noqa: F401  (registers frank-wolfe)
    logistic_dcd,  # noqa: F401  (registers logistic-dcd)
    logistic_newton,  # noqa: F401  (registers logistic-newton)
    m3,  # noqa: F401  (registers m3)
    ordered_dcd,  # noqa: F401  (registers ordered-dcd)
    pegasos,  # noqa: F401  (registers pegasos)
    pq,  # noqa: F401  (registers pq)
    robust_dcd,  # noqa: F401  (registers robust-dcd)
)
from .registry import Backend, capable_backends, get_backend, register, solvers

__all__ = ["Backend", "capable_backends", "get_backend", "register", "solvers"]

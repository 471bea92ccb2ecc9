"""Registered backends. Importing this package registers every built-in one."""

from ..distributed import cocoa as _distributed_cocoa  # noqa: F401  (registers dask-cocoa)
from ..distributed import ipm as _distributed_ipm  # noqa: F401  (registers dask-ipm)
from . import (
    conic,  # noqa: F401  (registers clarabel, scs, ...)
    dcd,  # noqa: F401  (registers dcd)
    feature_ipm,  # noqa: F401  (registers feature-ipm)
    frank_wolfe,  # noqa: F401  (registers frank-wolfe)
    logistic_dcd,  # noqa: F401  (registers logistic-dcd)
    m3,  # noqa: F401  (registers m3)
    pegasos,  # noqa: F401  (registers pegasos)
    pq,  # noqa: F401  (registers pq)
    robust_dcd,  # noqa: F401  (registers robust-dcd)
)
from .registry import Backend, capable_backends, get_backend, register, solvers

__all__ = ["Backend", "capable_backends", "get_backend", "register", "solvers"]

"""Registered backends. Importing this package registers every built-in one."""

from . import conic  # noqa: F401  (registers clarabel, scs, ...)
from . import dcd  # noqa: F401  (registers dcd)
from . import frank_wolfe  # noqa: F401  (registers frank-wolfe)
from . import m3  # noqa: F401  (registers m3)
from . import pegasos  # noqa: F401  (registers pegasos)
from . import pq  # noqa: F401  (registers pq)
from .registry import Backend, BackendResult, capable_backends, get_backend, register, solvers

__all__ = ["Backend", "BackendResult", "capable_backends", "get_backend", "register", "solvers"]

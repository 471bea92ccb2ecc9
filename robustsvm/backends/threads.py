"""The BLAS threads a solve runs with: one.

The package's own solvers call BLAS on vectors and on small or medium matrices between compiled loops (dot products
of ``n`` or ``d`` numbers in a certificate, a Cholesky factorization of a few hundred columns, a Gram matrix), and
the certifier does the same after every backend. A BLAS pool of one thread per core then waits, at every call, on
threads the operating system has descheduled for other work: on a two-core machine at load 1.5, a feature-ipm fit
of 20,000 × 100 with a box took 4.5 s on the default pool against 0.11 s on one thread, dcd on the same data 0.66
against 0.20 s, and signed dcd on the Cora-shaped data 0.53 against 0.04 s; idle, feature-ipm on 100,000 × 100
took 1.16 s against 0.41 s (``docs/architecture.md``, "Threads").
So :mod:`robustsvm.solve_path` runs every backend, and its certification, in :func:`one_blas_thread`; parallel work
is the caller's (``n_jobs`` of a grid search, the Dask backends' workers).
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["on_one_blas_thread", "one_blas_thread"]

def one_blas_thread() -> contextlib.AbstractContextManager:
    """A context in which every BLAS library loaded in this process runs on one thread (``threadpoolctl``); the
    former counts are restored on exit. Inside another such context of the same thread (a solve's steps within the
    solve) the outer one already holds the limit, and this one sets nothing: a limit set and restored costs ~11 µs."""
    if getattr(_held, "depth", 0) > 0:
        return _nested()
    return _outermost()


#: how many :func:`one_blas_thread` contexts the current thread is in
_held = threading.local()


@contextlib.contextmanager
def _outermost() -> Iterator[None]:
    with _controller().limit(limits=1, user_api="blas"):
        with _nested():
            yield


@contextlib.contextmanager
def _nested() -> Iterator[None]:
    _held.depth = getattr(_held, "depth", 0) + 1
    try:
        yield
    finally:
        _held.depth -= 1


@functools.cache
def _controller() -> Any:
    """The BLAS libraries of this process, found once, on first use, after NumPy's and SciPy's are loaded."""
    import scipy.linalg  # noqa: F401  (SciPy's BLAS loaded before the libraries are listed)
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def on_one_blas_thread(function: Callable) -> Callable:
    """``function`` run in :func:`one_blas_thread` (the solve path's steps: a backend's solve, its certification,
    the report on its point)."""
    @functools.wraps(function)
    def wrapped(*args, **kwargs):
        with one_blas_thread():
            return function(*args, **kwargs)
    return wrapped

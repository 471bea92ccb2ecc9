"""Freed memory reused by a worker's rounds: glibc's dynamic ``mmap`` threshold, which Dask's worker
environment turns off, restored on the workers that serve rounds.

glibc's ``malloc`` serves a request of at least ``M_MMAP_THRESHOLD`` bytes (128 KiB at start) with a fresh
``mmap`` and unmaps it when it is freed. The threshold normally rises to the size of the largest block freed
(up to 32 MiB on 64-bit), so a program that allocates and frees arrays of the same size again and again soon
reuses the freed memory. Setting any of ``M_TRIM_THRESHOLD``, ``M_TOP_PAD``, ``M_MMAP_THRESHOLD`` or
``M_MMAP_MAX`` turns that adjustment off, and Dask's nanny starts every worker with
``MALLOC_TRIM_THRESHOLD_=65536`` (``distributed.nanny.pre-spawn-environ``). In such a worker every per-sample
array of a round (``n_k`` doubles, 1.6 MB for 200,000 rows) is a new mapping whose pages the kernel zeroes
on first touch: the interior point's rounds took 1.3–2× their time in a plain process (measured in
``docs/distributed.md``).

:func:`reuse_freed_memory` sets the threshold to its 32 MiB ceiling, the value glibc's own adjustment
would reach, when the worker's environment disabled the adjustment and did not choose a threshold itself
(``MALLOC_MMAP_THRESHOLD_`` unset). Memory above the top of the heap is still returned to the system by the
trim threshold the worker was started with.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys

__all__ = ["MMAP_THRESHOLD", "reuse_freed_memory"]

#: ``mallopt``'s parameter number of the mmap threshold (``M_MMAP_THRESHOLD`` in ``malloc.h``)
_M_MMAP_THRESHOLD = -3
#: the largest mmap threshold glibc accepts on 64-bit (``HEAP_MAX_SIZE / 2``)
MMAP_THRESHOLD = 32 * 2**20
#: the environment variables whose presence turns glibc's dynamic threshold off
_FIXING = ("MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_", "MALLOC_MMAP_MAX_")

_applied: bool | None = None


def reuse_freed_memory() -> bool:
    """Set this process's ``malloc`` mmap threshold to :data:`MMAP_THRESHOLD` when its environment turned
    glibc's dynamic threshold off without choosing one; returns whether the threshold is now set by this
    function (False elsewhere: another C library, no such environment, or a threshold the user chose).
    Idempotent: the first call decides."""
    global _applied
    if _applied is None:
        _applied = False
        chosen = "MALLOC_MMAP_THRESHOLD_" in os.environ
        fixed = any(name in os.environ for name in _FIXING)
        if sys.platform.startswith("linux") and fixed and not chosen:
            path = ctypes.util.find_library("c")
            try:
                libc = ctypes.CDLL(path)
                _applied = bool(libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD))
            except (OSError, AttributeError):  # not glibc (musl has no mallopt)
                _applied = False
    return _applied

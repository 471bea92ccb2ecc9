"""Freed memory reused by a worker's rounds: glibc's ``malloc`` thresholds, which Dask's worker environment
fixes low, set to the values glibc's own adjustment reaches, on the workers that serve rounds.

glibc serves a request of at least ``M_MMAP_THRESHOLD`` bytes (128 KiB at start) with a fresh ``mmap`` and
unmaps it when it is freed, and returns the free memory at the top of a heap to the system once it exceeds
``M_TRIM_THRESHOLD``. When a program frees a mapped block, glibc raises the mmap threshold to that block's size
(at most 32 MiB on 64-bit) and the trim threshold to twice that, so a program that allocates and frees arrays
of one size again and again soon reuses the freed memory. Setting any of these parameters turns the adjustment
off, and Dask's nanny starts every worker with ``MALLOC_TRIM_THRESHOLD_=65536``
(``distributed.nanny.pre-spawn-environ``). In such a worker every per-sample array of a round (``n_k``
doubles: 1.6 MB for 200,000 rows) is new memory whose pages the kernel zeroes on first touch: the interior
point's rounds took 1.3–2× their time in a plain process (``docs/distributed.md``).

:func:`reuse_freed_memory` sets the two thresholds to 32 MiB and 64 MiB, where glibc's adjustment ends for
blocks of 32 MiB or more, when the worker's environment turned the adjustment off and did not choose an mmap
threshold itself (``MALLOC_MMAP_THRESHOLD_`` unset). The cost: up to 64 MiB of freed memory a heap kept for
reuse instead of returned at once.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys

__all__ = ["MMAP_THRESHOLD", "TRIM_THRESHOLD", "reuse_freed_memory"]

#: ``mallopt``'s parameter numbers (``malloc.h``)
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
#: the largest mmap threshold glibc accepts on 64-bit (``HEAP_MAX_SIZE / 2``)
MMAP_THRESHOLD = 32 * 2**20
#: the trim threshold glibc's adjustment pairs with it (twice the mmap threshold)
TRIM_THRESHOLD = 2 * MMAP_THRESHOLD
#: the environment variables whose presence turns glibc's adjustment off
_FIXING = ("MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_", "MALLOC_MMAP_MAX_")

_applied: bool | None = None


def reuse_freed_memory() -> bool:
    """Set this process's ``malloc`` thresholds to :data:`MMAP_THRESHOLD` and :data:`TRIM_THRESHOLD` (a larger
    trim threshold of the environment kept) when its environment turned glibc's adjustment off without
    choosing an mmap threshold.

    Returns
    -------
    bool
        Whether the thresholds are now the ones set here (False for another C library, an environment that
        left the adjustment on, or an mmap threshold the user chose). The first call decides; later calls
        return its answer.
    """
    global _applied
    if _applied is None:
        _applied = False
        chosen = "MALLOC_MMAP_THRESHOLD_" in os.environ
        fixed = any(name in os.environ for name in _FIXING)
        if sys.platform.startswith("linux") and fixed and not chosen:
            try:
                trim = max(TRIM_THRESHOLD, int(os.environ.get("MALLOC_TRIM_THRESHOLD_", "0")))
            except ValueError:
                trim = TRIM_THRESHOLD
            try:
                libc = ctypes.CDLL(ctypes.util.find_library("c"))
                _applied = bool(libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(
                    libc.mallopt(_M_TRIM_THRESHOLD, trim))
            except (OSError, AttributeError):  # not glibc (musl has no mallopt)
                _applied = False
    return _applied

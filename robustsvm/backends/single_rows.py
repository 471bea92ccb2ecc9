"""Float32 rows for the epochs of a dual coordinate method: when the copy is made, how far ahead its epochs ask for
rows, and when they return to ``X`` (``docs/derivations/dcd.md`` §8).

A pass over dense rows that outgrow the cache is bound by the bytes it reads; a float32 copy halves them. The
epochs then solve the model of the copy, while the certificates evaluate ``X`` in float64: the gap stays ``X``'s,
and what the copy limits is how far it can fall (about 1e-7 relative where the margins do not cancel their terms).
"""

from __future__ import annotations

import os

import numpy as np
import scipy.sparse as sp

from .dual_ascent import ORDER_MIN_BYTES

__all__ = ["PREFETCH_AHEAD", "PREFETCH_MAX_BYTES", "SINGLE_DRIFT", "SINGLE_MIN_BYTES", "SINGLE_STALLS",
           "SINGLE_UNTIL_GAP", "SingleRows", "available_memory", "check_setting", "prefetch_distance", "single_copy"]

#: with ``single_precision="auto"``, the copy is made for dense rows of at least this many bytes (those that outgrow
#: the cache, where a pass is bound by the memory traffic it halves; the threshold of the visiting order's blocks)
SINGLE_MIN_BYTES = ORDER_MIN_BYTES["dense"]
#: the epochs return to the float64 rows once a certificate's relative gap is at most this: the copy's model differs
#: from X's by its rounding (relative 6e-8 an entry), so its optimum is certified on X to about 1e-7
SINGLE_UNTIL_GAP = 1e-5
#: ... or once the image ``v`` the epochs carry differs from the certificate's exact ``Xᵀ(c∘y∘α)`` by more than this
#: share of its norm (rounding that does not cancel, such as large offsets: the copy is another model)
SINGLE_DRIFT = 1e-3
#: ... or after this many certificates in a row that take less than a tenth off the relative gap (the copy's optimum
#: may be where the gap stalls: rounding that the margins do not cancel; a converging tail takes more)
SINGLE_STALLS = 3
#: the epochs over float32 rows of at most :data:`PREFETCH_MAX_BYTES` bytes ask for the row this many places ahead in
#: their visiting order (a hint to load it into the cache while the current rows are computed)
PREFETCH_AHEAD = 8
#: ... rows of at most 12 cache lines: per pass at d = 20, 50, 100, 150 the hints took 11-27 % off, at d = 200 nothing,
#: at d = 300 and 1,000 they added 15 % (the hardware's own prefetch follows long rows; derivation §8)
PREFETCH_MAX_BYTES = 768


def check_setting(setting) -> None:
    """Refuse a ``single_precision`` other than ``"auto"``, True or False, naming the argument."""
    if not (isinstance(setting, (bool, np.bool_)) or setting == "auto"):
        raise ValueError(f"single_precision must be 'auto', True or False, got {setting!r}")


def available_memory() -> int | None:
    """The bytes of memory the system can give without swapping (Linux's ``MemAvailable``), else its free pages
    (``sysconf``), else None when neither is known."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, ValueError, OSError):
        return None


def single_copy(X, setting) -> np.ndarray | None:
    """The float32 copy of dense ``X`` the epochs read, or None: with ``setting`` True for any dense ``X``; with
    ``"auto"`` for dense rows of at least :data:`SINGLE_MIN_BYTES` bytes whose copy takes at most half of
    :func:`available_memory`; never with False. None as well where an entry exceeds float32's range (the copy would
    hold infinities) and for sparse ``X`` (the normalized model's ``X`` is float64)."""
    if sp.issparse(X) or setting is False:
        return None
    if setting == "auto":
        room = available_memory()
        if X.nbytes < SINGLE_MIN_BYTES or (room is not None and X.nbytes // 2 > room // 2):
            return None
    copy = np.ascontiguousarray(X, dtype=np.float32)
    if not (np.isfinite(copy.max()) and np.isfinite(copy.min())):  # |x| beyond 3.4e38
        return None
    return copy


def prefetch_distance(rows: np.ndarray) -> int:
    """How many places ahead in the visiting order the epochs over the dense ``rows`` ask for a row:
    :data:`PREFETCH_AHEAD` for float32 rows of at most :data:`PREFETCH_MAX_BYTES` bytes, else 0 (no hint)."""
    short = rows.shape[1] * rows.itemsize <= PREFETCH_MAX_BYTES
    return PREFETCH_AHEAD if rows.dtype == np.float32 and short else 0


class SingleRows:
    """The float32 copy the epochs read (None: they read ``X``), the passes over it, and the rule that returns the
    epochs to ``X`` for good (:meth:`leave`)."""

    def __init__(self, copy: np.ndarray | None) -> None:
        self.copy = copy
        self.passes = 0.0
        self.stalls = 0  # certificates in a row that took less than a tenth off the gap
        self.last_gap = np.inf

    def count(self, passes: float) -> None:
        """Add ``passes`` over the rows to :attr:`passes` while the epochs read the copy."""
        if self.copy is not None:
            self.passes += passes

    def leave(self, rel_gap: float, carried: np.ndarray, exact: np.ndarray) -> bool:
        """After a certificate of relative gap ``rel_gap`` whose exact image is ``exact`` (the epochs carried
        ``carried``): True, and the copy dropped, when the gap is at most :data:`SINGLE_UNTIL_GAP`, after
        :data:`SINGLE_STALLS` certificates in a row that barely lowered it, or when the carried image drifted from
        the exact one by more than :data:`SINGLE_DRIFT` of its norm."""
        self.stalls = self.stalls + 1 if rel_gap > 0.9 * self.last_gap else 0
        self.last_gap = rel_gap
        drift = float(np.linalg.norm(carried - exact))
        if (rel_gap > SINGLE_UNTIL_GAP and self.stalls < SINGLE_STALLS
                and drift <= SINGLE_DRIFT * float(np.linalg.norm(exact))):
            return False
        self.copy = None
        return True

"""The rows of one partition on a worker: a :class:`Block` (in memory, CSR, or a :class:`DiskRows` reference
to a ``.npy`` file streamed a slice at a time), and the steps that make blocks from a dask array's chunks.

A chunk that is a whole ``.npy`` file opened with ``mmap_mode`` (``dask.array.from_npy_stack(...,
mmap_mode="r")``) stays on disk: its :class:`Block` holds a :class:`DiskRows` reference and every pass reads
the rows in slices (:meth:`Block.row_slices`), so a worker holds at most one slice of them in memory and data
larger than its ``memory_limit`` can be fitted.
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._validation import check_X

__all__ = ["SLICE_ROWS", "Block", "DiskRows", "block_is_sparse", "block_on_disk", "block_rows", "block_summary",
           "merge_blocks", "raw_block", "signed_block"]

#: rows of one slice of a block read or formed at once (:meth:`Block.row_slices`)
SLICE_ROWS = 65_536
@dataclass(frozen=True)
class DiskRows:
    """The rows of a C-ordered ``.npy`` file on disk: ``shape`` rows of ``dtype`` from byte ``offset``."""

    path: str
    offset: int
    shape: tuple
    dtype: str

    def read(self, lo: int, hi: int) -> np.ndarray:
        """Rows ``lo:hi`` as a float64 array (one read; the file's pages are not mapped into the process)."""
        d = self.shape[1]
        dt = np.dtype(self.dtype)
        with open(self.path, "rb") as f:
            f.seek(self.offset + lo * d * dt.itemsize)
            out = np.fromfile(f, dtype=dt, count=(hi - lo) * d).reshape(hi - lo, d)
        return out.astype(np.float64, copy=False)


@dataclass(frozen=True, eq=False)
class Block:
    """One row partition on a worker.

    Attributes
    ----------
    X : float64 ndarray (C order), CSR matrix or :class:`DiskRows`
        The rows (read in slices by :meth:`row_slices` when on disk).
    y : ndarray of shape (n_k,)
        Labels −1/+1 (``classes[1]`` is +1).
    weight : ndarray of shape (n_k,)
        Sample weights ``s_i`` (the loss coefficients are ``c_i = c_scale · s_i``, ``c_scale`` the model's).
    start : int
        Index of the first row in the whole ``X``.
    """

    X: Any
    y: np.ndarray
    weight: np.ndarray
    start: int

    @property
    def n(self) -> int:
        return int(self.y.shape[0])

    @property
    def on_disk(self) -> bool:
        return isinstance(self.X, DiskRows)

    def rows(self, lo: int = 0, hi: int | None = None):
        """Rows ``lo:hi`` of ``X`` (in memory: a view; on disk: read)."""
        hi = self.n if hi is None else hi
        if self.on_disk:
            return self.X.read(lo, hi)
        return self.X[lo:hi]

    def row_slices(self, rows: int = SLICE_ROWS) -> Iterator[tuple[int, int, Any]]:
        """``(lo, hi, X[lo:hi])`` over the block in slices of at most ``rows`` rows (one slice in memory)."""
        if not self.on_disk:
            rows = max(rows, self.n)
        for lo in range(0, self.n, rows):
            hi = min(lo + rows, self.n)
            yield lo, hi, self.rows(lo, hi)


def _as_rows(x: Any, name: str, hold: bool = False) -> Any:
    """A chunk of ``X`` as float64 C-ordered rows, CSR rows, or :class:`DiskRows` for a whole mapped ``.npy``
    (read into memory instead when ``hold``)."""
    if not hold and isinstance(x, np.memmap) and isinstance(x.base, mmap.mmap) and x.flags.c_contiguous \
            and x.ndim == 2 and x.dtype.kind == "f" and x.filename \
            and x.offset + x.nbytes == os.path.getsize(x.filename):
        rows = DiskRows(str(x.filename), int(x.offset), tuple(x.shape), x.dtype.str)
        for lo in range(0, x.shape[0], SLICE_ROWS):  # one check of the values, a slice at a time
            check_X(rows.read(lo, min(lo + SLICE_ROWS, x.shape[0])), name=name)
        return rows
    if not sp.issparse(x) and hasattr(x, "tocsr"):  # pydata sparse chunks
        x = x.tocsr()
    if isinstance(x, np.ndarray) and _maps_a_file(x):  # read once: the rounds then read memory, not the file
        x = np.array(x, dtype=np.float64, order="C")
    return check_X(x, name=name)


def _maps_a_file(x: np.ndarray) -> bool:
    """Whether the array's memory is a file mapping (``numpy.memmap`` or a view of one)."""
    while x is not None:
        if isinstance(x, np.memmap) or isinstance(x, mmap.mmap):
            return True
        x = getattr(x, "base", None)
    return False


def raw_block(x: Any, y: Any, weight: Any, start: int, hold: bool = False) -> tuple[Block, dict]:
    """The block of one chunk with its labels as given, and its summary (rows, labels, weight sum)."""
    n = x.shape[0]
    X = _as_rows(x, name=f"X (rows {start}-{start + n - 1})", hold=hold)
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.ravel()
    if y.shape != (n,):
        raise ValueError(f"y has shape {y.shape} in rows {start}-{start + n - 1} of X, expected ({n},)")
    w = np.ones(n) if weight is None else np.asarray(weight, dtype=np.float64)
    labels = np.unique(y)
    return Block(X, y, w, start), {"n": n, "labels": labels, "weight_sum": float(w.sum()),
                                   "weight_ok": bool(np.all(np.isfinite(w)) and np.all(w >= 0))}


def signed_block(raw: tuple[Block, dict], positive: Any) -> Block:
    """The block with the labels mapped to ±1 (``positive`` is ``classes[1]``)."""
    block = raw[0]
    return Block(block.X, np.where(block.y == positive, 1.0, -1.0), block.weight, block.start)


def block_summary(raw: tuple[Block, dict]) -> dict:
    return raw[1]


def block_on_disk(block: Block) -> bool:
    return block.on_disk


def merge_blocks(*blocks: Block) -> Block:
    """One block of the rows of ``blocks`` (in memory, dense), in their order."""
    return Block(np.concatenate([b.X for b in blocks]), np.concatenate([b.y for b in blocks]),
                 np.concatenate([b.weight for b in blocks]), blocks[0].start)


def block_rows(block: Block) -> int:
    return block.n


def block_is_sparse(block: Block) -> bool:
    return sp.issparse(block.X)

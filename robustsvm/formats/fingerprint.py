"""Fingerprints of training data: a digest of the values, independent of how they are stored.

The digest covers the shape, the values of ``X`` row by row (dense or sparse,
any dtype or memory order give the same digest) and the labels mapped to
their classes, so that a stored solution can tell whether it is checked on the
data it was computed on, and which part differs.
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._validation import check_fit_data

__all__ = ["FINGERPRINT_SCHEME", "canonical_classes", "data_fingerprint", "fingerprint_mismatches", "plain"]


#: version of the fingerprint's digest; fingerprints without a ``scheme`` entry are version 1
FINGERPRINT_SCHEME = 2
_CHUNK_ROWS = 4096


def _label_value(c: Any) -> Any:
    """A class label as JSON: numbers by value (``1``, ``1.0`` and ``True`` alike), strings as strings."""
    if isinstance(c, (str, np.str_)):
        return str(c)
    v = float(c)
    return int(v) if v.is_integer() else v


def canonical_classes(classes: Any) -> list:
    return [_label_value(c) for c in np.asarray(classes).tolist()]


def _hash_rows(X: Any) -> tuple[str, str]:
    """SHA-256 of the nonzero structure of ``X`` row by row, the same for a dense array and a CSR matrix.

    Three streams, each fed chunk by chunk (the result does not depend on the
    chunking): the number of nonzeros of each row (int64), their column indices
    in increasing order (int64) and their values (float64). Explicit zeros of
    a sparse matrix and ``-0.0`` count as zeros. A dense ``X`` is read in
    chunks of rows, a sparse one is never densified.
    """
    h_count, h_col, h_val = hashlib.sha256(), hashlib.sha256(), hashlib.sha256()
    n = X.shape[0]
    if sp.issparse(X):
        A = sp.csr_matrix(X, dtype=np.float64, copy=True)
        A.sum_duplicates()
        A.eliminate_zeros()
        A.sort_indices()
    for start in range(0, n, _CHUNK_ROWS):
        stop = min(n, start + _CHUNK_ROWS)
        if sp.issparse(X):
            lo, hi = A.indptr[start], A.indptr[stop]
            counts = np.diff(A.indptr[start:stop + 1])
            cols, vals = A.indices[lo:hi], A.data[lo:hi]
        else:
            block = X[start:stop]
            mask = block != 0
            counts = mask.sum(axis=1)
            cols = np.nonzero(mask)[1]
            vals = block[mask]
        h_count.update(np.ascontiguousarray(counts, dtype=np.int64).tobytes())
        h_col.update(np.ascontiguousarray(cols, dtype=np.int64).tobytes())
        h_val.update(np.ascontiguousarray(vals, dtype=np.float64).tobytes())
    hx = hashlib.sha256()
    hx.update(np.asarray(X.shape, dtype=np.int64).tobytes())
    for h in (h_count, h_col, h_val):
        hx.update(h.digest())
    return hx.hexdigest(), "csr" if sp.issparse(X) else "dense"


def data_fingerprint(X: Any, y: Any) -> dict:
    """A fingerprint of the training data that depends on the values only, not on how they are stored.

    ``X`` is checked and converted to float64 (:func:`check_X`), then hashed by
    its nonzero entries row by row — the count of each row, their column
    indices and their values — so a dense array, a CSR or COO matrix, any
    float dtype and any memory order of the same matrix give the same digest,
    and a sparse matrix is never densified. ``y`` is hashed as its ±1
    encoding (``classes[1]`` is +1) followed by the two class labels written
    as JSON with numbers by value (``1``, ``1.0`` and ``True`` are the same
    label; the string ``"1"`` is another one).

    Returns
    -------
    dict
        ``{"sha256": digest of everything, "X": digest of X, "y": digest of the
        labels, "shape": [n, d], "format": "dense" | "csr" (how X was given,
        informative only), "scheme": 2}``.
    """
    data = check_fit_data(X, y)
    digest_X, fmt = _hash_rows(data.X)
    hy = hashlib.sha256()
    hy.update(data.y.astype(np.int8).tobytes())
    hy.update(json.dumps(canonical_classes(data.classes)).encode())
    digest_y = hy.hexdigest()
    total = hashlib.sha256(f"robustsvm-data-{FINGERPRINT_SCHEME}:{digest_X}:{digest_y}".encode()).hexdigest()
    n, d = data.X.shape
    return {"sha256": total, "X": digest_X, "y": digest_y, "shape": [int(n), int(d)], "format": fmt,
            "scheme": FINGERPRINT_SCHEME}


def _fingerprint_v1(X: Any, y: Any) -> str:
    """The digest written before fingerprint scheme 2 (storage- and label-type-dependent), to read old files."""
    data = check_fit_data(X, y)
    h = hashlib.sha256()
    n, d = data.X.shape
    h.update(np.asarray([n, d], dtype=np.int64).tobytes())
    if sp.issparse(data.X):
        A = sp.csr_matrix(data.X, dtype=np.float64, copy=True)
        A.sum_duplicates()
        A.sort_indices()
        h.update(b"csr")
        h.update(np.ascontiguousarray(A.data, dtype=np.float64).tobytes())
        h.update(np.ascontiguousarray(A.indices, dtype=np.int64).tobytes())
        h.update(np.ascontiguousarray(A.indptr, dtype=np.int64).tobytes())
    else:
        h.update(b"dense")
        h.update(np.ascontiguousarray(data.X, dtype=np.float64).tobytes())
    h.update(data.y.astype(np.int8).tobytes())
    h.update(json.dumps([plain(c) for c in data.classes]).encode())
    return h.hexdigest()


# ------------------------------------------------------------- JSON helpers


def fingerprint_mismatches(stored: dict, now: dict, X: Any, y: Any) -> list[str]:
    """Say which part of the data differs from the stored fingerprint (shape, X, labels), if any."""
    if not isinstance(stored, dict) or not isinstance(stored.get("sha256"), str):
        return ["data fingerprint is malformed (no sha256)"]
    if list(stored.get("shape") or []) != now["shape"]:
        return [f"data fingerprint differs: stored shape {stored.get('shape')}, given {now['shape']}"]
    if stored.get("scheme", 1) == 1:  # written before scheme 2: the old, storage-dependent digest
        if stored["sha256"] == _fingerprint_v1(X, y):
            return []
        return ["data fingerprint differs (a fingerprint of scheme 1, which also depends on the storage: dense or "
                "CSR, int or float labels)"]
    if stored["sha256"] == now["sha256"]:
        return []
    parts = [name for key, name in (("X", "X"), ("y", "the labels")) if stored.get(key) != now[key]]
    return [f"data fingerprint differs: {' and '.join(parts) or 'the digest'} differ from the stored data"]


def plain(value: Any) -> Any:
    """Turn numpy scalars/arrays into JSON values; non-finite floats become strings."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return plain(value.tolist())
    if isinstance(value, (np.bool_, bool)):
        return bool(value)
    if isinstance(value, (np.integer, int)):
        return int(value)
    if isinstance(value, (np.floating, float)):
        v = float(value)
        if math.isnan(v):
            return "NaN"
        if math.isinf(v):
            return "Infinity" if v > 0 else "-Infinity"
        return v
    if isinstance(value, np.str_):
        return str(value)
    return value

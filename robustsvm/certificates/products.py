"""The two data products of a certificate, ``z = Xw`` and ``s = Xᵀu``, from one read of a CSR ``X``.

The certifier (:func:`robustsvm.certificates.duality.certify`) needs the margins at the returned point, from
``z_i = x_i·w``, and the dual image of the multipliers, ``s = Σ_i u_i x_i`` with ``u = a∘y``. On CSR data one
compiled pass over the stored entries gives both, ``z_i = Σ_k data_k w_{h_k}`` and ``s_{h_k} += data_k u_i`` for
the entries ``k`` of row ``i``, where two sparse products read ``X`` twice; other data keep the two products.
"""

from __future__ import annotations

import numba as nb
import numpy as np
import scipy.sparse as sp

__all__ = ["margins_and_image", "signs_energy"]

#: reassociation and contraction only (no assumption that values are finite)
_FM = {"reassoc", "contract", "nsz", "arcp"}


def margins_and_image(X, w: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(X w, Xᵀ u)`` as float64 vectors of lengths ``n`` and ``d``.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix of shape (n, d)
    w : ndarray of shape (d,)
    u : ndarray of shape (n,)
    """
    w = np.ascontiguousarray(w, dtype=np.float64)
    u = np.ascontiguousarray(u, dtype=np.float64)
    if sp.issparse(X) and X.format == "csr" and X.dtype == np.float64:
        indices = X.indices.view(np.uint32) if X.indices.dtype == np.int32 else X.indices  # no sign check on loads
        return _csr_both(X.indptr, indices, X.data, w, u, X.shape[1])
    return np.asarray(X @ w, dtype=np.float64).ravel(), np.asarray(X.T @ u, dtype=np.float64).ravel()


@nb.njit(cache=True, fastmath=_FM)
def _csr_both(indptr, indices, data, w, u, d):  # pragma: no cover - compiled
    """``(X w, Xᵀ u)`` for the CSR arrays of ``X`` (``d`` columns), in one pass over its stored entries."""
    n = indptr.size - 1
    z = np.empty(n)
    s = np.zeros(d)
    for i in range(n):
        ui = u[i]
        acc = 0.0
        for k in range(indptr[i], indptr[i + 1]):
            h = indices[k]
            x = data[k]
            acc += x * w[h]
            s[h] += x * ui
        z[i] = acc
    return z, s


@nb.njit(cache=True, fastmath=_FM)
def signs_energy(s, signs):  # pragma: no cover - compiled
    """``Σ_h s_h²`` over the features whose sign admits ``s_h`` (all but those with ``signs_h s_h < 0``): ``‖t‖²`` of
    the clip of ``s`` to the signs, without forming it."""
    acc = 0.0
    for h in range(s.size):
        x = s[h]
        acc += 0.0 if signs[h] * x < 0.0 else x * x
    return acc

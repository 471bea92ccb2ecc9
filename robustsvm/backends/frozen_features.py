"""The features frozen at 0 between certificates of ``dcd`` on sparse data with sign constraints: the rows the epochs
read without the columns their signs keep clipped (``docs/derivations/dcd.md`` §6).
"""

from __future__ import annotations

import numpy as np

from . import _products_kernels as products

__all__ = ["FREEZE_MARGIN", "FeatureShrinking"]

#: a clipped feature is frozen when ``s_h v_h`` is below −FREEZE_MARGIN times its change since the last certificate
FREEZE_MARGIN = 1.0
#: rebuild the restricted rows only when the newly frozen features hold at least this fraction of the stored entries
_REBUILD_FRACTION = 0.02


class FeatureShrinking:
    """The set of features frozen at 0 between certificates (sparse X with sign constraints).

    A constrained feature whose unconstrained image ``v_h`` is on the wrong side of its
    sign at a certificate (``s_h v_h < 0``: clipped, ``w_h = 0``) by more than it moved
    since the previous certificate (``s_h v_h + FREEZE_MARGIN·|Δv_h| < 0``) is removed
    from the rows the epochs see, which then solve the model with ``w_h = 0`` fixed for
    those features (``β_h`` unrestricted in sign). The rows are rebuilt (one pass over the
    current rows, in place, when the frozen set only grows, else over ``X``) when a frozen feature must be restored
    or the newly frozen ones hold at least ``_REBUILD_FRACTION`` of the stored entries. The certificate is computed
    on the full model from all samples and features, so the gap stays valid; when it
    finds a frozen feature free (``s_h v_h ≥ 0``) the feature is restored and never
    frozen again, so the rows are rebuilt finitely often and the last phase is the
    plain method.
    """

    def __init__(self, indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, sg: np.ndarray, c: np.ndarray,
                 lam: float, rho: float, dii: float, col_nnz: np.ndarray | None = None) -> None:
        self.indptr, self.indices, self.data = indptr, indices, data
        self.sg, self.c, self.lam, self.rho, self.dii = sg, c, lam, rho, dii
        d = sg.size
        self._col_nnz = col_nnz  # stored entries per column (None: counted at the first freeze)
        self.frozen = np.zeros(d, dtype=bool)
        self.released = np.zeros(d, dtype=bool)  # frozen once and found free: never frozen again
        self.prev_v = np.zeros(d)
        self.first = True
        self.stored = int(indices.size)  # stored entries of the current rows
        self.rebuilds = 0
        self._buffers = None  # the restricted rows' arrays (one allocation of nnz entries per solve)

    @property
    def col_nnz(self) -> np.ndarray:
        """The stored entries of each column of ``X``."""
        if self._col_nnz is None:
            self._col_nnz = products.column_counts(self.indices, self.sg.size)
        return self._col_nnz

    def observe(self, v: np.ndarray) -> None:
        """Record ``v`` as the image the next :meth:`update` compares with."""
        self.prev_v = v.copy()
        self.first = False

    def clipped_share(self, v: np.ndarray) -> float:
        """The share of the stored entries of the current rows held by features clipped at ``v`` (``s_h v_h < 0``)
        and not frozen: the entries on which the local-curvature step differs from the plain one."""
        return float(products.clipped_entries(v, self.sg, self.frozen, self.col_nnz)) / max(self.stored, 1)

    def update(self, v: np.ndarray) -> list | None:
        """Revise the frozen set from ``v = Xᵀ(c∘y∘α)``; the new ``[indptr, indices, data, qdiag]`` or None.

        The new rows live in arrays of this object that the next rebuild overwrites: the caller replaces the
        rows it held before that."""
        if self.first:  # no earlier image to compare with
            self.observe(v)
            return None
        # one compiled pass: the features found free are released; those clipped now and before, and farther from
        # the boundary than they moved since the last certificate, wanted frozen; v becomes the image compared with
        want, back, added, grown = products.freeze_scan(v, self.prev_v, self.sg, self.frozen, self.released,
                                                        self.col_nnz, FREEZE_MARGIN)
        if not back and added < _REBUILD_FRACTION * max(self.stored, 1):
            return None
        if self._buffers is None:  # written again at every rebuild: the rows they held are replaced at once
            n = self.indptr.size - 1
            self._buffers = (np.empty(n + 1, dtype=self.indptr.dtype), np.empty_like(self.indices),
                             np.empty_like(self.data), np.empty(n))
        ptr, idx, dat, sq = self._buffers
        # every frozen feature stays frozen (grown): the current rows lose the new ones in place (they lack the others)
        rows = (ptr, idx, dat) if grown and self.rebuilds > 0 else (self.indptr, self.indices, self.data)
        self.frozen = want
        kept = products.restrict_columns_into(*rows, ~want, ptr, idx, dat, sq)
        idx, dat = idx[:kept], dat[:kept]
        self.stored = int(kept)
        self.rebuilds += 1
        # the rows' curvatures c (‖x‖²/λ + ρ) + ℓ*'' in the memory of sq (the rows it described are replaced)
        np.divide(sq, self.lam, out=sq)
        sq += self.rho
        sq *= self.c
        sq += self.dii
        return [ptr, idx, dat, sq]

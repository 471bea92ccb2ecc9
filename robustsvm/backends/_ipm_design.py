"""The data of the feature-space interior point (:mod:`.feature_ipm`): the rows ``a_i = (y_i x_i, r_i, y_i)`` of
``A`` and the products every Newton system needs, weighted Gram matrices ``Aᵀ diag(w) A`` (blocks of rows, double or
single precision), ``A z`` and ``Aᵀ v``, with the counts of that work.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ._ipm_kernels import margin_products, row_margins, scaled_rows, transposed_margins, transposed_product

__all__ = ["Design"]


class Design:
    """The rows ``a_i = (y_i x_i, r_i, y_i)`` of ``A`` (dense or CSR), shared by every point of a batch, and
    their products.

    A dense ``X`` is kept as it is (no copy): since ``y_i² = 1``, ``a_i a_iᵀ = ã_i ã_iᵀ`` with
    ``ã_i = (x_i, y_i r_i, 1)``, so the weighted Gram matrix ``Aᵀ diag(w) A`` is formed block by block of rows
    from ``X`` itself, and ``A z = y ∘ (X z_x) + r z_r + y z_b``, ``Aᵀ v = (Xᵀ(y∘v), rᵀv, yᵀv)``. A single-precision
    copy of ``X`` is made once, the first time a Gram matrix in single precision is asked for. :attr:`counts`
    records the work of a solve: Gram matrices in double and single precision and passes over the data
    (products ``A z`` or ``Aᵀ v``, one per vector; ``passes_float32`` those over the single-precision copy).
    """

    #: rows of the (points × samples × columns) block formed at once by the batched Gram product
    BLOCK = 4_000_000
    #: rows per block of the single-point Gram product (the scaled block stays in cache)
    ROWS = 2048

    def __init__(self, X, y: np.ndarray, r: np.ndarray) -> None:
        self.sparse = sp.issparse(X)
        self.X, self.y, self.r = X, y, r
        n, d = X.shape
        self.n, self.d = n, d
        self._A = sp.hstack([sp.diags(y) @ X, r[:, None], y[:, None]], format="csr") if self.sparse else None
        self._outer = None
        self._single = None
        self._yr = y * r
        self._upper = self._position = None
        #: dense, row-major, double precision: the compiled row passes apply
        self._rows = not self.sparse and X.flags.c_contiguous and X.dtype == np.float64
        self.counts = {"gram_float64": 0, "gram_float32": 0, "passes": 0, "passes_float32": 0}

    @property
    def upper(self) -> tuple[np.ndarray, np.ndarray]:
        """The indices of the upper triangle of a ``(d+2)²`` Gram matrix (formed on first use)."""
        if self._upper is None:
            self._upper = np.triu_indices(self.d + 2)
        return self._upper

    @property
    def position(self) -> np.ndarray:
        """``position[i, j]``: the column of entry ``(i, j)`` in the flattened upper triangle (formed on first use)."""
        if self._position is None:
            D, upper = self.d + 2, self.upper
            self._position = np.zeros((D, D), dtype=np.int64)
            self._position[upper] = np.arange(upper[0].size)
            self._position[upper[1], upper[0]] = np.arange(upper[0].size)
        return self._position

    @property
    def A(self):  # noqa: N802 - the matrix A of the derivation
        """``A`` itself (formed on first use: the batched products of small data need it)."""
        if self._A is None:
            n, d = self.n, self.d
            A = np.empty((n, d + 2))
            np.multiply(self.X, self.y[:, None], out=A[:, :d])
            A[:, d], A[:, d + 1] = self.r, self.y
            self._A = A
        return self._A

    def gram(self, weights: np.ndarray, coarse: bool = False) -> np.ndarray:
        """The upper triangles of ``Aᵀ diag(weights_p) A`` for each row ``p`` of ``weights`` (P, n), flattened
        row-major: shape (P, D(D+1)/2); :attr:`position` maps an entry ``(i, j)`` to its column.

        ``coarse``: one point of large dense data is formed in single precision (accumulated in double
        precision over the blocks of rows), in about half the time.
        """
        P, n = weights.shape
        iu, ju = self.upper
        if self.sparse:
            self.counts["gram_float64"] += P
            A = self._A
            return np.stack([np.asarray((A.T @ A.multiply(w[:, None]).tocsr()).todense())[iu, ju] for w in weights])
        if P == 1:
            if n * iu.size >= self.BLOCK:
                return self._gram_blocks(weights[0], coarse)[iu, ju][None]
            self.counts["gram_float64"] += 1
            B = self.A * np.sqrt(weights[0])[:, None]  # small: one BLAS product BᵀB of B = diag(√w) A
            return (B.T @ B)[iu, ju][None]
        self.counts["gram_float64"] += P
        A = self.A
        if n * iu.size <= self.BLOCK:
            # many points, small data: one GEMM of the weights with the rows' outer products
            if self._outer is None:
                self._outer = A[:, iu] * A[:, ju]
            return weights @ self._outer
        out = np.empty((P, iu.size))
        step = max(1, self.BLOCK // max(n * A.shape[1], 1))
        for lo in range(0, P, step):
            B = np.sqrt(weights[lo:lo + step])[:, :, None] * A[None]
            out[lo:lo + step] = np.matmul(B.transpose(0, 2, 1), B)[:, iu, ju]
        return out

    def gram_tdot(self, weights: np.ndarray, V: np.ndarray, coarse: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`gram` and :meth:`tdot` of ``V`` (P, n); for one point of large dense data in one pass: ``Aᵀv``
        is the Gram matrix's entry of an extra column ``y∘v/√w`` (``Σ_i w_i ã_i y_i v_i/w_i``), in the Gram's
        precision (single precision when ``coarse``: for quantities that only steer, such as the predictor)."""
        P, n = weights.shape
        if self.sparse or P != 1 or n * self.upper[0].size < self.BLOCK:
            return self.gram(weights, coarse), self.tdot(V)
        C = self._gram_blocks(weights[0], coarse, V[0])
        D = self.d + 2
        return C[:D, :D][self.upper][None], C[:D, D][None]

    def _gram_blocks(self, w: np.ndarray, coarse: bool, v: np.ndarray | None = None) -> np.ndarray:
        """``Σ_i w_i ã_i ã_iᵀ`` over blocks of :attr:`ROWS` rows (a GEMM per block, scaled in cache), with the
        column ``y∘v/√w`` appended to ``ã`` when ``v`` is given."""
        X, n, d = self.X, self.n, self.d
        self.counts["gram_float32" if coarse else "gram_float64"] += 1
        if coarse and self._single is None:
            self._single = X.astype(np.float32)
        sw = np.sqrt(w)
        dtype = np.float32 if coarse else np.float64
        source = self._single if coarse else X
        rows = min(self.ROWS, n)
        D = d + 2 + (v is not None)
        buf = np.empty((rows, D), dtype=dtype)
        swr = (sw * self._yr).astype(dtype, copy=False)
        swd = sw.astype(dtype, copy=False)
        extra = np.zeros(0, dtype=dtype) if v is None else (self.y * v / sw).astype(dtype, copy=False)
        C = np.zeros((D, D))
        for lo in range(0, n, rows):
            hi = min(n, lo + rows)
            b = buf[:hi - lo]
            scaled_rows(source, swd, swr, extra, lo, b)
            C += b.T @ b
        return C

    def dot_coarse(self, Z: np.ndarray) -> np.ndarray:
        """:meth:`dot` from the single-precision copy of ``X`` when there is one (half the memory traffic; for
        quantities that only steer)."""
        if self._single is None or self.sparse or Z.shape[0] != 1:
            return self.dot(Z)
        self.counts["passes_float32"] += 1
        return row_margins(self._single, self.y, self.r, np.ascontiguousarray(Z[0]))[None]

    def tdot_coarse(self, V: np.ndarray) -> np.ndarray:
        """:meth:`tdot` from the single-precision copy of ``X`` when there is one."""
        if self._single is None or self.sparse or V.shape[0] != 1:
            return self.tdot(V)
        self.counts["passes_float32"] += 1
        return transposed_margins(self._single, self.y, self.r, np.ascontiguousarray(V[0]))[None]

    def dot(self, Z: np.ndarray) -> np.ndarray:
        """``A z_p`` for each row of ``Z`` (P, D) → (P, n)."""
        self.counts["passes"] += Z.shape[0]
        if self.sparse:
            return (self._A @ Z.T).T
        d = self.d
        if Z.shape[0] == 1 and self._rows:
            return row_margins(self.X, self.y, self.r, np.ascontiguousarray(Z[0]))[None]
        out = (self.X @ Z[0, :d])[None] if Z.shape[0] == 1 else (self.X @ Z[:, :d].T).T
        out *= self.y
        out += Z[:, d:d + 1] * self.r + Z[:, d + 1:] * self.y
        return out

    def dot_tdot(self, Z: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`dot` of ``Z`` and :meth:`tdot` of ``V``; for one point of dense row-major data from one read of
        the rows (:func:`._ipm_kernels.margin_products`)."""
        if Z.shape[0] != 1 or not self._rows:
            return self.dot(Z), self.tdot(V)
        self.counts["passes"] += 1
        az, atv = margin_products(self.X, self.y, self.r, np.ascontiguousarray(Z[0]), np.ascontiguousarray(V[0]))
        return az[None], atv[None]

    def tdot(self, V: np.ndarray) -> np.ndarray:
        """``Aᵀ v_p`` for each row of ``V`` (P, n) → (P, D)."""
        self.counts["passes"] += V.shape[0]
        if self.sparse:
            return (self._A.T @ V.T).T
        d = self.d
        out = np.empty((V.shape[0], d + 2))
        yv = V * self.y
        if V.shape[0] > 1:
            out[:, :d] = (self.X.T @ yv.T).T
        elif self.X.flags.c_contiguous and self.X.dtype == np.float64:
            out[0, :d] = transposed_product(self.X, yv[0])
        else:
            out[0, :d] = yv[0] @ self.X
        out[:, d] = V @ self.r
        out[:, d + 1] = yv.sum(axis=1)
        return out

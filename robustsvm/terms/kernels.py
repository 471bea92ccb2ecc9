"""Kernels for the dual (kernelized) backends.

``k(x, x')`` is ``x·x'`` (:class:`Linear`), ``(1 + x·x')^degree``
(:class:`Polynomial`) or ``exp(−‖x − x'‖²/(2σ²))`` (:class:`RBF`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

__all__ = ["Kernel", "Linear", "Polynomial", "RBF", "kernel_from_dict"]


def _dense_gram(A, B) -> np.ndarray:
    G = A @ B.T
    if sp.issparse(G):
        G = G.toarray()
    return np.asarray(G, dtype=np.float64)


def _row_sq_norms(A) -> np.ndarray:
    if sp.issparse(A):
        return np.asarray(A.multiply(A).sum(axis=1)).ravel()
    return np.einsum("ij,ij->i", A, A)


@dataclass(frozen=True)
class Kernel:
    """Base class: a positive semidefinite kernel ``k(x, x')``."""

    def __call__(self, A, B=None) -> np.ndarray:
        """Gram matrix ``K[i, j] = k(A_i, B_j)`` (``B = A`` when omitted)."""
        raise NotImplementedError

    def diagonal(self, A) -> np.ndarray:
        """``k(A_i, A_i)`` for every row, without forming the Gram matrix."""
        raise NotImplementedError

    def to_dict(self) -> dict:
        return {"type": type(self).__name__, **self.__dict__}


@dataclass(frozen=True)
class Linear(Kernel):
    """Linear kernel ``k(x, x') = x·x'``."""

    def __call__(self, A, B=None) -> np.ndarray:
        return _dense_gram(A, A if B is None else B)

    def diagonal(self, A) -> np.ndarray:
        return _row_sq_norms(A)


@dataclass(frozen=True)
class Polynomial(Kernel):
    """Polynomial kernel ``k(x, x') = (1 + x·x')^degree``."""

    degree: int = 2

    def __post_init__(self) -> None:
        if int(self.degree) != self.degree or self.degree < 1:
            raise ValueError(f"degree must be a positive integer, got {self.degree!r}")

    def __call__(self, A, B=None) -> np.ndarray:
        return (1.0 + _dense_gram(A, A if B is None else B)) ** int(self.degree)

    def diagonal(self, A) -> np.ndarray:
        return (1.0 + _row_sq_norms(A)) ** int(self.degree)


@dataclass(frozen=True)
class RBF(Kernel):
    """Gaussian kernel ``k(x, x') = exp(−‖x − x'‖² / (2σ²))``."""

    sigma: float = 1.0

    def __post_init__(self) -> None:
        if not np.isfinite(self.sigma) or self.sigma <= 0:
            raise ValueError(f"sigma must be positive and finite, got {self.sigma!r}")

    def __call__(self, A, B=None) -> np.ndarray:
        B_ = A if B is None else B
        sq = _row_sq_norms(A)[:, None] + _row_sq_norms(B_)[None, :] - 2.0 * _dense_gram(A, B_)
        np.maximum(sq, 0.0, out=sq)
        return np.exp(-sq / (2.0 * self.sigma**2))

    def diagonal(self, A) -> np.ndarray:
        return np.ones(A.shape[0])


def kernel_from_dict(spec: dict | None) -> Kernel | None:
    """Rebuild a kernel from :meth:`Kernel.to_dict`."""
    if spec is None:
        return None
    spec = dict(spec)
    classes = {cls.__name__: cls for cls in (Linear, Polynomial, RBF)}
    kind = spec.pop("type", None)
    if kind not in classes:
        raise ValueError(f"unknown kernel {kind!r}")
    return classes[kind](**spec)

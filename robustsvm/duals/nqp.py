"""The non-negative quadratic program (NQP) shared by the dual backends.

An :class:`NQP` is

    minimize   F(v) = ½ vᵀAv + bᵀv
    subject to 0 ≤ v ≤ c            (c_i may be +∞),

with ``A`` symmetric positive semidefinite, given as a dense matrix, as
``A = F Fᵀ + diag(a)`` through a factor ``F``, or as a linear operator that
only computes products ``A v``. Kernel SVM duals, the sign-constrained linear
SVM dual and the pq dual all take this form (see :mod:`robustsvm.duals`
and ``docs/derivations/nqp_reductions.md``); :func:`solve_nqp_cvxpy` solves
any of them with a conic solver as a reference.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator, aslinearoperator

from .._lazy import cvxpy as cp

__all__ = ["NQP", "NQPResult", "solve_nqp_cvxpy"]


class NQP:
    """``min ½vᵀAv + bᵀv`` subject to ``0 ≤ v ≤ c``.

    Parameters
    ----------
    A : ndarray of shape (k, k) or LinearOperator, optional
        The symmetric positive semidefinite matrix, or an operator computing
        ``A v`` (then only products are available). Leave it out when
        ``factor`` is given.
    b : array-like of shape (k,)
        The linear term.
    c : float or array-like of shape (k,), optional
        Upper bounds (``np.inf`` where there is none); default: none.
    factor : ndarray or sparse matrix of shape (k, r), optional
        ``F`` with ``A = F Fᵀ + diag(diag)``: products cost O(nnz(F)) and ``A``
        is formed only on request (:meth:`dense`).
    diag : float or array-like of shape (k,), optional
        The diagonal added to ``F Fᵀ`` (zeros by default); only with ``factor``.
    """

    def __init__(self, A: Any = None, b: Any = None, c: Any = None, *, factor: Any = None,
                 diag: Any = None) -> None:
        if b is None:
            raise TypeError("b (the linear term) is required")
        b = np.asarray(b, dtype=np.float64).ravel()
        k = b.shape[0]
        if k == 0:
            raise ValueError("b must have at least one entry")
        if not np.all(np.isfinite(b)):
            raise ValueError("b contains NaN or infinity")
        self.b = b
        if c is None:
            c = np.full(k, np.inf)
        c = np.asarray(c, dtype=np.float64)
        if c.ndim == 0:
            c = np.full(k, float(c))
        if c.shape != (k,):
            raise ValueError(f"c must be a scalar or have shape ({k},), got {c.shape}")
        if np.any(np.isnan(c)) or np.any(c < 0):
            raise ValueError("c must be non-negative (np.inf where there is no upper bound)")
        self.c = c
        self._dense: np.ndarray | None = None
        self._op: LinearOperator | None = None
        self.factor = None
        self.diag = None
        if factor is not None:
            if A is not None:
                raise TypeError("give either A or factor, not both")
            if not sp.issparse(factor):
                factor = np.asarray(factor, dtype=np.float64)
                if factor.ndim == 1:
                    factor = factor[:, None]
            if factor.ndim != 2 or factor.shape[0] != k:
                raise ValueError(f"factor must have shape ({k}, r), got {factor.shape}")
            dg = np.zeros(k) if diag is None else np.asarray(diag, dtype=np.float64)
            if dg.ndim == 0:
                dg = np.full(k, float(dg))
            if dg.shape != (k,):
                raise ValueError(f"diag must be a scalar or have shape ({k},), got {dg.shape}")
            if not np.all(np.isfinite(dg)) or np.any(dg < 0):
                raise ValueError("diag must be finite and non-negative")
            self.factor = factor
            self.diag = dg
        elif isinstance(A, LinearOperator):
            if diag is not None:
                raise TypeError("diag is only used with factor")
            if A.shape != (k, k):
                raise ValueError(f"A must have shape ({k}, {k}), got {A.shape}")
            self._op = A
        elif A is not None:
            if diag is not None:
                raise TypeError("diag is only used with factor")
            A = A.toarray() if sp.issparse(A) else np.asarray(A, dtype=np.float64)
            if A.shape != (k, k):
                raise ValueError(f"A must have shape ({k}, {k}), got {A.shape}")
            if not np.all(np.isfinite(A)):
                raise ValueError("A contains NaN or infinity")
            if not np.allclose(A, A.T, rtol=1e-10, atol=1e-12 * max(1.0, float(np.abs(A).max()))):
                raise ValueError("A must be symmetric")
            self._dense = A
        else:
            raise TypeError("give A (matrix or LinearOperator) or factor")

    # ----------------------------------------------------------- structure
    @property
    def size(self) -> int:
        """Number of variables k."""
        return self.b.shape[0]

    @property
    def has_matrix(self) -> bool:
        """True when ``A`` can be formed (dense, or from its factor)."""
        return self._op is None

    def dense(self) -> np.ndarray:
        """``A`` as a dense array (formed from the factor on first call)."""
        if self._dense is None:
            if self.factor is None:
                raise TypeError("this NQP only provides products A v (a LinearOperator); A cannot be formed")
            F = self.factor
            G = F @ F.T
            G = G.toarray() if sp.issparse(G) else np.asarray(G)
            G[np.diag_indices_from(G)] += self.diag
            self._dense = G
        return self._dense

    def operator(self) -> LinearOperator:
        """``A`` as a LinearOperator (products only)."""
        if self._op is not None:
            return self._op
        k = self.size
        return LinearOperator((k, k), matvec=self.matvec, rmatvec=self.matvec, dtype=np.float64)

    def matvec(self, v: np.ndarray) -> np.ndarray:
        """``A v``; through the factor, ``F(Fᵀv) + a∘v`` in O(nnz(F) + k)."""
        v = np.asarray(v, dtype=np.float64)
        if self.factor is not None:
            F = self.factor
            return np.asarray(F @ np.asarray(F.T @ v)).ravel() + self.diag * v
        if self._dense is not None:
            return self._dense @ v
        return np.asarray(aslinearoperator(self._op).matvec(v)).ravel()

    # ----------------------------------------------------------- numerics
    def objective(self, v: np.ndarray) -> float:
        """``F(v) = ½vᵀAv + bᵀv``."""
        v = np.asarray(v, dtype=np.float64)
        return float(0.5 * v @ self.matvec(v) + self.b @ v)

    def gradient(self, v: np.ndarray) -> np.ndarray:
        """``∇F(v) = Av + b``."""
        return self.matvec(v) + self.b

    def kkt_residual(self, v: np.ndarray, grad: np.ndarray | None = None) -> float:
        """``‖v − clip(v − ∇F(v), 0, c)‖_∞``: zero exactly at a minimizer."""
        v = np.asarray(v, dtype=np.float64)
        g = self.gradient(v) if grad is None else grad
        return float(np.max(np.abs(v - np.clip(v - g, 0.0, self.c)))) if v.size else 0.0

    def check_point(self, v: Any, name: str = "v") -> np.ndarray:
        """Validate a point: shape (k,), finite, within ``[0, c]``."""
        v = np.asarray(v, dtype=np.float64)
        if v.ndim == 0:
            v = np.full(self.size, float(v))
        if v.shape != (self.size,):
            raise ValueError(f"{name} must be a scalar or have shape ({self.size},), got {v.shape}")
        if not np.all(np.isfinite(v)):
            raise ValueError(f"{name} contains NaN or infinity")
        if np.any(v < 0):
            raise ValueError(f"{name} must be non-negative")
        return np.minimum(v, self.c)

    def __repr__(self) -> str:
        kind = "dense" if self._dense is not None and self.factor is None else (
            f"factor {self.factor.shape}" if self.factor is not None else "operator")
        bounded = int(np.isfinite(self.c).sum())
        return f"NQP(size={self.size}, A={kind}, upper bounds on {bounded} variables)"


@dataclass
class NQPResult:
    """A minimizer ``v`` of an :class:`NQP` (``min F(v)``, ``0 ≤ v ≤ c``) and how it was reached.

    The outcome of an NQP solver (:func:`solve_nqp_cvxpy`, the multiplicative updates of
    :func:`robustsvm.backends.m3.m3_solve`), not of a model's solve: a backend maps ``v``
    back to the model through its reduction (``recover``) and returns a
    :class:`~robustsvm.result.Result`. ``objective`` is ``F(v)`` and ``kkt_residual`` the
    residual of :meth:`NQP.kkt_residual`, both evaluated in numpy; ``multiplier`` is the
    multiplier of the equality constraint when one was added (NaN otherwise); ``iterations``
    and ``history`` (per-iterate arrays) are an iterative solver's progress.
    """

    v: np.ndarray
    objective: float
    status: str
    kkt_residual: float
    time: float
    message: str = ""
    multiplier: float = float("nan")
    iterations: int = 0
    history: dict = field(default_factory=dict)


_CVX_STATUS = {"optimal": "optimal", "optimal_inaccurate": "optimal_inaccurate"}


def solve_nqp_cvxpy(nqp: NQP, solver: str = "CLARABEL", *, verbose: bool = False,
                    solver_options: dict | None = None, equality: np.ndarray | None = None) -> NQPResult:
    """Solve ``nqp`` with a conic solver through CVXPY (the reference).

    With ``equality = a`` the constraint ``aᵀv = 0`` is added (the dual of a
    kernel SVM with a free intercept); ``NQPResult.multiplier`` is then its
    multiplier ``ν`` in ``∇F(v) + ν a ∈ −N_{[0,c]}(v)`` and the KKT residual
    uses ``∇F(v) + ν a``.

    ``½vᵀAv`` is written ``½‖Fᵀv‖² + ½Σ a_i v_i²`` when the factor is known and
    ``½ quad_form(v, A)`` for a dense ``A`` (psd_wrap: A is PSD by contract).
    An operator-only NQP cannot be handed to CVXPY.

    Returns
    -------
    NQPResult
        ``v`` clipped to ``[0, c]`` (the solver's tolerance may leave it just
        outside), with the objective and KKT residual evaluated in numpy.
    """

    if not isinstance(nqp, NQP):
        raise TypeError(f"nqp must be an NQP, got {type(nqp).__name__}")
    k = nqp.size
    v = cp.Variable(k)
    if nqp.factor is not None:
        quad = 0.5 * cp.sum_squares(nqp.factor.T @ v)
        if np.any(nqp.diag > 0):
            quad = quad + 0.5 * cp.sum(cp.multiply(nqp.diag, cp.square(v)))
    elif nqp.has_matrix:
        quad = 0.5 * cp.quad_form(v, cp.psd_wrap(nqp.dense()))
    else:
        raise TypeError("solve_nqp_cvxpy needs A as a matrix or a factor, not a LinearOperator")
    cons = [v >= 0]
    bounded = np.isfinite(nqp.c)
    if np.any(bounded):
        idx = np.flatnonzero(bounded)
        cons.append(v[idx] <= nqp.c[idx])
    eq = None
    if equality is not None:
        equality = np.asarray(equality, dtype=np.float64)
        if equality.shape != (k,):
            raise ValueError(f"equality must have shape ({k},), got {equality.shape}")
        eq = equality @ v == 0
        cons.append(eq)
    prob = cp.Problem(cp.Minimize(quad + nqp.b @ v), cons)
    t0 = time.perf_counter()
    prob.solve(solver=solver, verbose=verbose, **(solver_options or {}))
    elapsed = time.perf_counter() - t0
    status = _CVX_STATUS.get(prob.status, str(prob.status))
    if v.value is None:
        return NQPResult(v=np.full(k, np.nan), objective=np.nan, status=status, kkt_residual=np.nan,
                         time=elapsed, message=f"CVXPY status {prob.status}")
    x = np.clip(np.asarray(v.value, dtype=np.float64), 0.0, nqp.c)
    mult = float("nan")
    grad = nqp.gradient(x)
    if eq is not None:
        mult = float(np.asarray(eq.dual_value).ravel()[0])
        grad = grad + mult * equality
    return NQPResult(v=x, objective=nqp.objective(x), status=status, kkt_residual=nqp.kkt_residual(x, grad),
                     time=elapsed, message=f"CVXPY status {prob.status}", multiplier=mult)

"""The plain-array core of the Sha et al. (2002) reproduction: kernels, splits, M3 and the exact hard margin."""

from __future__ import annotations

import math
import sys
import warnings

import numpy as np

from ..backends.m3 import m3_solve
from ..duals import NQP, solve_nqp_cvxpy
from ..terms import kernels

__all__ = [
    "_kernel",
    "_split",
    "_halves",
    "_signs",
    "_nqp",
    "_m3",
    "exact_hard_margin",
    "_test_errors",
    "_fit_errors",
    "_progress",
]


def _kernel(spec):

    kind, value = spec
    return kernels.Polynomial(int(value)) if kind == "poly" else kernels.RBF(float(value))


def _split(n: int, seed: int, train: float = 0.8) -> tuple[np.ndarray, np.ndarray]:
    idx = np.random.default_rng(seed).permutation(n)
    n_train = round(train * n)
    return idx[:n_train], idx[n_train:]


def _halves(y: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A random stratified split into two halves of equal size (⌈n_c/2⌉ or ⌊n_c/2⌋ of each class)."""
    rng = np.random.default_rng(seed)
    n_half = len(y) // 2
    tr, te = [], []
    classes = np.unique(y)
    quotas = [np.flatnonzero(y == c).size / 2 for c in classes]
    take = [math.floor(q) for q in quotas]
    # the classes with a fractional half share the remaining places, in random order
    frac = [i for i, q in enumerate(quotas) if q != math.floor(q)]
    for i in rng.permutation(frac)[: n_half - sum(take)]:
        take[i] += 1
    for c, k in zip(classes, take, strict=True):
        idx = rng.permutation(np.flatnonzero(y == c))
        tr.append(idx[:k])
        te.append(idx[k:])
    return np.concatenate(tr), np.concatenate(te)


def _signs(y01: np.ndarray) -> np.ndarray:
    return np.where(np.asarray(y01) == 1, 1.0, -1.0)


def _nqp(K: np.ndarray, s: np.ndarray, scale: float = 1.0):
    """The NQP of eq. (6): ``A = scale · y yᵀ ∘ K``, ``b = −1``, no upper bound."""

    return NQP(A=scale * (np.outer(s, s) * K), b=-np.ones(len(s)), c=np.full(len(s), np.inf))


def _m3(K: np.ndarray, s: np.ndarray, iterations: int, record=None, threshold: float = 1e-12) -> np.ndarray:
    """α after exactly ``iterations`` multiplicative updates (eq. 7) from α = 1."""

    # tol below any reachable residual: exactly `iterations` updates, as in the paper
    return m3_solve(_nqp(K, s), init=1.0, early_stop=False, max_iter=iterations, record=record, threshold=threshold).v


def exact_hard_margin(K: np.ndarray, s: np.ndarray, intercept: bool = False,
                      polish: bool = True) -> tuple[np.ndarray, float, dict]:
    """The exact minimizer of eq. (6) (``intercept=True``: with ``Σ y_iα_i = 0`` and a bias).

    Clarabel solves the NQP in the variables ``β_i = √A_ii α_i``: ``min ½βᵀÃβ −
    Σ β_i/√A_ii`` with ``Ã_ij = A_ij/√(A_iiA_jj)`` (entries in [−1, 1]), which
    keeps polynomial kernels on raw features (``A_ii`` up to 1e18) well
    scaled. Without intercept the support set S it finds is then polished by
    the least-squares solution of ``A_SS α_S = 1`` (the KKT equalities of the
    support vectors), kept only when ``α_S > 0``, ``‖A_SS α_S − 1‖_∞ ≤ 1e-9``
    and ``(Aα)_i ≥ 1 − 1e-9`` elsewhere.

    Returns
    -------
    alpha : ndarray
        The coefficients.
    bias : float
        ``median_{i ∈ S}(y_i − Σ_j α_j y_j K_ij)`` with an intercept, else 0.
    info : dict
        ``status`` (Clarabel's), ``polished`` and ``kkt``: the KKT residual of
        the scaled problem, ``max_i |β_i − max(β_i − g_i/√A_ii, 0)|`` with ``g``
        the gradient of the Lagrangian of eq. (6) in α.
    """

    A = np.outer(s, s) * K
    dsc = np.sqrt(np.diag(A))
    if np.any(dsc <= 0):
        raise ValueError("K must have a positive diagonal")
    nqp = NQP(A=A / np.outer(dsc, dsc), b=-1.0 / dsc, c=np.full(len(s), np.inf))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # an inaccurate end is read off res.v and the KKT residual
        res = solve_nqp_cvxpy(nqp, equality=s / dsc if intercept else None)
    if not np.all(np.isfinite(res.v)):
        raise RuntimeError(f"Clarabel found no solution of the hard-margin dual ({res.message})")
    alpha = res.v / dsc
    # the support set, read on the well-scaled β
    support = res.v > 1e-6 * res.v.max()
    polished = False
    if polish and not intercept:
        sv = np.flatnonzero(support)
        A_ss = A[np.ix_(sv, sv)]
        a_s = np.linalg.lstsq(A_ss, np.ones(sv.size), rcond=None)[0]
        if np.all(a_s > 0) and np.max(np.abs(A_ss @ a_s - 1.0)) <= 1e-9:
            cand = np.zeros_like(alpha)
            cand[sv] = a_s
            if np.min(A @ cand) >= 1 - 1e-9:
                alpha, polished = cand, True
    bias = 0.0
    grad = A @ alpha - 1.0
    if intercept:
        bias = float(np.median((s - K @ (s * alpha))[support]))
        grad = grad + s * bias  # the Lagrangian's gradient with the multiplier b of Σ y_iα_i = 0
    beta = alpha * dsc
    kkt = float(np.max(np.abs(beta - np.maximum(beta - grad / dsc, 0.0))))
    return alpha, bias, {"status": res.status, "polished": polished, "kkt": kkt}


def _test_errors(alpha: np.ndarray, s: np.ndarray, K_test: np.ndarray, y_test01: np.ndarray,
                 bias: float = 0.0) -> int:
    """Number of test errors of ``sign(Σ_j y_j α_j K(x, x_j) + b)`` (labels 0/1, 1 is +1)."""
    f = K_test @ (s * alpha) + bias
    return int(np.sum(np.where(f > 0, 1, 0) != y_test01))


def _fit_errors(X_tr, y_tr, X_te, y_te, kernel, iterations: int) -> int:
    s = _signs(y_tr)
    alpha = _m3(kernel(X_tr), s, iterations)
    return _test_errors(alpha, s, kernel(X_te, X_tr), y_te)


def _progress(total: int, desc: str, enabled: bool):
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, file=sys.stderr, disable=not enabled, leave=False)

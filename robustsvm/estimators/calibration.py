"""Platt scaling: probabilities from decision values by a fitted sigmoid.

For decision values ``f_i`` and binary labels ``t_i ∈ {0, 1}``, Platt (1999) fits

    P(t = 1 | f) = 1 / (1 + exp(A f + B))

by minimizing the weighted cross-entropy ``−Σ_i s_i [T_i log p_i + (1 − T_i) log(1 − p_i)]``
against the regularized targets ``T_i = (N₊ + 1)/(N₊ + 2)`` for ``t_i = 1`` and
``1/(N₋ + 2)`` for ``t_i = 0`` (``N₊``, ``N₋`` the weighted class sizes), the form libsvm and
scikit-learn's ``CalibratedClassifierCV(method="sigmoid")`` use. The objective is convex
in ``(A, B)``; :func:`fit_sigmoid` minimizes it by Newton's method with a backtracking line
search (Lin, Lin and Weng 2007) until the gradient vanishes to rounding.

With more than two classes, one sigmoid per one-vs-rest column and rows normalized to sum
to 1 (:func:`normalized_probabilities`), as ``CalibratedClassifierCV`` does.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Sigmoid", "fit_sigmoid", "normalized_probabilities"]


@dataclass(frozen=True)
class Sigmoid:
    """``P(t = 1 | f) = 1 / (1 + exp(a f + b))``: the fitted Platt sigmoid."""

    a: float
    b: float

    def probability(self, decision: np.ndarray) -> np.ndarray:
        """``1 / (1 + exp(a f + b))``, evaluated without overflow."""
        z = self.a * np.asarray(decision, dtype=np.float64) + self.b
        return np.exp(-np.logaddexp(0.0, z))

    def log_probability(self, decision: np.ndarray) -> np.ndarray:
        """``log P(t = 1 | f) = −log(1 + exp(a f + b))``."""
        z = self.a * np.asarray(decision, dtype=np.float64) + self.b
        return -np.logaddexp(0.0, z)


def _cross_entropy(ab: np.ndarray, f: np.ndarray, target: np.ndarray, s: np.ndarray) -> float:
    z = ab[0] * f + ab[1]
    # −[T log p + (1 − T) log(1 − p)] with log p = −log(1 + e^z), log(1 − p) = z − log(1 + e^z)
    return float(s @ (np.logaddexp(0.0, z) - (1.0 - target) * z))


def fit_sigmoid(decision, labels, sample_weight=None, *, max_iter: int = 100) -> Sigmoid:
    """Fit Platt's sigmoid to decision values ``decision`` and binary ``labels`` (1 positive, 0 negative).

    Parameters
    ----------
    decision : array-like of shape (n,)
    labels : array-like of shape (n,)
        1 (or True) for the positive class, 0 for the other.
    sample_weight : array-like of shape (n,), optional
        Weights of the cross-entropy terms and of the class sizes in the targets.
    max_iter : int
        Newton iterations (a handful suffice: the objective is smooth and convex).

    Returns
    -------
    Sigmoid
    """
    f = np.asarray(decision, dtype=np.float64).ravel()
    positive = np.asarray(labels).ravel() > 0
    s = np.ones_like(f) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64).ravel()
    if f.shape != positive.shape or f.shape != s.shape:
        raise ValueError("decision, labels and sample_weight must have one entry per sample")
    n_pos, n_neg = float(s[positive].sum()), float(s[~positive].sum())
    target = np.where(positive, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))
    ab = np.array([0.0, np.log((n_neg + 1.0) / (n_pos + 1.0))])
    value = _cross_entropy(ab, f, target, s)
    scale = max(1.0, float(s.sum()))
    for _ in range(max_iter):
        p = np.exp(-np.logaddexp(0.0, ab[0] * f + ab[1]))  # P(t = 1 | f)
        r = s * (target - p)                                 # ∂/∂z of the loss, per sample
        grad = np.array([r @ f, r.sum()])
        if np.max(np.abs(grad)) <= 1e-12 * scale:
            break
        h = s * p * (1.0 - p)
        hess = np.array([[h @ (f * f), h @ f], [h @ f, h.sum()]]) + 1e-12 * scale * np.eye(2)
        step = -np.linalg.solve(hess, grad)
        t = 1.0
        while t > 1e-10:  # Armijo backtracking on the convex objective
            trial = ab + t * step
            trial_value = _cross_entropy(trial, f, target, s)
            if trial_value <= value + 1e-4 * t * (grad @ step):
                break
            t *= 0.5
        else:
            break
        ab, value = trial, trial_value
    return Sigmoid(a=float(ab[0]), b=float(ab[1]))


def normalized_probabilities(columns: np.ndarray) -> np.ndarray:
    """One-vs-rest probabilities ``(n, K)`` divided by their row sums (rows of zeros become uniform)."""
    proba = np.asarray(columns, dtype=np.float64)
    total = proba.sum(axis=1, keepdims=True)
    k = proba.shape[1]
    return np.divide(proba, total, out=np.full_like(proba, 1.0 / k), where=total > 0)

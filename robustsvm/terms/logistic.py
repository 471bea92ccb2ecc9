"""The logistic loss ``ℓ(m) = log(1 + e^{−m})``: value, conjugate, dual box and conic form.

The loss is convex and decreasing in the margin, so the robust counterpart takes it at the
robust margin as for the hinge. Its conjugate gives, for ``α ∈ [0, 1]``,

    ℓ(m) = max_{0 ≤ α ≤ 1}  α(1 − m) − ℓ*(α),    α − ℓ*(α) = H(α) = −α log α − (1 − α) log(1 − α),

the binary entropy (``0 log 0 = 0``), maximized at ``α = σ(−m) = 1/(1 + e^{m})``. So the package's
Lagrangian bound takes ``Loss.dual_term = H`` with the dual box ``[0, 1]``, and the dual of a model
with this loss is an entropy over ``α ∈ (0, 1)`` (``docs/logistic.md``). The conic form is CVXPY's
exponential-cone atom ``logistic(x) = log(1 + e^x)`` of minus the robust margin.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit, xlogy

from .._lazy import cvxpy as cp
from .losses import Loss

__all__ = ["Logistic", "binary_entropy"]


def binary_entropy(alpha: np.ndarray) -> np.ndarray:
    """``H(α) = −α log α − (1 − α) log(1 − α)`` on ``[0, 1]`` (0 at both ends)."""
    alpha = np.asarray(alpha, dtype=np.float64)
    return -xlogy(alpha, alpha) - xlogy(1.0 - alpha, 1.0 - alpha)


@dataclass(frozen=True)
class Logistic(Loss):
    """Logistic loss ``ℓ(m) = log(1 + e^{−m})``.

    Its dual box is ``0 ≤ α ≤ 1`` with ``α − ℓ*(α) = H(α)``, the binary entropy;
    the multiplier of a margin is ``σ(−m)``. The conic compiler writes it on the
    robust margins themselves (``conic_argument = "margin"``): the loss is not zero
    past margin 1, so the hinge's slacks ``ξ ≥ max(0, 1 − m)`` cannot carry it.
    With ``reduction="mean"`` and an L2 penalty λ2 (free, unpenalized intercept),
    the model is scikit-learn's ``LogisticRegression(C=1/(n λ2))``.
    """

    name = "logistic"
    dual_upper = 1.0
    margin_lipschitz = 1.0
    conic_argument = "margin"
    cone = "exponential"
    gives_probability = True

    def value(self, margin: np.ndarray) -> np.ndarray:
        """``log(1 + e^{−m})``, evaluated without overflow (``logaddexp``)."""
        return np.logaddexp(0.0, -np.asarray(margin, dtype=np.float64))

    def dual_term(self, alpha: np.ndarray) -> np.ndarray:
        """``H(α)``, the binary entropy (``ℓ*(α) = α − H(α)`` on ``[0, 1]``)."""
        return binary_entropy(alpha)

    def multiplier(self, margin: np.ndarray) -> np.ndarray:
        """``σ(−m) = −ℓ'(m)``, in ``(0, 1)``."""
        return expit(-np.asarray(margin, dtype=np.float64))

    def cvx(self, margin, coef):
        """``Σ_i c_i log(1 + e^{−u_i})`` of the variables ``u ≤ m^rob`` (exponential cone)."""
        return coef @ cp.logistic(-margin)

    def cvx_value(self, margin):
        """``log(1 + e^{−u})`` elementwise."""
        return cp.logistic(-margin)

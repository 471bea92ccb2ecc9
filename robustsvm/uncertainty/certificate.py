"""A certificate that a robust solution holds against every point of every set."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validation import check_X
from .layout import resolve_uncertainty

__all__ = ["RobustCheck", "robust_check"]


@dataclass
class RobustCheck:
    """Worst-case points and margins of every sample at a solution ``(w, b)``.

    Attributes
    ----------
    perturbations : ndarray of shape (n, d)
        ``v_i* ∈ V_i`` maximizing ``(−y_i w)·v``: the worst point of sample
        ``i``'s set is ``x_i + r_i v_i*``.
    worst_margins : ndarray of shape (n,)
        ``y_i((x_i + r_i v_i*)·w + b)``, the margin at the worst point.
    robust_margins : ndarray of shape (n,)
        ``y_i(x_i·w + b) − r_i σ_{V_i}(−y_i w)``, the margin the model's
        objective uses.
    contained : ndarray of shape (n,), bool
        Whether ``v_i*`` lies in ``V_i`` (up to ``tol``).
    max_disagreement : float
        ``max_i |worst_margins_i − robust_margins_i|``: how far the support
        function the objective used is from a margin attained inside the set.
    tol : float
    """

    perturbations: np.ndarray
    worst_margins: np.ndarray
    robust_margins: np.ndarray
    contained: np.ndarray
    max_disagreement: float
    tol: float

    @property
    def holds(self) -> bool:
        """Every worst point lies in its set and attains the robust margin (within ``tol``)."""
        scale = max(1.0, float(np.max(np.abs(self.robust_margins))))
        return bool(np.all(self.contained) and self.max_disagreement <= self.tol * scale)

    def summary(self) -> str:
        return (
            f"robust check: {int(np.sum(self.contained))}/{self.contained.size} worst points inside their sets, "
            f"max |worst margin − robust margin| = {self.max_disagreement:.3g}, "
            f"smallest worst-case margin {float(np.min(self.worst_margins)):.6g}"
        )


def robust_check(solution: Any, X: Any, y: Any, *, tol: float = 1e-6) -> RobustCheck:
    """Certify a robust solution sample by sample.

    For each sample ``i`` with set ``U_i = x_i + r_i V_i``: the maximizer
    ``v_i* = argmax_{v ∈ V_i} (−y_i w)·v`` (the set's ``worst_case``), the
    margin at ``x_i + r_i v_i*``, and its disagreement with the robust margin
    ``y_i(x_i·w + b) − r_i σ_{V_i}(−y_i w)`` the objective used. Both sides
    come from different code paths (a maximizer checked for membership
    versus the support function), so a small disagreement together with
    membership certifies that no point of any set has a smaller margin.

    Parameters
    ----------
    solution : Solution or fitted RobustSVC
        A solution with weights ``w`` (linear model) of a model with uncertainty, or a fitted binary
        estimator: its ``solution_``, with the missing values of ``X`` (NaN) replaced as its fit replaced
        them (``imputation_``: with ``missing="uncertain"``, the centres of the rows' sets).
    X : array-like or scipy.sparse matrix of shape (n, d)
    y : array-like of shape (n,)
        Labels among ``solution.classes``.
    tol : float, default 1e-6
        Membership tolerance and relative threshold of :attr:`RobustCheck.holds`.

    Returns
    -------
    RobustCheck
    """
    solution, X = _fitted(solution, X)
    if getattr(solution, "w", None) is None:
        raise ValueError("robust_check needs a linear solution with weights w")
    w = np.asarray(solution.w, dtype=np.float64)
    b = float(solution.b)
    X = check_X(X, n_features=w.shape[0])
    y = np.asarray(y)
    n, d = X.shape
    if y.shape != (n,):
        raise ValueError(f"y must have shape ({n},), got {y.shape}")
    classes = np.asarray(solution.classes)
    known = np.isin(y, classes)
    if not np.all(known):
        raise ValueError(f"y holds labels outside the solution's classes {classes.tolist()}")
    y_pm = np.where(y == classes[1], 1.0, -1.0)
    layout = resolve_uncertainty(solution.problem.uncertainty, n, d)
    nominal = y_pm * (np.asarray(X @ w).ravel() + b)
    if layout is None:
        V = np.zeros((n, d))
        return RobustCheck(V, nominal, nominal.copy(), np.ones(n, dtype=bool), 0.0, tol)
    # maximizers (primal side: maximize_many), one per distinct (set, direction) pair
    _, pair_V, inverse = layout.maximize(w, y_pm)
    set_index, direction, _ = layout.pairs(y_pm)
    pair_in = np.array([layout.sets[k].contains(v, tol=tol) for k, v in zip(set_index, pair_V, strict=True)])
    # a symmetric set serves both labels with the pair of z = −w: the maximizer at z = w is −v*
    flip = -y_pm * direction[inverse]
    V = pair_V[inverse] * flip[:, None]
    contained = pair_in[inverse]
    worst = nominal + y_pm * layout.radius * (V @ w)
    # the margins the objective used (support_many: closed forms, LPs, SDP duals)
    robust = nominal - layout.penalty_terms(w, y_pm)
    return RobustCheck(
        perturbations=V,
        worst_margins=worst,
        robust_margins=robust,
        contained=contained,
        max_disagreement=float(np.max(np.abs(worst - robust))),
        tol=tol,
    )


def _fitted(estimator: Any, X: Any) -> tuple[Any, Any]:
    """``(solution, X)`` of a fitted estimator (``solution_``; NaN in ``X`` imputed by its ``imputation_``)."""
    if not hasattr(estimator, "solution_"):
        return estimator, X
    if len(getattr(estimator, "solutions_", [None])) != 1:
        raise ValueError("robust_check takes an estimator with one binary model; check each of solutions_")
    imputation = getattr(estimator, "imputation_", None)
    if imputation is not None and not hasattr(X, "tocsr"):
        X = np.array(X, dtype=np.float64)
        if np.isnan(X).any():
            X = imputation.impute(X)
    return estimator.solution_, X

"""Woolnough et al.'s box-robust pq-SVM as a :class:`~robustsvm.problem.Problem`.

The pq primal (DESIGN §3) is

    minimize   (ν/2)‖ξ‖² + (λ2/2)(‖p‖² + ‖q‖²) + ½b²
    subject to y_i(x_i·(p − q) + b) − r_i Σ_h δ_h(p_h + q_h) + ξ_i ≥ 1,  p, q ≥ 0.

At the optimum ``p = w⁺``, ``q = w⁻``, so it equals ``ν/2`` times the model
``Σ_i max(0, 1 − m_i^rob)² + (λ2'/2)‖w‖² + (μ/2)b²`` with Box uncertainty,
``λ2' = 2λ2/ν`` and ``μ = 2/ν``. :func:`pq_svm` builds that model and
:func:`pq_parameters` reads ``(ν, λ2, r, δ)`` back from any model of this form.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .losses import SquaredHinge
from .penalties import L2, Penalty
from .uncertainty import Box, resolve_uncertainty

__all__ = ["PQParameters", "pq_parameters", "pq_reasons", "pq_svm"]


def pq_svm(nu: float, lam2: float, radius: Any, widths: Any = None):
    """The pq-SVM of Woolnough et al. (2022) as a Problem.

    ``Problem(loss=SquaredHinge(reduction="sum"), penalty=L2(2·lam2/nu),
    uncertainty=Box(radius, widths), intercept=L2(2/nu))``: its objective is
    ``2/nu`` times the pq primal, so both have the same minimizer.

    Parameters
    ----------
    nu : float
        Weight ν > 0 of ``(ν/2)‖ξ‖²``.
    lam2 : float
        Weight λ2 > 0 of ``(λ2/2)(‖p‖² + ‖q‖²)``.
    radius : float or array of shape (n,)
        Box radius ``r_i ≥ 0`` (one for all samples or one per sample).
    widths : array of shape (d,), optional
        Box half-widths δ (ones by default).
    """
    from .problem import Problem

    for name, value in (("nu", nu), ("lam2", lam2)):
        try:
            v = float(value)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{name} must be a positive real number, got {value!r}") from exc
        if not np.isfinite(v) or v <= 0:
            raise ValueError(f"{name} must be positive and finite, got {value!r}")
    nu, lam2 = float(nu), float(lam2)
    return Problem(loss=SquaredHinge(reduction="sum"), penalty=L2(2.0 * lam2 / nu),
                   uncertainty=Box(radius, widths=widths), intercept=L2(2.0 / nu))


def pq_reasons(problem) -> list[str]:
    """Why ``problem`` is not a pq-SVM model (empty when it is one)."""
    reasons = []
    loss = problem.loss
    if not (isinstance(loss, SquaredHinge) and loss.reduction == "sum"):
        reasons.append("the pq-SVM needs loss=SquaredHinge(reduction='sum')")
    pen = problem.penalty
    if pen.l1 > 0:
        reasons.append("the pq-SVM has no L1 penalty")
    if pen.l2 <= 0:
        reasons.append("the pq-SVM needs an L2 penalty with positive strength")
    mode, mu = problem.intercept_mode
    if mode != "l2" or mu <= 0:
        reasons.append("the pq-SVM needs a regularized intercept intercept=rs.L2(mu) with mu > 0")
    if not isinstance(problem.uncertainty, Box):
        reasons.append("the pq-SVM needs one rs.Box uncertainty set (scalar or per-sample radius)")
    if problem.has_signs:
        reasons.append("the pq-SVM has no sign constraints")
    if problem.kernel is not None:
        reasons.append("the pq-SVM is linear (no kernel)")
    return reasons


@dataclass(frozen=True)
class PQParameters:
    """``(ν, λ2)`` and the per-sample data of a pq-SVM model.

    ``nu = 2/μ``, ``lam2 = λ2'/μ`` for the model's ``L2(λ2')`` penalty and
    ``L2(μ)`` intercept; ``radius`` (n,), ``widths`` (d,) and the sample
    weights ``weight`` (n,) (the squared hinge terms are ``weight_i ξ_i²``).
    """

    nu: float
    lam2: float
    radius: np.ndarray
    widths: np.ndarray
    weight: np.ndarray


def pq_parameters(problem, data) -> PQParameters:
    """Map a pq-SVM model and its data to :class:`PQParameters`.

    Raises
    ------
    ValueError
        When ``problem`` is not of the form built by :func:`pq_svm`.
    """
    reasons = pq_reasons(problem)
    if reasons:
        raise ValueError("not a pq-SVM model: " + "; ".join(reasons))
    mu = problem.intercept_mode[1]
    pen: Penalty = problem.penalty
    layout = resolve_uncertainty(problem.uncertainty, data.n, data.d)
    box: Box = problem.uncertainty
    widths = np.ones(data.d) if box.widths is None else np.asarray(box.widths, dtype=np.float64)
    return PQParameters(nu=2.0 / mu, lam2=pen.l2 / mu, radius=layout.radius.copy(), widths=widths,
                        weight=problem.loss.coefficients(data.sample_weight))

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

from typing import Any

import numpy as np

from ._validation import real_scalar
from .duals import PQParameters, pq_parameters, pq_reasons
from .problem import Problem
from .terms.losses import SquaredHinge
from .terms.penalties import L2
from .uncertainty import Box

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
    for name, value in (("nu", nu), ("lam2", lam2)):
        v = real_scalar(value, name=name, what="a positive real number")
        if not np.isfinite(v) or v <= 0:
            raise ValueError(f"{name} must be positive and finite, got {value!r}")
    nu, lam2 = float(nu), float(lam2)
    return Problem(loss=SquaredHinge(reduction="sum"), penalty=L2(2.0 * lam2 / nu),
                   uncertainty=Box(radius, widths=widths), intercept=L2(2.0 / nu))

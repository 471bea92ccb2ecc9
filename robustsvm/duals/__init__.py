"""Duals of the models as reductions to the non-negative QP, and the maps back.

* :class:`KernelDual` — kernel SVMs (:mod:`robustsvm.duals.kernel`);
* :class:`LinearDual` — sign-constrained linear SVMs in ``(α, β)`` (:mod:`robustsvm.duals.linear`);
* :class:`PQDual` — the pq-SVM (:mod:`robustsvm.duals.pq`);

each an :class:`NQP` ``min ½vᵀAv + bᵀv, 0 ≤ v ≤ c`` (:mod:`robustsvm.duals.nqp`)
with ``accepts`` / construction / ``recover``. A term ``1/μ`` is absent when
the model has no intercept; a free intercept adds the equality
``Σ y_i α_i = 0``, which is not an NQP.
"""

from __future__ import annotations

from ..model import Model
from .base import Recovered, Reduction, loss_bounds
from .kernel import KernelDual, kernel_primal
from .linear import LinearDual
from .nqp import NQP, NQPResult, solve_nqp_cvxpy
from .pq import PQDual, PQParameters, pq_parameters, pq_reasons

__all__ = [
    "NQP",
    "NQPResult",
    "KernelDual",
    "LinearDual",
    "PQDual",
    "PQParameters",
    "Recovered",
    "Reduction",
    "dual_reasons",
    "kernel_primal",
    "loss_bounds",
    "pq_parameters",
    "pq_reasons",
    "reduce_model",
    "solve_nqp_cvxpy",
]


def _common_reasons(problem, *, free_intercept: bool = False) -> list[str]:
    reasons = []
    if problem.penalty.l1 > 0:
        reasons.append("the dual NQP has no L1 penalty (L1 needs the primal)")
    if problem.penalty.l2 <= 0:
        reasons.append("the dual NQP needs an L2 penalty with positive strength")
    if problem.intercept_term.mode == "free" and not free_intercept:
        reasons.append("a free intercept adds the equality Σ y_i α_i = 0 to the dual, which the NQP "
                       "0 ≤ v ≤ c cannot express: use intercept=False or intercept=rs.L2(mu)")
    return reasons


def dual_reasons(problem, *, free_intercept: bool = False) -> list[str]:
    """Why no NQP reduction applies to ``problem`` (empty when one does).

    ``free_intercept=True`` accepts kernel models with a free intercept, whose
    dual is the NQP plus the equality ``yᵀα = 0`` (for solvers that take it).
    """
    if problem.kernel is not None:
        reasons = _common_reasons(problem, free_intercept=free_intercept)
        if problem.uncertainty is not None:
            reasons.append("kernel models have no uncertainty sets")
        if problem.has_signs:
            reasons.append("kernel models have no sign constraints")
        return reasons
    if problem.uncertainty is not None:
        pq = pq_reasons(problem)
        if pq:
            return ["with uncertainty only the pq-SVM model (rs.pq_svm) has an NQP dual: " + "; ".join(pq)]
        return []
    return _common_reasons(problem)


def reduce_model(model: Model):
    """The NQP dual of a normalized ``model``: a KernelDual, LinearDual or PQDual."""
    if model.kernel is not None:
        return KernelDual(model)
    if model.layout is not None:
        return PQDual.from_model(model)
    return LinearDual(model)

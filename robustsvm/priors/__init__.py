"""Priors on the weights: signs, bounds, linear constraints, orderings and equalities of coefficients.

:mod:`.constraints` resolves bounds and linear constraints (``scipy.optimize.Bounds`` / ``LinearConstraint``) into
one feasible set of ``w``; :mod:`.ordering` holds ``Increasing``, ``Decreasing``, ``Order`` and ``Equal`` (rows of
linear constraints for the conic path) and the chain structure the first-order path projects on
(pool-adjacent-violators) with the multipliers the certificate's Lagrangian bound takes.
"""

from .ordering import (
    ChainStructure,
    Decreasing,
    Equal,
    Increasing,
    Order,
    OrderingPrior,
    chain_structure,
    prior_from_dict,
)

__all__ = ["ChainStructure", "Decreasing", "Equal", "Increasing", "Order", "OrderingPrior", "chain_structure",
           "prior_from_dict"]

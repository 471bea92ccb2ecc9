"""Priors on the weights: signs, bounds, linear constraints, orderings and equalities of coefficients.

:mod:`.base` declares what a prior is to the package (rows, a JSON tag, a check of the rows); :mod:`.constraints`
resolves bounds and linear constraints (``scipy.optimize.Bounds`` / ``LinearConstraint``) into
one feasible set of ``w``; :mod:`.ordering` holds ``Increasing``, ``Decreasing``, ``Order`` and ``Equal`` (rows of
linear constraints for the conic path) and the chain structure the first-order path projects on
(pool-adjacent-violators) with the multipliers the certificate's Lagrangian bound takes.
"""

from .base import PRIOR_TYPES, Prior, prior_from_dict
from .ordering import ChainStructure, Decreasing, Equal, Increasing, Order, OrderingPrior, chain_structure

__all__ = ["PRIOR_TYPES", "ChainStructure", "Decreasing", "Equal", "Increasing", "Order", "OrderingPrior", "Prior",
           "chain_structure", "prior_from_dict"]

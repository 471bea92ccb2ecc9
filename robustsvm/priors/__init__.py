"""Priors on the weights: signs, bounds, linear constraints, orderings and equalities of coefficients.

:mod:`.base` declares what a prior is to the package (rows, a JSON tag, a check of the rows); :mod:`.constraints`
resolves bounds and linear constraints (``scipy.optimize.Bounds`` / ``LinearConstraint``) into
one feasible set of ``w``; :mod:`.ordering` holds ``Increasing``, ``Decreasing``, ``Order`` and ``Equal`` (rows of
linear constraints for the conic path) and the chain structure the first-order path projects on
(pool-adjacent-violators) with the multipliers the certificate's Lagrangian bound takes; :mod:`.shape` holds
``Convex`` and ``Concave`` (rows on the second differences of ``w`` along a list of features).
"""

from .base import PRIOR_TYPES, Prior, prior_from_dict
from .ordering import ChainStructure, Decreasing, Equal, Increasing, Order, OrderingPrior, chain_structure
from .shape import Concave, Convex, ShapePrior

__all__ = ["PRIOR_TYPES", "ChainStructure", "Concave", "Convex", "Decreasing", "Equal", "Increasing", "Order",
           "OrderingPrior", "Prior", "ShapePrior", "chain_structure", "prior_from_dict"]

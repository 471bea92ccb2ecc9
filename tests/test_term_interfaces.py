"""The generic interfaces terms are reached through: a loss's Lipschitz constant, the registries of sets of
distributions and of priors, and the check of the rows a prior module registers."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import LinearConstraint

import robustsvm as rs
from robustsvm.duals.distributional import distribution_dual
from robustsvm.priors import base as prior_base
from robustsvm.priors.base import PRIOR_TYPES, Prior, prior_from_dict
from robustsvm.priors.constraints import constraints_from_json, constraints_to_json, resolve_constraints, weight_set
from robustsvm.terms.losses import LOSSES
from robustsvm.uncertainty import DISTRIBUTIONAL_TYPES, DistributionalSet, uncertainty_from_dict


@pytest.mark.parametrize("name", sorted(n for n, cls in LOSSES.items()  # the package's losses (tests add others)
                                        if cls.name != "hard_margin" and cls.__module__.startswith("robustsvm.")))
def test_the_declared_lipschitz_constant_is_the_largest_slope(name):
    loss = LOSSES[name]()
    m = np.linspace(-200.0, 50.0, 250_001)
    slope = float(np.max(np.abs(np.diff(loss.value(m)) / np.diff(m))))
    if loss.margin_lipschitz is None:
        assert slope > 100.0  # not Lipschitz: the slope grows without bound
    else:
        assert slope <= loss.margin_lipschitz * (1 + 1e-9)
        assert slope >= loss.margin_lipschitz * (1 - 1e-3)  # attained far left


def test_a_set_of_distributions_registers_and_names_its_dual():
    assert DISTRIBUTIONAL_TYPES["Wasserstein"] is rs.Wasserstein
    assert distribution_dual(rs.Wasserstein(0.1)).__name__ == "robustsvm.duals.wasserstein"

    class Unnamed(DistributionalSet):
        @classmethod
        def from_dict(cls, spec):
            return cls()

    try:
        assert isinstance(uncertainty_from_dict({"type": "Unnamed"}), Unnamed)
        with pytest.raises(TypeError, match="names no dual module"):
            distribution_dual(Unnamed())
    finally:
        DISTRIBUTIONAL_TYPES.pop("Unnamed")


def test_a_prior_registers_its_tag_and_its_rows_are_checked(monkeypatch):
    class AtMost(Prior):
        """``w_h ≤ t``."""

        tag = "at_most_for_test"

        def __init__(self, value):
            self.h, self.t = value

        def linear_constraint(self, d, feature_names=None):
            return LinearConstraint(np.eye(d)[[self.h]], -np.inf, self.t)

        def to_dict(self):
            return {self.tag: [self.h, self.t]}

    try:
        prior = AtMost([1, 0.5])
        back = constraints_from_json(constraints_to_json([prior]))
        assert isinstance(back[0], AtMost) and (back[0].h, back[0].t) == (1, 0.5)
        assert prior_from_dict({"no_such_tag": 1}) is None
        rows = resolve_constraints([prior], 3)
        np.testing.assert_array_equal(rows.A, [[0.0, 1.0, 0.0]])
        seen = []
        monkeypatch.setattr(prior_base, "_ROW_CHECKS", [*prior_base._ROW_CHECKS,
                                                        lambda linear, lo, up, names: seen.append(linear.A.shape)])
        weight_set(np.zeros(3, dtype=np.int8), None, [prior])
        assert seen == [(1, 3)]
        # every backend's data-free check meets a prior none of them knows: the first-order one refuses it by
        # name and `auto` answers through a backend that reads its rows
        rng = np.random.default_rng(0)
        X = rng.normal(size=(80, 3))
        y = np.where(X[:, 1] + 0.3 * rng.normal(size=80) > 0, 1.0, -1.0)
        prob = rs.Problem(penalty=rs.L2(0.1), constraints=[prior])
        reasons = rs.get_backend("ordered-dcd").check(prob)
        assert reasons and "orderings only" in reasons[0] and "AtMost" in reasons[0]
        sol = prob.solve(X, y)
        assert sol.status == "optimal" and sol.w[1] <= 0.5 + 1e-7
    finally:
        PRIOR_TYPES.pop("at_most_for_test")


def test_the_ordering_check_still_names_a_contradiction():
    with pytest.raises(ValueError, match="orderings and bounds leave no value"):
        weight_set(np.zeros(2, dtype=np.int8), ([1.0, -np.inf], [np.inf, 0.0]), [rs.Increasing([0, 1])])

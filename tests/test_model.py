"""The normalized model: built once per solve from Problem + data, read by every backend."""

from __future__ import annotations

import numpy as np
import pytest

import robustsvm as rs
from robustsvm.model import normalize
from robustsvm.terms.intercept import Intercept, intercept_term

from .conftest import make_classification


def test_normalize_resolves_every_term(wdbc):
    X, y, names = wdbc
    sw = np.linspace(1.0, 2.0, X.shape[0])
    prob = rs.Problem(loss=rs.SquaredHinge(), penalty=rs.L2(0.3) + rs.L1(0.01), signs={"mean radius": 1},
                      uncertainty=rs.Box(0.05), intercept=rs.L2(2.0))
    m = prob.normalize(X, y, sample_weight=sw, feature_names=names)
    assert (m.l2, m.l1) == (0.3, 0.01)
    assert m.intercept == Intercept("ridge", 2.0)
    np.testing.assert_allclose(m.c, sw / sw.sum())  # reduction="mean"
    assert m.signs[names.index("mean radius")] == 1 and np.count_nonzero(m.signs) == 1
    np.testing.assert_array_equal(m.y, np.where(y == 1, 1.0, -1.0))
    np.testing.assert_array_equal(m.radius, np.full(X.shape[0], 0.05))
    assert isinstance(m.shared_set, rs.Box)
    with pytest.raises(AttributeError):
        m.l2 = 1.0  # immutable


@pytest.mark.parametrize(("spec", "mode", "mu"), [(True, "free", 0.0), (False, "none", 0.0),
                                                  (rs.L2(3.0), "ridge", 3.0), (rs.L2(0.0), "free", 0.0)])
def test_intercept_term(spec, mode, mu):
    t = intercept_term(spec)
    assert (t.mode, t.mu) == (mode, mu)
    b = 1.5
    assert t.value(b) == pytest.approx(0.5 * mu * b * b)


def test_intercept_rejects_bad_input():
    with pytest.raises(TypeError, match="intercept"):
        intercept_term(1)
    with pytest.raises(ValueError, match="mu"):
        Intercept("ridge", 0.0)
    with pytest.raises(ValueError, match="L2"):
        rs.Problem(intercept=rs.L1(1.0))


def test_radius_at_solve_time_replaces_the_sets_radius_without_changing_the_set():
    X, y = make_classification(40, 3, seed=2)
    box = rs.Box(0.1)
    r = np.linspace(0.0, 0.3, 40)
    prob = rs.Problem(penalty=rs.L2(0.5), uncertainty=box)
    sol = prob.solve(X, y, radius=r)
    assert box.radius == 0.1  # the set is untouched
    ref = rs.Problem(penalty=rs.L2(0.5), uncertainty=rs.Box(r)).solve(X, y)
    assert sol.objective == pytest.approx(ref.objective, rel=1e-6)
    np.testing.assert_allclose(sol.w, ref.w, atol=1e-6)


def test_radius_at_solve_time_is_validated():
    X, y = make_classification(20, 3, seed=2)
    prob = rs.Problem(penalty=rs.L2(0.5), uncertainty=rs.Box(0.1))
    with pytest.raises(ValueError, match="radius has 3 values"):
        prob.solve(X, y, radius=[0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match="radius"):
        prob.solve(X, y, radius=-1.0)
    with pytest.raises(ValueError, match="no uncertainty"):
        rs.Problem(penalty=rs.L2(0.5)).solve(X, y, radius=0.1)


def test_with_values_validates_and_shares_the_data():
    X, y = make_classification(30, 3, seed=5)
    prob = rs.Problem(loss=rs.Hinge(reduction="sum"), penalty=rs.L2(1.0), uncertainty=rs.Ball(0.1),
                      intercept=rs.L2(1.0))
    m = normalize(prob, prob.prepare(X, y))
    m2 = m.with_values(l2=2.0, mu=3.0, radius=0.2, sample_weight=np.full(30, 2.0))
    assert m2.X is m.X and (m2.l2, m2.intercept.mu) == (2.0, 3.0)
    np.testing.assert_array_equal(m2.radius, 0.2)
    np.testing.assert_array_equal(m2.c, 2.0)  # sum reduction
    assert m.l2 == 1.0  # the original is unchanged
    with pytest.raises(ValueError, match="finite and non-negative"):
        m.with_values(l2=-1.0)

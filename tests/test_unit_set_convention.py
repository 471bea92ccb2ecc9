"""``contains``/``support`` describe the unit set ``V``; ``scaled_contains`` the set ``rV`` the radius describes.

``Ellipsoid.from_covariance(S, level)`` is built to hold a ``N(0, S)`` displacement with probability
``level``: ``scaled_contains`` does, by Monte Carlo within a binomial bound, while ``contains`` (the unit
set) holds the χ² probability of radius 1. Every set's ``contains`` agrees with its ``support`` and its
``worst_case``.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import robustsvm as rs


def _sets():
    M = np.array([[2.0, 0.5], [0.5, 1.0]])
    G = np.vstack([np.eye(2), -np.eye(2), [[1.0, 1.0]]])
    h = np.array([1.0, 1.0, 1.0, 1.0, 1.5])
    A0 = np.eye(3)
    A1 = np.zeros((3, 3))
    A1[0, 1] = A1[1, 0] = 1.0
    A2 = np.zeros((3, 3))
    A2[0, 2] = A2[2, 0] = A2[1, 2] = A2[2, 1] = 1.0
    return {
        "box": rs.Box(0.3, widths=[1.0, 2.0]), "ball2": rs.Ball(0.4), "ball1": rs.Ball(0.4, p=1),
        "ballinf": rs.Ball(0.4, p=np.inf), "ball3": rs.Ball(0.4, p=3), "ellipsoid": rs.Ellipsoid(M, radius=0.2),
        "polyhedron": rs.Polyhedron(G, h, radius=0.1), "spectrahedron": rs.Spectrahedron(A0, [A1, A2], radius=0.15),
        "intersection": rs.Box(0.2) & rs.Ball(0.25),
        "coordinate-ellipsoid": rs.uncertainty.CoordinateEllipsoid(np.array([[1.5]]), [1], 2, radius=0.5),
    }


@pytest.mark.parametrize("level", [0.5, 0.9, 0.95])
def test_from_covariance_holds_its_level_through_scaled_contains(level):
    rng = np.random.default_rng(int(100 * level))
    A = rng.normal(size=(3, 3))
    S = A @ A.T + 0.1 * np.eye(3)
    chance = rs.Ellipsoid.from_covariance(S, level)
    draws = rng.multivariate_normal(np.zeros(3), S, size=4000)
    inside = np.mean([chance.scaled_contains(v) for v in draws])
    slack = 4 * np.sqrt(level * (1 - level) / draws.shape[0])  # four binomial standard deviations
    assert abs(inside - level) <= slack
    unit = np.mean([chance.contains(v) for v in draws])  # the unit set: P(χ²_3 ≤ 1)
    assert abs(unit - stats.chi2.cdf(1.0, 3)) <= 4 * np.sqrt(0.2 * 0.8 / draws.shape[0])


@pytest.mark.parametrize("name", sorted(_sets()))
def test_contains_agrees_with_support_and_worst_case(name):
    s = _sets()[name]
    rng = np.random.default_rng(len(name))
    d = s.dim or 2
    Z = rng.normal(size=(12, d))
    worst = np.array([s.worst_case(z) for z in Z])
    for z, v in zip(Z, worst, strict=True):
        assert s.contains(v, tol=1e-6)
        assert z @ v == pytest.approx(s.support(z), rel=1e-6, abs=1e-9)
    # convex combinations of points of V lie in V and never beat the support function
    for _ in range(20):
        weights = rng.dirichlet(np.ones(len(worst)))
        v = weights @ worst
        assert s.contains(v, tol=1e-6)
        assert np.all(Z @ v <= s.support(Z) + 1e-7)
    # a maximizer pushed out of the set along its direction leaves V (the centre is interior)
    centre = s.center(d)
    for z, v in zip(Z, worst, strict=True):
        beyond = centre + 1.01 * (v - centre)
        if np.linalg.norm(v - centre) > 1e-6 and (z @ beyond > s.support(z) + 1e-9):
            assert not s.contains(beyond, tol=1e-8)


@pytest.mark.parametrize("name", sorted(_sets()))
def test_scaled_contains_is_contains_of_the_displacement_over_the_radius(name):
    s = _sets()[name]
    rng = np.random.default_rng(7)
    d = s.dim or 2
    for z in rng.normal(size=(6, d)):
        v = s.worst_case(z)
        r = float(s.radius)
        assert s.scaled_contains(r * v, tol=1e-6)
        assert s.scaled_contains(r * v, tol=1e-6) == s.contains(v, tol=1e-6)
        outside = 3.0 * v + 0.5 * z
        if z @ outside > s.support(z) * (1 + 1e-6) + 1e-9:  # z·outside > σ_V(z): outside ∉ V, r·outside ∉ rV
            assert not s.contains(outside, tol=1e-8)
            assert not s.scaled_contains(r * outside, tol=1e-8)
    per_sample = s.with_radius(np.array([0.1, 0.2, 0.3]))
    with pytest.raises(ValueError, match="radius=r_i"):
        per_sample.scaled_contains(np.zeros(d))
    v = s.worst_case(np.ones(d))
    assert per_sample.scaled_contains(0.2 * v, tol=1e-6, radius=0.2)
    assert s.with_radius(0.0).scaled_contains(np.zeros(d)) and not s.with_radius(0.0).scaled_contains(np.ones(d))

"""Uncertainty sets from data: chance-level radii against closed forms, Monte-Carlo coverage at the stated rate
(seeded, with a binomial bound), replicate summaries against hand computations, and a certified solve."""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pytest
from scipy import stats

import robustsvm as rs


def _binomial_ok(hits: int, trials: int, p: float, z: float = 4.5) -> bool:
    """``hits`` within ``z`` standard deviations of ``Binomial(trials, p)``'s mean (false alarm below 1e-5)."""
    return abs(hits - trials * p) <= z * math.sqrt(trials * p * (1 - p))


def test_ellipsoid_radius_is_the_chi2_quantile():
    S = np.array([[2.0, 0.3], [0.3, 0.5]])
    e = rs.Ellipsoid.from_covariance(S, level=0.95)
    # χ²_2 has the CDF 1 − exp(−x/2): its quantile is −2 log(1 − level)
    assert e.radius ** 2 == pytest.approx(-2.0 * math.log(0.05), rel=1e-12)
    np.testing.assert_array_equal(e.shape, S)
    z = np.array([0.7, -1.2])
    assert e.radius * e.support(z) == pytest.approx(math.sqrt(-2 * math.log(0.05)) * math.sqrt(z @ S @ z), rel=1e-12)


def test_box_radius_is_the_bonferroni_normal_quantile():
    b = rs.Box.from_covariance(np.diag([4.0, 1.0, 0.25]), level=0.9)
    assert b.radius == pytest.approx(NormalDist().inv_cdf(1 - 0.1 / 6), rel=1e-12)
    np.testing.assert_allclose(b.widths, [2.0, 1.0, 0.5])
    b2 = rs.Box.from_covariance(sigmas=[2.0, 1.0, 0.5], level=0.9)
    assert b2.radius == b.radius and np.array_equal(b2.widths, b.widths)


@pytest.mark.parametrize("level", [0.5, 0.9, 0.99])
def test_chance_level_sets_cover_the_true_point_at_the_stated_rate(level):
    rng = np.random.default_rng(20261201)
    d, trials = 3, 20000
    A = rng.normal(size=(d, d))
    S = A @ A.T + 0.5 * np.eye(d)
    e_set = rs.Ellipsoid.from_covariance(S, level=level)
    errors = rng.multivariate_normal(np.zeros(d), S, size=trials)  # x_obs − x_true
    # membership by definition: uᵀS⁻¹u ≤ r² (and the set's own test agrees on a sample)
    inside = np.einsum("ij,ij->i", errors, np.linalg.solve(S, errors.T).T) <= e_set.radius ** 2
    assert all(e_set.contains(u / e_set.radius) == bool(hit) for u, hit in zip(errors[:100], inside[:100], strict=True))
    assert _binomial_ok(int(inside.sum()), trials, level), inside.mean()
    # the box: at least the level; exactly 1 − (1 − (1−level)/d)^d … for independent coordinates
    box = rs.Box.from_covariance(S, level=level)
    in_box = np.all(np.abs(errors) <= box.radius * box.widths, axis=1)
    assert in_box.sum() >= trials * level - 4.5 * math.sqrt(trials * level * (1 - level))
    indep = rng.normal(size=(trials, d)) * np.sqrt(np.diag(S))
    in_box = np.all(np.abs(indep) <= box.radius * box.widths, axis=1)
    assert _binomial_ok(int(in_box.sum()), trials, (1 - (1 - level) / d) ** d), in_box.mean()


def _replicate_rows():
    X = np.array([[1.0, 2.0], [3.0, 2.0], [2.0, 5.0],  # subject "a": 3 rows
                  [0.0, 0.0], [2.0, 1.0],              # subject "b": 2 rows
                  [5.0, 5.0], [4.0, 7.0], [6.0, 4.0], [5.0, 4.0]])  # subject "c": 4 rows
    ids = np.array(["a"] * 3 + ["b"] * 2 + ["c"] * 4)
    y = np.array([1, 1, 1, 0, 0, 1, 1, 1, 1])
    return X, ids, y


def test_pooled_replicates_against_a_hand_computation():
    X, ids, y = _replicate_rows()
    rep = rs.from_replicates(X, ids, y, kind="ellipsoid", level=0.9)
    means = {"a": [2.0, 3.0], "b": [1.0, 0.5], "c": [5.0, 5.0]}
    np.testing.assert_allclose(rep.X, [means[s] for s in rep.subjects])
    np.testing.assert_array_equal(rep.subjects, ["a", "b", "c"])
    np.testing.assert_array_equal(rep.counts, [3, 2, 4])
    np.testing.assert_array_equal(rep.y, [1, 0, 1])
    scatter = np.zeros((2, 2))
    for row, s in zip(X, ids, strict=True):
        dev = row - np.array(means[s])
        scatter += np.outer(dev, dev)
    cov = scatter / (9 - 3)
    np.testing.assert_allclose(rep.covariance, cov)
    np.testing.assert_allclose(rep.uncertainty.shape, cov)
    nu, d = 6, 2
    t2 = d * nu / (nu - d + 1) * stats.f.ppf(0.9, d, nu - d + 1)
    np.testing.assert_allclose(rep.uncertainty.radius, np.sqrt(t2 / np.array([3, 2, 4])))
    box = rs.from_replicates(X, ids, kind="box", level=0.9)
    np.testing.assert_allclose(box.uncertainty.widths, np.sqrt(np.diag(cov)))
    np.testing.assert_allclose(box.uncertainty.radius, stats.t.ppf(1 - 0.1 / 4, nu) / np.sqrt([3, 2, 4]))


def test_per_subject_replicates_shrink_by_ledoit_wolf():
    X, ids, _ = _replicate_rows()
    with pytest.raises(ValueError, match=r"subject 'b'.*singular"):
        rs.from_replicates(X, ids, kind="ellipsoid", level=0.9, pooled=False)
    keep = ids != "b"
    rep = rs.from_replicates(X[keep], ids[keep], kind="ellipsoid", level=0.9, pooled=False)
    D = X[5:] - X[5:].mean(0)  # subject "c"
    k, d = D.shape
    S = D.T @ D / k
    mu = np.trace(S) / d
    # Ledoit & Wolf (2004): δ = min(1, b̄²/‖S − μI‖²) with b̄² = Σ_k ‖x_k x_kᵀ − S‖² / k²
    b2 = sum(np.sum((np.outer(x, x) - S) ** 2) for x in D) / k ** 2
    delta = min(1.0, b2 / np.sum((S - mu * np.eye(d)) ** 2))
    shrunk = (1 - delta) * S + delta * mu * np.eye(d)
    np.testing.assert_allclose(rep.uncertainty[1].shape, shrunk * k / (k - 1) / k, rtol=1e-10)
    assert rep.uncertainty[1].radius == pytest.approx(math.sqrt(-2 * math.log(0.1)))
    box = rs.from_replicates(X, ids, kind="box", pooled=False, level=0.9)
    np.testing.assert_allclose(box.uncertainty[1].widths, np.array([np.sqrt(2.0), np.sqrt(0.5)]) / np.sqrt(2))


def test_pooled_replicate_ellipsoid_covers_the_true_mean_at_the_level():
    """Hotelling: with Σ estimated from the pooled replicates the radius is exact, not only asymptotic."""
    rng = np.random.default_rng(7)
    d, m, k, trials, level = 3, 4, 3, 4000, 0.9
    A = rng.normal(size=(d, d))
    S = A @ A.T + 0.2 * np.eye(d)
    L = np.linalg.cholesky(S)
    mu = rng.normal(size=(m, d))
    ids = np.repeat(np.arange(m), k)
    hits = 0
    for _ in range(trials):
        rows = mu[ids] + rng.normal(size=(m * k, d)) @ L.T
        rep = rs.from_replicates(rows, ids, level=level)
        u = mu[0] - rep.X[0]
        hits += u @ np.linalg.solve(rep.uncertainty.shape, u) <= rep.uncertainty.radius[0] ** 2
    assert _binomial_ok(int(hits), trials, level), hits / trials


def test_bad_replicates_are_named():
    X, ids, y = _replicate_rows()
    with pytest.raises(ValueError, match="single row"):
        rs.from_replicates(X[:4], ids[:4], pooled=False)
    y_bad = y.copy()
    y_bad[1] = 0
    with pytest.raises(ValueError, match="one label per subject"):
        rs.from_replicates(X, ids, y_bad)
    with pytest.raises(ValueError, match="level"):
        rs.Ellipsoid.from_covariance(np.eye(2), level=1.0)
    with pytest.raises(ValueError, match="degrees of freedom"):
        rs.from_replicates(np.random.default_rng(0).normal(size=(4, 3)), [0, 0, 1, 1])
    with pytest.raises(ValueError, match="kind"):
        rs.from_replicates(X, ids, kind="ball")


@pytest.mark.parametrize("pooled", [True, False])
def test_replicate_sets_solve_and_certify(pooled):
    rng = np.random.default_rng(3)
    m, k, d = 40, 3, 2
    mu = rng.normal(size=(m, d))
    labels = np.where(mu @ np.array([1.0, -0.5]) > 0, "yes", "no")
    ids = np.repeat(np.arange(m), k)
    rows = mu[ids] + 0.2 * rng.normal(size=(m * k, d))
    rep = rs.from_replicates(rows, ids, labels[ids], level=0.9, pooled=pooled)
    prob = rs.Problem(penalty=rs.L2(0.1), uncertainty=rep.uncertainty)
    sol = prob.solve(rep.X, rep.y, tol=1e-9)
    assert sol.status == "optimal" and sol.gap <= 1e-6
    # the robust margins are those of the sets: y_i(x̄_i·w + b) − r_i σ_i(−y_i w), written here by hand
    ypm = np.where(rep.y == "yes", 1.0, -1.0)
    shapes = [rep.uncertainty.shape] * m if pooled else [s.shape for s in rep.uncertainty]
    radii = rep.uncertainty.radius if pooled else np.array([s.radius for s in rep.uncertainty])
    by_hand = ypm * (rep.X @ sol.w + sol.b) - radii * np.array([math.sqrt(sol.w @ M @ sol.w) for M in shapes])
    np.testing.assert_allclose(prob.robust_margins(rep.X, rep.y, sol.w, sol.b), by_hand, rtol=1e-10, atol=1e-12)

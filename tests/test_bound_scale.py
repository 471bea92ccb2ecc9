"""The scale search of the Lagrangian bound: ``max_θ D(θa)`` by a Newton iteration on the piecewise-linear ``D'``.

For the hinge, squared hinge and hard margin with ``λ2 > 0``, ``D(θa) = pθ − qθ² − R*(θs)`` and ``D'`` is
piecewise linear (``robustsvm.certificates.dual_scale``); signs make it one piece. Checked against a brute-force
maximum of ``D(θa)`` over a fine grid of ``θ`` refined around its best point (each grid value is itself a valid bound,
computed by the same ``D``): for signs, boxes whose finite sides bind at some scale, bounds excluding 0 and ``λ1``.
"""

from __future__ import annotations

import numpy as np
import pytest

from robustsvm.certificates.dual_scale import scale_in_closed_form
from robustsvm.certificates.duality import BoundTerms, admissible_multipliers, class_sums, lagrangian_bound
from robustsvm.terms import losses


def _data(seed: int, n: int = 120, d: int = 9):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.where(X @ rng.standard_normal(d) + 0.7 * rng.standard_normal(n) > 0, 1.0, -1.0)
    c = np.full(n, 1.0 / n)
    a = c * rng.uniform(0.0, 1.6, n) * (rng.random(n) < 0.7)  # beyond the dual box on purpose: clipped inside
    signs = rng.choice(np.array([-1.0, 0.0, 1.0]), size=d)
    return X, y, c, a, signs


def _grid_maximum(X, y, c, a, kw) -> float:
    """``max_θ D(θa)`` over a grid of ``[0, hi]`` refined around its best point (``hi`` the largest scale in the
    dual box, at most 4): each value is ``D`` at one scale, so it is a lower bound on the maximum."""
    from robustsvm.certificates.duality import dual_value, penalty_conjugate
    from robustsvm.terms.intercept import Intercept

    loss = losses.LOSSES[kw["loss"]]()
    a = admissible_multipliers(a, y, c, loss, kw["intercept"])
    ay = a * y
    s = X.T @ ay
    live = a > 0
    hi = min(4.0, float(np.min(loss.dual_upper * c[live] / a[live])))
    term = Intercept("ridge", kw["mu"]) if kw["intercept"] == "ridge" else None
    sy = float(ay.sum()) if kw["intercept"] == "ridge" else 0.0
    box = kw.get("box")
    lower, upper = (None, None) if box is None else box
    def value(theta: float) -> float:
        conj = penalty_conjugate(theta * s, kw["l2"], kw["l1"], kw["signs"], lower=lower, upper=upper)
        return dual_value(loss, c[live], theta * a[live] / c[live], conj, term, theta * sy)

    grid = np.linspace(0.0, hi, 2001)
    values = np.array([value(t) for t in grid])
    k = int(np.argmax(values))  # then a second grid of the same size around the best point
    fine = np.linspace(grid[max(k - 1, 0)], grid[min(k + 1, grid.size - 1)], 2001)
    return max(float(values.max()), max(value(t) for t in fine))


@pytest.mark.parametrize("loss", ["hinge", "squared_hinge", "hard_margin"])
@pytest.mark.parametrize("intercept", ["none", "free", "ridge"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_parabola_vertex_is_the_maximum_over_the_scale(loss, intercept, seed):
    X, y, c, a, signs = _data(seed)
    if loss == "hard_margin":
        c = np.ones_like(c)
        a = a * y.size
    kw = dict(loss=loss, l2=0.05 * (seed + 1), l1=0.0, signs=signs, intercept=intercept, mu=0.3)
    assert scale_in_closed_form(losses.LOSSES[loss](), kw["l2"])
    bound, _ = lagrangian_bound(BoundTerms(X, y, c, **kw), a)
    grid = _grid_maximum(X, y, c, a, kw)
    assert bound >= grid - 1e-12 * max(1.0, abs(grid))
    assert bound <= grid + 1e-6 * max(1.0, abs(grid))  # no value above the maximum over the scale


@pytest.mark.parametrize("l1", [0.0, 2e-3])
@pytest.mark.parametrize("kind", ["signs", "cone", "finite", "excluding zero"])
@pytest.mark.parametrize("loss", ["hinge", "squared_hinge"])
def test_boxes_and_l1_reach_the_maximum_over_the_scale(kind, l1, loss):
    X, y, c, a, signs = _data(5)
    d = X.shape[1]
    lo = np.where(signs > 0, 0.0, -np.inf)
    up = np.where(signs < 0, 0.0, np.inf)
    box = {"signs": None, "cone": (lo, up), "finite": (np.maximum(lo, -0.3), np.minimum(up, 0.4)),
           "excluding zero": (np.where(signs > 0, 0.05, -0.5), np.where(signs < 0, -0.05, 0.5))}[kind]
    kw = dict(loss=loss, l2=0.1, l1=l1, signs=signs if box is None else np.zeros(d), intercept="none", mu=0.0,
              box=box)
    bound, _ = lagrangian_bound(BoundTerms(X, y, c, **kw), a)
    grid = _grid_maximum(X, y, c, a, kw)
    assert bound >= grid - 1e-12 * max(1.0, abs(grid))
    assert bound <= grid + 1e-6 * max(1.0, abs(grid))


def test_the_finite_box_binds_inside_the_searched_scales():
    """The adversarial case of the box: the clip changes piece between 0 and the best scale."""
    X, y, c, a, _signs = _data(7)
    d = X.shape[1]
    width = np.geomspace(0.002, 2.0, d)
    box = (-width, width)
    kw = dict(loss="hinge", l2=0.1, l1=0.0, signs=np.zeros(d), intercept="none", mu=0.0, box=box)
    bound, theta = lagrangian_bound(BoundTerms(X, y, c, **kw), a)
    a_ok = admissible_multipliers(a, y, c, losses.Hinge(), "none")
    w = np.clip(theta * (X.T @ (a_ok * y)) / kw["l2"], *box)
    assert np.any(np.abs(w) == width) and np.any(np.abs(w) < width)  # some coordinates clipped, some not
    grid = _grid_maximum(X, y, c, a, kw)
    assert grid - 1e-12 <= bound <= grid + 1e-6 * max(1.0, abs(grid))


def test_a_loss_without_a_declared_degree_keeps_the_search():
    class Undeclared(losses.Loss):
        name = None
        dual_upper = 1.0

        def dual_term(self, alpha):
            return np.asarray(alpha, dtype=np.float64)

    assert not scale_in_closed_form(Undeclared(), 0.1)
    assert not scale_in_closed_form(losses.Hinge(), 0.0)
    assert scale_in_closed_form(losses.SquaredHinge(), 0.1)


def test_class_sums_and_the_free_intercept_balance():
    """The class sums against a plain loop over the samples (labels ±1 and a 0 that belongs to neither class);
    the balanced multipliers meet ``Σ a_i y_i = 0`` with the lighter class untouched and stay in the dual box."""
    rng = np.random.default_rng(4)
    y = rng.choice([-1.0, 1.0], size=301)
    y[7] = 0.0
    a = rng.random(301)
    pos = sum(a[i] for i in range(301) if y[i] > 0)
    neg = sum(a[i] for i in range(301) if y[i] < 0)
    assert class_sums(a, y) == pytest.approx((pos, neg), rel=1e-13)
    c = np.ones(301)
    b = admissible_multipliers(a, y, c, losses.Hinge(), "free")
    assert abs(float(b @ y)) <= 1e-12 * float(b.sum())
    light = y > 0 if pos < neg else y < 0
    np.testing.assert_array_equal(b[light], a[light])
    assert b[7] == a[7] and np.all((b >= 0) & (b <= c))

"""The exact free intercept of the hinge against a brute force over every breakpoint.

``φ(b) = Σ_i c_i max(0, 1 − y_i(z_i + b))`` is convex and piecewise linear with breakpoints ``t_i = y_i − z_i``,
so its minimum is the least value of ``φ`` over the breakpoints. The tests evaluate ``φ`` at each of them in
numpy and check that :func:`robustsvm.objective.optimal_intercept` returns a breakpoint reaching that least value,
whatever the hint it starts from (none, a breakpoint, a value between two, one beyond every breakpoint), on
data with tied breakpoints, zero weights, equal weights and unequal ones.
"""

from __future__ import annotations

import numpy as np
import pytest

from robustsvm.objective import optimal_intercept


def _phi(b: float, z: np.ndarray, y: np.ndarray, c: np.ndarray) -> float:
    return float(c @ np.maximum(0.0, 1.0 - y * (z + b)))


def _draw(rng: np.random.Generator, kind: str):
    n = int(rng.integers(1, 80))
    y = np.where(rng.random(n) < rng.uniform(0.05, 0.95), 1.0, -1.0)
    if kind == "ties":  # breakpoints on a coarse grid: many equal t_i
        z = rng.integers(-4, 5, size=n) / 2.0
    else:
        z = rng.normal(scale=1.5, size=n)
    if kind == "equal":
        c = np.full(n, 1.0 / n)
    elif kind == "ties":
        c = rng.integers(0, 4, size=n) / 2.0  # zero weights among them
    else:
        c = rng.uniform(0.01, 1.0, size=n)
    return z, y, c


def _hints(rng: np.random.Generator, t: np.ndarray) -> list:
    return [None, float(t[rng.integers(t.size)]), float(rng.normal()), float(t.max() + 3.0), float(t.min() - 3.0)]


@pytest.mark.parametrize("kind", ["ties", "equal", "weights"])
def test_hinge_intercept_reaches_the_least_value_over_all_breakpoints(kind):
    rng = np.random.default_rng({"ties": 0, "equal": 1, "weights": 2}[kind])
    for _ in range(400):
        z, y, c = _draw(rng, kind)
        t = y - z
        values = np.array([_phi(tk, z, y, c) for tk in t])
        least = float(values.min())
        for hint in _hints(rng, t):
            b = optimal_intercept(z, y, c, hint=hint)
            assert np.any(t == b), "not a breakpoint"
            assert _phi(b, z, y, c) <= least + 1e-12 * max(1.0, abs(least)), (hint, b, least)


def test_hinge_intercept_with_equal_weights_is_the_smallest_breakpoint_of_the_least_value():
    """Equal weights: the positives' count is compared with exact counts, so where ``φ`` is flat between two
    breakpoints the smaller one is returned, from any hint (the brute force's first minimizer in sorted order)."""
    rng = np.random.default_rng(3)
    for _ in range(400):
        z, y, c = _draw(rng, "equal")
        t = np.sort(y - z)
        values = np.array([_phi(tk, z, y, c) for tk in t])
        # the flat stretch of the minimum: values equal to the least up to the rounding of a sum of n terms
        first = t[np.flatnonzero(values <= values.min() + 1e-13)[0]]
        for hint in _hints(rng, t):
            assert optimal_intercept(z, y, c, hint=hint) == first


def test_a_non_minimizer_fails_the_brute_force_check():
    """The check above can fail: the breakpoint next to the minimizer (on a draw where it is not also a minimum)
    is caught."""
    rng = np.random.default_rng(4)
    caught = 0
    for _ in range(200):
        z, y, c = _draw(rng, "weights")
        t = np.sort(y - z)
        b = optimal_intercept(z, y, c)
        k = int(np.searchsorted(t, b))
        least = min(_phi(tk, z, y, c) for tk in t)
        for other in t[max(k - 1, 0)], t[min(k + 1, t.size - 1)]:
            if other != b and _phi(other, z, y, c) > least + 1e-12 * max(1.0, abs(least)):
                caught += 1
    assert caught > 100

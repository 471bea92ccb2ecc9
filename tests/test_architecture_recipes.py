"""The recipes of docs/architecture.md, followed once: a new loss and a new uncertainty set."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import cvxpy as cp
import numpy as np
import pytest
from scipy.optimize import minimize

import robustsvm as rs
from robustsvm.terms.losses import LOSSES, loss_from_dict
from robustsvm.uncertainty import SET_TYPES, uncertainty_from_dict

from .conftest import make_classification

TIGHT = {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10}


# ------------------------------------------------------------------ a loss
@dataclass(frozen=True)
class SmoothHinge(rs.Loss):
    """``ℓ(m) = t²/2`` for ``0 ≤ t = 1 − m ≤ 1``, ``t − 1/2`` beyond, 0 below; ``ℓ*(α) = α²/2`` on [0, 1]."""

    name = "smooth_hinge_recipe"
    dual_upper = 1.0

    def value(self, margin):
        t = np.maximum(0.0, 1.0 - np.asarray(margin, dtype=np.float64))
        return np.where(t <= 1.0, 0.5 * t * t, t - 0.5)

    def dual_term(self, alpha):
        alpha = np.asarray(alpha, dtype=np.float64)
        return alpha - 0.5 * alpha * alpha

    def cvx(self, xi, coef):
        return coef @ (0.5 * cp.huber(xi, 1.0))


def test_new_loss_recipe():
    assert LOSSES["smooth_hinge_recipe"] is SmoothHinge
    assert loss_from_dict(SmoothHinge(reduction="sum").to_dict()) == SmoothHinge(reduction="sum")
    X, y = make_classification(80, 4, seed=2)
    prob = rs.Problem(loss=SmoothHinge(), penalty=rs.L2(0.1), signs=[1, 0, 0, -1], intercept=False)
    assert "clarabel" in [r["name"] for r in rs.solvers(prob) if r["accepts"]]
    assert not rs.get_backend("dcd").accepts(prob)
    sol = prob.solve(X, y, solver="clarabel", solver_options=TIGHT)
    ym = np.where(y == 1, 1.0, -1.0)

    def f(w):  # the smooth primal, written here with its gradient
        t = np.maximum(0.0, 1.0 - ym * (X @ w))
        dl = np.where(t <= 1.0, t, 1.0)
        value = 0.05 * w @ w + np.mean(np.where(t <= 1.0, 0.5 * t * t, t - 0.5))
        return value, 0.1 * w - X.T @ (dl * ym) / len(ym)

    bounds = [(0, None), (None, None), (None, None), (None, 0)]
    ref = minimize(f, np.zeros(4), jac=True, method="L-BFGS-B", bounds=bounds,
                   options={"gtol": 1e-12, "ftol": 1e-15})
    assert sol.objective == pytest.approx(ref.fun, rel=1e-6)
    np.testing.assert_allclose(sol.w, ref.x, atol=1e-4)


# ------------------------------------------------------------------- a set
class WeightedL1Ball(rs.UncertaintySet):
    """``V = {v : Σ_h |v_h|/δ_h ≤ 1}``, support ``σ_V(z) = max_h δ_h |z_h|``."""

    symmetric = True

    def __init__(self, radius=1.0, widths=None):
        super().__init__(radius)
        self.widths = None if widths is None else np.asarray(widths, dtype=np.float64)
        if self.widths is not None and (self.widths.ndim != 1 or np.any(self.widths <= 0)):
            raise ValueError("widths must be a 1-D array of positive numbers")

    def _delta(self, d):
        return np.ones(d) if self.widths is None else self.widths

    def support(self, z):
        z = np.asarray(z, dtype=np.float64)
        return np.max(np.abs(z) * self._delta(z.shape[-1]), axis=-1)

    def support_cvx(self, z):
        return cp.max(cp.multiply(self._delta(z.shape[0]), cp.abs(z))), []

    def worst_case(self, z):
        z = np.asarray(z, dtype=np.float64)
        delta = self._delta(z.shape[0])
        k = int(np.argmax(np.abs(z) * delta))
        v = np.zeros_like(z)
        v[k] = delta[k] * (1.0 if z[k] >= 0 else -1.0)
        return v

    def contains(self, v, tol=1e-8):
        v = np.asarray(v, dtype=np.float64)
        return bool(np.sum(np.abs(v) / self._delta(v.shape[0])) <= 1.0 + tol)

    def key(self):
        return ("WeightedL1Ball", None if self.widths is None else self.widths.tobytes())

    def to_dict(self):
        return {"type": "WeightedL1Ball", "radius": np.asarray(self.radius).tolist(),
                "widths": None if self.widths is None else self.widths.tolist()}


def test_new_set_recipe():
    assert SET_TYPES["WeightedL1Ball"] is WeightedL1Ball
    widths = np.array([1.0, 2.0, 0.5])
    s = WeightedL1Ball(0.3, widths)
    back = uncertainty_from_dict(s.to_dict())
    assert isinstance(back, WeightedL1Ball) and back.key() == s.key()
    rng = np.random.default_rng(0)
    vertices = [sign * widths[k] * np.eye(3)[k] for k, sign in itertools.product(range(3), (-1, 1))]
    for z in rng.normal(size=(20, 3)):  # brute force over the vertices of V
        assert s.support(z) == pytest.approx(max(v @ z for v in vertices))
        assert s.contains(s.worst_case(z)) and s.worst_case(z) @ z == pytest.approx(s.support(z))
    X, y = make_classification(60, 3, seed=4)
    for hinge in (rs.Hinge(), rs.SquaredHinge()):
        mine = rs.Problem(loss=hinge, penalty=rs.L2(0.2), uncertainty=WeightedL1Ball(0.1))
        ball = rs.Problem(loss=hinge, penalty=rs.L2(0.2), uncertainty=rs.Ball(0.1, p=1))
        a = mine.solve(X, y, solver_options=TIGHT)
        b = ball.solve(X, y, solver_options=TIGHT)
        assert a.objective == pytest.approx(b.objective, rel=1e-7)
        np.testing.assert_allclose(a.w, b.w, atol=1e-5)

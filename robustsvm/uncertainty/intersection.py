"""Intersection of two uncertainty sets, ``V = a V_A ∩ b V_B``."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._lazy import cvxpy as cp
from .base import NumericSupportMixin, UncertaintySet, direction_scale
from .pair import PairSet

__all__ = ["Intersection"]


class Intersection(NumericSupportMixin, PairSet):
    """The intersection of two sets, support by infimal convolution.

    ``σ_{V_A ∩ V_B}(z) = min{σ_A(z₁) + σ_B(z₂) : z₁ + z₂ = z}``, exact when the
    relative interiors of the two sets meet (or both are polyhedral).

    Radii: the components keep their (scalar) radii ``r_A``, ``r_B``. With
    ``s = max(r_A, r_B)``, the unit set is ``V = (r_A/s) V_A ∩ (r_B/s) V_B``
    (``V_A ∩ V_B`` when both radii are 0) and the intersection's radius defaults
    to ``s``, so that ``A & B`` is ``r_A V_A ∩ r_B V_B`` around each sample. A
    ``radius`` given here (a scalar or one per sample) replaces ``s``: it
    scales the whole intersection, which is what a radius sweep changes.

    The numpy support and worst case solve ``max z·v, v ∈ V`` with CVXPY (no
    closed form in general).

    Parameters
    ----------
    first, second : UncertaintySet
        Sets with scalar radii.
    radius : float or array of shape (n,), optional
    """

    def __init__(self, first: UncertaintySet, second: UncertaintySet, radius: Any = None) -> None:
        # both radii 0: the unit set is V_A ∩ V_B and the radius is 0
        super().__init__(first, second, radius, of="an intersection",
                         hint="give per-sample radii to the intersection itself: Intersection(A, B, radius=r)",
                         mismatch="cannot intersect a set in R^{a} with a set in R^{b}")
        self._checked_dims: set[int] = set()

    def check_dim(self, d: int) -> None:
        """Check both components live in ``R^d`` and that the intersection is not empty and has an interior."""
        super().check_dim(d)
        if d not in self._checked_dims:
            prob, z, _v = self._numeric_problem(d)
            z.value = np.zeros(d)
            prob.solve(solver=self._solver)
            if prob.status in ("infeasible", "infeasible_inaccurate"):
                raise ValueError("the intersection of the two sets is empty")
            self.center(d)  # an interior point (the certificates retract points towards it), or a clear error
            self._checked_dims.add(d)

    def support_cvx(self, z):
        """``a σ_A(z₁) + b σ_B(z − z₁)`` with ``z₁`` a free auxiliary variable (infimal convolution)."""
        a, b = self.scales
        z1 = cp.Variable(z.shape)
        eA, cA = self.first.support_cvx(z1)
        eB, cB = self.second.support_cvx(z - z1)
        return a * eA + b * eB, [*cA, *cB]

    @classmethod
    def support_many(cls, sets, Z):
        """``σ_{V_j}(z_j)`` by the infimal convolutions (the dual side), all pairs in one solve.

        The numpy :meth:`support` and :meth:`worst_case` maximize over the primal
        set; this path minimizes ``a σ_A(z₁) + b σ_B(z − z₁)``, so a certificate
        compares two independent computations.
        """
        Z = np.asarray(Z, dtype=np.float64)
        m = direction_scale(Z)  # each row solved as z_j / m_j: the terms separate, σ is homogeneous
        exprs, cons = [], []
        for s, z in zip(sets, Z / m[:, None], strict=True):
            e, c = s.support_cvx(cp.Constant(z))
            exprs.append(e)
            cons.extend(c)
        prob = cp.Problem(cp.Minimize(cp.sum(cp.hstack(exprs))), cons)
        prob.solve(solver=cls._solver)
        if prob.status not in ("optimal", "optimal_inaccurate"):
            raise RuntimeError(f"Intersection: the support problem ended with status {prob.status!r}")
        return m * np.array([float(e.value) for e in exprs])

    def membership_cvx(self, v):
        """``v/a ∈ V_A`` and ``v/b ∈ V_B`` (``v = 0`` for a zero scale)."""
        cons = []
        for s, scale in ((self.first, self.scales[0]), (self.second, self.scales[1])):
            cons.extend(s.membership_cvx(v / scale) if scale > 0 else [v == 0])
        return cons

    def scaled_membership_cvx(self, v, scale):
        """``v ∈ t a V_A`` and ``v ∈ t b V_B``."""
        cons = []
        for s, k in self._parts():
            cons.extend(s.scaled_membership_cvx(v, scale * k) if k > 0 else [v == 0])
        return cons

    def center(self, d):
        """A point interior to both ``a V_A`` and ``b V_B``.

        The origin when it is interior to both; otherwise the solution of
        ``min t`` subject to ``c ∈ (1 − t) a c_A + t a V_A`` and the same for
        ``B`` (``c_A``, ``c_B`` the components' centres; jointly convex through
        :meth:`scaled_membership_cvx`): ``t < 1`` puts ``c`` strictly inside both.
        """
        UncertaintySet.check_dim(self, d)  # dimensions only: check_dim itself asks for the centre
        cache = self.__dict__.setdefault("_centers", {})
        if d in cache:
            return cache[d].copy()
        parts = self._parts()
        if any(k == 0 for _, k in parts):  # one factor is {0}: so is the set (it is not empty)
            cache[d] = np.zeros(d)
            return cache[d].copy()
        centers = [s.center(d) for s, _ in parts]
        if all(s.gauge(np.zeros(d), ca) < 1.0 - 1e-9 for (s, _), ca in zip(parts, centers, strict=True)):
            cache[d] = np.zeros(d)
            return cache[d].copy()
        c = cp.Variable(d)
        t = cp.Variable()
        cons = [t >= 0, t <= 1]
        for (s, k), ca in zip(parts, centers, strict=True):
            cons.extend(s.scaled_membership_cvx(c - (1 - t) * (k * ca), k * t))
        prob = cp.Problem(cp.Minimize(t), cons)
        prob.solve(solver=self._solver)
        point = None if c.value is None else np.asarray(c.value, dtype=np.float64)
        if point is None or not max(
                s.gauge(point / k, ca) for (s, k), ca in zip(parts, centers, strict=True)) < 1.0 - 1e-9:
            raise ValueError("the intersection of the two sets has no interior point (its sets only touch)")
        cache[d] = point
        return point.copy()

    def gauge(self, v, center=None):
        """``max(γ_A(v/a; c/a), γ_B(v/b; c/b))``: the gauge of ``a V_A ∩ b V_B`` about ``c`` is the larger one."""
        v = np.asarray(v, dtype=np.float64)
        c = self.center(v.shape[0]) if center is None else np.asarray(center, dtype=np.float64)
        g = 0.0
        for s, k in self._parts():
            if k > 0:
                g = max(g, s.gauge(v / k, c / k))
            elif np.any(v != c):
                return float("inf")
        return g

    def contains(self, v, tol=1e-8):
        v = np.asarray(v, dtype=np.float64)
        for s, scale in ((self.first, self.scales[0]), (self.second, self.scales[1])):
            ok = s.contains(v / scale, tol=tol / scale) if scale > 0 else bool(np.all(np.abs(v) <= tol))
            if not ok:
                return False
        return True

    def to_dict(self):
        return {"type": "Intersection", "radius": np.asarray(self.radius).tolist(), "scales": list(self.scales),
                "first": self.first.to_dict(), "second": self.second.to_dict()}

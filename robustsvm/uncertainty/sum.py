"""Minkowski sum of two uncertainty sets, ``V = a V_A + b V_B``.

A point known only up to a measurement error in ``r_A V_A`` and, independently, up to a missing-value
set ``r_B V_B`` lies in ``x + r_A V_A + r_B V_B``. Support functions add over a sum,
``σ_{a V_A + b V_B}(z) = a σ_A(z) + b σ_B(z)``, and a maximizer is the sum of the components'
maximizers, so every operation is the components' own (``docs/uncertainty_sum.md``).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .._lazy import cvxpy as cp
from .base import UncertaintySet
from .pair import PairSet

__all__ = ["SetSum"]

#: the last worst cases remembered with their parts, so that :meth:`SetSum.retract` of one needs no solve
_REMEMBERED = 64


class SetSum(PairSet):
    """The Minkowski sum ``a V_A + b V_B``: support ``a σ_A(z) + b σ_B(z)``, worst case ``a v*_A + b v*_B``.

    Radii: the components keep their (scalar) radii ``r_A``, ``r_B``. With ``s = max(r_A, r_B)`` the unit
    set is ``V = (r_A/s) V_A + (r_B/s) V_B`` (``V_A + V_B`` when both radii are 0) and the sum's radius
    defaults to ``s``, so that ``A + B`` is ``r_A V_A + r_B V_B`` around each sample. A ``radius`` given
    here (a scalar or one per sample) replaces ``s`` and scales the whole sum.

    ``contains`` and :meth:`membership_cvx` need both components' ``scaled_membership_cvx`` (every set of
    the package has it): membership in a sum is the small conic feasibility problem
    ``min ‖v − u_A − u_B‖_∞`` over ``u_A ∈ a V_A``, ``u_B ∈ b V_B``. The gauge is the base class's bisection on
    :meth:`contains` (one solve per step); the certificates use :meth:`retract`, which needs one solve at most.

    Parameters
    ----------
    first, second : UncertaintySet
        Sets with scalar radii, in the same dimension.
    radius : float or array of shape (n,), optional
    """

    _solver: str = "CLARABEL"

    def __init__(self, first: UncertaintySet, second: UncertaintySet, radius: Any = None) -> None:
        super().__init__(first, second, radius, of="a sum",
                         hint="give per-sample radii to the sum itself: SetSum(A, B, radius=r), or one sum per sample",
                         mismatch="cannot add a set in R^{a} to a set in R^{b}")

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state.pop("_parts_of", None)  # remembered worst cases: rebuilt on demand
        return state

    def support(self, z):
        """``a σ_A(z) + b σ_B(z)`` (each row of a matrix)."""
        z = np.asarray(z, dtype=np.float64)
        total = np.zeros(z.shape[:-1])
        for s, k in self._parts():
            if k > 0:
                total = total + k * np.asarray(s.support(z), dtype=np.float64)
        return float(total) if total.ndim == 0 else total

    def support_cvx(self, z):
        """``a e_A + b e_B`` with both components' constraints."""
        exprs, cons = [], []
        for s, k in self._parts():
            if k > 0:
                e, c = s.support_cvx(z)
                exprs.append(k * e)
                cons.extend(c)
        return (exprs[0] if len(exprs) == 1 else exprs[0] + exprs[1]), cons

    def worst_case(self, z):
        """``a v*_A + b v*_B``: the sum of the components' maximizers maximizes ``z·v`` over the sum."""
        z = np.asarray(z, dtype=np.float64)
        parts = [k * np.asarray(s.worst_case(z), dtype=np.float64) if k > 0 else np.zeros_like(z)
                 for s, k in self._parts()]
        v = parts[0] + parts[1]
        memo = self.__dict__.setdefault("_parts_of", {})
        if len(memo) >= _REMEMBERED:
            memo.pop(next(iter(memo)))
        memo[v.tobytes()] = parts
        return v

    def membership_cvx(self, v):
        """``v = u_A + u_B`` with ``u_A ∈ a V_A`` and ``u_B ∈ b V_B`` (``u_A`` an auxiliary variable)."""
        return self.scaled_membership_cvx(v, 1.0)

    def scaled_membership_cvx(self, v, scale):
        """``v ∈ t(a V_A + b V_B)``: ``v = u_A + u_B``, ``u_A ∈ t a V_A``, ``u_B ∈ t b V_B``."""
        (A, a), (B, b) = self._parts()
        u = cp.Variable(v.shape)
        cons = A.scaled_membership_cvx(u, scale * a) if a > 0 else [u == 0]
        cons += B.scaled_membership_cvx(v - u, scale * b) if b > 0 else [v - u == 0]
        return cons

    def _decompose(self, v: np.ndarray) -> tuple[float, list[np.ndarray]]:
        """``min ‖v − u_A − u_B‖_∞`` over ``u_A ∈ a V_A``, ``u_B ∈ b V_B`` (a conic solve), then each part pulled
        into its own set (the components' retractions): ``(‖v − u_A − u_B‖_∞ in numpy, [u_A, u_B])``, a distance
        attained by points of the sets, so never smaller than the true one."""
        (A, a), (B, b) = self._parts()
        d = v.shape[0]
        uA, uB = cp.Variable(d), cp.Variable(d)
        cons = (A.scaled_membership_cvx(uA, a) if a > 0 else [uA == 0]) + (
            B.scaled_membership_cvx(uB, b) if b > 0 else [uB == 0])
        m = max(1.0, float(np.max(np.abs(v), initial=0.0)))
        prob = cp.Problem(cp.Minimize(cp.norm_inf(v / m - uA / m - uB / m)), cons)
        with warnings.catch_warnings():  # an inaccurate solve: the distance below is measured on exact set points
            warnings.simplefilter("ignore", UserWarning)
            prob.solve(solver=self._solver, tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11)
        if prob.status not in ("optimal", "optimal_inaccurate") or uA.value is None:
            raise RuntimeError(f"SetSum: the membership problem ended with status {prob.status!r}")
        parts = [k * s.retract(np.asarray(u.value, dtype=np.float64) / k) if k > 0 else np.zeros(d)
                 for (s, k), u in zip(self._parts(), (uA, uB), strict=True)]
        return float(np.max(np.abs(v - parts[0] - parts[1]), initial=0.0)), parts

    def contains(self, v, tol=1e-8):
        """Whether points ``u_A ∈ a V_A``, ``u_B ∈ b V_B`` have ``‖v − u_A − u_B‖_∞ ≤ tol``.

        A conic solve finds the nearest decomposition; its parts are pulled into their sets and the distance
        is measured in numpy, so ``True`` is exact (a point the solver leaves off by more than ``tol`` reads as
        outside).
        """
        v = np.asarray(v, dtype=np.float64)
        self.check_dim(v.shape[0])
        return self._decompose(v)[0] <= tol

    def center(self, d):
        """``a c_A + b c_B``: a sum of interior points is interior to the sum."""
        self.check_dim(d)
        return sum(k * s.center(d) for s, k in self._parts()) + np.zeros(d)

    def retract(self, v):
        """A point of the sum near ``v``: ``a R_A(u_A/a) + b R_B(u_B/b)`` with the components' retractions.

        ``(u_A, u_B)`` are the parts of a worst case this set returned (no solve), or else the nearest
        decomposition of ``v`` (:meth:`contains`'s problem); each part is pulled into its own set.
        """
        v = np.asarray(v, dtype=np.float64)
        parts = self.__dict__.get("_parts_of", {}).get(v.tobytes())
        if parts is None:
            return np.sum(self._decompose(v)[1], axis=0)
        out = np.zeros_like(v)
        for (s, k), u in zip(self._parts(), parts, strict=True):
            if k > 0:
                out += k * s.retract(u / k)
        return out

    def to_dict(self):
        return {"type": "SetSum", "radius": np.asarray(self.radius).tolist(), "first": self.first.to_dict(),
                "second": self.second.to_dict()}

    @classmethod
    def from_dict(cls, spec: dict) -> SetSum:
        """The sum of :meth:`to_dict`: both components rebuilt, the radius as stored."""
        from .serialize import uncertainty_from_dict

        radius = spec.get("radius")
        radius = np.asarray(radius, dtype=np.float64) if isinstance(radius, list) else radius
        return cls(uncertainty_from_dict(spec["first"]), uncertainty_from_dict(spec["second"]), radius=radius)

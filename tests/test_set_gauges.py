"""Each set's gauge, retraction and polyhedral flag; the Lagrangian bound with retracted points.

Membership is judged by predicates written here from each set's definition (not by the set's own
``contains``), the gauge against a bisection on those predicates, and the bound against the
objective of a CVXPY solve of the robust model written here (any feasible point's objective is at
least the optimum, so ``bound ≤ P(w_ref)`` is a claim the test can prove).
"""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pytest

import robustsvm as rs
from robustsvm.certificates.duality import (
    BoundTerms,
    admissible_multipliers,
    lagrangian_bound,
    multipliers_from_margins,
)
from robustsvm.certificates.set_points import retract
from robustsvm.uncertainty.spectrahedron import Spectrahedron

D = 3
RNG = np.random.default_rng(7)
G_POLY = np.vstack([RNG.normal(size=(4, D)), np.eye(D), -np.eye(D)])
H_POLY = np.concatenate([RNG.uniform(0.5, 2.0, 4), RNG.uniform(0.5, 2.0, D), RNG.uniform(0.5, 2.0, D)])
SHIFT = np.array([2.0, -1.0, 0.5])  # a polytope and a spectrahedron that do not contain the origin
ELL = np.array([[2.0, 0.3, 0.0], [0.3, 1.0, 0.2], [0.0, 0.2, 0.5]])


def elliptope(shift=None):
    """``{x : [[1, x1, x2], [x1, 1, x3], [x2, x3, 1]] ⪰ 0}``, moved by ``shift``."""
    A = np.zeros((3, 3, 3))
    for l, (i, j) in enumerate([(0, 1), (0, 2), (1, 2)]):
        A[l, i, j] = A[l, j, i] = 1.0
    A0 = np.eye(3) if shift is None else np.eye(3) - np.tensordot(shift, A, axes=1)
    return A0, A


def lmi_member(A0, A):
    return lambda v: np.linalg.eigvalsh(A0 + np.tensordot(v, A, axes=1)).min() >= -1e-9


with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    SPEC = Spectrahedron(*elliptope())
    SPEC_OFF = Spectrahedron(*elliptope(SHIFT))

#: (set, membership written from the definition)
CASES = {
    "box": (rs.Box(widths=[0.5, 1.0, 2.0]), lambda v: np.all(np.abs(v) <= np.array([0.5, 1.0, 2.0]) + 1e-12)),
    "ball1": (rs.Ball(p=1), lambda v: np.sum(np.abs(v)) <= 1 + 1e-12),
    "ball1.5": (rs.Ball(p=1.5), lambda v: np.sum(np.abs(v) ** 1.5) <= 1 + 1e-12),
    "ball2": (rs.Ball(), lambda v: v @ v <= 1 + 1e-12),
    "ball4": (rs.Ball(p=4), lambda v: np.sum(v**4) <= 1 + 1e-12),
    "ballinf": (rs.Ball(p=np.inf), lambda v: np.max(np.abs(v)) <= 1 + 1e-12),
    "ellipsoid": (rs.Ellipsoid(ELL), lambda v: v @ np.linalg.solve(ELL, v) <= 1 + 1e-12),
    "polyhedron": (rs.Polyhedron(G_POLY, H_POLY), lambda v: np.all(G_POLY @ v <= H_POLY + 1e-12)),
    "polyhedron-off-origin": (rs.Polyhedron(G_POLY, H_POLY + G_POLY @ SHIFT),
                              lambda v: np.all(G_POLY @ (v - SHIFT) <= H_POLY + 1e-12)),
    "spectrahedron": (SPEC, lmi_member(*elliptope())),
    "spectrahedron-off-origin": (SPEC_OFF, lmi_member(*elliptope(SHIFT))),
    "box&ball": (rs.Box(0.6) & rs.Ball(1.0), lambda v: np.max(np.abs(v)) <= 0.6 + 1e-12 and v @ v <= 1 + 1e-12),
    "polyhedron&box": (rs.Polyhedron(G_POLY, H_POLY + G_POLY @ SHIFT) & rs.Box(1.0, widths=[2.5, 3.0, 3.0]),
                       lambda v: np.all(G_POLY @ (v - SHIFT) <= H_POLY + 1e-12)
                       and np.all(np.abs(v) <= np.array([2.5, 3.0, 3.0]) + 1e-12)),
    # unit set (1/3)·P ∩ B_3 (radii 1 and 3): the ball's gauge about a centre other than the origin
    "polyhedron&ball3": (rs.Polyhedron(G_POLY, H_POLY + G_POLY @ SHIFT) & rs.Ball(3.0, p=3),
                         lambda v: np.all(G_POLY @ (3 * v - SHIFT) <= H_POLY + 1e-12)
                         and np.sum(np.abs(v) ** 3) <= 1 + 1e-12),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_point_pushed_outside_is_retracted_into_the_set(name):
    uset, member = CASES[name]
    rng = np.random.default_rng(len(name))
    c = uset.center(D)
    assert member(c)
    for _ in range(10):
        z = rng.normal(size=D)
        v = uset.worst_case(z)
        outside = c + 1.5 * (v - c)  # beyond the boundary along the ray from the centre
        assert not member(outside)
        r = uset.retract(outside)
        assert member(r) and uset.contains(r, tol=0.0)
        np.testing.assert_array_equal(retract(uset, outside), r)  # what the certificates call
        # close to the boundary: the retracted point moves little from the exit point of the ray
        assert np.linalg.norm(r - c) >= (1 - 1e-3) * np.linalg.norm(v - c) or name.startswith("box")
        inside = c + 0.5 * (v - c)
        np.testing.assert_array_equal(uset.retract(inside), inside)


@pytest.mark.parametrize("name", sorted(CASES))
def test_gauge_is_the_exit_point_of_the_ray_from_the_centre(name):
    uset, member = CASES[name]
    rng = np.random.default_rng(1 + len(name))
    c = uset.center(D)
    for _ in range(5):
        u = rng.normal(size=D)
        lo, hi = 0.0, 1.0
        while member(c + hi * u):
            hi *= 2.0
        for _ in range(60):  # bisection on the test's own membership
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if member(c + mid * u) else (lo, mid)
        expected = 1.0 / lo
        for t in (0.3, 1.0, 2.5):  # γ_c(c + t u) = t γ_c(c + u): positively homogeneous about c
            assert uset.gauge(c + t * u) == pytest.approx(t * expected, rel=1e-6)


@pytest.mark.parametrize(("uset", "polyhedral"), [
    (rs.Box(0.1), True), (rs.Ball(0.1, p=1), True), (rs.Ball(0.1, p=np.inf), True), (rs.Ball(0.1), False),
    (rs.Ball(0.1, p=3), False), (rs.Ellipsoid(ELL), False), (rs.Polyhedron(G_POLY, H_POLY), True),
    (SPEC, False), (rs.Box(0.1) & rs.Ball(0.2, p=1), True), (rs.Box(0.1) & rs.Ball(0.2), False),
    (rs.Polyhedron(G_POLY, H_POLY) & rs.Box(0.3), True),
])
def test_a_set_says_whether_it_is_polyhedral(uset, polyhedral):
    assert uset.is_polyhedral is polyhedral


def test_a_diagonal_spectrahedron_is_polyhedral():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        box = Spectrahedron(np.eye(4), np.array([np.diag([1.0, -1.0, 0, 0]), np.diag([0, 0, 1.0, -1.0])]))
    assert box.is_polyhedral


# ------------------------------------------------------- the bound on polyhedra, spectrahedra, intersections
def _data(seed=3, n=40):
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    X = rng.normal(size=(n, D)) + 0.8 * y[:, None] * np.array([1.0, -0.5, 0.3])
    return X, y


def _support_cvx_by_hand(name, z):
    """``σ_V(z)`` in CVXPY, written here from each set's definition (LP, SDP and infimal-convolution duals)."""
    if name == "polyhedron-off-origin":
        G, h = G_POLY, H_POLY + G_POLY @ SHIFT
        mu = cp.Variable(G.shape[0], nonneg=True)
        return G.T @ mu == z, h @ mu
    if name == "spectrahedron-off-origin":
        A0, A = elliptope(SHIFT)
        W = cp.Variable((3, 3), PSD=True)
        return [cp.trace(A[l] @ W) == -z[l] for l in range(D)], cp.trace(A0 @ W)
    z1 = cp.Variable(D)  # box(0.6) & ball(1): σ(z) = min 0.6‖z1‖₁ + ‖z − z1‖₂
    return [], 0.6 * cp.norm1(z1) + cp.norm2(z - z1)


@pytest.mark.parametrize("name", ["polyhedron-off-origin", "spectrahedron-off-origin", "box&ball"])
def test_lagrangian_bound_with_retracted_points_stays_below_the_optimum(name):
    uset, _member = CASES[name]
    X, y = _data()
    n = X.shape[0]
    lam, radius = 0.1, 0.3
    # the robust hinge model written here: m_i = y_i(x_i·w + b) − r σ(−y_i w), one σ per label
    w, b = cp.Variable(D), cp.Variable()
    cons, t = [], {}
    for label in (1.0, -1.0):
        c_, e = _support_cvx_by_hand(name, -label * w)
        cons += c_ if isinstance(c_, list) else [c_]
        t[label] = e
    margin = cp.multiply(y, X @ w + b) - radius * cp.hstack([t[lab] for lab in y])
    ref = cp.Problem(cp.Minimize(0.5 * lam * cp.sum_squares(w) + cp.sum(cp.pos(1 - margin)) / n), cons)
    ref.solve(solver="CLARABEL")
    problem = rs.Problem(penalty=rs.L2(lam), uncertainty=uset.with_radius(radius))
    w_ref, b_ref = np.asarray(w.value), float(b.value)
    upper = problem.objective(X, y, w_ref, b_ref)  # ≥ the optimum: (w_ref, b_ref) is feasible
    model = problem.normalize(X, y)
    margins = problem.robust_margins(X, y, w_ref, b_ref)
    a = admissible_multipliers(multipliers_from_margins("hinge", margins, model.c), y, model.c, "hinge", "free")
    # a solver's points just outside the set: the worst cases at w_ref pushed 2% beyond the boundary
    c = uset.center(D)
    points = {}
    for label in (1.0, -1.0):
        v = uset.worst_case(-label * w_ref)
        points[label] = c + 1.02 * (v - c)
        assert not uset.contains(points[label], tol=1e-6)

    def bound_with(pts):
        def shift(ay):
            return sum(radius * float(ay[y == lab].sum()) * pts[lab] for lab in (1.0, -1.0))
        terms = BoundTerms(X, y, model.c, loss="hinge", l2=lam, l1=0.0, signs=np.zeros(D), intercept="free")
        return lagrangian_bound(terms, a, shift=shift)[0]

    retracted = {lab: uset.retract(p) for lab, p in points.items()}
    assert all(uset.contains(p, tol=0.0) for p in retracted.values())
    bound = bound_with(retracted)
    assert bound <= upper
    assert bound >= upper - 0.05 * max(1.0, upper)  # and still a useful bound


def test_the_estimators_tight_tolerance_asks_the_sets_whether_they_are_polyhedral():
    from robustsvm.solve_path import FALLBACK, TIGHT_CONIC_TOL, tight_defaults

    def tight(uncertainty) -> bool:
        return bool(tight_defaults(rs.Problem(penalty=rs.L2(1.0), uncertainty=uncertainty)))

    poly = rs.Polyhedron(G_POLY, H_POLY)
    assert tight_defaults(rs.Problem(uncertainty=poly)) == {FALLBACK: {"tol": TIGHT_CONIC_TOL}}
    assert tight(None) and tight(poly) and tight([poly, rs.Box(0.1)])
    assert tight(poly & rs.Ball(1.0, p=np.inf))
    assert not tight([poly, rs.Ball(0.1)]) and not tight(SPEC)


def test_an_intersection_without_interior_is_refused_when_the_model_is_checked():
    G = np.vstack([np.eye(2), -np.eye(2)])
    left = rs.Polyhedron(G, np.array([0.0, 1.0, 1.0, 1.0]))   # −1 ≤ v_1 ≤ 0
    right = rs.Polyhedron(G, np.array([1.0, 1.0, 0.0, 1.0]))  # 0 ≤ v_1 ≤ 1: they share only v_1 = 0
    X = np.array([[0.0, 1.0], [1.0, 0.0], [-1.0, 0.5], [0.5, -1.0]])
    y = np.array([0, 1, 0, 1])
    with pytest.raises(ValueError, match="no interior point"):
        rs.Problem(penalty=rs.L2(1.0), uncertainty=left & right).solve(X, y)

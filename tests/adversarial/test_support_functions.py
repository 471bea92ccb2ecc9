"""Support functions at every scale and parameter range, against independent computations.

References used here, none of them robustsvm code:

* ``‖z‖_q`` in 60-digit decimal arithmetic (:mod:`decimal`, unbounded exponent range), with
  ``q`` the exact dual exponent of the float ``p``;
* ``Σ δ_h |z_h|`` and ``zᵀMz`` in exact rational arithmetic (:mod:`fractions`);
* the largest ``z·p`` over the vertices of a polytope built from its vertices (brute force);
* closed forms of sets written as an intersection or an LMI (``ℓ1`` ball, disc);
* for the CVXPY side, the closed form above.

Directions span magnitudes from 1e-8 to 1e8, within one vector and across vectors; the
exponent ``p`` spans ``1 + 1e-9`` to ``1e12``.
"""

from __future__ import annotations

import math
import warnings
from decimal import Context, Decimal, localcontext
from fractions import Fraction

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st
from scipy.spatial import ConvexHull

import robustsvm as rs
from robustsvm.uncertainty.ball import _pnorm_cvx

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SOLVES = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])

_CTX = Context(prec=60, Emax=10**15, Emin=-(10**15))


# ------------------------------------------------------------------ strategies
@st.composite
def magnitudes(draw) -> float:
    """``±10^e`` with ``e`` uniform in [−8, 8], or an exact 0."""
    if draw(st.integers(0, 9)) == 0:
        return 0.0
    e = draw(st.floats(-8, 8, allow_nan=False))
    return draw(st.sampled_from([-1.0, 1.0])) * 10.0**e


@st.composite
def directions(draw, d: int | None = None) -> np.ndarray:
    if d is None:
        d = draw(st.integers(1, 6))
    z = np.array([draw(magnitudes()) for _ in range(d)])
    if draw(st.booleans()):  # one common scale instead of mixed magnitudes
        z = np.sign(z) * draw(st.floats(0.1, 1.0)) * 10.0 ** draw(st.floats(-8, 8))
        z = z * (1.0 + np.arange(d) / (d + 1.0))
    assume(np.any(z != 0))
    return z


@st.composite
def exponents(draw) -> float:
    """``p`` near 1 (``1 + 10^-9 … 1 + 10``), moderate, near ∞ (up to 1e12), or exactly 1, 2, ∞."""
    kind = draw(st.integers(0, 3))
    if kind == 0:
        return 1.0 + 10.0 ** draw(st.floats(-9, 1))
    if kind == 1:
        return 10.0 ** draw(st.floats(0.05, 12))
    if kind == 2:
        return draw(st.floats(1.5, 8))
    return draw(st.sampled_from([1.0, 2.0, math.inf]))


# ------------------------------------------------------------------ references
def dual_exponent(p: float) -> Decimal | None:
    """The exact ``q = p / (p − 1)`` of the float ``p`` (None for q = ∞)."""
    if p == 1:
        return None
    if math.isinf(p):
        return Decimal(1)
    with localcontext(_CTX):
        P = Decimal(p)
        return P / (P - 1)


def qnorm_decimal(z: np.ndarray, q: Decimal | None) -> float:
    """``(Σ |z_h|^q)^{1/q}`` in 60-digit decimal arithmetic (``max |z_h|`` for q = ∞)."""
    a = [Decimal(abs(float(v))) for v in z]
    if q is None:
        return float(max(a))
    with localcontext(_CTX):
        total = sum((x**q for x in a if x != 0), Decimal(0))
        if total == 0:
            return 0.0
        return float(total ** (1 / q))


def pnorm_decimal(v: np.ndarray, p: float) -> float:
    if math.isinf(p):
        return float(max(abs(Decimal(float(x))) for x in v))
    with localcontext(_CTX):
        return float(sum((abs(Decimal(float(x))) ** Decimal(p) for x in v if x != 0), Decimal(0)) ** (1 / Decimal(p)))


def dot_exact(z: np.ndarray, v: np.ndarray) -> float:
    return float(sum((Fraction(float(a)) * Fraction(float(b)) for a, b in zip(z, v, strict=True)), Fraction(0)))


def close(a: float, b: float, rtol: float) -> bool:
    return abs(a - b) <= rtol * max(abs(a), abs(b), 1e-300)


# ---------------------------------------------------------------------- Ball
@FAST
@given(z=directions(), p=exponents())
@example(z=np.array([1e4, 1.0]), p=1.01)
@example(z=np.array([0.3, -0.1, 0.05]), p=1.0001)
@example(z=np.array([1e-8, 3e-9, 2e-8]), p=1.0 + 1e-9)
@example(z=np.array([1e8, -1e8, 5e7]), p=1e12)
def test_ball_support_matches_high_precision_norm(z, p):
    ball = rs.Ball(1.0, p=p)
    ref = qnorm_decimal(z, dual_exponent(p))
    got = ball.support(z)
    assert np.isfinite(got)
    assert close(got, ref, 1e-12), (got, ref)
    # the batched form and the radius scaling agree with the same reference
    rows = np.vstack([z, 2.0 * z])
    assert np.allclose(ball.support(rows), [ref, 2.0 * ref], rtol=1e-12, atol=0)
    assert np.allclose(rs.Ball.support_many([ball, ball], rows), [ref, 2.0 * ref], rtol=1e-12, atol=0)
    assert close(rs.Ball(0.2, p=p).scaled_support(z), 0.2 * ref, 1e-12)


@FAST
@given(z=directions(), p=exponents())
@example(z=np.array([1e4, 1.0]), p=1.01)
@example(z=np.array([1.0, 1.0 - 1e-12, 0.5]), p=1.0 + 1e-9)
@example(z=np.array([1e-8, 1e8]), p=1e9)
def test_ball_worst_case_is_in_the_ball_and_attains_the_support(z, p):
    ball = rs.Ball(1.0, p=p)
    ref = qnorm_decimal(z, dual_exponent(p))
    v = ball.worst_case(z)
    assert np.all(np.isfinite(v))
    assert pnorm_decimal(v, p) <= 1.0 + 1e-12
    assert ball.contains(v, tol=1e-12)
    assert close(dot_exact(z, v), ref, 1e-9), (dot_exact(z, v), ref)
    values, V = rs.Ball.maximize_many([ball, ball], np.vstack([z, -z]))
    assert np.allclose(values, [ref, ref], rtol=1e-12, atol=0)
    assert close(dot_exact(-z, V[1]), ref, 1e-9)


def test_ball_near_one_issue_examples():
    """The two values the unscaled formula got wrong: an underflow to 0 and an overflow to inf."""
    z = np.array([0.3, -0.1, 0.05])
    # q = 10001: the norm is the largest entry times (1 + O(1/q))
    assert close(rs.Ball(0.2, p=1.0001).support(z), qnorm_decimal(z, dual_exponent(1.0001)), 1e-12)
    assert rs.Ball(0.2, p=1.0001).support(z) >= 0.3  # at least the largest entry (it was 0)
    ref = qnorm_decimal(np.array([1e4, 1.0]), dual_exponent(1.01))
    assert close(rs.Ball(1, p=1.01).support([1e4, 1.0]), ref, 1e-12)  # it was inf


def test_ball_membership_for_extreme_p():
    for p in (1e8, 1.0 + 1e-9):
        ball = rs.Ball(1.0, p=p)
        for v in (np.array([1.0, 1.0, -1.0]), np.array([1e-5, 3.0, 1e5]), np.array([2e-300, -1e-300])):
            norm = pnorm_decimal(v, p)
            assert ball.contains(v / norm * (1 - 1e-9), tol=0.0)
            assert not ball.contains(v / norm * (1 + 1e-9), tol=0.0)


@pytest.mark.parametrize("p", [1.0 + 1e-7, 1.0001, 1.01, 100.0, 1e5, 1e9])
def test_ball_cvxpy_side_is_consistent_for_extreme_p(p):
    """The compiled support (``min t ≥ ‖z‖_q``) and the compiled set (``max z·v, ‖v‖_p ≤ 1``) give the closed form.

    Directions of unit scale, as a well-scaled model passes them to the solver.
    """
    rng = np.random.default_rng(7)
    ball = rs.Ball(1.0, p=p)
    for d in (2, 6, 40):
        z = rng.normal(size=d)
        ref = qnorm_decimal(z, dual_exponent(p))
        t = cp.Variable()
        x = cp.Variable(d)
        expr, cons = ball.support_cvx(x)
        cp.Problem(cp.Minimize(t), [x == z, expr <= t, *cons]).solve(solver="CLARABEL")
        assert close(float(t.value), ref, 1e-6), (d, float(t.value), ref)
        v = cp.Variable(d)
        prob = cp.Problem(cp.Maximize(z @ v), ball.membership_cvx(v))
        prob.solve(solver="CLARABEL")
        assert close(float(z @ v.value), ref, 1e-6), (d, float(z @ v.value), ref)
        assert close(float(z @ v.value), ball.support(z), 1e-6)


def test_ball_near_one_model_objective_is_the_true_one():
    """Clarabel on ``Ball(0.2, p=1.0001)``: the reported objective is the model's, evaluated independently.

    The independent evaluation uses the decimal ``‖w‖_q``; the independent optimum is the same
    model written here in CVXPY.
    """
    from sklearn.datasets import load_breast_cancer

    data = load_breast_cancer()
    X = data.data[:60, :5]
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    y = data.target[:60]
    ypm = np.where(y == 1, 1.0, -1.0)
    p, r, lam = 1.0001, 0.2, 1.0
    sol = rs.Problem(rs.Hinge(), rs.L2(lam), uncertainty=rs.Ball(r, p=p)).solve(X, y, solver="clarabel")
    q = dual_exponent(p)

    def objective(w: np.ndarray, b: float) -> float:
        margins = ypm * (X @ w + b) - r * qnorm_decimal(w, q)
        return 0.5 * lam * float(w @ w) + float(np.mean(np.maximum(0.0, 1.0 - margins)))

    assert close(sol.objective, objective(sol.w, sol.b), 1e-9), (sol.objective, objective(sol.w, sol.b))
    w, b = cp.Variable(5), cp.Variable()
    model = cp.Problem(cp.Minimize(
        0.5 * lam * cp.sum_squares(w)
        + cp.sum(cp.pos(1 - cp.multiply(ypm, X @ w + b) + r * _pnorm_cvx(w, float(q)))) / 60))
    model.solve(solver="CLARABEL")
    # CVXPY's own value of this model evaluates ‖w‖_q with numpy's unscaled norm (0 here): re-evaluate
    assert abs(sol.objective - objective(w.value, float(b.value))) <= 1e-6


# ------------------------------------------------------------------------ Box
@FAST
@given(z=directions(), data=st.data())
def test_box_support_exact(z, data):
    d = z.shape[0]
    widths = None if data.draw(st.booleans()) else np.array([data.draw(st.floats(1e-3, 1e3)) for _ in range(d)])
    box = rs.Box(1.0, widths=widths)
    delta = np.ones(d) if widths is None else widths
    ref = float(sum((abs(Fraction(float(a))) * Fraction(float(b)) for a, b in zip(z, delta, strict=True)), Fraction(0)))
    assert close(box.support(z), ref, 1e-13)
    v = box.worst_case(z)
    assert box.contains(v, tol=0.0)
    assert close(dot_exact(z, v), ref, 1e-13)


# ------------------------------------------------------------------ Ellipsoid
@FAST
@given(z=directions(d=3), seed=st.integers(0, 2**16), shape_scale=st.floats(-4, 4))
def test_ellipsoid_support_exact(z, seed, shape_scale):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(3, 3))
    M = (A @ A.T + np.eye(3)) * 10.0**shape_scale
    ell = rs.Ellipsoid(M)
    M = ell.shape  # the symmetrized matrix the set holds
    quad = sum(Fraction(float(z[i])) * Fraction(float(M[i, j])) * Fraction(float(z[j]))
               for i in range(3) for j in range(3))
    with localcontext(_CTX):
        ref = float((Decimal(quad.numerator) / Decimal(quad.denominator)).sqrt())
    assert close(ell.support(z), ref, 1e-10), (ell.support(z), ref)
    v = ell.worst_case(z)
    assert ell.contains(v, tol=1e-9)
    assert close(dot_exact(z, v), ref, 1e-9)


# ----------------------------------------------------------------- Polyhedron
@SOLVES
@given(z=directions(d=2), seed=st.integers(0, 2**16))
@example(z=np.array([1e-9 * 0.3, -1e-9]), seed=3)
def test_polyhedron_support_matches_best_vertex(z, seed):
    """The LP's value equals the best of the polytope's vertices, for directions of any magnitude."""
    rng = np.random.default_rng(seed)
    points = rng.normal(size=(12, 2))
    hull = ConvexHull(points)
    G, h = hull.equations[:, :2], -hull.equations[:, 2]
    poly = rs.Polyhedron(G, h)
    vertices = points[hull.vertices]
    ref = max(dot_exact(z, p) for p in vertices)
    scale = float(np.max(np.abs(z)))
    assert abs(poly.support(z) - ref) <= 1e-7 * scale
    v = poly.worst_case(z)
    assert poly.contains(v, tol=1e-7)
    assert abs(dot_exact(z, v) - ref) <= 1e-7 * scale
    Z = np.vstack([z, z * 1e8 if scale < 1 else z * 1e-8])
    refs = np.array([ref, ref * (1e8 if scale < 1 else 1e-8)])
    assert np.all(np.abs(rs.Polyhedron.support_many([poly, poly], Z) - refs) <= 1e-7 * np.max(np.abs(Z), axis=1))


def test_polyhedron_tiny_direction_finds_the_right_vertex():
    """A cost of order 1e-8 is below HiGHS's dual tolerance unless the direction is rescaled (it returned 0)."""
    points = np.random.default_rng(0).normal(size=(12, 2))
    hull = ConvexHull(points)
    poly = rs.Polyhedron(hull.equations[:, :2], -hull.equations[:, 2])
    for z in (np.array([0.0, -1e-8]), np.array([2e-9, 1e-9])):
        ref = max(dot_exact(z, p) for p in points[hull.vertices])
        assert close(poly.support(z), ref, 1e-7), (poly.support(z), ref)
        assert close(dot_exact(z, poly.worst_case(z)), ref, 1e-7)


# --------------------------------------------------- sets solved numerically
def l1_ball_as_intersection() -> rs.Intersection:
    """``Box(1) ∩ Ball(1, p=1)``: the cross-polytope, whose support is ``‖z‖_∞``."""
    return rs.Intersection(rs.Box(1.0), rs.Ball(1.0, p=1))


def disc_as_spectrahedron() -> rs.Spectrahedron:
    """``[[1, v1, v2], [v1, 1, 0], [v2, 0, 1]] ⪰ 0`` ⟺ ``v1² + v2² ≤ 1``: support ``‖z‖₂``."""
    A = np.zeros((2, 3, 3))
    A[0, 0, 1] = A[0, 1, 0] = 1.0
    A[1, 0, 2] = A[1, 2, 0] = 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # it is an arrow LMI: a ball would be cheaper
        return rs.Spectrahedron(np.eye(3), A)


@SOLVES
@given(z=directions(d=2))
@example(z=np.array([3e-9, -1e-9]))
@example(z=np.array([2e8, 5e7]))
def test_numeric_sets_at_every_scale(z):
    inter, disc = l1_ball_as_intersection(), disc_as_spectrahedron()
    ref_inf = float(np.max(np.abs(z)))
    ref_2 = qnorm_decimal(z, Decimal(2))
    for s, ref in ((inter, ref_inf), (disc, ref_2)):
        assert close(s.support(z), ref, 1e-6), (s, s.support(z), ref)
        v = s.worst_case(z)
        assert s.contains(v, tol=1e-6)
        assert close(dot_exact(z, v), ref, 1e-6)
        Z = np.vstack([z, -z, 1e4 * z])
        refs = np.array([ref, ref, 1e4 * ref])
        assert np.allclose(type(s).support_many([s, s, s], Z), refs, rtol=1e-6, atol=0)
        values, V = type(s).maximize_many([s, s, s], Z)
        assert np.allclose(values, refs, rtol=1e-6, atol=0)
        assert all(s.contains(vj, tol=1e-6) for vj in V)


@pytest.mark.parametrize(
    ("build", "name"),
    [
        (lambda: rs.Ball(1.0 + 0.5j), "radius"),
        (lambda: rs.Ball(np.array([0.1, 0.2j])), "radius"),
        (lambda: rs.Ball("0.5"), "radius"),
        (lambda: rs.Ball(1.0, p=2 + 1j), "p"),
        (lambda: rs.Ball(1.0, p="2"), "p"),
        (lambda: rs.Box(1.0, widths=[1.0, 1j]), "widths"),
        (lambda: rs.Ellipsoid(np.eye(2) * (1 + 1j)), "shape"),
        (lambda: rs.Polyhedron(np.vstack([np.eye(2), -np.eye(2)]) * (1 + 0.1j), np.ones(4)), "G"),
        (lambda: rs.Polyhedron(np.vstack([np.eye(2), -np.eye(2)]), np.ones(4) * 1j), "h"),
        (lambda: rs.Spectrahedron(np.eye(2), [np.array([[0, 1j], [-1j, 0]])]), "A"),
    ],
)
def test_complex_or_string_set_parameters_are_refused(build, name):
    """``np.asarray(..., dtype=float)`` would drop the imaginary part with only a warning."""
    with pytest.raises(TypeError, match=name):
        build()

"""Uncertainty sets: support functions, maximizers, membership and validation.

Each set's numpy support function is checked against the maximum of ``z·v``
over the set written directly in CVXPY here (its primal description, with no
robustsvm code), and against closed forms computed by hand.
"""

import math
import warnings

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import robustsvm as rs
from robustsvm.uncertainty.spectrahedron import Spectrahedron

D = 4
PROPS = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
directions = arrays(np.float64, D, elements=st.floats(-5, 5, allow_nan=False, allow_infinity=False, width=64))


def elliptope_matrices():
    """The 3-D elliptope {x : [[1, x1, x2], [x1, 1, x3], [x2, x3, 1]] ⪰ 0} of Woolnough et al. (2022)."""
    A = np.zeros((3, 3, 3))
    for l, (i, j) in enumerate([(0, 1), (0, 2), (1, 2)]):
        A[l, i, j] = A[l, j, i] = 1.0
    return np.eye(3), A


def mixed_spectrahedron(seed=0):
    """An LMI in R^4 whose 6 × 6 matrices, after a random permutation, hide a 3 × 3 block and 3 scalar rows.

    Block: the elliptope in (v1, v2, v3). Rows: 1 − v4 ≥ 0, 1 + v4 ≥ 0, 2 − v1 − v4 ≥ 0.
    """
    A0e, Ae = elliptope_matrices()
    A0 = np.zeros((6, 6))
    A = np.zeros((4, 6, 6))
    A0[:3, :3] = A0e
    A[:3, :3, :3] = Ae
    A0[3, 3], A[3, 3, 3] = 1.0, -1.0
    A0[4, 4], A[3, 4, 4] = 1.0, 1.0
    A0[5, 5], A[0, 5, 5], A[3, 5, 5] = 2.0, -1.0, -1.0
    perm = np.random.default_rng(seed).permutation(6)
    return A0[np.ix_(perm, perm)], A[:, perm][:, :, perm]


def direct_max(constraints_of_v, z):
    """max z·v over the set, written in CVXPY by the test."""
    v = cp.Variable(z.shape[0])
    prob = cp.Problem(cp.Maximize(z @ v), constraints_of_v(v))
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Solution may be inaccurate")
        prob.solve(solver="CLARABEL")
    # "optimal" or "optimal_inaccurate" depends on the BLAS kernel; the value is checked against the minimum of
    # the dual form (an upper bound of the maximum) and the value at the set's worst case (a lower bound)
    assert prob.status in ("optimal", "optimal_inaccurate"), prob.status
    return prob.value


def full_lmi(A0, A):
    return lambda v: [A0 + sum(v[l] * A[l] for l in range(A.shape[0])) >> 0]


rng0 = np.random.default_rng(42)
M_ELL = (lambda B: B @ B.T + 0.5 * np.eye(D))(rng0.normal(size=(D, D)))
G_POLY = np.vstack([rng0.normal(size=(5, D)), np.eye(D), -np.eye(D)])
H_POLY = np.concatenate([rng0.uniform(0.5, 2.0, 5), rng0.uniform(0.5, 2.0, D), rng0.uniform(0.5, 2.0, D)])
WIDTHS = np.array([0.5, 1.0, 2.0, 3.0])
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    MIXED = Spectrahedron(*mixed_spectrahedron())

#: (set, constraints written in the test)
CASES = {
    "box": (rs.Box(widths=WIDTHS), lambda v: [cp.abs(v) <= WIDTHS]),
    "ball1": (rs.Ball(p=1), lambda v: [cp.norm1(v) <= 1]),
    "ball1.5": (rs.Ball(p=1.5), lambda v: [cp.pnorm(v, 1.5) <= 1]),
    "ball2": (rs.Ball(p=2), lambda v: [cp.sum_squares(v) <= 1]),
    "ball3": (rs.Ball(p=3), lambda v: [cp.pnorm(v, 3) <= 1]),
    "ballinf": (rs.Ball(p=np.inf), lambda v: [cp.abs(v) <= 1]),
    "ellipsoid": (rs.Ellipsoid(M_ELL), lambda v: [cp.quad_form(v, np.linalg.inv(M_ELL)) <= 1]),
    "polyhedron": (rs.Polyhedron(G_POLY, H_POLY), lambda v: [G_POLY @ v <= H_POLY]),
    "spectrahedron": (MIXED, full_lmi(*mixed_spectrahedron())),
    "box&ball": (rs.Box(1.0, widths=WIDTHS) & rs.Ball(1.0, p=2),
                 lambda v: [cp.abs(v) <= WIDTHS, cp.norm2(v) <= 1]),
    "ellipsoid&polyhedron": (rs.Ellipsoid(M_ELL) & rs.Polyhedron(G_POLY, H_POLY),
                             lambda v: [cp.quad_form(v, np.linalg.inv(M_ELL)) <= 1, G_POLY @ v <= H_POLY]),
}


@pytest.mark.parametrize("name", sorted(CASES))
@PROPS
@given(z=directions)
def test_support_equals_cvxpy_maximum_and_worst_case_attains_it(name, z):
    U, cons = CASES[name]
    expected = direct_max(cons, z)
    got = U.support(z)
    assert got == pytest.approx(expected, rel=1e-6, abs=1e-6)
    v = U.worst_case(z)
    assert U.contains(v, tol=1e-6)
    assert z @ v == pytest.approx(expected, rel=1e-6, abs=1e-6)
    # the CVXPY support expression of the set (dual form) has the same minimum
    zp = cp.Parameter(D, value=z)
    e, extra = U.support_cvx(zp)
    t = cp.Variable()
    prob = cp.Problem(cp.Minimize(t), [e <= t, *extra])
    prob.solve(solver="CLARABEL")
    assert prob.value == pytest.approx(expected, rel=1e-6, abs=1e-6)


def test_closed_forms_by_hand():
    z = np.array([3.0, -4.0, 0.0, 0.0])
    assert rs.Ball(p=2).support(z) == pytest.approx(5.0)
    assert rs.Ball(p=1).support(z) == pytest.approx(4.0)
    assert rs.Ball(p=np.inf).support(z) == pytest.approx(7.0)
    assert rs.Box(widths=WIDTHS).support(z) == pytest.approx(3 * 0.5 + 4 * 1.0)
    assert rs.Ellipsoid(np.diag([4.0, 1.0, 1.0, 1.0])).support(z) == pytest.approx(math.hypot(6.0, 4.0))
    # rows of a matrix are handled at once
    Z = np.vstack([z, -z, 2 * z])
    np.testing.assert_allclose(rs.Ball(p=3).support(Z), [np.linalg.norm(z, 1.5)] * 2 + [2 * np.linalg.norm(z, 1.5)])


def test_elliptope_accepted_bounded_and_asymmetric():
    S = rs.Spectrahedron(*elliptope_matrices(), radius=0.5)
    assert S.block_sizes == [3] and S.lin_a0.size == 0
    # max x1+x2+x3 is 3 (the all-ones matrix); min is −3/2 (1ᵀC1 = 3 + 2Σx ≥ 0, attained at x = −1/2)
    assert S.support(np.ones(3)) == pytest.approx(3.0, rel=1e-7)
    assert S.support(-np.ones(3)) == pytest.approx(1.5, rel=1e-7)
    np.testing.assert_allclose(S.worst_case(-np.ones(3)), -0.5 * np.ones(3), atol=1e-6)
    # bounded: every coordinate lies in [−1, 1]
    for h in range(3):
        e = np.eye(3)[h]
        assert S.support(e) == pytest.approx(1.0, rel=1e-7)
    assert S.contains(np.zeros(3)) and not S.contains(np.array([0.9, 0.9, -0.9]))


def test_set_away_from_the_origin_goes_through_the_sdp_checks():
    # {v : [[v1, 1], [1, v2]] ⪰ 0, v1 ≤ 3, v2 ≤ 3}: A0 is not PD (v = 0 is outside), an interior point
    # exists (v = (2, 2)) and linear rows are present, so both checks are decided by their SDPs
    A0 = np.zeros((4, 4))
    A0[0, 1] = A0[1, 0] = 1.0
    A0[2, 2] = A0[3, 3] = 3.0
    A = np.zeros((2, 4, 4))
    A[0, 0, 0], A[1, 1, 1] = 1.0, 1.0
    A[0, 2, 2], A[1, 3, 3] = -1.0, -1.0
    S = rs.Spectrahedron(A0, A)
    assert S.block_sizes == [2] and S.lin_a0.size == 2
    assert S.contains(S.interior_point) and not S.contains(np.zeros(2))
    # max v1 + v2 = 6 at (3, 3); min v1 + v2 subject to v1 v2 ≥ 1, v ≥ 0 is 2 at (1, 1)
    assert S.support(np.ones(2)) == pytest.approx(6.0, rel=1e-7)
    assert S.support(-np.ones(2)) == pytest.approx(-2.0, rel=1e-7)
    np.testing.assert_allclose(S.worst_case(-np.ones(2)), [1.0, 1.0], atol=1e-5)
    zp = cp.Parameter(2, value=-np.ones(2))
    e, extra = S.support_cvx(zp)
    t = cp.Variable()
    cp.Problem(cp.Minimize(t), [e <= t, *extra]).solve(solver="CLARABEL")
    assert t.value == pytest.approx(-2.0, rel=1e-6)


def test_batched_supports_and_maximizers_match_single_solves():
    rng = np.random.default_rng(12)
    _, A = elliptope_matrices()
    sets = [rs.Spectrahedron(np.diag(rng.uniform(0.5, 2.0, 3)), A) for _ in range(10)]  # ≥ 8: (m, 3, 3) batch
    Z = rng.normal(size=(10, 3))
    single = np.array([S.support(z) for S, z in zip(sets, Z, strict=True)])  # primal, one solve each
    np.testing.assert_allclose(Spectrahedron.support_many(sets, Z), single, rtol=1e-6, atol=1e-7)  # batched dual
    values, V = Spectrahedron.maximize_many(sets, Z)  # batched primal
    np.testing.assert_allclose(values, single, rtol=1e-6, atol=1e-7)
    assert all(S.contains(v, tol=1e-6) for S, v in zip(sets, V, strict=True))
    # sets with linear rows: the mixed spectrahedron and copies, in one batch
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mixed = [Spectrahedron(*mixed_spectrahedron(seed)) for seed in range(3)]
    Zm = rng.normal(size=(3, D))
    expected = [direct_max(full_lmi(*mixed_spectrahedron(seed)), z) for seed, z in zip(range(3), Zm, strict=True)]
    np.testing.assert_allclose(Spectrahedron.support_many(mixed, Zm), expected, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(Spectrahedron.maximize_many(mixed, Zm)[0], expected, rtol=1e-6, atol=1e-7)


def test_intersection_dual_supports_match_primal():
    U, _ = CASES["ellipsoid&polyhedron"]
    Z = np.random.default_rng(13).normal(size=(4, D))
    primal = np.array([U.support(z) for z in Z])  # max z·v over both sets' constraints
    np.testing.assert_allclose(type(U).support_many([U] * 4, Z), primal, rtol=1e-6, atol=1e-8)  # inf-convolution


def test_block_splitting_recovers_block_and_linear_rows():
    S = MIXED
    assert S.block_sizes == [3]
    assert S.lin_a0.size == 3
    # the linear rows a0 + a·v ≥ 0 are the three scalar inequalities, in some order
    rows = {tuple(np.round(np.concatenate([[a0], a]), 12)) for a0, a in zip(S.lin_a0, S.lin_A, strict=True)}
    assert rows == {(1.0, 0, 0, 0, -1.0), (1.0, 0, 0, 0, 1.0), (2.0, -1.0, 0, 0, -1.0)}


def test_diagonal_lmi_box_warns_and_becomes_linear():
    d = 3
    A0 = np.eye(2 * d)
    A = np.zeros((d, 2 * d, 2 * d))
    for l in range(d):
        A[l, l, l], A[l, d + l, d + l] = 1.0, -1.0
    with pytest.warns(UserWarning, match="box"):
        S = rs.Spectrahedron(A0, A)
    assert S.blocks == [] and S.lin_a0.size == 2 * d
    z = np.array([1.0, -2.0, 0.5])
    assert S.support(z) == pytest.approx(np.abs(z).sum(), rel=1e-7)


def test_arrow_lmi_ball_warns():
    d = 3
    A0 = np.eye(d + 1)
    A = np.zeros((d, d + 1, d + 1))
    for l in range(d):
        A[l, 0, l + 1] = A[l, l + 1, 0] = 1.0
    with pytest.warns(UserWarning, match="ball"):
        S = rs.Spectrahedron(A0, A)
    z = np.array([1.0, -2.0, 2.0])
    assert S.support(z) == pytest.approx(3.0, rel=1e-7)


def test_elliptope_does_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rs.Spectrahedron(*elliptope_matrices())


def test_box_intersected_with_containing_ball_is_the_box():
    widths = np.full(D, 0.45)  # corners at ‖·‖₂ = 0.9: inside the unit ball
    box = rs.Box(widths=widths)
    both = rs.Box(widths=widths) & rs.Ball(p=2)
    rng = np.random.default_rng(3)
    for z in rng.normal(size=(5, D)):
        assert both.support(z) == pytest.approx(box.support(z), rel=1e-6)
        assert box.contains(both.worst_case(z), tol=1e-6)
    # different radii: 0.1·unit box ∩ (ball of radius √D·0.101 ⊇ it) is the box of radius 0.1
    scaled = rs.Box(0.1) & rs.Ball(0.101 * math.sqrt(D))
    assert scaled.radius == pytest.approx(0.101 * math.sqrt(D))
    for z in rng.normal(size=(3, D)):
        assert scaled.radius * scaled.support(z) == pytest.approx(0.1 * np.abs(z).sum(), rel=1e-6)


def test_sets_pickle_and_copy_after_use():
    import copy
    import pickle

    for name in ("spectrahedron", "box&ball", "polyhedron"):
        U, _ = CASES[name]
        z = np.arange(1.0, D + 1)
        value = U.support(z)
        for clone in (pickle.loads(pickle.dumps(U)), copy.deepcopy(U)):
            assert clone.key() == U.key()
            assert clone.support(z) == pytest.approx(value, rel=1e-7)


def test_symmetry_flags():
    assert rs.Box().symmetric and rs.Ball(p=3).symmetric and rs.Ellipsoid(np.eye(2)).symmetric
    assert rs.Polyhedron(np.vstack([np.eye(2), -np.eye(2)]), np.ones(4)).symmetric
    assert not rs.Polyhedron(np.vstack([np.eye(2), -np.ones((1, 2))]), np.ones(3)).symmetric
    assert not rs.Spectrahedron(*elliptope_matrices()).symmetric
    assert not MIXED.symmetric  # the row 2 − v1 − v4 ≥ 0 has no mirror image
    d = 3
    arrow = np.zeros((d, d + 1, d + 1))
    for l in range(d):
        arrow[l, 0, l + 1] = arrow[l, l + 1, 0] = 1.0
    diag = np.zeros((d, 2 * d, 2 * d))
    for l in range(d):
        diag[l, l, l], diag[l, d + l, d + l] = 1.0, -1.0
    with pytest.warns(UserWarning):
        ball_lmi = rs.Spectrahedron(np.diag([1.0, 2.0, 2.0, 2.0]), arrow)
    with pytest.warns(UserWarning):
        box_lmi = rs.Spectrahedron(np.eye(2 * d), diag)
    shifted = np.eye(2 * d)
    shifted[0, 0] = 2.0  # 2 + v1 ≥ 0 but 1 − v1 ≥ 0: not symmetric
    with pytest.warns(UserWarning):
        off = rs.Spectrahedron(shifted, diag)
    assert ball_lmi.symmetric and box_lmi.symmetric and not off.symmetric
    z = np.array([1.0, -2.0, 0.5])
    for S in (ball_lmi, box_lmi):
        assert S.support(z) == pytest.approx(S.support(-z), rel=1e-7)
    assert off.support(-np.eye(3)[0]) == pytest.approx(2.0, rel=1e-7)
    assert off.support(np.eye(3)[0]) == pytest.approx(1.0, rel=1e-7)
    assert (rs.Box() & rs.Ball()).symmetric


# ------------------------------------------------------------------ validation
def test_ellipsoid_validation():
    with pytest.raises(ValueError, match="symmetric"):
        rs.Ellipsoid(np.array([[1.0, 0.5], [0.0, 1.0]]))
    with pytest.raises(ValueError, match="positive definite"):
        rs.Ellipsoid(np.array([[1.0, 2.0], [2.0, 1.0]]))
    with pytest.raises(ValueError, match="square"):
        rs.Ellipsoid(np.ones((2, 3)))
    with pytest.raises(ValueError, match="NaN"):
        rs.Ellipsoid(np.array([[np.nan, 0.0], [0.0, 1.0]]))


def test_polyhedron_validation():
    with pytest.raises(ValueError, match="empty"):
        rs.Polyhedron(np.array([[1.0], [-1.0]]), np.array([-1.0, -1.0]))  # v ≤ −1 and v ≥ 1
    with pytest.raises(ValueError, match="unbounded"):
        rs.Polyhedron(np.array([[1.0, 0.0], [-1.0, 0.0]]), np.ones(2))  # a strip: rank 1
    with pytest.raises(ValueError, match="unbounded"):
        rs.Polyhedron(np.array([[1.0, 0.0], [0.0, 1.0]]), np.ones(2))  # a quadrant
    with pytest.raises(ValueError, match="shape"):
        rs.Polyhedron(np.eye(2), np.ones(3))


def test_spectrahedron_validation_says_which_check_fails():
    A0, A = elliptope_matrices()
    with pytest.raises(ValueError, match="symmetric"):
        bad = A.copy()
        bad[0, 0, 1] = 2.0
        rs.Spectrahedron(A0, bad)
    with pytest.raises(ValueError, match="no interior point"):
        rs.Spectrahedron(np.diag([1.0, 1.0, 0.0]), A)  # forces x2 = x3 = 0: flat
    with pytest.raises(ValueError, match="linearly dependent"), pytest.warns(UserWarning, match="arrow"):
        rs.Spectrahedron(A0, np.stack([A[0], A[1], A[0]]))  # x3 = x1 and no x3 entry: an arrow, and dependent
    with pytest.raises(ValueError, match="unbounded"):
        # diag(1 + v1, 1 + v2) ⪰ 0: v ≥ −1, unbounded above
        with pytest.warns(UserWarning):
            rs.Spectrahedron(np.eye(2), np.array([np.diag([1.0, 0.0]), np.diag([0.0, 1.0])]))
    with pytest.raises(ValueError, match="shape"):
        rs.Spectrahedron(A0, A[:, :2, :2])


def test_radius_and_p_validation():
    with pytest.raises(ValueError, match="radius"):
        rs.Box(radius=-1.0)
    with pytest.raises(ValueError, match="radius"):
        rs.Ball(radius=np.inf)
    with pytest.raises(ValueError, match="p must be"):
        rs.Ball(p=0.5)
    with pytest.raises(ValueError, match="scalar radius"):
        rs.Box(radius=np.ones(3)) & rs.Ball()
    with pytest.raises(ValueError, match="R\\^2"):
        rs.Ellipsoid(np.eye(2)) & rs.Ellipsoid(np.eye(3))
    with pytest.raises(ValueError, match="empty"):
        far = rs.Polyhedron(np.array([[-1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, -1.0]]),
                            np.array([-5.0, 6.0, 1.0, 1.0]))
        (rs.Ball() & far).check_dim(2)


# ------------------------------------------------------------------ heuristic
def test_radius_upper_bound_by_hand():
    # class 0 at 0 and 1, class 1 at 3 and 5 (one feature)
    X = np.array([[0.0], [1.0], [3.0], [5.0]])
    y = np.array([0, 0, 1, 1])
    # class 0: farthest class-1 points are 5 (from 0) and 4 (from 1) → min 4
    # class 1: farthest class-0 points are 3 (from 3) and 5 (from 5) → min 3
    assert rs.radius_upper_bound(X, y) == pytest.approx(4.0)
    assert rs.radius_upper_bound(sp.csr_matrix(X), y) == pytest.approx(4.0)
    assert rs.radius_upper_bound(X, y, chunk_size=1) == pytest.approx(4.0)


def test_radius_upper_bound_two_dimensional_norms():
    X = np.array([[0.0, 0.0], [3.0, 4.0], [1.0, 0.0]])
    y = np.array(["a", "b", "a"])
    # class a: (0,0)→(3,4) is 5 (ℓ2), 7 (ℓ1), 4 (ℓ∞); (1,0)→(3,4) is √20, 6, 4 → mins √20, 6, 4
    # class b: (3,4) → farthest of (0,0), (1,0): 5, 7, 4
    assert rs.radius_upper_bound(X, y) == pytest.approx(5.0)
    assert rs.radius_upper_bound(X, y, p=1) == pytest.approx(7.0)
    assert rs.radius_upper_bound(X, y, p=np.inf) == pytest.approx(4.0)
    with pytest.raises(ValueError, match="p = 2"):
        rs.radius_upper_bound(sp.csr_matrix(X), y, p=1)
    with pytest.raises(ValueError, match="two classes"):
        rs.radius_upper_bound(X, np.zeros(3))

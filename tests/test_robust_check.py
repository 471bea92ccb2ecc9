"""The per-sample certificate ``robust_check`` against brute-force minima over each set."""

import itertools

import numpy as np
import pytest
import scipy.sparse as sp

import robustsvm as rs

from .conftest import make_classification


def elliptope():
    A = np.zeros((3, 3, 3))
    for l, (i, j) in enumerate([(0, 1), (0, 2), (1, 2)]):
        A[l, i, j] = A[l, j, i] = 1.0
    return np.eye(3), A


def margins_at(X, y01, w, b, points_per_sample):
    """y_i((x_i + p)·w + b) for every candidate perturbation p (rows) of every sample: (n, k)."""
    y = 2.0 * y01 - 1.0
    return y[:, None] * ((X @ w)[:, None] + points_per_sample @ w + b)


def solve(U, X, y, **kw):
    return rs.Problem(penalty=rs.L2(0.05), uncertainty=U, **kw).solve(X, y, tol=1e-9)


def test_box_worst_case_is_the_worst_vertex():
    X, y = make_classification(50, 4, seed=1)
    r = np.linspace(0.05, 0.5, 50)
    widths = np.array([0.5, 1.0, 1.5, 2.0])
    sol = solve(rs.Box(r, widths=widths), X, y)
    chk = sol.robust_check(X, y)
    vertices = np.array(list(itertools.product([-1.0, 1.0], repeat=4))) * widths  # all 16 vertices
    # the smallest margin over the 16 vertices of each r_i V (a linear function is minimized at a vertex)
    brute = np.min((2.0 * y - 1.0)[:, None] * ((X @ sol.w)[:, None] + r[:, None] * (vertices @ sol.w) + sol.b),
                   axis=1)
    np.testing.assert_allclose(chk.worst_margins, brute, atol=1e-12)
    np.testing.assert_allclose(chk.robust_margins, brute, atol=1e-10)
    assert chk.holds and chk.max_disagreement < 1e-10


def test_ball_and_ellipsoid_against_sampled_boundary():
    X, y = make_classification(40, 3, seed=2)
    rng = np.random.default_rng(0)
    u = rng.normal(size=(20000, 3))
    u /= np.linalg.norm(u, axis=1, keepdims=True)  # the unit sphere
    M = np.array([[2.0, 0.3, 0.0], [0.3, 1.0, 0.2], [0.0, 0.2, 0.5]])
    for U, pts in ((rs.Ball(0.3), u), (rs.Ellipsoid(M, 0.3), u @ np.linalg.cholesky(M).T)):
        sol = solve(U, X, y)
        chk = sol.robust_check(X, y)
        sampled = np.min(margins_at(X, y, sol.w, sol.b, 0.3 * pts), axis=1)
        assert np.all(sampled >= chk.worst_margins - 1e-10)  # nothing sampled beats the certificate
        np.testing.assert_allclose(sampled, chk.worst_margins, atol=2e-3 * np.linalg.norm(sol.w))
        assert chk.holds


def test_elliptope_against_sampled_points():
    X, y = make_classification(40, 3, seed=3)
    sol = solve(rs.Spectrahedron(*elliptope(), radius=0.4), X, y)
    chk = sol.robust_check(X, y)
    assert chk.holds and np.all(chk.contained)
    rng = np.random.default_rng(1)
    cand = rng.uniform(-1, 1, size=(40000, 3))
    C = np.ones((cand.shape[0], 3, 3))
    C[:, 0, 1] = C[:, 1, 0] = cand[:, 0]
    C[:, 0, 2] = C[:, 2, 0] = cand[:, 1]
    C[:, 1, 2] = C[:, 2, 1] = cand[:, 2]
    inside = cand[np.linalg.eigvalsh(C)[:, 0] >= 0]  # points of the elliptope
    sampled = np.min(margins_at(X, y, sol.w, sol.b, 0.4 * inside), axis=1)
    assert np.all(sampled >= chk.worst_margins - 1e-7)
    np.testing.assert_allclose(sampled, chk.worst_margins, atol=0.05 * np.linalg.norm(sol.w))


def test_polygon_against_its_vertices():
    X, y = make_classification(40, 2, seed=4)
    G = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, -1.0], [1.0, -1.0]])
    h = np.array([1.0, 1.0, 0.5, 1.2])
    sol = solve(rs.Polyhedron(G, h, 0.3), X, y, signs=[1, 0])
    chk = sol.robust_check(X, y)
    verts = []
    for i, j in itertools.combinations(range(4), 2):  # vertices: pairs of tight constraints, then feasibility
        Gi = G[[i, j]]
        if abs(np.linalg.det(Gi)) > 1e-12:
            v = np.linalg.solve(Gi, h[[i, j]])
            if np.all(G @ v <= h + 1e-12):
                verts.append(v)
    brute = np.min(margins_at(X, y, sol.w, sol.b, 0.3 * np.array(verts)), axis=1)
    np.testing.assert_allclose(chk.worst_margins, brute, atol=1e-9)
    assert chk.holds


def test_intersection_against_sampled_points_and_sparse_x():
    X, y = make_classification(40, 3, seed=5, sparse=True, density=0.6)
    U = rs.Box(0.5) & rs.Ball(0.5 * 1.2)  # 0.5·box ∩ 0.6·ball (corners cut off)
    sol = solve(U, X, y)
    chk = sol.robust_check(X, y)
    assert chk.holds
    rng = np.random.default_rng(2)
    cand = rng.uniform(-0.5, 0.5, size=(40000, 3))
    cand = cand[np.linalg.norm(cand, axis=1) <= 0.6]
    Xd = X.toarray()
    sampled = np.min(margins_at(Xd, y, sol.w, sol.b, cand), axis=1)
    assert np.all(sampled >= chk.worst_margins - 1e-7)
    np.testing.assert_allclose(sampled, chk.worst_margins, atol=0.03 * np.linalg.norm(sol.w))


def test_per_sample_sets_and_function_form():
    X, y = make_classification(30, 3, seed=6)
    sets = [rs.Ball(0.1 + 0.01 * i, p=[1, 2, np.inf][i % 3]) for i in range(30)]
    sol = solve(sets, X, y)
    chk = rs.robust_check(sol, X, y)
    assert chk.holds
    assert chk.perturbations.shape == (30, 3)
    for i in range(30):
        assert np.linalg.norm(chk.perturbations[i], ord=[1, 2, np.inf][i % 3]) == pytest.approx(1.0, abs=1e-9)


def test_per_sample_spectrahedra_batched_certificate():
    X, y = make_classification(30, 3, seed=9)
    rng = np.random.default_rng(4)
    _, A = elliptope()
    sets = [rs.Spectrahedron(np.diag(rng.uniform(0.5, 2.0, 3)), A, radius=0.3) for _ in range(30)]
    sol = solve(sets, X, y)
    chk = sol.robust_check(X, y)  # maximizers: one batched primal; margins: one batched dual
    assert chk.holds and chk.max_disagreement < 1e-6
    for i in (0, 7, 29):  # each worst point agrees with a separate solve of its own set
        z = -(2.0 * y[i] - 1.0) * sol.w
        assert z @ chk.perturbations[i] == pytest.approx(sets[i].support(z), rel=1e-6, abs=1e-8)


def test_a_wrong_maximizer_is_caught():
    class BadBox(rs.Box):
        def worst_case(self, z):  # twice the true vertex: outside the set
            return 2.0 * super().worst_case(z)

    X, y = make_classification(30, 3, seed=7)
    sol = solve(BadBox(0.2), X, y)
    chk = sol.robust_check(X, y)
    assert not np.any(chk.contained)
    assert chk.max_disagreement > 1e-3
    assert not chk.holds


def test_nominal_model_and_bad_input():
    X, y = make_classification(30, 3, seed=8)
    sol = rs.Problem(penalty=rs.L2(0.05)).solve(X, y)
    chk = sol.robust_check(X, y)
    np.testing.assert_array_equal(chk.perturbations, 0.0)
    np.testing.assert_allclose(chk.worst_margins, (2 * y - 1) * (X @ sol.w + sol.b))
    assert chk.holds and "robust check" in chk.summary()
    with pytest.raises(ValueError, match="labels outside"):
        sol.robust_check(X, np.where(y == 1, 5, 0))
    with pytest.raises(ValueError, match="shape"):
        sol.robust_check(X, y[:-1])
    with pytest.raises(ValueError, match="features"):
        sol.robust_check(sp.csr_matrix(X[:, :2]), y)

"""Robust models against CVXPY models written directly in the tests (no robustsvm code).

The direct models follow DESIGN §1: margins ``y_i(x_i·w + b) − r_i σ_V(−y_i w)``
inside the loss, with ``σ_V`` written by hand for each set; the spectrahedral
one in the paper's form, one PSD matrix ``W_i`` per sample.
"""

import warnings

import cvxpy as cp
import numpy as np
import pytest

import robustsvm as rs

from .conftest import make_classification

LAM2, LAM1 = 0.05, 0.01


def wdbc_subset(wdbc, features):
    X, y, _ = wdbc
    return X[::5][:, features], y[::5]


def elliptope():
    A = np.zeros((3, 3, 3))
    for l, (i, j) in enumerate([(0, 1), (0, 2), (1, 2)]):
        A[l, i, j] = A[l, j, i] = 1.0
    return np.eye(3), A


def direct_robust(X, y01, radius, sigma, *, signs=None, loss="hinge", reduction="mean", intercept=True,
                  lam2=LAM2, lam1=LAM1):
    """Solve the robust model written out in CVXPY.

    ``sigma(z, i)`` returns ``(expression, constraints)`` with ``min expression = σ_{V_i}(z)``.
    """
    n, d = X.shape
    y = 2.0 * y01 - 1.0
    w = cp.Variable(d)
    b = cp.Variable() if intercept else 0.0
    cons = []
    pen = []
    for i in range(n):
        e, c = sigma(-y[i] * w, i)
        pen.append(e)
        cons += c
    m = cp.multiply(y, X @ w + b) - cp.multiply(radius, cp.hstack(pen))
    obj = lam2 / 2 * cp.sum_squares(w) + lam1 * cp.norm1(w)
    if loss == "hard":
        cons.append(m >= 1)
    else:
        h = cp.pos(1 - m)
        terms = h if loss == "hinge" else cp.square(h)
        obj = obj + cp.sum(terms) / (n if reduction == "mean" else 1)
    if signs is not None:
        cons += [w[signs > 0] >= 0, w[signs < 0] <= 0]
    prob = cp.Problem(cp.Minimize(obj), cons)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Solution may be inaccurate")
        prob.solve(solver="CLARABEL")
    # "optimal" or "optimal_inaccurate" depends on the BLAS kernel: the callers certify the point instead
    assert prob.status in ("optimal", "optimal_inaccurate"), prob.status
    return prob.value, w.value, (float(b.value) if intercept else 0.0)


def shared(fn):
    """The same support for every sample, written once per label (fewer CVXPY atoms in the direct model)."""
    cache = {}

    def sigma(z, i):
        key = str(z)  # −w or w
        if key not in cache:
            cache[key] = fn(z)
        e, c = cache[key]
        out = (e, c)
        cache[key] = (e, [])  # constraints only once
        return out

    return sigma


def check_same(prob, X, y, direct, *, rel=1e-6, atol=1e-4):
    f_direct, w_direct, b_direct = direct
    sol = prob.solve(X, y, solver="clarabel", tol=1e-9)
    assert sol.status == "optimal"
    # the direct point (Clarabel's "optimal" or "optimal_inaccurate", as the BLAS kernel has it) against the
    # package's certified solve: its value is above that solve's certified bound, and agrees with its objective
    signs = prob.normalize(X, y).signs
    w_feasible = np.where(signs * w_direct < 0, 0.0, w_direct)  # Clarabel's point made sign-feasible
    assert prob.objective(X, y, w_feasible, b_direct) >= sol.objective - sol.gap - 1e-12 * max(1.0, abs(f_direct))
    assert sol.objective == pytest.approx(f_direct, rel=rel)
    # the numpy objective at the direct solution is the direct optimum too
    assert prob.objective(X, y, w_direct, b_direct) == pytest.approx(f_direct, rel=rel)
    np.testing.assert_allclose(sol.w, w_direct, atol=atol)
    return sol


# ----------------------------------------------------------------- each set type
@pytest.fixture(scope="module")
def radii_and_signs():
    rng = np.random.default_rng(7)
    return rng.uniform(0.02, 0.2, size=114), rng


def test_box_widths_per_sample_radii_l1_l2_signs(wdbc, radii_and_signs):
    X, y = wdbc_subset(wdbc, slice(None))
    r, rng = radii_and_signs
    delta = rng.uniform(0.5, 1.5, X.shape[1])
    signs = np.zeros(30, dtype=int)
    signs[:4], signs[4:7] = 1, -1
    direct = direct_robust(X, y, r, shared(lambda z: (delta @ cp.abs(z), [])), signs=signs)
    prob = rs.Problem(penalty=rs.L2(LAM2) + rs.L1(LAM1), signs=signs, uncertainty=rs.Box(r, widths=delta))
    sol = check_same(prob, X, y, direct)
    assert np.all(sol.w[:4] >= -1e-8) and np.all(sol.w[4:7] <= 1e-8)


@pytest.mark.parametrize("p", [1, 1.5, 2, 3, np.inf])
def test_ball_every_p(wdbc, radii_and_signs, p):
    X, y = wdbc_subset(wdbc, slice(0, 10))
    r, _ = radii_and_signs
    q = {1: np.inf, 1.5: 3, 2: 2, 3: 1.5, np.inf: 1}[p]
    direct = direct_robust(X, y, r, shared(lambda z: (cp.norm(z, q) if q != 1.5 and q != 3 else cp.pnorm(z, q), [])))
    prob = rs.Problem(penalty=rs.L2(LAM2) + rs.L1(LAM1), uncertainty=rs.Ball(r, p=p))
    check_same(prob, X, y, direct, rel=1e-5, atol=1e-3)


def test_ellipsoid(wdbc, radii_and_signs):
    X, y = wdbc_subset(wdbc, slice(None))
    r, rng = radii_and_signs
    B = rng.normal(size=(30, 30)) / 6
    M = B @ B.T + 0.1 * np.eye(30)
    Minv_sqrt = np.linalg.cholesky(M)  # any L with LLᵀ = M gives ‖Lᵀz‖ = √(zᵀMz)
    direct = direct_robust(X, y, r, shared(lambda z: (cp.norm2(Minv_sqrt.T @ z), [])))
    prob = rs.Problem(penalty=rs.L2(LAM2) + rs.L1(LAM1), uncertainty=rs.Ellipsoid(M, r))
    check_same(prob, X, y, direct)


def test_polyhedron_asymmetric(wdbc, radii_and_signs):
    X, y = wdbc_subset(wdbc, slice(0, 6))
    r, rng = radii_and_signs
    d = 6
    G = np.vstack([np.eye(d), -np.eye(d), rng.normal(size=(4, d))])
    h = np.concatenate([np.full(d, 1.0), np.full(d, 0.3), rng.uniform(0.2, 1.0, 4)])

    def sig(z):  # max z·v s.t. Gv ≤ h, written as its own LP dual
        mu = cp.Variable(G.shape[0], nonneg=True)
        return h @ mu, [G.T @ mu == z]

    direct = direct_robust(X, y, r, shared(sig))
    U = rs.Polyhedron(G, h, r)
    assert not U.symmetric
    check_same(rs.Problem(penalty=rs.L2(LAM2) + rs.L1(LAM1), uncertainty=U), X, y, direct)


def test_spectrahedron_against_the_papers_per_sample_sdp(wdbc, radii_and_signs):
    X, y = wdbc_subset(wdbc, [0, 7, 21])
    r, _ = radii_and_signs
    A0, A = elliptope()

    def sig(z, i):  # one W_i ⪰ 0 per sample: σ(z) = min tr(A0 W) s.t. tr(A_l W) = −z_l
        W = cp.Variable((3, 3), PSD=True)
        return cp.trace(A0 @ W), [cp.hstack([cp.trace(A[l] @ W) for l in range(3)]) == -z]

    signs = np.array([1, 0, -1])
    direct = direct_robust(X, y, r, sig, signs=signs)
    prob = rs.Problem(penalty=rs.L2(LAM2) + rs.L1(LAM1), signs=signs, uncertainty=rs.Spectrahedron(A0, A, r))
    check_same(prob, X, y, direct, rel=1e-6, atol=1e-4)


def test_intersection_infimal_convolution(wdbc, radii_and_signs):
    X, y = wdbc_subset(wdbc, slice(0, 8))
    r, _ = radii_and_signs
    # 0.5·box ∩ unit ball, then scaled by r_i

    def sig(z):
        z1 = cp.Variable(8)
        return 0.5 * cp.norm1(z1) + cp.norm2(z - z1), []

    direct = direct_robust(X, y, r, shared(sig))
    U = rs.Intersection(rs.Box(0.5), rs.Ball(1.0), radius=r)
    check_same(rs.Problem(penalty=rs.L2(LAM2) + rs.L1(LAM1), uncertainty=U), X, y, direct)


def test_per_sample_sets_differ_squared_hinge_sum(wdbc):
    X, y = wdbc_subset(wdbc, [0, 7, 21])
    X, y = X[::3], y[::3]
    n = X.shape[0]
    rng = np.random.default_rng(11)
    _, A = elliptope()
    D0 = [np.diag(rng.uniform(0.5, 2.0, 3)) for _ in range(n)]
    radius = rng.uniform(0.05, 0.3, n)

    def sig(z, i):
        W = cp.Variable((3, 3), PSD=True)
        return cp.trace(D0[i] @ W), [cp.hstack([cp.trace(A[l] @ W) for l in range(3)]) == -z]

    direct = direct_robust(X, y, radius, sig, loss="squared", reduction="sum")
    sets = [rs.Spectrahedron(D0[i], A, radius[i]) for i in range(n)]
    prob = rs.Problem(loss=rs.SquaredHinge(reduction="sum"), penalty=rs.L2(LAM2) + rs.L1(LAM1), uncertainty=sets)
    check_same(prob, X, y, direct, rel=1e-6, atol=1e-3)
    # one batched PSD constraint on an (n, 3, 3) variable, not n constraints
    prog = prob.compile(X, y)
    psd = [c for c in prog.cvxpy_problem.constraints if type(c).__name__ == "PSD"]
    assert len(psd) == 1 and psd[0].args[0].shape == (n, 3, 3)


def test_per_sample_box_widths_batched(wdbc):
    X, y = wdbc_subset(wdbc, slice(0, 5))
    X, y = X[::2], y[::2]
    n = X.shape[0]
    deltas = np.random.default_rng(9).uniform(0.5, 1.5, (n, 5))
    direct = direct_robust(X, y, 0.1, lambda z, i: (deltas[i] @ cp.abs(z), []))
    prob = rs.Problem(penalty=rs.L2(LAM2) + rs.L1(LAM1), uncertainty=[rs.Box(0.1, widths=dl) for dl in deltas])
    check_same(prob, X, y, direct)


def test_per_sample_ellipsoids_and_polyhedra_batched(wdbc):
    X, y = wdbc_subset(wdbc, slice(0, 4))
    X, y = X[::2], y[::2]
    n = X.shape[0]
    rng = np.random.default_rng(5)
    Ms = [np.diag(rng.uniform(0.2, 1.0, 4)) for _ in range(n)]
    direct = direct_robust(X, y, 0.2, lambda z, i: (cp.norm2(np.sqrt(Ms[i]) @ z), []))
    prob = rs.Problem(penalty=rs.L2(LAM2) + rs.L1(LAM1), uncertainty=[rs.Ellipsoid(M, 0.2) for M in Ms])
    check_same(prob, X, y, direct)
    hs = [rng.uniform(0.5, 1.5, 8) for _ in range(n)]
    G = np.vstack([np.eye(4), -np.eye(4)])
    direct = direct_robust(X, y, 0.2, lambda z, i: (cp.hstack([hs[i][:4], hs[i][4:]]) @ cp.hstack(
        [cp.pos(z), cp.pos(-z)]), []))  # box with bounds −h⁻ ≤ v ≤ h⁺
    prob = rs.Problem(penalty=rs.L2(LAM2) + rs.L1(LAM1), uncertainty=[rs.Polyhedron(G, h, 0.2) for h in hs])
    check_same(prob, X, y, direct)


def test_hard_margin_is_a_robust_constraint():
    rng = np.random.default_rng(2)
    X = np.vstack([rng.normal(size=(30, 3)) + 4, rng.normal(size=(30, 3)) - 4])
    y = np.repeat([1, 0], 30)
    f, _, _ = direct_robust(X, y, 0.3, shared(lambda z: (cp.norm2(z), [])), loss="hard", lam1=0.0)
    prob = rs.Problem(loss=rs.HardMargin(), penalty=rs.L2(LAM2), uncertainty=rs.Ball(0.3))
    sol = prob.solve(X, y, tol=1e-9)
    assert sol.objective == pytest.approx(f, rel=1e-5)
    assert sol.violation < 1e-6
    assert np.min(sol.robust_check(X, y).worst_margins) >= 1 - 1e-6


# ------------------------------------------------------- LMI encodings, radius 0
def _box_lmi(d):
    A0 = np.eye(2 * d)
    A = np.zeros((d, 2 * d, 2 * d))
    for l in range(d):
        A[l, l, l], A[l, d + l, d + l] = 1.0, -1.0
    return A0, A


def _ball_lmi(d):
    A0 = np.eye(d + 1)
    A = np.zeros((d, d + 1, d + 1))
    for l in range(d):
        A[l, 0, l + 1] = A[l, l + 1, 0] = 1.0
    return A0, A


@pytest.mark.parametrize("kind", ["box", "ball"])
def test_lmi_encodings_match_box_and_ball(wdbc, radii_and_signs, kind):
    d = 6
    X, y = wdbc_subset(wdbc, slice(0, d))
    r, _ = radii_and_signs
    with pytest.warns(UserWarning, match=kind):
        S = rs.Spectrahedron(*(_box_lmi(d) if kind == "box" else _ball_lmi(d)), radius=r)
    ref = rs.Box(r) if kind == "box" else rs.Ball(r)
    pen = rs.L2(LAM2) + rs.L1(LAM1)
    s_lmi = rs.Problem(penalty=pen, uncertainty=S).solve(X, y, solver="clarabel")
    s_ref = rs.Problem(penalty=pen, uncertainty=ref).solve(X, y, solver="clarabel")
    assert s_lmi.objective == pytest.approx(s_ref.objective, rel=1e-5)
    if kind == "box":  # split into linear rows: no PSD cone is left
        prog = rs.Problem(penalty=pen, uncertainty=S).compile(X, y)
        assert all(type(c).__name__ != "PSD" for c in prog.cvxpy_problem.constraints)


@pytest.mark.parametrize("make", [lambda: rs.Box(0.0), lambda: rs.Ball(0.0, p=3),
                                  lambda: rs.Spectrahedron(*elliptope(), radius=0.0),
                                  lambda: rs.Box(0.0) & rs.Ball(0.0)])
def test_radius_zero_is_nominal(make):
    X, y = make_classification(60, 3, seed=4)
    pen = rs.L2(LAM2) + rs.L1(LAM1)
    nominal = rs.Problem(penalty=pen).solve(X, y, tol=1e-9)
    robust = rs.Problem(penalty=pen, uncertainty=make()).solve(X, y, tol=1e-9)
    assert robust.objective == pytest.approx(nominal.objective, rel=1e-7)
    np.testing.assert_allclose(robust.w, nominal.w, atol=1e-5)


def test_radius_sweep_reuses_the_compiled_problem():
    X, y = make_classification(60, 3, seed=5)
    S = rs.Spectrahedron(*elliptope(), radius=0.1)
    prob = rs.Problem(penalty=rs.L2(LAM2), uncertainty=S)
    prog = prob.compile(X, y)
    prog.solve()
    cached = prog.cvxpy_problem._cache.param_prog
    assert cached is not None
    for r in (0.05, 0.3):
        prog.set_values(radius=r)
        res = prog.solve()
        assert prog.cvxpy_problem._cache.param_prog is cached  # not recompiled
        fresh = rs.Problem(penalty=rs.L2(LAM2), uncertainty=rs.Spectrahedron(*elliptope(), radius=r)).solve(X, y)
        assert prob_objective_at(r, X, y, res.w, res.b) == pytest.approx(fresh.objective, rel=1e-6)


def prob_objective_at(r, X, y, w, b):
    return rs.Problem(penalty=rs.L2(LAM2), uncertainty=rs.Spectrahedron(*elliptope(), radius=r)).objective(X, y, w, b)


def test_psd_blocks_do_not_grow_with_n():
    shapes = []
    for n in (40, 400):
        X, y = make_classification(n, 3, seed=6)
        prog = rs.Problem(penalty=rs.L2(LAM2), uncertainty=rs.Spectrahedron(*elliptope(), radius=0.1)).compile(X, y)
        psd = [c.args[0].shape for c in prog.cvxpy_problem.constraints if type(c).__name__ == "PSD"]
        shapes.append(psd)
    # one set, two labels: two 3 × 3 dual matrices W± for any n
    assert shapes[0] == shapes[1] == [(3, 3), (3, 3)]


def test_symmetric_sets_share_one_epigraph_variable():
    X, y = make_classification(40, 3, seed=8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        progs = {
            "ball": rs.Problem(uncertainty=rs.Ball(0.1)).compile(X, y),
            "elliptope": rs.Problem(uncertainty=rs.Spectrahedron(*elliptope(), radius=0.1)).compile(X, y),
        }
    assert progs["ball"].support_variables.shape == (1,)
    assert progs["elliptope"].support_variables.shape == (2,)


@pytest.mark.parametrize(("p", "cone"), [(3, "p3d"), (1.5, "p3d"), (2, "soc")])
def test_ball_compiles_to_exact_cones(p, cone):
    X, y = make_classification(30, 3, seed=10)
    prob = rs.Problem(uncertainty=rs.Ball(0.1, p=p)).compile(X, y).cvxpy_problem
    dims = prob.get_problem_data("CLARABEL")[0]["dims"]
    # ‖w‖_q with q ∉ {1, 2, ∞}: one exact power cone per coordinate, no rational approximation
    assert len(dims.p3d) == (3 if cone == "p3d" else 0)
    assert len(dims.soc) == (1 if cone == "soc" else 0)
    if cone == "p3d":
        q = p / (p - 1)
        np.testing.assert_allclose(dims.p3d, 1 / q)


def test_a_model_without_a_penalty_says_why_it_is_not_certified():
    """λ1 = λ2 = 0 without an uncertainty set and a repeated feature: the data bound no direction along which the two
    copies trade weight (docs/certificates.md, "Models without a penalty or set"), and the package's bound needs
    Σ a_i y_i x_i = 0 exactly; the answer is then "inaccurate" with the reason and the remedy. Its objective still
    matches a CVXPY model written here (the point is good; only the certificate is missing), and its gap, the whole
    objective, is a valid bound. (Features of full rank are certified: tests/test_nominal_unpenalized_certificate.py;
    a shared box, ball or ellipsoid: tests/test_unpenalized_certificate.py.)"""
    X, y = make_classification(120, 4, seed=3)
    X = np.hstack([X, X[:, :1]])
    s = np.where(y == 1, 1.0, -1.0)
    with pytest.warns(rs.ConvergenceWarning, match=r"without a penalty \(λ1 = λ2 = 0\).*penalty=rs.L2\(1e-6\)"):
        sol = rs.Problem().solve(X, y, solver="clarabel")
    w, b = cp.Variable(5), cp.Variable()
    ref = cp.Problem(cp.Minimize(cp.sum(cp.pos(1 - cp.multiply(s, X @ w + b))) / len(s)))
    ref.solve(solver="CLARABEL")
    assert sol.status == "inaccurate" and sol.objective - sol.gap <= ref.value + 1e-7
    assert sol.objective == pytest.approx(ref.value, abs=1e-6)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        penalized = rs.Problem(penalty=rs.L2(1e-6)).solve(X, y, solver="clarabel")
    assert not any("without a penalty" in str(c.message) for c in caught)
    assert "without a penalty" not in penalized.message

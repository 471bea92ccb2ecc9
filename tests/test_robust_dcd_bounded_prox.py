"""robust-dcd's prox with bounds on the weights (``docs/derivations/robust_dcd.md`` §7): the unbounded prox where no
bound binds, the 2-ball's root over the candidate coordinates only, the sparse epoch's maintained candidate list,
and solves with bounds against CVXPY models written here."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import brentq

import robustsvm as rs
from robustsvm.backends import _robust_dcd_kernels as rk
from robustsvm.backends import _shared_set_kernels as kern
from robustsvm.backends.shared_set import SharedSetArrays, Workspace
from robustsvm.certificates.duality import penalty_conjugate

D = 8


def _arrays(lower, upper, unc, l2=1.0, l1=0.0, X=None):
    """The solver's arrays of a model with the bounds ``[lower, upper]`` (signs where a side is 0), on tiny data
    unless ``X`` is given."""
    d = lower.size
    if X is None:
        X = np.vstack([np.eye(d), -np.eye(d)])
    y = np.r_[np.ones(X.shape[0] // 2), np.zeros(X.shape[0] - X.shape[0] // 2)]
    prob = rs.Problem(penalty=rs.L2(l2) + rs.L1(l1), bounds=(lower, upper), uncertainty=unc, positive_class=1)
    return SharedSetArrays.from_model(prob.normalize(X, y))


def _cvxpy_prox(z, tau, lower, upper, two):
    """``argmin_{l ≤ w ≤ u} ½‖w − z‖² + τ σ(w)``, σ the 2-norm (2-ball) or the 1-norm (Box), by CVXPY."""
    w = cp.Variable(z.size)
    cons = [w[np.isfinite(lower)] >= lower[np.isfinite(lower)], w[np.isfinite(upper)] <= upper[np.isfinite(upper)]]
    cp.Problem(cp.Minimize(0.5 * cp.sum_squares(w - z) + tau * (cp.norm(w, 2) if two else cp.norm1(w))),
               cons).solve(solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    return w.value


def _brute_root(z, tau, lower, upper):
    """``w = clip(s z, l, u)`` with the root over all coordinates of ``‖clip(s z, l, u)‖(1 − s) = τ s``."""
    if tau == 0:
        return np.clip(z, lower, upper)
    z_e = np.where(np.clip(z, lower, upper) != 0, z, 0.0)  # without the weights fixed at 0 on z's side
    if np.all(lower <= 0) and np.all(upper >= 0) and np.linalg.norm(z_e) <= tau:  # G(0+) = ‖z_e‖ − τ ≤ 0
        return np.zeros_like(z)
    f = lambda s: np.linalg.norm(np.clip(s * z, lower, upper)) * (1 - s) - tau * s  # noqa: E731
    return np.clip(brentq(f, 1e-150, 1.0, xtol=1e-16, rtol=1e-15) * z, lower, upper)


def _cases():
    """(name, z, τ, lower, upper): random draws and the adversarial ones."""
    rng = np.random.default_rng(3)
    lower = np.array([-0.5, 0.2, -np.inf, -1.0, -0.1, -np.inf, -0.3, -np.inf])
    upper = np.array([0.4, 1.0, -0.3, np.inf, 0.1, np.inf, np.inf, 0.05])
    out = [(f"random-{k}", 2.0 * rng.normal(size=D), 0.3 + rng.uniform(), lower, upper) for k in range(4)]
    free_lo, free_up = -np.full(D, 0.6), np.full(D, 0.6)
    z = np.array([1.5, -0.2, 0.6, -0.6, 0.0, 0.3, -2.0, 0.1])
    out += [
        ("zero z", np.zeros(D), 0.5, free_lo, free_up),
        ("zero z, bounds excluding 0", np.zeros(D), 0.5, lower, upper),
        ("z exactly at its bounds", z, 0.4, free_lo, free_up),
        ("infinite bounds", z, 0.4, -np.full(D, np.inf), np.full(D, np.inf)),
        ("one-sided bounds", z, 0.4, np.where(z > 0, -np.inf, -0.1), np.where(z > 0, 0.2, np.inf)),
        ("no shrink (τ = 0)", z, 0.0, free_lo, free_up),
        ("w = 0 (‖z‖ ≤ τ)", z, 10.0, free_lo, free_up),
        ("w ≠ 0 forced by the bounds (‖z‖ ≤ τ)", z, 10.0, lower, upper),
        ("far bounds (none can bind)", z, 0.4, -np.full(D, 1e3), np.full(D, 1e3)),
        ("a weight fixed at 0, w = 0 (‖z_e‖ ≤ τ < ‖z‖)", z, 1.0, np.r_[0.0, free_lo[1:]], np.r_[0.0, free_up[1:]]),
        ("a weight fixed at 0, w ≠ 0", z, 0.3, np.r_[0.0, free_lo[1:]], np.r_[0.0, free_up[1:]]),
    ]
    s_unb = 1 - 0.4 / np.linalg.norm(z)  # a bound exactly where the unbounded shrink puts the coordinate
    at_clip = np.r_[s_unb * z[0], np.full(D - 1, 5.0)]
    out.append(("bound at the unbounded clip point", z, 0.4, -np.full(D, 5.0), at_clip))
    return out


@pytest.mark.parametrize("case", _cases(), ids=lambda c: c[0])
@pytest.mark.parametrize("two", [True, False], ids=["2-ball", "box"])
def test_the_bounded_prox_is_exact_and_its_u_a_saddle_point(case, two):
    """The kernel's w (unbounded prox when nothing leaves the box, else the clip at the candidates' root) is the
    CVXPY prox and the brute-force root over all coordinates; u is in V and a saddle point
    (clip(T(v − Au)/λ2, l, u) = w); scal holds u·w, ‖u‖², 2h*(v − Au)/λ2 (the package's box conjugate) and
    Σ_{w_h≠0} u_h²."""
    _, z, tau, lower, upper = case
    arrays = _arrays(lower, upper, rs.Ball(radius=1.0) if two else rs.Box(radius=1.0))
    setk, prm = arrays.set_kernel, arrays.params(rho=0.0)
    lo, hi = arrays.box if arrays.box is not None else (-np.full(D, np.inf), np.full(D, np.inf))
    # sign sides at 0 become signs of the model: z = T(v)/λ2 is then the sign-clipped v
    work = Workspace(D)
    work.refresh(setk, prm, z, tau, 1)
    st = work.state
    zs = kern.softclip(z, 0.0, arrays.sg, 1.0)
    fixed = (lo == 0) & (hi == 0)  # weights fixed at 0: the kernel's T zeroes them (the prox is the same)
    np.testing.assert_array_equal(st.z, np.where(fixed, 0.0, zs))
    exact = _cvxpy_prox(zs, tau, lo, hi, two)
    value = lambda w: 0.5 * np.sum((w - zs) ** 2) + tau * (np.linalg.norm(w) if two else np.abs(w).sum())  # noqa
    assert value(st.w) <= value(np.clip(exact, lo, hi)) + 1e-12  # no worse than CVXPY's (feasible) point
    np.testing.assert_allclose(st.w, exact, atol=5e-5)
    if two:
        np.testing.assert_allclose(st.w, _brute_root(zs, tau, lo, hi), atol=1e-11)
        assert np.linalg.norm(st.u) <= 1 + 1e-12
    else:
        np.testing.assert_allclose(st.w, np.clip(np.sign(zs) * np.maximum(np.abs(zs) - tau, 0), lo, hi), atol=1e-15)
        assert np.abs(st.u).max() <= 1 + 1e-15
    assert np.all(st.w >= lo) and np.all(st.w <= hi)
    p = z - tau * st.u
    np.testing.assert_allclose(np.clip(kern.softclip(p, 0.0, arrays.sg, 1.0), lo, hi), st.w, atol=1e-10)
    conj = penalty_conjugate(p, 1.0, 0.0, lower=lo, upper=hi)
    assert st.scal["ww"][0] == pytest.approx(2.0 * conj, rel=1e-10, abs=1e-13)
    assert st.scal["uw"][0] == pytest.approx(st.u @ st.w, rel=1e-12, abs=1e-15)
    assert st.scal["uu"][0] == pytest.approx(st.u @ st.u, rel=1e-12, abs=1e-15)
    assert st.scal["ua"][0] == pytest.approx(st.u[st.w != 0] @ st.u[st.w != 0], rel=1e-12, abs=1e-15)


def test_bounds_that_cannot_bind_give_the_unbounded_prox_bit_for_bit():
    """Far bounds: the kernel takes the unbounded prox itself (same arithmetic as the signs' model)."""
    z = np.random.default_rng(1).normal(size=D)
    sg = np.where(np.arange(D) % 3 == 0, -1, 1)
    lo0, hi0 = np.where(sg > 0, 0.0, -np.inf), np.where(sg < 0, 0.0, np.inf)
    for unc in (rs.Ball(radius=1.0), rs.Box(radius=1.0), rs.Ball(radius=1.0, p=np.inf)):
        states = []
        for lo, hi in ((lo0, hi0), (np.where(sg < 0, -1e3, lo0), np.where(sg > 0, 1e3, hi0))):
            arrays = _arrays(lo, hi, unc)
            work = Workspace(D)
            work.refresh(arrays.set_kernel, arrays.params(rho=0.0), z, 0.3, 1)
            states.append(work.state)
        for k in ("w", "u", "z", "scal"):
            np.testing.assert_array_equal(getattr(states[0], k), getattr(states[1], k))


@pytest.mark.parametrize("l1, kind", [(0.0, "forced"), (0.05, "forced"), (0.0, "free"), (0.0, "fixed")])
def test_the_sparse_epochs_candidate_list_follows_z(l1, kind):
    """Random row moves through the sparse 2-ball epoch's update (the epoch start every 20 steps): after each,
    the scale s is at most smax, the candidate flags are exactly {h : smax·|z_h| > cap_h}, Σ_{h∉C} z_h²
    matches, and the O(|C|) scalars (scale, u·w, ‖u‖², 2h*/λ2, Σ_{w≠0} u²) equal those of the O(d) bounded
    prox; coordinates enter and leave C (which empties at times unless some bounds exclude 0 or fix a weight at
    0), the list is remade when s passes smax."""
    rng = np.random.default_rng(11)
    d, n = 40, 60
    X = sp.random(n, d, density=0.2, format="csr", random_state=2, data_rvs=rng.standard_normal)
    lower = np.where(rng.random(d) < 0.5, -rng.uniform(0.05, 0.4, d), -np.inf)
    upper = np.where(rng.random(d) < 0.5, rng.uniform(0.05, 0.4, d), np.inf)
    forced = kind == "forced"
    if kind != "free":
        lower[3], upper[3] = 0.0, 0.0  # a weight fixed at 0 (a candidate whenever z_3 ≠ 0)
    if forced:
        lower[:2], upper[2] = 0.02, -0.03  # bounds excluding 0
    arrays = _arrays(lower, upper, rs.Ball(radius=1.0), l2=0.5, l1=l1, X=X)
    setk, prm, rows = arrays.set_kernel, arrays.params(rho=0.0), arrays.rows()
    assert setk.forced == forced
    work, ref = Workspace(d), Workspace(d)
    st = work.state
    A = 0.2
    work.refresh(setk, prm, np.zeros(d), A, 1)
    shrink, _, nz2, ncand, smax = rk._ball2_start(st, setk, prm, A)
    entered = left = empty = remade = 0
    moves = []  # half of the steps undo an earlier one: v keeps returning near 0
    for step in range(400):
        if moves and rng.random() < 0.5:
            i, dv = moves.pop()
            dv = -dv
        else:
            i, dv = int(rng.integers(n)), 0.3 * rng.normal()
            moves.append((i, dv))
        if step % 20 == 19:
            shrink, _, nz2, ncand, smax = rk._ball2_start(st, setk, prm, A)
        before, smax_before = st.flag == 1, smax
        nz2, ncand = rk._ball2_move(rows, i, dv, st, setk, prm, nz2, ncand, smax)
        A = max(0.0, A + 0.05 * rng.normal()) if step % 30 != 29 else 0.0
        shrink, inv_m, nz2, ncand, smax = rk._ball2_level_of(st, setk, prm, A, nz2, ncand, shrink, smax)
        remade += smax != smax_before
        assert 0.0 <= shrink <= smax <= 1.0
        cand = smax * np.abs(st.z) > setk.cap
        # a superset of the coordinates a bound can clip at some s ≤ smax
        assert np.all(cand >= ((smax * st.z > setk.chi) | (smax * st.z < setk.clo)))
        np.testing.assert_array_equal(st.flag == 1, cand)
        assert sorted(st.cand[:ncand]) == sorted(np.flatnonzero(cand))
        empty += ncand == 0
        entered += int(np.sum(cand & ~before))
        left += int(np.sum(~cand & before))
        assert nz2 == pytest.approx(float(st.z[~cand] @ st.z[~cand]), rel=1e-9, abs=1e-12)
        ref.refresh(setk, prm, st.v, A, 1)
        r = ref.state
        np.testing.assert_array_equal(r.z, st.z)
        nw, tau = np.linalg.norm(r.w), A / prm.lam
        np.testing.assert_allclose(np.clip(shrink * st.z, setk.lo, setk.hi), r.w, atol=1e-12)
        # m = ‖w‖ (τ when w = 0) while candidates are listed, else max(‖z‖, τ) as without bounds (the maintained
        # sums drift by rounding in absolute terms, as without bounds: m near 0 is known to ~1e-8)
        m = (nw if nw > 0 else tau) if ncand else max(np.linalg.norm(st.z), tau)
        if max(np.linalg.norm(st.z), tau) < 1e-6:  # z = 0 up to the drift of the sums, τ = 0: u is arbitrary
            continue
        assert 1 / inv_m == pytest.approx(m, rel=1e-9, abs=1e-7)
        for k in ("uw", "uu", "ww", "ua"):
            assert st.scal[k][0] == pytest.approx(r.scal[k][0], rel=1e-9, abs=1e-7), (step, k)
    assert entered > 10 and left > 10 and remade > 3 and (empty == 0 if forced else empty > 10 or kind == "fixed")


# ------------------------------------------------------------- solves against CVXPY models
def _cvxpy_model(X, y, l2, l1, radius, two, lower, upper):
    """Hinge (mean), L2 + L1, free intercept, robust margin y(x·w + b) − r σ(w), bounds; solved tight."""
    n, d = X.shape
    ypm = np.where(y == 1, 1.0, -1.0)
    w, b, xi = cp.Variable(d), cp.Variable(), cp.Variable(n, nonneg=True)
    sigma = cp.norm(w, 2) if two else cp.norm1(w)
    fl, fu = np.isfinite(lower), np.isfinite(upper)
    cons = [xi >= 1 - cp.multiply(ypm, X @ w + b) + radius * sigma, w[fl] >= lower[fl], w[fu] <= upper[fu]]
    obj = 0.5 * l2 * cp.sum_squares(w) + l1 * cp.norm1(w) + cp.sum(xi) / n
    prob = cp.Problem(cp.Minimize(obj), cons)
    prob.solve(solver="CLARABEL", tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11)
    return float(prob.value), w.value


@pytest.mark.parametrize("unc", [rs.Ball(radius=0.05), rs.Box(radius=0.02), rs.Ball(radius=0.02, p=np.inf)],
                         ids=["2-ball", "box", "ball-inf"])
@pytest.mark.parametrize("l1", [0.0, 0.005])
def test_robust_dcd_with_bounds_that_bind_later_against_cvxpy(unc, l1):
    """Generated sparse (and the same dense) data, bounds that the iterates reach only after some epochs (caps
    at a fraction of the unbounded optimum, w starts at 0), one side excluding 0, far sides that never bind:
    robust-dcd's certified bracket holds CVXPY's optimum, its point is feasible and near CVXPY's."""
    rng = np.random.default_rng(4)
    n, d = 300, 30
    X = sp.random(n, d, density=0.3, format="csr", random_state=5, data_rvs=rng.standard_normal)
    w0 = rng.normal(size=d)
    y = (np.asarray(X @ w0).ravel() + 0.3 * rng.normal(size=n) > 0).astype(int)
    l2 = 0.05
    free = rs.Problem(penalty=rs.L2(l2) + rs.L1(l1), uncertainty=unc, positive_class=1).solve(
        X, y, solver="robust-dcd", tol=1e-8, random_state=0)
    top = np.abs(free.w)
    lower = np.where(free.w < 0, -0.5 * top, -1e3)
    upper = np.where(free.w > 0, 0.5 * top, 1e3)
    top_h, low_h = np.argmax(free.w), np.argmin(free.w)
    lower[top_h], upper[top_h] = 0.6 * free.w.max(), np.inf  # excludes 0, one-sided
    lower[low_h] = -np.inf  # one-sided
    two = isinstance(unc, rs.Ball) and unc.p == 2
    ref, w_ref = _cvxpy_model(X.toarray(), y, l2, l1, unc.radius, two, lower, upper)
    prob = rs.Problem(penalty=rs.L2(l2) + rs.L1(l1), bounds=(lower, upper), uncertainty=unc, positive_class=1)
    for data in (X, X.toarray()):
        sol = prob.solve(data, y, solver="robust-dcd", tol=1e-9, random_state=0, max_iter=50000)
        assert sol.status == "optimal", sol.message
        assert np.all(sol.w >= lower) and np.all(sol.w <= upper)
        slack = 1e-7 * max(1.0, abs(ref))  # CVXPY's accuracy (robust-dcd's bracket is certified to 1e-9)
        assert sol.objective - sol.gap <= ref + slack and ref <= sol.objective + slack
        assert np.linalg.norm(sol.w - w_ref) <= np.sqrt(2 * (sol.gap + slack) / l2) + 1e-6
    assert np.sum(np.isclose(sol.w, upper) | np.isclose(sol.w, lower)) >= 3  # bounds do bind at the optimum


@pytest.mark.parametrize("far", [True, False], ids=["bounds-inside", "bounds-binding"])
def test_the_certificates_dual_bound_uses_the_box_conjugate_or_its_equal(far):
    """robust-dcd's dual bound with bounds: the package's box conjugate (penalty_conjugate) at v − Au, or the
    signs' (λ2/2)‖T(v − Au)/λ2‖² when T(v − Au)/λ2 lies in the box (then the two are equal)."""
    from robustsvm.backends.dual_ascent import Products
    from robustsvm.backends.shared_set import dual_certificate
    from robustsvm.certificates.duality import class_balance, dual_value

    rng = np.random.default_rng(8)
    n, d = 80, 6
    X = rng.normal(size=(n, d))
    y = (X[:, 0] + 0.5 * rng.normal(size=n) > 0).astype(int)
    hi = np.full(d, 1e3 if far else 0.05)
    prob = rs.Problem(penalty=rs.L2(0.1) + rs.L1(0.01), bounds=(-hi, hi), uncertainty=rs.Ball(radius=0.1),
                      positive_class=1)
    arrays = SharedSetArrays.from_model(prob.normalize(X, y))
    alpha = rng.uniform(0.0, 1.0, size=n)
    cert = dual_certificate(arrays, Products(arrays.X), alpha, Workspace(d))
    # the same bound written out: α balanced as the certificate does, u its kernel point, the box conjugate
    pos = y == 1
    cya = arrays.c * arrays.y * alpha
    fp, fn = class_balance(float(cya[pos].sum()), float(-cya[~pos].sum()))
    a_t = np.where(pos, fp * alpha, fn * alpha)
    v_t = X.T @ (arrays.c * arrays.y * a_t)
    A_t = float(arrays.c @ (a_t * arrays.r))
    work = Workspace(d)
    work.refresh(arrays.set_kernel, arrays.params(rho=0.0), v_t, A_t, 1)
    p = v_t - A_t * work.state.u
    conj = penalty_conjugate(p, 0.1, 0.01, None, lower=-hi, upper=hi)
    expected = dual_value(arrays.loss, arrays.c, a_t, conj, arrays.intercept, 0.0)
    assert cert.D == pytest.approx(expected, rel=1e-12, abs=1e-14)
    w = kern.softclip(p, 0.01, arrays.sg, 10.0)
    assert bool(np.all(np.abs(w) <= hi)) == far

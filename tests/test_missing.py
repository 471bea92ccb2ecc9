"""Missing values as uncertainty: the conditional Gaussian, the coordinate ellipsoid, the model, the estimator."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
from scipy import stats

import robustsvm as rs
from robustsvm.uncertainty import CoordinateEllipsoid, uncertainty_from_dict
from robustsvm.uncertainty.missing import ConditionalGaussian, fit_gaussian, missing_as_uncertainty

MU = np.array([1.0, -2.0, 0.5, 3.0])
SIGMA = np.array([[2.0, 0.6, -0.4, 0.3],
                  [0.6, 1.5, 0.2, -0.5],
                  [-0.4, 0.2, 1.0, 0.1],
                  [0.3, -0.5, 0.1, 0.8]])


def _mcar(X: np.ndarray, rate: float, seed: int) -> np.ndarray:
    out = X.copy()
    out[np.random.default_rng(seed).random(X.shape) < rate] = np.nan
    return out


def _toy(n: int = 60, seed: int = 0, rate: float = 0.2):
    """Two Gaussian classes in R^4 sharing SIGMA, values missing completely at random."""
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.5, 1, -1)
    X = rng.multivariate_normal(np.zeros(4), SIGMA, size=n) + 0.9 * y[:, None] * np.array([1.0, -1.0, 0.5, 0.0])
    return X, _mcar(X, rate, seed + 1), y


# ------------------------------------------------------------------ the conditional Gaussian
def test_conditional_mean_and_covariance_are_the_schur_complement():
    x = np.array([0.3, np.nan, 1.2, np.nan])
    M, O = [1, 3], [0, 2]
    S_oo, S_mo = SIGMA[np.ix_(O, O)], SIGMA[np.ix_(M, O)]
    mean = MU[M] + S_mo @ np.linalg.solve(S_oo, x[O] - MU[O])
    cov = SIGMA[np.ix_(M, M)] - S_mo @ np.linalg.solve(S_oo, S_mo.T)
    g = ConditionalGaussian(MU, SIGMA)
    idx, G, C = g.conditional(np.isnan(x))
    assert idx.tolist() == M
    np.testing.assert_allclose(C, cov, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(MU[M] + G @ (x[O] - MU[O]), mean, rtol=1e-12)
    imputed = g.impute(np.vstack([x, [np.nan] * 4, [1.0, 2.0, 3.0, 4.0]]))
    np.testing.assert_allclose(imputed[0, M], mean, rtol=1e-12)
    np.testing.assert_allclose(imputed[0, O], x[O])
    np.testing.assert_allclose(imputed[1], MU)  # nothing observed: the mean
    np.testing.assert_array_equal(imputed[2], [1.0, 2.0, 3.0, 4.0])


def test_em_matches_the_closed_form_of_a_monotone_pattern():
    """x₂ missing on some rows, x₁ always seen: the ML estimate is Anderson's (1957) regression form."""
    rng = np.random.default_rng(3)
    X = rng.multivariate_normal([1.0, -1.0], [[1.0, 0.7], [0.7, 2.0]], size=400)
    X[rng.random(400) < 0.35, 1] = np.nan
    seen = ~np.isnan(X[:, 1])
    x1, (c1, c2) = X[:, 0], X[seen].T
    s11_all = np.mean((x1 - x1.mean()) ** 2)
    s11, s12 = np.mean((c1 - c1.mean()) ** 2), np.mean((c1 - c1.mean()) * (c2 - c2.mean()))
    beta = s12 / s11
    resid = np.mean((c2 - c2.mean() - beta * (c1 - c1.mean())) ** 2)
    mu2 = c2.mean() + beta * (x1.mean() - c1.mean())
    expected_cov = np.array([[s11_all, beta * s11_all], [beta * s11_all, resid + beta**2 * s11_all]])
    g = fit_gaussian(X, method="em")
    np.testing.assert_allclose(g.mean, [x1.mean(), mu2], rtol=1e-5)
    np.testing.assert_allclose(g.covariance, expected_cov, rtol=1e-5)


def test_complete_rows_gaussian_and_its_ledoit_wolf_shrinkage():
    from sklearn.covariance import ledoit_wolf

    rng = np.random.default_rng(4)
    X = _mcar(rng.multivariate_normal(MU, SIGMA, size=40), 0.1, 5)
    full = X[~np.isnan(X).any(axis=1)]
    g0 = fit_gaussian(X, method="complete", shrinkage=0.0)
    np.testing.assert_allclose(g0.mean, full.mean(axis=0))
    np.testing.assert_allclose(g0.covariance, np.cov(full, rowvar=False))
    # Ledoit-Wolf on the standardized complete rows is (n−1)/n times ours rescaled to unit variances
    sd = full.std(axis=0, ddof=1)
    lw, _ = ledoit_wolf((full - full.mean(axis=0)) / sd)
    n = full.shape[0]
    g = fit_gaussian(X, method="complete")
    np.testing.assert_allclose(g.covariance, n / (n - 1) * lw * np.outer(sd, sd), rtol=1e-10)


# ------------------------------------------------------------------ the coordinate ellipsoid
def _sphere(k: int, m: int, seed: int) -> np.ndarray:
    if k == 1:
        return np.array([[1.0], [-1.0]])
    if k == 2:
        t = np.linspace(0, 2 * np.pi, m, endpoint=False)
        return np.column_stack([np.cos(t), np.sin(t)])
    U = np.random.default_rng(seed).standard_normal((m, k))
    return U / np.linalg.norm(U, axis=1, keepdims=True)


def test_coordinate_ellipsoid_support_against_brute_force():
    C = np.array([[1.0, 0.4], [0.4, 0.5]])
    V = CoordinateEllipsoid(C, [1, 3], 4)
    L = np.linalg.cholesky(C)
    points = np.zeros((20000, 4))
    points[:, [1, 3]] = _sphere(2, 20000, 0) @ L.T  # the boundary of the set
    rng = np.random.default_rng(1)
    for z in rng.standard_normal((5, 4)):
        brute = float(np.max(points @ z))
        assert V.support(z) >= brute - 1e-12
        assert V.support(z) <= brute + 1e-6 * max(1.0, abs(brute))
        v = V.worst_case(z)
        assert V.contains(v) and v[0] == 0 and v[2] == 0
        assert z @ v == pytest.approx(V.support(z), rel=1e-12)
    np.testing.assert_allclose(V.support(rng.standard_normal((3, 4))).shape, (3,))


def test_coordinate_ellipsoid_membership_gauge_and_retraction():
    V = CoordinateEllipsoid([[4.0]], [2], 3)
    assert V.contains([0, 0, 2.0]) and not V.contains([0, 0, 2.1])
    assert not V.contains([1e-3, 0, 0.5])  # off the subspace
    assert V.gauge(np.array([0, 0, 1.0])) == pytest.approx(0.5)
    assert V.gauge(np.array([0.1, 0, 1.0])) == np.inf
    r = V.retract(np.array([0.3, -0.2, 5.0]))
    assert r[0] == 0 and r[1] == 0 and V.contains(r, tol=0.0) and r[2] == pytest.approx(2.0)
    # the primal description: max z·v over membership_cvx is the support
    z = np.array([0.7, -1.0, 0.4])
    v = cp.Variable(3)
    prob = cp.Problem(cp.Maximize(z @ v), V.membership_cvx(v))
    prob.solve(solver="CLARABEL")
    assert prob.value == pytest.approx(V.support(z), rel=1e-7)
    empty = CoordinateEllipsoid(np.zeros((0, 0)), [], 3, radius=0.0)
    assert empty.support(z) == 0.0 and empty.contains(np.zeros(3)) and not empty.contains(z)


def test_coordinate_ellipsoid_round_trips_and_refuses_bad_input():
    V = CoordinateEllipsoid([[1.0, 0.2], [0.2, 2.0]], [0, 2], 5, radius=1.5)
    W = uncertainty_from_dict(V.to_dict())
    assert W.key() == V.key() and W.radius == 1.5
    with pytest.raises(ValueError, match="coordinates must lie in"):
        CoordinateEllipsoid([[1.0]], [5], 5)
    with pytest.raises(ValueError, match="increasing"):
        CoordinateEllipsoid(np.eye(2), [2, 1], 5)
    with pytest.raises(ValueError, match="coordinates lists 1"):
        CoordinateEllipsoid(np.eye(2), [1], 5)
    with pytest.raises(ValueError, match="positive definite"):
        CoordinateEllipsoid([[1.0, 1.0], [1.0, 1.0]], [0, 1], 5)
    with pytest.raises(TypeError, match="n_features"):
        CoordinateEllipsoid([[1.0]], [0], 2.5)
    with pytest.raises(TypeError, match="coordinates must be integers"):
        CoordinateEllipsoid([[1.0]], [0.5], 2)


# ------------------------------------------------------------------ sets and their coverage
def test_sets_span_the_missing_coordinates_with_the_chi2_radius():
    X = np.array([[1.0, np.nan, 0.0, np.nan], [0.0, 1.0, 2.0, 3.0], [np.nan, 0.0, 1.0, 2.0],
                  [2.0, np.nan, 1.0, np.nan]])
    g = ConditionalGaussian(MU, SIGMA)
    mv = missing_as_uncertainty(X, level=0.8, gaussian=g)
    s0, s1, s2, s3 = mv.uncertainty
    assert s0 is s3  # one missing pattern, one set
    assert s0.coordinates.tolist() == [1, 3] and s0.radius == pytest.approx(np.sqrt(stats.chi2.ppf(0.8, 2)))
    assert s2.coordinates.tolist() == [0] and s2.radius == pytest.approx(stats.norm.ppf(0.9))
    assert s1.radius == 0.0 and s1.k == 0
    np.testing.assert_allclose(mv.X, g.impute(X))
    np.testing.assert_array_equal(mv.missing, np.isnan(X))


@pytest.mark.parametrize("level", [0.5, 0.9])
def test_the_sets_cover_the_true_values_at_the_stated_level(level):
    rng = np.random.default_rng(11)
    n = 20000
    X = rng.multivariate_normal(MU, SIGMA, size=n)
    Xm = _mcar(X, 0.3, 12)
    incomplete = np.isnan(Xm).any(axis=1) & ~np.isnan(Xm).all(axis=1)

    def coverage(mv):
        inside = [mv.uncertainty[i].with_radius(1.0).contains((X[i] - mv.X[i]) / mv.uncertainty[i].radius, tol=0.0)
                  for i in np.flatnonzero(incomplete)]
        return float(np.mean(inside))

    m = int(incomplete.sum())
    se = np.sqrt(level * (1 - level) / m)
    exact = coverage(missing_as_uncertainty(Xm, level=level, gaussian=ConditionalGaussian(MU, SIGMA)))
    assert abs(exact - level) <= 4 * se
    # the Gaussian estimated by EM on the same rows: the sampling error of (μ, Σ) adds a little
    est = missing_as_uncertainty(Xm, level=level)
    assert abs(coverage(est) - level) <= 4 * se + 0.01


# ------------------------------------------------------------------ the robust model
def _cvxpy_reference(mv, y, l2):
    """The robust counterpart written out: min (λ/2)‖w‖² + mean_i hinge(y_i(c_i·w + b) − κ_i‖L_iᵀ w_{M_i}‖)."""
    n, d = mv.X.shape
    w, b = cp.Variable(d), cp.Variable()
    terms = []
    for i in range(n):
        s = mv.uncertainty[i]
        pen = s.radius * cp.norm2(s.L.T @ w[s.coordinates]) if s.k else 0.0
        terms.append(cp.pos(1 - y[i] * (mv.X[i] @ w + b) + pen))
    prob = cp.Problem(cp.Minimize(l2 / 2 * cp.sum_squares(w) + sum(terms) / n))
    prob.solve(solver="CLARABEL")
    return prob.value, w.value, b.value


def test_robust_model_against_a_written_out_socp_and_a_brute_force_worst_case():
    _, Xm, y = _toy(n=50, seed=2)
    mv = missing_as_uncertainty(Xm, level=0.9, method="em")
    l2 = 0.05
    sol = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(l2), uncertainty=mv.uncertainty).solve(mv.X, y,
                                                                                            solver="clarabel")
    assert sol.status == "optimal" and np.isfinite(sol.gap) and sol.gap <= 1e-6
    ref_value, w_ref, b_ref = _cvxpy_reference(mv, y, l2)
    # the package's objective is an upper bound within its certified gap of the optimum
    assert sol.objective - sol.gap - 1e-7 <= ref_value <= sol.objective + 1e-7
    # the written-out model's point, certified by the package's own dual construction over the sets
    cert = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(l2), uncertainty=mv.uncertainty).certify(mv.X, y, w_ref, b_ref)
    assert 0.0 <= cert.gap <= 1e-5
    assert cert.objective == pytest.approx(ref_value, abs=1e-7)
    chk = rs.robust_check(sol, mv.X, y)
    assert chk.holds
    # brute force: the smallest margin over each set's boundary is the robust margin
    w, b = sol.w, sol.b
    for i in np.flatnonzero(mv.missing.any(axis=1)):
        s = mv.uncertainty[i]
        U = _sphere(s.k, 4000, i)
        pts = np.tile(mv.X[i], (U.shape[0], 1))
        pts[:, s.coordinates] += s.radius * U @ s.L.T
        brute = float(np.min(y[i] * (pts @ w + b)))
        robust = chk.robust_margins[i]
        assert brute >= robust - 1e-9
        assert brute <= robust + (2e-3 if s.k > 2 else 1e-5) * max(1.0, abs(robust))


def test_a_model_without_missing_values_is_the_nominal_one():
    X, _, y = _toy(n=40, seed=6)
    mv = missing_as_uncertainty(X, level=0.9, method="complete")
    assert all(s.radius == 0.0 for s in mv.uncertainty)
    robust = rs.Problem(penalty=rs.L2(0.1), uncertainty=mv.uncertainty).solve(mv.X, y, solver="clarabel")
    nominal = rs.Problem(penalty=rs.L2(0.1)).solve(X, y, solver="clarabel")
    assert abs(robust.objective - nominal.objective) <= robust.gap + nominal.gap + 1e-8


def test_a_user_imputer_gives_the_centres():
    from sklearn.impute import SimpleImputer

    _, Xm, _ = _toy(n=30, seed=7)
    mv = missing_as_uncertainty(Xm, imputer=SimpleImputer(strategy="median"))
    med = np.nanmedian(Xm, axis=0)
    miss = np.isnan(Xm)
    np.testing.assert_allclose(mv.X[miss], np.broadcast_to(med, Xm.shape)[miss])
    np.testing.assert_array_equal(mv.X[~miss], Xm[~miss])
    ref = missing_as_uncertainty(Xm)
    assert [s.key() for s in mv.uncertainty] == [s.key() for s in ref.uncertainty]


def test_errors_name_their_argument():
    _, Xm, _ = _toy(n=30, seed=8)
    with pytest.raises(ValueError, match="level must lie strictly between 0 and 1"):
        missing_as_uncertainty(Xm, level=1.0)
    with pytest.raises(TypeError, match="level"):
        missing_as_uncertainty(Xm, level="high")
    every_row = Xm.copy()
    every_row[:, 0] = np.nan
    every_row[0, 0] = 1.0
    every_row[0, 1] = np.nan
    with pytest.raises(ValueError, match="method='complete' needs at least two rows without missing values"):
        missing_as_uncertainty(every_row, method="complete")
    with pytest.raises(ValueError, match=r"column\(s\) \[2\]"):
        missing_as_uncertainty(np.column_stack([Xm[:, :2], np.full(30, np.nan)]))
    with pytest.raises(ValueError, match="infinity"):
        missing_as_uncertainty(np.where(np.isnan(Xm), np.inf, Xm))
    with pytest.raises(ValueError, match="method must be"):
        missing_as_uncertainty(Xm, method="pairwise")
    with pytest.raises(ValueError, match="shrinkage must lie in"):
        fit_gaussian(Xm, shrinkage=1.0)
    with pytest.raises(TypeError, match="dense"):
        import scipy.sparse as sp

        missing_as_uncertainty(sp.csr_matrix(np.nan_to_num(Xm)))
    with pytest.raises(TypeError, match="imputer"):
        missing_as_uncertainty(Xm, imputer="mean")
    with pytest.raises(ValueError, match="covariance must be positive definite"):
        ConditionalGaussian(np.zeros(2), [[1.0, 2.0], [2.0, 1.0]])
    with pytest.raises(ValueError, match="gaussian has 2 features but X has 4"):
        missing_as_uncertainty(Xm, gaussian=ConditionalGaussian(np.zeros(2), np.eye(2)))


# ------------------------------------------------------------------ the estimator
def test_estimator_uncertain_is_the_model_language_model():
    _, Xm, y = _toy(n=60, seed=9)
    est = rs.RobustSVC(l2=0.05, missing="uncertain", missing_level=0.8).fit(Xm, y)
    mv = missing_as_uncertainty(Xm, level=0.8)
    sol = rs.Problem(penalty=rs.L2(0.05), uncertainty=mv.uncertainty).solve(mv.X, y, solver="clarabel")
    assert est.solution_.status == "optimal" and est.gap_ <= 1e-6
    assert abs(est.solution_.objective - sol.objective) <= est.gap_ + sol.gap + 1e-8
    # prediction fills missing values with the fitted Gaussian's conditional means
    Xt = _toy(n=20, seed=10)[1]
    np.testing.assert_allclose(est.decision_function(Xt), est.decision_function(est.imputation_.impute(Xt)))
    np.testing.assert_allclose(est.imputation_.mean, mv.gaussian.mean)


def test_estimator_mean_and_drop_are_the_baselines():
    from sklearn.impute import SimpleImputer

    _, Xm, y = _toy(n=80, seed=13, rate=0.1)
    mean = rs.RobustSVC(l2=0.05, missing="mean").fit(Xm, y)
    ref = rs.RobustSVC(l2=0.05).fit(SimpleImputer().fit_transform(Xm), y)
    assert abs(mean.solution_.objective - ref.solution_.objective) <= mean.gap_ + ref.gap_ + 1e-9
    keep = ~np.isnan(Xm).any(axis=1)
    drop = rs.RobustSVC(l2=0.05, missing="drop").fit(Xm, y)
    ref = rs.RobustSVC(l2=0.05).fit(Xm[keep], y[keep])
    assert abs(drop.solution_.objective - ref.solution_.objective) <= drop.gap_ + ref.gap_ + 1e-9
    np.testing.assert_allclose(drop.imputation_.mean, Xm[keep].mean(axis=0))


def test_estimator_conditional_mean_is_em_imputation():
    _, Xm, y = _toy(n=60, seed=15)
    est = rs.RobustSVC(l2=0.05, missing="conditional_mean").fit(Xm, y)
    ref = rs.RobustSVC(l2=0.05).fit(fit_gaussian(Xm).impute(Xm), y)
    assert abs(est.solution_.objective - ref.solution_.objective) <= est.gap_ + ref.gap_ + 1e-9


def test_em_shrinks_a_singular_estimate():
    """Fewer rows than features: the EM estimate is singular, so the correlations are shrunk (Ledoit-Wolf)."""
    rng = np.random.default_rng(16)
    X = _mcar(rng.standard_normal((8, 12)), 0.2, 17)
    g = fit_gaussian(X)
    eig = np.linalg.eigvalsh(g.covariance)
    assert eig[0] > 1e-8 * eig[-1]
    with pytest.raises(ValueError, match="singular"):
        fit_gaussian(X, shrinkage=0.0)


def test_the_gaussian_does_not_depend_on_the_features_units():
    """Columns in units 10⁶ apart (areas next to ratios, as in clinical tables): the EM Gaussian of the rescaled
    data is the rescaled Gaussian (EM's steps and its stop measured in each column's unit), and a well-conditioned
    correlation matrix is never called singular, whatever the units."""
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    X = _mcar(X[:200], 0.05, 3)
    unit = 10.0 ** np.linspace(-3, 3, X.shape[1])
    sd = np.nanstd(X, axis=0)
    g, scaled = fit_gaussian(X / sd), fit_gaussian(X * unit / sd)
    np.testing.assert_allclose(scaled.mean / unit, g.mean, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(scaled.covariance / np.outer(unit, unit), g.covariance, rtol=1e-8, atol=1e-10)
    raw = fit_gaussian(X)  # the raw features: variances from 1e-7 to 1e5
    corr = raw.covariance / np.sqrt(np.outer(np.diag(raw.covariance), np.diag(raw.covariance)))
    assert np.linalg.eigvalsh(corr)[0] > 1e-7
    est = rs.RobustSVC(l2=1.0, missing="uncertain", solver="clarabel").fit(X, y[:200])
    assert est.solution_.status == "optimal" and est.score(X, y[:200]) > 0.8


def test_nan_errors_name_the_remedies():
    """A NaN is a missing value: the error names the estimator's ``missing=`` options (or, for ``Problem.solve``,
    ``rs.missing_as_uncertainty``); an infinity is not, and its error says to replace it."""
    X, _, y = _toy()
    X[3, 1] = np.nan
    with pytest.raises(ValueError, match=r"has NaN in 1 row \(first: 3\) \(missing='uncertain' fits"):
        rs.RobustSVC().fit(X, y)
    with pytest.raises(ValueError, match=r"rs\.missing_as_uncertainty\(X\)"):
        rs.Problem(penalty=rs.L2(1.0)).solve(X, y)
    X[3, 1] = np.inf
    with pytest.raises(ValueError, match=r"has infinity in 1 row \(first: 3\) \(replace or drop them first\)"):
        rs.RobustSVC().fit(X, y)


def test_estimator_missing_parameters_and_errors():
    _, Xm, y = _toy(n=40, seed=14)
    est = rs.RobustSVC(missing="uncertain")
    assert est.get_params()["missing"] == "uncertain" and est.get_params()["missing_level"] == 0.9
    assert est.set_params(missing_level=0.5).missing_level == 0.5
    with pytest.raises(ValueError, match="X contains NaN"):
        rs.RobustSVC().fit(Xm, y)
    with pytest.raises(ValueError, match="'missing' parameter of RobustSVC must be a str among"):
        rs.RobustSVC(missing="impute").fit(Xm, y)
    with pytest.raises(ValueError, match="needs a scalar radius"):  # a scalar one is added to each row's set
        rs.RobustSVC(missing="uncertain", uncertainty=rs.Box(np.full(len(y), 0.1))).fit(Xm, y)
    with pytest.raises(ValueError, match="level must lie strictly between 0 and 1"):
        rs.RobustSVC(missing="uncertain", missing_level=0.0).fit(Xm, y)
    fitted = rs.RobustSVC(l2=0.1, missing="mean").fit(np.nan_to_num(Xm), y)
    assert np.all(np.isfinite(fitted.decision_function(Xm)))
    with pytest.raises(ValueError, match="X contains NaN"):
        rs.RobustSVC(l2=0.1).fit(np.nan_to_num(Xm), y).predict(Xm)


@pytest.mark.slow
def test_check_estimator_with_missing_values_as_uncertainty():
    from sklearn.utils.estimator_checks import check_estimator

    check_estimator(rs.RobustSVC(missing="uncertain"))
    check_estimator(rs.RobustSVC(missing="drop"))


def test_the_benchmark_table_and_page_block(tmp_path):
    from benchmarks import bench_missing as bench

    ok = {"accuracy": 0.9, "brier": 0.1, "log_loss": 0.3, "max_gap": 1e-9, "all_optimal": True}
    rows = [{"data": "pima", "rate": 0.3, "repeat": k, "method": label,
             "result": None if label == "complete case" else dict(ok, accuracy=0.9 + 0.1 * k)}
            for k in range(2) for label, _ in bench.METHODS]
    text = bench.table(rows, 2)
    assert "| pima | 30% | complete case | — | — | — | 0/2 | — |" in text
    assert "| pima | 30% | mean imputation | 0.950 ± 0.071 | 0.100 ± 0.000 | 0.300 ± 0.000 | 2/2 | 1.0e-09 |" in text
    page = tmp_path / "page.md"
    page.write_text(f"# P\n\nbefore\n\n{bench.BEGIN}\nold\n{bench.END}\n\nafter\n")
    bench.write_block(page, "new table")
    assert page.read_text() == f"# P\n\nbefore\n\n{bench.BEGIN}\nnew table\n{bench.END}\n\nafter\n"
    page.write_text("# P\n")
    with pytest.raises(ValueError, match="no block"):
        bench.write_block(page, "x")

"""The Sha et al. (2002) reproduction: splits, count analysis, Theorem 2 on breast cancer, the quick run."""

from __future__ import annotations

import argparse

import numpy as np
import pytest

from robustsvm.reproduce import sha2002
from tests._page_checks import check_sha


def test_sonar_halves_are_stratified_104_104():
    from robustsvm.datasets import load

    _, y, _ = load("sonar")
    n_c = np.bincount(y)
    for seed in range(3):
        tr, te = sha2002._halves(y, seed)
        assert len(tr) == len(te) == 104
        assert np.intersect1d(tr, te).size == 0 and np.union1d(tr, te).size == 208
        assert np.all(np.abs(np.bincount(y[tr], minlength=2) - n_c / 2) <= 0.5)
    assert not np.array_equal(sha2002._halves(y, 0)[0], sha2002._halves(y, 1)[0])


def test_count_analysis_matches_hand_arithmetic():
    # 10/104 = 9.615 %, 8/104 = 7.692 %, 7/104 = 6.731 %, 11/104 = 10.577 %; 4/42 = 9.52 %, 3/42 = 7.14 %
    res = sha2002.count_analysis()
    by104 = res["by_size"][104]
    assert by104[0] == ([10], [10])  # 9.6 %
    assert by104[2] == ([], [8])  # 7.6 %: 8/104 truncates to it but rounds to 7.7
    assert by104[3] == ([7], [7])  # 6.7 %
    assert by104[4] == ([11], [])  # 10.6 %: rounds, 10.577 truncates to 10.5
    assert all(r == ([], []) for r in res["by_size"][42])
    assert 104 in res["either"] and 42 not in res["either"] and 41 not in res["either"]
    # breast cancer: 137 test samples; 7/137 = 5.11 %, 5/137 = 3.65 %, 6/137 = 4.38 %
    bc = sha2002.count_analysis(percentages=(5.1, 3.6, 4.4), sizes=(137,))["by_size"][137]
    assert [r for r, _ in bc] == [[7], [5], [6]]


@pytest.fixture(scope="module")
def breast_cancer_rbf3():
    from robustsvm.datasets import load
    from robustsvm.terms.kernels import RBF

    X, y, _ = load("wisconsin")
    tr, _ = sha2002._split(len(y), 0)
    s = np.where(y[tr] == 1, 1.0, -1.0)
    K = RBF(3.0)(X[tr])
    alpha, _, info = sha2002.exact_hard_margin(K, s)
    return K, s, alpha, info


def test_exact_solution_satisfies_the_hard_margin_kkt(breast_cancer_rbf3):
    K, s, alpha, _ = breast_cancer_rbf3
    margins = (np.outer(s, s) * K) @ alpha  # y_i f(x_i)
    sv = alpha > 0
    assert np.all(alpha >= 0) and 100 < sv.sum() < len(s)
    assert np.max(np.abs(margins[sv] - 1)) < 1e-8 and margins[~sv].min() > 1 - 1e-8
    # Clarabel on the unscaled dual (psd quad_form) reaches the same objective
    from robustsvm.duals import solve_nqp_cvxpy

    ref = solve_nqp_cvxpy(sha2002._nqp(K, s))
    f = 0.5 * alpha @ (np.outer(s, s) * K) @ alpha - alpha.sum()
    assert f <= ref.objective + 1e-6 * abs(ref.objective)
    assert abs(f - ref.objective) < 1e-5 * abs(ref.objective)


def test_theorem2_bound_holds_and_matches_the_m3_updates(breast_cancer_rbf3):
    """γ_i of eq. (8) against the bound of eq. (9), both computed here from their definitions."""
    K, s, alpha, _ = breast_cancer_rbf3
    non = np.flatnonzero(alpha == 0)
    A = np.outer(s, s) * K
    # eq. (8) at α*: the factor of the multiplicative update of a coefficient at 0
    zp, zm = np.where(A > 0, A, 0) @ alpha, np.where(A < 0, -A, 0) @ alpha
    gamma = (1 + np.sqrt(1 + 4 * zp * zm)) / (2 * zp)
    # eq. (9) from the feature-space geometry: w = Σ α_j y_j φ(x_j)
    Kxw = np.array([sum(alpha[j] * s[j] * K[i, j] for j in np.flatnonzero(alpha)) for i in range(len(s))])
    Kww = float(np.sum(alpha * s * Kxw))
    d_i = np.abs(Kxw) / np.sqrt(Kww)
    d = d_i.min()
    assert d == pytest.approx(1 / np.sqrt(Kww), rel=1e-8)  # the margin is 1/‖w‖ at the optimum
    ell_i = np.sqrt(np.diag(K))
    bound = 1 / (1 + (d_i - d) * d / (2 * ell_i * ell_i.max()))
    assert np.all(gamma[non] < 1) and np.all(gamma[non] <= bound[non] + 1e-12)
    assert np.allclose(sha2002.theorem2_bound(K, s, alpha)["bound"], bound, rtol=1e-10)
    # the measured factor of one M3 update from α* + δ on the non-support coordinates
    from robustsvm.backends.m3 import m3_solve

    start = alpha.copy()
    start[non] = 1e-10
    v = m3_solve(sha2002._nqp(K, s), init=start, tol=1e-300, max_iter=1, threshold=0.0).v
    assert np.allclose(v[non] / 1e-10, gamma[non], atol=1e-6)
    # on the support vectors the update is (to first order) a fixed point
    assert np.allclose(v[alpha > 0], alpha[alpha > 0], rtol=1e-6)


def test_theorem2_on_the_run_decay_approaches_gamma():
    th = sha2002.theorem2(iterations=512)
    ok = np.isfinite(th["run_rate"])
    assert ok.sum() > 0.9 * th["gamma"].size
    # late in the run the non-support coefficients shrink by ≈ γ_i per update
    assert np.median(np.abs(th["run_rate"][ok] - th["gamma"][ok])) < 5e-3
    assert np.all(th["gamma"] <= th["bound"] + 1e-12)
    gap = th["objective_gap"]
    assert np.all(np.diff(gap) <= 1e-9 * np.abs(gap[:-1]).max()) and gap[-1] < 1e-3 * gap[0]


def test_fig1_coefficients_decay():
    decay = sha2002.coefficient_decay(iterations=(0, 1, 64))
    a0, a1, a64 = decay["alpha"]
    ns = decay["n_support"]
    assert np.all(a0 == 1.0)
    # non-support coefficients collapse: their mass after 64 updates is a small fraction of that after 1
    assert a64[ns:].sum() < 0.1 * a1[ns:].sum()
    assert decay["train_error"][-1] <= decay["train_error"][0]


@pytest.mark.slow
def test_quick_run_writes_the_page_between_markers(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(f"# Title\n\nprose before\n\n{sha2002.BEGIN}\nold\n{sha2002.END}\n\nprose after\n")
    parser = argparse.ArgumentParser()
    sha2002.add_arguments(parser)
    args = parser.parse_args(["--quick", "--output", str(page), "--no-progress", "--output-dir", str(tmp_path)])
    assert sha2002.run(args) == 0
    text = page.read_text()
    check_sha(text)  # every number of its sentences is one of its tables'
    assert (tmp_path / "figures" / "sha2002_fig1.png").is_file() and "](figures/sha2002_fig2.png)" in text
    assert text.startswith("# Title\n\nprose before") and text.rstrip().endswith("prose after")
    assert "\nold\n" not in text
    assert "| Sonar |" in text and "[9.6]" in text and "| Breast cancer |" in text
    assert "robustsvm reproduce sha2002 --quick" in text and "γ_i ≤ bound for" in text
    with pytest.raises(ValueError, match="--halves"):
        sha2002.run(parser.parse_args(["--halves", "0", "--output-dir", str(tmp_path / "never")]))
    assert not (tmp_path / "never").exists()  # bad options write nothing

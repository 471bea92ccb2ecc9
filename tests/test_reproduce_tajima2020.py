"""``robustsvm reproduce tajima2020``: its pieces checked independently, and the quick run end to end."""

from __future__ import annotations

import numpy as np
import pytest

import robustsvm as rs
from robustsvm.cli.main import main
from robustsvm.reproduce import tajima2020 as taj
from tests._page_checks import check_tajima
from tests.conftest import make_classification


def test_optdigits_is_the_real_digit_data():
    X, y = taj.load_optdigits()
    assert X.shape == (5620, 64)
    assert np.allclose(np.linalg.norm(X, axis=1), 1.0)
    assert set(np.unique(y)) == {-1, 1} and 0.45 < np.mean(y == 1) < 0.55  # odd vs even digits


def test_similarity_features_match_sklearn_rbf():
    from sklearn.metrics.pairwise import rbf_kernel

    rng = np.random.default_rng(0)
    A, B = rng.normal(size=(7, 3)), rng.normal(size=(5, 3))
    assert np.allclose(taj.similarity_features(A, B, 2.5), rbf_kernel(A, B, gamma=1 / (2 * 2.5)))


def test_convergence_case_brackets_clarabel_and_pegasos_sphere():
    """D_ref ≤ P⋆ (Clarabel) ≤ P_best, and at small λ every Pegasos iterate after w = 0 has P ≥ P(0) = 1."""
    X, y01 = make_classification(120, 8, seed=3)
    X = X / np.linalg.norm(X, axis=1, keepdims=True)
    y = np.where(y01 == 1, 1, -1)
    signs = taj.make_signs(X, y)
    case = taj.convergence_case(X, y, signs, 1e-4, iterations=30, ref_epochs=20000)
    ref = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(1e-4 / 120), signs=signs, intercept=False).solve(
        X, y, solver="clarabel", solver_options={"tol_gap_abs": 1e-12, "tol_gap_rel": 1e-12})
    assert case.d_ref <= ref.objective * (1 + 1e-7) and ref.objective <= case.p_best * (1 + 1e-7)
    assert case.pg_threshold > 30  # the step stays longer than the ball radius over the whole run
    pg = case.pg["objective"]
    assert pg[0] == pytest.approx(1.0) and np.all(pg[1:] >= 1.0 - 1e-12)
    claims = taj.claims_71(case)
    assert claims["pg_stuck_at_zero"]
    # Frank-Wolfe's primal values never fall below the certified lower bound
    assert np.all(case.fw["objective"] >= case.d_ref - 1e-12)
    # both methods' dual values are lower bounds on Clarabel's optimum (weak duality)
    for h in (case.fw, case.pg):
        assert np.all(h["dual"] <= ref.objective * (1 + 1e-7))


def _unit_rows(n: int, d: int, seed: int):
    X, y01 = make_classification(n, d, seed=seed)
    return X / np.linalg.norm(X, axis=1, keepdims=True), np.where(y01 == 1, 1, -1)


def test_exact_reference_falls_back_when_dcd_stops_short():
    """dcd cut at 2 epochs misses 1e-9 and says so; Clarabel then certifies the optimum dcd reaches when let run."""
    X, y = _unit_rows(150, 6, seed=5)
    signs = taj.make_signs(X, y)
    lam = 1.0 / 150  # λn = 1: well conditioned, dcd converges
    short = taj.exact_reference(X, y, signs, lam, dcd_epochs=2)
    assert short.solver == "dcd" and short.dcd_epochs == 2 and short.rel_gap > 1e-9
    assert short.rel_gap == pytest.approx(short.dcd_rel_gap)
    rescued = taj.exact_reference(X, y, signs, lam, dcd_epochs=2, fallback="clarabel")
    assert rescued.solver == "clarabel" and rescued.rel_gap <= 1e-9 and "clarabel" in rescued.times
    assert rescued.dcd_rel_gap > 1e-9 and rescued.dcd_epochs == 2  # what dcd reached alone is kept
    full = taj.exact_reference(X, y, signs, lam, dcd_epochs=200_000, fallback="clarabel")
    assert full.solver == "dcd" and full.rel_gap <= 1e-9 and "clarabel" not in full.times
    # two algorithms, one optimum: each value lies in the other's certified bracket
    assert full.bound <= rescued.objective * (1 + 1e-12) and rescued.bound <= full.objective * (1 + 1e-12)
    assert rescued.objective == pytest.approx(full.objective, rel=2e-9)


def test_convergence_case_carries_the_fallback_reference():
    X, y = _unit_rows(100, 5, seed=7)
    signs = taj.make_signs(X, y)
    case = taj.convergence_case(X, y, signs, 1e-4, iterations=12, pg_iterations=7, ref_epochs=2,
                                fallback="clarabel")
    assert case.reference.solver == "clarabel" and case.reference.rel_gap <= 1e-9
    assert case.p_ref == case.reference.objective and case.ref_gap <= 1e-9 * case.p_ref
    assert case.fw["objective"].size == 13 and case.pg["objective"].size == case.pg["dual"].size == 7
    assert case.p_best <= case.p_ref and case.d_ref >= case.reference.bound


def test_similarity_split_protocol():
    from robustsvm.datasets import load

    X, y, _ = load("sonar")
    out = taj.similarity_split(X, y, 0, lambdas=(1e-2, 1.0), folds=3)
    for model in ("conventional", "sign"):
        assert out[model]["chosen"] == (1e-2, 1.0)[int(np.argmax(out[model]["cv"]))]
        assert 0.5 < out[model]["test"] <= 1.0
    assert out["solves"] == 2 * 2 * 4 and out["not_converged"] == 0


def test_paper_reference_is_frank_wolfe_after_tprime_iterations():
    """D(α^(T′)) is the dual value of a separate T′-iteration Frank-Wolfe run, a lower bound on Clarabel's optimum."""
    X, y = _unit_rows(90, 6, seed=11)
    signs = taj.make_signs(X, y)
    case = taj.convergence_case(X, y, signs, 1e-2, iterations=10, ref_epochs=5000, reference_iterations=40)
    prob = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(1e-2 / 90), signs=signs, intercept=False)
    long = prob.solve(X, y, solver="frank-wolfe", tol=1e-15, max_iter=40)
    short = prob.solve(X, y, solver="frank-wolfe", tol=1e-15, max_iter=10)
    assert case.tprime == 40 and case.d_tprime == pytest.approx(long.history["dual"][40], rel=1e-12)
    np.testing.assert_allclose(case.fw["objective"], short.history["objective"], rtol=1e-12)  # the first 10 iterates
    ref = prob.solve(X, y, solver="clarabel", solver_options={"tol_gap_abs": 1e-12, "tol_gap_rel": 1e-12})
    assert case.d_tprime <= ref.objective * (1 + 1e-7) and case.d_tprime <= case.d_ref + 1e-15
    claims = taj.claims_71(case)
    # the paper's measure is the error against a lower reference: never smaller than the one against D_ref
    assert claims["paper_fw_end"] >= claims["err_fw_end"] - 1e-15
    assert claims["paper_ref_below"] == pytest.approx((case.d_ref - case.d_tprime) / case.p_best)
    assert claims["rel_fw_end"] == pytest.approx(claims["err_fw_end"] / case.p_best)
    lam = 1e-2 / 90
    assert claims["thm61_iterations"] == pytest.approx(2 * np.max(np.sum(X * X, 1)) / (lam * case.p_best) - 2)


def test_paper_tables_are_the_papers():
    """Spot values of Tables 1 and 2 as printed in the paper (classes 1, 5 and 12)."""
    assert taj.PAPER_TABLE1[5] == ((0.709, 0.017), (0.784, 0.008))
    assert taj.PAPER_TABLE2["conventional"][1][0] == (0.734, 0.010)
    assert taj.PAPER_TABLE2["conventional"][12][4] == (0.764, 0.015)
    assert taj.PAPER_TABLE2["sign"][5][3] == (0.768, 0.014)
    assert all(len(r) == 5 for t in taj.PAPER_TABLE2.values() for r in t.values())


@pytest.mark.slow
def test_quick_run_writes_the_page(tmp_path, capsys):
    """The quick run writes where it is told, and every number of its sentences is one of its tables'."""
    page = tmp_path / "tajima.md"
    page.write_text("# Title\n\nProse kept.\n")
    assert main(["reproduce", "tajima2020", "--quick", "--no-progress", "--n-jobs", "1", "--page", str(page),
                 "--output-dir", str(tmp_path / "out")]) == 0
    text = page.read_text()
    assert text.startswith("# Title\n\nProse kept.")
    assert "<!-- BEGIN GENERATED: tajima2020 quick -->" in text and "Wilcoxon" in text
    assert text.count("| optdigits (KEEL, real) | 5,620 × 64 |") == 3
    for stem in ("optdigits", "cora", "mnist"):
        figure = tmp_path / "out" / "figures" / f"tajima2020_convergence_{stem}_quick.png"
        assert figure.stat().st_size > 10_000
        assert f"](out/figures/{figure.name})" in text  # linked from the page's folder
    assert "sonar" in capsys.readouterr().out
    check_tajima(text, "tajima2020 quick")

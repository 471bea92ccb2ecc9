"""``robustsvm reproduce woolnough2022``: grids, the paper's pq row and the claims table."""

from __future__ import annotations

import numpy as np
import pytest

from robustsvm.reproduce import woolnough2022 as wool
from tests._page_checks import check_woolnough


def test_grids_default_full_quick():
    full = wool.grids("Box-SVM", 3.0, "full")
    assert full["l1"].size == full["l2"].size == 15 and full["radius"].size == 10  # the paper's
    np.testing.assert_allclose(full["l2"], 2.0 ** np.arange(-10, 5))
    np.testing.assert_allclose(full["radius"][[0, -1]], [2.0**-20, 3.0])
    default = wool.grids("Box-SVM", 3.0, "default")
    # the default cut: every other λ2, every λ1, the 5 middle radii — each value one of the paper's
    assert default["l2"].size == 8 and default["l1"].size == 15 and default["radius"].size == 5
    np.testing.assert_allclose(default["l2"], 2.0 ** np.arange(-10, 5, 2))
    for key in ("l2", "l1", "radius"):
        assert np.isin(default[key], full[key]).all()
    assert default["radius"][0] > 2.0**-20 and default["radius"][-1] < 3.0
    np.testing.assert_array_equal(wool.grids("Ball-SVM", 3.0, "default")["radius"], default["radius"])
    assert wool.grids("SVM", 3.0, "default")["l2"].size == 15  # SVM keeps the paper's grid
    assert wool.grids("Box-pq-SVM", 3.0, "default")["nu"].size == 5
    assert wool.grids("Box-pq-SVM", 3.0, True)["nu"].size == 21
    assert wool.grids("SVM", 3.0, "quick")["l2"].size == 2
    with pytest.raises(ValueError, match="full"):
        wool.grids("SVM", 3.0, "huge")


def test_paper_pq_row_is_truncated_and_above_the_optimum():
    """The paper's iteration at the converged row's parameters: α from the paper's range, a worse objective."""
    from robustsvm.backends.pq import PAPER_ALPHAS

    row = wool.paper_pq_row("PIMA", {"nu": 1.0, "l2": 0.0625, "radius": 1e-3}, cv=2)
    assert row.best["alpha"] in PAPER_ALPHAS
    assert row.status == "max_iter" and row.solves == 2 * len(PAPER_ALPHAS)
    excess = float(row.note.split("objective ")[1].split("%")[0])
    assert excess > 0  # a truncated iterate never beats the optimum
    assert 0 < row.test <= 100 and row.fit_cpu > 0


def test_claims_counts_test_samples():
    def row(model, test, features, cpu):
        return wool.Row(dataset="D", instances=100, model=model, kind="", train=0, test=test, fit_time=cpu,
                     fit_cpu=cpu, features=features, n_total=10, best={}, cv=0, solver="", status="", solves=0,
                     grid_time=0, n_test=50)

    rows = [row("SVM", 90.0, 10, 0.1), row("Ball-SVM", 94.0, 8, 0.2), row("Box-SVM", 96.0, 10, 0.3),
            row("Box-pq-SVM", 92.0, 9, 0.05)]
    text = wool.claims(rows)
    assert "| Ball-SVM beats SVM in test accuracy | D | yes | +2 of 50 test samples |" in text
    assert "| Box-SVM selects fewer features than SVM | D | no | 10 vs 10 |" in text
    assert "| Box-SVM has the highest test accuracy | D | yes | +1 test samples against the best other row |" in text
    assert "fits faster than Ball/Box-SVM (CPU) | D | yes | 0.050 s vs 0.200 s |" in text


@pytest.mark.slow
def test_quick_run_writes_where_told(tmp_path, capsys):
    saved = tmp_path / "rows.pkl"
    assert wool.main(["--quick", "--datasets", "PIMA", "--no-progress", "--n-jobs", "1", "--output-dir",
                      str(tmp_path), "--save-results", str(saved)]) == 0
    text = (tmp_path / "woolnough2022.md").read_text()
    # the saved rows rewrite the same page without solving
    assert wool.main(["--from-results", str(saved), "--output-dir", str(tmp_path / "again"), "--no-progress"]) == 0
    assert (tmp_path / "again" / "woolnough2022.md").read_text() == text
    assert "<!-- BEGIN GENERATED: woolnough2022 quick PIMA -->" in text
    for model in wool.MODELS:
        assert f"| PIMA | 768 | {model} |" in text
    assert "Box-pq-SVM (paper's iteration)" in text and "The paper's claims" in text
    assert np.isfinite(float(text.split("| PIMA | 768 | SVM | nominal | ")[1].split("|")[0]))
    check_woolnough(text, "woolnough2022 quick PIMA")  # every number of its sentences is one of its tables'


def test_summary_states_the_rows():
    def row(model, test, features, cpu, ties=1):
        return wool.Row(dataset="D", instances=100, model=model, kind="", train=0, test=test, fit_time=cpu,
                        fit_cpu=cpu, features=features, n_total=10, best={}, cv=97.5, solver="", status="",
                        solves=0, grid_time=0, n_test=50, cv_ties=ties)

    rows = [row("SVM", 90.0, 10, 0.1), row("Ball-SVM", 94.0, 8, 0.2, ties=38), row("Box-SVM", 96.0, 10, 0.3)]
    text = "\n".join(wool.summary(rows))
    assert "- Ball-SVM against SVM: higher test accuracy on 1 of 1 data sets (differences +2 test samples)" in text
    assert "fewer selected features on 1 of 1." in text
    assert "- D Ball-SVM: 38 grid points share the best CV accuracy, 97.50 %" in text
    assert "(and the 8 of 10 features it keeps)" in text and "D Box-SVM:" not in text

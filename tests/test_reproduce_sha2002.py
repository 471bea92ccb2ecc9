"""``robustsvm reproduce sha2002``: count analysis, Theorem 2, Fig. 2 and the quick run."""

from __future__ import annotations

import numpy as np
import pytest

from robustsvm.reproduce import sha2002 as sha


def test_count_analysis_fits_104_test_examples():
    rows = sha.count_analysis()
    for e, fits in rows:
        k, _pct, off = fits[104]
        assert off == pytest.approx(abs(100 * k / 104 - e)) and off < 0.1  # every sonar error is k/104
    assert max(fits[42][2] for _, fits in rows) > 1.0  # 10.6 % is no count of 42


def test_theorem2_bound_at_the_exact_optimum():
    r = sha.theorem2_check(iterations=64)
    assert r["n_non"] > 0 and r["n_support"] + r["n_non"] == r["n_train"]
    # (Aα⋆)_i ≥ 1 at a non-support vector (KKT), which forces γ_i ≤ 1 in eq. (8)
    assert np.all(r["gamma"] <= 1 + 1e-9)
    assert r["holds"] == r["n_non"] and r["max_ratio"] <= 1 + 1e-9
    assert np.all(r["d_i"] >= r["d"] * (1 - 1e-6))  # non-support vectors lie beyond the margin


def test_figure2_quantities(tmp_path):
    q = sha.draw_figure2(str(tmp_path / "f.png"))
    assert q["d_i"] > q["d"] > 0 and q["ell_i"] >= q["d_i"]  # distance to the origin ≥ distance to the plane
    assert (tmp_path / "f.png").stat().st_size > 10_000


@pytest.mark.slow
def test_quick_run_writes_the_page(tmp_path, capsys):
    import argparse

    parser = argparse.ArgumentParser()
    sha.add_arguments(parser)
    page = tmp_path / "sha.md"
    assert sha.run(parser.parse_args(["--quick", "--no-progress", "--page", str(page)])) == 0
    text = page.read_text()
    assert "<!-- BEGIN GENERATED: sha2002 results -->" in text and "104/104" in text and "Theorem 2" in text
    assert (tmp_path / "sha2002_fig1.png").is_file() and (tmp_path / "sha2002_fig2.png").is_file()

"""Smoke run of the benchmark suite's machinery on tiny sizes (no timing is asserted)."""

from __future__ import annotations

import argparse
import re

import numpy as np
import pytest
import scipy.sparse as sp

from benchmarks import bench_suite as bench


def _args(tmp_path, *extra: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    bench.add_arguments(parser)
    return parser.parse_args(["--output", str(tmp_path / "suite.md"), "--figures", str(tmp_path / "fig"), *extra])


def _table(text: str, heading: str) -> dict[str, list[str]]:
    """Rows of the markdown table under ``### heading``, keyed by their first cell."""
    block = text.split(f"### {heading}\n", 1)[1].strip("\n").split("\n\n", 1)[0]
    rows = {}
    for line in block.splitlines()[2:]:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        rows[cells[0]] = cells
    return rows


def test_make_case_shapes():
    X, y, signs = bench.make_case("dense", 300, 49, seed=1)
    assert X.shape == (300, 49) and isinstance(X, np.ndarray)
    assert np.all(X >= 0)
    np.testing.assert_allclose(np.linalg.norm(X, axis=1), 1.0)
    assert set(np.unique(y)) == {-1.0, 1.0}
    assert set(np.unique(signs)) <= {-1, 0, 1} and signs.shape == (49,)
    Xs, ys, _ = bench.make_case("sparse", 200, 3000, seed=1)
    assert set(np.unique(ys)) == {-1.0, 1.0}
    assert sp.issparse(Xs) and Xs.format == "csr" and Xs.shape == (200, 3000)
    assert Xs.nnz < 0.02 * 200 * 3000
    with pytest.raises(ValueError, match="kind"):
        bench.make_case("tall", 10, 10)


def test_quick_suite_writes_the_table(tmp_path):
    args = _args(tmp_path, "--quick", "--solvers", "dcd,dcd (no signs),liblinear,clarabel")
    assert bench.run(args) == 0
    text = (tmp_path / "suite.md").read_text()
    assert "Command: `python benchmarks/bench_suite.py --quick" in text
    assert "cores" in text and "numpy" in text
    for heading in ("MNIST-shaped 600×64, no b", "MNIST-shaped 600×64, free b", "Cora-shaped 500×1500, no b",
                    "Cora-shaped 500×1500, free b"):
        rows = _table(text, heading)
        assert set(rows) == {"dcd", "dcd (no signs)", "liblinear", "clarabel"}
        for row in rows.values():
            assert row[3] == "optimal"
            assert float(row[1]) > 0
        # dcd's certified gap is at most the tolerance; it brackets the optimum, which Clarabel's value
        # approaches from above (up to Clarabel's own reported accuracy)
        p_dcd, p_cl = float(rows["dcd"][4]), float(rows["clarabel"][4])
        rel_dcd, rel_cl = float(rows["dcd"][5]), float(rows["clarabel"][5])
        assert rel_dcd <= 1e-4
        assert p_dcd <= p_cl + rel_dcd * p_dcd + 1e-6 * p_cl  # table values have 6 digits
        assert p_cl >= p_dcd * (1 - rel_dcd) - (rel_cl + 1e-6) * p_cl
        # fewer constraints, smaller objective: the unconstrained models lie below
        assert float(rows["dcd (no signs)"][4]) <= p_dcd
        assert float(rows["liblinear"][4]) <= p_dcd
        assert re.match(r"\d+ epochs, \d+ certificates", rows["dcd"][8])
    ratios = _table(text, "dcd (signs, certified gap) against liblinear (unconstrained) and Clarabel (signs)")
    assert len(ratios) == 4
    assert all("liblinear" in row[3] and "Clarabel" in row[3] for row in ratios.values())
    for row in ratios.values():  # the ratio stated is the one of the two times in the row
        stated = float(row[3].split("dcd takes ")[1].split("×")[0])
        assert stated == pytest.approx(float(row[1].rstrip(" s")) / float(row[2].rstrip(" s")), rel=0.02, abs=0.006)
    assert not re.search(r"\((?:not )?met\b|goal|the bar", text)  # measurements, not targets
    assert "fitted log–log slopes" in text
    for name in ("scaling_n.png", "scaling_d.png"):
        assert (tmp_path / "fig" / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_isolated_worker_measures_and_caps(tmp_path):
    X, y, signs = bench.make_case("dense", 400, 36)
    np.save(tmp_path / "X.npy", X)
    np.savez(tmp_path / "meta.npz", y=y, signs=signs)
    spec = {"data": str(tmp_path), "sparse": False, "solver": "dcd", "intercept": True, "tol": 1e-4, "seed": 0,
            "repeats": 2, "memory_cap_gb": 8.0}
    done = bench._run_isolated(spec, cap=60.0)
    assert done.status == "optimal" and len(done.times) == 2 and not done.capped
    assert done.memory_mb >= 0 and done.rel_gap <= 1e-4
    # a solve that cannot finish within the cap is stopped and reported as such
    slow = bench._run_isolated(spec | {"solver": "frank-wolfe", "tol": 1e-12}, cap=0.3)
    assert slow.capped and slow.status == "> 0.3 s" and not slow.times


@pytest.mark.parametrize(
    ("extra", "match"),
    [(["--repeats", "0"], "repeats"), (["--cap", "-1"], "cap"), (["--solvers", "dcd,cplex"], "cplex")],
)
def test_bad_arguments(tmp_path, extra, match):
    with pytest.raises(ValueError, match=match):
        bench.run(_args(tmp_path, *extra))


def test_dcd_benchmark_row_is_certified_and_has_the_ratios():
    """bench_dcd's machinery on a small case: every dcd solve certified at its defaults, liblinear timed beside."""
    from benchmarks import bench_dcd
    from tests.conftest import make_classification

    X, y = make_classification(300, 6, seed=2)
    y = np.where(np.asarray(y) == 1, 1.0, -1.0)
    signs = bench_dcd.signs_for(6)
    res = bench_dcd.run_case(np.ascontiguousarray(X, dtype=np.float64), y, signs, True, repeats=2, seed=0)
    assert set(res) == set(bench_dcd.SOLVERS) | {"ratios"}
    assert set(res["ratios"]) == set(bench_dcd.RATIOS)
    assert all(np.isfinite(r) and r > 0 for r in res["ratios"].values())
    for name in ("dcd", "dcd (no signs)"):
        assert res[name]["status"] == "optimal"
        assert res[name]["max_rel_gap"] <= 1e-4 * (1 + 1e-9)
        assert 0 < res[name]["max_passes"] <= 1000
    row = bench_dcd._row("small", X.shape, True, res)
    cells = [c.strip() for c in row.strip().strip("|").split("|")]
    assert cells[0] == "small 300×6" and cells[1] == "free"
    assert "columns dropped" in cells[5]
    assert all(cell.endswith("×") and float(cell[:-1]) > 0 for cell in cells[6:9])
    same = res["liblinear (same optimum)"]
    assert same["status"] == "optimal" and 0 <= same["dropped"] < 6


def test_dcd_benchmark_combines_fresh_processes():
    """bench_dcd's Cora-shaped case in two fresh processes (quick sizes, one round each): per solver the medians,
    each ratio the median of the processes' with their range, every dcd solve certified."""
    import argparse

    from benchmarks import bench_dcd

    args = argparse.Namespace(quick=True, seed=0, cpu=-1)
    combined = bench_dcd.cora_processes(args, 1, 2)
    assert set(combined) == {False, True}
    for intercept, res in combined.items():
        for pair in bench_dcd.RATIOS:
            lo, hi = res["spread"][pair]
            assert 0 < lo <= res["ratios"][pair] <= hi
        for name in ("dcd", "dcd (no signs)"):
            assert res[name]["status"] == "optimal" and res[name]["max_rel_gap"] <= 1e-4 * (1 + 1e-9)
        cells = [c.strip() for c in bench_dcd._row("Cora", (3000, 4000), intercept, res).strip().strip("|").split("|")]
        assert all("×" in cell and cell.endswith(")") for cell in cells[6:9])

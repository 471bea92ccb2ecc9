"""Every subcommand of the ``robustsvm`` command, run in a subprocess as a user would."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import robustsvm as rs
from robustsvm import cli
from robustsvm.cli import load_data, main, parse_kernel, parse_signs, parse_uncertainty, reproductions

from .conftest import make_classification


def run(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "robustsvm", *map(str, args)], capture_output=True, text=True,
                          timeout=300, cwd=cwd)


def _assert_usage_error(out):
    assert out.returncode == 2, (out.stdout, out.stderr)
    assert "usage:" in out.stderr


@pytest.fixture(scope="module")
def csv_file(tmp_path_factory):
    X, y = make_classification(60, 4, seed=11)
    frame = pd.DataFrame(X * [1.0, 10.0, 0.1, 3.0] + [0, 5, 0, -2], columns=["alpha", "beta", "gamma", "delta"])
    frame.insert(2, "label", np.where(y == 1, "yes", "no"))
    path = tmp_path_factory.mktemp("cli") / "toy.csv"
    frame.to_csv(path, index=False)
    return path


def test_fit_csv_prints_summary_and_writes_a_valid_reference(tmp_path, csv_file):
    out_json = tmp_path / "sol.json"
    out = run("fit", csv_file, "--target", "label", "--l2", "0.05", "--signs", "beta=-1,alpha=+1",
              "--uncertainty", "box:0.1", "-o", out_json, "--show-weights", "2")
    assert out.returncode == 0, out.stderr
    assert "status      optimal" in out.stdout and "training accuracy" in out.stdout
    assert f"solution written to {out_json}" in out.stdout
    # an independent solve of the same model (other backend) on the same standardized data
    X, y, names, _ = load_data(str(csv_file), "label")
    assert names == ["alpha", "beta", "gamma", "delta"]
    raw = pd.read_csv(csv_file).drop(columns=["label"]).to_numpy()
    np.testing.assert_allclose(X, (raw - raw.mean(0)) / raw.std(0))
    ref = rs.Problem(penalty=rs.L2(0.05), signs={"beta": -1, "alpha": 1}, uncertainty=rs.Box(0.1)).solve(
        X, y, solver="scs", feature_names=names, tol=1e-9)
    sol = rs.Solution.from_json(out_json)
    assert sol.objective == pytest.approx(ref.objective, rel=1e-6)
    np.testing.assert_allclose(sol.w, ref.w, atol=1e-4)
    assert sol.w[1] <= 0 <= sol.w[0]
    assert rs.validate(sol, X, y).ok
    # the two largest weights are printed with their names
    printed = re.findall(r"w\[(\w+)\] = ([-+.\deE]+)", out.stdout)
    top = np.argsort(-np.abs(sol.w))[:2]
    assert [p[0] for p in printed] == [names[h] for h in top]

    # validate subcommand: OK on the same data, FAILED on the raw (unstandardized) data
    ok = run("validate", out_json, csv_file, "--target", "label")
    assert ok.returncode == 0, ok.stderr
    assert "validation  OK" in ok.stdout
    bad = run("validate", out_json, csv_file, "--target", "label", "--no-standardize")
    assert bad.returncode == 1 and "fingerprint differs" in bad.stdout


def test_fit_argument_errors(csv_file, capsys):
    _assert_usage_error(run("fit", csv_file, "--uncertainty", "cube:0.1"))
    out = run("fit", csv_file, "--target", "nope")
    assert out.returncode == 1 and "'nope' is not a column" in out.stderr
    # the same parser in-process, for the other mistakes
    for argv in (["fit", str(csv_file), "--l2", "-1"], ["fit", str(csv_file), "--loss", "logistic"], ["fit"]):
        with pytest.raises(SystemExit) as exc:
            main(argv)
        assert exc.value.code == 2 and "usage:" in capsys.readouterr().err
    assert main(["fit", "no-such-data-set"]) == 1
    assert "name must be one of" in capsys.readouterr().err


def test_fit_named_data_set_first_order_backend():
    out = run("fit", "wisconsin", "--solver", "frank-wolfe", "--l2", "0.1", "--tol", "1e-6", "--no-intercept",
              "--no-progress")
    assert out.returncode == 0, out.stderr
    assert "683 x 9" in out.stdout and "solver      frank-wolfe" in out.stdout
    acc = float(re.search(r"training accuracy ([\d.]+)", out.stdout).group(1))
    assert acc > 0.9  # the benign/malignant classes of this data set are nearly separable
    out = run("fit", "wisconsin", "--solver", "frank-wolfe", "--max-iter", "2", "--strict", "--no-progress")
    assert out.returncode == 3 and "max_iter" in out.stdout and "warning" in out.stderr


def test_compare_tabulates_backends_that_agree(csv_file):
    out = run("compare", csv_file, "--target", "label", "--solvers", "clarabel,scs,frank-wolfe", "--l2", "0.1",
              "--tol", "1e-7")
    assert out.returncode == 0, out.stderr
    rows = {line.split()[0]: line.split() for line in out.stdout.splitlines()
            if line.split() and line.split()[0] in ("clarabel", "scs", "frank-wolfe")}
    assert set(rows) == {"clarabel", "scs", "frank-wolfe"}
    assert "solving" in out.stderr  # the progress bar goes to stderr
    objectives = {k: float(v[2]) for k, v in rows.items()}
    assert objectives["scs"] == pytest.approx(objectives["clarabel"], rel=1e-5)
    assert objectives["frank-wolfe"] == pytest.approx(objectives["clarabel"], rel=1e-5)
    # a backend that cannot run is reported in its row and the exit status
    out = run("compare", csv_file, "--target", "label", "--solvers", "clarabel,no-such-solver", "--no-progress")
    assert out.returncode == 1 and "error" in out.stdout
    _assert_usage_error(run("compare", csv_file, "--max-iter", "0"))


def test_solvers_and_missing_command(capsys):
    out = run("solvers")
    assert out.returncode == 0 and "clarabel" in out.stdout
    _assert_usage_error(run("frobnicate"))
    _assert_usage_error(run("demo", "--bogus"))  # the demo itself runs in test_cli.py
    _assert_usage_error(run("validate", "only-one-argument.json"))
    assert main([]) == 2 and "a command is required" in capsys.readouterr().err


def test_reproduce_needs_a_known_name(capsys, monkeypatch):
    _assert_usage_error(run("reproduce", "no-such-paper"))
    assert main(["reproduce"]) == 2 and "a reproduction NAME is required" in capsys.readouterr().err
    # a registered name whose module is not installed gets a clear error, not a traceback
    monkeypatch.setattr(cli, "KNOWN_REPRODUCTIONS", (*cli.KNOWN_REPRODUCTIONS, "nosuchpaper2099"))
    assert main(["reproduce", "nosuchpaper2099"]) == 1
    assert "no module robustsvm.reproduce.nosuchpaper2099" in capsys.readouterr().err


#: tiny runs of each reproduction (a few seconds each)
QUICK = {
    "sha2002": (["--seeds", "1", "--iterations", "8"], "| Sonar |"),
    "woolnough2022": (["--quick", "--datasets", "PIMA", "--models", "SVM", "--no-progress"], "| PIMA | SVM |"),
}


@pytest.mark.parametrize("name", sorted(QUICK))
def test_reproduce_runs_each_paper(name):
    assert name in reproductions()
    args, expected = QUICK[name]
    out = run("reproduce", name, *args)
    assert out.returncode == 0, out.stderr
    assert expected in out.stdout
    _assert_usage_error(run("reproduce", name, "--no-such-option"))


def test_bench_quick_run_and_bad_option(tmp_path):
    out = run("bench", "--quick", "--solvers", "dcd,liblinear", "--no-scaling", "--output", tmp_path / "b.md")
    assert out.returncode == 0, out.stderr
    text = (tmp_path / "b.md").read_text()
    assert "liblinear" in text and "dcd" in text
    _assert_usage_error(run("bench", "--no-such-option"))


def test_console_script_is_installed():
    script = Path(sys.executable).parent / "robustsvm"
    out = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0
    for command in ("demo", "solvers", "fit", "compare", "validate", "reproduce", "bench"):
        assert command in out.stdout


def test_option_parsers():
    assert parse_signs("mean radius=-1, 3=+1,x=0") == {"mean radius": -1, 3: 1, "x": 0}
    for bad in ("a", "a=2", "=1", ""):
        with pytest.raises(argparse.ArgumentTypeError):
            parse_signs(bad)
    box = parse_uncertainty("box:0.25")
    assert isinstance(box, rs.Box) and box.radius == 0.25
    ball = parse_uncertainty("Ball:0.5:inf")
    assert isinstance(ball, rs.Ball) and ball.p == np.inf and ball.radius == 0.5
    for bad in ("box", "box:-1", "ball:1:0.5", "box:1:2", "cube:1", "ball:x"):
        with pytest.raises(argparse.ArgumentTypeError):
            parse_uncertainty(bad)


def test_kernel_option_parser_and_fit(csv_file, tmp_path, capsys):
    assert parse_kernel("linear") == rs.Linear()
    assert parse_kernel("poly:3") == rs.Polynomial(3)
    assert parse_kernel("RBF:0.5") == rs.RBF(0.5)
    for bad in ("poly:2.5", "rbf", "gauss:1", "rbf:x"):
        with pytest.raises(argparse.ArgumentTypeError):
            parse_kernel(bad)
    # in-process: an RBF model by m3, checked against clarabel on the same data
    out_json = tmp_path / "k.json"
    assert main(["fit", str(csv_file), "--target", "label", "--kernel", "rbf:1.5", "--no-intercept", "--l2", "0.1",
                 "--solver", "m3", "--tol", "1e-8", "--max-iter", "20000", "--no-progress", "-o", str(out_json)]) == 0
    assert "solver      m3" in capsys.readouterr().out
    X, y, _, _ = load_data(str(csv_file), "label")
    ref = rs.Problem(penalty=rs.L2(0.1), kernel=rs.RBF(1.5), intercept=False).solve(X, y)
    sol = rs.Solution.from_json(out_json)
    assert sol.objective == pytest.approx(ref.objective, rel=1e-5)
    # a kernel with a free intercept: clarabel solves its dual with yᵀα = 0; m3 refuses it clearly (status 1)
    assert main(["fit", str(csv_file), "--target", "label", "--kernel", "rbf:1", "--no-progress"]) == 0
    assert "solver      clarabel" in capsys.readouterr().out
    assert main(["fit", str(csv_file), "--target", "label", "--kernel", "rbf:1", "--solver", "m3",
                 "--no-progress"]) == 1
    assert "error" in capsys.readouterr().err


def test_csv_errors(tmp_path):
    path = tmp_path / "bad.csv"
    pd.DataFrame({"a": ["x", "y", "z"], "b": [1.0, 2.0, 3.0], "t": [0, 1, 0]}).to_csv(path, index=False)
    with pytest.raises(ValueError, match="must be numeric"):
        load_data(str(path), "t")
    with pytest.raises(FileNotFoundError):
        load_data(str(tmp_path / "missing.csv"))
    with pytest.raises(ValueError, match="CSV files only"):
        load_data("wdbc", target="x")

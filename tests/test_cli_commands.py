"""Every subcommand of the ``robustsvm`` command, run in a subprocess as a user would."""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import robustsvm as rs
import robustsvm.cli.main as cli
from robustsvm.cli.main import (
    load_data,
    main,
    parse_intercept,
    parse_kernel,
    parse_signs,
    parse_uncertainty,
    reproductions,
)

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
    for argv in (["fit", str(csv_file), "--l2", "-1"], ["fit", str(csv_file), "--loss", "cross-entropy"], ["fit"]):
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
def test_reproduce_runs_each_paper(name, tmp_path):
    assert name in reproductions()
    args, expected = QUICK[name]
    out = run("reproduce", name, *args, cwd=tmp_path)  # the page goes to ./reproductions: a scratch folder
    assert out.returncode == 0, out.stderr
    assert expected in out.stdout
    assert (tmp_path / "reproductions" / f"{name}.md").is_file()
    _assert_usage_error(run("reproduce", name, "--no-such-option"))


def test_console_script_is_installed():
    script = Path(sys.executable).parent / "robustsvm"
    out = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0
    for command in ("demo", "solvers", "fit", "compare", "validate", "reproduce"):
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


# ------------------------------------------------------------ version, JSON, model lines, intercept flags
ROOT = Path(__file__).resolve().parents[1]


def strict_json(text):
    """Parse ``text`` as strict JSON (NaN and Infinity are not JSON)."""
    def refuse(constant):
        raise AssertionError(f"non-standard JSON constant {constant}")

    return json.loads(text, parse_constant=refuse)


def test_version(capsys):
    expected = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0 and capsys.readouterr().out.strip() == f"robustsvm {expected}"


def test_fit_json_names_the_positive_class_and_matches_another_backend(csv_file, tmp_path, capsys):
    out_json = tmp_path / "fit.json"
    code = main(["fit", str(csv_file), "--target", "label", "--l2", "0.05", "--signs", "beta=-1,alpha=+1",
                 "--uncertainty", "box:0.1", "--json", "-o", str(out_json)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    doc = strict_json(captured.out)  # stdout is the JSON document and nothing else
    assert doc["classes"] == {"+1": "yes", "-1": "no"}
    assert doc["data"]["n_samples"] == 60 and doc["data"]["feature_names"] == ["alpha", "beta", "gamma", "delta"]
    assert "signs={+1: ['alpha'], -1: ['beta']}" in doc["model"]["text"]
    assert doc["output"] == str(out_json) and out_json.exists()
    X, y, names, _ = load_data(str(csv_file), "label")
    ref = rs.Problem(penalty=rs.L2(0.05), signs={"beta": -1, "alpha": 1}, uncertainty=rs.Box(0.1)).solve(
        X, y, solver="scs", feature_names=names, tol=1e-9)
    sol = doc["solution"]
    assert sol["status"] == "optimal" and sol["objective"] == pytest.approx(ref.objective, rel=1e-6)
    np.testing.assert_allclose(sol["w"], ref.w, atol=1e-4)
    # +1 is "yes": the decision x·w + b is positive on the rows labelled yes, as far as the fit separates them
    decision = X @ np.asarray(sol["w"]) + sol["b"]
    assert doc["training_accuracy"] == pytest.approx(np.mean(np.where(decision > 0, "yes", "no") == y))
    assert doc["training_accuracy"] > 0.7


def test_text_output_names_the_positive_class_and_prints_the_model(csv_file, capsys):
    assert main(["fit", str(csv_file), "--target", "label", "--signs", "beta=-1,alpha=+1,2=+1",
                 "--uncertainty", "ball:0.1", "--intercept", "ridge:2"]) == 0
    out = capsys.readouterr().out
    assert "classes     +1 = 'yes', -1 = 'no'" in out
    model = next(line for line in out.splitlines() if line.startswith("Problem("))
    assert "signs={+1: ['alpha', 2], -1: ['beta']}" in model
    assert "uncertainty=Ball(radius=0.1, p=2)" in model and "intercept=ridge(mu=2)" in model


def test_compare_solvers_and_validate_json(csv_file, tmp_path, capsys):
    assert main(["compare", str(csv_file), "--target", "label", "--solvers", "clarabel,scs", "--l2", "0.1",
                 "--tol", "1e-8", "--json"]) == 0
    doc = strict_json(capsys.readouterr().out)
    rows = {r["solver"]: r for r in doc["rows"]}
    assert set(rows) == {"clarabel", "scs"} and doc["failed"] == [] and doc["reference"] == "clarabel"
    assert rows["scs"]["objective"] == pytest.approx(rows["clarabel"]["objective"], rel=1e-5)
    assert rows["clarabel"]["rel_obj_diff"] == 0.0

    assert main(["solvers", "--json"]) == 0
    doc = strict_json(capsys.readouterr().out)
    assert doc["model"] is None and {r["name"] for r in doc["solvers"]} >= {"clarabel", "scs", "dcd", "m3"}
    # with a model: a Ball set is a cone only the conic backends take; dcd says why it refuses
    assert main(["solvers", "--uncertainty", "ball:0.1", "--json"]) == 0
    doc = strict_json(capsys.readouterr().out)
    rows = {r["name"]: r for r in doc["solvers"]}
    assert rows["clarabel"]["accepts"] and rows["clarabel"]["reasons"] == []
    assert not rows["dcd"]["accepts"] and "uncertainty" in " ".join(rows["dcd"]["reasons"])
    assert "uncertainty=Ball(radius=0.1, p=2)" in doc["model"]["text"]

    path = tmp_path / "s.json"
    assert main(["fit", str(csv_file), "--target", "label", "-o", str(path)]) == 0
    capsys.readouterr()
    assert main(["validate", str(path), str(csv_file), "--target", "label", "--json"]) == 0
    doc = strict_json(capsys.readouterr().out)
    assert doc["ok"] is True and doc["mismatches"] == []
    # a stored objective changed by hand: not OK, exit status 1, and the mismatch says so
    stored = json.loads(path.read_text())
    stored["objective"] *= 1.01
    path.write_text(json.dumps(stored))
    assert main(["validate", str(path), str(csv_file), "--target", "label", "--json"]) == 1
    assert "objective (the stored objective) differs" in capsys.readouterr().err  # refused before any check
    assert main(["validate", str(path), str(csv_file), "--target", "label", "--json", "--accept-modified"]) == 1
    doc = strict_json(capsys.readouterr().out)
    assert doc["ok"] is False and any("objective differs" in m for m in doc["mismatches"])


def test_solvers_text_with_a_model_shows_accepts_and_why_not(capsys):
    assert main(["solvers", "--kernel", "rbf:1"]) == 0
    out = capsys.readouterr().out
    assert "accepts  why not" in out
    m3 = next(line for line in out.splitlines() if line.startswith("m3 "))
    assert " no " in m3 and "free intercept" in m3  # m3's dual has no free intercept
    assert main(["solvers", "--kernel", "rbf:1", "--intercept", "ridge:1"]) == 0
    m3 = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("m3 "))
    assert " yes" in m3
    assert main(["solvers"]) == 0
    assert "accepts" not in capsys.readouterr().out


def test_intercept_flags_for_every_mode(csv_file, capsys):
    assert parse_intercept("free") is True and parse_intercept("NONE") is False
    assert parse_intercept("ridge:2.5") == rs.L2(2.5)
    for bad in ("ridge", "ridge:0", "ridge:-1", "ridge:inf", "ridge:x", "l2:1", "free:1", "yes"):
        with pytest.raises(argparse.ArgumentTypeError):
            parse_intercept(bad)
    X, y, _, _ = load_data(str(csv_file), "label")
    results = {}
    for mode in ("free", "none", "ridge:50"):
        assert main(["fit", str(csv_file), "--target", "label", "--l2", "0.1", "--intercept", mode, "--json"]) == 0
        results[mode] = strict_json(capsys.readouterr().out)["solution"]
    assert results["none"]["b"] == 0.0 and results["none"]["model"]["intercept"]["mode"] == "none"
    assert results["ridge:50"]["model"]["intercept"] == {"mode": "l2", "mu": 50.0}
    # each mode against the same model solved by another backend (SCS)
    for mode, intercept in (("free", True), ("none", False), ("ridge:50", rs.L2(50.0))):
        ref = rs.Problem(penalty=rs.L2(0.1), intercept=intercept).solve(X, y, solver="scs", tol=1e-9)
        assert results[mode]["objective"] == pytest.approx(ref.objective, rel=1e-6), mode
        assert results[mode]["b"] == pytest.approx(ref.b, abs=1e-4), mode
    assert abs(results["ridge:50"]["b"] - results["free"]["b"]) > 1e-3
    # --no-intercept is --intercept none; both at once are a usage error
    assert main(["fit", str(csv_file), "--target", "label", "--l2", "0.1", "--no-intercept", "--json"]) == 0
    assert strict_json(capsys.readouterr().out)["solution"]["b"] == 0.0
    with pytest.raises(SystemExit) as exc:
        main(["fit", str(csv_file), "--intercept", "free", "--no-intercept"])
    assert exc.value.code == 2
    # an error that advises Python syntax also gives the command-line spelling
    assert main(["fit", str(csv_file), "--target", "label", "--kernel", "rbf:1", "--solver", "m3"]) == 1
    assert "--intercept none or --intercept ridge:MU" in capsys.readouterr().err


def test_progress_bar_only_on_long_work(csv_file, capsys, monkeypatch):
    args = ["compare", str(csv_file), "--target", "label", "--solvers", "clarabel,scs"]
    monkeypatch.setattr(cli, "PROGRESS_DELAY", 3600.0)  # work shorter than the delay: no bar
    assert main(args) == 0
    assert "solving" not in capsys.readouterr().err
    monkeypatch.setattr(cli, "PROGRESS_DELAY", 0.0)  # work longer than the delay: the bar, on stderr
    assert main(args) == 0
    captured = capsys.readouterr()
    assert "solving" in captured.err and "solving" not in captured.out
    # a single solve never gets a bar
    assert main(["fit", str(csv_file), "--target", "label"]) == 0
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("content", ["[1, 2]", "{}", '{"format": "robustsvm.solution", "format_version": 1}',
                                     "{not json", '{"format": "robustsvm.solution", "format_version": 1, '
                                     '"model": [], "w": "abc"}', ""])
def test_validate_malformed_solution_is_one_line(content, csv_file, tmp_path, capsys):
    path = tmp_path / "bad.json"
    path.write_text(content)
    assert main(["validate", str(path), str(csv_file), "--target", "label"]) == 1
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("robustsvm validate: error: ") and str(path) in lines[0]
    assert captured.out == ""


def test_api_errors_are_one_line_without_traceback(csv_file, tmp_path):
    bad = tmp_path / "list.json"
    bad.write_text("[]")
    cases = [
        ("validate", bad, csv_file, "--target", "label"),  # a JSON list, not a solution
        ("validate", tmp_path, csv_file, "--target", "label"),  # a directory
        ("fit", csv_file, "--target", "label", "--signs", "nosuch=+1"),  # the API refuses the signs
        ("compare", csv_file, "--target", "label", "--kernel", "rbf:1", "--l1", "0.1", "--solvers", "clarabel"),
    ]
    for argv in cases:
        out = run(*argv, "--no-progress") if argv[0] == "compare" else run(*argv)
        assert out.returncode == 1, (argv, out.stderr)
        assert "Traceback" not in out.stderr, argv
        lines = out.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"robustsvm {argv[0]}: error: "), (argv, out.stderr)


def test_summary_names_the_positive_class_and_solvers_table_says_why_not():
    X, y01 = make_classification(40, 3, seed=21)
    labels = np.where(y01 == 1, "malignant", "benign")
    sol = rs.Problem(penalty=rs.L2(0.1)).solve(X, labels)
    text = sol.summary()
    assert "+1 = 'malignant', -1 = 'benign'" in text  # sorted labels: the second one is +1
    positive = sol.decision_function(X) > 0
    assert set(sol.predict(X)[positive]) == {"malignant"} and set(sol.predict(X)[~positive]) == {"benign"}
    sol01 = rs.Problem(penalty=rs.L2(0.1)).solve(X, y01)
    assert "+1 = 1, -1 = 0" in sol01.summary()
    # the same data with the labels the other way round: +1 is now the other class and b changes sign
    flipped = rs.Problem(penalty=rs.L2(0.1)).solve(X, np.where(y01 == 1, "a", "b"))
    assert "+1 = 'b', -1 = 'a'" in flipped.summary()
    assert flipped.b == pytest.approx(-sol01.b, abs=1e-6)

    problem = rs.Problem(penalty=rs.L2(0.1), uncertainty=rs.Ball(0.1))
    table = str(rs.solvers(problem))
    rows = {line.split()[0]: line for line in table.splitlines()[1:] if line.strip()}
    assert table.splitlines()[0].split() == ["name", "kind", "accepts", "why", "not"]
    assert rows["clarabel"].split()[2] == "yes"
    assert rows["dcd"].split()[2] == "no" and "uncertainty" in rows["dcd"]
    assert "accepts" not in str(rs.solvers())


def test_printed_models_list_signs_sets_and_intercept():
    text = repr(rs.Problem(signs=[1, 0, -1, -1], uncertainty=rs.Box(0.2), intercept=False))
    assert "signs={+1: [0], -1: [2, 3]}" in text and "uncertainty=Box(radius=0.2)" in text
    assert "intercept=none" in text
    text = repr(rs.Problem(signs={"positive": ["a"], "negative": [4]}, intercept=rs.L2(3.0)))
    assert "signs={+1: ['a'], -1: [4]}" in text and "intercept=ridge(mu=3)" in text
    text = repr(rs.Problem(signs=pd.Series({"x": -1, "y": 0}), uncertainty=[rs.Box(0.1)] * 2 + [rs.Ball(0.3)]))
    assert "signs={-1: ['x']}" in text and "intercept=free" in text
    assert "uncertainty=[3 sets: 2 x Box(radius=0.1), 1 x Ball(radius=0.3, p=2)]" in text


def test_uncertainty_help_names_every_kind_the_parser_reads(capsys):
    """The --uncertainty help is the grammar's own list: every set kind the parser accepts (a set of
    distributions included) and both ways of joining terms appear in `fit --help`."""
    from robustsvm.uncertainty.grammar import set_kinds

    with pytest.raises(SystemExit):
        cli.main(["fit", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert set_kinds(), "the grammar reads no set kinds"
    for kind in set_kinds():
        assert kind in text, kind
    assert "& for an intersection" in text and "+ for a sum" in text

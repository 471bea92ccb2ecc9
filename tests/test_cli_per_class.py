"""Each class's own signs, bounds and set on the command line (``--signs-for``, ``--bounds-for``,
``--uncertainty-for``) with three classes.

The table is scikit-learn's wine data written to a CSV here. The references are computed here from the raw file:
population z-scores with pandas, the primal objective of each model evaluated in numpy, ``RobustSVC`` with
``PerClass`` values fitted in the test, and a CVXPY model of one class written from the maths.
"""

from __future__ import annotations

import json

import cvxpy as cp
import numpy as np
import pandas as pd
import pytest

import robustsvm as rs
from robustsvm.cli.main import main

from ._wine_cli import L2, TARGET, cli, design, fit_json, primal, write_wine

RADIUS = 0.05
#: class_0: more alcohol is evidence for it; class_2: less alcohol and fewer flavanoids; class_1: a box
PER_CLASS = ["--signs-for", "class_0", "alcohol=+1", "--signs-for", "class_2", "alcohol=-1,flavanoids=-1",
             "--uncertainty-for", "class_1", f"box:{RADIUS}"]
SIGNS = {"class_0": {"alcohol": +1}, "class_1": {}, "class_2": {"alcohol": -1, "flavanoids": -1}}


@pytest.fixture(scope="module")
def wine(tmp_path_factory):
    """``(path, frame)``: the wine table with its cultivar as text, 59/71/48 rows."""
    return write_wine(tmp_path_factory.mktemp("wine"))


def sign_vector(columns, signs: dict) -> np.ndarray:
    return np.array([float(signs.get(c, 0)) for c in columns])


@pytest.fixture(scope="module")
def fitted(wine, tmp_path_factory):
    """``fit --json --output`` with each class's own priors."""
    path, _ = wine
    out = tmp_path_factory.mktemp("fit") / "model.json"
    return fit_json(path, out, *PER_CLASS)


def test_each_model_keeps_its_own_signs_and_agrees_with_the_estimator(wine, fitted):
    _, frame = wine
    doc, _ = fitted
    Z, y = design(frame), frame[TARGET].to_numpy()
    est = rs.RobustSVC(l2=L2, signs=rs.PerClass({"class_0": SIGNS["class_0"], "class_2": SIGNS["class_2"]}),
                       uncertainty=rs.PerClass({"class_1": rs.Box(RADIUS)})).fit(Z, y)
    weights = {}
    for k, model in enumerate(doc["one_vs_rest"]):
        c = model["class"]
        w, b = np.asarray(model["solution"]["w"]), float(model["solution"]["b"])
        weights[c] = dict(zip(Z.columns, w, strict=True))
        signs = sign_vector(Z.columns, SIGNS[c])
        assert np.all(signs * w >= 0)  # its own signs
        radius = RADIUS if c == "class_1" else 0.0
        assert (model["model"]["uncertainty"] is not None) == (c == "class_1")
        p_cli = primal(Z.to_numpy(), np.where(y == c, 1.0, -1.0), w, b, signs, radius)
        assert p_cli == pytest.approx(model["objective"], rel=1e-9)
        sol = est.solutions_[k]
        assert abs(p_cli - sol.objective) <= float(model["gap"]) + sol.gap + 1e-9 * max(1.0, abs(p_cli))
    # not the others' signs: the data push these weights the other way once a class's model is free of them
    assert weights["class_1"]["alcohol"] < -0.1  # class_0's +1 on alcohol is not class_1's
    assert weights["class_0"]["flavanoids"] > 0.05  # class_2's -1 on flavanoids is not class_0's


@pytest.mark.parametrize("c", ["class_1", "class_2"])
def test_one_class_matches_a_cvxpy_model(wine, fitted, c):
    _, frame = wine
    doc, _ = fitted
    Z, y = design(frame).to_numpy(), frame[TARGET].to_numpy()
    model = next(m for m in doc["one_vs_rest"] if m["class"] == c)
    t, signs = np.where(y == c, 1.0, -1.0), sign_vector(design(frame).columns, SIGNS[c])
    radius = RADIUS if c == "class_1" else 0.0
    w, b = cp.Variable(Z.shape[1]), cp.Variable()
    loss = cp.pos(1 - cp.multiply(t, Z @ w + b) + radius * cp.norm1(w))
    cp.Problem(cp.Minimize(L2 / 2 * cp.sum_squares(w) + cp.sum(loss) / len(t)),
               [cp.multiply(signs, w) >= 0]).solve(solver="CLARABEL")
    w_cvx = np.where(signs > 0, np.maximum(w.value, 0), np.where(signs < 0, np.minimum(w.value, 0), w.value))
    p_cvx = primal(Z, t, w_cvx, float(b.value), signs, radius)  # a feasible point: P* ≤ p_cvx
    p_cli = primal(Z, t, np.asarray(model["solution"]["w"]), float(model["solution"]["b"]), signs, radius)
    scale = max(1.0, abs(p_cli))
    assert p_cli - float(model["gap"]) <= p_cvx + 1e-9 * scale  # the certificate: P* ≥ p_cli − gap
    assert p_cvx <= p_cli + 1e-6 * scale


def test_the_printout_says_each_models_priors(wine, capsys):
    path, _ = wine
    status, out, _ = cli(capsys, "fit", path, "--target", TARGET, "--l2", L2, *PER_CLASS, "--signs", "ash=+1")
    assert status == 0
    assert "each model's signs, bounds and set below it" in out
    lines = out.splitlines()
    below = {c: lines[next(i for i, s in enumerate(lines) if s.startswith(f"  '{c}'")) + 1].strip()
             for c in SIGNS}
    assert below == {"class_0": "signs +1: alcohol", "class_1": f"signs +1: ash; set Box(radius={RADIUS})",
                     "class_2": "signs -1: alcohol, flavanoids"}


def test_validate_checks_each_model_against_its_own_signs(wine, fitted, tmp_path, capsys):
    from robustsvm.formats.solution_format import field_digests

    path, frame = wine
    _, model = fitted
    status, out, _ = cli(capsys, "validate", model, path)  # class_1's negative alcohol weight breaks no sign of its
    assert status == 0 and "3 of 3 models verify" in out
    spec = json.loads(model.read_text())
    alcohol = list(design(frame).columns).index("alcohol")
    spec["models"][2]["w"][alcohol] = 0.05  # class_2's own sign is -1 on alcohol
    spec["models"][2]["digests"] = field_digests(spec["models"][2])  # new digests: the data must tell
    altered = tmp_path / "altered.json"
    altered.write_text(json.dumps(spec))
    status, out, _ = cli(capsys, "validate", altered, path, "--json")
    doc = json.loads(out)
    assert status == 1 and [m["ok"] for m in doc["models"]] == [True, True, False]
    assert doc["models"][2]["violation"] >= 0.05 - 1e-12
    assert any("constraints violated" in line for line in doc["models"][2]["mismatches"])


def test_ordered_levels_follow_each_models_sign(wine, tmp_path, capsys):
    """An ordered categorical column: class_0's model grows along the order, the others (``--signs``) shrink."""
    _, frame = wine
    table = frame.drop(columns="alcohol")
    grade = pd.qcut(frame["alcohol"], 3, labels=["low", "mid", "high"]).astype(str)
    table.insert(0, "grade", grade)
    path = tmp_path / "graded.csv"
    table.to_csv(path, index=False)
    status, out, _ = cli(capsys, "fit", path, "--target", TARGET, "--l2", L2, "--ordered", "grade=low<mid<high",
                         "--signs-for", "class_0", "grade=+1", "--signs", "grade=-1", "--json")
    assert status == 0
    doc = json.loads(out)
    scale = {lv: float(np.std((grade == lv).to_numpy(float))) for lv in ("mid", "high")}
    for model in doc["one_vs_rest"]:
        w = dict(zip(doc["data"]["feature_names"], model["solution"]["w"], strict=True))
        effect = np.array([0.0, w["grade=mid"] / scale["mid"], w["grade=high"] / scale["high"]])  # low: reference
        direction = +1 if model["class"] == "class_0" else -1
        assert np.all(np.diff(direction * effect) >= -1e-9), model["class"]
        assert model["model"]["constraints"]
    status, _, err = cli(capsys, "fit", path, "--target", TARGET, "--ordered", "grade=low<mid<high",
                         "--signs-for", "class_0", "grade=+1")  # no direction for the other classes
    assert status == 1 and "the models of ['class_1', 'class_2'] (not named by --signs-for: --signs)" in err


def test_cv_gives_the_estimator_each_classs_signs(wine, capsys):
    path, frame = wine
    status, out, _ = cli(capsys, "cv", path, "--target", TARGET, "--l2-grid", "0.1,1", "--folds", "3", "--json",
                         "--signs-for", "class_0", "alcohol=+1", "--signs-for", "class_2", "alcohol=-1,flavanoids=-1")
    assert status == 0
    doc = json.loads(out)
    Z, y = design(frame), frame[TARGET].to_numpy()
    est = rs.RobustSVC(l2=doc["chosen"]["l2"], signs=rs.PerClass({"class_0": SIGNS["class_0"],
                                                                   "class_2": SIGNS["class_2"]})).fit(Z, y)
    for cert, sol in zip(doc["certificate"], est.solutions_, strict=True):
        w = np.array([cert["w"][c] for c in Z.columns])
        assert np.all(sign_vector(Z.columns, SIGNS[cert["class"]]) * w >= 0)
        assert abs(cert["objective"] - sol.objective) <= cert["gap"] + sol.gap + 1e-9 * max(1.0, sol.objective)


def test_numeric_labels_are_matched_as_positive_matches_them(wine, tmp_path, capsys):
    _, frame = wine
    numeric = frame.assign(**{TARGET: frame[TARGET].str[-1].astype(int)})
    path = tmp_path / "numeric.csv"
    numeric.to_csv(path, index=False)
    status, out, _ = cli(capsys, "fit", path, "--target", TARGET, "--l2", L2, "--signs-for", "0.0", "alcohol=+1",
                         "--json")
    assert status == 0
    models = json.loads(out)["one_vs_rest"]
    assert [m["model"]["signs"] is not None for m in models] == [True, False, False]


def test_refusals_name_the_option_and_the_labels(wine, tmp_path, capsys):
    path, frame = wine
    labels = "['class_0', 'class_1', 'class_2']"
    status, _, err = cli(capsys, "fit", path, "--target", TARGET, "--signs-for", "class_9", "alcohol=+1")
    assert status == 1 and "--signs-for 'class_9' is not a label" in err and labels in err
    status, _, err = cli(capsys, "fit", path, "--target", TARGET, "--bounds-for", "class_0", "ash=0:1",
                         "--bounds-for", "class_0", "ash=-1:0")
    assert status == 1 and "--bounds-for names the class 'class_0' twice" in err and labels in err
    with pytest.raises(SystemExit) as usage:  # a bad SPEC is a usage error, as a bad --signs
        main(["fit", str(path), "--target", TARGET, "--signs-for", "class_0", "alcohol=up"])
    err = capsys.readouterr().err
    assert usage.value.code == 2 and "--signs-for: class_0: invalid sign constraint 'alcohol=up'" in err
    status, _, err = cli(capsys, "cv", path, "--target", TARGET, "--uncertainty", "box:0.1", "--uncertainty-for",
                         "class_0", "box:0.2", "--radius-grid", "0,0.1", "--folds", "2")
    assert status == 1 and "--radius-grid" in err and "--uncertainty-for" in err
    two = tmp_path / "two.csv"
    frame[frame[TARGET] != "class_2"].to_csv(two, index=False)
    status, _, err = cli(capsys, "fit", two, "--target", TARGET, "--uncertainty-for", "class_0", "box:0.1")
    assert status == 1 and "--uncertainty-for" in err and "['class_0', 'class_1']" in err

"""The command line on a label column of three classes: one certified model of each class against the rest.

The table is scikit-learn's wine data written to a CSV here; the references are computed here from the raw
file: population z-scores with pandas, each class's model as a CVXPY problem written from the maths (its
objective evaluated in numpy), ``RobustSVC`` fitted with the same settings, and scikit-learn's metrics.
"""

from __future__ import annotations

import json

import cvxpy as cp
import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import accuracy_score, balanced_accuracy_score
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import robustsvm as rs

from ._wine_cli import L2, TARGET, cli, design, fit_json, primal, write_wine


@pytest.fixture(scope="module")
def wine(tmp_path_factory):
    """``(path, frame)``: the wine table with its cultivar as text, 59/71/48 rows."""
    return write_wine(tmp_path_factory.mktemp("wine"))





def cvxpy_model(Z: np.ndarray, t: np.ndarray, signs: np.ndarray | None = None) -> tuple[np.ndarray, float]:
    w, b = cp.Variable(Z.shape[1]), cp.Variable()
    constraints = [] if signs is None else [cp.multiply(signs, w) >= 0]
    cp.Problem(cp.Minimize(L2 / 2 * cp.sum_squares(w) + cp.sum(cp.pos(1 - cp.multiply(t, Z @ w + b))) / len(t)),
               constraints).solve(solver="CLARABEL")
    return np.asarray(w.value), float(b.value)


@pytest.fixture(scope="module")
def fitted(wine, tmp_path_factory):
    """``fit --json --output`` on the table, with a sign on alcohol (+1: evidence for each model's class)."""
    path, _ = wine
    out = tmp_path_factory.mktemp("fit") / "model.json"
    return fit_json(path, out, "--signs", "alcohol=+1")


def test_fit_gives_one_certified_model_per_class_matching_an_independent_solve(wine, fitted):
    _, frame = wine
    doc, _ = fitted
    Z = design(frame)
    y = frame[TARGET].to_numpy()
    classes = sorted(set(y))
    assert doc["classes"] == classes and len(doc["one_vs_rest"]) == 3
    signs = np.where(Z.columns == "alcohol", 1.0, 0.0)
    est = rs.RobustSVC(l2=L2, signs={"alcohol": +1}).fit(Z, y)
    scores = np.empty((len(y), 3))
    for k, (c, model) in enumerate(zip(classes, doc["one_vs_rest"], strict=True)):
        assert model["class"] == c and model["status"] == "optimal"
        t = np.where(y == c, 1.0, -1.0)
        w, b = np.asarray(model["solution"]["w"]), float(model["solution"]["b"])
        scores[:, k] = Z.to_numpy() @ w + b
        p_cli, gap_cli = primal(Z.to_numpy(), t, w, b, signs), float(model["gap"])
        assert p_cli == pytest.approx(model["objective"], rel=1e-9)  # the stored objective is the model's
        scale = max(1.0, abs(p_cli))
        # the CVXPY model written here: its point is feasible, so P* ≤ P(w_cvx); the certificate says P* ≥ P − gap
        w_cvx, b_cvx = cvxpy_model(Z.to_numpy(), t, signs)
        w_cvx = np.where(signs > 0, np.maximum(w_cvx, 0.0), w_cvx)  # onto the signs (the solver's tolerance)
        p_cvx = primal(Z.to_numpy(), t, w_cvx, b_cvx, signs)
        assert p_cli - gap_cli <= p_cvx + 1e-9 * scale
        assert p_cvx <= p_cli + 1e-6 * scale  # the CVXPY point is near-optimal too
        # RobustSVC fitted here with the same settings: both certified, so the objectives agree to the gaps
        sol = est.solutions_[k]
        assert abs(p_cli - sol.objective) <= gap_cli + sol.gap + 1e-9 * scale
        train = np.mean((scores[:, k] > 0) == (y == c))
        assert model["training_accuracy"] == pytest.approx(train, abs=1e-12)
    predicted = np.asarray(classes)[np.argmax(scores, axis=1)]
    assert doc["training_accuracy"] == pytest.approx(accuracy_score(y, predicted), abs=1e-12)
    assert np.array_equal(predicted, est.predict(Z))
    assert doc["largest_class"] == "class_1" and doc["largest_share"] == pytest.approx(71 / 178)


def test_fit_text_reports_each_class_and_the_classifier(wine, capsys):
    path, frame = wine
    status, out, _ = cli(capsys, "fit", path, "--target", TARGET, "--l2", L2, "--class-weight", "balanced")
    assert status == 0
    y = frame[TARGET].to_numpy()
    est = rs.RobustSVC(l2=L2, class_weight="balanced").fit(design(frame), y)
    predicted = est.predict(design(frame))
    assert "3 classes: one model of each against the rest" in out
    for c, n in (("class_0", 59), ("class_1", 71), ("class_2", 48)):
        assert f"'{c}' ({n} rows): optimal, objective" in out
    assert f"training accuracy {accuracy_score(y, predicted):.4f}" in out
    assert "always the largest class, 'class_1': 0.3989" in out
    assert f"balanced accuracy {balanced_accuracy_score(y, predicted):.4f}" in out


def test_a_constant_model_is_reported_in_its_class_words(wine, capsys):
    path, _ = wine
    status, out, err = cli(capsys, "fit", path, "--target", TARGET, "--l2", "0.01", "--l1", "0.5")
    assert status == 0
    assert "the model of 'class_0' against the rest is constant: it predicts the rest for every training row" in out
    assert "against the rest is constant" in err and "predicts 0 for every sample" not in err


def test_predict_from_the_file_equals_the_estimator(wine, fitted, tmp_path, capsys):
    path, frame = wine
    _, model = fitted
    Z, y = design(frame), frame[TARGET].to_numpy()
    est = rs.RobustSVC(l2=L2, signs={"alcohol": +1}).fit(Z, y)
    out = tmp_path / "predictions.csv"
    status, text, _ = cli(capsys, "predict", model, path, "--output", out)
    assert status == 0
    table = pd.read_csv(out)
    assert list(table.columns) == ["label", "decision(class_0)", "decision(class_1)", "decision(class_2)"]
    assert np.array_equal(table["label"].to_numpy(), est.predict(Z))
    stored = json.loads(model.read_text())
    for c, m in zip(stored["classes"], stored["models"], strict=True):  # the stored w_k, b_k on the test's z-scores
        np.testing.assert_allclose(table[f"decision({c})"], Z.to_numpy() @ np.asarray(m["w"]) + m["b"], atol=1e-9)
    assert f"accuracy {accuracy_score(y, table['label']):.4f}" in text


def test_validate_passes_and_fails_when_one_model_is_altered(wine, fitted, tmp_path, capsys):
    from robustsvm.formats.solution_format import field_digests

    path, _ = wine
    _, model = fitted
    status, out, _ = cli(capsys, "validate", model, path)
    assert status == 0 and "3 of 3 models verify" in out
    spec = json.loads(model.read_text())
    spec["models"][1]["w"][0] += 0.05
    altered = tmp_path / "altered.json"
    altered.write_text(json.dumps(spec))
    status, _, err = cli(capsys, "validate", altered, path)
    assert status == 1 and "the model of 'class_1'" in err and "w (the weights)" in err
    spec["models"][1]["digests"] = field_digests(spec["models"][1])  # new digests: the data must tell
    altered.write_text(json.dumps(spec))
    status, out, _ = cli(capsys, "validate", altered, path, "--json")
    doc = json.loads(out)
    assert status == 1 and not doc["ok"]
    assert [m["ok"] for m in doc["models"]] == [True, False, True]
    assert any("objective differs" in line for line in doc["models"][1]["mismatches"])


def test_swapped_classes_are_refused(wine, fitted, tmp_path, capsys):
    path, _ = wine
    _, model = fitted
    spec = json.loads(model.read_text())
    spec["classes"][0], spec["classes"][1] = spec["classes"][1], spec["classes"][0]
    swapped = tmp_path / "swapped.json"
    swapped.write_text(json.dumps(spec))
    status, _, err = cli(capsys, "predict", swapped, path)
    assert status == 1 and "classes (the class labels, in the order of the models)" in err
    status, out, _ = cli(capsys, "validate", swapped, path, "--accept-modified")
    assert status == 1 and "1 of 3 models verify: FAILED" in out


def test_a_two_class_reader_refuses_the_file_by_name(wine, fitted, capsys):
    from robustsvm.formats.solution_format import SolutionFormatError

    path, _ = wine
    _, model = fitted
    status, _, err = cli(capsys, "certify", model, path)
    assert status == 1 and "format 'robustsvm.one_vs_rest'" in err
    with pytest.raises(SolutionFormatError, match=r"its format is 'robustsvm\.one_vs_rest'"):
        rs.Solution.from_json(model)
    from robustsvm.cli.data import read_model

    with pytest.raises(ValueError, match=r"robustsvm\.one_vs_rest"):
        read_model(str(model))


def test_two_classes_keep_the_solution_file(wine, tmp_path, capsys):
    _, frame = wine
    two = tmp_path / "two.csv"
    frame[frame[TARGET] != "class_2"].to_csv(two, index=False)
    out = tmp_path / "two.json"
    status, _, _ = cli(capsys, "fit", two, "--target", TARGET, "--l2", L2, "--output", out)
    assert status == 0
    spec = json.loads(out.read_text())
    assert spec["format"] == "robustsvm.solution" and spec["format_version"] == 1
    assert rs.Solution.from_json(out).classes.tolist() == ["class_0", "class_1"]


def test_cv_with_three_classes(wine, tmp_path, capsys):
    path, frame = wine
    out = tmp_path / "cv.json"
    status, text, _ = cli(capsys, "cv", path, "--target", TARGET, "--l2-grid", "0.1,1", "--folds", "3", "--json",
                          "--output", out)
    assert status == 0
    doc = json.loads(text)
    assert doc["scoring"] == "accuracy" and doc["classes"] == ["class_0", "class_1", "class_2"]
    assert doc["fold_preprocessing"]["learned"] == ["mean", "scale"]
    assert [c["status"] for c in doc["certificate"]] == ["optimal"] * 3
    X, y = frame.drop(columns=TARGET), frame[TARGET].to_numpy()
    folds = StratifiedKFold(3, shuffle=True, random_state=0)  # the z-scores of each training fold
    best = max((float(np.mean(cross_val_score(make_pipeline(StandardScaler(), rs.RobustSVC(l2=l2, solver="clarabel")),
                                              X, y, cv=folds, scoring="accuracy"))), -l2) for l2 in (0.1, 1.0))
    assert doc["cv_score"] == pytest.approx(best[0], abs=1e-12)
    status, text, _ = cli(capsys, "validate", out, path)
    assert status == 0 and "3 of 3 models verify" in text


def test_refusals_name_the_option(wine, tmp_path, capsys):
    path, frame = wine
    status, _, err = cli(capsys, "fit", path, "--target", TARGET, "--positive", "class_0")
    assert status == 1 and "--positive 'class_0'" in err and "3 classes" in err
    status, _, err = cli(capsys, "cv", path, "--target", TARGET, "--scoring", "roc_auc", "--folds", "2")
    assert status == 1 and "--scoring roc_auc scores two classes" in err and "roc_auc_ovr" in err
    status, _, err = cli(capsys, "cv", path, "--target", TARGET, "--scoring", "roc_auc_ovr", "--folds", "2")
    assert status == 1 and "--probability" in err
    one = tmp_path / "one.csv"
    frame[frame[TARGET] == "class_0"].to_csv(one, index=False)
    status, _, err = cli(capsys, "fit", one, "--target", TARGET)
    assert status == 1
    assert f"the label column '{TARGET}' holds one class, 'class_0' (59 rows): a classifier needs rows of two" in err


def test_the_estimator_fits_three_classes_on_a_frame_without_warnings(wine):
    import warnings

    _, frame = wine
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rs.RobustSVC(l2=L2).fit(design(frame), frame[TARGET])


def test_probabilities_of_three_classes_match_the_estimator(wine, tmp_path, capsys):
    path, frame = wine
    model, out = tmp_path / "p.json", tmp_path / "p.csv"
    status, _, _ = cli(capsys, "fit", path, "--target", TARGET, "--l2", L2, "--probability", "--output", model)
    assert status == 0
    status, text, _ = cli(capsys, "predict", model, path, "--output", out)
    assert status == 0 and "ROC AUC (each class against the rest, averaged)" in text
    table = pd.read_csv(out)
    est = rs.RobustSVC(l2=L2, probability=True).fit(design(frame), frame[TARGET])
    expected = est.predict_proba(design(frame))
    got = table[[f"P({c})" for c in est.classes_]].to_numpy()
    np.testing.assert_allclose(got.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(got, expected, atol=1e-4)  # Platt's sigmoids of two certified fits of each fold

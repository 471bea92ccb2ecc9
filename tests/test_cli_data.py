"""A user's own CSV through the command line: fit with fitted preprocessing, validate, predict.

The reference is a pipeline written here with pandas and scikit-learn (SimpleImputer, OneHotEncoder,
StandardScaler) and a solve of the same model on its output, never the package's preprocessing code.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from sklearn.impute import SimpleImputer
from sklearn.preprocessing import OneHotEncoder, StandardScaler

import robustsvm as rs
from robustsvm.cli.main import main
from robustsvm.formats.io import field_digests
from robustsvm.tabular.preprocessing import Preprocessing, fit_preprocessing

NUMERIC, CATEGORICAL = ["age", "size", "score"], ["site"]
L2, MU, RADIUS = 0.1, 1.0, 0.05


def run(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "robustsvm", *map(str, args)], capture_output=True, text=True,
                          timeout=300, cwd=cwd)


def patients(n: int, seed: int, *, missing: bool = True) -> pd.DataFrame:
    """Patients: a string diagnosis, a categorical site, an identifier, and missing values in age and site."""
    rng = np.random.default_rng(seed)
    malignant = rng.random(n) < 0.45
    site = rng.choice(["north", "south", "east"], size=n, p=[0.5, 0.3, 0.2])
    frame = pd.DataFrame({
        "id": [f"p{seed}-{i}" for i in range(n)],
        "age": np.round(rng.normal(55, 10, n) + 4 * malignant, 1),
        "site": site,
        "size": np.round(rng.normal(12, 3, n) + 3.5 * malignant + 1.0 * (site == "east"), 2),
        "score": rng.integers(0, 5, n),
        "diagnosis": np.where(malignant, "malignant", "benign"),
    })
    if missing:
        frame.loc[rng.choice(n, size=max(2, n // 12), replace=False), "age"] = np.nan
        frame.loc[rng.choice(n, size=2, replace=False), "site"] = np.nan
    return frame


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("own-csv")
    train, new = patients(150, seed=3), patients(40, seed=4)
    train.to_csv(root / "train.csv", index=False)
    new.drop(columns=["diagnosis"]).to_csv(root / "new.csv", index=False)
    return root, train, new


def reference_pipeline(train: pd.DataFrame):
    """Median / most-frequent imputation, one-hot encoding and z-scores fitted with scikit-learn on ``train``."""
    num = SimpleImputer(strategy="median").fit(train[NUMERIC])
    cat = SimpleImputer(strategy="most_frequent").fit(train[CATEGORICAL])
    enc = OneHotEncoder(sparse_output=False).fit(cat.transform(train[CATEGORICAL]))
    names = NUMERIC + [str(n).replace("site_", "site=") for n in enc.get_feature_names_out(CATEGORICAL)]

    def raw(frame):
        return np.hstack([num.transform(frame[NUMERIC]), enc.transform(cat.transform(frame[CATEGORICAL]))])

    scaler = StandardScaler().fit(raw(train))
    return (lambda frame: scaler.transform(raw(frame))), names


def robust_objective(Z, y, w, b):
    """(λ2/2)‖w‖² + (μ/2)b² + mean hinge of the box-robust margin y(z·w + b) − r‖w‖₁ (written here)."""
    s = np.where(y == "malignant", 1.0, -1.0)
    margin = s * (Z @ w + b) - RADIUS * np.abs(w).sum()
    return L2 / 2 * w @ w + MU / 2 * b * b + np.maximum(0.0, 1.0 - margin).mean()


def test_fit_and_predict_a_raw_csv_agree_with_an_independent_pipeline(files):
    root, train, new = files
    model, preds = root / "m.json", root / "preds.csv"
    signs = "size=+1,site=east=-1"
    out = run("fit", root / "train.csv", "--target", "diagnosis", "--drop", "id", "--impute", "median",
              "--l2", L2, "--intercept", f"ridge:{MU}", "--uncertainty", f"box:{RADIUS}", "--signs", signs,
              "--positive", "malignant", "--output", model)
    assert out.returncode == 0, out.stderr
    assert "site one-hot (3 categories)" in out.stdout and "status      optimal" in out.stdout
    assert "warning" not in out.stderr  # the signs name their class
    out = run("predict", model, root / "new.csv", "--output", preds, "--keep", "id")
    assert out.returncode == 0, out.stderr
    assert "40 of 40 rows predicted" in out.stdout and "predicts 'malignant'" in out.stdout
    got = pd.read_csv(preds)
    assert list(got.columns) == ["id", "label", "decision"] and list(got["id"]) == list(new["id"])

    transform, names = reference_pipeline(train)
    Z, Z_new, y = transform(train), transform(new), train["diagnosis"].to_numpy()
    stored = rs.Solution.from_json(model)
    order = [list(stored.feature_names).index(f) for f in names]  # the stored weights in the reference's order
    w_s, b_s = stored.w[order], stored.b
    # 1. the new rows are preprocessed exactly as the reference does it: same decision values from the stored (w, b)
    np.testing.assert_allclose(got["decision"], Z_new @ w_s + b_s, rtol=1e-9, atol=1e-9)
    assert list(got["label"]) == list(np.where(Z_new @ w_s + b_s > 0, "malignant", "benign"))

    # 2. the stored model is the optimum of the same model on the reference's preprocessed training data
    ref = rs.Problem(penalty=rs.L2(L2), signs={"size": 1, "site=east": -1}, uncertainty=rs.Box(RADIUS),
                     intercept=rs.L2(MU), positive_class="malignant").solve(Z, y, solver="scs", feature_names=names,
                                                                            tol=1e-9)
    lower = ref.objective - ref.gap  # ≤ the optimum, by the reference's own certificate
    assert robust_objective(Z, y, ref.w, ref.b) == pytest.approx(ref.objective, rel=1e-9)
    excess = robust_objective(Z, y, w_s, b_s) - lower
    assert -1e-9 <= excess <= 1e-5
    assert w_s[names.index("size")] >= 0 >= w_s[names.index("site=east")]
    # the objective is min(λ2, μ)-strongly convex in (w, b): each point lies within sqrt(2 excess / m) of the optimum
    m = min(L2, MU)
    distance = np.sqrt(2 * max(excess, 0) / m) + np.sqrt(2 * ref.gap / m)
    assert np.linalg.norm(np.r_[w_s - ref.w, b_s - ref.b]) <= distance
    f_ref = Z_new @ ref.w + ref.b
    bound = np.linalg.norm(np.c_[Z_new, np.ones(len(Z_new))], axis=1) * distance
    assert np.all(np.abs(got["decision"] - f_ref) <= bound + 1e-9)
    sure = np.abs(f_ref) > bound
    assert sure.mean() > 0.8
    assert list(got["label"][sure]) == list(np.where(f_ref[sure] > 0, "malignant", "benign"))

    # 3. validate applies the stored rules to the untouched training file
    out = run("validate", model, root / "train.csv")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "validation  OK" in out.stdout


def test_missing_values_without_imputation_name_the_column_and_rows(files):
    root, train, _ = files
    out = run("fit", root / "train.csv", "--target", "diagnosis", "--drop", "id")
    assert out.returncode == 1
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("robustsvm fit: error: column 'age' has missing values")
    rows = np.flatnonzero(train["age"].isna()) + 1  # rows numbered from 1 after the header
    assert f"rows {rows[0]}, {rows[1]}, {rows[2]} (and {len(rows) - 3} more)" in lines[0]
    assert f"(and {len(rows) - 3} more), as does column 'site'; use --impute median or --impute drop-rows" in lines[0]


def test_drop_rows_matches_pandas_dropna(files, tmp_path, capsys):
    root, train, new = files
    model = tmp_path / "m.json"
    assert main(["fit", str(root / "train.csv"), "--target", "diagnosis", "--drop", "id", "--impute", "drop-rows",
                 "--l2", "0.1", "--output", str(model), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    kept = train.drop(columns=["id"]).dropna()
    assert doc["data"]["n_samples"] == len(kept) < len(train)
    assert doc["data"]["preprocessing"]["impute"] == "drop-rows"
    # the z-scores of the rows kept, by pandas (population standard deviation)
    onehot = pd.get_dummies(kept["site"], prefix="site", prefix_sep="=", dtype=float)
    raw = pd.concat([kept[["age"]], onehot, kept[["size", "score"]]], axis=1).astype(float)
    Z = ((raw - raw.mean()) / raw.std(ddof=0)).to_numpy()
    assert doc["data"]["feature_names"] == list(raw.columns)
    stored = rs.Solution.from_json(model)
    ref = rs.Problem(penalty=rs.L2(0.1)).solve(Z, kept["diagnosis"].to_numpy(), solver="scs", tol=1e-9)
    assert stored.objective == pytest.approx(ref.objective, abs=ref.gap + stored.gap + 1e-7)
    # new rows with a missing value get no prediction (the model does not impute), with a warning
    assert main(["predict", str(model), str(root / "new.csv")]) == 0
    captured = capsys.readouterr()
    preds = pd.read_csv(io.StringIO(captured.out))
    unscored = new.drop(columns=["id"]).isna().any(axis=1).to_numpy()
    assert unscored.any() and np.array_equal(preds["label"].isna().to_numpy(), unscored)
    assert "no prediction for them" in captured.err


def test_predict_reports_unknown_categories_extra_and_missing_columns(files, tmp_path, capsys):
    root, _, new = files
    model = tmp_path / "m.json"
    assert main(["fit", str(root / "train.csv"), "--target", "diagnosis", "--drop", "id", "--impute", "median",
                 "--output", str(model)]) == 0
    capsys.readouterr()
    rules = Preprocessing.from_dict(json.loads(model.read_text())["preprocessing"])
    odd = new.head(5).assign(site=["west", "north", "west", "east", "south"], note="x")
    odd.to_csv(tmp_path / "odd.csv", index=False)
    assert main(["predict", str(model), str(tmp_path / "odd.csv")]) == 0
    captured = capsys.readouterr()
    assert "categories not seen in training ('west') in rows 1, 3: encoded as all-zero dummies" in captured.err
    assert "columns the model does not use are ignored: ['note']" in captured.err
    preds = pd.read_csv(io.StringIO(captured.out))
    # an unseen category: every dummy is 0 before the z-scores
    sol = rs.Solution.from_json(model)
    raw = np.array([odd["age"].fillna(rules.column("age").fill)[0], 0.0, 0.0, 0.0, odd["size"][0], odd["score"][0]])
    z = (raw - rules.mean) / rules.scale
    assert preds["decision"][0] == pytest.approx(z @ sol.w + sol.b, rel=1e-12)

    new.drop(columns=["size"]).to_csv(tmp_path / "short.csv", index=False)
    assert main(["predict", str(model), str(tmp_path / "short.csv")]) == 1
    err = capsys.readouterr().err.strip()
    assert err == "robustsvm predict: error: the data lack the column the model uses: ['size']"
    new.assign(age=new["age"].astype(object).where(new.index != 6, "sixty")).to_csv(tmp_path / "typo.csv",
                                                                                     index=False)
    assert main(["predict", str(model), str(tmp_path / "typo.csv")]) == 1
    err = capsys.readouterr().err
    assert "column 'age' holds numbers but row 7 is not a number ('sixty')" in err and len(err.splitlines()) == 1


def test_signs_on_categorical_dropped_and_unknown_columns(files, capsys):
    root, _, _ = files
    base = ["fit", str(root / "train.csv"), "--target", "diagnosis", "--drop", "id", "--impute", "median"]
    # a sign on a categorical column: each level against the reference level (the first, 'east'), all signed
    assert main([*base, "--signs", "site=+1", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    names = doc["data"]["feature_names"]
    assert [f for f in names if f.startswith("site")] == ["site=north", "site=south"]
    assert [doc["solution"]["model"]["signs"][names.index(f)] for f in ("site=north", "site=south")] == [1, 1]
    # by index, the column stays one-hot: the sign must name one of its dummies
    assert main([*base, "--signs", "2=+1"]) == 1
    err = capsys.readouterr().err
    assert "'site' is a categorical column, one-hot encoded into ['site=east', 'site=north', 'site=south']" in err
    assert main([*base, "--signs", "id=+1"]) == 1
    assert "column 'id' is left out" in capsys.readouterr().err
    assert main([*base, "--signs", "agee=+1"]) == 1
    assert "'agee' is not a column of the data" in capsys.readouterr().err
    # an index counts the raw feature columns (the label column left out): 3 is 'size', here after the dummies
    assert main([*base, "--signs", "3=-1", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    names = doc["data"]["feature_names"]
    assert doc["solution"]["model"]["signs"][names.index("size")] == -1
    assert doc["solution"]["w"][names.index("size")] <= 0


def test_rules_round_trip_and_malformed_sections(files, tmp_path, capsys):
    root, train, _ = files
    rules, prepared = fit_preprocessing(train, "diagnosis", drop=["id"], impute="median")
    again = Preprocessing.from_dict(json.loads(json.dumps(rules.to_dict())))
    assert np.array_equal(again.transform(train).X, prepared.X)  # the stored rules give the same bits
    model = tmp_path / "m.json"
    assert main(["fit", str(root / "train.csv"), "--target", "diagnosis", "--drop", "id", "--impute", "median",
                 "--output", str(model)]) == 0
    capsys.readouterr()
    spec = json.loads(model.read_text())
    # a changed rule is caught by the digests
    spec["preprocessing"]["columns"][0]["fill"] += 1.0
    model.write_text(json.dumps(spec))
    assert main(["validate", str(model), str(root / "train.csv")]) == 1
    assert "preprocessing.columns (the columns read" in capsys.readouterr().err  # refused, naming the entry
    assert main(["validate", str(model), str(root / "train.csv"), "--accept-modified"]) == 1
    assert "preprocessing.columns (the columns read, their kinds, fill values and categories) differs from the " \
           "value written" in capsys.readouterr().out
    for change, message in ((lambda s: s.update(version=2), "unsupported preprocessing version 2"),
                            (lambda s: s["standardize"]["scale"].pop(), "'preprocessing.standardize'"),
                            (lambda s: s.update(format="x"), "'preprocessing'")):
        broken = json.loads(json.dumps(spec))
        change(broken["preprocessing"])
        broken["digests"] = field_digests(broken)  # digests that match: the section's own reader refuses it
        model.write_text(json.dumps(broken))
        assert main(["predict", str(model), str(root / "train.csv")]) == 1
        err = capsys.readouterr().err
        assert message in err and len(err.splitlines()) == 1


def test_a_file_without_preprocessing_still_reads(files, tmp_path, capsys):
    _, train, _ = files
    numeric = train.drop(columns=["id", "site"]).dropna()
    numeric.to_csv(tmp_path / "numeric.csv", index=False)
    model = tmp_path / "old.json"
    assert main(["fit", str(tmp_path / "numeric.csv"), "--target", "diagnosis", "--output", str(model)]) == 0
    capsys.readouterr()
    spec = json.loads(model.read_text())
    del spec["preprocessing"], spec["digests"]["preprocessing"]  # as written before the section existed
    model.write_text(json.dumps(spec))
    assert main(["validate", str(model), str(tmp_path / "numeric.csv"), "--target", "diagnosis"]) == 0
    assert "validation  OK" in capsys.readouterr().out
    assert main(["predict", str(model), str(tmp_path / "numeric.csv")]) == 0
    captured = capsys.readouterr()
    assert "stores no preprocessing" in captured.err
    sol = rs.Solution.from_json(model)
    X = numeric[["age", "size", "score"]].to_numpy(dtype=float)
    np.testing.assert_allclose(pd.read_csv(io.StringIO(captured.out))["decision"], X @ sol.w + sol.b)


def test_positive_names_the_class_the_signs_point_to(files, capsys):
    root, _, _ = files
    base = ["fit", str(root / "train.csv"), "--target", "diagnosis", "--drop", "id", "--impute", "median",
            "--l2", "0.1", "--json"]
    fits = {}
    for extra in (["--positive", "malignant", "--signs", "size=+1"], ["--positive", "benign", "--signs", "size=+1"],
                  ["--signs", "size=-1"]):
        assert main([*base, *extra]) == 0
        captured = capsys.readouterr()
        doc = json.loads(captured.out)
        fits[" ".join(extra)] = doc
        assert doc["classes"] == {"+1": "malignant", "-1": "benign"}  # the orientation of w stays classes[1]
    names = fits["--signs size=-1"]["data"]["feature_names"]
    size = names.index("size")
    towards_malignant = fits["--positive malignant --signs size=+1"]["solution"]
    towards_benign = fits["--positive benign --signs size=+1"]["solution"]
    assert towards_malignant["w"][size] >= 0 >= towards_benign["w"][size]
    # "+1 towards benign" is "−1 towards malignant": the same model, the same optimum within both certificates
    same = fits["--signs size=-1"]["solution"]
    assert towards_benign["objective"] == pytest.approx(same["objective"], abs=towards_benign["gap"] + same["gap"])
    # with string labels and no --positive, the fit says which class the signs point to
    assert main([*base, "--signs", "size=+1"]) == 0
    assert "malignant" in " ".join(json.loads(capsys.readouterr().out)["warnings"])
    assert main([*base, "--positive", "maligant"]) == 1
    err = capsys.readouterr().err
    assert "--positive 'maligant' is not a label of column 'diagnosis'; its labels are ['benign', 'malignant']" in err


def test_probability_agrees_with_calibrated_classifier_cv_on_the_same_folds(files, tmp_path, capsys):
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.model_selection import StratifiedKFold

    root, train, new = files
    model, preds = tmp_path / "m.json", tmp_path / "p.csv"
    assert main(["fit", str(root / "train.csv"), "--target", "diagnosis", "--drop", "id", "--impute", "median",
                 "--l2", str(L2), "--intercept", f"ridge:{MU}", "--probability", "--output", str(model)]) == 0
    assert main(["predict", str(model), str(root / "new.csv"), "--output", str(preds)]) == 0
    assert "Platt's sigmoid" in capsys.readouterr().out
    got = pd.read_csv(preds)
    assert list(got.columns) == ["label", "decision", "P(malignant)"]
    # scikit-learn's sigmoid calibration of the same model on the same (unshuffled, stratified) folds,
    # on the reference pipeline's features
    transform, _ = reference_pipeline(train)
    Z, Z_new, y = transform(train), transform(new), train["diagnosis"].to_numpy()
    base = rs.RobustSVC(l2=L2, intercept_l2=MU)
    reference = CalibratedClassifierCV(base, method="sigmoid", cv=StratifiedKFold(5), ensemble=False).fit(Z, y)
    assert list(reference.classes_) == ["benign", "malignant"]
    # every solve is certified to a gap of 1e-8 or so: the decisions, hence the sigmoids, agree far below 1e-5
    # (4e-7 measured)
    np.testing.assert_allclose(got["P(malignant)"], reference.predict_proba(Z_new)[:, 1], atol=1e-5)
    # the probability is monotone in the decision
    order = np.argsort(got["decision"].to_numpy())
    assert np.all(np.diff(got["P(malignant)"].to_numpy()[order]) >= 0)
    # the sigmoid is part of the stored claims: a changed parameter is caught by validate
    spec = json.loads(model.read_text())
    assert spec["calibration"]["method"] == "platt" and spec["calibration"]["positive"] == "malignant"
    spec["calibration"]["a"] *= 2
    model.write_text(json.dumps(spec))
    assert main(["validate", str(model), str(root / "train.csv")]) == 1
    assert "calibration.a (the slope of Platt's sigmoid)" in capsys.readouterr().err
    assert main(["validate", str(model), str(root / "train.csv"), "--accept-modified"]) == 1
    assert "calibration.a (the slope of Platt's sigmoid) differs from the value written" in capsys.readouterr().out


def test_levels_differing_only_by_case_or_spaces_are_named(files):
    """' North', 'north' and 'NORTH' are three categories to the encoder; the fit says so, naming the groups (found
    here by hand), and a clean column gets no such warning."""
    _, train, _ = files
    messy = train.copy()
    rows = messy.index[messy["site"] == "north"]
    messy.loc[rows[:5], "site"] = " North"
    messy.loc[rows[5:8], "site"] = "NORTH"
    _, prepared = fit_preprocessing(messy, "diagnosis", drop=["id"], impute="median")
    said = [w for w in prepared.warnings if "differ only by letter case" in w]
    assert len(said) == 1 and "column 'site'" in said[0] and "' North' / 'NORTH' / 'north'" in said[0]
    assert "south" not in said[0] and "east" not in said[0]
    _, clean = fit_preprocessing(train, "diagnosis", drop=["id"], impute="median")
    assert not [w for w in clean.warnings if "differ only by letter case" in w]

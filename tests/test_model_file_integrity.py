"""A stored model cannot be altered unnoticed: ``predict``, ``certify``, ``validate`` and ``from_json`` refuse it.

Each case edits one part of a model written by ``robustsvm fit --probability --output`` (a weight, the
intercept, a stored z-score mean, Platt's slope, a class label), as a person with a text editor would, and
runs the commands a user runs (in a subprocess). Without ``--accept-modified`` each exits 1 naming the part;
with it, each runs and says the model was modified, and ``predict`` then uses the edited numbers (checked
against a decision computed here from the file's own numbers).
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest

import robustsvm as rs
from robustsvm.formats.io import ModifiedSolutionError, ModifiedSolutionWarning

pytestmark = pytest.mark.filterwarnings("ignore::robustsvm.exceptions.ConvergenceWarning")


def cli(*args):
    return subprocess.run([sys.executable, "-m", "robustsvm", *map(str, args)], capture_output=True, text=True,
                          timeout=600)


def table(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    sick = rng.random(n) < 0.5
    return pd.DataFrame({
        "age": np.round(rng.normal(55, 10, n) + 6 * sick, 1),
        "dose": np.round(rng.normal(12, 3, n) + 3 * sick, 2),
        "score": rng.integers(0, 5, n) + sick,
        "diagnosis": np.where(sick, "malignant", "benign"),
    })


def _first_weight(spec):
    spec["w"][0] += 1.0


def _intercept(spec):
    spec["b"] += 0.5


def _mean(spec):
    spec["preprocessing"]["standardize"]["mean"][0] += 5.0


def _calibration(spec):
    spec["calibration"]["a"] = -spec["calibration"]["a"]


def _label(spec):
    spec["classes"][1] = "malign"


#: (edit, the part the messages must name)
EDITS = {"weight": (_first_weight, "w (the weights)"), "intercept": (_intercept, "b (the intercept)"),
         "mean": (_mean, "preprocessing.standardize"), "calibration": (_calibration, "calibration.a"),
         "label": (_label, "classes (the class labels)")}


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    root = tmp_path_factory.mktemp("integrity")
    table(80, seed=1).to_csv(root / "train.csv", index=False)
    table(30, seed=2).drop(columns=["diagnosis"]).to_csv(root / "new.csv", index=False)
    out = cli("fit", root / "train.csv", "--target", "diagnosis", "--probability", "--l2", "0.01",
              "--output", root / "model.json", "--no-progress")
    assert out.returncode == 0, out.stderr
    return root, json.loads((root / "model.json").read_text())


def _edited(root, spec, name):
    edited = json.loads(json.dumps(spec))
    EDITS[name][0](edited)
    path = root / f"edited-{name}.json"
    path.write_text(json.dumps(edited, indent=1))
    return path, edited


def test_an_intact_model_runs_everywhere_without_a_warning(stored):
    root, _ = stored
    model = root / "model.json"
    for args in (("predict", model, root / "new.csv"), ("validate", model, root / "train.csv"),
                 ("certify", model, root / "train.csv")):
        out = cli(*args)
        assert out.returncode == 0, out.stderr
        assert "modified" not in out.stderr
    with warnings.catch_warnings():
        warnings.simplefilter("error", ModifiedSolutionWarning)
        assert rs.Solution.from_json(model).extra["modified"] == []


@pytest.mark.parametrize("name", sorted(EDITS))
def test_an_altered_model_is_refused_naming_what_changed(stored, name):
    root, spec = stored
    path, _ = _edited(root, spec, name)
    named = EDITS[name][1]
    with pytest.raises(ModifiedSolutionError, match="accept_modified=True") as caught:
        rs.Solution.from_json(path)
    assert named in str(caught.value)
    for args in (("predict", path, root / "new.csv"), ("validate", path, root / "train.csv"),
                 ("certify", path, root / "train.csv")):
        out = cli(*args)
        assert out.returncode == 1, (args[0], out.stdout, out.stderr)
        assert out.stdout == "", (args[0], out.stdout)  # nothing was predicted, validated or certified
        assert named in out.stderr and "--accept-modified" in out.stderr, (args[0], out.stderr)
        assert "modified after it was written" in out.stderr


def _decision(spec, frame):
    """``z·w + b`` with z the stored z-scores of the file's own numbers, computed here."""
    z = spec["preprocessing"]["standardize"]
    X = frame[spec["preprocessing"]["features"]].to_numpy(dtype=float)
    return (X - np.asarray(z["mean"])) / np.asarray(z["scale"]) @ np.asarray(spec["w"]) + spec["b"]


@pytest.mark.parametrize("name", ["weight", "mean", "calibration"])
def test_with_the_override_predict_uses_the_edited_model_and_says_so(stored, name):
    root, spec = stored
    path, edited = _edited(root, spec, name)
    out = cli("predict", path, root / "new.csv", "--accept-modified")
    assert out.returncode == 0, out.stderr
    assert "was modified after it was written" in out.stderr and EDITS[name][1] in out.stderr
    got = pd.read_csv(io.StringIO(out.stdout))
    new = pd.read_csv(root / "new.csv")
    f = _decision(edited, new)
    np.testing.assert_allclose(got["decision"], f, rtol=1e-9, atol=1e-9)
    a, b = edited["calibration"]["a"], edited["calibration"]["b"]
    np.testing.assert_allclose(got["P(malignant)"], 1 / (1 + np.exp(a * f + b)), rtol=1e-9)
    original = _decision(spec, new)
    if name != "calibration":  # the edit moved the decisions the unedited model gives
        assert np.max(np.abs(f - original)) > 0.1


def test_with_the_override_validate_and_certify_run_and_say_so(stored):
    root, spec = stored
    path, _ = _edited(root, spec, "weight")
    out = cli("validate", path, root / "train.csv", "--accept-modified")
    assert out.returncode == 1  # it ran: the edited weight is a mismatch of its report
    assert "mismatch    w (the weights) differs" in out.stdout and "was modified" in out.stderr
    out = cli("certify", path, root / "train.csv", "--accept-modified", "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["model_modified"] == ["w (the weights)"]
    assert "was modified" in out.stderr
    with pytest.warns(ModifiedSolutionWarning, match="w \\(the weights\\)"):
        sol = rs.Solution.from_json(path, accept_modified=True)
    assert sol.w[0] == pytest.approx(spec["w"][0] + 1.0) and sol.extra["modified"] == ["w (the weights)"]


def test_a_file_without_digests_is_refused_unless_accepted(stored):
    root, spec = stored
    bare = json.loads(json.dumps(spec))
    del bare["digests"]
    path = root / "bare.json"
    path.write_text(json.dumps(bare))
    with pytest.raises(ModifiedSolutionError, match="carries no digests"):
        rs.Solution.from_json(path)
    out = cli("predict", path, root / "new.csv")
    assert out.returncode == 1 and "carries no digests" in out.stderr and "--accept-modified" in out.stderr
    out = cli("predict", path, root / "new.csv", "--accept-modified")
    assert out.returncode == 0 and "carries no digests: it is used unchecked" in out.stderr
    with pytest.warns(ModifiedSolutionWarning):
        assert rs.Solution.from_json(path, accept_modified=True).extra["modified"] is None


def test_a_section_added_or_removed_is_named(stored):
    root, spec = stored
    removed = json.loads(json.dumps(spec))
    del removed["calibration"]
    path = root / "uncalibrated.json"
    path.write_text(json.dumps(removed))
    with pytest.raises(ModifiedSolutionError) as caught:
        rs.Solution.from_json(path)
    assert caught.value.changed == ["calibration (Platt's sigmoid)"]

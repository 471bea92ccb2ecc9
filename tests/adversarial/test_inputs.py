"""Inputs that used to give a wrong answer without a word: signs, labels, X, stored solutions, fingerprints.

Each case is either answered correctly (checked against a sign vector or a decision function
written out here) or refused with an error that names the argument or the field.
"""

from __future__ import annotations

import json
import types
import warnings
from collections import OrderedDict

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import robustsvm as rs
from robustsvm.formats.io import ModifiedSolutionWarning, SolutionFormatError, data_fingerprint, solution_to_dict
from robustsvm.priors.signs import check_signs

from ..conftest import make_classification

NAMES = np.array(["f0", "f1", "f2", "f3", "f4"], dtype=object)


# ---------------------------------------------------------------------- signs
@pytest.mark.parametrize(
    ("spec", "keys"),
    [
        ({0: 1, -5: -1}, ("0", "-5")),
        ({"f0": 1, 0: -1}, ("'f0'", "0")),
        ({4: -1, "f4": 1}, ("4", "'f4'")),
        ({-1: 1, 4: 0}, ("-1", "4")),
        (([0], [-5]), ("0", "-5")),
        ({"positive": ["f2"], "negative": [2]}, ("'f2'", "2")),
    ],
)
def test_a_feature_named_twice_with_different_signs_is_an_error_naming_both_keys(spec, keys):
    with pytest.raises(ValueError, match="two different signs") as info:
        check_signs(spec, 5, NAMES)
    for key in keys:
        assert f"key {key}" in str(info.value)


def test_a_feature_named_twice_with_the_same_sign_is_accepted():
    np.testing.assert_array_equal(check_signs({0: 1, -5: 1, "f0": 1}, 5, NAMES), [1, 0, 0, 0, 0])


def test_the_conflict_is_refused_by_a_solve():
    X, y = make_classification(40, 5, seed=1)
    frame = pd.DataFrame(X, columns=list(NAMES))
    with pytest.raises(ValueError, match="two different signs"):
        rs.Problem(penalty=rs.L2(0.1), signs={"f0": 1, 0: -1}).solve(frame, y, solver="clarabel")


def test_a_series_is_aligned_by_its_index_not_its_position():
    series = pd.Series([-1, 1, 0], index=["f3", "f0", "f1"])
    np.testing.assert_array_equal(check_signs(series, 5, NAMES), [1, 0, 0, -1, 0])
    # integer labels are indices, in any order, and may leave features out
    np.testing.assert_array_equal(check_signs(pd.Series([1, -1], index=[4, 1]), 5), [0, -1, 0, 0, 1])
    # a full-length Series with the default index is the sign vector
    np.testing.assert_array_equal(check_signs(pd.Series([1, 0, -1, 0, 0]), 5), [1, 0, -1, 0, 0])
    # names without known feature names cannot be aligned: an error, not a positional guess
    with pytest.raises(ValueError, match="no feature names"):
        check_signs(pd.Series([1, 0, -1, 0, 0], index=list(NAMES)), 5)
    # a label repeated with another sign is a conflict even though a dict could not hold it
    with pytest.raises(ValueError, match="two different signs"):
        check_signs(pd.Series([1, -1], index=["f2", "f2"]), 5, NAMES)


def test_a_series_of_signs_constrains_the_named_columns_in_a_solve():
    X, y = make_classification(60, 5, seed=3)
    frame = pd.DataFrame(X, columns=list(NAMES))
    free = rs.Problem(penalty=rs.L2(0.05)).solve(frame, y, solver="clarabel")
    target = int(np.argmax(free.w))  # the largest positive weight: constrain it to be ≤ 0
    order = [h for h in range(5) if h != target] + [target]  # the named feature placed last
    signs = pd.Series([0, 0, 0, 0, -1], index=[NAMES[h] for h in order])
    sol = rs.Problem(penalty=rs.L2(0.05), signs=signs).solve(frame, y, solver="clarabel")
    assert free.w[target] > 1e-3 and sol.w[target] <= 1e-8
    by_vector = np.zeros(5)
    by_vector[target] = -1
    ref = rs.Problem(penalty=rs.L2(0.05), signs=by_vector).solve(X, y, solver="clarabel")
    np.testing.assert_allclose(sol.w, ref.w, atol=1e-7)


def test_other_mappings_are_read_like_a_dict():
    spec = types.MappingProxyType({"f1": -1, 3: 1})
    np.testing.assert_array_equal(check_signs(spec, 5, NAMES), [0, -1, 0, 1, 0])
    np.testing.assert_array_equal(check_signs(OrderedDict([("f1", -1)]), 5, NAMES), [0, -1, 0, 0, 0])


def test_duplicated_column_names_referred_to_by_name_are_an_error():
    X, y = make_classification(40, 3, seed=2)
    frame = pd.DataFrame(X, columns=["a", "a", "b"])
    with pytest.raises(ValueError, match=r"'a'.*2 columns share that name.*\[0, 1\]"):
        rs.Problem(penalty=rs.L2(0.1), signs={"a": 1}).solve(frame, y, solver="clarabel")
    # by index, or naming a unique column, is fine
    sol = rs.Problem(penalty=rs.L2(0.1), signs={1: -1, "b": 1}).solve(frame, y, solver="clarabel")
    assert sol.w[1] <= 1e-8 and sol.w[2] >= -1e-8


def test_an_integer_key_that_is_another_columns_name_is_ambiguous():
    with pytest.raises(ValueError, match="ambiguous"):
        check_signs({0: 1}, 3, np.array(["2", "1", "0"], dtype=object))
    # the same key as a string is the name
    np.testing.assert_array_equal(check_signs({"0": 1}, 3, np.array(["2", "1", "0"], dtype=object)), [0, 0, 1])


@pytest.mark.parametrize(
    ("spec", "error", "match"),
    [
        ([True, False, True, False, False], TypeError, "boolean mask"),
        ({"f0": "+1"}, TypeError, "string"),
        ({1.0: 1}, TypeError, "keys must be"),
        ({"positive": [0], "negative": [0]}, ValueError, "both positive and negative"),
        (np.array([1, 0, 1j, 0, 0]), TypeError, "dtype"),
        ("f0=+1", TypeError, "string"),
    ],
)
def test_malformed_sign_specifications(spec, error, match):
    with pytest.raises(error, match=match):
        check_signs(spec, 5, NAMES)


def test_every_documented_sign_form_gives_the_same_vector():
    """docs/signs.md lists these forms; each resolves to the same vector."""
    expected = [1, 0, -1, 0, 0]
    forms = [
        [1, 0, -1, 0, 0],
        np.array([1, 0, -1, 0, 0]),
        {"f0": 1, "f2": -1},
        {0: 1, 2: -1},
        {0: 1, -3: -1},
        {"f0": 1, 2: -1, "f4": 0},
        {"positive": ["f0"], "negative": [2]},
        ([0], ["f2"]),
        pd.Series({"f2": -1, "f0": 1}),
        pd.Series([1, 0, -1, 0, 0]),
        types.MappingProxyType({"f0": 1, "f2": -1}),
    ]
    for form in forms:
        np.testing.assert_array_equal(check_signs(form, 5, NAMES), expected, err_msg=repr(form))
    text = open(__file__.replace("tests/adversarial/test_inputs.py", "docs/signs.md"), encoding="utf-8").read()
    for fragment in ("pd.Series", "Mapping", "negative index", "share", "two different signs", "boolean"):
        assert fragment in text, fragment


# --------------------------------------------------------------- labels and X
@pytest.mark.parametrize("labels", [[1, "a"], np.array([1, "a"], dtype=object), pd.Series([0, "1"])])
def test_mixed_int_and_str_labels_are_refused(labels):
    X = np.arange(4.0).reshape(2, 2)
    with pytest.raises(TypeError, match=r"y mixes numbers and strings"):
        rs.Problem().solve(X, labels)


def test_labels_of_one_type_still_work_in_every_container():
    X, y = make_classification(40, 3, seed=4)
    ref = rs.Problem(penalty=rs.L2(0.1)).solve(X, y, solver="clarabel")
    for labels in (list(y), y.astype(float), np.where(y == 1, "pos", "neg").astype(object), pd.Series(y),
                   [bool(v) for v in y]):
        sol = rs.Problem(penalty=rs.L2(0.1)).solve(X, labels, solver="clarabel")
        np.testing.assert_allclose(sol.w, ref.w, atol=1e-7)


@pytest.mark.parametrize(
    "X",
    [
        np.array([[1.0 + 2j, 0.0], [0.0, 1.0]]),
        [[1.0, 2.0], [3.0, 1j]],
        sp.csr_matrix(np.array([[1.0 + 1j, 0.0], [0.0, 1.0]])),
        np.array([[1.0, 2.0], [3.0, 1j]], dtype=object),
    ],
)
def test_complex_x_is_an_error_naming_x(X):
    with pytest.raises(TypeError, match="X has complex entries"):
        rs.Problem().solve(X, [0, 1])


def test_complex_sample_weight_is_an_error():
    X, y = make_classification(10, 2, seed=0)
    with pytest.raises(TypeError, match="sample_weight has complex entries"):
        rs.Problem().solve(X, y, sample_weight=np.ones(10) * (1 + 1j))


def test_numbers_written_as_strings_are_not_features():
    with pytest.raises(TypeError, match="X must hold numbers"):
        rs.Problem().solve(np.array([["1", "2"], ["3", "4"]]), [0, 1])


# ----------------------------------------------------------------- fingerprint
def test_fingerprint_depends_on_the_values_not_the_storage():
    X, y = make_classification(30, 6, seed=5, sparse=True)
    dense = X.toarray()
    base = data_fingerprint(dense, y)
    same = [
        (X, y),                                     # CSR
        (X.tocoo(), y),                             # COO
        (X.tocsc(), y),                             # CSC
        (np.asfortranarray(dense), y),              # column-major
        (pd.DataFrame(dense), y),
        (dense, y.astype(float)),                   # float labels 0.0 / 1.0
        (dense, y.astype(bool)),                    # bool labels False / True
        (dense, list(y)),
    ]
    for Xs, ys in same:
        fp = data_fingerprint(Xs, ys)
        assert fp["sha256"] == base["sha256"], (type(Xs), np.asarray(ys).dtype)
    # float32 storage of float32 values
    x32 = dense.astype(np.float32)
    assert data_fingerprint(x32, y)["sha256"] == data_fingerprint(x32.astype(np.float64), y)["sha256"]
    # explicit zeros and -0.0 are zeros
    Xz = X.copy()
    Xz.data[0] = 0.0
    dz = Xz.toarray()
    dz[dz == 0] = -0.0
    assert data_fingerprint(Xz, y)["sha256"] == data_fingerprint(dz, y)["sha256"]
    # what differs: a value, a label, the labels' values
    X2 = dense.copy()
    X2[3, 2] += 1e-12
    fp2 = data_fingerprint(X2, y)
    assert fp2["sha256"] != base["sha256"] and fp2["X"] != base["X"] and fp2["y"] == base["y"]
    assert data_fingerprint(dense, np.where(y == 1, "1", "0"))["sha256"] != base["sha256"]
    assert data_fingerprint(dense, 1 - y)["y"] != base["y"]


def test_fingerprint_of_a_large_dense_matrix_is_chunk_independent():
    """The digest is the same whether the rows are read in one chunk or several."""
    import robustsvm.formats.fingerprint as rfp

    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3)) * (rng.random((50, 3)) < 0.5)
    y = rng.integers(0, 2, 50)
    one = data_fingerprint(X, y)["sha256"]
    saved = rfp._CHUNK_ROWS
    try:
        rfp._CHUNK_ROWS = 7
        assert data_fingerprint(X, y)["sha256"] == one
        assert data_fingerprint(sp.csr_matrix(X), y)["sha256"] == one
    finally:
        rfp._CHUNK_ROWS = saved


def test_validate_accepts_the_same_data_stored_differently(tmp_path):
    X, y = make_classification(40, 5, seed=6, sparse=True)
    sol = rs.Problem(penalty=rs.L2(0.1)).solve(X, y, solver="clarabel")
    back = rs.Solution.from_json(sol.to_json(tmp_path / "s.json", X, y))
    for Xs, ys in ((X.toarray(), y), (X, y.astype(float)), (X.tocoo(), y.astype(np.int8))):
        report = rs.validate(back, Xs, ys)
        assert report.ok, str(report)


# ---------------------------------------------------------------- validate
@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    X, y = make_classification(50, 4, seed=7)
    sol = rs.Problem(penalty=rs.L2(0.1), intercept=rs.L2(0.5)).solve(X, y, solver="clarabel")
    path = tmp_path_factory.mktemp("v") / "sol.json"
    sol.to_json(path, X, y)
    return X, y, sol, json.loads(path.read_text())


def _validate_spec(tmp_path, spec, X, y):
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(spec))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ModifiedSolutionWarning)
        return rs.validate(rs.Solution.from_json(path, accept_modified=True), X, y)


def test_swapped_classes_are_a_mismatch_naming_classes(tmp_path, stored):
    X, y, sol, spec = stored
    assert rs.validate(rs.Solution.from_json(_write(tmp_path, spec)), X, y).ok
    edited = {**spec, "classes": spec["classes"][::-1]}
    report = _validate_spec(tmp_path, edited, X, y)
    assert not report.ok
    assert any(m.startswith("classes differ") for m in report.mismatches), report.mismatches
    # the predictions of the edited file are indeed the inverse of the data's
    with pytest.warns(ModifiedSolutionWarning):
        back = rs.Solution.from_json(_write(tmp_path, edited), accept_modified=True)
    assert np.all(back.predict(X) != sol.predict(X))
    # the same swap made in memory (no file) is caught by the data alone
    swapped = rs.Solution(**{**sol.__dict__, "classes": sol.classes[::-1], "extra": {}})
    assert any(m.startswith("classes differ") for m in rs.validate(swapped, X, y).mismatches)


def _write(tmp_path, spec):
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    return path


@pytest.mark.parametrize(
    ("field", "value", "named"),
    [
        ("intercept", {"mode": "free", "mu": 0.0}, "model.intercept"),
        ("intercept", {"mode": "l2", "mu": 5.0}, "model.intercept"),
        ("kernel", {"type": "Linear"}, "model.kernel"),
        ("penalty", {"l2": 0.2, "l1": 0.0}, "model.penalty"),
    ],
)
def test_a_changed_model_field_is_named(tmp_path, stored, field, value, named):
    X, y, _, spec = stored
    edited = json.loads(json.dumps(spec))
    edited["model"][field] = value
    report = _validate_spec(tmp_path, edited, X, y)
    assert not report.ok
    assert any(m.startswith(named) for m in report.mismatches), report.mismatches


def test_intercept_mode_none_with_a_nonzero_b_is_a_mismatch(tmp_path, stored):
    X, y, sol, spec = stored
    edited = json.loads(json.dumps(spec))
    edited["model"]["intercept"] = {"mode": "none", "mu": 0.0}
    del edited["digests"]  # no digest to compare: the data and b alone must reveal it
    report = _validate_spec(tmp_path, edited, X, y)
    assert abs(sol.b) > 1e-3
    assert any(m.startswith("intercept: the model has none") for m in report.mismatches), report.mismatches


def test_a_changed_kernel_of_a_kernel_solution_is_named(tmp_path):
    X, y = make_classification(30, 3, seed=8)
    prob = rs.Problem(penalty=rs.L2(0.5), kernel=rs.RBF(1.0), intercept=False)
    sol = prob.solve(X, y, solver="m3", tol=1e-8, max_iter=5000)
    spec = json.loads(sol.to_json(tmp_path / "k.json", X, y).read_text())
    assert rs.validate(rs.Solution.from_json(_write(tmp_path, spec)), X, y).ok
    edited = json.loads(json.dumps(spec))
    edited["model"]["kernel"] = {"type": "RBF", "sigma": 2.0}
    report = _validate_spec(tmp_path, edited, X, y)
    assert any(m.startswith("model.kernel") for m in report.mismatches), report.mismatches
    with pytest.warns(ModifiedSolutionWarning):
        back = rs.Solution.from_json(_write(tmp_path, edited), accept_modified=True)
    assert not np.allclose(back.decision_function(X), sol.decision_function(X))  # it changes predictions


def test_a_kernel_model_that_stores_only_linear_weights_is_a_mismatch(stored):
    X, y, sol, _ = stored
    rbf = rs.Solution(**{**sol.__dict__, "problem": rs.Problem(penalty=rs.L2(0.1), intercept=rs.L2(0.5),
                                                                kernel=rs.RBF(1.0)), "extra": {}})
    assert any(m.startswith("model.kernel") for m in rs.validate(rbf, X, y).mismatches)


def test_an_edited_status_or_weight_is_named(tmp_path, stored):
    X, y, _, spec = stored
    edited = {**spec, "status": "optimal" if spec["status"] != "optimal" else "max_iter"}
    assert any(m.startswith("status") for m in _validate_spec(tmp_path, edited, X, y).mismatches)
    edited = {**spec, "w": [v * (1 + 1e-6) for v in spec["w"]]}
    text = _validate_spec(tmp_path, edited, X, y).mismatches
    assert any(m.startswith("w (the weights) differs") for m in text), text


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (lambda s: [s], None),
        (lambda s: "a string", None),
        (lambda s: {k: v for k, v in s.items() if k != "b"}, "'b' is missing"),
        (lambda s: {k: v for k, v in s.items() if k != "model"}, "'model' is missing"),
        (lambda s: {k: v for k, v in s.items() if k != "classes"}, "'classes' is missing"),
        (lambda s: {**s, "b": "zero"}, "'b' must be a number"),
        (lambda s: {**s, "b": [0.1]}, "'b' must be a number"),
        (lambda s: {**s, "w": "0.1, 0.2"}, "'w' must be a list of numbers"),
        (lambda s: {**s, "w": [0.1, None, 0.3, 0.4]}, "'w' must be a list of numbers"),
        (lambda s: {**s, "iterations": 3.5}, "'iterations' must be an integer"),
        (lambda s: {**s, "status": 1}, "'status' must be a string"),
        (lambda s: {**s, "classes": [0]}, "'classes' must be two distinct labels"),
        (lambda s: {**s, "classes": [0, "1"]}, "'classes' must be two distinct labels"),
        (lambda s: {**s, "classes": [1, 1]}, "'classes' must be two distinct labels"),
        (lambda s: {**s, "feature_names": ["a"]}, "'feature_names' has 1 names for 4 features"),
        (lambda s: {**s, "model": []}, "'model' must be a JSON object"),
        (lambda s: {**s, "model": {**s["model"], "intercept": {"mode": "ridge"}}}, "'model.intercept.mode'"),
        (lambda s: {**s, "model": {**s["model"], "loss": {"type": "Banana"}}}, "'model' does not describe"),
        (lambda s: {**s, "model": {**s["model"], "kernel": {"type": "RBF", "gamma": 1}}}, "'model' does not describe"),
        (lambda s: {**s, "model": {k: v for k, v in s["model"].items() if k != "loss"}}, "'model.loss' is missing"),
        (lambda s: {**s, "w": None}, "'w' is null"),
        (lambda s: {**s, "dual_coef": [1.0]}, "'support_vectors' are missing"),
        (lambda s: {**s, "support_vectors": {"format": "csr", "shape": [1, 4], "data": [1.0], "indices": [9],
                                              "indptr": [0, 1]}, "dual_coef": [1.0]}, "'support_vectors' is not"),
        (lambda s: {**s, "history": {"gap": "none"}}, "'history.gap'"),
        (lambda s: {**s, "data": {"shape": [50, 4]}}, "'data.sha256' is missing"),
    ],
)
def test_malformed_solution_json_is_a_clear_error_naming_the_field(tmp_path, stored, edit, field):
    spec = stored[3]
    path = _write(tmp_path, edit(json.loads(json.dumps(spec))))
    with pytest.raises(SolutionFormatError) as info:
        rs.Solution.from_json(path)
    assert isinstance(info.value, ValueError)
    if field is None:
        assert "JSON object" in str(info.value)
    else:
        assert field in str(info.value), str(info.value)


def test_a_file_that_is_not_json_is_a_clear_error(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{"format": "robustsvm.solution", ')
    with pytest.raises(SolutionFormatError, match=r"broken\.json is not a JSON file"):
        rs.Solution.from_json(path)


def test_the_written_file_round_trips_through_the_checks(stored):
    spec = stored[3]
    assert solution_to_dict(rs.formats.io.solution_from_dict(spec))["digests"] == spec["digests"]


def test_a_fingerprint_written_before_scheme_2_is_still_checked(tmp_path, stored):
    """Files written with the old, storage-dependent digest validate against the same data, and only it."""
    import hashlib

    X, y, _, spec = stored
    # the old digest written out here: shape, "dense", X in C order, ±1 labels as int8, class values as JSON
    h = hashlib.sha256()
    h.update(np.asarray(X.shape, dtype=np.int64).tobytes())
    h.update(b"dense")
    h.update(np.ascontiguousarray(X, dtype=np.float64).tobytes())
    h.update(np.where(y == 1, 1, -1).astype(np.int8).tobytes())
    h.update(json.dumps([0, 1]).encode())
    old = {**spec, "data": {"sha256": h.hexdigest(), "shape": list(X.shape), "format": "dense"}}
    report = _validate_spec(tmp_path, old, X, y)
    assert report.ok, str(report)
    X2 = X.copy()
    X2[0, 0] += 1.0
    assert any(m.startswith("data fingerprint differs") for m in _validate_spec(tmp_path, old, X2, y).mismatches)

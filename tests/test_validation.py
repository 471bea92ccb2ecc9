"""Bad input gets a clear error naming the argument."""

import numpy as np
import pytest
import scipy.sparse as sp

import robustsvm as rs
from robustsvm.priors.signs import check_signs


@pytest.fixture
def prob():
    return rs.Problem(penalty=rs.L2(0.1))


def test_nan_and_inf_rejected(prob, small):
    X, y = small
    X = X.copy()
    X[0, 0] = np.nan
    with pytest.raises(ValueError, match="X contains NaN"):
        prob.solve(X, y)
    X[0, 0] = np.inf
    with pytest.raises(ValueError, match="X contains NaN or infinity"):
        prob.solve(X, y)


def test_shape_mismatch_and_empty(prob, small):
    X, y = small
    with pytest.raises(ValueError, match="y has 59 labels but X has 60"):
        prob.solve(X, y[:-1])
    with pytest.raises(ValueError, match="X is empty"):
        prob.solve(np.zeros((0, 3)), [])
    with pytest.raises(ValueError, match="two-dimensional"):
        prob.solve(np.ones(5), [0, 1, 0, 1, 0])


def test_class_count(prob, small):
    X, y = small
    with pytest.raises(ValueError, match="exactly two classes, got 1"):
        prob.solve(X, np.zeros(len(y)))
    with pytest.raises(ValueError, match="exactly two classes, got 3"):
        prob.solve(X, np.arange(len(y)) % 3)


def test_any_two_labels_map_to_plus_minus(small):
    X, y = small
    labels = np.where(y == 1, "spam", "ham")
    sol = rs.Problem(penalty=rs.L2(0.1)).solve(X, labels)
    assert list(sol.classes) == ["ham", "spam"]
    assert set(sol.predict(X)) <= {"ham", "spam"}
    sol01 = rs.Problem(penalty=rs.L2(0.1)).solve(X, y)
    np.testing.assert_allclose(sol.w, sol01.w, atol=1e-7)  # "spam" = classes_[1] = +1


def test_negative_sample_weight(prob, small):
    X, y = small
    with pytest.raises(ValueError, match="sample_weight must be non-negative"):
        prob.solve(X, y, sample_weight=-np.ones(len(y)))


def test_unknown_solver_and_option(prob, small):
    X, y = small
    with pytest.raises(ValueError, match="unknown solver 'nope'"):
        prob.solve(X, y, solver="nope")
    with pytest.raises(TypeError, match="unknown option"):
        prob.solve(X, y, solver="clarabel", step_size=3)
    with pytest.raises(ValueError, match="tol must be positive"):
        prob.solve(X, y, tol=-1)


def test_signs_specifications():
    names = np.array(["a", "b", "c", "d"], dtype=object)
    np.testing.assert_array_equal(check_signs([1, 0, -1, 0], 4), [1, 0, -1, 0])
    np.testing.assert_array_equal(check_signs({"a": 1, "d": -1}, 4, names), [1, 0, 0, -1])
    np.testing.assert_array_equal(check_signs({0: 1, -1: -1}, 4), [1, 0, 0, -1])
    np.testing.assert_array_equal(check_signs(([0, 1], [3]), 4), [1, 1, 0, -1])
    np.testing.assert_array_equal(check_signs({"positive": ["b"], "negative": ["c"]}, 4, names), [0, 1, -1, 0])
    with pytest.raises(ValueError, match="signs must have length 4"):
        check_signs([1, 0], 4)
    with pytest.raises(ValueError, match="unknown feature 'zz'"):
        check_signs({"zz": 1}, 4, names)
    with pytest.raises(ValueError, match="no feature names are known"):
        check_signs({"a": 1}, 4)
    with pytest.raises(ValueError, match="only \\+1, 0 or -1"):
        check_signs([2, 0, 0, 0], 4)
    with pytest.raises(ValueError, match="both positive and negative"):
        check_signs(([0], [0]), 4)


def test_signs_by_dataframe_column_names(small):
    import pandas as pd
    X, y = small
    df = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    prob = rs.Problem(penalty=rs.L2(0.01), signs={"f0": -1, "f1": 1})
    sol = prob.solve(df, y)
    assert sol.w[0] <= 1e-9 and sol.w[1] >= -1e-9
    assert list(sol.feature_names) == list(df.columns)


def test_bad_model_arguments():
    with pytest.raises(TypeError, match="loss must be"):
        rs.Problem(loss="hinge")
    with pytest.raises(TypeError, match="intercept must be"):
        rs.Problem(intercept="yes")
    with pytest.raises(ValueError, match="intercept accepts only an L2"):
        rs.Problem(intercept=rs.L1(1.0))
    with pytest.raises(ValueError, match="non-negative"):
        rs.L2(-1.0)
    with pytest.raises(ValueError, match="reduction must be"):
        rs.Hinge(reduction="median")
    with pytest.raises(TypeError, match="uncertainty must be"):
        rs.Problem(uncertainty=0.3)
    with pytest.raises(ValueError, match="hard-margin model needs a penalty"):
        rs.Problem(loss=rs.HardMargin())


def test_sparse_input_accepted(small):
    X, y = small
    dense = rs.Problem(penalty=rs.L2(0.1)).solve(X, y)
    sparse = rs.Problem(penalty=rs.L2(0.1)).solve(sp.csr_matrix(X), y)
    np.testing.assert_allclose(dense.w, sparse.w, atol=1e-7)


def test_sparse_input_with_duplicates_is_summed_on_a_copy(small):
    """A CSR matrix with duplicate entries and unsorted indices is solved as the matrix it stands for (its
    duplicates summed), and the caller's arrays are left as they were."""
    X, y = small
    dense = np.asarray(X, dtype=np.float64)
    n, d = dense.shape
    rows, cols = np.nonzero(dense)
    # every stored entry split in two halves, the halves of a row in reversed column order
    data = np.concatenate([dense[rows, cols] / 2, dense[rows, cols] / 2])
    r = np.concatenate([rows, rows])
    c = np.concatenate([cols, cols])
    order = np.lexsort((-c, r))
    indptr = np.concatenate([[0], np.cumsum(np.bincount(r, minlength=n))])
    Xs = sp.csr_matrix((data[order], c[order], indptr), shape=(n, d))
    assert not Xs.has_canonical_format
    before = (Xs.indptr.copy(), Xs.indices.copy(), Xs.data.copy())
    sol = rs.Problem(penalty=rs.L2(0.1)).solve(Xs, y)
    ref = rs.Problem(penalty=rs.L2(0.1)).solve(dense, y)
    np.testing.assert_allclose(sol.w, ref.w, atol=1e-7)
    for kept, arr in zip(before, (Xs.indptr, Xs.indices, Xs.data), strict=True):
        np.testing.assert_array_equal(kept, arr)


@pytest.mark.parametrize("build, name", [
    (lambda: rs.L2("0.1"), "L2 strength"),
    (lambda: rs.L1("0.1"), "L1 strength"),
    (lambda: rs.Penalty(l2=1j), "l2"),
    (lambda: rs.Box("0.1"), "radius"),
    (lambda: rs.Ball(0.1, p="2"), "p"),
    (lambda: rs.pq_svm("1", 1.0, 0.1), "nu"),
    (lambda: rs.pq_svm(1.0, b"1", 0.1), "lam2"),
])
def test_real_scalar_arguments_refuse_text_alike(build, name):
    """A number written as text or as a complex number is refused the same way by every scalar argument."""
    with pytest.raises(TypeError, match=f"^{name} must be a"):
        build()


@pytest.mark.parametrize("labels", [
    np.array([3, 7, 7, 3, 3]), np.array([-1.0, 1.0, 1.0, -1.0]), np.array([0, 1, 1, 0], dtype=np.uint8),
    np.array([0.0, 1.0, 0.0]), np.array([-0.0, 0.0, 1.0, 1.0]), np.array([True, False, True]),
    np.array([2.5, -4.0, 2.5], dtype=np.float32), np.array(["b", "a", "b"]),
])
def test_two_labels_give_numpys_unique_classes(labels):
    """The classes and the ±1 labels are np.unique's (the mapping written here from it), whatever the dtype."""
    from robustsvm._validation import check_labels

    y_pm, classes = check_labels(labels, labels.size)
    expected = np.unique(labels)
    assert classes.dtype == expected.dtype and np.array_equal(classes, expected)
    if classes.dtype.kind == "f":  # a zero label keeps the sign np.unique gives it
        assert np.array_equal(np.signbit(classes), np.signbit(expected))
    assert np.array_equal(y_pm, np.where(labels == expected[1], 1.0, -1.0))


@pytest.mark.parametrize("labels", [np.array([1, 2, 3, 1]), np.array([1.0, 1.0, 1.0]), np.array([0, 0])])
def test_other_numbers_of_numeric_classes_are_refused(labels):
    from robustsvm._validation import check_labels

    with pytest.raises(ValueError, match="exactly two classes"):
        check_labels(labels, labels.size)


def test_check_x_takes_over_a_canonical_format_scipy_established(monkeypatch):
    """A float64 CSR matrix whose canonical format scipy has established (and keeps on the caller's object) is not
    checked row by row again: the validated wrapper carries the flag. A matrix with duplicate entries is still
    summed, on a copy (the caller's matrix unchanged)."""
    import scipy.sparse._compressed as compressed

    from robustsvm._validation import check_X

    X = sp.random(60, 20, density=0.2, format="csr", random_state=3)
    assert X.has_canonical_format  # established and kept on X
    calls = []
    original = compressed.csr_has_canonical_format

    def counted(*args):
        calls.append(1)
        return original(*args)

    monkeypatch.setattr(compressed, "csr_has_canonical_format", counted)
    checked = check_X(X)
    assert not calls and checked.has_canonical_format
    np.testing.assert_array_equal(checked.toarray(), X.toarray())
    dup = sp.csr_matrix((np.array([1.0, 2.0, 3.0]), np.array([1, 1, 0]), np.array([0, 2, 3])), shape=(2, 3))
    fixed = check_X(dup)
    assert fixed.has_canonical_format and fixed.nnz == 2 and dup.nnz == 3
    np.testing.assert_array_equal(fixed.toarray(), [[0.0, 3.0, 0.0], [3.0, 0.0, 0.0]])

"""Data sets: the shipped copies match the published sizes and class counts; generators have their shapes."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.model_selection import cross_val_score
from sklearn.svm import LinearSVC

from robustsvm import datasets

# sizes and class counts from the UCI / KEEL descriptions of the data sets
PUBLISHED = {
    "wdbc": ((569, 30), {"malignant": 212, "benign": 357}),
    "sonar": ((208, 60), {"M": 111, "R": 97}),
    "pima": ((768, 8), {"tested_negative": 500, "tested_positive": 268}),
    "bands": ((365, 19), {"band": 135, "noband": 230}),
    "wisconsin": ((683, 9), {"2": 444, "4": 239}),
    "magic": ((19020, 10), {"g": 12332, "h": 6688}),
}


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_load_matches_published_description(name):
    data = datasets.load(name)
    shape, counts = PUBLISHED[name]
    assert data.X.shape == shape and data.X.dtype == np.float64
    assert len(data.feature_names) == shape[1] and len(set(data.feature_names)) == shape[1]
    got = {data.target_names[c]: int(k) for c, k in enumerate(np.bincount(data.y))}
    assert got == counts
    assert np.all(np.isfinite(data.X))
    X, y, names = data  # unpacks
    assert X is data.X and y is data.y and names == data.feature_names
    assert list(data.frame().columns) == data.feature_names


def test_known_values_of_the_files():
    # first rows of the published files
    pima = datasets.load("pima")
    assert pima.feature_names[1] == "Plas"
    assert np.any(np.all(pima.X == [6, 148, 72, 35, 0, 33.6, 0.627, 50], axis=1))
    wdbc = datasets.load("wdbc")
    assert wdbc.feature_names[0] == "mean radius" and wdbc.X[0, 0] == pytest.approx(17.99)
    # every KEEL Wisconsin feature is an ordinal score 1..10
    wis = datasets.load("wisconsin")
    assert wis.X.min() == 1 and wis.X.max() == 10


def test_load_rejects_unknown_names():
    with pytest.raises(ValueError, match="name must be one of"):
        datasets.load("mnist")
    with pytest.raises(TypeError, match="name must be a string"):
        datasets.load(3)


def _learnable(X, y) -> float:
    return float(cross_val_score(LinearSVC(C=1.0), X, y, cv=3).mean())


def test_mnist_like():
    data = datasets.make_mnist_like(1500, 196, seed=1)
    X = data.X
    assert isinstance(X, np.ndarray) and X.shape == (1500, 196)
    assert X.min() >= 0
    np.testing.assert_allclose(np.linalg.norm(X, axis=1), 1.0)
    assert np.mean(X == 0) > 0.5  # mostly blank pixels, as handwritten digits
    assert 0.2 < data.y.mean() < 0.8
    assert 0.8 < _learnable(X, data.y) < 1.0
    np.testing.assert_array_equal(datasets.make_mnist_like(50, 196, seed=1, chunk=7).y,
                                  datasets.make_mnist_like(50, 196, seed=1, chunk=7).y)


def test_cora_like():
    data = datasets.make_cora_like(seed=2)
    X = data.X
    assert sp.isspmatrix_csr(X) and X.shape == (15396, 12644)
    assert np.all(X.data == 1.0)
    density = X.nnz / (X.shape[0] * X.shape[1])
    assert 0.0008 < density < 0.0017  # below 0.0015 because repeated words merge
    small = datasets.make_cora_like(2000, 3000, density=0.01, seed=3)
    assert 0.8 < _learnable(small.X, small.y)
    tf = datasets.make_cora_like(300, 500, density=0.02, binary=False, seed=3)
    np.testing.assert_allclose(np.asarray(tf.X.sum(axis=1)).ravel(), 1.0)
    with pytest.raises(ValueError, match="density"):
        datasets.make_cora_like(10, 10, density=0.0)


def test_enroll_hd_like():
    data = datasets.make_enroll_hd_like(seed=4)
    X = data.X
    assert X.shape == (36953, 33) and data.feature_names[-1] == "total"
    items = X[:, :32]
    assert set(np.unique(items)) <= {0, 1, 2, 3, 4}
    np.testing.assert_array_equal(X[:, 32], items.sum(axis=1))
    assert 0.15 < data.y.mean() < 0.45
    assert _learnable(X[:3000], data.y[:3000]) > 0.85
    with pytest.raises(TypeError, match="n must be an integer"):
        datasets.make_enroll_hd_like(10.5)

"""Shared data for the tests: real (scikit-learn's WDBC) and generated."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp


def make_classification(n: int = 80, d: int = 6, *, seed: int = 0, sparse: bool = False, density: float = 0.3):
    """Two overlapping Gaussian classes with labels in {0, 1} (not separable)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, size=n)
    w_true = rng.normal(size=d)
    X = rng.normal(size=(n, d)) + 0.8 * np.outer(2 * y - 1, w_true) / np.linalg.norm(w_true)
    if sparse:
        mask = rng.random((n, d)) < density
        X = sp.csr_matrix(X * mask)
    return X, y


@pytest.fixture(scope="session")
def wdbc():
    """Standardized Wisconsin diagnostic breast cancer data (569 × 30) and names."""
    from sklearn.datasets import load_breast_cancer

    data = load_breast_cancer()
    X = (data.data - data.data.mean(axis=0)) / data.data.std(axis=0)
    return X, data.target, [str(n) for n in data.feature_names]


@pytest.fixture
def small():
    return make_classification(60, 5, seed=1)


@pytest.fixture
def count_products(monkeypatch):
    """Count the products with X (``matvec``) and Xᵀ (``rmatvec``) made by the first-order backends."""
    from robustsvm.backends._linalg import Design

    calls = {"matvec": 0, "rmatvec": 0}
    for name in calls:
        original = getattr(Design, name)

        def counted(self, v, _name=name, _original=original):
            calls[_name] += 1
            return _original(self, v)

        monkeypatch.setattr(Design, name, counted)
    return calls

"""Input validation shared by every entry point.

Every check raises a ``ValueError`` or ``TypeError`` whose message names the
offending argument, so that a user can tell at once what to fix.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

__all__ = ["FitData", "check_X", "check_fit_data", "check_signs", "check_sample_weight"]


@dataclass(frozen=True)
class FitData:
    """Validated training data in the form every backend consumes.

    Attributes
    ----------
    X : ndarray of shape (n, d) or scipy.sparse CSR matrix
        Features, float64.
    y : ndarray of shape (n,)
        Labels mapped to -1.0 / +1.0 (``classes[1]`` is +1).
    classes : ndarray of shape (2,)
        The original label values, sorted.
    signs : ndarray of shape (d,), int8
        Sign constraint per feature: +1 (w_h >= 0), -1 (w_h <= 0) or 0 (free).
    sample_weight : ndarray of shape (n,)
        Non-negative weight of each sample in the loss.
    feature_names : ndarray of str or None
        Names of the features, when known.
    """

    X: Any
    y: np.ndarray
    classes: np.ndarray
    signs: np.ndarray
    sample_weight: np.ndarray
    feature_names: np.ndarray | None

    @property
    def n(self) -> int:
        return self.X.shape[0]

    @property
    def d(self) -> int:
        return self.X.shape[1]

    @property
    def is_sparse(self) -> bool:
        return sp.issparse(self.X)


def _feature_names_of(X: Any) -> np.ndarray | None:
    columns = getattr(X, "columns", None)
    if columns is None:
        return None
    names = np.asarray([str(c) for c in columns], dtype=object)
    return names


def check_X(X: Any, *, name: str = "X", n_features: int | None = None):  # noqa: N802 - X is the data matrix
    """Return ``X`` as a float64 ndarray or CSR matrix, after checking it.

    Raises
    ------
    TypeError
        If ``X`` is not array-like.
    ValueError
        If ``X`` is not two-dimensional, is empty, holds NaN or inf, or has a
        number of columns other than ``n_features``.
    """
    if X is None:
        raise TypeError(f"{name} must be an array-like or scipy.sparse matrix, got None")
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64)
        X.sum_duplicates()
        data = X.data
    else:
        if hasattr(X, "to_numpy"):
            X = X.to_numpy()
        try:
            X = np.asarray(X, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{name} must hold numbers: {exc}") from exc
        data = X
    if X.ndim != 2:
        raise ValueError(f"{name} must be two-dimensional (n_samples, n_features), got shape {X.shape}")
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"{name} is empty: shape {X.shape}")
    if not np.all(np.isfinite(data)):
        raise ValueError(f"{name} contains NaN or infinity")
    if n_features is not None and X.shape[1] != n_features:
        raise ValueError(f"{name} has {X.shape[1]} features, but the model was fitted with {n_features}")
    return X


def check_labels(y: Any, n: int, *, name: str = "y") -> tuple[np.ndarray, np.ndarray]:
    """Map labels of any two distinct values to -1/+1.

    Returns
    -------
    y_pm : ndarray of shape (n,)
        -1.0 for ``classes[0]``, +1.0 for ``classes[1]``.
    classes : ndarray of shape (2,)
    """
    if y is None:
        raise TypeError(f"{name} must be array-like, got None")
    if hasattr(y, "to_numpy"):
        y = y.to_numpy()
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.ravel()
    if y.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {y.shape}")
    if y.shape[0] != n:
        raise ValueError(f"{name} has {y.shape[0]} labels but X has {n} samples")
    if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
        raise ValueError(f"{name} contains NaN or infinity")
    try:
        classes = np.unique(y)
    except TypeError as exc:
        raise TypeError(f"{name} holds labels that cannot be compared: {exc}") from exc
    if classes.size != 2:
        raise ValueError(
            f"{name} must hold exactly two classes, got {classes.size}: {classes[:5].tolist()}"
        )
    y_pm = np.where(y == classes[1], 1.0, -1.0)
    return y_pm, classes


def check_sample_weight(sample_weight: Any, n: int, *, name: str = "sample_weight") -> np.ndarray:
    """Return a non-negative float64 weight vector of length ``n`` (ones when None)."""
    if sample_weight is None:
        return np.ones(n)
    w = np.asarray(sample_weight, dtype=np.float64)
    if w.ndim == 0:
        w = np.full(n, float(w))
    if w.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},), got {w.shape}")
    if not np.all(np.isfinite(w)):
        raise ValueError(f"{name} contains NaN or infinity")
    if np.any(w < 0):
        raise ValueError(f"{name} must be non-negative")
    if not np.any(w > 0):
        raise ValueError(f"{name} must have at least one positive entry")
    return w


def check_signs(signs: Any, d: int, feature_names: np.ndarray | None = None, *, name: str = "signs") -> np.ndarray:
    """Resolve a sign specification into an int8 vector of +1 / 0 / -1.

    Parameters
    ----------
    signs : None, array-like of length d, dict or tuple of two index lists
        * ``None``: no constraint.
        * a length-``d`` sequence of +1 / 0 / -1.
        * a dict ``{feature: sign}`` whose keys are feature names (when
          ``feature_names`` is known) or integer indices.
        * a dict ``{"positive": [...], "negative": [...]}`` or a pair
          ``(positive, negative)`` of index (or name) lists.
    d : int
        Number of features.
    feature_names : array of str, optional
        Names used to resolve string keys.
    """
    s = np.zeros(d, dtype=np.int8)
    if signs is None:
        return s

    def index_of(key: Any) -> int:
        if isinstance(key, (str, np.str_)):
            if feature_names is None:
                raise ValueError(
                    f"{name} names feature {key!r}, but no feature names are known: pass a "
                    "pandas DataFrame or feature_names="
                )
            hits = np.flatnonzero(np.asarray(feature_names) == key)
            if hits.size == 0:
                raise ValueError(f"{name} names unknown feature {key!r}")
            return int(hits[0])
        if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
            k = int(key)
            if not -d <= k < d:
                raise ValueError(f"{name} index {k} is out of range for {d} features")
            return k % d
        raise TypeError(f"{name} keys must be feature names or integer indices, got {key!r}")

    def sign_of(value: Any, key: Any) -> int:
        try:
            v = float(value)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{name}[{key!r}] must be +1, 0 or -1, got {value!r}") from exc
        if v not in (-1.0, 0.0, 1.0):
            raise ValueError(f"{name}[{key!r}] must be +1, 0 or -1, got {value!r}")
        return int(v)

    if isinstance(signs, dict) and set(signs) <= {"positive", "negative"} and signs:
        signs = (signs.get("positive", ()), signs.get("negative", ()))
    if isinstance(signs, tuple) and len(signs) == 2 and all(
        isinstance(part, (list, tuple, np.ndarray, range)) for part in signs
    ):
        for sign, part in zip((1, -1), signs, strict=True):
            for key in part:
                h = index_of(key)
                if s[h] not in (0, sign):
                    raise ValueError(f"{name} asks feature {key!r} to be both positive and negative")
                s[h] = sign
        return s
    if isinstance(signs, dict):
        for key, value in signs.items():
            s[index_of(key)] = sign_of(value, key)
        return s
    if isinstance(signs, (str, bytes)):
        raise TypeError(f"{name} must be an array, a dict or a pair of index lists, got a string")
    arr = np.asarray(signs)
    if arr.ndim != 1 or arr.shape[0] != d:
        raise ValueError(f"{name} must have length {d} (one entry per feature), got shape {arr.shape}")
    try:
        arr = arr.astype(np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must hold +1, 0 or -1: {exc}") from exc
    if not np.all(np.isin(arr, (-1.0, 0.0, 1.0))):
        raise ValueError(f"{name} must hold only +1, 0 or -1")
    return arr.astype(np.int8)


def check_fit_data(
    X: Any,
    y: Any,
    *,
    signs: Any = None,
    sample_weight: Any = None,
    feature_names: Any = None,
) -> FitData:
    """Validate ``X``, ``y`` and the per-feature / per-sample options together."""
    names = _feature_names_of(X)
    if feature_names is not None:
        feature_names = np.asarray([str(f) for f in feature_names], dtype=object)
        names = feature_names
    X = check_X(X)
    n, d = X.shape
    if names is not None and names.shape[0] != d:
        raise ValueError(f"feature_names has {names.shape[0]} entries but X has {d} features")
    y_pm, classes = check_labels(y, n)
    s = check_signs(signs, d, names)
    weight = check_sample_weight(sample_weight, n)
    return FitData(X=X, y=y_pm, classes=classes, signs=s, sample_weight=weight, feature_names=names)

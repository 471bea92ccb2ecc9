"""Input validation shared by every entry point.

Every check raises a ``ValueError`` or ``TypeError`` whose message names the
offending argument, so that a user can tell at once what to fix.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from .priors.signs import check_signs

__all__ = ["MISSING_OPTIONS", "MISSING_REMEDY", "SPARSE_MISSING", "DataShape", "FitData", "check_X", "check_finite",
           "check_fit_data", "check_limits", "check_nonnegative", "check_no_missing_labels", "check_positive_class",
           "check_sample_weight", "estimator_missing_remedy", "real_scalar", "sign_orientation", "unnamed_direction"]


class DataShape:
    """``n``, ``d`` and sparsity of a record's ``X`` (n × d, dense or scipy.sparse): the training data's
    :class:`FitData` and the normalized model."""

    X: Any

    @property
    def n(self) -> int:
        """The number of samples, ``X.shape[0]``."""
        return self.X.shape[0]

    @property
    def d(self) -> int:
        """The number of features, ``X.shape[1]``."""
        return self.X.shape[1]

    @property
    def is_sparse(self) -> bool:
        """Whether ``X`` is a scipy.sparse matrix."""
        return sp.issparse(self.X)


@dataclass(frozen=True)
class FitData(DataShape):
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


def _feature_names_of(X: Any) -> np.ndarray | None:
    columns = getattr(X, "columns", None)
    if columns is None:
        return None
    names = np.asarray([str(c) for c in columns], dtype=object)
    return names


def real_array(value: Any, *, name: str, what: str, complex_hint: str, numbers: str) -> np.ndarray:
    """``value`` as a float64 array; a ``TypeError`` naming ``name`` for complex or non-numeric entries.

    ``np.asarray(value, dtype=float)`` would drop an imaginary part with only a warning and turn
    numeric strings into numbers; here both are refused. ``what``, ``complex_hint`` and ``numbers``
    complete the messages.
    """
    try:
        raw = np.asarray(value)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be {what}: {exc}") from exc
    if raw.dtype.kind == "c" or (raw.dtype.kind == "O" and any(
            isinstance(v, (complex, np.complexfloating)) for v in raw.flat)):
        raise TypeError(f"{name} has complex entries: {complex_hint}")
    if raw.dtype.kind in "USMm":
        raise TypeError(f"{name} must hold numbers, got an array of dtype {raw.dtype}")
    try:
        return raw.astype(np.float64, copy=False)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must hold {numbers}: {exc}") from exc


#: what to do about NaN in ``X`` given to ``Problem.solve`` (the estimator names its own ``missing=`` option)
MISSING_REMEDY = ("impute or drop them first, or give the missing values uncertainty sets: "
                  "rs.missing_as_uncertainty(X), docs/missing_values.md")
#: the estimator's remedy for NaN in a dense ``X`` (its ``missing=`` options) and in a sparse one (it has none there)
MISSING_OPTIONS = ("missing='uncertain' fits with an uncertainty set over each row's missing values; "
                   "'conditional_mean', 'mean' or 'drop' impute or drop them")
SPARSE_MISSING = "a sparse X cannot hold missing values: fill or drop them, or give a dense X with missing='uncertain'"


def estimator_missing_remedy(X: Any) -> str:
    """What ``RobustSVC`` advises for NaN in ``X``: :data:`SPARSE_MISSING` for a sparse ``X``, else
    :data:`MISSING_OPTIONS`."""
    return SPARSE_MISSING if sp.issparse(X) else MISSING_OPTIONS


def check_finite(X: Any, feature_names: Any = None, *, name: str = "X", remedy: str = MISSING_REMEDY) -> None:
    """Raise a ``ValueError`` naming the columns and the first rows where ``X`` holds NaN or infinity.

    ``X`` is a float ndarray or a scipy.sparse matrix; ``feature_names`` (optional) name the columns; ``remedy``
    ends the message when some value is NaN (a missing value), else infinity is to be replaced or dropped.
    """
    if sp.issparse(X):
        coo = sp.coo_matrix(X)
        bad = ~np.isfinite(coo.data)
        if not bad.any():
            return
        rows, cols, values = coo.row[bad], coo.col[bad], coo.data[bad]
    else:
        mask = ~np.isfinite(X)
        if not mask.any():
            return
        rows, cols = np.nonzero(mask)
        values = X[rows, cols]
    names = None if feature_names is None else [str(f) for f in feature_names]
    if names is not None and len(names) != X.shape[1]:
        names = None
    parts = []
    for col in np.unique(cols)[:3]:
        in_col = cols == col
        first = np.unique(rows[in_col])
        kinds = sorted({"NaN" if np.isnan(v) else "infinity" for v in values[in_col]})
        label = f"column {int(col)}" if names is None else f"column {names[col]!r} (index {int(col)})"
        shown = ", ".join(str(int(r)) for r in first[:5]) + (", ..." if first.size > 5 else "")
        parts.append(f"{label} has {' and '.join(kinds)} in {first.size} row{'s' if first.size > 1 else ''} "
                     f"(first: {shown})")
    more = np.unique(cols).size - len(parts)
    raise ValueError(f"{name} contains NaN or infinity: " + "; ".join(parts)
                     + (f"; and {more} more column{'s' if more > 1 else ''}" if more > 0 else "")
                     + f" ({remedy if np.isnan(values).any() else 'replace or drop them first'})")


def numeric_columns(X: Any, *, name: str = "X") -> Any:
    """Return ``X`` unchanged after checking that a DataFrame ``X`` has numbers (or booleans) in every column.

    Raises a ``ValueError`` naming the columns of text, categories or dates and one value of each: NumPy's own
    error names only the value. Arrays and sparse matrices pass through (their conversion names the problem).
    """
    dtypes = getattr(X, "dtypes", None)
    if dtypes is None or not hasattr(X, "columns"):
        return X
    bad = [(col, kind) for col, kind in zip(X.columns, dtypes, strict=True)
           if getattr(kind, "kind", "O") not in "biuf"]
    if bad:
        shown = "; ".join(f"{str(col)!r} ({kind}, e.g. {_first_value(X[col])!r})" for col, kind in bad[:5])
        more = f" and {len(bad) - 5} more" if len(bad) > 5 else ""
        text = [str(col) for col, kind in bad if getattr(kind, "kind", "") == "O" and _numbers_as_text(X[col])]
        as_text = "" if not text else (
            f" {', '.join(repr(t) for t in text[:5])} hold{'s' if len(text) == 1 else ''} numbers written as text: "
            f"convert {'it' if len(text) == 1 else 'them'} first, e.g. X[{text[0]!r}] = "
            f"pandas.to_numeric(X[{text[0]!r}]).")
        if len(text) == len(bad):
            raise ValueError(f"{name} has columns that are not numbers: {shown}{more}.{as_text}")
        raise ValueError(
            f"{name} has columns that are not numbers: {shown}{more}.{as_text} Encode "
            f"{'the others' if text else 'them'} first, e.g. "
            "sklearn.preprocessing.OneHotEncoder in a ColumnTransformer (with .set_output(transform='pandas') so "
            "that signs and bounds can name the dummies), or drop them; the command line's `robustsvm fit` codes "
            "text columns itself")
    return X


def _numbers_as_text(series: Any) -> bool:
    """Whether every present value of a text column reads as a number (``'-0.82'``, ``' 3 '``)."""
    values = series.dropna()
    if values.empty or not all(isinstance(v, str) for v in values):
        return False
    try:
        np.asarray([v.strip() for v in values], dtype=np.float64)
    except ValueError:
        return False
    return True


def _first_value(series: Any) -> Any:
    values = series.dropna()
    return values.iloc[0] if len(values) else None


def check_X(X: Any, *, name: str = "X", n_features: int | None = None,  # noqa: N802 - X is the data matrix
            feature_names: Any = None):
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
        if X.dtype.kind == "c":
            raise TypeError(f"{name} has complex entries: pass real features (for instance {name}.real)")
        # the caller's CSR matrix keeps what scipy found of its format (sorted, no duplicates) between solves: a
        # wrapper of the same arrays takes that over instead of checking every row again
        canonical = X.format == "csr" and X.dtype == np.float64 and X.has_canonical_format
        X = sp.csr_matrix(X, dtype=np.float64)
        if canonical:
            X.has_canonical_format = True
        elif not X.has_canonical_format:  # on a copy: the CSR matrix above may share its arrays with the caller's
            X = X.copy()
            X.sum_duplicates()
        data = X.data
    else:
        if hasattr(X, "to_numpy"):
            X = numeric_columns(X, name=name).to_numpy()
        X = real_array(X, name=name, what="a rectangular array of numbers",
                       complex_hint=f"pass real features (for instance {name}.real)", numbers="numbers")
        data = X
    if X.ndim != 2:
        raise ValueError(f"{name} must be two-dimensional (n_samples, n_features), got shape {X.shape}")
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"{name} is empty: shape {X.shape}")
    if not np.all(np.isfinite(data)):
        check_finite(X, feature_names, name=name)
    if n_features is not None and X.shape[1] != n_features:
        raise ValueError(f"{name} has {X.shape[1]} features, but the model was fitted with {n_features}")
    return X


def check_no_missing_labels(y: Any, *, name: str = "y") -> Any:
    """Raise a ``ValueError`` naming the first rows where the labels ``y`` are missing (None, NaN, pandas' NA):
    a label is never imputed, and NumPy's sorting of such labels fails with a message about ``<``. Returns ``y``."""
    values = y.to_numpy() if hasattr(y, "to_numpy") else y
    if values is None or (isinstance(values, np.ndarray) and values.dtype.kind in "biuUS"):
        return y
    if isinstance(values, np.ndarray) and values.dtype.kind == "f":
        missing = np.isnan(values).ravel()
    else:
        values = np.asarray(values, dtype=object).ravel()
        try:  # None, and NaN (the one value unequal to itself), compared in one pass
            missing = np.asarray(np.equal(values, None) | (values != values), dtype=bool)
        except TypeError:  # pandas' NA, whose truth value is ambiguous: one label at a time
            missing = np.fromiter((v is None or type(v).__name__ in ("NAType", "NaTType") or bool(v != v)
                                   for v in values), dtype=bool, count=values.size)
    if missing.any():
        rows = np.flatnonzero(missing)
        shown = ", ".join(str(int(r)) for r in rows[:5]) + (", ..." if rows.size > 5 else "")
        raise ValueError(f"{name} has missing labels (None or NaN) in {rows.size} row{'s' if rows.size > 1 else ''} "
                         f"(first: {shown}): a label is not imputed; drop those rows")
    return y


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
    # the element types first: np.asarray([1, "a"]) would turn the 1 into the string "1"
    y_obj = np.asarray(y, dtype=object) if not isinstance(y, np.ndarray) or y.dtype.kind == "O" else None
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.ravel()
    if y.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {y.shape}")
    if y.shape[0] != n:
        raise ValueError(f"{name} has {y.shape[0]} labels but X has {n} samples")
    if y_obj is not None:
        try:
            y = _homogeneous_labels(y_obj.ravel(), name)
        except TypeError:
            check_no_missing_labels(y_obj, name=name)  # a missing label is named first
            raise
    if y.dtype.kind == "c":
        raise TypeError(f"{name} has complex labels")
    if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
        check_no_missing_labels(y, name=name)
        raise ValueError(f"{name} contains infinity")
    two = _two_numeric_classes(y)
    if two is not None:
        return two
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


def _two_numeric_classes(y: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """``(y_pm, classes)`` of :func:`check_labels` for numeric labels (finite, one-dimensional) of exactly two
    values ``lo < hi``, without sorting: ``classes = [min y, max y]``, which is ``np.unique(y)`` exactly when every
    label equals one of them; None otherwise (other counts of classes, other types, and a float label 0, whose sign
    ``np.unique`` and ``min``/``max`` may pick differently), for the general path."""
    if y.dtype.kind not in "iuf" or y.size < 2:
        return None
    lo, hi = y.min(), y.max()
    if not lo < hi or (y.dtype.kind == "f" and (lo == 0 or hi == 0)):
        return None
    upper = y == hi
    if np.count_nonzero(upper) + np.count_nonzero(y == lo) != y.size:
        return None
    return np.where(upper, 1.0, -1.0), np.array([lo, hi], dtype=y.dtype)


def _homogeneous_labels(values: np.ndarray, name: str) -> np.ndarray:
    """Labels that are all numbers (bools included) or all strings, as a numeric or string array.

    Raises a ``TypeError`` for a mix of numbers and strings (which numpy would
    silently turn into strings) and for values of any other type (None, lists...).
    """
    kinds = set()
    for v in values:
        if isinstance(v, (str, np.str_)):
            kinds.add("string")
        elif isinstance(v, (bool, np.bool_, int, float, np.integer, np.floating)):
            kinds.add("number")
        else:
            raise TypeError(
                f"{name} holds a label of type {type(v).__name__} ({v!r}): labels must be numbers or strings"
            )
    if len(kinds) > 1:
        examples = {k: next(v for v in values if (isinstance(v, (str, np.str_)) == (k == "string"))) for k in kinds}
        raise TypeError(
            f"{name} mixes numbers and strings (for instance {examples['number']!r} and {examples['string']!r}): "
            "give every label the same type"
        )
    return np.asarray(values.tolist())


def check_sample_weight(sample_weight: Any, n: int, *, name: str = "sample_weight") -> np.ndarray:
    """Return a non-negative float64 weight vector of length ``n`` (ones when None)."""
    if sample_weight is None:
        return np.ones(n)
    raw = np.asarray(sample_weight)
    if raw.dtype.kind == "c":
        raise TypeError(f"{name} has complex entries")
    try:
        w = raw.astype(np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must hold numbers: {exc}") from exc
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


def real_scalar(value: Any, *, name: str, what: str = "a real number") -> float:
    """``float(value)`` of a real scalar; a string, bytes, a complex number or anything ``float`` refuses is a
    ``TypeError`` saying ``{name} must be {what}``."""
    if isinstance(value, (str, bytes, complex, np.complexfloating, np.str_, np.bytes_)):
        raise TypeError(f"{name} must be {what}, got {value!r}")
    try:
        return float(value)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be {what}, got {value!r}") from exc


def check_nonnegative(value: Any, *, name: str, what: str = "a real number") -> float:
    """A real scalar with ``0 ≤ value < ∞`` (a penalty's strength, a radius), as a float; the errors name ``name``."""
    v = real_scalar(value, name=name, what=what)
    if not math.isfinite(v) or v < 0:
        raise ValueError(f"{name} must be finite and non-negative, got {value!r}")
    return v


def check_limits(tol: Any = None, max_iter: Any = None, time_limit: Any = None) -> None:
    """Refuse a ``tol`` that is not a positive finite number, a ``max_iter`` that is not a positive integer and a
    ``time_limit`` that is not positive (None: not given). The one place a solve's limits are checked."""
    if tol is not None and (not np.isfinite(float(tol)) or float(tol) <= 0):
        raise ValueError(f"tol must be positive, got {tol!r}")
    if max_iter is not None and (int(max_iter) != max_iter or int(max_iter) < 1):
        raise ValueError(f"max_iter must be a positive integer, got {max_iter!r}")
    if time_limit is not None and not float(time_limit) > 0:
        raise ValueError(f"time_limit must be positive, got {time_limit!r}")


def check_positive_class(positive_class: Any, *, name: str = "positive_class") -> Any:
    """``positive_class`` as a plain label (a string, a number or a bool), or None; a ``TypeError`` otherwise."""
    if positive_class is None:
        return None
    if isinstance(positive_class, np.generic):
        positive_class = positive_class.item()
    if not isinstance(positive_class, (str, bool, int, float)):
        raise TypeError(f"{name} must be a class label (a string or a number) or None, got {positive_class!r}")
    if isinstance(positive_class, float) and not np.isfinite(positive_class):
        raise ValueError(f"{name} must be one of the labels, got {positive_class!r}")
    return positive_class


def _same_label(label: Any, value: Any) -> bool:
    """``label == value`` for a label of ``classes`` and a user's value, never across strings and numbers."""
    if isinstance(label, (str, np.str_)) != isinstance(value, str):
        return False
    return bool(label == value)


def sign_orientation(classes: np.ndarray, positive_class: Any, *, name: str = "positive_class") -> int:
    """+1 when a +1 sign points to ``classes[1]`` (``positive_class`` None or ``classes[1]``), −1 for ``classes[0]``.

    The model is oriented to ``classes[1]`` (``y = +1``); a sign names the class a positive weight pushes
    towards, so with ``positive_class = classes[0]`` every sign (and bound) on the oriented ``w`` is flipped.

    Raises
    ------
    ValueError
        ``positive_class`` is not one of the two labels (the message lists them).
    """
    value = check_positive_class(positive_class, name=name)
    if value is None:
        return 1
    for orientation, label in ((1, classes[1]), (-1, classes[0])):
        if _same_label(label, value):
            return orientation
    labels = [c.item() if isinstance(c, np.generic) else c for c in classes]
    raise ValueError(f"{name}={value!r} is not one of the labels {labels}")


def unnamed_direction(classes: np.ndarray, positive_class: Any, signs: np.ndarray) -> str | None:
    """The note that signs point to ``classes[1]`` when no class was named and the labels do not say it.

    None when there are no signs, ``positive_class`` is given, or the labels are {0, 1} or {−1, +1} (where
    +1 and 1 read as the positive class).
    """
    if positive_class is not None or not np.any(signs):
        return None
    if classes.dtype.kind in "biuf" and {float(c) for c in classes} in ({0.0, 1.0}, {-1.0, 1.0}):
        return None
    labels = [c.item() if isinstance(c, np.generic) else c for c in classes]
    return (f"signs were given without positive_class: with the labels {labels} a +1 sign means a larger "
            f"feature pushes towards {labels[1]!r} (classes[1], the larger label in sorted order); pass "
            f"positive_class={labels[1]!r} (or {labels[0]!r}) to name the class the signs point to")


def check_fit_data(
    X: Any,
    y: Any,
    *,
    signs: Any = None,
    sample_weight: Any = None,
    feature_names: Any = None,
    positive_class: Any = None,
) -> FitData:
    """Validate ``X``, ``y`` and the per-feature / per-sample options together.

    ``signs`` are resolved and oriented to ``classes[1]``: with ``positive_class = classes[0]`` they are
    flipped (see :func:`sign_orientation`).
    """
    names = _feature_names_of(X)
    if feature_names is not None:
        feature_names = np.asarray([str(f) for f in feature_names], dtype=object)
        names = feature_names
    X = check_X(X, feature_names=names)
    n, d = X.shape
    if names is not None and names.shape[0] != d:
        raise ValueError(f"feature_names has {names.shape[0]} entries but X has {d} features")
    y_pm, classes = check_labels(y, n)
    s = (check_signs(signs, d, names) * sign_orientation(classes, positive_class)).astype(np.int8)
    weight = check_sample_weight(sample_weight, n)
    return FitData(X=X, y=y_pm, classes=classes, signs=s, sample_weight=weight, feature_names=names)

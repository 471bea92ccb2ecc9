"""Features named in a prior, and sign constraints: by name or index, from every form a user writes them in.

A feature is a column name (resolved against the data's names, or the one scikit-learn ``prefix__name`` that ends
with it) or an integer position (negative positions count from the end); a name that is also another column's
position is refused as ambiguous. Signs (+1: ``w_h ≥ 0``, −1: ``w_h ≤ 0``, 0: free) come as a vector, a mapping
``{feature: sign}``, a pandas Series (by its index), ``{"positive": [...], "negative": [...]}`` or a pair of lists,
and resolve to one int8 vector; a feature given two different signs is refused naming both keys.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["check_signs", "feature_index"]


def _is_index_list(part: Any) -> bool:
    return isinstance(part, (list, tuple, np.ndarray, range, set, frozenset)) or (
        hasattr(part, "to_numpy") and getattr(part, "ndim", 1) == 1
    )


def feature_index(key: Any, d: int, feature_names: np.ndarray | None = None, *, name: str = "signs") -> int:
    """The column of a feature given by name or integer index (negative counts from the end).

    Raises a ``ValueError`` naming ``name`` for an unknown or shared name, an index out of range, or an
    integer that is also the name of another column; a ``TypeError`` for a key of another type.
    """
    names = None if feature_names is None else np.asarray([str(f) for f in feature_names], dtype=object)
    if isinstance(key, (str, np.str_)):
        if names is None:
            raise ValueError(
                f"{name} names feature {key!r}, but no feature names are known: pass a "
                "pandas DataFrame or feature_names= (in a scikit-learn Pipeline, "
                "pipeline.set_output(transform='pandas') passes the names on)"
            )
        hits = np.flatnonzero(names == str(key))
        if hits.size == 0:
            hits = _prefixed_matches(names, str(key), name)
        if hits.size > 1:
            raise ValueError(
                f"{name} names feature {key!r}, but {hits.size} columns share that name (columns "
                f"{hits.tolist()}): rename the columns or give column indices"
            )
        return int(hits[0])
    if isinstance(key, (int, np.integer)) and not isinstance(key, (bool, np.bool_)):
        k = int(key)
        if not -d <= k < d:
            raise ValueError(f"{name} index {k} is out of range for {d} features")
        h = k % d
        if names is not None:
            named = np.flatnonzero(names == str(k))
            if named.size and not np.all(named == h):
                raise ValueError(
                    f"{name} key {k} is ambiguous: it is the position of column {h} ({names[h]!r}) and the "
                    f"name of column {int(named[0])}; give the name as a string or use a sign vector"
                )
        return h
    raise TypeError(f"{name} keys must be feature names or integer indices, got {key!r}")


def check_signs(signs: Any, d: int, feature_names: np.ndarray | None = None, *, name: str = "signs") -> np.ndarray:
    """Resolve a sign specification into an int8 vector of +1 / 0 / -1.

    Parameters
    ----------
    signs : None, array-like of length d, mapping, pandas Series or pair of index lists
        * ``None``: no constraint.
        * a length-``d`` sequence or array of +1 / 0 / -1 (applied by position).
        * a mapping ``{feature: sign}`` (a dict or any ``collections.abc.Mapping``)
          whose keys are feature names (when ``feature_names`` is known) or
          integer indices (negative ones count from the end).
        * a pandas Series: aligned by its index, read as the mapping
          ``{label: value}`` (never by position, unless its labels are the
          positions ``0 … d−1``).
        * a mapping ``{"positive": [...], "negative": [...]}`` or a pair
          ``(positive, negative)`` of lists of names or indices.
    d : int
        Number of features.
    feature_names : array of str, optional
        Names used to resolve string keys.

    Raises
    ------
    ValueError
        An unknown name, an index out of range, a name shared by several
        columns, an integer key that is also the name of another column, a
        value other than +1 / 0 / -1, or one feature given two different signs
        under two keys (a name and an index, an index and its negative form,
        a list of positives and a list of negatives); the message names both keys.
    TypeError
        A key that is neither a name nor an integer, or a value that is not a number.
    """
    s = np.zeros(d, dtype=np.int8)
    if signs is None:
        return s
    names = None if feature_names is None else np.asarray([str(f) for f in feature_names], dtype=object)

    def index_of(key: Any) -> int:
        return feature_index(key, d, names, name=name)

    def sign_of(value: Any, key: Any) -> int:
        if isinstance(value, (str, bytes, np.str_, np.bytes_)):
            raise TypeError(f"{name}[{key!r}] must be the number +1, 0 or -1, got the string {value!r}")
        try:
            v = float(value)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{name}[{key!r}] must be +1, 0 or -1, got {value!r}") from exc
        if v not in (-1.0, 0.0, 1.0):
            raise ValueError(f"{name}[{key!r}] must be +1, 0 or -1, got {value!r}")
        return int(v)

    given: dict[int, tuple[Any, int]] = {}

    def assign(key: Any, sign: int) -> None:
        h = index_of(key)
        if h in given and given[h][1] != sign:
            other, other_sign = given[h]
            raise ValueError(
                f"{name} gives feature {h}{'' if names is None else f' ({names[h]!r})'} two different signs: "
                f"{other_sign:+d} under the key {other!r} and {sign:+d} under the key {key!r}"
                + (" (it cannot be both positive and negative)" if other_sign * sign < 0 else "")
            )
        given[h] = (key, sign)
        s[h] = sign

    if hasattr(signs, "to_numpy") and hasattr(signs, "index") and getattr(signs, "ndim", None) == 1:
        # a pandas Series: by its index, never by position
        signs = _SeriesMapping(list(signs.index), list(signs.to_numpy()))
    if isinstance(signs, Mapping) and signs and set(signs) <= {"positive", "negative"} and all(
        _is_index_list(v) for v in signs.values()
    ):
        signs = (signs.get("positive", ()), signs.get("negative", ()))
    if isinstance(signs, tuple) and len(signs) == 2 and all(_is_index_list(part) for part in signs):
        for sign, part in zip((1, -1), signs, strict=True):
            for key in (part.to_numpy() if hasattr(part, "to_numpy") else part):
                assign(key, sign)
        return s
    if isinstance(signs, _SeriesMapping):
        for key, value in signs.items:
            assign(key, sign_of(value, key))
        return s
    if isinstance(signs, Mapping):
        for key, value in signs.items():
            assign(key, sign_of(value, key))
        return s
    if isinstance(signs, (str, bytes)):
        raise TypeError(f"{name} must be an array, a mapping or a pair of index lists, got a string")
    try:
        arr = np.asarray(signs)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be an array of +1 / 0 / -1, a mapping or a pair of index lists: {exc}") from exc
    if arr.ndim != 1 or arr.shape[0] != d:
        raise ValueError(f"{name} must have length {d} (one entry per feature), got shape {arr.shape}")
    if arr.dtype.kind == "b":
        raise TypeError(f"{name} is a boolean mask; give +1 (w_h ≥ 0), -1 (w_h ≤ 0) or 0 (free) per feature")
    if arr.dtype.kind not in "iufO" or (arr.dtype.kind == "O" and not all(
            isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))
            for v in arr)):
        raise TypeError(f"{name} must hold the numbers +1, 0 or -1, got an array of dtype {arr.dtype}")
    arr = arr.astype(np.float64)
    if not np.all(np.isin(arr, (-1.0, 0.0, 1.0))):
        raise ValueError(f"{name} must hold only +1, 0 or -1")
    return arr.astype(np.int8)


def _prefixed_matches(names: np.ndarray, key: str, name: str) -> np.ndarray:
    """The one column named ``prefix__key`` (scikit-learn's ``get_feature_names_out``), or an error.

    A ``ColumnTransformer`` names its outputs ``"num__mean radius"``; a key ``"mean radius"``
    resolves to it when exactly one column ends with ``"__mean radius"``. Otherwise the
    ``ValueError`` lists the prefixed candidates, or the closest names (difflib).
    """
    import difflib

    suffix = "__" + key
    hits = np.flatnonzero([str(f).endswith(suffix) for f in names])
    if hits.size == 1:
        return hits
    if hits.size > 1:
        raise ValueError(f"{name} names feature {key!r}, which several transformed columns end with: "
                         f"{[str(names[h]) for h in hits]}; give the full name")
    plain = {str(f).rsplit("__", 1)[-1]: str(f) for f in names}
    close = difflib.get_close_matches(key, list(plain), n=5, cutoff=0.6)
    suggestion = [plain[c] for c in close] or difflib.get_close_matches(key, [str(f) for f in names], n=5,
                                                                          cutoff=0.6)
    listed = ", ".join(repr(str(f)) for f in names[:8]) + (", ..." if len(names) > 8 else "")
    hint = f"; did you mean {' or '.join(repr(c) for c in suggestion)}?" if suggestion else ""
    raise ValueError(f"{name} names unknown feature {key!r}{hint} (the {len(names)} features: {listed})")


@dataclass(frozen=True)
class _SeriesMapping:
    """The (label, value) pairs of a pandas Series, duplicated labels kept (a dict would drop them)."""

    keys: list
    values: list

    @property
    def items(self) -> list:
        return list(zip(self.keys, self.values, strict=True))

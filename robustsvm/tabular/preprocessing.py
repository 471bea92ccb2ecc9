"""Fitted preprocessing of a table of features: imputation, one-hot encoding and z-scores, stored as plain JSON.

:func:`fit_preprocessing` learns the rules once, on the training table; :meth:`Preprocessing.transform`
applies them — to the training table again, to a new table at prediction time, to the same file when
a stored solution is validated. The rules are plain values (:meth:`Preprocessing.to_dict`): the median
(numeric column) or most frequent category (categorical column) that fills a missing entry, the sorted
categories of each categorical column, and the mean and scale of each z-score

    z_h = (x_h − x̄_h) / s_h,   s_h = √( (1/n) Σ_i (x_ih − x̄_h)² )   (s_h = 1 for a constant column),

computed after imputation and encoding, over the rows the model is fitted on. They are fitted with
scikit-learn's ``SimpleImputer`` and ``OneHotEncoder`` and applied by this module's own code, so a
stored model needs neither pickle nor scikit-learn to score a new row. The z-scores are NumPy's
mean and population standard deviation (:func:`zscore_parameters`), the ones every command of the
command line uses.

A categorical column ``site`` with categories ``A, B, C`` becomes the features ``site=A``, ``site=B`` and
``site=C`` (one per category, in place of the column); a category unseen in training becomes all-zero
dummies, with a warning. A binary column, a column a prior names and every column under
``categorical="reference"`` is reference coded instead (:mod:`robustsvm.tabular.categories`): one
feature per level but its reference level, which is the zero of them all. Rows are numbered from 1, the
first row after the header, in every message.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..formats.solution_format import SolutionFormatError
from .categories import check_not_identifier, code_categories, lookalike_levels
from .columns import SHOWN_ROWS, column_kind, column_values, rows_text

__all__ = ["IMPUTE", "CATEGORICAL", "PREPROCESSING_FORMAT", "PREPROCESSING_VERSION", "ColumnRule", "Prepared",
           "Preprocessing", "fit_preprocessing", "zscore_parameters"]

#: how missing values are handled: an error at fit time, the column's median (most frequent category), dropped rows
IMPUTE = ("none", "median", "drop-rows", "keep")
#: what happens to a column of strings: one dummy per category, or the column is left out
CATEGORICAL = ("onehot", "reference", "drop")
PREPROCESSING_FORMAT = "robustsvm.preprocessing"
#: version of the ``preprocessing`` section of a stored solution
PREPROCESSING_VERSION = 1


def zscore_parameters(X: np.ndarray, names: Sequence[str] | None = None, *,
                      skip_missing: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """``(mean, scale)`` of the columns of ``X``: the mean and the population standard deviation, 1 where it is 0.

    Computed on a C-ordered copy, so the same values give the same bits whatever the memory layout.
    ``skip_missing`` leaves NaN out of each column's mean and deviation. A column whose mean or
    deviation leaves the floating-point range (values near 1e308, or above 1e154, whose squares
    overflow) is a ``ValueError`` naming it (``names``, else its index), not a column of NaN.
    """
    A = np.ascontiguousarray(X, dtype=np.float64)
    with np.errstate(all="ignore"):
        if skip_missing:
            seen = np.sum(~np.isnan(A), axis=0)
            mean = np.where(seen > 0, np.nansum(A, axis=0) / np.maximum(seen, 1), 0.0)
            std = np.sqrt(np.where(seen > 0, np.nansum((A - mean) ** 2, axis=0) / np.maximum(seen, 1), 0.0))
        else:
            mean, std = A.mean(axis=0), A.std(axis=0)
    bad = np.flatnonzero(~(np.isfinite(mean) & np.isfinite(std)))
    if bad.size:
        h = int(bad[0])
        column = np.abs(A[:, h])
        largest = int(np.nanargmax(column))
        name = repr(str(names[h])) if names is not None else str(h)
        raise ValueError(f"column {name} overflows its z-score: a value of magnitude {column[largest]:.3g} "
                         f"({rows_text([largest])}) makes its mean or standard deviation exceed the floating-point "
                         f"range; rescale the column (other units), --drop it or fix the value")
    return mean, np.where(std > 0, std, 1.0)


@dataclass(frozen=True)
class ColumnRule:
    """How one input column becomes features.

    Attributes
    ----------
    name : str
        The column's name in the table.
    kind : {"numeric", "categorical"}
    fill : float, str or None
        What a missing entry becomes (the training median, or the most frequent category);
        None when missing entries are not imputed.
    categories : tuple of str
        The training categories of a categorical column: sorted, or in the order of ``--ordered``.
    reference : str or None
        The reference level of a reference-coded column (no feature of its own); None: one feature per category.
    """

    name: str
    kind: str
    fill: float | str | None = None
    categories: tuple[str, ...] = ()
    reference: str | None = None

    @property
    def features(self) -> list[str]:
        """The names of the features this column becomes."""
        if self.kind == "numeric":
            return [self.name]
        return [f"{self.name}={c}" for c in self.categories if c != self.reference]

    @property
    def levels(self) -> tuple[str, ...]:
        """The categories that have a feature (all but the reference level)."""
        return tuple(c for c in self.categories if c != self.reference)


@dataclass(frozen=True)
class Prepared:
    """A table after preprocessing.

    Attributes
    ----------
    X : ndarray of shape (m, p)
        The features of the rows kept.
    y : ndarray of shape (m,) or None
        Their labels, when the table has the target column.
    rows : ndarray of int
        0-based position in the input table of each row of ``X``.
    warnings : list of str
        One line per thing the user should know (unknown categories, ignored columns, rows not scored).
    """

    X: np.ndarray
    y: np.ndarray | None
    rows: np.ndarray
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True, eq=False)
class Preprocessing:
    """Fitted preprocessing rules (see the module's description); build them with :func:`fit_preprocessing`.

    Attributes
    ----------
    columns : tuple of ColumnRule
        The input columns the model uses, in order.
    target : str or None
        The label column (None for a table without one, such as a named data set).
    impute : {"none", "median", "drop-rows"}
        ``"none"``: a missing value is an error when fitting or validating; ``"median"``: it becomes
        the column's fill value; ``"drop-rows"``: its row is left out. At prediction time a row with a
        missing value that is not imputed gets no prediction (and a warning).
    dropped : tuple of str
        Columns left out (``--drop``, or string columns under ``--categorical drop``).
    mean, scale : ndarray or None
        The z-score of each feature, None when the features are not standardized.
    """

    columns: tuple[ColumnRule, ...]
    target: str | None
    impute: str = "none"
    dropped: tuple[str, ...] = ()
    mean: np.ndarray | None = None
    scale: np.ndarray | None = None

    @property
    def feature_names(self) -> list[str]:
        """The names of the model's features, in order (a categorical column as its dummies ``name=category``)."""
        return [f for c in self.columns for f in c.features]

    @property
    def standardize(self) -> bool:
        return self.mean is not None

    def column(self, name: str) -> ColumnRule | None:
        """The rule of input column ``name``, or None."""
        return next((c for c in self.columns if c.name == name), None)

    def csv_dtypes(self) -> dict[str, type]:
        """``dtype`` for :func:`pandas.read_csv`: categorical columns read as strings, as they were fitted."""
        return {c.name: str for c in self.columns if c.kind == "categorical"}

    def describe(self) -> str:
        """One line: what the rules do."""
        numeric = [c.name for c in self.columns if c.kind == "numeric"]
        parts = [f"{len(numeric)} numeric column{'s' * (len(numeric) != 1)}"]
        parts += [f"{c.name} one-hot ({len(c.categories)} categories)" if c.reference is None else
                  f"{c.name} against {c.reference!r} ({len(c.levels)} of {len(c.categories)} levels)"
                  for c in self.columns if c.kind == "categorical"]
        parts.append({"none": "no imputation", "median": "missing values imputed (median, most frequent category)",
                      "drop-rows": "rows with missing values dropped",
                      "keep": "missing values kept for the model"}[self.impute])
        parts.append("z-scores" if self.standardize else "not standardized")
        if self.dropped:
            parts.append(f"dropped {list(self.dropped)}")
        return "preprocessing: " + "; ".join(parts)

    def refit_statistics(self, frame: Any, y: Any = None) -> Preprocessing:
        """The same rules with the statistics they learn from rows fitted anew on ``frame``'s rows.

        The fill values (``impute="median"``: each numeric column's median, each string column's most frequent
        value) and the z-scores ``z_h = (x_h − x̄_h)/s_h`` (:func:`zscore_parameters`, missing values left out
        under ``impute="keep"``) are those of :func:`fit_preprocessing` on ``frame``. The structure is kept: the
        columns, their kinds, categories and reference levels, the feature space of the table the rules were
        fitted on (as ``OneHotEncoder(categories=...)`` is given it), so that a feature, and a sign or a bound
        by its name, means the same for every subset of rows; a category absent from ``frame`` is a dummy of
        zeros there. ``y``: the labels, when ``frame`` lacks the target column.
        """
        fills = {rule.name: rule.fill for rule in _fit_values(self, frame, y)}
        rules = replace(self, columns=tuple(replace(c, fill=fills[c.name]) for c in self.columns), mean=None,
                        scale=None)
        return _with_zscores(rules, frame, y) if self.standardize else rules

    # ------------------------------------------------------------ applying
    def transform(self, frame: Any, y: Any = None, *, predict: bool = False, scale: bool = True) -> Prepared:
        """Apply the rules to a :class:`pandas.DataFrame`.

        Parameters
        ----------
        frame : DataFrame
            A table with (at least) the columns of :attr:`columns`.
        y : array-like, optional
            The labels, for rules without a target column (a named data set).
        predict : bool, default False
            False (fitting, validating): the labels are required, and a missing value that is
            not imputed is an error naming the column and the rows (or its row is dropped under
            ``impute="drop-rows"``). True (new data): the labels are optional, and a row with a missing
            value that is not imputed is left out with a warning. Under ``impute="keep"`` a missing value
            stays NaN in ``X`` (the model handles it: ``--missing uncertain``).
        scale : bool, default True
            Apply the stored z-scores (False leaves the features unstandardized).

        Raises
        ------
        ValueError
            A column the model uses is absent; a numeric column holds text or an infinite value;
            a missing value that may not be (see ``predict``); a missing label.
        """
        import pandas as pd

        present = [str(c) for c in frame.columns]
        frame = frame.set_axis(present, axis=1)
        absent = [c.name for c in self.columns if c.name not in present]
        if absent:
            raise ValueError(f"the data lack the column{'s' * (len(absent) > 1)} the model uses: {absent}")
        warnings: list[str] = []
        known = {c.name for c in self.columns} | set(self.dropped) | {self.target}
        extra = [c for c in present if c not in known]
        if extra:
            warnings.append(f"columns the model does not use are ignored: {extra}")
        values, unfilled = {}, {}
        for rule in self.columns:
            v, missing = column_values(frame[rule.name], rule)
            if self.impute == "keep":
                missing = np.zeros_like(missing)
            if missing.any() and rule.fill is not None:
                v = np.where(missing, rule.fill, v)
            elif missing.any():
                unfilled[rule.name] = np.flatnonzero(missing)
            values[rule.name] = v
        keep = np.ones(len(frame), dtype=bool)
        for positions in unfilled.values():
            keep[positions] = False
        if unfilled and not predict and self.impute != "drop-rows":
            raise ValueError(_missing_message(unfilled))
        if unfilled and predict:
            lost = np.flatnonzero(~keep)
            warnings.append(f"{rows_text(lost)} {'has' if lost.size == 1 else 'have'} missing values in "
                            f"{list(unfilled)} that the model does not impute (impute={self.impute!r}): no "
                            f"prediction for {'it' if lost.size == 1 else 'them'}")
        if self.target is not None and self.target in present:
            labels = frame[self.target]
        elif y is not None:
            labels = pd.Series(np.asarray(y))
        elif not predict:
            raise ValueError(f"the data lack the target column {self.target!r}" if self.target is not None
                             else "the labels y are required")
        else:
            labels = None
        if labels is not None and len(labels) != len(frame):
            raise ValueError(f"y has {len(labels)} labels for {len(frame)} rows")
        missing_y = np.zeros(len(frame), dtype=bool) if labels is None else np.asarray(labels.isna(), dtype=bool)
        if missing_y.any() and not predict:
            if self.impute != "drop-rows":
                raise ValueError(_missing_labels_message(self.target, np.flatnonzero(missing_y)))
            keep &= ~missing_y
        rows = np.flatnonzero(keep)
        X = self._encode({k: v[rows] for k, v in values.items()}, rows, warnings)
        if scale and self.standardize:
            with np.errstate(over="ignore", invalid="ignore"):
                X = (X - self.mean) / self.scale
            _check_scaled(X, self.feature_names, rows)
        y_out = None if labels is None else np.asarray(labels.to_numpy())[rows]
        return Prepared(X=X, y=y_out, rows=rows, warnings=warnings)

    def _encode(self, values: dict, rows: np.ndarray, warnings: list[str]) -> np.ndarray:
        """The feature matrix of the kept rows (numeric columns as they are, categorical ones as dummies)."""
        blocks = []
        for rule in self.columns:
            v = values[rule.name]
            if rule.kind == "numeric":
                blocks.append(v.astype(np.float64)[:, None])
                continue
            dummies = (v[:, None] == np.asarray(rule.levels, dtype=object)[None, :]).astype(np.float64)
            absent = np.asarray([not isinstance(s, str) for s in v], dtype=bool)  # missing, kept (impute="keep")
            dummies[absent] = np.nan
            known = np.isin(v.astype(str), np.asarray(rule.categories, dtype=str))
            unknown = np.flatnonzero(~known & ~absent)
            if unknown.size:
                seen = sorted({str(s) for s in v[unknown]})
                shown = ", ".join(repr(s) for s in seen[:SHOWN_ROWS]) + (" ..." if len(seen) > SHOWN_ROWS else "")
                zero = "" if rule.reference is None else f" (the reference level {rule.reference!r})"
                warnings.append(f"column {rule.name!r} has categories not seen in training ({shown}) in "
                                f"{rows_text(rows[unknown])}: encoded as all-zero dummies{zero}")
            blocks.append(dummies)
        return np.ascontiguousarray(np.hstack(blocks)) if blocks else np.zeros((len(rows), 0))

    # ------------------------------------------------------------ JSON
    def to_dict(self) -> dict:
        """The rules as plain JSON values (the ``preprocessing`` section of a stored solution)."""
        columns = []
        for c in self.columns:
            entry: dict[str, Any] = {"name": c.name, "kind": c.kind,
                                     "fill": c.fill if c.fill is None or c.kind == "categorical" else float(c.fill)}
            if c.kind == "categorical":
                entry["categories"] = list(c.categories)
                if c.reference is not None:
                    entry["reference"] = c.reference
            columns.append(entry)
        z = None if self.mean is None else {"mean": [float(v) for v in self.mean],
                                            "scale": [float(v) for v in self.scale]}
        return {"format": PREPROCESSING_FORMAT, "version": PREPROCESSING_VERSION, "target": self.target,
                "impute": self.impute, "columns": columns, "dropped": list(self.dropped), "standardize": z,
                "features": self.feature_names}

    @classmethod
    def from_dict(cls, spec: Any) -> Preprocessing:
        """Rebuild the rules from :meth:`to_dict`; a malformed field raises a ``SolutionFormatError`` naming it."""
        return _rules_from_dict(spec)


# ------------------------------------------------------------------ fitting
def fit_preprocessing(frame: Any, target: str | None = None, *, y: Any = None, drop: Sequence[str] = (),
                      impute: str = "none", categorical: str = "onehot", standardize: bool = True,
                      reference: Mapping[str, str | None] | None = None,
                      ordered: Mapping[str, Sequence[str]] | None = None) -> tuple[Preprocessing, Prepared]:
    """Fit the rules on a training table and apply them to it.

    Parameters
    ----------
    frame : DataFrame
        The training table.
    target : str, optional
        Its label column; or give the labels as ``y`` (then the table holds features only).
    y : array-like, optional
        The labels, when the table has no target column.
    drop : sequence of str
        Columns to leave out.
    impute : {"none", "median", "drop-rows"}
        ``"none"``: a missing value is an error naming the column and its rows; ``"median"``: numeric
        columns are filled with their median and string columns with their most frequent value;
        ``"drop-rows"``: rows with a missing value (or a missing label) are left out.
    categorical : {"onehot", "reference", "drop"}
        String columns become one dummy per category (a binary column: one, against its reference level),
        one dummy per level but the reference level, or are left out. A column of mostly numbers with a few
        strings is an error naming the rows (a typing mistake, not a category); a column with a different
        value on every row is an error too (an identifier: drop it).
    reference : mapping, optional
        Columns to reference code, each with its reference level (None: the first in sorted order).
    ordered : mapping, optional
        Ordered categorical columns, each with its levels from lowest to highest; the lowest is the reference.
    standardize : bool, default True
        z-scores of every feature (dummies included) over the rows kept.

    Returns
    -------
    (Preprocessing, Prepared)
        The rules, and the training table after them.
    """
    if impute not in IMPUTE:
        raise ValueError(f"impute must be one of {list(IMPUTE)}, got {impute!r}")
    if categorical not in CATEGORICAL:
        raise ValueError(f"categorical must be one of {list(CATEGORICAL)}, got {categorical!r}")
    columns = [str(c) for c in frame.columns]
    frame = frame.set_axis(columns, axis=1)
    if target is not None and target not in columns:
        raise ValueError(f"the target {target!r} is not a column; columns: {columns}")
    if (target is None) == (y is None):
        raise ValueError("give the labels either as the target column or as y")
    unknown = [c for c in drop if c not in columns]
    if unknown:
        raise ValueError(f"cannot drop {unknown}: not columns of the data; columns: {columns}")
    if target is not None and target in drop:
        raise ValueError(f"the target {target!r} cannot be dropped")
    dropped = list(drop)
    rules: list[ColumnRule] = []
    for name in columns:
        if name == target or name in drop:
            continue
        kind = column_kind(frame[name], name)
        if kind == "categorical" and categorical == "drop":
            dropped.append(name)
            continue
        check_not_identifier(name, frame[name], kind)
        rules.append(ColumnRule(name=name, kind=kind))
    if not rules:
        raise ValueError("no feature column is left (after --drop and --categorical drop)")
    draft = Preprocessing(columns=tuple(rules), target=target, impute=impute, dropped=tuple(dropped))
    fitted = Preprocessing(columns=code_categories(_fit_values(draft, frame, y), categorical, reference or {},
                                                   ordered or {}),
                           target=target, impute=impute, dropped=tuple(dropped))
    _check_unique_features(fitted)
    if standardize:
        fitted = _with_zscores(fitted, frame, y)
    prepared = fitted.transform(frame, y)
    prepared.warnings.extend(_wide_categorical_warnings(fitted, len(prepared.rows)) + _lookalike_warnings(fitted))
    return fitted, prepared


def _with_zscores(rules: Preprocessing, frame: Any, y: Any) -> Preprocessing:
    """``rules`` with the z-scores of the features it makes of ``frame``'s rows (NaN left out under "keep")."""
    mean, scale = zscore_parameters(rules.transform(frame, y).X, rules.feature_names,
                                    skip_missing=rules.impute == "keep")
    return replace(rules, mean=mean, scale=scale)


def _fit_values(draft: Preprocessing, frame: Any, y: Any) -> tuple[ColumnRule, ...]:
    """Each column's fill value (under ``impute="median"``) and categories, fitted on the rows kept."""
    import pandas as pd
    from sklearn.impute import SimpleImputer
    from sklearn.preprocessing import OneHotEncoder

    values, unfilled = {}, {}
    for rule in draft.columns:
        values[rule.name], m = column_values(frame[rule.name], rule)
        if m.any():
            unfilled[rule.name] = np.flatnonzero(m)
    if draft.impute == "keep":
        unfilled = {}
    if unfilled and draft.impute == "none":
        raise ValueError(_missing_message(unfilled))
    labels = frame[draft.target] if draft.target in frame.columns else pd.Series(np.asarray(y))
    missing = np.asarray(labels.isna(), dtype=bool)
    if missing.any() and draft.impute != "drop-rows":
        raise ValueError(_missing_labels_message(draft.target, np.flatnonzero(missing)))
    if draft.impute == "drop-rows":
        for positions in unfilled.values():
            missing[positions] = True
    rows = np.flatnonzero(~missing)
    if rows.size == 0:
        raise ValueError("no row is left once the rows with missing values are dropped")
    out = []
    for rule in draft.columns:
        v = values[rule.name][rows]
        present = v[~np.asarray(pd.isna(v), dtype=bool)]
        if present.size == 0:
            raise ValueError(f"column {rule.name!r} has no values (every entry is missing)")
        fill: float | str | None = None
        categories: tuple[str, ...] = ()
        if rule.kind == "numeric":
            if draft.impute == "median":
                fill = float(SimpleImputer(strategy="median").fit(v.astype(np.float64)[:, None]).statistics_[0])
        else:
            if draft.impute == "median":
                imputer = SimpleImputer(strategy="most_frequent", missing_values=np.nan)
                fill = str(imputer.fit(v.astype(object)[:, None]).statistics_[0])
            encoder = OneHotEncoder(handle_unknown="ignore").fit(present.astype(object)[:, None])
            categories = tuple(str(c) for c in encoder.categories_[0])
        out.append(ColumnRule(name=rule.name, kind=rule.kind, fill=fill, categories=categories))
    return tuple(out)


def _missing_labels_message(target: str | None, positions: np.ndarray) -> str:
    where = f"the target column {target!r}" if target is not None else "y"
    return (f"{where} has missing labels in {rows_text(positions)}; labels are not imputed: remove those rows or "
            f"use --impute drop-rows")


def _missing_message(unfilled: dict) -> str:
    name, positions = next(iter(unfilled.items()))
    others = list(unfilled)[1:]
    listed = ", ".join(repr(o) for o in others)
    also = "" if not others else f", as does column {listed}" if len(others) == 1 else f", as do columns {listed}"
    return (f"column {name!r} has missing values (NaN) in {rows_text(positions)}{also}; use --impute median or "
            f"--impute drop-rows, or --missing uncertain to keep them as uncertain values")


def _check_scaled(X: np.ndarray, names: list[str], rows: np.ndarray) -> None:
    """A value whose z-score overflows is a ``ValueError`` naming its column and row (not an infinite feature)."""
    bad = np.argwhere(np.isinf(X))
    if bad.size:
        i, h = (int(v) for v in bad[0])
        raise ValueError(f"column {names[h]!r} overflows its z-score in {rows_text([rows[i]])}: the value is too "
                         f"large for the floating-point range once centred and scaled; fix or rescale it")


def _check_unique_features(rules: Preprocessing) -> None:
    names = rules.feature_names
    twice = sorted({f for f in names if names.count(f) > 1})
    if twice:
        raise ValueError(f"one-hot encoding makes feature names that are also column names: {twice}; rename the "
                         f"columns or --drop one")


def _wide_categorical_warnings(rules: Preprocessing, n: int) -> list[str]:
    return [f"column {c.name!r} has {len(c.categories)} distinct values in {n} rows: one-hot encoding makes "
            f"{len(c.categories)} features; --drop {c.name} if it is an identifier"
            for c in rules.columns if c.kind == "categorical" and len(c.categories) > 20
            and len(c.categories) > n / 2]


def _lookalike_warnings(rules: Preprocessing) -> list[str]:
    out = []
    for c in rules.columns:
        groups = lookalike_levels(c.categories) if c.kind == "categorical" else []
        if groups:
            shown = "; ".join(" / ".join(repr(level) for level in g) for g in groups[:5])
            out.append(f"column {c.name!r} has levels that differ only by letter case or spaces ({shown}): each is "
                       "a category of its own; recode the column if they mean the same")
    return out


# ------------------------------------------------------------------ reading
def _field(spec: dict, key: str, kinds: type | tuple, where: str = "", optional: bool = False) -> Any:
    name = f"preprocessing.{where}{key}"
    if key not in spec:
        raise SolutionFormatError(f"stored solution: field {name!r} is missing")
    v = spec[key]
    if v is None and optional:
        return None
    if not isinstance(v, kinds) or isinstance(v, bool):
        raise SolutionFormatError(f"stored solution: field {name!r} has the wrong type ({type(v).__name__})")
    return v


def _numbers(values: Any, name: str) -> np.ndarray:
    if not isinstance(values, list) or not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                               for v in values):
        raise SolutionFormatError(f"stored solution: field 'preprocessing.standardize.{name}' must be a list of "
                                  f"numbers")
    return np.asarray(values, dtype=np.float64)


def _rules_from_dict(spec: Any) -> Preprocessing:
    if not isinstance(spec, dict) or spec.get("format") != PREPROCESSING_FORMAT:
        raise SolutionFormatError(f"stored solution: field 'preprocessing' is not a {PREPROCESSING_FORMAT!r} section")
    if spec.get("version") != PREPROCESSING_VERSION:
        raise SolutionFormatError(f"unsupported preprocessing version {spec.get('version')!r} (this package reads "
                                  f"{PREPROCESSING_VERSION})")
    impute = _field(spec, "impute", str)
    if impute not in IMPUTE:
        raise SolutionFormatError(f"stored solution: field 'preprocessing.impute' must be one of {list(IMPUTE)}")
    columns = []
    for k, c in enumerate(_field(spec, "columns", list)):
        where = f"columns[{k}]."
        if not isinstance(c, dict):
            raise SolutionFormatError(f"stored solution: field 'preprocessing.columns[{k}]' must be a JSON object")
        kind = _field(c, "kind", str, where)
        if kind not in ("numeric", "categorical"):
            raise SolutionFormatError(f"stored solution: field 'preprocessing.{where}kind' must be 'numeric' or "
                                      f"'categorical', got {kind!r}")
        categories = _field(c, "categories", list, where) if kind == "categorical" else []
        if not all(isinstance(s, str) for s in categories) or len(set(categories)) != len(categories):
            raise SolutionFormatError(f"stored solution: field 'preprocessing.{where}categories' must be distinct "
                                      f"strings")
        fill = _field(c, "fill", str if kind == "categorical" else (int, float), where, optional=True)
        reference = c.get("reference")
        if reference is not None and reference not in categories:
            raise SolutionFormatError(f"stored solution: field 'preprocessing.{where}reference' must be one of its "
                                      f"categories")
        columns.append(ColumnRule(name=_field(c, "name", str, where), kind=kind,
                                  fill=None if fill is None else fill if kind == "categorical" else float(fill),
                                  categories=tuple(categories), reference=reference))
    dropped = _field(spec, "dropped", list)
    rules = Preprocessing(columns=tuple(columns), target=_field(spec, "target", str, optional=True), impute=impute,
                          dropped=tuple(str(d) for d in dropped))
    z = _field(spec, "standardize", dict, optional=True)
    if z is not None:
        mean, scale = _numbers(z.get("mean"), "mean"), _numbers(z.get("scale"), "scale")
        p = len(rules.feature_names)
        if mean.shape != (p,) or scale.shape != (p,) or not (np.all(np.isfinite(mean)) and np.all(scale > 0)
                                                             and np.all(np.isfinite(scale))):
            raise SolutionFormatError(f"stored solution: field 'preprocessing.standardize' must hold {p} finite "
                                      f"means and {p} positive scales")
        rules = Preprocessing(columns=rules.columns, target=rules.target, impute=impute, dropped=rules.dropped,
                              mean=mean, scale=scale)
    if _field(spec, "features", list) != rules.feature_names:
        raise SolutionFormatError("stored solution: field 'preprocessing.features' does not match its columns")
    return rules

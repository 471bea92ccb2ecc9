"""One column of a user's table: its kind (numbers or text), its values and missing mask, and row numbers in messages.

Rows are numbered from 1, the first row after the header, in every message (:func:`rows_text`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["SHOWN_ROWS", "column_kind", "column_values", "not_numbers_message", "rows_text"]

#: rows listed by name in a message before "(and N more)"
SHOWN_ROWS = 3


def rows_text(positions: Sequence[int]) -> str:
    """``"rows 3, 17, 40 (and 5 more)"`` for 0-based ``positions`` (rows are numbered from 1)."""
    positions = list(positions)
    shown = ", ".join(str(int(p) + 1) for p in positions[:SHOWN_ROWS])
    more = len(positions) - SHOWN_ROWS
    return f"{'row' if len(positions) == 1 else 'rows'} {shown}" + (f" (and {more} more)" if more > 0 else "")



def column_kind(series: Any, name: str) -> str:
    """``"numeric"`` or ``"categorical"``; a column of numbers with a few strings is an error naming the rows."""
    import pandas as pd

    if pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series):
        return "numeric"
    present = series[~series.isna()]
    parsed = pd.to_numeric(present, errors="coerce")
    if len(present) and parsed.notna().sum() * 2 > len(present):
        bad = np.flatnonzero(np.asarray(series.notna() & pd.to_numeric(series, errors="coerce").isna()))
        raise ValueError(not_numbers_message(name, series, bad))
    return "categorical"


def not_numbers_message(name: str, series: Any, bad: np.ndarray) -> str:
    shown = ", ".join(repr(str(series.iloc[p])) for p in bad[:SHOWN_ROWS])
    verb = "is not a number" if bad.size == 1 else "are not numbers"
    return (f"column {name!r} holds numbers but {rows_text(bad)} {verb} "
            f"({shown}); fix them, leave them empty (missing), or --drop {name}")


def column_values(series: Any, rule: Any) -> tuple[np.ndarray, np.ndarray]:
    """The column's values (float for numeric, str or NaN for categorical) and its missing mask."""
    import pandas as pd

    missing = np.asarray(series.isna(), dtype=bool)
    if rule.kind == "categorical":
        v = np.asarray([np.nan if m else str(s) for s, m in zip(series.tolist(), missing, strict=True)], dtype=object)
        return v, missing
    if pd.api.types.is_bool_dtype(series):
        series = series.astype(np.float64)
    parsed = pd.to_numeric(series, errors="coerce")
    bad = np.flatnonzero(np.asarray(parsed.isna()) & ~missing)
    if bad.size:
        raise ValueError(not_numbers_message(rule.name, series, bad))
    v = np.asarray(parsed, dtype=np.float64)
    infinite = np.flatnonzero(np.isinf(v))
    if infinite.size:
        raise ValueError(f"column {rule.name!r} has infinite values in {rows_text(infinite)}; they are not imputed: "
                         f"fix or remove those rows")
    return v, missing

"""Categorical columns as features a prior can speak about: reference coding, ordered levels, identifiers.

**Reference coding.** A categorical column with levels ``L_0, L_1, …, L_k`` and reference level ``L_0``
becomes the ``k`` features ``col=L_j`` (``j ≥ 1``), ``1`` on the rows of level ``L_j`` and ``0`` elsewhere; the
reference level is the zero of every feature. The weight of ``col=L_j`` is then the effect of level ``L_j``
*against the reference* on the decision value, so a sign on the column, ``col=+1``, is a statement about every
non-reference level: ``w_{col=L_j} ≥ 0`` for all ``j``. A binary column is always coded this way (one
feature): its two one-hot dummies, once standardized, are exact negatives of each other, so a sign on one of them
would be undone by the other.

**Ordered levels.** ``grade=I<II<III`` makes ``I`` the reference and asks for a monotone effect along the order.
With z-scores ``z_j = (d_j − m_j)/s_j`` of the 0/1 dummies ``d_j``, the effect of level ``L_j`` against the
reference is ``e_j = w_j / s_j``; a monotone effect in the direction ``σ = ±1`` of the column's sign is

    0 ≤ σ e_1 ≤ σ e_2 ≤ … ≤ σ e_k,

the ``k − 1`` rows ``σ(e_{j+1} − e_j) ≥ 0`` of one ``scipy.optimize.LinearConstraint`` (the first inequality is
the sign itself). Like signs, they are oriented to the positive class.

**Identifiers.** A text column with a different value on every row, or an integer column with a different
value on every one of at least :data:`ID_MIN_ROWS` rows, identifies rows rather than describing them; it is
refused with a hint to ``--drop`` it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from itertools import pairwise
from typing import Any

import numpy as np

__all__ = ["ID_MIN_ROWS", "check_not_identifier", "choose_reference", "code_categories", "column_signs",
           "lookalike_levels", "ordering_constraint", "parse_levels", "parse_ordered"]

#: rows from which an integer column with a distinct value on every row is taken for an identifier
ID_MIN_ROWS = 20


def parse_levels(text: str, option: str = "--reference") -> dict[str, str]:
    """``"therapy=no,site=north"`` → ``{"therapy": "no", "site": "north"}`` (a column's reference level)."""
    out: dict[str, str] = {}
    for item in (s for s in text.split(",") if s.strip()):
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise ValueError(f"{option}: invalid item {item!r}: use COLUMN=LEVEL, comma-separated")
        if key.strip() in out:
            raise ValueError(f"{option} names column {key.strip()!r} twice")
        out[key.strip()] = value.strip()
    if not out:
        raise ValueError(f"{option} is empty")
    return out


def parse_ordered(text: str) -> dict[str, tuple[str, ...]]:
    """``"grade=I<II<III;stage=a<b"`` → ``{"grade": ("I", "II", "III"), "stage": ("a", "b")}``."""
    out: dict[str, tuple[str, ...]] = {}
    for item in (s for s in text.split(";") if s.strip()):
        key, sep, value = item.partition("=")
        levels = tuple(v.strip() for v in value.split("<"))
        if not sep or not key.strip() or len(levels) < 2 or not all(levels):
            raise ValueError(f"--ordered: invalid item {item!r}: use COLUMN=LOW<...<HIGH, several separated by ';'")
        if len(set(levels)) != len(levels):
            raise ValueError(f"--ordered: {key.strip()!r} lists a level twice: {list(levels)}")
        out[key.strip()] = levels
    if not out:
        raise ValueError("--ordered is empty")
    return out


def check_not_identifier(name: str, series: Any, kind: str) -> None:
    """Refuse a column that identifies rows (see the module's description), with a hint to ``--drop`` it."""
    import pandas as pd

    present = series[~series.isna()]
    n = len(present)
    if n < 2 or present.nunique() != n:
        return
    text = kind == "categorical"
    integer = pd.api.types.is_integer_dtype(series) and n >= ID_MIN_ROWS
    if text or integer:
        what = "text" if text else "integers"
        raise ValueError(f"column {name!r} holds a different value on each of its {n} rows ({what}): an identifier, "
                         f"not a feature; --drop {name}")


def lookalike_levels(categories: Sequence[str]) -> list[tuple[str, ...]]:
    """The groups of a column's levels that differ only by letter case or by spaces (``' Yes'``, ``'yes'``,
    ``'YES'``), each sorted; every level of a group is a category of its own unless the data are recoded."""
    groups: dict[str, list[str]] = {}
    for level in categories:
        groups.setdefault(" ".join(str(level).split()).casefold(), []).append(str(level))
    return [tuple(sorted(group)) for group in groups.values() if len(group) > 1]


def choose_reference(name: str, categories: Sequence[str], *, given: str | None, ordered: Sequence[str] | None,
                     coded: bool) -> tuple[tuple[str, ...], str | None]:
    """``(categories, reference)`` of a categorical column: its levels (in the ``ordered`` order when given) and
    its reference level, or None for every level its own feature (a column with three or more levels that no
    prior names and that is not ``coded``)."""
    seen = tuple(categories)
    if ordered is not None:
        if set(ordered) != set(seen):
            raise ValueError(f"--ordered {name}: the levels {list(ordered)} are not the column's levels "
                             f"{sorted(seen)}")
        if given is not None and given != ordered[0]:
            raise ValueError(f"--reference {name}={given}: an ordered column's reference is its first level "
                             f"{ordered[0]!r}")
        return tuple(ordered), ordered[0]
    if given is not None:
        if given not in seen:
            raise ValueError(f"--reference {name}={given}: {given!r} is not a level of column {name!r}; its levels "
                             f"are {list(seen)}")
        return seen, given
    if coded or len(seen) == 2:
        return seen, seen[0]
    return seen, None


def ordering_constraint(rule: Any, names: list[str], scale: np.ndarray | None, sign: int) -> Any:
    """The ``LinearConstraint`` ``σ(e_{j+1} − e_j) ≥ 0`` over the model's features (the module's description).

    ``rule`` is the column's rule (its levels in order, the first the reference), ``names`` the model's feature
    names, ``scale`` their z-score scales (None: not standardized) and ``sign`` the direction ``σ``.
    """
    from scipy.optimize import LinearConstraint

    features = [names.index(f) for f in rule.features]
    s = np.ones(len(names)) if scale is None else np.asarray(scale, dtype=np.float64)
    rows = []
    for lower, upper in pairwise(features):
        row = np.zeros(len(names))
        row[upper], row[lower] = sign / s[upper], -sign / s[lower]
        rows.append(row)
    if not rows:
        return None
    return LinearConstraint(np.vstack(rows), lb=0.0, ub=np.inf)


def column_signs(signs: Mapping | None, rules: Any) -> dict[str, int]:
    """The signs ``--signs`` gives to whole categorical columns (by column name)."""
    out: dict[str, int] = {}
    for key, sign in (signs or {}).items():
        rule = rules.column(key) if isinstance(key, str) else None
        if rule is not None and rule.kind == "categorical":
            out[key] = int(sign)
    return out


def code_categories(rules: tuple, categorical: str, reference: Mapping[str, str | None],
           ordered: Mapping[str, Sequence[str]]) -> tuple:
    """The column rules with each categorical column's levels and reference level (:func:`choose_reference`):
    ``reference`` and ``ordered`` as in :func:`robustsvm.tabular.preprocessing.fit_preprocessing`."""
    kinds = {r.name: r.kind for r in rules}
    given = [k for k, v in reference.items() if v is not None]  # None: code it if it is categorical (a prior names it)
    for option, names in (("--reference", given), ("--ordered", ordered)):
        for name in names:
            if kinds.get(name) != "categorical":
                what = "a numeric column" if name in kinds else "not a categorical column of the model"
                raise ValueError(f"{option} {name}: {name!r} is {what}")
    out = []
    for r in rules:
        if r.kind != "categorical":
            out.append(r)
            continue
        categories, ref = choose_reference(r.name, r.categories, given=reference.get(r.name),
                                           ordered=ordered.get(r.name),
                                           coded=categorical == "reference" or r.name in reference)
        out.append(replace(r, categories=categories, reference=ref))
    return tuple(out)

"""The priors of a table's model in its preprocessed features: ``--signs``, ``--bounds``, ``--widths``, ``--ordered``.

The user names columns of the raw table; :func:`translate_signs` and
:func:`robustsvm.cli.table_model.box_with_widths` put the values on the features the preprocessing rules make
(a categorical column's levels, by name). Only the ordering constraints of ``--ordered`` read the rules'
statistics: the effect of level ``L_j`` against the reference is ``w_j / s_j`` with ``s_j`` the z-score scale of
its dummy (:func:`robustsvm.tabular.categories.ordering_constraint`), so rules with other z-scores (a training
fold of ``cv``) need constraints of their own: :meth:`TablePriors.scaled_parameters`. Signs and bounds are on the
weights of the standardized features and ``--widths`` are in z-units: neither reads a scale.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["TablePriors", "translate_signs"]


@dataclass
class TablePriors:
    """The prior options as given (raw column names), put in the features of given preprocessing rules.

    Attributes
    ----------
    options : argparse.Namespace
        A copy of the command line's options before :meth:`apply` translates them.
    raw : list of str
        The feature columns of the raw table (an index in ``--signs`` counts among them).
    n_classes : int
        The number of classes of the labels.
    labels : list
        The labels, sorted as text.
    label_of : callable
        ``label_of(text, option)``: the label written ``text`` after ``option``.
    """

    options: argparse.Namespace
    raw: list[str]
    n_classes: int
    labels: list
    label_of: Callable[[str, str], Any]

    def _resolve(self, rules: Any) -> tuple[dict, bool]:
        """:func:`robustsvm.cli.per_class.resolve` in the features of ``rules``."""
        from . import per_class

        widths = getattr(self.options, "widths", None)
        return per_class.resolve(self.options, self.n_classes, self.label_of,
                                 lambda spec, option: _translate(spec, option, rules, self.raw, widths),
                                 lambda signs: _ordering(self.options.ordered, signs, rules), self.labels)

    def apply(self, args: argparse.Namespace, rules: Any) -> dict:
        """Set ``args``' signs, bounds, set and ordering constraints in the features of ``rules``; return the
        :class:`~robustsvm.PerClass` values of ``--signs-for`` and the like (their defaults: ``args``' values)."""
        from . import per_class, table_model

        given, default_signs = self._resolve(rules)
        args.constraints = _ordering(self.options.ordered, self.options.signs, rules) if default_signs else None
        args.signs = translate_signs(self.options.signs, rules, self.raw)
        if getattr(self.options, "bounds", None) is not None:
            args.bounds = translate_signs(self.options.bounds, rules, self.raw, option="--bounds")
        args.uncertainty = table_model.box_with_widths(self.options.uncertainty, getattr(self.options, "widths", None),
                                                       rules)
        per_class.keep_defaults(given, args)  # the classes not named get --signs, --bounds, --uncertainty
        return given

    def scaled_parameters(self, rules: Any) -> dict:
        """The estimator's parameters that depend on the rules' z-scores: ``{"constraints": ...}``, the ordering
        constraints of ``--ordered`` (every model's, or a :class:`~robustsvm.PerClass` of them) under the scales of
        ``rules``, as :meth:`apply` gives them for the table's own rules; ``{}`` without ``--ordered``."""
        if not self.options.ordered:
            return {}
        given, default_signs = self._resolve(rules)
        default = _ordering(self.options.ordered, self.options.signs, rules) if default_signs else None
        constraints = given.get("constraints")
        if constraints is None:
            return {"constraints": default}
        constraints.default = default
        return {"constraints": constraints}


def _translate(spec: Any, option: str, rules: Any, raw: list[str], widths: dict | None) -> Any:
    """A per-class value in the preprocessed features: signs or bounds by name, a box with ``--widths``."""
    from . import table_model

    if option == "--uncertainty-for":
        return table_model.box_with_widths(spec, widths, rules)
    return translate_signs(spec, rules, raw, option=option)


def translate_signs(signs: dict | None, rules: Any, raw: list[str], *, option: str = "--signs") -> dict | None:
    """``--signs`` (or ``--bounds``: ``option``) in the user's column names (or indices of ``raw``, the feature
    columns) as preprocessed features.

    A name is kept when it is a feature (a numeric column, or a dummy ``site=A``); an index is kept
    when it is the same column among the raw and the preprocessed features, and named otherwise. A
    reference-coded categorical column gives its value to each of its levels' features. A one-hot
    categorical, dropped, target or unknown column is an error naming it.
    """
    if signs is None:
        return None
    names = rules.feature_names
    out: dict = {}
    for key, sign in signs.items():
        name = key
        if isinstance(key, int):
            if not -len(raw) <= key < len(raw):
                raise ValueError(f"{option}: column index {key} is out of range: the data have {len(raw)} feature "
                                 f"columns (the label column not counted)")
            name = raw[key]
            if -len(names) <= key < len(names) and names[key] == name:
                name = key
        if isinstance(name, str) and name not in names:
            key = name
            rule = rules.column(key)
            if rule is not None and rule.kind == "categorical" and rule.reference is not None:
                for feature in rule.features:  # every level against the reference level
                    if feature in out and out[feature] != sign:
                        raise ValueError(f"{option} gives {feature!r} (a level of {key!r}) two different values")
                    out[feature] = sign
                continue
            if rule is not None and rule.kind == "categorical":
                raise ValueError(f"{option}: {key!r} is a categorical column, one-hot encoded into {rule.features}; "
                                 f"give {'a sign' if option == '--signs' else 'bounds'} to one of those features")
            if key in rules.dropped:
                raise ValueError(f"{option}: column {key!r} is left out (--drop or --categorical drop)")
            if key == rules.target:
                raise ValueError(f"{option}: {key!r} is the label column")
            raise ValueError(f"{option}: {key!r} is not a column of the data; features: {names}")
        if name in out and out[name] != sign:
            raise ValueError(f"{option} gives {name!r} two different {'signs' if option == '--signs' else 'bounds'}")
        out[name] = sign
    return out


def _ordering(ordered: dict, signs: dict | None, rules: Any) -> list | None:
    """The ``LinearConstraint`` of each ``--ordered`` column (monotone in the direction of its sign)."""
    from ..tabular.categories import column_signs, ordering_constraint

    direction = column_signs(signs, rules)
    out = []
    for name in ordered:
        if name not in direction or direction[name] == 0:
            raise ValueError(f"--ordered {name}: give the direction of its effect with --signs {name}=+1 (the effect "
                             f"grows along the order, towards the positive class) or {name}=-1")
        constraint = ordering_constraint(rules.column(name), rules.feature_names, rules.scale, direction[name])
        if constraint is not None:
            out.append(constraint)
    return out or None

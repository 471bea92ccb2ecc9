"""Signs, bounds and sets of one class's model on the command line: ``--signs-for``, ``--bounds-for``,
``--uncertainty-for``.

With classes ``c_1 < … < c_K`` (K > 2), model k separates ``c_k`` from the rest, so a +1 sign in model k says that
a larger feature is evidence for ``c_k``. ``--signs-for CLASS SPEC`` gives the model of ``CLASS`` the signs ``SPEC``
(``--signs``' own syntax); ``--bounds-for CLASS SPEC`` and ``--uncertainty-for CLASS KIND:R`` likewise. A class named
by an option gets its value instead of the plain option's; the classes not named get ``--signs``, ``--bounds`` or
``--uncertainty`` (``RobustSVC(signs=PerClass({...}, default=...))``). ``--ordered`` columns are monotone in the
direction of each model's own sign on them.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from .parsing import parse_bounds, parse_signs, parse_uncertainty

__all__ = ["OPTIONS", "add_arguments", "describe", "keep_defaults", "named_columns", "resolve"]

#: the per-class options: the estimator parameter, the option and its parser (the plain option's)
OPTIONS = {"signs": ("--signs-for", parse_signs), "bounds": ("--bounds-for", parse_bounds),
           "uncertainty": ("--uncertainty-for", parse_uncertainty)}


class _ForClass(argparse.Action):
    """``OPTION CLASS SPEC``, repeatable: appends ``(CLASS, value of SPEC)``; a bad SPEC is a usage error."""

    def __init__(self, *args: Any, parse: Callable[[str], Any], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.parse = parse

    def __call__(self, parser: Any, namespace: argparse.Namespace, values: Any, option_string: Any = None) -> None:
        label, text = values
        try:
            value = self.parse(text)
        except argparse.ArgumentTypeError as exc:
            raise argparse.ArgumentError(self, f"{label}: {exc}") from exc
        setattr(namespace, self.dest, [*(getattr(namespace, self.dest) or []), (label, value)])


def add_arguments(g: Any) -> None:
    """``--signs-for``, ``--bounds-for`` and ``--uncertainty-for`` (``fit`` and ``cv``)."""
    what = {"signs": ("SPEC", "the signs of the model of CLASS against the rest, in --signs' syntax (+1: evidence "
                              "for CLASS), e.g. --signs-for class_0 alcohol=+1"),
            "bounds": ("SPEC", "the bounds on the weights of the model of CLASS, in --bounds' syntax"),
            "uncertainty": ("KIND:RADIUS", "the set around every sample in the model of CLASS, in --uncertainty's "
                                           "syntax")}
    for key, (option, parse) in OPTIONS.items():
        metavar, text = what[key]
        g.add_argument(option, nargs=2, action=_ForClass, parse=parse, dest=f"{key}_for", default=None,
                       metavar=("CLASS", metavar),
                       help=f"{text}; repeatable, three or more classes only; the classes not named get "
                            f"--{key}")


def named_columns(args: argparse.Namespace) -> list[str]:
    """The column names the per-class signs and bounds give a value to (reference-coded like ``--signs``')."""
    return [k for key in ("signs", "bounds") for _, spec in getattr(args, f"{key}_for", None) or []
            for k in spec if isinstance(k, str)]


def resolve(args: argparse.Namespace, n_classes: int, label_of: Callable[[str, str], Any],
            translate: Callable[[Any, str], Any], ordering: Callable[[Any], Any], labels: list) -> tuple[dict, bool]:
    """The :class:`~robustsvm.PerClass` values of the options given, and whether a class keeps ``--signs``.

    ``label_of(text, option)`` is the label written ``text``; ``translate(spec, option)`` puts a SPEC in the
    preprocessed features (``--widths`` included for a set); ``ordering(signs)`` is the constraints of ``--ordered``
    under those signs (:func:`keep_defaults` sets the values of the classes not named). A per-class option with
    two classes, an unknown label or a class named twice by one option is a ``ValueError`` naming the option and
    the labels.
    """
    from ..estimators.multiclass import PerClass

    given = {key: getattr(args, f"{key}_for", None) or [] for key in OPTIONS}
    if not any(given.values()):
        return {}, True
    options = [OPTIONS[key][0] for key, items in given.items() if items]
    if n_classes == 2:
        raise ValueError(f"{', '.join(options)} give the model of one class against the rest, for three or more "
                         f"classes; the labels hold two, {labels}: use --signs, --bounds or --uncertainty (and "
                         "--positive)")
    if given["uncertainty"] and getattr(args, "missing", "error") == "uncertain":
        raise ValueError("--uncertainty-for with --missing uncertain: the sets of the missing values replace a "
                         "class's set; give one of the two")
    out, raw = {}, {}
    for key, items in given.items():
        option, values = OPTIONS[key][0], {}
        for text, value in items:
            label = label_of(text, option)
            if any(str(label) == str(k) for k in values):
                raise ValueError(f"{option} names the class {label!r} twice; the labels are {labels}")
            values[label], raw.setdefault(key, {})[label] = translate(value, option), value
        if values:
            out[key] = PerClass(values)
    default_signs = "signs" not in out or len(out["signs"]) < n_classes
    if "signs" in out and args.ordered:
        out["constraints"] = PerClass({label: _ordering_of(ordering, spec, f"the model of {label!r} (--signs-for)")
                                       for label, spec in raw["signs"].items()}, default=None)
        if default_signs:  # checked here to name the classes; the caller keeps the default's constraints
            rest = [c for c in labels if not any(str(c) == str(k) for k in out["signs"])]
            _ordering_of(ordering, args.signs, f"the models of {rest} (not named by --signs-for: --signs)")
    return out, default_signs


def keep_defaults(given: dict, args: argparse.Namespace) -> None:
    """The classes not named keep ``args``' signs, bounds, set and ``--ordered`` constraints (in the preprocessed
    features): the default of each :class:`~robustsvm.PerClass` of :func:`resolve`."""
    for key, values in given.items():
        values.default = getattr(args, key)


def _ordering_of(ordering: Callable[[Any], Any], signs: Any, which: str) -> Any:
    try:
        return ordering(signs)
    except ValueError as exc:
        raise ValueError(f"{which}: {exc}") from exc


def describe(problem: Any) -> str:
    """The signs, bounds, set and ordering constraints of one class's model, on one line."""
    signs, bounds = problem.signs, problem.bounds
    if isinstance(signs, dict):  # by name, as the command line gives them
        by_sign: dict = {}
        for name, sign in signs.items():
            by_sign.setdefault({1: "+1", -1: "-1"}.get(int(sign), "free"), []).append(str(name))
        signs = "; ".join(f"{s}: {', '.join(names)}" for s, names in by_sign.items()) or None
    if isinstance(bounds, dict):
        bounds = ", ".join(f"{k}: [{lo:g}, {up:g}]" for k, (lo, up) in bounds.items())
    parts = [f"{what} {value}" for what, value in (("signs", signs), ("bounds", bounds),
                                                   ("set", problem.uncertainty)) if value is not None]
    if problem.constraints:
        parts.append(f"{len(problem.constraints)} ordering constraint(s)")
    return "; ".join(parts) or "no signs, bounds or set"

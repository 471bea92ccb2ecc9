"""The JSON layout of a stored solution, checked field by field before it is read.

:func:`check_solution_spec` names the first field that is missing or has the
wrong type or shape, with a :class:`SolutionFormatError` (a ``ValueError``).
"""

from __future__ import annotations

import hashlib
import json
import math
from itertools import pairwise
from typing import Any

from .fingerprint import plain as _plain

__all__ = ["FORMAT_VERSION", "SECTIONS", "ModifiedSolutionError", "ModifiedSolutionWarning", "SolutionFormatError",
           "changed_fields", "check_solution_spec", "field_digests"]

#: version of the JSON layout written by :func:`robustsvm.formats.io.write_solution`
FORMAT_VERSION = 1

_SPECIAL = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


class SolutionFormatError(ValueError):
    """A stored solution that cannot be read: not JSON, not a JSON object, a field missing or of the wrong type.

    The message names the field. A subclass of ``ValueError``.
    """


class ModifiedSolutionError(SolutionFormatError):
    """A stored solution whose fields no longer match the digests written with them, or that carries none.

    ``changed`` lists the parts that differ, each with what it is (``"w (the weights)"``); it is None for a
    file without digests, which cannot be checked. Reading it anyway takes an explicit override:
    ``Solution.from_json(path, accept_modified=True)``, ``--accept-modified`` on the command line.
    """

    def __init__(self, where: str, changed: list[str] | None, *, override: str = "accept_modified=True") -> None:
        self.where, self.changed = where, changed
        super().__init__(self.advice(override))

    def advice(self, override: str) -> str:
        """The message, with the override spelled ``override`` (``--accept-modified`` on the command line)."""
        if self.changed is None:
            return (f"{self.where} carries no digests of its fields (written before they were stored, or they "
                    f"were removed), so a change to it cannot be detected; pass {override} to use it unchecked, "
                    "and write it again with Solution.to_json to store them")
        return (f"{self.where} was modified after it was written: {', '.join(self.changed)} "
                f"{'differs' if len(self.changed) == 1 else 'differ'} from the digest written with it; pass "
                f"{override} to use it anyway")


class ModifiedSolutionWarning(UserWarning):
    """A stored solution read with ``accept_modified=True`` although it was modified or carries no digests."""


def _fail(field_name: str, what: str) -> SolutionFormatError:
    return SolutionFormatError(f"stored solution: field {field_name!r} {what}")


def _is_number(v: Any) -> bool:
    return (isinstance(v, (int, float)) and not isinstance(v, bool)) or (isinstance(v, str) and v in _SPECIAL)


def _need(spec: dict, key: str, kind: str, *, optional: bool = False, where: str = "") -> Any:
    """``spec[key]`` after checking its JSON type (``number``, ``int``, ``str``, ``list``, ``dict``, ``numbers``)."""
    name = f"{where}{key}"
    if key not in spec:
        if optional:
            return None
        raise _fail(name, "is missing")
    v = spec[key]
    if v is None and optional:
        return None
    ok = {
        "number": _is_number(v),
        "int": isinstance(v, int) and not isinstance(v, bool),
        "str": isinstance(v, str),
        "list": isinstance(v, list),
        "dict": isinstance(v, dict),
        "numbers": isinstance(v, list) and all(_is_number(x) for x in v),
    }[kind]
    if not ok:
        described = {"number": "a number", "int": "an integer", "str": "a string", "list": "a list",
                     "dict": "a JSON object", "numbers": "a list of numbers"}[kind]
        raise _fail(name, f"must be {described}{' or null' if optional else ''}, got {_describe(v)}")
    return v


def _describe(v: Any) -> str:
    text = json.dumps(v) if isinstance(v, (dict, list, str, int, float, bool)) or v is None else repr(v)
    return text if len(text) <= 60 else text[:57] + "..."


def _check_matrix_spec(spec: Any, name: str) -> tuple[int, int]:
    if not isinstance(spec, dict):
        raise _fail(name, f"must be a JSON object or null, got {_describe(spec)}")
    fmt = spec.get("format")
    if fmt not in ("dense", "csr"):
        raise _fail(f"{name}.format", f"must be 'dense' or 'csr', got {_describe(fmt)}")
    shape = _need(spec, "shape", "list", where=f"{name}.")
    if len(shape) != 2 or not all(isinstance(k, int) and not isinstance(k, bool) and k >= 0 for k in shape):
        raise _fail(f"{name}.shape", f"must be two non-negative integers, got {_describe(shape)}")
    data = _need(spec, "data", "numbers", where=f"{name}.")
    if fmt == "dense":
        if len(data) != shape[0] * shape[1]:
            raise _fail(f"{name}.data", f"has {len(data)} entries for shape {shape}")
    else:
        indices = _need(spec, "indices", "list", where=f"{name}.")
        indptr = _need(spec, "indptr", "list", where=f"{name}.")
        ints = all(isinstance(k, int) and not isinstance(k, bool) for k in indices + indptr)
        if (not ints or len(indices) != len(data) or len(indptr) != shape[0] + 1 or indptr[0] != 0
                or indptr[-1] != len(data) or any(a > b for a, b in pairwise(indptr))
                or any(not 0 <= k < shape[1] for k in indices)):
            raise _fail(name, "is not a consistent CSR matrix (data, indices, indptr, shape)")
    return int(shape[0]), int(shape[1])


def check_solution_spec(spec: Any) -> None:
    """Raise a :class:`SolutionFormatError` naming the first field of ``spec`` that is missing or malformed.

    Checks the JSON types of every field :func:`solution_from_dict` reads and
    their consistency: ``w`` or an expansion (``dual_coef`` with as many
    ``support_vectors`` rows), as many ``feature_names`` as features, two
    distinct ``classes`` of one type, a known intercept mode.
    """
    if not isinstance(spec, dict):
        got = "a JSON list" if isinstance(spec, list) else _describe(spec)
        raise SolutionFormatError(f"a stored solution is a JSON object (robustsvm.solution), got {got}")
    if spec.get("format") != "robustsvm.solution":
        other = spec.get("format")
        raise SolutionFormatError(
            "not a stored robustsvm solution (missing format 'robustsvm.solution')" if other is None else
            f"not one stored robustsvm solution: its format is {other!r}, not 'robustsvm.solution'"
            + (" (one model of each class against the rest: the command line's predict and validate read it)"
               if other == "robustsvm.one_vs_rest" else ""))
    version = spec.get("format_version")
    if version != FORMAT_VERSION:
        raise SolutionFormatError(
            f"unsupported solution format version {version!r} (this package reads {FORMAT_VERSION})"
        )
    model = _need(spec, "model", "dict")
    _need(model, "loss", "dict", where="model.")
    penalty = _need(model, "penalty", "dict", optional=True, where="model.")
    for key in (penalty or {}):
        if key not in ("l1", "l2") or not _is_number(penalty[key]):
            raise _fail(f"model.penalty.{key}", f"must be l1 or l2 with a number, got {_describe(penalty[key])}")
    intercept = _need(model, "intercept", "dict", optional=True, where="model.")
    if intercept is not None:
        mode = intercept.get("mode")
        if mode not in ("free", "none", "l2"):
            raise _fail("model.intercept.mode", f"must be 'free', 'none' or 'l2', got {_describe(mode)}")
        if mode == "l2":
            _need(intercept, "mu", "number", where="model.intercept.")
    _need(model, "kernel", "dict", optional=True, where="model.")
    signs = model.get("signs")
    if signs is not None and not isinstance(signs, (list, dict)):
        raise _fail("model.signs", f"must be a list, a JSON object or null, got {_describe(signs)}")
    unc = model.get("uncertainty")
    if unc is not None and not isinstance(unc, (list, dict)):
        raise _fail("model.uncertainty", f"must be a JSON object, a list or null, got {_describe(unc)}")
    w = _need(spec, "w", "numbers", optional=True)
    if w is not None and len(w) == 0:
        raise _fail("w", "is empty")
    for key in ("b", "objective", "gap", "violation", "time", "time_compile", "time_solve"):
        _need(spec, key, "number")
    for key in ("status", "solver"):
        _need(spec, key, "str")
    iterations = _need(spec, "iterations", "int")
    if iterations < 0:
        raise _fail("iterations", f"must be non-negative, got {iterations}")
    _need(spec, "message", "str", optional=True)
    classes = _need(spec, "classes", "list")
    kinds = {"str" if isinstance(c, str) else "number" if _is_number(c) or isinstance(c, bool) else "other"
             for c in classes}
    if len(classes) != 2 or "other" in kinds or len(kinds) != 1 or classes[0] == classes[1]:
        raise _fail("classes", f"must be two distinct labels of one type (numbers or strings), got "
                               f"{_describe(classes)}")
    positive = model.get("positive_class")
    if positive is not None and not any(
            isinstance(positive, str) == isinstance(c, str) and positive == c for c in classes):
        raise _fail("model.positive_class", f"must be one of the classes {_describe(classes)} or null, got "
                                            f"{_describe(positive)}")
    dual = _need(spec, "dual_coef", "numbers", optional=True)
    sv = spec.get("support_vectors")
    d = None if w is None else len(w)
    if sv is not None:
        rows, d_sv = _check_matrix_spec(sv, "support_vectors")
        if dual is None or len(dual) != rows:
            raise _fail("dual_coef", f"must have one coefficient per support vector ({rows})")
        if d is not None and d != d_sv:
            raise _fail("support_vectors", f"have {d_sv} columns but w has {d} entries")
        d = d_sv
    elif dual is not None:
        raise _fail("support_vectors", "are missing for the stored dual_coef")
    if w is None and dual is None:
        raise _fail("w", "is null and there is no kernel expansion (dual_coef, support_vectors) either")
    if dual is not None and model.get("kernel") is None and w is None:
        raise _fail("model.kernel", "is null but the solution is a kernel expansion without weights w")
    names = _need(spec, "feature_names", "list", optional=True)
    if names is not None:
        if not all(isinstance(f, str) for f in names):
            raise _fail("feature_names", "must be strings")
        if d is not None and len(names) != d:
            raise _fail("feature_names", f"has {len(names)} names for {d} features")
    history = _need(spec, "history", "dict", optional=True)
    for key, values in (history or {}).items():
        if not (isinstance(values, list) and all(_is_number(v) for v in values)):
            raise _fail(f"history.{key}", "must be a list of numbers")
    data = _need(spec, "data", "dict", optional=True)
    if data is not None:
        _need(data, "sha256", "str", where="data.")
        shape = _need(data, "shape", "list", where="data.")
        if len(shape) != 2 or not all(isinstance(k, int) and not isinstance(k, bool) for k in shape):
            raise _fail("data.shape", f"must be two integers, got {_describe(shape)}")
    _need(spec, "versions", "dict", optional=True)
    degenerate = _need(spec, "degenerate", "dict", optional=True)
    if degenerate is not None:
        _need(degenerate, "cause", "str", where="degenerate.")
        if degenerate.get("predicts") not in (1, -1):
            raise _fail("degenerate.predicts", f"must be 1 or -1, got {_describe(degenerate.get('predicts'))}")
    preprocessing = _need(spec, "preprocessing", "dict", optional=True)
    if preprocessing is not None and not (preprocessing.get("format") == "robustsvm.preprocessing"
                                          and isinstance(preprocessing.get("version"), int)):
        raise _fail("preprocessing", "must be a 'robustsvm.preprocessing' section with an integer version "
                                     "(robustsvm.tabular.preprocessing reads the rest)")
    calibration = _need(spec, "calibration", "dict", optional=True)
    if calibration is not None:
        if calibration.get("method") != "platt":
            raise _fail("calibration.method", f"must be 'platt', got {_describe(calibration.get('method'))}")
        for key in ("a", "b"):
            _need(calibration, key, "number", where="calibration.")
    digests = _need(spec, "digests", "dict", optional=True)
    if digests is not None and not all(isinstance(v, str) for v in digests.values()):
        raise _fail("digests", "must map field names to strings")


# ------------------------------------------------------------ field digests
#: optional sections of a stored solution, kept in ``Solution.extra``: the fitted preprocessing of the table
#: (robustsvm.tabular.preprocessing), Platt's sigmoid of a calibrated model (``{"method": "platt", "a", "b", ...}``),
#: the
#: class weights of ``fit --class-weight`` (``{label: weight}``) and the Gaussian of ``fit --missing uncertain``
#: (``{"mode", "level", "mean", "covariance"}``)
SECTIONS = ("preprocessing", "calibration", "class_weight", "missing")
#: the fields a digest is stored for: everything that defines the model, its predictions and its claims
_DIGESTED = ("classes", "feature_names", "w", "b", "dual_coef", "support_vectors", "objective", "gap", "violation",
             "status", "solver")


def _canonical_json(value: Any) -> Any:
    """``value`` with every number as a float (``1`` and ``1.0`` alike), for digests only."""
    if isinstance(value, dict):
        return {str(k): _canonical_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_canonical_json(v) for v in value]
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        return _plain(float(value))
    return value


def field_digests(spec: dict) -> dict[str, str]:
    """SHA-256 (first 16 hex digits) of each field of a stored solution that a reader could alter.

    The fields are every entry of ``model`` (``model.loss``, ``model.penalty``,
    ``model.signs``, ``model.uncertainty``, ``model.intercept``,
    ``model.kernel``) and ``classes``, ``feature_names``, ``w``, ``b``,
    ``dual_coef``, ``support_vectors``, ``objective``, ``gap``,
    ``violation``, ``status``, ``solver`` (and ``preprocessing``, ``calibration``
    and each of their entries, ``preprocessing.standardize``, ``calibration.a``, ...,
    when the solution has those sections), each written as canonical JSON
    (sorted keys, numbers as floats). :func:`write_solution` stores them;
    :func:`read_solution` refuses a file whose fields no longer match them
    (:func:`changed_fields`), and :func:`validate` recomputes them from the
    solution it is given and names every field whose digest differs.
    """
    spec = _plain(spec)
    values: dict[str, Any] = {f"model.{k}": v for k, v in (spec.get("model") or {}).items()}
    values.update({k: spec.get(k) for k in _DIGESTED})
    values.update({k: spec[k] for k in SECTIONS if spec.get(k) is not None})  # files without one keep their digests
    for section in SECTIONS:  # and each entry of a section, so that a change names the entry
        if isinstance(spec.get(section), dict):
            values.update({f"{section}.{k}": v for k, v in spec[section].items()})
    out = {}
    for key in sorted(values):
        text = json.dumps(_canonical_json(values[key]), sort_keys=True, separators=(",", ":"), allow_nan=False)
        out[key] = hashlib.sha256(text.encode()).hexdigest()[:16]
    return out


#: what each digested part is, for the messages that name a changed one
_PART_MEANING = {
    "w": "the weights", "b": "the intercept", "classes": "the class labels", "feature_names": "the feature names",
    "dual_coef": "the kernel expansion's coefficients", "support_vectors": "the kernel expansion's points",
    "objective": "the stored objective", "gap": "the stored certificate", "violation": "the stored violation",
    "status": "the solver's status", "solver": "the backend's name", "model.signs": "the sign constraints",
    "model.bounds": "the bounds on the weights", "model.uncertainty": "the uncertainty sets",
    "model.positive_class": "the class the signs point to", "preprocessing": "the preprocessing rules",
    "preprocessing.columns": "the columns read, their kinds, fill values and categories",
    "preprocessing.standardize": "the z-scores' means and scales", "preprocessing.features": "the features' names",
    "preprocessing.target": "the label column", "preprocessing.impute": "the rule for missing values",
    "preprocessing.dropped": "the columns left out", "calibration": "Platt's sigmoid",
    "calibration.a": "the slope of Platt's sigmoid", "calibration.b": "the offset of Platt's sigmoid",
}


def changed_fields(stored: dict, current: dict) -> list[str]:
    """The parts whose digest in ``current`` differs from ``stored`` (both :func:`field_digests`), each described.

    A part present on one side only has changed (a section added or removed: the section is named). The
    entries of a section (``preprocessing.standardize``) are compared when ``stored`` has them (files written
    before they were digested carry the section's digest only), and named instead of the section when they
    differ.
    """
    parted = {s for s in SECTIONS if s in stored and s in current and any(k.startswith(f"{s}.") for k in stored)}
    keys = [k for k in sorted(set(stored) | set(current))
            if not (k.partition(".")[0] in SECTIONS and "." in k and k.partition(".")[0] not in parted)]
    changed = [k for k in keys if stored.get(k) != current.get(k)]
    changed = [k for k in changed if not (k in parted and any(c.startswith(f"{k}.") for c in changed))]
    return [f"{k} ({_PART_MEANING[k]})" if k in _PART_MEANING else k for k in changed]

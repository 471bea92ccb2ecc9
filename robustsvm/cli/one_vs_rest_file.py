"""The file of one-vs-rest models that ``fit --output`` writes for more than two classes.

It holds the K models and the class labels::

    {"format": "robustsvm.one_vs_rest", "format_version": 1, "classes": [c_1, ..., c_K],
     "models": [model 1, ..., model K], "digests": {"classes": ...}}

Model k is a stored solution (``robustsvm.solution``, :mod:`robustsvm.formats.io`) of ``c_k`` against the
rest: labels 1 for ``c_k`` and 0 for the others, the fingerprint of the data with those labels, the table's
preprocessing and class weights, and its own field digests; the digest of ``classes`` guards the order of the
models. A reader of one two-class solution refuses the file by its format name
(:func:`not_one_model`). The file of two classes is the stored solution itself, unchanged.
"""

from __future__ import annotations

import json
import sys
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["FORMAT", "FORMAT_VERSION", "OneVsRest", "not_one_model", "read", "rest_labels", "stored_in", "write"]

#: the name and version of the file layout of K one-vs-rest models
FORMAT, FORMAT_VERSION = "robustsvm.one_vs_rest", 1


def _plain(label: Any) -> Any:
    return label.item() if isinstance(label, np.generic) else label


def rest_labels(y: Any, label: Any) -> np.ndarray:
    """The labels of the model of ``label`` against the rest: 1 where ``y == label``, else 0."""
    return (np.asarray(y) == label).astype(np.intp)


@dataclass
class OneVsRest:
    """K one-vs-rest solutions (``solutions[k]``: ``classes[k]`` against the rest) read from a file."""

    classes: list
    solutions: list

    def decision_function(self, X: Any) -> np.ndarray:
        """``(n, K)``: column k is ``f_k(x) = x·w_k + b_k`` (or the kernel expansion) of model k."""
        return np.column_stack([sol.decision_function(X) for sol in self.solutions])

    def predict(self, X: Any) -> np.ndarray:
        """The class of the largest decision value of each row."""
        return np.asarray(self.classes, dtype=object)[np.argmax(self.decision_function(X), axis=1)]


# ------------------------------------------------------------------ the file
def stored_in(path: Any) -> bool:
    """Whether ``path`` is a JSON file of one-vs-rest models (its ``format`` is :data:`FORMAT`)."""
    try:
        with open(path, encoding="utf-8") as fh:
            spec = json.load(fh)
    except (OSError, ValueError, UnicodeDecodeError):
        return False
    return isinstance(spec, dict) and spec.get("format") == FORMAT


def not_one_model(path: Any) -> str:
    """Why a reader of one two-class solution refuses a file of one-vs-rest models."""
    return (f"{path} holds one model of each of several classes against the rest (format {FORMAT!r}), not one "
            "two-class solution ('robustsvm.solution'): `robustsvm predict` and `validate` read it; this command "
            "takes a model of two classes")


def _classes_digest(classes: list) -> str:
    from ..formats.solution_format import field_digests

    return field_digests({"classes": classes})["classes"]


def write(path: Any, solutions: list, classes: Any, X: Any, y: Any) -> str:
    """Write the K solutions (model k: ``classes[k]`` against the rest, fingerprinted with its labels on ``X``)."""
    from ..formats.io import solution_to_dict

    labels = [_plain(c) for c in classes]
    document = {"format": FORMAT, "format_version": FORMAT_VERSION, "classes": labels,
                "models": [solution_to_dict(sol, X, rest_labels(y, c)) for sol, c in zip(solutions, classes,
                                                                                          strict=True)],
                "digests": {"classes": _classes_digest(labels)}}
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(json.dumps(document, indent=1, allow_nan=False) + "\n")
    return str(path)


def read(path: Any, accept_modified: bool = False) -> OneVsRest:
    """The models of a file written by :func:`write`; a malformed or modified file is a ``ValueError`` naming the
    part (``accept_modified``: used as it is, with a warning on stderr)."""
    from ..formats.io import solution_from_dict
    from ..formats.solution_format import ModifiedSolutionError, ModifiedSolutionWarning, SolutionFormatError

    with open(path, encoding="utf-8") as fh:
        spec = json.load(fh)
    if spec.get("format_version") != FORMAT_VERSION:
        raise ValueError(f"{path}: unsupported {FORMAT} format version {spec.get('format_version')!r} (this "
                         f"package reads {FORMAT_VERSION})")
    classes, models = spec.get("classes"), spec.get("models")
    if not (isinstance(classes, list) and len(classes) > 2 and isinstance(models, list)
            and len(models) == len(classes)):
        raise ValueError(f"{path}: 'classes' must list more than two labels and 'models' one model of each")
    modified = []
    if (spec.get("digests") or {}).get("classes") != _classes_digest(classes):
        modified.append("classes (the class labels, in the order of the models)")
    solutions = []
    for label, model in zip(classes, models, strict=True):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ModifiedSolutionWarning)  # said below, in the command line's words
                sol = solution_from_dict(model, accept_modified=accept_modified, where=f"the model of {label!r}")
        except ModifiedSolutionError as exc:
            raise ValueError(f"{path}: {exc.advice('--accept-modified')}") from exc
        except (SolutionFormatError, KeyError, TypeError) as exc:
            raise ValueError(f"{path}, the model of {label!r}: {exc}") from exc
        modified += [f"{part} of the model of {label!r}" for part in sol.extra.get("modified") or []]
        sol.extra["one_vs_rest"] = label
        solutions.append(sol)
    if modified and not accept_modified:
        raise ValueError(f"{path} was modified after it was written: {', '.join(modified)} differs from the digest "
                         "written with it; pass --accept-modified to use it anyway")
    if modified:
        print(f"robustsvm: warning: {path} was modified after it was written ({', '.join(modified)}): it is used "
              "as it is now (--accept-modified)", file=sys.stderr)
    return OneVsRest(classes=classes, solutions=solutions)

"""Reference solutions: store a :class:`~robustsvm.solution.Solution` as JSON and re-check it.

A stored solution carries everything needed to verify it later, with this
package or with another solver: the model (:meth:`Problem.to_dict`), a
fingerprint of the training data, ``w``, ``b``, the objective, the
certificate (gap), the status, the solver and the versions of the numerical
stack. :func:`validate` re-evaluates the objective and the constraints of a
stored solution on the data and reports every mismatch.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from importlib import metadata
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from . import objective as objective_module
from . import solution as solution_module
from ._validation import check_fit_data, check_signs
from .kernels import Linear
from .problem import Problem
from .solution import Solution
from .uncertainty import uncertainty_from_dict

__all__ = [
    "FINGERPRINT_SCHEME",
    "FORMAT_VERSION",
    "SolutionFormatError",
    "check_solution_spec",
    "ValidationReport",
    "data_fingerprint",
    "field_digests",
    "read_solution",
    "solution_from_dict",
    "solution_to_dict",
    "uncertainty_from_dict",
    "validate",
    "versions",
    "write_solution",
]

#: version of the JSON layout written by :func:`write_solution`
FORMAT_VERSION = 1

_PACKAGES = ("robustsvm", "numpy", "scipy", "cvxpy", "clarabel", "scs")


def versions() -> dict[str, str | None]:
    """Installed versions of robustsvm and its numerical stack (None when absent)."""
    out: dict[str, str | None] = {}
    for name in _PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


class SolutionFormatError(ValueError):
    """A stored solution that cannot be read: not JSON, not a JSON object, a field missing or of the wrong type.

    The message names the field. A subclass of ``ValueError``.
    """


# ---------------------------------------------------------------- fingerprint
#: version of the fingerprint's digest; fingerprints without a ``scheme`` entry are version 1
FINGERPRINT_SCHEME = 2
_CHUNK_ROWS = 4096


def _label_value(c: Any) -> Any:
    """A class label as JSON: numbers by value (``1``, ``1.0`` and ``True`` alike), strings as strings."""
    if isinstance(c, (str, np.str_)):
        return str(c)
    v = float(c)
    return int(v) if v.is_integer() else v


def _canonical_classes(classes: Any) -> list:
    return [_label_value(c) for c in np.asarray(classes).tolist()]


def _hash_rows(X: Any) -> tuple[str, str]:
    """SHA-256 of the nonzero structure of ``X`` row by row, the same for a dense array and a CSR matrix.

    Three streams, each fed chunk by chunk (the result does not depend on the
    chunking): the number of nonzeros of each row (int64), their column indices
    in increasing order (int64) and their values (float64). Explicit zeros of
    a sparse matrix and ``-0.0`` count as zeros. A dense ``X`` is read in
    chunks of rows, a sparse one is never densified.
    """
    h_count, h_col, h_val = hashlib.sha256(), hashlib.sha256(), hashlib.sha256()
    n = X.shape[0]
    if sp.issparse(X):
        A = sp.csr_matrix(X, dtype=np.float64, copy=True)
        A.sum_duplicates()
        A.eliminate_zeros()
        A.sort_indices()
    for start in range(0, n, _CHUNK_ROWS):
        stop = min(n, start + _CHUNK_ROWS)
        if sp.issparse(X):
            lo, hi = A.indptr[start], A.indptr[stop]
            counts = np.diff(A.indptr[start:stop + 1])
            cols, vals = A.indices[lo:hi], A.data[lo:hi]
        else:
            block = X[start:stop]
            mask = block != 0
            counts = mask.sum(axis=1)
            cols = np.nonzero(mask)[1]
            vals = block[mask]
        h_count.update(np.ascontiguousarray(counts, dtype=np.int64).tobytes())
        h_col.update(np.ascontiguousarray(cols, dtype=np.int64).tobytes())
        h_val.update(np.ascontiguousarray(vals, dtype=np.float64).tobytes())
    hx = hashlib.sha256()
    hx.update(np.asarray(X.shape, dtype=np.int64).tobytes())
    for h in (h_count, h_col, h_val):
        hx.update(h.digest())
    return hx.hexdigest(), "csr" if sp.issparse(X) else "dense"


def data_fingerprint(X: Any, y: Any) -> dict:
    """A fingerprint of the training data that depends on the values only, not on how they are stored.

    ``X`` is checked and converted to float64 (:func:`check_X`), then hashed by
    its nonzero entries row by row — the count of each row, their column
    indices and their values — so a dense array, a CSR or COO matrix, any
    float dtype and any memory order of the same matrix give the same digest,
    and a sparse matrix is never densified. ``y`` is hashed as its ±1
    encoding (``classes[1]`` is +1) followed by the two class labels written
    as JSON with numbers by value (``1``, ``1.0`` and ``True`` are the same
    label; the string ``"1"`` is another one).

    Returns
    -------
    dict
        ``{"sha256": digest of everything, "X": digest of X, "y": digest of the
        labels, "shape": [n, d], "format": "dense" | "csr" (how X was given,
        informative only), "scheme": 2}``.
    """
    data = check_fit_data(X, y)
    digest_X, fmt = _hash_rows(data.X)
    hy = hashlib.sha256()
    hy.update(data.y.astype(np.int8).tobytes())
    hy.update(json.dumps(_canonical_classes(data.classes)).encode())
    digest_y = hy.hexdigest()
    total = hashlib.sha256(f"robustsvm-data-{FINGERPRINT_SCHEME}:{digest_X}:{digest_y}".encode()).hexdigest()
    n, d = data.X.shape
    return {"sha256": total, "X": digest_X, "y": digest_y, "shape": [int(n), int(d)], "format": fmt,
            "scheme": FINGERPRINT_SCHEME}


def _fingerprint_v1(X: Any, y: Any) -> str:
    """The digest written before fingerprint scheme 2 (storage- and label-type-dependent), to read old files."""
    data = check_fit_data(X, y)
    h = hashlib.sha256()
    n, d = data.X.shape
    h.update(np.asarray([n, d], dtype=np.int64).tobytes())
    if sp.issparse(data.X):
        A = sp.csr_matrix(data.X, dtype=np.float64, copy=True)
        A.sum_duplicates()
        A.sort_indices()
        h.update(b"csr")
        h.update(np.ascontiguousarray(A.data, dtype=np.float64).tobytes())
        h.update(np.ascontiguousarray(A.indices, dtype=np.int64).tobytes())
        h.update(np.ascontiguousarray(A.indptr, dtype=np.int64).tobytes())
    else:
        h.update(b"dense")
        h.update(np.ascontiguousarray(data.X, dtype=np.float64).tobytes())
    h.update(data.y.astype(np.int8).tobytes())
    h.update(json.dumps([_plain(c) for c in data.classes]).encode())
    return h.hexdigest()


# ------------------------------------------------------------- JSON helpers
def _plain(value: Any) -> Any:
    """Turn numpy scalars/arrays into JSON values; non-finite floats become strings."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return _plain(value.tolist())
    if isinstance(value, (np.bool_, bool)):
        return bool(value)
    if isinstance(value, (np.integer, int)):
        return int(value)
    if isinstance(value, (np.floating, float)):
        v = float(value)
        if math.isnan(v):
            return "NaN"
        if math.isinf(v):
            return "Infinity" if v > 0 else "-Infinity"
        return v
    if isinstance(value, np.str_):
        return str(value)
    return value


_SPECIAL = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def _float(value: Any) -> float:
    if isinstance(value, str):
        if value not in _SPECIAL:
            raise ValueError(f"not a number in a stored solution: {value!r}")
        return _SPECIAL[value]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"not a number in a stored solution: {value!r}")
    return float(value)


def _floats(values: Any) -> np.ndarray:
    return np.asarray([_float(v) for v in values], dtype=np.float64)


def _matrix_to_dict(M: Any) -> dict | None:
    if M is None:
        return None
    if sp.issparse(M):
        A = sp.csr_matrix(M)
        return {"format": "csr", "shape": list(A.shape), "data": _plain(A.data),
                "indices": A.indices.tolist(), "indptr": A.indptr.tolist()}
    A = np.asarray(M, dtype=np.float64)
    return {"format": "dense", "shape": list(A.shape), "data": _plain(A.ravel())}


def _matrix_from_dict(spec: dict | None) -> Any:
    if spec is None:
        return None
    shape = tuple(int(s) for s in spec["shape"])
    if spec["format"] == "csr":
        return sp.csr_matrix((_floats(spec["data"]), np.asarray(spec["indices"]), np.asarray(spec["indptr"])),
                             shape=shape)
    return _floats(spec["data"]).reshape(shape)


# ------------------------------------------------------------ field digests
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
    ``violation``, ``status``, ``solver``, each written as canonical JSON
    (sorted keys, numbers as floats). :func:`write_solution` stores them;
    :func:`validate` recomputes them from the solution it is given and names
    every field whose digest differs.
    """
    spec = _plain(spec)
    values: dict[str, Any] = {f"model.{k}": v for k, v in (spec.get("model") or {}).items()}
    values.update({k: spec.get(k) for k in _DIGESTED})
    out = {}
    for key in sorted(values):
        text = json.dumps(_canonical_json(values[key]), sort_keys=True, separators=(",", ":"), allow_nan=False)
        out[key] = hashlib.sha256(text.encode()).hexdigest()[:16]
    return out


# ------------------------------------------------------------ reading checks
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
        raise SolutionFormatError("not a stored robustsvm solution (missing format 'robustsvm.solution')")
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
    digests = _need(spec, "digests", "dict", optional=True)
    if digests is not None and not all(isinstance(v, str) for v in digests.values()):
        raise _fail("digests", "must map field names to strings")


# ----------------------------------------------------------- (de)serialize
def solution_to_dict(solution: Any, X: Any = None, y: Any = None) -> dict:
    """A JSON-ready description of ``solution`` (see :func:`write_solution`).

    The model's signs are stored resolved, as a vector of +1/0/−1, so that
    signs given by feature name or index rebuild exactly.
    """
    problem = solution.problem
    model = problem.to_dict()
    if solution.w is not None or solution.support_vectors is not None:
        model["signs"] = check_signs(problem.signs, solution.n_features, solution.feature_names).tolist()
    out = {
        "format": "robustsvm.solution",
        "format_version": FORMAT_VERSION,
        "model": model,
        "data": None if X is None else data_fingerprint(X, y),
        "w": None if solution.w is None else solution.w,
        "b": solution.b,
        "objective": solution.objective,
        "gap": solution.gap,
        "violation": solution.violation,
        "status": solution.status,
        "solver": solution.solver,
        "iterations": solution.iterations,
        "time": solution.time,
        "time_compile": solution.time_compile,
        "time_solve": solution.time_solve,
        "message": solution.message,
        "classes": list(solution.classes),
        "feature_names": None if solution.feature_names is None else [str(f) for f in solution.feature_names],
        "history": {k: np.asarray(v) for k, v in (solution.history or {}).items()},
        "dual_coef": None if solution.dual_coef is None else solution.dual_coef,
        "support_vectors": _matrix_to_dict(solution.support_vectors),
        "versions": versions(),
    }
    if "data" in solution.extra and out["data"] is None:
        out["data"] = solution.extra["data"]
    out = _plain(out)
    out["digests"] = field_digests(out)
    return out


def solution_from_dict(spec: dict) -> Any:
    """Rebuild a :class:`~robustsvm.solution.Solution` from :func:`solution_to_dict`.

    The stored fingerprint, versions and format go to ``solution.extra``.
    """
    check_solution_spec(spec)
    version = spec["format_version"]
    try:
        problem = Problem.from_dict(spec["model"])
    except (KeyError, TypeError, ValueError) as exc:
        detail = f"lacks {exc}" if isinstance(exc, KeyError) else str(exc)
        raise SolutionFormatError(f"stored solution: field 'model' does not describe a model: {detail}") from exc
    classes = np.asarray(spec["classes"])
    names = spec.get("feature_names")
    return Solution(
        w=None if spec["w"] is None else _floats(spec["w"]),
        b=_float(spec["b"]),
        objective=_float(spec["objective"]),
        gap=_float(spec["gap"]),
        status=str(spec["status"]),
        solver=str(spec["solver"]),
        iterations=int(spec["iterations"]),
        time=_float(spec["time"]),
        time_compile=_float(spec["time_compile"]),
        time_solve=_float(spec["time_solve"]),
        history={k: _floats(v) for k, v in (spec.get("history") or {}).items()},
        violation=_float(spec["violation"]),
        classes=classes,
        problem=problem,
        feature_names=None if names is None else np.asarray(names, dtype=object),
        message=str(spec.get("message") or ""),
        dual_coef=None if spec.get("dual_coef") is None else _floats(spec["dual_coef"]),
        support_vectors=_matrix_from_dict(spec.get("support_vectors")),
        extra={"data": spec.get("data"), "versions": spec.get("versions") or {}, "format_version": version,
               "digests": spec.get("digests")},
    )


def write_solution(solution: Any, path: str | Path, X: Any = None, y: Any = None) -> Path:
    """Write ``solution`` as JSON to ``path`` (with the data fingerprint when ``X, y`` are given).

    Non-finite numbers are written as the strings ``"NaN"``, ``"Infinity"``,
    ``"-Infinity"`` so the file is strict JSON.
    """
    path = Path(path)
    text = json.dumps(solution_to_dict(solution, X, y), indent=1, allow_nan=False)
    path.write_text(text + "\n", encoding="utf-8")
    return path


def read_solution(path: str | Path) -> Any:
    """Read a solution written by :func:`write_solution`.

    Raises
    ------
    SolutionFormatError
        When the file is not JSON, not a JSON object, or a field is missing or
        malformed (the message names the file or the field).
    """
    try:
        with open(path, encoding="utf-8") as fh:
            spec = json.load(fh)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise SolutionFormatError(f"{path} is not a JSON file: {exc}") from exc
    return solution_from_dict(spec)


# --------------------------------------------------------------- validation
@dataclass
class ValidationReport:
    """What :func:`validate` found.

    Attributes
    ----------
    ok : bool
        True when there is no mismatch.
    mismatches : list of str
        One line per failed check.
    objective_stored, objective_recomputed : float
        The objective in the solution and re-evaluated on the data.
    objective_rel_diff : float
        ``|recomputed − stored| / max(1, |stored|)``.
    violation : float
        Largest constraint violation at the stored ``(w, b)``: sign
        constraints ``max(−s_h w_h)`` and hard margins ``max(1 − m_i^rob)``.
    fingerprint_stored, fingerprint : dict or None
        The stored and the recomputed data fingerprints.
    status, gap : the stored status and certificate.
    """

    ok: bool
    mismatches: list[str]
    objective_stored: float
    objective_recomputed: float
    objective_rel_diff: float
    violation: float
    fingerprint_stored: dict | None
    fingerprint: dict
    status: str
    gap: float
    notes: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        lines = [
            f"validation  {'OK' if self.ok else 'FAILED'}",
            f"objective   stored {self.objective_stored:.12g}, recomputed {self.objective_recomputed:.12g} "
            f"(relative difference {self.objective_rel_diff:.3g})",
            f"violation   {self.violation:.3g}",
            f"data        {'matches' if self._fingerprint_ok else 'differs'} "
            f"(sha256 {self.fingerprint['sha256'][:16]}…, shape {self.fingerprint['shape']})",
            f"status      {self.status}, gap {self.gap:.3g}",
        ]
        lines += [f"mismatch    {m}" for m in self.mismatches]
        lines += [f"note        {m}" for m in self.notes]
        return "\n".join(lines)

    @property
    def _fingerprint_ok(self) -> bool:
        return not any(m.startswith("data fingerprint") for m in self.mismatches)


def validate(
    solution: Any,
    X: Any,
    y: Any,
    *,
    sample_weight: Any = None,
    rtol: float = 1e-8,
    feas_tol: float = 1e-6,
) -> ValidationReport:
    """Re-check a (stored) solution on the data ``(X, y)``.

    Re-evaluates the model's objective ``R(w) + (μ/2)b² + Σ_i c_i ℓ(m_i^rob)``
    at the stored ``(w, b)`` (for a kernel model, at the stored expansion
    ``f(x) = Σ_j a_j k(x, x_j) + b``, which is what predictions use), the
    largest violation of the sign and hard-margin constraints, the data
    fingerprint, and everything else that changes predictions:

    * ``classes`` must be the two labels of ``y`` in sorted order
      (``classes[1]`` is the positive class; swapped classes invert every
      prediction);
    * a model without intercept (mode ``"none"``) must have ``b = 0``;
    * a kernel model must store an expansion, and weights stored beside an
      expansion must give the same decisions on ``X``;
    * when the solution was read from a file written by this package, the
      digest of every field (:func:`field_digests`: each model entry such as
      ``model.kernel`` and ``model.intercept``, ``classes``, ``w``, ``b``, the
      expansion, the objective, gap and status) must match the one written
      with it; each field that differs is named.

    Parameters
    ----------
    solution : Solution
        Typically from :meth:`Solution.from_json`.
    X, y : the training data the solution claims to solve.
    sample_weight : array-like of shape (n,), optional
    rtol : float, default 1e-8
        Largest accepted ``|recomputed − stored| / max(1, |stored|)``.
    feas_tol : float, default 1e-6
        Largest accepted constraint violation.

    Returns
    -------
    ValidationReport
        ``ok`` is False, with one line per problem in ``mismatches``, when the
        data differ from the fingerprint, a field differs, the objective does
        not match, or a constraint is violated; a non-optimal status is listed
        in ``notes``.

    Raises
    ------
    TypeError
        When ``solution`` is not a solution.
    ValueError
        When ``X`` does not have as many features as the solution, or the
        solution has nothing to evaluate.
    """
    if not (rtol > 0 and feas_tol >= 0):
        raise ValueError("rtol must be positive and feas_tol non-negative")
    missing = [a for a in ("problem", "w", "b", "objective", "classes", "status", "gap") if not hasattr(solution, a)]
    if missing:
        raise TypeError(f"solution must be a robustsvm Solution, got {type(solution).__name__} (no {missing[0]!r})")
    problem = solution.problem
    fingerprint = data_fingerprint(X, y)
    extra = solution.extra if isinstance(solution.extra, dict) else {}
    stored_fp = extra.get("data")
    mismatches: list[str] = []
    notes: list[str] = []
    if stored_fp is not None:
        mismatches += _fingerprint_mismatches(stored_fp, fingerprint, X, y)
    else:
        notes.append("the solution carries no data fingerprint")
    d = fingerprint["shape"][1]
    if solution.w is not None and np.shape(solution.w) != (d,):
        raise ValueError(f"the solution has {np.size(solution.w)} weights but X has {d} features")
    model = problem.normalize(X, y, sample_weight=sample_weight, feature_names=solution.feature_names)

    # fields that change predictions, checked against the data and against each other
    stored_classes = _canonical_classes(solution.classes) if np.size(solution.classes) == 2 else None
    data_classes = _canonical_classes(model.classes)
    if stored_classes != data_classes:
        mismatches.append(
            f"classes differ: the solution has {_plain(np.asarray(solution.classes).tolist())}, the data "
            f"{data_classes} (sorted; classes[1] is the positive class, so the predictions would not be the data's)"
        )
    if model.intercept.mode == "none" and float(solution.b) != 0.0:
        mismatches.append(f"intercept: the model has none (mode 'none') but the solution has b = {solution.b:.6g}")
    kernel = getattr(problem, "kernel", None)
    expansion = solution.dual_coef is not None and solution.support_vectors is not None
    if kernel is not None and expansion:
        b = float(solution.b)
        recomputed = objective_module.kernel_objective(model, solution.dual_coef, solution.support_vectors, b)
        violation = objective_module.kernel_violation(model, solution.dual_coef, solution.support_vectors, b)
        if solution.w is not None:
            a = np.asarray(solution.dual_coef, dtype=np.float64)
            f_exp = kernel(model.X, solution.support_vectors) @ a
            f_w = np.asarray(model.X @ np.asarray(solution.w, dtype=np.float64)).ravel()
            gap_f = float(np.max(np.abs(f_exp - f_w)))
            if gap_f > max(feas_tol, rtol) * max(1.0, float(np.max(np.abs(f_exp)))):
                mismatches.append(f"w and the kernel expansion give decisions that differ by up to {gap_f:.3g}: "
                                  f"predictions use the expansion with model.kernel = {kernel!r}")
    elif solution.w is not None:
        if kernel is not None and not isinstance(kernel, Linear):
            mismatches.append(f"model.kernel is {kernel!r} but the solution stores linear weights w and no expansion")
        w = np.asarray(solution.w, dtype=np.float64)
        recomputed = objective_module.objective(model, w, float(solution.b))
        violation = objective_module.violation(model, w, float(solution.b))
    elif expansion:
        raise ValueError("the solution is a kernel expansion but its model has no kernel (model.kernel is None)")
    else:
        raise ValueError("the solution has neither weights w nor a kernel expansion to check")

    stored_digests = extra.get("digests")
    if isinstance(stored_digests, dict) and stored_digests:
        current = field_digests(solution_to_dict(solution))
        changed = [k for k in sorted(set(stored_digests) | set(current)) if stored_digests.get(k) != current.get(k)]
        for k in changed:
            mismatches.append(f"{k} differs from the value written with the solution (its digest does not match)")
    else:
        notes.append("the solution carries no field digests: only the data can reveal a changed field")

    rel = abs(recomputed - solution.objective) / max(1.0, abs(solution.objective))
    if not rel <= rtol:
        mismatches.append(
            f"objective differs: stored {solution.objective:.12g}, recomputed {recomputed:.12g} (relative {rel:.3g})"
        )
    if not violation <= feas_tol:
        mismatches.append(f"constraints violated by {violation:.3g} (tolerance {feas_tol:g})")
    if solution.status != "optimal":
        notes.append(f"the solver stopped with status {solution.status!r}")
    stored_versions = extra.get("versions")
    if stored_versions:
        now = versions()
        changed = [f"{k} {stored_versions[k]} -> {now.get(k)}" for k in stored_versions
                   if stored_versions[k] != now.get(k)]
        if changed:
            notes.append("versions differ from the stored ones: " + ", ".join(changed))
    return ValidationReport(
        ok=not mismatches,
        mismatches=mismatches,
        objective_stored=float(solution.objective),
        objective_recomputed=float(recomputed),
        objective_rel_diff=float(rel),
        violation=float(violation),
        fingerprint_stored=stored_fp,
        fingerprint=fingerprint,
        status=solution.status,
        gap=float(solution.gap),
        notes=notes,
    )


def _fingerprint_mismatches(stored: dict, now: dict, X: Any, y: Any) -> list[str]:
    """Say which part of the data differs from the stored fingerprint (shape, X, labels), if any."""
    if not isinstance(stored, dict) or not isinstance(stored.get("sha256"), str):
        return ["data fingerprint is malformed (no sha256)"]
    if list(stored.get("shape") or []) != now["shape"]:
        return [f"data fingerprint differs: stored shape {stored.get('shape')}, given {now['shape']}"]
    if stored.get("scheme", 1) == 1:  # written before scheme 2: the old, storage-dependent digest
        if stored["sha256"] == _fingerprint_v1(X, y):
            return []
        return ["data fingerprint differs (a fingerprint of scheme 1, which also depends on the storage: dense or "
                "CSR, int or float labels)"]
    if stored["sha256"] == now["sha256"]:
        return []
    parts = [name for key, name in (("X", "X"), ("y", "the labels")) if stored.get(key) != now[key]]
    return [f"data fingerprint differs: {' and '.join(parts) or 'the digest'} differ from the stored data"]


# Solution.to_json / Solution.from_json write and read through this module
solution_module.register_serializer(write=write_solution, read=read_solution)

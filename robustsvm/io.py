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
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from . import objective as objective_module
from . import solution as solution_module
from ._validation import check_fit_data, check_signs
from .problem import Problem
from .solution import Solution
from .uncertainty import uncertainty_from_dict

__all__ = [
    "FORMAT_VERSION",
    "ValidationReport",
    "data_fingerprint",
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


# ---------------------------------------------------------------- fingerprint
def data_fingerprint(X: Any, y: Any) -> dict:
    """A fingerprint of the training data: SHA-256 of ``X`` and ``y`` with the shape.

    ``X`` is hashed as float64 in C order (a sparse matrix by its canonical CSR
    arrays ``data``, ``indices``, ``indptr`` — it is never densified), ``y``
    as its ±1 encoding (int8) followed by the two original class labels, so
    the same data give the same digest whatever the label type.

    Returns
    -------
    dict
        ``{"sha256": hex digest, "shape": [n, d], "format": "dense" | "csr"}``.
    """
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
        fmt = "csr"
    else:
        h.update(b"dense")
        h.update(np.ascontiguousarray(data.X, dtype=np.float64).tobytes())
        fmt = "dense"
    h.update(data.y.astype(np.int8).tobytes())
    h.update(json.dumps([_plain(c) for c in data.classes]).encode())
    return {"sha256": h.hexdigest(), "shape": [int(n), int(d)], "format": fmt}


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


# ----------------------------------------------------------- (de)serialize
def solution_to_dict(solution: Any, X: Any = None, y: Any = None) -> dict:
    """A JSON-ready description of ``solution`` (see :func:`write_solution`).

    The model's signs are stored resolved, as a vector of +1/0/−1, so that
    signs given by feature name or index rebuild exactly.
    """
    problem = solution.problem
    model = problem.to_dict()
    if solution.w is not None:
        model["signs"] = check_signs(problem.signs, solution.w.shape[0], solution.feature_names).tolist()
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
    return _plain(out)


def solution_from_dict(spec: dict) -> Any:
    """Rebuild a :class:`~robustsvm.solution.Solution` from :func:`solution_to_dict`.

    The stored fingerprint, versions and format go to ``solution.extra``.
    """
    if spec.get("format") != "robustsvm.solution":
        raise ValueError("not a stored robustsvm solution (missing format 'robustsvm.solution')")
    version = spec.get("format_version")
    if version != FORMAT_VERSION:
        raise ValueError(f"unsupported solution format version {version!r} (this package reads {FORMAT_VERSION})")
    problem = Problem.from_dict(spec["model"])
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
        history={k: _floats(v) for k, v in spec.get("history", {}).items()},
        violation=_float(spec["violation"]),
        classes=classes,
        problem=problem,
        feature_names=None if names is None else np.asarray(names, dtype=object),
        message=str(spec.get("message", "")),
        dual_coef=None if spec.get("dual_coef") is None else _floats(spec["dual_coef"]),
        support_vectors=_matrix_from_dict(spec.get("support_vectors")),
        extra={"data": spec.get("data"), "versions": spec.get("versions", {}), "format_version": version},
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
    """Read a solution written by :func:`write_solution`."""
    with open(path, encoding="utf-8") as fh:
        return solution_from_dict(json.load(fh))


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
        return self.fingerprint_stored is None or self.fingerprint_stored.get("sha256") == self.fingerprint["sha256"]


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
    at the stored ``(w, b)`` (for a kernel model, at the stored expansion),
    the largest violation of the sign and hard-margin constraints, and the
    data fingerprint.

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
        data differ from the fingerprint, the objective does not match, or a
        constraint is violated; a non-optimal status is listed in ``notes``.
    """
    if not (rtol > 0 and feas_tol >= 0):
        raise ValueError("rtol must be positive and feas_tol non-negative")
    problem = solution.problem
    fingerprint = data_fingerprint(X, y)
    stored_fp = solution.extra.get("data") if isinstance(solution.extra, dict) else None
    mismatches: list[str] = []
    notes: list[str] = []
    if stored_fp is not None and stored_fp.get("sha256") != fingerprint["sha256"]:
        mismatches.append(
            f"data fingerprint differs: stored shape {stored_fp.get('shape')}, given {fingerprint['shape']}"
        )
    if stored_fp is None:
        notes.append("the solution carries no data fingerprint")
    d = fingerprint["shape"][1]
    if solution.w is not None and solution.w.shape != (d,):
        raise ValueError(f"the solution has {solution.w.shape[0]} weights but X has {d} features")
    model = problem.normalize(X, y, sample_weight=sample_weight, feature_names=solution.feature_names)
    if solution.w is not None:
        recomputed = objective_module.objective(model, solution.w, float(solution.b))
        violation = objective_module.violation(model, solution.w, float(solution.b))
    elif solution.dual_coef is not None and problem.kernel is not None:
        recomputed = objective_module.kernel_objective(model, solution.dual_coef, solution.support_vectors,
                                                       float(solution.b))
        violation = objective_module.kernel_violation(model, solution.dual_coef, solution.support_vectors,
                                                      float(solution.b))
    else:
        raise ValueError("the solution has neither weights w nor a kernel expansion to check")
    rel = abs(recomputed - solution.objective) / max(1.0, abs(solution.objective))
    if not rel <= rtol:
        mismatches.append(
            f"objective differs: stored {solution.objective:.12g}, recomputed {recomputed:.12g} (relative {rel:.3g})"
        )
    if not violation <= feas_tol:
        mismatches.append(f"constraints violated by {violation:.3g} (tolerance {feas_tol:g})")
    if solution.status != "optimal":
        notes.append(f"the solver stopped with status {solution.status!r}")
    stored_versions = solution.extra.get("versions") if isinstance(solution.extra, dict) else None
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


# Solution.to_json / Solution.from_json write and read through this module
solution_module.register_serializer(write=write_solution, read=read_solution)

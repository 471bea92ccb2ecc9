"""Reference solutions: store a :class:`~robustsvm.solution.Solution` as JSON and re-check it.

A stored solution carries everything needed to verify it later, with this
package or with another solver: the model (:meth:`Problem.to_dict`), a
fingerprint of the training data, ``w``, ``b``, the objective, the
certificate (gap), the status, the solver and the versions of the numerical
stack. :func:`validate` re-evaluates the objective and the constraints of a
stored solution on the data and reports every mismatch.
"""

from __future__ import annotations

import json
import math
import warnings
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from .. import objective as objective_module
from .. import solution as solution_module
from ..distributed.data import is_dask_array
from ..distributed.model import distributed_model
from ..distributed.model import objective_and_violation as partition_objective
from ..priors.signs import check_signs
from ..problem import Problem
from ..solution import Solution
from ..terms.kernels import Linear
from ..uncertainty import uncertainty_from_dict
from .fingerprint import FINGERPRINT_SCHEME, data_fingerprint, fingerprint_mismatches
from .fingerprint import canonical_classes as _canonical_classes
from .fingerprint import plain as _plain
from .solution_format import (
    FORMAT_VERSION,
    SECTIONS,
    ModifiedSolutionError,
    ModifiedSolutionWarning,
    SolutionFormatError,
    changed_fields,
    check_solution_spec,
    field_digests,
)

__all__ = [
    "FINGERPRINT_SCHEME",
    "FORMAT_VERSION",
    "ModifiedSolutionError",
    "ModifiedSolutionWarning",
    "SolutionFormatError",
    "changed_fields",
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


def _check_digests(spec: dict, where: str, accept_modified: bool) -> list[str] | None:
    """:func:`changed_fields` of a stored solution against its own digests (None: it carries none).

    Raises :class:`ModifiedSolutionError` naming them unless ``accept_modified``; with it, warns.
    """
    stored = spec.get("digests")
    changed = changed_fields(stored, field_digests(spec)) if stored else None
    if changed == []:
        return changed
    if not accept_modified:
        raise ModifiedSolutionError(where, changed)
    what = "carries no digests: it is used unchecked" if changed is None else \
        f"was modified after it was written ({', '.join(changed)}): it is used as it is now"
    warnings.warn(f"{where} {what} (accept_modified=True)", ModifiedSolutionWarning, stacklevel=5)
    return changed


# ------------------------------------------------------------ reading checks
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
        "data": None if X is None or is_dask_array(X) else data_fingerprint(X, y),  # no fingerprint of a dask X
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
        # a constant decision on the training data, with its cause (robustsvm.certificates.degenerate); null otherwise
        "degenerate": solution.degenerate,
    }
    if "data" in solution.extra and out["data"] is None:
        out["data"] = solution.extra["data"]
    out.update({k: solution.extra[k] for k in SECTIONS if solution.extra.get(k) is not None})
    out = _plain(out)
    out["digests"] = field_digests(out)
    return out


def solution_from_dict(spec: dict, *, accept_modified: bool = False, where: str = "the stored solution") -> Any:
    """Rebuild a :class:`~robustsvm.solution.Solution` from :func:`solution_to_dict`.

    The stored fingerprint, versions and format go to ``solution.extra``; ``extra["modified"]`` lists the
    parts that differ from their digests (empty for an intact solution, None when it carries no digests).

    Raises
    ------
    SolutionFormatError
        When a field is missing or malformed.
    ModifiedSolutionError
        When a field no longer matches the digest written with it (the error names each one), or the
        solution carries no digests, unless ``accept_modified=True``: the solution is then read as it is,
        with a :class:`ModifiedSolutionWarning`.
    """
    check_solution_spec(spec)
    version = spec["format_version"]
    try:
        problem = Problem.from_dict(spec["model"])
    except (KeyError, TypeError, ValueError) as exc:
        detail = f"lacks {exc}" if isinstance(exc, KeyError) else str(exc)
        raise SolutionFormatError(f"stored solution: field 'model' does not describe a model: {detail}") from exc
    modified = _check_digests(spec, where, accept_modified)
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
               "digests": spec.get("digests"), "modified": modified, **{k: spec.get(k) for k in SECTIONS}},
        degenerate=spec.get("degenerate"),
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


def read_solution(path: str | Path, *, accept_modified: bool = False) -> Any:
    """Read a solution written by :func:`write_solution`.

    Every digested field (:func:`field_digests`: the weights, the intercept,
    the classes, the model, the preprocessing rules, the calibration, ...) is
    checked against the digest written with it. A digest detects accidental
    and casual edits; it is not a signature (anyone can write new digests)
    and says nothing of who wrote the file.

    Parameters
    ----------
    path : str or Path
    accept_modified : bool, default False
        Read a file whose fields differ from their digests, or that carries
        no digests, as it is (with a :class:`ModifiedSolutionWarning`; the
        parts that differ are in ``solution.extra["modified"]``).

    Raises
    ------
    SolutionFormatError
        When the file is not JSON, not a JSON object, or a field is missing or
        malformed (the message names the file or the field).
    ModifiedSolutionError
        When a field differs from its digest (each one is named) or the file
        carries no digests, unless ``accept_modified=True``.
    """
    try:
        with open(path, encoding="utf-8") as fh:
            spec = json.load(fh)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise SolutionFormatError(f"{path} is not a JSON file: {exc}") from exc
    return solution_from_dict(spec, accept_modified=accept_modified, where=str(path))


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
        The stored and the recomputed data fingerprints (``fingerprint["sha256"]`` is None on a dask
        array, where it is not computed; the report then says the data were not checked).
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
            f"data        {self._data_verdict}",
            f"status      {self.status}, gap {self.gap:.3g}",
        ]
        lines += [f"mismatch    {m}" for m in self.mismatches]
        lines += [f"note        {m}" for m in self.notes]
        return "\n".join(lines)

    @property
    def _data_verdict(self) -> str:
        """Whether the data match the stored fingerprint, saying so only when the digests were compared."""
        shape = self.fingerprint["shape"]
        if self.fingerprint.get("sha256") is None:
            return (f"not checked: the data fingerprint is not computed on a dask array (shape {shape}; the "
                    "objective and the constraints were evaluated on it)")
        digest = f"(sha256 {self.fingerprint['sha256'][:16]}…, shape {shape})"
        if any(m.startswith("data fingerprint") for m in self.mismatches):
            return f"differs {digest}"
        if self.fingerprint_stored is None:
            return f"not checked: the solution carries no data fingerprint {digest}"
        return f"matches the stored fingerprint {digest}"


def validate(
    solution: Any,
    X: Any,
    y: Any,
    *,
    sample_weight: Any = None,
    rtol: float = 1e-8,
    feas_tol: float = 1e-6,
    client: Any = None,
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
    client : distributed.Client, optional
        For a dask array ``X``: the cluster that computes the objective in partitions (the current client by
        default); the data fingerprint is then not computed (it would read every row on the client).

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
    if is_dask_array(X):
        return _validate_distributed(solution, X, y, sample_weight=sample_weight, rtol=rtol, feas_tol=feas_tol,
                                     client=client)
    problem = solution.problem
    fingerprint = data_fingerprint(X, y)
    extra = solution.extra if isinstance(solution.extra, dict) else {}
    stored_fp = extra.get("data")
    mismatches: list[str] = []
    notes: list[str] = []
    if stored_fp is not None:
        mismatches += fingerprint_mismatches(stored_fp, fingerprint, X, y)
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
        recomputed, violation, _ = objective_module.kernel_scores(model, solution.dual_coef,
                                                                  solution.support_vectors, b)
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

    return _report(solution, recomputed, violation, mismatches, notes, fingerprint, stored_fp, rtol, feas_tol)


def _report(solution: Any, recomputed: float, violation: float, mismatches: list[str], notes: list[str],
            fingerprint: dict, stored_fp: dict | None, rtol: float, feas_tol: float) -> ValidationReport:
    """The checks every data format shares (field digests, objective, violation, status, versions)."""
    extra = solution.extra if isinstance(solution.extra, dict) else {}
    stored_digests = extra.get("digests")
    if isinstance(stored_digests, dict) and stored_digests:
        for k in changed_fields(stored_digests, field_digests(solution_to_dict(solution))):
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


def _validate_distributed(solution: Any, X: Any, y: Any, *, sample_weight: Any, rtol: float, feas_tol: float,
                          client: Any) -> ValidationReport:
    """:func:`validate` on a dask array: the objective and the violation computed in partitions."""
    model = distributed_model(solution.problem, X, y, client=client, sample_weight=sample_weight,
                              feature_names=solution.feature_names)
    if solution.w is None or np.shape(solution.w) != (model.d,):
        raise ValueError(f"the solution has {np.size(solution.w)} weights but X has {model.d} features "
                         "(a dask array is validated against linear weights)")
    mismatches: list[str] = []
    if _canonical_classes(solution.classes) != _canonical_classes(model.classes):
        mismatches.append(f"classes differ: the solution has {_plain(np.asarray(solution.classes).tolist())}, the "
                          f"data {_canonical_classes(model.classes)}")
    if model.intercept.mode == "none" and float(solution.b) != 0.0:
        mismatches.append(f"intercept: the model has none (mode 'none') but the solution has b = {solution.b:.6g}")
    recomputed, violation = partition_objective(model, np.asarray(solution.w, dtype=np.float64), float(solution.b))
    fingerprint = {"sha256": None, "shape": [model.n, model.d]}  # not computed on a dask array
    notes = ["the data fingerprint is not computed on a dask array (it would read every row on the client)"]
    return _report(solution, recomputed, violation, mismatches, notes, fingerprint, None, rtol, feas_tol)


# Solution.to_json / Solution.from_json write and read through this module
solution_module.register_serializer(write=write_solution, read=read_solution)

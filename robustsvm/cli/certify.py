"""``robustsvm certify MODEL DATA --weights FILE``: the package's certificate of a point computed elsewhere.

``MODEL`` is a JSON file holding a model (``Problem.to_dict()``) or a stored solution (``robustsvm fit
--output``, ``Solution.to_json``: its model, its stored preprocessing applied to ``DATA`` as ``validate``
does, and its point when ``--weights`` is not given). ``FILE``
holds the point: ``.npy``, ``.csv`` or ``.txt`` with ``d`` numbers (``w``) or ``d + 1`` (``w`` then
``b``), ``.json`` with ``{"w": [...], "b": ...}`` (a stored solution is such a file) or a list.
The exit status is 0 for a feasible point, 1 for an infeasible one (or a failed run).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["add_arguments", "load_model", "load_weights", "run"]


def add_arguments(p: argparse.ArgumentParser, add_data_arguments: Any, add_json_option: Any) -> None:
    """The ``certify`` subcommand's arguments (the data options are the other commands')."""
    p.add_argument("model", metavar="MODEL",
                   help="a JSON model (Problem.to_dict) or a stored solution (robustsvm fit --output)")
    add_data_arguments(p)
    p.add_argument("--weights", metavar="FILE",
                   help="the point: .npy/.csv/.txt with w (d numbers) or w then b (d + 1), or .json with "
                        "w and b (default: the stored solution's own point)")
    p.add_argument("--ascent-steps", type=int, default=None, metavar="N",
                   help="most dual-ascent steps spent tightening the bound (default 1000; 0: the margins only)")
    p.add_argument("--accept-modified", action="store_true",
                   help="use a stored solution whose fields differ from the digests written with it as it is")
    add_json_option(p)


def load_model(path: str) -> tuple[Any, dict | None]:
    """The :class:`~robustsvm.problem.Problem` in ``path``, and the stored solution's dict when it is one."""
    from ..problem import Problem

    try:
        spec = json.loads(Path(path).read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not JSON: {exc}") from exc
    if not isinstance(spec, dict):
        raise ValueError(f"{path} holds a JSON {type(spec).__name__}, not a model or a stored solution")
    from . import one_vs_rest_file as one_vs_rest

    if spec.get("format") == one_vs_rest.FORMAT:
        raise ValueError(one_vs_rest.not_one_model(path))
    stored = spec if isinstance(spec.get("model"), dict) else None
    model_spec = stored["model"] if stored is not None else spec
    if "loss" not in model_spec:
        raise ValueError(f"{path} is neither a model (Problem.to_dict(): loss, penalty, ...) nor a stored "
                         "solution (a 'model' entry)")
    try:
        return Problem.from_dict(model_spec), stored
    except (KeyError, TypeError) as exc:
        raise ValueError(f"{path}: not a valid model description ({exc})") from exc


def load_weights(path: str | None, d: int, stored: dict | None) -> tuple[np.ndarray, float]:
    """``(w, b)`` from a weights file (see the module docstring), or from the stored solution."""
    if path is None:
        if stored is None or stored.get("w") is None:
            raise ValueError("--weights FILE is required unless MODEL is a stored linear solution")
        return _as_point(stored, d, "the stored solution")
    file = Path(path)
    if not file.exists():
        raise FileNotFoundError(f"no such weights file: {path}")
    suffix = file.suffix.lower()
    if suffix == ".json":
        try:
            spec = json.loads(file.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path} is not JSON: {exc}") from exc
        if isinstance(spec, list):
            return _split(np.asarray(spec, dtype=np.float64), d, path)
        if not isinstance(spec, dict) or "w" not in spec:
            raise ValueError(f"{path}: a JSON weights file is a list of numbers or an object with 'w' (and 'b')")
        return _as_point(spec, d, path)
    if suffix == ".npy":
        values = np.load(file, allow_pickle=False)
    elif suffix in (".csv", ".txt"):
        values = np.loadtxt(file, delimiter="," if suffix == ".csv" else None, ndmin=1)
    else:
        raise ValueError(f"{path}: weights are read from .npy, .csv, .txt or .json files")
    return _split(np.asarray(values, dtype=np.float64).ravel(), d, path)


def _as_point(spec: dict, d: int, where: str) -> tuple[np.ndarray, float]:
    w = np.asarray(spec["w"], dtype=np.float64).ravel()
    if w.shape != (d,):
        raise ValueError(f"{where}: w has {w.size} values but the data have {d} features")
    b = spec.get("b", 0.0)
    return w, float(0.0 if b is None else b)


def _split(values: np.ndarray, d: int, where: str) -> tuple[np.ndarray, float]:
    if values.size == d:
        return values, 0.0
    if values.size == d + 1:
        return values[:d], float(values[d])
    raise ValueError(f"{where}: {values.size} numbers, but the data have {d} features (give d numbers, w, "
                     "or d + 1, w then b)")


def run(args: argparse.Namespace, load_data: Any, print_json: Any) -> int:
    """Certify the point on the data; print the verdict (text or JSON).

    For a stored solution certified at its own point, the certificate ``fit`` stored is printed beside the
    new one: both bound ``objective − optimum`` on the same model and data (the smaller one holds), see
    :func:`stored_certificate`.
    """
    problem, stored = load_model(args.model)
    weights, solution = None, None
    if stored is not None:  # a stored solution: its model, and its preprocessing applied to the data
        from .data import read_model, validation_data
        from .table_model import stored_sample_weight

        solution = read_model(args.model, args.accept_modified)
        X, y, names, description = validation_data(args, solution)
        problem = _named_signs(solution.problem, names)
        weights = stored_sample_weight(solution, y)
    else:
        X, y, names, description = load_data(args.data, args.target, args.standardize)
    w, b = load_weights(args.weights, X.shape[1], stored)
    options = {} if args.ascent_steps is None else {"ascent_steps": args.ascent_steps}
    cert = problem.certify(X, y, w, b, feature_names=names, sample_weight=weights, **options)
    at_fit = stored_certificate(solution, X, y, args.weights)
    if args.json:
        print_json({"data": {"description": description, "n_samples": int(X.shape[0]),
                             "n_features": int(X.shape[1])},
                    "model": {"text": repr(problem), **problem.to_dict()},
                    "weights": args.weights or args.model, "certificate": cert.to_dict(),
                    "stored_certificate": at_fit,
                    **({} if stored is None else {"model_modified": solution.extra.get("modified")})})
    else:
        print(description)
        print(problem)
        print(cert.summary())
        if at_fit is not None:
            print(f"stored by fit: gap {at_fit['gap']:.3g} ({at_fit['meaning']}); this certificate: gap "
                  f"{cert.gap:.3g} (from the point alone: the multipliers its margins imply, then dual ascent). "
                  f"Both bound objective - optimum; the smaller, {min(at_fit['gap'], cert.gap):.3g}, holds")
    return 0 if cert.feasible else 1


def stored_certificate(solution: Any, X: np.ndarray, y: Any, weights_file: str | None) -> dict | None:
    """The certificate ``fit`` stored with its point, when it applies to this check: the solution's own point
    (no ``--weights``) on the data it was fitted on (the stored fingerprint matches ``X, y``)."""
    if solution is None or weights_file is not None or not np.isfinite(solution.gap):
        return None
    from ..formats.fingerprint import data_fingerprint, fingerprint_mismatches

    fingerprint = solution.extra.get("data")
    if fingerprint is None or fingerprint_mismatches(fingerprint, data_fingerprint(X, y), X, y):
        return None
    return {"gap": float(solution.gap), "status": solution.status, "solver": solution.solver,
            "meaning": f"the package's Lagrangian bound from the multipliers {solution.solver} returned at fit "
                       f"time, checked by the package; not stored in the file, so not recomputable here"}


def _named_signs(problem: Any, names: list[str]) -> Any:
    """``problem`` with its sign vector written by feature name (so the model line names the features)."""
    signs = problem.signs
    if names is None or signs is None or isinstance(signs, dict):
        return problem
    vector = np.asarray(signs, dtype=np.float64).ravel()
    if vector.shape != (len(names),):
        return problem
    from ..problem import Problem

    spec = problem.to_dict()
    spec["signs"] = {names[h]: int(vector[h]) for h in np.flatnonzero(vector)}
    return Problem.from_dict(spec)

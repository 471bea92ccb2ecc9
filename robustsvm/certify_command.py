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
    from .problem import Problem

    try:
        spec = json.loads(Path(path).read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not JSON: {exc}") from exc
    if not isinstance(spec, dict):
        raise ValueError(f"{path} holds a JSON {type(spec).__name__}, not a model or a stored solution")
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
    """Certify the point on the data; print the verdict (text or JSON)."""
    problem, stored = load_model(args.model)
    if stored is not None:  # a stored solution: its model, and its preprocessing applied to the data
        from .cli_data import read_model, validation_data

        solution = read_model(args.model, args.accept_modified)
        problem = solution.problem
        X, y, names, description = validation_data(args, solution)
    else:
        X, y, names, description = load_data(args.data, args.target, args.standardize)
    w, b = load_weights(args.weights, X.shape[1], stored)
    options = {} if args.ascent_steps is None else {"ascent_steps": args.ascent_steps}
    cert = problem.certify(X, y, w, b, feature_names=names, **options)
    if args.json:
        print_json({"data": {"description": description, "n_samples": int(X.shape[0]),
                             "n_features": int(X.shape[1])},
                    "model": {"text": repr(problem), **problem.to_dict()},
                    "weights": args.weights or args.model, "certificate": cert.to_dict(),
                    **({} if stored is None else {"model_modified": solution.extra.get("modified")})})
    else:
        print(description)
        print(problem)
        print(cert.summary())
    return 0 if cert.feasible else 1

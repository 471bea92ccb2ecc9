"""The three-class wine table of the command-line tests, and the references they compute from it.

scikit-learn's wine data with its cultivar as text (59/71/48 rows), written to a CSV; population z-scores with
pandas; the one-vs-rest models' primal objective evaluated in numpy from the maths.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.datasets import load_wine

from robustsvm.cli.main import main

#: the label column and the λ2 every test fits with
TARGET, L2 = "cultivar", 0.1


def write_wine(directory: Path) -> tuple[Path, pd.DataFrame]:
    """``(path, frame)``: the wine table with its cultivar as text, written to ``directory/wine.csv``."""
    data = load_wine(as_frame=True)
    frame = data.data.copy()
    frame[TARGET] = np.asarray(data.target_names)[data.target]
    path = directory / "wine.csv"
    frame.to_csv(path, index=False)
    return path, frame


def design(frame: pd.DataFrame) -> pd.DataFrame:
    """The features as population z-scores."""
    features = frame.drop(columns=TARGET).astype(float)
    return (features - features.mean()) / features.std(ddof=0)


def cli(capsys, *args) -> tuple[int, str, str]:
    """``robustsvm ARGS`` in this process: exit status, standard output, standard error."""
    capsys.readouterr()
    status = main([str(a) for a in args])
    out = capsys.readouterr()
    return status, out.out, out.err


def fit_json(path: Path, out: Path, *options: str) -> tuple[dict, Path]:
    """``robustsvm fit PATH --target cultivar --l2 0.1 OPTIONS --json --output OUT``: its JSON and ``out``."""
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        status = main(["fit", str(path), "--target", TARGET, "--l2", str(L2), *options, "--json", "--output",
                       str(out)])
    assert status == 0
    return json.loads(buffer.getvalue()), out


def primal(Z: np.ndarray, t: np.ndarray, w: np.ndarray, b: float, signs: np.ndarray | None = None,
           radius: float = 0.0) -> float:
    """``(λ2/2)‖w‖² + (1/n) Σ max(0, 1 − t_i(z_i·w + b) + r‖w‖₁)`` with ``t = ±1`` (a box of radius r:
    σ(−t w) = ‖w‖₁); ``inf`` when a sign is broken."""
    if signs is not None and np.any(signs * w < -1e-9):
        return np.inf
    return float(L2 / 2 * w @ w + np.mean(np.maximum(0.0, 1.0 - t * (Z @ w + b) + radius * np.abs(w).sum())))

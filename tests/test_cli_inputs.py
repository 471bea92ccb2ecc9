"""The command line's edge cases of a raw CSV: duplicate columns, overflow, ``n/a``, subcommand usage errors.

Each case is run in a subprocess, as a user meets it; the expected behaviour is the one
``docs/api/cli.md`` documents.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest


def run(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "robustsvm", *map(str, args)], capture_output=True, text=True,
                          timeout=300, cwd=cwd)


def _rows(n: int = 60, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    age = np.round(rng.normal(50, 8, n), 1)
    label = np.where(age + rng.normal(0, 8, n) > 50, "yes", "no")
    return age, label


def _write(path, header: str, rows: list[str]) -> str:
    path.write_text(header + "\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return str(path)


def test_a_header_naming_a_feature_twice_is_refused_naming_it(tmp_path):
    age, label = _rows()
    rows = [f"{a},{2 * a},{c}" for a, c in zip(age, label, strict=True)]
    data = _write(tmp_path / "twice.csv", "age,age,label", rows)
    out = run("fit", data, "--target", "label")
    assert out.returncode == 1, out.stdout
    assert "names a column twice: ['age']" in out.stderr
    assert "age.1" not in out.stdout + out.stderr


def test_a_header_naming_the_label_twice_is_refused_naming_it(tmp_path):
    age, label = _rows()
    data = _write(tmp_path / "labels.csv", "age,label,label", [f"{a},{c},{a}" for a, c in zip(age, label, strict=True)])
    out = run("fit", data, "--target", "label")
    assert out.returncode == 1
    assert "names a column twice: ['label']" in out.stderr
    assert "exactly two classes" not in out.stderr


def test_values_that_overflow_the_z_score_are_named_without_numpy_warnings(tmp_path):
    age, label = _rows()
    dose = [str(v) for v in np.round(np.random.default_rng(1).normal(size=age.size), 3)]
    dose[3] = dose[5] = "1e308"
    rows = [f"{d},{a},{c}" for d, a, c in zip(dose, age, label, strict=True)]
    data = _write(tmp_path / "big.csv", "dose,age,label", rows)
    out = run("fit", data, "--target", "label")
    assert out.returncode == 1
    assert "RuntimeWarning" not in out.stderr and "NaN" not in out.stderr
    assert "column 'dose' overflows" in out.stderr and "row 4" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


def test_a_new_row_that_overflows_is_named_at_prediction(tmp_path):
    age, label = _rows()
    ratio = age / 5000  # a spread of about 0.002: a z-score multiplies a value by some 600
    rows = [f"{float(a)!r},{c}" for a, c in zip(ratio, label, strict=True)]
    train = _write(tmp_path / "train.csv", "ratio,label", rows)
    model = tmp_path / "model.json"
    assert run("fit", train, "--target", "label", "-o", model).returncode == 0
    new = _write(tmp_path / "new.csv", "ratio", ["0.01", "1.7e308"])
    out = run("predict", model, new)
    assert out.returncode == 1
    assert "column 'ratio' overflows its z-score in row 2" in out.stderr
    assert "RuntimeWarning" not in out.stderr


def test_n_a_in_a_number_column_is_the_documented_error_not_a_median(tmp_path):
    """docs/api/cli.md: ``n/a`` in a column of numbers is an error naming the column, the rows and the value;
    an empty cell is a missing value, filled only when --impute asks for it."""
    age, label = _rows()
    cells = [str(a) for a in age]
    cells[7] = "n/a"
    data = _write(tmp_path / "na.csv", "age,label", [f"{a},{c}" for a, c in zip(cells, label, strict=True)])
    out = run("fit", data, "--target", "label", "--impute", "median")
    assert out.returncode == 1
    assert "column 'age' holds numbers but row 8 is not a number ('n/a')" in out.stderr

    cells[7] = ""
    clean = _write(tmp_path / "empty.csv", "age,label", [f"{a},{c}" for a, c in zip(cells, label, strict=True)])
    model = tmp_path / "model.json"
    assert run("fit", clean, "--target", "label", "--impute", "median", "-o", model).returncode == 0
    new = _write(tmp_path / "new.csv", "age", ["50", "n/a", ""])
    out = run("predict", model, new)
    assert out.returncode == 1
    assert "row 2 is not a number ('n/a')" in out.stderr


def test_the_missing_markers_are_empty_cells_na_and_nan(tmp_path):
    age, label = _rows()
    cells = [str(a) for a in age]
    cells[2], cells[4], cells[6] = "", "NA", "NaN"
    data = _write(tmp_path / "markers.csv", "age,label", [f"{a},{c}" for a, c in zip(cells, label, strict=True)])
    out = run("fit", data, "--target", "label")
    assert out.returncode == 1
    assert "column 'age' has missing values (NaN) in rows 3, 5, 7" in out.stderr
    frame = pd.read_csv(data)
    assert frame["age"].isna().sum() == 3


@pytest.mark.parametrize("argv, command", [
    (["compare", "wdbc", "--drop", "x"], "compare"),
    (["predict", "model.json", "new.csv", "--no-such-option"], "predict"),
    (["validate", "model.json", "wdbc", "--no-such-option"], "validate"),
])
def test_a_subcommand_error_prints_the_subcommands_usage(argv, command):
    out = run(*argv)
    assert out.returncode == 2
    assert out.stderr.startswith(f"usage: robustsvm {command} ")
    assert f"robustsvm {command}: error: unrecognized arguments:" in out.stderr

"""DataFrames with text, category or date columns get an error naming the columns, from the estimator and from
``Problem.solve``; numeric, boolean and nullable numeric columns are taken as numbers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import robustsvm as rs


def _frame(n: int = 40) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"age": rng.normal(size=n), "dose": rng.normal(size=n)})
    y = np.where(X["age"] + 0.3 * rng.normal(size=n) > 0, "case", "control")
    return X, y


@pytest.mark.parametrize("column", [
    pd.Series(["north", "south"] * 20),
    pd.Series(["a", "b"] * 20, dtype="category"),
    pd.Series(pd.date_range("2020-01-01", periods=40)),
])
def test_estimator_and_problem_name_the_columns_that_are_not_numbers(column):
    X, y = _frame()
    X["clinic"] = column
    with pytest.raises(ValueError, match=r"not numbers: 'clinic'") as info:
        rs.RobustSVC(signs={"age": 1}).fit(X, y)
    assert "OneHotEncoder" in str(info.value)
    with pytest.raises(ValueError, match=r"not numbers: 'clinic'"):
        rs.Problem(penalty=rs.L2(1.0)).solve(X, y)
    fitted = rs.RobustSVC().fit(X.drop(columns="clinic"), y)
    with pytest.raises(ValueError, match=r"not numbers: 'clinic'"):
        fitted.predict(X.assign(dose=column.astype(str)).rename(columns={"dose": "clinic"}))


def test_numbers_written_as_text_are_named_with_their_conversion():
    """A column read as text though every value is a number ('-0.82', ' 3 ') is named with pandas.to_numeric; beside a
    true text column, the message also says to encode the other. The converted frame fits as the numeric one."""
    X, y = _frame()
    as_text = X.assign(dose=[f" {v:.6f} " for v in X["dose"]])
    with pytest.raises(ValueError, match=r"'dose' holds numbers written as text") as info:
        rs.RobustSVC().fit(as_text, y)
    assert "pandas.to_numeric(X['dose'])" in str(info.value) and "OneHotEncoder" not in str(info.value)
    with pytest.raises(ValueError, match=r"'dose' holds numbers written as text") as info:
        rs.Problem(penalty=rs.L2(1.0)).solve(as_text.assign(clinic=["north", "south"] * 20), y)
    assert "Encode the others first" in str(info.value) and "'clinic'" in str(info.value)
    converted = as_text.assign(dose=pd.to_numeric(as_text["dose"]))
    got = rs.Problem(penalty=rs.L2(1.0)).solve(converted, y)
    reference = rs.Problem(penalty=rs.L2(1.0)).solve(X.round({"dose": 6}).to_numpy(), y)
    assert abs(got.objective - reference.objective) <= got.gap + reference.gap + 1e-9


def test_missing_labels_are_named_with_their_rows():
    """None, NaN and pandas' NA among the labels: a ValueError naming y and the rows (NumPy's sort of such labels
    fails with a message about '<'), from the estimator and from Problem.solve."""
    X, y = _frame()
    for missing in (None, np.nan, pd.NA):
        labels = pd.Series(y, dtype=object)
        labels[[4, 9]] = missing
        with pytest.raises(ValueError, match=r"y has missing labels \(None or NaN\) in 2 rows \(first: 4, 9\)"):
            rs.RobustSVC().fit(X, labels)
        with pytest.raises(ValueError, match=r"y has missing labels"):
            rs.Problem(penalty=rs.L2(1.0)).solve(X, labels)
    numeric = np.where(y == "case", 1.0, 0.0)
    numeric[7] = np.nan
    with pytest.raises(ValueError, match=r"in 1 row \(first: 7\)"):
        rs.RobustSVC().fit(X, numeric)


def test_boolean_and_nullable_numeric_columns_are_numbers():
    X, y = _frame()
    reference = rs.Problem(penalty=rs.L2(1.0)).solve(X.to_numpy(), y)
    X2 = X.assign(dose=X["dose"].astype("Float64"))
    got = rs.Problem(penalty=rs.L2(1.0)).solve(X2, y)
    assert abs(got.objective - reference.objective) <= got.gap + reference.gap + 1e-9
    flags = X.assign(flag=X["dose"] > 0)
    rs.RobustSVC().fit(flags, y)  # a boolean column is a 0/1 feature


def test_signs_by_name_without_names_point_to_set_output():
    X, y = _frame()
    with pytest.raises(ValueError, match=r"set_output\(transform='pandas'\)"):
        rs.RobustSVC(signs={"age": 1}).fit(X.to_numpy(), y)

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

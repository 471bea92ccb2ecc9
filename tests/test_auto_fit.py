"""The refit of ``"auto"``'s cost model (``benchmarks/auto_fit.py``) on synthetic grid records: the wide form's
constants are recovered from runs it generated, and the replay of ``auto`` follows its attempt, its choice and
the fall-back order through the measured runs. Nothing is timed."""

from __future__ import annotations

import copy

import pytest

import robustsvm as rs
from benchmarks import auto_fit
from robustsvm.backends import cost


def test_the_wide_constants_are_recovered_from_runs_of_the_wide_form():
    k = copy.deepcopy(cost.constants()["feature-ipm"])
    truth = {"gram": 4e-11, "factor": 7e-11, "pass": 5e-9}
    runs = []
    for n, d in ((500, 3000), (1000, 3000), (2000, 10000), (800, 5000), (1500, 4000)):
        x = cost.CostInputs(**{**cost.cost_inputs(rs.Problem(penalty=rs.L2(1e-3)),
                                                  cost.DataShape(n=n, d=d, nnz=n * d)).__dict__, "wide": True})
        g, f, p = cost.wide_work(x)
        it = 16
        t = (k["fixed"] + k["setup"] * x.nnz
             + it * (truth["gram"] * g + truth["factor"] * f + truth["pass"] * p + k.get("step", 0.0)
                     + k.get("rows", 0.0) * n))
        runs.append((x, {"iterations": it, "time": t}))
    wide, _ = auto_fit.fit_wide(runs, k)
    for name, value in truth.items():
        assert wide[name] == pytest.approx(value, rel=1e-3)
    assert auto_fit.fit_wide(runs[:2], k)[0] is k.get("wide")  # too few runs: the constants are kept


def _cell(runs: dict, accepting: list[str]) -> dict:
    return {"n": 1000, "d": 300, "nnz": 300_000, "sparse": False, "set": "ball", "lambda_n": 10.0, "C": 0.1,
            "density": None, "accepting": accepting, "runs": runs}


def _run(seconds: float, certified: bool) -> dict:
    return {"time": seconds, "certified": certified, "status": "optimal" if certified else "max_iter",
            "iterations": 1000}


def test_the_replay_follows_the_choice_and_the_fall_back_order(monkeypatch):
    table = copy.deepcopy(cost.constants())
    preds = [cost.Prediction("robust-dcd", 0.05, 400.0, terms={"own": 0.05, "per_epoch": 1e-4}),
             cost.Prediction("feature-ipm", 0.2, 17.0), cost.Prediction("clarabel", 1.5, 16.0)]
    monkeypatch.setattr(cost, "predict_all", lambda names, x, table=None: list(preds))
    runs = {"robust-dcd": _run(0.23, False), "feature-ipm": _run(0.15, True), "clarabel": _run(1.4, True)}
    cell = _cell(runs, ["robust-dcd", "feature-ipm", "clarabel"])
    assert auto_fit.simulate(cell, table) == pytest.approx(0.23 + 0.15)  # robust-dcd stops short, then feature-ipm
    del runs["feature-ipm"]
    assert auto_fit.simulate(cell, table) is None  # a run it needs was not made
    runs["robust-dcd"] = _run(0.04, True)
    assert auto_fit.simulate(cell, table) == pytest.approx(0.04)

"""A degenerate answer says so: the warning, ``summary()``, the JSON, ``robustsvm fit``; ``nonzeros`` by the
certificate's resolution."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest

import robustsvm as rs
from robustsvm.formats.io import solution_from_dict, solution_to_dict
from tests._gbsg2_like import gbsg2_like

SIGNS = {"pnodes": +1, "age": -1, "horTh=yes": -1}


@pytest.fixture(scope="module")
def data():
    X, y, names = gbsg2_like()
    Xf = pd.DataFrame(X, columns=names)
    rc = rs.critical_radius(rs.Problem(penalty=rs.L2(1e-2), signs=SIGNS, uncertainty=rs.Box(1.0)), Xf, y)
    return Xf, y, rc


def test_a_fit_above_the_critical_radius_warns_and_reports(data):
    Xf, y, rc = data
    radius = 1.5 * rc
    problem = rs.Problem(penalty=rs.L2(1e-2), signs=SIGNS, uncertainty=rs.Box(radius))
    with pytest.warns(rs.DegenerateSolutionWarning, match="exceeds the critical radius") as record:
        sol = problem.solve(Xf, y)
    message = str(record[0].message)
    assert f"{radius:.4g}" in message and f"{rc:.4g}" in message and "predicts 1" in message
    # the decision is constant: every training sample gets the majority class (245 of 346)
    assert np.unique(sol.predict(Xf)).tolist() == [1]
    assert sol.degenerate["critical_radius"] == pytest.approx(rc, rel=1e-9)
    assert sol.nonzeros == 0
    summary = sol.summary()
    assert "degenerate  constant: predicts 1 for every training sample" in summary
    assert "nonzeros    0 of 13" in summary
    spec = json.loads(json.dumps(solution_to_dict(sol, Xf, y)))
    assert spec["degenerate"]["cause"] == sol.degenerate["cause"]
    assert solution_from_dict(spec).degenerate["predicts"] == 1


def test_per_sample_radii_above_the_critical_radius_name_their_largest(data):
    """Radii r_i = ρ s_i (s_i alternating 1 and 1/2): the warning names the largest radius and the critical ρ of
    the radii scaled together; at half the critical ρ the fit is not constant."""
    Xf, y, _ = data
    s = np.where(np.arange(len(y)) % 2 == 0, 1.0, 0.5)
    rc = rs.critical_radius(rs.Problem(penalty=rs.L2(1e-2), signs=SIGNS, uncertainty=rs.Box(s)), Xf, y)
    with pytest.warns(rs.DegenerateSolutionWarning, match="exceeds the critical radius") as record:
        rs.Problem(penalty=rs.L2(1e-2), signs=SIGNS, uncertainty=rs.Box(1.5 * rc * s)).solve(Xf, y)
    message = str(record[0].message)
    assert f"the largest of the samples' radii, {1.5 * rc:.4g}," in message and f"{rc:.4g}" in message
    with warnings.catch_warnings():
        warnings.simplefilter("error", rs.DegenerateSolutionWarning)
        sol = rs.Problem(penalty=rs.L2(1e-2), signs=SIGNS, uncertainty=rs.Box(0.5 * rc * s)).solve(Xf, y)
    assert len(np.unique(sol.predict(Xf))) == 2


def test_a_fit_below_the_critical_radius_does_not_warn(data):
    Xf, y, rc = data
    problem = rs.Problem(penalty=rs.L2(1e-2), signs=SIGNS, uncertainty=rs.Box(0.5 * rc))
    with warnings.catch_warnings():
        warnings.simplefilter("error", rs.DegenerateSolutionWarning)
        sol = problem.solve(Xf, y)
    assert sol.degenerate is None
    assert "degenerate" not in sol.summary()
    assert solution_to_dict(sol)["degenerate"] is None
    assert len(np.unique(sol.predict(Xf))) == 2


def test_l1_beyond_its_critical_value_is_named(data):
    Xf, y, _ = data
    problem = rs.Problem(penalty=rs.L2(1e-2) + rs.L1(1.0), signs=SIGNS)
    cl1 = rs.critical_l1(problem, Xf, y)
    with pytest.warns(rs.DegenerateSolutionWarning, match="exceeds the critical λ1"):
        rs.Problem(penalty=rs.L2(1e-2) + rs.L1(1.2 * cl1), signs=SIGNS).solve(Xf, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", rs.DegenerateSolutionWarning)
        rs.Problem(penalty=rs.L2(1e-2) + rs.L1(0.5 * cl1), signs=SIGNS).solve(Xf, y)


def test_nonzeros_count_what_the_certificate_proves(data):
    Xf, y, rc = data
    problem = rs.Problem(penalty=rs.L2(1e-2), signs=SIGNS, uncertainty=rs.Box(0.8 * rc))
    loose = problem.solve(Xf, y, solver="clarabel", tol=1e-6)
    tight = problem.solve(Xf, y, solver="feature-ipm", tol=1e-12)
    # the resolution is a proved bound: both points lie within their resolutions of the one optimum
    assert np.linalg.norm(loose.w - tight.w) <= loose.weight_resolution + tight.weight_resolution
    assert loose.weight_resolution == pytest.approx(math.sqrt(2 * (loose.gap + 64 * 2.0**-52 * loose.objective) / 1e-2))
    # a counted weight is nonzero, with the same sign, in the more accurate answer
    counted = np.abs(loose.w) > loose.weight_resolution
    assert loose.nonzeros == counted.sum() > 0
    assert np.all(np.sign(tight.w[counted]) == np.sign(loose.w[counted]))
    assert np.all(np.abs(tight.w[counted]) > 0)


def test_the_command_line_reports_a_constant_model(data, tmp_path):
    Xf, y, rc = data
    table = Xf.assign(outcome=np.where(y == 1, "relapse", "no relapse"))
    csv = tmp_path / "patients.csv"
    table.to_csv(csv, index=False)
    base = [sys.executable, "-m", "robustsvm", "fit", str(csv), "--target", "outcome", "--positive", "relapse",
            "--no-standardize", "--signs", "pnodes=+1,age=-1,horTh=yes=-1"]
    out = subprocess.run([*base, "--uncertainty", f"box:{1.5 * rc}"], capture_output=True, text=True, check=True)
    assert "degenerate  constant: predicts 'relapse'" in out.stdout
    assert "exceeds the critical radius" in out.stderr
    js = subprocess.run([*base, "--uncertainty", f"box:{1.5 * rc}", "--json"], capture_output=True, text=True,
                        check=True)
    report = json.loads(js.stdout)
    assert report["degenerate"]["critical_radius"] == pytest.approx(rc, rel=1e-6)
    assert report["solution"]["degenerate"]["predicts"] == 1
    below = subprocess.run([*base, "--uncertainty", f"box:{0.5 * rc}"], capture_output=True, text=True, check=True)
    assert "degenerate  constant" not in below.stdout and "critical radius" not in below.stderr


def test_every_route_of_the_solve_path_reports_it(data):
    # "auto" keeps a first-order answer built without warnings, and the estimator calls the path: both warn
    Xf, y, rc = data
    problem = rs.Problem(penalty=rs.L2(1e-2), signs=SIGNS, uncertainty=rs.Box(1.5 * rc))
    with pytest.warns(rs.DegenerateSolutionWarning, match="exceeds the critical radius") as record:
        sol = problem.solve(Xf, y, solver="auto")
    assert len(record) == 1 and record[0].filename == __file__
    assert sol.degenerate["explained"] and sol.degenerate["critical_radius"] == pytest.approx(rc, rel=1e-9)
    with pytest.warns(rs.DegenerateSolutionWarning, match="exceeds the critical radius"):
        rs.RobustSVC(l2=1e-2, signs=SIGNS, uncertainty=rs.Box(1.5 * rc)).fit(Xf, y)


def test_a_loose_answer_that_beats_the_constant_classifier_needs_no_critical_value(data, monkeypatch):
    # λ2 small and tol loose: the certificate resolves ‖w − w*‖ no better than ‖w‖ itself, yet the objective is
    # below every point with w = 0, so w* ≠ 0 is proved without the conic program of the critical λ1
    from robustsvm.certificates import critical

    def refuse(*args, **kwargs):
        raise AssertionError("the critical value was computed")

    monkeypatch.setattr(critical, "model_critical_l1", refuse)
    monkeypatch.setattr(critical, "model_critical_radius", refuse)
    Xf, y, _ = data
    problem = rs.Problem(penalty=rs.L2(1e-2), constraints=[rs.Decreasing(["age", "pnodes"])])
    with warnings.catch_warnings():
        warnings.simplefilter("error", rs.DegenerateSolutionWarning)
        sol = problem.solve(Xf, y, solver="ordered-dcd", tol=1e-2)
    assert np.linalg.norm(sol.w) <= sol.weight_resolution  # unresolved by the certificate alone
    # the constant classifier's value, by brute force over b: the hinge's breakpoints are b = ±1
    s = np.where(y == 1, 1.0, -1.0)
    constant = min(np.mean(np.maximum(0.0, 1.0 - s * b)) for b in np.linspace(-2.0, 2.0, 4001))
    assert sol.objective < constant
    assert sol.degenerate is None


def test_a_large_constant_model_is_reported_without_the_critical_value_programs(monkeypatch):
    """Above the size the critical-value programs run for after a solve, the report still says the model is
    constant (the certificate's resolution) and names the function that computes the critical radius; the
    programs are not run (they took a minute at 5,000 × 20,000 where the solve took under a second)."""
    from robustsvm.certificates import critical, degenerate

    def not_run(*args, **kwargs):
        raise AssertionError("the critical-value program ran after the solve")

    monkeypatch.setattr(critical, "model_critical_radius", not_run)
    monkeypatch.setattr(critical, "model_critical_l1", not_run)
    rng = np.random.default_rng(3)
    d = degenerate.EXPLAIN_MAX_FEATURES + 1
    X = rng.standard_normal((40, d))
    y = np.where(rng.standard_normal(40) > 0, 1, -1)
    prob = rs.Problem(penalty=rs.L2(1.0), uncertainty=rs.Box(10.0))
    with pytest.warns(rs.DegenerateSolutionWarning, match="rs.critical_radius computes it"):
        sol = prob.solve(X, y, solver="robust-dcd")
    assert sol.status == "optimal" and sol.degenerate is not None and sol.degenerate["critical_radius"] is None
    flat = np.ptp(X @ sol.w) <= 1e-9 * max(1.0, abs(sol.b))
    assert flat or np.linalg.norm(sol.w) <= sol.degenerate["weight_resolution"]


def test_a_constant_decision_of_tiny_features_names_their_scale():
    """Features of order 1e-8 with λ2 = 1: the optimal w is not 0 (the critical λ1 is positive), yet x·w varies by
    about 1e-16 on the training data. The warning says so and names the features' largest |x| (computed here) and
    λ2 as the cause, with the remedy; the same data standardized give a model that is not constant."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((60, 4))
    y = np.where(X[:, 0] + 0.3 * rng.standard_normal(60) > 0, 1, -1)
    tiny = X * 1e-8
    with pytest.warns(rs.DegenerateSolutionWarning, match="the optimal weights are not 0") as record:
        sol = rs.Problem(penalty=rs.L2(1.0)).solve(tiny, y, solver="clarabel")
    message = str(record[0].message)
    assert f"largest |x| {np.abs(tiny).max():.3g}" in message and "λ2 = 1 is large" in message
    assert "StandardScaler" in message
    assert sol.degenerate["critical_l1"] > 0 and sol.degenerate["constant_decision"]
    with warnings.catch_warnings():
        warnings.simplefilter("error", rs.DegenerateSolutionWarning)
        rs.Problem(penalty=rs.L2(1.0)).solve(X, y, solver="clarabel")

"""A model with a Wasserstein ball as a user keeps it: stored and read back, and through ``RobustSVC``."""

import json

import numpy as np
import pytest

import robustsvm as rs
from robustsvm.formats.io import ModifiedSolutionError
from robustsvm.formats.solution_format import SolutionFormatError

from .conftest import make_classification


@pytest.mark.parametrize("ball", [rs.Wasserstein(0.07), rs.Wasserstein(0.05, kappa=1.0, norm=1),
                                  rs.Wasserstein(0.1, norm=np.inf)])
def test_a_stored_model_reads_back_predicts_and_certifies(tmp_path, ball):
    X, y = make_classification(90, 5, seed=2)
    prob = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(0.05), signs=[1, 0, 0, -1, 0], uncertainty=ball)
    sol = prob.solve(X, y, solver="clarabel", tol=1e-9)
    path = tmp_path / "model.json"
    sol.to_json(path, X, y)
    back = rs.Solution.from_json(path)
    assert back.problem.uncertainty == ball and back.extra["modified"] == []
    np.testing.assert_array_equal(back.predict(X), sol.predict(X))
    np.testing.assert_allclose(back.decision_function(X), X @ sol.w + sol.b, rtol=1e-12, atol=1e-12)
    # the ball read back defines the same objective: recomputed here from the definition at the stored point
    m = (2.0 * y - 1.0) * (X @ back.w + back.b)
    w_star = np.linalg.norm(back.w, ord={1: np.inf, 2: 2, np.inf: 1}[ball.norm])
    if not np.isfinite(ball.kappa):
        direct = 0.025 * back.w @ back.w + ball.eps * w_star + np.mean(np.maximum(0.0, 1.0 - m))
        assert abs(back.problem.objective(X, y, back.w, back.b) - direct) < 1e-12
    # certified from the point alone: the hinge's multipliers at the kink are not read off the margins, so the
    # bound is valid but looser than the solver's (docs/derivations/wasserstein.md, §4)
    cert = back.problem.certify(X, y, back.w, back.b)
    assert cert.feasible and abs(cert.objective - sol.objective) < 1e-10
    assert cert.bound <= sol.objective + 1e-9 and cert.gap < 2e-2
    assert rs.validate(back, X, y).ok


def test_an_edited_ball_is_refused_and_a_malformed_one_named(tmp_path):
    X, y = make_classification(60, 4, seed=3)
    sol = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(0.1), uncertainty=rs.Wasserstein(0.05)).solve(X, y)
    path = tmp_path / "model.json"
    sol.to_json(path, X, y)
    spec = json.loads(path.read_text())
    spec["model"]["uncertainty"]["eps"] = 0.5
    path.write_text(json.dumps(spec))
    with pytest.raises(ModifiedSolutionError, match="accept_modified=True"):
        rs.Solution.from_json(path)
    edited = rs.Solution.from_json(path, accept_modified=True)
    assert edited.problem.uncertainty == rs.Wasserstein(0.5)
    spec["model"]["uncertainty"]["radius"] = 0.5
    path.write_text(json.dumps(spec))
    with pytest.raises(SolutionFormatError, match="radius"):
        rs.Solution.from_json(path, accept_modified=True)

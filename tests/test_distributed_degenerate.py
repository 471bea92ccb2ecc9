"""A fit on a Dask cluster whose answer is useless as a model is reported as an in-memory fit is.

The report reads sums the certifier forms in its one round over the partitions (the decision's spread, the
weighted training accuracy, the classes' weights): they are checked against numpy on the in-memory arrays, the
reports against the same model solved in memory, and the round against what the client receives (O(d) numbers per
partition, never the n decisions).
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import robustsvm as rs
from robustsvm import solve_path
from robustsvm.certificates.degenerate import UNINFORMATIVE, DecisionSummary
from robustsvm.distributed.model import distributed_model
from robustsvm.exceptions import DegenerateSolutionWarning
from robustsvm.result import Result

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

pytestmark = pytest.mark.timeout(300)

#: fields of the report both fits must give alike
FIELDS = ("predicts", "uninformative", "constant_decision", "explained", "proved")


@pytest.fixture(scope="module")
def client():
    with distributed.Client(processes=False, n_workers=2, threads_per_worker=1, dashboard_address=":0",
                            set_as_default=False) as c:
        yield c


def _imbalanced(n=2000, d=5, seed=0):
    """About 5 % of the rows in class "rare", shifted by 0.5 in every feature (a weak signal)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.where(rng.random(n) < 0.05, "rare", "common")
    X[y == "rare"] += 0.5
    return X, y


def _accuracy(X, y, sol, weight):
    """The weighted training accuracy of ``(sol.w, sol.b)``, from the definition."""
    scores = X @ sol.w + sol.b
    right = np.where(scores > 0, sol.classes[1], sol.classes[0]) == y
    return float(weight @ right) / float(weight.sum())


def _without_spread(cause):
    return re.sub(r"spread [0-9.e+-]+", "spread …", cause)


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_an_imbalanced_fit_on_a_cluster_is_reported_as_in_memory(client, weighted):
    """95/5 labels under a strong λ2: every score is negative, the fit predicts the larger class for every row."""
    X, y = _imbalanced()
    weight = np.random.default_rng(1).uniform(0.5, 2.0, y.size) if weighted else np.ones(y.size)
    problem = rs.Problem(loss=rs.SquaredHinge(), penalty=rs.L2(1.0))
    with pytest.warns(DegenerateSolutionWarning, match=UNINFORMATIVE) as caught:
        sol = problem.solve(da.from_array(X, chunks=(500, 5)), y, "dask-ipm", client=client, tol=1e-8,
                            sample_weight=weight if weighted else None)
    assert sol.status == "optimal"
    report = sol.degenerate
    assert report is not None and report["uninformative"] and report["predicts"] == -1
    assert ("weighted training accuracy" in report["cause"]) == weighted
    assert any(report["cause"] in str(w.message) for w in caught)
    accuracy = _accuracy(X, y, sol, weight)
    assert report["training_accuracy"] == pytest.approx(accuracy, abs=1e-12)
    share = float(weight @ (y == "common")) / float(weight.sum())
    assert report["constant_accuracy"] == pytest.approx(share, abs=1e-12)
    assert report["decision_spread"] == pytest.approx(np.ptp(X @ sol.w), rel=1e-9)
    for solver in ("dcd", "feature-ipm"):
        with pytest.warns(DegenerateSolutionWarning, match=UNINFORMATIVE):
            ref = problem.solve(X, y, solver, tol=1e-8, sample_weight=weight if weighted else None)
        memory = ref.degenerate
        assert {k: memory.get(k) for k in FIELDS} == {k: report.get(k) for k in FIELDS}, solver
        for key in ("training_accuracy", "constant_accuracy"):
            assert memory[key] == pytest.approx(report[key], abs=1e-9), (solver, key)
        assert _without_spread(memory["cause"]) == _without_spread(report["cause"]), solver


def test_the_estimator_on_a_dask_array_warns(client):
    X, y = _imbalanced(seed=2)
    est = rs.RobustSVC(loss="squared_hinge", l2=1.0, solver="dask-ipm", solver_options={"client": client, "tol": 1e-8})
    with pytest.warns(DegenerateSolutionWarning, match=UNINFORMATIVE):
        est.fit(da.from_array(X, chunks=(500, 5)), y)
    assert est.solution_.degenerate["uninformative"]
    assert est.solution_.degenerate["training_accuracy"] == pytest.approx(
        _accuracy(X, y, est.solution_, np.ones(y.size)), abs=1e-12)


def test_a_constant_fit_on_a_cluster_names_the_resolution_not_the_critical_values(client):
    """The hinge on 95/5 labels: the constant classifier is optimal (its critical λ1, computed in memory, is 0);
    on the cluster the critical values are not computed and the cause says so, naming the resolution."""
    X, y = _imbalanced(seed=3)
    problem = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(1.0))
    assert rs.critical_l1(problem, X, y) == pytest.approx(0.0, abs=1e-9)
    with pytest.warns(DegenerateSolutionWarning, match="constant on its training data"):
        sol = problem.solve(da.from_array(X, chunks=(500, 5)), y, "dask-ipm", client=client, tol=1e-8)
    report = sol.degenerate
    assert report["explained"] and report["critical_l1"] is None and report["critical_radius"] is None
    assert np.linalg.norm(sol.w) <= report["weight_resolution"]
    assert "not computed for data on a cluster" in report["cause"]
    assert f"{report['weight_resolution']:.3g}" in report["cause"] and "rs.critical_l1" in report["cause"]


def _separated(n=1200, d=4, seed=4):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.where(X @ np.array([2.0, -1.0, 0.5, 0.0]) > 0, 1, 0)
    return X, y


def test_a_separating_fit_is_not_reported_and_its_sums_are_numpys(client):
    X, y = _separated()
    problem = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(1e-2))
    Xd = da.from_array(X, chunks=(300, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateSolutionWarning)
        sol = problem.solve(Xd, y, "dask-ipm", client=client, tol=1e-8)
    assert sol.status == "optimal" and sol.degenerate is None
    model = distributed_model(problem, Xd, y, client=client)
    _, summary = solve_path.certify_with_decision("dask-ipm", model, Result(w=sol.w, b=sol.b, status="optimal"))
    assert isinstance(summary, DecisionSummary)
    z = X @ sol.w
    assert summary.spread == pytest.approx(np.ptp(z), rel=1e-12)
    assert summary.correct / summary.total == pytest.approx(np.mean((z + sol.b > 0) == (y == 1)), abs=1e-12)
    assert summary.correct / summary.total > 0.95 and not summary.weighted
    assert summary.positive / summary.total == pytest.approx(np.mean(y == 1), abs=1e-12)
    assert summary.predicted_positive / summary.total == pytest.approx(np.mean(z + sol.b > 0), abs=1e-12)


def test_the_report_costs_no_round_and_collects_o_of_d_numbers(client):
    """Certifying and reporting a distributed point is one round (the certifier's own) whose answers are a few
    numbers per partition: neither X nor the n decisions reach the client."""
    X, y = _imbalanced(n=4000, d=6, seed=5)
    problem = rs.Problem(loss=rs.SquaredHinge(), penalty=rs.L2(1.0))
    ref = problem.solve(X, y, "feature-ipm", tol=1e-10, warn=False)
    model = distributed_model(problem, da.from_array(X, chunks=(1000, 6)), y, client=client)
    rounds, received = model.data.rounds, model.data.bytes_received
    result = Result(w=ref.w, b=ref.b, status="optimal", dual_value=ref.objective - ref.gap, dual_feasible=True)
    with pytest.warns(DegenerateSolutionWarning, match=UNINFORMATIVE):
        cert, summary = solve_path.certify_with_decision("dask-ipm", model, result)
        sol = solve_path.to_solution(problem, "dask-ipm", model, cert, 0.0, decision=summary)
    assert sol.degenerate["training_accuracy"] == pytest.approx(_accuracy(X, y, sol, np.ones(y.size)), abs=1e-12)
    assert model.data.rounds - rounds == 1
    assert model.data.bytes_received - received <= model.data.k * 16 * 8  # a few numbers per partition


def test_an_unfinished_fit_on_a_cluster_notes_features_far_from_order_one(client):
    X, y = _separated(seed=6)
    X = X * np.array([1e5, 1.0, 1.0, 1.0])
    problem = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(1e-2))
    model = distributed_model(problem, da.from_array(X, chunks=(300, 4)), y, client=client)
    cert, _ = solve_path.certify_with_decision("dask-ipm", model, Result(w=np.zeros(4), b=0.0, status="max_iter"))
    assert cert.status == "max_iter"
    scale = np.abs(X).max(axis=0)
    assert f"the features' scales differ by a factor of {scale.max() / scale.min():.3g}" in cert.message
    assert "feature 0" in cert.message and "StandardScaler" in cert.message
    # a claimed optimum the certificate does not confirm: the scales in a round of their own
    rounds = model.data.rounds
    claimed = Result(w=np.zeros(4), b=0.0, status="optimal", dual_value=-1.0, dual_feasible=True)
    cert, _ = solve_path.certify_with_decision("dask-ipm", model, claimed)
    assert cert.status == "inaccurate" and "StandardScaler" in cert.message
    assert model.data.rounds - rounds == 2

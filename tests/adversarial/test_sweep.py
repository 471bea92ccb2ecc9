"""Property-based sweep: random models on small real data, every accepting backend against Clarabel.

Each example draws a set type, a radius (scalar or per sample), a data scale, signs, a loss, a
penalty and an intercept, solves the model with every registered backend that accepts it, and
checks that the backend's recomputed objective exceeds the optimum by at most its reported gap.
The optimum comes from Clarabel on a well-scaled copy: the model on ``X`` with ``λ2/s²``, ``λ1/s``
and radii ``r/s`` has at ``w' = s·w`` the objective values of the model on ``s·X`` at ``w`` (every support function is
positively homogeneous). The points must satisfy the signs exactly.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import robustsvm as rs
from robustsvm.exceptions import SolverError

#: backends of the sweep (kernel-only and external ones aside); each runs when it accepts the model
BACKENDS = ("clarabel", "scs", "osqp", "highs", "dcd", "frank-wolfe", "pegasos", "m3", "pq")
#: iteration caps that keep the first-order backends fast (their gap must hold wherever they stop)
CAPS = {"frank-wolfe": 300, "pegasos": 300, "m3": 2000, "dcd": 200, "pq": 2000}
N, D = 40, 4


@dataclass
class Counts:
    models: int = 0
    runs: int = 0
    failures: list = field(default_factory=list)
    by_backend: dict = field(default_factory=dict)


COUNTS = Counts()


@pytest.fixture(scope="module")
def data():
    ds = rs.datasets.load("wdbc")
    rng = np.random.default_rng(0)
    idx = rng.choice(ds.X.shape[0], N, replace=False)
    X = ds.X[idx][:, [0, 1, 4, 7]]
    return (X - X.mean(0)) / X.std(0), ds.y[idx]


def _set(kind: str, radius, d: int):
    if kind == "box":
        return rs.Box(radius)
    if kind == "ball2":
        return rs.Ball(radius, p=2)
    if kind == "ball1":
        return rs.Ball(radius, p=1)
    if kind == "ballinf":
        return rs.Ball(radius, p=np.inf)
    if kind == "ellipsoid":
        return rs.Ellipsoid(np.diag(np.linspace(0.5, 2.0, d)), radius)
    if kind == "polyhedron":
        G = np.vstack([np.eye(d), -np.eye(d), np.ones((1, d))])
        h = np.concatenate([np.ones(2 * d), [d / 3]])
        return rs.Polyhedron(G, h, radius=radius)
    if kind == "intersection":
        return rs.Intersection(rs.Box(1.0), rs.Ball(1.0, p=2), radius=radius)
    return None


model_strategy = st.fixed_dictionaries({
    "set": st.sampled_from(["none", "box", "ball2", "ball1", "ballinf", "ellipsoid", "polyhedron", "intersection"]),
    "radius": st.sampled_from([0.01, 0.1, 0.3]),
    "per_sample": st.booleans(),
    "scale_exp": st.integers(-3, 3),
    "signs": st.lists(st.sampled_from([-1, 0, 1]), min_size=D, max_size=D),
    "loss": st.sampled_from(["hinge", "squared_hinge_sum", "hinge_sum"]),
    "l2": st.sampled_from([0.0, 1e-3, 1e-1]),
    "l1": st.sampled_from([0.0, 1e-2]),
    "intercept": st.sampled_from(["free", "none", "ridge"]),
})


def _problem(m: dict, scale: float):
    """The drawn model with ``λ2·scale²``, ``λ1·scale`` and radii ``r·scale``."""
    loss = {"hinge": rs.Hinge(), "squared_hinge_sum": rs.SquaredHinge(reduction="sum"),
            "hinge_sum": rs.Hinge(reduction="sum")}[m["loss"]]
    l2 = m["l2"] if m["l2"] > 0 or m["l1"] > 0 else 1e-2
    penalty = None
    if l2 > 0:
        penalty = rs.L2(l2 * scale ** 2)
    if m["l1"] > 0:
        penalty = rs.L1(m["l1"] * scale) if penalty is None else penalty + rs.L1(m["l1"] * scale)
    radius = m["radius"] * scale
    if m["per_sample"]:
        radius = radius * np.linspace(0.2, 1.0, N)
    unc = None if m["set"] == "none" else _set(m["set"], radius, D)
    intercept = {"free": True, "none": False, "ridge": rs.L2(2.0)}[m["intercept"]]
    return rs.Problem(loss=loss, penalty=penalty, signs=np.array(m["signs"]), uncertainty=unc, intercept=intercept)


_SETTINGS = dict(deadline=None, derandomize=True, phases=[Phase.explicit, Phase.generate],
                 suppress_health_check=[HealthCheck.function_scoped_fixture])


@settings(max_examples=8, **_SETTINGS)
@given(m=model_strategy)
def test_every_backend_gap_bounds_its_distance_to_clarabel(data, m):
    _check_model(data, m)


@pytest.mark.slow
@settings(max_examples=30, **_SETTINGS)
@given(m=model_strategy)
def test_every_backend_gap_bounds_its_distance_to_clarabel_wide(data, m):
    _check_model(data, m)


def _check_model(data, m: dict) -> None:
    X, y = data
    s = 10.0 ** m["scale_exp"]
    model = _problem(m, 1.0)           # stated on the data s·X ...
    copy = _problem(m, 1.0 / s)        # ... and on X with w' = s·w, λ2/s², λ1/s, r/s: the same optimum
    Xs = X * s
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = copy.solve(X, y, "clarabel", tol=1e-10)
    optimum = ref.objective
    COUNTS.models += 1
    accepting = [r["name"] for r in rs.solvers(model) if r["accepts"] and r["name"] in BACKENDS]
    assert "clarabel" in accepting
    for name in accepting:
        options = {"max_iter": CAPS[name]} if name in CAPS else {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                sol = model.solve(Xs, y, name, **options)
            except SolverError as exc:  # refusing is allowed; a wrong answer is not
                COUNTS.by_backend.setdefault(name, [0, 0])[1] += 1
                assert "returned status" in str(exc)
                continue
        COUNTS.runs += 1
        COUNTS.by_backend.setdefault(name, [0, 0])[0] += 1
        excess = sol.objective - optimum
        ok = excess <= sol.gap + 1e-7 * max(1.0, abs(optimum)) and np.all(model_signs(m) * sol.w >= 0)
        if not ok:
            COUNTS.failures.append((name, m, sol.objective, optimum, sol.gap, sol.status))
        assert ok, (name, repr(m), sol.objective, optimum, sol.gap, sol.status)


def model_signs(m: dict) -> np.ndarray:
    return np.array(m["signs"], dtype=float)


def test_sweep_counts_report():
    """Runs after the sweep (file order): prints the counts; the sweep must have exercised several backends."""
    print(f"\nsweep: {COUNTS.models} models, {COUNTS.runs} backend runs, "
          f"backends {sorted(COUNTS.by_backend)} (runs, refusals): {COUNTS.by_backend}, "
          f"failures {len(COUNTS.failures)}")
    if COUNTS.models:
        assert len(COUNTS.by_backend) >= 4
        assert not COUNTS.failures

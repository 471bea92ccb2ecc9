"""Backends declare what they need; refusals and rs.solvers(problem) are derived from it.

The toy backend below follows the "add a backend" recipe of docs/architecture.md.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize

import robustsvm as rs
from robustsvm.backends.registry import Backend, Needs, Result, register, unregister
from robustsvm.objective import objective

from .conftest import make_classification


def _solve_toy(model, *, tol=None, max_iter=None, verbose=False, random_state=None):
    """Squared hinge + L2, signs as bounds, no intercept: L-BFGS-B on the smooth primal."""
    X, y, c = model.X, model.y, model.c

    def f(w):
        r = np.maximum(0.0, 1.0 - y * (X @ w))
        return 0.5 * model.l2 * w @ w + c @ r**2, model.l2 * w - X.T @ (2.0 * c * r * y)

    bounds = [(0, None) if s > 0 else (None, 0) if s < 0 else (None, None) for s in model.signs]
    res = minimize(f, np.zeros(model.d), jac=True, method="L-BFGS-B", bounds=bounds,
                   options={"gtol": 1e-12, "ftol": 1e-15, "maxiter": max_iter or 15000})
    return Result(w=res.x, b=0.0, status="optimal" if res.success else "max_iter", iterations=res.nit)


TOY = Backend(
    name="toy-lbfgs",
    solve=_solve_toy,
    needs=Needs(losses=frozenset({"squared_hinge"}), l2="required", l1=False, intercepts=frozenset({"none"})),
    summary="L-BFGS-B on the nominal squared-hinge model (a test backend)",
)


@pytest.fixture
def toy():
    register(TOY)
    yield TOY
    unregister(TOY.name)


def test_toy_backend_is_listed_with_derived_reasons(toy):
    ok = rs.Problem(loss=rs.SquaredHinge(), penalty=rs.L2(0.5), signs=[1, 0, -1], intercept=False)
    rows = {r["name"]: r for r in rs.solvers(ok)}
    assert rows["toy-lbfgs"]["accepts"] and rows["toy-lbfgs"]["reasons"] == []
    bad = rs.Problem(loss=rs.Hinge(), penalty=rs.L1(0.1), uncertainty=rs.Box(0.1))
    reasons = {r["name"]: r for r in rs.solvers(bad)}["toy-lbfgs"]["reasons"]
    text = "; ".join(reasons)
    for word in ("squared_hinge", "L1", "positive strength", "free intercept", "uncertainty"):
        assert word in text, (word, text)
    X, y = make_classification(30, 3, seed=0)
    with pytest.raises(rs.UnsupportedModelError, match="backends that can"):
        bad.solve(X, y, solver="toy-lbfgs")


def test_toy_backend_solves_on_the_normalized_model(toy):
    X, y = make_classification(60, 3, seed=1)
    prob = rs.Problem(loss=rs.SquaredHinge(), penalty=rs.L2(0.5), signs=[1, 0, -1], intercept=False)
    sol = prob.solve(X, y, solver="toy-lbfgs")
    ref = prob.solve(X, y, solver="clarabel", solver_options={"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10})
    assert sol.objective == pytest.approx(ref.objective, rel=1e-6)
    assert sol.objective == objective(prob.normalize(X, y), sol.w, 0.0)
    assert sol.violation == 0.0


def test_kernel_needs_are_separate():
    prob = rs.Problem(penalty=rs.L2(1.0), kernel=rs.RBF(1.0), intercept=False)
    rows = {r["name"]: r for r in rs.solvers(prob)}
    assert rows["m3"]["accepts"] and rows["clarabel"]["accepts"]
    assert not rows["dcd"]["accepts"] and "kernels" in rows["dcd"]["reasons"][0]


def test_register_twice_is_an_error(toy):
    with pytest.raises(ValueError, match="already registered"):
        register(TOY)
    with pytest.raises(ValueError, match="no backend named"):
        unregister("no-such-backend")


def test_default_lists_leave_the_distributed_backends_out():
    """``compare`` and the CLI's default list run on in-memory data: no backend that needs a cluster."""
    import robustsvm.backends  # noqa: F401  (every backend registered, the distributed ones included)
    from robustsvm.backends.conic import default_backends
    from robustsvm.backends.registry import capable_backends, get_backend

    for V in (None, rs.Ball(0.1), rs.Box(0.1)):
        problem = rs.Problem(penalty=rs.L2(0.1), uncertainty=V)
        listed = default_backends(problem)
        assert "clarabel" in listed
        assert all(get_backend(name).kind != "distributed" for name in listed)
        assert {"dask-ipm", "dask-cocoa"} & set(capable_backends(problem))  # they exist, they are only left out

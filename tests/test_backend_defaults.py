"""Backend defaults (``tol``, ``max_iter``, ``time_limit``) are declared once, on the registration.

The solve path passes the declared values (``Backend.defaults``, and ``Backend.mode_defaults`` for a
mode an option selects), and a backend called without them runs exactly as with them: its module
holds no second, different copy.
"""

from __future__ import annotations

import dataclasses
import inspect

import numpy as np
import pytest

import robustsvm as rs
from robustsvm import solve_path
from robustsvm._validation import check_fit_data
from robustsvm.backends import pq as pq_module
from robustsvm.backends import registry
from robustsvm.model import normalize


def _data(n: int = 40, d: int = 4, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.where(X[:, 0] + 0.5 * rng.standard_normal(n) > 0, 1, -1)
    return X, y


#: problems tried in turn: each backend is checked on the first one it accepts
CANDIDATES = [
    rs.Problem(loss=rs.Hinge(), penalty=rs.L2(1.0), uncertainty=rs.Box(0.1)),
    rs.Problem(loss=rs.Hinge(), penalty=rs.L2(1.0)),
    rs.pq_svm(nu=0.5, lam2=2.0, radius=0.1),
    rs.Problem(loss=rs.Logistic(), penalty=rs.L2(1.0)),
]


class _StopError(Exception):
    pass


def _spy(monkeypatch, backend):
    """Replace ``backend`` by a copy whose ``solve`` records its keyword arguments and stops."""
    seen: dict = {}

    def solve(model, **kwargs):
        seen.update(kwargs)
        raise _StopError

    monkeypatch.setitem(registry._REGISTRY, backend.name, dataclasses.replace(backend, solve=solve))
    return seen


@pytest.mark.parametrize("name", sorted(registry._REGISTRY))
def test_the_path_passes_the_declared_defaults(monkeypatch, name):
    backend = registry.get_backend(name)
    problem = next((p for p in CANDIDATES if backend.accepts(p)), None)
    assert problem is not None, f"no candidate problem for {name}"
    seen = _spy(monkeypatch, backend)
    X, y = _data()
    with pytest.raises(_StopError):
        problem.solve(X, y, name)
    for key in registry.DEFAULTED_OPTIONS:
        assert seen.get(key) == backend.defaults.get(key), (name, key)
    # a value the caller gives wins over the declaration
    with pytest.raises(_StopError):
        problem.solve(X, y, name, tol=3e-3, max_iter=7)
    assert (seen["tol"], seen["max_iter"]) == (3e-3, 7)


def test_pq_declares_both_modes_and_the_path_passes_the_papers_limits(monkeypatch):
    backend = registry.get_backend("pq")
    assert backend.defaults == pq_module.DEFAULTS == {"tol": 1e-8, "max_iter": 100_000}
    assert backend.mode_defaults == {"paper": pq_module.PAPER_DEFAULTS}
    assert pq_module.PAPER_DEFAULTS == {"tol": 1e-4, "max_iter": 1000}  # Woolnough et al. (2022), §5.1
    seen = _spy(monkeypatch, backend)
    X, y = _data()
    with pytest.raises(_StopError):
        rs.pq_svm(nu=0.5, lam2=2.0, radius=0.1).solve(X, y, "pq", paper=True)
    assert (seen["tol"], seen["max_iter"]) == (1e-4, 1000)
    with pytest.raises(_StopError):
        rs.pq_svm(nu=0.5, lam2=2.0, radius=0.1).solve(X, y, "pq", paper=False)
    assert (seen["tol"], seen["max_iter"]) == (1e-8, 100_000)
    # the module's public iterations default to the same declaration
    for func, limits in ((pq_module.pq_solve, pq_module.DEFAULTS),
                         (pq_module.pq_solve_paper, pq_module.PAPER_DEFAULTS)):
        params = inspect.signature(func).parameters
        assert (params["tol"].default, params["max_iter"].default) == (limits["tol"], limits["max_iter"])


@pytest.mark.parametrize("name, problem, mode", [
    ("pq", rs.pq_svm(nu=0.5, lam2=2.0, radius=0.1), {}),
    ("pq", rs.pq_svm(nu=0.5, lam2=2.0, radius=0.1), {"paper": True}),
    ("frank-wolfe", CANDIDATES[1], {}),
    ("pegasos", CANDIDATES[1], {"random_state": 0}),
    ("m3", rs.Problem(loss=rs.Hinge(), penalty=rs.L2(1.0), intercept=False), {}),
    ("ordered-dcd", rs.Problem(loss=rs.Hinge(), penalty=rs.L2(0.01), constraints=[rs.Increasing([1, 0, 2])]), {}),
])
def test_a_backend_called_without_limits_runs_with_the_declared_ones(name, problem, mode):
    backend = registry.get_backend(name)
    X, y = _data()
    model = normalize(problem, check_fit_data(X, y, signs=problem.signs))
    declared = backend.defaults_for(mode)
    assert declared, name
    bare = backend.solve(model, **mode)
    explicit = backend.solve(model, **mode, **declared)
    assert (bare.iterations, bare.status) == (explicit.iterations, explicit.status)
    np.testing.assert_array_equal(bare.w, explicit.w)
    # and a limit that differs from the declaration changes the run (the comparison can fail)
    short = backend.solve(model, **mode, tol=declared["tol"], max_iter=2)
    assert short.iterations <= 2 < max(bare.iterations, 3)


# the conic backends with a time limit that this installation has (cvxpy registers the installed solvers)
TIME_LIMITED = [name for name in ("highs", "osqp") if name in registry._REGISTRY]


@pytest.mark.parametrize("name", TIME_LIMITED)
def test_conic_time_limit_is_declared_once(monkeypatch, name):
    from robustsvm.backends import conic

    backend = registry.get_backend(name)
    assert backend.defaults == {"time_limit": conic.DEFAULT_TIME_LIMIT[name.upper()]}
    # the backend itself adds no limit of its own: only what it is passed reaches the solver
    assert conic._with_time_limit(name.upper(), None, {}) == {}
    assert conic._with_time_limit(name.upper(), 5.0, {}) == {"time_limit": 5.0}


def test_a_declaration_is_checked():
    base = registry.get_backend("frank-wolfe")
    with pytest.raises(ValueError, match="tol, max_iter and time_limit only"):
        dataclasses.replace(base, defaults={"step": 1.0})
    with pytest.raises(ValueError, match="does not accept"):
        dataclasses.replace(base, mode_defaults={"paper": {"tol": 1e-3}})
    with pytest.raises(ValueError, match="tol, max_iter and time_limit only"):
        dataclasses.replace(registry.get_backend("pq"), mode_defaults={"paper": {"step": 1.0}})
    assert solve_path.with_defaults(registry.get_backend("pq"), {"paper": True})["max_iter"] == 1000

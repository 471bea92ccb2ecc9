"""Every solve runs its BLAS on one thread, and leaves the caller's thread counts as they were.

Reference: threadpoolctl's own report of each loaded BLAS library's thread count, read inside the backend's work
and inside the certifier.
"""

from __future__ import annotations

from functools import partial

import pytest
from threadpoolctl import threadpool_info, threadpool_limits

import robustsvm as rs
import robustsvm.backends.shared_set as shared_set
import robustsvm.objective as objective

from .conftest import make_classification


def _blas_threads():
    """Each loaded BLAS library's thread count, by its file."""
    return {i["filepath"]: int(i["num_threads"]) for i in threadpool_info() if i.get("user_api") == "blas"}


def _recording(seen, function):
    """``function`` that appends the BLAS thread counts to ``seen`` at each call."""
    def wrapped(*args, **kwargs):
        seen.append(_blas_threads())
        return function(*args, **kwargs)
    return wrapped


@pytest.mark.parametrize(("solver", "uncertainty"), [("dcd", None), ("robust-dcd", rs.Box(0.05)),
                                                     ("feature-ipm", rs.Ball(0.1)), ("clarabel", rs.Box(0.05))])
def test_a_solve_and_its_certificate_run_on_one_blas_thread(solver, uncertainty, monkeypatch):
    X, y = make_classification(300, 6, seed=4)
    seen = []
    recording = partial(_recording, seen)

    # the objective the certifier evaluates, and the one the shared-set backends' own certificates evaluate (from
    # the margins, or for a nominal soft margin from X w)
    monkeypatch.setattr(objective, "objective_from_margins", recording(objective.objective_from_margins))
    monkeypatch.setattr(shared_set, "objective_from_margins", recording(shared_set.objective_from_margins))
    monkeypatch.setattr(objective, "nominal_soft_margin", recording(objective.nominal_soft_margin))
    monkeypatch.setattr(shared_set, "nominal_soft_margin", recording(shared_set.nominal_soft_margin))
    with threadpool_limits(limits=2, user_api="blas"):
        before = _blas_threads()
        sol = rs.Problem(penalty=rs.L2(0.01), uncertainty=uncertainty).solve(X, y, solver=solver)
        after = _blas_threads()
    assert sol.status == "optimal"
    assert 2 in before.values() and all(after[lib] == before[lib] for lib in before)  # the caller's setting is back
    assert seen and all(set(threads.values()) == {1} for threads in seen)


def test_the_estimator_and_a_grid_run_on_one_blas_thread(monkeypatch):
    X, y = make_classification(200, 5, seed=5)
    seen = []
    recording = partial(_recording, seen)

    # the certifier's objective and dcd's own (a nominal soft margin: from X w)
    monkeypatch.setattr(objective, "objective_from_margins", recording(objective.objective_from_margins))
    monkeypatch.setattr(objective, "nominal_soft_margin", recording(objective.nominal_soft_margin))
    monkeypatch.setattr(shared_set, "nominal_soft_margin", recording(shared_set.nominal_soft_margin))
    with threadpool_limits(limits=2, user_api="blas"):
        before = _blas_threads()
        rs.RobustSVC(l2=0.1, solver="dcd").fit(X, y)
        rs.grid_search(rs.Problem(penalty=rs.L2(0.1)), X, y, {"l2": [0.1, 1.0]}, solver="dcd", cv=2)
        after = _blas_threads()
    assert 2 in before.values() and all(after[lib] == before[lib] for lib in before)
    assert len(seen) >= 3 and all(set(threads.values()) == {1} for threads in seen)


def test_a_nested_limit_sets_nothing_and_the_outer_one_restores(monkeypatch):
    from robustsvm.backends import threads

    with threadpool_limits(limits=2, user_api="blas"):
        before = _blas_threads()
        calls = []
        controller = threads._controller()
        original = controller.limit

        def counting(*args, **kwargs):
            calls.append(kwargs)
            return original(*args, **kwargs)

        monkeypatch.setattr(controller, "limit", counting)
        with threads.one_blas_thread():
            with threads.one_blas_thread():
                inner = _blas_threads()
            between = _blas_threads()
        after = _blas_threads()
    assert len(calls) == 1  # the outer context alone sets the limit
    assert set(inner.values()) == {1} and set(between.values()) == {1}  # the inner exit keeps the outer's limit
    assert 2 in before.values() and after == before

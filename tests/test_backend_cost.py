"""The cost model behind ``solver="auto"`` (robustsvm.backends.cost) and the choice it makes.

The choice is a function of the model and the data's shape only: these tests never time anything. They check
that the rule never picks a backend that refuses the model (over a matrix of model kinds), that it picks the
interior point for the tall noisy robust data where the first-order method falls back (issue 24's 20,000 × 400
case) and a first-order method for wide sparse nominal data, whatever moderate changes a refit makes to the
constants, and that the forms behave as flop counts should (more work, more time).
"""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest
import scipy.sparse as sp

import robustsvm as rs
from robustsvm import solve_path
from robustsvm.backends import cost, registry

SHAPES = {
    "small dense": cost.DataShape(n=200, d=6, nnz=1200),
    "tall dense": cost.DataShape(n=20000, d=400, nnz=8_000_000),
    "wide sparse": cost.DataShape(n=2000, d=100_000, nnz=100_000, sparse=True),
    "very tall": cost.DataShape(n=100_000, d=20, nnz=2_000_000),
}


def _models(d: int) -> dict[str, rs.Problem]:
    """One model of each kind the language states (losses, penalties, intercepts, signs, sets, kernels)."""
    ell = rs.Ellipsoid(np.eye(d), 0.1) if d <= 400 else rs.Ball(0.1)
    sets = {"none": None, "box": rs.Box(0.05), "ball2": rs.Ball(0.1), "ball1": rs.Ball(0.1, p=1),
            "ballinf": rs.Ball(0.1, p=math.inf), "ball3": rs.Ball(0.1, p=3), "ellipsoid": ell,
            "box&ball": rs.Box(0.1) & rs.Ball(0.2),
            "per-sample": [rs.Box(0.1), rs.Ball(0.1)] * 3}
    out = {}
    for name, V in sets.items():
        out[f"hinge/{name}"] = rs.Problem(penalty=rs.L2(1e-3), uncertainty=V)
    out["squared hinge, L1, signs"] = rs.Problem(loss=rs.SquaredHinge(), penalty=rs.L2(1e-3) + rs.L1(1e-4),
                                                 signs=np.r_[1, -1, np.zeros(d - 2)], uncertainty=rs.Box(0.1))
    out["sum of hinges, ridge intercept"] = rs.Problem(loss=rs.Hinge(reduction="sum"), penalty=rs.L2(1.0),
                                                       intercept=rs.L2(0.5))
    out["no intercept, L1 only"] = rs.Problem(penalty=rs.L1(1e-3), intercept=False, uncertainty=rs.Box(0.1))
    out["L2 = 0 robust"] = rs.Problem(penalty=rs.L2(0.0) + rs.L1(0.01), uncertainty=rs.Ball(0.1))
    out["hard margin"] = rs.Problem(loss=rs.HardMargin(), penalty=rs.L2(1.0), intercept=False)
    out["kernel"] = rs.Problem(penalty=rs.L2(0.1), kernel=rs.RBF(1.0), intercept=rs.L2(1.0))
    out["pq-SVM"] = rs.pq_svm(1.0, 0.1, 0.05)
    return out


@pytest.mark.parametrize("shape_name", list(SHAPES))
def test_auto_never_picks_a_backend_that_refuses_the_model(shape_name):
    shape = SHAPES[shape_name]
    for name, problem in _models(shape.d).items():
        chosen = solve_path.choose_backend(problem, shape)
        reasons = registry.get_backend(chosen).check(problem)
        assert reasons == [], f"{shape_name}, {name}: auto picked {chosen}, which refuses: {reasons}"
        if chosen != solve_path.FALLBACK:  # a candidate was picked: it is one the cost model knows
            assert chosen in cost.CANDIDATES


def _issue_case(V) -> tuple[rs.Problem, cost.DataShape]:
    n, d = 20000, 400
    return rs.Problem(penalty=rs.L2(1.0 / n), uncertainty=V), cost.DataShape(n=n, d=d, nnz=n * d)


def _wide_sparse_nominal(lam_n: float = 1.0) -> tuple[rs.Problem, cost.DataShape]:
    n, d = 2000, 100_000
    return rs.Problem(penalty=rs.L2(lam_n / n)), cost.DataShape(n=n, d=d, nnz=50 * n, sparse=True)


@pytest.mark.parametrize("V", [rs.Box(0.05), rs.Ball(0.2)], ids=["box", "ball"])
def test_tall_noisy_robust_data_go_to_feature_ipm(V):
    """20,000 × 400 at λ = 1/n: robust-dcd needs thousands of epochs there and falls back to Clarabel (issue 24)."""
    problem, shape = _issue_case(V)
    assert solve_path.choose_backend(problem, shape) == "feature-ipm"
    x = cost.cost_inputs(problem, shape)
    first_order = cost.predict("robust-dcd", x)
    assert first_order.falls_back or first_order.seconds > cost.predict("feature-ipm", x).seconds


@pytest.mark.parametrize("lam_n", [1.0, 10.0])
def test_wide_sparse_nominal_data_go_to_a_first_order_method(lam_n):
    problem, shape = _wide_sparse_nominal(lam_n)
    assert registry.get_backend("feature-ipm").accepts(problem)  # it could, with a 200,002-square system
    assert solve_path.choose_backend(problem, shape) in {"dcd", "robust-dcd"}


def _perturbed(table: dict, rng: np.random.Generator, spread: float) -> dict:
    """The constants with every work constant scaled by a factor in [1/spread, spread] and the epochs' level
    moved by as much."""
    out = copy.deepcopy(table)

    def scale(d: dict) -> None:
        for k, v in d.items():
            if isinstance(v, dict) and k != "epochs":
                scale(v)
            elif isinstance(v, float) and k != "iterations":
                d[k] = v * float(np.exp(rng.uniform(-np.log(spread), np.log(spread))))

    for name in cost.CANDIDATES:
        if name not in out:  # constants kept outside the grid's file (logistic-newton's)
            continue
        scale(out[name])
        if "epochs" in out[name]:
            out[name]["epochs"]["const"] += float(rng.uniform(-np.log(spread), np.log(spread)))
    return out


def test_the_clear_decisions_survive_moderate_changes_of_the_constants(monkeypatch):
    """A refit on another machine moves the constants; the decisions far from a boundary do not move."""
    base = copy.deepcopy(cost.constants())
    rng = np.random.default_rng(0)
    tall_box, tall_shape = _issue_case(rs.Box(0.05))
    wide, wide_shape = _wide_sparse_nominal()
    for _ in range(20):
        table = _perturbed(base, rng, spread=2.0)
        monkeypatch.setattr(cost, "constants", lambda path=None, table=table: table)
        assert solve_path.choose_backend(tall_box, tall_shape) == "feature-ipm"
        assert solve_path.choose_backend(wide, wide_shape) in {"dcd", "robust-dcd"}


def test_the_choice_reads_the_shape_and_the_row_scale_and_is_deterministic():
    """An object with a shape only is costed at the unit-variance row scale (its entries are never read), the
    same answer every time; an array's mean squared row norm is read exactly."""

    class ShapeOnly:
        shape = (20000, 400)

        def __array__(self, *args, **kwargs):
            raise AssertionError("the rule read the data")

    problem, shape = _issue_case(rs.Box(0.05))
    assert cost.DataShape.of(ShapeOnly()).sq_norm is None
    picks = {solve_path.choose_backend(problem, ShapeOnly()) for _ in range(5)}
    assert picks == {solve_path.choose_backend(problem, shape)}
    Xd = np.random.default_rng(1).normal(size=(40, 7))
    assert cost.DataShape.of(Xd).sq_norm == pytest.approx(np.mean(np.sum(Xd**2, axis=1)), rel=1e-12)
    X = sp.random(50, 3000, density=0.01, format="csr", random_state=0)
    read = cost.DataShape.of(X)
    assert (read.n, read.d, read.nnz, read.sparse) == (50, 3000, X.nnz, True)
    assert read.sq_norm == pytest.approx(np.mean(np.asarray(X.multiply(X).sum(axis=1))), rel=1e-12)
    model = rs.Problem(penalty=rs.L2(0.1), signs=np.r_[1, np.zeros(5)]).normalize(
        np.random.default_rng(0).normal(size=(30, 6)), np.r_[np.ones(15), -np.ones(15)])
    assert cost.DataShape.of(model).free == 5  # the resolved signs: one constrained feature


def test_the_forms_grow_with_the_work():
    table = cost.constants()
    base = cost.cost_inputs(rs.Problem(penalty=rs.L2(1e-3), uncertainty=rs.Box(0.1)),
                            cost.DataShape(n=5000, d=50, nnz=250_000))
    for name in cost.CANDIDATES:
        t0 = cost.predict(name, base, table).seconds
        more_rows = cost.predict(name, cost.CostInputs(**{**base.__dict__, "n": 10000, "nnz": 500_000}), table)
        more_cols = cost.predict(name, cost.CostInputs(**{**base.__dict__, "d": 100, "nnz": 500_000}), table)
        assert more_rows.seconds >= t0 and more_cols.seconds >= t0, name
    ipm_signs = cost.predict("feature-ipm", cost.CostInputs(**{**base.__dict__, "free": 0}), table)
    assert ipm_signs.seconds <= cost.predict("feature-ipm", base, table).seconds  # signs halve the system


def test_a_first_order_backend_likely_to_stop_short_is_charged_the_fall_back():
    """Predicted epochs beyond half the budget: the budget plus a Clarabel solve, so it is never preferred."""
    x = cost.cost_inputs(rs.Problem(loss=rs.Hinge(reduction="sum"), penalty=rs.L2(2.0**-10), uncertainty=rs.Box(0.1)),
                         cost.DataShape(n=5000, d=200, nnz=1_000_000))
    table = cost.constants()
    for name in ("dcd", "robust-dcd"):
        short = cost.CostInputs(**{**x.__dict__, "epoch_budget": 1})
        pred = cost.predict(name, short, table)
        assert pred.falls_back
        assert pred.seconds >= cost.predict("clarabel", short, table).seconds


def test_distributed_data_follow_the_documented_rule_and_stand_ins_cost_the_candidates(monkeypatch):
    """A Dask array goes to the distributed backend the documented rule names (``dask-ipm`` for dense data with at
    most 2048 features and twice as many rows, ``dask-cocoa`` otherwise: ``docs/distributed.md``), whatever the
    cost forms predict; a distributed candidate is costed by its in-memory counterpart's form until it registers
    its own."""
    toy = registry.Backend(name="toy-distributed-ipm", solve=lambda model, **o: None,
                           needs=registry.Needs(sets="any"), summary="a stand-in")
    registry.register(toy)
    try:
        monkeypatch.setattr(cost, "DISTRIBUTED_CANDIDATES", ("toy-distributed-ipm",))
        monkeypatch.setitem(cost.STAND_INS, "toy-distributed-ipm", "feature-ipm")
        problem, shape = _issue_case(rs.Box(0.05))
        dask_shape = cost.DataShape(n=shape.n, d=shape.d, nnz=shape.nnz, distributed=True)
        assert shape.d <= 2048 and solve_path.choose_backend(problem, dask_shape) == "dask-ipm"
        sparse = cost.DataShape(n=shape.n, d=shape.d, nnz=shape.nnz // 10, sparse=True, distributed=True)
        wide = cost.DataShape(n=shape.n, d=2100, nnz=shape.n * 2100, distributed=True)
        assert solve_path.choose_backend(problem, sparse) == solve_path.choose_backend(problem, wide) == "dask-cocoa"
        assert solve_path.choose_backend(problem, shape) == "feature-ipm"  # in memory: the usual candidates
        x = cost.cost_inputs(problem, shape)
        assert cost.predict("toy-distributed-ipm", x).seconds == cost.predict("feature-ipm", x).seconds
    finally:
        registry.unregister(toy.name)


def test_lookup_and_choose_take_the_number_of_features_alone():
    """Callers that know only d (the old signature) still get an answer: tall data are assumed."""
    problem = rs.Problem(penalty=rs.L2(1e-3), uncertainty=rs.Box(0.1))
    assert solve_path.lookup("auto", problem, 30).name == solve_path.choose_backend(problem, 30)
    with pytest.raises(ValueError, match="needs the model and the data"):
        solve_path.lookup("auto", problem)
    with pytest.raises(TypeError, match="2-D array"):
        cost.DataShape.of(np.ones(3))


def test_the_epochs_see_the_conditioning_through_c_times_the_row_scale():
    """Rows scaled by ``t`` with ``λ2`` scaled by ``t²`` (and a set by ``t``) are the same problem (``w → w/t``):
    the same predicted epochs. Rows of unit norm (MNIST-shaped data) are predicted far fewer epochs than entries of unit
    variance at the same ``λ2``, and the first-order backend is chosen for them."""
    n, d = 60000, 784
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 50))
    for V in (None, rs.Box(0.05), rs.Ball(0.2)):
        for name in ("dcd", "robust-dcd"):
            if name == "dcd" and V is not None:
                continue
            base = cost.cost_inputs(rs.Problem(penalty=rs.L2(1e-3), uncertainty=V), cost.DataShape.of(X))
            scaled = cost.cost_inputs(rs.Problem(penalty=rs.L2(1e-3 / 9.0), uncertainty=V),
                                      cost.DataShape.of(X / 3.0))
            assert cost.predict(name, scaled).iterations == pytest.approx(cost.predict(name, base).iterations,
                                                                             rel=1e-9)
        unit = cost.cost_inputs(rs.Problem(penalty=rs.L2(1.0 / n), uncertainty=V),
                                cost.DataShape(n, d, n * d, sq_norm=1.0))
        gauss = cost.cost_inputs(rs.Problem(penalty=rs.L2(1.0 / n), uncertainty=V),
                                 cost.DataShape(n, d, n * d, sq_norm=float(d)))
        first = "dcd" if V is None else "robust-dcd"
        assert cost.predict(first, unit).iterations < cost.predict(first, gauss).iterations / 10
        assert solve_path.choose_backend(rs.Problem(penalty=rs.L2(1.0 / n), uncertainty=V),
                                         cost.DataShape(n, d, n * d, sq_norm=1.0)) == first


def test_the_first_order_form_charges_its_certificates():
    """``T = E·(per epoch) + K(E)·(c₀ + c_nnz·nnz + c_n·n) + e + s·nnz`` with ``K(E) = e^κ₀ E^κ₁``: the form's time
    against the same sum computed here, and no certificate term without its constants (an older file)."""
    x = cost.cost_inputs(rs.Problem(penalty=rs.L2(1.0 / 3000)), cost.DataShape(n=3000, d=30, nnz=90_000))
    base = {"nnz": 2e-10, "n": 4e-8, "d": 2e-8, "fixed": 6e-4, "setup": 2e-8, "refresh": {"none": 4e-12},
            "epochs": {"const": 3.0, "log_CR2": 0.5}}
    bare = cost.predict("dcd", x, {"dcd": base})
    assert bare.terms["certificates"] == 0.0
    E = bare.iterations
    per = 2e-10 * 90_000 + 4e-8 * 3000 + 2e-8 * 30 + 4e-12 * 3000 * 30
    assert bare.seconds == pytest.approx(E * per + 6e-4 + 2e-8 * 90_000)
    table = {"dcd": {**base, "certificates": {"const": 0.2, "log_epochs": 0.5},
                     "certificate": {"fixed": 3e-4, "nnz": 5e-9, "n": 1e-8}}}
    pred = cost.predict("dcd", x, table)
    K = math.exp(0.2) * E ** 0.5
    assert pred.terms["certificates"] == pytest.approx(K)
    assert pred.seconds == pytest.approx(bare.seconds + K * (3e-4 + 5e-9 * 90_000 + 1e-8 * 3000))

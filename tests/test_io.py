"""Reference solutions: JSON round trips and re-validation against independent evaluations."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
import scipy.sparse as sp

import robustsvm as rs
from robustsvm.formats.io import data_fingerprint, solution_to_dict, uncertainty_from_dict

from .conftest import make_classification


def _hinge_objective(X, y01, w, b, lam):
    """(λ/2)‖w‖² + mean hinge, written out independently of the package."""
    y = np.where(y01 == 1, 1.0, -1.0)
    m = y * (X @ w + b)
    return 0.5 * lam * w @ w + np.mean(np.maximum(0.0, 1.0 - m))


@pytest.fixture(scope="module")
def solved():
    X, y = make_classification(70, 5, seed=3)
    prob = rs.Problem(penalty=rs.L2(0.1), signs=[1, 0, -1, 0, 0])
    sol = prob.solve(X, y, solver="clarabel")
    return X, y, prob, sol


def test_round_trip_restores_every_field(tmp_path, solved):
    X, y, prob, sol = solved
    path = sol.to_json(tmp_path / "sol.json", X, y)
    back = rs.Solution.from_json(path)
    np.testing.assert_array_equal(back.w, sol.w)
    assert back.b == sol.b and back.objective == sol.objective and back.gap == sol.gap
    assert (back.status, back.solver, back.iterations) == (sol.status, sol.solver, sol.iterations)
    np.testing.assert_array_equal(back.classes, sol.classes)
    assert set(back.history) == set(sol.history)
    for k in sol.history:
        np.testing.assert_array_equal(back.history[k], sol.history[k])  # NaN == NaN here
    # the model rebuilds to the same description
    assert back.problem.to_dict() == {**prob.to_dict(), "signs": [1, 0, -1, 0, 0]}
    # predictions identical
    np.testing.assert_array_equal(back.predict(X), sol.predict(X))


def test_file_is_strict_json_with_versions_and_fingerprint(tmp_path, solved):
    X, y, _, sol = solved
    path = sol.to_json(tmp_path / "sol.json", X, y)

    def refuse(const):
        raise AssertionError(f"non-standard JSON constant {const}")

    spec = json.loads(path.read_text(), parse_constant=refuse)
    for pkg in ("robustsvm", "numpy", "cvxpy", "clarabel", "scs"):
        assert spec["versions"][pkg]
    assert spec["data"]["shape"] == [70, 5]
    assert len(spec["data"]["sha256"]) == 64
    assert spec["model"]["penalty"] == {"l2": 0.1, "l1": 0.0}


def test_validate_recomputes_objective_independently(tmp_path, solved):
    X, y, _, sol = solved
    back = rs.Solution.from_json(sol.to_json(tmp_path / "s.json", X, y))
    report = rs.validate(back, X, y)
    assert report.ok, str(report)
    expected = _hinge_objective(X, y, back.w, back.b, 0.1)
    assert report.objective_recomputed == pytest.approx(expected, rel=1e-12)
    assert report.violation <= 1e-7
    assert "OK" in str(report)


def test_validate_flags_tampered_objective_and_signs(tmp_path, solved):
    X, y, _, sol = solved
    path = tmp_path / "s.json"
    sol.to_json(path, X, y)
    spec = json.loads(path.read_text())
    spec["w"][2] = 0.5  # feature 2 is constrained to w_2 <= 0
    path.write_text(json.dumps(spec))
    with pytest.warns(rs.formats.io.ModifiedSolutionWarning, match=r"w \(the weights\)"):
        report = rs.validate(rs.Solution.from_json(path, accept_modified=True), X, y)
    assert not report.ok
    assert report.violation == pytest.approx(0.5)
    text = " ".join(report.mismatches)
    assert "objective differs" in text and "constraints violated" in text
    w = np.asarray(spec["w"])
    assert report.objective_recomputed == pytest.approx(_hinge_objective(X, y, w, spec["b"], 0.1), rel=1e-12)


def test_validate_flags_other_data(tmp_path, solved):
    X, y, _, sol = solved
    back = rs.Solution.from_json(sol.to_json(tmp_path / "s.json", X, y))
    X2 = X.copy()
    X2[0, 0] += 1e-9
    report = rs.validate(back, X2, y)
    assert not report.ok and any("fingerprint" in m for m in report.mismatches)
    y2 = y.copy()
    y2[0] = 1 - y2[0]
    assert not rs.validate(back, X, y2).ok


def test_fingerprint_sparse_never_densified_and_stable():
    X, y = make_classification(40, 8, seed=2, sparse=True)
    fp = data_fingerprint(X, y)
    assert fp["format"] == "csr" and fp["shape"] == [40, 8]
    # an equal matrix stored differently (COO with the entries shuffled) has the same fingerprint
    coo = X.tocoo()
    perm = np.random.default_rng(0).permutation(coo.nnz)
    X2 = sp.coo_matrix((coo.data[perm], (coo.row[perm], coo.col[perm])), shape=X.shape).tocsr()
    assert data_fingerprint(X2, y)["sha256"] == fp["sha256"]
    X3 = X.copy()
    X3.data[0] *= 2
    assert data_fingerprint(X3, y)["sha256"] != fp["sha256"]
    # labels of another type but the same classes order give the same digest only if equal
    assert data_fingerprint(X, np.where(y == 1, "b", "a"))["sha256"] != fp["sha256"]


@pytest.mark.parametrize(
    "uncertainty",
    [rs.Box(radius=0.2), rs.Ball(radius=0.3), rs.Ball(radius=0.1, p=1), rs.Box(radius=0.1, widths=[1, 2, 1, 0.5])],
)
def test_robust_models_round_trip(tmp_path, uncertainty):
    X, y = make_classification(50, 4, seed=5)
    prob = rs.Problem(loss=rs.SquaredHinge(), penalty=rs.L2(0.05) + rs.L1(0.01), uncertainty=uncertainty,
                      intercept=rs.L2(0.5))
    sol = prob.solve(X, y)
    back = rs.Solution.from_json(sol.to_json(tmp_path / "r.json", X, y))
    assert back.problem.to_dict() == {**prob.to_dict(), "signs": [0, 0, 0, 0]}
    report = rs.validate(back, X, y)
    assert report.ok, str(report)
    # an independent evaluation of the robust objective with the support function written out
    Y = np.where(y == 1, 1.0, -1.0)
    delta = np.ones(4) if not hasattr(uncertainty, "widths") or uncertainty.widths is None else uncertainty.widths
    if isinstance(uncertainty, rs.Box):
        sigma = delta @ np.abs(back.w)
    else:
        sigma = np.linalg.norm(back.w, ord={2.0: 2, 1.0: np.inf}[uncertainty.p])
    m = Y * (X @ back.w + back.b) - uncertainty.radius * sigma
    expected = (0.025 * back.w @ back.w + 0.01 * np.abs(back.w).sum() + 0.25 * back.b**2
                + np.mean(np.maximum(0, 1 - m) ** 2))
    assert report.objective_recomputed == pytest.approx(expected, rel=1e-12)


def test_per_sample_radius_and_named_signs_round_trip(tmp_path):
    X, y = make_classification(30, 3, seed=7)
    radius = np.linspace(0.0, 0.2, 30)
    prob = rs.Problem(penalty=rs.L2(0.1), signs={"b": -1}, uncertainty=rs.Box(radius=radius))
    sol = prob.solve(X, y, feature_names=["a", "b", "c"])
    back = rs.Solution.from_json(sol.to_json(tmp_path / "p.json", X, y))
    np.testing.assert_array_equal(back.problem.uncertainty.radius, radius)
    assert back.problem.signs == [0, -1, 0]
    assert list(back.feature_names) == ["a", "b", "c"]
    assert rs.validate(back, X, y).ok


def test_kernel_expansion_objective_matches_linear_form():
    """A linear-kernel expansion a over points S is the linear model w = Sᵀa: same objective."""
    X, y = make_classification(40, 3, seed=4)
    rng = np.random.default_rng(0)
    S = X[:7]
    a = rng.normal(size=7)
    b = 0.3
    lin = rs.Problem(penalty=rs.L2(0.2))
    ker = rs.Problem(penalty=rs.L2(0.2), kernel=rs.Linear())
    sol = rs.Solution(w=None, b=b, objective=lin.objective(X, y, S.T @ a, b), gap=np.nan, status="optimal",
                      solver="test", iterations=0, time=0.0, time_compile=0.0, time_solve=0.0, history={},
                      violation=0.0, classes=np.array([0, 1]), problem=ker, dual_coef=a, support_vectors=S)
    report = rs.validate(sol, X, y)
    assert report.objective_recomputed == pytest.approx(lin.objective(X, y, S.T @ a, b), rel=1e-12)
    assert report.ok and any("fingerprint" in n for n in report.notes)


def test_kernel_solution_round_trips_support_vectors(tmp_path):
    X, _ = make_classification(20, 3, seed=4)
    S = sp.csr_matrix(X[:4] * (np.abs(X[:4]) > 0.5))
    sol = rs.Solution(w=None, b=0.0, objective=1.0, gap=np.nan, status="max_iter", solver="test", iterations=3,
                      time=0.0, time_compile=0.0, time_solve=0.0, history={"gap": np.array([np.nan, np.inf])},
                      violation=0.0, classes=np.array(["neg", "pos"]),
                      problem=rs.Problem(penalty=rs.L2(1.0), kernel=rs.RBF(0.7)),
                      dual_coef=np.arange(4.0), support_vectors=S)
    back = rs.Solution.from_json(sol.to_json(tmp_path / "k.json"))
    assert sp.issparse(back.support_vectors)
    assert (back.support_vectors != S).nnz == 0
    assert back.problem.kernel == rs.RBF(0.7)
    np.testing.assert_array_equal(back.history["gap"], [np.nan, np.inf])
    np.testing.assert_allclose(back.decision_function(X), sol.decision_function(X))
    assert list(back.classes) == ["neg", "pos"]


def test_bad_files_and_sets_raise(tmp_path, solved):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"hello": 1}))
    with pytest.raises(ValueError, match="not a stored robustsvm solution"):
        rs.Solution.from_json(bad)
    X, y, _, sol = solved
    spec = solution_to_dict(sol, X, y)
    spec["format_version"] = 99
    bad.write_text(json.dumps(spec))
    with pytest.raises(ValueError, match="version"):
        rs.Solution.from_json(bad)
    with pytest.raises(ValueError, match="unknown uncertainty set type"):
        uncertainty_from_dict({"type": "Banana", "radius": 1})
    with pytest.raises(ValueError, match="rtol"):
        rs.validate(sol, X, y, rtol=0)
    with pytest.raises(ValueError, match="features"):
        rs.validate(sol, X[:, :3], y)


def _other_sets():
    M = np.array([[2.0, 0.5], [0.5, 1.0]])
    G = np.vstack([np.eye(2), -np.eye(2), [[1.0, 1.0]]])
    h = np.array([1.0, 1.0, 1.0, 1.0, 1.5])
    # a slice of the 3 × 3 elliptope: [[1, v1, v2], [v1, 1, v2], [v2, v2, 1]] ⪰ 0
    A0 = np.eye(3)
    A1 = np.zeros((3, 3))
    A1[0, 1] = A1[1, 0] = 1.0
    A2 = np.zeros((3, 3))
    A2[0, 2] = A2[2, 0] = A2[1, 2] = A2[2, 1] = 1.0
    return [rs.Ellipsoid(shape=M, radius=0.2), rs.Polyhedron(G, h, radius=0.1),
            rs.Spectrahedron(A0, [A1, A2], radius=0.15), rs.Box(0.2) & rs.Ball(0.25)]


@pytest.mark.parametrize("index", range(4))
def test_every_set_type_round_trips_with_the_same_support(tmp_path, index):
    uset = _other_sets()[index]
    X, y = make_classification(30, 2, seed=index)
    prob = rs.Problem(penalty=rs.L2(0.1), uncertainty=uset)
    sol = prob.solve(X, y)
    back = rs.Solution.from_json(sol.to_json(tmp_path / "u.json", X, y))
    rebuilt = back.problem.uncertainty
    assert type(rebuilt) is type(uset)
    z = np.random.default_rng(index).normal(size=(5, 2))
    np.testing.assert_allclose([rebuilt.support(v) for v in z], [uset.support(v) for v in z], rtol=1e-6, atol=1e-8)
    assert back.problem.to_dict() == {**prob.to_dict(), "signs": [0, 0]}
    assert rs.validate(back, X, y, rtol=1e-7).ok


def test_kernel_solution_from_m3_validates_against_the_backends_objective(tmp_path):
    """The backend computes its kernel objective itself; validate recomputes it from the stored expansion."""
    X, y = make_classification(40, 3, seed=9)
    prob = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(0.1), kernel=rs.RBF(1.5), intercept=False)
    sol = prob.solve(X, y, solver="m3", tol=1e-8, max_iter=20000)
    ref = prob.solve(X, y, solver="clarabel")
    back = rs.Solution.from_json(sol.to_json(tmp_path / "m3.json", X, y))
    report = rs.validate(back, X, y, rtol=1e-9)
    assert report.ok, str(report)
    assert report.objective_recomputed == pytest.approx(ref.objective, rel=1e-5)
    np.testing.assert_allclose(back.decision_function(X), ref.decision_function(X), atol=1e-3)


def test_validate_flags_a_broken_hard_margin():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(30, 2))
    y = (X @ [1.0, -1.0] > 0).astype(int)
    X = X + 0.5 * np.outer(2 * y - 1, [1.0, -1.0])  # separable with a gap
    prob = rs.Problem(loss=rs.HardMargin(), penalty=rs.L2(1.0))
    sol = prob.solve(X, y)
    assert rs.validate(sol, X, y).ok
    moved = dataclasses.replace(sol, b=sol.b + 0.5)
    moved.objective = prob.objective(X, y, moved.w, moved.b)
    report = rs.validate(moved, X, y)
    margins = np.where(y == 1, 1.0, -1.0) * (X @ moved.w + moved.b)
    assert report.violation == pytest.approx(max(0.0, float(np.max(1 - margins))), rel=1e-12)
    assert report.violation > 0.1 and not report.ok
    assert any("constraints violated" in m for m in report.mismatches)


def _every_set(n: int):
    """One of each set type and parameter a user can write, for d = 2 and n samples."""
    return {
        "ball-p1": rs.Ball(0.2, p=1), "ball-p2": rs.Ball(0.2), "ball-pinf": rs.Ball(0.2, p=np.inf),
        "ball-p3": rs.Ball(0.2, p=3), "box": rs.Box(0.1), "box-widths": rs.Box(0.1, widths=[1.0, 2.5]),
        "ellipsoid": _other_sets()[0], "polyhedron": _other_sets()[1], "spectrahedron": _other_sets()[2],
        "intersection": rs.Box(0.2) & rs.Ball(0.25, p=np.inf),
        "intersection-radii": rs.Intersection(rs.Ball(0.3, p=np.inf), rs.Ball(0.2, p=1),
                                              radius=np.linspace(0.0, 0.3, n)),
        "ball-pinf-radii": rs.Ball(np.linspace(0.0, 0.3, n), p=np.inf),
        "per-sample-sets": [rs.Ball(0.1, p=np.inf) if i % 3 else rs.Box(0.2, widths=[0.5, 1.0]) for i in range(n)],
    }


@pytest.mark.parametrize("name", list(_every_set(30)))
def test_every_set_and_parameter_reads_back(tmp_path, name):
    """Write, read, validate: the rebuilt sets have the same parameters and the same support function."""
    X, y = make_classification(30, 2, seed=8)
    uset = _every_set(30)[name]
    prob = rs.Problem(penalty=rs.L2(0.1), uncertainty=uset)
    sol = prob.solve(X, y)
    path = sol.to_json(tmp_path / "s.json", X, y)
    json.loads(path.read_text(), parse_constant=lambda c: pytest.fail(f"non-standard JSON constant {c}"))
    back = rs.Solution.from_json(path)
    assert back.problem.to_dict() == {**prob.to_dict(), "signs": [0, 0]}
    originals = uset if isinstance(uset, list) else [uset]
    rebuilt = back.problem.uncertainty if isinstance(uset, list) else [back.problem.uncertainty]
    z = np.random.default_rng(0).normal(size=(4, 2))
    for a, b in zip(originals, rebuilt, strict=True):
        assert type(a) is type(b) and b.key() == a.key()
        np.testing.assert_array_equal(np.asarray(b.radius), np.asarray(a.radius))
        np.testing.assert_allclose([b.support(v) for v in z], [a.support(v) for v in z], rtol=1e-6, atol=1e-8)
    report = rs.validate(back, X, y, rtol=1e-7)
    assert report.ok, str(report)


def test_cli_validates_a_stored_infinity_ball(tmp_path):
    """`robustsvm validate` reads a Ball(p=inf) solution written by `robustsvm fit --output`."""
    import subprocess
    import sys

    out = tmp_path / "m.json"
    fit = subprocess.run([sys.executable, "-m", "robustsvm", "fit", "wdbc", "--uncertainty", "ball:0.05:inf",
                          "--output", str(out)], capture_output=True, text=True, timeout=600)
    assert fit.returncode == 0, fit.stderr
    assert rs.Solution.from_json(out).problem.uncertainty.p == np.inf
    check = subprocess.run([sys.executable, "-m", "robustsvm", "validate", str(out), "wdbc"], capture_output=True,
                           text=True, timeout=600)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "validation  OK" in check.stdout

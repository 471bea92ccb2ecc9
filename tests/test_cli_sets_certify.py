"""The command line's set grammar (read off the set table) and ``robustsvm certify``.

Sets parsed from text are compared with the same sets built in Python (equal ``key()`` and radius);
``certify``'s numbers are checked against a hand-written objective and a tight Clarabel reference
whose own certificate is checked.
"""

from __future__ import annotations

import argparse
import json
import warnings

import numpy as np
import pytest
from sklearn.svm import LinearSVC

import robustsvm as rs
from robustsvm.cli.main import load_data, main, parse_uncertainty
from robustsvm.uncertainty import SET_TYPES, SetSum
from robustsvm.uncertainty.grammar import parse_set, set_kinds


def _elliptope():
    A = np.zeros((3, 3, 3))
    for l, (i, j) in enumerate([(0, 1), (0, 2), (1, 2)]):
        A[l, i, j] = A[l, j, i] = 1.0
    return np.eye(3), A


@pytest.fixture
def set_files(tmp_path):
    G = np.vstack([np.eye(3), -np.eye(3), [[1.0, 1.0, 1.0]]])
    h = np.array([1.0, 2.0, 1.0, 1.0, 1.0, 2.0, 2.5])
    M = np.array([[2.0, 0.3, 0.0], [0.3, 1.0, 0.2], [0.0, 0.2, 0.5]])
    A0, A = _elliptope()
    files = {"G": tmp_path / "G.csv", "h": tmp_path / "h.txt", "M": tmp_path / "M.npy", "Mj": tmp_path / "M.json",
             "A0": tmp_path / "A0.npy", "A": tmp_path / "A.npy", "widths": tmp_path / "widths.csv"}
    np.savetxt(files["G"], G, delimiter=",")
    np.savetxt(files["h"], h)
    np.save(files["M"], M)
    files["Mj"].write_text(json.dumps(M.tolist()))
    np.save(files["A0"], A0)
    np.save(files["A"], A)
    np.savetxt(files["widths"], [0.5, 1.0, 2.0], delimiter=",")
    files["coords"] = tmp_path / "coordinates.csv"
    np.savetxt(files["coords"], [0, 2, 4], delimiter=",")
    return files, {"G": G, "h": h, "M": M, "A0": A0, "A": A, "widths": np.array([0.5, 1.0, 2.0])}


def _same(a, b):
    assert type(a) is type(b) and a.key() == b.key() and np.array_equal(np.asarray(a.radius), np.asarray(b.radius))


def test_every_set_type_of_the_table_can_be_named(set_files):
    f, v = set_files
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the elliptope's arrow-LMI hint
        cases = {
            "box:0.05": rs.Box(0.05),
            f"box:0.05:widths={f['widths']}": rs.Box(0.05, widths=v["widths"]),
            "ball:0.1": rs.Ball(0.1),
            "ball:0.1:p=inf": rs.Ball(0.1, p=np.inf),
            "Ball:0.5:inf": rs.Ball(0.5, p=np.inf),  # today's positional form
            "ball:0.2:1.5": rs.Ball(0.2, p=1.5),
            f"ellipsoid:0.3:shape={f['M']}": rs.Ellipsoid(v["M"], 0.3),
            f"ellipsoid:0.3:shape={f['Mj']}": rs.Ellipsoid(v["M"], 0.3),
            f"polyhedron:1:G={f['G']}:h={f['h']}": rs.Polyhedron(v["G"], v["h"]),
            f"polyhedron:1:{f['G']}:{f['h']}": rs.Polyhedron(v["G"], v["h"]),
            f"spectrahedron:0.5:A0={f['A0']}:A={f['A']}": rs.Spectrahedron(v["A0"], v["A"], radius=0.5),
            "box:0.1&ball:0.2": rs.Box(0.1) & rs.Ball(0.2),
            f"coordinateellipsoid:2:shape={f['Mj']}:coordinates={f['coords']}:n_features=5":
                rs.CoordinateEllipsoid(v["M"], [0, 2, 4], 5, radius=2.0),
            f"box:0.3 & polyhedron:1:G={f['G']}:h={f['h']}": rs.Box(0.3) & rs.Polyhedron(v["G"], v["h"]),
            f"box:1e-2 + ellipsoid:0.2:shape={f['M']}": rs.Box(0.01) + rs.Ellipsoid(v["M"], radius=0.2),
            "box:0.1+ball:0.2&ball:1e+0": (rs.Box(0.1) + rs.Ball(0.2)) & rs.Ball(1.0),
        }
        named = set()
        for text, expected in cases.items():
            got = parse_uncertainty(text)
            _same(got, expected)
            if isinstance(got, (rs.Intersection, SetSum)):
                _same(got.first, expected.first)
                _same(got.second, expected.second)
                named.update({type(got).__name__, type(got.first).__name__, type(got.second).__name__})
            else:
                named.add(type(got).__name__)
    # every type of the package a user can build in Python (other tests add their own types to the table)
    assert named == {name for name, cls in SET_TYPES.items() if cls.__module__.startswith("robustsvm.")}


@pytest.mark.parametrize(("text", "reason"), [
    ("box", "needs a radius"), ("box:-1", "radius"), ("ball:1:0.5", "p must be"), ("box:1:2", "widths"),
    ("cube:1", "unknown set kind 'cube'"), ("ball:x", "must be a number"), ("ellipsoid:1", "needs shape"),
    ("ellipsoid:1:shape=missing.npy", "no such file"), ("ball:1:q=2", "no parameter 'q'"),
    ("ball:1:2:3", "too many values"), ("box:1&", "empty term"), ("ball:1:p=2:p=3", "given twice"),
    ("polyhedron:1:G=G.xls:h=1", "neither a number nor a file"),
])
def test_bad_sets_get_one_line_reasons(text, reason):
    with pytest.raises(argparse.ArgumentTypeError, match=reason) as info:
        parse_uncertainty(text)
    assert "\n" not in str(info.value)


def test_the_grammar_comes_from_the_set_table():
    class Slab(rs.UncertaintySet):  # |v_1| ≤ t, |v_h| ≤ 1 otherwise: a new type, named at once
        symmetric = True

        def __init__(self, radius=1.0, thickness=1.0):
            super().__init__(radius)
            self.thickness = float(thickness)

        def _delta(self, d):
            return np.r_[self.thickness, np.ones(d - 1)]

        def support(self, z):
            return np.abs(np.asarray(z)) @ self._delta(np.shape(z)[-1])

        def support_cvx(self, z):
            return self._delta(z.shape[0]) @ abs(z), []

        def worst_case(self, z):
            return np.sign(z) * self._delta(len(z))

        def contains(self, v, tol=1e-8):
            return bool(np.all(np.abs(v) <= self._delta(len(v)) + tol))

        def key(self):
            return ("Slab", self.thickness)

    try:
        assert "slab" in set_kinds()
        s = parse_set("slab:0.2:thickness=3")
        assert isinstance(s, Slab) and s.thickness == 3.0 and s.radius == 0.2
    finally:
        SET_TYPES.pop("Slab", None)
    assert "slab" not in set_kinds()


def test_fit_with_a_set_from_files_and_a_bad_set_on_the_command_line(set_files, capsys, tmp_path):
    f, _ = set_files
    csv = tmp_path / "data.csv"
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = np.where(X @ np.array([1.0, -1.0, 0.5]) > 0, "yes", "no")
    with csv.open("w") as fh:
        fh.write("a,b,c,label\n")
        for row, lab in zip(X, y, strict=True):
            fh.write(",".join(f"{x:.17g}" for x in row) + f",{lab}\n")
    assert main(["fit", str(csv), "--uncertainty", f"polyhedron:0.1:G={f['G']}:h={f['h']}", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["model"]["uncertainty"]["type"] == "Polyhedron" and doc["solution"]["status"] == "optimal"
    with pytest.raises(SystemExit) as info:
        main(["fit", str(csv), "--uncertainty", "cube:1"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "unknown set kind 'cube'" in err and "box[widths], ball[p]" in err


def test_a_wasserstein_ball_on_the_command_line(capsys, tmp_path):
    """``wasserstein:EPS[:kappa=K][:norm=P]`` is read off the table of sets of distributions, is written alone,
    and the fit is the model rs.Wasserstein gives in Python (objectives within the two certified gaps)."""
    assert "wasserstein" in set_kinds()
    ball = parse_set("Wasserstein:0.1:kappa=2:norm=inf")
    assert (ball.eps, ball.kappa, ball.norm) == (0.1, 2.0, np.inf)
    assert parse_set("wasserstein:0.05:1.5") == rs.Wasserstein(0.05, kappa=1.5)
    for text, reason in (("wasserstein:0.1&box:0.1", "write it alone, not joined by &"),
                         ("box:0.1+wasserstein:0.1", "write it alone, not joined by \\+"),
                         ("wasserstein:0.1:eps=2", "no parameter 'eps'"),
                         ("wasserstein:0.1:norm=3", "norm must be 1, 2 or inf")):
        with pytest.raises(argparse.ArgumentTypeError, match=reason):
            parse_uncertainty(text)
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 3))
    y = np.where(X @ np.array([1.0, -0.5, 0.2]) + 0.3 * rng.normal(size=60) > 0, 1, 0)
    csv = tmp_path / "data.csv"
    with csv.open("w") as fh:
        fh.write("a,b,c,label\n")
        for row, lab in zip(X, y, strict=True):
            fh.write(",".join(f"{x:.17g}" for x in row) + f",{lab}\n")
    assert main(["fit", str(csv), "--uncertainty", "wasserstein:0.05:norm=1", "--l2", "0.01", "--no-standardize",
                 "--positive", "1", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["model"]["uncertainty"]["type"] == "Wasserstein" and doc["solution"]["status"] == "optimal"
    ref = rs.Problem(penalty=rs.L2(0.01), uncertainty=rs.Wasserstein(0.05, norm=1), positive_class=1).solve(
        X, y, solver="clarabel")
    got = doc["solution"]
    assert abs(got["objective"] - ref.objective) <= got["gap"] + ref.gap + 1e-9


# ------------------------------------------------------------------------------------------ certify
LAM = 1e-2


@pytest.fixture(scope="module")
def wdbc_point():
    X, y, _, _ = load_data("wdbc")
    clf = LinearSVC(loss="hinge", C=1.0 / (LAM * X.shape[0]), fit_intercept=False, dual=True, tol=1e-8,
                    max_iter=200_000, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf.fit(X, y)
        problem = rs.Problem(penalty=rs.L2(LAM), intercept=False)
        ref = problem.solve(X, y, tol=1e-10)
    assert ref.gap <= 1e-7
    return X, y, clf.coef_.ravel(), problem, ref


def _hand_objective(X, y, w):
    ypm = np.where(y == np.unique(y)[1], 1.0, -1.0)
    return 0.5 * LAM * w @ w + np.mean(np.maximum(0.0, 1.0 - ypm * (X @ w)))


@pytest.mark.parametrize("fmt", ["npy", "csv", "json", "json-list"])
def test_certify_command_on_liblinear_weights(wdbc_point, tmp_path, capsys, fmt):
    X, y, w, problem, ref = wdbc_point
    model = tmp_path / "model.json"
    model.write_text(json.dumps(problem.to_dict()))
    weights = tmp_path / f"w.{fmt.split('-')[0]}"
    if fmt == "npy":
        np.save(weights, w)
    elif fmt == "csv":
        np.savetxt(weights, w, delimiter=",")
    elif fmt == "json":
        weights.write_text(json.dumps({"w": w.tolist(), "b": 0.0}))
    else:
        weights.write_text(json.dumps(w.tolist()))
    assert main(["certify", str(model), "wdbc", "--weights", str(weights), "--json"]) == 0
    cert = json.loads(capsys.readouterr().out)["certificate"]
    assert cert["objective"] == pytest.approx(_hand_objective(X, y, w), rel=1e-9)
    assert cert["feasible"] and cert["bound"] <= ref.objective + 1e-12
    assert cert["gap"] >= cert["objective"] - ref.objective - 1e-12
    assert cert["gap"] <= 1e-5 + 10 * (cert["objective"] - ref.objective + ref.gap)


def test_certify_command_reports_a_sign_violation_and_reads_a_stored_solution(wdbc_point, tmp_path, capsys):
    X, y, w, _, _ = wdbc_point
    signs = np.where(np.arange(X.shape[1]) < 10, 1, 0)
    signed = rs.Problem(penalty=rs.L2(LAM), intercept=False, signs=signs)
    model = tmp_path / "signed.json"
    model.write_text(json.dumps(signed.to_dict()))
    weights = tmp_path / "w.npy"
    np.save(weights, w)
    assert main(["certify", str(model), "wdbc", "--weights", str(weights)]) == 1  # infeasible
    out = capsys.readouterr().out
    assert "status infeasible" in out and "violates the constraints" in out
    assert main(["certify", str(model), "wdbc", "--weights", str(weights), "--json"]) == 1
    cert = json.loads(capsys.readouterr().out)["certificate"]
    assert cert["violation"] == pytest.approx(float(np.max(-signs * w)), rel=1e-12)
    # a stored solution: its own point is certified when --weights is not given
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = signed.solve(X, y, tol=1e-10)
    stored = sol.to_json(tmp_path / "sol.json", X, y)
    assert main(["certify", str(stored), "wdbc", "--json"]) == 0
    cert = json.loads(capsys.readouterr().out)["certificate"]
    assert cert["feasible"] and cert["objective"] == pytest.approx(sol.objective, rel=1e-10)
    assert cert["gap"] >= -1e-12 and cert["bound"] <= sol.objective


def test_certify_command_refuses_weights_of_the_wrong_size(wdbc_point, tmp_path, capsys):
    _, _, w, problem, _ = wdbc_point
    model = tmp_path / "model.json"
    model.write_text(json.dumps(problem.to_dict()))
    weights = tmp_path / "w.npy"
    np.save(weights, w[:5])
    assert main(["certify", str(model), "wdbc", "--weights", str(weights)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "5 numbers, but the data have 30 features" in err[0]
    assert main(["certify", str(model), "wdbc"]) == 1
    assert "--weights FILE is required" in capsys.readouterr().err


def test_certify_command_applies_a_stored_solutions_preprocessing(tmp_path, capsys):
    rng = np.random.default_rng(4)
    n = 60
    size = rng.normal(10.0, 3.0, n)
    colour = rng.choice(["red", "green", "blue"], n)
    label = np.where(size + 2.0 * (colour == "red") + rng.normal(0, 1, n) > 11, "yes", "no")
    csv = tmp_path / "table.csv"
    with csv.open("w") as fh:
        fh.write("size,colour,label\n")
        for row in zip(size, colour, label, strict=True):
            fh.write(f"{row[0]:.17g},{row[1]},{row[2]}\n")
    stored = tmp_path / "fit.json"
    assert main(["fit", str(csv), "--target", "label", "--output", str(stored), "--json"]) == 0
    objective = json.loads(capsys.readouterr().out)["solution"]["objective"]
    assert main(["certify", str(stored), str(csv), "--json"]) == 0
    cert = json.loads(capsys.readouterr().out)["certificate"]
    # the one-hot columns and z-scores the fit stored are applied again: the same objective
    assert cert["objective"] == pytest.approx(objective, rel=1e-10)
    assert cert["feasible"] and cert["bound"] <= objective + 1e-12

"""Figures: the objects returned hold exactly the data given (checked against the inputs)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.colors as mcolors
import matplotlib.pyplot as plt
import numpy as np
import pytest

import robustsvm as rs
from robustsvm import plotting

from .conftest import make_classification


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _solution(history, solver="s", w=None, problem=None):
    return rs.Solution(w=w, b=0.0, objective=float(history["objective"][-1]), gap=float(history["gap"][-1]),
                       status="optimal", solver=solver, iterations=len(history["iteration"]), time=0.0,
                       time_compile=0.0, time_solve=0.0, history=history, violation=0.0,
                       classes=np.array([0, 1]), problem=problem or rs.Problem(penalty=rs.L2(1.0)))


def _hist(obj, gap):
    k = len(obj)
    return {"iteration": np.arange(1, k + 1), "time": 0.01 * np.arange(1, k + 1), "objective": np.asarray(obj),
            "gap": np.asarray(gap, dtype=float)}


def test_convergence_plots_error_and_gap_per_solver():
    a = _solution(_hist([2.0, 1.5, 1.1, 1.01], [1.0, 0.5, 0.1, 0.01]), "fw")
    b = _solution(_hist([3.0, 1.2, 1.001], [np.nan] * 3), "pegasos")
    _fig, axes = plotting.convergence({"Frank-Wolfe": a, "Pegasos": b}, reference=1.0)
    assert len(axes) == 2 and axes[0].get_yscale() == "log" and axes[1].get_yscale() == "log"
    assert len(axes[0].lines) == 2 and len(axes[1].lines) == 1  # Pegasos has no gap
    np.testing.assert_allclose(axes[0].lines[0].get_ydata(), [1.0, 0.5, 0.1, 0.01])
    np.testing.assert_allclose(axes[0].lines[1].get_ydata(), [2.0, 0.2, 0.001])
    np.testing.assert_array_equal(axes[0].lines[0].get_xdata(), [1, 2, 3, 4])
    np.testing.assert_allclose(axes[1].lines[0].get_ydata(), [1.0, 0.5, 0.1, 0.01])
    assert [t.get_text() for t in axes[0].get_legend().get_texts()] == ["Frank-Wolfe", "Pegasos"]
    # against time, the default reference is the smallest final objective
    _, axes = plotting.convergence([a, b], x="time")
    np.testing.assert_allclose(axes[0].lines[0].get_xdata(), [0.01, 0.02, 0.03, 0.04])
    np.testing.assert_allclose(axes[0].lines[0].get_ydata(), np.array([2.0, 1.5, 1.1, 1.01]) - 1.001)
    assert axes[0].get_xscale() == "log"
    # the best value so far where a backend records it; the others fall back to their objective
    a.history["best_objective"] = np.minimum.accumulate(a.history["objective"] + [0.0, 0.6, 0.0, 0.0])
    _, axes = plotting.convergence([a, b], reference=1.0, objective_key="best_objective")
    np.testing.assert_allclose(axes[0].lines[0].get_ydata(), a.history["best_objective"] - 1.0)
    np.testing.assert_allclose(axes[0].lines[1].get_ydata(), [2.0, 0.2, 0.001])


def test_convergence_of_a_real_solve_and_bad_input():
    X, y = make_classification(40, 3, seed=0)
    sol = rs.Problem(penalty=rs.L2(0.1)).solve(X, y)
    _fig, axes = plotting.convergence(sol, reference=sol.objective - 1e-3)
    assert len(axes[0].lines) == 1
    np.testing.assert_allclose(axes[0].lines[0].get_ydata(), sol.history["objective"] - sol.objective + 1e-3)
    with pytest.raises(ValueError, match="x must be"):
        plotting.convergence(sol, x="epochs")
    with pytest.raises(TypeError, match="not a Solution"):
        plotting.convergence({"a": 3})
    with pytest.raises(ValueError, match="at least one"):
        plotting.convergence([])


def _polygon_area(P):
    x, y = P[:, 0], P[:, 1]
    return 0.5 * abs(x @ np.roll(y, -1) - y @ np.roll(x, -1))


def test_set_boundary_traces_known_sets():
    box = plotting.set_boundary(rs.Box(1.0))
    assert {tuple(p) for p in box} == {(1, 1), (-1, 1), (-1, -1), (1, -1)}
    assert _polygon_area(box) == pytest.approx(4.0)
    box_w = plotting.set_boundary(rs.Box(1.0, widths=[2.0, 0.5]))
    assert _polygon_area(box_w) == pytest.approx(4 * 2.0 * 0.5)
    diamond = plotting.set_boundary(rs.Ball(1.0, p=1))
    assert len(diamond) == 4 and _polygon_area(diamond) == pytest.approx(2.0)
    circle = plotting.set_boundary(rs.Ball(1.0), n_directions=400)
    np.testing.assert_allclose(np.linalg.norm(circle, axis=1), 1.0)
    # inscribed regular 400-gon: area (k/2) sin(2π/k)
    assert _polygon_area(circle) == pytest.approx(200 * np.sin(2 * np.pi / 400), rel=1e-9)
    # points come in counter-clockwise order (positive signed area)
    x, yv = circle[:, 0], circle[:, 1]
    assert x @ np.roll(yv, -1) - yv @ np.roll(x, -1) > 0
    with pytest.raises(ValueError, match="n_directions"):
        plotting.set_boundary(rs.Box(1.0), n_directions=2)
    with pytest.raises(ValueError, match="R\\^2"):
        plotting.set_boundary(rs.Box(1.0, widths=[1, 1, 1]))


def test_set_boundary_of_ellipsoid_and_spectrahedron_lies_on_the_boundary():
    M = np.array([[1.0, 0.6], [0.6, 0.5]])
    pts = plotting.set_boundary(rs.Ellipsoid(shape=M, radius=1.0), n_directions=60)
    # closed form: v·M⁻¹v = 1 on the boundary of the ellipsoid
    np.testing.assert_allclose(np.einsum("ki,ij,kj->k", pts, np.linalg.inv(M), pts), 1.0, rtol=1e-9)
    A1 = np.array([[0.0, 1, 0], [1, 0, 0], [0, 0, 0]])
    A2 = np.array([[0.0, 0, 1], [0, 0, 1], [1, 1, 0]])
    spec = rs.Spectrahedron(np.eye(3), [A1, A2], radius=1.0)
    pts = plotting.set_boundary(spec, n_directions=24)
    # on the boundary the LMI is singular: its smallest eigenvalue is 0 (up to the SDP's accuracy)
    lam_min = [np.linalg.eigvalsh(np.eye(3) + v[0] * A1 + v[1] * A2)[0] for v in pts]
    np.testing.assert_allclose(lam_min, 0.0, atol=1e-6)
    # two corners, (1, 1) and (1, −1), and a curved arc between them: more points than a polygon's 4
    assert len(np.unique(np.round(pts, 5), axis=0)) > 8


def test_decision_boundaries_draw_each_set_and_line():
    X, y = make_classification(25, 2, seed=3)
    r = 0.15
    nominal = rs.Problem(penalty=rs.L2(0.1)).solve(X, y)
    robust = rs.Problem(penalty=rs.L2(0.1), uncertainty=rs.Box(radius=r)).solve(X, y)
    _fig, axes = plotting.decision_boundaries(X, y, {"nominal": nominal, "box": robust})
    assert len(axes) == 2
    for ax, sol in zip(axes, (nominal, robust), strict=True):
        assert len(ax.patches) == 25
        corners = ax.patches[7].get_xy()[:-1]  # closed polygons repeat the first vertex
        expected = X[7] + r * np.array([[1, 1], [-1, 1], [-1, -1], [1, -1]])
        assert {tuple(np.round(c, 12)) for c in corners} == {tuple(np.round(e, 12)) for e in expected}
        assert len(ax.lines) == 3
        for line, level in zip(ax.lines, (0.0, -1.0, 1.0), strict=True):
            pts = np.column_stack([line.get_xdata(), line.get_ydata()])
            np.testing.assert_allclose(pts @ sol.w + sol.b, level, atol=1e-9)
        np.testing.assert_allclose(ax.collections[0].get_offsets(), X)
    assert [ax.get_title() for ax in axes] == ["nominal", "box"]
    # the first panel names the classes: classes[1] is +1 (blue), classes[0] is −1 (red)
    legend = axes[0].get_legend()
    assert [t.get_text() for t in legend.get_texts()] == ["1 (+1)", "0 (−1)"]
    assert [mcolors.to_hex(h.get_color()) for h in legend.legend_handles] == [mcolors.to_hex("tab:blue"),
                                                                             mcolors.to_hex("tab:red")]
    blue = mcolors.to_rgba("tab:blue")
    point_colours = axes[0].collections[0].get_facecolors()
    np.testing.assert_array_equal(np.all(np.isclose(point_colours, blue), axis=1), np.asarray(y) == 1)
    assert axes[1].get_legend() is None
    _, axes = plotting.decision_boundaries(X, y, nominal, class_names=["malignant", "benign"])
    assert [t.get_text() for t in axes[0].get_legend().get_texts()] == ["benign (+1)", "malignant (−1)"]
    with pytest.raises(ValueError, match="class_names"):
        plotting.decision_boundaries(X, y, nominal, class_names=["a"])


def test_decision_boundaries_per_sample_radius_and_errors():
    X, y = make_classification(12, 2, seed=1)
    radius = np.r_[np.zeros(4), np.full(8, 0.2)]
    sol = rs.Problem(penalty=rs.L2(0.1), uncertainty=rs.Ball(radius=radius)).solve(X, y)
    _, axes = plotting.decision_boundaries(X, y, sol, margins=False)
    assert len(axes[0].patches) == 8 and len(axes[0].lines) == 1
    verts = axes[0].patches[0].get_xy()
    np.testing.assert_allclose(np.linalg.norm(verts - X[4], axis=1), 0.2)
    X3, y3 = make_classification(12, 3, seed=1)
    with pytest.raises(ValueError, match="2 features"):
        plotting.decision_boundaries(X3, y3, sol)


def test_m3_coefficients_lines_match_columns():
    t = np.arange(0, 50, 5)
    V = np.exp(-np.outer(t, [0.0, 0.1, 0.3])) + np.array([1.0, 0.0, 0.0])
    _fig, ax = plotting.m3_coefficients(V, t)
    assert len(ax.lines) == 3 and ax.get_yscale() == "log"
    for j in range(3):
        np.testing.assert_allclose(ax.lines[j].get_ydata(), V[:, j])
        np.testing.assert_array_equal(ax.lines[j].get_xdata(), t)
    _, ax = plotting.m3_coefficients(np.ones((4, 10)), max_lines=3)
    assert len(ax.lines) == 3
    with pytest.raises(ValueError, match="shape"):
        plotting.m3_coefficients(np.ones(5))
    with pytest.raises(ValueError, match="length"):
        plotting.m3_coefficients(np.ones((4, 2)), iterations=[1, 2])


def test_weights_bars_and_sign_colours():
    X, y = make_classification(60, 5, seed=2)
    signs = [1, -1, 0, 1, 0]
    sol = rs.Problem(penalty=rs.L2(0.05), signs=signs).solve(X, y, feature_names=list("abcde"))
    _fig, ax = plotting.weights(sol)
    bars = ax.patches
    assert len(bars) == 5
    np.testing.assert_allclose([p.get_height() for p in bars], sol.w)
    expected = {1: "tab:blue", -1: "tab:red", 0: "0.6"}
    for p, s in zip(bars, signs, strict=True):
        assert mcolors.same_color(p.get_facecolor(), expected[s])
    assert [t.get_text() for t in ax.get_xticklabels()] == list("abcde")
    np.testing.assert_array_equal(ax.collections[0].get_offsets()[:, 0], [0, 1, 3])  # constrained features
    _, ax = plotting.weights(sol, top=2)
    top2 = np.sort(np.argsort(-np.abs(sol.w))[:2])
    np.testing.assert_allclose([p.get_height() for p in ax.patches], sol.w[top2])
    with pytest.raises(ValueError, match="feature_names"):
        plotting.weights(sol, feature_names=["a"])
    legend = [t.get_text() for t in plotting.weights(sol)[1].get_legend().get_texts()]
    assert legend == ["$w_h \\geq 0$ imposed", "$w_h \\leq 0$ imposed", "free"]


def test_weights_legend_lists_only_the_constraints_present():
    X, y = make_classification(60, 4, seed=5)
    free = rs.Problem(penalty=rs.L2(0.05)).solve(X, y)
    _, ax = plotting.weights(free)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["free"]
    assert len(ax.collections) == 0  # no constrained feature, no marker
    nonneg = rs.Problem(penalty=rs.L2(0.05), signs=[1, 1, 0, 0]).solve(X, y)
    _, ax = plotting.weights(nonneg)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["$w_h \\geq 0$ imposed", "free"]
    _, ax = plotting.weights(nonneg, top=1)
    shown = int(np.argmax(np.abs(nonneg.w)))
    expected = ["$w_h \\geq 0$ imposed"] if shown < 2 else ["free"]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == expected


def test_lazy_module_attribute():
    assert rs.plotting is plotting


def test_weights_of_a_fitted_estimator_say_which_class_is_positive():
    X, y = make_classification(60, 4, seed=5)
    words = np.where(y == 1, "malignant", "benign")
    est = rs.RobustSVC(l2=0.05, signs={0: +1}, positive_class="benign").fit(X, words)
    _, ax = plotting.weights(est)  # a linear RobustSVC: its solution's weights
    np.testing.assert_allclose([p.get_height() for p in ax.patches], est.coef_[0])
    assert ax.get_ylabel() == "weight $w_h$ (> 0: evidence for 'malignant')"
    # the sign towards "benign" is imposed on w (oriented to "malignant") as w_0 <= 0: drawn red
    assert mcolors.same_color(ax.patches[0].get_facecolor(), "tab:red")
    assert est.coef_[0, 0] <= 1e-9
    three = rs.RobustSVC(l2=0.05).fit(X, np.arange(60) % 3)
    _, ax = plotting.weights(three, class_label=2)
    np.testing.assert_allclose([p.get_height() for p in ax.patches], three.coef_[2])
    with pytest.raises(ValueError, match=r"3 one-vs-rest models: pass class_label= one of \[0, 1, 2\]"):
        plotting.weights(three)
    kernel = rs.RobustSVC(l2=0.05, kernel=rs.RBF(1.0), fit_intercept=False, solver="m3").fit(X, y)
    with pytest.raises(ValueError, match="w is None for a kernel model"):
        plotting.weights(kernel)
    with pytest.raises(TypeError, match="expected a Solution, a fitted RobustSVC or a Pipeline ending in it"):
        plotting.weights(object())


def test_weights_path_draws_each_weight_against_lambda_with_its_sign():
    X, y = make_classification(80, 4, seed=6)
    lambdas = [0.01, 0.1, 1.0]
    prob = rs.Problem(penalty=rs.L2(1.0), signs=[1, -1, 0, 0])
    path = {lam: rs.Problem(penalty=rs.L2(lam), signs=prob.signs).solve(X, y) for lam in lambdas}
    _, ax = plotting.weights_path(path, feature_names=list("abcd"))
    assert len(ax.lines) == 4 + 1  # one per feature, then the zero line
    for h in range(4):
        np.testing.assert_allclose(ax.lines[h].get_xdata(), lambdas)
        np.testing.assert_allclose(ax.lines[h].get_ydata(), [path[lam].w[h] for lam in lambdas])
    assert mcolors.same_color(ax.lines[0].get_color(), "tab:blue") and ax.lines[1].get_linestyle() == "--"
    assert ax.get_xscale() == "log"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        "$w_h \\geq 0$ imposed", "$w_h \\leq 0$ imposed", "free"]
    with pytest.raises(ValueError, match="logarithmic axis needs positive"):
        plotting.weights_path({0.0: path[0.01]})
    with pytest.raises(TypeError, match="non-empty mapping"):
        plotting.weights_path([])


def test_validation_accuracy_against_the_radius_from_a_grid():
    X, y = make_classification(80, 4, seed=7)
    grid = rs.grid_search(rs.Problem(penalty=rs.L2(0.1), uncertainty=rs.Box(0.1)), X, y,
                          {"l2": [0.01, 0.1], "radius": [0.0, 0.05, 0.2]}, cv=3, progress=False)
    _, ax = plotting.validation_accuracy(grid, "radius")
    assert len(ax.lines) == 2  # one line per λ2
    for line, lam in zip(ax.lines, [0.01, 0.1], strict=True):
        idx = [k for k, p in enumerate(grid.points) if p["l2"] == lam]
        order = np.argsort([grid.points[k]["radius"] for k in idx])
        np.testing.assert_allclose(line.get_xdata(), [0.0, 0.05, 0.2])
        np.testing.assert_allclose(line.get_ydata(), grid.scores[idx].mean(axis=1)[order])
        assert line.get_label() == f"l2 = {lam:g}"
    best = ax.collections[-1].get_offsets()[0]
    np.testing.assert_allclose(best, [grid.best_params["radius"], grid.best_score])
    with pytest.raises(ValueError, match="no parameter 'l1'"):
        plotting.validation_accuracy(grid, "l1")

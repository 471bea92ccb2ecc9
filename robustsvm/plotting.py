"""Figures: convergence, decision boundaries with uncertainty sets, M3 coefficients, weights, paths, grids.

matplotlib is an optional dependency (``pip install 'robustsvm[plot]'``), imported on first use. Every function
draws on the axes it is given (or on a new figure), returns the matplotlib objects it made, and never calls
``show()``: it works with any backend, Agg included.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

__all__ = [
    "convergence",
    "decision_boundaries",
    "m3_coefficients",
    "set_boundary",
    "validation_accuracy",
    "validation_scores",
    "weights",
    "weights_path",
]


#: colour and legend text of a weight by its sign constraint (+1: w_h ≥ 0, −1: w_h ≤ 0, 0: free)
SIGN_COLOURS = {1: "tab:blue", -1: "tab:red", 0: "0.6"}
SIGN_LABELS = {1: "$w_h \\geq 0$ imposed", -1: "$w_h \\leq 0$ imposed", 0: "free"}


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - the plot extra installs it
        raise ImportError("robustsvm.plotting needs matplotlib: pip install 'robustsvm[plot]'") from exc
    return plt


def _named(solutions: Any) -> list[tuple[str, Any]]:
    """``[(label, solution)]`` from a Solution, a list of them or a ``{label: solution}`` mapping."""
    if isinstance(solutions, Mapping):
        items = list(solutions.items())
    elif isinstance(solutions, Sequence) and not isinstance(solutions, str):
        items = [(getattr(s, "solver", f"solution {k}"), s) for k, s in enumerate(solutions)]
    else:
        items = [(getattr(solutions, "solver", "solution"), solutions)]
    if not items:
        raise ValueError("solutions must hold at least one solution")
    for label, sol in items:
        if not hasattr(sol, "history"):
            raise TypeError(f"solutions[{label!r}] is not a Solution (no history), got {type(sol).__name__}")
    return [(str(label), sol) for label, sol in items]


# ---------------------------------------------------------------- convergence
def convergence(
    solutions: Any,
    reference: float | None = None,
    *,
    x: str = "iteration",
    axes: Any = None,
    objective_key: str = "objective",
) -> tuple[Any, np.ndarray]:
    """Objective error and duality gap of several solvers, on log scales.

    Left panel: ``objective_k − reference`` against ``x`` for every solution's
    ``history``; right panel: the duality gap ``history["gap"]`` (solvers with
    no gap are left out of it). Values ≤ 0 are not drawn on the log scale.

    Parameters
    ----------
    solutions : Solution, list of Solution or dict of label to Solution
        Each with a ``history`` holding ``iteration``, ``time``, ``objective``, ``gap``.
    reference : float, optional
        The optimal value ``P*`` (for instance a clarabel solution's
        ``objective``); default: the smallest final objective among the
        solutions.
    x : {"iteration", "time"}
        The horizontal axis.
    axes : pair of matplotlib Axes, optional
    objective_key : str, default "objective"
        The history entry drawn on the left: ``"objective"`` (the iterate's
        value) or, where a backend records it, ``"best_objective"`` (the best
        value so far — what a method that returns its best iterate reports).
        A solution without that entry falls back to ``"objective"``.

    Returns
    -------
    (Figure, ndarray of 2 Axes)
        ``axes[0].lines`` / ``axes[1].lines`` hold one line per solver drawn.
    """
    if x not in ("iteration", "time"):
        raise ValueError(f"x must be 'iteration' or 'time', got {x!r}")
    items = _named(solutions)
    plt = _pyplot()
    if axes is None:
        fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), constrained_layout=True)
    else:
        axes = np.asarray(axes).ravel()
        if axes.size != 2:
            raise ValueError("axes must be two matplotlib Axes")
        fig = axes[0].figure
    axes = np.asarray(axes).ravel()
    if reference is None:
        finals = [float(np.asarray(s.history["objective"])[-1]) for _, s in items
                  if len(np.asarray(s.history.get("objective", [])))]
        if not finals:
            raise ValueError("no solution has an objective history to take the reference from")
        reference = min(finals)
    for label, sol in items:
        h = sol.history
        key = objective_key if objective_key in h else "objective"
        if x not in h or key not in h or len(np.asarray(h[x])) == 0:
            continue
        xs = np.asarray(h[x], dtype=np.float64)
        err = np.asarray(h[key], dtype=np.float64) - reference
        (line,) = axes[0].plot(xs, err, label=label)
        gap = np.asarray(h.get("gap", np.full_like(xs, np.nan)), dtype=np.float64)
        if np.any(np.isfinite(gap)):
            axes[1].plot(xs, gap, label=label, color=line.get_color())
    xlabel = "iteration" if x == "iteration" else "time [s]"
    for ax, title in zip(axes, ("objective − P*", "duality gap"), strict=True):
        ax.set_yscale("log")
        if x == "time":
            ax.set_xscale("log")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(title)
        ax.grid(True, which="major", alpha=0.3)
        if ax.lines:
            ax.legend(fontsize="small")
    return fig, axes


# --------------------------------------------------------- uncertainty sets
def set_boundary(uset: Any, n_directions: int = 96) -> np.ndarray:
    """Points on the boundary of a 2-D unit set ``V``, in counter-clockwise order.

    For directions ``z_k = (cos θ_k, sin θ_k)``, ``θ_k = (k + ½) 2π/K``,
    ``v_k = argmax_{v ∈ V} z_k·v`` (``worst_case``) is a boundary point whose
    outer normal is ``z_k``; in the order of θ these points trace the boundary
    of any compact convex set (the vertices of a polytope, a smooth curve for
    a ball, an ellipsoid or a spectrahedron).

    Returns
    -------
    ndarray of shape (k, 2)
        The distinct boundary points (consecutive duplicates removed).
    """
    if n_directions < 3:
        raise ValueError(f"n_directions must be at least 3, got {n_directions}")
    dim = getattr(uset, "dim", None)
    if dim is not None and dim != 2:
        raise ValueError(f"the uncertainty set must live in R^2 to be drawn, it lives in R^{dim}")
    # half-step offset: no direction is axis-aligned, so polytopes give their vertices, not edge midpoints
    theta = (np.arange(int(n_directions)) + 0.5) * (2.0 * np.pi / int(n_directions))
    Z = np.column_stack([np.cos(theta), np.sin(theta)])
    pts = np.array([np.asarray(uset.worst_case(z), dtype=np.float64) for z in Z])
    if pts.ndim != 2 or pts.shape[1] != 2:
        raise ValueError(f"the uncertainty set must live in R^2 to be drawn, got points of shape {pts.shape[1:]}")
    keep = np.ones(len(pts), dtype=bool)
    keep[1:] = np.any(np.abs(np.diff(pts, axis=0)) > 1e-9, axis=1)
    pts = pts[keep]
    while len(pts) > 1 and np.all(np.abs(pts[-1] - pts[0]) <= 1e-9):
        pts = pts[:-1]
    return pts


def _per_sample_sets(uncertainty: Any, n: int) -> tuple[list[Any], np.ndarray, np.ndarray]:
    from .uncertainty import resolve_uncertainty

    layout = resolve_uncertainty(uncertainty, n, 2)
    if layout is None:
        return [], np.zeros(n, dtype=int), np.zeros(n)
    return list(layout.sets), np.asarray(layout.group), np.asarray(layout.radius)


def _draw_line(ax: Any, w: np.ndarray, b: float, level: float, lims: tuple, **kw: Any) -> Any:
    """The line ``w·x + b = level`` across the box ``lims = (x0, x1, y0, y1)``."""
    x0, x1, y0, y1 = lims
    if abs(w[1]) >= abs(w[0]):
        xs = np.array([x0, x1])
        ys = (level - b - w[0] * xs) / w[1]
    else:
        ys = np.array([y0, y1])
        xs = (level - b - w[1] * ys) / w[0]
    (line,) = ax.plot(xs, ys, **kw)
    return line


def decision_boundaries(
    X: Any,
    y: Any,
    solutions: Any,
    *,
    uncertainty: Any = None,
    n_directions: int = 96,
    axes: Any = None,
    margins: bool = True,
    class_names: Sequence[str] | None = None,
) -> tuple[Any, np.ndarray]:
    """2-D classifiers side by side, each training point drawn with its uncertainty set.

    One panel per solution: the points coloured by class (a legend in the first
    panel names the classes), the set
    ``U_i = x_i + r_i V_i`` around each point (a polygon through
    :func:`set_boundary`, so any set type is drawn, spectrahedra included), the
    decision line ``w·x + b = 0`` (solid) and the margins ``w·x + b = ±1``
    (dashed).

    Parameters
    ----------
    X : array of shape (n, 2)
    y : array of shape (n,), two classes
    solutions : Solution, list or dict of label to Solution
        Linear solutions (``w`` of length 2).
    uncertainty : UncertaintySet or list, optional
        The sets drawn in every panel; default: the first solution's model
        that has uncertainty (so the nominal model's panel shows the same sets).
    n_directions : int, default 96
        Directions used to trace each set's boundary.
    axes : Axes or array of Axes, optional
        One per solution.
    margins : bool, default True
    class_names : pair of str, optional
        Names of the classes labelled −1 and +1, in that order; default: the
        first solution's ``classes`` (``classes[1]`` is +1).

    Returns
    -------
    (Figure, ndarray of Axes)
        In each panel: ``ax.patches`` has one polygon per sample with a
        set of positive radius; ``ax.lines`` the decision line (and the two
        margins); ``ax.collections`` the scatter of the points. The first
        panel's legend names the +1 class (blue) and the −1 class (red).
    """
    from ._validation import check_fit_data

    items = _named(solutions)
    data = check_fit_data(X, y)
    if data.d != 2:
        raise ValueError(f"X must have 2 features to draw decision boundaries, got {data.d}")
    Xd = np.asarray(data.X.toarray() if hasattr(data.X, "toarray") else data.X)
    for label, sol in items:
        if sol.w is None or np.asarray(sol.w).shape != (2,):
            raise ValueError(f"solution {label!r} must be a linear model with 2 weights")
    if uncertainty is None:
        for _, sol in items:
            if getattr(sol.problem, "uncertainty", None) is not None:
                uncertainty = sol.problem.uncertainty
                break
    if class_names is None:
        classes = getattr(items[0][1], "classes", None)
        class_names = ("−1", "+1") if classes is None or len(classes) != 2 else tuple(str(c) for c in classes)
    if len(class_names) != 2:
        raise ValueError(f"class_names must name 2 classes (−1 then +1), got {len(class_names)}")
    sets, group, radius = _per_sample_sets(uncertainty, data.n)
    shapes = [set_boundary(s, n_directions) for s in sets]
    plt = _pyplot()
    if axes is None:
        fig, axes = plt.subplots(1, len(items), figsize=(4.6 * len(items), 4.2), squeeze=False,
                                 constrained_layout=True)
    axes = np.asarray(axes).ravel()
    if axes.size != len(items):
        raise ValueError(f"axes must hold one Axes per solution ({len(items)}), got {axes.size}")
    fig = axes[0].figure
    pad = 0.15 * (Xd.max(axis=0) - Xd.min(axis=0)) + (float(radius.max()) if radius.size else 0.0)
    lims = (Xd[:, 0].min() - pad[0], Xd[:, 0].max() + pad[0], Xd[:, 1].min() - pad[1], Xd[:, 1].max() + pad[1])
    from matplotlib.patches import Polygon

    colors = np.where(data.y > 0, "tab:blue", "tab:red")
    for ax, (label, sol) in zip(axes, items, strict=True):
        for i in range(data.n):
            if sets and radius[i] > 0:
                poly = Xd[i] + radius[i] * shapes[group[i]]
                ax.add_patch(Polygon(poly, closed=True, facecolor=colors[i], edgecolor=colors[i],
                                     alpha=0.18, linewidth=0.6))
        ax.scatter(Xd[:, 0], Xd[:, 1], c=colors, s=14, zorder=3)
        w = np.asarray(sol.w, dtype=np.float64)
        if np.any(w):
            _draw_line(ax, w, sol.b, 0.0, lims, color="k", linewidth=1.6)
            if margins:
                for level in (-1.0, 1.0):
                    _draw_line(ax, w, sol.b, level, lims, color="k", linestyle="--", linewidth=0.8)
        ax.set_xlim(lims[0], lims[1])
        ax.set_ylim(lims[2], lims[3])
        ax.set_aspect("equal", adjustable="box")
        ax.set_title(label)
        ax.set_xlabel("feature 1")
        ax.set_ylabel("feature 2")
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], linestyle="none", marker="o", markersize=5, color="tab:blue",
                      label=f"{class_names[1]} (+1)"),
               Line2D([], [], linestyle="none", marker="o", markersize=5, color="tab:red",
                      label=f"{class_names[0]} (−1)")]
    axes[0].legend(handles=handles, fontsize="small", loc="best", framealpha=0.85)
    return fig, axes


# ------------------------------------------------------------- M3 traces
def m3_coefficients(
    coefficients: Any,
    iterations: Any = None,
    *,
    ax: Any = None,
    logy: bool = True,
    max_lines: int | None = None,
) -> tuple[Any, Any]:
    """Each coefficient ``v_i`` of the multiplicative updates against the iteration.

    Parameters
    ----------
    coefficients : array of shape (T, n), or a Solution
        Row ``t`` is the coefficient vector after iteration ``iterations[t]``.
        A Solution is read from its ``history["coefficients"]``.
    iterations : array of shape (T,), optional
        Default: the Solution's ``history["iteration"]`` or ``0..T-1``.
    ax : Axes, optional
    logy : bool, default True
        Log scale: coefficients of non-support vectors decay geometrically.
    max_lines : int, optional
        Draw only this many coefficients, evenly spaced over the indices.

    Returns
    -------
    (Figure, Axes)
        ``ax.lines[k]`` holds coefficient ``k`` (of those drawn).
    """
    if hasattr(coefficients, "history"):
        h = coefficients.history
        if "coefficients" not in h:
            raise ValueError("the solution has no history['coefficients'] (record them with the m3 backend)")
        if iterations is None:
            iterations = h.get("iteration")
        coefficients = h["coefficients"]
    V = np.asarray(coefficients, dtype=np.float64)
    if V.ndim != 2 or V.shape[0] == 0:
        raise ValueError(f"coefficients must have shape (iterations, n), got {V.shape}")
    t = np.arange(V.shape[0]) if iterations is None else np.asarray(iterations, dtype=np.float64)
    if t.shape != (V.shape[0],):
        raise ValueError(f"iterations must have length {V.shape[0]}, got shape {t.shape}")
    cols = np.arange(V.shape[1])
    if max_lines is not None and max_lines < V.shape[1]:
        cols = np.unique(np.linspace(0, V.shape[1] - 1, int(max_lines)).round().astype(int))
    plt = _pyplot()
    if ax is None:
        fig, ax = plt.subplots(figsize=(6, 4), constrained_layout=True)
    fig = ax.figure
    for j in cols:
        ax.plot(t, V[:, j], linewidth=0.8)
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel("iteration")
    ax.set_ylabel("coefficient $v_i$")
    return fig, ax


# ----------------------------------------------------------------- weights
def weights(
    solution: Any,
    *,
    ax: Any = None,
    feature_names: Sequence[str] | None = None,
    top: int | None = None,
    tol: float = 1e-8,
    class_label: Any = None,
) -> tuple[Any, Any]:
    """Bar chart of ``w``, each bar marked by its feature's sign constraint.

    Colours: constrained ``w_h ≥ 0`` blue, constrained ``w_h ≤ 0`` red, free
    grey; constrained features also get a dot on the zero line (visible when
    the constraint holds the weight at 0); a bar whose weight breaks its
    constraint by more than ``tol`` is outlined in black (it never should be).
    The legend lists only the kinds of constraint present among the bars shown.

    Parameters
    ----------
    solution : Solution, RobustSVC or Pipeline
        A linear solution, a fitted linear :class:`~robustsvm.RobustSVC`, or a fitted Pipeline ending in one.
        The weights are oriented to ``classes[1]`` (a positive bar is evidence
        for it, as the y label says), the sign constraints as imposed on them
        (flipped when the model's ``positive_class`` is ``classes[0]``).
    ax : Axes, optional
    feature_names : sequence of str, optional
        Default: a pipeline's ``get_feature_names_out``, the solution's feature names, or ``x0, x1, ...``.
    top : int, optional
        Show only the ``top`` weights of largest magnitude (in feature order).
    class_label : optional
        For a RobustSVC with more than two classes: the class whose
        one-vs-rest model to draw.

    Returns
    -------
    (Figure, Axes)
        ``ax.patches`` has one bar per feature shown, in order; bar heights
        are the weights; ``ax.collections[0]`` the dots of the constrained features.
    """
    names = feature_names if feature_names is not None else _pipeline_names(solution)
    solution = _linear_solution(solution, class_label)
    w = np.asarray(solution.w, dtype=np.float64)
    d = w.shape[0]
    names = names if names is not None else solution.feature_names
    names = [f"x{h}" for h in range(d)] if names is None else [str(n) for n in names]
    if len(names) != d:
        raise ValueError(f"feature_names must have {d} entries, got {len(names)}")
    signs = _oriented_signs(solution)
    idx = np.arange(d)
    if top is not None:
        if top < 1:
            raise ValueError(f"top must be a positive integer, got {top}")
        idx = np.sort(np.argsort(-np.abs(w), kind="stable")[:top])
    palette = SIGN_COLOURS
    plt = _pyplot()
    if ax is None:
        fig, ax = plt.subplots(figsize=(max(5.0, 0.28 * len(idx) + 2), 3.6), constrained_layout=True)
    fig = ax.figure
    broken = -signs[idx] * w[idx] > tol
    ax.bar(np.arange(len(idx)), w[idx], color=[palette[int(s)] for s in signs[idx]],
           edgecolor=["k" if b else "none" for b in broken], linewidth=1.2)
    ax.axhline(0.0, color="k", linewidth=0.6)
    constrained = np.flatnonzero(signs[idx] != 0)
    if constrained.size:  # a marker on the baseline, visible even for a weight held at 0
        ax.scatter(constrained, np.zeros(constrained.size), marker="o", s=14, zorder=3,
                   c=[palette[int(s)] for s in signs[idx][constrained]], edgecolors="k", linewidths=0.5)
    ax.set_xticks(np.arange(len(idx)))
    ax.set_xticklabels([names[h] for h in idx], rotation=90, fontsize="small")
    ax.set_ylabel(f"weight $w_h$ (> 0: evidence for {_plain(solution.classes[1])!r})")
    from matplotlib.patches import Patch

    present = set(np.unique(signs[idx]).astype(int))
    ax.legend(handles=[Patch(color=palette[s], label=SIGN_LABELS[s]) for s in (1, -1, 0) if s in present],
              fontsize="small")
    return fig, ax


def _plain(label: Any) -> Any:
    return label.item() if isinstance(label, np.generic) else label


def _linear_solution(model: Any, class_label: Any = None) -> Any:
    """The linear :class:`~robustsvm.Solution` of a Solution or a fitted RobustSVC (one class's model for K > 2)."""
    model = model.steps[-1][1] if hasattr(model, "named_steps") else model  # a fitted Pipeline: its last step
    solutions = getattr(model, "solutions_", None)
    if solutions is not None:  # a fitted RobustSVC
        classes = [_plain(c) for c in model.classes_]
        if len(solutions) == 1:
            model = solutions[0]
        elif class_label is None or class_label not in classes:
            raise ValueError(f"the estimator has {len(classes)} one-vs-rest models: pass class_label= one of "
                             f"{classes}" + ("" if class_label is None else f" (got {class_label!r})"))
        else:
            model = solutions[classes.index(class_label)]
    elif not hasattr(model, "problem"):
        raise TypeError(f"expected a Solution, a fitted RobustSVC or a Pipeline ending in it: {type(model).__name__}")
    if getattr(model, "w", None) is None:
        raise ValueError("weights() needs a linear solution (w is None for a kernel model)")
    return model


def _pipeline_names(model: Any) -> Any:
    """The names a fitted Pipeline's steps before the last give its columns (None when they give none)."""
    try:
        return list(model[:-1].get_feature_names_out()) if len(getattr(model, "steps", ())) > 1 else None
    except (AttributeError, ValueError, TypeError):  # a step without names
        return None


def _oriented_signs(solution: Any) -> np.ndarray:
    """The signs imposed on ``solution.w`` (oriented to ``classes[1]``, flipped for ``positive_class = classes[0]``)."""
    from ._validation import sign_orientation
    from .priors.signs import check_signs

    d = np.asarray(solution.w).shape[0]
    names = None if solution.feature_names is None else np.asarray(solution.feature_names)
    signs = check_signs(solution.problem.signs, d, names)
    return signs * sign_orientation(np.asarray(solution.classes), getattr(solution.problem, "positive_class", None))


# ------------------------------------------------------------ paths and grids
def weights_path(
    path: Mapping[float, Any],
    *,
    ax: Any = None,
    feature_names: Sequence[str] | None = None,
    parameter: str = "$\\lambda_2$",
    log: bool = True,
    label_top: int = 5,
) -> tuple[Any, Any]:
    """Each weight ``w_h`` against a parameter (λ2, λ1, the radius), marked by its sign constraint.

    Lines: constrained ``w_h ≥ 0`` blue, ``w_h ≤ 0`` red (dashed), free grey, as in :func:`weights`;
    the ``label_top`` weights of largest magnitude at the first value are named at the left end.

    Parameters
    ----------
    path : mapping {value: Solution}
        The solutions of one model along the parameter (solved by the caller, for instance with
        ``warm_start``); all must have the same features.
    ax : Axes, optional
    feature_names : sequence of str, optional
    parameter : str
        The x label.
    log : bool
        Logarithmic x axis (positive values only).
    label_top : int
        How many lines to name.

    Returns
    -------
    (Figure, Axes)
        ``ax.lines`` has one line per feature, in feature order, with the path's values as x.
    """
    if not isinstance(path, Mapping) or not path:
        raise TypeError("path must be a non-empty mapping {parameter value: Solution}")
    values = np.array(sorted(path), dtype=np.float64)
    sols = [_linear_solution(path[v]) for v in sorted(path)]
    W = np.vstack([np.asarray(sol.w, dtype=np.float64) for sol in sols])
    d = W.shape[1]
    names = feature_names if feature_names is not None else sols[0].feature_names
    names = [f"x{h}" for h in range(d)] if names is None else [str(n) for n in names]
    if len(names) != d:
        raise ValueError(f"feature_names must have {d} entries, got {len(names)}")
    if log and np.any(values <= 0):
        raise ValueError("a logarithmic axis needs positive parameter values; pass log=False")
    signs = _oriented_signs(sols[0])
    palette = {s: (SIGN_COLOURS[s], style) for s, style in ((1, "-"), (-1, "--"), (0, ":"))}
    plt = _pyplot()
    if ax is None:
        fig, ax = plt.subplots(figsize=(6.0, 4.0), constrained_layout=True)
    fig = ax.figure
    for h in range(d):
        color, style = palette[int(signs[h])]
        ax.plot(values, W[:, h], color=color, linestyle=style, linewidth=1.2, label=names[h])
    for h in np.argsort(-np.abs(W[0]), kind="stable")[:label_top]:
        ax.annotate(names[h], (values[0], W[0, h]), fontsize="x-small", ha="right", va="center")
    if log:
        ax.set_xscale("log")
    ax.axhline(0.0, color="k", linewidth=0.6)
    ax.set_xlabel(parameter)
    ax.set_ylabel(f"weight $w_h$ (> 0: evidence for {_plain(sols[0].classes[1])!r})")
    from matplotlib.lines import Line2D

    present = set(np.unique(signs).astype(int))
    ax.legend(handles=[Line2D([], [], color=palette[s][0], linestyle=palette[s][1], label=SIGN_LABELS[s])
                       for s in (1, -1, 0) if s in present], fontsize="small")
    return fig, ax


def validation_scores(grid: Any, parameter: str = "radius", *, ax: Any = None, log: bool = False) -> tuple[Any, Any]:
    """Mean validation score (± one standard deviation over the folds) against one grid parameter.

    One line per combination of the grid's other parameters (one per λ2 when the grid spans λ2 and the
    radius); the point the search chose is circled. ``validation_accuracy`` is its former name.

    Parameters
    ----------
    grid : GridResult or fitted GridSearchCV
        From :func:`robustsvm.grid_search`, or a fitted scikit-learn search (read by ``cv_results.grid_scores``).
    parameter : str
        The grid parameter on the x axis: ``"radius"``, ``"l2"``, ``"l1"``, ``"mu"``, or a search's
        parameter (``"robustsvc__l2"``, or its last part ``"l2"``; an uncertainty set is drawn at its radius).
    ax : Axes, optional
    log : bool
        Logarithmic x axis.

    Returns
    -------
    (Figure, Axes)
        ``ax.lines[k]`` is the mean score of the k-th group, x sorted; the y label names the scorer.
    """
    from .model_selection.cv_results import grid_scores

    table = grid_scores(grid)
    parameter = table.parameter(parameter)
    points, scores, groups = table.points, table.scores, table.groups(parameter)
    mean, std = np.nanmean(scores, axis=1), np.nanstd(scores, axis=1)
    plt = _pyplot()
    if ax is None:
        fig, ax = plt.subplots(figsize=(6.0, 4.0), constrained_layout=True)
    fig = ax.figure
    for key, members in groups.items():
        members = sorted(members, key=lambda k: points[k][parameter])
        x = np.array([points[k][parameter] for k in members], dtype=np.float64)
        label = ", ".join(f"{name} = {v:g}" for name, v in key) or None
        (line,) = ax.plot(x, mean[members], marker="o", markersize=3, label=label)
        ax.fill_between(x, mean[members] - std[members], mean[members] + std[members], color=line.get_color(),
                        alpha=0.15, linewidth=0)
    best = table.best_index
    ax.scatter([points[best][parameter]], [mean[best]], s=90, facecolors="none", edgecolors="k", zorder=3)
    if log:
        ax.set_xscale("log")
    ax.set_xlabel(parameter)
    ax.set_ylabel(f"validation {table.scoring} ({scores.shape[1]} folds)")
    if len(groups) > 1:
        ax.legend(fontsize="small")
    return fig, ax


validation_accuracy = validation_scores

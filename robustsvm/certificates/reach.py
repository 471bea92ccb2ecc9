"""A proved bound on the optimal weights of a robust model without a penalty, from a dual point.

For a hinge-type loss, ``λ1 = λ2 = 0``, one symmetric set ``V`` (box, ball, ellipsoid) with radii ``r_i`` and a
free, absent or ridge intercept, every admissible ``a`` (``0 ≤ a_i ≤ c_i ᾱ``, ``Σ_i a_i y_i = 0`` for a free
intercept) gives, for every ``(w, b)`` (``docs/certificates.md``, "Models without a penalty"),

    P(w, b) ≥ K(a) + (ρ(a) − γ_V(v(a))) σ_V(w),
    K(a) = Σ_i c_i (α_i − ℓ*(α_i)) (− S²/(2μ) for a ridge intercept),  ρ(a) = Σ_i a_i r_i,  v(a) = Σ_i a_i y_i x_i,

``γ_V`` the gauge of ``V`` (the dual norm of ``σ_V``). When ``γ_V(v(a)) < ρ(a)``, every minimizer (objective at
most the returned point's ``P̂``) has ``σ_V(w*) ≤ (P̂ − K(a)) / (ρ(a) − γ_V(v(a)))`` and, since
``|w_h| = |e_h·w| ≤ γ_V(e_h) σ_V(w)``, ``|w*_h| ≤ γ_V(e_h) · that bound``. :func:`unpenalized_reach` finds such an
``a`` by mixing the solver's multipliers with a point whose ``v`` is near 0 (the nearest points of the two classes'
convex hulls, by accelerated projected gradient steps).

Without a set (every radius 0, or none), the data prove the box instead: moving each ``a_i`` by ``±ε_i`` inside
its interval ``[0, c_i ᾱ]`` (``ε_i = min(a_i, c_i ᾱ − a_i)``) against the sign of ``y_i x̃_i·θ``, ``θ = (w, b)``,
``x̃_i = (x_i, 1)`` with a free intercept (``x_i`` alone otherwise; a ridge intercept is minimized out), gives

    P(θ) ≥ K_ε(a) − ṽ(a)·θ + Σ_i ε_i |x̃_i·θ| ≥ K_ε(a) + (s_ε − ‖ṽ(a)‖) ‖θ‖,   ṽ(a) = Σ_i a_i y_i x̃_i,

``K_ε`` the dual terms' smallest value over the moves and ``s_ε² ≤ λ_min(Σ_i ε_i² x̃_i x̃_iᵀ)``, so every minimizer
has ``|w*_h| ≤ ‖θ*‖ ≤ (P̂ − K_ε(a)) / (s_ε − ‖ṽ(a)‖)`` (:func:`nominal_reach`); :func:`nominal_repair` first
moves ``a`` on its free samples so that ``ṽ(a)`` is 0 up to rounding.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from ..terms.intercept import class_balance, class_sums

__all__ = ["NOMINAL_MAX_FEATURES", "REACH_MARGIN", "nominal_reach", "nominal_repair", "unpenalized_reach"]

#: the relative margin by which a mixed dual point must lie strictly inside (``γ_V(v) ≤ (1 − margin) ρ``)
REACH_MARGIN = 1e-3
#: the relative allowance for the rounding of the sums ``K``, ``ρ`` and the objective
_ROUNDING = 1e-10
#: the set types whose gauge about the origin is a closed form of the set's own
_SET_TYPES = ("Box", "Ball", "Ellipsoid")
#: the hull steps from each start: at most, and at least whatever the budget
_MAX_STEPS, _MIN_STEPS = 500, 8
#: the hull steps stop once ``γ_V(u(λ)) ≤ _DEPTH · ρ(λ)``: deep enough inside for the mixtures
_DEPTH = 0.25
#: each hull step first tries ``L`` times this (the backtracking raises it again where needed)
_RELAX = 0.7
#: the steps' budget in multiply-adds with ``X`` (two products a step): fewer steps on very large data
_STEP_BUDGET = 2e9
#: the nominal bound forms a Gram matrix of the features (and the intercept): not beyond this many
NOMINAL_MAX_FEATURES = 2000


def unpenalized_reach(model: Any, a: np.ndarray, objective: float) -> np.ndarray:
    """A bound ``reach_h ≥ |w*_h|`` at every minimizer of an unpenalized robust model, per feature (``inf`` where
    none is proved).

    ``reach_h = γ_V(e_h) (P̂ − K(a_t)) / (ρ(a_t) − γ_V(v(a_t)))`` minimized over a few mixtures
    ``a_t = (1 − t) a* + t a°`` of the multipliers ``a*`` and a hull point ``a°``, each inside by
    :data:`REACH_MARGIN`; the sums are enlarged by their rounding error.

    Parameters
    ----------
    model : Model
        The normalized model; anything but a hinge or squared-hinge loss without penalty, kernel or
        intersection, with one box, ball or ellipsoid shared by the samples, gives ``inf``.
    a : ndarray of shape (n,)
        Admissible multipliers in model units (:func:`robustsvm.certificates.duality.admissible_multipliers`).
    objective : float
        ``P̂``, the objective at the returned point (at least the optimum).
    """
    d = int(model.X.shape[1])
    none = np.full(d, np.inf)
    if _is_nominal(model):
        return nominal_reach(model, a, objective)
    V = _shared_set(model)
    if V is None or not np.isfinite(objective):
        return none
    tau = np.array([V.gauge(np.eye(1, d, h).ravel()) for h in range(d)])
    if not (np.all(np.isfinite(tau)) and np.all(tau > 0)):
        return none
    a_star = np.asarray(a, dtype=np.float64)
    v_star = np.asarray(model.X.T @ (a_star * model.y)).ravel()
    if not _gauge_agrees(V, v_star):
        return none
    best = np.inf
    inside_star = _inside(model, V, a_star, tau)
    for hull_points in _hull_multipliers(model, V, a_star):
        for a_hull in hull_points:
            for a_t in _mixtures(model, V, a_star, inside_star, a_hull, tau):
                best = min(best, _sigma_bound(model, V, a_t, objective, tau))
        if np.isfinite(best):
            break
    if not np.isfinite(best):
        return none
    return tau * best * (1.0 + 1e-6)


def _is_nominal(model: Any) -> bool:
    """A hinge or squared hinge without penalty, kernel or set (every radius 0)."""
    layout = model.layout
    return (model.l1 == 0 and model.l2 == 0 and model.kernel is None and model.loss.name in ("hinge", "squared_hinge")
            and (layout is None or not np.any(layout.radius > 0)))


def nominal_reach(model: Any, a: np.ndarray, objective: float) -> np.ndarray:
    """A bound ``reach_h ≥ |w*_h|`` at every minimizer of a model without penalty, set or linear constraints, from
    the data and the dual point ``a`` (module docstring): ``(P̂ − K_ε(a)) / (s − ‖ṽ_−‖)``, ``inf`` unless the
    denominator is positive by :data:`REACH_MARGIN` (no sample strictly inside its interval, ``x̃`` of lower column
    rank, or more than :data:`NOMINAL_MAX_FEATURES` features).

    Signs and bounds split ``ṽ`` (:func:`_sides`): over the feasible weights ``−ṽ·θ ≥ Σ_h g_h|θ_h| − ‖ṽ_−‖‖θ‖``, so
    ``s² = λ_min(Σ_i ε_i² x̃_i x̃_iᵀ + diag(g²))`` (``Σ_i ε_i|x̃_i·θ| + Σ_h g_h|θ_h|`` is an ℓ1 norm, at least the ℓ2
    norm of the same vector), on the coordinates not fixed at 0. A ridge intercept ``(μ/2)b²`` is minimized out
    instead of moved into ``θ``: the terms in ``b`` are at least ``−(|S| + Σ_i ε_i)²/(2μ)``, ``S = Σ_i a_i y_i``.
    Rounding: the smallest eigenvalue is lowered by ``(n + 3) eps`` of the same matrix of ``|x̃_i|`` (its products)
    and ``10 d eps ‖G‖_F`` (the eigensolver), ``ṽ`` is taken anywhere within the error of its products, and
    ``P̂ − K`` enlarged by :data:`_ROUNDING` of the terms' size.
    """
    X, y, loss = model.X, model.y, model.loss
    d = X.shape[1]
    c = np.asarray(model.c, dtype=np.float64)
    cap = c * float(loss.dual_upper)
    a = np.clip(np.asarray(a, dtype=np.float64), 0.0, cap)
    eps = np.maximum(np.minimum(a, cap - a), 0.0)
    live = eps > 0
    with_b = model.intercept.mode == "free"
    if (d + with_b > NOMINAL_MAX_FEATURES or not np.isfinite(objective) or not np.any(live)
            or model.has_constraints):
        return np.full(d, np.inf)
    rows = X.tocsr()[live] if hasattr(X, "tocsr") else X[live]
    v, err = _image(X, y, a, with_b)
    harmful, helpful = _sides(model, v + err, v - err, with_b)
    ws = model.feasible_set
    keep = np.append(~((ws.lower >= 0) & (ws.upper <= 0)), True)[:d + with_b]  # w_h fixed at 0: θ_h = 0
    gram = _gram(rows, eps[live] ** 2, with_b) + np.diag(helpful ** 2)
    absolute = _gram(abs(rows), eps[live] ** 2, with_b) + np.diag(helpful ** 2)
    gram, absolute = gram[np.ix_(keep, keep)], absolute[np.ix_(keep, keep)]
    fp = np.finfo(float).eps
    low = float(np.linalg.eigvalsh(gram)[0]) - (rows.shape[0] + 3) * fp * float(np.linalg.norm(absolute)) - (
        10 * gram.shape[0] * fp * float(np.linalg.norm(gram)))
    v_norm = float(np.linalg.norm(harmful)) * (1.0 + _ROUNDING)
    s = np.sqrt(max(low, 0.0)) * (1.0 - _ROUNDING)
    if not (low > 0 and v_norm < (1.0 - REACH_MARGIN) * s):
        return np.full(d, np.inf)
    sel = c > 0
    ends = [c[sel] * loss.dual_term(np.clip(a[sel] + sign * eps[sel], 0.0, cap[sel]) / c[sel]) for sign in (-1, 1)]
    terms = np.minimum(*ends)  # each term is concave in a_i: its least over the move is at an end
    K = float(terms.sum())
    if model.intercept.mode == "ridge":
        K -= (abs(float(a @ y)) + float(eps.sum())) ** 2 / (2.0 * model.intercept.mu) * (1.0 + _ROUNDING)
    top = max(objective - K, 0.0) + _ROUNDING * (float(np.abs(terms).sum()) + abs(objective))
    return np.full(d, top / (s - v_norm) * (1.0 + 1e-6))


def nominal_repair(model: Any, a: np.ndarray) -> np.ndarray:
    """``a`` with ``ṽ(a)`` moved to 0 (up to rounding) by the least change on its free samples, for a model
    without penalty, set or linear constraints; ``a`` itself for any other model or where the change would leave a
    sample's interval.

    Only the entries of ``ṽ`` that can lower the bound move (:func:`_sides`: a sign or bound takes care of the
    others). The free samples ``F`` have room ``ε_i = min(a_i, c_i ᾱ − a_i)`` of at least ``10⁻³`` of the largest;
    the change is ``δ_F = −y_F ∘ X̃_F (X̃_Fᵀ X̃_F)⁻¹ ṽ(a)`` on those entries, taken when ``|δ_i| ≤ ε_i``. How the point
    is found plays no part in the proof: the certifier checks the point it gets."""
    if not _is_nominal(model) or model.X.shape[1] + 1 > NOMINAL_MAX_FEATURES or model.has_constraints:
        return a
    X, y = model.X, model.y
    cap = np.asarray(model.c, dtype=np.float64) * float(model.loss.dual_upper)
    eps = np.maximum(np.minimum(a, cap - a), 0.0)
    if not np.any(eps > 0):
        return a
    free = eps >= 1e-3 * float(eps.max())
    with_b = model.intercept.mode == "free"
    rows = X.tocsr()[free] if hasattr(X, "tocsr") else X[free]
    v, _ = _image(X, y, a, with_b)
    target = np.flatnonzero(_sides(model, v, v, with_b)[0] > 0)  # a sign or bound takes care of the others
    if target.size == 0:
        return a
    cols = rows[:, target[target < X.shape[1]]]
    gram = _gram(cols, np.ones(int(free.sum())), with_b and target[-1] == X.shape[1])
    try:
        coef = np.linalg.solve(gram, v[target])
    except np.linalg.LinAlgError:
        return a
    delta = np.asarray(cols @ coef[:cols.shape[1]]).ravel() + (coef[-1] if gram.shape[0] > cols.shape[1] else 0.0)
    delta *= -y[free]
    if not (np.all(np.isfinite(delta)) and np.all(np.abs(delta) <= eps[free])):
        return a
    out = a.copy()
    out[free] += delta
    return _balanced(np.clip(out, 0.0, cap), y, model.intercept.mode)


def _sides(model: Any, high: np.ndarray, low: np.ndarray, with_b: bool) -> tuple[np.ndarray, np.ndarray]:
    """The parts of ``ṽ ∈ [low, high]`` (entrywise) that lower and that raise ``−ṽ·θ`` over the feasible weights:
    where ``w_h ≥ 0`` is imposed, ``max(ṽ_h, 0)`` and ``max(−ṽ_h, 0)`` (``−ṽ_h w_h = |ṽ_h| |w_h|`` when
    ``ṽ_h ≤ 0``); where ``w_h ≤ 0``, the mirror; 0 and 0 where both; ``|ṽ_h|`` and 0 elsewhere and for the
    intercept."""
    ws = model.feasible_set
    d = ws.lower.shape[0]
    pos, neg = ws.lower >= 0, ws.upper <= 0
    up, down = np.maximum(high[:d], 0.0), np.maximum(-low[:d], 0.0)
    harmful = np.where(pos, 0.0, down) + np.where(neg, 0.0, up)
    helpful = np.where(pos & ~neg, np.maximum(-high[:d], 0.0), 0.0) + np.where(neg & ~pos, np.maximum(low[:d], 0.0),
                                                                              0.0)
    if with_b:
        return np.append(harmful, max(high[d], -low[d], 0.0)), np.append(helpful, 0.0)
    return harmful, helpful


def _image(X: Any, y: np.ndarray, a: np.ndarray, with_b: bool) -> tuple[np.ndarray, np.ndarray]:
    """``ṽ(a) = Σ_i a_i y_i x̃_i`` and the bound ``(n + 4) eps Σ_i a_i |x̃_i|`` on its rounding, per entry."""
    v = np.asarray(X.T @ (a * y)).ravel()
    err = (X.shape[0] + 4) * np.finfo(float).eps * np.asarray(abs(X).T @ a).ravel()
    if with_b:
        v = np.append(v, float(a @ y))
        err = np.append(err, (X.shape[0] + 4) * np.finfo(float).eps * float(a.sum()))
    return v, err


def _gram(rows: Any, weights: np.ndarray, with_b: bool) -> np.ndarray:
    """``Σ_i weights_i x̃_i x̃_iᵀ`` (dense), ``x̃_i = (x_i, 1)`` with a free intercept, else ``x_i``."""
    scaled = rows.multiply(weights[:, None]).tocsr() if hasattr(rows, "multiply") else rows * weights[:, None]
    top = rows.T @ scaled
    top = np.asarray(top.todense()) if hasattr(top, "todense") else np.asarray(top)
    if not with_b:
        return top
    col = np.asarray(scaled.sum(axis=0)).ravel()
    return np.block([[top, col[:, None]], [col[None, :], np.array([[weights.sum()]])]])


def _shared_set(model: Any) -> Any:
    """The one symmetric box, ball or ellipsoid of the model when the reach applies to it, else None."""
    layout = model.layout
    if (model.l1 > 0 or model.l2 > 0 or model.kernel is not None or layout is None or len(layout.sets) != 1
            or model.loss.name not in ("hinge", "squared_hinge") or model.intercept.mode not in ("free", "none",
                                                                                                  "ridge")):
        return None
    V = layout.sets[0]
    if type(V).__name__ not in _SET_TYPES or not V.symmetric or not np.any(layout.radius > 0):
        return None
    return V


def _gauge_agrees(V: Any, v: np.ndarray) -> bool:
    """The set's gauge checked against its support: at ``u = worst_case(z)`` (a boundary point), ``γ_V(u) = 1`` and
    ``z·u = σ_V(z)``, for ``z`` the first axis, the all-ones direction and ``v``."""
    d = v.shape[0]
    for z in (np.eye(1, d, 0).ravel(), np.ones(d), v):
        if not np.any(z) or not np.all(np.isfinite(z)):
            continue
        u = np.asarray(V.worst_case(z), dtype=np.float64)
        sigma = float(V.support(z))
        if abs(V.gauge(u) - 1.0) > 1e-9 or abs(float(z @ u) - sigma) > 1e-9 * max(abs(sigma), 1e-300):
            return False
    return True


def _balanced(a: np.ndarray, y: np.ndarray, mode: str) -> np.ndarray:
    """``a`` with the heavier class scaled down so that ``Σ_i a_i y_i = 0`` (a free intercept; else ``a``)."""
    if mode != "free":
        return a
    fp, fn = class_balance(*class_sums(a, y))
    return a * np.where(y > 0, fp, fn)


def _hull_multipliers(model: Any, V: Any, start: np.ndarray) -> Iterator[list[np.ndarray]]:
    """Multipliers ``a° = κλ`` from nearest points ``Σ_{y_i=1} λ_i x_i ≈ Σ_{y_i=−1} λ_i x_i`` of the two classes'
    hulls (``λ`` on each class's simplex), ``κ`` the largest with ``a° ≤ c·min(ᾱ, 1)``, and ``a°`` scaled up by 4
    and 16 and clipped to that box (other admissible points): one list per start.

    Accelerated projected gradient steps on ``½‖Σ_i λ_i y_i x_i‖²`` (:func:`_projected_steps`) within
    :data:`_STEP_BUDGET`, started at ``start`` normalized on each class (the solver's multipliers, on the boundary
    of the dual's domain: the steps move them inside), then, when asked for more, at the ``c``-weighted means.
    """
    X, y, r = model.X, model.y, model.layout.radius
    c = np.asarray(model.c, dtype=np.float64)
    cap = c * min(float(model.loss.dual_upper), 1.0)
    classes = [np.flatnonzero((y > 0) & (c > 0)), np.flatnonzero((y < 0) & (c > 0))]
    if not all(idx.size for idx in classes):
        return
    size = X.nnz if hasattr(X, "nnz") else X.shape[0] * X.shape[1]
    steps = min(_MAX_STEPS, max(_MIN_STEPS, int(_STEP_BUDGET / (4.0 * max(size, 1)))))
    for weights in (start, c):
        lam = _projected_steps(X, y, r, V, _on_simplices(weights, classes), classes, steps)
        live = lam > 0
        kappa = float(np.min(cap[live] / lam[live]))
        yield [_balanced(np.minimum(scale * lam, cap), y, model.intercept.mode)
               for scale in (kappa, 4.0 * kappa, 16.0 * kappa)]


def _on_simplices(weights: np.ndarray, classes: list[np.ndarray]) -> np.ndarray:
    """``weights`` scaled to sum to 1 on each class (uniform where a class sums to 0)."""
    lam = np.zeros(weights.shape[0])
    for idx in classes:
        total = float(weights[idx].sum())
        lam[idx] = weights[idx] / total if total > 0 else 1.0 / idx.size
    return lam


def _onto_simplices(z: np.ndarray, classes: list[np.ndarray]) -> np.ndarray:
    """The Euclidean projection of ``z`` onto the product of the classes' simplices (0 off the classes):
    ``λ_i = max(z_i − θ, 0)`` on each class, ``θ`` found by sorting."""
    lam = np.zeros_like(z)
    for idx in classes:
        u = np.sort(z[idx])[::-1]
        tops = (np.cumsum(u) - 1.0) / np.arange(1, u.size + 1)
        k = max(int(np.count_nonzero(u > tops)) - 1, 0)  # the sorted values above their mean excess: a prefix
        lam[idx] = np.maximum(z[idx] - tops[k], 0.0)
    return lam


def _projected_steps(X: Any, y: np.ndarray, r: np.ndarray, V: Any, lam: np.ndarray, classes: list[np.ndarray],
                     steps: int) -> np.ndarray:
    """FISTA on ``f(λ) = ½‖u(λ)‖²``, ``u(λ) = Σ_i λ_i y_i x_i``, over the classes' simplices from ``lam``: the
    first point with ``γ_V(u(λ)) ≤ _DEPTH · Σ_i λ_i r_i``, or the last of ``steps``.

    Every step moves every weight: ``λ⁺ = Π(z − ∇f(z)/L)`` at the extrapolated point ``z`` (two products with
    ``X``; ``u(z)`` is the same combination of the ``u(λ)``), ``L`` lowered by :data:`_RELAX` then doubled until
    ``f(λ⁺) ≤ f(z) + ∇f(z)·(λ⁺ − z) + L‖λ⁺ − z‖²/2``, the momentum restarted when ``∇f(z)·(λ⁺ − λ) > 0``.
    """
    u = np.asarray(X.T @ (lam * y)).ravel()
    z, uz, t, L = lam, u, 1.0, 0.0
    for _ in range(steps):
        if V.gauge(u) <= _DEPTH * float(lam @ r):
            break
        grad = y * np.asarray(X @ uz).ravel()
        if L == 0.0:  # a Rayleigh quotient of X Xᵀ: at most its largest eigenvalue, raised below if too small
            L = float(np.sum(np.asarray(X.T @ (grad * y)) ** 2)) / max(float(grad @ grad), 1e-300)
            L = L if L > 0 else 1.0
        else:  # let the curvature fall where f is flatter: far fewer steps on correlated features
            L *= _RELAX
        fz = 0.5 * float(uz @ uz)
        for _ in range(64):
            new = _onto_simplices(z - grad / L, classes)
            unew = np.asarray(X.T @ (new * y)).ravel()
            step = new - z
            if 0.5 * float(unew @ unew) <= fz + float(grad @ step) + 0.5 * L * float(step @ step) * (1 + 1e-9):
                break
            L *= 2.0
        else:  # no step decreases f (rounding): λ is as near as the steps get
            break
        if float(grad @ (new - lam)) > 0:
            t = 1.0
        t_next = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * t * t))
        beta = (t - 1.0) / t_next
        z, uz = new + beta * (new - lam), unew + beta * (unew - u)
        lam, u, t = new, unew, t_next
    return lam


def _inside(model: Any, V: Any, a: np.ndarray, tau: np.ndarray) -> tuple[float, float]:
    """``(ρ(a), γ_V(v(a)))`` with ``ρ`` rounded down and ``γ`` up: ``γ(v) ≤ γ(v̂) + Σ_h |v_h − v̂_h| γ(e_h)``, the
    error of the computed ``v̂`` at most ``(n + 4)·eps·Σ_i a_i |x_ih|``."""
    v, err = _image(model.X, model.y, a, False)
    rho = float(a @ model.layout.radius) * (1.0 - _ROUNDING)
    return rho, float(V.gauge(v)) * (1.0 + _ROUNDING) + float(err @ tau)


def _mixtures(model: Any, V: Any, a_star: np.ndarray, inside_star: tuple[float, float], a_hull: np.ndarray,
              tau: np.ndarray) -> list[np.ndarray]:
    """Mixtures ``a_t = (1 − t) a* + t a°`` inside by the margin: ``t₀`` from the convexity of ``γ_V(v(a)) − ρ(a)``
    in closed form (``h(a) = γ − (1 − margin)ρ``, ``t₀ = h(a*)/(h(a*) − h(a°))``), then ``4^k t₀`` and 1;
    ``inside_star`` is :func:`_inside` of ``a*``."""
    rho_s, g_s = inside_star
    rho_h, g_h = _inside(model, V, a_hull, tau)
    h_s, h_h = g_s - (1 - REACH_MARGIN) * rho_s, g_h - (1 - REACH_MARGIN) * rho_h
    if h_s <= 0:
        t0 = 0.0
    elif h_h < 0:
        t0 = h_s / (h_s - h_h)
    else:
        return []
    mode = model.intercept.mode
    return [_balanced((1.0 - t) * a_star + t * a_hull, model.y, mode)
            for t in sorted({min(t0 * 4.0 ** k, 1.0) for k in range(6)} | {1.0})]


def _sigma_bound(model: Any, V: Any, a: np.ndarray, objective: float, tau: np.ndarray) -> float:
    """``(P̂ − K(a)) / (ρ(a) − γ_V(v(a)))`` with the sums' rounding covered; ``inf`` unless ``a`` is inside by the
    margin."""
    rho, gamma = _inside(model, V, a, tau)
    if not gamma < (1 - REACH_MARGIN) * rho:
        return np.inf
    c = np.asarray(model.c, dtype=np.float64)
    live = (a > 0) & (c > 0)
    terms = c[live] * model.loss.dual_term(a[live] / c[live])
    K = float(terms.sum())
    slack = _ROUNDING * (float(np.abs(terms).sum()) + abs(objective))
    if model.intercept.mode == "ridge":
        S = float(a @ model.y)
        K -= 0.5 * S * S / model.intercept.mu
    top = max(objective - K, 0.0) + slack
    return top / (rho - gamma)

"""A projected Newton method on the smooth logistic primal (``logistic-newton``), certified by the package's gap.

The model is

    minimize   f(w, b) = (λ2/2)‖w‖² + (μ/2) b² + Σ_i c_i log(1 + e^{−m_i}),   m_i = y_i(x_i·w + b),
    subject to l ≤ w ≤ u   (signs are the intervals [0, ∞) and (−∞, 0]),

with ``λ2 > 0``, ``μ = 0`` for a free intercept (``b`` unpenalized) and ``b = 0`` without one. Its gradient and
Hessian are

    ∇_w f = λ2 w − Xᵀ(c∘y∘α),   ∇_b f = μ b − Σ_i c_i y_i α_i,   α_i = σ(−m_i),
    ∇²f = [XᵀDX + λ2 I, XᵀD1; 1ᵀDX, 1ᵀD1 + μ],   D = diag(c_i α_i (1 − α_i)).

Each iteration (Bertsekas 1982) fixes the weights within ``ε`` of a bound whose gradient pushes outward (they take
a diagonally scaled gradient step), takes the Newton step on the others, and searches the projected arc
``w(t) = clip(w + t d, l, u)`` with Armijo's rule. The Newton system is solved by a Cholesky factorization of
the Hessian when the data are dense and ``d`` moderate, else by conjugate gradients on Hessian-vector products
(two sparse products each, a diagonal preconditioner, truncated by a forcing term).

The stopping rule is the package's own duality gap at the dual point read off the margins,
``a_i = c_i σ(−m_i)`` (balanced for a free intercept): ``P(w, b) − D(a) ≤ tol·max(1, |P|)``, ``D`` the dual
function of :mod:`robustsvm.certificates.duality`, exact at the optimum because the loss is differentiable
(``docs/derivations/logistic_newton.md``).
"""

from __future__ import annotations

import time
from typing import NamedTuple

import numpy as np
import scipy.linalg as la
import scipy.sparse as sp
from scipy.special import expit

from ..certificates.duality import admissible_multipliers, dual_value, penalty_conjugate
from ..model import Model
from .registry import Backend, History, Needs, Result, register

__all__ = ["DEFAULTS", "DENSE_HESSIAN_MAX_D", "NEEDS", "solve_logistic_newton"]

#: ``tol`` (the certified gap relative to ``max(1, |P|)``) and ``max_iter`` (Newton iterations)
DEFAULTS = {"tol": 1e-6, "max_iter": 100}
#: dense data with at most this many weights are solved with the d × d Hessian; wider or sparse data by CG
DENSE_HESSIAN_MAX_D = 1000
#: Armijo's sufficient-decrease fraction and the most halvings of a step
ARMIJO = 1e-4
HALVINGS = 40
#: the largest ``ε`` of the active set (Bertsekas's ``ε_k = min(ε, ‖w − P(w − ∇f)‖)``)
EPSILON = 1e-3
#: conjugate-gradient steps per Newton iteration at most
CG_STEPS = 250
#: entries of the scaled block of rows the Hessian's product holds at a time (8·10⁶: 64 MB)
GRAM_BLOCK = 8_000_000


NEEDS = Needs(
    losses=frozenset({"logistic"}),
    l2="required",
    l1=False,
    bounds=True,
    sets=(),
    why={"loss": "it minimizes the smooth logistic primal by Newton's method",
         "l2": "its dual certificate and the Newton systems need the strong convexity of λ2‖w‖²/2",
         "l1": "the L1 term is not smooth (logistic-dcd and the conic backends solve it)",
         "constraints": "a projected Newton step keeps bounds on single weights only, not linear constraints",
         "sets": "a robust margin adds the non-smooth σ_V(−y w) (logistic-dcd and the conic backends solve "
                 "uncertainty sets; a set of distributions adds a norm of w, also not smooth)"},
)


class Terms(NamedTuple):
    """The data and terms of ``f``: ``X`` (dense or CSR), its transpose for products, labels, weights ``c``,
    ``λ2``, ``μ`` (0 for a free intercept), whether there is an intercept, and the box of ``w``."""

    X: object
    XT: object
    y: np.ndarray
    c: np.ndarray
    l2: float
    mu: float
    has_b: bool
    lower: np.ndarray
    upper: np.ndarray


class Point(NamedTuple):
    """``(w, b)`` with ``z = Xw``, ``f``, the gradient and the Hessian's weights ``D`` and multipliers ``α = σ(−m)``."""

    w: np.ndarray
    b: float
    z: np.ndarray
    value: float
    grad_w: np.ndarray
    grad_b: float
    curv: np.ndarray
    alpha: np.ndarray


def evaluate(terms: Terms, w: np.ndarray, b: float, z: np.ndarray, losses: np.ndarray | None = None) -> Point:
    """``f``, its gradient and the Hessian's weights at ``(w, b)`` (``z = Xw``; ``losses`` the terms
    ``log(1 + e^{−m_i})`` when already computed): one product ``Xᵀ(c∘y∘α)``."""
    m = terms.y * (z + b)
    if losses is None:
        losses = np.logaddexp(0.0, -m)
    alpha = expit(-m)
    r = terms.c * terms.y * alpha
    grad_w = terms.l2 * w - np.asarray(terms.XT @ r).ravel()
    grad_b = terms.mu * b - float(r.sum()) if terms.has_b else 0.0
    value = 0.5 * terms.l2 * float(w @ w) + 0.5 * terms.mu * b * b + float(terms.c @ losses)
    return Point(w, b, z, value, grad_w, grad_b, terms.c * alpha * (1.0 - alpha), alpha)


def certificate(model: Model, terms: Terms, point: Point) -> tuple[float, np.ndarray]:
    """``(D, a)``: the dual function at ``a = c∘σ(−m)`` made admissible (balanced for a free intercept),

    ``D = Σ_i c_i H(α_i) − R*(Σ_i a_i y_i x_i) − (intercept term)``, ``R*(s) = max_{l ≤ w ≤ u} s·w − (λ2/2)‖w‖²``,

    the package's dual function (:func:`robustsvm.certificates.duality.dual_value`), a lower bound on the optimum.
    """
    c, y = terms.c, terms.y
    raw = c * point.alpha
    a = admissible_multipliers(raw, y, c, model.loss, model.intercept.mode)
    if np.array_equal(a, raw):  # the gradient's product: s = Xᵀ(a∘y) = λ2 w − ∇_w f
        s = terms.l2 * point.w - point.grad_w
    else:
        s = np.asarray(terms.XT @ (a * y)).ravel()
    conj = penalty_conjugate(s, terms.l2, 0.0, lower=terms.lower, upper=terms.upper)
    live = c > 0
    ridge = model.intercept if model.intercept.mode == "ridge" else None
    D = dual_value(model.loss, c[live], a[live] / c[live], conj, ridge, float(a @ y))
    return D, a


def active_set(terms: Terms, point: Point) -> np.ndarray:
    """Bertsekas's ``ε``-active set: weights within ``ε_k = min(ε, ‖w − P(w − ∇f)‖)`` of a bound whose gradient
    pushes them outward."""
    w, g = point.w, point.grad_w
    eps = min(EPSILON, float(np.linalg.norm(w - np.clip(w - g, terms.lower, terms.upper))))
    return ((w <= terms.lower + eps) & (g > 0)) | ((w >= terms.upper - eps) & (g < 0))


def hessian_diagonal(terms: Terms, squares, curv: np.ndarray, cols: np.ndarray | None = None) -> np.ndarray:
    """``diag(X_FᵀDX_F) + λ2`` on the columns ``cols`` (all when None): from ``squares = X∘X`` (sparse data),
    or from dense ``X`` by blocks of rows (no squared copy of ``X``)."""
    if squares is not None:
        part = squares if cols is None else squares[:, cols]
        return np.asarray(part.T @ curv).ravel() + terms.l2
    X = terms.X
    k = X.shape[1] if cols is None else int(cols.size)
    out = np.zeros(k)
    rows = max(1024, GRAM_BLOCK // max(k, 1))
    for start in range(0, X.shape[0], rows):
        block = X[start:start + rows] if cols is None else X[start:start + rows, cols]
        out += (block * block).T @ curv[start:start + rows]
    return out + terms.l2


def weighted_gram(X: np.ndarray, curv: np.ndarray, cols: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """``X_Fᵀ D X_F`` and ``X_Fᵀ D 1`` by blocks of rows (the scaled copy of a block, not of ``X``, in memory):
    one BLAS product per block, ``(D^{1/2} X_F)ᵀ(D^{1/2} X_F)``."""
    n = X.shape[0]
    k = X.shape[1] if cols is None else int(cols.size)
    gram, col = np.zeros((k, k)), np.zeros(k)
    rows = max(1024, GRAM_BLOCK // max(k, 1))
    for start in range(0, n, rows):
        block = X[start:start + rows] if cols is None else X[start:start + rows, cols]
        weights = curv[start:start + rows]
        scaled = block * np.sqrt(weights)[:, None]
        gram += scaled.T @ scaled
        col += block.T @ weights
    return gram, col


def dense_direction(terms: Terms, point: Point, free: np.ndarray) -> tuple[np.ndarray, float]:
    """The Newton step on the free weights (and ``b``): a Cholesky solve of the Hessian block ``H_FF``."""
    X, curv = terms.X, point.curv
    if not free.any() and not terms.has_b:  # every weight at an outward-pushing bound: no Newton block
        return np.zeros(X.shape[1]), 0.0
    gram, col = weighted_gram(X, curv, None if free.all() else np.flatnonzero(free))
    k = gram.shape[0]
    size = k + int(terms.has_b)
    H = np.empty((size, size))
    H[:k, :k] = gram
    H[np.arange(k), np.arange(k)] += terms.l2
    g = point.grad_w[free]
    if terms.has_b:
        H[:k, k] = col
        H[k, :k] = col
        H[k, k] = float(curv.sum()) + terms.mu
        g = np.append(g, point.grad_b)
    try:
        step = -la.cho_solve(la.cho_factor(H, lower=False, check_finite=False), g, check_finite=False)
    except la.LinAlgError:
        step = -la.lstsq(H, g, check_finite=False)[0]
    d = np.zeros(terms.X.shape[1])
    d[free] = step[:k]
    return d, float(step[k]) if terms.has_b else 0.0


def cg_direction(terms: Terms, point: Point, free: np.ndarray, diag: np.ndarray,
                 forcing: float) -> tuple[np.ndarray, float, np.ndarray, int]:
    """The truncated Newton step on the free weights (and ``b``): preconditioned conjugate gradients on
    ``H_FF p = −g_F``, each product ``Xᵀ(D(X p_w + p_b)) + λ2 p_w``, stopped at ``‖r‖ ≤ forcing·‖g_F‖``.
    Returns the step ``(d, d_b)``, its image ``X d`` (summed from the products' ``X p``) and the CG steps."""
    X, XT, curv, has_b = terms.X, terms.XT, point.curv, terms.has_b
    fixed = ~free
    g = np.where(free, point.grad_w, 0.0)
    gb = point.grad_b if has_b else 0.0
    pre = np.where(free, diag, 1.0)
    pre_b = float(curv.sum()) + terms.mu if has_b else 1.0

    def product(p: np.ndarray, pb: float) -> tuple[np.ndarray, float, np.ndarray]:
        u = np.asarray(X @ p).ravel()
        q = curv * (u + pb)
        out = np.asarray(XT @ q).ravel() + terms.l2 * p
        out[fixed] = 0.0
        return out, (float(q.sum()) + terms.mu * pb) if has_b else 0.0, u

    x, xb, image = np.zeros_like(g), 0.0, np.zeros(X.shape[0])
    r, rb = -g, -gb
    target = forcing * float(np.sqrt(g @ g + gb * gb))
    zr, zb = r / pre, rb / pre_b
    p, pb = zr.copy(), zb
    rz = float(r @ zr) + rb * zb
    steps = 0
    while steps < CG_STEPS:
        steps += 1
        Hp, Hpb, u = product(p, pb)
        pHp = float(p @ Hp) + pb * Hpb
        if pHp <= 0.0:
            break
        step = rz / pHp
        x += step * p
        xb += step * pb
        image += step * u
        r -= step * Hp
        rb -= step * Hpb
        if np.sqrt(r @ r + rb * rb) <= target:
            break
        zr, zb = r / pre, rb / pre_b
        rz_new = float(r @ zr) + rb * zb
        p = zr + (rz_new / rz) * p
        pb = zb + (rz_new / rz) * pb
        rz = rz_new
    return x, xb, image, steps


def line_search(terms: Terms, point: Point, d: np.ndarray, db: float, active: np.ndarray,
                Xd: np.ndarray | None = None) -> Point | None:
    """Armijo's rule on the projected arc ``w(t) = clip(w + t d, l, u)``, ``b(t) = b + t d_b`` (Bertsekas):
    ``f(w(t)) ≤ f(w) + σ(t ∇_F f·d_F + t ∇_b f·d_b + ∇_A f·(w(t) − w)_A)``; None when no step decreases ``f``.
    ``Xd``: the image ``X d`` when known."""
    w, b, z, g = point.w, point.b, point.z, point.grad_w
    if Xd is None:
        Xd = np.asarray(terms.X @ d).ravel()
    slope = float(g[~active] @ d[~active]) + point.grad_b * db
    slack = 4.0 * np.finfo(float).eps * max(1.0, abs(point.value))  # rounding of f near the optimum
    t = 1.0
    for _ in range(HALVINGS):
        trial = w + t * d
        w_t = np.clip(trial, terms.lower, terms.upper)
        if np.array_equal(w_t, trial):
            z_t = z + t * Xd
        else:
            z_t = z + np.asarray(terms.X @ (w_t - w)).ravel()
        b_t = b + t * db
        decrease = t * slope + float(g[active] @ (w_t - w)[active])
        if decrease >= 0.0 and t == 1.0 and np.array_equal(w_t, w) and db == 0.0:
            return None
        losses = np.logaddexp(0.0, -terms.y * (z_t + b_t))
        f_t = 0.5 * terms.l2 * float(w_t @ w_t) + 0.5 * terms.mu * b_t * b_t + float(terms.c @ losses)
        if f_t <= point.value + ARMIJO * decrease + (slack if t == 1.0 else 0.0):
            return evaluate(terms, w_t, b_t, z_t, losses)
        t *= 0.5
    return None


def _terms(model: Model) -> tuple[Terms, bool]:
    """The terms of ``f`` and whether the Newton systems are solved with the Hessian (dense, moderate ``d``)."""
    X = model.X
    dense = not sp.issparse(X) and model.d <= DENSE_HESSIAN_MAX_D
    if sp.issparse(X):
        X = X.tocsr()
        XT = X.T  # CSC: its products cost O(nnz) as well, without a copy
    else:
        X = np.asarray(X, dtype=np.float64)
        XT = X.T
    feasible = model.feasible_set
    mode = model.intercept.mode
    return Terms(X, XT, np.asarray(model.y, dtype=np.float64), np.asarray(model.c, dtype=np.float64),
                 float(model.l2), float(model.intercept.mu) if mode == "ridge" else 0.0, mode != "none",
                 np.asarray(feasible.lower, dtype=np.float64), np.asarray(feasible.upper, dtype=np.float64)), dense


def _start(terms: Terms) -> tuple[np.ndarray, float]:
    """``w = clip(0, l, u)`` and, for a free intercept, the best ``b`` of ``w = 0`` when it is feasible
    (the log-odds of the classes' weights)."""
    w = np.clip(0.0, terms.lower, terms.upper)
    b = 0.0
    if terms.has_b and terms.mu == 0.0 and not np.any(w):
        pos, neg = float(terms.c[terms.y > 0].sum()), float(terms.c[terms.y < 0].sum())
        if pos > 0 and neg > 0:
            b = float(np.log(pos / neg))
    return w, b


def solve_logistic_newton(model: Model, *, tol: float = DEFAULTS["tol"], max_iter: int = DEFAULTS["max_iter"],
                          verbose: bool = False, random_state=None) -> Result:
    """Solve a smooth logistic model by projected Newton steps; stop on the certified duality gap.

    Parameters
    ----------
    model : Model
        A normalized logistic model with ``λ2 > 0``, no L1 term and no uncertainty set (signs, bounds, sample
        weights and any intercept allowed).
    tol : float
        Stop once ``P(w, b) − D(a) ≤ tol·max(1, |P|)`` at the dual point ``a = c∘σ(−m)`` (balanced for a free
        intercept).
    max_iter : int
        Newton iterations at most; a run cut short returns status ``"max_iter"``.
    random_state : ignored
        The method is deterministic.
    """
    t_start = time.perf_counter()
    terms, dense = _terms(model)
    squares = terms.X.copy() if sp.issparse(terms.X) else None  # X∘X for the Hessian's diagonal
    if squares is not None:
        squares.data **= 2
    w, b = _start(terms)
    point = evaluate(terms, w, b, np.asarray(terms.X @ w).ravel() if np.any(w) else np.zeros(model.n))
    # CG's preconditioner: the Hessian's diagonal at the start, kept (refreshing it saved no CG steps on the
    # benchmark's sparse data and costs a pass over the non-zeros per iteration)
    diag = None if dense else hessian_diagonal(terms, squares, point.curv)
    history = History(verbose=verbose, name="logistic-newton")
    t_run = time.perf_counter()
    status, gap, D, a, inner, message = "max_iter", np.inf, -np.inf, None, 0, ""
    it = 0
    for it in range(max_iter + 1):
        D, a = certificate(model, terms, point)
        gap = max(point.value - D, 0.0)
        history.record(it, point.value, gap)
        if gap <= tol * max(1.0, abs(point.value)):
            status = "optimal"
            break
        if it == max_iter:
            break
        active = active_set(terms, point)
        free = ~active
        image = None
        if dense:
            d, db = dense_direction(terms, point, free)
        else:
            norm = float(np.sqrt(point.grad_w[free] @ point.grad_w[free] + point.grad_b ** 2))
            d, db, image, steps = cg_direction(terms, point, free, diag, min(0.5, np.sqrt(norm)))
            inner += steps
        if active.any():  # the fixed weights: a diagonally scaled gradient step onto their bound
            scale = hessian_diagonal(terms, squares, point.curv, np.flatnonzero(active))
            d[active] = -point.grad_w[active] / scale
            image = None
        moved = line_search(terms, point, d, db, active, image)
        if moved is None:
            status, message = "inaccurate", "no step decreases the objective (the rounding of f is reached); "
            break
        point = moved
    rel = gap / max(1.0, abs(point.value))
    return Result(
        w=point.w.copy(), b=float(point.b) if terms.has_b else 0.0, status=status, gap=gap, iterations=it,
        history=history.arrays(), time_compile=t_run - t_start, time_solve=time.perf_counter() - t_run,
        dual_value=D, dual_feasible=True, multipliers=a, dual_alpha=None if a is None else a / np.where(
            terms.c > 0, terms.c, 1.0), rel_gap=rel, primal_objective=point.value,
        extra={"cg_steps": inner, "hessian": "dense" if dense else "conjugate gradients"},
        message=message + f"relative duality gap {rel:.3g} after {it} Newton iterations"
        + ("" if status == "optimal" else f" (tolerance {tol:g} not reached)"),
    )


register(
    Backend(
        name="logistic-newton",
        solve=solve_logistic_newton,
        needs=NEEDS,
        summary="projected Newton on the smooth logistic primal: Cholesky of the d × d Hessian (dense data) or "
                "truncated conjugate gradients (sparse or wide data); L2, signs, bounds, any intercept",
        kind="second-order",
        certificate="duality gap at the multipliers σ(−m) of its margins (balanced for a free intercept)",
        defaults=DEFAULTS,
    )
)

"""Dual coordinate ascent with a Newton step per coordinate (``logistic-dcd``): the logistic loss, certified.

The model is

    minimize   (λ2/2)‖w‖² + λ1‖w‖₁ + I(b) + Σ_i c_i log(1 + e^{−y_i(x_i·w + b)})
    subject to l ≤ w ≤ u   (signs are the intervals [0, ∞) and (−∞, 0]),

with ``λ2 > 0``. For a fixed intercept ``b`` its dual is an entropy over ``α ∈ (0, 1)^n``
(``docs/derivations/logistic_dcd.md``):

    D_b(α) = Σ_i c_i (H(α_i) − α_i y_i b) − R*(v),     v = Σ_i c_i α_i y_i x_i,
    R*(v) = max_{l ≤ w ≤ u} v·w − λ1‖w‖₁ − (λ2/2)‖w‖²,   w(v) = clip(soft(v, λ1)/λ2, l, u),

the prox-dual of DESIGN §7 without a set. Each coordinate maximizes the exact entropy plus the
quadratic upper bound of ``R*`` along ``x_i`` (its gradient ``w(v)`` is ``1/λ2``-Lipschitz, and the bound is
exact without L1 and bounds): a one-dimensional concave problem, solved by a safeguarded Newton iteration
on the logit ``t = log(α/(1 − α))`` of the new ``α`` (Yu, Huang & Lin 2011, who solve it in ``α``):

    φ(t) = t + m_i + q_i(σ(t) − α_i) = 0,     q_i = c_i‖x_i‖²/λ2,   m_i = y_i(x_i·w + b),

increasing with ``φ' ≥ 1``, its root between ``−m_i − q_i(1 − α_i)`` and ``−m_i + q_i α_i``. In the logit the
new ``α`` never reaches 0 or 1. A ridge intercept ``(μ/2)b²`` is one more coordinate of ``w`` (``b = S/μ``,
``q_i`` gains ``c_i/μ``); a free intercept is the multiplier of ``S = Σ c_i α_i y_i = 0``, handled by its
augmented Lagrangian: the same coordinate with ``1/μ = ρ``, around the multiplier ``b``, which steps
``b ← b + ρS`` after each epoch. The stopping rule is the gap ``P(w, b*) − D(α̃)``: ``b*`` the exact best
intercept for ``w`` (a Newton iteration on ``Σ c_i y_i σ(−m_i) = 0``), ``D`` the dual function at ``α̃ = σ(t)``
balanced for a free intercept (:func:`robustsvm.certificates.duality.admissible_multipliers`).
"""

from __future__ import annotations

import time
from typing import NamedTuple

import numba as nb
import numpy as np
import scipy.sparse as sp
from scipy.special import expit

from .. import objective as objective_module
from ..certificates.duality import admissible_multipliers, dual_value
from ..model import Model
from ..uncertainty import Ball, Box, DistributionalSet
from .registry import Backend, History, Needs, Result, register

__all__ = ["DEFAULTS", "NEEDS", "solve_logistic_dcd"]

#: ``tol`` (the gap relative to ``max(1, |P|)``) and ``max_iter`` (epochs) when the caller gives none
DEFAULTS = {"tol": 1e-6, "max_iter": 1000}
#: Newton steps per coordinate at most (2–4 are usual; the bracket halves when a step leaves it)
NEWTON_STEPS = 50
#: a free intercept's augmented-Lagrangian weight ρ in units of ``mean_i ‖x_i‖²/λ2`` (the derivation, §3)
RHO_FACTOR = 0.03

def _ball_reasons(problem) -> list[str]:
    """A 2-ball only, and with signs only (the prox of L1 + A‖·‖₂ + a box has no closed form); a set of distributions
    whose term is a fixed penalty ``Cρ σ_U(w)`` with ``U`` a 2-ball (no bounds) or an ∞-ball (``σ_U = ‖·‖₁``, an
    L1 term): a Wasserstein ball with κ = ∞ and p ∈ {2, ∞}."""
    unc = problem.uncertainty
    if isinstance(unc, Ball) and (unc.p != 2 or problem.has_bounds):
        return ["logistic-dcd takes a Ball with p = 2 and no bounds beyond signs (its prox is a radial shrink)"]
    if isinstance(unc, DistributionalSet) and not _unit_ball(unc.unit_set(), problem.has_bounds):
        return [f"logistic-dcd takes {unc.route} whose unit set is Ball(p=2) (no bounds) or Ball(p=inf): the "
                f"penalty {unc.penalty} with a closed-form prox; the conic backends solve the others"]
    return []


def _unit_ball(unit, has_bounds: bool) -> bool:
    """Whether a fixed penalty ``σ_U`` has the closed-form prox: ``U`` a 2-ball without bounds or an ∞-ball."""
    return type(unit) is Ball and (unit.p == np.inf or (unit.p == 2 and not has_bounds))


NEEDS = Needs(
    losses=frozenset({"logistic"}),
    l2="required",
    bounds=True,
    sets=(Box, Ball, DistributionalSet),
    extra=_ball_reasons,
    why={"loss": "it solves the logistic loss's entropy dual",
         "l2": "the coordinate steps need the curvature bound 1/λ2 of the penalty's conjugate",
         "constraints": "a linear constraint couples the weights, which the closed-form clip of w cannot keep",
         "sets": "its prox-dual has a closed form for one shared Box or 2-ball (radii may differ per sample)"},
)


class Rows(NamedTuple):
    """The rows of ``X`` in CSR form, each coordinate's curvature ``q_i/c_i``, the labels, weights and radii."""

    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray
    curvature: np.ndarray
    y: np.ndarray
    c: np.ndarray
    radius: np.ndarray


class Terms(NamedTuple):
    """The penalty, the feasible box, ``1/μ`` of a ridge intercept (0: none) and the Box set's widths (0: none)."""

    l2: float
    l1: float
    lower: np.ndarray
    upper: np.ndarray
    inv_mu: float
    width: np.ndarray


#: the scalars the epochs keep: ``S = Σ c_i y_i α_i``, the intercept ``b``, ``A = Σ c_i α_i r_i`` and ``σ(w)``
#: (``Σ_h δ_h|w_h|`` for a Box set; ``‖T(v)‖²`` during a 2-ball epoch)
SUMS = np.dtype([("S", np.float64), ("b", np.float64), ("A", np.float64), ("sigma", np.float64)])


def intercept_sums(S: float = 0.0, b: float = 0.0, A: float = 0.0, sigma: float = 0.0) -> np.ndarray:
    """A one-record array of :data:`SUMS`."""
    out = np.zeros(1, dtype=SUMS)
    out[0] = (S, b, A, sigma)
    return out


class State(NamedTuple):
    """The dual point and its images: the logits ``t`` (``α = σ(t)``), ``v``, ``w(v, A)`` and the record ``sb`` of
    :data:`SUMS`."""

    t: np.ndarray
    v: np.ndarray
    w: np.ndarray
    sb: np.ndarray


@nb.njit(cache=True)
def _sigmoid(t: float) -> float:
    if t >= 0.0:
        return 1.0 / (1.0 + np.exp(-t))
    e = np.exp(t)
    return e / (1.0 + e)


@nb.njit(cache=True)
def _new_logit(t0: float, alpha: float, m: float, q: float) -> float:
    """The root of ``φ(t) = t + m + q(σ(t) − α)``: Newton's steps kept in the bracket, halving it otherwise."""
    lo, hi = -m - q * (1.0 - alpha), -m + q * alpha
    t = min(max(t0, lo), hi)
    for _ in range(NEWTON_STEPS):
        s = _sigmoid(t)
        f = t + m + q * (s - alpha)
        if f > 0.0:
            hi = t
        else:
            lo = t
        step = t - f / (1.0 + q * s * (1.0 - s))
        if abs(step - t) <= 1e-12 * max(1.0, abs(t)):
            return step
        t = step if lo < step < hi else 0.5 * (lo + hi)
    return t


@nb.njit(cache=True)
def _prox(v: float, l2: float, l1: float, lower: float, upper: float) -> float:
    """``clip(soft(v, λ1)/λ2, l, u)``."""
    a = abs(v) - l1
    if a <= 0.0:
        return min(max(0.0, lower), upper)
    return min(max(np.sign(v) * a / l2, lower), upper)


@nb.njit(cache=True)
def _refresh(terms: Terms, state: State) -> None:
    """Every ``w_h = w(v, A)_h`` and ``σ(w)`` after ``A`` changed."""
    v, w, sb = state.v, state.w, state.sb[0]
    total = 0.0
    for h in range(w.size):
        w[h] = _prox(v[h], terms.l2, terms.l1 + sb.A * terms.width[h], terms.lower[h], terms.upper[h])
        total += terms.width[h] * abs(w[h])
    sb.sigma = total


@nb.njit(cache=True)
def _row_dot(indices: np.ndarray, data: np.ndarray, start: int, end: int, x: np.ndarray) -> float:
    """``x_i·x`` for the CSR row ``i`` stored at ``[start, end)`` of ``indices`` and ``data``."""
    z = 0.0
    for k in range(start, end):
        z += data[k] * x[indices[k]]
    return z


@nb.njit(cache=True)
def _logit_step(t: np.ndarray, i: int, m: float, q: float) -> float:
    """Coordinate ``i``'s Newton step at robust margin ``m`` and curvature ``q``: ``t_i`` becomes the root of
    ``φ``; returns ``σ(t_i') − σ(t_i)``, the step of ``α_i``."""
    alpha = _sigmoid(t[i])
    t_new = _new_logit(t[i], alpha, m, q)
    t[i] = t_new
    return _sigmoid(t_new) - alpha


@nb.njit(cache=True)
def _ridge_intercept(sb, delta: float, inv_mu: float) -> None:
    """A ridge intercept's ``S += Δ``, ``b = S/μ`` after a step ``Δ = c_i y_i Δα_i`` (nothing without one)."""
    if inv_mu > 0.0:
        sb.S += delta
        sb.b = sb.S * inv_mu


@nb.njit(cache=True)
def epoch(rows: Rows, terms: Terms, state: State, b: float, order: np.ndarray) -> None:
    """One pass of Newton coordinate steps over the samples in ``order`` (``b``: the fixed free intercept)."""
    indptr, indices, data, y, c, r = rows.indptr, rows.indices, rows.data, rows.y, rows.c, rows.radius
    t, v, w, sb, width = state.t, state.v, state.w, state.sb[0], terms.width
    for i in order:
        if c[i] <= 0.0:
            continue
        start, end = indptr[i], indptr[i + 1]
        z = _row_dot(indices, data, start, end, w)
        m = y[i] * (z + b + sb.b) - r[i] * sb.sigma  # the robust margin (σ(w) = 0 without a set)
        step = _logit_step(t, i, m, c[i] * rows.curvature[i])
        delta = step * c[i] * y[i]
        if delta == 0.0:
            continue
        _ridge_intercept(sb, delta, terms.inv_mu)
        for k in range(start, end):
            v[indices[k]] += delta * data[k]
        if r[i] > 0.0:  # A moved: every threshold λ1 + Aδ_h did
            sb.A += step * c[i] * r[i]
            _refresh(terms, state)
            continue
        for k in range(start, end):
            h = indices[k]
            old = abs(w[h])
            w[h] = _prox(v[h], terms.l2, terms.l1 + sb.A * width[h], terms.lower[h], terms.upper[h])
            sb.sigma += width[h] * (abs(w[h]) - old)


@nb.njit(cache=True)
def epoch_ball(rows: Rows, terms: Terms, state: State, b: float, order: np.ndarray) -> None:
    """:func:`epoch` for a shared 2-ball on the signs' cone: ``w = T(v)·(1 − A/‖T(v)‖)₊/λ2``, ``T`` the
    soft-threshold and sign clip; ``state.w`` holds ``T(v)`` and ``sb.sigma`` holds ``‖T(v)‖²`` during the epoch."""
    indptr, indices, data, y, c, r = rows.indptr, rows.indices, rows.data, rows.y, rows.c, rows.radius
    t, v, tv, sb = state.t, state.v, state.w, state.sb[0]
    for i in order:
        if c[i] <= 0.0:
            continue
        start, end = indptr[i], indptr[i + 1]
        z = _row_dot(indices, data, start, end, tv)
        norm = np.sqrt(max(sb.sigma, 0.0))
        shrink = max(0.0, 1.0 - sb.A / norm) / terms.l2 if norm > 0.0 else 0.0
        m = y[i] * (shrink * z + b + sb.b) - r[i] * shrink * norm  # σ(w) = ‖w‖₂
        step = _logit_step(t, i, m, c[i] * rows.curvature[i])
        delta = step * c[i] * y[i]
        if delta == 0.0:
            continue
        _ridge_intercept(sb, delta, terms.inv_mu)
        sb.A += step * c[i] * r[i]
        for k in range(start, end):
            h = indices[k]
            v[h] += delta * data[k]
            old = tv[h]
            tv[h] = _prox(v[h], 1.0, terms.l1, terms.lower[h], terms.upper[h])
            sb.sigma += tv[h] * tv[h] - old * old


@nb.njit(cache=True)
def free_intercept(z: np.ndarray, y: np.ndarray, c: np.ndarray, b: float) -> float:
    """``argmin_b Σ_i c_i log(1 + e^{−y_i(z_i + b)})``: Newton's steps on its derivative, kept in a bracket."""
    lo, hi = -np.inf, np.inf
    for _ in range(100):
        g, curv = 0.0, 0.0
        for i in range(z.size):
            s = _sigmoid(-y[i] * (z[i] + b))  # σ(−m_i)
            g -= c[i] * y[i] * s
            curv += c[i] * s * (1.0 - s)
        if g > 0.0:
            hi = b
        else:
            lo = b
        step = b - g / curv if curv > 0.0 else np.nan
        if not lo < step < hi:
            step = 0.5 * (lo + hi) if np.isfinite(lo) and np.isfinite(hi) else b - np.sign(g)
        if abs(step - b) <= 1e-14 * max(1.0, abs(b)):
            return step
        b = step
    return b


def _ball_weights(state: State, terms: Terms) -> np.ndarray:
    """``w = T(v)·(1 − A/‖T(v)‖)₊/λ2`` from the 2-ball epoch's ``T(v)``."""
    norm = float(np.linalg.norm(state.w))
    return state.w * (max(0.0, 1.0 - float(state.sb[0]["A"]) / norm) / terms.l2 if norm > 0 else 0.0)


def _next_check(gaps: list, epochs: list, target: float) -> int:
    """Epochs to the next certificate: half those the linear rate of the last two predicts to the target (1–10)."""
    if len(gaps) < 2 or not (0.0 < gaps[-1] < gaps[-2]):
        return 1
    rate = np.log(gaps[-1] / gaps[-2]) / max(epochs[-1] - epochs[-2], 1)
    needed = np.log(target / gaps[-1]) / rate if target < gaps[-1] else 0.0
    return int(min(max(np.ceil(0.5 * needed), 1), 10))


def _csr(X) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    A = X.tocsr() if sp.issparse(X) else sp.csr_matrix(np.asarray(X))
    A.sort_indices()
    return (A.indptr.astype(np.int64), A.indices.astype(np.int64),
            np.ascontiguousarray(A.data, dtype=np.float64))


def _certificate(model: Model, w: np.ndarray, b: float, margins: np.ndarray, t: np.ndarray,
                 terms: Terms, radius: np.ndarray, ball: bool = False,
                 fixed: float = 0.0) -> tuple[float, float, np.ndarray]:
    """``(P(w, b), D, a)``: the objective and the dual function at ``a = c∘σ(t)`` made admissible (balanced for a
    free intercept), at the scale 1 (the certifier searches the best scale of the returned point once).

    ``D = Σ c_i H(α_i) − h*(v, A) − (intercept term)`` with ``h*(v, A) = max_{l ≤ w ≤ u} v·w − Σ_h (λ1 + Aδ_h)|w_h|
    − (λ2/2)‖w‖²``, maximized by ``w(v, A)``: the exact dual function of the (robust) model.
    """
    P = objective_module.objective_from_margins(model, w, b, margins)
    c, y, mode = model.c, model.y, model.intercept.mode
    a = admissible_multipliers(c * expit(t), y, c, model.loss, mode)
    ay = a * y
    v = np.asarray(model.X.T @ ay).ravel()
    if ball:  # (‖T(v)‖ − A)₊²/(2λ2) on the signs' cone
        tv = np.clip(np.sign(v) * np.maximum(np.abs(v) - terms.l1, 0.0), terms.lower, terms.upper)
        excess = max(float(np.linalg.norm(tv)) - float(a @ radius) - fixed, 0.0)
        conj = excess * excess / (2.0 * terms.l2)
    else:
        thresh = terms.l1 + float(a @ radius) * terms.width
        wv = np.clip(np.sign(v) * np.maximum(np.abs(v) - thresh, 0.0) / terms.l2, terms.lower, terms.upper)
        conj = float(v @ wv - thresh @ np.abs(wv) - 0.5 * terms.l2 * (wv @ wv))
    live = c > 0
    ridge = model.intercept if mode == "ridge" else None
    D = dual_value(model.loss, c[live], a[live] / c[live], conj, ridge, float(ay.sum()))
    return P, D, a


def solve_logistic_dcd(model: Model, *, tol: float = DEFAULTS["tol"], max_iter: int = DEFAULTS["max_iter"],
                       verbose: bool = False, random_state=0) -> Result:
    """Solve a logistic model by dual coordinate ascent with Newton steps; stop on the certified gap.

    Parameters
    ----------
    model : Model
        A normalized logistic model with ``λ2 > 0`` (signs, bounds, L1 and one shared Box set allowed).
    tol : float
        Stop once ``P(w, b) − D ≤ tol·max(1, |P|)``.
    max_iter : int
        Epochs at most (one pass of coordinate steps over the samples each).
    random_state : int or None, default 0
        Seed of the order of the coordinates in each epoch (None: a fresh seed).
    """
    t_start = time.perf_counter()
    n, d = model.n, model.d
    indptr, indices, data = _csr(model.X)
    row_of = np.repeat(np.arange(n), np.diff(indptr))
    sq_norm = np.bincount(row_of, weights=data * data, minlength=n)
    feasible = model.feasible_set
    lower = np.asarray(feasible.lower, dtype=np.float64)
    upper = np.asarray(feasible.upper, dtype=np.float64)
    radius, width = np.zeros(n), np.zeros(d)
    ball = model.layout is not None and isinstance(model.layout.sets[0], Ball)
    # a set of distributions as the fixed penalty Cρ σ_U(w): a 2-ball U with A = Cρ, or λ1 + Cρ for σ_U = ‖·‖₁
    dist, fixed, l1 = model.distribution, 0.0, float(model.l1)
    if dist is not None:
        budget, radial = dist.fixed_mass(model.c), dist.unit_set().p == 2
        ball, fixed = radial, (budget if radial else 0.0)
        l1 += budget if not radial else 0.0
    if model.layout is not None:  # one Box set: σ(w) = Σ δ_h|w_h|; one 2-ball: σ(w) = ‖w‖₂
        the_set = model.layout.sets[0]
        radius = np.ascontiguousarray(model.layout.radius, dtype=np.float64)
        if not ball:
            width = np.ones(d) if the_set.widths is None else np.asarray(the_set.widths, dtype=np.float64)
    # the curvature of h*(v, A) along (c y x_i, c r_i): Σ_h (|x_ih| + r_i δ_h)²/λ2 for a Box, ((‖x_i‖ + r_i)² +
    # ‖x_i‖²)/λ2 for the 2-ball (the derivation, §5)
    cross = np.bincount(row_of, weights=np.abs(data) * width[indices], minlength=n)
    curvature = (sq_norm + 2.0 * radius * cross + radius * radius * float(width @ width)) / float(model.l2)
    if ball:
        curvature = ((np.sqrt(sq_norm) + radius) ** 2 + sq_norm) / float(model.l2)
    mode = model.intercept.mode
    # a ridge intercept is one more coordinate of w (b = S/μ); a free one is the multiplier of S = 0, its
    # augmented Lagrangian the same coordinate with weight ρ around the multiplier b
    inv_mu = 1.0 / float(model.intercept.mu) if mode == "ridge" else 0.0
    if mode == "free":
        inv_mu = RHO_FACTOR * max(float(np.mean(sq_norm)), 1e-300) / float(model.l2)
    rows = Rows(indptr, indices, data, curvature + inv_mu, np.ascontiguousarray(model.y, dtype=np.float64),
                np.ascontiguousarray(model.c, dtype=np.float64), radius)
    terms = Terms(float(model.l2), l1, lower, upper, inv_mu, width)
    # start from α = 1/2 everywhere (w = 0, b = 0 make every margin 0, so σ(−m) = 1/2) and its images
    t = np.zeros(n)
    v = np.asarray(model.X.T @ (0.5 * rows.c * rows.y)).ravel()
    S = float(0.5 * rows.c @ rows.y)
    state = State(t, v, np.zeros(d), intercept_sums(S, S * inv_mu, float(0.5 * rows.c @ radius) + fixed))
    if ball:
        state.w[:] = [_prox(v[h], 1.0, terms.l1, lower[h], upper[h]) for h in range(d)]
        state.sb[0]["sigma"] = float(state.w @ state.w)
    else:
        _refresh(terms, state)
    run_epoch = epoch_ball if ball else epoch
    rng = np.random.default_rng(random_state)
    history = History(verbose=verbose, name="logistic-dcd")
    b = 0.0
    status, gap, P, D, a = "max_iter", np.inf, np.nan, -np.inf, None
    t_run = time.perf_counter()
    epochs = 0
    z = np.asarray(model.X @ state.w).ravel()
    gaps: list = []
    checked: list = []
    check_at = 1
    b_best = 0.0
    for epochs in range(1, max_iter + 1):
        run_epoch(rows, terms, state, b, rng.permutation(n))
        if mode == "free":  # the multiplier's step b ← b + ρS
            b += float(state.sb[0]["b"])
        if epochs < check_at and epochs < max_iter:
            continue
        w = _ball_weights(state, terms) if ball else state.w
        z = np.asarray(model.X @ w).ravel()
        # the certificate's primal point: w with its best intercept
        sigma = float(np.linalg.norm(w)) if ball else float(width @ np.abs(w))
        shifted = z - rows.y * radius * sigma  # y(z' + b) is the robust margin
        b_best = free_intercept(shifted, rows.y, rows.c, b + float(state.sb[0]["b"])) if mode == "free" else \
            float(state.sb[0]["b"])
        margins = objective_module.robust_margins(model, w, b_best, z=z)
        P, D, a = _certificate(model, w, b_best, margins, state.t, terms, radius, ball, fixed)
        gap = max(P - D, 0.0)
        history.record(epochs, P, gap)
        target = tol * max(1.0, abs(P))
        if gap <= target:
            status = "optimal"
            break
        gaps.append(gap)
        checked.append(epochs)
        check_at = epochs + _next_check(gaps, checked, target)
    b_out = b_best if mode != "none" else 0.0
    return Result(
        w=(_ball_weights(state, terms) if ball else state.w).copy(),
        b=b_out, status=status, gap=gap, iterations=epochs, history=history.arrays(),
        time_compile=t_run - t_start, time_solve=time.perf_counter() - t_run, dual_value=D, dual_feasible=True,
        multipliers=a, message=f"relative duality gap {gap / max(1.0, abs(P)):.3g} after {epochs} epochs"
                               + ("" if status == "optimal" else f" (tolerance {tol:g} not reached)"),
    )


register(
    Backend(
        name="logistic-dcd",
        solve=solve_logistic_dcd,
        needs=NEEDS,
        summary="dual coordinate ascent with a Newton step per coordinate on the logistic loss's entropy dual "
                "(L2, L1, signs, bounds, a shared Box set, any intercept)",
        kind="first-order",
        certificate="duality gap from the balanced dual point",
        defaults=DEFAULTS,
    )
)

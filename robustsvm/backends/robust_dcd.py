"""Robust dual coordinate ascent (``robust-dcd``): Box, Ball and Ellipsoid robust SVMs, certified.

The model is

    minimize   (λ2/2)‖w‖² + λ1‖w‖₁ [+ (μ/2) b²] + Σ_i c_i ℓ(y_i (x_i·w + b) − r_i σ_V(w))
    subject to s_h w_h ≥ 0,

with ``ℓ`` the hinge or squared hinge, ``c_i`` the loss coefficients (mean or sum, times sample weights),
``r_i ≥ 0`` the radii and ``V`` one symmetric set shared by every sample: ``Box`` (widths δ,
``σ_V(w) = Σ δ_h|w_h|``), ``Ball`` with p ∈ {1, 2, ∞} (``σ_V = ‖·‖_q``) or ``Ellipsoid``
(``σ_V(w) = ‖Lᵀw‖₂``). Its dual over ``0 ≤ α_i ≤ 1`` (hinge) or ``α_i ≥ 0`` (squared hinge) is

    D(α) = max_{u ∈ V} D_u(α),
    D_u(α) = Σ_i c_i (α_i − δ α_i²/4) − (λ2/2)‖T(v − A u)/λ2‖² [− S²/(2μ)],

``v = Σ c_i y_i α_i x_i``, ``A = Σ c_i α_i r_i``, ``S = Σ c_i y_i α_i`` (= 0 with a free intercept),
``T = clip_s ∘ soft(·, λ1)``. Every ``α`` and every ``u ∈ V`` give a lower bound ``D_u(α)`` of the optimum,
and ``w(α) = T(v − A u*)/λ2`` at the maximizing ``u*`` is sign-feasible by construction: the duality gap
``P(w, b) − D_u(α̃)`` is the certificate and the stopping rule. The derivation is in
``docs/derivations/robust_dcd.md``.
"""

from __future__ import annotations

import math
import time
from functools import partial

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from ..objective import objective_from_margins
from ..uncertainty import Ball, Box, Ellipsoid
from . import _robust_dcd_kernels as kern
from .dcd import CertificateSchedule, Shrinking, _Products, best_intercept, certified_result, intercept_rho
from .registry import Backend, History, Needs, Result, register

__all__ = ["NEEDS", "model_arguments", "robust_dcd_arrays", "shared_set_needs", "solve_robust_dcd"]


def shared_set_needs(name: str, exponents: tuple[float, ...], exponent_hint: str, sets_hint: str) -> Needs:
    """What a backend of the shared-set robust model solves (``robust-dcd``, ``feature-ipm``).

    Soft-margin losses, L2 > 0 with optional L1, signs, every intercept mode, one shared Box, Ball or Ellipsoid
    (radii may differ per sample), a ball's p among ``exponents``; the hints end the refusals.
    """
    allowed = ", ".join("∞" if p == math.inf else f"{p:g}" for p in exponents)

    def ball_exponent(problem) -> list[str]:
        unc = problem.uncertainty
        sets = list(unc) if isinstance(unc, (list, tuple)) else [unc]
        bad = sorted({s.p for s in sets if type(s) is Ball and s.p not in exponents})
        if bad:
            return [f"{name} solves Ball(p) for p ∈ {{{allowed}}} only (p = {', '.join(f'{p:g}' for p in bad)}"
                    f"{exponent_hint}"]
        return []

    return Needs(
        losses=frozenset({"hinge", "squared_hinge"}),
        l2="required",
        l1=True,
        sets=(Box, Ball, Ellipsoid),
        per_sample_sets=False,
        why={"loss": f"{name} needs a soft-margin loss", "sets": sets_hint},
        extra=ball_exponent,
    )


#: what robust-dcd solves: soft-margin losses, L2 > 0 with optional L1, signs, every intercept mode, and one
#: shared Box, Ball (p = 1, 2, ∞) or Ellipsoid (radii may differ per sample)
NEEDS = shared_set_needs(
    "robust-dcd", (1.0, 2.0, math.inf),
    ": the prox of its dual norm has no closed form); the conic backends (clarabel, scs) solve it",
    "other sets have no cheap prox of their support function; the conic backends (clarabel, scs) solve them")


# ------------------------------------------------------------------------------------------------------ the set
class _SetSpec:
    """What the kernels need to know about ``V``: ``kind``, widths ``delta``, Cholesky factor ``L``."""

    def __init__(self, V, d: int) -> None:
        self.V = V
        self.delta = np.ones(d)
        self.L = np.zeros((1, 1))
        self.lnorm2 = 1.0
        if V is None or type(V) is Box:
            self.kind = kern.KIND_BOX
            if V is not None and V.widths is not None:
                self.delta = np.ascontiguousarray(V.widths, dtype=np.float64)
        elif type(V) is Ball:
            self.kind = {math.inf: kern.KIND_BOX, 2.0: kern.KIND_BALL2, 1.0: kern.KIND_LINF}[V.p]
        else:
            self.kind = kern.KIND_ELLIPSOID
            self.L = np.ascontiguousarray(V.L, dtype=np.float64)
            self.lnorm2 = float(np.linalg.eigvalsh(V.shape)[-1])

    def support(self, w: np.ndarray) -> float:
        """``σ_V(w)`` by the set's own numpy formula (0 when nominal)."""
        return 0.0 if self.V is None else float(self.V.support(w))

    def gauge(self, u: np.ndarray) -> float:
        """The gauge of V at u (``u ∈ V`` iff ≤ 1), computed independently of the kernels."""
        if self.kind == kern.KIND_BOX:
            return float(np.max(np.abs(u) / self.delta)) if u.size else 0.0
        if self.kind == kern.KIND_BALL2:
            return float(np.linalg.norm(u))
        if self.kind == kern.KIND_LINF:
            return float(np.abs(u).sum())

        return float(np.linalg.norm(sla.solve_triangular(self.L, u, lower=True)))


class _State:
    """The maintained vectors of the kernels (see :mod:`._robust_dcd_kernels`)."""

    def __init__(self, d: int) -> None:
        self.v = np.zeros(d)
        self.z = np.zeros(d)
        self.w = np.zeros(d)
        self.u = np.zeros(d)
        self.mu = np.zeros(d)
        self.scal = np.zeros(5)
        self.mu_primal = self.mu

    def refresh(self, spec, v, A, lam, lam1, sg, inner, inner_tol):
        self.v[:] = v
        kern.refresh(spec.kind, self.v, float(A), lam, lam1, sg, (sg >= 0).astype(np.float64),
                     (sg <= 0).astype(np.float64), spec.delta, spec.L, spec.lnorm2, self.mu, self.z,
                     self.w, self.u, self.scal, inner, inner_tol)


class _Certificate:
    __slots__ = ("D", "P", "VV", "b", "w")

    def __init__(self, P: float, D: float, w: np.ndarray, b: float) -> None:
        self.P, self.D, self.w, self.b = P, D, w, b
        self.VV = None

    @property
    def gap(self) -> float:
        return max(self.P - self.D, 0.0)

    @property
    def rel_gap(self) -> float:
        return self.gap / max(abs(self.P), np.finfo(float).tiny)


#: inner projected-gradient steps of the ellipsoid's u when certifying (the bound is valid at any step)
_CERT_INNER = 20000


def _certify(ops, spec, y, c, r, alpha, lam, lam1, sg, squared, mode, mu, b_eff, work, inner_tol, primal):
    """Upper bound ``P(w, b)`` at a sign-feasible ``w`` and lower bound ``D_u(α̃)`` at a dual-feasible ``α̃``.

    ``v`` and ``A`` are recomputed from α (no drift). Primal: ``w = w(α)``, ``b`` the exact best intercept of
    the robust margins (free), ``S/μ`` (ridge) or 0, ``σ_V(w)`` by the set's own formula. Dual: with a free
    intercept the class with the larger ``Σ c_i α_i`` is scaled down so that ``S = 0``; ``u`` is the saddle point
    of the scaled ``(v, A)`` divided by its gauge if rounding put it outside V, so ``u ∈ V`` exactly.
    """
    upper = np.inf if squared else 1.0
    alpha = np.clip(alpha, 0.0, upper)
    pos = y > 0
    cya = c * y * alpha
    VV = ops.images(cya, pos)
    car = c * alpha * r
    A_pos, A_neg = float(car[pos].sum()), float(car[~pos].sum())
    v = VV[0] + VV[1]
    A = A_pos + A_neg
    fp = fn = 1.0
    if mode == "free":
        p_sum, n_sum = float(cya[pos].sum()), float(-cya[~pos].sum())
        if p_sum > n_sum:
            fp = n_sum / p_sum
        elif n_sum > p_sum:
            fn = p_sum / n_sum
    # primal point at α itself
    work.refresh(spec, v, A, lam, lam1, sg, _CERT_INNER, inner_tol)
    w = work.w.copy()
    work.mu_primal = work.mu.copy()
    sigma = spec.support(w)
    zmarg = ops.matvec(w) - y * r * sigma
    S = float(cya.sum())
    if mode == "free":
        candidates = [best_intercept(zmarg, y, c, squared), b_eff]
    elif mode == "l2":
        candidates = [S / mu]
    else:
        candidates = [0.0]
    best = None
    for b in candidates:
        P = primal(w, b, y * (zmarg + b))
        if best is None or P < best[0]:
            best = (P, b)
    P, b = best
    # dual point
    if fp != 1.0 or fn != 1.0:
        alpha_t = np.where(pos, fp * alpha, fn * alpha)
        v_t = fp * VV[0] + fn * VV[1]
        A_t = fp * A_pos + fn * A_neg
        work.refresh(spec, v_t, A_t, lam, lam1, sg, _CERT_INNER, inner_tol)
    else:
        alpha_t, v_t, A_t = alpha, v, A
    u = work.u.copy()
    g = spec.gauge(u)
    if g > 1.0:
        u /= g
    wd = kern.softclip(v_t - A_t * u, lam1, sg, 1.0 / lam)
    D = float(c @ alpha_t) - 0.5 * lam * float(wd @ wd)
    if squared:
        D -= 0.25 * float(c @ (alpha_t * alpha_t))
    if mode == "l2":
        D -= 0.5 * S * S / mu
    cert = _Certificate(P, D, w, b)
    cert.VV = VV
    return cert


def _as_alpha(warm_start, n: int, upper: float) -> np.ndarray:
    if warm_start is None:
        return np.zeros(n)
    alpha = warm_start.extra.get("dual_alpha") if hasattr(warm_start, "extra") else warm_start
    alpha = np.array(alpha, dtype=np.float64)
    if alpha.shape != (n,):
        raise ValueError(f"warm_start must hold one dual value per sample, shape ({n},); got {alpha.shape}")
    if not np.all(np.isfinite(alpha)):
        raise ValueError("warm_start contains NaN or infinity")
    return np.clip(alpha, 0.0, upper)


def _check_options(lam, lam1, check_every, inner, shrinking) -> None:
    if not lam > 0:
        raise ValueError(f"l2 must be positive, got {lam!r}")
    if not lam1 >= 0:
        raise ValueError(f"l1 must be non-negative, got {lam1!r}")
    if check_every < 1:
        raise ValueError(f"check_every must be a positive integer, got {check_every!r}")
    if inner < 1:
        raise ValueError(f"inner must be a positive integer, got {inner!r}")
    if not isinstance(shrinking, (bool, np.bool_)):
        raise TypeError(f"shrinking must be True or False, got {shrinking!r}")


def _arrays(X, y, c, lam, signs, intercept, mu, uncertainty, radius, rho):
    """Contiguous arrays, the set's description, squared row norms, the intercept mode and ρ (as for ``dcd``)."""
    mode = intercept
    if mode not in ("free", "none", "l2"):
        raise ValueError(f"intercept must be 'free', 'none' or 'l2', got {intercept!r}")
    mu = float(mu)
    if mode == "l2" and mu <= 0:
        mode = "free"
    n, d = X.shape
    y = np.ascontiguousarray(y, dtype=np.float64)
    c = np.ascontiguousarray(c, dtype=np.float64)
    try:
        r = np.ascontiguousarray(np.broadcast_to(0.0 if radius is None else radius, (n,)), dtype=np.float64)
    except ValueError:
        raise ValueError(f"radius must be a scalar or hold one value per sample ({n}), got shape "
                         f"{np.shape(radius)}") from None
    if np.any(r < 0) or not np.all(np.isfinite(r)):
        raise ValueError("radius must be finite and non-negative")
    spec = _SetSpec(uncertainty, d)
    if spec.delta.shape != (d,):
        raise ValueError(f"the box widths have {spec.delta.size} values but X has {d} features")
    if spec.kind == kern.KIND_ELLIPSOID and spec.L.shape != (d, d):
        raise ValueError(f"the ellipsoid lives in R^{spec.L.shape[0]} but X has {d} features")
    sg = np.ascontiguousarray(np.zeros(d) if signs is None else signs, dtype=np.int8)
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64)
        sqn = np.asarray(X.multiply(X).sum(axis=1)).ravel()
    else:
        X = np.ascontiguousarray(X, dtype=np.float64)
        sqn = np.einsum("ij,ij->i", X, X)
    return X, y, c, r, spec, sg, sqn, mode, mu, intercept_rho(mode, rho, c, sqn, lam, mu)


def _epoch_runner(X, y, c, r, sqn, alpha, common, index, shrinking, rng_state, inner, inner_tol, local):
    """One compiled epoch over ``index[:active]`` (dense or CSR rows); the state is updated in place."""
    if sp.issparse(X):
        parts = (X.indptr, X.indices, np.ascontiguousarray(X.data, dtype=np.float64))

        def run_epoch(active, pg_max_old, pg_min_old):
            return kern.epoch_sparse(*parts, y, c, r, sqn, alpha, *common, index, active, pg_max_old, pg_min_old,
                                     shrinking, rng_state, inner, inner_tol, local)
        return run_epoch

    def run_epoch(active, pg_max_old, pg_min_old):
        return kern.epoch_dense(X, y, c, r, sqn, alpha, *common, index, active, pg_max_old, pg_min_old,
                                shrinking, rng_state, inner, inner_tol, local)
    return run_epoch


def robust_dcd_arrays(X, y, c, *, l2, primal, l1=0.0, signs=None, intercept="free", mu=0.0, uncertainty=None,
                      radius=None, squared=False, tol=1e-4, max_iter=1000, verbose=False, random_state=None,
                      shrinking=True, check_every=10, rho=None, warm_start=None, inner=5,
                      inner_tol=1e-13) -> Result:
    """Solve the robust model on plain arrays (see the module docstring for the model).

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix of shape (n, d)
    y : ndarray of shape (n,)
        Labels −1/+1.
    c : ndarray of shape (n,)
        Loss coefficients ``c_i ≥ 0`` (samples with ``c_i = 0`` are left out of the dual).
    l2, l1 : float
        ``λ2 > 0`` and ``λ1 ≥ 0``.
    primal : callable
        ``primal(w, b, margins) -> P``: the model's objective at ``(w, b)`` from its robust margins
        (:func:`robustsvm.objective.objective_from_margins` of the normalized model).
    signs : ndarray of shape (d,), optional
        +1/0/−1 per feature.
    intercept : {"free", "none", "l2"}
        ``"l2"`` adds ``(μ/2) b²`` (``mu > 0``).
    uncertainty : Box, Ball (p ∈ {1, 2, ∞}) or Ellipsoid, optional
        The shared unit set (its radius is ignored: pass ``radius``).
    radius : float or ndarray of shape (n,)
        ``r_i ≥ 0``.
    squared : bool
        Squared hinge instead of hinge.
    tol, max_iter, verbose, random_state, shrinking, check_every, rho
        As for ``dcd``: relative-gap tolerance, epochs, printing, seed, liblinear-style shrinking, epochs
        between certificates, augmented-Lagrangian weight of a free intercept.
    warm_start : ndarray of shape (n,) or Solution, optional
        Initial α (a previous solution's ``extra["alpha"]``), clipped into the dual box.
    inner : int
        Ellipsoid only: projected-gradient steps on ``u`` after each coordinate step.
    inner_tol : float
        Ellipsoid only: stop the inner steps when ``u``'s parameter moves by less.

    Returns
    -------
    Result
    """
    t_start = time.perf_counter()
    lam, lam1 = float(l2), float(l1)
    tol, max_iter, check_every, inner = float(tol), int(max_iter), int(check_every), int(inner)
    _check_options(lam, lam1, check_every, inner, shrinking)
    X, y, c, r, spec, sg, sqn, mode, mu, rho = _arrays(X, y, c, lam, signs, intercept, mu, uncertainty, radius,
                                                      rho)
    n, d = X.shape
    upper = np.inf if squared else 1.0
    dii = 0.5 if squared else 0.0

    alpha = _as_alpha(warm_start, n, upper)
    alpha[c <= 0] = 0.0
    ops = _Products(X)
    pos = y > 0
    st = _State(d)
    VV = ops.images(c * y * alpha, pos)
    A0 = float(c @ (alpha * r))
    st.refresh(spec, VV[0] + VV[1], A0, lam, lam1, sg, _CERT_INNER if spec.kind == kern.KIND_ELLIPSOID else 1,
               inner_tol)
    state = np.array([0.0, float(c @ (y * alpha)), A0])
    if mode == "free" and warm_start is not None:
        # start the intercept multiplier at the best intercept of the warm point, so that b0 + ρS = b
        zmarg = ops.matvec(st.w) - y * r * spec.support(st.w)
        state[0] = best_intercept(zmarg, y, c, squared) - rho * state[1]
    work = _State(d)
    index = np.flatnonzero(c > 0).astype(np.int64)
    n_total = index.size
    # local-curvature steps (checked against the safe step's guaranteed gain) pay off when w has zeros: L1 or signs
    local = bool(lam1 > 0 or np.any(sg != 0)) and spec.kind != kern.KIND_ELLIPSOID
    rng_state = np.array([np.random.default_rng(random_state).integers(1, 2**62) * 2 + 1], dtype=np.uint64)
    common = (st.v, st.z, st.w, st.u, st.mu, st.scal, state, sg, (sg >= 0).astype(np.float64),
              (sg <= 0).astype(np.float64), spec.delta, spec.L, spec.lnorm2, spec.kind, lam,
              lam1, upper, dii, rho)
    run_epoch = _epoch_runner(X, y, c, r, sqn, alpha, common, index, bool(shrinking), rng_state, inner, inner_tol,
                              local)

    hist = History()
    shrink = Shrinking(n_total)
    schedule = CertificateSchedule(tol, check_every, max_iter)
    status = "max_iter"
    cert = None
    time_cert = 0.0
    t_solve0 = time.perf_counter()
    hist.restart()
    epoch = 0
    while epoch < max_iter:
        active, pg_max_new, pg_min_new, _ = run_epoch(shrink.active, shrink.pg_max_old, shrink.pg_min_old)
        epoch += 1
        if mode == "free":
            state[0] += rho * state[1]
        if not schedule.due(epoch, shrink.after_epoch(active, pg_max_new, pg_min_new)):
            continue
        b_eff = state[0] + rho * state[1]
        t_cert = time.perf_counter()
        new = _certify(ops, spec, y, c, r, alpha, lam, lam1, sg, squared, mode, mu, b_eff, work, inner_tol, primal)
        if cert is None:
            cert = new
        else:
            best = new if new.P <= cert.P else cert
            cert = _Certificate(best.P, max(new.D, cert.D), best.w, best.b)
        # resynchronize the maintained state with α (no drift of v, S, A)
        VV = new.VV  # Σ c_i y_i α_i x_i by class, at the α just certified
        state[1] = float(c @ (y * alpha))
        state[2] = float(c @ (alpha * r))
        if spec.kind == kern.KIND_ELLIPSOID:
            st.mu[:] = work.mu_primal
        st.refresh(spec, VV[0] + VV[1], state[2], lam, lam1, sg, inner, inner_tol)
        time_cert += time.perf_counter() - t_cert
        schedule.record(epoch, cert.rel_gap)
        hist.record(epoch, cert.P, cert.gap, dual=cert.D, rel_gap=cert.rel_gap, active=active)
        if verbose:
            print(f"robust-dcd epoch {epoch:5d}  P={cert.P:.10g}  D={cert.D:.10g}  rel.gap={cert.rel_gap:.3e}  "
                  f"active={active}/{n_total}")
        if cert.rel_gap <= tol:
            status = "optimal"
            break
    if cert is None:  # max_iter = 0 cannot happen (validated), kept for safety
        raise RuntimeError("robust-dcd evaluated no certificate")
    return certified_result(cert, status=status, epoch=epoch, tol=tol, mode=mode, hist=hist, t_start=t_start,
                            t_solve0=t_solve0,
                            extra={"dual_alpha": alpha, "margin_multipliers": c * alpha, "rho": rho,
                                   "time_certificates": time_cert, "certificates": len(hist)})


def model_arguments(model) -> dict:
    """The shared-set robust model as the keyword arguments of :func:`robust_dcd_arrays` (and of
    ``feature_ipm_arrays``): data, loss coefficients, penalties, signs, intercept mode, set, radii, loss, and the
    model's objective as ``primal``."""
    layout = model.layout
    return {
        "X": model.X, "y": model.y, "c": model.c, "l2": model.l2, "l1": model.l1,
        "primal": partial(objective_from_margins, model), "signs": model.signs,
        "intercept": {"ridge": "l2"}.get(model.intercept.mode, model.intercept.mode), "mu": model.intercept.mu,
        "uncertainty": None if layout is None else layout.sets[0],
        "radius": None if layout is None else layout.radius, "squared": model.loss.name == "squared_hinge",
    }


def solve_robust_dcd(model, *, tol=None, max_iter=None, verbose=False, random_state=None, shrinking=True,
                     check_every=10, rho=None, warm_start=None, inner=5) -> Result:
    """Solve a robust (or nominal) hinge / squared-hinge model with a shared Box, Ball or Ellipsoid set.

    Thin adapter from the normalized :class:`~robustsvm.model.Model` to :func:`robust_dcd_arrays`.

    Parameters
    ----------
    model : Model
        A normalized model inside :data:`NEEDS`.
    tol : float, default 1e-4
        Stop when the relative duality gap ``(P − D)/|P|`` is at most ``tol``.
    max_iter : int, default 1000
        Maximum number of epochs.
    verbose, random_state, shrinking, check_every, rho
        As for ``dcd``.
    warm_start : ndarray of shape (n,) or Solution, optional
        Initial dual point α (``Solution.extra["dual_alpha"]`` of a nearby model).
    inner : int, default 5
        Ellipsoid only: projected-gradient steps on the worst-case point after each coordinate step.

    Returns
    -------
    Result
        ``gap`` is the absolute duality gap; ``history`` as for ``dcd``; ``extra["dual_alpha"]`` the final α.
    """
    return robust_dcd_arrays(
        **model_arguments(model), tol=1e-4 if tol is None else tol, max_iter=1000 if max_iter is None else max_iter,
        verbose=verbose, random_state=random_state, shrinking=shrinking, check_every=check_every, rho=rho,
        warm_start=warm_start, inner=inner)


register(
    Backend(
        name="robust-dcd",
        solve=solve_robust_dcd,
        needs=NEEDS,
        summary="robust dual coordinate ascent (compiled): hinge/squared hinge + L2 [+ L1], signs, shared Box, "
                "Ball (p = 1, 2, ∞) or Ellipsoid set, any intercept; certified by the duality gap",
        options=frozenset({"shrinking", "check_every", "rho", "warm_start", "inner"}),
        kind="first-order",
        certificate="duality gap P(w, b) − D_u(α) (absolute); history has the relative gap",
    ),
    replace=True,
)

"""The shared-set robust model as arrays: what ``dcd``, ``robust-dcd`` and ``feature-ipm`` read from a model.

The model is

    minimize   (λ2/2)‖w‖² + λ1‖w‖₁ [+ (μ/2) b²] + Σ_i c_i ℓ(y_i (x_i·w + b) − r_i σ_V(w))
    subject to s_h w_h ≥ 0,

with ``ℓ`` the hinge or squared hinge and one symmetric set ``V`` shared by every sample (none: the nominal
model). A set of distributions whose term is a fixed penalty ``Cρ σ_U(w)`` (``C = Σ c_i``; hinge only; a Wasserstein
ball with ``κ = ∞``: ``Cε‖w‖_*``) adds it instead of robust margins: the same dual with its unit set ``U``
(``DistributionalSet.unit_set``), radii 0 and the mass ``A = Cρ`` that no ``α`` moves (:attr:`SharedSetArrays.fixed`;
``docs/derivations/wasserstein.md``, "The fast route").
:class:`SharedSetArrays` holds it once, built from the normalized model by
:meth:`SharedSetArrays.from_model` (the model is already validated: nothing is checked again). Its set is
described for the compiled kernels by the
table :data:`KERNEL_SETS` (set type → :class:`SetDescription`), which a new set with a cheap prox of its support
function joins by one entry. :func:`dual_certificate` is the package's duality-gap certificate of this model
(``docs/derivations/robust_dcd.md``), and :meth:`SharedSetArrays.dual_value` the one place its dual value
``D_u(α)`` is written.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cached_property, partial
from typing import Any

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from ..certificates.duality import class_balance, class_sums, dual_value, penalty_conjugate
from ..objective import nominal_soft_margin, objective_from_margins, optimal_intercept
from ..terms.intercept import Intercept
from ..uncertainty import Ball, Box, DistributionalSet, Ellipsoid
from . import _shared_set_kernels as kern
from ._compiled import CsrRows, DenseRows
from ._dcd_kernels import dual_sums
from ._products_kernels import csr_parts, row_sq_norms, row_sq_norms_and_counts
from .dual_ascent import DualCertificate, Products, compiled_entry, soft_margin_needs
from .registry import Needs, Result

#: a finite stand-in for ±∞ in the compiled bounds
_HUGE = 1e300

__all__ = ["CERT_INNER", "KERNEL_SETS", "SetDescription", "SharedSetArrays", "Workspace", "bounded_prox_is_exact",
           "dual_certificate", "overflow_result", "shared_set_needs", "trivial_certificate"]


def bounded_prox_is_exact(unc) -> bool:
    """Whether the prox of ``λ1‖w‖₁ + A σ_V(w)`` plus the indicator of a box ``[l, u]`` has the kernels' exact
    form: the nominal model, a ``Box`` and ``Ball(p=∞)`` (the clip of the separable prox) and ``Ball(p=2)``
    (``clip(s z, l, u)`` at the root of a monotone scalar equation), ``docs/derivations/robust_dcd.md``,
    "Bounds". Not the ℓ1-ball nor the ellipsoid.
    """
    sets = [] if unc is None else (list(unc) if isinstance(unc, (list, tuple)) else [unc])
    sets = [s.unit_set() if isinstance(s, DistributionalSet) else s for s in sets]
    return all(type(s) is Box or (type(s) is Ball and s.p in (2.0, math.inf)) for s in sets)


def shared_set_needs(name: str, exponents: tuple[float, ...], exponent_hint: str, sets_hint: str, *,
                     ellipsoid_max_dim: int | None = None, ellipsoid_hint: str = "",
                     bounds_hint: str | None = None, no_bounds_hint: str | None = None,
                     distributional: bool = False) -> Needs:
    """What a backend of the shared-set robust model solves (``robust-dcd``, ``feature-ipm``).

    Soft-margin losses, L2 > 0 with optional L1, signs, every intercept mode, one shared Box, Ball or Ellipsoid
    (radii may differ per sample), a ball's p among ``exponents``, an ellipsoid in at most ``ellipsoid_max_dim``
    dimensions (None: any); the hints end the refusals. With ``bounds_hint`` the backend also takes bounds
    beyond signs for the sets whose bounded prox is exact (:func:`bounded_prox_is_exact`), and refuses
    them for the others with that hint; without it bounds are refused, with ``no_bounds_hint``. With
    ``distributional`` it also takes, with the hinge, a set of distributions whose term is a fixed penalty (as its
    unit set, ``DistributionalSet.unit_set``: a Wasserstein ball with ``κ = ∞`` as the ``Ball`` of its transport norm).
    """
    allowed = ", ".join("∞" if p == math.inf else f"{p:g}" for p in exponents)

    def extra(problem) -> list[str]:
        unc = problem.uncertainty
        sets = list(unc) if isinstance(unc, (list, tuple)) else [unc]
        out, shown = [], None
        if isinstance(unc, DistributionalSet):
            if unc.unit_set() is None or problem.loss.name != "hinge":
                return [f"{name} takes {unc.route} and the hinge loss only (its penalty {unc.penalty} then has the "
                        f"prox of a Ball); the conic backends (clarabel, scs) solve the others"]
            sets, shown = [unc.unit_set()], unc.label()
        bad = sorted({s.p for s in sets if type(s) is Ball and s.p not in exponents})
        if bad:
            out.append(f"{name} solves Ball(p) for p ∈ {{{allowed}}} only (p = {', '.join(f'{p:g}' for p in bad)}"
                       f"{exponent_hint}")
        big = [s.shape.shape[0] for s in sets if type(s) is Ellipsoid and ellipsoid_max_dim is not None
               and s.shape.shape[0] > ellipsoid_max_dim]
        if big:
            out.append(f"{name} solves an Ellipsoid in at most {ellipsoid_max_dim} dimensions (this one has "
                       f"{max(big)}){ellipsoid_hint}")
        if bounds_hint and problem.has_bounds and not bounded_prox_is_exact(unc):
            kinds = shown or ", ".join(sorted({type(s).__name__ + (f"(p={s.p:g})" if type(s) is Ball else "")
                                               for s in sets}))
            out.append(f"{name} takes bounds on the weights beyond signs with a Box or Ball(p=2, ∞) set only, "
                       f"not {kinds}: {bounds_hint}")
        return out

    return soft_margin_needs(
        name,
        l1=True,
        bounds=bounds_hint is not None,
        sets=tuple(KERNEL_SETS) + ((DistributionalSet,) if distributional else ()),
        per_sample_sets=False,
        why={"sets": sets_hint, **({"bounds": no_bounds_hint} if no_bounds_hint else {})},
        extra=extra,
    )


# ------------------------------------------------------------------------------------------------------ the set
@dataclass(frozen=True)
class SetDescription:
    """A unit set as the fast backends see it: what it declares, so that no backend asks which set it holds.

    ``kind`` (a ``KIND_`` number) selects the compiled prox of ``λ1‖·‖₁ + A σ_V``
    (:func:`._shared_set_kernels.refresh`: :attr:`SharedSetArrays.set_kernel` holds it as its value of
    :data:`._shared_set_kernels.KINDS`, whose type chooses the prox when the refresh is compiled), ``delta`` the box
    widths, ``L`` the ellipsoid's Cholesky factor (``M = LLᵀ``) with ``lnorm2 = ‖L‖²``;
    ``gauge(u)`` is the set's gauge (``u ∈ V`` iff ``gauge(u) ≤ 1``), computed independently of
    the kernels. The declared pieces: ``exact`` (the prox returns the exact saddle point ``u*(v, A)``; else ``u``
    is improved by inner steps, the certificate also tries the worst case of the primal point and the coordinate
    steps keep the safe curvature), ``sparse_step`` (the robust epoch on CSR rows: ``"refresh"`` rebuilds ``w``
    and ``u`` in O(d) after each step, ``"scale"`` keeps ``w = s z`` through one scale in O(nnz(x_i)),
    ``"band"`` keeps the box's sums in O(nnz(x_i) + |C|): ``robust_dcd.SPARSE_EPOCHS``), ``sparse_bounds``
    (that step also takes bounds beyond signs; else the refresh runs with bounds) and ``cone`` (``σ_V`` in
    feature-ipm's barrier: None a linear term ``Σ δ_h|w_h|``, ``"norm"`` the cone of ``‖w‖₂``, ``"factor"`` the
    cone of ``‖Lᵀw‖₂``, ``"none"`` no form).
    """

    kind: int
    delta: np.ndarray
    gauge: Callable[[np.ndarray], float]
    L: np.ndarray = field(default_factory=partial(np.zeros, (1, 1)))
    lnorm2: float = 1.0
    exact: bool = True
    sparse_step: str = "refresh"
    sparse_bounds: bool = True
    cone: str | None = None


def _box_gauge(delta: np.ndarray, u: np.ndarray) -> float:
    """``max_h |u_h| / δ_h``."""
    return float(np.max(np.abs(u) / delta)) if u.size else 0.0


def _norm_gauge(p: float, u: np.ndarray) -> float:
    """``‖u‖_p``."""
    return float(np.linalg.norm(u, ord=p))


def _ellipsoid_gauge(L: np.ndarray, u: np.ndarray) -> float:
    """``‖L⁻¹u‖₂``."""
    return float(np.linalg.norm(sla.solve_triangular(L, u, lower=True)))


# the gauges are partials of module functions, not closures: a description sent to a Dask worker pickles
def _box(V: Box | None, d: int) -> SetDescription:
    delta = np.ones(d) if V is None or V.widths is None else np.ascontiguousarray(V.widths, dtype=np.float64)
    return SetDescription(kern.KIND_BOX, delta, partial(_box_gauge, delta), sparse_step="band",
                          sparse_bounds=False)


def _ball(V: Ball, d: int) -> SetDescription:
    if V.p == math.inf:
        return _box(None, d)
    gauge = partial(_norm_gauge, float(V.p))
    if V.p == 2.0:
        return SetDescription(kern.KIND_BALL2, np.ones(d), gauge, sparse_step="scale", cone="norm")
    return SetDescription(kern.KIND_LINF, np.ones(d), gauge, cone="none")


def _ellipsoid(V: Ellipsoid, d: int) -> SetDescription:
    L = np.ascontiguousarray(V.L, dtype=np.float64)
    return SetDescription(kern.KIND_ELLIPSOID, np.ones(d), partial(_ellipsoid_gauge, L),
                          L, float(np.linalg.eigvalsh(V.shape)[-1]), exact=False, cone="factor")


#: the sets the kernels have a prox for: set type → its :class:`SetDescription` in dimension ``d``
KERNEL_SETS: dict[type, Callable[[Any, int], SetDescription]] = {Box: _box, Ball: _ball, Ellipsoid: _ellipsoid}


# --------------------------------------------------------------------------------------------------- the arrays
@dataclass(frozen=True, eq=False)
class SharedSetArrays:
    """The arrays of one shared-set robust model.

    Attributes
    ----------
    X : C-contiguous float64 ndarray or CSR matrix of shape (n, d)
    y, c, r, sqn : ndarray of shape (n,)
        Labels ±1, loss coefficients, radii (0 for the nominal model) and squared row norms ``‖x_i‖²``.
    sg : int8 ndarray of shape (d,)
        The signs.
    l2, l1 : float
    intercept : Intercept
        The model's own term (``mode`` ``"free"``, ``"none"`` or ``"ridge"``, with ``mu``).
    loss : Loss
    V : UncertaintySet or None
        The unit set (its radius is in ``r``); None for the nominal model. Its :attr:`description` for the
        kernels is built when first asked for.
    primal : callable
        ``primal(w, b, margins) -> P``, the model's objective from its robust margins.
    box : pair of ndarray of shape (d,) or None
        ``(lower, upper)``: bounds on ``w`` beyond signs (None: the signs alone); dcd clips to them.
    fixed : float
        The part of ``A = fixed + Σ c_i α_i r_i`` that no ``α`` moves: ``Cρ`` of a set of distributions whose term
        is the fixed penalty ``Cρ σ_V(w)`` (``V`` its ``unit_set``; a Wasserstein ball with ``κ = ∞``: ``Cε``), else 0.
    """

    X: Any
    y: np.ndarray
    c: np.ndarray
    r: np.ndarray
    sqn: np.ndarray
    sg: np.ndarray
    l2: float
    l1: float
    intercept: Intercept
    loss: Any
    V: Any
    primal: Callable
    box: tuple | None = None
    fixed: float = 0.0
    col_nnz: np.ndarray | None = None

    # ---------------------------------------------------------------------------------------------- building
    @classmethod
    def from_model(cls, model, *, column_counts: bool = False) -> SharedSetArrays:
        """The arrays of a normalized model (nominal, or one shared set of :data:`KERNEL_SETS`); with
        ``column_counts`` and a sparse ``X``, also the stored entries of each column (``col_nnz``), counted in the
        pass that forms the squared row norms."""
        layout, dist = model.layout, model.distribution
        V = dist.unit_set() if dist is not None else None if layout is None else layout.sets[0]
        n = model.X.shape[0]
        X, sqn, col_nnz = _rows(model.X, column_counts)
        r = np.zeros(n) if layout is None else np.ascontiguousarray(np.broadcast_to(layout.radius, (n,)),
                                                                     dtype=np.float64)
        return cls(X=X, y=np.ascontiguousarray(model.y, dtype=np.float64),
                   c=np.ascontiguousarray(model.c, dtype=np.float64), r=r, sqn=sqn,
                   sg=np.ascontiguousarray(model.signs, dtype=np.int8), l2=float(model.l2), l1=float(model.l1),
                   intercept=model.intercept, loss=model.loss, V=V, primal=partial(objective_from_margins, model),
                   box=(model.feasible.lower, model.feasible.upper) if model.has_bounds else None,
                   fixed=0.0 if dist is None else dist.fixed_mass(model.c), col_nnz=col_nnz)

    def point(self, *, l2: float, l1: float, r: np.ndarray, primal: Callable) -> SharedSetArrays:
        """The same data at other values of ``l2``, ``l1`` and the radii (one point of a batched solve)."""
        return replace(self, l2=float(l2), l1=float(l1), r=r, primal=primal)

    # --------------------------------------------------------------------------------------------- properties
    @property
    def squared(self) -> bool:
        return self.loss.name == "squared_hinge"

    @property
    def diagonal(self) -> float:
        """The loss's diagonal term of a dual coordinate step: ``ℓ*''`` on the dual box (``Loss.dual_diagonal``)."""
        return float(self.loss.dual_diagonal)

    @property
    def upper(self) -> float:
        """The end of the dual box of ``α`` (1 for the hinge, ∞ for the squared hinge)."""
        return float(self.loss.dual_upper)

    @property
    def robust(self) -> bool:
        return self.V is not None and (bool(np.any(self.r > 0)) or self.fixed > 0)

    @cached_property
    def equal_weights(self) -> bool:
        """Whether every ``c_i`` is the same (the exact hinge intercept then counts breakpoints)."""
        return bool(self.c.size) and float(self.c.min()) == float(self.c.max())

    @cached_property
    def weight_total(self) -> float:
        """``Σ_i c_i``: the objective at ``w = 0, b = 0`` for the hinge, a certificate's ``scale``."""
        return float(self.c.sum())

    @cached_property
    def positive_weight(self) -> float:
        """``Σ_{y_i=+1} c_i`` (the number of positives with :attr:`equal_weights`): what the exact hinge intercept's
        breakpoints must reach (:func:`robustsvm.objective.optimal_intercept`)."""
        return float(np.count_nonzero(self.y > 0)) if self.equal_weights else float(self.c[self.y > 0].sum())

    @cached_property
    def description(self) -> SetDescription:
        """The set as the kernels see it (:data:`KERNEL_SETS`)."""
        return _describe(self.V, self.X.shape[1])

    @property
    def local_steps(self) -> bool:
        """Whether the robust coordinate steps try the local curvature (the coordinates with ``w_h ≠ 0``; checked
        against the safe step's guaranteed gain): when ``w`` may have zeros (L1, signs or bounds) and the set's
        prox is exact."""
        return bool(self.l1 > 0 or np.any(self.sg != 0) or self.box is not None) and self.description.exact

    def overflow(self) -> str | None:
        """Why the squared row norms are not finite (entries of X too large to square in double precision)."""
        if np.all(np.isfinite(self.sqn)):
            return None
        top = float(abs(self.X).max()) if not sp.issparse(self.X) else float(abs(self.X.data).max())
        return (f"the squared row norms of X overflow in double precision (largest |x_ij| = {top:.3g}); "
                f"rescale X (for instance to unit variance) and solve again")

    # ------------------------------------------------------------------------------------- kernel arguments
    def rows(self, parts=None):
        """The rows of ``X`` for the compiled epochs (:data:`DenseRows` or :data:`CsrRows`); ``parts``: the CSR
        arrays of :func:`._products_kernels.csr_parts` when the caller has them already (``Products.parts``)."""
        if sp.issparse(self.X):
            return CsrRows(*(csr_parts(self.X) if parts is None else parts))
        return DenseRows(self.X)

    @cached_property
    def set_kernel(self) -> kern.SetKernel:
        """The set, signs and bounds for the compiled kernels (:data:`._shared_set_kernels.SetKernel`): ``kind`` (the
        kind's value of :data:`._shared_set_kernels.KINDS`, whose type chooses the compiled prox),
        signs ``sg`` (int8; 2 where the bounds fix ``w_h = 0``), box widths ``delta``,
        the ellipsoid's ``L`` and ``‖L‖²``, the bounds ``lo ≤ w ≤ hi`` (±1e300 where free; read when ``bounded``),
        ``clo``/``chi``, ``cap`` and ``forced`` (some bound excludes 0)."""
        sg, desc = self.sg, self.description
        d = sg.size
        lo, hi = (np.full(d, -_HUGE), np.full(d, _HUGE)) if self.box is None else (
            np.clip(self.box[0], -_HUGE, _HUGE), np.clip(self.box[1], -_HUGE, _HUGE))
        # the 2-ball's candidate test z_h ∉ [clo_h, chi_h]: the bounds, widened to ∓∞ where they exclude 0
        forced = (lo > 0) | (hi < 0)
        clo, chi = np.where(forced, _HUGE, lo), np.where(forced, -_HUGE, hi)
        # bounds [0, 0] fix a weight at 0: T zeroes it on both sides (kernel sign 2), so z_h = 0 never binds them
        fixed = (lo == 0) & (hi == 0)
        ksg = np.where(fixed, 2, sg).astype(np.int8)
        # one comparison per coordinate in the sparse 2-ball step: smax|z_h| > cap_h (a superset of the candidates
        # where a free sign has two finite sides)
        cap = np.where(forced, -1.0, np.where(sg > 0, hi, np.where(sg < 0, -lo, np.minimum(hi, -lo))))
        return kern.SetKernel(kind=kern.KINDS[desc.kind], sg=ksg, delta=desc.delta, L=desc.L,
                              lnorm2=float(desc.lnorm2), lo=lo, hi=hi, bounded=self.box is not None, clo=clo, chi=chi,
                              cap=cap, forced=bool(forced.any()))

    def params(self, *, rho: float, inner: int = 1, inner_tol: float = 1e-13, local: bool = False,
               shrinking: bool = False) -> kern.Params:
        return kern.Params(lam=self.l2, lam1=self.l1, upper=self.upper, dii=self.diagonal, rho=float(rho),
                           inner=int(inner), inner_tol=float(inner_tol), local=bool(local), shrinking=bool(shrinking))

    # ------------------------------------------------------------------------------------------------- maths
    def weight(self, p: np.ndarray) -> np.ndarray:
        """``∇h*(p) = clip(T(p)/λ2, l, u)``: the minimizer of ``h(w) − p·w`` (the clip when the model has bounds)."""
        w = kern.softclip(p, self.l1, self.sg, 1.0 / self.l2)
        return w if self.box is None else np.clip(w, self.box[0], self.box[1])

    def support(self, w: np.ndarray) -> float:
        """``σ_V(w)`` by the set's own formula (0 for the nominal model)."""
        return 0.0 if self.V is None else float(self.V.support(w))

    def robust_shift(self, w: np.ndarray) -> np.ndarray:
        """``−y_i r_i σ_V(w)``: what the robust margin subtracts from ``y_i x_i·w``, as a shift of ``x_i·w``."""
        return -self.y * self.r * self.support(w) if self.V is not None else np.zeros_like(self.y)

    def dual_value(self, alpha: np.ndarray, w: np.ndarray, S: float) -> float:
        """``D_u(α) = Σ_i c_i (α_i − ℓ*(α_i)) − (λ2/2)‖w_u‖² − (intercept term of S)`` at ``w_u = T(v − A u)/λ2``
        (:func:`robustsvm.certificates.duality.dual_value`).

        With a free intercept ``α`` must already satisfy ``S = Σ c_i y_i α_i = 0`` (pass ``S = 0``).
        """
        return dual_value(self.loss, self.c, alpha, 0.5 * self.l2 * float(w @ w), self.intercept, S)

    def exact_intercepts(self, zmarg: np.ndarray, S: float, hint: float | None = None) -> list[float]:
        """The intercept of a primal point from its robust margins ``zmarg`` (free; ``hint`` an intercept near it,
        where the selection starts), from the dual (``S/μ``, ridge) or 0."""
        mode = self.intercept.mode
        if mode == "free":
            return [optimal_intercept(zmarg, self.y, self.c, squared=self.squared, hint=hint,
                                      positive_weight=self.positive_weight, equal_weights=self.equal_weights)]
        return [self.intercept.from_dual(S)]

    def best_primal(self, w: np.ndarray, zmarg: np.ndarray, S: float, b_hint: float | None = None) -> tuple:
        """``(P, b)``: the lowest primal objective of ``w`` (robust margins ``zmarg``) over its
        :meth:`exact_intercepts` and ``b_hint`` (a ridge intercept's; without an intercept ignored, and a free one's
        exact minimizer is as low as any other ``b``: there the hint only starts its selection), and the intercept
        reaching it."""
        bs = self.exact_intercepts(zmarg, S, b_hint)
        if b_hint is not None and self.intercept.mode == "ridge":
            bs.append(float(b_hint))
        best = None
        # the nominal soft-margin objective in one compiled pass (the same terms as self.primal's)
        nominal = self.V is None and self.loss.name in ("hinge", "squared_hinge")
        for b in bs:
            if nominal:
                P = nominal_soft_margin(w, zmarg, self.y, self.c, b, self.l2, self.l1, self.squared) + \
                    self.intercept.value(b)
            else:
                P = self.primal(w, b, self.y * (zmarg + b))
            if best is None or P < best[0]:
                best = (P, b)
        return best


def _describe(V, d: int) -> SetDescription:
    if V is None:
        return _box(None, d)
    make = KERNEL_SETS.get(type(V))
    if make is None:
        raise ValueError(f"no compiled prox for {type(V).__name__}; the sets with one: "
                         f"{', '.join(t.__name__ for t in KERNEL_SETS)}")
    return make(V, d)


def _rows(X, column_counts: bool = False):
    """``X`` as C-contiguous float64 or CSR, its squared row norms and, with ``column_counts`` on CSR data, the
    stored entries of each column from the same pass (else None)."""
    if sp.issparse(X):
        X = X if sp.isspmatrix_csr(X) and X.dtype == np.float64 else sp.csr_matrix(X, dtype=np.float64)
        if not X.has_canonical_format:
            X = X.copy()
            X.sum_duplicates()
        with np.errstate(over="ignore"):
            if column_counts:
                return X, *row_sq_norms_and_counts(X.indptr, X.indices, np.ascontiguousarray(X.data), X.shape[1])
            return X, row_sq_norms(X.indptr, np.ascontiguousarray(X.data)), None
    X = np.ascontiguousarray(X, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        return X, np.einsum("ij,ij->i", X, X), None


# ---------------------------------------------------------------------------------------------- the certificate
class Workspace:
    """The vectors the compiled refresh writes (:data:`._robust_dcd_kernels.State`), for a model of ``d``
    features; ``mu_primal`` keeps the ellipsoid's parameter at the primal point of the last certificate."""

    def __init__(self, d: int) -> None:
        self.state = kern.State(v=np.zeros(d), z=np.zeros(d), w=np.zeros(d), u=np.zeros(d), mu=np.zeros(d),
                                scal=kern.prox_scalars(), sums=dual_sums(), cand=np.zeros(d, dtype=np.int64),
                                flag=np.zeros(d, dtype=np.int8))
        self.mu_primal = self.state.mu

    def refresh(self, setk, prm, v: np.ndarray, A: float, inner: int) -> None:
        """``u`` and ``w = w_u`` from ``v`` and ``A``."""
        self.state.v[:] = v
        args = (setk, self.state, float(A), prm, int(inner))
        # through the specialization for these types: numba's own typing of the record array of sums costs ~60 µs
        compiled_entry(kern.refresh, args)(*args)


#: inner projected-gradient steps of the ellipsoid's u when certifying (the bound is valid at any step)
CERT_INNER = 20000


def dual_certificate(arrays: SharedSetArrays, ops: Products, alpha: np.ndarray, work: Workspace | None, *,
                     b_hint: float | None = None, points=(), dual_primal: bool = True,
                     inner_tol: float = 1e-13) -> DualCertificate:
    """Upper bound ``P(w, b)`` at a sign-feasible ``w`` and lower bound ``D_u(α̃)`` at a dual-feasible ``α̃``.

    ``v`` and ``A`` are recomputed from ``α`` (no drift). Primal: ``w(α)`` (``dual_primal``) and the ``points``
    given (each sign-feasible), each with its exact intercept (:meth:`SharedSetArrays.exact_intercepts`) and
    ``b_hint``; the best is kept. Dual: with a free intercept the class with the larger ``Σ c_i α_i`` is scaled
    down so that ``S = 0`` (:func:`robustsvm.certificates.duality.class_balance`); ``u`` is the saddle point of the
    scaled ``(v, A)`` — for the ellipsoid also the worst case of the best primal ``w``, whichever bound is higher —
    divided by its gauge if rounding put it outside V, so ``u ∈ V`` exactly. Without robust mass (``A = 0``:
    the nominal model) ``w_u = T(v)/λ2`` for every ``u`` and ``work`` is not used (it may be None).
    """
    y, c, r = arrays.y, arrays.c, arrays.r
    alpha = np.clip(alpha, 0.0, arrays.upper)
    pos = y > 0
    cya = c * y * alpha
    VV = ops.images(cya, pos)
    car = c * alpha * r
    A_pos, A_neg = class_sums(car, y)
    v, A = VV[0] + VV[1], A_pos + A_neg + arrays.fixed
    S = float(cya.sum())
    setk = arrays.set_kernel if A > 0 else None
    prm = arrays.params(rho=0.0, inner_tol=inner_tol)
    candidates = list(points)
    if dual_primal and A > 0:
        work.refresh(setk, prm, v, A, CERT_INNER)
        work.mu_primal = work.state.mu.copy()
        candidates.insert(0, work.state.w.copy())
    elif dual_primal:
        candidates.insert(0, arrays.weight(v))
    best = None
    for w in candidates:
        zmarg = (ops.matvec(w) if np.any(w) else np.zeros(y.size)) + arrays.robust_shift(w)
        P, b = arrays.best_primal(w, zmarg, S, b_hint)
        if best is None or P < best[0]:
            best = (P, w, b)
    P, w, b = best
    # dual point
    fp, fn = (1.0, 1.0)
    if arrays.intercept.mode == "free":
        s_pos, s_neg = class_sums(cya, y)
        fp, fn = class_balance(s_pos, -s_neg)
    alpha_t = np.where(pos, fp * alpha, fn * alpha) if (fp, fn) != (1.0, 1.0) else alpha
    v_t = v if (fp, fn) == (1.0, 1.0) else fp * VV[0] + fn * VV[1]
    A_t = fp * A_pos + fn * A_neg + arrays.fixed
    S_t = 0.0 if arrays.intercept.mode == "free" else S
    if A_t <= 0:
        us = [np.zeros(0)]
    else:
        if not dual_primal or (fp, fn) != (1.0, 1.0):  # else the refresh of the primal point is the one of α̃
            work.refresh(arrays.set_kernel, prm, v_t, A_t, CERT_INNER)
        us = [work.state.u.copy()]
        if not arrays.description.exact:
            us.append(arrays.V.worst_case(w))
    D = -np.inf
    for u in us:
        if not u.size:  # A = 0: u does not enter
            D = max(D, _nominal_dual(arrays, alpha_t, v_t, S_t))
            continue
        g = arrays.description.gauge(u)
        if g > 1.0:
            u = u / g
        D = max(D, _nominal_dual(arrays, alpha_t, v_t - A_t * u, S_t))
    return DualCertificate(P, D, w, b, scale=float(c.sum()), images=VV)


def _nominal_dual(arrays: SharedSetArrays, alpha: np.ndarray, v: np.ndarray, S: float) -> float:
    """``D(α) = Σ c(α − ℓ*) − R*(v) − (intercept term)`` of the nominal model; ``D_u(α)`` at ``v = v − A u``.

    Signs: ``R*(v) = (λ2/2)‖w‖²`` at ``w = T(v)/λ2`` (:meth:`SharedSetArrays.dual_value`). A box: the box
    conjugate :func:`robustsvm.certificates.duality.penalty_conjugate` (the clipped soft-threshold,
    ``docs/certificates.md``), which is that same value when ``T(v)/λ2`` lies in the box (its maximizer is then
    ``T(v)/λ2`` itself: the signs are sides of the box), as with bounds that do not bind.
    """
    w = kern.softclip(v, arrays.l1, arrays.sg, 1.0 / arrays.l2)
    if arrays.box is None or (np.all(w >= arrays.box[0]) and np.all(w <= arrays.box[1])):
        return arrays.dual_value(alpha, w, S)
    lower, upper = arrays.box
    conj = penalty_conjugate(v, arrays.l2, arrays.l1, None, lower=lower, upper=upper)
    return dual_value(arrays.loss, arrays.c, alpha, conj, arrays.intercept, S)


def trivial_certificate(arrays: SharedSetArrays, ops: Products, work: Workspace) -> tuple[DualCertificate,
                                                                                         np.ndarray]:
    """The certificate of ``w = 0`` with its best intercept, and the multipliers ``α`` of its margins.

    ``b`` minimizes the objective at ``w = 0`` (exact for a free intercept; for a ridge one the best of a bounded
    scalar search over ``[−1, 1]``, where the minimizer lies, and its ends, the breakpoints). ``α_i`` are the
    multipliers of the margins ``m_i = y_i b``: ``2 max(0, 1 − m_i)`` (squared hinge); for the hinge 1 below the
    breakpoint, 0 above, and on it the fraction that makes ``Σ c_i y_i α_i = μ b`` (ridge; a free intercept's
    balance is the certificate's own). When ``w = 0`` is optimal (a radius so large that every ``w ≠ 0`` costs
    more, or one class weighted zero), this certifies it in one pass over the data, where an iterative
    method would approach the non-smooth point ``w = 0`` only slowly. Only for a model whose bounds allow
    ``w = 0``: the certificate is that of the point ``w = 0``.
    """
    from scipy.optimize import minimize_scalar

    n, d = arrays.X.shape
    y, c, zero = arrays.y, arrays.c, np.zeros(d)
    mode = arrays.intercept.mode
    if mode == "free":
        b = optimal_intercept(np.zeros(n), y, c, squared=arrays.squared)
    elif mode == "ridge":
        found = minimize_scalar(lambda t: arrays.primal(zero, t, y * t), bounds=(-1.0, 1.0), method="bounded",
                                options={"xatol": 1e-13}).x
        b = min((float(found), -1.0, 1.0), key=lambda t: arrays.primal(zero, t, y * t))
    else:
        b = 0.0
    m = y * b
    if arrays.squared:
        alpha = 2.0 * np.maximum(0.0, 1.0 - m)
    else:
        alpha = (m < 1.0).astype(np.float64)
        edge = m == 1.0
        if mode == "ridge" and np.any(edge & (c > 0)):
            s_edge = float(c[edge] @ y[edge])
            fraction = (arrays.intercept.mu * b - float(c @ (y * alpha))) / s_edge
            alpha[edge] = min(max(fraction, 0.0), 1.0)
        elif mode != "ridge":
            alpha[edge] = 1.0
    alpha[c <= 0] = 0.0
    return dual_certificate(arrays, ops, alpha, work, b_hint=b, points=[zero], dual_primal=False), alpha


def overflow_result(arrays: SharedSetArrays, t_start: float) -> Result:
    """The refusal of data whose squared row norms overflow: status ``"numerical_error"`` at ``w = 0``, no bound
    (a caller choosing the backend falls back on the status)."""
    n, d = arrays.X.shape
    return Result(w=np.zeros(d), b=0.0, status="numerical_error", message=arrays.overflow(),
                  time_solve=time.perf_counter() - t_start, multipliers=np.zeros(n), dual_alpha=np.zeros(n))

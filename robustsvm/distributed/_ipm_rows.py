"""The per-sample half of the distributed feature-space interior point (:mod:`.ipm`), run on each partition.

A partition keeps the per-sample variables of its rows (the loss ``ξ_i``, the slack ``s_i`` of the margin row,
the multipliers ``α_i, β_i``, ``g_iᵀx``) in a :class:`RowState`; the client keeps ``x = (u, [t], [b])``, ``ν``,
``ζ`` and ``Gᵀα``. Each round function takes the block, its state and the client's few numbers, updates the
state and returns sums over its rows: the upper triangle of ``Aᵀ diag(1/e) A`` (``A = [y∘X, r, y]``, the
``Design`` of :mod:`robustsvm.backends.building_blocks`), products ``Aᵀv`` and scalars. The formulas are those of
``_ipm_newton.Newton.direction`` with the per-sample elimination done where the rows are.
"""

from __future__ import annotations

import copy

import numpy as np

from ..backends.building_blocks import Design, sample_rho, sample_steps
from .blocks import Block
from .model import margin_terms_many

__all__ = ["RowState", "advance_and_newton", "certificate_sums", "corrector_and_newton", "corrector_step",
           "predictor_step", "start"]


class RowState:
    """The per-sample variables of a partition's rows with ``c_i > 0`` and the arrays of the current iteration."""

    def __init__(self, block: Block, c_scale: float, radius: float, squared: bool) -> None:
        c = c_scale * block.weight
        weighted = c > 0
        #: the rows with c_i > 0 (None: every row, and no copies of the labels)
        self.keep = None if np.all(weighted) else np.flatnonzero(weighted)
        self.c = np.ascontiguousarray(c if self.keep is None else c[self.keep])
        self.y = block.y if self.keep is None else np.ascontiguousarray(block.y[self.keep])
        self.radius, self.squared = float(radius), bool(squared)
        self.cached = None if block.on_disk else list(self._build(block))
        self.s = self.xi = self.alpha = self.beta = self.gx = None
        self.e = self.rxi = self.rs = None
        self.aff = self.step = None  # (ds, dα, dξ, dβ, dgx) of the predictor / the corrector
        self.rho0 = self.rho1 = None
        #: the state stepped by the step a fused round tried (:func:`corrector_and_newton`)
        self.ahead = None

    def _build(self, block: Block):
        """``(j0, j1, Design)`` over the kept rows, a slice of rows at a time."""
        j = 0
        for lo, hi, X in block.row_slices():
            if self.keep is None:
                Xs, count = X, hi - lo
            else:
                rows = self.keep[(self.keep >= lo) & (self.keep < hi)] - lo
                Xs, count = X[rows], rows.size
            if count == 0:
                continue
            yield j, j + count, Design(Xs, self.y[j:j + count], np.full(count, self.radius))
            j += count

    def designs(self, block: Block):
        return self.cached if self.cached is not None else self._build(block)

    # products with A = [y∘X, r, y] over the kept rows
    def dot(self, block: Block, z: np.ndarray, coarse: bool = False) -> np.ndarray:
        """``A z`` over the kept rows (``coarse``: from the single-precision copy of the rows when the Gram
        matrix made one, for the predictor's step, which only steers)."""
        out = np.empty(self.c.size)
        for j0, j1, des in self.designs(block):
            out[j0:j1] = (des.dot_coarse(z[None]) if coarse else des.dot(z[None]))[0]
        return out

    def tdot(self, block: Block, V: np.ndarray, coarse: bool = False) -> np.ndarray | None:
        """``Aᵀ v`` for each row of ``V`` over the kept rows, one pass each (one matrix-vector product: a product
        with several rows at once went through a strided matrix product several times slower; ``coarse``: from
        the single-precision copy of the rows when the Gram matrix made one, accumulated in single precision;
        None for a partition without weighted rows)."""
        prods = None
        for j0, j1, des in self.designs(block):
            p = np.vstack([des.tdot_coarse(v[None, j0:j1]) if coarse else des.tdot(v[None, j0:j1]) for v in V])
            prods = p if prods is None else prods + p
        return prods

    def gram_and_tdot(self, block: Block, weights: np.ndarray, V: np.ndarray, coarse: bool = False) -> tuple:
        """The upper triangle of ``Aᵀ diag(weights) A`` and ``Aᵀ v`` for each row of ``V`` (None, None for a
        partition without weighted rows).

        ``coarse``: the Gram matrix and the first product in single precision (accumulated in double; for the
        Newton matrix while the gap is far, as ``feature-ipm`` does), formed in one pass. The other products are
        in double precision, one pass per row of ``V`` (:meth:`tdot`).
        """
        gram, prods = None, None
        coarse = coarse and self.cached is not None  # rows read from disk at every pass are not copied
        for j0, j1, des in self.designs(block):
            part, p = des.gram_tdot(weights[None, j0:j1], V[:1, j0:j1], coarse)
            gram = part[0] if gram is None else gram + part[0]
            if V.shape[0] > 1:
                p = np.vstack([p] + [des.tdot(v[None, j0:j1]) for v in V[1:]])
            prods = p if prods is None else prods + p
        return gram, prods


def _sums(st: RowState) -> dict:
    """The scalars the client needs from the current point: ``sᵀα``, ``ξᵀβ``, ``Σ c ℓ(ξ)`` and the row count."""
    out = {"s_alpha": float(st.s @ st.alpha), "rows": int(st.c.size)}
    if st.squared:
        out["xi_beta"], out["loss"] = 0.0, float(st.c @ (st.xi * st.xi))
    else:
        out["xi_beta"], out["loss"] = float(st.xi @ st.beta), float(st.c @ st.xi)
    return out


def start(block: Block, state, z0: np.ndarray, c_scale: float, radius: float, squared: bool):
    """The interior start of ``_ipm_newton.start`` for the rows: ``ξ = max(1 − g x, 0) + 1``, ``s = g x + ξ − 1``,
    ``α = c/2 = β`` (hinge) or ``α = c``; returns ``Aᵀα`` and the scalars."""
    st = RowState(block, c_scale, radius, squared)
    st.gx = st.dot(block, z0)
    st.xi = np.maximum(1.0 - st.gx, 0.0) + 1.0
    st.s = st.gx + st.xi - 1.0
    st.alpha = st.c.copy() if squared else 0.5 * st.c
    st.beta = None if squared else st.alpha.copy()
    prods = st.tdot(block, st.alpha[None])
    return st, {"ta": None if prods is None else prods[0], **_sums(st)}


def _advance(st: RowState, a: float) -> RowState:
    """A copy of the state that has taken the step ``a`` of its last corrector (its arrays replaced, never
    written: a round run again, or recomputed from its lineage after a worker is lost, starts from the same
    state)."""
    st = copy.copy(st)
    if st.step is not None and a > 0:
        ds, da, dxi, db, dgx = st.step
        st.s = st.s + a * ds
        st.alpha = st.alpha + a * da
        st.xi = st.xi + a * dxi
        if db is not None:
            st.beta = st.beta + a * db
        st.gx = st.gx + a * dgx
    st.step = st.aff = st.ahead = None
    return st


def _newton(block: Block, st: RowState, z_sync: np.ndarray | None, coarse: bool, upper: float | None) -> dict:
    """The Newton system's sums at the state (updated in place: a fresh copy): the Gram matrix with weights
    ``1/e`` and ``Aᵀ(ρ/e)`` for the predictor (``rhs_s = −sα``, ``rhs_ξ = −ξβ``), with ``Aᵀα`` after a resync
    (``g x`` recomputed from ``z_sync = Tᵀx``) and the certificate's sums when ``upper`` is given."""
    if z_sync is not None:
        st.gx = st.dot(block, z_sync)
    if st.squared:
        st.e = 1.0 / (2.0 * st.c) + st.s / st.alpha
        st.rxi = 2.0 * st.c * st.xi - st.alpha
    else:
        st.e = st.xi / st.beta + st.s / st.alpha
        st.rxi = st.c - st.alpha - st.beta
    st.rs = st.gx + st.xi - 1.0 - st.s
    _, rho_e = _rho(st, -st.s * st.alpha, None if st.squared else -st.xi * st.beta)
    V = np.vstack([rho_e, st.alpha]) if z_sync is not None else rho_e[None]
    gram, prods = st.gram_and_tdot(block, 1.0 / st.e, V, coarse)
    out = {"gram": gram, "g_rho": None if prods is None else prods[0],
           "ta": None if prods is None or z_sync is None else prods[1], **_sums(st)}
    if upper is not None:
        out["cert"] = _certificate(block, st, upper)
    return out


def advance_and_newton(block: Block, st: RowState, a: float, z_sync: np.ndarray | None, coarse: bool = False,
                       upper: float | None = None, ahead: bool = False):
    """Take the step ``a`` of the last corrector (0 in the first round) and form the Newton system's sums
    (:func:`_newton`; single precision for the Gram matrix when ``coarse``, the certificate's sums at
    ``α̃ = clip(α/c, 0, upper)`` when ``upper`` is given). ``ahead``: start from the state a fused round
    stepped to (``a`` is then 0)."""
    st = _advance(st.ahead if ahead else st, a)
    return st, _newton(block, st, z_sync, coarse, upper)


#: the absent hinge-only arrays of the squared hinge, for the compiled loops
_NONE = np.empty((1, 0))


def _2d(v: np.ndarray | None) -> np.ndarray:
    return _NONE if v is None else v[None]


def _rho(st: RowState, rhs_s: np.ndarray, rhs_xi: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """``ρ`` and ``ρ/e`` (:func:`robustsvm.backends.building_blocks.sample_rho`): ``ρ = −r_s − (rhs_ξ − ξ r_ξ)/β +
    rhs_s/α`` (hinge) or ``−r_s + r_ξ/(2c) + rhs_s/α`` (squared hinge)."""
    rho, rho_e = sample_rho(st.squared, st.rs[None], st.rxi[None], rhs_s[None], _2d(rhs_xi), st.s[None],
                            st.alpha[None], st.xi[None], _2d(st.beta), st.c, st.e[None])
    return rho[0], rho_e[0]


def _direction(block: Block, st: RowState, z: np.ndarray, rho: np.ndarray, rhs_s: np.ndarray,
               rhs_xi: np.ndarray | None, coarse: bool = False) -> tuple[tuple, float]:
    """The per-sample step for ``Δx`` (given as ``z = TᵀΔx``): ``(Δs, Δα, Δξ, Δβ, Δ(gx))`` and the largest step
    keeping ``s, α, ξ, β ≥ 0`` on these rows (∞ when nothing decreases), from
    :func:`robustsvm.backends.building_blocks.sample_steps`."""
    dgx = st.dot(block, z, coarse)
    da, ds, dxi, db, top = sample_steps(st.squared, rho[None], dgx[None], st.e[None], rhs_s[None], _2d(rhs_xi),
                                        st.rxi[None], st.s[None], st.alpha[None], st.xi[None], _2d(st.beta), st.c)
    return (ds[0], da[0], dxi[0], None if st.squared else db[0], dgx), float(top[0])


def predictor_step(block: Block, st: RowState, z: np.ndarray, ahead: bool = False, points: list | None = None,
                   loss=None, c_scale: float = 1.0, coarse: bool = False):
    """The affine step for ``z = TᵀΔx_aff``: its largest step, the coefficients of the gap measure along it
    (``Σ(s + a Δs)(α + a Δα) + …`` as a polynomial in ``a``) and ``Aᵀ(ρ₀/e)``, ``Aᵀ(ρ₁/e)`` with
    ``ρ_corrector = ρ₀ + σμ ρ₁`` (the corrector's right-hand side is linear in its target ``σμ``).

    ``ahead``: the state is the one the last :func:`corrector_and_newton` stepped to (every partition took its
    step). ``points``: the primal candidates ``(w, b, shifts)`` of a certificate, priced in the same pass
    (:func:`.model.margin_terms_many`, returned as ``"priced"``). ``coarse``: ``A z`` and the products
    ``Aᵀ(ρ/e)`` in single precision, as ``feature-ipm`` forms them in a single-precision iteration (the affine
    step only steers: the centering and the corrector's second-order term; the corrector's right-hand side is
    checked by the drift of ``Gᵀα`` at each resynchronization, :class:`.ipm._Precision`).
    """
    st = copy.copy(st.ahead if ahead else st)
    st.ahead = None
    rhs_s = -st.s * st.alpha
    rhs_xi = None if st.squared else -st.xi * st.beta
    rho, _ = _rho(st, rhs_s, rhs_xi)
    st.aff, top = _direction(block, st, z, rho, rhs_s, rhs_xi, coarse)
    ds, da, dxi, db, _ = st.aff
    coef = [float(st.s @ st.alpha), float(st.s @ da + ds @ st.alpha), float(ds @ da)]
    if not st.squared:
        coef = [coef[0] + float(st.xi @ st.beta), coef[1] + float(st.xi @ db + dxi @ st.beta),
                coef[2] + float(dxi @ db)]
    # corrector: rhs_s = σμ − sα − Δs Δα, rhs_ξ = σμ − ξβ − Δξ Δβ
    base_s = -st.s * st.alpha - ds * da
    if st.squared:
        st.rho0, rho0_e = _rho(st, base_s, None)
        st.rho1 = 1.0 / st.alpha
    else:
        base_xi = -st.xi * st.beta - dxi * db
        st.rho0, rho0_e = _rho(st, base_s, base_xi)
        st.rho1 = 1.0 / st.alpha - 1.0 / st.beta
    prods = st.tdot(block, np.vstack([rho0_e, st.rho1 / st.e]), coarse)
    out = {"max_step": top, "gap_coef": coef, "g_rho": None if prods is None else prods}
    if points is not None:
        out["priced"] = margin_terms_many(block, points, loss, c_scale)
    return st, out


def _corrector(block: Block, st: RowState, z: np.ndarray, target: float,
               coarse: bool = False) -> tuple[RowState, float]:
    """A copy of the state holding the combined step for ``z = TᵀΔx`` and the target ``σμ``, and its largest
    step on these rows (``coarse``: ``A z`` in single precision, in a single-precision iteration)."""
    st = copy.copy(st)
    ds, da, dxi, db, _ = st.aff
    rhs_s = target - st.s * st.alpha - ds * da
    rhs_xi = None if st.squared else target - st.xi * st.beta - dxi * db
    rho = st.rho0 + target * st.rho1
    st.step, top = _direction(block, st, z, rho, rhs_s, rhs_xi, coarse)
    st.aff = st.rho0 = st.rho1 = None  # the predictor's arrays are not needed any more
    return st, top


def corrector_step(block: Block, st: RowState, z: np.ndarray, target: float, coarse: bool = False):
    """The combined step for ``z = TᵀΔx`` and the target ``σμ``: kept for the next round; returns its largest
    step on these rows (``coarse``: ``A z`` in single precision)."""
    st, top = _corrector(block, st, z, target, coarse)
    return st, {"max_step": top}


def corrector_and_newton(block: Block, st: RowState, z: np.ndarray, target: float, a_try: float, step: float,
                         z_sync: np.ndarray | None, coarse: bool, upper: float | None, coarse_step: bool = False):
    """:func:`corrector_step` (``A z`` in single precision when ``coarse_step``: this iteration's precision), and
    when the step ``a_try`` keeps these rows inside (``a_try ≤ step ·`` their largest step), the next
    iteration's :func:`advance_and_newton` at ``a_try`` in the same round (``coarse``: its precision).

    The state keeps the combined step (the client takes another common step through :func:`advance_and_newton`
    when a partition or its own variables refuse ``a_try``) and, as ``ahead``, the state stepped by ``a_try``.
    Returns the largest step and the Newton sums (``"newton"``, None when refused).
    """
    st, top = _corrector(block, st, z, target, coarse_step)
    if not a_try <= step * top:
        return st, {"max_step": top, "newton": None}
    nxt = _advance(st, a_try)
    out = _newton(block, nxt, z_sync, coarse, upper)
    st.ahead = nxt
    return st, {"max_step": top, "newton": out}


def _certificate(block: Block, st: RowState, upper: float) -> dict:
    """The sums of the dual certificate at ``α̃ = clip(α/c, 0, upper)``: per class (``y = +1``, ``y = −1``)
    ``Aᵀ(c α̃)`` (the class images ``Σ c α̃ y x``, ``Σ c α̃ r``, ``Σ c α̃ y``) and ``Σ c α̃``, ``Σ c α̃²``."""
    at = np.clip(st.alpha / st.c, 0.0, upper)
    ca = st.c * at
    pos = st.y > 0
    prods = st.tdot(block, np.vstack([np.where(pos, ca, 0.0), np.where(pos, 0.0, ca)]))
    m1 = [float(ca[pos].sum()), float(ca[~pos].sum())]
    m2 = [float((ca * at)[pos].sum()), float((ca * at)[~pos].sum())]
    return {"images": prods, "m1": np.array(m1), "m2": np.array(m2)}


def certificate_sums(block: Block, st: RowState, upper: float, ahead: bool = False):
    """:func:`_certificate` of the current multipliers (those of the state ahead when ``ahead``), as a round of
    its own."""
    return st, _certificate(block, st.ahead if ahead else st, upper)

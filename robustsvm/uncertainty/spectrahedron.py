"""Spectrahedral uncertainty ``V = {v : A0 + Σ_l v_l A_l ⪰ 0}``.

The derivation of the support function (conic duality), the block splitting
and the batching of PSD blocks are in ``docs/derivations/robust_counterpart.md``.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from .._lazy import cvxpy as cp
from .base import NumericSupportMixin, UncertaintySet, direction_scale, real_array, stack_directions
from .ellipsoid import check_symmetric
from .polyhedron import rows_closed_under_negation

__all__ = ["Spectrahedron"]

#: threshold (relative to the scale of the matrices) for the interior and boundedness margins
_MARGIN_TOL = 1e-7
#: from this many blocks of one size on, the dual matrices are one batched (m, q, q) PSD constraint
_BATCH_MIN = 8


def _block_coefficients(items: list[tuple[int, np.ndarray, np.ndarray]], d: int, J: int) -> sp.csr_matrix:
    """The coefficients of the blocks of one size ``q`` of ``J`` sets in ``R^d``: the ``(J d) × (m q²)`` matrix
    ``E[j d + l, k q² + e] = (B_l)_e`` for item ``k = (j, B0, B)``, block ``B`` (shape ``(d, q, q)``) of set ``j``.

    ``E @ vec(W)`` stacks ``tr(B_l W_k)`` (the support's equality rows); ``Eᵀ @ vec(v)`` stacks ``Σ_l v_l B_l``
    (the membership's linear matrix inequality).
    """
    qq = items[0][1].size
    rows, cols, vals = [], [], []
    for k, (j, _B0, B) in enumerate(items):
        Bf = B.reshape(d, qq)
        l, e = np.nonzero(Bf)
        rows.append(j * d + l)
        cols.append(k * qq + e)
        vals.append(Bf[l, e])
    return sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                         shape=(J * d, len(items) * qq))


class Spectrahedron(NumericSupportMixin, UncertaintySet):
    """Spectrahedron ``V = {v ∈ R^d : A0 + Σ_l v_l A_l ⪰ 0}``, support by SDP duality.

    ``σ_V(z) = max{z·v : v ∈ V} = min{tr(A0 W) : W ⪰ 0, tr(A_l W) = −z_l}``,
    exact because ``V`` has an interior point (checked).

    The matrices are split into the connected blocks of their common sparsity
    pattern before anything is compiled: ``1 × 1`` blocks become linear
    inequalities ``a0 + aᵀv ≥ 0`` (a diagonal LMI is a polyhedron), larger
    blocks stay PSD constraints. In a model, the dual matrices ``W`` of all
    blocks of one size are a single batched ``(m, q, q)`` PSD constraint.

    Parameters
    ----------
    A0 : array of shape (p, p)
        Symmetric.
    A : array of shape (d, p, p) or sequence of d arrays (p, p)
        Symmetric matrices ``A_1, …, A_d``.
    radius : float or array of shape (n,)
        Scale ``r_i`` of the set around each sample.

    Raises
    ------
    ValueError
        A matrix that is not symmetric or finite, a set without interior
        point (the largest ``t`` with ``A0 + Σ v_l A_l ⪰ tI`` is not positive)
        or an unbounded set (linearly dependent ``A_l``, or a recession
        direction ``u ≠ 0`` with ``Σ u_l A_l ⪰ 0``); the message says which.

    Warns
    -----
    UserWarning
        When the set is recognisably a box (a diagonal LMI with one
        coefficient per row) or a ball/ellipsoid (an arrow LMI): ``Box``,
        ``Ball`` and ``Ellipsoid`` compile to far smaller cones.
    """

    #: set per instance: True when a sign congruence shows ``V = −V`` (see ``_flips_sign``)
    symmetric = False

    def __init__(self, A0: Any, A: Any, radius: Any = 1.0) -> None:
        super().__init__(radius)
        A0 = check_symmetric(A0, name="A0")
        p = A0.shape[0]
        A = real_array(A, name="A")
        if A.ndim != 3 or A.shape[1:] != (p, p) or A.shape[0] == 0:
            raise ValueError(f"A must have shape (d, {p}, {p}) to match A0, got {A.shape}")
        A = np.stack([check_symmetric(Al, name=f"A[{l}]") for l, Al in enumerate(A)])
        self.A0 = A0
        self.A = A
        self.blocks, self.lin_a0, self.lin_A = _split_blocks(A0, A)
        # linear rows a0 + a·v ≥ 0 are the polyhedron rows (−a)·v ≤ a0
        self.symmetric = all(_flips_sign(B0, B) for B0, B in self.blocks) and (
            self.lin_a0.size == 0 or rows_closed_under_negation(-self.lin_A, self.lin_a0))
        self._warn_if_simple()
        self._check_interior()
        self._check_bounded()

    # ------------------------------------------------------------ structure
    @property
    def dim(self) -> int:
        return self.A.shape[0]

    @property
    def block_sizes(self) -> list[int]:
        """Sizes of the PSD blocks left after splitting (linear rows excluded)."""
        return [B0.shape[0] for B0, _ in self.blocks]

    def _lmi_expressions(self, v: cp.Expression) -> tuple[list[cp.Expression], cp.Expression | None]:
        """The affine matrices ``B0 + Σ v_l B_l`` of the blocks and the linear rows ``a0 + A_lin v``."""
        d = self.dim
        mats = []
        for B0, B in self.blocks:
            q = B0.shape[0]
            mats.append(B0 + cp.reshape(B.reshape(d, q * q).T @ v, (q, q), order="C"))
        lin = None if self.lin_a0.size == 0 else self.lin_a0 + self.lin_A @ v
        return mats, lin

    def membership_cvx(self, v):
        """``B0_b + Σ v_l B_lb ⪰ 0`` for every block and ``a0 + A_lin v ≥ 0``."""
        mats, lin = self._lmi_expressions(v)
        cons = [M >> 0 for M in mats]
        if lin is not None:
            cons.append(lin >= 0)
        return cons

    def scaled_membership_cvx(self, v, scale):
        """``t B0_b + Σ v_l B_lb ⪰ 0`` for every block and ``t a0 + A_lin v ≥ 0``."""
        d = self.dim
        cons = []
        for B0, B in self.blocks:
            q = B0.shape[0]
            cons.append(scale * B0 + cp.reshape(B.reshape(d, q * q).T @ v, (q, q), order="C") >> 0)
        if self.lin_a0.size:
            cons.append(scale * self.lin_a0 + self.lin_A @ v >= 0)
        return cons

    @property
    def is_polyhedral(self) -> bool:
        """True when the LMI splits into scalar rows only (a diagonal LMI is a polyhedron)."""
        return not self.blocks

    def center(self, d):
        """The strictly feasible point found when the set was checked (the origin when ``A0 ≻ 0``)."""
        self.check_dim(d)
        return self.interior_point.copy()

    def gauge(self, v, center=None):
        """``max(0, λ_max(−L_b⁻¹ D_b L_b⁻ᵀ), max_k −a_k·u/(a0_k + a_k·c))`` with ``u = v − c``.

        ``F_b(c) = B0_b + Σ c_l B_lb = L_b L_bᵀ ≻ 0`` and ``D_b = Σ u_l B_lb``:
        ``F_b(c + s u) = L_b(I + s L_b⁻¹D_bL_b⁻ᵀ)L_bᵀ ⪰ 0`` exactly while ``s λ_max(−L_b⁻¹D_bL_b⁻ᵀ) ≤ 1``.
        """
        v = np.asarray(v, dtype=np.float64)
        c = self.interior_point if center is None else np.asarray(center, dtype=np.float64)
        u = v - c
        g = 0.0
        for B0, B in self.blocks:
            try:
                L = np.linalg.cholesky(B0 + np.tensordot(c, B, axes=1))
            except np.linalg.LinAlgError as exc:
                raise ValueError("the centre of a Spectrahedron gauge must lie in its interior") from exc
            K = sla.solve_triangular(L, sla.solve_triangular(L, np.tensordot(u, B, axes=1), lower=True).T,
                                     lower=True)
            g = max(g, float(np.linalg.eigvalsh(-0.5 * (K + K.T))[-1]))
        if self.lin_a0.size:
            slack = self.lin_a0 + self.lin_A @ c
            if np.any(slack <= 0):
                raise ValueError("the centre of a Spectrahedron gauge must lie in its interior")
            g = max(g, float(np.max(-(self.lin_A @ u) / slack)))
        return g

    def contains(self, v, tol=1e-8):
        """Smallest eigenvalue of every block and every linear row ``≥ −tol`` (relative to the scale)."""
        v = np.asarray(v, dtype=np.float64)
        scale = self._scale()
        for B0, B in self.blocks:
            if np.linalg.eigvalsh(B0 + np.tensordot(v, B, axes=1)).min() < -tol * scale:
                return False
        if self.lin_a0.size and np.min(self.lin_a0 + self.lin_A @ v) < -tol * scale:
            return False
        return True

    def _scale(self) -> float:
        return max(1.0, float(np.max(np.abs(self.A0))), float(np.max(np.abs(self.A))))

    # ------------------------------------------------------------- support
    def support_cvx(self, z):
        """``tr(A0 W)`` subject to ``W ⪰ 0``, ``tr(A_l W) = −z_l`` (per block after splitting)."""
        e, cons = type(self).support_cvx_many([self], [z])
        return e[0], cons

    @classmethod
    def support_cvx_many(cls, sets, zs):
        """The duals of several spectrahedra at once.

        For pair ``j`` (set ``V_j``, direction ``z_j``) the expression is
        ``Σ_b tr(B0_b W_jb) + a0·μ_j`` with ``Σ_b tr(B_lb W_jb) + (A_linᵀ μ_j)_l = −(z_j)_l``,
        ``W_jb ⪰ 0``, ``μ_j ≥ 0``. All ``W_jb`` of one block size ``q`` are one
        ``(m, q, q)`` variable under one PSD constraint (plain ``q × q``
        variables when there are fewer than 8, as for a set shared by all
        samples); the coupling is two sparse constant matrices.
        """
        J = len(sets)
        d = sets[0].dim
        if any(s.dim != d for s in sets):
            raise ValueError("spectrahedra compiled together must live in the same dimension")
        by_size: dict[int, list[tuple[int, np.ndarray, np.ndarray]]] = {}
        lin_items: list[tuple[int, np.ndarray, np.ndarray]] = []
        for j, s in enumerate(sets):
            for B0, B in s.blocks:
                by_size.setdefault(B0.shape[0], []).append((j, B0, B))
            if s.lin_a0.size:
                lin_items.append((j, s.lin_a0, s.lin_A))
        cons: list[cp.Constraint] = []
        eq_terms: list[cp.Expression] = [stack_directions(zs)]
        obj_terms: list[cp.Expression] = []
        for q, items in sorted(by_size.items()):
            m = len(items)
            qq = q * q
            if m >= _BATCH_MIN:  # one (m, q, q) variable, one PSD constraint
                W = cp.Variable((m, q, q), name=f"W{q}")
                cons.append(W >> 0)
                wflat = cp.reshape(W, (m * qq,), order="C")
            else:  # a few blocks (a shared set): plain q × q matrices
                Ws = [cp.Variable((q, q), symmetric=True, name=f"W{q}") for _ in range(m)]
                cons.extend(W >> 0 for W in Ws)
                wflat = _add_concat([cp.vec(W, order="C") for W in Ws])
            orows, ocols, ovals = [], [], []
            for k, (j, B0, _B) in enumerate(items):
                c0 = np.flatnonzero(B0.ravel())
                orows.append(np.full(c0.size, j))
                ocols.append(k * qq + c0)
                ovals.append(B0.ravel()[c0])
            E = _block_coefficients(items, d, J)
            O = sp.csr_matrix((np.concatenate(ovals), (np.concatenate(orows), np.concatenate(ocols))),
                              shape=(J, m * qq))
            eq_terms.append(E @ wflat)
            obj_terms.append(O @ wflat)
        if lin_items:
            sizes = [a0.size for _, a0, _ in lin_items]
            mu = cp.Variable(sum(sizes), nonneg=True, name="mu_lin")
            offsets = np.concatenate([[0], np.cumsum(sizes)])
            rows, cols, vals, orows = [], [], [], []
            for (j, _a0, Al), off in zip(lin_items, offsets[:-1], strict=True):
                i, l = np.nonzero(Al)
                rows.append(j * d + l)
                cols.append(off + i)
                vals.append(Al[i, l])
                orows.append(np.full(Al.shape[0], j))
            E = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                              shape=(J * d, mu.size))
            O = sp.csr_matrix((np.concatenate([a0 for _, a0, _ in lin_items]),
                               (np.concatenate(orows), np.arange(mu.size))), shape=(J, mu.size))
            eq_terms.append(E @ mu)
            obj_terms.append(O @ mu)
        cons.append(_add(eq_terms) == 0)
        return _add(obj_terms), cons

    @classmethod
    def support_many(cls, sets, Z):
        """``σ_{V_j}(z_j)`` for all pairs from one solve of the dual (``Σ_j`` of separable SDPs).

        The same batched dual as in a model (:meth:`support_cvx_many`) with the
        directions fixed: ``min Σ_j e_j``; each ``e_j`` is then ``σ_{V_j}(z_j)``.
        """
        Z = np.asarray(Z, dtype=np.float64)
        m = direction_scale(Z)  # each row solved as z_j / m_j: the terms separate, σ is homogeneous
        exprs, cons = cls.support_cvx_many(list(sets), [cp.Constant(z) for z in Z / m[:, None]])
        prob = cp.Problem(cp.Minimize(cp.sum(exprs)), cons)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="The problem has an expression with dimension greater than 2")
            prob.solve(solver=cls._solver)
        if prob.status not in ("optimal", "optimal_inaccurate"):
            raise RuntimeError(f"Spectrahedron: the batched support problem ended with status {prob.status!r}")
        return m * np.asarray(exprs.value, dtype=np.float64).reshape(-1)

    @classmethod
    def maximize_many(cls, sets, Z):
        """Maximizers ``v_j* ∈ V_j`` of ``z_j·v`` for all pairs from one solve of the primal.

        ``max Σ_j z_j·v_j`` subject to every ``v_j ∈ V_j``: the problem separates,
        so its solution maximizes each term. The affine matrices of all blocks of
        one size are one ``(m, q, q)`` expression under one PSD constraint.
        """
        Z = np.asarray(Z, dtype=np.float64)
        J, d = Z.shape
        if J == 1:
            value, v = sets[0]._numeric_max(Z[0])
            return np.array([value]), v[None, :]
        scale = direction_scale(Z)  # the maximizers do not change when each row is divided by its scale
        Z_unit = Z / scale[:, None]
        Vv = cp.Variable((J, d))
        vflat = cp.reshape(Vv, (J * d,), order="C")
        cons: list[cp.Constraint] = []
        by_size: dict[int, list[tuple[int, np.ndarray, np.ndarray]]] = {}
        lin_rows, lin_cols, lin_vals, lin_a0 = [], [], [], []
        n_lin = 0
        for j, s in enumerate(sets):
            for B0, B in s.blocks:
                by_size.setdefault(B0.shape[0], []).append((j, B0, B))
            if s.lin_a0.size:
                i, l = np.nonzero(s.lin_A)
                lin_rows.append(n_lin + i)
                lin_cols.append(j * d + l)
                lin_vals.append(s.lin_A[i, l])
                lin_a0.append(s.lin_a0)
                n_lin += s.lin_a0.size
        for q, items in by_size.items():
            m = len(items)
            M = _block_coefficients(items, d, J).T.tocsr()
            c0 = np.concatenate([B0.ravel() for _, B0, _ in items])
            F = cp.reshape(c0 + M @ vflat, (m, q, q), order="C")
            cons.append(F >> 0)
        if n_lin:
            Ml = sp.csr_matrix((np.concatenate(lin_vals), (np.concatenate(lin_rows), np.concatenate(lin_cols))),
                               shape=(n_lin, J * d))
            cons.append(np.concatenate(lin_a0) + Ml @ vflat >= 0)
        prob = cp.Problem(cp.Maximize(cp.sum(cp.multiply(Z_unit, Vv))), cons)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="The problem has an expression with dimension greater than 2")
            prob.solve(solver=cls._solver)
        if prob.status not in ("optimal", "optimal_inaccurate") or Vv.value is None:
            raise RuntimeError(f"Spectrahedron: the batched maximization ended with status {prob.status!r}")
        V = np.asarray(Vv.value, dtype=np.float64)
        return np.einsum("jd,jd->j", Z, V), V

    # ---------------------------------------------------------- validation
    def _check_interior(self) -> None:
        """Raise unless ``max{t : A0 + Σ v_l A_l ⪰ tI, t ≤ 1} > 0`` (a strictly feasible point).

        Fast path: when ``A0 ≻ 0`` (every block positive definite, every ``a0 > 0``),
        ``v = 0`` is interior and no SDP is solved.
        """
        d = self.dim
        tol = _MARGIN_TOL * self._scale()
        if all(np.linalg.eigvalsh(B0)[0] > tol for B0, _ in self.blocks) and np.all(self.lin_a0 > tol):
            self.interior_point = np.zeros(d)
            return
        v = cp.Variable(d)
        t = cp.Variable()
        mats, lin = self._lmi_expressions(v)
        cons = [M >> t * np.eye(M.shape[0]) for M in mats] + [t <= 1]
        if lin is not None:
            cons.append(lin >= t)
        prob = cp.Problem(cp.Maximize(t), cons)
        prob.solve(solver="CLARABEL")
        if prob.status not in ("optimal", "optimal_inaccurate") or t.value is None:
            raise ValueError(f"Spectrahedron: the interior-point check failed (solver status {prob.status!r})")
        if float(t.value) <= _MARGIN_TOL * self._scale():
            raise ValueError(
                "Spectrahedron has no interior point: the largest t with A0 + Σ v_l A_l ⪰ tI is "
                f"{float(t.value):.3g} ≤ 0 (the set is empty or flat, and the dual support formula is not exact)"
            )
        self.interior_point = np.asarray(v.value, dtype=np.float64)

    def _check_bounded(self) -> None:
        """Raise unless the recession cone ``{u : Σ u_l A_l ⪰ 0}`` is ``{0}``.

        With ``𝒜(u) = Σ u_l A_l`` (block-split), the cone is ``{0}`` iff ``𝒜`` is
        injective and some ``W ≻ 0`` has ``tr(A_l W) = 0`` for all ``l`` (theorem
        of alternatives for the self-dual PSD cone); the latter is the SDP
        ``max s : W ⪰ sI, tr W = 1, tr(A_l W) = 0``. Fast path: with no linear
        rows and ``tr(A_l) = 0`` in every block, ``W = I`` is such a matrix.
        """
        d = self.dim
        cols = [B.reshape(d, -1) for _, B in self.blocks]
        if self.lin_a0.size:
            cols.append(self.lin_A.T)
        Mmap = np.hstack(cols)
        rank = np.linalg.matrix_rank(Mmap)
        if rank < d:
            raise ValueError(
                f"Spectrahedron is unbounded: A_1, …, A_d are linearly dependent (rank {rank} < d = {d}), "
                "so the set contains a line"
            )
        if self.lin_a0.size == 0 and all(
                np.allclose(np.trace(B, axis1=1, axis2=2), 0.0, atol=1e-12 * self._scale()) for _, B in self.blocks):
            return
        s = cp.Variable()
        Ws = [cp.Variable((B0.shape[0], B0.shape[0]), symmetric=True) for B0, _ in self.blocks]
        cons = [W >> s * np.eye(W.shape[0]) for W in Ws]
        trace = 0
        coupling = 0
        for W, (_, B) in zip(Ws, self.blocks, strict=True):
            q = W.shape[0]
            trace = trace + cp.trace(W)
            coupling = coupling + B.reshape(d, q * q) @ cp.reshape(W, (q * q,), order="C")
        if self.lin_a0.size:
            mu = cp.Variable(self.lin_a0.size)
            cons.append(mu >= s)
            trace = trace + cp.sum(mu)
            coupling = coupling + self.lin_A.T @ mu
        cons += [trace == 1, coupling == 0, s <= 1]
        prob = cp.Problem(cp.Maximize(s), cons)
        prob.solve(solver="CLARABEL")
        size = sum(self.block_sizes) + self.lin_a0.size
        if prob.status in ("infeasible", "infeasible_inaccurate") or s.value is None \
                or float(s.value) <= _MARGIN_TOL / size:
            raise ValueError(
                "Spectrahedron is unbounded: some direction u ≠ 0 has Σ u_l A_l ⪰ 0 "
                "(no W ≻ 0 with tr(A_l W) = 0 for all l)"
            )

    def _warn_if_simple(self) -> None:
        """Warn when the LMI is a box (diagonal) or a ball/ellipsoid (arrow)."""
        if not self.blocks and self.lin_a0.size:
            nnz = np.count_nonzero(self.lin_A, axis=1)
            if np.all(nnz == 1):
                warnings.warn(
                    "this Spectrahedron is an axis-aligned box (a diagonal LMI); it is compiled as linear "
                    "constraints, but rs.Box(radius, widths=...) describes it directly",
                    UserWarning,
                    stacklevel=3,
                )
            return
        for B0, B in self.blocks:
            if _is_arrow(B0, B):
                warnings.warn(
                    f"this Spectrahedron contains a {B0.shape[0]} × {B0.shape[0]} arrow LMI, which is a ball or an "
                    "ellipsoid: rs.Ball / rs.Ellipsoid compile it to one second-order cone, far cheaper for "
                    "conic solvers than a PSD block",
                    UserWarning,
                    stacklevel=3,
                )
                return

    # ------------------------------------------------------------ describe
    def key(self):
        return ("Spectrahedron", self.A.shape, self.A0.tobytes(), self.A.tobytes())

    def to_dict(self):
        return {"type": "Spectrahedron", "radius": np.asarray(self.radius).tolist(), "A0": self.A0.tolist(),
                "A": self.A.tolist()}

    def __repr__(self) -> str:
        p = self.A0.shape[0]
        return f"Spectrahedron(<{p}×{p} LMI in R^{self.dim}, blocks {self.block_sizes}>, radius={self.radius_text})"


def _add_concat(parts: list[cp.Expression]) -> cp.Expression:
    return parts[0] if len(parts) == 1 else cp.hstack(parts)


def _add(terms: list[cp.Expression]) -> cp.Expression:
    out = terms[0]
    for t in terms[1:]:
        out = out + t
    return out


def _split_blocks(A0: np.ndarray, A: np.ndarray):
    """Split the LMI into the connected components of the common sparsity pattern.

    Returns
    -------
    blocks : list of (B0, B)
        Blocks of size ≥ 2: ``B0`` (q, q), ``B`` (d, q, q).
    lin_a0 : ndarray (k,), lin_A : ndarray (k, d)
        The 1 × 1 blocks as linear inequalities ``lin_a0 + lin_A v ≥ 0``
        (all-zero rows, which hold for every v, dropped).
    """
    d = A.shape[0]
    pattern = (A0 != 0) | np.any(A != 0, axis=0)
    n_comp, labels = connected_components(sp.csr_matrix(pattern), directed=False)
    blocks = []
    lin_a0, lin_A = [], []
    for c in range(n_comp):
        idx = np.flatnonzero(labels == c)
        if idx.size == 1:
            i = idx[0]
            a0, a = A0[i, i], A[:, i, i]
            if a0 == 0 and not np.any(a):
                continue
            lin_a0.append(a0)
            lin_A.append(a)
        else:
            blocks.append((A0[np.ix_(idx, idx)].copy(), A[:, idx][:, :, idx].copy()))
    lin_a0 = np.asarray(lin_a0, dtype=np.float64)
    lin_A = np.asarray(lin_A, dtype=np.float64).reshape(-1, d)
    return blocks, lin_a0, lin_A


def _is_arrow(B0: np.ndarray, B: np.ndarray) -> bool:
    """``B0`` positive diagonal and every ``B_l`` supported on one row/column ``k`` off its diagonal.

    Then ``B0 + Σ v_l B_l = [[a, bᵀ], [b, D]]`` with ``b`` linear in ``v``, and
    the LMI is ``bᵀD⁻¹b ≤ a``: an ellipsoid (a ball when ``D`` and ``b`` are scaled alike).
    """
    if np.any(B0 != np.diag(np.diag(B0))) or np.any(np.diag(B0) <= 0):
        return False
    q = B0.shape[0]
    for k in range(q):
        mask = np.zeros((q, q), dtype=bool)
        mask[k, :] = True
        mask[:, k] = True
        mask[k, k] = False
        if not np.any(B[:, ~mask]):
            return True
    return False


def _flips_sign(B0: np.ndarray, B: np.ndarray) -> bool:
    """Whether a signature ``S = diag(±1)`` has ``S B0 S = B0`` and ``S B_l S = −B_l`` for all l.

    Then ``B0 + Σ(−v_l)B_l = S(B0 + Σ v_l B_l)S`` is congruent to the matrix at ``v``, so the
    block is symmetric (``V = −V``). Entries of ``B_l`` force opposite signs on their row and
    column, entries of ``B0`` equal signs: a two-colouring with parities, found by a traversal.
    """
    q = B0.shape[0]
    if np.any(np.diagonal(B, axis1=1, axis2=2)):
        return False
    differ = np.any(B != 0, axis=0)
    same = (B0 != 0) & ~np.eye(q, dtype=bool)
    if np.any(differ & same):
        return False
    sign = np.zeros(q, dtype=int)
    for start in range(q):
        if sign[start]:
            continue
        sign[start] = 1
        stack = [start]
        while stack:
            j = stack.pop()
            for k in np.flatnonzero(differ[j] | same[j]):
                want = -sign[j] if differ[j, k] else sign[j]
                if sign[k] == 0:
                    sign[k] = want
                    stack.append(k)
                elif sign[k] != want:
                    return False
    return True

"""One block of CoCoA+: a partition's rows, the sums of its dual block and its exact local problem.

The dual of the shared-set robust model is ``D(α) = Σ_i c_i (α_i − ℓ*(α_i)) − F(v, A) [− S²/(2μ)]`` with
``v = Σ_i c_i α_i y_i x_i``, ``A = Σ_i c_i α_i r_i``, ``S = Σ_i c_i y_i α_i`` and
``F(v, A) = max_w (v·w − A σ_V(w) − h(w))`` jointly convex. With ``K`` blocks, block ``k``'s local problem

    max over α_[k]   Σ_{i∈k} c_i (α_i − ℓ*(α_i)) − (1/K) F(v + K Δv_k, A + K ΔA_k) [− (K/(2μ)) (S/K + ΔS_k)²]

is robust-dcd on the block's rows with ``λ2/K``, ``λ1/K``, the intercept weight ``ρ·K`` and the maintained sums
started at ``v/K``, ``A/K``, ``S/K`` (``docs/derivations/cocoa_robust.md``). :func:`local_ascent` runs the
compiled robust-dcd epochs on it; :func:`block_sums` and :func:`block_losses` are what a block reports to the
client for the certificate.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import scipy.sparse as sp

from ..backends.dual_ascent import Products, visiting_order
from ..backends.robust_dcd import ELLIPSOID_MAX_FEATURES, INNER_TOL, epoch_runner  # the local solver and its limits
from ..backends.shared_set import SharedSetArrays, Workspace

__all__ = ["ELLIPSOID_MAX_FEATURES", "Block", "BlockSums", "LocalStart", "block_losses", "block_sums", "local_ascent",
           "make_block"]

#: how far the kernel's local radius mass may exceed the exact ``A/K + ΔA_k`` and still count as rounding, relative
#: to the mass moved (``A/K + Σ c_i r_i (α_i + α_i⁰)``)
A_SLACK = 1e-9


@dataclass(frozen=True)
class Block:
    """A partition's rows as the local problem sees them: ``arrays`` at ``λ2/K`` and ``λ1/K``, its products."""

    arrays: SharedSetArrays
    ops: Products
    K: int


def make_block(spec: SharedSetArrays, X, y: np.ndarray, c: np.ndarray, r: np.ndarray, K: int) -> Block:
    """The block of the rows ``X`` (dense or CSR), labels ``y`` (±1), loss coefficients ``c`` and radii ``r``.

    ``spec`` carries the model's scalars (``λ2``, ``λ1``, signs, set, loss, intercept) at their global values.
    """
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64)
        with np.errstate(over="ignore"):
            sqn = np.asarray(X.multiply(X).sum(axis=1)).ravel()
    else:
        X = np.ascontiguousarray(X, dtype=np.float64)
        with np.errstate(over="ignore", invalid="ignore"):
            sqn = np.einsum("ij,ij->i", X, X)
    arrays = replace(spec, X=X, y=np.ascontiguousarray(y, dtype=np.float64),
                     c=np.ascontiguousarray(c, dtype=np.float64), r=np.ascontiguousarray(r, dtype=np.float64),
                     sqn=sqn, l2=spec.l2 / K, l1=spec.l1 / K, primal=None)
    return Block(arrays, Products(X), int(K))


@dataclass(frozen=True)
class BlockSums:
    """What a block's ``α_[k]`` contributes to the dual, per class (row 0: ``y = +1``, row 1: ``y = −1``).

    ``images[j] = Σ c_i α_i y_i x_i``, ``radius[j] = Σ c_i α_i r_i``, ``mass[j] = Σ c_i α_i`` and
    ``terms[j] = [Σ c_i (α_i − ℓ*(α_i)), Σ c_i (α_i/2 − ℓ*(α_i/2))]`` over the block's samples of class ``j``
    (the two values of the dual term, a quadratic in the scale of ``α``, that fix it for a class scaled by ``f``).
    """

    images: np.ndarray
    radius: np.ndarray
    mass: np.ndarray
    terms: np.ndarray

    @classmethod
    def zeros(cls, d: int) -> BlockSums:
        return cls(np.zeros((2, d)), np.zeros(2), np.zeros(2), np.zeros((2, 2)))

    def __add__(self, other: BlockSums) -> BlockSums:
        return BlockSums(self.images + other.images, self.radius + other.radius, self.mass + other.mass,
                         self.terms + other.terms)

    @property
    def v(self) -> np.ndarray:
        return self.images[0] + self.images[1]

    @property
    def radius_total(self) -> float:
        """``A = Σ c_i α_i r_i``."""
        return float(self.radius.sum())

    @property
    def label_sum(self) -> float:
        """``Σ c_i y_i α_i``."""
        return float(self.mass[0] - self.mass[1])

    @property
    def nbytes(self) -> int:
        return int(self.images.nbytes + self.radius.nbytes + self.mass.nbytes + self.terms.nbytes)


def block_sums(block: Block, alpha: np.ndarray) -> BlockSums:
    """The sums of ``α_[k]``, computed from ``α`` itself (no drift: the client's ``v`` and ``A`` are their sum)."""
    a = block.arrays
    pos = a.y > 0
    ca = a.c * alpha
    images = block.ops.images(ca * a.y, pos)
    car = ca * a.r
    dual = a.c * a.loss.dual_term(alpha)
    half = a.c * a.loss.dual_term(0.5 * alpha)
    return BlockSums(
        images=images,
        radius=np.array([car[pos].sum(), car[~pos].sum()]),
        mass=np.array([ca[pos].sum(), ca[~pos].sum()]),
        terms=np.array([[dual[pos].sum(), half[pos].sum()], [dual[~pos].sum(), half[~pos].sum()]]),
    )


def block_losses(block: Block, w: np.ndarray, support: float, intercepts: np.ndarray) -> np.ndarray:
    """``Σ_{i∈k} c_i ℓ(y_i(x_i·w + b) − r_i σ_V(w))`` for each ``b`` of ``intercepts`` (``support = σ_V(w)``)."""
    a = block.arrays
    xw = block.ops.matvec(w) if np.any(w) else np.zeros(a.y.size)
    base = a.y * xw - a.r * support
    return np.array([float(a.c @ a.loss.value(base + a.y * b)) for b in np.atleast_1d(intercepts)])


@dataclass(frozen=True)
class LocalStart:
    """The client's state a local problem starts from: the global ``v``, ``A``, ``S``, the intercept multiplier
    ``b0`` (free intercept; 0 otherwise) and the intercept weight ``ρ`` (``1/μ`` ridge, 0 none)."""

    v: np.ndarray
    radius_total: float
    label_sum: float
    b0: float
    rho: float


def local_ascent(block: Block, alpha: np.ndarray, start: LocalStart, *, epochs: int, seed: int,
                 inner: int = 5) -> tuple[np.ndarray, dict]:
    """Ascend block ``k``'s exact local problem from ``α_[k]`` by at most ``epochs`` robust-dcd epochs.

    The maintained sums start at ``v/K``, ``A/K`` and ``S/K``, with ``λ2/K``, ``λ1/K`` and ``ρK``: every epoch
    then ascends the local objective of the module docstring, a lower bound of the change of ``D`` that the
    client's sum of the blocks (σ′ = K) attains at least. The local model is exact while the local radius mass
    ``A/K + ΔA_k`` stays non-negative (the compiled epoch clips it at 0); an epoch that crosses it is undone and
    the ascent stops there. Returns the new ``α_[k]`` (a copy) and ``{"epochs", "undone"}``.
    """
    a, K = block.arrays, block.K
    alpha0 = np.asarray(alpha, dtype=np.float64)
    alpha = alpha0.copy()
    if epochs < 1 or not np.any(a.c > 0):
        return alpha, {"epochs": 0, "undone": False}
    setk = a.set_kernel
    prm = a.params(rho=start.rho * K, inner=inner, inner_tol=INNER_TOL, local=a.local_steps, shrinking=False)
    work = Workspace(a.X.shape[1])
    st = work.state
    A_loc = start.radius_total / K
    work.refresh(setk, prm, np.asarray(start.v, dtype=np.float64) / K, A_loc, inner)
    st.sums[0] = (start.b0, start.label_sum / K, A_loc)
    index = np.flatnonzero(a.c > 0).astype(np.int64)
    rng_state = visiting_order(seed)
    run_epoch = epoch_runner(a, alpha, st, setk, prm, index, rng_state)
    cr = a.c * a.r
    moved0 = A_loc + float(cr @ alpha0)
    done, undone = 0, False
    for _ in range(int(epochs)):
        before = alpha.copy()
        run_epoch(index.size, np.inf, -np.inf)
        true_A = A_loc + float(cr @ (alpha - alpha0))
        slack = A_SLACK * (moved0 + float(cr @ alpha)) + np.finfo(float).tiny
        if st.sums["A"][0] - true_A > slack:  # the epoch clipped a negative local radius mass: not the local model
            alpha[:] = before
            undone = True
            break
        done += 1
    return alpha, {"epochs": done, "undone": undone}

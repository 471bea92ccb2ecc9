"""Ordering and equality priors on the weights: ``Increasing``, ``Decreasing``, ``Order`` and ``Equal``.

A prior names features (by name or index) and states

    Increasing([a, b, c]):    w_a ≤ w_b ≤ w_c           Decreasing([a, b, c]):  w_a ≥ w_b ≥ w_c
    Order(a, ">=", b):        w_a ≥ w_b                 Equal([a, b, c]):       w_a = w_b = w_c

(oriented, like signs and bounds, to the class the model's ``positive_class`` names). It goes in
``Problem(constraints=[...])`` beside ``scipy.optimize.LinearConstraint`` objects and combines with signs, bounds
and the penalties. Each prior is, for the conic path, rows ``w_p − w_q ≤ 0`` (or ``= 0``) of the model's
linear constraints, priced in the certificate's Lagrangian bound by their multipliers ``ν``.

For the first-order path, :func:`chain_structure` reads a model's linear constraints back as disjoint chains of
groups (features tied by equalities) ``G_1 ≤ G_2 ≤ … ≤ G_m``, and :class:`ChainStructure` gives

* the prox of the penalty on the weight set,
  ``w(s) = argmax_{w ∈ W} s·w − λ1‖w‖₁ − (λ2/2)‖w‖²``, ``W`` the bounds and the chains: separable
  ``clip(soft(s_h, λ1)/λ2, l_h, u_h)`` off the chains and, on each chain, pool-adjacent-violators whose block of
  ``n`` features with sum ``S`` takes ``clip(soft(S/n, λ1)/λ2, max l, min u)`` (with ``λ1 = 0``, ``λ2 = 1`` and
  no bounds: the Euclidean projection, isotonic regression);
* the multipliers ``ν ≥ 0`` of the chain rows at that point, for which ``w(s)`` also maximizes
  ``(s − Aᵀν)·w − λ1‖w‖₁ − (λ2/2)‖w‖²`` over the bounds alone: the Lagrangian bound is then exact at ``s``.

The derivation is in ``docs/derivations/ordering.md``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numba as nb
import numpy as np
from scipy.optimize import LinearConstraint

from .base import Prior, feature_keys, register_row_check
from .signs import feature_index

__all__ = ["WORK_ROWS", "ChainPrior", "ChainStructure", "Decreasing", "Equal", "Increasing", "Order", "OrderingPrior",
           "chain_structure", "chain_prox_into", "check_chain_rows", "check_feasible"]

#: the comparison operators :class:`Order` takes
OPERATORS = (">=", "<=", "==")
#: rows of :func:`chain_prox_into`'s scratch array
WORK_ROWS = 7


@dataclass(frozen=True, eq=False)
class OrderingPrior(Prior):
    """A set of pairwise statements ``w_p ≤ w_q`` or ``w_p = w_q`` between named (or indexed) features."""

    features: tuple

    def pairs(self) -> list[tuple[Any, Any, str]]:  # pragma: no cover - every subclass overrides
        """``(p, q, kind)``: ``kind = "le"`` states ``w_p ≤ w_q``, ``"eq"`` states ``w_p = w_q``."""
        raise NotImplementedError

    def linear_constraint(self, d: int, feature_names: np.ndarray | None = None) -> LinearConstraint:
        """The prior as ``LinearConstraint(A, lb, 0)``: a row ``w_p − w_q`` per pair, ``lb = −∞`` (``≤``) or 0 (``=``).

        Raises ``ValueError`` naming the prior for an unknown feature or a feature named twice.
        """
        what = repr(self)
        pairs = [(feature_index(p, d, feature_names, name=what), feature_index(q, d, feature_names, name=what), kind)
                 for p, q, kind in self.pairs()]
        idx = [feature_index(k, d, feature_names, name=what) for k in self.features]
        if len(set(idx)) != len(idx):
            raise ValueError(f"{what} names a feature twice")
        A = np.zeros((len(pairs), d))
        rows = np.arange(len(pairs))
        A[rows, [p for p, _, _ in pairs]] = 1.0
        A[rows, [q for _, q, _ in pairs]] = -1.0
        lb = np.array([-np.inf if kind == "le" else 0.0 for _, _, kind in pairs])
        return LinearConstraint(A, lb, np.zeros(len(pairs)))

    def to_dict(self) -> dict:
        return {self.tag: list(self.features)}

    def __repr__(self) -> str:
        return f"rs.{type(self).__name__}({list(self.features)!r})"


class ChainPrior(OrderingPrior):
    """A statement on each consecutive pair of ``features = [a, b, c, …]`` (names or indices): ``w_a op w_b``,
    ``w_b op w_c``, … with ``op`` the class's ``kind`` (``"le"``: ``≤``, ``"eq"``: ``=``), each pair reversed
    when the class is not ``rising``."""

    kind: ClassVar[str] = "le"
    rising: ClassVar[bool] = True

    def __init__(self, features: Sequence[Any]) -> None:
        object.__setattr__(self, "features", feature_keys(features, f"rs.{type(self).__name__}", 2))

    def pairs(self) -> list[tuple[Any, Any, str]]:
        f = self.features
        return [(f[j], f[j + 1], self.kind) if self.rising else (f[j + 1], f[j], self.kind)
                for j in range(len(f) - 1)]


class Increasing(ChainPrior):
    """``w_a ≤ w_b ≤ w_c …`` for ``features = [a, b, c, …]`` (names or indices): a monotone effect of ordered
    categories coded one column each (dose levels, stages), rising along the list."""

    tag: ClassVar[str] = "increasing"


class Decreasing(ChainPrior):
    """``w_a ≥ w_b ≥ w_c …`` for ``features = [a, b, c, …]``: the effect falls along the list."""

    tag: ClassVar[str] = "decreasing"
    rising: ClassVar[bool] = False


class Equal(ChainPrior):
    """``w_a = w_b = w_c …``: features whose effects are the same (one coefficient shared by several columns)."""

    tag: ClassVar[str] = "equal"
    kind: ClassVar[str] = "eq"


class Order(OrderingPrior):
    """``w_left op w_right`` for ``op`` in ``">="``, ``"<="``, ``"=="``: one coefficient at least (at most, equal to)
    another, e.g. ``rs.Order("stage 3", ">=", "stage 2")``."""

    tag: ClassVar[str] = "order"

    def __init__(self, left: Any, op: str, right: Any) -> None:
        if not isinstance(op, str) or op not in OPERATORS:
            raise ValueError(f"rs.Order takes an operator among {list(OPERATORS)}, got {op!r}")
        object.__setattr__(self, "features", feature_keys([left, right], "rs.Order", 2))
        object.__setattr__(self, "op", op)

    def pairs(self) -> list[tuple[Any, Any, str]]:
        a, b = self.features
        return [(b, a, "le")] if self.op == ">=" else [(a, b, "le" if self.op == "<=" else "eq")]

    def to_dict(self) -> dict:
        return {self.tag: [self.features[0], self.op, self.features[1]]}

    @classmethod
    def from_value(cls, value: Any) -> Order:
        return cls(*value)

    def __repr__(self) -> str:
        return f"rs.Order({self.features[0]!r}, {self.op!r}, {self.features[1]!r})"


# --------------------------------------------------------------------------------------- chains
@nb.njit(cache=True, inline="always")
def _block_value(total, count, lo, up, l2, l1):  # pragma: no cover - compiled
    """``clip(soft(total/count, λ1)/λ2, lo, up)``: the maximizer of ``total·t − count(λ1|t| + λ2 t²/2)`` on [lo, up]."""
    m = total / count
    t = (m - l1 if m > l1 else (m + l1 if m < -l1 else 0.0)) / l2
    return min(max(t, lo), up)


@nb.njit(cache=True, inline="always")
def _pooled_chain(s, c, l2, l1, lower, upper, order, group_ptr, chain_ptr, w, work):  # pragma: no cover - compiled
    """Chain ``c`` by pool-adjacent-violators on the blocks' values (any bounds); its stack lives in the columns of
    its groups."""
    tot, cnt, blo, bup, first, val = work[0], work[1], work[2], work[3], work[4], work[5]
    base = chain_ptr[c]
    top = base - 1
    for g in range(chain_ptr[c], chain_ptr[c + 1]):
        S, n, lo, up = 0.0, 0.0, -np.inf, np.inf
        for k in range(group_ptr[g], group_ptr[g + 1]):
            h = order[k]
            S += s[h]
            n += 1.0
            lo = max(lo, lower[h])
            up = min(up, upper[h])
        top += 1
        tot[top], cnt[top], blo[top], bup[top], first[top] = S, n, lo, up, g
        val[top] = _block_value(S, n, lo, up, l2, l1)
        while top > base and val[top - 1] > val[top]:  # adjacent violators: pool them
            tot[top - 1] += tot[top]
            cnt[top - 1] += cnt[top]
            blo[top - 1] = max(blo[top - 1], blo[top])
            bup[top - 1] = min(bup[top - 1], bup[top])
            top -= 1
            val[top] = _block_value(tot[top], cnt[top], blo[top], bup[top], l2, l1)
    for b in range(base, top + 1):
        g_end = int(first[b + 1]) if b < top else chain_ptr[c + 1]
        for k in range(group_ptr[int(first[b])], group_ptr[g_end]):
            w[order[k]] = val[b]
    work[6, base] = -1.0


@nb.njit(cache=True, inline="always")
def _isotonic_chain(s, c, l2, l1, lo, up, order, group_ptr, chain_ptr, w, work):  # pragma: no cover - compiled
    """Chain ``c`` whose features share the bounds ``[lo, up]``: pool-adjacent-violators on the blocks' means
    (compared as ``S_a n_b > S_b n_a``, no division), then ``clip(soft(mean, λ1)/λ2, lo, up)`` per block (Yu, 2013:
    the prox is that map of the isotonic regression, ``docs/derivations/ordering.md`` §2). The blocks stay in
    ``work``: their count at ``work[6, chain_ptr[c]]``, the end (one past the last group) of the ``b``-th at
    ``work[4, chain_ptr[c] + b]``."""
    tot, cnt, last = work[0], work[1], work[4]
    base = chain_ptr[c]
    top = base - 1
    for g in range(chain_ptr[c], chain_ptr[c + 1]):
        k0, k1 = group_ptr[g], group_ptr[g + 1]
        S = 0.0
        for k in range(k0, k1):
            S += s[order[k]]
        n = float(k1 - k0)
        while top >= base and tot[top] * n > S * cnt[top]:  # the block below has the larger mean: pool
            S += tot[top]
            n += cnt[top]
            top -= 1
        top += 1
        tot[top], cnt[top], last[top] = S, n, g + 1
    start = group_ptr[base]
    for b in range(base, top + 1):
        stop = group_ptr[int(last[b])]
        t = _block_value(tot[b], cnt[b], lo, up, l2, l1)
        for k in range(start, stop):
            w[order[k]] = t
        start = stop
    work[6, base] = top + 1 - base


@nb.njit(cache=True, inline="always")
def chain_prox_into(s, l2, l1, lower, upper, order, group_ptr, chain_ptr, w, work,
                    uniform):  # pragma: no cover - compiled
    """``w[order] = `` the prox of :class:`ChainStructure` on the chain features (pool-adjacent-violators).

    ``work`` is a (:data:`WORK_ROWS`, n_groups) scratch array, each chain's stack in the columns of its groups: the
    sums, counts, lower and upper bounds, first (or end) groups and values of the blocks, and at a chain's first
    group the number of its blocks (−1 when pooled on the values). ``uniform[c]``
    (:meth:`ChainStructure.uniform_bounds`) says that every feature of chain ``c`` has the same bounds: its blocks
    are then pooled on their means, without the values' divisions.
    """
    for c in range(chain_ptr.size - 1):
        if uniform[c]:
            h = order[group_ptr[chain_ptr[c]]]
            _isotonic_chain(s, c, l2, l1, lower[h], upper[h], order, group_ptr, chain_ptr, w, work)
        else:
            _pooled_chain(s, c, l2, l1, lower, upper, order, group_ptr, chain_ptr, w, work)


@dataclass(frozen=True, eq=False)
class ChainStructure:
    """A model's linear constraints read as disjoint chains of groups of features (see :func:`chain_structure`).

    Attributes
    ----------
    d : int
    order : ndarray of int64
        The features on the chains, group after group, each chain in increasing order.
    group_ptr : ndarray of int64
        Group ``g`` is ``order[group_ptr[g]:group_ptr[g + 1]]`` (features tied by equalities).
    chain_ptr : ndarray of int64
        Chain ``c`` is the groups ``chain_ptr[c]`` to ``chain_ptr[c + 1] − 1``, ``w`` non-decreasing along them.
    free : ndarray of int64
        The features on no chain.
    tree : ndarray of shape (e, 3), int64
        ``(child, parent, row)``: the rows that span each chain, in breadth-first order from its first feature
        (the multipliers of the other rows are 0).
    A : ndarray of shape (k, d)
        The constraint rows (for the multipliers' signs and scales).
    """

    d: int
    order: np.ndarray
    group_ptr: np.ndarray
    chain_ptr: np.ndarray
    free: np.ndarray
    tree: np.ndarray
    A: np.ndarray

    @property
    def n_groups(self) -> int:
        return self.group_ptr.size - 1

    def prox(self, s: np.ndarray, l2: float, l1: float, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
        """``argmax_{w ∈ W} s·w − λ1‖w‖₁ − (λ2/2)‖w‖²`` (λ2 > 0), ``W`` the box ``[lower, upper]`` and the chains."""
        if not l2 > 0:
            raise ValueError(f"the prox needs l2 > 0, got {l2!r}")
        s = np.asarray(s, dtype=np.float64)
        t = np.sign(s) * np.maximum(np.abs(s) - l1, 0.0) / l2
        w = np.clip(t, lower, upper)
        work = np.empty((WORK_ROWS, max(self.n_groups, 1)))
        lower, upper = np.asarray(lower, np.float64), np.asarray(upper, np.float64)
        chain_prox_into(s, float(l2), float(l1), lower, upper, self.order, self.group_ptr, self.chain_ptr, w, work,
                        self.uniform_bounds(lower, upper))
        return w

    def uniform_bounds(self, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
        """Per chain, whether all its features have the same bounds (``chain_prox_into``'s fast path)."""
        out = np.zeros(self.chain_ptr.size - 1, dtype=np.bool_)
        for c in range(out.size):
            h = self.order[self.group_ptr[self.chain_ptr[c]]:self.group_ptr[self.chain_ptr[c + 1]]]
            out[c] = bool(np.all(lower[h] == lower[h[0]]) and np.all(upper[h] == upper[h[0]]))
        return out

    def project(self, z: np.ndarray) -> np.ndarray:
        """The Euclidean projection of ``z`` on the chains alone (isotonic regression along each chain)."""
        inf = np.full(self.d, np.inf)
        return self.prox(z, 1.0, 0.0, -inf, inf)

    def multipliers(self, s: np.ndarray, l2: float, l1: float, lower: np.ndarray,
                    upper: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(w, ν)``: the prox ``w = w(s)`` and multipliers of the rows with
        ``s − Aᵀν ∈ ∂(λ1|·| + λ2(·)²/2 + I_box)(w)``.

        Each block of equal weights on a chain takes subgradients ``g_h ∈ [a_h, b_h]`` (the subdifferential at
        ``w_h``) summing to ``Σ_h s_h`` whose prefix sums over its groups stay at most those of ``s``
        (:func:`_block_subgradients`); the excesses ``s_h − g_h`` then flow along the rows that span the chain
        (``docs/derivations/ordering.md``, §3).
        """
        s = np.asarray(s, dtype=np.float64)
        w = self.prox(s, l2, l1, lower, upper)
        a = l2 * w + np.where(w > 0, l1, -l1)  # the subdifferential [a_h, b_h] of λ1|t| + λ2 t²/2 at w_h ...
        b = l2 * w + np.where(w < 0, -l1, l1)
        a = np.where(w <= lower, -np.inf, a)  # ... and the normal cone of [l_h, u_h] where a bound is active
        b = np.where(w >= upper, np.inf, b)
        g = s.copy()
        for c in range(self.chain_ptr.size - 1):
            groups = [self.order[self.group_ptr[j]:self.group_ptr[j + 1]]
                      for j in range(self.chain_ptr[c], self.chain_ptr[c + 1])]
            levels = np.array([w[group[0]] for group in groups])
            start = 0
            for stop in [*(np.flatnonzero(np.diff(levels) != 0) + 1), len(groups)]:
                _block_subgradients(groups[start:stop], s, a, b, g)
                start = stop
        excess = s - g
        nu = np.zeros(self.A.shape[0])
        for child, parent, row in self.tree[::-1]:
            nu[row] = excess[child] / self.A[row, child]
            excess[parent] -= self.A[row, parent] * nu[row]
        return w, nu


def _block_subgradients(groups: list, s: np.ndarray, a: np.ndarray, b: np.ndarray, g: np.ndarray) -> None:
    """``g_h ∈ [a_h, b_h]`` on a block of groups ``G_1 … G_m`` (in chain order) with ``Σ g = Σ s`` and prefix sums
    ``P_j = Σ_{i ≤ j} Σ_{G_i} g ≤ Σ_{i ≤ j} Σ_{G_i} s``, written into ``g``.

    ``P_j`` is the largest value the past allows (``P_{j−1} + [A_j, B_j]``, ``A_j = Σ_{G_j} a``), the future allows
    (``U_j = min(prefix of s, U_{j+1} − A_{j+1})``, ``U_m = Σ s``) and the end can still be reached from
    (``≥ Σ s − Σ_{i > j} B_i``): a greedy choice that finds such ``g`` whenever one exists. Inside a group (tied by
    equalities, whose multipliers take either sign) ``g`` is spread by a common level :func:`_level`.
    """
    A = np.array([a[G].sum() for G in groups])
    B = np.array([b[G].sum() for G in groups])
    S = np.array([s[G].sum() for G in groups])
    total, prefix = float(S.sum()), np.cumsum(S)
    m = len(groups)
    U = np.empty(m)
    U[-1] = total
    for j in range(m - 2, -1, -1):
        U[j] = min(prefix[j], U[j + 1] - A[j + 1])
    tail_B = np.concatenate([np.cumsum(B[::-1])[::-1][1:], [0.0]])
    previous = 0.0
    for j, G in enumerate(groups):
        low, high = max(previous + A[j], total - tail_B[j]), previous + B[j]
        P = total if j == m - 1 else min(max(U[j], low), high)
        g[G] = np.clip(_level(a[G], b[G], P - previous), a[G], b[G])
        previous = P


def _level(a: np.ndarray, b: np.ndarray, total: float) -> float:
    """``γ`` with ``Σ_h clip(γ, a_h, b_h) = total`` (the nearest end of the range when there is none)."""
    points = np.unique(np.concatenate([a[np.isfinite(a)], b[np.isfinite(b)]]))
    if points.size == 0:
        return 0.0
    values = np.clip(points[:, None], a[None, :], b[None, :]).sum(axis=1)
    if total <= values[0]:
        slope = int(np.sum(np.isneginf(a)))
        return float(points[0] - (values[0] - total) / slope) if slope else float(points[0])
    if total >= values[-1]:
        slope = int(np.sum(np.isposinf(b)))
        return float(points[-1] + (total - values[-1]) / slope) if slope else float(points[-1])
    j = int(np.searchsorted(values, total, side="right")) - 1
    j = min(j, points.size - 2)
    span = values[j + 1] - values[j]
    return float(points[j] + (points[j + 1] - points[j]) * ((total - values[j]) / span if span > 0 else 0.0))


def _pair_rows(A: np.ndarray, lb: np.ndarray, ub: np.ndarray) -> list[tuple[int, int, str, int]] | str:
    """``(p, q, kind, row)`` with ``kind`` ``"le"`` (``w_p ≤ w_q``) or ``"eq"``, or why a row is none of them."""
    out = []
    for r in range(A.shape[0]):
        nz = np.flatnonzero(A[r])
        if nz.size != 2 or A[r, nz[0]] != -A[r, nz[1]]:
            return f"row {r} is not a difference of two weights"
        p, q = (nz[0], nz[1]) if A[r, nz[0]] > 0 else (nz[1], nz[0])  # the row is a(w_p − w_q), a > 0
        if lb[r] == 0.0 and ub[r] == 0.0:
            out.append((int(p), int(q), "eq", r))
        elif ub[r] == 0.0 and np.isneginf(lb[r]):
            out.append((int(p), int(q), "le", r))
        elif lb[r] == 0.0 and np.isposinf(ub[r]):
            out.append((int(q), int(p), "le", r))
        else:
            return f"row {r} compares two weights against a non-zero bound"
    return out


def chain_structure(linear: Any) -> ChainStructure | str:
    """The rows ``lb ≤ A w ≤ ub`` of ``linear`` (a :class:`~robustsvm.priors.constraints.LinearConstraints`) as
    disjoint chains, or a sentence saying why they are not.

    Every row must be ``a(w_p − w_q)`` compared with 0 (``≤``, ``≥`` or ``=``). Equalities tie features into groups;
    the orderings between groups must form paths (each group at most one group directly above and one below, no
    cycle). Rows repeated, or implied within a group, are kept with multiplier 0.
    """
    A, d = np.asarray(linear.A, dtype=np.float64), linear.A.shape[1]
    pairs = _pair_rows(A, np.asarray(linear.lb), np.asarray(linear.ub))
    if isinstance(pairs, str):
        return pairs
    parent = list(range(d))

    def root(h: int) -> int:
        while parent[h] != h:
            parent[h] = parent[parent[h]]
            h = parent[h]
        return h

    tree_edges = []  # (p, q, row) that span the chains
    for p, q, kind, r in pairs:
        if kind == "eq" and root(p) != root(q):
            parent[root(p)] = root(q)
            tree_edges.append((p, q, r))
    above: dict[int, tuple[int, int, int]] = {}
    below: dict[int, int] = {}
    for p, q, kind, r in pairs:
        gp, gq = root(p), root(q)
        if kind == "eq" or gp == gq:
            continue
        if above.get(gq, (None,))[0] == gp:
            return f"features {p} and {q} are ordered both ways: they are equal (write rs.Equal)"
        if gp in above:
            if above[gp][0] == gq:
                continue  # the same ordering again
            return f"feature {p} is ordered below more than one feature: the orderings do not form chains"
        if gq in below:
            return f"feature {q} is ordered above more than one feature: the orderings do not form chains"
        above[gp], below[gq] = (gq, p, q), gp
        tree_edges.append((p, q, r))
    members: dict[int, list[int]] = {}
    for h in range(d):
        members.setdefault(root(h), []).append(h)
    in_chain = {g for g in members if g in above or g in below or len(members[g]) > 1}
    order, group_ptr, chain_ptr = [], [0], [0]
    seen = set()
    for head in sorted(g for g in in_chain if g not in below):
        g = head
        while True:
            seen.add(g)
            order.extend(members[g])
            group_ptr.append(len(order))
            if g not in above:
                break
            g = above[g][0]
        chain_ptr.append(len(group_ptr) - 1)
    if seen != in_chain:
        return "the orderings form a cycle (features on a cycle are equal: write rs.Equal)"
    chained = np.zeros(d, dtype=bool)
    chained[order] = True
    return ChainStructure(d=d, order=np.asarray(order, np.int64), group_ptr=np.asarray(group_ptr, np.int64),
                          chain_ptr=np.asarray(chain_ptr, np.int64), free=np.flatnonzero(~chained).astype(np.int64),
                          tree=_spanning_order(tree_edges, order, group_ptr, chain_ptr), A=A)


def _spanning_order(edges: list, order: list, group_ptr: list, chain_ptr: list) -> np.ndarray:
    """``(child, parent, row)`` of the spanning rows in breadth-first order from each chain's first feature."""
    adjacent: dict[int, list[tuple[int, int]]] = {}
    for p, q, r in edges:
        adjacent.setdefault(p, []).append((q, r))
        adjacent.setdefault(q, []).append((p, r))
    out = []
    for c in range(len(chain_ptr) - 1):
        start = order[group_ptr[chain_ptr[c]]]
        queue, visited = [start], {start}
        for h in queue:
            for nb_, r in adjacent.get(h, []):
                if nb_ not in visited:
                    visited.add(nb_)
                    queue.append(nb_)
                    out.append((nb_, h, r))
    return np.asarray(out, dtype=np.int64).reshape(-1, 3)


def check_feasible(chains: ChainStructure, lower: np.ndarray, upper: np.ndarray,
                   feature_names: np.ndarray | None = None) -> None:
    """Raise ``ValueError`` naming the features when the bounds (signs included) leave the chains no point.

    A chain of groups ``G_1 ≤ … ≤ G_m`` with bounds ``[L_j, U_j]`` (``L_j = max_{h ∈ G_j} l_h``,
    ``U_j = min u_h``) has a point iff ``max_{i ≤ j} L_i ≤ U_j`` for every ``j``.
    """
    def name(h: int) -> str:
        return f"feature {h}" + ("" if feature_names is None else f" ({feature_names[h]!r})")

    for c in range(chains.chain_ptr.size - 1):
        best, arg = -np.inf, -1
        for g in range(chains.chain_ptr[c], chains.chain_ptr[c + 1]):
            group = chains.order[chains.group_ptr[g]:chains.group_ptr[g + 1]]
            lo_h = group[int(np.argmax(lower[group]))]
            up_h = group[int(np.argmin(upper[group]))]
            if lower[lo_h] > best:
                best, arg = float(lower[lo_h]), int(lo_h)
            if best > upper[up_h]:
                raise ValueError(f"the orderings and bounds leave no value: {name(arg)} must be at least {best:g} "
                                 f"and at most {name(int(up_h))}, which must be at most {upper[up_h]:g}")


@register_row_check
def check_chain_rows(linear: Any, lower: np.ndarray, upper: np.ndarray,
                     feature_names: np.ndarray | None = None) -> None:
    """:func:`check_feasible` on the chains the normalized rows ``linear`` form (rows of another form: no check)."""
    chains = chain_structure(linear)
    if not isinstance(chains, str):  # orderings (rs.Increasing, ...) that bounds contradict
        check_feasible(chains, lower, upper, feature_names)

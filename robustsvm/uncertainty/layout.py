"""Which uncertainty set and radius each sample has.

Samples that share a set share the epigraph variables of its support
function, so a model compiles to O(number of distinct sets) cones whatever n.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .base import UncertaintySet, check_radius

__all__ = ["RobustLayout", "resolve_uncertainty"]


@dataclass(frozen=True)
class RobustLayout:
    """The per-sample assignment of uncertainty sets.

    Attributes
    ----------
    sets : list of UncertaintySet
        The distinct unit sets, in order of first appearance.
    group : ndarray of shape (n,), int
        ``sets[group[i]]`` is the set of sample ``i``.
    radius : ndarray of shape (n,)
        The radius ``r_i`` of each sample's set.
    """

    sets: list[UncertaintySet]
    group: np.ndarray
    radius: np.ndarray

    def pairs(self, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The distinct (set, direction) pairs the samples need.

        Returns
        -------
        set_index : ndarray of shape (J,)
            Index into :attr:`sets` of each pair.
        direction : ndarray of shape (J,)
            −1 when the pair's argument is ``z = −w`` (label +1, or any label of
            a symmetric set), +1 when it is ``z = w``.
        inverse : ndarray of shape (n,)
            The pair of each sample.
        """
        symmetric = np.array([s.symmetric for s in self.sets], dtype=bool)
        label = np.where((np.asarray(y) > 0) | symmetric[self.group], 0, 1)
        uniq, inverse = np.unique(self.group * 2 + label, return_inverse=True)
        return uniq // 2, np.where(uniq % 2 == 0, -1.0, 1.0), inverse.ravel()

    def _by_class(self, w: np.ndarray, y: np.ndarray, method: str):
        w = np.asarray(w, dtype=np.float64)
        set_index, direction, _ = self.pairs(y)
        by_class: dict[type, list[int]] = {}
        for j, k in enumerate(set_index):
            by_class.setdefault(type(self.sets[k]), []).append(j)
        for cls, js in by_class.items():
            Z = direction[js, None] * w[None, :]
            yield js, getattr(cls, method)([self.sets[set_index[j]] for j in js], Z)

    def maximize(self, w: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Support values and maximizers of every distinct pair (``maximize_many``, batched by class).

        Returns ``(values (J,), maximizers (J, d), inverse (n,))`` with
        ``values[inverse[i]] = σ_{V_i}(−y_i w)``.
        """
        _, _, inverse = self.pairs(y)
        J = int(inverse.max()) + 1
        values = np.empty(J)
        V = np.empty((J, np.asarray(w).shape[0]))
        for js, (vals, Vs) in self._by_class(w, y, "maximize_many"):
            values[js] = vals
            V[js] = Vs
        return values, V, inverse

    def support(self, w: np.ndarray, y: np.ndarray) -> np.ndarray:
        """``σ_{V_i}(−y_i w)`` for every sample (radius not applied), via ``support_many`` by class."""
        _, _, inverse = self.pairs(y)
        values = np.empty(int(inverse.max()) + 1)
        for js, vals in self._by_class(w, y, "support_many"):
            values[js] = vals
        return values[inverse]

    def penalty_terms(self, w: np.ndarray, y: np.ndarray) -> np.ndarray:
        """``r_i σ_{V_i}(−y_i w)``: how much each margin shrinks in the worst case."""
        return self.radius * self.support(w, y)


def resolve_uncertainty(uncertainty: Any, n: int, d: int, *, name: str = "uncertainty") -> RobustLayout | None:
    """Turn a model's ``uncertainty`` into a :class:`RobustLayout` (None when nominal).

    ``uncertainty`` is None, one :class:`UncertaintySet` (its radius a scalar
    or one value per sample), or a sequence of ``n`` sets, one per sample.
    """
    if uncertainty is None:
        return None
    if isinstance(uncertainty, UncertaintySet):
        uncertainty.check_dim(d)
        r = check_radius(uncertainty.radius, name=f"{name}.radius")
        if np.ndim(r) == 0:
            radius = np.full(n, float(r))
        else:
            if r.shape[0] != n:
                raise ValueError(
                    f"{name}.radius has {r.shape[0]} values but X has {n} samples (one radius per sample)"
                )
            radius = r.copy()
        return RobustLayout(sets=[uncertainty], group=np.zeros(n, dtype=np.intp), radius=radius)
    if isinstance(uncertainty, (list, tuple)):
        if len(uncertainty) != n:
            raise ValueError(f"{name} lists {len(uncertainty)} sets but X has {n} samples (one set per sample)")
        keys: dict[tuple, int] = {}
        sets: list[UncertaintySet] = []
        group = np.empty(n, dtype=np.intp)
        radius = np.empty(n)
        for i, s in enumerate(uncertainty):
            if not isinstance(s, UncertaintySet):
                raise TypeError(f"{name}[{i}] must be an uncertainty set, got {type(s).__name__}")
            r = check_radius(s.radius, name=f"{name}[{i}].radius")
            if np.ndim(r) != 0:
                raise ValueError(f"{name}[{i}].radius must be a scalar when sets are given per sample")
            key = s.key()
            if key not in keys:
                s.check_dim(d)
                keys[key] = len(sets)
                sets.append(s)
            group[i] = keys[key]
            radius[i] = r
        return RobustLayout(sets=sets, group=group, radius=radius)
    raise TypeError(f"{name} must be an uncertainty set, a list of sets or None, got {type(uncertainty).__name__}")

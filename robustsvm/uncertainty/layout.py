"""Which uncertainty set and radius each sample has.

Samples that share a set share the epigraph variables of its support
function, so a model compiles to O(number of distinct sets) cones whatever n.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .base import UncertaintySet, check_radius

__all__ = ["RobustLayout", "check_radius_applies", "resolve_uncertainty", "sample_radii"]


def check_radius_applies(uncertainty: Any, radius: Any, *, shared: bool = False) -> None:
    """Refuse a ``radius`` (not None) given to a model without an uncertainty set (``uncertainty`` None), and with
    ``shared`` one whose sets are given per sample (a list): the one place these errors are raised."""
    if radius is None:
        return
    if uncertainty is None:
        raise ValueError("radius= was given but the model has no uncertainty set (a radius applies only to a "
                         "model with uncertainty)")
    if shared and isinstance(uncertainty, (list, tuple)):
        raise ValueError("radius applies only to a model with one uncertainty set, not sets given per sample")


def sample_radii(radius: Any, n: int, *, name: str = "radius") -> np.ndarray:
    """``radius`` as one finite, non-negative value per sample: the one place a radius is validated.

    A scalar is repeated ``n`` times; an array must hold exactly ``n`` values.
    Every radius the package solves with (a set's own, ``solve(..., radius=)``,
    a compiled program's ``set_values(radius=)``) reaches the model through here.
    """
    r = check_radius(radius, name=name)
    if np.ndim(r) == 0:
        return np.full(n, float(r))
    if r.shape[0] != n:
        raise ValueError(f"{name} has {r.shape[0]} values but X has {n} samples (one radius per sample)")
    return np.array(r, dtype=np.float64)


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
    #: whether the model listed one set per sample (kept so that :meth:`uncertainty` gives that form back)
    per_sample_sets: bool = False

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

    def with_radius(self, radius: Any, *, name: str = "radius") -> RobustLayout:
        """The same sets with new radii: a scalar for every sample or one value per sample (validated)."""
        return RobustLayout(sets=self.sets, group=self.group, radius=sample_radii(radius, self.group.shape[0],
                                                                                 name=name))

    def uncertainty(self) -> UncertaintySet | list[UncertaintySet]:
        """The model's ``uncertainty`` carrying these radii, the form a :class:`Problem` states.

        One shared set: that set with the radius (a scalar when every sample
        has the same one, else one value per sample); sets given per sample:
        one set per sample with its scalar radius. Stored, printed and
        re-checked solutions describe the radii they were solved with
        through this.
        """
        r = self.radius
        if len(self.sets) == 1 and not self.per_sample_sets:
            uniform = r.size > 0 and bool(np.all(r == r[0]))
            return self.sets[0].with_radius(float(r[0]) if uniform else r.copy())
        return [self.sets[k].with_radius(float(ri)) for k, ri in zip(self.group, r, strict=True)]


def resolve_uncertainty(uncertainty: Any, n: int, d: int, *, radius: Any = None,
                        name: str = "uncertainty") -> RobustLayout | None:
    """Turn a model's ``uncertainty`` into a :class:`RobustLayout` (None when nominal).

    ``uncertainty`` is None, one :class:`UncertaintySet` (its radius a scalar
    or one value per sample), or a sequence of ``n`` sets, one per sample.
    ``radius`` (a scalar or one value per sample) replaces the sets' own radii;
    the sets are not changed. Radii are validated by :func:`sample_radii`.
    """
    if uncertainty is None:
        check_radius_applies(uncertainty, radius)
        return None
    if isinstance(uncertainty, UncertaintySet):
        uncertainty.check_dim(d)
        layout = RobustLayout(sets=[uncertainty], group=np.zeros(n, dtype=np.intp),
                              radius=sample_radii(uncertainty.radius, n, name=f"{name}.radius"))
    elif isinstance(uncertainty, (list, tuple)):
        layout = _per_sample_layout(uncertainty, n, d, name)
    else:
        raise TypeError(
            f"{name} must be an uncertainty set, a list of sets or None, got {type(uncertainty).__name__}")
    return layout if radius is None else layout.with_radius(radius)


def _per_sample_layout(uncertainty: Any, n: int, d: int, name: str) -> RobustLayout:
    if len(uncertainty) != n:
        raise ValueError(f"{name} lists {len(uncertainty)} sets but X has {n} samples (one set per sample)")
    keys: dict[tuple, int] = {}
    sets: list[UncertaintySet] = []
    group = np.empty(n, dtype=np.intp)
    radius = np.empty(n)
    for i, s in enumerate(uncertainty):
        if not isinstance(s, UncertaintySet):
            raise TypeError(f"{name}[{i}] must be an uncertainty set, got {type(s).__name__}")
        if np.ndim(s.radius) != 0:
            raise ValueError(f"{name}[{i}].radius must be a scalar when sets are given per sample")
        key = s.key()
        if key not in keys:
            s.check_dim(d)
            keys[key] = len(sets)
            sets.append(s)
        group[i] = keys[key]
        radius[i] = s.radius
    return RobustLayout(sets=sets, group=group, radius=sample_radii(radius, n, name=f"{name}[i].radius"),
                        per_sample_sets=True)

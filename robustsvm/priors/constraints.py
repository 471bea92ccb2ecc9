"""Bounds and linear constraints on the weights: what the user writes, resolved to arrays once.

A model may restrict ``w`` to

    W = {w : l_h ≤ w_h ≤ u_h for every h,  lb ≤ A w ≤ ub},

where signs are the shorthand ``[0, ∞)`` / ``(−∞, 0]`` and combine with bounds by intersection
(``docs/certificates.md``, "Bounds and linear constraints"). :func:`resolve_bounds` reads a bounds
specification (by name, index, pandas Series, vectors, ``scipy.optimize.Bounds``);
:func:`resolve_constraints` reads ``scipy.optimize.LinearConstraint`` objects and :func:`ordered`
chains; :func:`weight_set` intersects them with the signs, oriented to ``classes[1]``, into a
:class:`WeightSet`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.optimize import Bounds, LinearConstraint

from .base import Prior, check_rows, prior_from_dict
from .signs import feature_index

__all__ = ["LinearConstraints", "Ordered", "WeightSet", "bounds_beyond_signs", "bounds_from_json", "bounds_imply_signs",
           "bounds_to_json", "constraints_from_json", "constraints_to_json", "ordered", "resolve_bounds",
           "resolve_constraints", "weight_set"]


@dataclass(frozen=True)
class Ordered:
    """The chain ``w_{k_1} ≤ w_{k_2} ≤ … ≤ w_{k_m}`` over features named (or indexed) by ``keys``.

    Made by :func:`ordered`; the names are resolved when the model meets its data
    (:meth:`linear_constraint`).
    """

    keys: tuple

    def linear_constraint(self, d: int, feature_names: np.ndarray | None = None) -> LinearConstraint:
        """The chain as ``LinearConstraint(A, -inf, 0)`` with rows ``w_{k_j} − w_{k_{j+1}} ≤ 0``."""
        idx = [feature_index(k, d, feature_names, name="ordered") for k in self.keys]
        if len(set(idx)) != len(idx):
            raise ValueError(f"ordered({list(self.keys)!r}) names a feature twice")
        A = np.zeros((len(idx) - 1, d))
        rows = np.arange(len(idx) - 1)
        A[rows, idx[:-1]] = 1.0
        A[rows, idx[1:]] = -1.0
        return LinearConstraint(A, -np.inf, 0.0)

    def to_dict(self) -> dict:
        return {"ordered": [k.item() if isinstance(k, np.generic) else k for k in self.keys]}


def ordered(keys: Sequence[Any]) -> Ordered:
    """A monotone effect: ``w_a ≤ w_b ≤ w_c`` for ``keys = [a, b, c]`` (names or indices, in increasing order).

    For ordered categories (dose levels, disease stages) coded as one column each. The result goes in
    ``Problem(constraints=[...])``; the names are resolved at fit time.
    """
    if isinstance(keys, (str, bytes)) or not isinstance(keys, Sequence | np.ndarray):
        raise TypeError(f"ordered takes a list of feature names or indices, got {keys!r}")
    keys = tuple(keys)
    if len(keys) < 2:
        raise ValueError(f"ordered needs at least two features, got {list(keys)!r}")
    return Ordered(keys)


@dataclass(frozen=True)
class LinearConstraints:
    """``lb ≤ A w ≤ ub``, all rows of a model stacked; ``lb == ub`` marks an equality row.

    Attributes
    ----------
    A : ndarray of shape (k, d)
    lb, ub : ndarray of shape (k,)
        ``−inf`` / ``+inf`` where a side is absent.
    """

    A: np.ndarray
    lb: np.ndarray
    ub: np.ndarray

    @property
    def k(self) -> int:
        return self.A.shape[0]

    def violation(self, w: np.ndarray) -> float:
        """``max_k max(lb_k − (Aw)_k, (Aw)_k − ub_k, 0)``."""
        if self.k == 0:
            return 0.0
        v = self.A @ w
        with np.errstate(invalid="ignore"):
            return float(max(0.0, np.max(self.lb - v), np.max(v - self.ub)))

    def admissible(self, nu: Any) -> np.ndarray:
        """Multipliers ``ν`` made admissible: finite, ``ν_k ≤ 0`` where ``ub_k = ∞``, ``ν_k ≥ 0`` where ``lb_k = −∞``.

        ``ν_k > 0`` prices the upper side ``(Aw)_k ≤ ub_k`` and ``ν_k < 0`` the lower side.
        """
        nu = np.zeros(self.k) if nu is None else np.asarray(nu, dtype=np.float64).ravel().copy()
        if nu.shape != (self.k,):
            return np.zeros(self.k)
        nu[~np.isfinite(nu)] = 0.0
        nu[(nu > 0) & ~np.isfinite(self.ub)] = 0.0
        nu[(nu < 0) & ~np.isfinite(self.lb)] = 0.0
        return nu

    def cvx_rows(self, w: Any, kappa: float = 1.0) -> list:
        """``((kind, rows), constraint)`` for CVXPY: ``"eq"`` rows (lb = ub), ``"up"`` and ``"lo"`` (finite sides).

        ``w`` is the program's variable ``w/κ``; ``(κA)(w/κ) = Aw`` keeps each multiplier in model units.
        """
        A = self.A * kappa
        eq = np.flatnonzero(self.lb == self.ub)
        up = np.flatnonzero(np.isfinite(self.ub) & (self.lb != self.ub))
        lo = np.flatnonzero(np.isfinite(self.lb) & (self.lb != self.ub))
        out = []
        if eq.size:
            out.append((("eq", eq), A[eq] @ w == self.ub[eq]))
        if up.size:
            out.append((("up", up), A[up] @ w <= self.ub[up]))
        if lo.size:
            out.append((("lo", lo), A[lo] @ w >= self.lb[lo]))
        return out

    def multipliers(self, rows: list) -> np.ndarray | None:
        """The signed ``ν`` from the CVXPY duals of :meth:`cvx_rows` (None when one is missing).

        CVXPY's duals of ``Aw ≤ ub`` and ``Aw ≥ lb`` are non-negative; that of ``Aw = ub`` enters the
        Lagrangian as ``+ν(Aw − ub)``, the sign of an upper side.
        """
        nu = np.zeros(self.k)
        for (kind, idx), con in rows:
            if con.dual_value is None:
                return None
            dual = np.asarray(con.dual_value, dtype=np.float64).ravel()
            nu[idx] += -dual if kind == "lo" else dual
        return nu

    def parallel_rows(self, rtol: float = 1e-12) -> list[list[int]]:
        """Groups of two or more rows of ``A`` that are multiples of one another (redundant or conflicting rows)."""
        norms = np.linalg.norm(self.A, axis=1)
        groups: list[list[int]] = []
        seen = np.zeros(self.k, dtype=bool)
        for j in np.flatnonzero(norms > 0):
            if seen[j]:
                continue
            u = self.A[j] / norms[j]
            cos = np.abs(self.A @ u) / np.where(norms > 0, norms, 1.0)
            group = np.flatnonzero((cos >= 1.0 - rtol) & (norms > 0) & ~seen)
            seen[group] = True
            if group.size > 1:
                groups.append(group.tolist())
        return groups

    def dual_constant(self, nu: np.ndarray) -> float:
        """``−Σ_k (ν_k⁺ ub_k − ν_k⁻ lb_k)`` for admissible ``ν`` (the constraints' part of the Lagrangian bound)."""
        up = np.where(nu > 0, nu * np.where(np.isfinite(self.ub), self.ub, 0.0), 0.0)
        lo = np.where(nu < 0, -nu * np.where(np.isfinite(self.lb), self.lb, 0.0), 0.0)
        return float(-(up.sum() - lo.sum()))


@dataclass(frozen=True)
class WeightSet:
    """The feasible set of ``w``: the box ``[lower, upper]`` (signs included) and linear constraints.

    Attributes
    ----------
    lower, upper : ndarray of shape (d,)
        ``l_h ≤ w_h ≤ u_h``, infinite where a side is free; oriented to ``classes[1]``.
    linear : LinearConstraints or None
    """

    lower: np.ndarray
    upper: np.ndarray
    linear: LinearConstraints | None = None

    @classmethod
    def from_signs(cls, signs: np.ndarray) -> WeightSet:
        s = np.asarray(signs)
        return cls(lower=np.where(s > 0, 0.0, -np.inf), upper=np.where(s < 0, 0.0, np.inf))

    @property
    def signs(self) -> np.ndarray:
        """The signs the box implies: +1 where ``l_h ≥ 0``, −1 where ``u_h ≤ 0`` (and ``l_h < 0``), else 0."""
        return np.where(self.lower >= 0, 1, np.where(self.upper <= 0, -1, 0)).astype(np.int8)

    @property
    def has_bounds(self) -> bool:
        """Whether the box says more than signs: a finite bound other than a zero on the sign's side."""
        sign_like = ((self.lower == 0) & np.isposinf(self.upper)) | (np.isneginf(self.lower) & (self.upper == 0)) | (
            np.isneginf(self.lower) & np.isposinf(self.upper))
        return not bool(np.all(sign_like))

    @property
    def has_constraints(self) -> bool:
        return self.linear is not None and self.linear.k > 0

    @property
    def is_cone(self) -> bool:
        """Whether ``tW ⊆ W`` for ``t ≥ 1`` (every finite side is 0), so a hard-margin point may be rescaled."""
        sides = [self.lower, self.upper] + ([self.linear.lb, self.linear.ub] if self.has_constraints else [])
        return all(np.all((v == 0) | ~np.isfinite(v)) for v in sides)

    def cvx_box(self, w: Any, kappa: float = 1.0) -> list:
        """``l_h ≤ w_h ≤ u_h`` on the finite sides as CVXPY constraints on the program's ``w/κ``."""
        lo = np.flatnonzero(np.isfinite(self.lower))
        up = np.flatnonzero(np.isfinite(self.upper))
        return ([w[lo] >= self.lower[lo] / kappa] if lo.size else []) + (
            [w[up] <= self.upper[up] / kappa] if up.size else [])

    def clip(self, w: np.ndarray) -> np.ndarray:
        """``w`` clipped to the box (the projection on it)."""
        return np.clip(w, self.lower, self.upper)

    def box_violation(self, w: np.ndarray) -> float:
        """``max_h max(l_h − w_h, w_h − u_h, 0)``."""
        if w.size == 0:
            return 0.0
        return float(max(0.0, np.max(self.lower - w), np.max(w - self.upper)))

    def violation(self, w: np.ndarray) -> float:
        """The largest violation of the box and the linear constraints at ``w``."""
        v = self.box_violation(w)
        if self.has_constraints:
            v = max(v, self.linear.violation(w))
        return v

    def within(self, reach: float) -> tuple[WeightSet, float]:
        """The set with every bound side beyond ``reach`` in absolute value made infinite, and the smallest one dropped.

        When every minimizer satisfies ``|w_h| ≤ reach`` (:func:`robustsvm.model.weight_reach`), such a side is
        never active, so the set without it has the same minimizers; a solver no longer meets numbers like
        1e12 that only stand for "no bound". Returns ``(set, smallest |side| dropped)`` (``inf``: none).
        """
        if not np.isfinite(reach):
            return self, np.inf
        far_lo = np.isfinite(self.lower) & (np.abs(self.lower) > reach)
        far_up = np.isfinite(self.upper) & (np.abs(self.upper) > reach)
        if not (far_lo.any() or far_up.any()):
            return self, np.inf
        dropped = np.abs(np.concatenate([self.lower[far_lo], self.upper[far_up]]))
        return WeightSet(lower=np.where(far_lo, -np.inf, self.lower), upper=np.where(far_up, np.inf, self.upper),
                         linear=self.linear), float(dropped.min())

    def point(self, tol: float = 1e-9) -> np.ndarray | None:
        """A point of the set: the projection of 0 on the box, or a linear program's solution (HiGHS through
        ``scipy.optimize.linprog``) when that misses a linear constraint; None when neither is found within
        ``tol`` (relative to the bounds' scale)."""
        w = np.clip(np.zeros(self.lower.shape[0]), self.lower, self.upper)
        if not self.has_constraints or self.linear.violation(w) <= tol:
            return w
        from scipy.optimize import linprog

        lin = self.linear
        up, lo = np.isfinite(lin.ub), np.isfinite(lin.lb)
        res = linprog(np.zeros(w.shape[0]), A_ub=np.vstack([lin.A[up], -lin.A[lo]]),
                      b_ub=np.concatenate([lin.ub[up], -lin.lb[lo]]),
                      bounds=[(None if np.isneginf(a) else a, None if np.isposinf(b) else b)
                              for a, b in zip(self.lower, self.upper, strict=True)], method="highs")
        if res.x is None:
            return None
        scale = max(1.0, float(np.max(np.abs(res.x), initial=0.0)))
        return res.x if self.violation(res.x) <= tol * scale else None


# ----------------------------------------------------------------- bounds
def _pair(value: Any, key: Any, name: str) -> tuple[float, float]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence | np.ndarray) or len(value) != 2:
        raise TypeError(f"{name}[{key!r}] must be a pair (lower, upper), got {value!r}")
    lo, up = (_number(v, f"{name}[{key!r}]", side) for v, side in zip(value, (-np.inf, np.inf), strict=True))
    return lo, up


def _number(v: Any, where: str, absent: float) -> float:
    if v is None:
        return absent
    if isinstance(v, (str, bytes, bool, np.bool_)):
        raise TypeError(f"{where} must hold numbers, got {v!r}")
    try:
        x = float(v)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{where} must hold numbers, got {v!r}") from exc
    if np.isnan(x):
        raise ValueError(f"{where} contains NaN (give None or ±inf for an absent side)")
    return x


def _vector(value: Any, d: int, where: str, fill: float) -> np.ndarray:
    if value is None:
        return np.full(d, fill)
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{where} must be a number or {d} numbers: {exc}") from exc
    if arr.size == 1:  # a scalar for every feature (scipy's Bounds stores one as shape (1,))
        arr = np.full(d, float(arr.ravel()[0]))
    if arr.shape != (d,):
        raise ValueError(f"{where} must be a number or have length {d} (one per feature), got shape {arr.shape}")
    if np.any(np.isnan(arr)):
        raise ValueError(f"{where} contains NaN (give ±inf for an absent side)")
    return arr


def resolve_bounds(bounds: Any, d: int, feature_names: np.ndarray | None = None, *,
                   name: str = "bounds") -> tuple[np.ndarray, np.ndarray]:
    """Read a bounds specification into two arrays ``(lower, upper)`` of shape ``(d,)``.

    Parameters
    ----------
    bounds : None, Bounds, mapping, pandas Series or DataFrame, pair or (d, 2) array
        * ``scipy.optimize.Bounds(lb, ub)`` (scalars broadcast);
        * a mapping ``{feature: (lower, upper)}`` by name or index (a side ``None`` is infinite),
          or a pandas Series of such pairs indexed by feature;
        * a DataFrame with columns ``lower`` and ``upper`` indexed by feature;
        * a pair ``(lower, upper)`` of numbers or length-``d`` vectors, or a ``(d, 2)`` array.
    d : int
    feature_names : array of str, optional

    Raises
    ------
    ValueError
        An unknown feature, a feature given twice, NaN, or an empty interval (``lower > upper``,
        ``lower = +inf``, ``upper = −inf``); the message names the feature.
    TypeError
        A value that is not a pair of numbers.
    """
    lower, upper = np.full(d, -np.inf), np.full(d, np.inf)
    if bounds is None:
        return lower, upper
    if isinstance(bounds, Bounds):
        lower = _vector(bounds.lb, d, f"{name}.lb", -np.inf)
        upper = _vector(bounds.ub, d, f"{name}.ub", np.inf)
    elif hasattr(bounds, "columns") and hasattr(bounds, "index"):  # a DataFrame lower / upper by feature
        missing = {"lower", "upper"} - {str(c) for c in bounds.columns}
        if missing:
            raise ValueError(f"{name} as a DataFrame needs the columns 'lower' and 'upper'; missing {sorted(missing)}")
        _by_key(zip(bounds.index, zip(bounds["lower"], bounds["upper"], strict=True), strict=True),
                lower, upper, d, feature_names, name)
    elif hasattr(bounds, "index") and hasattr(bounds, "to_numpy") and getattr(bounds, "ndim", None) == 1:
        _by_key(zip(bounds.index, bounds.to_numpy(), strict=True), lower, upper, d, feature_names, name)
    elif isinstance(bounds, Mapping):
        _by_key(bounds.items(), lower, upper, d, feature_names, name)
    elif isinstance(bounds, tuple) and len(bounds) == 2:
        lower = _vector(bounds[0], d, f"{name}[0] (lower)", -np.inf)
        upper = _vector(bounds[1], d, f"{name}[1] (upper)", np.inf)
    else:
        arr = np.asarray(bounds, dtype=np.float64) if not isinstance(bounds, (str, bytes)) else None
        if arr is None or arr.shape != (d, 2):
            raise bounds_form_error(name, str(d), type(bounds).__name__)
        lower, upper = _vector(arr[:, 0], d, f"{name}[:, 0]", -np.inf), _vector(arr[:, 1], d, f"{name}[:, 1]", np.inf)
    _check_nonempty(lower, upper, feature_names, name)
    return lower, upper


def bounds_form_error(name: str, d: str, got: str) -> TypeError:
    """The error of a bounds specification of no known form (the one place its message is written)."""
    return TypeError(f"{name} must be scipy.optimize.Bounds, a mapping {{feature: (lower, upper)}}, a pair "
                     f"(lower, upper) or a ({d}, 2) array, got {got}")


def _by_key(items, lower, upper, d, feature_names, name) -> None:
    given: dict[int, Any] = {}
    for key, value in items:
        h = feature_index(key, d, feature_names, name=name)
        if h in given:
            raise ValueError(f"{name} gives {_feature(h, feature_names)} twice: under {given[h]!r} and {key!r}")
        given[h] = key
        lower[h], upper[h] = _pair(value, key, name)


def _feature(h: int, names: np.ndarray | None) -> str:
    return f"feature {h}" + ("" if names is None else f" ({names[h]!r})")


def _check_nonempty(lower, upper, names, name: str, extra: str = "") -> None:
    bad = np.flatnonzero((lower > upper) | np.isposinf(lower) | np.isneginf(upper))
    if bad.size:
        h = int(bad[0])
        raise ValueError(f"{name} leave no value for {_feature(h, names)}: lower {lower[h]:g} > upper {upper[h]:g}"
                         + extra + (f" ({bad.size} features in all)" if bad.size > 1 else ""))


def _spec_pairs(bounds: Any) -> list[tuple[float, float]]:
    """The intervals of an unresolved bounds specification (features not yet placed)."""
    if bounds is None:
        return []
    if isinstance(bounds, Bounds):
        lo, up = np.broadcast_arrays(np.asarray(bounds.lb, float), np.asarray(bounds.ub, float))
    elif hasattr(bounds, "columns") and hasattr(bounds, "index"):
        lo, up = np.asarray(bounds["lower"], float), np.asarray(bounds["upper"], float)
    elif (hasattr(bounds, "to_numpy") and getattr(bounds, "ndim", None) == 1) or isinstance(bounds, Mapping):
        values = list(bounds.to_numpy()) if hasattr(bounds, "to_numpy") else list(bounds.values())
        pairs = [_pair(value, key, "bounds") for key, value in enumerate(values)]
        lo, up = np.asarray([p[0] for p in pairs]), np.asarray([p[1] for p in pairs])
    elif isinstance(bounds, tuple) and len(bounds) == 2:
        lo, up = np.broadcast_arrays(np.asarray(-np.inf if bounds[0] is None else bounds[0], float),
                                     np.asarray(np.inf if bounds[1] is None else bounds[1], float))
    else:
        try:
            arr = np.asarray(bounds, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise bounds_form_error("bounds", "d", f"{type(bounds).__name__} ({exc})") from exc
        if arr.ndim != 2 or arr.shape[1] != 2:
            raise bounds_form_error("bounds", "d", f"an array of shape {arr.shape}")
        lo, up = arr[:, 0], arr[:, 1]
    lo, up = np.ravel(lo).astype(float), np.ravel(up).astype(float)
    return list(zip(lo.tolist(), up.tolist(), strict=True))


def bounds_beyond_signs(bounds: Any) -> bool:
    """Whether a bounds specification (unresolved: names need no data) says more than signs.

    False for None and for bounds whose every interval is ``(−∞, ∞)``, ``[0, ∞)`` or ``(−∞, 0]``.
    Raises ``TypeError`` for a specification of no accepted form.
    """
    return any(not ((lo == 0 and up == np.inf) or (lo == -np.inf and up in (0.0, np.inf)))
               for lo, up in _spec_pairs(bounds))


def bounds_imply_signs(bounds: Any) -> bool:
    """Whether some interval of an unresolved bounds specification has a finite side (a sign at least)."""
    return any(np.isfinite(lo) or np.isfinite(up) for lo, up in _spec_pairs(bounds))


# ------------------------------------------------------------ constraints
def resolve_constraints(constraints: Any, d: int, feature_names: np.ndarray | None = None, *,
                        name: str = "constraints") -> LinearConstraints | None:
    """Stack ``LinearConstraint`` objects (columns: features by index) and :func:`ordered` chains.

    Raises
    ------
    TypeError
        An entry that is neither.
    ValueError
        ``A`` without ``d`` columns, a non-finite ``A``, NaN in ``lb`` / ``ub``, or ``lb > ub`` (the message
        names the constraint and its row).
    """
    if constraints is None:
        return None
    if isinstance(constraints, (LinearConstraint, Ordered, Prior)):
        constraints = [constraints]
    if not isinstance(constraints, (list, tuple)):
        raise TypeError(f"{name} must be a list of scipy.optimize.LinearConstraint (or rs.ordered(...)), "
                        f"got {type(constraints).__name__}")
    blocks, lbs, ubs = [], [], []
    for j, c in enumerate(constraints):
        if isinstance(c, (Ordered, Prior)):
            c = c.linear_constraint(d, feature_names)
        if not isinstance(c, LinearConstraint):
            raise TypeError(f"{name}[{j}] must be a scipy.optimize.LinearConstraint or rs.ordered(...), "
                            f"got {type(c).__name__}")
        A = c.A.toarray() if sp.issparse(c.A) else np.atleast_2d(np.asarray(c.A, dtype=np.float64))
        if A.shape[1] != d:
            raise ValueError(f"{name}[{j}].A has {A.shape[1]} columns, but the data have {d} features")
        if not np.all(np.isfinite(A)):
            raise ValueError(f"{name}[{j}].A contains NaN or infinity")
        k = A.shape[0]
        lb = _side(c.lb, k, f"{name}[{j}].lb")
        ub = _side(c.ub, k, f"{name}[{j}].ub")
        bad = np.flatnonzero(lb > ub)
        if bad.size:
            raise ValueError(f"{name}[{j}] row {int(bad[0])} has lb {lb[bad[0]]:g} > ub {ub[bad[0]]:g}: no w meets it")
        blocks.append(A)
        lbs.append(lb)
        ubs.append(ub)
    if not blocks:
        return None
    return LinearConstraints(A=np.vstack(blocks), lb=np.concatenate(lbs), ub=np.concatenate(ubs))


def _side(value: Any, k: int, where: str) -> np.ndarray:
    arr = np.broadcast_to(np.asarray(value, dtype=np.float64), (k,)).copy()
    if np.any(np.isnan(arr)):
        raise ValueError(f"{where} contains NaN (give ±inf for an absent side)")
    return arr


def weight_set(signs: np.ndarray, bounds: Any, constraints: Any, *, orientation: int = 1,
               feature_names: np.ndarray | None = None) -> WeightSet:
    """The feasible set of ``w``: the signs (already oriented) intersected with the bounds, and the constraints.

    ``orientation = −1`` (``positive_class = classes[0]``) maps an interval ``[l, u]`` on the weight
    towards ``classes[0]`` to ``[−u, −l]`` on the model's ``w`` (towards ``classes[1]``), and a constraint
    ``lb ≤ A w ≤ ub`` to ``lb ≤ (−A) w ≤ ub``, exactly as a sign flips.

    Raises
    ------
    ValueError
        Bounds and signs that leave a feature no value (naming it), or invalid bounds / constraints.
    """
    d = signs.shape[0]
    lo, up = resolve_bounds(bounds, d, feature_names)
    if orientation < 0:
        lo, up = -up, -lo
    lower = np.where(signs > 0, np.maximum(lo, 0.0), lo)
    upper = np.where(signs < 0, np.minimum(up, 0.0), up)
    _check_nonempty(lower, upper, feature_names, "bounds and signs together",
                    extra=" once the signs are imposed")
    linear = resolve_constraints(constraints, d, feature_names)
    if linear is not None and orientation < 0:
        linear = LinearConstraints(A=-linear.A, lb=linear.lb, ub=linear.ub)
    if linear is not None:  # the priors' checks of the rows (orderings that bounds contradict)
        check_rows(linear, lower, upper, feature_names)
    return WeightSet(lower=lower, upper=upper, linear=linear)


# -------------------------------------------------------------------- JSON
def _json_number(v: float) -> float | None:
    return None if not np.isfinite(v) else float(v)


def _json_key(k: Any) -> Any:
    return k.item() if isinstance(k, np.generic) else k


def bounds_to_json(bounds: Any) -> Any:
    """A bounds specification as JSON (infinite sides as null; names kept): a list of
    ``[feature, lower, upper]`` rows, or ``{"lower": [...], "upper": [...]}`` for positional forms."""
    if bounds is None:
        return None
    if isinstance(bounds, Mapping) or (hasattr(bounds, "index") and not isinstance(bounds, (tuple, Bounds))):
        if hasattr(bounds, "columns"):
            items = zip(bounds.index, zip(bounds["lower"], bounds["upper"], strict=True), strict=True)
        else:
            items = bounds.items()
        rows = []
        for key, value in items:
            lo, up = _pair(value, key, "bounds")
            rows.append([_json_key(key), _json_number(lo), _json_number(up)])
        return rows
    if isinstance(bounds, Bounds):
        lo, up = bounds.lb, bounds.ub
    elif isinstance(bounds, tuple):
        lo, up = (-np.inf if bounds[0] is None else bounds[0]), (np.inf if bounds[1] is None else bounds[1])
    else:
        arr = np.asarray(bounds, dtype=np.float64)
        lo, up = arr[:, 0], arr[:, 1]
    conv = np.vectorize(_json_number, otypes=[object])
    return {"lower": conv(np.asarray(lo, float)).tolist(), "upper": conv(np.asarray(up, float)).tolist()}


def bounds_from_json(spec: Any) -> Any:
    """The inverse of :func:`bounds_to_json`."""
    if spec is None:
        return None
    if isinstance(spec, dict):
        lo = np.asarray([-np.inf if v is None else v for v in np.ravel(np.asarray(spec["lower"], dtype=object))],
                        dtype=float)
        up = np.asarray([np.inf if v is None else v for v in np.ravel(np.asarray(spec["upper"], dtype=object))],
                        dtype=float)
        shape = np.shape(spec["lower"])
        return (lo.reshape(shape) if shape else float(lo[0]), up.reshape(np.shape(spec["upper"]))
                if np.shape(spec["upper"]) else float(up[0]))
    return {key: (lo, up) for key, lo, up in spec}


def constraints_to_json(constraints: Any) -> Any:
    """Linear constraints as JSON: ``{"A": rows, "lb": [...], "ub": [...]}`` or ``{"ordered": [...]}`` each."""
    if constraints is None:
        return None
    out = []
    for c in constraints:
        if isinstance(c, (Ordered, Prior)):
            out.append(c.to_dict())
            continue
        A = c.A.toarray() if sp.issparse(c.A) else np.atleast_2d(np.asarray(c.A, dtype=np.float64))
        k = A.shape[0]
        conv = np.vectorize(_json_number, otypes=[object])
        out.append({"A": A.tolist(), "lb": conv(_side(c.lb, k, "lb")).tolist(),
                    "ub": conv(_side(c.ub, k, "ub")).tolist()})
    return out


def constraints_from_json(spec: Any) -> Any:
    """The inverse of :func:`constraints_to_json`."""
    if spec is None:
        return None
    out = []
    for c in spec:
        if "ordered" in c:
            out.append(ordered(c["ordered"]))
            continue
        prior = prior_from_dict(c)
        if prior is not None:
            out.append(prior)
            continue
        lb = np.asarray([-np.inf if v is None else v for v in c["lb"]], dtype=float)
        ub = np.asarray([np.inf if v is None else v for v in c["ub"]], dtype=float)
        out.append(LinearConstraint(np.asarray(c["A"], dtype=float), lb, ub))
    return out

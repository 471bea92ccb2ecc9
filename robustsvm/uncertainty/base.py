"""The interface every uncertainty set implements.

A sample ``x_i`` is only known to lie in ``U_i = x_i + r_i V``; ``V`` is the
*unit* set described by a subclass, ``r_i ≥ 0`` its radius. The robust margin
is ``m_i^rob = y_i (x_i·w + b) − r_i σ_V(−y_i w)`` with the support function
``σ_V(z) = max_{v ∈ V} z·v``.
"""

from __future__ import annotations

import copy
import inspect
import math
from abc import ABC, abstractmethod
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._lazy import cvxpy as cp
from .._validation import check_nonnegative
from .._validation import real_array as _real_array

__all__ = ["SET_TYPES", "UncertaintySet", "check_radius", "direction_scale", "real_array", "stack_directions"]

#: the one table of set types, class name → class; every subclass is added when it is defined
SET_TYPES: dict[str, type] = {}


def real_array(value: Any, *, name: str) -> np.ndarray:
    """A set parameter as a float64 array (:func:`robustsvm._validation.real_array`); complex entries are refused."""
    return _real_array(value, name=name, what="an array of real numbers",
                       complex_hint="the sets live in a real space", numbers="real numbers")


def direction_scale(Z: Any, *, name: str = "z") -> np.ndarray:
    """``max_h |z_h|`` along the last axis, with 1 in place of 0: the factor a direction is divided by.

    Support functions are positively homogeneous (``σ(tz) = t σ(z)`` for
    ``t > 0``) and the maximizer does not depend on ``t``, so the numeric sets
    solve with ``z / m`` (entries in ``[−1, 1]``) and multiply the value back
    by ``m``: the solvers' absolute tolerances then mean the same thing for
    ``‖z‖`` of ``1e-8`` and of ``1e8``.

    Raises
    ------
    ValueError
        When ``Z`` holds NaN or infinity.
    """
    Z = np.asarray(Z, dtype=np.float64)
    if not np.all(np.isfinite(Z)):
        raise ValueError(f"{name} contains NaN or infinity")
    if Z.shape[-1] == 0:
        return np.ones(Z.shape[:-1])
    m = np.max(np.abs(Z), axis=-1)
    return np.where(m > 0, m, 1.0)


def check_radius(radius: Any, *, name: str = "radius") -> float | np.ndarray:
    """Return ``radius`` as a float or a 1-D float array, all finite and ≥ 0."""
    if np.ndim(radius) == 0:
        return check_nonnegative(radius, name=name, what="a real number or an array")
    r = real_array(radius, name=name)
    if r.ndim != 1:
        raise ValueError(f"{name} must be a scalar or one value per sample, got shape {r.shape}")
    if not np.all(np.isfinite(r)) or np.any(r < 0):
        raise ValueError(f"{name} must be finite and non-negative")
    return r


class UncertaintySet(ABC):
    """A compact convex unit set ``V`` with a radius.

    Subclasses implement the support function in numpy (:meth:`support`) and
    as a CVXPY expression (:meth:`support_cvx`), a maximizer
    (:meth:`worst_case`) and membership (:meth:`contains`).
    """

    #: True when ``V = −V``, so that ``σ_V(z) = σ_V(−z)`` and one epigraph
    #: variable serves both labels.
    symmetric: bool = False
    #: the class of sets whose fitted costs the model of ``solver="auto"`` applies to this one
    #: (``backends/cost.py``: the box, the 2- and ∞-balls, the 1-ball, the ellipsoid; "other" has none)
    cost_class: str = "other"

    def __init_subclass__(cls, *, shared_base: bool = False, **kwargs: Any) -> None:
        """Register a set type by its name (``shared_base=True``: a common base of set types, not a set itself)."""
        super().__init_subclass__(**kwargs)
        if not shared_base:
            SET_TYPES[cls.__name__] = cls

    def __init__(self, radius: Any = 1.0) -> None:
        self.radius = check_radius(radius)

    @property
    def radius_text(self) -> str:
        """The radius as a repr shows it: the number, or for one radius per sample their count, min and max."""
        r = self.radius
        if np.ndim(r) == 0:
            return repr(r)
        if r.size == 0:
            return "<0 per-sample radii>"
        return f"<{r.size} per-sample radii in [{float(np.min(r)):.6g}, {float(np.max(r)):.6g}]>"

    def with_radius(self, radius: Any) -> UncertaintySet:
        """The same unit set with another radius (validated); this set is not changed."""
        out = copy.copy(self)
        out.radius = check_radius(radius)
        return out

    # -- the unit set -------------------------------------------------------
    @property
    def dim(self) -> int | None:
        """Dimension of the set, or None when it adapts to any dimension."""
        return None

    def check_dim(self, d: int) -> None:
        """Raise a ``ValueError`` when the set does not live in ``R^d``."""
        if self.dim is not None and self.dim != d:
            raise ValueError(f"{type(self).__name__} lives in R^{self.dim} but X has {d} features")

    @abstractmethod
    def support(self, z: np.ndarray) -> np.ndarray | float:
        """``σ_V(z) = max_{v ∈ V} z·v`` of the *unit* set ``V`` for ``z`` of shape (d,) or each row of (k, d)
        (the radius is not applied: :meth:`scaled_support` gives ``σ_{rV} = r σ_V``)."""

    @abstractmethod
    def support_cvx(self, z: cp.Expression) -> tuple[cp.Expression, list[cp.Constraint]]:
        """A convex expression ``e`` and constraints with ``min e = σ_V(z)``.

        The compiler uses ``t ≥ e`` together with the constraints, so ``e``
        may involve auxiliary variables created here.
        """

    @abstractmethod
    def worst_case(self, z: np.ndarray) -> np.ndarray:
        """A maximizer ``v* ∈ V`` of ``z·v``."""

    @abstractmethod
    def contains(self, v: np.ndarray, tol: float = 1e-8) -> bool:
        """Whether ``v`` lies in the *unit* set ``V`` up to ``tol`` (the radius is not applied).

        Like :meth:`support`, this describes ``V``; the set around a sample is ``x_i + r_i V``.
        :meth:`scaled_contains` asks whether a displacement lies in ``rV``.
        """

    def scaled_contains(self, v: np.ndarray, tol: float = 1e-8, *, radius: float | None = None) -> bool:
        """Whether ``v`` lies in ``rV``, the set this set's radius describes (``contains(v / r)``; ``v = 0`` when
        ``r = 0``).

        ``v`` is a displacement from the sample, ``x_true − x_i``: for
        ``Ellipsoid.from_covariance(S, level)``, ``scaled_contains(v)`` holds with probability ``level``
        for ``v ~ N(0, S)``, while ``contains(v)`` tests the unit set ``V`` only. ``radius`` replaces the
        set's own (needed when it holds one radius per sample).
        """
        r = self.radius if radius is None else check_radius(radius)
        if np.ndim(r) != 0:
            raise ValueError(f"scaled_contains needs one radius; this {type(self).__name__} has one per sample: "
                             "pass radius=r_i")
        v = np.asarray(v, dtype=np.float64)
        if r == 0:
            return bool(np.all(np.abs(v) <= tol))
        return self.contains(v / r, tol=tol)

    def membership_cvx(self, v: cp.Expression) -> list[cp.Constraint]:
        """CVXPY constraints stating ``v ∈ V`` (the primal description of the set)."""
        raise NotImplementedError(f"{type(self).__name__} has no CVXPY membership constraints")

    def scaled_membership_cvx(self, v: cp.Expression, scale: cp.Expression) -> list[cp.Constraint]:
        """CVXPY constraints stating ``v ∈ t·V`` for an expression ``t ≥ 0`` (the perspective of the set).

        Jointly convex in ``(v, t)``; :class:`Intersection` uses it to find a
        point interior to both of its components.
        """
        raise NotImplementedError(f"{type(self).__name__} has no scaled CVXPY membership constraints")

    # -- gauge and retraction (docs/certificates.md, "Retraction") ------------
    #: True when ``V`` is a polytope (its robust counterpart adds linear constraints only)
    is_polyhedral: bool = False

    def center(self, d: int) -> np.ndarray:
        """A point of the interior of ``V ⊂ R^d``: the centre of :meth:`gauge` and :meth:`retract`.

        The origin for the sets symmetric about it (box, ball, ellipsoid); a
        computed interior point otherwise.
        """
        self.check_dim(d)
        return np.zeros(d)

    def gauge(self, v: np.ndarray, center: np.ndarray | None = None) -> float:
        """The gauge of ``V`` about ``c``: ``γ_c(v) = inf{t ≥ 0 : c + (v − c)/t ∈ V}``.

        ``c`` (default :meth:`center`) must be interior to ``V``. ``γ_c(v) ≤ 1``
        exactly when ``v ∈ V``, and ``γ_c`` is positively homogeneous in
        ``v − c``, so ``c + (v − c)/γ_c(v)`` lies on the boundary.

        The default bisects :meth:`contains` (with ``tol=0``) along the ray from
        ``c`` and rounds towards the inside; the sets of the package override it
        with closed forms.
        """
        v = np.asarray(v, dtype=np.float64)
        c = self.center(v.shape[0]) if center is None else np.asarray(center, dtype=np.float64)
        if not self.contains(c, tol=0.0):
            raise ValueError(f"{type(self).__name__}: the gauge's centre is not in the set; override center()")
        u = v - c
        if not np.any(u):
            return 0.0
        lo, hi = 0.0, 1.0
        while self.contains(c + hi * u, tol=0.0):
            lo, hi = hi, 2.0 * hi
            if hi > 1e300:
                return 0.0
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            if mid <= lo or mid >= hi:
                break
            lo, hi = (mid, hi) if self.contains(c + mid * u, tol=0.0) else (lo, mid)
        return 1.0 / lo if lo > 0 else math.inf

    def retract(self, v: np.ndarray) -> np.ndarray:
        """A point of ``V`` near ``v``: ``v`` itself when ``v ∈ V``, else ``c + (v − c)/(γ_c(v)(1 + 10⁻¹²))``.

        The Lagrangian bound of :mod:`robustsvm.certificates.duality` is valid for any points
        of the sets, so a solver's point pulled back this way keeps it valid.
        """
        v = np.asarray(v, dtype=np.float64)
        c = self.center(v.shape[0])
        g = self.gauge(v, c)
        if g <= 1.0:
            return v.copy()
        if not np.isfinite(g):
            return c.copy()
        return c + (v - c) / (g * (1.0 + 1e-12))

    @abstractmethod
    def key(self) -> tuple:
        """A hashable description of ``V`` (radius excluded): equal keys, equal sets."""

    # -- batching -----------------------------------------------------------
    @classmethod
    def support_cvx_many(
        cls, sets: list[UncertaintySet], zs: list[cp.Expression]
    ) -> tuple[list[cp.Expression], list[cp.Constraint]]:
        """Support expressions of several sets of this class at once.

        The default stacks :meth:`support_cvx`; a subclass whose sets can share
        one batched cone (for instance one PSD constraint on an ``(m, p, p)``
        variable) overrides it and may return a single expression of shape
        ``(len(sets),)`` instead of a list.
        """
        exprs, cons = [], []
        for s, z in zip(sets, zs, strict=True):
            e, c = s.support_cvx(z)
            exprs.append(e)
            cons.extend(c)
        return exprs, cons

    def _maximize(self, z: np.ndarray) -> tuple[float, np.ndarray]:
        """``(σ_V(z), v*)`` for one direction."""
        return float(self.support(z)), np.asarray(self.worst_case(z), dtype=np.float64)

    @classmethod
    def support_many(cls, sets: list[UncertaintySet], Z: np.ndarray) -> np.ndarray:
        """``σ_{V_j}(z_j)`` for each set ``V_j`` and row ``z_j`` of ``Z`` (default: a loop of :meth:`support`)."""
        return np.array([float(s.support(z)) for s, z in zip(sets, np.asarray(Z, dtype=np.float64), strict=True)])

    @classmethod
    def maximize_many(cls, sets: list[UncertaintySet], Z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``σ_{V_j}(z_j)`` and a maximizer ``v_j*`` for each set ``V_j`` and row ``z_j`` of ``Z``.

        The default loops over the pairs; a class whose maximizations can share
        one solve (spectrahedra) overrides it.
        """
        Z = np.asarray(Z, dtype=np.float64)
        values = np.empty(len(sets))
        V = np.empty_like(Z)
        for j, (s, z) in enumerate(zip(sets, Z, strict=True)):
            values[j], V[j] = s._maximize(z)
        return values, V

    # -- composition --------------------------------------------------------
    def __and__(self, other: UncertaintySet) -> UncertaintySet:
        """``self & other``: the :class:`~robustsvm.uncertainty.Intersection` (looked up in :data:`SET_TYPES`)."""
        if not isinstance(other, UncertaintySet):
            return NotImplemented
        return SET_TYPES["Intersection"](self, other)

    def __add__(self, other: UncertaintySet) -> UncertaintySet:
        """``self + other``: the Minkowski sum :class:`~robustsvm.uncertainty.SetSum` (from :data:`SET_TYPES`)."""
        if not isinstance(other, UncertaintySet):
            return NotImplemented
        return SET_TYPES["SetSum"](self, other)

    def scaled_support(self, z: np.ndarray) -> np.ndarray | float:
        """``σ_{rV}(z) = r σ_V(z)`` with this set's (scalar) radius."""
        if np.ndim(self.radius) != 0:
            raise ValueError("scaled_support needs a scalar radius; use support() and scale per sample")
        return self.radius * self.support(z)

    def to_dict(self) -> dict:
        """A JSON-ready description of the set."""
        raise NotImplementedError(f"{type(self).__name__} cannot be serialized yet")

    # -- scikit-learn parameters ---------------------------------------------
    @classmethod
    def _param_names(cls) -> list[str]:
        """The constructor's keyword parameters (each stored under the same attribute name)."""
        skip = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
        return [p.name for p in inspect.signature(cls.__init__).parameters.values()
                if p.name != "self" and p.kind not in skip]

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The constructor parameters, as scikit-learn's ``get_params`` gives them.

        With ``deep``, the parameters of component sets (an :class:`Intersection`'s
        ``first`` and ``second``) follow as ``first__radius`` and so on. This lets
        ``GridSearchCV`` search ``robustsvc__uncertainty__radius``.
        """
        out = {name: getattr(self, name) for name in self._param_names()}
        if deep:
            for name, value in list(out.items()):
                if isinstance(value, UncertaintySet):
                    out.update({f"{name}__{k}": v for k, v in value.get_params(deep=True).items()})
        return out

    def set_params(self, **params: Any) -> UncertaintySet:
        """Change constructor parameters in place (``radius=0.2``, ``first__radius=0.1``); returns the set.

        The set is rebuilt by its constructor from the updated parameters, so a
        new value is validated as in ``Box(radius=...)`` and every derived
        quantity follows it.
        """
        if not params:
            return self
        names = self._param_names()
        current = self.get_params(deep=False)
        nested: dict[str, dict[str, Any]] = {}
        for key, value in params.items():
            head, sep, sub = key.partition("__")
            if head not in names:
                raise ValueError(f"invalid parameter {head!r} for {type(self).__name__}; valid parameters: {names}")
            if sep:
                nested.setdefault(head, {})[sub] = value
            else:
                current[head] = value
        for head, sub in nested.items():
            if not isinstance(current[head], UncertaintySet):
                raise ValueError(f"parameter {head!r} of {type(self).__name__} has no parameters of its own")
            current[head] = copy.deepcopy(current[head]).set_params(**sub)
        rebuilt = type(self)(**current)
        self.__dict__.clear()
        self.__dict__.update(rebuilt.__dict__)
        return self

    def __sklearn_clone__(self) -> UncertaintySet:
        # an independent copy: scikit-learn's clone then never shares a set between estimators
        return copy.deepcopy(self)


def stack_directions(zs: list[cp.Expression]) -> cp.Expression:
    """The directions ``z_1, …, z_J`` (each of shape (d,)) as one flat vector ``(z_1, …, z_J)``.

    Entry ``j·d + l`` is ``(z_j)_l`` (row-major order of the ``(J, d)`` stack). When
    every ``z_j`` is ``±x`` for one expression ``x`` (the compiler passes ``±w``), the
    stack is one sparse product ``(s ⊗ I_d) x`` instead of a J-argument ``vstack``.
    """
    from cvxpy.atoms.affine.unary_operators import NegExpression

    if len(zs) == 1:
        return cp.reshape(zs[0], (zs[0].size,), order="C")
    base = zs[0].args[0] if isinstance(zs[0], NegExpression) else zs[0]
    signs = np.empty(len(zs))
    for j, z in enumerate(zs):
        if z is base:
            signs[j] = 1.0
        elif isinstance(z, NegExpression) and z.args[0] is base:
            signs[j] = -1.0
        else:
            Z = cp.vstack(zs)
            return cp.reshape(Z, (Z.size,), order="C")
    d = base.size
    return sp.kron(sp.csr_matrix(signs[:, None]), sp.identity(d), format="csr") @ cp.reshape(base, (d,), order="C")


class SolvedSupportMixin:
    """:meth:`support` and :meth:`worst_case` of a set whose ``max z·v, v ∈ V`` is one solve, ``_maximize(z)``
    returning ``(σ_V(z), v*)``: the value of each direction and the maximizer of the same solve."""

    def support(self, z):
        """``σ_V(z) = max{z·v : v ∈ V}`` by one solve per direction, for a vector or each row of a matrix."""
        z = np.asarray(z, dtype=np.float64)
        if z.ndim == 1:
            return self._maximize(z)[0]
        return np.array([self._maximize(row)[0] for row in z])

    def worst_case(self, z):
        """The maximizer ``v* ∈ V`` of ``z·v`` returned by the same solve."""
        return self._maximize(z)[1]


class NumericSupportMixin(SolvedSupportMixin):
    """Support function and maximizer by a small CVXPY solve of ``max z·v, v ∈ V``.

    For sets with no closed-form support (spectrahedra, intersections): the
    problem is compiled once per dimension with ``z`` a ``cp.Parameter`` (DPP),
    then re-solved for each direction.
    """

    _solver: str = "CLARABEL"

    def __getstate__(self) -> dict:
        # the cached CVXPY problems are rebuilt on demand: keep pickles and deep copies small
        state = self.__dict__.copy()
        state.pop("_numeric_cache", None)
        return state

    def _numeric_problem(self, d: int) -> tuple[cp.Problem, cp.Parameter, cp.Variable]:
        cache = self.__dict__.setdefault("_numeric_cache", {})
        if d not in cache:
            z = cp.Parameter(d, name="z")
            v = cp.Variable(d, name="v")
            prob = cp.Problem(cp.Maximize(z @ v), self.membership_cvx(v))
            cache[d] = (prob, z, v)
        return cache[d]

    def _numeric_max(self, z: np.ndarray) -> tuple[float, np.ndarray]:
        """``max z·v, v ∈ V`` solved for ``z/m`` (``m = max_h |z_h|``), the value multiplied back by ``m``."""
        z = np.asarray(z, dtype=np.float64)
        if z.ndim != 1:
            raise ValueError(f"z must be a vector, got shape {z.shape}")
        m = float(direction_scale(z))
        prob, zp, v = self._numeric_problem(z.shape[0])
        zp.value = z / m
        prob.solve(solver=self._solver)
        if prob.status not in ("optimal", "optimal_inaccurate") or v.value is None:
            raise RuntimeError(f"{type(self).__name__}: the support problem ended with status {prob.status!r}")
        v_star = np.asarray(v.value, dtype=np.float64).copy()
        return m * float(prob.value), v_star

    def _maximize(self, z):
        """``(σ_V(z), v*)`` by a CVXPY solve (Clarabel)."""
        return self._numeric_max(z)

"""The model: loss, penalty, signs, uncertainty, intercept and kernel in one object.

A :class:`Problem` states

    minimize   R(w) + (μ/2) b² + Σ_i c_i ℓ(m_i^rob)
    subject to w_h ≥ 0 (h ∈ I+),  w_h ≤ 0 (h ∈ I−),  l ≤ w ≤ u,  lb ≤ A w ≤ ub,

with ``m_i^rob = y_i (x_i·w + b) − r_i σ_{V_i}(−y_i w)`` and ``c_i = s_i/Σ s``
(``reduction="mean"``) or ``s_i`` (``"sum"``), ``s`` the sample weights. It is
compiled and solved by any registered backend that accepts it.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
from scipy.optimize import Bounds, LinearConstraint

from . import objective as objective_module
from . import solve_path
from ._validation import FitData, check_fit_data, check_positive_class
from .certificates.certify import PointCertificate, certify_point
from .conic import ConicProgram
from .duals.distributional import distribution_dual
from .model import Model, normalize
from .priors.constraints import (
    Ordered,
    bounds_beyond_signs,
    bounds_from_json,
    bounds_imply_signs,
    bounds_to_json,
    constraints_from_json,
    constraints_to_json,
    resolve_bounds,
    resolve_constraints,
)
from .solution import Solution
from .terms.intercept import Intercept, intercept_term
from .terms.kernels import Kernel, kernel_from_dict
from .terms.losses import LOSSES, Hinge, Loss, loss_from_dict
from .terms.penalties import Penalty, as_penalty
from .uncertainty import DistributionalSet, UncertaintySet, resolve_uncertainty, uncertainty_from_dict

__all__ = ["Problem"]

#: the status that passes silently; every other one warns
OPTIMAL = solve_path.OPTIMAL


class Problem:
    """A linear (or kernel) SVM model with sign constraints and uncertainty.

    Parameters
    ----------
    loss : Loss, default Hinge()
        ``Hinge()``, ``SquaredHinge()`` (each with ``reduction="mean"`` or
        ``"sum"``) or ``HardMargin()``.
    penalty : Penalty, optional
        ``L2(λ2)``, ``L1(λ1)`` or their sum ``L2(λ2) + L1(λ1)``.
    signs : array-like, dict or pair of lists, optional
        Sign constraints: a length-d vector of +1/0/−1, a dict
        ``{feature: ±1}`` (names or indices), ``{"positive": [...],
        "negative": [...]}`` or a pair ``(positive, negative)`` of index or
        name lists. Names resolve against a DataFrame's columns or the
        ``feature_names`` passed to :meth:`solve`.
    uncertainty : UncertaintySet, list of UncertaintySet, optional
        The set around each sample (one for all, or one per sample).
    intercept : bool or Penalty, default True
        ``True``: a free, unregularized ``b``; ``False``: no intercept
        (``b = 0``); ``L2(mu)``: ``b`` with the ridge term ``(mu/2) b²``.
    kernel : Kernel, optional
        A kernel for the dual backends; None is the linear primal model.
    positive_class : label, optional
        The class a +1 sign pushes towards (a larger feature with a +1 sign is evidence for it). None
        means ``classes[1]``, the larger label in sorted order. Results stay oriented to ``classes[1]``
        (``w``, the decision function, ``Solution.predict``); with ``positive_class = classes[0]`` the
        signs imposed on that ``w`` are flipped (and bounds ``[l, u]`` become ``[−u, −l]``).
    bounds : mapping, pandas Series, pair, (d, 2) array or scipy.optimize.Bounds, optional
        ``l_h ≤ w_h ≤ u_h``: ``{"age": (0, 0.5)}`` by name or index (``None`` or ``±inf`` for a free
        side), a pair ``(lower, upper)`` of numbers or vectors, or ``Bounds(lb, ub)``; intersected with
        the signs (:func:`robustsvm.priors.constraints.resolve_bounds`).
    constraints : list of scipy.optimize.LinearConstraint or rs.ordered(...), optional
        ``lb ≤ A w ≤ ub`` with the columns of ``A`` the features by index (``lb == ub``: an
        equality); :func:`robustsvm.ordered` writes ``w_a ≤ w_b ≤ …`` by names. Conic backends only.
    """

    def __init__(
        self,
        loss: Loss | None = None,
        penalty: Penalty | None = None,
        signs: Any = None,
        uncertainty: UncertaintySet | list | None = None,
        intercept: bool | Penalty = True,
        kernel: Kernel | None = None,
        positive_class: Any = None,
        bounds: Any = None,
        constraints: Any = None,
    ) -> None:
        if loss is None:
            loss = Hinge()
        if not isinstance(loss, Loss):
            losses = ", ".join(f"rs.{cls.__name__}()" for cls in LOSSES.values())
            raise TypeError(f"loss must be a margin loss ({losses}), got {loss!r}")
        self.loss = loss
        self.penalty = as_penalty(penalty)
        self.signs = signs
        if uncertainty is not None and not isinstance(uncertainty, (UncertaintySet, DistributionalSet, list, tuple)):
            raise TypeError(
                f"uncertainty must be an uncertainty set (rs.Box, rs.Ball, ...), a list of sets or None, "
                f"got {type(uncertainty).__name__}"
            )
        self.uncertainty = uncertainty
        intercept_term(intercept)  # validates
        self.intercept = intercept
        if kernel is not None and not isinstance(kernel, Kernel):
            raise TypeError(f"kernel must be rs.Linear(), rs.Polynomial(d) or rs.RBF(sigma), got {kernel!r}")
        self.kernel = kernel
        self.positive_class = check_positive_class(positive_class)
        self.bounds = bounds
        bounds_beyond_signs(bounds)  # a malformed specification fails here, names are resolved at fit time
        if constraints is not None and not isinstance(constraints, list):
            constraints = [constraints] if isinstance(constraints, (LinearConstraint, Ordered)) else constraints
        if constraints is not None and not isinstance(constraints, list):
            raise TypeError("constraints must be a list of scipy.optimize.LinearConstraint (or rs.ordered(...)), "
                            f"got {type(constraints).__name__}")
        self.constraints = constraints
        if loss.is_constraint and self.penalty.l2 == 0 and self.penalty.l1 == 0:
            raise ValueError("a hard-margin model needs a penalty (for instance rs.L2(1.0)): its loss is zero")

    # ------------------------------------------------------------------ model
    @property
    def intercept_term(self) -> Intercept:
        """The intercept as a term: free, none or ridge with ``mu`` (``rs.L2(0)`` is free)."""
        return intercept_term(self.intercept)

    @property
    def intercept_mode(self) -> tuple[str, float]:
        """``("free", 0)``, ``("none", 0)`` or ``("l2", mu)``: the intercept as the user wrote it."""
        if isinstance(self.intercept, Penalty):
            return "l2", self.intercept.l2
        return ("free", 0.0) if self.intercept else ("none", 0.0)

    @property
    def has_bounds(self) -> bool:
        """Whether ``bounds`` say more than signs (or meet the signs, whose intersection may: [0, ∞) ∩ (−∞, 0])."""
        if self.bounds is None:
            return False
        return bounds_beyond_signs(self.bounds) or self._has_sign_argument()

    @property
    def has_constraints(self) -> bool:
        """Whether the model has linear constraints on ``w``."""
        return bool(self.constraints)

    @property
    def has_signs(self) -> bool:
        """Whether ``w`` has sign constraints (given as signs, or as bounds ``[0, ∞)`` / ``(−∞, 0]``)."""
        if bounds_imply_signs(self.bounds):
            return True
        return self._has_sign_argument()

    def _has_sign_argument(self) -> bool:
        s = self.signs
        if s is None:
            return False
        if isinstance(s, dict):
            return any(bool(v) for v in s.values()) if set(s) - {"positive", "negative"} else any(
                len(v) for v in s.values()
            )
        if isinstance(s, tuple) and len(s) == 2 and not np.isscalar(s[0]):
            return any(len(part) for part in s)
        return bool(np.any(np.asarray(s) != 0))

    def prepare(self, X: Any, y: Any, *, sample_weight: Any = None, feature_names: Any = None) -> FitData:
        """Validate ``X``, ``y`` and the options against this model."""
        data = check_fit_data(X, y, signs=self.signs, sample_weight=sample_weight, feature_names=feature_names,
                              positive_class=self.positive_class)
        if not isinstance(self.uncertainty, DistributionalSet):  # a set of distributions has no per-sample shapes
            resolve_uncertainty(self.uncertainty, data.n, data.d)  # validates shapes early
        resolve_bounds(self.bounds, data.d, data.feature_names)
        resolve_constraints(self.constraints, data.d, data.feature_names)
        return data

    def with_positive_class(self, positive_class: Any) -> Problem:
        """A copy of this model whose signs point to ``positive_class`` (the rest shared)."""
        other = copy.copy(self)
        other.positive_class = check_positive_class(positive_class)
        return other

    def oriented(self, data: FitData) -> Problem:
        """This model with its signs as the vector ``data.signs`` (already oriented to ``data.classes[1]``).

        For code that solves on labels it has mapped to ±1 itself (cross-validation folds): the copy has
        no ``positive_class`` left to match against those labels. ``data`` comes from :meth:`prepare`.
        """
        if self.positive_class is None:
            return self
        other = self.with_positive_class(None)
        other.signs = np.asarray(data.signs, dtype=np.int8).copy()
        if self.bounds is not None or self.constraints is not None:
            feasible = normalize(self, data).feasible_set
            other.signs = feasible.signs
            other.bounds = Bounds(feasible.lower, feasible.upper) if self.bounds is not None else None
            linear = feasible.linear
            other.constraints = None if linear is None else [LinearConstraint(linear.A, linear.lb, linear.ub)]
        return other

    # -------------------------------------------------------------- numerics
    def robust_margins(self, X: Any, y: Any, w: Any, b: float = 0.0) -> np.ndarray:
        """``m_i^rob = y_i(x_i·w + b) − r_i σ_{V_i}(−y_i w)`` for every sample."""
        data = check_fit_data(X, y, signs=None)
        return self._robust_margins(data, np.asarray(w, dtype=np.float64), float(b))

    def _robust_margins(self, data: FitData, w: np.ndarray, b: float) -> np.ndarray:
        return objective_module.robust_margins(normalize(self, data), w, b)

    def normalize(self, X: Any, y: Any, *, sample_weight: Any = None, feature_names: Any = None,
                  radius: Any = None) -> Model:
        """The normalized :class:`~robustsvm.model.Model` of this problem on ``(X, y)`` (what backends read)."""
        data = self.prepare(X, y, sample_weight=sample_weight, feature_names=feature_names)
        return normalize(self, data, radius=radius)

    def objective(
        self, X: Any, y: Any, w: Any, b: float = 0.0, *, sample_weight: Any = None, feature_names: Any = None
    ) -> float:
        """Evaluate the exact objective at ``(w, b)`` in numpy.

        ``R(w) + (μ/2)b² + Σ_i c_i ℓ(m_i^rob)``; constraints (signs, hard
        margins) are not part of the value: see :meth:`violation`.
        """
        data = self.prepare(X, y, sample_weight=sample_weight, feature_names=feature_names)
        w = self._check_w(w, data.d)
        return self._objective(data, w, self._check_b(b))

    def _check_w(self, w: Any, d: int) -> np.ndarray:
        w = np.asarray(w, dtype=np.float64)
        if w.shape != (d,):
            raise ValueError(f"w must have shape ({d},), got {w.shape}")
        if not np.all(np.isfinite(w)):
            raise ValueError("w contains NaN or infinity")
        return w

    def _check_b(self, b: Any) -> float:
        return self.intercept_term.check(b)

    def _objective(self, data: FitData, w: np.ndarray, b: float) -> float:
        return objective_module.objective(normalize(self, data), w, b)

    def violation(self, X: Any, y: Any, w: Any, b: float = 0.0, *, feature_names: Any = None) -> float:
        """Largest violation of the constraints at ``(w, b)`` (0 when feasible).

        Sign constraints: ``max(−s_h w_h)`` over constrained features; hard
        margin: ``max(1 − m_i^rob)``.
        """
        data = self.prepare(X, y, feature_names=feature_names)
        return self._violation(data, self._check_w(w, data.d), self._check_b(b))

    def _violation(self, data: FitData, w: np.ndarray, b: float) -> float:
        return objective_module.violation(normalize(self, data), w, b)

    def certify(self, X: Any, y: Any, w: Any, b: Any = 0.0, *, sample_weight: Any = None,
                feature_names: Any = None, radius: Any = None, **options: Any) -> PointCertificate:
        """Certify a point ``(w, b)`` from anywhere (another solver, scikit-learn's ``coef_``) on ``(X, y)``.

        Returns its objective, its constraint violation and an upper bound ``gap ≥ P(w, b) − P*`` from the
        package's own dual construction (:func:`robustsvm.certificates.certify.certify_point`; ``options`` are
        ``ascent_steps``, ``tol`` and ``feas_tol``). ``w`` may be a ``(1, d)`` ``coef_``.
        """
        model = self.normalize(X, y, sample_weight=sample_weight, feature_names=feature_names, radius=radius)
        if model.distribution is not None:  # the set's own bound
            return distribution_dual(model.distribution).point_certificate(model, w, b, **options)
        return certify_point(model, w, b, **options)

    # ------------------------------------------------------------ compiling
    def compile(self, X: Any, y: Any, *, sample_weight: Any = None, feature_names: Any = None,
                **compile_options: Any):
        """Compile the model for CVXPY once; see :class:`~robustsvm.conic.ConicProgram`.

        The returned program's parameters (λ1, λ2, μ, radii and, with
        ``weights_as_parameter=True``, sample weights) can be changed with
        ``set_values`` and re-solved without recompiling. ``compile_options``
        are ``with_l1``, ``weights_as_parameter``, ``radius_per_sample``,
        ``sample_groups`` and ``rescale``.
        """
        data = self.prepare(X, y, sample_weight=sample_weight, feature_names=feature_names)
        return ConicProgram(normalize(self, data), **compile_options)

    def to_cvxpy(self, X: Any, y: Any, *, sample_weight: Any = None, feature_names: Any = None):
        """The model as a ``cvxpy.Problem`` (parameters named ``l2``, ``l1``, ``mu``, ``radius``, ``weight``)."""
        return self.compile(X, y, sample_weight=sample_weight, feature_names=feature_names,
                            rescale=False).cvxpy_problem

    # -------------------------------------------------------------- solving
    def solve(
        self,
        X: Any,
        y: Any,
        solver: str = "clarabel",
        *,
        sample_weight: Any = None,
        feature_names: Any = None,
        radius: Any = None,
        positive_class: Any = None,
        **options: Any,
    ) -> Solution:
        """Solve the model on ``(X, y)`` with a registered backend.

        Parameters
        ----------
        X : array-like or scipy.sparse matrix of shape (n, d)
        y : array-like of shape (n,)
            Labels of any two distinct values; ``classes_[1]`` is +1.
        solver : str, default "clarabel"
            A name from :func:`robustsvm.solvers`, or ``"auto"`` (the backend
            :func:`robustsvm.solve_path.choose_backend` picks, with Clarabel
            solving again an answer short of its tolerance).
        sample_weight : array-like of shape (n,), optional
        feature_names : sequence of str, optional
            Names used to resolve ``signs`` given by name.
        radius : float or array-like of shape (n,), optional
            Radii of the uncertainty set(s) for this solve, replacing those the
            sets were built with: one value for every sample or one per sample
            (validated here; the sets are not changed).
        positive_class : label, optional
            The class a +1 sign pushes towards, for this solve (replacing the
            model's ``positive_class``; the solution's ``problem`` records it).
            Without it, signs on labels other than {0, 1} / {−1, +1} warn
            (:class:`~robustsvm.exceptions.SignDirectionWarning`) which class they point to.
        **options
            ``tol``, ``max_iter``, ``verbose``, ``random_state`` and the
            backend's own options.

        Returns
        -------
        Solution

        Raises
        ------
        UnsupportedModelError
            The backend cannot solve this model (the message names those that can).
        SolverError
            The solver failed or found the model infeasible or unbounded.
        """
        if positive_class is not None:
            return self.with_positive_class(positive_class).solve(
                X, y, solver, sample_weight=sample_weight, feature_names=feature_names, radius=radius, **options)
        return solve_path.solve(self, X, y, solver, sample_weight=sample_weight, feature_names=feature_names,
                                radius=radius, stacklevel=2, **options)

    # ------------------------------------------------------------ describe
    def to_dict(self) -> dict:
        """A JSON-ready description of the model."""
        mode, mu = self.intercept_mode
        signs = self.signs
        if isinstance(signs, np.ndarray):
            signs = signs.tolist()
        unc = self.uncertainty
        if isinstance(unc, (list, tuple)):
            unc = [s.to_dict() for s in unc]
        elif unc is not None:
            unc = unc.to_dict()
        return {
            "loss": self.loss.to_dict(),
            "penalty": self.penalty.to_dict(),
            "signs": signs,
            "uncertainty": unc,
            "intercept": {"mode": mode, "mu": mu},
            "kernel": None if self.kernel is None else self.kernel.to_dict(),
            "positive_class": self.positive_class,
            **({"bounds": bounds_to_json(self.bounds)} if self.bounds is not None else {}),
            **({"constraints": constraints_to_json(self.constraints)} if self.constraints else {}),
        }

    @classmethod
    def from_dict(cls, spec: dict) -> Problem:
        """Rebuild a model from :meth:`to_dict` (uncertainty sets via their ``to_dict`` form)."""
        mode = spec.get("intercept", {"mode": "free"})
        intercept = {"free": True, "none": False}.get(mode["mode"])
        if intercept is None:
            intercept = Penalty(l2=float(mode["mu"]))
        return cls(
            loss=loss_from_dict(spec["loss"]),
            penalty=Penalty(**spec.get("penalty", {})),
            signs=spec.get("signs"),
            uncertainty=uncertainty_from_dict(spec.get("uncertainty")),
            intercept=intercept,
            kernel=kernel_from_dict(spec.get("kernel")),
            positive_class=spec.get("positive_class"),
            bounds=bounds_from_json(spec.get("bounds")),
            constraints=constraints_from_json(spec.get("constraints")),
        )

    def __repr__(self) -> str:
        """One line naming every part of the model.

        Signs are listed by feature (``signs={+1: ['alpha', 3], -1: ['beta']}``),
        uncertainty sets by their own ``repr`` (a list of sets as counts per
        distinct set), the intercept as ``free``, ``none`` or ``ridge(mu=μ)``.
        """
        parts = [f"loss={self.loss!r}", f"penalty={self.penalty!r}"]
        if self.signs is not None:
            parts.append(f"signs={_describe_signs(self.signs)}")
        if self.uncertainty is not None:
            parts.append(f"uncertainty={_describe_uncertainty(self.uncertainty)}")
        term = self.intercept_term
        parts.append(f"intercept={term.mode}" + (f"(mu={term.mu:g})" if term.mode == "ridge" else ""))
        if self.kernel is not None:
            parts.append(f"kernel={self.kernel!r}")
        if self.positive_class is not None:
            parts.append(f"positive_class={self.positive_class!r}")
        if self.bounds is not None:
            parts.append(f"bounds={_one_line(_describe_bounds(self.bounds))}")
        if self.constraints:
            parts.append(f"constraints=[{len(self.constraints)} linear]")
        return f"Problem({', '.join(parts)})"


def _describe_bounds(bounds: Any) -> str:
    if isinstance(bounds, Bounds):
        return f"Bounds({np.asarray(bounds.lb).tolist()}, {np.asarray(bounds.ub).tolist()})"
    if isinstance(bounds, dict):
        return "{" + ", ".join(f"{_label(k)}: ({v[0]}, {v[1]})" for k, v in bounds.items()) + "}"
    return repr(bounds)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _label(key: Any) -> str:
    """A feature key as printed: names quoted, indices bare."""
    if isinstance(key, (np.integer, np.str_, np.floating)):
        key = key.item()
    return repr(key)


def _describe_signs(signs: Any) -> str:
    """``{+1: [features], -1: [features]}`` from any accepted sign specification (nothing resolved).

    Features are listed as given: names for names, indices for a vector or
    index keys. A specification that cannot be read this way is shown as its
    ``repr`` (it is validated when the model is solved).
    """
    positive: list[str] = []
    negative: list[str] = []
    try:
        spec = signs
        if isinstance(spec, dict) and spec and set(spec) <= {"positive", "negative"}:
            spec = (spec.get("positive", ()), spec.get("negative", ()))
        if isinstance(spec, tuple) and len(spec) == 2 and not np.isscalar(spec[0]):
            positive = [_label(k) for k in spec[0]]
            negative = [_label(k) for k in spec[1]]
        elif isinstance(spec, dict) or hasattr(spec, "items"):  # a mapping or a pandas Series: by its keys
            for key, value in spec.items():
                v = float(value)
                (positive if v > 0 else negative if v < 0 else []).append(_label(key))
        else:
            vector = np.asarray(spec, dtype=np.float64).ravel()
            positive = [str(h) for h in np.flatnonzero(vector > 0)]
            negative = [str(h) for h in np.flatnonzero(vector < 0)]
    except (TypeError, ValueError):
        return _one_line(repr(signs))
    if not positive and not negative:
        return "none"
    items = [f"{sign}: [{', '.join(keys)}]" for sign, keys in (("+1", positive), ("-1", negative)) if keys]
    return "{" + ", ".join(items) + "}"


def _describe_uncertainty(uncertainty: Any) -> str:
    """A set's ``repr``; for one set per sample, ``[n sets: k x repr, ...]`` over the distinct sets."""
    if not isinstance(uncertainty, (list, tuple)):
        return _one_line(repr(uncertainty))
    counts: dict[str, int] = {}
    for s in uncertainty:
        text = _one_line(repr(s))
        counts[text] = counts.get(text, 0) + 1
    shown = [f"{k} x {text}" for text, k in list(counts.items())[:3]]
    if len(counts) > 3:
        shown.append(f"{len(counts) - 3} more distinct sets")
    return f"[{len(uncertainty)} sets: {', '.join(shown)}]"

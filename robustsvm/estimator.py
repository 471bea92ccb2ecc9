"""A scikit-learn classifier over the whole model language.

:class:`RobustSVC` fits

    minimize   (l2/2)‖w‖² + l1‖w‖₁ + Σ_i c_i ℓ(y_i(x_i·w + b) − r_i σ_V(−y_i w))
    subject to w_h ≥ 0 (h ∈ I+),  w_h ≤ 0 (h ∈ I−),

with ``c_i = s_i / Σ_j s_j`` (``reduction="mean"``, ``s`` the sample
weights, ones by default) — the objective of :class:`robustsvm.Problem` with
``penalty = L2(l2) + L1(l1)``. scikit-learn is imported only when this module
is.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from . import solve_path
from .kernels import Kernel, Linear
from .losses import LOSSES, Loss
from .penalties import L1, L2
from .problem import Problem
from .uncertainty import UncertaintySet, sample_radii

__all__ = ["RobustSVC"]

#: Clarabel's tolerance for LP/QP models unless ``solver_options`` sets ``tol``
CLARABEL_TOL = 1e-9



def _polyhedral(uncertainty: Any) -> bool:
    """True when the robust margins add only linear constraints (no set, or sets that say they are polyhedral)."""

    if uncertainty is None:
        return True
    sets = uncertainty if isinstance(uncertainty, (list, tuple)) else [uncertainty]
    return all(s.is_polyhedral for s in sets)


class RobustSVC(ClassifierMixin, BaseEstimator):
    """Linear or kernel SVM with sign constraints and uncertainty sets.

    The fitted model minimizes

    ``(l2/2)‖w‖² + l1‖w‖₁ + Σ_i c_i ℓ(m_i^rob)``, ``m_i^rob = y_i(x_i·w + b) − r_i σ_V(−y_i w)``,

    subject to the sign constraints, where ``c_i = s_i/Σ_j s_j`` for a loss
    given by name (the mean over samples, weighted by ``sample_weight``).
    ``l2`` is λ of Tajima et al. (2020), who also average the loss. Woolnough
    et al. (2022) sum it: their (λ1, λ2) are ``(n·l1, n·l2)``, or the same
    numbers with ``loss=rs.Hinge(reduction="sum")``.

    Parameters
    ----------
    loss : {"hinge", "squared_hinge", "hard_margin"} or Loss, default "hinge"
        ``max(0, 1 − m)``, ``max(0, 1 − m)²`` or the constraint ``m ≥ 1``. A
        :class:`~robustsvm.losses.Loss` instance is used as given (its
        ``reduction`` included).
    l2 : float, default 1.0
        Ridge strength λ2 ≥ 0 in ``(λ2/2)‖w‖²``.
    l1 : float, default 0.0
        Lasso strength λ1 ≥ 0 in ``λ1‖w‖₁``.
    signs : array-like, dict or pair of lists, optional
        Sign constraints, as in :class:`~robustsvm.Problem`; feature names
        resolve against the columns of a pandas ``X``. A +1 sign says that a
        larger feature is evidence for ``positive_class``.
    positive_class : label, optional
        The class the signs point to: a +1 weight pushes towards it. None means
        ``classes_[1]`` (with labels other than {0, 1} / {−1, +1} a
        :class:`~robustsvm.exceptions.SignDirectionWarning` then says so).
        ``classes_``, ``coef_`` and ``decision_function`` keep scikit-learn's
        orientation to ``classes_[1]``: with ``positive_class=classes_[0]`` a
        +1 sign makes the corresponding ``coef_`` entry ≤ 0.
    uncertainty : UncertaintySet, optional
        The set ``V`` and radius ``r`` around every training sample
        (``rs.Box(0.1)``, ``rs.Ball(0.1)``, ...). A per-sample radius is better
        passed to :meth:`fit` as ``radius=`` so that cross-validation slices it.
    fit_intercept : bool, default True
        Whether to fit an intercept ``b`` (False: ``b = 0``), as in
        scikit-learn. Only ``True``/``False`` are accepted: a number is an
        error (use ``intercept_l2`` for a ridge intercept).
    intercept_l2 : float, optional
        ``μ > 0``: the intercept gets the ridge term ``(μ/2) b²`` (dual
        backends such as ``m3`` accept this one, not a free ``b``). None (the
        default) leaves ``b`` free. Needs ``fit_intercept=True``.
    kernel : Kernel, optional
        ``rs.Linear()``, ``rs.Polynomial(d)`` or ``rs.RBF(σ)``; needs a
        backend that solves the dual (see ``rs.solvers()``). None is the
        linear primal model.
    solver : str, default "clarabel"
        A backend name from ``rs.solvers()``, or ``"auto"``: for a robust model with a shared Box, Ball or
        Ellipsoid and L2 > 0, ``feature-ipm`` up to 128 features and ``robust-dcd`` beyond (or for a
        1-ball), ``clarabel`` otherwise (:func:`robustsvm.solve_path.choose_backend`). When the chosen
        backend stops short of its certified tolerance (``robust-dcd`` on ill-conditioned models: a tiny
        λ2, nearly separable data), ``"auto"`` refits with ``clarabel`` and keeps that answer;
        ``solution_.extra["auto_fallback"]`` then records the first attempt (status, relative gap, time).
        With ``"auto"``, ``solver_options`` that the chosen backend does not take are left out.
        With a backend that takes an initial dual point (``robust-dcd``),
        ``solver_options={"warm_start": True}`` starts each ``fit`` from the previous fit's
        solution (paths over λ or radius with ``set_params``).
    solver_options : dict, optional
        Keyword options of :meth:`Problem.solve` (``tol``, ``max_iter``, the
        backend's own options). For an LP or QP (no uncertainty, boxes, 1- and
        ∞-balls) Clarabel runs with ``tol=1e-9`` unless ``tol`` is given
        here: it reaches it in a few more iterations, and the decision values
        then agree with a refit on repeated samples to about 1e-9. With other
        sets (second-order and other cones, where 1e-9 is not always reached)
        it keeps its default 1e-8.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        The two labels; ``classes_[1]`` is the positive class.
    coef_ : ndarray of shape (1, n_features)
        The weights ``w`` (linear models and the linear kernel).
    intercept_ : ndarray of shape (1,)
        The intercept ``b``.
    dual_coef_, support_vectors_ : ndarray
        The kernel expansion ``f(x) = Σ_j a_j k(x, x_j) + b`` (kernel models).
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Present when ``X`` was a DataFrame with string column names.
    solution_ : Solution
        The backend's result: ``status``, ``objective``, ``gap``, timings.
    """

    def __init__(
        self,
        loss: str | Loss = "hinge",
        l2: float = 1.0,
        l1: float = 0.0,
        signs: Any = None,
        uncertainty: UncertaintySet | None = None,
        fit_intercept: bool = True,
        intercept_l2: float | None = None,
        kernel: Kernel | None = None,
        solver: str = "clarabel",
        solver_options: dict | None = None,
        positive_class: Any = None,
    ) -> None:
        self.loss = loss
        self.l2 = l2
        self.l1 = l1
        self.signs = signs
        self.uncertainty = uncertainty
        self.fit_intercept = fit_intercept
        self.intercept_l2 = intercept_l2
        self.kernel = kernel
        self.solver = solver
        self.solver_options = solver_options
        self.positive_class = positive_class

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        tags.input_tags.sparse = True
        return tags

    # ---------------------------------------------------------------- model
    def _loss(self) -> Loss:
        if isinstance(self.loss, Loss):
            return self.loss
        if isinstance(self.loss, str) and self.loss in LOSSES:
            return LOSSES[self.loss]()
        raise ValueError(f"loss must be one of {sorted(LOSSES)} or a robustsvm Loss, got {self.loss!r}")

    def _strength(self, name: str) -> float:
        value = getattr(self, name)
        if not isinstance(value, numbers.Real) or isinstance(value, bool):
            raise TypeError(f"{name} must be a real number, got {value!r}")
        if not np.isfinite(value) or value < 0:
            raise ValueError(f"{name} must be finite and non-negative, got {value!r}")
        return float(value)

    def _check_uncertainty(self, radius: Any, n: int) -> Any:
        """Validate the set and the per-sample ``radius`` of :meth:`fit`; the radius to solve with (or None)."""
        unc = self.uncertainty
        if unc is not None and not isinstance(unc, UncertaintySet):
            raise TypeError(f"uncertainty must be an uncertainty set (rs.Box, rs.Ball, ...) or None, got {unc!r}")
        if radius is None:
            if unc is not None and np.ndim(unc.radius) == 1 and np.shape(unc.radius)[0] != n:
                raise ValueError(
                    f"uncertainty.radius has {np.shape(unc.radius)[0]} values but X has {n} samples; pass a "
                    "per-sample radius to fit(..., radius=...) so that it follows the samples"
                )
            return None
        if unc is None:
            raise ValueError("radius was passed to fit but the estimator has no uncertainty set")
        return sample_radii(radius, n)

    def _intercept(self) -> bool | L2:
        """``True`` (free ``b``), ``False`` (``b = 0``) or ``L2(μ)`` from ``fit_intercept`` and ``intercept_l2``."""
        fit = self.fit_intercept
        if not isinstance(fit, (bool, np.bool_)):
            hint = "; for a ridge intercept (μ/2)b² use intercept_l2=μ" if isinstance(fit, numbers.Real) else ""
            raise TypeError(f"fit_intercept must be True or False, got {fit!r} ({type(fit).__name__}){hint}")
        mu = self.intercept_l2
        if mu is None:
            return bool(fit)
        if not isinstance(mu, numbers.Real) or isinstance(mu, (bool, np.bool_)):
            raise TypeError(f"intercept_l2 must be None or a positive real number, got {mu!r}")
        if not np.isfinite(mu) or mu <= 0:
            raise ValueError(f"intercept_l2 must be positive and finite (None for a free intercept), got {mu!r}")
        if not fit:
            raise ValueError(f"intercept_l2={mu!r} asks for a ridge intercept but fit_intercept=False; "
                             "set fit_intercept=True or intercept_l2=None")
        return L2(float(mu))

    def make_problem(self) -> Problem:
        """The :class:`~robustsvm.Problem` this estimator fits (a per-sample radius of :meth:`fit` is passed to
        :meth:`Problem.solve`, the set itself is never changed)."""
        intercept: bool | L2 = self._intercept()
        l2, l1 = self._strength("l2"), self._strength("l1")
        penalty = L2(l2) + L1(l1)
        return Problem(
            loss=self._loss(),
            penalty=penalty,
            signs=self.signs,
            uncertainty=self.uncertainty,
            intercept=intercept,
            kernel=self.kernel,
            positive_class=self.positive_class,
        )

    # ------------------------------------------------------------------ fit
    def fit(self, X: Any, y: Any, sample_weight: Any = None, radius: Any = None) -> RobustSVC:
        """Fit the model.

        Parameters
        ----------
        X : array-like, DataFrame or scipy.sparse matrix of shape (n, d)
        y : array-like of shape (n,)
            Two distinct labels.
        sample_weight : array-like of shape (n,), optional
            Non-negative weights ``s_i`` of the loss terms.
        radius : float or array-like of shape (n,), optional
            Radius ``r_i`` of each sample's uncertainty set, overriding
            ``uncertainty.radius``.

        Returns
        -------
        self
        """
        if self.solver_options is not None and not isinstance(self.solver_options, dict):
            raise TypeError(f"solver_options must be a dict or None, got {type(self.solver_options).__name__}")
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64, ensure_min_samples=1)
        check_classification_targets(y)
        if type_of_target(y, input_name="y") == "multiclass":
            raise ValueError(
                "Only binary classification is supported. RobustSVC needs y with exactly two classes; wrap it in "
                "sklearn.multiclass.OneVsRestClassifier for more"
            )
        n = X.shape[0]
        sw = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
        classes = np.unique(y)
        if classes.size != 2:
            raise ValueError(
                f"RobustSVC is a binary classifier: y must hold exactly two classes, got {classes.size} class"
                + ("" if classes.size == 1 else "es")
                + (" (one class cannot be separated from nothing)" if classes.size == 1 else "")
            )
        if np.unique(y[sw > 0]).size < 2:
            raise ValueError("the samples with positive sample_weight hold only one class; two classes are needed")
        radius = self._check_uncertainty(radius, n)
        problem = self.make_problem()
        names = getattr(self, "feature_names_in_", None)
        options = dict(self.solver_options or {})
        if options.get("warm_start") is True:  # start from the previous fit's dual point (same n)
            previous = getattr(getattr(self, "solution_", None), "extra", {}).get("dual_alpha")
            options["warm_start"] = previous if previous is not None and len(previous) == n else None
        clarabel = {"tol": CLARABEL_TOL} if _polyhedral(problem.uncertainty) else {}
        sol = solve_path.solve(problem, X, y, self.solver, sample_weight=sw, feature_names=names, radius=radius,
                               option_defaults={"clarabel": clarabel}, stacklevel=2, **options)
        self.classes_ = classes
        self.solution_ = sol
        self.intercept_ = np.array([sol.b])
        if sol.w is not None:
            self.coef_ = sol.w[None, :].copy()
        else:
            self.dual_coef_ = np.asarray(sol.dual_coef, dtype=np.float64).ravel()
            self.support_vectors_ = sol.support_vectors
            if isinstance(self.kernel, Linear):
                self.coef_ = np.asarray(self.support_vectors_.T @ self.dual_coef_).ravel()[None, :]
        self.n_iter_ = sol.iterations
        return self

    # -------------------------------------------------------------- predict
    def decision_function(self, X: Any) -> np.ndarray:
        """``f(x) = x·w + b`` (or ``Σ_j a_j k(x, x_j) + b``); positive for ``classes_[1]``.

        Returns
        -------
        ndarray of shape (n,)
        """
        check_is_fitted(self, "solution_")
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        if hasattr(self, "dual_coef_"):
            return np.asarray(self.kernel(X, self.support_vectors_) @ self.dual_coef_).ravel() + self.intercept_[0]
        return np.asarray(X @ self.coef_[0]).ravel() + self.intercept_[0]

    def predict(self, X: Any) -> np.ndarray:
        """``classes_[1]`` where ``f(x) > 0``, else ``classes_[0]``."""
        positive = self.decision_function(X) > 0
        return self.classes_[positive.astype(np.intp)]

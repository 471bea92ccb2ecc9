"""A scikit-learn classifier over the whole model language.

:class:`RobustSVC` fits

    minimize   (l2/2)‖w‖² + l1‖w‖₁ + Σ_i c_i ℓ(y_i(x_i·w + b) − r_i σ_V(−y_i w))
    subject to w_h ≥ 0 (h ∈ I+),  w_h ≤ 0 (h ∈ I−),

with ``c_i = s_i / Σ_j s_j`` (``reduction="mean"``, ``s`` the sample weights, ones by default) — the objective of
:class:`robustsvm.Problem` with ``penalty = L2(l2) + L1(l1)`` (a Wasserstein ball replaces the robust margins by its
worst expected loss). scikit-learn is imported only when this module is.
"""

from __future__ import annotations

from collections.abc import Mapping
from numbers import Real
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import Interval, Options, StrOptions
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from .. import solve_path
from .._validation import check_finite, check_no_missing_labels, estimator_missing_remedy, numeric_columns
from ..distributed.data import is_dask_array
from ..problem import Problem
from ..terms.kernels import Kernel, Linear
from ..terms.losses import LOSSES, Loss
from ..terms.penalties import L1, L2
from ..uncertainty import DistributionalSet, UncertaintySet, check_radius_applies, sample_radii
from ..uncertainty.missing import ConditionalGaussian, check_incomplete, fit_gaussian, missing_as_uncertainty
from . import calibration, multiclass
from .multiclass import PerClass, class_sample_weight, for_class, weighted_by_class

__all__ = ["RobustSVC"]

#: what ``RobustSVC(missing=...)`` does with NaN in ``X``
MISSING_MODES = ("error", "uncertain", "conditional_mean", "mean", "drop")
#: folds of the internal cross-validation behind ``probability=True`` (StratifiedKFold, not shuffled)
PROBABILITY_FOLDS = 5



def _column_means(X: np.ndarray) -> ConditionalGaussian:
    """Independent columns with the observed means and variances: conditional means are column means."""
    var = np.nanvar(X, axis=0)
    return ConditionalGaussian(np.nanmean(X, axis=0), np.diag(np.where(var > 0, var, 1.0)))


class _TrueOrFalse(Options):
    """``True`` or ``False`` (numpy booleans too), whose description names the parameter of a ridge intercept."""

    def __init__(self) -> None:
        super().__init__(bool, {True, False})

    def is_satisfied_by(self, val: Any) -> bool:
        return isinstance(val, (bool, np.bool_))

    def __str__(self) -> str:
        return "True or False (for a ridge intercept (μ/2)b² use intercept_l2=μ)"


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
    loss : {"hinge", "squared_hinge", "logistic", "hard_margin"} or Loss, default "hinge"
        ``max(0, 1 − m)``, ``max(0, 1 − m)²`` or the constraint ``m ≥ 1``. A
        :class:`~robustsvm.terms.losses.Loss` instance is used as given (its
        ``reduction`` included).
    l2 : float, default 1.0
        Ridge strength λ2 ≥ 0 in ``(λ2/2)‖w‖²`` (the default of ``robustsvm fit --l2`` too).
    l1 : float, default 0.0
        Lasso strength λ1 ≥ 0 in ``λ1‖w‖₁``.
    signs : array-like, dict, pair of lists or PerClass, optional
        Sign constraints, as in :class:`~robustsvm.Problem`; feature names
        resolve against the columns of a pandas ``X`` (also without the
        ``"transformer__"`` prefix of a ``ColumnTransformer`` when only one
        column matches). A +1 sign says that a larger feature is evidence for
        ``positive_class``. With more than two classes the same signs apply to
        every one-vs-rest model (+1: evidence for that model's class), or one
        set per class with :class:`~robustsvm.estimators.multiclass.PerClass`.
    positive_class : label, optional
        The class the signs point to: a +1 weight pushes towards it. None means
        ``classes_[1]`` (with labels other than {0, 1} / {−1, +1} a
        :class:`~robustsvm.exceptions.SignDirectionWarning` then says so).
        ``classes_``, ``coef_`` and ``decision_function`` keep scikit-learn's
        orientation to ``classes_[1]``: with ``positive_class=classes_[0]`` a
        +1 sign makes the corresponding ``coef_`` entry ≤ 0. Two classes only:
        each one-vs-rest model's signs point to its own class.
    class_weight : None, "balanced" or dict, optional
        scikit-learn's meaning: the loss term of sample ``i`` is weighted by
        ``class_weight[y_i] · sample_weight_i``; ``"balanced"`` gives class ``c``
        the weight ``n / (K · n_c)``. Every class's one-vs-rest model uses the
        same per-sample weights (those of the sample's own class).
    probability : bool, default False
        Fit Platt's sigmoid on decision values of a 5-fold internal cross-validation (stratified, not
        shuffled) as scikit-learn's ``SVC`` does, for :meth:`predict_proba` and :meth:`predict_log_proba`;
        the classifier itself is the fit on all the data. Costs five more fits. With ``loss="logistic"``
        the probabilities are the model's own ``σ(f(x))`` without it.
    warm_start : bool, default False
        Start each ``fit`` from the previous fit's dual point where the backend
        takes one (``robust-dcd``) and the samples are as many; other backends
        start afresh (scikit-learn's meaning, like solvers that ignore it).
    bounds, constraints : optional
        Bounds ``l ≤ w ≤ u`` (meeting ``signs``) and linear constraints (``LinearConstraint``, ``rs.ordered``) as
        in :class:`~robustsvm.Problem`, towards ``positive_class`` like signs; ``PerClass`` as for signs.
    uncertainty : UncertaintySet, DistributionalSet or PerClass, optional
        The set ``V`` and radius ``r`` around every training sample (``rs.Box(0.1)``, ``rs.Ball(0.1)``, ...); or
        a set of distributions around the sample (``rs.Wasserstein(eps)``: hinge or logistic loss; ``fit(radius=)``
        replaces ``eps``, one value). A per-sample radius is better passed to :meth:`fit` as ``radius=`` so that
        cross-validation slices it. With more than two classes, one set for every class's model, or one per
        class with :class:`~robustsvm.estimators.multiclass.PerClass`.
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
        A backend name from ``rs.solvers()``, or ``"auto"``: the backend with the smallest predicted time among
        ``dcd``, ``robust-dcd``, ``feature-ipm`` and ``clarabel`` that accept the model, by a cost model
        fitted to a grid of shapes (:func:`robustsvm.solve_path.choose_backend`, ``docs/auto.md``). When the chosen
        backend stops short of its certified tolerance (``robust-dcd`` on ill-conditioned models: a tiny
        λ2, nearly separable data), ``"auto"`` refits with ``clarabel`` and keeps that answer;
        ``solution_.auto_fallback`` then records the first attempt (status, relative gap, time).
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
    missing : {"error", "uncertain", "conditional_mean", "mean", "drop"}, default "error"
        What NaN in a dense ``X`` means. ``"error"``: a ``ValueError`` naming the columns.
        ``"uncertain"``: missing values as uncertainty (Shivaswamy et al., 2006): a Gaussian is fitted to the training
        rows by EM, each row with missing values is moved to its conditional mean given its observed values and gets
        an ellipsoid over its missing coordinates (shape the conditional covariance, radius ``√(χ²_k⁻¹(missing_level))``
        for ``k`` missing values; :func:`robustsvm.missing_as_uncertainty`), plus ``uncertainty`` when it is given
        (their Minkowski sum ``SetSum``), solved by the conic path. ``"conditional_mean"``: the
        same centres without the sets (imputation by the EM Gaussian's conditional means). ``"mean"``: the column
        means of the observed values. ``"drop"``: fit on the complete rows only (complete-case analysis).
        :meth:`predict` and :meth:`decision_function` replace a missing value by its conditional mean
        under the fitted Gaussian (``"uncertain"``, ``"conditional_mean"``) or by the column mean of the rows fitted on
        (``"mean"``, ``"drop"``): ``imputation_``.
    missing_level : float in (0, 1), default 0.9
        With ``missing="uncertain"``: the probability that a row's set holds its true values.

    Attributes
    ----------
    classes_ : ndarray of shape (K,)
        The labels, sorted; with two, ``classes_[1]`` is the positive class.
    coef_ : ndarray of shape (1, n_features) or (K, n_features)
        The weights ``w`` (linear models and the linear kernel), oriented to
        ``classes_[1]``; with K > 2 classes row ``k`` is the model of
        ``classes_[k]`` against the rest.
    intercept_ : ndarray of shape (1,) or (K,)
        The intercept ``b``.
    dual_coef_, support_vectors_ : ndarray
        The kernel expansion ``f(x) = Σ_j a_j k(x, x_j) + b`` (kernel models).
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Present when ``X`` was a DataFrame with string column names.
    solution_ : Solution
        The backend's result: ``status``, ``objective``, ``gap``, timings. With
        K > 2 classes, the per-class solution of largest relative gap (the
        least certain one).
    solutions_ : list of Solution
        One certified solution per binary model (one for two classes, K for K).
    gap_ : float
        The largest duality gap of ``solutions_``: every model is certified
        within it.
    uncertainty_ : UncertaintySet, list or None
        The sets the fit used (one per sample with ``missing="uncertain"``), as ``robust_check`` reads them.
    sigmoids_ : list of Sigmoid
        With ``probability=True``: Platt's sigmoid of each model.
    imputation_ : ConditionalGaussian
        With ``missing`` other than ``"error"``: the Gaussian whose conditional means fill missing values
        at prediction (a diagonal covariance, i.e. the column means, for ``"mean"`` and ``"drop"``).
    """

    #: the parameters' types and ranges, checked by scikit-learn's ``_validate_params`` when ``fit`` starts (the
    #: model's own terms — signs, bounds, positive_class — are validated where the model is normalized)
    _parameter_constraints: dict = {  # noqa: RUF012 - scikit-learn reads this class attribute
        "loss": [StrOptions(set(LOSSES)), Loss],
        "l2": [Interval(Real, 0, None, closed="left")],
        "l1": [Interval(Real, 0, None, closed="left")],
        "signs": "no_validation",
        "uncertainty": [UncertaintySet, DistributionalSet, PerClass, None],
        "fit_intercept": [_TrueOrFalse()],
        "intercept_l2": [Interval(Real, 0, None, closed="neither"), None],
        "kernel": [Kernel, None],
        "solver": [str],
        "solver_options": [dict, None],
        "positive_class": "no_validation",
        "class_weight": [StrOptions({"balanced"}), Mapping, None],
        "probability": ["boolean"],
        "warm_start": ["boolean"],
        "missing": [StrOptions(set(MISSING_MODES))],
        "missing_level": [Real],
        "bounds": "no_validation",
        "constraints": "no_validation",
    }

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
        class_weight: Any = None,
        probability: bool = False,
        warm_start: bool = False,
        missing: str = "error",
        missing_level: float = 0.9,
        bounds: Any = None, constraints: Any = None,
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
        self.class_weight = class_weight
        self.probability = probability
        self.warm_start = warm_start
        self.missing = missing
        self.missing_level = missing_level
        self.bounds, self.constraints = bounds, constraints

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = True
        tags.input_tags.sparse = True
        tags.input_tags.allow_nan = self.missing != "error"
        return tags

    # ---------------------------------------------------------------- model
    def _loss(self) -> Loss:
        return self.loss if isinstance(self.loss, Loss) else LOSSES[self.loss]()

    def _check_uncertainty(self, radius: Any, n: int, unc: Any = None) -> Any:
        """Validate the per-sample ``radius`` of :meth:`fit` against the set; the radius to solve with (or None)."""
        if radius is None:
            if unc is not None and np.ndim(unc.radius) == 1 and np.shape(unc.radius)[0] != n:
                raise ValueError(
                    f"uncertainty.radius has {np.shape(unc.radius)[0]} values but X has {n} samples; pass a "
                    "per-sample radius to fit(..., radius=...) so that it follows the samples"
                )
            return None
        check_radius_applies(unc, radius)
        return sample_radii(radius, n)

    def _intercept(self) -> bool | L2:
        """``True`` (free ``b``), ``False`` (``b = 0``) or ``L2(μ)`` from ``fit_intercept`` and ``intercept_l2``."""
        fit, mu = self.fit_intercept, self.intercept_l2  # their types and ranges: _parameter_constraints
        if mu is None:
            return bool(fit)
        if not fit:
            raise ValueError(f"intercept_l2={mu!r} asks for a ridge intercept but fit_intercept=False; "
                             "set fit_intercept=True or intercept_l2=None")
        return L2(float(mu))

    def make_problem(self) -> Problem:
        """The :class:`~robustsvm.Problem` this estimator fits (a per-sample radius of :meth:`fit` is passed to
        :meth:`Problem.solve`, the set itself is never changed); with more than two classes, the model
        each one-vs-rest fit starts from (per-class signs or sets are given to it by :meth:`fit`)."""
        signs = None if isinstance(self.signs, PerClass) else self.signs
        unc = None if isinstance(self.uncertainty, PerClass) else self.uncertainty
        bounds, constraints = ((None if isinstance(v, PerClass) else v) for v in (self.bounds, self.constraints))
        return self._problem(signs, unc, self.positive_class, (bounds, constraints))

    def _problem(self, signs: Any, uncertainty: Any, positive_class: Any, weights: tuple = (None, None)) -> Problem:
        """The binary model with these signs, set, positive class, ``weights`` (bounds, constraints) and the rest."""
        intercept: bool | L2 = self._intercept()
        penalty = L2(float(self.l2)) + L1(float(self.l1))
        return Problem(
            loss=self._loss(),
            penalty=penalty,
            signs=signs,
            bounds=weights[0],
            constraints=weights[1],
            uncertainty=uncertainty,
            intercept=intercept,
            kernel=self.kernel,
            positive_class=positive_class,
        )

    # ------------------------------------------------------------------ fit
    def fit(self, X: Any, y: Any, sample_weight: Any = None, radius: Any = None,
            feature_names: Any = None) -> RobustSVC:
        """Fit the model: one binary model for two classes, one per class (against the rest) for more.

        Parameters
        ----------
        X : array-like, DataFrame or scipy.sparse matrix of shape (n, d)
        y : array-like of shape (n,)
            Two or more distinct labels.
        sample_weight : array-like of shape (n,), optional
            Non-negative weights ``s_i`` of the loss terms (multiplied by ``class_weight``).
        radius : float or array-like of shape (n,), optional
            Radius ``r_i`` of each sample's uncertainty set, overriding
            ``uncertainty.radius``.
        feature_names : sequence of str, optional
            The column names of a dask array ``X`` (signs by name); in memory, give a DataFrame.

        Returns
        -------
        self
        """
        self._validate_params()
        if is_dask_array(X):
            return self._fit_dask(X, y, sample_weight, radius, feature_names)
        if feature_names is not None:
            raise ValueError("feature_names applies to a dask array X; give a DataFrame for names in memory")
        X, y = validate_data(self, numeric_columns(X), check_no_missing_labels(y), accept_sparse="csr",
                             dtype=np.float64, ensure_min_samples=1, ensure_all_finite=False)
        X_given = X
        if self.missing == "error" or hasattr(X, "tocsr"):
            check_finite(X, getattr(self, "feature_names_in_", None), remedy=estimator_missing_remedy(X))
        check_classification_targets(y)
        classes = np.unique(y)
        if classes.size < 2:
            raise ValueError(f"RobustSVC needs y with at least two classes, got {classes.size} class "
                             "(one class cannot be separated from nothing)")
        user_weight, y_given = sample_weight, y
        sw = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
        sw = sw * class_sample_weight(self.class_weight, classes, y)
        if np.unique(y[sw > 0]).size < 2:
            raise ValueError("the samples with positive sample_weight hold only one class; two classes are needed")
        X, y, sw, sets = self._missing_rows(X, y, sw, radius)
        previous = self._previous_solutions(classes)
        if classes.size == 2:
            for spec, what in ((self.signs, "signs"), (self.uncertainty, "uncertainty"), (self.bounds, "bounds"),
                               (self.constraints, "constraints")):
                if isinstance(spec, PerClass):
                    raise ValueError(f"{what}=PerClass(...) needs more than two classes; with two, give the "
                                     f"{what} of the one model (and positive_class for the class signs point to)")
            targets = [(y, self.signs, self.uncertainty if sets is None else sets, self.positive_class)]
        else:
            if self.positive_class is not None:
                raise ValueError(f"positive_class={self.positive_class!r} applies to two classes; with "
                                 f"{classes.size}, the signs of each one-vs-rest model point to its own class")
            targets = [((y == c).astype(np.intp), for_class(self.signs, c, classes, name="signs"),
                        sets if sets is not None else for_class(self.uncertainty, c, classes, name="uncertainty"),
                        None) for c in classes]
        weights = [(for_class(self.bounds, c, classes, name="bounds"), for_class(
            self.constraints, c, classes, name="constraints")) for c in (classes[1:] if classes.size == 2 else classes)]
        solutions = []
        for k, (y_k, signs, unc, positive) in enumerate(targets):  # a loop: warnings point to the caller of fit
            with multiclass.one_vs_rest_reports(classes, k):
                checked = self._check_uncertainty(radius, X.shape[0], None if sets is not None else unc)
                solutions.append(self._fit_binary(X, y_k, sw, checked, signs, unc, positive,
                                                  None if previous is None else previous[k], weights[k]))
        self.classes_ = classes
        if classes.size > 2:  # each model's summary names its class
            multiclass.name_one_vs_rest(solutions, classes)
        self._store(solutions)
        multiclass.warn_if_uninformative(self, X, y, sw)
        if self.probability or self._loss().gives_probability:  # a logistic model's own σ(f(x)): no Platt scaling
            self.sigmoids_ = (self._platt_sigmoids(X_given, y_given, user_weight, radius) if self.probability
                              else [calibration.Sigmoid(-1.0, 0.0)] * len(solutions))
        elif hasattr(self, "sigmoids_"):
            del self.sigmoids_
        return self

    def _missing_rows(self, X: Any, y: np.ndarray, sw: np.ndarray, radius: Any) -> tuple:
        """``(X, y, sample weights, per-row sets or None)`` to fit on, by ``missing``; sets ``imputation_``."""
        if hasattr(self, "imputation_"):
            del self.imputation_
        if self.missing == "error" or hasattr(X, "tocsr"):  # sparse: NaN was refused by check_finite
            return X, y, sw, None
        X = check_incomplete(X)
        if self.missing in ("uncertain", "conditional_mean") and not np.isnan(X).any():
            try:  # nothing missing to fit on: the complete rows' (shrunk) Gaussian imputes at prediction
                self.imputation_ = fit_gaussian(X, method="complete")
            except ValueError:
                self.imputation_ = _column_means(X)
            return X, y, sw, None
        if self.missing == "conditional_mean":
            self.imputation_ = fit_gaussian(X)
            return self.imputation_.impute(X), y, sw, None
        if self.missing == "uncertain":
            if radius is not None:
                raise ValueError("missing='uncertain' sets each row's radius from missing_level; fit(radius=) "
                                 "does not apply")
            mv = missing_as_uncertainty(X, level=self.missing_level)
            self.imputation_ = mv.gaussian
            return mv.X, y, sw, mv.with_noise(self.uncertainty)  # uncertainty + each row's ellipsoid
        keep = np.ones(X.shape[0], dtype=bool) if self.missing == "mean" else ~np.isnan(X).any(axis=1)
        if np.unique(y[keep & (sw > 0)]).size < 2:
            raise ValueError(f"missing='drop' leaves {int(keep.sum())} complete rows, with fewer than two classes")
        self.imputation_ = _column_means(X[keep])
        return self.imputation_.impute(X[keep]), y[keep], sw[keep], None

    def _fit_dask(self, X: Any, y: Any, sample_weight: Any, radius: Any, names: Any) -> RobustSVC:
        """Fit one binary model on a dask array with a distributed backend (``solver="auto"`` chooses it; the
        cluster is ``solver_options["client"]`` or the current client); ``class_weight`` computes the labels."""
        given = {"probability": self.probability, "warm_start": self.warm_start, "missing": self.missing != "error"}
        for name in (name for name, value in given.items() if value):
            raise ValueError(f"{name} is not available on a dask array X (the fit is distributed); fit in memory")
        for spec, what in ((self.signs, "signs"), (self.uncertainty, "uncertainty")):
            if isinstance(spec, PerClass):
                raise ValueError(f"{what}=PerClass(...) needs more than two classes; a dask array X is fitted "
                                 "with two")
        problem = self._problem(self.signs, self.uncertainty, self.positive_class, (self.bounds, self.constraints))
        sol = solve_path.solve(problem, X, y, self.solver, radius=radius, feature_names=names, stacklevel=3,
                               sample_weight=weighted_by_class(self.class_weight, y, sample_weight),
                               **dict(self.solver_options or {}))
        for name in ("feature_names_in_", "sigmoids_"):
            if hasattr(self, name):
                delattr(self, name)
        self.n_features_in_ = int(X.shape[1])
        self.classes_ = np.asarray(sol.classes)
        self._store([sol])
        return self

    def _previous_solutions(self, classes: np.ndarray) -> list | None:
        """The solutions of the previous fit, one per binary model, when ``warm_start`` reuses them."""
        previous = getattr(self, "solutions_", None)
        wanted = self.warm_start or (self.solver_options or {}).get("warm_start") is True
        if not wanted or previous is None or not np.array_equal(getattr(self, "classes_", ()), classes):
            return None
        return previous

    def _fit_binary(self, X, y, sw, radius, signs, uncertainty, positive_class, previous, weights=(None, None)):
        """Solve one binary model (``classes[1]`` positive; ``weights``: bounds, constraints) with the solver."""
        n = X.shape[0]
        problem = self._problem(signs, uncertainty, positive_class, weights)
        names = getattr(self, "feature_names_in_", None)
        options = dict(self.solver_options or {})
        alpha = None if previous is None else previous.dual_alpha  # the previous fit's dual point (same n)
        dual_start = alpha if alpha is not None and len(alpha) == n else None
        return solve_path.solve(problem, X, y, self.solver, sample_weight=sw, feature_names=names, radius=radius,
                                option_defaults=solve_path.tight_defaults(problem), dual_start=dual_start,
                                stacklevel=3, **options)

    def _store(self, solutions: list) -> None:
        """The fitted attributes of one solution per binary model."""
        self.solutions_ = solutions
        self.solution_ = max(solutions, key=lambda sol: sol.relative_gap if np.isfinite(sol.gap) else np.inf)
        self.gap_ = float(max(sol.gap for sol in solutions))
        unc = [sol.problem.uncertainty for sol in solutions]
        self.uncertainty_ = unc[0] if len(unc) == 1 else unc
        self.intercept_ = np.array([sol.b for sol in solutions])
        for name in ("coef_", "dual_coef_", "support_vectors_"):
            if hasattr(self, name):
                delattr(self, name)
        if all(sol.w is not None for sol in solutions):
            self.coef_ = np.vstack([sol.w for sol in solutions])
        elif len(solutions) == 1:
            sol = solutions[0]
            self.dual_coef_ = np.asarray(sol.dual_coef, dtype=np.float64).ravel()
            self.support_vectors_ = sol.support_vectors
            if isinstance(self.kernel, Linear):
                self.coef_ = np.asarray(self.support_vectors_.T @ self.dual_coef_).ravel()[None, :]
        iterations = [sol.iterations for sol in solutions]
        self.n_iter_ = iterations[0] if len(iterations) == 1 else np.asarray(iterations)

    def decision_function(self, X: Any) -> np.ndarray:
        """``f(x) = x·w + b`` (or ``Σ_j a_j k(x, x_j) + b``); positive for ``classes_[1]``.

        Returns
        -------
        ndarray of shape (n,), or (n, K) with K > 2 classes (column k: the model of ``classes_[k]``)
        """
        check_is_fitted(self, "solution_")
        if is_dask_array(X) and hasattr(self, "coef_") and len(self.solutions_) == 1:  # lazy, one task per chunk
            return self.solution_.decision_function(X)
        X = validate_data(self, numeric_columns(X), accept_sparse="csr", dtype=np.float64, reset=False,
                          ensure_all_finite=False)
        if hasattr(self, "imputation_") and not hasattr(X, "tocsr") and np.isnan(X).any():
            X = self.imputation_.impute(X)  # conditional means under the fitted Gaussian (column means: "mean")
        check_finite(X, getattr(self, "feature_names_in_", None))
        if hasattr(self, "coef_"):
            scores = np.asarray(X @ self.coef_.T) + self.intercept_
        else:  # kernel expansions, one per model
            scores = np.column_stack([
                np.asarray(self.kernel(X, sol.support_vectors) @ np.asarray(sol.dual_coef).ravel()).ravel() + sol.b
                for sol in self.solutions_])
        return scores[:, 0] if len(self.solutions_) == 1 else scores

    def predict(self, X: Any) -> np.ndarray:
        """``classes_[1]`` where ``f(x) > 0``, else ``classes_[0]``; with K > 2 classes, the largest ``f_k(x)``."""
        scores = self.decision_function(X)
        if is_dask_array(scores):
            return self.solution_.predict(X)
        if scores.ndim == 1:
            return self.classes_[(scores > 0).astype(np.intp)]
        return self.classes_[np.argmax(scores, axis=1)]

    # -------------------------------------------------------- probabilities
    def _platt_sigmoids(self, X, y, sample_weight, radius) -> list:
        """Platt's sigmoid of each model, fitted on out-of-fold decision values (``PROBABILITY_FOLDS`` folds)."""
        from sklearn.base import clone
        from sklearn.model_selection import StratifiedKFold

        n = X.shape[0]
        sw = None if sample_weight is None else _check_sample_weight(sample_weight, X, dtype=np.float64)
        r = None if radius is None else np.broadcast_to(np.asarray(radius, dtype=np.float64), (n,))
        inner = clone(self).set_params(probability=False, warm_start=False)
        folds = StratifiedKFold(n_splits=PROBABILITY_FOLDS).split(np.zeros((n, 1)), y)
        decision = np.empty((n, len(self.solutions_)))
        for train, test in folds:
            fitted = inner.fit(self._named_rows(X, train), y[train], sample_weight=None if sw is None else sw[train],
                               radius=None if r is None else r[train])
            if not np.array_equal(fitted.classes_, self.classes_):
                raise ValueError("probability=True needs every class in every one of the "
                                 f"{PROBABILITY_FOLDS} internal folds")
            decision[test] = fitted.decision_function(self._named_rows(X, test)).reshape(len(test), -1)
        if decision.shape[1] == 1:
            return [calibration.fit_sigmoid(decision[:, 0], y == self.classes_[1], sw)]
        return [calibration.fit_sigmoid(decision[:, k], y == c, sw) for k, c in enumerate(self.classes_)]

    def _named_rows(self, X: Any, rows: np.ndarray) -> Any:
        """Rows of the validated ``X``, as a DataFrame with ``feature_names_in_`` when the fit had names
        (so that signs given by name resolve in the internal folds too)."""
        names = getattr(self, "feature_names_in_", None)
        if names is None:
            return X[rows]
        import pandas as pd

        part = X[rows]
        if hasattr(part, "tocsr"):
            return pd.DataFrame.sparse.from_spmatrix(part, columns=list(names))
        return pd.DataFrame(part, columns=list(names))

    def _has_probability(self) -> bool:
        if not (self.probability or self._loss().gives_probability):
            raise AttributeError("predict_proba is available with probability=True or loss='logistic'")
        return True

    @available_if(_has_probability)
    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities from Platt's sigmoid of the decision values (``probability=True``).

        Two classes: ``P(classes_[1] | x) = 1/(1 + exp(A f(x) + B))``. More: one sigmoid per
        one-vs-rest model, each row divided by its sum.

        Returns
        -------
        ndarray of shape (n, K), rows summing to 1
        """
        check_is_fitted(self, "sigmoids_")
        scores = np.asarray(self.decision_function(X)).reshape(-1, len(self.solutions_))
        if len(self.sigmoids_) == 1:
            p1 = self.sigmoids_[0].probability(scores[:, 0])
            return np.column_stack([1.0 - p1, p1])
        return calibration.normalized_probabilities(
            np.column_stack([s.probability(scores[:, k]) for k, s in enumerate(self.sigmoids_)]))

    @available_if(_has_probability)
    def predict_log_proba(self, X: Any) -> np.ndarray:
        """``log`` of :meth:`predict_proba` (for two classes, computed without forming ``1 − p``)."""
        check_is_fitted(self, "sigmoids_")
        if len(self.sigmoids_) == 1:
            scores = self.decision_function(X)
            a, b = self.sigmoids_[0].a, self.sigmoids_[0].b
            # log(1 − p) = log p(−f) for the sigmoid with (−a, −b)
            return np.column_stack([calibration.Sigmoid(-a, -b).log_probability(scores),
                                    self.sigmoids_[0].log_probability(scores)])
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

"""What the command line adds to a model fitted on a table: class weights, missing values as uncertainty, widths.

- ``--class-weight balanced`` or ``--class-weight LABEL=WEIGHT,...``: the loss term of row ``i`` is weighted
  by ``w_{y_i}`` (scikit-learn's meaning; ``balanced`` gives class ``c`` of ``K`` the weight ``n / (K n_c)``), passed to
  the solve as ``sample_weight``. The weights by label are stored in the solution (``extra["class_weight"]``),
  so ``validate`` and ``certify`` weigh the rows as ``fit`` did.
- ``--missing uncertain --missing-level L``: ``RobustSVC(missing="uncertain", missing_level=L)`` on the
  preprocessed table, whose missing values are kept (not imputed): each incomplete row is moved to its
  conditional mean under a Gaussian fitted by EM and gets an ellipsoid over its missing coordinates
  (Shivaswamy et al., 2006). The Gaussian is stored (``extra["missing"]``), so ``validate``, ``certify`` and
  ``predict`` replace a missing value by the same conditional mean.
- ``--widths NAME=VALUE,...``: the half-widths ``δ_h`` of a box ``--uncertainty box:R`` by feature (a
  categorical column names all its levels); unnamed features keep ``δ_h = 1`` and ``0`` trusts a feature.
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from .parsing import parse_weights

__all__ = ["add_arguments", "box_with_widths", "class_weights", "estimator", "parse_class_weight", "parse_widths",
           "restore_missing", "row_weights", "solve", "store_sections", "stored_sample_weight"]

#: where the stored solution keeps the class weights and the Gaussian of the missing values
CLASS_WEIGHT_KEY, MISSING_KEY = "class_weight", "missing"


def parse_class_weight(text: str) -> Any:
    """``balanced`` → ``"balanced"``; ``"yes=2,no=1"`` → ``{"yes": 2.0, "no": 1.0}`` (labels as written)."""
    if text.strip() == "balanced":
        return "balanced"
    return parse_weights(text, what="class weight", option="--class-weight",
                         usage="use balanced or LABEL=WEIGHT,... with finite non-negative weights")


def parse_widths(text: str) -> dict[str, float]:
    """``"age=0.5,smoker=0"`` → ``{"age": 0.5, "smoker": 0.0}`` (zero: a trusted feature)."""
    return parse_weights(text, what="width", option="--widths",
                         usage="use FEATURE=WIDTH,... with finite non-negative widths (0 trusts the feature)")


def _level(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"--missing-level must be a probability in (0, 1), got {text!r}")
    return value


def add_arguments(p: argparse.ArgumentParser) -> None:
    """``--class-weight``, ``--missing``, ``--missing-level`` and ``--widths`` (``fit`` and ``cv``)."""
    g = p.add_argument_group("weights, missing values and widths")
    g.add_argument("--class-weight", type=parse_class_weight, metavar="balanced|LABEL=WEIGHT,...",
                   help="weigh each row's loss by its class: balanced (n / (K n_c), K classes) or LABEL=WEIGHT pairs "
                        "(RobustSVC's class_weight; with more than two classes, every one-vs-rest model weighs a "
                        "row by its own class)")
    g.add_argument("--missing", choices=("error", "uncertain"), default="error",
                   help="uncertain: a missing value is not imputed but becomes an ellipsoid around its conditional "
                        "mean (RobustSVC(missing='uncertain')); default: --impute decides")
    g.add_argument("--missing-level", type=_level, default=0.9, metavar="LEVEL",
                   help="with --missing uncertain: the probability that a row's set holds its true values "
                        "(default 0.9)")
    g.add_argument("--widths", type=parse_widths, metavar="FEATURE=WIDTH,...",
                   help="half-widths of the box of --uncertainty box:R by feature (a categorical column: all its "
                        "levels); unnamed features 1, 0 trusts a feature")


# ------------------------------------------------------------------ class weights
def class_weights(spec: Any, y: np.ndarray, label_of: Any) -> dict | None:
    """The weight of each class as ``{label: weight}`` (``balanced``: ``n / (K n_c)``), or None without ``spec``.

    ``label_of(text)`` is the label of ``y`` written ``text`` on the command line (a ``ValueError`` otherwise).
    """
    if spec is None:
        return None
    classes, counts = np.unique(np.asarray(y), return_counts=True)
    plain = [c.item() if isinstance(c, np.generic) else c for c in classes]
    if spec == "balanced":
        return {c: float(len(y) / (len(classes) * n)) for c, n in zip(plain, counts, strict=True)}
    given = {label_of(k): v for k, v in spec.items()}
    return {c: float(given.get(c, 1.0)) for c in plain}


def row_weights(weights: dict, y: np.ndarray) -> np.ndarray:
    """The weight of each row: its label's entry of ``weights`` (labels compared as text, as JSON keeps them)."""
    table = {str(k): v for k, v in weights.items()}
    return np.asarray([table[str(v.item() if isinstance(v, np.generic) else v)] for v in np.asarray(y)],
                      dtype=np.float64)


def stored_sample_weight(solution: Any, y: Any) -> np.ndarray | None:
    """The row weights ``fit --class-weight`` used, recomputed from the labels ``y`` (None without them)."""
    stored = solution.extra.get(CLASS_WEIGHT_KEY)
    return None if stored is None or y is None else row_weights(stored, y)


# ------------------------------------------------------------------ widths
def box_with_widths(uncertainty: Any, widths: dict | None, rules: Any) -> Any:
    """The box of ``--uncertainty`` with the half-widths of ``--widths`` (feature or column names)."""
    from ..uncertainty import Box

    if widths is None:
        return uncertainty
    if type(uncertainty) is not Box:
        raise ValueError("--widths sets the half-widths of a box: give --uncertainty box:RADIUS")
    names = rules.feature_names
    delta = np.ones(len(names)) if uncertainty.widths is None else np.array(uncertainty.widths, dtype=np.float64)
    for key, width in widths.items():
        if key in names:
            delta[names.index(key)] = width
            continue
        rule = rules.column(key)
        if rule is None or rule.kind == "numeric":
            raise ValueError(f"--widths: {key!r} is not a feature of the model; features: {names}")
        for feature in rule.features:
            delta[names.index(feature)] = width
    return Box(uncertainty.radius, widths=delta)


# ------------------------------------------------------------------ solving
def solve(problem: Any, fitted: Any, args: argparse.Namespace, options: dict) -> Any:
    """The certified solution of ``problem`` on the preprocessed table ``fitted`` (``fit`` and the folds).

    Without ``--missing uncertain`` it is ``problem.solve`` with the class weights as ``sample_weight``;
    with it, ``RobustSVC(missing="uncertain")`` with the same model, whose Gaussian is stored.
    """
    weights = fitted.class_weight
    sw = None if weights is None else row_weights(weights, fitted.y)
    if getattr(args, "missing", "error") != "uncertain":
        sol = problem.solve(fitted.X, fitted.y, solver=args.solver, feature_names=fitted.names, sample_weight=sw,
                            **fitted.solve_options, **options)
    else:
        sol = _solve_missing(problem, fitted, args, options, sw)
    if weights is not None:
        sol.extra[CLASS_WEIGHT_KEY] = {str(k): v for k, v in weights.items()}
    return sol


def estimator(problem: Any, fitted: Any, args: argparse.Namespace, options: dict) -> Any:
    """The :class:`~robustsvm.RobustSVC` of ``problem`` with the table's options (``cv``, and ``fit`` with more than
    two classes: its one-vs-rest models); ``--class-weight balanced`` is recomputed on the rows it is fitted on."""
    from ..estimators.robust_svc import RobustSVC

    mode, mu = problem.intercept_mode
    given = fitted.per_class  # --signs-for and the like: PerClass values
    return RobustSVC(loss=problem.loss, l2=problem.penalty.l2, l1=problem.penalty.l1,
                     signs=given.get("signs", problem.signs),
                     uncertainty=given.get("uncertainty", problem.uncertainty), fit_intercept=mode != "none",
                     intercept_l2=mu if mode == "l2" else None, kernel=problem.kernel, solver=args.solver,
                     solver_options=options or None, positive_class=fitted.solve_options.get("positive_class"),
                     class_weight="balanced" if args.class_weight == "balanced" else fitted.class_weight,
                     probability=bool(getattr(args, "probability", False)),
                     missing=args.missing, missing_level=args.missing_level, bounds=given.get("bounds", problem.bounds),
                     constraints=given.get("constraints", problem.constraints or None))


def store_sections(est: Any, fitted: Any) -> None:
    """The table's sections in each solution of the fitted ``RobustSVC`` ``est`` (as ``fit`` stores them): the
    preprocessing, the class weights, Platt's sigmoid of each model (towards its ``+1`` class) and the Gaussian of
    the missing values."""
    from ..estimators.robust_svc import PROBABILITY_FOLDS

    classes = est.classes_[1:] if len(est.solutions_) == 1 else est.classes_
    gaussian = getattr(est, "imputation_", None)
    for k, (sol, positive) in enumerate(zip(est.solutions_, classes, strict=True)):
        sol.extra["preprocessing"] = fitted.rules.to_dict()
        if fitted.class_weight is not None:
            sol.extra[CLASS_WEIGHT_KEY] = {str(c): v for c, v in fitted.class_weight.items()}
        if est.probability:  # for predict's probability columns
            sol.extra["calibration"] = {"method": "platt", "a": float(est.sigmoids_[k].a),
                                        "b": float(est.sigmoids_[k].b), "folds": PROBABILITY_FOLDS,
                                        "positive": positive.item() if isinstance(positive, np.generic) else positive}
        if est.missing == "uncertain" and gaussian is not None:
            sol.extra[MISSING_KEY] = {"mode": "uncertain", "level": float(est.missing_level),
                                      "mean": gaussian.mean.tolist(), "covariance": gaussian.covariance.tolist()}


def _solve_missing(problem: Any, fitted: Any, args: argparse.Namespace, options: dict, sw: Any) -> Any:
    import pandas as pd

    from ..estimators.robust_svc import RobustSVC

    mode, mu = problem.intercept_mode
    est = RobustSVC(loss=problem.loss, l2=problem.penalty.l2, l1=problem.penalty.l1, signs=problem.signs,
                    uncertainty=problem.uncertainty, fit_intercept=mode != "none",
                    intercept_l2=mu if mode == "l2" else None, kernel=problem.kernel, solver=args.solver,
                    solver_options=options or None, positive_class=fitted.solve_options.get("positive_class"),
                    missing="uncertain", missing_level=args.missing_level, bounds=problem.bounds,
                    constraints=problem.constraints or None)
    try:
        est.fit(pd.DataFrame(fitted.X, columns=fitted.names), fitted.y, sample_weight=sw)
    except ValueError as exc:
        if problem.uncertainty is not None and "uncertainty" in str(exc):
            raise ValueError(f"--missing uncertain with --uncertainty: this version cannot combine the sets of "
                             f"the missing values with a measurement set ({exc})") from exc
        raise
    sol = est.solution_
    gaussian = est.imputation_
    fitted.X = gaussian.impute(fitted.X)  # the centres the model was fitted at (what validate sees again)
    sol.extra[MISSING_KEY] = {"mode": "uncertain", "level": float(args.missing_level),
                              "mean": gaussian.mean.tolist(), "covariance": gaussian.covariance.tolist()}
    return sol


def restore_missing(solution: Any, X: np.ndarray) -> np.ndarray:
    """``X`` with each missing value replaced by its conditional mean under the stored Gaussian (``--missing
    uncertain``); ``X`` as it is for a model fitted without it."""
    stored = solution.extra.get(MISSING_KEY)
    if stored is None or not np.isnan(X).any():
        return X
    from ..uncertainty.missing import ConditionalGaussian

    gaussian = ConditionalGaussian(np.asarray(stored["mean"], dtype=np.float64),
                                   np.asarray(stored["covariance"], dtype=np.float64))
    return gaussian.impute(X)

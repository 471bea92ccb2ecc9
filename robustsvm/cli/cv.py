"""``robustsvm cv DATA``: choose λ2 and the radius by cross-validation with a scikit-learn scorer.

The score is that of the whole procedure ``fit`` + ``predict`` on rows it has not seen. scikit-learn's
``GridSearchCV`` runs :class:`~robustsvm.cli.table_classifier.TableClassifier` over the grid ``--l2-grid`` ×
``--radius-grid`` (the set of ``--uncertainty`` with each radius; radius 0 is the model without it) on
``StratifiedKFold(--folds, shuffle=True, random_state=--seed)`` with the scorer ``--scoring``
(``roc_auc``, ``balanced_accuracy``, ``accuracy``, ``neg_brier_score`` or ``neg_log_loss`` with
``--probability``, or any name of ``sklearn.metrics.get_scorer_names()``): in each training fold the
preprocessing statistics (the fill values of ``--impute median``, the z-score means and scales) are learned
from the fold's rows alone, the ``--ordered`` constraints rebuilt with the fold's scales, and
:class:`~robustsvm.RobustSVC` fitted on them (``--class-weight balanced`` recomputed, the Gaussian of
``--missing uncertain`` fitted, Platt's sigmoid of ``--probability`` fitted on the fold); the held-out rows
go through the fold's rules. The columns, their categories and reference levels are the whole table's (the
feature space, label-free, so that a sign or a bound by name means the same in every fold), and
``--impute drop-rows`` drops its rows once, before the folds (each held-out row is scored). The chosen point
is refitted on every row with ``fit``'s preprocessing (the whole table's statistics); its certificate (status,
gap) is printed, and ``--output`` stores it as ``fit --output`` does.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import numpy as np

__all__ = ["add_arguments", "fold_preprocessing", "run"]


def _grid(text: str) -> list[float]:
    try:
        values = [float(t) for t in text.split(",") if t.strip()]
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not a comma-separated list of numbers: {text!r}") from exc
    if not values or not all(np.isfinite(v) and v >= 0 for v in values):
        raise argparse.ArgumentTypeError(f"a grid is a non-empty list of finite non-negative numbers, got {text!r}")
    return sorted(set(values))


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options of ``cv`` beside the data, model, preprocessing and weight options of ``fit``."""
    g = p.add_argument_group("cross-validation")
    g.add_argument("--l2-grid", type=_grid, default=None, metavar="L2,...",
                   help="the values of λ2 to try (default: --l2 alone)")
    g.add_argument("--radius-grid", type=_grid, default=None, metavar="R,...",
                   help="the radii of the --uncertainty set to try, 0 for none (default: its radius alone)")
    g.add_argument("--scoring", default=None,
                   help="a scikit-learn scorer: roc_auc (the default with two classes), balanced_accuracy (the "
                        "default with more and --class-weight), accuracy (the default with more), neg_brier_score "
                        "or neg_log_loss (with --probability), roc_auc_ovr (more classes, with --probability), ...")
    g.add_argument("--folds", type=int, default=5, help="stratified folds (default 5)")
    g.add_argument("--seed", type=int, default=0, help="the seed of the shuffled folds (default 0)")


def _param_grid(problem: Any, args: argparse.Namespace) -> dict:
    grid: dict[str, list] = {"l2": args.l2_grid or [problem.penalty.l2]}
    if args.radius_grid is not None:
        if getattr(args, "uncertainty_for", None):
            raise ValueError("--radius-grid varies the radius of --uncertainty, one set for every model; "
                             "--uncertainty-for gives a class's model its own set: give one of the two")
        if problem.uncertainty is None:
            raise ValueError("--radius-grid varies the radius of a set: give its shape with --uncertainty KIND:R")
        grid["uncertainty"] = [None if r == 0 else problem.uncertainty.with_radius(r) for r in args.radius_grid]
    return grid


def run(args: argparse.Namespace, problem_from_args: Any, solver_options: Any, print_json: Any) -> int:
    """Run the search; print the chosen point, its mean CV score and the refit's certificate."""
    import warnings

    import pandas as pd
    from sklearn.base import clone
    from sklearn.model_selection import GridSearchCV, StratifiedKFold

    from ..exceptions import ConvergenceWarning
    from . import data as cli_data
    from .table_classifier import TableClassifier
    from .table_model import estimator, store_sections

    if args.folds < 2:
        raise ValueError(f"--folds must be at least 2, got {args.folds}")
    fitted = cli_data.prepare_fit(args)
    args.scoring = args.scoring or _default_scoring(fitted.n_classes, args.class_weight)
    problem = problem_from_args(args)
    scoring = (_scorer(args.scoring, fitted.y) if fitted.n_classes == 2 else
               _multiclass_scorer(args.scoring, getattr(args, "probability", False) or problem.loss.gives_probability))
    options = solver_options(args)
    grid = _param_grid(problem, args)
    model = estimator(problem, fitted, args, options)
    search = GridSearchCV(TableClassifier(fitted.rules, model, fitted.priors),
                          {f"{_INNER}{k}": v for k, v in grid.items()}, scoring=scoring,
                          cv=StratifiedKFold(args.folds, shuffle=True, random_state=args.seed), refit=False,
                          error_score="raise")
    rows = fitted.table.iloc[fitted.rows]  # --impute drop-rows: the rows with missing values left out, once
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        search.fit(rows, fitted.y)  # each training fold learns the preprocessing statistics of its rows
        chosen_params = {k.removeprefix(_INNER): v for k, v in search.best_params_.items()}
        best = clone(model).set_params(**chosen_params)  # the refit: fit's preprocessing, on every row
        best.fit(pd.DataFrame(fitted.X, columns=fitted.names), fitted.y)  # signs and bounds by feature name
    sol = best.solution_
    store_sections(best, fitted)
    chosen = {"l2": float(best.l2), "radius": _radius(best.uncertainty)}
    table = [{"l2": float(p[f"{_INNER}l2"]), "radius": _radius(p.get(f"{_INNER}uncertainty", model.uncertainty)),
              "mean_score": float(m), "std_score": float(s)}
             for p, m, s in zip(search.cv_results_["params"], search.cv_results_["mean_test_score"],
                                search.cv_results_["std_test_score"], strict=True)]
    in_folds = fold_preprocessing(fitted, args)
    notes = list(dict.fromkeys(fitted.warnings + [str(w.message) for w in caught]))
    for note in notes:
        print(f"warning: {note}", file=sys.stderr)
    if not args.json:
        _print_grid(args, fitted, table, chosen, float(search.best_score_), in_folds)
    from .table_model import restore_missing

    if len(best.solutions_) > 1:  # one model of each class against the rest
        from . import one_vs_rest

        return one_vs_rest.print_cv(args, best, fitted, table, chosen, float(search.best_score_), notes, print_json,
                                    in_folds)
    path = sol.to_json(args.output, restore_missing(sol, fitted.X), fitted.y) if args.output else None
    if args.json:
        print_json({"data": {"description": fitted.description, "feature_names": fitted.names},
                    "scoring": args.scoring, "folds": args.folds, "seed": args.seed, "grid": table,
                    "chosen": chosen, "cv_score": float(search.best_score_), "fold_preprocessing": in_folds,
                    "certificate": {"status": sol.status, "gap": sol.gap, "objective": sol.objective,
                                    "solver": sol.solver},
                    "w": None if sol.w is None else dict(zip(fitted.names, sol.w.tolist(), strict=True)),
                    "b": sol.b, "warnings": notes, "output": None if path is None else str(path)})
        return 0
    print(f"refit on all {fitted.X.shape[0]} rows: status {sol.status}, objective {sol.objective:.10g}, "
          f"gap {sol.gap:.3g} ({sol.solver})")
    if path is not None:
        print(f"solution written to {path}")
    return 0


#: the prefix of the estimator's parameters in the grid of the search (the folds' TableClassifier)
_INNER = "estimator__"


def fold_preprocessing(fitted: Any, args: argparse.Namespace) -> dict:
    """What each training fold learns from its own rows, and what comes from the whole table (``cv --json``'s
    ``fold_preprocessing``): ``learned`` lists ``fill`` (``--impute median``), ``mean`` and ``scale`` (the
    z-scores) and ``gaussian`` (``--missing uncertain``); ``rows_dropped_before_folds`` counts the rows
    ``--impute drop-rows`` leaves out before the folds are drawn."""
    rules = fitted.rules
    learned = (["fill"] if rules.impute == "median" else []) + (["mean", "scale"] if rules.standardize else [])
    learned += ["gaussian"] if getattr(args, "missing", "error") == "uncertain" else []
    return {"learned": learned, "from_whole_table": ["columns", "categories", "reference levels"],
            "rows_dropped_before_folds": int(len(fitted.table) - len(fitted.rows))}


def _fold_line(in_folds: dict) -> str:
    """``fold_preprocessing`` in words, one line."""
    words = {"fill": "fill values", "mean": "z-score means and scales",
             "gaussian": "the Gaussian of the missing values"}
    learned = ", ".join(words[k] for k in in_folds["learned"] if k in words) or "none (--no-standardize)"
    dropped = in_folds["rows_dropped_before_folds"]
    line = (f"preprocessing statistics learned in each training fold from its rows: {learned}; columns, categories "
            f"and reference levels from the whole table")
    return line + (f"; {dropped} row{'s' * (dropped != 1)} with missing values dropped before the folds"
                   if dropped else "")


def _default_scoring(n_classes: int, class_weight: Any) -> str:
    """``roc_auc`` for two classes; for more, ``balanced_accuracy`` with class weights, else ``accuracy``."""
    if n_classes == 2:
        return "roc_auc"
    return "accuracy" if class_weight is None else "balanced_accuracy"


#: scorers of scikit-learn that score two classes only, and what scores more (None: nothing close)
TWO_CLASS_SCORERS = {"roc_auc": "roc_auc_ovr with --probability", "average_precision": None, "f1": "f1_macro",
                     "precision": "precision_macro", "recall": "recall_macro", "jaccard": "jaccard_macro"}


def _print_grid(args: argparse.Namespace, fitted: Any, table: list, chosen: dict, score: float,
                in_folds: dict) -> None:
    """The data, the preprocessing (what the folds learn), each grid point's mean score ± its spread over the folds
    and the chosen point."""
    print(fitted.description)
    print(fitted.rules.describe())
    print(_fold_line(in_folds))
    for row in table:
        print(f"  l2 {row['l2']:<10g} radius {row['radius']:<10g} {args.scoring} {row['mean_score']:.4f} "
              f"± {row['std_score']:.4f}")
    print(f"chosen: l2 {chosen['l2']:g}, radius {chosen['radius']:g}; mean {args.scoring} over {args.folds} folds "
          f"{score:.4f}")


def _multiclass_scorer(name: str, probabilities: bool) -> str:
    """scikit-learn's scorer ``name`` for more than two classes; a scorer of two classes only, or one that needs
    probabilities when the models give none (no ``--probability``, a loss without them), is refused naming it."""
    from sklearn import metrics

    scorer = metrics.get_scorer(name)  # an unknown name is scikit-learn's ValueError listing the names
    if name in TWO_CLASS_SCORERS:
        instead = "" if TWO_CLASS_SCORERS[name] is None else f"{TWO_CLASS_SCORERS[name]}, "
        raise ValueError(f"--scoring {name} scores two classes; the labels hold more: use {instead}accuracy or "
                         "balanced_accuracy")
    probabilistic = getattr(scorer, "_response_method", None) == "predict_proba"
    if probabilistic and not probabilities:
        raise ValueError(f"--scoring {name} scores probabilities: add --probability (Platt's sigmoid of each "
                         "one-vs-rest model)")
    return name


#: scorers whose metric needs the positive label when the labels are text: built here with ``pos_label``
_POSITIVE_LABEL_SCORERS = {"neg_brier_score": ("brier_score_loss", "predict_proba", False),
                           "f1": ("f1_score", "predict", True), "precision": ("precision_score", "predict", True),
                           "recall": ("recall_score", "predict", True)}


def _scorer(name: str, y: Any) -> Any:
    """scikit-learn's scorer ``name``; those of :data:`_POSITIVE_LABEL_SCORERS` score ``classes[1]`` (the larger
    label, as ``RobustSVC`` orients its decision) also for text labels."""
    from sklearn import metrics

    metrics.get_scorer(name)  # an unknown name is scikit-learn's ValueError listing the names
    if name not in _POSITIVE_LABEL_SCORERS:
        return name
    function, response, greater = _POSITIVE_LABEL_SCORERS[name]
    positive = np.unique(np.asarray(y))[-1]
    return metrics.make_scorer(getattr(metrics, function), response_method=response, greater_is_better=greater,
                               pos_label=positive.item() if isinstance(positive, np.generic) else positive)


def _radius(uncertainty: Any) -> float:
    """The set's radius (0 without one); per class, the largest of the classes' radii."""
    from ..estimators.multiclass import PerClass

    if isinstance(uncertainty, PerClass):
        return max(_radius(u) for u in [*uncertainty.values.values(), uncertainty.default])
    return 0.0 if uncertainty is None else float(np.max(uncertainty.radius))

"""More than two classes on the command line: one model of each class against the rest.

With classes ``c_1 < … < c_K`` (K > 2) in the label column, ``fit`` and ``cv`` fit
:class:`~robustsvm.RobustSVC`, whose model k separates ``c_k`` (+1) from the other classes, each solved and
certified by the package's own duality gap; a +1 sign in model k is evidence for ``c_k``, and each model gets
``--signs``, ``--bounds`` and ``--uncertainty`` unless ``--signs-for``, ``--bounds-for`` or ``--uncertainty-for``
give it its own (:mod:`robustsvm.cli.per_class`). A row is predicted as the class of the largest decision value,
``argmax_k f_k(x)`` with ``f_k(x) = x·w_k + b_k``. ``--output`` writes the file of
:mod:`robustsvm.cli.one_vs_rest_file`; ``predict`` writes the argmax class and the K decision values, and
``validate`` re-checks each model on its own labels (its class against the rest).
"""

from __future__ import annotations

import argparse
import sys
import warnings
from typing import Any

import numpy as np

from .one_vs_rest_file import read, rest_labels, write

__all__ = ["fit", "print_cv", "run_fit", "run_predict", "run_validate", "training_report"]


def _plain(label: Any) -> Any:
    return label.item() if isinstance(label, np.generic) else label


# ------------------------------------------------------------------ fit
def fit(problem: Any, fitted: Any, args: argparse.Namespace, options: dict) -> Any:
    """``RobustSVC``'s one-vs-rest models of the preprocessed table (:func:`robustsvm.cli.table_model.estimator`),
    the table's sections stored in each solution; with ``--missing uncertain``, ``fitted.X`` becomes the rows'
    centres."""
    import pandas as pd

    from .table_model import estimator, store_sections

    est = estimator(problem, fitted, args, options)
    est.fit(pd.DataFrame(fitted.X, columns=fitted.names), fitted.y)  # signs and bounds by feature name
    if est.missing == "uncertain":
        fitted.X = est.imputation_.impute(fitted.X)
    store_sections(est, fitted)
    return est


def training_report(solutions: list, classes: Any, X: Any, y: Any, class_weight: dict | None) -> dict:
    """Each model's accuracy against the rest, the argmax accuracy beside the largest class's share and, with class
    weights, the balanced accuracy and the accuracy under the weights."""
    from sklearn.metrics import balanced_accuracy_score

    from .metrics import weighted_accuracy
    from .table_model import row_weights

    y = np.asarray(y)
    scores = np.column_stack([sol.decision_function(X) for sol in solutions])
    predicted = np.asarray(classes)[np.argmax(scores, axis=1)]
    counts = np.array([int(np.sum(y == c)) for c in classes])
    models = [{"class": _plain(c), "rows": int(counts[k]), "status": sol.status, "objective": sol.objective,
               "gap": sol.gap, "solver": sol.solver,
               "training_accuracy": float(np.mean((scores[:, k] > 0) == (y == c))), "constant": _constant(sol, c)}
              for k, (sol, c) in enumerate(zip(solutions, classes, strict=True))]
    out = {"models": models, "training_accuracy": float(np.mean(predicted == y)),
           "largest_class": _plain(classes[int(np.argmax(counts))]), "largest_share": float(counts.max() / y.size),
           "balanced_training_accuracy": None, "weighted_training_accuracy": None,
           "weighted_constant_accuracy": None}
    if class_weight is not None:
        out["balanced_training_accuracy"] = float(balanced_accuracy_score(y, predicted))
        weighted = weighted_accuracy(predicted == y, y, row_weights(class_weight, y))
        out["weighted_training_accuracy"], out["weighted_constant_accuracy"] = weighted
    return out


def _constant(sol: Any, label: Any) -> str | None:
    """The warning of a model whose decision is constant on its training rows (None otherwise)."""
    report = sol.degenerate
    if report is None or report.get("uninformative"):
        return None
    side = repr(_plain(label)) if report.get("predicts") == 1 else "the rest"
    return (f"the model of {_plain(label)!r} against the rest is constant: it predicts {side} for every training "
            f"row; {report.get('cause')}")


def run_fit(args: argparse.Namespace, fitted: Any, problem: Any, options: dict, print_json: Any) -> int:
    """``fit`` on more than two classes: print each model's certificate and accuracy, then the classifier's."""
    from ..exceptions import ConvergenceWarning, DegenerateSolutionWarning

    if not args.json:
        print(fitted.description)
        print(fitted.rules.describe())
        print(problem)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        warnings.simplefilter("always", DegenerateSolutionWarning)
        est = fit(problem, fitted, args, options)
    solutions, classes, X, y = est.solutions_, est.classes_, fitted.X, fitted.y
    report = training_report(solutions, classes, X, y, fitted.class_weight)
    constant = [row["constant"] for row in report["models"] if row["constant"] is not None]
    # a constant model's report in its class's words, not in the 0/1 labels of its solve
    notes = list(dict.fromkeys(fitted.warnings + [str(w.message) for w in caught if not (
        issubclass(w.category, DegenerateSolutionWarning) and "constant on its training data" in str(w.message))]
                               + constant))
    for note in notes:
        print(f"warning: {note}", file=sys.stderr)
    path = write(args.output, solutions, classes, X, y) if args.output else None
    if args.json:
        print_json(_fit_document(args, fitted, problem, solutions, report, notes, path))
    else:
        _print_fit(args, fitted, solutions, report, path)
    optimal = all(sol.status == "optimal" for sol in solutions)
    return 0 if optimal else 3 if args.strict else 0


def _fit_document(args: argparse.Namespace, fitted: Any, problem: Any, solutions: list, report: dict,
                  notes: list[str], path: str | None) -> dict:
    from ..formats.io import solution_to_dict

    X = fitted.X
    models = []
    for sol, row in zip(solutions, report["models"], strict=True):
        stored = solution_to_dict(sol, X, rest_labels(fitted.y, row["class"]))
        for key in ("history", "preprocessing"):  # iteration by iteration: in the --output file; the rules: once
            stored.pop(key, None)
        models.append({**row, "model": {"text": repr(sol.problem), **sol.problem.to_dict()}, "solution": stored})
    return {"data": {"description": fitted.description, "n_samples": int(X.shape[0]),
                     "n_features": int(X.shape[1]), "feature_names": fitted.names,
                     "preprocessing": fitted.rules.to_dict()},
            "model": {"text": repr(problem), **problem.to_dict()},
            "classes": [row["class"] for row in report["models"]], "one_vs_rest": models,
            **{k: v for k, v in report.items() if k != "models"},
            "warnings": notes, "output": path}


def _print_fit(args: argparse.Namespace, fitted: Any, solutions: list, report: dict, path: str | None) -> None:
    from .per_class import describe

    own = bool(fitted.per_class)  # --signs-for and the like: each model's own priors
    which = ("each model's signs, bounds and set below it" if own else
             "the signs, bounds and set above apply to every model")
    print(f"{len(solutions)} classes: one model of each against the rest (+1 = the class, -1 = the other "
          f"classes; {which})")
    for sol, row in zip(solutions, report["models"], strict=True):
        print(f"  {row['class']!r} ({row['rows']} rows): {row['status']}, objective {row['objective']:.10g}, gap "
              f"{row['gap']:.3g} ({row['solver']}); training accuracy against the rest "
              f"{row['training_accuracy']:.4f}")
        if own:
            print(f"    {describe(sol.problem)}")
        if row["constant"] is not None:
            print(f"    warning: {row['constant']}")
        if sol.w is not None and args.show_weights:
            for h in np.argsort(-np.abs(sol.w), kind="stable")[: args.show_weights]:
                print(f"    w[{fitted.names[h]}] = {sol.w[h]:+.6g}")
    print(f"training accuracy {report['training_accuracy']:.4f} (each row the class of the largest decision "
          f"value; always the largest class, {report['largest_class']!r}: {report['largest_share']:.4f})")
    if report["balanced_training_accuracy"] is not None:
        print(f"balanced accuracy {report['balanced_training_accuracy']:.4f} (the mean of the classes' recalls; a "
              f"constant classifier: {1 / len(solutions):.4f})")
        if args.class_weight != "balanced":
            print(f"weighted by the class weights {report['weighted_training_accuracy']:.4f} (always the largest "
                  f"weighted class: {report['weighted_constant_accuracy']:.4f})")
    if path is not None:
        print(f"{len(solutions)} models written to {path}")


# ------------------------------------------------------------------ cv
def print_cv(args: argparse.Namespace, best: Any, fitted: Any, table: list, chosen: dict, score: float,
             notes: list[str], print_json: Any, in_folds: dict) -> int:
    """``cv`` on more than two classes: the certificate of each refitted model (with ``--json``, also the grid,
    the chosen point and what the folds learned, ``in_folds``, which ``cv`` prints otherwise)."""
    from .per_class import describe
    from .table_model import restore_missing

    solutions = best.solutions_
    X = restore_missing(solutions[0], fitted.X)
    path = write(args.output, solutions, best.classes_, X, fitted.y) if args.output else None
    certificates = [{"class": _plain(c), "status": sol.status, "gap": sol.gap, "objective": sol.objective,
                     "solver": sol.solver, "b": sol.b, "model": {"text": repr(sol.problem), **sol.problem.to_dict()},
                     "w": None if sol.w is None else dict(zip(fitted.names, sol.w.tolist(), strict=True))}
                    for sol, c in zip(solutions, best.classes_, strict=True)]
    if args.json:
        print_json({"data": {"description": fitted.description, "feature_names": fitted.names},
                    "scoring": args.scoring, "folds": args.folds, "seed": args.seed, "grid": table,
                    "chosen": chosen, "cv_score": score, "fold_preprocessing": in_folds,
                    "classes": [c["class"] for c in certificates],
                    "certificate": certificates, "warnings": notes, "output": path})
        return 0
    print(f"refit on all {fitted.X.shape[0]} rows, one model of each of {len(solutions)} classes against the rest:")
    for c, sol in zip(certificates, solutions, strict=True):
        print(f"  {c['class']!r}: status {c['status']}, objective {c['objective']:.10g}, gap {c['gap']:.3g} "
              f"({c['solver']})")
        if fitted.per_class:  # --signs-for and the like: each model's own priors
            print(f"    {describe(sol.problem)}")
    if path is not None:
        print(f"{len(solutions)} models written to {path}")
    return 0


# ------------------------------------------------------------------ predict
def run_predict(args: argparse.Namespace) -> int:
    """``predict`` with a file of K models: the argmax class, the K decision values and (``--probability``) the
    normalized probabilities of each row."""
    import pandas as pd

    from ..estimators.calibration import Sigmoid, normalized_probabilities
    from . import data as cli_data
    from .metrics import multiclass_lines, multiclass_metrics

    model = read(args.model, args.accept_modified)
    frame, prepared, X, rules, notes = cli_data.predict_rows(args, model.solutions[0])
    K, n, rows = len(model.classes), len(frame), prepared.rows
    scores = model.decision_function(X) if rows.size else np.zeros((0, K))
    label = np.full(n, None, dtype=object)
    label[rows] = np.asarray(model.classes, dtype=object)[np.argmax(scores, axis=1)] if rows.size else []
    out = frame[args.keep].copy() if args.keep else pd.DataFrame(index=frame.index)
    out["label"] = label
    for k, c in enumerate(model.classes):
        out[f"decision({c})"] = _column(n, rows, scores[:, k])
    lines = [f"{rows.size} of {n} rows predicted; label = the class of the largest decision(CLASS), the decision "
             f"x·w + b of the model of that class against the rest ({K} classes)"]
    calibrations = [sol.extra.get("calibration") for sol in model.solutions]
    probability = None
    if all(c is not None for c in calibrations):
        probability = normalized_probabilities(np.column_stack(
            [Sigmoid(a=float(c["a"]), b=float(c["b"])).probability(scores[:, k])
             for k, c in enumerate(calibrations)])) if rows.size else np.zeros((0, K))
        for k, c in enumerate(model.classes):
            out[f"P({c})"] = _column(n, rows, probability[:, k])
        lines.append("P(CLASS) is Platt's sigmoid of decision(CLASS), the rows divided by their sums (fitted on "
                     "out-of-fold decisions by `fit --probability`)")
    for line in notes:
        print(f"robustsvm predict: warning: {line}", file=sys.stderr)
    metrics = None
    if prepared.y is not None:
        metrics = multiclass_metrics(prepared.y, label[rows], model.classes, probability)
        lines += [] if metrics is None else multiclass_lines(metrics, rules.target)
    return cli_data.write_predictions(args, out, lines, notes, metrics, list(model.classes))


def _column(n: int, rows: np.ndarray, values: np.ndarray) -> np.ndarray:
    column = np.full(n, np.nan)
    column[rows] = values
    return column


# ------------------------------------------------------------------ validate
def run_validate(args: argparse.Namespace, print_json: Any) -> int:
    """``validate`` with a file of K models: each model re-checked on the data with its own labels (its class
    against the rest) and the stored class weights; fails when one does not verify."""
    from ..formats.io import validate
    from . import data as cli_data
    from .table_model import stored_sample_weight

    model = read(args.solution, args.accept_modified)
    X, y, _, description = cli_data.validation_data(args, model.solutions[0])
    labels = np.asarray(y)
    unknown = sorted({str(v) for v in labels if not any(v == c for c in model.classes)})
    reports = []
    for sol, c in zip(model.solutions, model.classes, strict=True):
        reports.append(validate(sol, X, rest_labels(labels, c), sample_weight=stored_sample_weight(sol, labels),
                                rtol=args.rtol, feas_tol=args.feas_tol))
    ok = not unknown and all(r.ok for r in reports)
    if args.json:
        print_json({"data": {"description": description}, "solution": str(args.solution), "ok": ok,
                    "classes": model.classes, "unknown_labels": unknown,
                    "models": [{"class": c, "ok": r.ok, **{k: v for k, v in vars(r).items() if k != "ok"}}
                               for c, r in zip(model.classes, reports, strict=True)]})
        return 0 if ok else 1
    print(description)
    if unknown:
        print(f"MISMATCH: the data hold labels the models do not know: {unknown} (classes {model.classes})")
    for c, report in zip(model.classes, reports, strict=True):
        print(f"the model of {c!r} against the rest:")
        print(report)
    print(f"{sum(r.ok for r in reports)} of {len(reports)} models verify" + ("" if ok else ": FAILED"))
    return 0 if ok else 1

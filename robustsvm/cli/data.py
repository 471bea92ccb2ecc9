"""The command line's path for a user's own table: fitted preprocessing through ``fit``, ``validate`` and ``predict``.

``robustsvm fit DATA --target COL [--positive LABEL] [--drop COLS] [--impute median|drop-rows]
[--categorical onehot|drop]`` fits the rules of :mod:`robustsvm.tabular.preprocessing` on the table, solves on
the preprocessed features and stores the rules beside the solution (its ``preprocessing`` section);
``robustsvm validate MODEL DATA`` applies the stored rules to the data again before checking the
solution; ``robustsvm predict MODEL NEW.csv`` applies them to new rows and writes one line per row:
the predicted label and the decision value ``x·w + b`` (positive for ``classes[1]``).
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass, field
from typing import Any

__all__ = ["FitInput", "add_fit_arguments", "add_predict_command", "finish_fit", "load_data", "platt_calibration",
           "predict_rows", "prepare_fit", "read_csv", "read_model", "run_predict", "validation_data",
           "write_predictions"]


def _columns(text: str) -> list[str]:
    names = [t.strip() for t in text.split(",") if t.strip()]
    if not names:
        raise argparse.ArgumentTypeError("empty list of columns")
    return names


def _levels(text: str) -> dict:
    from ..tabular.categories import parse_levels

    try:
        return parse_levels(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def _ordered(text: str) -> dict:
    from ..tabular.categories import parse_ordered

    try:
        return parse_ordered(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def add_fit_arguments(p: argparse.ArgumentParser) -> None:
    """The preprocessing options of ``fit``."""
    g = p.add_argument_group("preprocessing (stored in the --output file and applied again by validate and predict)")
    g.add_argument("--positive", metavar="LABEL",
                   help="the class a positive weight (a sign +1) pushes towards (default: the larger label; two "
                        "classes only: with more, each one-vs-rest model's signs point to its own class)")
    g.add_argument("--drop", type=_columns, default=[], metavar="COLS", help="comma-separated columns to leave out")
    g.add_argument("--impute", choices=("median", "drop-rows"), default="none",
                   help="missing values: the column's median (most frequent value of a string column), or drop "
                        "their rows (default: an error naming the column and the rows)")
    g.add_argument("--probability", action="store_true",
                   help="fit Platt's sigmoid on 5-fold out-of-fold decision values (as RobustSVC(probability=True)); "
                        "predict then writes the probability of the larger label")
    g.add_argument("--categorical", choices=("onehot", "reference", "drop"), default="onehot",
                   help="string columns: one 0/1 feature per category, named COLUMN=CATEGORY (default; a binary "
                        "column, or one named by --signs, --bounds, their -for forms or --reference: one per level but "
                        "the reference level), reference coding for every column, or left out")
    g.add_argument("--reference", type=_levels, default={}, metavar="COLUMN=LEVEL,...",
                   help="the reference level of categorical columns (default: the first in sorted order); each other "
                        "level gets a feature, its effect against the reference")
    g.add_argument("--ordered", type=_ordered, default={}, metavar="COLUMN=LOW<...<HIGH;...",
                   help="ordered categories: the lowest level is the reference and, with a sign on the column "
                        "(--signs COLUMN=+1 or -1; --signs-for: per class), the effect is monotone along the order")
    from . import table_model

    table_model.add_arguments(p)


def add_predict_command(sub: Any) -> argparse.ArgumentParser:
    """The ``predict`` subcommand, added to the subparsers ``sub`` of the command line."""
    p = sub.add_parser("predict", help="apply a model written by `fit --output` to new rows of a CSV",
                       description="Apply the stored preprocessing and model to each row of a CSV; write the "
                                   "label and the decision value x·w + b of every row.")
    p.set_defaults(func=run_predict)  # a file of more than two classes: robustsvm.cli.main dispatches
    p.add_argument("model", help="a JSON file written by `robustsvm fit --output`")
    p.add_argument("data", help="a CSV file with the columns the model uses (a header row)")
    p.add_argument("--output", "-o", help="write the predictions to this CSV file (default: stdout)")
    p.add_argument("--keep", type=_columns, default=[], metavar="COLS",
                   help="comma-separated columns of DATA copied into the output (an identifier, say)")
    p.add_argument("--json", action="store_true",
                   help="print one JSON document on stdout: the predictions, the metrics on labelled rows (accuracy, "
                        "balanced accuracy, confusion matrix, ROC AUC, Brier score) and the warnings")
    add_accept_modified_argument(p)
    return p


# ------------------------------------------------------------------ reading
#: the cells a CSV file marks as missing: an empty cell, or the markers pandas and R write (``NA``, ``NaN``);
#: any other text (``n/a``, ``?``, ``-``) is a value, and an error in a column of numbers
MISSING_MARKERS = ("", "NA", "NaN", "nan")


def read_csv(path: str, dtype: dict | None = None) -> Any:
    """The table in ``path`` (a header row); an unreadable file is one ``ValueError`` line.

    Only :data:`MISSING_MARKERS` read as missing. A header that names a column twice is refused,
    naming it (pandas would rename the second one ``NAME.1``).
    """
    import csv

    import pandas as pd

    if not os.path.exists(path):
        raise FileNotFoundError(f"no such CSV file: {path}")
    try:
        with open(path, newline="", encoding="utf-8") as handle:
            header = next(csv.reader(handle), [])
        frame = pd.read_csv(path, dtype=dtype, keep_default_na=False, na_values=list(MISSING_MARKERS))
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, csv.Error) as exc:
        raise ValueError(f"{path} is not a readable CSV file: {exc}") from exc
    twice = sorted({name.strip() for name in header if [h.strip() for h in header].count(name.strip()) > 1})
    if twice:
        raise ValueError(f"{path}: the header names {'a column' if len(twice) == 1 else 'columns'} twice: "
                         f"{twice}; rename or remove the duplicate{'s' * (len(twice) > 1)}")
    return frame


def add_accept_modified_argument(p: argparse.ArgumentParser) -> None:
    """``--accept-modified``: use a stored model whose fields differ from their digests (``predict``, ...)."""
    p.add_argument("--accept-modified", action="store_true",
                   help="use a model file whose fields differ from the digests written with it (or that carries "
                        "none) as it is; without it such a file is refused")


def read_model(path: str, accept_modified: bool = False) -> Any:
    """The solution stored in ``path``; a JSON file that is not one is a ``ValueError`` saying so.

    A file whose fields differ from their digests is refused naming them, unless ``accept_modified``:
    a warning on stderr then says what was modified.
    """
    import warnings

    from ..formats.solution_format import ModifiedSolutionError, ModifiedSolutionWarning
    from ..solution import Solution
    from . import one_vs_rest_file as one_vs_rest

    if one_vs_rest.stored_in(path):  # K models of K > 2 classes: refused by name where one model is read
        raise ValueError(one_vs_rest.not_one_model(path))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ModifiedSolutionWarning)  # said below, in the command line's words
            solution = Solution.from_json(path, accept_modified=accept_modified)
    except ModifiedSolutionError as exc:
        raise ValueError(exc.advice("--accept-modified")) from exc
    except (OSError, UnicodeDecodeError):
        raise
    except (ValueError, TypeError, KeyError, IndexError, AttributeError) as exc:
        # a file that is JSON but not a stored solution (missing keys, a list, wrong types)
        text = " ".join(str(exc).split()) or type(exc).__name__
        raise ValueError(f"{path} is not a solution written by `robustsvm fit --output` or Solution.to_json: "
                         f"{text}") from exc
    modified = solution.extra.get("modified")
    if modified != []:
        what = ("carries no digests: it is used unchecked" if modified is None else
                f"was modified after it was written ({', '.join(modified)} "
                f"{'differs' if len(modified) == 1 else 'differ'} from the digests): it is used as it is now")
        print(f"robustsvm: warning: {path} {what} (--accept-modified)", file=sys.stderr)
    return solution


def _is_csv(data: str) -> bool:
    return os.path.exists(data) or data.lower().endswith(".csv")


def _training_table(data: str, target: str | None) -> tuple[Any, str | None, Any, str]:
    """``(frame, target, y, what)``: a CSV with its label column, or a named data set with its labels."""
    import numpy as np
    import pandas as pd
    import scipy.sparse as sp

    if _is_csv(data):
        frame = read_csv(data)
        if frame.shape[1] < 2:
            raise ValueError(f"{data}: a CSV needs at least one feature column and a label column")
        frame.columns = [str(c) for c in frame.columns]
        target = str(frame.columns[-1]) if target is None else target
        if target not in frame.columns:
            raise ValueError(f"--target {target!r} is not a column of {data}; columns: {list(frame.columns)}")
        return frame, target, None, data
    from .. import datasets

    if target is not None:
        raise ValueError("--target applies to CSV files only")
    ds = datasets.load(data)
    X = ds.X.toarray() if sp.issparse(ds.X) else np.asarray(ds.X, dtype=np.float64)
    return pd.DataFrame(X, columns=[str(f) for f in ds.feature_names]), None, ds.y, ds.description


def load_data(data: str, target: str | None = None, standardize: bool = True):
    """The data ``compare`` works on (and ``validate`` for a solution without stored preprocessing).

    Returns ``(X, y, feature_names, description)``. ``data`` is a CSV file (header row; numeric
    features; the label column ``target``, default the last) or a name for
    :func:`robustsvm.datasets.load`. With ``standardize``, each feature becomes ``(x − mean)/std``
    over the whole data (constant features are only centred): :func:`robustsvm.tabular.preprocessing.zscore_parameters`.
    """
    import numpy as np
    import pandas as pd

    from ..tabular.columns import rows_text

    if _is_csv(data):
        frame, target, _, _ = _training_table(data, target)
        features = frame.drop(columns=[target])
        bad = [c for c in features.columns if not pd.api.types.is_numeric_dtype(features[c])]
        if bad:
            raise ValueError(f"{data}: feature columns must be numeric, these are not: {bad}")
        X = features.to_numpy(dtype=np.float64)
        for h in np.flatnonzero(~np.all(np.isfinite(X), axis=0)):
            infinite = np.flatnonzero(np.isinf(X[:, h]))
            if infinite.size:
                raise ValueError(f"column {features.columns[h]!r} has infinite values in {rows_text(infinite)}; "
                                 f"fix or remove those rows")
            rows = np.flatnonzero(np.isnan(X[:, h]))
            raise ValueError(f"column {features.columns[h]!r} has missing values (NaN) in {rows_text(rows)}; "
                             f"`robustsvm fit` imputes or drops them (--impute median, --impute drop-rows)")
        y = frame[target].to_numpy()
        names = [str(c) for c in features.columns]
        description = f"{data}: {X.shape[0]} samples, {X.shape[1]} features, label column {target!r}"
    else:
        from .. import datasets

        if target is not None:
            raise ValueError("--target applies to CSV files only")
        ds = datasets.load(data)
        X, y, names = np.asarray(ds.X, dtype=np.float64), ds.y, list(ds.feature_names)
        description = ds.description
    if standardize:
        from ..tabular.preprocessing import zscore_parameters

        mean, scale = zscore_parameters(X, names)
        X = (X - mean) / scale
    return X, y, names, description


# ------------------------------------------------------------------ fit
@dataclass
class FitInput:
    """The data ``fit`` solves on, and the rules that made them."""

    X: Any
    y: Any
    names: list[str]
    description: str
    rules: Any
    solve_options: dict = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    #: ``{label: weight}`` of ``--class-weight`` (None without it)
    class_weight: dict | None = None
    #: the number of classes of the labels (more than two: one model of each against the rest)
    n_classes: int = 2
    #: ``{"signs"|"bounds"|"uncertainty"|"constraints": PerClass}`` of ``--signs-for`` and the like
    per_class: dict = field(default_factory=dict)
    #: the prior options as given, to put in the features of other rules (:class:`robustsvm.cli.priors.TablePriors`)
    priors: Any = None
    #: the table's feature columns as read (cv's folds learn the preprocessing statistics from its rows)
    table: Any = None
    #: the positions in ``table`` of the rows of ``X`` (``--impute drop-rows`` leaves some out)
    rows: Any = None


def prepare_fit(args: argparse.Namespace) -> FitInput:
    """Read ``args.data``, fit the preprocessing and translate ``args.signs`` to the preprocessed features."""
    import numpy as np

    from ..tabular.preprocessing import fit_preprocessing
    from . import per_class, table_model
    from .priors import TablePriors

    frame, target, y, what = _training_table(args.data, args.target)
    impute = args.impute
    if getattr(args, "missing", "error") == "uncertain":
        if impute != "none":
            raise ValueError(f"--missing uncertain keeps the missing values for the model; --impute {impute} "
                             "would fill or drop them first: give one of the two")
        if getattr(args, "probability", False):
            raise ValueError("--probability is not available with --missing uncertain; fit without it, or impute")
        impute = "keep"
    named = [k for spec in (args.signs, getattr(args, "bounds", None)) for k in (spec or {}) if isinstance(k, str)]
    named += per_class.named_columns(args)
    reference = {**{k: None for k in named if k in frame.columns}, **args.reference}
    rules, prepared = fit_preprocessing(frame, target, y=y, drop=args.drop, impute=impute,
                                        categorical=args.categorical, standardize=args.standardize,
                                        reference=reference, ordered=args.ordered)
    raw = [c for c in map(str, frame.columns) if c != target]
    n_classes = _at_least_two_classes(prepared.y, target)
    priors = TablePriors(argparse.Namespace(**vars(args)), raw, n_classes,
                         sorted(set(np.asarray(prepared.y).tolist()), key=str),
                         lambda text, option: _label(text, prepared.y, target, option))
    given = priors.apply(args, rules)  # --signs and the like in the features of the rules
    if n_classes > 2 and args.positive is not None:
        raise ValueError(f"--positive {args.positive!r} names the class the signs point to when there are two; with "
                         f"{n_classes} classes each one-vs-rest model's signs point to its own class: leave out "
                         "--positive")
    X, names = prepared.X, rules.feature_names
    if target is not None:
        what = f"{what}: {X.shape[0]} samples, {X.shape[1]} features, label column {target!r}"
    options = {}
    if args.positive is not None:
        options["positive_class"] = _label(args.positive, prepared.y, target)
    weights = table_model.class_weights(getattr(args, "class_weight", None), prepared.y,
                                        lambda text: _label(text, prepared.y, target, "--class-weight"))
    return FitInput(X=X, y=prepared.y, names=names, description=what, rules=rules, solve_options=options,
                    warnings=prepared.warnings, class_weight=weights, n_classes=n_classes, per_class=given,
                    priors=priors, table=frame.drop(columns=[c for c in [target] if c is not None]),
                    rows=prepared.rows)


def _at_least_two_classes(y: Any, target: str | None) -> int:
    """The number of classes of ``y``; labels of one class are refused, naming the column and the label's count.

    More than two classes are fitted one against the rest (:mod:`robustsvm.cli.one_vs_rest`).
    """
    import numpy as np

    labels, counts = np.unique(np.asarray(y).astype(str), return_counts=True)
    if labels.size >= 2:
        return int(labels.size)
    where = f"the label column {target!r}" if target is not None else "the data set's labels"
    listed = ", ".join(f"{str(label)!r} ({int(count)} rows)" for label, count in zip(labels, counts, strict=True))
    raise ValueError(f"{where} holds one class, {listed}: a classifier needs rows of two")


def _label(text: str, y: Any, target: str | None, option: str = "--positive") -> Any:
    """The label of ``y`` written ``text`` on the command line (``1`` for a numeric label 1)."""
    import numpy as np

    labels = sorted(set(np.asarray(y).tolist()), key=str)
    for label in labels:
        if str(label) == text or (not isinstance(label, str) and _same_number(label, text)):
            return label
    where = f"column {target!r}" if target is not None else "the data set"
    raise ValueError(f"{option} {text!r} is not a label of {where}; its labels are {labels}")


def _same_number(label: Any, text: str) -> bool:
    try:
        return float(text) == float(label)
    except (TypeError, ValueError):
        return False


def finish_fit(solution: Any, fitted: FitInput, problem: Any, args: argparse.Namespace, options: dict) -> None:
    """Keep the preprocessing in the solution (for its ``--output`` file); with ``--probability``, Platt's sigmoid."""
    solution.extra["preprocessing"] = fitted.rules.to_dict()
    if getattr(args, "probability", False):
        solution.extra["calibration"] = platt_calibration(problem, fitted, args.solver, options)


def platt_calibration(problem: Any, fitted: FitInput, solver: str, options: dict) -> dict:
    """Platt's sigmoid ``P(classes[1] | f) = 1/(1 + exp(a f + b))`` fitted on out-of-fold decision values.

    The folds are ``RobustSVC(probability=True)``'s: ``StratifiedKFold`` with
    :data:`robustsvm.estimators.robust_svc.PROBABILITY_FOLDS` splits, not shuffled; each fold's model is
    the same problem solved on the other folds (the preprocessed features of the whole table).
    """
    import numpy as np
    from sklearn.model_selection import StratifiedKFold

    from ..estimators.calibration import fit_sigmoid
    from ..estimators.robust_svc import PROBABILITY_FOLDS

    X, y = fitted.X, np.asarray(fitted.y)
    classes = np.unique(y)
    if min(np.sum(y == c) for c in classes) < PROBABILITY_FOLDS:
        raise ValueError(f"--probability needs at least {PROBABILITY_FOLDS} rows of each class (one per fold)")
    from .table_model import row_weights

    decision = np.empty(len(y))
    sw = None if fitted.class_weight is None else row_weights(fitted.class_weight, y)
    for train, test in StratifiedKFold(n_splits=PROBABILITY_FOLDS).split(np.zeros((len(y), 1)), y):
        fold = problem.solve(X[train], y[train], solver=solver, feature_names=fitted.names, **fitted.solve_options,
                             sample_weight=None if sw is None else sw[train], **options)
        decision[test] = fold.decision_function(X[test])
    sigmoid = fit_sigmoid(decision, y == classes[1])
    positive = classes[1].item() if isinstance(classes[1], np.generic) else classes[1]
    return {"method": "platt", "a": float(sigmoid.a), "b": float(sigmoid.b), "folds": PROBABILITY_FOLDS,
            "positive": positive}


# ------------------------------------------------------------------ validate
def validation_data(args: argparse.Namespace, solution: Any) -> tuple[Any, Any, list[str], str]:
    """``(X, y, names, description)`` for ``validate``: the stored rules applied to ``args.data``.

    A solution without stored rules reads the data as ``fit`` once did (:func:`robustsvm.cli.main.load_data`).
    ``--no-standardize`` leaves out the stored z-scores.
    """
    from ..tabular.preprocessing import Preprocessing

    spec = solution.extra.get("preprocessing")
    if spec is None:
        return load_data(args.data, args.target, args.standardize)
    rules = Preprocessing.from_dict(spec)
    if args.target is not None and rules.target is not None and args.target != rules.target:
        raise ValueError(f"--target {args.target!r} is not the model's label column {rules.target!r}")
    frame, target, y, what = _training_table(args.data, rules.target if _is_csv(args.data) else None)
    prepared = rules.transform(frame, y, scale=args.standardize)
    _warn("validate", prepared.warnings)
    if target is not None:
        what = f"{what}: {prepared.X.shape[0]} samples, {prepared.X.shape[1]} features, label column {target!r}"
    from .table_model import restore_missing

    return restore_missing(solution, prepared.X), prepared.y, rules.feature_names, what


# ------------------------------------------------------------------ predict
def _warn(command: str, lines: list[str]) -> None:
    for line in lines:
        print(f"robustsvm {command}: warning: {line}", file=sys.stderr)


def run_predict(args: argparse.Namespace) -> int:
    """``robustsvm predict MODEL NEW.csv``: one output row per input row (empty where a row cannot be scored)."""
    import numpy as np

    solution = read_model(args.model, args.accept_modified)
    frame, prepared, X, rules, warnings = predict_rows(args, solution)
    decision = solution.decision_function(X) if prepared.rows.size else np.zeros(0)
    positive, negative = solution.class_mapping[1], solution.class_mapping[-1]
    n = len(frame)
    label = np.full(n, None, dtype=object)
    label[prepared.rows] = [positive if f > 0 else negative for f in decision]
    value = np.full(n, np.nan)
    value[prepared.rows] = decision
    out = _kept_columns(frame, args.keep)
    out["label"], out["decision"] = label, value
    lines = [f"{prepared.rows.size} of {n} rows predicted; decision = x·w + b > 0 predicts {positive!r}, "
             f"otherwise {negative!r}"]
    calibration = solution.extra.get("calibration")
    if calibration is not None:
        from ..estimators.calibration import Sigmoid

        probability = np.full(n, np.nan)
        probability[prepared.rows] = Sigmoid(a=float(calibration["a"]), b=float(calibration["b"])).probability(
            decision)
        out[f"P({positive})"] = probability
        lines.append(f"P({positive}) is Platt's sigmoid of the decision, fitted on {calibration.get('folds')}-fold "
                     f"out-of-fold decisions by `fit --probability`")
    _warn("predict", warnings)
    metrics = None
    if prepared.y is not None:
        from .metrics import labelled_metrics, metrics_lines

        column = out.get(f"P({positive})")
        metrics = labelled_metrics(prepared.y, label[prepared.rows], decision, None if column is None else
                                   np.asarray(column)[prepared.rows], positive, negative)
        lines += [] if metrics is None else metrics_lines(metrics, rules.target)
    return write_predictions(args, out, lines, warnings, metrics, {"+1": positive, "-1": negative})


def predict_rows(args: argparse.Namespace, solution: Any) -> tuple[Any, Any, Any, Any, list[str]]:
    """``(frame, prepared, X, rules, warnings)``: ``predict``'s CSV through the model's stored rules, ``X`` the
    features of the rows that can be scored (``prepared.rows``; missing values as the stored Gaussian fills them)."""
    from ..tabular.preprocessing import Preprocessing
    from .table_model import restore_missing

    spec = solution.extra.get("preprocessing")
    warnings = []
    if spec is None:
        rules = _rules_of_plain_solution(solution)
        warnings.append(f"{args.model} stores no preprocessing (not written by `robustsvm fit`): the columns "
                        f"{rules.feature_names} are used as they are, without z-scores")
    else:
        rules = Preprocessing.from_dict(spec)
    frame = read_csv(args.data, dtype=rules.csv_dtypes())
    frame.columns = [str(c) for c in frame.columns]
    missing = [c for c in args.keep if c not in frame.columns]
    if missing:
        raise ValueError(f"--keep {missing}: not columns of {args.data}")
    prepared = rules.transform(frame, predict=True)
    return frame, prepared, restore_missing(solution, prepared.X), rules, warnings + prepared.warnings


def _kept_columns(frame: Any, keep: list[str]) -> Any:
    import pandas as pd

    return frame[keep].copy() if keep else pd.DataFrame(index=frame.index)


def write_predictions(args: argparse.Namespace, out: Any, lines: list[str], warnings: list[str],
                      metrics: dict | None, classes: Any) -> int:
    """Write ``predict``'s table: ``--json`` (one document), ``--output`` (a CSV file) or stdout."""
    if getattr(args, "json", False):
        return _predict_json(args, out, lines, warnings, metrics, classes)
    if args.output:
        out.to_csv(args.output, index=False)
        lines.append(f"predictions written to {args.output}")
        print("\n".join(lines))
    else:
        try:
            out.to_csv(sys.stdout, index=False)
        except BrokenPipeError:  # the reader stopped early (`| head`): quietly, as other tools do
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 0
        print("\n".join(lines), file=sys.stderr)
    return 0


def _predict_json(args: argparse.Namespace, out: Any, lines: list[str], warnings: list[str], metrics: dict | None,
                  classes: Any) -> int:
    """``predict --json``: one document on stdout (``--output`` still writes the CSV)."""
    import json

    if args.output:
        out.to_csv(args.output, index=False)
    rows = json.loads(out.to_json(orient="records"))  # NaN as null
    document = {"model": str(args.model), "data": str(args.data), "classes": classes, "predictions": rows,
                "metrics": metrics, "summary": lines, "warnings": warnings, "output": args.output}
    print(json.dumps(document, indent=1, allow_nan=False, default=str))
    return 0


def _rules_of_plain_solution(solution: Any) -> Any:
    """Rules that take a solution's features by name, as they are (a solution written without preprocessing)."""
    from ..tabular.preprocessing import ColumnRule, Preprocessing

    names = solution.feature_names
    if names is None:
        raise ValueError("the model stores neither preprocessing nor feature names: it cannot read a CSV by column")
    return Preprocessing(columns=tuple(ColumnRule(name=str(f), kind="numeric") for f in names), target=None)

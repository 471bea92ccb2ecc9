"""Metrics of ``robustsvm predict`` on the rows of a table whose labels are known.

On the labelled rows that get a prediction: the accuracy, the balanced accuracy (the mean of the
recall of each class), the confusion matrix (rows: true labels, columns: predicted labels, both in
the order ``[negative, positive]``), the ROC AUC of the decision value ``f = x·w + b`` (the probability
that a positive row scores above a negative one, ties counted one half) and, for a model fitted with
``--probability``, the Brier score ``(1/m) Σ_i (p_i − 1[y_i = positive])²``. All are scikit-learn's.

A model of more than two classes (one of each against the rest) gets the accuracy, the balanced accuracy
and the K × K confusion matrix (the classes in sorted order), and, fitted with ``--probability``, the ROC AUC
of each class against the rest averaged over the classes (``roc_auc_score(multi_class="ovr")``) of the
normalized probabilities.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["labelled_metrics", "metrics_lines", "multiclass_lines", "multiclass_metrics", "weighted_accuracy"]


def labelled_metrics(truth: Any, predicted: Any, decision: np.ndarray, probability: np.ndarray | None,
                     positive: Any, negative: Any) -> dict | None:
    """The metrics of the module's description on the rows whose label is known; None when there are none.

    ``truth`` and ``predicted`` hold labels (``truth`` may hold missing values), ``decision`` the decision
    values and ``probability`` the probabilities of ``positive`` (or None), all of the same rows.
    """
    import pandas as pd
    from sklearn.metrics import (
        accuracy_score,
        balanced_accuracy_score,
        brier_score_loss,
        confusion_matrix,
        roc_auc_score,
    )

    truth = np.asarray(truth, dtype=object)
    known = ~np.asarray(pd.isna(truth), dtype=bool)
    if not known.any():
        return None
    labels = [negative, positive]
    t = np.asarray([_same_label(v, labels) for v in truth[known]], dtype=object)
    p = np.asarray(predicted, dtype=object)[known]
    unknown = sorted({str(v) for v, m in zip(truth[known], t, strict=True) if m is None})
    if unknown:
        raise ValueError(f"the label column holds labels the model does not know: {unknown}; its classes are "
                         f"{labels}")
    is_positive = np.asarray([v == positive for v in t], dtype=bool)
    codes_true, codes_pred = is_positive.astype(int), np.asarray([v == positive for v in p], dtype=int)
    out: dict[str, Any] = {
        "rows": int(known.sum()),
        "accuracy": float(accuracy_score(codes_true, codes_pred)),
        "balanced_accuracy": float(balanced_accuracy_score(codes_true, codes_pred)),
        "confusion_matrix": {"labels": labels,
                             "counts": confusion_matrix(codes_true, codes_pred, labels=[0, 1]).tolist()},
        "roc_auc": None, "brier": None,
    }
    if 0 < is_positive.sum() < is_positive.size:
        out["roc_auc"] = float(roc_auc_score(is_positive, np.asarray(decision)[known]))
    if probability is not None:
        out["brier"] = float(brier_score_loss(is_positive, np.asarray(probability)[known]))
    return out


def _same_label(value: Any, labels: list) -> Any:
    """The model's label equal to ``value`` (a label read from a CSV may be a number or its text), or None."""
    for label in labels:
        if value == label or str(value) == str(label):
            return label
        try:
            if float(value) == float(label):
                return label
        except (TypeError, ValueError):
            pass
    return None


def metrics_lines(metrics: dict, target: str | None) -> list[str]:
    """The metrics as a few lines of text."""
    where = f"column {target!r}" if target is not None else "the labels"
    (tn, fp), (fn, tp) = metrics["confusion_matrix"]["counts"]
    negative, positive = metrics["confusion_matrix"]["labels"]
    lines = [f"on the {metrics['rows']} rows labelled in {where}: accuracy {metrics['accuracy']:.4f}, balanced "
             f"accuracy {metrics['balanced_accuracy']:.4f}"
             + ("" if metrics["roc_auc"] is None else f", ROC AUC {metrics['roc_auc']:.4f}")
             + ("" if metrics["brier"] is None else f", Brier score {metrics['brier']:.4f}"),
             f"confusion matrix (rows true, columns predicted; {negative!r}, {positive!r}): "
             f"[[{tn}, {fp}], [{fn}, {tp}]]"]
    return lines


def weighted_accuracy(correct: Any, y: Any, weights: Any) -> tuple[float, float]:
    """``(Σ c_i [ŷ_i = y_i] / Σ c_i, max_k Σ_{y_i = k} c_i / Σ c_i)``: the accuracy under the row weights ``c`` of
    ``--class-weight`` (balanced: the mean of the classes' recalls) and that of the constant classifier."""
    total = float(weights.sum())
    labels = np.asarray(y)
    constant = max(float(weights[labels == k].sum()) for k in np.unique(labels)) / total
    return float(weights @ correct) / total, constant


def multiclass_metrics(truth: Any, predicted: Any, classes: list, probability: np.ndarray | None) -> dict | None:
    """The metrics of more than two classes (the module's description) on the rows whose label is known; None when
    there are none. ``probability`` (or None) holds one column per class of ``classes``, rows summing to 1."""
    import pandas as pd
    from sklearn.metrics import accuracy_score, balanced_accuracy_score, confusion_matrix, roc_auc_score

    truth = np.asarray(truth, dtype=object)
    known = ~np.asarray(pd.isna(truth), dtype=bool)
    if not known.any():
        return None
    t = [_same_label(v, classes) for v in truth[known]]
    unknown = sorted({str(v) for v, m in zip(truth[known], t, strict=True) if m is None})
    if unknown:
        raise ValueError(f"the label column holds labels the model does not know: {unknown}; its classes are "
                         f"{classes}")
    codes_true = np.asarray([classes.index(v) for v in t])
    codes_pred = np.asarray([classes.index(v) for v in np.asarray(predicted, dtype=object)[known]])
    out: dict[str, Any] = {
        "rows": int(known.sum()),
        "accuracy": float(accuracy_score(codes_true, codes_pred)),
        "balanced_accuracy": float(balanced_accuracy_score(codes_true, codes_pred)),
        "confusion_matrix": {"labels": classes, "counts": confusion_matrix(
            codes_true, codes_pred, labels=list(range(len(classes)))).tolist()},
        "roc_auc": None, "brier": None,
    }
    if probability is not None and np.unique(codes_true).size == len(classes):
        out["roc_auc"] = float(roc_auc_score(codes_true, np.asarray(probability)[known], multi_class="ovr",
                                             labels=list(range(len(classes)))))
    return out


def multiclass_lines(metrics: dict, target: str | None) -> list[str]:
    """The metrics of more than two classes as a few lines of text."""
    where = f"column {target!r}" if target is not None else "the labels"
    labels = ", ".join(repr(c) for c in metrics["confusion_matrix"]["labels"])
    return [f"on the {metrics['rows']} rows labelled in {where}: accuracy {metrics['accuracy']:.4f}, balanced "
            f"accuracy {metrics['balanced_accuracy']:.4f}"
            + ("" if metrics["roc_auc"] is None else f", ROC AUC (each class against the rest, averaged) "
                                                     f"{metrics['roc_auc']:.4f}"),
            f"confusion matrix (rows true, columns predicted; {labels}): {metrics['confusion_matrix']['counts']}"]

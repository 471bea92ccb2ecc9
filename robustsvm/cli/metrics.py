"""Metrics of ``robustsvm predict`` on the rows of a table whose labels are known.

On the labelled rows that get a prediction: the accuracy, the balanced accuracy (the mean of the
recall of each class), the confusion matrix (rows: true labels, columns: predicted labels, both in
the order ``[negative, positive]``), the ROC AUC of the decision value ``f = x·w + b`` (the probability
that a positive row scores above a negative one, ties counted one half) and, for a model fitted with
``--probability``, the Brier score ``(1/m) Σ_i (p_i − 1[y_i = positive])²``. All are scikit-learn's.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["labelled_metrics", "metrics_lines"]


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

"""More than two classes: one-vs-rest models, and the signs or sets of each class's model.

With classes ``c_1 < … < c_K`` (K > 2), :class:`~robustsvm.RobustSVC` fits K binary models,
model k separating ``c_k`` (+1) from the rest, each solved and certified on its own. The
signs and the uncertainty set are the same for every model unless given per class with
:class:`PerClass`; a +1 sign in model k says that a larger feature is evidence for ``c_k``.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import numpy as np

from ..certificates.degenerate import UNINFORMATIVE
from ..exceptions import DegenerateSolutionWarning

__all__ = ["PerClass", "class_sample_weight", "for_class", "name_one_vs_rest", "one_vs_rest_reports",
           "warn_if_uninformative"]


class PerClass(Mapping):
    """One value per class for the one-vs-rest models of :class:`~robustsvm.RobustSVC`.

    ``RobustSVC(signs=rs.PerClass({"stage 1": {"age": +1}, "stage 3": {"age": -1}}))`` gives model k
    (class ``c_k`` against the rest) the signs listed under ``c_k``; a class left out gets
    ``default`` (None: no signs, or no uncertainty set).

    Parameters
    ----------
    values : mapping
        ``{class label: value}``; the labels must be classes of ``y``.
    default : optional
        The value of the classes that ``values`` leaves out.
    """

    def __init__(self, values: Mapping, default: Any = None) -> None:
        if not isinstance(values, Mapping):
            raise TypeError(f"PerClass takes a mapping {{class label: value}}, got {type(values).__name__}")
        self.values = dict(values)
        self.default = default

    def __getitem__(self, label: Any) -> Any:
        return self.values[label]

    def __iter__(self) -> Iterator:
        return iter(self.values)

    def __len__(self) -> int:
        return len(self.values)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PerClass) and self.values == other.values and self.default == other.default

    __hash__ = None  # a mutable mapping of values

    def __repr__(self) -> str:
        extra = "" if self.default is None else f", default={self.default!r}"
        return f"PerClass({self.values!r}{extra})"


def _plain(label: Any) -> Any:
    return label.item() if isinstance(label, np.generic) else label


def for_class(spec: Any, label: Any, classes: np.ndarray, *, name: str) -> Any:
    """The value of ``spec`` for the model of class ``label``: ``spec`` itself unless it is a :class:`PerClass`.

    Raises
    ------
    ValueError
        A :class:`PerClass` key that is not a class of ``y`` (the message lists the classes).
    """
    if not isinstance(spec, PerClass):
        return spec
    known = [_plain(c) for c in classes]
    unknown = [k for k in spec if not any(_same(k, c) for c in known)]
    if unknown:
        raise ValueError(f"{name}=PerClass(...) names {unknown}, which are not classes of y: the classes are {known}")
    for key, value in spec.items():
        if _same(key, _plain(label)):
            return value
    return spec.default


def _same(a: Any, b: Any) -> bool:
    return isinstance(a, str) == isinstance(b, str) and a == b


def class_sample_weight(class_weight: Any, classes: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The weight of each sample's class: scikit-learn's ``class_weight`` (None, ``"balanced"`` or a mapping).

    ``"balanced"`` gives class ``c`` the weight ``n / (K · n_c)``; a mapping gives the listed classes
    their value and the others 1 (:func:`sklearn.utils.class_weight.compute_class_weight`). The
    estimator multiplies these by ``sample_weight``, as scikit-learn's classifiers do.
    """
    from sklearn.utils.class_weight import compute_class_weight

    if class_weight is None:
        return np.ones(y.shape[0])
    if not ((isinstance(class_weight, str) and class_weight == "balanced") or isinstance(class_weight, Mapping)):
        raise ValueError(f"class_weight must be None, 'balanced' or a mapping {{class: weight}}, got {class_weight!r}")
    if isinstance(class_weight, Mapping):
        known = [_plain(c) for c in classes]
        unknown = [k for k in class_weight if not any(_same(_plain(k), c) for c in known)]
        if unknown:
            raise ValueError(f"class_weight names {unknown}, which are not classes of y: the classes are {known}")
    weights = compute_class_weight(class_weight, classes=classes, y=y)
    if not np.all(np.isfinite(weights)) or np.any(weights < 0):
        raise ValueError(f"class_weight must give every class a finite non-negative weight, got {class_weight!r}")
    return weights[np.searchsorted(classes, y)]


def weighted_by_class(class_weight: Any, y: Any, sample_weight: Any) -> Any:
    """``sample_weight`` times :func:`class_sample_weight` of ``y`` (a dask array ``y`` is computed: n labels);
    ``sample_weight`` as given without ``class_weight``."""
    if class_weight is None:
        return sample_weight
    labels = np.asarray(y.compute() if hasattr(y, "compute") else y)
    weights = class_sample_weight(class_weight, np.unique(labels), labels)
    return weights if sample_weight is None else sample_weight * weights


@contextmanager
def one_vs_rest_reports(classes: np.ndarray, k: int) -> Iterator[None]:
    """While the model of ``classes[k]`` against the rest is fitted (more than two classes): its warnings name the
    class and its labels (1: the class, 0: the rest); a report that it classifies no better than a constant model is
    dropped, as such a model is common and says nothing of the classifier (which takes the largest score):
    :func:`warn_if_uninformative` judges the classifier as a whole. Each warning keeps the place it points to."""
    if classes.size <= 2:
        yield
        return
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    label = _plain(classes[k])
    for w in caught:
        if issubclass(w.category, DegenerateSolutionWarning) and str(w.message).startswith(UNINFORMATIVE):
            continue
        warnings.warn_explicit(f"the one-vs-rest model of class {label!r} (label 1: {label!r}, label 0: the other "
                               f"classes): {w.message}", w.category, w.filename, w.lineno)


def name_one_vs_rest(solutions: list, classes: np.ndarray) -> None:
    """Each one-vs-rest model's summary names its class; a binary report that it classifies no better than a
    constant model is dropped (:func:`one_vs_rest_reports`); a constant model's report stays."""
    for sol, c in zip(solutions, classes, strict=True):
        sol.extra["one_vs_rest"] = _plain(c)
        if sol.degenerate is not None and sol.degenerate.get("uninformative"):
            sol.degenerate = None


def warn_if_uninformative(estimator: Any, X: Any, y: np.ndarray, sample_weight: np.ndarray) -> None:
    """A :class:`~robustsvm.DegenerateSolutionWarning` when a fitted classifier of more than two classes predicts
    its training data no better than always predicting the (weighted) largest class."""
    classes = estimator.classes_
    total = float(np.sum(sample_weight))
    if classes.size <= 2 or not total > 0:
        return
    # the models' own decisions on the validated rows (estimator.predict would check X's feature names again)
    scores = np.column_stack([np.asarray(sol.decision_function(X)).ravel() for sol in estimator.solutions_])
    accuracy = float(sample_weight @ (classes[np.argmax(scores, axis=1)] == y)) / total
    shares = np.array([float(sample_weight @ (y == c)) for c in classes]) / total
    if accuracy <= shares.max() * (1 + 1e-12):
        warnings.warn(f"the one-vs-rest classifier predicts its training data no better than always predicting "
                      f"{_plain(classes[int(np.argmax(shares))])!r}: (weighted) training accuracy {accuracy:.4f} "
                      f"against that class's share {shares.max():.4f}; a smaller l2 or radius, or "
                      f"class_weight='balanced', lets the models separate the classes",
                      DegenerateSolutionWarning, stacklevel=3)

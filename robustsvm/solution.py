"""The result of a solve: the weights, the certificate and how it was reached."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._validation import check_X
from .certificates.degenerate import count_nonzeros, weight_resolution
from .distributed.data import is_dask_array
from .result import Attempt
from .uncertainty.certificate import robust_check

__all__ = ["Solution", "register_serializer"]

#: ``write(solution, path, X, y)`` and ``read(path)``; :mod:`robustsvm.formats.io` installs them when imported
_SERIALIZER: dict[str, Callable[..., Any]] = {}


def register_serializer(*, write: Callable[..., Any], read: Callable[..., Any]) -> None:
    """Install the functions behind :meth:`Solution.to_json` and :meth:`Solution.from_json`.

    :mod:`robustsvm.formats.io` registers its JSON format here when it is imported (with the
    package's public names), so that the serialization layer sits above this module.
    """
    _SERIALIZER.update(write=write, read=read)


def _serializer(kind: str) -> Callable[..., Any]:
    """The registered function; a first call before :mod:`robustsvm.formats.io` was imported loads the package's
    names."""
    if kind not in _SERIALIZER:  # only this module was imported (``from robustsvm.solution import Solution``)
        # the package's first public name imports robustsvm.formats.io
        getattr(sys.modules[__package__], "validate", None)
    try:
        return _SERIALIZER[kind]
    except KeyError:
        raise RuntimeError("no solution serializer is registered: import robustsvm.formats.io") from None


@dataclass
class Solution:
    """A solution ``(w, b)`` of a :class:`~robustsvm.problem.Problem`, with its certificate.

    Attributes
    ----------
    w : ndarray of shape (d,) or None
        Weights (None for a nonlinear kernel model, see ``dual_coef``).
    b : float
        Intercept (0 when the model has none).
    objective : float
        The model's objective at ``(w, b)``, recomputed by
        :meth:`Problem.objective` (never copied from a solver's report).
    gap : float
        The certificate: a duality gap (absolute, in objective units) where the
        backend has one, NaN otherwise.
    status : str
        ``"optimal"`` when the backend reached its tolerance; anything else
        (``"max_iter"``, ``"optimal_inaccurate"``, ...) says why it stopped.
    solver : str
        The backend's registered name.
    iterations : int
    time : float
        Wall-clock seconds of the whole solve, ``time_compile + time_solve``
        plus overhead.
    time_compile, time_solve : float
        Seconds spent compiling (CVXPY canonicalization; 0 for first-order
        backends) and in the numerical solver.
    history : dict of str to ndarray
        Equal-length arrays: ``iteration``, ``objective``, ``gap`` (NaN when
        unknown) and ``time``; backends may add more (``dual``...).
    violation : float
        Largest violation of the model's constraints at ``(w, b)``: sign
        constraints and, for hard margins, ``1 − m_i^rob``.
    classes : ndarray of shape (2,)
        The original labels; ``classes[1]`` is the positive class.
    problem : Problem
    extra : dict
        Diagnostics of the backend that no code relies on (``passes``, ``ipm_counts``, ...).
    multipliers : ndarray of shape (n,) or None
        The margin multipliers ``a_i`` the backend returned (model units), the certificate's starting point.
    dual_bound : float
        The package's lower bound ``D`` on the optimum behind ``gap`` (``gap = objective − D``).
    dual_objective, primal_objective, rel_gap : float
        The backend's own dual value, the objective it evaluated at its point and its relative gap
        (:class:`~robustsvm.result.Result`; NaN when it has none; an external solver's primal report is
        ``primal_objective`` here).
    dual_alpha : ndarray of shape (n,) or None
        The backend's final dual point ``α`` (the warm start of a nearby model).
    auto_attempts : tuple of Attempt
        With ``solver="auto"``: every solve before the answer, in order (a bounded first attempt first).
    auto_fallback : Attempt or None
        The first answer ``"auto"`` solved again (short of optimal, or an error), None when it was kept.
    auto_probe : Attempt or None
        The bounded first-order attempt ``"auto"`` made before a second-order or conic choice.
    degenerate : dict or None
        The report of a solution whose decision is constant on its training data (``cause``, ``predicts``,
        ``critical_radius``, ``critical_l1``, ``weight_resolution``), or whose scores vary but classify the training
        data no better than the constant classifier (``uninformative``, ``training_accuracy``,
        ``constant_accuracy``); None when it is neither.
    """

    w: np.ndarray | None
    b: float
    objective: float
    gap: float
    status: str
    solver: str
    iterations: int
    time: float
    time_compile: float
    time_solve: float
    history: dict
    violation: float
    classes: np.ndarray
    problem: Any
    feature_names: np.ndarray | None = None
    message: str = ""
    dual_coef: np.ndarray | None = None
    support_vectors: Any = None
    extra: dict = field(default_factory=dict)
    multipliers: np.ndarray | None = None
    dual_bound: float = float("nan")
    dual_objective: float = float("nan")
    primal_objective: float = float("nan")
    rel_gap: float = float("nan")
    dual_alpha: np.ndarray | None = None
    auto_attempts: tuple[Attempt, ...] = ()
    auto_fallback: Attempt | None = None
    auto_probe: Attempt | None = None
    degenerate: dict | None = None

    @property
    def n_features(self) -> int:
        if self.w is not None:
            return int(self.w.shape[0])
        return int(self.support_vectors.shape[1])

    @property
    def weight_resolution(self) -> float:
        """``sqrt(2(gap + ε)/λ2)``: the optimal weights lie within this distance of ``w`` (NaN without L2).

        λ2-strong convexity gives ``‖w − w*‖₂² ≤ 2·gap/λ2``; ``ε`` is 64 ulps of the objective (the rounding of
        the computed gap). See :mod:`robustsvm.certificates.degenerate`.
        """
        penalty = getattr(self.problem, "penalty", None)
        return weight_resolution(float(self.gap), float(self.objective), float(getattr(penalty, "l2", 0.0)))

    @property
    def nonzeros(self) -> int:
        """The weights the certificate proves nonzero: ``|w_h| >`` :attr:`weight_resolution` (``1e-8`` without
        L2, where the certificate bounds no weight)."""
        if self.w is None:
            raise ValueError("a kernel model has no weights w")
        return count_nonzeros(self.w, self.weight_resolution)

    @property
    def relative_gap(self) -> float:
        """``gap / max(1, |objective|)``."""
        return float(self.gap) / max(1.0, abs(self.objective))

    def decision_function(self, X: Any) -> np.ndarray:
        """``X w + b``, or ``Σ_j a_j k(x, x_j) + b`` for a kernel model; a lazy dask array for a dask ``X``."""
        if is_dask_array(X) and self.w is not None:
            from .distributed.predict import decision_function

            return decision_function(X, self.w, self.b)
        X = check_X(X, n_features=self.n_features)
        kernel = getattr(self.problem, "kernel", None)
        if self.dual_coef is not None and kernel is not None:
            return kernel(X, self.support_vectors) @ self.dual_coef + self.b
        return np.asarray(X @ self.w).ravel() + self.b

    def predict(self, X: Any) -> np.ndarray:
        """Labels in the original values: ``classes[1]`` where the decision is > 0 (lazy for a dask ``X``)."""
        if is_dask_array(X):
            import dask.array as da

            return da.where(self.decision_function(X) > 0, self.classes[1], self.classes[0])
        return np.where(self.decision_function(X) > 0, self.classes[1], self.classes[0])

    def robust_check(self, X: Any, y: Any, *, tol: float = 1e-6):
        """Worst-case point, margin and certificate per sample; see :func:`robustsvm.robust_check` (dask arrays
        for a dask ``X``: :func:`robustsvm.distributed.predict.robust_check`)."""
        if is_dask_array(X):
            from .distributed.predict import robust_check as robust_check_dask

            return robust_check_dask(self, X, y, tol=tol)
        return robust_check(self, X, y, tol=tol)

    @property
    def positive_class(self) -> Any:
        """The class a +1 sign pushes towards: the model's ``positive_class``, ``classes[1]`` when it names none."""
        named = getattr(self.problem, "positive_class", None)
        return _plain_label(self.classes[1]) if named is None else named

    def _signs_line(self) -> str | None:
        """Which class the model's signs point to (None for a model without signs)."""
        if not getattr(self.problem, "has_signs", False):
            return None
        named = getattr(self.problem, "positive_class", None) is not None
        how = "named by positive_class" if named else "classes[1]: no positive_class was named"
        if self.extra.get("one_vs_rest") is not None:
            return f"signs       a +1 sign pushes towards {self.extra['one_vs_rest']!r} (this model's class)"
        return f"signs       a +1 sign pushes towards {self.positive_class!r} ({how})"

    @property
    def class_mapping(self) -> dict[int, Any]:
        """``{+1: classes[1], -1: classes[0]}``: the label each sign of the decision function predicts."""
        return {+1: _plain_label(self.classes[1]), -1: _plain_label(self.classes[0])}

    def summary(self) -> str:
        """A short human-readable report.

        Solver, status, objective, gap, constraint violation, iterations and
        timings, the number of weights the certificate proves nonzero and the intercept, a
        ``degenerate`` line when the decision is constant on the training data or classifies it no better than
        a constant one, and the class
        mapping: which label is +1 (predicted where ``x·w + b > 0``) and which −1;
        for a model with signs, the class they point to (``positive_class``).
        """
        mapping = self.class_mapping
        one_vs_rest = self.extra.get("one_vs_rest")
        lines = [
            f"classes     +1 = {mapping[1]!r}, -1 = {mapping[-1]!r} (x·w + b > 0 predicts {mapping[1]!r})"
            if one_vs_rest is None else
            f"classes     +1 = {one_vs_rest!r}, -1 = the other classes (one-vs-rest model of {one_vs_rest!r})",
            f"solver      {self.solver}",
            f"status      {self.status}",
            f"objective   {self.objective:.10g}",
            f"gap         {self.gap:.3g}",
            f"violation   {self.violation:.3g}",
            f"iterations  {self.iterations}",
            f"time        {self.time:.4g} s (compile {self.time_compile:.3g} s, solve {self.time_solve:.3g} s)",
        ]
        signs = self._signs_line()
        if signs is not None:
            lines.insert(1, signs)
        if self.w is not None:
            resolution = self.weight_resolution
            within = f" (|w_h| > {resolution:.2g}, the certificate's resolution)" if np.isfinite(resolution) else ""
            lines.append(f"nonzeros    {self.nonzeros} of {self.w.shape[0]} weights{within}")
            lines.append(f"intercept   {self.b:.6g}")
        if self.degenerate is not None and self.degenerate.get("uninformative"):
            lines.append(f"degenerate  no better than a constant classifier: {self.degenerate['cause']}")
        elif self.degenerate is not None:
            mapping = self.class_mapping
            what = "constant" if self.degenerate.get("proved", True) else "constant within the certificate"
            lines.append(f"degenerate  {what}: predicts {mapping[self.degenerate['predicts']]!r} for every "
                         f"training sample; {self.degenerate['cause']}")
        if self.message:
            lines.append(f"message     {self.message}")
        return "\n".join(lines)

    def to_json(self, path: Any, X: Any = None, y: Any = None) -> Any:
        """Write this solution as a reference file; see :func:`robustsvm.formats.io.write_solution`.

        Pass the training data ``X, y`` to store their fingerprint.
        """
        return _serializer("write")(self, path, X, y)

    @classmethod
    def from_json(cls, path: Any, *, accept_modified: bool = False) -> Solution:
        """Read a solution written by :meth:`to_json`; see :func:`robustsvm.formats.io.read_solution`.

        A file whose weights, intercept, classes, model, preprocessing or calibration differ from the
        digests written with it raises a ``ModifiedSolutionError`` naming them, unless
        ``accept_modified=True``.
        """
        return _serializer("read")(path, accept_modified=accept_modified)

    def __repr__(self) -> str:
        return (
            f"Solution(solver={self.solver!r}, status={self.status!r}, objective={self.objective:.8g}, "
            f"gap={self.gap:.3g}, iterations={self.iterations}, time={self.time:.3g})"
        )


def _plain_label(label: Any) -> Any:
    """A class label as a Python scalar (``np.int64(1)`` → ``1``, ``np.str_('a')`` → ``'a'``)."""
    return label.item() if isinstance(label, np.generic) else label

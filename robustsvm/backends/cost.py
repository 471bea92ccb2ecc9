"""Predicted solve times of the backends ``solver="auto"`` chooses among, fitted to a measured grid.

Each candidate has a cost *form*, a flop count per iteration times a number of iterations, whose
constants are fitted to ``benchmarks/bench_auto.py``'s shape grid and stored as data in
``cost_constants.json`` next to this module (``benchmarks/bench_auto.py`` rewrites it; the forms and the
fit are documented in ``docs/auto.md``):

* ``feature-ipm``: ``T = k_set · (a·G + b·m³ + c·nnz + r·n + q) + e`` (``r·n + q``: the set's cone steps
  and the fixed work of an iteration), with ``G = n(d+2)²`` the weighted Gram of a dense
  design (``Σ_i nnz_i² ≈ nnz²/n`` for a sparse one), ``m = d + f + 2`` the size of the factored system
  (``f`` features without a sign have two parts) and ``k_set`` the iterations, nearly constant per set; for
  n < d, when the backend declares a wide path (:func:`wide_path_available`), the per-iteration work is the
  smaller of that and the wide form ``a'·n²d + b'·n³ + c'·nnz`` (:func:`wide_work`, its own constants);
* ``dcd``, ``robust-dcd``: ``T = E · (a·nnz + b·n + c·d + g_set·n·d [+ h·n·d² on an ellipsoid])
  + K(E) · (c₀ + c_nnz·nnz + c_n·n) + e`` (``g_set``: an O(d) refresh of the set's state per coordinate step;
  ``K(E) = exp(κ₀)·E^κ₁`` certificates, each a pass over ``X`` and its Python work), with the number
  of epochs ``E`` (in the unit of the backend's budget: dcd's passes over the data) log-linear in the
  conditioning and the shape:
  ``log E = θ · (1, log C, log min(n, d), log⁺(n/d), log⁺(d/n), log density, set, loss)``,
  ``C = c̄/λ2`` the dual box of a sample (``1/(λ2 n)`` for a mean loss, liblinear's ``C``);
* ``logistic-newton`` (the smooth logistic model only): ``T = e + I·(a·n(d+1)² + c·nnz + r·n)`` with the Hessian,
  ``e + I·(c·(1 + J)·nnz + r·n)`` by conjugate gradients (its own constants, :data:`LOGISTIC_NEWTON_CONSTANTS`);
* ``clarabel`` (the conic path): ``T = e + a·(nnz + n) + b·n·min(n, d)² + c·d³``.

A first-order backend whose predicted ``E`` exceeds :data:`FALL_BACK_FRACTION` of its epoch budget (or its
fitted ``fall_back_fraction``) is
likely to stop short and be solved again by Clarabel, so its cost is its whole budget plus Clarabel's:
the rule never prefers a backend that is likely to fall back. :func:`fallback_order` gives the backends ``"auto"``
turns to when an answer is not certified (the next accepting ones expected to certify, Clarabel last).
The distributed backends (``dask-ipm``,
``dask-cocoa``, for ``dask.array`` data) take their cost forms through :func:`register_cost_form` from their
own modules; until one is registered, their in-memory counterparts' forms stand in (:data:`STAND_INS`).
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..terms.intercept import intercept_term
from ..uncertainty import UncertaintySet
from . import registry
from .logistic_newton import DENSE_HESSIAN_MAX_D

__all__ = ["CANDIDATES", "CONSTANTS_FILE", "DISTRIBUTED_CANDIDATES", "EPOCH_FEATURES", "FALL_BACK_FRACTION",
           "FIRST_ORDER", "PROBE_CONTINUE", "PROBE_EPOCH_SECONDS_PER_NNZ", "PROBE_FRACTION", "PROBE_MAX_OWN_RATIO",
           "PROBE_MIN_EPOCHS", "PROBE_MIN_SECONDS",
           "SPARSE_ROW_SETS", "CostInputs", "DataShape",
           "Prediction", "Probe", "certificate_work", "certificates", "constants", "cost_inputs", "epoch_features",
           "fallback_order", "predict",
           "predict_all", "probe", "probe_forecast", "refresh_work", "register_cost_form", "reload_constants",
           "wide_path_available", "wide_work"]

#: the in-memory backends ``"auto"`` compares, cheapest first on ties
CANDIDATES = ("dcd", "robust-dcd", "feature-ipm", "logistic-newton", "clarabel")
#: the backends compared for ``dask.array`` data, once registered (their cost forms come from their modules)
DISTRIBUTED_CANDIDATES = ("dask-ipm", "dask-cocoa")
#: the in-memory form a distributed backend is costed by until it registers its own
STAND_INS = {"dask-ipm": "feature-ipm", "dask-cocoa": "robust-dcd"}
#: a first-order backend predicted to need more than this fraction of its epoch budget is likely to fall back
FALL_BACK_FRACTION = 0.5
#: the epoch budget of the first-order backends when the caller gives none (their declared ``max_iter``)
EPOCH_BUDGET = 1000
#: the first-order candidates (their cost is epochs × a per-epoch cost; the epochs are the uncertain part)
FIRST_ORDER = ("dcd", "robust-dcd")
#: a chosen second-order or conic solve predicted to take at least this long may be preceded by a first-order
#: probe (:func:`probe`) of ``PROBE_FRACTION`` of that prediction (shorter problems pay nothing: docs/auto.md)
PROBE_MIN_SECONDS = 0.02
PROBE_FRACTION = 0.15
#: the probe's epochs are costed at no less than this many seconds per stored entry: its first epochs run before
#: shrinking drops any sample, so they cost more than the run's mean epoch that the fitted form predicts
#: (measured 1.6–2.5 ns per entry on the 1,000 × 3,000 Box and the 20,000 × 100 Ball, dense)
PROBE_EPOCH_SECONDS_PER_NNZ = 1.5e-9
#: a probe with room for fewer predicted epochs than this is not made
PROBE_MIN_EPOCHS = 30
#: a probe is made only for a first-order backend whose own predicted time (its predicted epochs at its per-epoch
#: cost, without the budget's cap or the charge of a fall-back) is at most this multiple of the choice's
PROBE_MAX_OWN_RATIO = 1.2
#: a probe that did not certify is continued (robust-dcd from its dual point, dcd from the start) when
#: :func:`probe_forecast` gives it at most this fraction of the choice's predicted time still to run, and twice the
#: forecast epochs fit in its epoch budget with the probe's
PROBE_CONTINUE = 0.5
#: the file of fitted constants (rewritten by ``benchmarks/bench_auto.py``)
CONSTANTS_FILE = Path(__file__).with_name("cost_constants.json")
#: the regressors of ``log E``, in the order of the fitted coefficients
EPOCH_FEATURES = ("const", "log_CR2", "log_min", "log_tall", "log_wide", "log_density", "box", "ball", "ball1",
                  "ellipsoid", "squared_hinge", "l1")


# ------------------------------------------------------------------------------------------------------ inputs
@dataclass(frozen=True)
class DataShape:
    """What the rule reads of the data: ``n``, ``d``, the non-zeros, whether it is sparse or distributed.

    ``free`` is the number of features without a sign constraint when the signs are resolved (None: unknown,
    read from the problem); ``points`` the number of grid points to solve on these data; ``sq_norm`` the mean
    squared row norm ``R² = Σ_i ‖x_i‖² / n`` (None: unknown, taken as ``nnz / n``, the value for entries of
    unit variance).
    """

    n: int
    d: int
    nnz: int
    sparse: bool = False
    distributed: bool = False
    free: int | None = None
    points: int = 1
    sq_norm: float | None = None

    @classmethod
    def of(cls, data: Any, n_samples: int | None = None) -> DataShape:
        """The shape of ``data``: a ``DataShape``, a ``Model`` or ``FitData`` (their ``X`` and signs), a
        NumPy, SciPy sparse or Dask array, or an int (the number of features, with ``n_samples`` rows when
        given, else as many rows as features times :data:`_ASSUMED_ROWS_PER_FEATURE`). The mean squared row
        norm is read from an in-memory array in one pass (O(nnz)); of anything else it is left unknown."""
        if isinstance(data, DataShape):
            return data
        if isinstance(data, (int, np.integer)) and not isinstance(data, bool):
            d = int(data)
            n = int(n_samples) if n_samples is not None else max(1, _ASSUMED_ROWS_PER_FEATURE * d)
            return cls(n=n, d=d, nnz=n * d)
        free = None
        signs = getattr(data, "signs", None)
        if hasattr(data, "X"):
            X = data.X
            if signs is not None:
                free = int(np.count_nonzero(np.asarray(signs) == 0))
        else:
            X = data
        shape = getattr(X, "shape", None)
        if shape is None or len(shape) != 2:
            raise TypeError(f"data must be a 2-D array, a model or a number of features, got {type(data).__name__}")
        n, d = int(shape[0]), int(shape[1])
        if sp.issparse(X):
            values = np.asarray(X.data, dtype=float)
            return cls(n=n, d=d, nnz=int(X.nnz), sparse=True, free=free, sq_norm=_mean_sq(values, n))
        if type(X).__module__.split(".")[0] == "dask":  # sparse when its chunks are (dask's ``_meta``)
            return cls(n=n, d=d, nnz=n * d, distributed=True, free=free, sparse=sp.issparse(getattr(X, "_meta", None)))
        sq_norm = _mean_sq(np.asarray(X, dtype=float), n) if isinstance(X, np.ndarray) else None
        return cls(n=n, d=d, nnz=n * d, free=free, sq_norm=sq_norm)


def _mean_sq(values: np.ndarray, n: int) -> float | None:
    """``Σ values² / n`` in one pass (None when it is not finite: the backends reject such data anyway)."""
    flat = values.reshape(-1)
    total = float(np.dot(flat, flat)) if flat.size else 0.0
    return total / max(n, 1) if math.isfinite(total) else None


#: rows assumed per feature when only the number of features is known (the tall data the interior point is for)
_ASSUMED_ROWS_PER_FEATURE = 50


@dataclass(frozen=True)
class CostInputs:
    """The numbers a cost form reads: the shape, the set, the loss, the conditioning and the constraints.

    ``set_kind`` is ``"none"``, ``"box"``, ``"ball"`` (p = 2 or ∞), ``"ball1"``, ``"ellipsoid"`` or ``"other"``;
    ``C = c̄/λ2`` (``math.inf`` without an L2 penalty); ``points`` grid points are solved on the same data
    (``feature-ipm`` batches them: one Gram product per iteration for all; the others solve them one by one);
    ``wide``: ``feature-ipm`` declares a path for n < d (:func:`wide_path_available`), costed by its wide form;
    ``sq_norm``: the mean squared row norm ``R²`` (None: ``nnz / n``, see :attr:`row_scale`).
    """

    n: int
    d: int
    nnz: int
    sparse: bool
    set_kind: str
    loss: str
    C: float
    free: int
    l1: bool
    intercept: str
    epoch_budget: int = EPOCH_BUDGET
    points: int = 1
    wide: bool = False
    sq_norm: float | None = None

    @property
    def density(self) -> float:
        return self.nnz / max(1, self.n * self.d)

    @property
    def row_scale(self) -> float:
        """``R²``, the mean squared row norm: :attr:`sq_norm` when known and positive, else ``nnz / n`` (the
        mean for entries of unit variance, as on the fitting grid)."""
        if self.sq_norm is not None and self.sq_norm > 0.0:
            return float(self.sq_norm)
        return self.nnz / max(1, self.n)


def _set_kind(uncertainty: Any) -> str:
    if uncertainty is None:
        return "none"
    sets = list(uncertainty) if isinstance(uncertainty, (list, tuple)) else [uncertainty]
    if not sets:
        return "none"
    if len({s.key() for s in sets if isinstance(s, UncertaintySet)}) > 1:
        return "other"
    return getattr(sets[0], "cost_class", "other")  # what the set declares its costs are


def _free_features(problem: Any, shape: DataShape) -> int:
    if shape.free is not None:
        return shape.free
    signs = getattr(problem, "signs", None)
    if signs is None:
        return shape.d
    if isinstance(signs, Mapping):
        return max(0, shape.d - len(signs))
    try:
        arr = np.asarray(signs, dtype=float)
    except (TypeError, ValueError):
        return shape.d
    return int(np.count_nonzero(arr == 0)) if arr.shape == (shape.d,) else shape.d


def cost_inputs(problem: Any, data: Any, *, epoch_budget: int | None = None, points: int | None = None) -> CostInputs:
    """The :class:`CostInputs` of ``problem`` on ``data`` (anything :meth:`DataShape.of` reads)."""
    shape = DataShape.of(data)
    loss = problem.loss
    l2 = float(problem.penalty.l2)
    mean_c = 1.0 / shape.n if getattr(loss, "reduction", "mean") == "mean" else 1.0
    return CostInputs(
        n=shape.n, d=shape.d, nnz=shape.nnz, sparse=shape.sparse, set_kind=_set_kind(problem.uncertainty),
        loss=getattr(loss, "cost_class", loss.name), C=mean_c / l2 if l2 > 0 else math.inf,
        free=_free_features(problem, shape),
        l1=float(problem.penalty.l1) > 0, intercept=intercept_term(problem.intercept).mode,
        epoch_budget=int(epoch_budget) if epoch_budget is not None else EPOCH_BUDGET,
        points=max(1, int(shape.points if points is None else points)),
        wide=takes_wide_path(shape.n, shape.d, _set_kind(problem.uncertainty)), sq_norm=shape.sq_norm,
    )


# ------------------------------------------------------------------------------------------------------ constants
@lru_cache(maxsize=4)
def _read(path: str) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def constants(path: Path | str | None = None) -> dict:
    """The fitted constants (``cost_constants.json``, or the file ``path``), read once."""
    return _read(str(CONSTANTS_FILE if path is None else Path(path)))


def reload_constants() -> None:
    """Forget the constants read so far (after the file was rewritten)."""
    _read.cache_clear()
    _LAST.clear()


# ------------------------------------------------------------------------------------------------------ the forms
@dataclass(frozen=True)
class Prediction:
    """A backend's predicted solve: ``seconds`` (its fall-back included when likely), ``iterations`` and
    whether it is likely to stop short of its tolerance and fall back; ``terms["own"]`` is the time of the
    backend's own run (without the fall-back)."""

    backend: str
    seconds: float
    iterations: float
    falls_back: bool = False
    terms: dict = field(default_factory=dict)


def epoch_features(x: CostInputs) -> np.ndarray:
    """The regressors of ``log E`` (:data:`EPOCH_FEATURES`) for the first-order backends.

    The conditioning enters as ``log(C R²)``: scaling the rows by ``t`` and ``λ2`` by ``t²`` leaves the
    problem the same (``w → w/t``), so the epochs depend on ``C`` and the row scale ``R²`` only through their
    product (``docs/auto.md``).
    """
    ln, ld = math.log(max(x.n, 1)), math.log(max(x.d, 1))
    log_cr2 = math.log(min(x.C, 1e12)) + math.log(max(x.row_scale, 1e-12))
    return np.array([
        1.0, log_cr2, min(ln, ld), max(ln - ld, 0.0), max(ld - ln, 0.0), math.log(max(x.density, 1e-12)),
        float(x.set_kind == "box"), float(x.set_kind == "ball"), float(x.set_kind == "ball1"),
        float(x.set_kind == "ellipsoid"), float(x.loss == "squared_hinge"), float(x.l1),
    ])


#: the sets whose sparse coordinate step touches the row's stored entries only (no O(d) refresh of the prox)
SPARSE_ROW_SETS = ("box", "ball")


def refresh_work(x: CostInputs) -> float:
    """The work per epoch of the first-order methods' refresh of the set's state after each step: ``n·d``, or 0
    on sparse rows of a set in :data:`SPARSE_ROW_SETS` (the 2-ball's and the box's steps are O(nnz(x_i)) there)."""
    return 0.0 if x.sparse and x.set_kind in SPARSE_ROW_SETS else float(x.n) * x.d


def gram_work(x: CostInputs) -> float:
    """The work of one weighted Gram ``Aᵀ diag(s) A``: ``n(d+2)²`` dense, ``≈ nnz²/n + n`` sparse."""
    if x.sparse:
        return x.nnz * (x.nnz / max(x.n, 1) + 4.0) + x.n
    return x.n * (x.d + 2.0) ** 2


def wide_path_available() -> bool:
    """Whether the registered ``feature-ipm`` declares a path for wide data (n < d): a true ``wide_path``
    attribute on its :class:`~robustsvm.backends.registry.Backend` or on the module of its ``solve``."""
    try:  # read at call time: a flag set after this module was imported counts
        backend = registry.get_backend("feature-ipm")
    except ValueError:
        return False
    if getattr(backend, "wide_path", False):
        return True
    module = sys.modules.get(getattr(backend.solve, "__module__", ""), None)
    return bool(getattr(module, "wide_path", False))


def takes_wide_path(n: int, d: int, set_kind: str) -> bool:
    """Whether ``feature-ipm`` solves this shape by its wide path: declared (:func:`wide_path_available`),
    ``n < d``, at least 64 features, and no ellipsoid (the conditions of ``_ipm_wide.takes_wide_path``)."""
    return n < d and d >= 64 and set_kind != "ellipsoid" and wide_path_available()


def wide_work(x: CostInputs) -> tuple[float, float, float]:
    """The work of one wide iteration (n < d, the n × n system of the Woodbury identity or CG):
    ``(n²·d, n³, nnz)`` — the product ``A diag(s)⁻¹ Aᵀ`` (``n·nnz`` when sparse), its factorization, a pass."""
    gram = x.n * x.nnz if x.sparse else x.n * x.n * (x.d + 2.0)
    return gram, float(x.n) ** 3, float(x.nnz)


def _feature_ipm(x: CostInputs, k: Mapping) -> Prediction:
    iters = float(k["iterations"].get(x.set_kind, k["iterations"]["default"]))
    m = x.d + x.free + 2.0
    per = k["gram"] * gram_work(x) + x.points * (k["factor"] * m ** 3 + k["pass"] * x.nnz
                                                 + k.get("step", 0.0) + k.get("rows", 0.0) * x.n)
    form = "dense"
    if x.wide and x.n < x.d:  # min(dense form, wide form): the backend takes the cheaper path
        kw = {**_WIDE_DEFAULTS, **k.get("wide", {})}
        g, f, p = wide_work(x)
        wide = x.points * (kw["gram"] * g + kw["factor"] * f + kw["pass"] * p  # the n × n system: per point
                           + k.get("step", 0.0) + k.get("rows", 0.0) * x.n)
        if wide < per:
            per, form = wide, "wide"
    return Prediction("feature-ipm", iters * per + k["fixed"] + k["setup"] * x.nnz, iters,
                      terms={"per_iteration": per, "form": form})


#: the wide form's constants until a grid run with the wide path fits them (``wide`` in the constants file):
#: a multiply-add of ``n²·d`` at the rate of the dense form's Gram products (20,000 × 400: 3.2·10⁹ in 76 ms),
#: ``n³`` and a pass at the dense form's factorization and pass constants
_WIDE_DEFAULTS = {"gram": 3e-11, "factor": 5e-11, "pass": 6e-9}


def certificates(epochs: float, k: Mapping) -> float:
    """The certificates of a first-order run of ``epochs`` epochs (in the unit of its budget):
    ``K = exp(κ₀) · E^κ₁`` (``k["certificates"]``, fitted on the grid's runs; none without it). The schedule
    (:func:`.dual_ascent.next_check`) spaces them by the decay of the gap, so they grow more slowly than the
    epochs (κ₁ < 1)."""
    fit = k.get("certificates")
    if not fit:
        return 0.0
    return float(math.exp(fit["const"]) * max(epochs, 1.0) ** fit["log_epochs"])


def certificate_work(x: CostInputs, k: Mapping) -> float:
    """The seconds of one certificate of a first-order run, ``c₀ + c_nnz·nnz + c_n·n`` (``k["certificate"]``): the
    margins over the whole of ``X``, the objective and the dual value, and its Python work."""
    c = k.get("certificate", {})
    return c.get("fixed", 0.0) + c.get("nnz", 0.0) * x.nnz + c.get("n", 0.0) * x.n


def _first_order(name: str) -> Callable[[CostInputs, Mapping], Prediction]:
    def form(x: CostInputs, k: Mapping) -> Prediction:
        theta = np.array([k["epochs"].get(f, 0.0) for f in EPOCH_FEATURES])
        epochs = float(np.exp(np.clip(theta @ epoch_features(x), 0.0, 30.0)))
        refresh = k.get("refresh", {})
        per = (k["nnz"] * x.nnz + k["n"] * x.n + k["d"] * x.d
               + refresh.get(x.set_kind, refresh.get("default", 0.0)) * refresh_work(x))
        if x.set_kind == "ellipsoid":
            per += k.get("ellipsoid", 0.0) * x.n * x.d ** 2
        likely = epochs > k.get("fall_back_fraction", FALL_BACK_FRACTION) * x.epoch_budget
        spent = min(epochs, x.epoch_budget) if not likely else x.epoch_budget
        certs, per_certificate = certificates(spent, k), certificate_work(x, k)
        seconds = x.points * (spent * per + certs * per_certificate + k["fixed"]) + k.get("setup", 0.0) * x.nnz
        return Prediction(name, seconds, epochs, falls_back=likely,
                          terms={"per_epoch": per, "own": seconds, "certificates": certs,
                                 "per_certificate": per_certificate, "certificate_law": k.get("certificates")})

    return form


def _conic(x: CostInputs, k: Mapping) -> Prediction:
    seconds = (k["fixed"] + k["nnz"] * (x.nnz + x.n)  # compiled once for a grid, solved at every point
               + x.points * (k["factor"] * x.n * min(x.n, x.d) ** 2 + k["cube"] * x.d ** 3))
    if x.set_kind == "ellipsoid":
        seconds += k["nnz"] * x.d ** 2
    return Prediction("clarabel", seconds, float(k.get("iterations", 20.0)))


def _logistic_newton(x: CostInputs, k: Mapping) -> Prediction:
    """``T = e + I·(a·n(d+1)² + c·nnz + r·n)`` with the d × d Hessian (dense data, moderate ``d``), else
    ``T = e + I·(c·(1 + J)·nnz + r·n)`` with ``J`` conjugate-gradient steps per Newton iteration."""
    if not x.sparse and x.d <= DENSE_HESSIAN_MAX_D:
        iters = float(k["iterations"]["dense"])
        per = k["gram"] * x.n * (x.d + 1.0) ** 2 + k["pass"] * x.nnz + k["rows"] * x.n
    else:
        iters = float(k["iterations"]["cg"])
        per = k["pass"] * (1.0 + k["cg_steps"]) * x.nnz + k["rows"] * x.n
    return Prediction("logistic-newton", x.points * (iters * per + k["fixed"]), iters,
                      terms={"per_iteration": per, "own": x.points * (iters * per + k["fixed"])})


#: ``logistic-newton``'s constants, fitted by ``benchmarks/fit_logistic_cost.py`` on 8 shapes and checked on 5
#: held-out ones (predicted/measured 0.62–1.04; ``docs/auto.md``); not part of the shape grid's refit
LOGISTIC_NEWTON_CONSTANTS = {"fixed": 2.3e-3, "gram": 3.3e-11, "pass": 2.6e-9, "rows": 1.8e-7, "cg_steps": 6.0,
                             "iterations": {"dense": 5.0, "cg": 4.0}}

#: backend name → cost form ``form(inputs, constants) -> Prediction``
_FORMS: dict[str, Callable[[CostInputs, Mapping], Prediction]] = {
    "feature-ipm": _feature_ipm, "dcd": _first_order("dcd"), "robust-dcd": _first_order("robust-dcd"),
    "logistic-newton": _logistic_newton, "clarabel": _conic,
}


def register_cost_form(name: str, form: Callable[[CostInputs, Mapping], Prediction], *,
                       default_constants: Mapping | None = None) -> None:
    """Give backend ``name`` a cost form (a distributed backend registers its own here, with its constants
    when the fitted file has none for it)."""
    _FORMS[name] = form
    if default_constants is not None:
        _DEFAULTS[name] = dict(default_constants)


_DEFAULTS: dict[str, dict] = {"logistic-newton": LOGISTIC_NEWTON_CONSTANTS}


def predict(name: str, x: CostInputs, table: Mapping | None = None) -> Prediction:
    """Backend ``name``'s predicted solve of ``x`` with the constants ``table`` (the fitted file by default).
    A distributed backend without a form of its own is costed as its in-memory counterpart."""
    table = constants() if table is None else table
    form_name = name if name in _FORMS else STAND_INS.get(name)
    if form_name is None:
        raise KeyError(f"no cost form for backend {name!r}")
    k = table.get(name) or _DEFAULTS.get(name) or table[form_name]
    pred = _FORMS[form_name](x, k)
    if pred.falls_back and name != "clarabel":
        conic = _conic(x, table["clarabel"])
        pred = Prediction(name, pred.seconds + conic.seconds, pred.iterations, True, pred.terms)
    return Prediction(name, pred.seconds, pred.iterations, pred.falls_back, pred.terms)


def predict_all(names: tuple[str, ...] | list[str], x: CostInputs, table: Mapping | None = None) -> list[Prediction]:
    """:func:`predict` for each of ``names``, cheapest first (ties in the order given).

    The order weighs each prediction by the backend's ``margins`` entry of the table (fitted: the first-order
    epochs are the least certain part of the model, so a first-order backend must be predicted faster by that
    factor to be preferred). The last answer is kept (the inputs are hashable): ``"auto"`` asks for the same
    predictions to choose, to plan its first-order attempt and its fall-backs, and pays for them once."""
    table = constants() if table is None else table
    key = (tuple(names), x)
    last = _LAST.get("predictions")
    if last is not None and last[0] == key and last[1] is table:
        return list(last[2])
    margins = table.get("margins", {})
    preds = [predict(name, x, table) for name in names]
    order = sorted(range(len(preds)), key=lambda i: (preds[i].seconds * margins.get(preds[i].backend, 1.0), i))
    out = [preds[i] for i in order]
    _LAST["predictions"] = (key, table, tuple(out))  # the table is held: its id is not reused while kept
    return list(out)


#: the last call of :func:`predict_all` (its inputs, its table and its answer)
_LAST: dict[str, tuple] = {}


def fallback_order(predictions: list[Prediction], tried: tuple[str, ...] | list[str] = ()) -> list[str]:
    """The backends ``"auto"`` turns to, in order, after those of ``tried`` stopped short or failed.

    ``predictions`` are those of the accepting candidates (cheapest first). The next ones are the candidates not
    tried yet that are expected to certify (not likely to stop short, :attr:`Prediction.falls_back`) and are
    predicted faster than the conic path, by their own predicted time (the fall-back not included); Clarabel
    comes last, as the solve of last resort.
    """
    conic = next((p.seconds for p in predictions if p.backend == "clarabel"), math.inf)
    rest = [p for p in predictions if p.backend not in tried and p.backend != "clarabel" and not p.falls_back
            and p.terms.get("own", p.seconds) <= conic]
    out = [p.backend for p in sorted(rest, key=lambda p: p.terms.get("own", p.seconds))]
    return [*out, "clarabel"]


@dataclass(frozen=True)
class Probe:
    """A bounded first attempt of ``"auto"``: ``backend`` run for at most ``epochs`` epochs of its budget (its
    ``max_iter``; predicted to take ``time_limit`` seconds) before ``chosen`` (predicted to take ``chosen_seconds``).
    Without ``epochs`` the attempt is bounded by ``time_limit`` seconds of wall time instead (not reproducible
    on a loaded machine: ``"auto"``'s own probes give ``epochs``)."""

    backend: str
    time_limit: float
    chosen: str
    chosen_seconds: float
    epochs: int | None = None


def probe(predictions: list[Prediction], x: CostInputs) -> Probe | None:
    """The first-order probe worth making before ``predictions[0]`` (cheapest first), or None.

    The epoch count of a first-order backend depends on the data's conditioning and on the set, which the shape
    does not tell (on the same 1,000 × 1,000 data robust-dcd certifies the Ball in 241 epochs and stops at its
    budget on the Box). So when the cheapest prediction is an interior point or a conic solve of at least
    :data:`PROBE_MIN_SECONDS` and a first-order backend is close to it (its predicted epochs at its per-epoch
    cost with its certificates, no budget cap and no fall-back charge, within :data:`PROBE_MAX_OWN_RATIO` of the
    choice's time), that
    backend runs first for the most epochs ``k`` with ``k·t_epoch + K(k)·t_cert ≤ PROBE_FRACTION · T_chosen``
    (``t_epoch`` its predicted cost per epoch, at least :data:`PROBE_EPOCH_SECONDS_PER_NNZ` per stored entry,
    ``K(k)`` its certificates, :func:`certificates`, of ``t_cert`` each; at least :data:`PROBE_MIN_EPOCHS`,
    else no probe; no wall-clock limit, which a loaded machine would reach early). A certified answer is
    returned; otherwise :func:`probe_forecast` reads the decay of its certified gap and decides whether it
    finishes first. The number of epochs is a function of the predictions, so the choice is the same on every
    run (the backends are seeded). Grids (``points > 1``) are not probed; a problem predicted to take less than
    :data:`PROBE_MIN_SECONDS` is not either (the probe's fixed cost, a solve call and a certificate, would be a
    visible part of it).
    """
    if not predictions or x.points > 1:
        return None
    best = predictions[0]
    if best.backend in FIRST_ORDER or best.seconds < PROBE_MIN_SECONDS:
        return None
    first = [p for p in predictions if p.backend in FIRST_ORDER and p.terms.get("per_epoch", 0.0) > 0.0]
    if not first:
        return None

    def run_time(p: Prediction, epochs: float | None = None, per: float | None = None) -> float:
        """``epochs`` (its predicted ones) at ``per`` (its per-epoch cost) and their certificates: no budget cap,
        no fall-back."""
        e = p.iterations if epochs is None else epochs
        law = {"certificates": p.terms.get("certificate_law")}
        return e * (p.terms["per_epoch"] if per is None else per) + certificates(e, law) * p.terms.get(
            "per_certificate", 0.0)

    fastest = min(first, key=run_time)
    if run_time(fastest) > PROBE_MAX_OWN_RATIO * best.seconds:
        return None
    limit = PROBE_FRACTION * best.seconds
    per_epoch = max(fastest.terms["per_epoch"], PROBE_EPOCH_SECONDS_PER_NNZ * x.nnz)
    lo, hi = 0, int(x.epoch_budget)  # the most epochs whose predicted time, certificates included, fits the limit
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if run_time(fastest, mid, per_epoch) <= limit else (lo, mid - 1)
    epochs = lo
    if epochs < PROBE_MIN_EPOCHS:
        return None
    return Probe(fastest.backend, float(limit), best.backend, float(best.seconds), epochs)


def probe_forecast(history: Mapping[str, Any], epochs: int, seconds: float, tol: float) -> float:
    """The seconds a first-order backend stopped after ``epochs`` epochs (in ``seconds``) still needs to reach the
    relative gap ``tol``, read from its certified gaps ``history`` (``iteration``, ``rel_gap``); ``inf`` when the
    gap does not decrease.

    The gap of a dual coordinate method decays geometrically on well-conditioned data and like a power of the
    epoch on the tail of ill-conditioned data; the forecast fits the power law, the slower of the two from the
    same two points: ``g(e) = g₂ (e/e₂)^(−p)``, ``p = log(g₁/g₂) / log(e₂/e₁)``, through the last certificate
    ``(e₂, g₂)`` and the first one at or after half the probe ``(e₁, g₁)``, so the remaining epochs are
    ``e₂ ((g₂/tol)^(1/p) − 1)``, each at ``seconds / epochs`` (``"auto"`` passes the probe's predicted cost
    of an epoch, so that its decision does not depend on the machine's load; ``epochs=1, seconds=1`` gives the
    epochs).
    """
    its = np.asarray(history.get("iteration", ()), dtype=float)
    gaps = np.asarray(history.get("rel_gap", ()), dtype=float)
    keep = np.isfinite(gaps) & (gaps > 0) & (its > 0)
    its, gaps = its[keep], gaps[keep]
    if its.size < 2 or epochs <= 0:
        return math.inf
    e2, g2 = its[-1], gaps[-1]
    if g2 <= tol:
        return 0.0
    i = int(np.searchsorted(its, 0.5 * e2))
    i = min(i, its.size - 2)
    e1, g1 = its[i], gaps[i]
    if e2 <= e1 or g1 <= g2:
        return math.inf
    p = math.log(g1 / g2) / math.log(e2 / e1)
    remaining = e2 * ((g2 / tol) ** (1.0 / p) - 1.0)
    return float(remaining * seconds / epochs)

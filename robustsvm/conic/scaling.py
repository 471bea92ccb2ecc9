"""The data scale of a compiled program: entries of order 1 for the solver, parameters in the program's units.

A program compiled on data whose largest entry is far from 1 sees ``κX`` with ``κ`` a power of two
(:func:`data_scale`); its parameters are then ``λ2κ²``, ``λ1κ`` and ``rκ`` (:func:`scaled`), and its point is
mapped back exactly.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["RESCALE_RANGE", "SCALED_PARAMETER_LIMIT", "SCALE_FAR_NOTED", "SCALE_SPREAD_NOTED", "column_scale",
           "data_scale", "scale_note", "scale_rows", "scaled", "scales_note"]

#: data whose largest entry lies in [1/RESCALE_RANGE, RESCALE_RANGE] are compiled as they are
RESCALE_RANGE = 16.0


#: the largest parameter value a rescaled program may be given (λ2κ², λ1κ, rκ); beyond it κ is not applied
SCALED_PARAMETER_LIMIT = 1e100


def data_scale(X, model=None) -> float:
    """The power of two nearest to ``1/max|X_ih|``; 1 when that entry is already within a factor 16 of 1.

    A power of two makes the scaling exact in floating point. When the
    parameters in the program's units (``λ2κ²``, ``λ1κ``, ``r_i κ``) would
    pass :data:`SCALED_PARAMETER_LIMIT` (features of order 1e-160 give
    ``κ² ≈ 1e320``, past the float range), the data are compiled unscaled:
    the solver then sees entries far below its tolerances, and the package's
    certificate says how close the point it returns is.
    """
    data = X.data if sp.issparse(X) else np.asarray(X)
    top = float(np.max(np.abs(data))) if data.size else 0.0
    if not np.isfinite(top) or top <= 0.0 or 1.0 / RESCALE_RANGE <= top <= RESCALE_RANGE:
        return 1.0
    kappa = float(2.0 ** -np.round(np.log2(top)))
    if model is not None and kappa > 1.0:
        r = 0.0 if model.layout is None or model.layout.radius.size == 0 else float(np.max(model.layout.radius))
        with np.errstate(over="ignore"):
            scaled = np.array([model.l2 * kappa * kappa, model.l1 * kappa, r * kappa])
        if not np.all(scaled <= SCALED_PARAMETER_LIMIT):
            return 1.0
    return kappa


def scale_rows(X, y: np.ndarray):
    """``diag(y) X`` without densifying a sparse X."""
    if sp.issparse(X):
        return sp.diags(y) @ X
    return X * y[:, None]


def scaled(value: float, name: str, kappa: float) -> float:
    """A parameter in the program's units, refused when the data scale κ pushed it past the float range."""
    if not np.isfinite(value):
        raise ValueError(f"{name} times the data scale (κ = {kappa:g}, the inverse of the largest |X| entry, applied "
                         "when the program was compiled) overflows; compile with rescale=False or rescale X")
    return value


#: feature scales (largest ``|x_ih|`` of a column) further apart than this factor are named when a solve fails
SCALE_SPREAD_NOTED = 1e3
#: a largest ``|x_ih|`` above this or below its inverse is named when a solve fails (penalties, radii and solver
#: tolerances are set for features of order 1)
SCALE_FAR_NOTED = 1e4


def column_scale(X) -> np.ndarray:
    """``max_i |x_ih|`` of each column of a dense or sparse ``X`` (without a copy of a dense ``X``; 0 without rows)."""
    if X.shape[0] == 0:
        return np.zeros(X.shape[1])
    if sp.issparse(X):
        return np.asarray(abs(X).max(axis=0).todense()).ravel()
    return np.maximum(X.max(axis=0), -X.min(axis=0))


def scale_note(X, feature_names=None) -> str:
    """What to add to the message of a failed or unfinished solve when the features' scales ``max_i |x_ih|``
    differ by more than :data:`SCALE_SPREAD_NOTED`, or the largest is further from 1 than :data:`SCALE_FAR_NOTED`:
    the columns concerned and the remedy (empty otherwise, and for data that are not an in-memory array)."""
    if not (isinstance(X, np.ndarray) or sp.issparse(X)) or X.ndim != 2 or X.shape[0] == 0:
        return ""
    return scales_note(column_scale(X), feature_names)


def scales_note(scale: np.ndarray, feature_names=None) -> str:
    """:func:`scale_note` from the columns' scales ``max_i |x_ih|`` (on a cluster, the largest over the partitions)."""
    present = np.flatnonzero(np.isfinite(scale) & (scale > 0))
    if present.size == 0:
        return ""
    big, small = present[np.argmax(scale[present])], present[np.argmin(scale[present])]

    def name(h: int) -> str:
        return f"feature {h}" if feature_names is None else f"feature {h} ({feature_names[h]!s})"

    remedy = "standardize the features (StandardScaler; the set's radius is then in standard deviations)"
    if scale[big] > SCALE_SPREAD_NOTED * scale[small]:
        return (f"; the features' scales differ by a factor of {scale[big] / scale[small]:.3g} (largest |x| "
                f"{scale[big]:.4g} in {name(big)}, {scale[small]:.4g} in {name(small)}), on which solvers can stall "
                f"or fail: {remedy}")
    if not 1.0 / SCALE_FAR_NOTED <= scale[big] <= SCALE_FAR_NOTED:
        return (f"; the features' largest |x| is {scale[big]:.4g} (in {name(big)}), far from the order 1 for which "
                f"penalties and solver tolerances are set: {remedy}, or scale λ2 with the features")
    return ""

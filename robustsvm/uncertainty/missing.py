"""Missing values as uncertainty (Shivaswamy, Bhattacharyya & Smola, JMLR 2006, §4).

A row ``x`` with observed coordinates ``O`` and missing ones ``M`` is, under a Gaussian ``N(μ, Σ)`` for
the rows, known to have

    x_M | x_O ~ N(μ_M + Σ_MO Σ_OO⁻¹ (x_O − μ_O),  Σ_MM − Σ_MO Σ_OO⁻¹ Σ_OM),

so the row becomes the centre ``c`` (``c_O = x_O``, ``c_M`` the conditional mean) and the set
``{c + v : v_O = 0, v_Mᵀ C⁻¹ v_M ≤ κ²}`` (a :class:`CoordinateEllipsoid` of shape the conditional
covariance ``C``) with ``κ² = χ²_{|M|}⁻¹(level)``: it holds the true row with probability ``level``.
A complete row gets the set ``{0}`` (radius 0). The derivation is in ``docs/missing_values.md``.

:func:`fit_gaussian` estimates ``(μ, Σ)`` by maximum likelihood with EM on all rows (``method="em"``)
or from the complete rows only (``method="complete"``); :func:`missing_as_uncertainty` builds the
centres and sets.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .base import UncertaintySet
from .chance import check_level, chi2_radius
from .coordinate_ellipsoid import CoordinateEllipsoid

__all__ = ["ConditionalGaussian", "MissingValues", "fit_gaussian", "missing_as_uncertainty"]

#: the change of (μ, Σ) in units of the columns' standard deviations below which EM stops, and its iteration cap
EM_TOL = 1e-7
EM_MAX_ITER = 500


def check_incomplete(X: Any, *, name: str = "X") -> np.ndarray:
    """``X`` as a dense (n, d) float array in which NaN marks a missing value (infinity is refused).

    Raises
    ------
    TypeError
        A sparse matrix (a NaN in it would be ambiguous with its implicit zeros).
    ValueError
        Not 2-D, empty, an infinite entry, or a column with no observed value (its distribution is unknown).
    """
    if hasattr(X, "tocsr") or hasattr(X, "toarray"):
        raise TypeError(f"{name} with missing values must be a dense array (NaN marks a missing value), "
                        "got a sparse matrix")
    X = np.array(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"{name} must be a non-empty (n, d) array, got shape {X.shape}")
    if np.any(np.isinf(X)):
        raise ValueError(f"{name} contains infinity (only NaN marks a missing value)")
    empty = np.flatnonzero(np.all(np.isnan(X), axis=0))
    if empty.size:
        raise ValueError(f"{name} has no observed value in column(s) {empty.tolist()}: their distribution is unknown")
    return X


@dataclass
class ConditionalGaussian:
    """A Gaussian ``N(mean, covariance)`` for the rows, and what it says about their missing coordinates.

    Attributes
    ----------
    mean : ndarray of shape (d,)
    covariance : ndarray of shape (d, d)
        Symmetric positive definite.
    """

    mean: np.ndarray
    covariance: np.ndarray

    def __post_init__(self) -> None:
        self.mean = np.asarray(self.mean, dtype=np.float64)
        self.covariance = np.asarray(self.covariance, dtype=np.float64)
        d = self.mean.shape[0]
        if self.mean.ndim != 1 or self.covariance.shape != (d, d):
            raise ValueError(f"mean must have shape (d,) and covariance (d, d), got {self.mean.shape} and "
                             f"{self.covariance.shape}")
        if not (np.all(np.isfinite(self.mean)) and np.allclose(self.covariance, self.covariance.T)):
            raise ValueError("mean must be finite and covariance symmetric")
        try:
            np.linalg.cholesky(self.covariance)
        except np.linalg.LinAlgError as exc:
            raise ValueError("covariance must be positive definite") from exc
        self.precision = np.linalg.inv(self.covariance)

    def conditional(self, pattern: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(M, G, C)`` for a missing pattern (a boolean mask, True where missing), from the precision
        ``P = Σ⁻¹``: the missing coordinates ``M``, the gain ``G = Σ_MO Σ_OO⁻¹ = −C P_MO`` of the conditional
        mean ``μ_M + G(x_O − μ_O)`` and the conditional covariance ``C = Σ_MM − Σ_MO Σ_OO⁻¹ Σ_OM = P_MM⁻¹``."""
        pattern = np.asarray(pattern, dtype=bool)
        M, O = np.flatnonzero(pattern), np.flatnonzero(~pattern)
        P = self.precision
        C = np.linalg.inv(P[np.ix_(M, M)])
        C = 0.5 * (C + C.T)
        return M, -C @ P[np.ix_(M, O)], C

    def impute(self, X: Any) -> np.ndarray:
        """``X`` with every missing value replaced by its conditional mean given the row's observed values."""
        X = check_incomplete(X)
        if X.shape[1] != self.mean.shape[0]:
            raise ValueError(f"X has {X.shape[1]} features but the Gaussian has {self.mean.shape[0]}")
        return self._expectations(X, np.isnan(X))[0]

    def _expectations(self, X: np.ndarray, miss: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The rows with their conditional means filled in, and ``Σ_i E_M C_i E_Mᵀ`` (the E-step of EM).

        With ``r_i = x_i − μ`` set to 0 where missing, ``P_MO r_O = (P r)_M``, so ``c_M = μ_M − C (P r)_M``:
        one product for all rows, then batched ``k × k`` inverses for the rows with ``k`` missing values.
        """
        d = X.shape[1]
        P = self.precision
        R = np.where(miss, 0.0, X - self.mean)
        Q = R @ P
        filled = np.where(miss, 0.0, X)
        extra = np.zeros((d, d))
        counts = miss.sum(axis=1)
        for k in np.unique(counts[counts > 0]):
            rows = np.flatnonzero(counts == k)
            Mi = np.nonzero(miss[rows])[1].reshape(rows.size, k)  # each row's missing coordinates, increasing
            C = np.linalg.inv(P[Mi[:, :, None], Mi[:, None, :]])
            q = np.take_along_axis(Q[rows], Mi, axis=1)
            filled[rows[:, None], Mi] = self.mean[Mi] - np.einsum("rab,rb->ra", C, q)
            np.add.at(extra, (Mi[:, :, None], Mi[:, None, :]), C)
        return filled, 0.5 * (extra + extra.T)


def _patterns(X: np.ndarray):
    """``(pattern index, rows, missing mask)`` for each distinct missing pattern with at least one missing value."""
    miss = np.isnan(X)
    uniq, inverse = np.unique(miss, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    for p, pattern in enumerate(uniq):
        if pattern.any():
            yield p, np.flatnonzero(inverse == p), pattern


def _check_shrinkage(shrinkage: Any) -> float | None:
    if shrinkage is None:
        return None
    if isinstance(shrinkage, (bool, np.bool_)) or not isinstance(shrinkage, (int, float, np.floating, np.integer)):
        raise TypeError(f"shrinkage must be None or a number in [0, 1), got {shrinkage!r}")
    if not 0.0 <= float(shrinkage) < 1.0:
        raise ValueError(f"shrinkage must lie in [0, 1), got {shrinkage!r}")
    return float(shrinkage)


def _shrink(S: np.ndarray, delta: float) -> np.ndarray:
    """``(1 − δ) S + δ diag(S)``: the correlations shrunk by ``1 − δ``, the variances kept."""
    return (1.0 - delta) * S + delta * np.diag(np.diag(S))


def fit_gaussian(X: Any, *, method: str = "em", shrinkage: float | None = None) -> ConditionalGaussian:
    """The mean and covariance of the rows of ``X`` (NaN where missing).

    Parameters
    ----------
    X : array of shape (n, d)
    method : {"em", "complete"}, default "em"
        ``"em"``: the maximum-likelihood Gaussian of all rows under values missing at random, by EM
        (E-step: each row's conditional mean ``x̂_i`` and covariance ``C_i`` of its missing part; M-step:
        ``μ = mean_i x̂_i``, ``Σ = mean_i (x̂_i − μ)(x̂_i − μ)ᵀ + C_i``), started from the column means and
        variances. ``"complete"``: the sample mean and covariance of the rows without missing values.
    shrinkage : float in [0, 1), optional
        ``δ`` in ``Σ ← (1 − δ) Σ + δ diag(Σ)`` (the correlations shrunk towards 0; with EM, at every M-step).
        None: for ``"complete"``, Ledoit and Wolf's (2004) intensity for the correlation matrix of the
        complete rows (scikit-learn's ``ledoit_wolf`` on the standardized rows), which keeps the estimate
        positive definite when complete rows are few; for ``"em"``, 0 unless the EM estimate is singular
        (fewer rows than the features need), then Ledoit and Wolf's intensity for the rows filled by that
        estimate, and EM is run again with it.

    Raises
    ------
    ValueError
        An unknown ``method``, ``shrinkage`` outside [0, 1), fewer than two complete rows for
        ``"complete"``, a column without spread, or a covariance that stays singular (then give
        ``shrinkage``).
    """
    X = check_incomplete(X)
    delta = _check_shrinkage(shrinkage)
    if method == "complete":
        mean, cov = _complete_rows_gaussian(X, delta)
    elif method == "em":
        mean, cov = _em_gaussian(X, 0.0 if delta is None else delta)
        if delta is None and _singular(cov):  # too few rows for d: shrink with Ledoit-Wolf's intensity, refit
            filled = ConditionalGaussian(mean, cov + 1e-8 * np.diag(np.diag(cov)))._expectations(X, np.isnan(X))[0]
            mean, cov = _em_gaussian(X, _ledoit_wolf_intensity(filled))
    else:
        raise ValueError(f"method must be 'em' or 'complete', got {method!r}")
    if _singular(cov):
        raise ValueError(f"the fitted covariance is singular (smallest eigenvalue of its correlation matrix "
                         f"{np.linalg.eigvalsh(_correlation(cov))[0]:.3g}); pass shrinkage > 0 (or more rows)")
    return ConditionalGaussian(mean=mean, covariance=cov)


def _correlation(cov: np.ndarray) -> np.ndarray:
    sd = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    sd = np.where(sd > 0, sd, 1.0)
    return cov / np.outer(sd, sd)


def _singular(cov: np.ndarray) -> bool:
    """Whether the correlation matrix of ``cov`` has a condition number above 10¹⁰ (a test that does not depend on
    the features' units), or a variance is 0."""
    if np.any(np.diag(cov) <= 0):
        return True
    eig = np.linalg.eigvalsh(_correlation(cov))
    return bool(eig[0] <= 1e-10 * max(eig[-1], 1e-300))


def _ledoit_wolf_intensity(rows: np.ndarray) -> float:
    """Ledoit and Wolf's (2004) shrinkage intensity for the correlation matrix of ``rows`` (scikit-learn's
    ``ledoit_wolf`` on the standardized rows)."""
    from sklearn.covariance import ledoit_wolf

    sd = rows.std(axis=0, ddof=1)
    return float(ledoit_wolf((rows - rows.mean(axis=0)) / np.where(sd > 0, sd, 1.0))[1])


def _complete_rows_gaussian(X: np.ndarray, delta: float | None) -> tuple[np.ndarray, np.ndarray]:
    full = X[~np.any(np.isnan(X), axis=1)]
    if full.shape[0] < 2:
        raise ValueError(f"method='complete' needs at least two rows without missing values, X has "
                         f"{full.shape[0]}; use method='em'")
    mean = full.mean(axis=0)
    cov = np.cov(full, rowvar=False, ddof=1).reshape(X.shape[1], X.shape[1])
    sd = np.sqrt(np.diag(cov))
    if np.any(sd <= 0):
        raise ValueError(f"the complete rows have no spread in column(s) {np.flatnonzero(sd <= 0).tolist()}")
    return mean, _shrink(cov, _ledoit_wolf_intensity(full) if delta is None else delta)


def _em_gaussian(X: np.ndarray, delta: float) -> tuple[np.ndarray, np.ndarray]:
    n = X.shape[0]
    mean = np.nanmean(X, axis=0)
    var = np.nanvar(X, axis=0)
    if np.any(var <= 0):
        raise ValueError(f"X has no spread in column(s) {np.flatnonzero(var <= 0).tolist()}")
    cov = np.diag(var)
    unit = np.sqrt(var)  # changes measured in each column's unit: the iterations do not depend on the scales
    miss = np.isnan(X)
    for _ in range(EM_MAX_ITER):
        filled, extra = ConditionalGaussian(mean, cov)._expectations(X, miss)
        new_mean = filled.mean(axis=0)
        D = filled - new_mean
        new_cov = _shrink((D.T @ D + extra) / n, delta)
        change = max(np.max(np.abs(new_mean - mean) / unit), np.max(np.abs(new_cov - cov) / np.outer(unit, unit)))
        mean, cov = new_mean, 0.5 * (new_cov + new_cov.T)
        if change < EM_TOL or (delta == 0.0 and _singular(cov)):  # a singular Σ: fit_gaussian shrinks it
            break
    return mean, cov


@dataclass
class MissingValues:
    """Rows with missing values as centres and uncertainty sets, for ``Problem(uncertainty=...)``.

    Attributes
    ----------
    X : ndarray of shape (n, d)
        The centres: observed values kept, missing ones replaced by their conditional mean (or by the
        ``imputer``'s values).
    uncertainty : list of CoordinateEllipsoid
        One set per row: over its missing coordinates, shape the conditional covariance, radius
        ``√(χ²_{|M_i|}⁻¹(level))``; ``{0}`` with radius 0 for a complete row. Rows with the same missing
        pattern share one set (one cone in the compiled model).
    missing : ndarray of shape (n, d), bool
        Where ``X`` was missing.
    gaussian : ConditionalGaussian
        The fitted (or given) Gaussian.
    level : float
    """

    X: np.ndarray
    uncertainty: list
    missing: np.ndarray
    gaussian: ConditionalGaussian
    level: float

    def with_noise(self, noise: Any) -> list | None:
        """Each row's set with a measurement-noise set ``noise`` added: ``r V + E_i`` (their Minkowski sum).

        A row with missing values gets ``noise + E_i`` (``E_i`` its ellipsoid over the missing coordinates);
        a complete row gets ``noise`` itself. Rows that share an ellipsoid share their sum. With ``noise``
        None, the ellipsoids alone; None when no value is missing (``noise`` then applies to every row as it is).

        Raises
        ------
        TypeError
            ``noise`` is not an uncertainty set.
        ValueError
            ``noise`` has one radius per sample (the sum needs a scalar radius).
        """
        if noise is not None and not isinstance(noise, UncertaintySet):
            raise TypeError("uncertainty must be an uncertainty set (rs.Box, rs.Ball, ...) or None to combine with "
                            f"the missing values' sets, got {noise!r}")
        if noise is not None and np.ndim(noise.radius) != 0:
            raise ValueError("uncertainty with missing='uncertain' needs a scalar radius (it is added to each "
                             "row's ellipsoid of missing values)")
        if not self.missing.any():
            return None
        if noise is None:
            return list(self.uncertainty)
        sums: dict[int, UncertaintySet] = {}
        rows = self.missing.any(axis=1)
        return [sums.setdefault(id(e), noise + e) if incomplete else noise
                for e, incomplete in zip(self.uncertainty, rows, strict=True)]


def missing_as_uncertainty(X: Any, *, level: float = 0.9, method: str = "em", shrinkage: float | None = None,
                           imputer: Any = None, gaussian: ConditionalGaussian | None = None) -> MissingValues:
    """Centres and per-row ellipsoids over the missing coordinates of ``X`` (NaN where missing).

    Row ``i`` with missing coordinates ``M_i`` gets the centre ``c_i`` (``x_i`` with ``c_{i,M}`` the
    conditional mean given ``x_{i,O}``) and the set ``{c_i + v : v_O = 0, v_Mᵀ C_i⁻¹ v_M ≤ κ_i²}``, ``C_i``
    the conditional covariance and ``κ_i² = χ²_{|M_i|}⁻¹(level)``: under the Gaussian it contains the true
    row with probability ``level``.

    Parameters
    ----------
    X : array of shape (n, d)
    level : float in (0, 1), default 0.9
        The coverage probability of each set.
    method, shrinkage
        How the Gaussian is fitted (:func:`fit_gaussian`); ignored when ``gaussian`` is given.
    imputer : scikit-learn transformer, optional
        Gives the centres instead of the conditional means (``imputer.fit_transform(X)``, e.g.
        ``sklearn.impute.IterativeImputer()``); the sets keep the conditional covariances.
    gaussian : ConditionalGaussian, optional
        A Gaussian fitted elsewhere (on training rows, say) to use as it is.

    Returns
    -------
    MissingValues

    Raises
    ------
    ValueError
        ``level`` outside (0, 1); every row with a missing value under ``method="complete"``; an imputer
        whose output has another shape or still holds NaN; see also :func:`fit_gaussian`.

    Examples
    --------
    >>> mv = rs.missing_as_uncertainty(X, level=0.9)                          # doctest: +SKIP
    >>> rs.Problem(uncertainty=mv.uncertainty).solve(mv.X, y)                 # doctest: +SKIP
    """
    level = check_level(level)
    X = check_incomplete(X)
    model = gaussian if gaussian is not None else fit_gaussian(X, method=method, shrinkage=shrinkage)
    n, d = X.shape
    if model.mean.shape != (d,):
        raise ValueError(f"gaussian has {model.mean.shape[0]} features but X has {d}")
    centres = model.impute(X)
    if imputer is not None:
        if not hasattr(imputer, "fit_transform"):
            raise TypeError(f"imputer must be a scikit-learn transformer with fit_transform, got {imputer!r}")
        given = np.asarray(imputer.fit_transform(X), dtype=np.float64)
        if given.shape != X.shape or not np.all(np.isfinite(given)):
            raise ValueError(f"imputer must return a finite array of shape {X.shape}, got shape {given.shape}"
                             f"{'' if given.shape != X.shape else ' with NaN or infinity'}")
        miss = np.isnan(X)
        centres[miss] = given[miss]
    none = CoordinateEllipsoid(np.zeros((0, 0)), [], d, radius=0.0)
    sets: list = [none] * n
    for _, rows, pattern in _patterns(X):
        M, _, C = model.conditional(pattern)
        s = CoordinateEllipsoid(C, M, d, radius=chi2_radius(M.size, level))
        for i in rows:
            sets[i] = s
    return MissingValues(X=centres, uncertainty=sets, missing=np.isnan(X), gaussian=model, level=level)

"""Uncertainty sets from data: a known measurement-error covariance, a chance level, replicate measurements.

Gaussian measurement error ``x_obs = x_true + e``, ``e ~ N(0, Σ)``, gives the sets below (the
derivations are in ``docs/uncertainty.md``, "Sets from data"):

- :meth:`Ellipsoid.from_covariance`: ``{x_obs + u : uᵀΣ⁻¹u ≤ κ²}`` with ``κ² = χ²_d⁻¹(level)``, which
  contains ``x_true`` with probability ``level`` (``eᵀΣ⁻¹e ~ χ²_d``);
- :meth:`Box.from_covariance`: ``|u_h| ≤ z σ_h`` with ``z = Φ⁻¹(1 − (1 − level)/(2d))``, which contains
  ``x_true`` with probability at least ``level`` (Bonferroni over the ``d`` coordinates, whatever their
  correlation);
- :func:`from_replicates`: several rows per subject; the centres are the subject means, the error of a
  mean of ``k_i`` rows has covariance ``Σ/k_i``, and ``Σ`` is estimated from the replicates' spread
  (pooled within subjects, with the exact Hotelling ``T²`` / Student ``t`` quantiles, or per subject,
  shrunk by Ledoit-Wolf).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from .box import Box
from .chance import check_level, chi2_radius
from .ellipsoid import Ellipsoid

__all__ = ["Replicates", "from_replicates", "ledoit_wolf_covariance"]


def ledoit_wolf_covariance(D: np.ndarray) -> np.ndarray:
    """The Ledoit-Wolf shrunk covariance of centred rows ``D`` (scikit-learn's ``ledoit_wolf``, assume_centered).

    ``(1 − δ) S + δ μ I`` with ``S = DᵀD/k``, ``μ = tr(S)/d`` and ``δ`` Ledoit and Wolf's (2004) estimate of
    the optimal intensity; positive definite whenever ``D`` is not zero.
    """
    try:
        from sklearn.covariance import ledoit_wolf
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("per-subject shrunk covariances need scikit-learn: pip install robustsvm[data]") from exc
    cov, _ = ledoit_wolf(D, assume_centered=True)
    return np.asarray(cov, dtype=np.float64)


@dataclass
class Replicates:
    """Subjects measured several times, summarized for a robust model.

    Attributes
    ----------
    X : ndarray of shape (m, d)
        The subject means, the centres of the sets (one row per subject, in the order of ``subjects``).
    y : ndarray of shape (m,) or None
        Each subject's label (when labels were given).
    subjects : ndarray of shape (m,)
        The subject ids, sorted.
    counts : ndarray of shape (m,)
        Replicates per subject ``k_i``.
    uncertainty : UncertaintySet or list of UncertaintySet
        One set with a radius per subject (pooled covariance) or one set per subject; pass it as
        ``Problem(uncertainty=...)`` with the data ``X``.
    covariance : ndarray of shape (d, d) or None
        The pooled within-subject covariance (pooled estimates only).
    """

    X: np.ndarray
    y: np.ndarray | None
    subjects: np.ndarray
    counts: np.ndarray
    uncertainty: Any
    covariance: np.ndarray | None = None


def from_replicates(X_rows: Any, subject_ids: Any, y: Any = None, *, kind: str = "ellipsoid",
                    level: float = 0.95, pooled: bool = True) -> Replicates:
    """Centres and sets from replicate rows: each subject's mean, and a set that holds its true mean w.p. ``level``.

    Parameters
    ----------
    X_rows : array of shape (N, d)
        Every measurement, several rows per subject.
    subject_ids : array of shape (N,)
        The subject of each row.
    y : array of shape (N,), optional
        Labels, constant within a subject.
    kind : {"ellipsoid", "box"}
    level : float in (0, 1)
    pooled : bool, default True
        ``True``: one covariance ``Σ̂`` pooled within subjects (``ν = N − m`` degrees of freedom); the mean
        of subject ``i`` has error covariance ``Σ/k_i``, and the set is the shared ``Ellipsoid(Σ̂)`` with
        radius ``√(T²_{d,ν}(level)/k_i)``, ``T² = dν/(ν − d + 1)·F_{d, ν−d+1}⁻¹`` (Hotelling: exact for Gaussian
        error with ``Σ`` estimated), or the shared ``Box(widths=σ̂)`` with radius ``t_ν⁻¹(1 − (1 − level)/(2d))/√k_i``
        (Bonferroni with Student's t). ``False``: one set per subject from its own replicates (every subject
        needs at least 2), the covariance shrunk by Ledoit-Wolf (:func:`ledoit_wolf_covariance`) and the
        known-covariance radii (``χ²``, normal), an approximation when replicates are few.

    Raises
    ------
    ValueError
        Shapes that disagree, a subject with one row where its own spread is needed, too few degrees of
        freedom for the pooled estimate (``ν ≤ d − 1`` for an ellipsoid, ``ν = 0`` for a box), labels that
        differ within a subject, a feature with no spread within subjects (a standard deviation at most
        :data:`SPREAD_RTOL` of its values' scale: rounding noise such as 3e-17; the message names it).
    """
    columns = [str(c) for c in X_rows.columns] if hasattr(X_rows, "columns") else None
    X_rows = np.asarray(X_rows, dtype=np.float64)
    if X_rows.ndim != 2 or X_rows.shape[0] == 0:
        raise ValueError(f"X_rows must be a non-empty (N, d) array, got shape {X_rows.shape}")
    if not np.all(np.isfinite(X_rows)):
        raise ValueError("X_rows contains NaN or infinity")
    ids = np.asarray(subject_ids)
    if ids.shape != (X_rows.shape[0],):
        raise ValueError(f"subject_ids must have one entry per row ({X_rows.shape[0]}), got shape {ids.shape}")
    if kind not in ("ellipsoid", "box"):
        raise ValueError(f"kind must be 'ellipsoid' or 'box', got {kind!r}")
    level = check_level(level)
    subjects, inverse, counts = np.unique(ids, return_inverse=True, return_counts=True)
    m, d = subjects.size, X_rows.shape[1]
    means = np.zeros((m, d))
    np.add.at(means, inverse, X_rows)
    means /= counts[:, None]
    D = X_rows - means[inverse]
    labels = _subject_labels(y, inverse, m, X_rows.shape[0])
    if pooled:
        nu = int(X_rows.shape[0] - m)
        cov = D.T @ D / max(nu, 1)
        flat = _no_spread(np.sqrt(np.diag(cov)), X_rows, columns, "within subjects") if nu > 0 else ""
        if flat:
            raise ValueError(f"{flat}: the pooled set would give it no width; leave it out, or give its error "
                             "another way (Box(widths=...))")
        if kind == "ellipsoid":
            if nu - d + 1 <= 0:
                raise ValueError(f"a pooled ellipsoid needs more degrees of freedom than features: N − m = {nu}, "
                                 f"d = {d}; use kind='box' or pooled=False")
            t2 = d * nu / (nu - d + 1) * stats.f.ppf(level, d, nu - d + 1)
            unc = Ellipsoid(shape=cov, radius=np.sqrt(t2 / counts))
        else:
            if nu <= 0:
                raise ValueError("a pooled box needs some subject with at least two rows")
            q = stats.t.ppf(1.0 - (1.0 - level) / (2.0 * d), nu)
            unc = Box(radius=q / np.sqrt(counts), widths=np.sqrt(np.diag(cov)))
        return Replicates(X=means, y=labels, subjects=subjects, counts=counts, uncertainty=unc, covariance=cov)
    if np.any(counts < 2):
        raise ValueError(f"subject {_id(subjects[np.argmin(counts)])!r} has a single row: its own spread is unknown "
                         "(use pooled=True)")
    sets = []
    for i in range(m):
        Di = D[inverse == i]
        k = Di.shape[0]
        if kind == "ellipsoid":
            cov_i = ledoit_wolf_covariance(Di) * k / (k - 1)  # the shrunk covariance of one row, ×k/(k−1) unbiased
            eig = np.linalg.eigvalsh(cov_i)
            if eig[0] <= 1e-12 * max(eig[-1], 1e-300):
                raise ValueError(f"subject {_id(subjects[i])!r}: its {k} replicates leave the shrunk covariance "
                                 "singular (two rows, or rows on a line, give Ledoit-Wolf no spread to estimate); use "
                                 "pooled=True or kind='box'")
            sets.append(Ellipsoid(shape=cov_i / k, radius=chi2_radius(d, level)))
        else:
            sd = Di.std(axis=0, ddof=1)
            flat = _no_spread(sd, X_rows, columns, f"over its {k} replicates")
            if flat:
                raise ValueError(f"subject {_id(subjects[i])!r}: {flat}")
            sets.append(Box.from_covariance(sigmas=sd / np.sqrt(k), level=level))
    return Replicates(X=means, y=labels, subjects=subjects, counts=counts, uncertainty=sets)


#: a standard deviation at most this fraction of a feature's largest |value| is rounding noise, not spread
SPREAD_RTOL = 1e-10


def _no_spread(sd: np.ndarray, X_rows: np.ndarray, columns: list[str] | None, where: str) -> str:
    """``"feature 2 ('age') has no spread WHERE (standard deviation 2.9e-17, ...)"`` for the features whose
    spread ``sd`` is at most :data:`SPREAD_RTOL` of their scale ``max(1, max_j |x_jh|)``; empty when there is
    none."""
    scale = np.maximum(1.0, np.max(np.abs(X_rows), axis=0))
    flat = np.flatnonzero(sd <= SPREAD_RTOL * scale)
    if not flat.size:
        return ""
    names = [f"{h}" + ("" if columns is None else f" ({columns[h]!r})") for h in flat[:5]]
    more = f" and {flat.size - 5} more" if flat.size > 5 else ""
    values = ", ".join(f"{sd[h]:.2g}" for h in flat[:5])
    return (f"feature{'s' if flat.size > 1 else ''} {', '.join(names)}{more} {'have' if flat.size > 1 else 'has'} "
            f"no spread {where} (standard deviation {values}, at most {SPREAD_RTOL:g} of the values' scale)")


def _id(subject: Any) -> Any:
    """A subject id as printed (a numpy scalar as its Python value)."""
    return subject.item() if isinstance(subject, np.generic) else subject


def _subject_labels(y: Any, inverse: np.ndarray, m: int, n_rows: int) -> np.ndarray | None:
    if y is None:
        return None
    y = np.asarray(y)
    if y.shape != (n_rows,):
        raise ValueError(f"y must have one label per row ({n_rows}), got shape {y.shape}")
    first = np.zeros(m, dtype=np.int64)
    first[inverse[::-1]] = np.arange(n_rows)[::-1]
    labels = y[first]
    if np.any(labels[inverse] != y):
        bad = int(inverse[np.flatnonzero(labels[inverse] != y)[0]])
        raise ValueError(f"y differs between the rows of subject number {bad}: one label per subject")
    return labels

"""The dense Newton systems of :mod:`.feature_ipm` with the free features' two parts merged into one unknown.

A free feature ``h`` has two parts ``u_{h+}, u_{h−}`` with ``w_h = u_{h+} − u_{h−}``. When no part carries a
coefficient in the radius column of ``T`` (every set but the box), the data, the cone and the objective's
off-diagonal terms see the pair only through ``ω_h = u_{h+} − u_{h−}``; in the basis ``(ω_h, σ_h = u_{h+} + u_{h−})``
the sum ``σ_h`` meets only the diagonal ``D_± = λ2 + ν_±/u_±``, and eliminating it leaves the normal matrix of
the model with one part per feature (the layout with every free sign made ``+1``) whose diagonal entry of a free
feature is the harmonic ``D_+ D_− / (D_+ + D_−)``. The factorization is then ``(d + 2)³/3`` instead of
``(d + f + 2)³/3`` (``f`` free features). The derivation is in ``docs/derivations/feature_ipm.md`` (§12).
"""

from __future__ import annotations

import numpy as np

__all__ = ["ReducedFactor", "free_pairs", "reduced_diagonal"]


def free_pairs(lay) -> tuple[np.ndarray, np.ndarray]:
    """The positions ``j+`` and ``j− = j+ + 1`` of the two parts of each free feature (parts of a feature are
    adjacent, ``+`` first)."""
    jp = np.flatnonzero(np.diff(lay.feature) == 0)
    return jp, jp + 1


def _to_reduced(lay, red) -> np.ndarray:
    """For each unknown of ``lay``, the reduced unknown it maps to (a part to its feature; ``t`` and ``b``)."""
    out = np.empty(lay.k, dtype=np.int64)
    out[:lay.m] = lay.feature
    if lay.t is not None:
        out[lay.t] = red.t
    if lay.b is not None:
        out[lay.b] = red.b
    return out


def reduced_diagonal(lay, red, diag: np.ndarray) -> np.ndarray:
    """The diagonal of the reduced system: ``D_+ D_− / (D_+ + D_−)`` for a free feature, the unknown's own entry
    otherwise (P, k) → (P, k_red)."""
    jp, jm = free_pairs(lay)
    out = np.empty((diag.shape[0], red.k))
    out[:, _to_reduced(lay, red)] = diag
    dp, dm = diag[:, jp], diag[:, jm]
    out[:, lay.feature[jp]] = dp * dm / (dp + dm)
    return out


class ReducedFactor:
    """Solves of the full normal systems through the factored reduced ones.

    Parameters
    ----------
    factor : Factor
        The Cholesky factors of the reduced matrices (``failed`` per point).
    lay, red : Layout
        The full layout and the one with a single part per feature.
    diag : ndarray of shape (P, k)
        The full diagonal ``D`` (objective and barriers).
    """

    def __init__(self, factor, lay, red, diag: np.ndarray) -> None:
        self.inner, self.lay, self.red, self.diag = factor, lay, red, diag
        self.failed = factor.failed
        self.index = _to_reduced(lay, red)
        self.jp, self.jm = free_pairs(lay)

    def solve(self, rhs: np.ndarray) -> np.ndarray:
        """``K⁻¹ rhs`` for every row: the reduced right-hand side ``(r_+ D_− − r_− D_+)/(D_+ + D_−)`` of a free
        feature, the reduced solve ``ω``, then ``u_+ = (r_+ + r_− + D_− ω)/(D_+ + D_−)`` and
        ``u_− = (r_+ + r_− − D_+ ω)/(D_+ + D_−)``."""
        jp, jm, h = self.jp, self.jm, self.lay.feature[self.jp]
        dp, dm = self.diag[:, jp], self.diag[:, jm]
        rp, rm = rhs[:, jp], rhs[:, jm]
        total = dp + dm
        rr = np.empty((rhs.shape[0], self.red.k))
        rr[:, self.index] = rhs
        rr[:, h] = (rp * dm - rm * dp) / total
        z = self.inner.solve(rr)
        out = z[:, self.index]
        omega = z[:, h]
        out[:, jp] = (rp + rm + dm * omega) / total
        out[:, jm] = (rp + rm - dp * omega) / total
        return out

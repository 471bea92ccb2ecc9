"""The sparse box epoch of ``robust-dcd`` (``_box_sparse_kernels``): O(nnz(x_i) + |C|) per step.

The epoch keeps four sums of the prox at the shrink level τ (``Z0 = Σ_{h∉S1} z_h²``, ``Q1 = Σ_{S1} δ_h²``,
``u·w``, ``‖w‖²``) through moves of τ and of the coordinates of one row. They are checked against the sums
formed by NumPy from the prox ``w``, ``u`` itself after every one of hundreds of random moves, and the solves
against the package's certified Clarabel reference and the dense epoch on the same data.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import robustsvm as rs
from robustsvm.backends import _box_sparse_kernels as box
from robustsvm.backends._shared_set_kernels import soft

from ._reference import certified_reference
from .conftest import mixed_signs as _signs
from .conftest import standardized

SLACK = 1e-6


@pytest.fixture(scope="module")
def wdbc_small():
    return standardized("wdbc", n=220, seed=1)


def _fresh(z, delta, tau):
    """``(Z0, Q1, u·w, ‖w‖²)`` from the prox itself, formed by NumPy: ``w = soft(z, τδ)``, ``u = clip(z/τ, ±δ)``."""
    w = np.sign(z) * np.maximum(np.abs(z) - tau * delta, 0.0)
    u = np.clip(z / tau, -delta, delta)
    on = w != 0.0
    return np.sum(z[~on] ** 2), np.sum(delta[on] ** 2), float(u @ w), float(w @ w)


def _in_band(z, delta, lo, hi):
    a = np.abs(z)
    return (lo * delta <= a) & (a <= hi * delta)


@pytest.mark.parametrize("lam1", [0.0, 0.3])
def test_the_sums_follow_random_moves_of_tau_and_rows(lam1):
    rng = np.random.default_rng(3)
    n, d, lam = 40, 300, 0.7
    X = sp.random(n, d, density=0.05, format="csr", random_state=rng, data_rvs=rng.standard_normal)
    delta = rng.uniform(0.2, 2.0, d)
    sg = rng.choice(np.array([-1, 0, 1], dtype=np.int8), size=d)
    v = rng.standard_normal(d) * 2.0
    v[:30] = 0.0
    z = np.array([soft(p, lam1, s) for p, s in zip(v, sg, strict=True)]) / lam
    tau = float(np.median(np.abs(z[z != 0]) / delta[z != 0]))
    cand, flag = np.zeros(d, dtype=np.int64), np.zeros(d, dtype=np.int8)
    z0, q1, uw, ww, ncand = box.box_sums(z, delta, tau, cand, flag)
    np.testing.assert_allclose([z0, q1, uw, ww], _fresh(z, delta, tau), rtol=1e-12)
    assert q1 + z0 / tau**2 == pytest.approx(np.sum(np.clip(z / tau, -delta, delta) ** 2), rel=1e-12)  # ‖u‖²
    lo, hi = tau / box.BAND, tau * box.BAND
    crossings = 0
    for step in range(600):
        if step % 3:  # τ moves inside the band; the coordinates whose |z_h|/δ_h it passes change S1
            tau_n = float(np.clip(tau * np.exp(rng.normal(0.0, 0.004)), lo, hi))
            before = np.abs(z) > tau * delta
            z0, q1, uw, ww, ncand = box._tau_move(z, delta, cand, flag, ncand, tau, tau_n, z0, q1, uw, ww)
            crossings += int(np.sum(before != (np.abs(z) > tau_n * delta)))
            tau = tau_n
        else:  # one row moves v and z on its stored entries
            i = int(rng.integers(n))
            row = (X.indices, X.data, X.indptr[i], X.indptr[i + 1])
            z0, q1, uw, ww, ncand = box._row_move(row, float(rng.normal(0.0, 0.5)), (v, z, cand, flag, sg, delta),
                                                  lam1, 1.0 / lam, tau, (lo, hi), (z0, q1, uw, ww, ncand))
        ref = _fresh(z, delta, tau)
        scale = max(1.0, abs(ref[0]), abs(ref[2]), abs(ref[3]))
        np.testing.assert_allclose([z0, q1, uw, ww], ref, rtol=1e-9, atol=1e-9 * scale)
        listed = set(cand[:ncand][flag[cand[:ncand]] == 1].tolist())
        assert set(np.flatnonzero(_in_band(z, delta, lo, hi)).tolist()) <= listed  # the band of the list
        assert len(set(cand[:ncand].tolist())) == ncand  # no coordinate listed twice
    assert crossings > 20  # the moves did cross the threshold of many coordinates


CASES = {
    "hinge-signs-l1": dict(loss=rs.Hinge(), V=rs.Box(0.08), l1=0.002, signs=True, intercept=True, radius=None),
    "widths-sqhinge": dict(loss=rs.SquaredHinge(), V="widths", l1=0.0, signs=False, intercept=True, radius=None),
    "ballinf-radii": dict(loss=rs.Hinge(), V=rs.Ball(1.0, p=np.inf), l1=0.003, signs=True, intercept=False,
                          radius="per-sample"),
    "w-zero": dict(loss=rs.Hinge(), V=rs.Box(50.0), l1=0.0, signs=False, intercept=True, radius=None),
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_sparse_box_epoch_reaches_the_certified_optimum(wdbc_small, case):
    """Signs, L1, widths, per-sample radii (some zero), the squared hinge, no intercept, and a radius so large
    that ``w = 0``: the sparse solve is certified, brackets Clarabel's optimum, and agrees with the dense epoch."""
    spec = CASES[case]
    X, y = wdbc_small
    n, d = X.shape
    Xs = X.copy()
    Xs[np.abs(Xs) < 0.7] = 0.0
    Xs = sp.csr_matrix(Xs)
    V = rs.Box(0.08, widths=np.linspace(0.3, 2.0, d)) if spec["V"] == "widths" else spec["V"]
    radius = None
    if spec["radius"] == "per-sample":
        radius = np.random.default_rng(5).uniform(0.0, 0.1, size=n)
        radius[:20] = 0.0
    pen = rs.L2(0.05) + rs.L1(spec["l1"]) if spec["l1"] else rs.L2(0.05)
    signs = _signs(d) if spec["signs"] else None
    prob = rs.Problem(loss=spec["loss"], penalty=pen, uncertainty=V, signs=signs, intercept=spec["intercept"])
    options = dict(tol=1e-7, max_iter=20000, random_state=1, radius=radius)
    sol = prob.solve(Xs, y, solver="robust-dcd", **options)
    dense = prob.solve(Xs.toarray(), y, solver="robust-dcd", **options)
    ref = certified_reference(prob, Xs, y, radius=radius)
    acc = SLACK * ref.scale()
    for s in (sol, dense):
        assert s.status == "optimal"
        assert 0.0 <= s.objective - ref.bound + acc and s.objective - ref.objective + acc <= s.gap + 2 * acc
    assert abs(sol.objective - dense.objective) <= sol.gap + dense.gap + 2 * acc
    if signs is not None:
        assert np.all(sol.w * signs >= 0.0)
    if case == "w-zero":  # certified at w = 0 before any epoch (one pass), as feature-ipm does
        assert np.all(sol.w == 0.0) and sol.iterations == 0 and dense.iterations == 0

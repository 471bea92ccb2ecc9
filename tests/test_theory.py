"""Iteration bounds of Tajima et al. (2020): closed forms and minimality."""

from __future__ import annotations

import math

import pytest

from robustsvm.certificates.iteration_bounds import (
    frank_wolfe_bound,
    frank_wolfe_iterations,
    pegasos_bound,
    pegasos_iterations,
)


def test_frank_wolfe_iterations_closed_form():
    # T ≥ 2R²/(λε) − 2 with R = 1, λ = 0.1, ε = 0.01: 2/0.001 − 2 = 1998
    assert frank_wolfe_iterations(0.01, 1.0, 0.1) == 1998
    # R = 2, λ = 0.5, ε = 0.3: 8/0.15 − 2 = 51.33… → 52
    assert frank_wolfe_iterations(0.3, 2.0, 0.5) == 52
    # an easy target needs no iteration
    assert frank_wolfe_iterations(100.0, 1.0, 1.0) == 0
    # sum reduction with total weight C scales R by C
    assert frank_wolfe_iterations(0.01, 1.0, 0.1, total_weight=3.0) == frank_wolfe_iterations(0.01, 3.0, 0.1)


@pytest.mark.parametrize("eps, R, lam", [(1e-3, 1.0, 1e-2), (0.05, 3.0, 0.7), (1e-6, 0.5, 1e-4)])
def test_frank_wolfe_bound_and_iterations_agree(eps, R, lam):
    T = frank_wolfe_iterations(eps, R, lam)
    assert frank_wolfe_bound(T, R, lam) <= eps * (1 + 1e-12)
    assert T == 0 or frank_wolfe_bound(T - 1, R, lam) > eps
    assert frank_wolfe_bound(10, R, lam) == pytest.approx(2 * R * R / (lam * 12))


def test_pegasos_bound_is_the_paper_formula_from_three_on():
    for T in (3, 10, 1000):
        for R, lam in ((1.0, 0.1), (2.5, 1e-3)):
            paper = (math.sqrt(2 * lam) + R) ** 2 * math.log(T) / (lam * T)
            assert pegasos_bound(T, R, lam) == pytest.approx(paper, rel=1e-14)
    # T = 1, 2: the standard G²(1 + log T)/(2λT), positive (the paper's form would be 0 at T = 1)
    G2 = (math.sqrt(0.2) + 1.0) ** 2
    assert pegasos_bound(1, 1.0, 0.1) == pytest.approx(G2 / 0.2)
    assert pegasos_bound(2, 1.0, 0.1) == pytest.approx(G2 * (1 + math.log(2)) / 0.4)


@pytest.mark.parametrize("eps, R, lam", [(1e-2, 1.0, 0.1), (0.3, 2.0, 1.0), (1e-4, 1.0, 1e-2)])
def test_pegasos_iterations_is_minimal(eps, R, lam):
    T = pegasos_iterations(eps, R, lam)
    assert pegasos_bound(T, R, lam) <= eps
    assert T == 1 or pegasos_bound(T - 1, R, lam) > eps
    # the bound decreases, so every later T also qualifies
    assert all(pegasos_bound(T + k, R, lam) <= eps for k in (1, 10, 1000))


@pytest.mark.parametrize(
    "call",
    [
        lambda: frank_wolfe_iterations(0.0, 1.0, 1.0),
        lambda: frank_wolfe_iterations(0.1, -1.0, 1.0),
        lambda: frank_wolfe_bound(5, 1.0, 0.0),
        lambda: frank_wolfe_bound(-1, 1.0, 1.0),
        lambda: pegasos_bound(0, 1.0, 1.0),
        lambda: pegasos_iterations(float("nan"), 1.0, 1.0),
        lambda: pegasos_bound(3, 1.0, 1.0, total_weight=0.0),
    ],
)
def test_bad_arguments(call):
    with pytest.raises(ValueError):
        call()

"""The Wasserstein ball: every distribution within transport distance ε of the (weighted) sample.

With the transport cost ``d((x, y), (x′, y′)) = ‖x − x′‖ + κ[y ≠ y′]`` (``‖·‖`` the ``p``-norm, ``κ`` the price
of a label flip) and a loss ``ℓ`` that is convex, non-increasing and 1-Lipschitz in the margin (the hinge and the
logistic loss), the worst expected loss over the ball is (Shafieezadeh-Abadeh, Kuhn & Esfahani, JMLR 2019)

    sup_{Q: W(Q, P̂) ≤ ε} E_Q ℓ(y(w·x + b)) = min_{λ ≥ ‖w‖_*}  λε + Σ_i ĉ_i max(ℓ(m_i), ℓ(−m_i) − λκ),

``ĉ = c/Σc`` the sample's weights, ``m_i = y_i(w·x_i + b)``, ``‖·‖_*`` the dual norm (``q = p/(p − 1)``);
``κ = ∞`` drops the second piece: ``ε‖w‖_* + Σ ĉ_i ℓ(m_i)``. The model's objective is ``R(w) + I(b)`` plus
``Σc`` times this value (``Σc = 1`` for ``reduction="mean"``). The derivation, the dual the certificate uses and
the worst-case distribution: ``docs/derivations/wasserstein.md``. A squared hinge is refused: it grows faster than
linearly, so moving a vanishing mass far makes the worst case infinite.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._lazy import cvxpy as cp
from ..terms.losses import LOSSES
from .ball import Ball
from .distributional import DistributionalSet

__all__ = ["Wasserstein", "WorstCaseDistribution"]

_NORMS = {1: np.inf, 2: 2.0, np.inf: 1.0}


@dataclass(frozen=True)
class WorstCaseDistribution:
    """A distribution ``Q`` in the ball: atoms ``(X[k], y[k])`` with probabilities ``weight[k]``.

    ``value`` is ``E_Q ℓ`` (a lower bound on the supremum), ``bound`` the supremum's dual value
    ``min_λ ...`` of the module docstring, ``cost`` the transport cost of moving the sample to ``Q``.
    """

    X: np.ndarray
    y: np.ndarray
    weight: np.ndarray
    value: float
    bound: float
    cost: float


class Wasserstein(DistributionalSet):
    """``rs.Wasserstein(eps, kappa=np.inf, norm=2)``: the distributional set of radius ``eps``.

    Parameters
    ----------
    eps : float
        The radius ε ≥ 0 of the ball (in units of the transport cost).
    kappa : float, default inf
        The cost κ > 0 of flipping a label; ``inf``: labels are certain.
    norm : {1, 2, inf}, default 2
        The norm ``p`` of the feature transport ``‖x − x′‖_p``; the penalty on ``w`` is its dual norm.
    """

    dual_module = "wasserstein"
    title = "a Wasserstein ball"
    route = "a Wasserstein ball with kappa = inf"
    penalty = "eps·‖w‖_*"

    def __init__(self, eps: float, kappa: float = np.inf, norm: float = 2) -> None:
        try:
            eps, kappa = float(eps), float(kappa)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"eps and kappa must be real numbers, got eps={eps!r}, kappa={kappa!r}") from exc
        if not np.isfinite(eps) or eps < 0:
            raise ValueError(f"eps must be finite and non-negative, got {eps!r}")
        if np.isnan(kappa) or kappa <= 0:
            raise ValueError(f"kappa must be positive (inf: labels are certain), got {kappa!r}")
        if norm not in _NORMS:
            raise ValueError(f"norm must be 1, 2 or inf (the p of ‖x − x′‖_p), got {norm!r}")
        self.eps, self.kappa, self.norm = eps, kappa, float(norm)
        self.dual = _NORMS[norm]

    @property
    def is_polyhedral(self) -> bool:
        """True for ``norm`` 1 and ∞: the dual norm's epigraph is linear (an LP/QP with the hinge)."""
        return self.norm != 2.0

    @property
    def cost_class(self) -> str:
        """The costs of the ``Ball`` of its transport norm, which the first-order backends solve it as
        (``backends/cost.py``): ``"ball1"`` for ``norm = 1``, ``"ball"`` otherwise."""
        return "ball1" if self.norm == 1 else "ball"

    @property
    def radius(self) -> float:
        return self.eps

    def with_eps(self, eps: float) -> Wasserstein:
        """The same ball with radius ``eps`` (a radius given at solve time; an array of equal values, a scalar
        repeated per sample, is that scalar)."""
        values = np.unique(np.asarray(eps, dtype=np.float64))
        if np.ndim(eps) != 0 and values.size != 1:
            raise ValueError("a Wasserstein ball has one radius for the whole sample, not one per sample")
        return Wasserstein(float(values[0]), self.kappa, self.norm)

    def with_radius(self, radius: float) -> Wasserstein:
        """:meth:`with_eps` under the name a grid point's ``radius`` uses for every set."""
        return self.with_eps(radius)

    def get_params(self, deep: bool = True) -> dict:
        """``eps``, ``kappa`` and ``norm``, as scikit-learn's ``get_params`` gives them (``GridSearchCV`` searches
        ``robustsvc__uncertainty__eps``)."""
        return {"eps": self.eps, "kappa": self.kappa, "norm": self.norm}

    def set_params(self, **params) -> Wasserstein:
        """Change ``eps``, ``kappa`` or ``norm`` in place (validated as by the constructor); returns the ball."""
        unknown = sorted(set(params) - {"eps", "kappa", "norm"})
        if unknown:
            raise ValueError(f"a Wasserstein ball has the parameters eps, kappa and norm, not {unknown}")
        self.__init__(**{**self.get_params(), **params})
        return self

    def __repr__(self) -> str:
        return f"Wasserstein(eps={self.eps:g}, kappa={self.kappa:g}, norm={self.norm:g})"

    def key(self) -> tuple:
        return ("Wasserstein", self.kappa, self.norm)

    def to_dict(self) -> dict:
        return {"type": "Wasserstein", "eps": self.eps, "kappa": self.kappa, "norm": self.norm}

    @classmethod
    def from_dict(cls, spec: dict) -> Wasserstein:
        """The ball of :meth:`to_dict` (``kappa`` and ``norm`` may be ``inf``); an unknown or missing entry is an
        error naming it."""
        unknown = sorted(set(spec) - {"type", "eps", "kappa", "norm"})
        if unknown:
            raise ValueError(f"a stored Wasserstein ball has the entries eps, kappa and norm, not {unknown}")
        if "eps" not in spec:
            raise ValueError("a stored Wasserstein ball lacks its radius 'eps'")
        return cls(spec["eps"], spec.get("kappa", np.inf), spec.get("norm", 2))

    def check_loss(self, loss) -> None:
        """Refuse a loss the reformulation does not hold for (it needs a 1-Lipschitz loss:
        ``Loss.margin_lipschitz == 1``)."""
        if getattr(loss, "margin_lipschitz", None) != 1:
            fit = " or ".join(f"rs.{cls.__name__}" for cls in LOSSES.values() if cls.margin_lipschitz == 1)
            raise ValueError(f"a Wasserstein ball needs a 1-Lipschitz loss ({fit}), got "
                             f"{type(loss).__name__}: its worst case over the ball is infinite or not this form")

    # ------------------------------------------------------------------ the fixed penalty (κ = ∞)
    def unit_set(self) -> Ball | None:
        """``Ball(1, p)`` of the transport norm for ``κ = ∞`` (``σ = ‖·‖_*``: the term is ``Σ c_i ℓ(m_i) + Cε‖w‖_*``);
        None for a finite κ (the label flips couple the samples)."""
        return Ball(1.0, p=self.norm) if not np.isfinite(self.kappa) else None

    def label(self) -> str:
        return f"Wasserstein(norm={self.norm:g})"

    def unit_gauge_cvx(self, e):
        """``‖e‖_p``: the gauge of the unit ``p``-ball."""
        return cp.norm(e, self.norm)

    def critical_refusal(self) -> str:
        return ("the critical radius of a Wasserstein ball is derived for kappa = inf (the penalty "
                "eps·‖w‖_*); a finite kappa couples the samples through the label flips")

    # ------------------------------------------------------------------ values
    def dual_norm(self, w: np.ndarray) -> float:
        """``‖w‖_*``, the norm dual to the transport's ``p``-norm."""
        return float(np.linalg.norm(np.asarray(w, dtype=np.float64), ord=self.dual))

    def support_cvx(self, z):
        """``‖z‖_*`` as CVXPY (what the ``κ = ∞`` ball adds to the objective per unit of ε)."""
        return cp.norm(z, self.dual), []

    def budget(self, loss, margins: np.ndarray, c: np.ndarray, w: np.ndarray) -> tuple[float, float]:
        """``(value, λ*)``: ``min_{λ ≥ ‖w‖_*} Σc·λε + Σ c_i max(ℓ(m_i), ℓ(−m_i) − λκ)``, exactly.

        The function is convex and piecewise linear in λ with breakpoints ``λ_i = (ℓ(−m_i) − ℓ(m_i))/κ``;
        its slope ``Σc·ε − κ Σ_{λ_i > λ} c_i`` is non-decreasing, so the minimizer is the weighted quantile
        where it turns non-negative (or ``‖w‖_*``).
        """
        c = np.asarray(c, dtype=np.float64)
        own = loss.value(margins)
        lo, mass = self.dual_norm(w), float(c.sum())
        if not np.isfinite(self.kappa):
            return float(mass * self.eps * lo + c @ own), lo
        flipped = loss.value(-np.asarray(margins))
        brk = (flipped - own) / self.kappa
        order = np.argsort(-brk, kind="stable")
        heavier = np.cumsum(c[order])  # Σ c over the k + 1 largest breakpoints
        k = int(np.searchsorted(heavier, mass * self.eps / self.kappa, side="right"))
        lam = max(lo, float(brk[order[k]]) if k < brk.size else lo)
        value = mass * self.eps * lam + float(c @ np.maximum(own, flipped - lam * self.kappa))
        return value, lam

    # --------------------------------------------------------------- conic form
    def cvx_terms(self, loss, margin, coef: np.ndarray, w, scale: float, constraints: list):
        """The expected-loss terms as CVXPY, their constraints appended; returns ``(expression, duals)``.

        ``λ ≥ scale·‖w‖_*`` (``w`` in the program's units), ``s_i ≥ ℓ(u_i)`` with ``u ≤ m`` and ``s_i + λκ ≥ ℓ(v_i)``
        with ``v ≤ −m``; for ``κ = ∞`` the loss's own conic form (its slacks or margins) plus ``Cελ``. ``duals``
        gives ``(p, q, a⁺, a⁻)``: the constraints whose multipliers they are, or arrays where they are known
        (``p = c``, ``q = 0`` for ``κ = ∞``); ``p + q = c``, ``a⁺ = p α``, ``a⁻ = q β``.
        """
        n = coef.shape[0]
        lam = cp.Variable(nonneg=True, name="wasserstein_budget")
        cons = [scale * cp.norm(w, self.dual) <= lam]
        budget = float(coef.sum()) * self.eps * lam
        if not np.isfinite(self.kappa):  # the loss's own form plus Cε‖w‖_*: p = c, q = 0
            if loss.conic_argument == "margin":
                arg = cp.Variable(n, name="u_margin")
                cons_a = arg <= margin
            else:
                arg = cp.Variable(n, nonneg=True, name="xi")
                cons_a = arg >= 1 - margin
            constraints.extend([*cons, cons_a])
            return budget + loss.cvx(arg, loss.conic_weight(coef)), (coef, np.zeros(n), cons_a, np.zeros(n))
        if loss.conic_argument == "slack":  # the hinge: s ≥ 0, s ≥ 1 − m, s ≥ 1 + m − λκ (p = c − q is implied)
            s = cp.Variable(n, nonneg=True, name="wasserstein_loss")
            cons_a, cons_b = s >= 1 - margin, s + self.kappa * lam >= 1 + margin
            constraints.extend([*cons, cons_a, cons_b])
            return budget + coef @ s, (coef, cons_b, cons_a, cons_b)
        s = cp.Variable(n, name="wasserstein_loss")
        u, v = cp.Variable(n, name="u_margin"), cp.Variable(n, name="v_margin")
        cons_a, cons_p = u <= margin, loss.cvx_value(u) <= s
        cons_b, cons_q = v <= -margin, loss.cvx_value(v) <= s + self.kappa * lam
        constraints.extend([*cons, cons_a, cons_p, cons_b, cons_q])
        return budget + coef @ s, (cons_p, cons_q, cons_a, cons_b)

    # ------------------------------------------------------------- worst case
    def worst_case(self, loss, X, y: np.ndarray, w: np.ndarray, b: float, c: np.ndarray) -> WorstCaseDistribution:
        """A distribution in the ball whose expected loss approaches the supremum (``docs/derivations``).

        Labels are flipped (cost κ per unit of mass) where ``λ_i > λ*``, the breakpoint sample in part; the
        rest of the budget moves the atom of least margin by ``δ/ĉ_j`` along the dual-norm direction that
        lowers its margin fastest. For the hinge the supremum is attained when that atom stays where the loss
        is linear; for the logistic loss it is approached as ε grows.
        """
        X = np.asarray(X.toarray() if hasattr(X, "toarray") else X, dtype=np.float64)
        c = np.asarray(c, dtype=np.float64) / float(np.sum(c))
        m = y * (X @ w + b)
        bound, lam = self.budget(loss, m, c, w)
        atoms_x, atoms_y, weight = [X], [y.astype(np.float64)], [c.copy()]
        spent = 0.0
        if np.isfinite(self.kappa) and self.eps > 0:
            gain = loss.value(-m) - loss.value(m)
            for i in np.argsort(-gain):
                if gain[i] <= lam * self.kappa or spent >= self.eps:  # a flip must beat moving x (λ* per unit)
                    break
                part = min(c[i], (self.eps - spent) / self.kappa)
                weight[0][i] -= part
                atoms_x.append(X[i:i + 1])
                atoms_y.append(np.array([-y[i]], dtype=np.float64))
                weight.append(np.array([part]))
                spent += part * self.kappa
        left = self.eps - spent
        Xq, yq, pq = np.vstack(atoms_x), np.concatenate(atoms_y), np.concatenate(weight)
        if left > 0 and np.any(w):
            mq = yq * (Xq @ w + b)
            live = np.flatnonzero(pq > 0)
            j = live[np.argmin(mq[live])]
            Xq[j] = Xq[j] - yq[j] * (left / pq[j]) * self._steepest(w)
        value = float(pq @ loss.value(yq * (Xq @ w + b)))
        return WorstCaseDistribution(Xq, yq, pq, value, bound, spent + left)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Wasserstein) and (self.eps, self.kappa, self.norm) == (other.eps, other.kappa,
                                                                                          other.norm)

    __hash__ = None

    def _steepest(self, w: np.ndarray) -> np.ndarray:
        """The unit vector (in the p-norm) ``u`` with ``u·w = ‖w‖_*``."""
        if self.norm == 2.0:
            return w / np.linalg.norm(w)
        if self.norm == np.inf:
            return np.sign(w)
        u = np.zeros_like(w)
        h = int(np.argmax(np.abs(w)))
        u[h] = np.sign(w[h])
        return u

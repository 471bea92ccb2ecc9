"""A set of distributions around the (weighted) sample: what the rest of the package asks of one.

A per-sample set ``V`` (:class:`~robustsvm.uncertainty.UncertaintySet`) moves each sample inside its own set; a
distributional set ``𝒫`` replaces the loss term by its worst expected loss

    C · sup_{Q ∈ 𝒫} E_Q ℓ(y(w·x + b)),        C = Σ_i c_i,

which the set writes itself: its value at a point (:meth:`DistributionalSet.budget`), its conic epigraph and the
multipliers that come back from it (:meth:`DistributionalSet.cvx_terms`), its dual certificate (the module of
:mod:`robustsvm.duals` named by :attr:`DistributionalSet.dual_module`, found by
:func:`robustsvm.duals.distributional.distribution_dual`) and, when its term is a fixed penalty on the nominal
loss,

    C · sup_Q E_Q ℓ = Σ_i c_i ℓ(m_i) + C ρ σ_U(w)        (ρ the radius, U the unit set),

the unit set ``U`` (:meth:`DistributionalSet.unit_set`) through which the dual-coordinate backends solve it as one
shared set of radius 0 with the fixed mass ``A = Cρ`` and the critical radius is found. Each subclass registers
itself in :data:`DISTRIBUTIONAL_TYPES` (JSON), as the per-sample sets do in ``SET_TYPES``.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

__all__ = ["DISTRIBUTIONAL_TYPES", "DistributionalSet"]

#: the one table of sets of distributions, class name → class; every subclass is added when defined
DISTRIBUTIONAL_TYPES: dict[str, type] = {}


class DistributionalSet:
    """Base class of the sets of distributions (``rs.Wasserstein``).

    A subclass declares :attr:`dual_module` (the module of :mod:`robustsvm.duals` with its ``certify`` and
    ``point_certificate``), :attr:`title` (how messages name it) and implements the methods below.
    """

    #: the module of :mod:`robustsvm.duals` that certifies a model with this set (``certify``, ``point_certificate``)
    dual_module: ClassVar[str] = ""
    #: how refusals and errors name the set ("a Wasserstein ball")
    title: ClassVar[str] = "a set of distributions"
    #: the set's term couples the sample weights: the conic program takes them as constants (no fold masks)
    weights_as_constants: ClassVar[bool] = True
    #: no per-sample set, no support function per sample
    symmetric: ClassVar[bool] = True
    dim: ClassVar[Any] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        DISTRIBUTIONAL_TYPES[cls.__name__] = cls

    # ------------------------------------------------------------------------------------------------- radius
    @property
    def radius(self) -> float:
        """The set's one radius ``ρ`` (what ``radius=`` at solve time and a grid point replace)."""
        raise NotImplementedError

    def with_radius(self, radius: Any) -> DistributionalSet:
        """The same set with radius ``radius`` (one value for the whole sample)."""
        raise NotImplementedError

    def check_loss(self, loss: Any) -> None:
        """Refuse a loss the set's worst expected loss is not derived for, naming it."""

    # ------------------------------------------------------------------------------------------------ values
    def budget(self, loss: Any, margins: np.ndarray, c: np.ndarray, w: np.ndarray) -> tuple[float, float]:
        """``(C · sup_Q E_Q ℓ, λ*)``: the loss term at the margins ``m_i`` (and its dual scale λ*)."""
        raise NotImplementedError

    def cvx_terms(self, loss: Any, margin: Any, coef: np.ndarray, w: Any, scale: float, constraints: list):
        """The loss term as a CVXPY expression, its constraints appended; returns ``(expression, duals)``,
        ``duals`` the constraints (or arrays, where known) whose multipliers are the rows its certificate reads."""
        raise NotImplementedError

    # ------------------------------------------------------------------------------- the fixed-penalty form
    def unit_set(self) -> Any:
        """``U`` with ``C sup_Q E_Q ℓ = Σ c_i ℓ(m_i) + Cρ σ_U(w)``, or None when the term is not of this form."""
        return None

    @property
    def route(self) -> str:
        """The sets of this kind whose term is a fixed penalty (:meth:`unit_set`), as refusals name them."""
        return self.title

    @property
    def penalty(self) -> str:
        """The fixed penalty as refusals write it (``eps·‖w‖_*``)."""
        return "ρ σ_U(w)"

    def label(self) -> str:
        """The set in a refusal that lists set kinds."""
        return type(self).__name__

    def fixed_mass(self, c: np.ndarray) -> float:
        """``A = Cρ``: the mass of :meth:`unit_set`'s support function that no dual variable moves."""
        return float(np.sum(c)) * self.radius

    def unit_gauge_cvx(self, e: Any) -> Any:
        """The gauge of :meth:`unit_set` at ``e`` as CVXPY (the critical radius is ``min gauge / C``)."""
        raise NotImplementedError

    def critical_refusal(self) -> str:
        """Why the critical radius is not derived for this set (its term is not a fixed penalty)."""
        return (f"the critical radius of {self.title} is derived for a fixed penalty {self.penalty} "
                f"({self.route})")

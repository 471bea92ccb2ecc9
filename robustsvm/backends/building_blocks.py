"""The pieces of the in-memory backends that the distributed backends reuse, under public names.

The distributed interior point (``dask-ipm``) runs the feature-space interior point's Newton system on
reductions of row partitions, and the distributed CoCoA+ (``dask-cocoa``) takes ``w`` from its dual sums as the
in-memory dual methods do. What they share with :mod:`robustsvm.backends.feature_ipm` and
:mod:`robustsvm.backends.robust_dcd` is named here, so that :mod:`robustsvm.distributed` depends on this public
module only, never on the backends' private modules:

* :class:`Design`, :class:`Layout`, :class:`Batch`, :class:`Factor`: a block of rows, the variables of the
  Newton system, one interior-point batch and the factorization of its reduced matrix
  (``docs/derivations/feature_ipm.md``);
* the second-order cone's operations: ``identity``, ``jordan``, ``jordan_solve``, ``max_step`` and the
  Nesterov–Todd scaling :class:`NTScaling`;
* :func:`softclip`: ``w = T(v)/λ2``, the soft-threshold by ``λ1`` clipped to the signs (compiled);
* :func:`sample_rho`, :func:`sample_steps`: the per-sample right-hand side and steps of the interior point's
  eliminated equations, with the largest step (compiled).
"""

from __future__ import annotations

from ._ipm_kernels import sample_rho, sample_steps
from ._ipm_newton import Batch, Design, Factor, Layout
from ._second_order_cone import NTScaling, identity, jordan, jordan_solve, max_step
from ._shared_set_kernels import softclip

__all__ = ["Batch", "Design", "Factor", "Layout", "NTScaling", "identity", "jordan", "jordan_solve", "max_step",
           "sample_rho", "sample_steps", "softclip"]

"""Compile a normalized :class:`~robustsvm.model.Model` into a parametrized CVXPY problem and solve it.

:mod:`.program` builds the program (:class:`ConicProgram`, DPP parameters, the
data scale); :mod:`.solvers` holds what differs between the CVXPY solvers
(option names, statuses, Clarabel's retries, output kept off standard output).
"""

from .program import ConicProgram
from .scaling import RESCALE_RANGE, SCALED_PARAMETER_LIMIT
from .solvers import CLARABEL_RETRIES, STATUS, native_options, solver_output

__all__ = ["CLARABEL_RETRIES", "RESCALE_RANGE", "SCALED_PARAMETER_LIMIT", "STATUS", "ConicProgram", "native_options",
           "solver_output"]

"""Model terms beyond the package's first hinge-type losses: each module one term with its maths.

:mod:`.logistic` holds the logistic loss ``log(1 + e^{−m})`` (value, conjugate, dual box and conic form).
"""

from .logistic import Logistic

__all__ = ["Logistic"]

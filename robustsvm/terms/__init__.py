"""The model's terms, each module one kind of term with its maths.

:mod:`.losses` (hinge, squared hinge, hard margin: value, conjugate, dual box, conic form), :mod:`.logistic`
(the logistic loss ``log(1 + e^{−m})``), :mod:`.penalties` (L2 and L1), :mod:`.intercept` (free, absent or
ridge) and :mod:`.kernels` (linear, polynomial, RBF).
"""

from .logistic import Logistic

__all__ = ["Logistic"]

"""What the compiled kernels share (numba): their fast-math flags, a function whose implementation is chosen by the
type of its first argument, and the rows of dense or CSR data read by one loop.
"""

from __future__ import annotations

from collections import namedtuple

from numba import types
from numba.extending import overload

__all__ = ["FASTMATH", "CsrRows", "DenseRows", "by_class", "by_type", "column", "dense_rows", "is_dense", "of_type",
           "row_of"]

#: the fast-math flags of the dual-coordinate kernels and their certificates' products: reassociation and
#: contraction only (no assumption that values are finite)
FASTMATH = {"reassoc", "contract", "nsz", "arcp"}
#: the rows of a dense C-ordered ``X`` / of a CSR ``X``
DenseRows = namedtuple("DenseRows", ["X"])
CsrRows = namedtuple("CsrRows", ["indptr", "indices", "data"])


def of_type(cls):
    """A test of whether a value or its numba type is of the named tuple ``cls``."""
    return lambda x: isinstance(x, cls) or getattr(x, "instance_class", None) is cls


def _chosen_by(pick, options: dict):
    """A function calling ``pick(x)(x, ...)``; compiled, ``pick`` reads the numba type of ``x``, once per type."""
    def chosen(x, *args):
        return pick(x)(x, *args)
    overload(chosen, strict=False, **options)(lambda x, *args: pick(x))
    return chosen


def by_type(test, first, other, **options):
    """A function calling ``first(x, ...)`` when ``test(x)``, else ``other(x, ...)``; compiled, the choice is made once
    per type of ``x`` (``options``: those of :func:`numba.extending.overload`)."""
    return _chosen_by(lambda x: first if test(x) else other, options)


def by_class(implementations: dict, **options):
    """A function calling ``implementations[type(x)](x, ...)``; compiled, the implementation is chosen once per
    numba type of ``x`` (a named tuple's class), so that only the chosen one is typed and compiled (``options``:
    those of :func:`numba.extending.overload`)."""
    return _chosen_by(lambda x: implementations.get(getattr(x, "instance_class", type(x))), options)


#: whether ``rows`` (or its numba type) is :data:`DenseRows`
is_dense = of_type(DenseRows)


def _row_dense(rows, i):
    return None, rows.X[i], 0, rows.X.shape[1]


def _row_sparse(rows, i):
    return rows.indices, rows.data, rows.indptr[i], rows.indptr[i + 1]


#: row i as ``(columns, values, start, stop)``: its entries are ``(column(columns, k), values[k])`` for ``k`` in
#: ``range(start, stop)`` (a dense row's columns are ``None``, its ``k`` the column itself)
row_of = by_type(is_dense, _row_dense, _row_sparse, inline="always")
column = by_type(lambda columns: columns is None or isinstance(columns, types.NoneType), lambda columns, k: k,
                 lambda columns, k: columns[k], inline="always")
#: a constant True on dense rows (an epoch compiles no local step there)
dense_rows = by_type(is_dense, lambda rows: True, lambda rows: False, inline="always")

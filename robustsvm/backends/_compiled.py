"""What the compiled kernels share (numba): their fast-math flags, a function whose implementation is chosen by the
type of its first argument, and the rows of dense or CSR data read by one loop.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic, overload

__all__ = ["FASTMATH", "CsrRows", "DenseRows", "by_class", "by_type", "column", "dense_rows", "is_dense", "of_type",
           "prefetch_row", "row_of"]

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


@intrinsic
def _prefetch(typingctx, array, i, k):
    """A hint to the processor to load the cache line of ``array[i, k]`` (LLVM's ``prefetch``: a read, kept in all
    levels of the cache); no effect on the program's values."""
    sig = types.void(array, i, k)

    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [args[1], args[2]], wraparound=False)
        i8p, i32 = ir.IntType(8).as_pointer(), ir.IntType(32)
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]),
                                            "llvm.prefetch.p0")
        builder.call(fn, [builder.bitcast(ptr, i8p), ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()
    return sig, codegen


def _prefetch_rows(rows, i):
    X = rows.X
    for k in range(0, X.shape[1], 16):  # a cache line of 64 bytes holds 16 float32 values
        _prefetch(X, np.int64(i), np.int64(k))


def _streamed(rows) -> bool:
    """Whether ``rows`` (or its numba type) are dense float32 rows: the copy of rows that outgrow the cache."""
    if isinstance(rows, types.BaseTuple):
        return is_dense(rows) and rows.types[0].dtype == types.float32
    return is_dense(rows) and rows.X.dtype == np.float32


#: ask for row ``i`` of dense float32 rows to be loaded into the cache ahead of its use (nothing on other rows: in
#: cache, the hints cost more than they save)
prefetch_row = by_type(_streamed, _prefetch_rows, lambda rows, i: None, inline="always")

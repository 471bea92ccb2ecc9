"""The visiting order of the dcd epochs: random blocks of consecutive active rows (``_dcd_kernels.shuffle``)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import robustsvm as rs
from robustsvm.backends import _dcd_kernels as kern
from robustsvm.backends import dcd, dual_ascent

from .conftest import make_classification


def _order(B: int, min_active: int, seed: int = 12345) -> np.ndarray:
    """The state array of the order: generator state, block length, fewest active samples visited by blocks."""
    out = np.zeros(1, dtype=kern.ORDER)
    out[0] = (seed, B, min_active)
    return out


def _breaks(visit: np.ndarray) -> int:
    """Where the next visited row is not the next active row in storage order."""
    rank = np.empty(visit.max() + 1, dtype=np.int64)
    rank[np.sort(visit)] = np.arange(visit.size)
    r = rank[visit]
    return int(np.sum(r[1:] != r[:-1] + 1))


@pytest.mark.parametrize("B", [1, 7, 32])
def test_every_epoch_visits_each_active_sample_once(B):
    """Epoch after epoch, with samples set aside between them as the epochs do (swapped behind the active prefix),
    the order is a permutation of the active samples: none skipped, none repeated, the inactive tail untouched."""
    rng = np.random.default_rng(0)
    n = 1000
    index = rng.permutation(n).astype(np.uint32)
    state = _order(B, 0)
    active = n
    for _ in range(12):
        before_active = np.sort(index[:active])
        tail = index[active:].copy()
        kern.shuffle(index, active, state)
        assert np.array_equal(np.sort(index[:active]), before_active)
        assert np.array_equal(index[active:], tail)
        for _ in range(int(rng.integers(0, 80))):  # samples set aside at random positions of the prefix
            s = int(rng.integers(0, active))
            active -= 1
            index[s], index[active] = index[active], index[s]
    assert active < n


def test_the_block_order_reads_runs_of_consecutive_active_rows():
    """With blocks of B, a pass breaks the storage order of the active rows at most twice a block (between blocks
    and at a block's rotation); with more than two blocks, the block order and the rotations change between
    epochs; below ``min_active`` samples, a plain permutation."""
    rng = np.random.default_rng(1)
    n, B = 5000, 32
    active = 4000
    index = rng.permutation(n).astype(np.uint32)
    state = _order(B, 100)
    kern.shuffle(index, active, state)
    first = index[:active].copy()
    assert _breaks(first) <= 2 * -(-active // B)
    kern.shuffle(index, active, state)
    assert _breaks(index[:active]) <= 2 * -(-active // B) and not np.array_equal(first, index[:active])
    small = rng.permutation(n).astype(np.uint32)
    kern.shuffle(small, 99, state)  # fewer active samples than min_active: Fisher–Yates
    assert _breaks(small[:99]) > 80


def test_an_order_without_data_is_the_plain_shuffle():
    """Without data (as the distributed local solver builds it) the order has no block length: a Fisher–Yates
    permutation, the same as with a block length the active set does not reach."""
    plain = dual_ascent.visiting_order(99)
    assert plain[0]["block"] == 0 and plain[0]["state"] % 2 == 1
    state = int(plain[0]["state"])
    index = np.arange(500, dtype=np.uint32)
    other = index.copy()
    kern.shuffle(index, 500, plain)
    kern.shuffle(other, 500, _order(8, 501, seed=state))
    assert np.array_equal(index, other) and _breaks(index) > 400


def test_the_block_order_is_chosen_from_the_shape():
    """Dense: the rows that fill ``ORDER_MIN_BYTES["dense"]`` at ``8d`` bytes a row; sparse: the sparse bytes at
    those of a row's stored entries and their indices."""
    B, rows = dual_ascent.order_block(np.zeros((10, 100)))
    assert B == dual_ascent.ORDER_BLOCK > 0 and rows == -(-dual_ascent.ORDER_MIN_BYTES["dense"] // 800)
    X = sp.random(1000, 5000, density=0.004, format="csr", random_state=0)  # 20 entries a row: 240 bytes
    assert dual_ascent.order_block(X) == (dual_ascent.ORDER_BLOCK, -(-dual_ascent.ORDER_MIN_BYTES["sparse"] // 240))


def test_dcd_visits_csr_rows_by_blocks_from_fewer_bytes():
    """dcd's epochs take the block order on CSR rows from 512 KiB of active rows (robust-dcd's from 2 MiB), on dense
    rows from the same 8 MiB; read back from the order a solve's kernel receives."""
    X = sp.random(1000, 5000, density=0.004, format="csr", random_state=0)  # 240 bytes a row
    assert dcd.ORDER_MIN_BYTES == {"dense": dual_ascent.ORDER_MIN_BYTES["dense"], "sparse": 2**19}
    state = dual_ascent.visiting_order(0, X, dcd.ORDER_MIN_BYTES)[0]
    assert (int(state[1]), int(state[2])) == (32, -(-2**19 // 240))
    assert int(dual_ascent.visiting_order(0, X)[0][2]) == -(-2**21 // 240)
    dense = np.zeros((10, 100))
    assert dual_ascent.order_block(dense, dcd.ORDER_MIN_BYTES) == dual_ascent.order_block(dense)


@pytest.mark.parametrize(("n", "d", "density"), [
    (-(-dual_ascent.ORDER_MIN_BYTES["dense"] // 800), 100, None),  # the dense threshold
    (50_000, 100, None), (200_000, 100, None), (100_000, 200, None), (60_000, 784, None),  # 40 to 376 MB
    (200_000, 1_000, 0.01),  # 24 MB of CSR
], ids=["threshold", "40MB", "160MB", "160MB-wide", "376MB", "sparse-24MB"])
def test_the_block_length_does_not_grow_with_the_data(n, d, density):
    """§7: the block length is ``ORDER_BLOCK = 32`` at every size from the threshold on (a longer block saves
    reads but not the time to the certified gap), and with the shape's block length and threshold every epoch
    over the ``n`` rows, thinned between epochs, is a permutation of the active rows."""
    if density is None:
        X = np.broadcast_to(np.zeros(1), (n, d))  # the shape alone: no memory
        rows = -(-dual_ascent.ORDER_MIN_BYTES["dense"] // (8 * d))
    else:
        per_row = int(d * density)
        X = sp.csr_matrix((np.ones(n * per_row), np.tile(np.arange(per_row, dtype=np.int32), n),
                           np.arange(0, n * per_row + 1, per_row)), shape=(n, d))
        rows = -(-dual_ascent.ORDER_MIN_BYTES["sparse"] // (12 * per_row))
    B, min_rows = dual_ascent.order_block(X)
    assert (B, min_rows) == (32, rows) and n >= min_rows
    index = np.random.default_rng(3).permutation(n).astype(np.uint32)
    state, active = _order(B, min_rows), n
    for _ in range(3):
        before = np.sort(index[:active])
        kern.shuffle(index, active, state)
        assert np.array_equal(np.sort(index[:active]), before)
        assert active < min_rows or _breaks(index[:active]) <= 2 * -(-active // B)  # from the threshold: blocks
        active -= active // 3


def _solve(prob, X, y, solver="dcd", **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return prob.solve(X, y, solver=solver, **kw)


@pytest.fixture
def blocks_everywhere(monkeypatch):
    """The block order on every epoch with more than one block of 8 active samples."""
    monkeypatch.setattr(dual_ascent, "ORDER_BLOCK", 8)
    monkeypatch.setattr(dual_ascent, "ORDER_MIN_BYTES", {"dense": 0, "sparse": 0})
    monkeypatch.setattr(dcd, "ORDER_MIN_BYTES", {"dense": 0, "sparse": 0})


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("intercept", [False, True], ids=["none", "free"])
@pytest.mark.parametrize("squared", [False, True], ids=["hinge", "squared"])
def test_block_order_solves_are_certified_against_clarabel(blocks_everywhere, sparse, intercept, squared):
    """With the block order on every epoch, each solve reaches its certified gap and agrees with Clarabel within
    the sum of both certified gaps."""
    X, y = make_classification(400, 12, seed=5, sparse=sparse, density=0.5)
    signs = np.array([1, -1, 0] * 4)
    loss = rs.SquaredHinge() if squared else rs.Hinge()
    prob = rs.Problem(loss=loss, penalty=rs.L2(0.05), signs=signs, intercept=intercept)
    a = _solve(prob, X, y, tol=1e-6, max_iter=5000)
    ref = _solve(prob, X, y, solver="clarabel")
    assert a.status == "optimal" and a.gap <= 1e-6 * abs(a.objective) * 1.0001
    assert abs(a.objective - ref.objective) <= a.gap + ref.gap + 1e-9


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_block_order_solves_repeat_exactly(blocks_everywhere, sparse):
    """Two solves with the same seed give the same bits; another seed another path to the same optimum."""
    X, y = make_classification(300, 10, seed=2, sparse=sparse, density=0.5)
    prob = rs.Problem(penalty=rs.L2(0.01), signs=np.array([1, -1] * 5))
    a = _solve(prob, X, y, tol=1e-8, max_iter=3000, random_state=4)
    b = _solve(prob, X, y, tol=1e-8, max_iter=3000, random_state=4)
    c = _solve(prob, X, y, tol=1e-8, max_iter=3000, random_state=5)
    assert np.array_equal(a.w, b.w) and a.b == b.b and a.iterations == b.iterations
    assert np.array_equal(a.history["gap"], b.history["gap"])
    assert not np.array_equal(a.dual_alpha, c.dual_alpha)
    assert abs(a.objective - c.objective) <= a.gap + c.gap

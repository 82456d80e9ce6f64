"""The memory order of elementwise results (docs/design.md P6): an input that is a dense block
in any dim order (a transpose, a permutation of dims) gives a result
with the same stride order, as NumPy's default ``order='K'`` does; strided inputs give
row-major results. Values and strides are compared with NumPy's (strides of size-1 dims are
not compared: neither library promises them)."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tessera as ts

DTYPES = ["float32", "float64", "int64"]


@st.composite
def permuted(draw):
    """A NumPy array (and the same Tessera view of a copy of its base): a C-contiguous base of
    rank 1-4 with dims up to 5, seen through a random permutation of its dims."""
    shape = draw(st.lists(st.integers(1, 5), min_size=1, max_size=4))
    dtype = draw(st.sampled_from(DTYPES))
    perm = draw(st.permutations(range(len(shape))))
    base = np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape) - 3
    return base.transpose(perm), ts.permute_dims(ts.asarray(base), tuple(perm))


def same_order(got, want, rtol=0.0):
    """Values equal (within ``rtol``), and strides equal on every dim of size > 1."""
    assert got.shape == want.shape
    np.testing.assert_allclose(np.asarray(got), want, rtol=rtol)
    big = [i for i, d in enumerate(want.shape) if d > 1]
    assert [got.strides[i] for i in big] == [want.strides[i] for i in big], (
        got.strides, want.strides)


@given(permuted())
def test_unary_results_follow_a_permuted_input(case):
    a, t = case
    same_order(-t, -a)
    same_order(abs(t), abs(a))
    same_order(t.astype(ts.float64), a.astype(np.float64))
    same_order(ts.sin(t), np.sin(a), rtol=1e-6)  # vmath: 2 ulp (P2)
    same_order(ts.floor(t), np.floor(a))


@given(permuted())
def test_binary_results_follow_inputs_with_one_order(case):
    a, t = case
    same_order(t + t, a + a)
    same_order(t * 2, a * 2)
    same_order(3 - t, 3 - a)
    same_order(t < 1, a < 1)
    same_order(t + ts.asarray(np.int64(1)), a + np.int64(1))


def test_strided_and_mixed_inputs_give_row_major_results():
    base = np.arange(60.0).reshape(6, 10)
    t = ts.asarray(base)
    # Every other column, transposed: not a dense block, so the result is row-major.
    got = ts.permute_dims(t[:, ::2], (1, 0)) * 1.0
    np.testing.assert_array_equal(np.asarray(got), base[:, ::2].T)
    assert got.strides == (6 * 8, 8)
    # A transposed and a row-major operand: row-major.
    sq = ts.asarray(np.arange(16.0).reshape(4, 4))
    got = ts.permute_dims(sq, (1, 0)) + sq
    assert got.strides == (32, 8)
    np.testing.assert_array_equal(np.asarray(got), np.arange(16.0).reshape(4, 4).T
                                  + np.arange(16.0).reshape(4, 4))


def test_a_broadcast_operand_lets_the_result_follow_the_other():
    """``a.T + row`` and ``column + a.T`` come out in ``a.T``'s order, as in NumPy."""
    base = np.arange(12.0).reshape(3, 4)
    a, t = base.T, ts.permute_dims(ts.asarray(base), (1, 0))
    row, col = np.arange(3.0), np.ones((4, 1))
    same_order(t + ts.asarray(row), a + row)
    same_order(ts.asarray(row) + t, row + a)
    same_order(ts.asarray(col) + t, col + a)
    same_order(ts.maximum(t, ts.asarray(row)), np.maximum(a, row))


def test_results_in_another_order_still_reshape_view_and_export_as_numpy_does():
    base = np.arange(24.0).reshape(2, 3, 4)
    a, t = base.transpose(2, 0, 1), ts.permute_dims(ts.asarray(base), (2, 0, 1))
    got, want = ts.exp(t), np.exp(a)
    # reshape copies when it must; view refuses as NumPy's reshape(copy=False) does.
    np.testing.assert_allclose(np.asarray(ts.reshape(got, (-1,))), want.reshape(-1), rtol=1e-15)
    with pytest.raises(ValueError):
        ts.reshape(got, (-1,), copy=False)
    with pytest.raises(ValueError):
        np.reshape(want, (-1,), copy=False)
    # to NumPy and back, sums, and a row-major copy keep the values.
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-15)
    np.testing.assert_allclose(float(ts.sum(got)), want.sum(), rtol=1e-12)
    c = got.copy()
    assert c.strides == (48, 24, 8)  # row-major (4, 2, 3) float64
    np.testing.assert_allclose(np.asarray(c), want, rtol=1e-15)
    np.testing.assert_allclose(np.array(got.tolist()), want, rtol=1e-15)

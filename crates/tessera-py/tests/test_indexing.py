"""Basic indexing and setitem, differential against NumPy (docs/design.md V1-V3, V7)."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tessera as ts
from conftest import arange_array, basic_keys, getitem_like_numpy, layouts, shapes


@st.composite
def array_and_key(draw):
    shape = draw(shapes(max_dims=4, max_side=6))
    return shape, draw(basic_keys(shape))


@given(array_and_key())
def test_getitem_matches_numpy_values_and_is_zero_copy(case):
    shape, key = case
    a = arange_array(shape)
    t = ts.asarray(a)
    pair = getitem_like_numpy(a, t, key)
    if pair is None:
        return
    expected, v = pair
    got = np.asarray(v)
    assert got.shape == expected.shape
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)
    if got.size > 1:  # strides of size-1 dims are arbitrary
        big = [i for i, d in enumerate(got.shape) if d > 1]
        assert [v.strides[i] for i in big] == [expected.strides[i] for i in big]
    if got.size > 0:
        assert np.shares_memory(got, np.asarray(t))
    assert v.shares_storage(t)


@given(array_and_key(), st.data())
def test_view_of_view_matches_numpy(case, data):
    shape, key = case
    a = arange_array(shape)
    t = ts.asarray(a)
    try:
        first = a[key]
    except IndexError:
        return
    key2 = data.draw(basic_keys(first.shape))
    np.testing.assert_array_equal(np.asarray(t[key][key2]), first[key2])


@given(array_and_key(), st.data())
def test_setitem_writes_through_like_numpy(case, data):
    shape, key = case
    a = arange_array(shape)
    t = ts.asarray(a)
    try:
        target = a[key]
    except IndexError:
        return
    # A broadcastable value: the target's shape with some dims set to 1 and leading dims dropped.
    vshape = tuple(d if data.draw(st.booleans()) else 1 for d in target.shape)
    vshape = vshape[data.draw(st.integers(0, len(vshape))):]
    value = -arange_array(vshape) - 1
    a[key] = value
    t[key] = value
    np.testing.assert_array_equal(np.asarray(t), a)


def test_setitem_scalar_and_casting():
    t = ts.zeros((3, 4), dtype=ts.int32)
    t[1] = 7
    t[:, ::-2] = 2.9  # truncates like NumPy
    a = np.zeros((3, 4), np.int32)
    a[1] = 7
    a[:, ::-2] = 2.9
    np.testing.assert_array_equal(np.asarray(t), a)
    t[0, 0] = np.float64(5.5)
    assert t[0, 0].item() == 5


@st.composite
def int_keys(draw):
    """An array and tensor of the same values (contiguous or not) and a key of Python ints
    only (an int or a tuple of them), in range or not, with up to one index too many: the
    `t[i]`, `t[i, j]` fast path."""
    shape = draw(shapes(max_dims=4, max_side=5))
    n = draw(st.integers(0, len(shape) + 1))
    items = [draw(st.integers(-7, 7)) for _ in range(n)]
    key = items[0] if n == 1 and draw(st.booleans()) else tuple(items)
    a, t = draw(layouts(shape))
    return a, t, key


@given(int_keys())
def test_int_keys_match_numpy(case):
    a, t, key = case
    pair = getitem_like_numpy(a, t, key)
    if pair is None:
        return
    expected, v = np.asarray(pair[0]), pair[1]
    assert v.shape == expected.shape
    np.testing.assert_array_equal(np.asarray(v), expected)
    assert v.shares_storage(t)


def test_numpy_integer_scalars_are_ints():
    t = ts.arange(10)
    assert t[np.int64(3)].item() == 3
    assert t[np.int32(-1)].item() == 9
    assert np.asarray(t[np.int8(1):np.uint8(7):np.int64(2)]).tolist() == [1, 3, 5]


def test_slice_bounds_beyond_isize_and_non_int_bounds():
    a = np.arange(10)
    t = ts.asarray(a)
    for key in [slice(-2**70, 2**70), slice(2**70, -2**70, -1), slice(True, None), slice(None, None, 2**64)]:
        np.testing.assert_array_equal(np.asarray(t[key]), a[key])
    with pytest.raises(TypeError):
        t[1.0:3]  # Python's error for a non-integer slice bound


def test_index_errors_match_numpy():
    t = ts.arange(3)
    with pytest.raises(IndexError):
        t[10]
    with pytest.raises(IndexError):
        t[-4]
    m = ts.zeros((2, 2))
    with pytest.raises(IndexError):
        m[1, 2, 3]
    with pytest.raises(IndexError):
        m[..., ...]
    with pytest.raises(ValueError):
        m[::0]
    with pytest.raises(IndexError):
        m[1.5]
    with pytest.raises(IndexError):
        m[[0, 2]]
    with pytest.raises(IndexError):
        m[np.array([True])]
    with pytest.raises(IndexError):
        t[10**30]


def _outcome(f, key):
    """(values, dtype, shape) of `f(key)`, or the type of the exception it raised."""
    try:
        v = f(key)
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return type(e)
    return np.asarray(v).tolist(), np.asarray(v).dtype, v.shape


BAD_KEYS = [10, -4, (1, 2, 3), (Ellipsis, Ellipsis), slice(None, None, 0), 1.5, [0, 2],
            np.array([True]), 10**30, (0, np.arange(2)), np.array([[1], [0]]), True, "a",
            (slice(None), [1, 0]), np.int64(1), (np.int32(-1), None)]


@given(array_and_key())
def test_subscript_slot_agrees_with_the_getitem_method(case):
    # `t[key]` runs the hand-written C slot (slots.rs), `Tensor.__getitem__(t, key)` pyo3's
    # method: the same views, the same errors, for basic, advanced and invalid keys.
    shape, key = case
    t = ts.asarray(arange_array(shape))
    m = ts.zeros((2, 3))
    assert _outcome(t.__getitem__, key) == _outcome(lambda k: t[k], key)
    for k in BAD_KEYS:
        assert _outcome(m.__getitem__, k) == _outcome(lambda k: m[k], k), k


@pytest.mark.parametrize("key", [np.array([0]), np.array([True, False, True]),
                                 (0, np.arange(2)), np.zeros((1, 1), np.int64)])
def test_array_keys_are_advanced_indexing(key):
    # NumPy arrays have __index__ (TypeError unless 0-d): array keys are advanced indexing
    # (test_advanced_indexing.py), copies for reads and writes into the tensor.
    a = np.arange(9.0).reshape(3, 3)
    m = ts.asarray(a)
    np.testing.assert_array_equal(np.asarray(m[key]), a[key])
    a[key] = -1.0
    m[key] = -1.0
    np.testing.assert_array_equal(np.asarray(m), a)
    assert m[np.array(1)].tolist() == a[1].tolist()  # a 0-d integer array is an integer


def test_setitem_errors():
    t = ts.zeros((2, 3))
    with pytest.raises(ValueError):
        t[:] = np.ones((4,))  # shape mismatch, NumPy raises ValueError
    e = ts.zeros((1, 3)).expand(4, 3)
    with pytest.raises(ValueError):
        e[:] = 1.0  # overlapping destination
    u = ts.zeros(3, dtype=ts.uint8)
    with pytest.raises(OverflowError):
        u[0] = 300


def test_setitem_overlapping_source_is_copied_first():
    a = np.arange(10)
    t = ts.asarray(a)
    a[1:] = a[:-1]
    t[1:] = t[:-1]
    np.testing.assert_array_equal(np.asarray(t), a)


def test_iteration_uses_getitem():
    t = ts.arange(6).reshape(2, 3)
    rows = [np.asarray(r).tolist() for r in t]
    assert rows == [[0, 1, 2], [3, 4, 5]]
    assert len(t) == 2
